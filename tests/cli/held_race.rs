//! The held files' guard when sessions call at once: a session keeps its own books under the
//! guard's shared lock while another hook holds it, and no sweep ever puts back a holder's own
//! edit, however the calls interleave; a write no hook saw is still put back afterwards.

use crate::common::*;
use crate::team_mode::{event, team_repo, write_done, write_payload};
use std::path::Path;

/// Session a claims src/lib.rs, writes "A's version" in its call, and its post-tool hook records it.
fn a_writes_its_version(env: &TestEnv, repo: &Path) {
    event(env, repo, "claude-code", None, &write_payload(repo, "a", "src/lib.rs"));
    std::fs::write(repo.join("src/lib.rs"), "A's version\n").unwrap();
    event(env, repo, "claude-code", Some("--post-tool"), &write_done(repo, "a", "src/lib.rs"));
}

fn held_lock(repo: &Path) -> std::fs::File {
    let dir = repo.join(".git/mas/held");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(dir.join("flock")).unwrap()
}

/// While another process holds the guard's lock shared (as a session keeping its own books
/// does), a session's pre-tool hook still marks its file open and its post-tool hook still
/// records it: the sweep that runs once the lock is free leaves the holder's edit, and puts back
/// a foreign write made after the recorded one.
#[test]
fn a_sessions_own_books_kept_beside_another_hook_are_what_the_next_sweep_goes_by() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let f = repo.join("src/lib.rs");
    // A claims the file and records its version (no other hook: the exclusive path).
    a_writes_its_version(&env, &repo);

    // Another hook holds the guard (shared): A's next call keeps its own books beside it.
    let other = held_lock(&repo);
    other.lock_shared().unwrap();
    let pre = event(&env, &repo, "claude-code", None, &write_payload(&repo, "a", "src/lib.rs"));
    assert!(!stdout(&pre).contains("\"deny\""), "{}", shown(&pre));
    std::fs::write(&f, "A's second version\n").unwrap();
    drop(other);
    // B's call sweeps: A's file is open (A's call runs), so A's edit stays.
    let b = event(&env, &repo, "claude-code", None, &write_payload(&repo, "b", "src/money.rs"));
    assert!(!stdout(&b).contains("no hook saw it"), "{}", shown(&b));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "A's second version\n");

    // A's post-tool hook beside another hook records the second version and closes the file.
    let other = held_lock(&repo);
    other.lock_shared().unwrap();
    event(&env, &repo, "claude-code", Some("--post-tool"), &write_done(&repo, "a", "src/lib.rs"));
    drop(other);
    std::fs::write(&f, "A's second version\nforeign line\n").unwrap();
    let out = env.mas(&repo, &["status"]);
    assert!(stderr(&out).contains("no hook saw it"), "{}", shown(&out));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "A's second version\n");
}

/// Eight sessions edit their own files at once, each call a pre-tool hook, the edit, and a
/// post-tool hook: every edit stays, nobody is told of a put-back, and afterwards a foreign
/// write to each file is put back to its holder's last version.
#[test]
fn sessions_calling_at_once_keep_every_edit_and_a_later_foreign_write_is_put_back() {
    const SESSIONS: usize = 8;
    const CALLS: usize = 10;
    let env = TestEnv::new();
    let repo = team_repo(&env);
    std::fs::create_dir_all(repo.join("own")).unwrap();
    let rel = |i: usize| format!("own/s{i}.txt");
    std::thread::scope(|scope| {
        for i in 0..SESSIONS {
            let (env, repo, rel) = (&env, &repo, rel(i));
            scope.spawn(move || {
                let session = format!("s{i}");
                for k in 0..CALLS {
                    let pre = event(env, repo, "claude-code", None, &write_payload(repo, &session, &rel));
                    let said = stdout(&pre);
                    assert!(!said.contains("\"deny\"") && !said.contains("put back"), "{session} call {k}: {said}");
                    std::fs::write(repo.join(&rel), format!("{session} version {k}\n")).unwrap();
                    let post = event(env, repo, "claude-code", Some("--post-tool"), &write_done(repo, &session, &rel));
                    let said = stdout(&post);
                    assert!(!said.contains("put back") && !said.contains("no hook saw it"), "{session} {k}: {said}");
                    assert_eq!(
                        std::fs::read_to_string(repo.join(&rel)).unwrap(),
                        format!("{session} version {k}\n"),
                        "{session}'s own edit was undone"
                    );
                }
            });
        }
    });
    for i in 0..SESSIONS {
        std::fs::write(repo.join(rel(i)), "foreign\n").unwrap();
    }
    let out = env.mas(&repo, &["status"]);
    assert!(stderr(&out).contains("no hook saw it"), "{}", shown(&out));
    for i in 0..SESSIONS {
        assert_eq!(std::fs::read_to_string(repo.join(rel(i))).unwrap(), format!("s{i} version {}\n", CALLS - 1));
    }
}

/// The records an earlier version kept in one `index.json` are read, moved to each holder's own
/// file — the holder's whose records did not change too — and still what the sweep goes by.
#[test]
fn records_in_the_earlier_index_are_kept_when_it_is_moved_to_each_holders_file() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    for (session, rel) in [("a", "src/lib.rs"), ("b", "src/money.rs")] {
        event(&env, &repo, "claude-code", None, &write_payload(&repo, session, rel));
        std::fs::write(repo.join(rel), format!("{session}'s version\n")).unwrap();
        event(&env, &repo, "claude-code", Some("--post-tool"), &write_done(&repo, session, rel));
    }
    // As the earlier version left them: every holder's records in one index.
    let held = repo.join(".git/mas/held");
    let mut all = Vec::new();
    for e in std::fs::read_dir(held.join("by")).unwrap().flatten() {
        let recs: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
        all.extend(recs);
        std::fs::remove_file(e.path()).unwrap();
    }
    assert_eq!(all.len(), 2, "{all:?}");
    std::fs::write(held.join("index.json"), serde_json::to_vec(&all).unwrap()).unwrap();
    // One holder's file changes (its records change when it is put back), then the other's.
    for (session, rel) in [("b", "src/money.rs"), ("a", "src/lib.rs")] {
        std::fs::write(repo.join(rel), "foreign\n").unwrap();
        let out = env.mas(&repo, &["status"]);
        assert!(stderr(&out).contains("no hook saw it"), "{rel}: {}", shown(&out));
        assert_eq!(std::fs::read_to_string(repo.join(rel)).unwrap(), format!("{session}'s version\n"));
        assert!(!held.join("index.json").exists());
    }
}

/// A sweep killed after it wrote the holders' files and before it removed the earlier index
/// leaves both: the holder's file, the newer, is what the next sweep goes by.
#[test]
fn a_holders_file_wins_over_an_earlier_index_a_killed_sweep_left() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let f = repo.join("src/lib.rs");
    let held = repo.join(".git/mas/held");
    a_writes_its_version(&env, &repo);
    let by: Vec<_> = std::fs::read_dir(held.join("by")).unwrap().flatten().map(|e| e.path()).collect();
    let first = std::fs::read(&by[0]).unwrap();
    event(&env, &repo, "claude-code", None, &write_payload(&repo, "a", "src/lib.rs"));
    std::fs::write(&f, "A's second version\n").unwrap();
    event(&env, &repo, "claude-code", Some("--post-tool"), &write_done(&repo, "a", "src/lib.rs"));
    std::fs::write(held.join("index.json"), first).unwrap();
    let out = env.mas(&repo, &["status"]);
    assert!(!stderr(&out).contains("no hook saw it"), "{}", shown(&out));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "A's second version\n");
    assert!(!held.join("index.json").exists());
}

/// The sweep reads every holder's records from its snapshot (`all.json`) while nothing in `by/`
/// changed since it was written. A holder's file renamed into place after it (as an earlier
/// version's hook writes one, without removing the snapshot) is what the next sweep goes by:
/// here it marks the holder's file open, so a write made then is the holder's and stays.
#[test]
fn a_holders_file_written_after_the_sweeps_snapshot_is_what_the_next_sweep_goes_by() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let f = repo.join("src/lib.rs");
    let held = repo.join(".git/mas/held");
    a_writes_its_version(&env, &repo);
    assert!(held.join("all.json").exists(), "the sweep kept no snapshot");
    let by: Vec<_> = std::fs::read_dir(held.join("by")).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(by.len(), 1, "{by:?}");
    let mut recs: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(&by[0]).unwrap()).unwrap();
    assert_eq!(recs[0]["open"], false, "{recs:?}");
    recs[0]["open"] = true.into();
    // A later clock tick than the snapshot's, then a temporary renamed over the holder's file.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let tmp = held.join("by/.earlier.tmp");
    std::fs::write(&tmp, serde_json::to_vec(&recs).unwrap()).unwrap();
    std::fs::rename(&tmp, &by[0]).unwrap();
    std::fs::write(&f, "A's version, written in A's call\n").unwrap();
    let out = env.mas(&repo, &["status"]);
    assert!(!stderr(&out).contains("no hook saw it"), "{}", shown(&out));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "A's version, written in A's call\n");
}

/// A sweep that finds nothing changed writes nothing: not a holder's file, not its snapshot. The
/// board lists held files by path (here a's, b's, a's again), the holders' files group them by
/// holder; compared in the board's order, every sweep found a change and wrote.
#[test]
fn a_sweep_that_finds_nothing_changed_writes_nothing() {
    use std::os::unix::fs::MetadataExt as _;
    let env = TestEnv::new();
    let repo = team_repo(&env);
    for (session, rel) in [("a", "src/lib.rs"), ("b", "src/main.rs"), ("a", "src/money.rs")] {
        event(&env, &repo, "claude-code", None, &write_payload(&repo, session, rel));
        std::fs::write(repo.join(rel), format!("{session}'s version\n")).unwrap();
        event(&env, &repo, "claude-code", Some("--post-tool"), &write_done(&repo, session, rel));
    }
    let held = repo.join(".git/mas/held");
    let files = || {
        let mut all: Vec<(String, u64)> = std::fs::read_dir(held.join("by"))
            .unwrap()
            .flatten()
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().unwrap().ino()))
            .collect();
        all.sort();
        all.push(("all.json".into(), std::fs::metadata(held.join("all.json")).map(|m| m.ino()).unwrap_or(0)));
        all
    };
    let out = env.mas(&repo, &["status"]);
    assert!(!stderr(&out).contains("no hook saw it"), "{}", shown(&out));
    let before = files();
    assert_eq!(before.len(), 3, "two holders' files and the snapshot: {before:?}");
    assert_ne!(before[2].1, 0, "no snapshot: {before:?}");
    let out = env.mas(&repo, &["status"]);
    assert!(!stderr(&out).contains("no hook saw it"), "{}", shown(&out));
    assert_eq!(files(), before, "a sweep that found nothing changed wrote");
}

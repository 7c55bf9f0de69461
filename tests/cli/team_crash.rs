//! SIGKILL at every instant of a team-mode claim (`git mas gate --host claude-code`), of a
//! release (`git mas focus release`, whole and `--targets`), of a session's end (`--session-end`)
//! and of the post-tool check of a shell call: the board stays readable and shows the claim (or
//! release) whole or not at all, the claims lock is never left held, and no file of the working
//! tree changes (but for what the post-tool check puts back).
//!
//! The kill points are strace's ([`crate::killpoints`]), swept call by call:
//!
//! - a claim: opening the claims lock file and taking its `flock` (before the lock); every rename
//!   (the board's window cache before the lock, the record's three objects under it); creating
//!   the focus ref's lock file and renaming it over the ref (holding the claims lock, before the
//!   record's ref moves); every write (cache, objects, the ref's lock, the hook's answer); and
//!   closing the claims lock file (the ref has moved, the lock is still held);
//! - a release: every rename, creating the focus ref's lock file and renaming it, every write.
//!
//! After each kill: the repository checks clean (fsck, every chain verified), the board reads,
//! the killed session holds what it held before or everything it claimed, another session's claim
//! succeeds within the hook's deadline, and the killed command's retry ends where an unkilled run
//! would have — after `git mas doctor --fix` when the kill left the focus ref's lock file.

use crate::common::*;
use crate::killpoints::{self, Attempt, RENAMES, Trigger};
use crate::team_mode::{board, hook, team_repo, write_payload};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The hook's deadline (`hosts::payload::DEADLINE`): an answer later than this is a deny.
const DEADLINE: Duration = Duration::from_secs(6);

/// A repository where session K holds `src/lib.rs` (and, for a release, `src/report.rs`), with
/// a copy of it to restore before every killed run.
struct Scene {
    repo: PathBuf,
    pristine: PathBuf,
    git_dir: PathBuf,
    /// K's agent name.
    k: String,
}

impl Scene {
    fn new(env: &TestEnv, k_files: &[&str]) -> Scene {
        let repo = team_repo(env);
        for f in k_files {
            let (verdict, note) = hook(env, &repo, &write_payload(&repo, "session-k", f));
            assert_eq!(verdict, "allow", "{note}");
        }
        let k = board(env, &repo).board.live().next().expect("K holds its files").agent.clone();
        let pristine = env.root().join("pristine");
        cp(&repo, &pristine);
        let git_dir = killpoints::git_dir(env, &repo);
        Scene { repo, pristine, git_dir, k }
    }

    /// Puts the repository back as it was before the first killed run.
    fn restore(&self) {
        std::fs::remove_dir_all(&self.repo).unwrap();
        cp(&self.pristine, &self.repo);
    }

    /// K's live targets, sorted (none when K holds nothing).
    fn k_holds(&self, env: &TestEnv) -> Result<Vec<String>, String> {
        let out = env.mas(&self.repo, &["focus", "list", "--json"]);
        if !out.status.success() {
            return Err(format!("focus list exited {:?}: {}", out.status.code(), stderr(&out)));
        }
        let list: crate::json::focus::FocusListOut =
            serde_json::from_slice(&out.stdout).map_err(|e| format!("focus list --json: {e}"))?;
        let mut t: Vec<String> =
            list.board.live().filter(|f| f.agent == self.k).flat_map(|f| f.targets.clone()).collect();
        t.sort();
        Ok(t)
    }

    /// What a killed (or completed) run left, as every sweep checks it first: the problems (the
    /// working tree changed since `tree_before`, the repository does not check clean, the board
    /// is unreadable) and what K holds.
    fn observe(&self, env: &TestEnv, tree_before: &[(PathBuf, Vec<u8>)]) -> (Vec<String>, Vec<String>) {
        let mut problems = Vec::new();
        if tree(&self.repo) != tree_before {
            problems.push("the working tree changed".into());
        }
        problems.extend(killpoints::check_repository(env, &self.repo));
        let held = self.k_holds(env).unwrap_or_else(|e| {
            problems.push(format!("the board is unreadable: {e}"));
            Vec::new()
        });
        (problems, held)
    }

    /// The focus ref's lock file, relative to the git dir, when a kill left it.
    fn ref_lock(&self) -> Option<String> {
        let lock = format!("refs/mas/focus/{}.lock", self.k);
        self.git_dir.join(&lock).exists().then_some(lock)
    }
}

fn cp(from: &Path, to: &Path) {
    let out = Command::new("cp").arg("-a").arg(from).arg(to).output().unwrap();
    assert!(out.status.success(), "cp: {}", stderr(&out));
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Session O claims `path`: allowed, within the hook's deadline. Returns a problem, if any.
fn other_claims(env: &TestEnv, repo: &Path, path: &str) -> Option<String> {
    let started = Instant::now();
    let (verdict, text) = hook(env, repo, &write_payload(repo, "session-o", path));
    let took = started.elapsed();
    if verdict != "allow" {
        return Some(format!("another session's claim of {path} was refused: {text}"));
    }
    (took >= DEADLINE).then(|| format!("another session's claim of {path} took {took:?}"))
}

/// One killed run, as the survey reports it.
struct Row {
    point: String,
    /// What K held after the kill.
    held: Vec<String>,
    left: Vec<String>,
    problems: Vec<String>,
}

fn report(command: &str, swept: &[(String, usize)], rows: &[Row], completed: &[String]) {
    let mut table = format!("{command}: kill points {swept:?}\n");
    for r in rows {
        table.push_str(&format!("  {:<40} K holds {:?} left {:?}\n", r.point, r.held, r.left));
        for p in &r.problems {
            table.push_str(&format!("      PROBLEM: {p}\n"));
        }
    }
    for p in completed {
        table.push_str(&format!("  completed run: {p}\n"));
    }
    for (trigger, kills) in swept {
        assert!(*kills > 0, "no kill at {trigger}: the trigger list is stale\n{table}");
    }
    assert!(rows.iter().all(|r| r.problems.is_empty()) && completed.is_empty(), "{table}");
    eprintln!("{table}");
}

#[test]
fn a_claim_killed_at_any_instant_is_whole_or_absent_and_leaves_the_lock_free() {
    let env = TestEnv::new();
    let scene = Scene::new(&env, &["src/lib.rs"]);
    let (repo, git_dir, k) = (&scene.repo, &scene.git_dir, &scene.k);
    let claims_lock = git_dir.join(killpoints::CLAIMS_LOCK);
    assert!(claims_lock.exists(), "K's first claim made the lock file");
    let before: Vec<String> = strs(&["src/lib.rs"]);
    let whole: Vec<String> = strs(&["src/lib.rs", "src/report.rs"]);
    let payload = write_payload(repo, "session-k", "src/report.rs").to_string();
    let ref_lock = git_dir.join(format!("refs/mas/focus/{k}.lock"));
    let triggers = vec![
        Trigger::on_paths("openat", [claims_lock.clone()]),
        Trigger::on_paths("flock", [claims_lock.clone()]),
        Trigger::on(RENAMES),
        Trigger::on_paths("openat", [ref_lock.clone()]),
        // Its rename over the ref (a `rename` the sweep over RENAMES never reaches: it counts
        // each syscall on its own, and the objects' `renameat`s reach every N first).
        Trigger::on_paths(RENAMES, [ref_lock.clone()]),
        Trigger::on("write"),
        Trigger::on_paths("close", [claims_lock.clone()]),
    ];
    let tree_before = tree(repo);
    let mut rows = Vec::new();
    let mut completed = Vec::new();
    let swept = killpoints::sweep_fed(
        &triggers,
        payload.as_bytes(),
        |_, _| {
            scene.restore();
            let mut cmd = env.mas_cmd(repo);
            cmd.args(["gate", "--host", "claude-code"]);
            cmd
        },
        |attempt: &Attempt| {
            let point = attempt.point();
            let (mut problems, held) = scene.observe(&env, &tree_before);
            if !attempt.killed {
                let out = &attempt.output;
                if !out.stdout.is_empty() || held != whole {
                    completed.push(format!("{point}: {} / K holds {held:?}", shown(out)));
                }
                return;
            }
            let left = killpoints::leftovers(git_dir);
            let ref_lock = scene.ref_lock();
            if held != before && held != whole {
                problems.push(format!("K holds {held:?}: neither {before:?} nor {whole:?}"));
            }
            if ref_lock.is_some() && held == whole {
                problems.push("the ref's lock is left, yet the claim is on the board".into());
            }
            // The points the module docs name: before the lock and holding it before the ref
            // moves, no claim; after the ref moved, the whole claim.
            let label = attempt.trigger.label();
            let expected = if label.starts_with("close") {
                Some(&whole)
            } else if label.starts_with("flock")
                || label.contains("claims.lock")
                || label.contains(&format!("{k}.lock"))
            {
                Some(&before)
            } else {
                None
            };
            if let Some(expected) = expected.filter(|e| **e != held) {
                problems.push(format!("K holds {held:?}, expected {expected:?} at this point"));
            }
            // The claims lock is free: another session claims a free file, in time.
            problems.extend(other_claims(&env, repo, "src/error.rs"));
            // K's retry: refused while the ref's lock is left (naming it), allowed once
            // `doctor --fix` removed it; then K holds the whole claim.
            if let Some(lock) = &ref_lock {
                let started = Instant::now();
                let (verdict, reason) = hook(&env, repo, &write_payload(repo, "session-k", "src/report.rs"));
                if verdict != "deny" || !reason.contains(lock.as_str()) || started.elapsed() >= DEADLINE {
                    problems.push(format!(
                        "K's retry beside the left lock: {verdict} after {:?}: {reason}",
                        started.elapsed()
                    ));
                }
                problems.extend(killpoints::clear_locks(&env, repo, git_dir, std::slice::from_ref(lock)));
            }
            let (verdict, note) = hook(&env, repo, &write_payload(repo, "session-k", "src/report.rs"));
            if verdict != "allow" {
                problems.push(format!("K's retry was refused: {note}"));
            }
            match scene.k_holds(&env) {
                Ok(h) if h == whole => {}
                other => problems.push(format!("after K's retry K holds {other:?}")),
            }
            // And the claim holds against another session.
            let (verdict, reason) = hook(&env, repo, &write_payload(repo, "session-o", "src/report.rs"));
            if verdict != "deny" || !reason.contains(k.as_str()) {
                problems.push(format!("another session's edit of K's new file: {verdict}: {reason}"));
            }
            problems.extend(killpoints::check_repository(&env, repo).into_iter().map(|p| format!("after: {p}")));
            rows.push(Row { point, held, left, problems });
        },
    );
    report("gate --host claude-code (K claims src/report.rs)", &swept, &rows, &completed);
}

/// Sweeps a release by K (`args` after `--agent K`) of a focus holding `src/lib.rs` and
/// `src/report.rs`; `released` is what K holds once it landed.
fn release_sweep(args: &[&str], released: &[&str]) {
    let env = TestEnv::new();
    let scene = Scene::new(&env, &["src/lib.rs", "src/report.rs"]);
    let (repo, git_dir, k) = (&scene.repo, &scene.git_dir, &scene.k);
    let before: Vec<String> = strs(&["src/lib.rs", "src/report.rs"]);
    let released: Vec<String> = strs(released);
    let ref_lock = git_dir.join(format!("refs/mas/focus/{k}.lock"));
    let triggers = vec![
        Trigger::on(RENAMES),
        Trigger::on_paths("openat", [ref_lock.clone()]),
        Trigger::on_paths(RENAMES, [ref_lock]),
        Trigger::on("write"),
    ];
    let command = || {
        let mut cmd = env.mas_cmd(repo);
        cmd.args(["--agent", k]).args(args).arg("--force");
        cmd
    };
    let tree_before = tree(repo);
    let mut rows = Vec::new();
    let mut completed = Vec::new();
    let swept = killpoints::sweep(
        &triggers,
        |_, _| {
            scene.restore();
            command()
        },
        |attempt: &Attempt| {
            let point = attempt.point();
            let (mut problems, held) = scene.observe(&env, &tree_before);
            if !attempt.killed {
                if !attempt.output.status.success() || held != released {
                    completed.push(format!("{point}: {} / K holds {held:?}", shown(&attempt.output)));
                }
                return;
            }
            let left = killpoints::leftovers(git_dir);
            if held != before && held != released {
                problems.push(format!("K holds {held:?}: neither {before:?} nor {released:?}"));
            }
            // Another session: a free file is claimed in time; src/report.rs is claimed exactly
            // when the board shows it released.
            problems.extend(other_claims(&env, repo, "src/error.rs"));
            let (verdict, reason) = hook(&env, repo, &write_payload(repo, "session-o", "src/report.rs"));
            let expected = if held.contains(&"src/report.rs".to_string()) { "deny" } else { "allow" };
            if verdict != expected || (verdict == "deny" && !reason.contains(k.as_str())) {
                problems.push(format!(
                    "K holds {held:?}, yet another session's edit of src/report.rs: {verdict}: {reason}"
                ));
            }
            // The retry: refused naming the ref's lock while it is left, done after doctor --fix.
            let retried = killpoints::retry(&env, repo, command);
            problems.extend(retried.problems);
            match scene.k_holds(&env) {
                Ok(h) if h == released => {}
                other => problems.push(format!("after the retry K holds {other:?}")),
            }
            problems.extend(killpoints::check_repository(&env, repo).into_iter().map(|p| format!("after: {p}")));
            rows.push(Row { point, held, left, problems });
        },
    );
    report(&format!("--agent K {}", args.join(" ")), &swept, &rows, &completed);
}

#[test]
fn a_release_killed_at_any_instant_is_whole_or_absent() {
    release_sweep(&["focus", "release"], &[]);
}

#[test]
fn a_partial_release_killed_at_any_instant_is_whole_or_absent() {
    release_sweep(&["focus", "release", "--targets", "src/report.rs"], &["src/lib.rs"]);
}

/// SIGKILL at every instant of the post-tool check of a shell call (`gate --host claude-code
/// --post-tool`) that overwrote a file another session holds and created one it claimed: each
/// file is either as the call left it or put back whole, never a mix; the kept bytes stay until
/// every file is checked, so the check run again puts back what is left and then leaves nothing
/// pending; and no other file changes.
#[test]
fn a_post_tool_check_killed_at_any_instant_puts_back_whole_or_leaves_it_for_the_next() {
    use crate::team_mode::{bash_payload, event};
    let env = TestEnv::new();
    let repo = team_repo(&env);
    for f in ["src/lib.rs", "src/planned.rs"] {
        assert_eq!(hook(&env, &repo, &write_payload(&repo, "session-a", f)).0, "allow", "{f}");
    }
    let held = std::fs::read(repo.join("src/lib.rs")).unwrap();
    // B's shell call: its pre-tool hook keeps A's files; the call overwrites one and creates the other.
    let pre = event(&env, &repo, "claude-code", None, &bash_payload(&repo, "session-b", "PreToolUse"));
    assert!(pre.stdout.is_empty(), "{}", shown(&pre));
    std::fs::write(repo.join("src/lib.rs"), "clobbered\n").unwrap();
    std::fs::write(repo.join("src/planned.rs"), "mine\n").unwrap();
    let git_dir = killpoints::git_dir(&env, &repo);
    let shell_dir = git_dir.join("mas/shell");
    // A shell call is pending while its manifest names its kept files.
    let pending = || -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&shell_dir) else { return Vec::new() };
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|e| e.path().join("manifest.json").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(pending().len(), 1, "B's kept files are pending");
    let pristine = env.root().join("pristine");
    cp(&repo, &pristine);
    let restore = || {
        std::fs::remove_dir_all(&repo).unwrap();
        cp(&pristine, &repo);
    };
    let others = |repo: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        tree(repo)
            .into_iter()
            .filter(|(p, _)| p != Path::new("src/lib.rs") && p != Path::new("src/planned.rs"))
            .collect()
    };
    let others_before = others(&repo);
    let payload = bash_payload(&repo, "session-b", "PostToolUse").to_string();
    let triggers = vec![Trigger::on(RENAMES), Trigger::on("?unlink,unlinkat"), Trigger::on("write")];
    let mut rows = Vec::new();
    let mut completed = Vec::new();
    let swept = killpoints::sweep_fed(
        &triggers,
        payload.as_bytes(),
        |_, _| {
            restore();
            let mut cmd = env.mas_cmd(&repo);
            cmd.args(["gate", "--host", "claude-code", "--post-tool"]);
            cmd
        },
        |attempt: &Attempt| {
            let point = attempt.point();
            let mut problems = Vec::new();
            // Beside the files only a put-back's temporary may be new (killed before its rename).
            let temp = |p: &Path| p.to_string_lossy().starts_with("src/.lib.rs.git-mas-tmp-");
            let now: Vec<_> = others(&repo).into_iter().filter(|(p, _)| !temp(p)).collect();
            if now != others_before {
                problems.push("a file the call did not touch changed".into());
            }
            let lib = std::fs::read(repo.join("src/lib.rs")).ok();
            let planned = std::fs::read(repo.join("src/planned.rs")).ok();
            let state = format!(
                "lib.rs {}, planned.rs {}",
                match &lib {
                    Some(b) if *b == held => "put back",
                    Some(b) if b == b"clobbered\n" => "as the call left it",
                    Some(_) => "MIXED",
                    None => "GONE",
                },
                match planned.as_deref() {
                    None => "removed",
                    Some(b"mine\n") => "as the call left it",
                    Some(_) => "MIXED",
                }
            );
            if state.contains("MIXED") || state.contains("GONE") {
                problems.push(format!("a file is neither as the call left it nor put back: {state}"));
            }
            if !attempt.killed {
                if lib.as_deref() != Some(&held[..]) || planned.is_some() || !pending().is_empty() {
                    completed.push(format!("{point}: {state}, pending {:?}", pending()));
                }
                return;
            }
            let left = pending();
            let untouched_left = lib.as_deref() != Some(&held[..]) || planned.is_some();
            if untouched_left && left.is_empty() {
                problems.push(format!("{state}, and nothing is pending to put it back"));
            }
            // The check again (the session's next call): everything put back, nothing pending.
            let again =
                fed(env.mas_cmd(&repo).args(["gate", "--host", "claude-code", "--post-tool"]), payload.as_bytes());
            if again.status.code() != Some(0) {
                problems.push(format!("the check again: {}", shown(&again)));
            }
            if std::fs::read(repo.join("src/lib.rs")).ok().as_deref() != Some(&held[..]) {
                problems.push("after the check again, src/lib.rs is not put back".into());
            }
            if repo.join("src/planned.rs").exists() {
                problems.push("after the check again, src/planned.rs is still there".into());
            }
            if !pending().is_empty() {
                problems.push(format!("after the check again, pending: {:?}", pending()));
            }
            if others(&repo) != others_before {
                problems
                    .push("after the check again, a file the call did not touch differs (a temporary left?)".into());
            }
            if untouched_left && !stdout(&again).contains("put back") && !stdout(&again).contains("removed") {
                problems.push(format!("B is not told what the check again undid: {}", shown(&again)));
            }
            problems.extend(killpoints::check_repository(&env, &repo));
            rows.push(Row { point, held: vec![state], left, problems });
        },
    );
    report("gate --host claude-code --post-tool (B's shell call changed A's files)", &swept, &rows, &completed);
}

/// SIGKILL at every instant of a session's end (`gate --host claude-code --session-end`): the
/// release of everything the session holds, then a prune of the board's ended chains and the
/// removal of its shell folder. K holds all it held or nothing; another session's edit of K's
/// file is allowed exactly when the board shows it released; and the hook run again (after `git
/// mas doctor --fix` when the kill left the focus ref's lock, which its report names) ends with K
/// holding nothing.
#[test]
fn a_session_end_killed_at_any_instant_releases_whole_or_not_at_all() {
    use crate::team_mode::event;
    let env = TestEnv::new();
    let scene = Scene::new(&env, &["src/lib.rs", "src/report.rs"]);
    let (repo, git_dir, k) = (&scene.repo, &scene.git_dir, &scene.k);
    let before: Vec<String> = strs(&["src/lib.rs", "src/report.rs"]);
    let payload = serde_json::json!({"session_id": "session-k", "cwd": repo, "hook_event_name": "SessionEnd",
        "reason": "other"})
    .to_string();
    let ref_lock = git_dir.join(format!("refs/mas/focus/{k}.lock"));
    let triggers = vec![
        Trigger::on(RENAMES),
        Trigger::on_paths("openat", [ref_lock.clone()]),
        Trigger::on_paths(RENAMES, [ref_lock]),
        Trigger::on("write"),
    ];
    let end = || event(&env, repo, "claude-code", Some("--session-end"), &serde_json::from_str(&payload).unwrap());
    let tree_before = tree(repo);
    let mut rows = Vec::new();
    let mut completed = Vec::new();
    let swept = killpoints::sweep_fed(
        &triggers,
        payload.as_bytes(),
        |_, _| {
            scene.restore();
            let mut cmd = env.mas_cmd(repo);
            cmd.args(["gate", "--host", "claude-code", "--session-end"]);
            cmd
        },
        |attempt: &Attempt| {
            let point = attempt.point();
            let (mut problems, held) = scene.observe(&env, &tree_before);
            if !attempt.killed {
                if !attempt.output.status.success() || !held.is_empty() {
                    completed.push(format!("{point}: {} / K holds {held:?}", shown(&attempt.output)));
                }
                return;
            }
            let left = killpoints::leftovers(git_dir);
            if held != before && !held.is_empty() {
                problems.push(format!("K holds {held:?}: neither {before:?} nor nothing"));
            }
            problems.extend(other_claims(&env, repo, "src/error.rs"));
            let (verdict, reason) = hook(&env, repo, &write_payload(repo, "session-o", "src/report.rs"));
            let expected = if held.is_empty() { "allow" } else { "deny" };
            if verdict != expected || (verdict == "deny" && !reason.contains(k.as_str())) {
                problems.push(format!(
                    "K holds {held:?}, yet another session's edit of src/report.rs: {verdict}: {reason}"
                ));
            }
            // Run again: beside a left ref lock it reports the lock (a session-end hook decides
            // nothing and exits 0); doctor --fix clears it, and the next run releases.
            if let Some(lock) = scene.ref_lock() {
                let again = end();
                if !stderr(&again).contains(&lock) {
                    problems.push(format!("the hook beside {lock} did not name it: {}", shown(&again)));
                }
                let fixed = env.mas(repo, &["doctor", "--fix"]);
                if !fixed.status.success() || scene.ref_lock().is_some() {
                    problems.push(format!("doctor --fix left {lock}: {}", shown(&fixed)));
                }
            }
            let again = end();
            if !again.status.success() {
                problems.push(format!("the hook run again: {}", shown(&again)));
            }
            match scene.k_holds(&env) {
                Ok(h) if h.is_empty() => {}
                other => problems.push(format!("after the hook ran again K holds {other:?}")),
            }
            problems.extend(killpoints::check_repository(&env, repo).into_iter().map(|p| format!("after: {p}")));
            rows.push(Row { point, held, left, problems });
        },
    );
    report("gate --host claude-code --session-end", &swept, &rows, &completed);
}

/// SIGKILL at every instant of the sweep that puts back a write no hook saw (another session's
/// pre-tool hook, `gate --host claude-code`): the held file is either as the write left it or
/// put back whole, never a mix; no other file changes but for a put-back's temporary; and the next
/// hook call puts it back and leaves no temporary.
#[test]
fn a_sweep_killed_at_any_instant_puts_back_whole_or_leaves_it_for_the_next_call() {
    use crate::team_mode::{event, write_done};
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let f = repo.join("src/lib.rs");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "session-a", "src/lib.rs")).0, "allow");
    std::fs::write(&f, "A's version\n").unwrap();
    event(&env, &repo, "claude-code", Some("--post-tool"), &write_done(&repo, "session-a", "src/lib.rs"));
    // The write no hook saw.
    std::fs::write(&f, "foreign\n").unwrap();
    let pristine = env.root().join("pristine");
    cp(&repo, &pristine);
    let restore = || {
        std::fs::remove_dir_all(&repo).unwrap();
        cp(&pristine, &repo);
    };
    let others = |repo: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        tree(repo)
            .into_iter()
            .filter(|(p, _)| {
                p != Path::new("src/lib.rs") && !p.to_string_lossy().starts_with("src/.lib.rs.git-mas-tmp-")
            })
            .collect()
    };
    let others_before = others(&repo);
    let payload = write_payload(&repo, "session-b", "src/money.rs").to_string();
    let triggers = vec![Trigger::on(RENAMES), Trigger::on("?unlink,unlinkat"), Trigger::on("write")];
    let mut rows = Vec::new();
    let mut completed = Vec::new();
    let swept = killpoints::sweep_fed(
        &triggers,
        payload.as_bytes(),
        |_, _| {
            restore();
            let mut cmd = env.mas_cmd(&repo);
            cmd.args(["gate", "--host", "claude-code"]);
            cmd
        },
        |attempt: &Attempt| {
            let point = attempt.point();
            let mut problems = Vec::new();
            if others(&repo) != others_before {
                problems.push("a file the sweep does not touch changed".into());
            }
            let state = match std::fs::read(&f).ok().as_deref() {
                Some(b"A's version\n") => "put back",
                Some(b"foreign\n") => "as the write left it",
                Some(_) => "MIXED",
                None => "GONE",
            };
            if state == "MIXED" || state == "GONE" {
                problems.push(format!("src/lib.rs is {state}"));
            }
            if !attempt.killed {
                if state != "put back" {
                    completed.push(format!("{point}: {state}"));
                }
                return;
            }
            // The next call of any session puts it back and leaves no temporary.
            let again = fed(env.mas_cmd(&repo).args(["gate", "--host", "claude-code"]), payload.as_bytes());
            if again.status.code() != Some(0) {
                problems.push(format!("the next call: {}", shown(&again)));
            }
            if std::fs::read(&f).ok().as_deref() != Some(&b"A's version\n"[..]) {
                problems.push("after the next call, src/lib.rs is not put back".into());
            }
            let temps = tree(&repo).into_iter().filter(|(p, _)| p.to_string_lossy().contains(".git-mas-tmp-")).count();
            if temps > 0 {
                problems.push(format!("after the next call, {temps} temporary file(s) left"));
            }
            problems.extend(killpoints::check_repository(&env, &repo));
            rows.push(Row { point, held: vec![state.to_string()], left: Vec::new(), problems });
        },
    );
    report("gate --host claude-code (a sweep putting back a write no hook saw)", &swept, &rows, &completed);
}

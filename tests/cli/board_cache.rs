//! The board's caches in the common git dir — the verified windows of the focus chains
//! (`mas-windows-focus`) and the board's read cache in front of it (`mas-board-focus`): whatever
//! state they were left in — current, stale, expired leases, another roster, tampered, torn,
//! another repository's — the gate decides exactly as a fresh read does. Each case runs the gate
//! with the caches as the last call left them, then again with both removed, and asserts both give
//! the expected verdict.

use crate::common::*;
use crate::json::gate::GateOut;
use git_mas::attention::gate::Verdict;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

const CACHE: &str = "mas-windows-focus";
const BOARD: &str = "mas-board-focus";

/// A repository with agents alice, bob and carol, a frame published by bob, alice holding
/// src/report.rs and bob src/config.rs.
fn team() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    let team = env
        .team(&["alice", "bob", "carol"])
        .named("team")
        .frame("bob")
        .focus("alice", "src/report.rs")
        .focus("bob", "src/config.rs")
        .build();
    (env, team.repo)
}

fn cache_path(repo: &Path) -> PathBuf {
    repo.join(".git").join(CACHE)
}

fn board_path(repo: &Path) -> PathBuf {
    repo.join(".git").join(BOARD)
}

/// Removes both caches, returning what they held (for [`put_back`]).
fn take_caches(repo: &Path) -> [Vec<u8>; 2] {
    [cache_path(repo), board_path(repo)].map(|p| {
        let kept = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        std::fs::remove_file(&p).unwrap();
        kept
    })
}

fn put_back(repo: &Path, kept: [Vec<u8>; 2]) {
    let [windows, board] = kept;
    std::fs::write(cache_path(repo), windows).unwrap();
    std::fs::write(board_path(repo), board).unwrap();
}

/// Bob's gate on src/money.rs: the holder blocking it, or `None` when allowed.
fn gate_once(env: &TestEnv, repo: &Path) -> Option<String> {
    let out = env.mas(repo, &["--agent", "bob", "gate", "--paths", "src/money.rs", "--json"]);
    let gate: GateOut = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    match gate.verdict {
        Verdict::Allow { .. } => {
            assert_eq!(out.status.code(), Some(0));
            None
        }
        Verdict::Block { blocks } => {
            assert_eq!(out.status.code(), Some(6));
            Some(blocks[0].holder.clone())
        }
        other => panic!("unexpected verdict {other:?}: {}", stderr(&out)),
    }
}

/// The verdict with the cache as it is, then read fresh (cache removed): both must be `want`.
fn decides(env: &TestEnv, repo: &Path, want: Option<&str>, what: &str) {
    let cached = gate_once(env, repo);
    assert_eq!(cached.as_deref(), want, "{what}: with the cache as it was left");
    assert!(cache_path(repo).exists() && board_path(repo).exists(), "{what}: the gate leaves both caches");
    take_caches(repo);
    let fresh = gate_once(env, repo);
    assert_eq!(fresh.as_deref(), want, "{what}: read fresh");
}

#[test]
fn the_cached_board_follows_publications_and_releases() {
    let (env, repo) = team();
    decides(&env, &repo, None, "nobody holds src/money.rs");
    env.mas_quiet_ok(&repo, &["--agent", "alice", "focus", "publish", "--targets", "src/money.rs"]);
    decides(&env, &repo, Some("alice"), "alice published a focus on it");
    env.mas_quiet_ok(&repo, &["--agent", "alice", "focus", "release"]);
    decides(&env, &repo, None, "alice released it");
    env.mas_quiet_ok(&repo, &["--agent", "carol", "focus", "publish", "--targets", "src/money.rs"]);
    decides(&env, &repo, Some("carol"), "a chain that did not exist before");
}

#[test]
fn a_lease_lapses_with_the_cache_untouched() {
    let (env, repo) = team();
    env.mas_quiet_ok(&repo, &["--agent", "alice", "focus", "publish", "--targets", "src/money.rs", "--ttl", "3s"]);
    assert_eq!(gate_once(&env, &repo).as_deref(), Some("alice"));
    let refs = env.refs(&repo);
    let cache = std::fs::read(cache_path(&repo)).unwrap();
    let board = std::fs::read(board_path(&repo)).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(3500));
    assert_eq!(gate_once(&env, &repo), None, "the lease lapsed");
    assert_eq!(env.refs(&repo), refs, "no ref moved");
    assert_eq!(std::fs::read(cache_path(&repo)).unwrap(), cache, "the windows were not read again");
    assert_eq!(std::fs::read(board_path(&repo)).unwrap(), board, "the board came from its cache");
    decides(&env, &repo, None, "expired");
}

#[test]
fn a_roster_change_is_not_answered_from_the_cache() {
    let (env, repo) = team();
    env.mas_quiet_ok(&repo, &["--agent", "alice", "focus", "publish", "--targets", "src/money.rs"]);
    decides(&env, &repo, Some("alice"), "alice holds it");
    let roster = std::fs::read_to_string(repo.join(".mas/roster")).unwrap();
    let did_of = |name: &str| {
        let line = roster.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap();
        line.split_whitespace().nth(1).unwrap().to_string()
    };
    let commit_roster = |text: &str, msg: &str| {
        std::fs::write(repo.join(".mas/roster"), text).unwrap();
        env.git_quiet_ok(&repo, &["commit", "--quiet", "-am", msg]);
    };
    // Alice's key rotated to carol's: her records no longer verify under the roster.
    let rotated = roster.replace(&did_of("alice"), &did_of("carol")).replace(&format!("carol {}", did_of("carol")), "");
    assert_eq!(gate_once(&env, &repo).as_deref(), Some("alice"), "cache written under the old roster");
    commit_roster(&rotated, "rotate alice's key");
    decides(&env, &repo, None, "alice's key rotated");
    commit_roster(&roster, "restore alice's key");
    decides(&env, &repo, Some("alice"), "alice's key restored");
    let removed: String = roster.lines().filter(|l| !l.starts_with("alice ")).map(|l| format!("{l}\n")).collect();
    commit_roster(&removed, "remove alice");
    decides(&env, &repo, None, "alice removed from the roster");
    // The parsed roster's cache, edited to name alice again without its checksum: not used.
    let parsed = repo.join(".git/mas-roster");
    let text = std::fs::read_to_string(&parsed).unwrap();
    assert!(text.contains("carol") && !text.contains("\"alice\""), "{text}");
    std::fs::write(&parsed, text.replace("carol", "alice").replace(&did_of("carol"), &did_of("alice"))).unwrap();
    decides(&env, &repo, None, "a tampered roster cache");
}

#[test]
fn a_lapsed_chain_is_skipped_by_the_gate_and_still_listed_and_a_new_record_brings_it_back() {
    let (env, repo) = team();
    env.mas_quiet_ok(&repo, &["--agent", "carol", "focus", "publish", "--targets", "src/money.rs", "--ttl", "2s"]);
    assert_eq!(gate_once(&env, &repo).as_deref(), Some("carol"));
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // Carol's chain lapsed: the gate (a live reader) leaves it unparsed; the verdict is a fresh read's.
    decides(&env, &repo, None, "carol's lease lapsed");
    assert_eq!(gate_once(&env, &repo), None);
    // The whole board still lists carol, expired.
    let out = env.mas_ok(&repo, &["focus", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let carol = v["board"]["entries"].as_array().unwrap().iter().find(|e| e["focus"]["agent"] == "carol").cloned();
    assert_eq!(carol.map(|e| e["liveness"].clone()), Some(serde_json::json!("expired")), "{v}");
    // A new record moves the chain: read again, live again.
    env.mas_quiet_ok(&repo, &["--agent", "carol", "focus", "publish", "--targets", "src/money.rs"]);
    decides(&env, &repo, Some("carol"), "carol published again");
}

#[test]
fn a_tampered_or_torn_cache_is_read_fresh() {
    let (env, repo) = team();
    env.mas_quiet_ok(&repo, &["--agent", "alice", "focus", "publish", "--targets", "src/money.rs"]);
    assert_eq!(gate_once(&env, &repo).as_deref(), Some("alice"));
    // Each cache in turn; the windows' with the board's cache gone, so that the board reads them.
    for (name, path, in_front) in
        [(CACHE, cache_path(&repo), Some(board_path(&repo))), (BOARD, board_path(&repo), None)]
    {
        let unused = || {
            if let Some(p) = &in_front {
                std::fs::remove_file(p).unwrap();
            }
        };
        // A read without the board's cache goes through the windows (a read with it reads a moved
        // chain alone and leaves the windows as they were).
        unused();
        assert_eq!(gate_once(&env, &repo).as_deref(), Some("alice"));
        let good = std::fs::read_to_string(&path).unwrap();
        assert!(good.contains("src/money.rs"), "{name}: the cache holds alice's record");
        // An edited record (alice holding something else), its checksum not recomputed.
        std::fs::write(&path, good.replace("src/money.rs", "src/other.rs")).unwrap();
        unused();
        decides(&env, &repo, Some("alice"), &format!("{name}: tampered"));
        // Torn writes: cut anywhere, and garbage.
        for cut in [0, 1, 64, 65, good.len() / 3, good.len() - 1] {
            std::fs::write(&path, &good.as_bytes()[..cut]).unwrap();
            unused();
            decides(&env, &repo, Some("alice"), &format!("{name}: torn at {cut}"));
        }
        std::fs::write(&path, b"\x00\xff not a cache\n{}").unwrap();
        unused();
        decides(&env, &repo, Some("alice"), &format!("{name}: garbage"));
        // A temporary file left by a writer killed before its rename is never read.
        std::fs::write(repo.join(".git").join(format!("{name}.tmp.1")), &good.as_bytes()[..good.len() / 2]).unwrap();
        decides(&env, &repo, Some("alice"), &format!("{name}: a stray temporary file"));
        // A cache that is not a file at all.
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        unused();
        assert_eq!(gate_once(&env, &repo).as_deref(), Some("alice"), "{name}: a directory where the cache was");
        std::fs::remove_dir(&path).unwrap();
    }
}

#[test]
fn a_cache_from_another_repository_is_not_used() {
    let (env, repo) = team();
    env.mas_quiet_ok(&repo, &["--agent", "alice", "focus", "publish", "--targets", "src/money.rs"]);
    assert_eq!(gate_once(&env, &repo).as_deref(), Some("alice"));
    let copy = env.root().join("copy");
    copy_dir(&repo, &copy);
    let copied = [std::fs::read(cache_path(&copy)).unwrap(), std::fs::read(board_path(&copy)).unwrap()];
    assert_eq!(gate_once(&env, &copy).as_deref(), Some("alice"));
    assert_ne!(std::fs::read(board_path(&copy)).unwrap(), copied[1], "the copy's board cache was made anew");
    assert_ne!(std::fs::read(cache_path(&copy)).unwrap(), copied[0], "the copy's window cache was made anew");
    // And the other way round: another repository's cache where this one's was.
    let other = {
        let (env2, other) = team();
        env2.mas_quiet_ok(&other, &["--agent", "alice", "focus", "release"]);
        assert_eq!(gate_once(&env2, &other), None);
        [std::fs::read(cache_path(&other)).unwrap(), std::fs::read(board_path(&other)).unwrap()]
    };
    put_back(&repo, other);
    decides(&env, &repo, Some("alice"), "another repository's caches");
}

#[test]
fn the_edit_hook_decides_from_the_cache_as_from_a_fresh_read() {
    let (env, repo) = team();
    env.git_quiet_ok(&repo, &["config", "mas.gate", "enforce"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "focus", "publish", "--targets", "src/money.rs"]);
    let hook = |file: &str| {
        let payload = serde_json::json!({"cwd": repo, "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": repo.join(file), "content": "x\n"}});
        let mut child = env
            .mas_cmd(&repo)
            .args(["--agent", "bob", "gate", "--host", "claude-code"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(payload.to_string().as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for round in ["fresh", "cached"] {
        let held = hook("src/money.rs");
        assert!(held.contains("\"deny\"") && held.contains("alice"), "{round}: {held}");
        assert_eq!(hook("src/lib.rs"), "", "{round}: a file nobody holds");
        assert!(cache_path(&repo).exists() && board_path(&repo).exists(), "{round}");
    }
}

#[test]
fn a_new_frame_is_seen_through_the_frame_cache() {
    let (env, repo) = team();
    assert_eq!(gate_once(&env, &repo), None);
    assert!(repo.join(".git/mas-windows-frame").exists(), "the frame's window is cached");
    std::fs::write(repo.join("src/report.rs"), "// changed\n").unwrap();
    env.mas_quiet_ok(&repo, &["--agent", "carol", "snapshot", "--publish"]);
    for round in ["after the new frame", "read fresh"] {
        let out = env.mas(&repo, &["--agent", "bob", "gate", "--paths", "src/money.rs"]);
        assert_eq!(out.status.code(), Some(7), "{round}: bob's focus is on the old frame: {}", stderr(&out));
        assert!(stderr(&out).contains("republish your focus"), "{round}: {}", stderr(&out));
        std::fs::remove_file(repo.join(".git/mas-windows-frame")).unwrap();
    }
}

#[test]
fn a_chain_that_moved_on_is_read_back_to_its_cached_tip_as_a_fresh_read_would_be() {
    let (env, repo) = team();
    let chain = "refs/mas/focus/alice";
    let listed =
        || -> serde_json::Value { serde_json::from_str(&env.mas_ok(&repo, &["focus", "list", "--json"])).unwrap() };
    listed();
    // 40 steps, past the board's window of 32 records: signed records (two at some steps),
    // one record that is not signed and one replay of an older record of alice's pushed on top
    // with plain git.
    for step in 0..40 {
        match step {
            13 => forge_record(
                &env,
                &repo,
                chain,
                br#"{"agent":"alice","kind":"focus","payload":{},"schema":1,"seq":999}"#,
                "",
            ),
            27 => {
                let old = env.git(&repo, &["rev-parse", &format!("{chain}~5:record.json")]);
                forge_tree(&env, &repo, chain, &format!("100644 blob {old}\trecord.json\n"), None);
            }
            _ if step % 5 == 0 => {
                // Two records with no board read between them (`focus publish` reads the board
                // first), so that the next read joins two: the tip's payload, other targets.
                let tip: serde_json::Value =
                    serde_json::from_str(&env.git(&repo, &["cat-file", "-p", &format!("{chain}:record.json")]))
                        .unwrap();
                for target in ["src/lib.rs", "src/report.rs"] {
                    let mut payload = tip["payload"].clone();
                    payload["targets"] = serde_json::json!([target]);
                    let payload = payload.to_string();
                    let args = ["--agent", "alice", "record", "append", "--kind", "focus", "--ref", chain, "--payload"];
                    env.mas_quiet_ok(&repo, &[&args[..], &[payload.as_str()]].concat());
                }
            }
            _ => {
                let target = ["src/money.rs", "src/lib.rs", "src/report.rs"][step % 3];
                env.mas_quiet_ok(&repo, &["--agent", "alice", "focus", "publish", "--targets", target]);
            }
        }
        // Read with the cache as the previous step's read left it (the chain moved on from it),
        // then fresh; and the cache put back, so that the next step reads onto it again.
        let onto = listed();
        let kept = take_caches(&repo);
        assert_eq!(onto, listed(), "step {step}: the board read onto the cached window differs from a fresh read");
        put_back(&repo, kept);
        assert_eq!(onto, listed(), "step {step}: the board read from its cache differs from a fresh read");
    }
    let board = listed();
    let rejected = board["board"]["rejected"].to_string();
    assert!(rejected.contains("alice"), "the forged records are still in the window: {board}");
}

/// The listing of the focus refs is kept (`mas-refs-focus`) once the board has been quiet for a
/// second, and a claim made after that is seen by the very next call: session b, refused a's
/// file on a quiet board (its call keeps the listing), is then refused the file c claims next.
#[test]
fn a_claim_made_after_the_listing_was_kept_is_seen_by_the_next_call() {
    use crate::team_mode::{hook, team_repo, write_payload};
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let (a, note) = hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs"));
    assert_eq!(a, "allow", "{note}");
    let kept = repo.join(".git/mas-refs-focus");
    // Quiet for longer than a listing must be before it is kept.
    std::thread::sleep(std::time::Duration::from_millis(1300));
    let (b, reason) = hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs"));
    assert_eq!(b, "deny", "{reason}");
    assert!(kept.exists(), "a listing of a board quiet for a second was not kept");
    let (c, note) = hook(&env, &repo, &write_payload(&repo, "c", "src/money.rs"));
    assert_eq!(c, "allow", "{note}");
    let (b, reason) = hook(&env, &repo, &write_payload(&repo, "b", "src/money.rs"));
    assert_eq!(b, "deny", "b was let edit the file c claimed after b's listing was kept: {reason}");
    assert!(reason.contains("src/money.rs"), "{reason}");
}

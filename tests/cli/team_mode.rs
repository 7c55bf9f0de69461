//! Team mode: host sessions in one checkout get their identity and their claims from the hook
//! payloads alone — no GIT_MAS_AGENT, no focus published by hand.

use crate::common::*;
use crate::json::focus::FocusListOut;
use serde_json::{Value, json};
use std::path::Path;

/// A repository in team mode: alice on the roster (her key on this machine) as the principal,
/// gate enforced, no frame and no focus.
pub fn team_repo(env: &TestEnv) -> std::path::PathBuf {
    let team = env
        .team(&["alice"])
        .config("mas.agent", "alice")
        .config("mas.team", "true")
        .config("mas.gate", "enforce")
        .build();
    team.repo
}

/// A Claude Code Write payload of session `session` for `path` (relative to `repo`).
pub fn write_payload(repo: &Path, session: &str, path: &str) -> Value {
    json!({
        "session_id": session,
        "cwd": repo,
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": repo.join(path), "content": "new\n"},
    })
}

/// What the claude-code hook answered: "allow" (no output) or "deny" with its reason.
pub fn hook(env: &TestEnv, repo: &Path, payload: &Value) -> (String, String) {
    let out = fed(env.mas_cmd(repo).args(["gate", "--host", "claude-code"]), payload.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    if out.stdout.is_empty() {
        return ("allow".into(), stderr(&out));
    }
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let h = &v["hookSpecificOutput"];
    (h["permissionDecision"].as_str().unwrap_or("?").to_string(), h["permissionDecisionReason"].to_string())
}

/// The board, as `focus list --json` shows it.
pub fn board(env: &TestEnv, repo: &Path) -> FocusListOut {
    serde_json::from_str(&env.mas_ok(repo, &["focus", "list", "--json"])).unwrap()
}

#[test]
fn sessions_claim_by_editing_and_are_held_off_each_others_files() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert!(env.refs(&repo).lines().all(|l| !l.starts_with("refs/mas/")), "no frame, no focus yet");
    let before = std::fs::read(repo.join("src/lib.rs")).unwrap();

    // A's first edit: allowed, publishes the frame, claims the file.
    let (a, note) = hook(&env, &repo, &write_payload(&repo, "session-a", "src/lib.rs"));
    assert_eq!(a, "allow", "{note}");
    assert!(note.contains("published frame") && note.contains("claims src/lib.rs"), "{note}");
    let b = board(&env, &repo);
    let live: Vec<_> = b.board.live().collect();
    assert_eq!(live.len(), 1, "{b:?}");
    let alice_a = live[0].agent.clone();
    assert!(alice_a.starts_with("alice.claude-"), "{alice_a}");
    assert_eq!(live[0].targets, ["src/lib.rs"]);

    // B (another session of the same member) is denied, naming A, time left and a remedy.
    let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "session-b", "src/lib.rs"));
    assert_eq!(verdict, "deny", "{reason}");
    assert!(reason.contains(&alice_a) && reason.contains("15 min left") && reason.contains("Remedy"), "{reason}");
    assert!(!reason.contains("no live focus") && !reason.contains("no frame"), "{reason}");
    assert_eq!(std::fs::read(repo.join("src/lib.rs")).unwrap(), before, "the gate wrote nothing");

    // B's edit of another file, and of a file that does not exist yet, is allowed and claimed.
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "session-b", "src/money.rs")).0, "allow");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "session-b", "src/fresh.rs")).0, "allow");
    let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "session-a", "src/fresh.rs"));
    assert_eq!(verdict, "deny", "a new file is claimed like any other: {reason}");

    // Every claimed file is held, not only the top target.
    let b = board(&env, &repo);
    let alice_b = b.board.live().find(|f| f.agent != alice_a).unwrap();
    assert_eq!(alice_b.targets.len(), 2, "{b:?}");
    for t in alice_b.targets.clone() {
        assert_eq!(hook(&env, &repo, &write_payload(&repo, "session-a", &t)).0, "deny", "{t}");
    }
    // A re-edits its own file: allowed, nothing written.
    let refs = env.refs(&repo);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "session-a", "src/lib.rs")).0, "allow");
    assert_eq!(env.refs(&repo), refs, "a fresh claim is not rewritten");
}

#[test]
fn a_pinned_identity_wins_over_the_session() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let out = fed(
        env.mas_cmd(&repo).env("GIT_MAS_AGENT", "alice").args(["gate", "--host", "claude-code"]),
        write_payload(&repo, "session-a", "src/lib.rs").to_string().as_bytes(),
    );
    assert!(out.stdout.is_empty(), "{}", shown(&out));
    let b = board(&env, &repo);
    assert_eq!(b.board.live().map(|f| f.agent.as_str()).collect::<Vec<_>>(), ["alice"]);
}

#[test]
fn a_lapsed_claim_says_it_expired_and_a_partial_release_frees_one_file() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    env.git_quiet_ok(&repo, &["config", "mas.claimTtl", "2s"]);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // The claim lapsed: B takes the file; A is told its claim expired.
    env.git_quiet_ok(&repo, &["config", "mas.claimTtl", "15m"]);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs")).0, "allow");
    let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs"));
    assert_eq!(verdict, "deny");
    assert!(reason.contains("expired"), "{reason}");
    // B releases that one file by name with the command the cap message teaches.
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/money.rs")).0, "allow");
    let b_agent = board(&env, &repo).board.live().next().unwrap().agent.clone();
    env.mas_quiet_ok(&repo, &["--agent", &b_agent, "focus", "release", "--targets", "src/lib.rs"]);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/money.rs")).0, "deny", "the rest is still held");
}

#[test]
fn a_ninth_claim_is_refused_naming_what_to_release() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    for i in 0..8 {
        assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", &format!("new{i}.txt"))).0, "allow");
    }
    let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "a", "new8.txt"));
    assert_eq!(verdict, "deny", "{reason}");
    assert!(reason.contains("already claims 8 files") && reason.contains("focus release --targets"), "{reason}");
    let b = board(&env, &repo);
    assert_eq!(b.board.live().next().unwrap().targets.len(), 8, "no claim dropped");
}

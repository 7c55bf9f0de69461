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
    let out = fed(env.hook_cmd(repo).args(["--host", "claude-code"]), payload.to_string().as_bytes());
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
    env.mas_quiet_ok(&repo, &["--agent", &b_agent, "focus", "release", "--force", "--targets", "src/lib.rs"]);
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

/// A Claude Code payload of `event` (PreToolUse, PostToolUse) for a Bash call of `session`.
pub fn bash_payload(repo: &Path, session: &str, event: &str) -> Value {
    json!({
        "session_id": session,
        "cwd": repo,
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": "sh -c 'echo x > src/lib.rs'"},
    })
}

/// Runs `git mas gate --host HOST [FLAG]` with `payload`.
pub fn event(env: &TestEnv, repo: &Path, host: &str, flag: Option<&str>, payload: &Value) -> std::process::Output {
    let mut cmd = env.mas_cmd(repo);
    cmd.args(["gate", "--host", host]);
    if let Some(f) = flag {
        cmd.arg(f);
    }
    let out = fed(&mut cmd, payload.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    out
}

#[test]
fn a_shell_write_to_a_held_file_is_put_back_after_the_call_and_the_agent_is_told() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    let held = std::fs::read(repo.join("src/lib.rs")).unwrap();
    // B's shell call: allowed before (a shell command names no file), then it overwrites A's file,
    // creates a file A claimed but has not written yet, and writes a free file.
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/planned.rs")).0, "allow");
    let pre = event(&env, &repo, "claude-code", None, &bash_payload(&repo, "b", "PreToolUse"));
    assert!(pre.stdout.is_empty(), "{}", shown(&pre));
    std::fs::write(repo.join("src/lib.rs"), "clobbered\n").unwrap();
    std::fs::write(repo.join("src/planned.rs"), "mine\n").unwrap();
    std::fs::write(repo.join("src/free.rs"), "free\n").unwrap();
    let post = event(&env, &repo, "claude-code", Some("--post-tool"), &bash_payload(&repo, "b", "PostToolUse"));
    let v: Value = serde_json::from_slice(&post.stdout).unwrap();
    assert_eq!(v["decision"], "block", "the reason reaches the model: {v}");
    let told = v["reason"].as_str().unwrap();
    assert!(told.contains("src/lib.rs") && told.contains("put back") && told.contains("alice.claude-"), "{told}");
    assert!(told.contains("src/planned.rs") && told.contains("removed"), "{told}");
    assert_eq!(std::fs::read(repo.join("src/lib.rs")).unwrap(), held, "byte-identical again");
    assert!(!repo.join("src/planned.rs").exists());
    assert_eq!(std::fs::read_to_string(repo.join("src/free.rs")).unwrap(), "free\n", "a free file is B's to write");
    // Nothing pending is left: the next call of B is not refused.
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/free.rs")).0, "allow");
}

/// A shell call keeps the files others hold as second names of the held files' guard's copies
/// (nothing written but the folder), and puts a file back from its own copy even when the
/// guard's is gone by then.
#[test]
fn a_shell_calls_copies_are_second_names_of_the_guards_and_outlive_them() {
    use std::os::unix::fs::MetadataExt as _;
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    let held = std::fs::read(repo.join("src/lib.rs")).unwrap();
    let pre = event(&env, &repo, "claude-code", None, &bash_payload(&repo, "b", "PreToolUse"));
    assert!(pre.stdout.is_empty(), "{}", shown(&pre));
    let guard = repo.join(".git/mas/held/copies");
    let shell: Vec<_> = std::fs::read_dir(repo.join(".git/mas/shell"))
        .unwrap()
        .flatten()
        .flat_map(|s| std::fs::read_dir(s.path().join("copies")).unwrap().flatten())
        .map(|c| c.path())
        .collect();
    assert_eq!(shell.len(), 1, "{shell:?}");
    let name = shell[0].file_name().unwrap();
    let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
    assert_eq!(ino(&shell[0]), ino(&guard.join(name)), "a second name of the guard's copy");
    std::fs::remove_file(guard.join(name)).unwrap();
    std::fs::write(repo.join("src/lib.rs"), "clobbered\n").unwrap();
    let post = event(&env, &repo, "claude-code", Some("--post-tool"), &bash_payload(&repo, "b", "PostToolUse"));
    assert!(String::from_utf8_lossy(&post.stdout).contains("put back"), "{}", shown(&post));
    assert_eq!(std::fs::read(repo.join("src/lib.rs")).unwrap(), held, "byte-identical again");
}

#[test]
fn the_holders_own_edit_during_anothers_shell_call_is_not_undone() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    event(&env, &repo, "claude-code", None, &bash_payload(&repo, "b", "PreToolUse"));
    // A edits its own file while B's shell call runs.
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    std::fs::write(repo.join("src/lib.rs"), "A's new text\n").unwrap();
    let post = event(&env, &repo, "claude-code", Some("--post-tool"), &bash_payload(&repo, "b", "PostToolUse"));
    assert!(post.stdout.is_empty(), "{}", shown(&post));
    assert_eq!(std::fs::read_to_string(repo.join("src/lib.rs")).unwrap(), "A's new text\n");
}

#[test]
fn copilot_is_told_in_the_shell_calls_result_kept_whole() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    let held = std::fs::read(repo.join("src/lib.rs")).unwrap();
    let call = json!({"sessionId": "cp-1", "cwd": repo, "toolName": "bash", "toolArgs": {"command": "x"}});
    let pre = event(&env, &repo, "copilot", None, &call);
    assert!(pre.stdout.is_empty(), "{}", shown(&pre));
    std::fs::write(repo.join("src/lib.rs"), "clobbered\n").unwrap();
    let mut after = call.clone();
    after["toolResult"] = json!({"resultType": "success", "textResultForLlm": "<exited with exit code 0>"});
    let post = event(&env, &repo, "copilot", Some("--post-tool"), &after);
    let v: Value = serde_json::from_slice(&post.stdout).unwrap();
    let text = v["modifiedResult"]["textResultForLlm"].as_str().unwrap();
    assert!(text.starts_with("<exited with exit code 0>\n\n"), "the call's own result comes first: {text}");
    assert!(text.contains("src/lib.rs") && text.contains("put back") && text.contains("alice.claude-"), "{text}");
    assert_eq!(v["modifiedResult"]["resultType"], "success");
    assert_eq!(std::fs::read(repo.join("src/lib.rs")).unwrap(), held);
    // Told once: the next call is not refused.
    let next = event(&env, &repo, "copilot", None, &call);
    assert!(next.stdout.is_empty(), "{}", shown(&next));
}

#[test]
fn a_host_that_does_not_show_post_tool_answers_hears_it_at_its_next_call() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    let held = std::fs::read(repo.join("src/lib.rs")).unwrap();
    // Copilot's post-tool payload without the tool's result: there is no result to hand back.
    let copilot = |event_cwd: &Path| json!({"sessionId": "cp-1", "cwd": event_cwd, "toolName": "bash", "toolArgs": {"command": "x"}});
    let pre = event(&env, &repo, "copilot", None, &copilot(&repo));
    assert!(pre.stdout.is_empty(), "{}", shown(&pre));
    std::fs::write(repo.join("src/lib.rs"), "clobbered\n").unwrap();
    let post = event(&env, &repo, "copilot", Some("--post-tool"), &copilot(&repo));
    assert!(post.stdout.is_empty(), "no result to hand back with the message: {}", shown(&post));
    assert_eq!(std::fs::read(repo.join("src/lib.rs")).unwrap(), held, "put back all the same");
    // The next call of that session runs, told what happened beside it (never refused for a
    // restore that already happened).
    let next = event(&env, &repo, "copilot", None, &copilot(&repo));
    let v: Value = serde_json::from_slice(&next.stdout).unwrap();
    assert_eq!(v["permissionDecision"], "allow", "{v}");
    let reason = v["permissionDecisionReason"].as_str().unwrap();
    assert!(reason.contains("src/lib.rs") && reason.contains("put back"), "{reason}");
    let again = event(&env, &repo, "copilot", None, &copilot(&repo));
    assert!(again.stdout.is_empty(), "told once: {}", shown(&again));
}

#[test]
fn a_session_that_ends_releases_its_claims_at_once() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs")).0, "deny");
    let end = json!({"session_id": "a", "cwd": repo, "hook_event_name": "SessionEnd", "reason": "other"});
    let out = event(&env, &repo, "claude-code", Some("--session-end"), &end);
    assert!(stderr(&out).contains("released src/lib.rs"), "{}", shown(&out));
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs")).0, "allow");
}

/// Runs `script` as one session's shell would: in a process standing for the host (a copy of `sh`
/// under another name, as a host is not a shell), the pre-tool hook of its Bash call first, so
/// the process tree names the session for the git-mas commands and the `git commit` inside.
fn in_session(env: &TestEnv, repo: &Path, session: &str, script: &str) -> std::process::Output {
    let host = env.root().join("fakehost");
    if !host.exists() {
        std::fs::copy("/bin/sh", &host).unwrap();
    }
    let payload = bash_payload(repo, session, "PreToolUse").to_string().replace('\'', "'\\''");
    let whole = format!("printf '%s' '{payload}' | git mas gate --host claude-code >/dev/null && {script}");
    // The hermetic environment of the tests' git-mas runs.
    let mas = env.mas_cmd(repo);
    let mut sh = std::process::Command::new(&host);
    sh.env_clear();
    for (k, v) in mas.get_envs() {
        if let Some(v) = v {
            sh.env(k, v);
        }
    }
    sh.current_dir(repo).args(["-c", &whole]);
    // The copy was just written: a child another test thread forked meanwhile may still hold its
    // write descriptor until that child execs, and exec then fails with ETXTBSY. Try again.
    for _ in 0..100 {
        match sh.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            other => return other.unwrap(),
        }
    }
    panic!("{} stayed busy", host.display())
}

#[test]
fn a_sessions_shell_acts_as_the_session() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/money.rs")).0, "allow");
    let out = in_session(&env, &repo, "a", "git mas whoami --json && git mas focus release --targets src/lib.rs");
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let who: Value = serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert!(who["name"].as_str().unwrap().starts_with("alice.claude-"), "{who}");
    assert_eq!(who["identity_from"], "session", "{who}");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs")).0, "allow", "released by the session");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/money.rs")).0, "deny");
    // The person's own commands, outside any session, stay the principal's.
    let me: Value = serde_json::from_str(&env.mas_ok(&repo, &["whoami", "--json"])).unwrap();
    assert_eq!(me["name"], "alice", "{me}");
}

#[test]
fn the_commit_gate_refuses_another_sessions_file_and_check_agrees() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    env.mas_quiet_ok(&repo, &["hooks", "install"]);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/money.rs")).0, "allow");
    std::fs::write(repo.join("src/lib.rs"), "A's change\n").unwrap();
    std::fs::write(repo.join("src/money.rs"), "B's change\n").unwrap();
    // B's `git add` sweeps in A's file: its commit is refused, with the command that unstages it.
    let out = in_session(&env, &repo, "b", "git add src && git commit -q -m sweep");
    assert_ne!(out.status.code(), Some(0), "{}", shown(&out));
    let said = stderr(&out);
    assert!(said.contains("src/lib.rs") && said.contains("git restore --staged -- src/lib.rs"), "{said}");
    assert!(!said.contains("src/money.rs is held"), "B's own claim does not block B: {said}");
    // Unstaged as told, B's commit of its own file goes through, with team mode's receipt.
    env.git_quiet_ok(&repo, &["restore", "--staged", "--", "src/lib.rs"]);
    let out = in_session(&env, &repo, "b", "git commit -q -m mine");
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let msg = env.git(&repo, &["log", "-1", "--format=%B"]);
    assert!(msg.contains("Mas-Agent: alice.claude-") && msg.contains("Mas-Rule: claims"), "{msg}");
    // `git mas check` replays it by the same rule: clean.
    let out = env.mas(&repo, &["check", "HEAD~1..HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    // A's commit of its own file is allowed too.
    let out = in_session(&env, &repo, "a", "git commit -q -a -m theirs");
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
}

#[test]
fn two_sessions_pinned_to_one_identity_are_warned() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let pinned = |session: &str, path: &str| {
        fed(
            env.mas_cmd(&repo).env("GIT_MAS_AGENT", "alice").args(["gate", "--host", "claude-code"]),
            write_payload(&repo, session, path).to_string().as_bytes(),
        )
    };
    assert!(pinned("one", "src/lib.rs").stdout.is_empty());
    let out = pinned("two", "src/money.rs");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let said = v["systemMessage"].as_str().unwrap_or_default();
    assert!(said.contains("act as alice too") && said.contains("GIT_MAS_AGENT"), "{v}");
}

#[test]
fn sessions_in_linked_worktrees_share_claims_and_a_new_worktree_is_protected() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    // A worktree added afterwards, with nothing run in it.
    let wt = env.root().join("wt-b");
    env.git_quiet_ok(&repo, &["worktree", "add", "--quiet", "-b", "b", wt.to_str().unwrap()]);
    let (verdict, reason) = hook(&env, &wt, &write_payload(&wt, "b", "src/lib.rs"));
    assert_eq!(verdict, "deny", "{reason}");
    assert!(reason.contains("alice.claude-"), "{reason}");
    assert_eq!(hook(&env, &wt, &write_payload(&wt, "b", "src/money.rs")).0, "allow");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/money.rs")).0, "deny", "claims are shared at once");
}

#[test]
fn ended_sessions_leave_no_refs_behind_after_the_retention() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    env.git_quiet_ok(&repo, &["config", "mas.sessionRetention", "0s"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "snapshot", "--publish"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "focus", "publish", "--top", "1"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "focus", "release"]);
    let focus_refs = || env.git(&repo, &["for-each-ref", "--format=%(refname)", "refs/mas/focus/"]).lines().count();
    // Many sessions come and go: each claims, then ends.
    for i in 0..12 {
        let s = format!("session-{i}");
        assert_eq!(hook(&env, &repo, &write_payload(&repo, &s, "src/lib.rs")).0, "allow", "{s}");
        let end = json!({"session_id": s, "cwd": repo, "hook_event_name": "SessionEnd", "reason": "other"});
        event(&env, &repo, "claude-code", Some("--session-end"), &end);
        assert!(focus_refs() <= 2, "after {s}: {}", env.refs(&repo));
    }
    // A live session is never pruned; nor is a roster agent's chain.
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "live", "src/money.rs")).0, "allow");
    let out: crate::json::focus::FocusPruneOut =
        serde_json::from_str(&env.mas_ok(&repo, &["focus", "prune", "--older-than", "0s", "--json"])).unwrap();
    assert!(out.deleted.is_empty(), "{out:?}");
    let refs = env.git(&repo, &["for-each-ref", "--format=%(refname)", "refs/mas/focus/"]);
    assert!(refs.contains("refs/mas/focus/alice\n") && refs.contains("refs/mas/focus/alice.claude-"), "{refs}");
}

#[test]
fn git_mas_gate_applies_team_modes_rule_too() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    // The principal, with no focus of its own: blocked by the session's file only.
    let out = env.mas(&repo, &["gate", "--paths", "src/lib.rs", "--json"]);
    assert_eq!(out.status.code(), Some(6), "{}", shown(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["verdict"]["blocks"][0]["holder"].as_str().unwrap().starts_with("alice.claude-"), "{v}");
    assert!(v["verdict"]["blocks"][0]["remedy"].as_str().unwrap().contains("git restore --staged"), "{v}");
    let out = env.mas(&repo, &["gate", "--paths", "src/money.rs"]);
    assert_eq!(out.status.code(), Some(0), "no focus needed: {}", shown(&out));
}

/// A session's claims are kept in the frame's order (not the order of its edits), read from a
/// cache of that order in the common git dir: a cache that is edited, or left from another
/// frame, is not believed and is written again.
#[test]
fn claims_follow_the_frames_order_whatever_the_order_cache_holds() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let cache = repo.join(".git/mas-frame-order");
    let snapshot_order = |env: &TestEnv| -> Vec<String> {
        let snapshot = env.git(&repo, &["cat-file", "-p", "refs/mas/frame:snapshot.json"]);
        let v: Value = serde_json::from_str(&snapshot).unwrap();
        v["targets"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap().to_string()).collect()
    };
    let files = ["src/money.rs", "src/lib.rs", "src/config.rs"];
    let claim_all = |session: &str| {
        // The session before lets go of the files first.
        for agent in board(&env, &repo).board.live().map(|f| f.agent.clone()).collect::<Vec<_>>() {
            env.mas_quiet_ok(&repo, &["--agent", &agent, "focus", "release", "--force"]);
        }
        for f in files {
            assert_eq!(hook(&env, &repo, &write_payload(&repo, session, f)).0, "allow", "{f}");
        }
        let b = board(&env, &repo);
        let mine: Vec<_> = b.board.live().filter(|f| f.agent.ends_with(&session_suffix(session))).collect();
        assert_eq!(mine.len(), 1, "{b:?}");
        mine[0].targets.clone()
    };
    let expected = |env: &TestEnv| {
        let order = snapshot_order(env);
        let mut want: Vec<String> = files.iter().map(|s| s.to_string()).collect();
        want.sort_by_key(|f| order.iter().position(|t| t == f).unwrap_or(usize::MAX));
        want
    };

    let got = claim_all("a");
    assert_eq!(got, expected(&env), "the frame's order, not the edits'");
    let blob = env.git(&repo, &["rev-parse", "refs/mas/frame:snapshot.json"]);
    let written = std::fs::read_to_string(&cache).unwrap();
    assert_eq!(written.lines().nth(1), Some(blob.trim()), "keyed by the snapshot's blob: {written}");

    // An edited cache (the order of two ids swapped, the seal left): not believed.
    let swapped: Vec<String> = {
        let mut lines: Vec<String> = written.lines().map(str::to_string).collect();
        let at = |id: &str| {
            lines.iter().position(|l| *l == format!("{id:?}")).unwrap_or_else(|| panic!("{id} in {lines:?}"))
        };
        let (i, j) = (at(&got[0]), at(&got[2]));
        lines.swap(i, j);
        lines
    };
    std::fs::write(&cache, swapped.join("\n") + "\n").unwrap();
    assert_eq!(claim_all("b"), expected(&env), "an edited cache is read afresh");
    assert_ne!(std::fs::read_to_string(&cache).unwrap(), swapped.join("\n") + "\n", "and written again");

    // A cache of another frame (the working tree changed, a new frame published): written again.
    std::fs::write(repo.join("src/new_module.rs"), "pub fn f() {}\n").unwrap();
    env.mas_quiet_ok(&repo, &["snapshot", "--publish"]);
    let blob2 = env.git(&repo, &["rev-parse", "refs/mas/frame:snapshot.json"]);
    assert_ne!(blob, blob2);
    assert_eq!(claim_all("c"), expected(&env));
    let rewritten = std::fs::read_to_string(&cache).unwrap();
    assert_eq!(rewritten.lines().nth(1), Some(blob2.trim()), "{rewritten}");
}

/// The end of a session agent's name for session id `session` (`-<8 hex of its sha256>`).
fn session_suffix(session: &str) -> String {
    use sha2::Digest as _;
    let hex: String = sha2::Sha256::digest(session.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    format!("-{}", &hex[..8])
}

/// A ref lock left on a session's chain by a process that died: the session's next claim is
/// refused with the remedy that cures it (`git mas doctor --fix`), not only "retry"; once fixed,
/// the claim is made.
#[test]
fn a_claim_blocked_by_a_stale_ref_lock_names_doctor_fix() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    let agent = format!("alice.claude{}", session_suffix("a"));
    let lock = repo.join(format!(".git/refs/mas/focus/{agent}.lock"));
    std::fs::write(&lock, b"").unwrap();
    crate::doctor::touch(&lock, "1 hour ago");
    let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "a", "src/money.rs"));
    assert_eq!(verdict, "deny", "{reason}");
    assert!(reason.contains(&format!("{agent}.lock")) && reason.contains("git mas doctor --fix"), "{reason}");
    assert_eq!(reason.matches("git mas doctor --fix").count(), 1, "said once: {reason}");
    env.mas_quiet_ok(&repo, &["doctor", "--fix"]);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/money.rs")).0, "allow");
}

/// Claude Code puts its session id in its shell's environment (`CLAUDE_CODE_SESSION_ID`): a
/// `git mas` command run there is that session's agent even with no process recorded for it.
#[test]
fn claude_codes_session_id_in_the_shell_makes_the_command_the_sessions() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/money.rs")).0, "allow");
    let run = |args: &[&str]| env.mas_cmd(&repo).args(args).env("CLAUDE_CODE_SESSION_ID", "a").output().unwrap();
    let who: Value = serde_json::from_slice(&run(&["whoami", "--json"]).stdout).unwrap();
    assert_eq!(who["name"], format!("alice.claude{}", session_suffix("a")), "{who}");
    assert_eq!(who["identity_from"], "session", "{who}");
    let out = run(&["focus", "release", "--targets", "src/lib.rs"]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs")).0, "allow", "released by the session");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/money.rs")).0, "deny");
}

/// Another live session's claims are its uncommitted work's only protection: from a session's
/// shell, releasing them is refused (with --force too); from a person's terminal it needs
/// --force, and the holder is told at its next call.
#[test]
fn another_sessions_claims_are_released_only_with_force_and_never_from_a_sessions_shell() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    let a = format!("alice.claude{}", session_suffix("a"));
    for force in ["", " --force"] {
        let out = in_session(&env, &repo, "b", &format!("git mas --agent {a} focus release{force}"));
        assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
        assert!(stderr(&out).contains(&format!("cannot release the claims of {a}")), "{}", shown(&out));
        let out =
            in_session(&env, &repo, "b", &format!("git mas --agent {a} focus release --targets src/lib.rs{force}"));
        assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    }
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs")).0, "deny", "A still holds it");
    // A person's terminal: --force is needed, and A hears of it.
    let out = env.mas(&repo, &["--agent", &a, "focus", "release"]);
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    assert!(stderr(&out).contains("--force"), "{}", shown(&out));
    let out = env.mas(&repo, &["--agent", &a, "focus", "release", "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs")).0, "allow", "released");
    let next = event(&env, &repo, "claude-code", None, &write_payload(&repo, "a", "src/money.rs"));
    assert!(stdout(&next).contains("were released by `git mas focus release --force`"), "{}", shown(&next));
    assert!(!stdout(&next).contains("\"deny\""), "{}", shown(&next));
}

/// A roster entry named like another member's session (`alice.claude-<hex>` under bob's key) is
/// refused by `agent new`, and one committed anyway is ignored with a warning: alice's session's
/// records still verify against alice's key, and its claim holds.
#[test]
fn a_roster_name_shaped_like_another_members_session_is_refused() {
    let env = TestEnv::new();
    let team = env
        .team(&["alice", "bob"])
        .config("mas.agent", "alice")
        .config("mas.team", "true")
        .config("mas.gate", "enforce")
        .build();
    let repo = team.repo;
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    let session = format!("alice.claude{}", session_suffix("a"));
    let out = env.mas(&repo, &["agent", "new", &session]);
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    assert!(stderr(&out).contains("shaped like a session of 'alice'"), "{}", shown(&out));
    // Committed by hand under bob's key.
    let roster = std::fs::read_to_string(repo.join(".mas/roster")).unwrap();
    let bob_did = roster.lines().find_map(|l| l.strip_prefix("bob ")).unwrap().to_string();
    std::fs::write(repo.join(".mas/roster"), format!("{roster}{session} {bob_did}\n")).unwrap();
    env.git_quiet_ok(&repo, &["commit", "--quiet", "--no-verify", "-am", "impostor"]);
    // `git mas check` lists the roster change, whoever signed it.
    let checked = env.mas(&repo, &["check", "HEAD~1..HEAD"]);
    assert_ne!(checked.status.code(), Some(0), "{}", shown(&checked));
    let said = format!("{}{}", stdout(&checked), stderr(&checked));
    assert!(said.contains(&format!("impostor: '{session}' is named like a session of 'alice'")), "{said}");
    let listed = env.mas(&repo, &["focus", "list", "--json"]);
    assert!(stderr(&listed).contains("is refused"), "{}", shown(&listed));
    let board: crate::json::focus::FocusListOut = serde_json::from_slice(&listed.stdout).unwrap();
    let holds: Vec<_> = board.board.live().map(|f| (f.agent.clone(), f.targets.clone())).collect();
    assert_eq!(holds, [(session.clone(), vec!["src/lib.rs".to_string()])], "alice's session's claim holds");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs")).0, "deny");
}

/// A session whose host process is SIGKILLed runs no session-end hook: its claims end with the
/// process (on this machine), `status` says why, and another session may edit the file at once.
/// A session whose host ran elsewhere (no process recorded here) keeps its claims' time to live.
#[test]
fn a_killed_sessions_claims_end_with_its_host_process() {
    use crate::json::status::StatusOut;
    let env = TestEnv::new();
    let repo = team_repo(&env);
    // A host standing for a session's (a copy of `sh` under another name, as a host is not a
    // shell): it runs the session's edit hook, then lingers.
    let host = env.root().join("fakehost");
    std::fs::copy("/bin/sh", &host).unwrap();
    let payload = write_payload(&repo, "k", "src/lib.rs").to_string().replace('\'', "'\\''");
    let claimed = env.root().join("claimed");
    let script = format!(
        "printf '%s' '{payload}' | git mas gate --host claude-code >/dev/null && touch {}; sleep 60",
        claimed.display()
    );
    let mas = env.mas_cmd(&repo);
    let mut cmd = std::process::Command::new(&host);
    cmd.env_clear();
    for (k, v) in mas.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    cmd.current_dir(&repo).args(["-c", &script]);
    let mut child = loop {
        match cmd.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            other => break other.unwrap(),
        }
    };
    let started = std::time::Instant::now();
    while !claimed.exists() && started.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(claimed.exists(), "the session never claimed");
    let k = format!("alice.claude{}", session_suffix("k"));
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs")).0, "deny", "k's host runs");
    child.kill().unwrap();
    child.wait().unwrap();
    let s: StatusOut = serde_json::from_str(&env.mas_ok(&repo, &["status", "--json"])).unwrap();
    assert!(s.agents.iter().all(|a| a.agent != k), "{:?}", s.agents);
    assert!(s.process_gone.iter().any(|g| g.agent == k && g.claims == ["src/lib.rs"]), "{:?}", s.process_gone);
    let human = env.mas_ok(&repo, &["status"]);
    assert!(human.contains(&format!("{k}: ended: process gone")), "{human}");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs")).0, "allow", "k's claim ended with it");

    // A session recorded nowhere here (its host on another machine) keeps its claims.
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "m", "src/money.rs")).0, "allow");
    let m = format!("alice.claude{}", session_suffix("m"));
    let recorded = repo.join(".git/mas/hosts").join(&m);
    assert!(recorded.is_file(), "the claim recorded its host");
    std::fs::remove_file(&recorded).unwrap();
    let s: StatusOut = serde_json::from_str(&env.mas_ok(&repo, &["status", "--json"])).unwrap();
    assert!(s.agents.iter().any(|a| a.agent == m), "{:?}", s.agents);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "c", "src/money.rs")).0, "deny");
}

/// A Claude Code post-tool payload of session `session`'s Write of `path`.
pub fn write_done(repo: &Path, session: &str, path: &str) -> Value {
    let mut v = write_payload(repo, session, path);
    v["hook_event_name"] = json!("PostToolUse");
    v
}

/// A write no hook saw (a background process) to a held file is put back at the next hook call
/// of any session, with what it wrote kept and named, and both sessions told; the holder's own
/// edit during another session's long shell call is not undone; `git mas status` sweeps too.
#[test]
fn a_write_no_hook_saw_is_put_back_at_the_next_hook_call_of_any_session() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let f = repo.join("src/lib.rs");
    // A claims f and writes it (its post-tool hook records its version).
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    std::fs::write(&f, "A's version\n").unwrap();
    event(&env, &repo, "claude-code", Some("--post-tool"), &write_done(&repo, "a", "src/lib.rs"));
    // A background process of B's appends to it later, with no hook running.
    std::fs::write(&f, "A's version\nforeign line\n").unwrap();
    // B's next call, of an unrelated file: it runs, and B is told.
    let b = event(&env, &repo, "claude-code", None, &write_payload(&repo, "b", "src/money.rs"));
    let told = stdout(&b);
    assert!(!told.contains("\"deny\""), "{}", shown(&b));
    assert!(told.contains("src/lib.rs") && told.contains("no hook saw it") && told.contains("put back"), "{told}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "A's version\n");
    // What the write left is kept, named in the message.
    let displaced = repo.join(".git/mas/held/displaced");
    let kept: Vec<_> = std::fs::read_dir(&displaced).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(std::fs::read_to_string(&kept[0]).unwrap(), "A's version\nforeign line\n");
    assert!(told.contains(&kept[0].display().to_string()), "{told}");
    // A is told at its next call, which runs.
    let a = event(&env, &repo, "claude-code", None, &write_payload(&repo, "a", "src/lib.rs"));
    assert!(stdout(&a).contains("no hook saw it") && !stdout(&a).contains("\"deny\""), "{}", shown(&a));
    std::fs::write(&f, "A's second version\n").unwrap();
    event(&env, &repo, "claude-code", Some("--post-tool"), &write_done(&repo, "a", "src/lib.rs"));

    // A's own edit during B's long shell call stays.
    event(&env, &repo, "claude-code", None, &bash_payload(&repo, "b", "PreToolUse"));
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    std::fs::write(&f, "A's third version\n").unwrap();
    let b_post = event(&env, &repo, "claude-code", Some("--post-tool"), &bash_payload(&repo, "b", "PostToolUse"));
    assert!(!stdout(&b_post).contains("src/lib.rs"), "{}", shown(&b_post));
    event(&env, &repo, "claude-code", Some("--post-tool"), &write_done(&repo, "a", "src/lib.rs"));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "A's third version\n");

    // A same-size change with its time set back, seen by `git mas status`.
    let reference = env.root().join("reference");
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c").arg(format!(
        "cp -p {f} {r} && printf \"B's third version\\n\" > {f} && touch -r {r} {f}",
        f = f.display(),
        r = reference.display()
    ));
    assert!(sh.status().unwrap().success());
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "B's third version\n");
    let out = env.mas(&repo, &["status"]);
    assert!(stderr(&out).contains("no hook saw it"), "{}", shown(&out));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "A's third version\n");
}

/// A session refused before it holds anything is shown waiting, with every refusal counted.
#[test]
fn status_counts_every_refusal_of_a_session_that_holds_nothing() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    for _ in 0..12 {
        assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs")).0, "deny");
    }
    let human = env.mas_ok(&repo, &["status"]);
    let b = format!("alice.claude{}", session_suffix("b"));
    assert!(human.contains(&format!("{b}: holds nothing")), "{human}");
    assert!(human.contains("for src/lib.rs: refused 12 times"), "{human}");
}

/// A commit made with --no-verify (no receipt) that holds another session's file: `git mas
/// check` lists it as blocked, naming the session that held the file when it was committed.
#[test]
fn check_names_the_holder_at_the_commits_time_of_a_no_verify_commit() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/money.rs")).0, "allow");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    std::fs::write(repo.join("src/lib.rs"), "A's change\n").unwrap();
    std::fs::write(repo.join("src/money.rs"), "B's change\n").unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let date = format!("{now} +0000");
    let out = env
        .git_cmd(&repo)
        .args(["commit", "-q", "--no-verify", "-am", "took both"])
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", shown(&out));
    let out = env.mas(&repo, &["check", "HEAD~1..HEAD", "--json"]);
    assert_ne!(out.status.code(), Some(0), "{}", shown(&out));
    let a = format!("alice.claude{}", session_suffix("a"));
    let b = format!("alice.claude{}", session_suffix("b"));
    let text = stdout(&out);
    assert!(text.contains(&a) && text.contains("src/lib.rs"), "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let blocks = v.pointer("/commits/0/verdict/blocks").and_then(Value::as_array).cloned().unwrap_or_default();
    let holders: Vec<(String, String)> = blocks
        .iter()
        .map(|b| (b["target"].as_str().unwrap_or("").to_string(), b["holder"].as_str().unwrap_or("").to_string()))
        .collect();
    assert!(holders.contains(&("src/lib.rs".to_string(), a.clone())), "{holders:?} {text}");
    // B's own file is listed too: without a receipt the commit names no committer.
    assert!(holders.contains(&("src/money.rs".to_string(), b)), "{holders:?} {text}");
}

//! `git mas gate --host`: each coding-agent host's hook payload on stdin, the real binary, two
//! agents with signed foci, and the answer read back in that host's format.

use crate::common::*;
use crate::json::frame::FrameOut;
use serde_json::{Value, json};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

const HOSTS: [&str; 7] = ["claude-code", "codex", "copilot", "gemini", "cursor", "goose", "opencode"];

/// A repository with agents alice and bob, a published frame, the gate enforcing, bob focused on
/// src/report.rs and alice holding `alice_target`.
fn team(alice_target: &str) -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    let repo = env.repo("team");
    env.agents(&repo, &["alice", "bob"]);
    env.git(&repo, &["config", "mas.gate", "enforce"]);
    env.mas_ok(&repo, &["--agent", "alice", "snapshot", "--publish"]);
    env.mas_ok(&repo, &["--agent", "alice", "focus", "publish", "--targets", alice_target]);
    env.mas_ok(&repo, &["--agent", "bob", "focus", "publish", "--targets", "src/report.rs"]);
    (env, repo)
}

/// Runs the hook as bob with `payload` on stdin: (decision, reason) as the host reads them
/// ("allow" for no output), after checking the exit code is 0.
fn hook(env: &TestEnv, dir: &Path, host: &str, payload: &[u8]) -> (String, String) {
    let mut child = env
        .mas_cmd(dir)
        .args(["--agent", "bob", "gate", "--host", host])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(payload).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{host}: stderr: {stderr}");
    if out.stdout.is_empty() {
        return ("allow".into(), String::new());
    }
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{host}: {e}: {}", String::from_utf8_lossy(&out.stdout)));
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let (decision, reason) = match host {
        "claude-code" | "codex" => {
            let h = &v["hookSpecificOutput"];
            assert_eq!(h["hookEventName"], "PreToolUse", "{v}");
            (s(&h["permissionDecision"]), s(&h["permissionDecisionReason"]))
        }
        "copilot" => (s(&v["permissionDecision"]), s(&v["permissionDecisionReason"])),
        "cursor" => {
            assert_eq!(v["user_message"], v["agent_message"], "{v}");
            (s(&v["permission"]), s(&v["agent_message"]))
        }
        "goose" => (s(&v["decision"]).replace("block", "deny"), s(&v["reason"])),
        _ => (s(&v["decision"]), s(&v["reason"])),
    };
    if decision == "deny" {
        assert!(stderr.contains(&reason), "{host}: the reason is on stderr too: {stderr}");
    }
    (if decision.is_empty() { "allow".into() } else { decision }, reason)
}

/// A payload writing `path` (absolute) in `host`'s shape, the payload's directory being `dir`.
fn write_payload(host: &str, dir: &Path, path: &Path) -> Vec<u8> {
    let (d, p) = (dir.to_str().unwrap(), path.to_str().unwrap());
    let rel = path.strip_prefix(dir).unwrap().to_str().unwrap();
    let v = match host {
        "claude-code" => json!({"cwd": d, "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": p, "content": "x\n"}}),
        "codex" => json!({"cwd": d, "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
            "tool_input": {"command": format!("*** Begin Patch\n*** Update File: {rel}\n@@\n-nothing here\n+y\n*** End Patch\n")}}),
        "copilot" => json!({"cwd": d, "toolName": "edit",
            "toolArgs": json!({"path": p, "old_str": "not in the file", "new_str": "y"}).to_string()}),
        "gemini" => json!({"cwd": d, "hook_event_name": "BeforeTool", "tool_name": "write_file",
            "tool_input": {"file_path": p, "content": "x\n"}}),
        "cursor" => json!({"workspace_roots": [d], "hook_event_name": "preToolUse", "tool_name": "Write",
            "tool_input": {"file_path": p, "contents": "x\n"}}),
        "goose" => json!({"working_dir": d, "event": "PreToolUse", "tool_name": "developer__write",
            "tool_input": {"path": rel, "content": "x\n"}}),
        _ => json!({"cwd": d, "tool": "write", "args": {"filePath": p, "content": "x\n"}}),
    };
    v.to_string().into_bytes()
}

/// A tool call that writes nothing, and a writing tool's call without its path.
fn other_payloads(host: &str) -> (Value, Value) {
    match host {
        "claude-code" => (
            json!({"tool_name": "Read", "tool_input": {"file_path": "src/money.rs"}}),
            json!({"tool_name": "Edit", "tool_input": {"old_string": "a"}}),
        ),
        "codex" => (
            json!({"tool_name": "Bash", "tool_input": {"command": "echo > src/money.rs"}}),
            json!({"tool_name": "apply_patch", "tool_input": {"command": "not a patch"}}),
        ),
        "copilot" => (
            json!({"toolName": "bash", "toolArgs": "{\"command\":\"ls\"}"}),
            json!({"toolName": "create", "toolArgs": "{not json"}),
        ),
        "gemini" => (
            json!({"tool_name": "read_file", "tool_input": {"file_path": "src/money.rs"}}),
            json!({"tool_name": "replace", "tool_input": {"old_string": "a"}}),
        ),
        "cursor" => (
            json!({"tool_name": "Shell", "tool_input": {"command": "ls"}}),
            json!({"tool_name": "StrReplace", "tool_input": {}}),
        ),
        "goose" => (
            json!({"tool_name": "developer__shell", "tool_input": {"command": "ls"}}),
            json!({"tool_name": "developer__edit", "tool_input": {"before": "a", "after": "b"}}),
        ),
        _ => (json!({"tool": "read", "args": {"filePath": "src/money.rs"}}), json!({"tool": "edit", "args": {}})),
    }
}

#[test]
fn every_host_is_refused_an_edit_of_a_held_file_and_allowed_the_rest() {
    let (env, repo) = team("src/money.rs");
    let held = repo.join("src/money.rs");
    let unheld = repo.join("src/config.rs");
    for host in HOSTS {
        let (decision, reason) = hook(&env, &repo, host, &write_payload(host, &repo, &held));
        assert_eq!(decision, "deny", "{host}: {reason}");
        assert!(
            reason.contains("alice") && reason.contains("src/money.rs") && reason.contains("Remedy"),
            "{host}: {reason}"
        );

        assert_eq!(hook(&env, &repo, host, &write_payload(host, &repo, &unheld)).0, "allow", "{host}");
        let (nothing, garbage) = other_payloads(host);
        assert_eq!(hook(&env, &repo, host, nothing.to_string().as_bytes()).0, "allow", "{host}");
        let (decision, reason) = hook(&env, &repo, host, garbage.to_string().as_bytes());
        assert_eq!(decision, "deny", "{host}");
        assert!(reason.contains(&format!("cannot read the {host} hook payload")), "{host}: {reason}");
        let (decision, reason) = hook(&env, &repo, host, b"\x00 not json");
        assert_eq!(decision, "deny", "{host}");
        assert!(reason.contains("not a JSON object"), "{host}: {reason}");
    }
    // The file is untouched by any of it (the hook only answers).
    env.git(&repo, &["diff", "--exit-code", "--", "src/money.rs"]);
}

#[test]
fn a_repository_without_a_roster_is_not_gated() {
    let env = TestEnv::new();
    let repo = env.repo("plain");
    env.git(&repo, &["config", "mas.gate", "enforce"]);
    for host in HOSTS {
        let (decision, reason) = hook(&env, &repo, host, &write_payload(host, &repo, &repo.join("src/money.rs")));
        assert_eq!(decision, "allow", "{host}: {reason}");
    }
}

#[test]
fn warn_lets_the_edit_through_and_files_outside_are_not_gated() {
    let (env, repo) = team("src/money.rs");
    let outside = env.root().join("elsewhere.rs");
    let (decision, _) = hook(&env, &repo, "claude-code", &write_payload("claude-code", env.root(), &outside));
    assert_eq!(decision, "allow");
    // Through a `..` and a symlinked directory the held file is still the held file.
    std::os::unix::fs::symlink(repo.join("src"), env.root().join("link")).unwrap();
    for path in [repo.join("src/../src/money.rs"), env.root().join("link/money.rs")] {
        let p = json!({"tool_name": "Write", "tool_input": {"file_path": path, "content": ""}});
        assert_eq!(hook(&env, &repo, "claude-code", p.to_string().as_bytes()).0, "deny", "{path:?}");
    }
    env.git(&repo, &["config", "mas.gate", "warn"]);
    let out = env
        .mas_cmd(&repo)
        .args(["--agent", "bob", "gate", "--host", "cursor"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(&write_payload("cursor", &repo, &repo.join("src/money.rs")))?;
            c.wait_with_output()
        })
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["permission"], "allow", "{v}");
    assert!(v["agent_message"].as_str().unwrap().contains("alice"), "{v}");
}

#[test]
fn a_held_symbol_blocks_only_an_edit_inside_its_lines() {
    let (env, repo) = team("src/money.rs#Money");
    let frame: FrameOut = serde_json::from_str(&env.mas_ok(&repo, &["frame", "--json", "--top", "4096"])).unwrap();
    let target = frame.top.iter().find(|t| t.id == "src/money.rs#Money").expect("Money is a target");
    let [lo, hi] = target.lines.expect("a symbol has lines");
    let text = std::fs::read_to_string(repo.join("src/money.rs")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let unique = |n: usize| !lines[n].trim().is_empty() && text.matches(lines[n]).count() == 1;
    let inside = (lo as usize - 1..hi as usize).find(|&n| unique(n)).expect("a unique line inside");
    let outside = (0..lines.len()).find(|&n| (n + 1 < lo as usize || n + 1 > hi as usize) && unique(n));
    let outside = outside.expect("a unique line outside");
    let edit = |line: &str| {
        json!({"cwd": repo, "hook_event_name": "PreToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": "src/money.rs", "old_string": line, "new_string": "// changed"}})
        .to_string()
    };
    assert_eq!(hook(&env, &repo, "claude-code", edit(lines[outside]).as_bytes()).0, "allow", "{}", lines[outside]);
    let (decision, reason) = hook(&env, &repo, "claude-code", edit(lines[inside]).as_bytes());
    assert_eq!(decision, "deny", "{}", lines[inside]);
    assert!(reason.contains("alice") && reason.contains("src/money.rs#Money"), "{reason}");
    // A Write of the same file has no lines: the symbol holds the whole file.
    let write = write_payload("claude-code", &repo, &repo.join("src/money.rs"));
    let (decision, reason) = hook(&env, &repo, "claude-code", &write);
    assert_eq!(decision, "deny");
    assert!(reason.contains("holds the whole file"), "{reason}");
}

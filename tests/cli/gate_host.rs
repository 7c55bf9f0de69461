//! `git-mas-hook --host` (what the hosts' entries run) and `git mas gate --host`: each
//! coding-agent host's hook payload on stdin, the real binaries, two agents with signed foci, and
//! the answer read back in that host's format. The hook's own binary answers every call here,
//! the fail-closed ones included; one test holds the two entries to the same bytes.

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
    let team = env
        .team(&["alice", "bob"])
        .named("team")
        .config("mas.gate", "enforce")
        .frame("alice")
        .focus("alice", alice_target)
        .focus("bob", "src/report.rs")
        .build();
    (env, team.repo)
}

/// Runs the hook as bob with `payload` on stdin: (decision, reason) as the host reads them
/// ("allow" for no output), after checking the exit code is 0.
fn hook(env: &TestEnv, dir: &Path, host: &str, payload: &[u8]) -> (String, String) {
    let (child, stdin) = spawn_open(env, dir, host, payload);
    drop(stdin);
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
    env.git_quiet_ok(&repo, &["diff", "--exit-code", "--", "src/money.rs"]);
}

#[test]
fn a_repository_without_a_roster_is_not_gated() {
    let env = TestEnv::new();
    let repo = env.repo("plain");
    env.git_quiet_ok(&repo, &["config", "mas.gate", "enforce"]);
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
    env.git_quiet_ok(&repo, &["config", "mas.gate", "warn"]);
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

/// Starts the hook (`git-mas-hook`, as installed) as bob with `payload` on stdin, stdin left open
/// until the returned end is dropped (a host that never closes it keeps it).
fn spawn_open(
    env: &TestEnv,
    dir: &Path,
    host: &str,
    payload: &[u8],
) -> (std::process::Child, std::process::ChildStdin) {
    let mut child = env
        .hook_cmd(dir)
        .args(["--host", host])
        .env("GIT_MAS_AGENT", "bob")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(payload).unwrap();
    stdin.flush().unwrap();
    (child, stdin)
}

#[test]
fn a_payload_read_in_many_pieces_is_read_whole_and_one_over_the_limit_is_refused() {
    let (env, repo) = team("src/money.rs");
    let held = repo.join("src/money.rs").to_str().unwrap().to_string();
    let write = |content: String| {
        json!({"cwd": repo.to_str().unwrap(), "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": held, "content": content}})
        .to_string()
        .into_bytes()
    };
    // 3 MiB, many times the first read's room: the whole call is read, so the held file is named.
    let (decision, reason) = hook(&env, &repo, "claude-code", &write("x".repeat(3 << 20)));
    assert_eq!(decision, "deny", "{reason}");
    assert!(reason.contains("src/money.rs") && reason.contains("alice"), "{reason}");
    // One byte over the 16 MiB limit: refused by the limit, not by a JSON cut short.
    let big = write("x".repeat(16 << 20));
    assert!(big.len() > 16 << 20);
    let (decision, reason) = hook(&env, &repo, "claude-code", &big);
    assert_eq!(decision, "deny", "{reason}");
    assert!(reason.contains("larger than 16777216 bytes"), "{reason}");
}

#[test]
fn a_hook_whose_stdin_never_closes_is_refused_within_the_deadline() {
    let (env, repo) = team("src/money.rs");
    let started = std::time::Instant::now();
    // Every host at once: an empty stdin left open, and half a payload left open.
    let mut running = Vec::new();
    for host in HOSTS {
        let full = write_payload(host, &repo, &repo.join("src/config.rs"));
        running.push((host, spawn_open(&env, &repo, host, b"")));
        running.push((host, spawn_open(&env, &repo, host, &full[..full.len() / 2])));
    }
    for (host, (child, stdin)) in running {
        let out = child.wait_with_output().unwrap();
        drop(stdin);
        let elapsed = started.elapsed();
        // Under every host's 10 s timeout (the deadline is 6 s; the rest is a loaded machine's slack).
        assert!(elapsed < std::time::Duration::from_secs(9), "{host}: answered after {elapsed:?}");
        assert_eq!(out.status.code(), Some(0), "{host}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("no answer within 6 s"), "{host}: {stderr}");
        let denied = ["\"deny\"", "\"block\""].iter().any(|d| stdout.contains(d));
        assert!(denied, "{host}: a late hook refuses: {stdout}");
    }
}

#[test]
fn a_fifo_or_device_in_the_payload_is_never_read() {
    let (env, repo) = team("src/money.rs");
    let fifo = repo.join("src/pipe.rs");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let started = std::time::Instant::now();
    for path in [fifo.as_path(), Path::new("/dev/zero")] {
        let p = json!({"tool_name": "Edit", "tool_input": {"file_path": path, "old_string": "a", "new_string": "b"}});
        let (decision, reason) = hook(&env, &repo, "claude-code", p.to_string().as_bytes());
        assert_eq!(decision, "allow", "{path:?}: {reason}");
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(4), "{:?}", started.elapsed());
}

#[test]
fn a_hard_link_to_a_held_file_is_the_held_file() {
    let (env, repo) = team("src/money.rs");
    let inside = repo.join("src/alias.rs");
    let outside = env.root().join("money-elsewhere.rs");
    std::fs::hard_link(repo.join("src/money.rs"), &inside).unwrap();
    std::fs::hard_link(repo.join("src/money.rs"), &outside).unwrap();
    for host in HOSTS {
        for path in [&inside, &outside] {
            let dir = if path == &inside { repo.as_path() } else { env.root() };
            let (decision, reason) = hook(&env, &repo, host, &write_payload(host, dir, path));
            assert_eq!(decision, "deny", "{host} {path:?}: {reason}");
            assert!(reason.contains("alice") && reason.contains("src/money.rs"), "{host}: {reason}");
        }
    }
    // A copy is another file: not held.
    std::fs::copy(repo.join("src/money.rs"), repo.join("src/copy.rs")).unwrap();
    let copy = write_payload("claude-code", &repo, &repo.join("src/copy.rs"));
    assert_eq!(hook(&env, &repo, "claude-code", &copy).0, "allow");
}

#[test]
fn a_path_git_could_not_store_is_refused() {
    let (env, repo) = team("src/money.rs");
    for (host, payload) in [
        ("claude-code", json!({"tool_name": "Write", "tool_input": {"file_path": "src/ok.rs\u{0}x", "content": ""}})),
        ("gemini", json!({"tool_name": "write_file", "tool_input": {"file_path": "a\u{0}", "content": ""}})),
        ("opencode", json!({"tool": "write", "args": {"filePath": "\u{0}"}})),
    ] {
        let (decision, reason) = hook(&env, &repo, host, payload.to_string().as_bytes());
        assert_eq!(decision, "deny", "{host}: {reason}");
        assert!(reason.contains("a path git could not store (a NUL byte)"), "{host}: {reason}");
    }
}

#[test]
fn an_unknown_tool_that_names_a_held_path_counts_as_writing_it() {
    let (env, repo) = team("src/money.rs");
    let held = repo.join("src/money.rs");
    let cases = [
        (
            "goose",
            json!({"tool_name": "developer__text_editor", "tool_input": {"command": "write", "path": held, "file_text": "x"}}),
            "deny",
        ),
        (
            "goose",
            json!({"tool_name": "developer__text_editor", "tool_input": {"command": "str_replace", "path": held, "old_str": "pub", "new_str": "x"}}),
            "deny",
        ),
        (
            "goose",
            json!({"tool_name": "developer__text_editor", "tool_input": {"command": "view", "path": held}}),
            "allow",
        ),
        ("claude-code", json!({"tool_name": "write", "tool_input": {"file_path": held, "content": "x"}}), "deny"),
        (
            "claude-code",
            json!({"tool_name": "mcp__fs__write_file", "tool_input": {"path": held, "content": "x"}}),
            "deny",
        ),
        (
            "claude-code",
            json!({"tool_name": "mcp__fs__move_file", "tool_input": {"source": "x", "destination": held}}),
            "deny",
        ),
        ("claude-code", json!({"tool_name": "mcp__fs__read_file", "tool_input": {"path": held}}), "allow"),
        ("claude-code", json!({"tool_name": "mcp__git-mas__gate", "tool_input": {"paths": [held]}}), "allow"),
        ("claude-code", json!({"tool_name": "Read", "tool_input": {"file_path": held}}), "allow"),
        ("gemini", json!({"tool_name": "mcp_fs_edit", "tool_input": {"paths": ["README.md", held]}}), "deny"),
        ("copilot", json!({"toolName": "str_replace_editor", "toolArgs": json!({"path": held}).to_string()}), "deny"),
        ("opencode", json!({"tool": "morph_edit", "args": {"target_file": held}}), "deny"),
        ("cursor", json!({"tool_name": "Delete", "tool_input": {"path": held}}), "deny"),
    ];
    for (host, payload, want) in cases {
        let (decision, reason) = hook(&env, &repo, host, payload.to_string().as_bytes());
        assert_eq!(decision, want, "{host} {payload}: {reason}");
        if want == "deny" {
            assert!(reason.contains("alice"), "{host}: {reason}");
        }
    }
}

#[test]
fn the_gate_refuses_an_edit_of_its_own_ground() {
    let (env, repo) = team("src/money.rs");
    env.mas_quiet_ok(&repo, &["hooks", "install", "--host", "claude-code"]);
    env.mas_quiet_ok(&repo, &["mcp", "install", "--host", "cursor"]);
    std::fs::write(repo.join("notes.md"), "mine\n").unwrap();
    std::os::unix::fs::symlink(repo.join(".git"), repo.join("gitdir")).unwrap();
    let cases = [
        (".git/config", "git config"),
        ("gitdir/config", "git config"),
        (".git/hooks/pre-commit", "git mas hooks install|uninstall"),
        (".git/refs/heads/main", "git commands"),
        (".mas/roster", "git mas agent new"),
        (".claude/settings.json", "git mas hooks install|uninstall --host claude-code"),
        (".cursor/mcp.json", "git mas mcp install|uninstall --host cursor"),
    ];
    let before: Vec<_> = cases.iter().map(|(p, _)| std::fs::read(repo.join(p)).ok()).collect();
    for (path, remedy) in cases {
        for host in ["claude-code", "gemini", "opencode"] {
            let (decision, reason) = hook(&env, &repo, host, &write_payload(host, &repo, &repo.join(path)));
            assert_eq!(decision, "deny", "{host} {path}: {reason}");
            assert!(reason.contains("own ground") && reason.contains(remedy), "{host} {path}: {reason}");
        }
    }
    let after: Vec<_> = cases.iter().map(|(p, _)| std::fs::read(repo.join(p)).ok()).collect();
    assert_eq!(before, after, "the hook only answers");
    // A host file without git-mas's entry is the user's own: not ground of ours.
    env.mas_quiet_ok(&repo, &["mcp", "uninstall", "--host", "cursor"]);
    std::fs::create_dir_all(repo.join(".cursor")).unwrap();
    std::fs::write(repo.join(".cursor/mcp.json"), "{\"mcpServers\": {}}\n").unwrap();
    let p = write_payload("claude-code", &repo, &repo.join(".cursor/mcp.json"));
    assert_eq!(hook(&env, &repo, "claude-code", &p).0, "allow");
    assert_eq!(
        hook(&env, &repo, "claude-code", &write_payload("claude-code", &repo, &repo.join("notes.md"))).0,
        "allow"
    );
    // In warn mode the edit goes ahead, with the message.
    env.git_quiet_ok(&repo, &["config", "mas.gate", "warn"]);
    let p = write_payload("claude-code", &repo, &repo.join(".git/config"));
    let (decision, _) = hook(&env, &repo, "claude-code", &p);
    assert_eq!(decision, "allow");
}

/// `git mas gate --host HOST` and `git-mas-hook --host HOST` with one payload on stdin: (exit
/// code, stdout, stderr) of each.
fn both_entries(
    env: &TestEnv,
    dir: &Path,
    host: &str,
    flag: Option<&str>,
    payload: &[u8],
) -> [(Option<i32>, String, String); 2] {
    let run = |mut cmd: std::process::Command| {
        let mut child = cmd
            .env("GIT_MAS_AGENT", "bob")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(payload).unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let mut gate = env.mas_cmd(dir);
    gate.args(["gate", "--host", host]).args(flag);
    let mut hook = env.hook_cmd(dir);
    hook.args(["--host", host]).args(flag);
    [run(gate), run(hook)]
}

#[test]
fn the_hooks_own_binary_answers_every_host_byte_for_byte_as_git_mas_gate_does() {
    let (env, repo) = team("src/money.rs");
    let mut denied = 0;
    for host in HOSTS {
        for path in ["src/money.rs", "src/config.rs", "../outside.rs"] {
            let payload = write_payload(host, &repo, &repo.join(path));
            let [gate, hook] = both_entries(&env, &repo, host, None, &payload);
            assert_eq!(hook, gate, "{host} {path}");
            denied += usize::from(gate.1.contains("deny") || gate.1.contains("block"));
        }
        // A payload that is not JSON, and the post-tool and session-end hooks.
        let [gate, hook] = both_entries(&env, &repo, host, None, b"{not json");
        assert_eq!(hook, gate, "{host}: a bad payload");
        assert!(gate.1.contains("deny") || gate.1.contains("block") || gate.0 == Some(2), "{host}: {gate:?}");
        for flag in ["--post-tool", "--session-end"] {
            let payload = write_payload(host, &repo, &repo.join("src/config.rs"));
            let [gate, hook] = both_entries(&env, &repo, host, Some(flag), &payload);
            assert_eq!(hook, gate, "{host} {flag}");
        }
    }
    // Each host was refused the held file (the comparison above compared refusals, not only allows).
    assert_eq!(denied, HOSTS.len());
}

#[test]
fn the_hooks_own_binary_refuses_a_command_line_it_does_not_take_with_exit_2() {
    let env = TestEnv::new();
    let dir = env.root();
    for args in [
        &["--host", "nosuch"][..],
        &["--host", "codex", "--json"],
        &["gate"],
        &[],
        &["--host", "codex", "--post-tool", "--session-end"],
    ] {
        let out = env.hook_cmd(dir).args(args).stdin(Stdio::null()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("git-mas-hook: cannot take") && err.contains("usage: git-mas-hook --host HOST"),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let help = env.hook_cmd(dir).arg("--help").output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("git mas gate --help"));
}

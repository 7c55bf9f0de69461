//! `git mas hooks install|uninstall|status --host`: each coding-agent host's edit-hook file in a
//! real repository, a user's own settings kept byte for byte, invalid files refused untouched,
//! and the installed command run as the host would run it, against agents with signed foci.

use crate::common::*;
use crate::json::hooks::HostHooksOut;
use git_mas::hosts::plan::FileState;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const HOSTS: [&str; 7] = ["claude-code", "codex", "copilot", "gemini", "cursor", "goose", "opencode"];

fn status(env: &TestEnv, dir: &Path, extra: &[&str]) -> HostHooksOut {
    let mut args = vec!["hooks", "status", "--json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&env.mas_ok(dir, &args)).unwrap()
}

const CLAUDE_SETTINGS: &str = "{\n    \"model\" :\"opus\",\n  \"permissions\": { \"allow\": [\"Bash(git:*)\"] },\n  \"hooks\": {\n        \"PreToolUse\": [\n            {\"matcher\": \"Bash\", \"hooks\": [ {\"type\": \"command\", \"command\": \"./guard.sh\"} ]}\n        ]\n  }\n}";
const GEMINI_SETTINGS: &str = "// my Gemini settings\n{\n  \"theme\": \"dark\", /* kept */\n  \"hooks\": {\"BeforeTool\": [{\"matcher\": \"run_shell_command\", \"hooks\": [{\"type\": \"command\", \"command\": \"./audit.sh\"}]}]}\n}\n";
const CURSOR_HOOKS: &str = "{\"version\":1,\"hooks\":{\"afterFileEdit\":[{\"command\":\"./fmt.sh\"}]}}\n";

#[test]
fn a_users_settings_survive_install_and_uninstall_byte_for_byte() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    for (rel, text) in [
        (".claude/settings.json", CLAUDE_SETTINGS),
        (".gemini/settings.json", GEMINI_SETTINGS),
        (".cursor/hooks.json", CURSOR_HOOKS),
    ] {
        std::fs::create_dir_all(repo.join(rel).parent().unwrap()).unwrap();
        std::fs::write(repo.join(rel), text).unwrap();
    }
    let before = tree(&repo);
    env.mas_quiet_ok(&repo, &["hooks", "install", "--host", "all"]);
    let installed = tree(&repo);
    assert_ne!(installed, before);
    let claude = std::fs::read_to_string(repo.join(".claude/settings.json")).unwrap();
    assert!(
        claude.starts_with("{\n    \"model\" :\"opus\",\n  \"permissions\": { \"allow\": [\"Bash(git:*)\"] },"),
        "{claude}"
    );
    assert!(claude.contains("./guard.sh") && claude.contains("git-mas-hook --host claude-code"), "{claude}");
    let gemini = std::fs::read_to_string(repo.join(".gemini/settings.json")).unwrap();
    assert!(gemini.starts_with("// my Gemini settings\n") && gemini.contains("/* kept */"), "{gemini}");
    // Besides the pre-tool entry, one after every tool and one at the session's end.
    let v: serde_json::Value = serde_json::from_str(&claude).unwrap();
    assert_eq!(v["hooks"]["PreToolUse"][0]["hooks"][0]["command"], "./guard.sh", "the user's entry stays first");
    assert_eq!(v["hooks"]["PostToolUse"][0]["matcher"], ".*");
    assert_eq!(v["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "git-mas-hook --host claude-code --post-tool");
    assert_eq!(v["hooks"]["SessionEnd"][0]["hooks"][0]["command"], "git-mas-hook --host claude-code --session-end");
    assert!(v["hooks"]["SessionEnd"][0].get("matcher").is_none(), "{claude}");
    assert!(
        gemini.contains("\"AfterTool\"") && gemini.contains("git-mas-hook --host gemini --session-end"),
        "{gemini}"
    );

    // A second install changes nothing, not even a file's time.
    let mtime = std::fs::metadata(repo.join(".claude/settings.json")).unwrap().modified().unwrap();
    env.mas_quiet_ok(&repo, &["hooks", "install", "--host", "all"]);
    assert_eq!(tree(&repo), installed);
    assert_eq!(std::fs::metadata(repo.join(".claude/settings.json")).unwrap().modified().unwrap(), mtime);
    let st = status(&env, &repo, &["--host", "all"]);
    assert_eq!(st.scope, "project");
    assert_eq!(st.hosts.iter().map(|h| h.host.as_str()).collect::<Vec<_>>(), HOSTS);
    for h in &st.hosts {
        assert!(h.files.iter().all(|f| f.state == FileState::Installed && !f.changed), "{h:?}");
        assert_eq!(h.command, format!("git-mas-hook --host {}", h.host));
    }
    assert_eq!(st.hosts[1].notes.len(), 2, "codex says how to trust the hook: {:?}", st.hosts[1]);
    assert!(st.hosts[3].notes.iter().any(|n| n.contains("tools.enableHooks")), "gemini: {:?}", st.hosts[3]);

    env.mas_quiet_ok(&repo, &["hooks", "uninstall", "--host", "all"]);
    assert_eq!(tree(&repo), before, "every file of the user's as it was, ours gone with their folders");
    let st = status(&env, &repo, &["--host", "claude-code", "--host", "goose"]);
    assert_eq!(st.hosts.len(), 2);
    assert!(st.hosts.iter().flat_map(|h| &h.files).all(|f| f.state == FileState::NotInstalled));
}

#[test]
fn an_earlier_releases_entries_through_git_mas_are_replaced_and_a_missing_hook_binary_is_warned_of() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    // What the release before the hook's own binary wrote: claude-code's entries (merged into the
    // user's file) and the copilot file (ours whole), each running `git mas gate --host`.
    env.mas_quiet_ok(&repo, &["hooks", "install", "--host", "claude-code", "--host", "copilot"]);
    let earlier = |rel: &str| {
        let text = std::fs::read_to_string(repo.join(rel)).unwrap();
        assert!(text.contains("\"git-mas-hook --host "), "{text}");
        std::fs::write(repo.join(rel), text.replace("git-mas-hook --host", "git mas gate --host")).unwrap();
    };
    earlier(".claude/settings.json");
    earlier(".github/hooks/git-mas.json");
    let st = status(&env, &repo, &["--host", "claude-code", "--host", "copilot"]);
    assert!(st.hosts.iter().flat_map(|h| &h.files).all(|f| f.state != FileState::NotInstalled), "ours: {st:?}");
    let out = env.mas(&repo, &["hooks", "install", "--host", "claude-code", "--host", "copilot"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("not on PATH"), "{}", stderr(&out));
    for rel in [".claude/settings.json", ".github/hooks/git-mas.json"] {
        let text = std::fs::read_to_string(repo.join(rel)).unwrap();
        assert!(!text.contains("git mas gate") && text.contains("\"git-mas-hook --host "), "{rel}: {text}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo.join(".claude/settings.json")).unwrap()).unwrap();
    assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 1, "replaced, not added beside: {v}");
    // Without git-mas-hook on PATH, install says so (a host that cannot start its hook lets the
    // call through); uninstall does not.
    let git_only = env.root().join("git-only");
    std::fs::create_dir_all(&git_only).unwrap();
    let git = std::process::Command::new("sh").args(["-c", "command -v git"]).output().unwrap().stdout;
    std::os::unix::fs::symlink(String::from_utf8(git).unwrap().trim(), git_only.join("git")).unwrap();
    for (args, warned) in [
        (&["hooks", "install", "--host", "claude-code"][..], true),
        (&["hooks", "uninstall", "--host", "claude-code"], false),
    ] {
        let out = env.mas_cmd(&repo).args(args).env("PATH", &git_only).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out).contains("git-mas-hook is not on PATH"), warned, "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn an_invalid_file_is_refused_and_nothing_is_written() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    std::fs::create_dir_all(repo.join(".claude")).unwrap();
    let broken = "{\"model\": \"opus\",,}\n";
    std::fs::write(repo.join(".claude/settings.json"), broken).unwrap();
    std::fs::create_dir_all(repo.join(".github/hooks")).unwrap();
    std::fs::write(repo.join(".github/hooks/git-mas.json"), "{\"mine\": true}\n").unwrap();
    let mtime = std::fs::metadata(repo.join(".claude/settings.json")).unwrap().modified().unwrap();
    let before = tree(&repo);
    for args in [
        &["hooks", "install", "--host", "all"][..],
        &["hooks", "install", "--host", "claude-code"],
        &["hooks", "uninstall", "--host", "claude-code"],
        &["hooks", "install", "--host", "copilot"],
        &["hooks", "uninstall", "--host", "copilot"],
    ] {
        let out = env.mas(&repo, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("Hint:") && stderr(&out).contains("nothing was written"), "{}", stderr(&out));
        assert_eq!(tree(&repo), before, "{args:?}");
    }
    assert!(stderr(&env.mas(&repo, &["hooks", "install", "--host", "claude-code"])).contains("not valid JSON"));
    assert_eq!(std::fs::metadata(repo.join(".claude/settings.json")).unwrap().modified().unwrap(), mtime);
    let st = status(&env, &repo, &["--host", "claude-code", "--host", "copilot"]);
    assert_eq!(st.hosts[0].files[0].state, FileState::Invalid);
    assert_eq!(st.hosts[1].files[0].state, FileState::Other);
    // An unknown host is a usage error.
    assert_eq!(env.mas(&repo, &["hooks", "status", "--host", "vim"]).status.code(), Some(2));
    assert_eq!(env.mas(&repo, &["hooks", "status", "--global"]).status.code(), Some(2));
}

#[test]
fn global_goes_to_the_users_home_or_the_hosts_own_directory() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let home = env.root().join("home");
    let codex_home = env.root().join("codex-home");
    let run = |args: &[&str]| {
        let mut cmd = env.mas_cmd(&repo);
        cmd.args(args).env("CODEX_HOME", &codex_home).env_remove("CLAUDE_CONFIG_DIR").env_remove("COPILOT_HOME");
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    let repo_before = tree(&repo);
    run(&["hooks", "install", "--global", "--host", "claude-code", "--host", "codex", "--host", "opencode"]);
    assert!(home.join(".claude/settings.json").is_file());
    assert!(codex_home.join("hooks.json").is_file(), "CODEX_HOME is honoured");
    assert!(!home.join(".codex").exists());
    assert!(home.join(".config/opencode/plugins/git-mas.js").is_file(), "XDG_CONFIG_HOME is honoured");
    assert_eq!(tree(&repo), repo_before, "the project is not touched");
    let st: HostHooksOut =
        serde_json::from_str(&run(&["hooks", "status", "--global", "--json", "--host", "claude-code"])).unwrap();
    assert_eq!(st.scope, "global");
    assert_eq!(st.hosts[0].files[0].path, home.join(".claude/settings.json"));
    assert_eq!(st.hosts[0].files[0].state, FileState::Installed);
    run(&["hooks", "uninstall", "--global", "--host", "all"]);
    assert!(!home.join(".claude/settings.json").exists() && !codex_home.join("hooks.json").exists());
    assert!(!home.join(".config/opencode/plugins").exists(), "the folder we made is gone");
}

/// A repository where alice holds src/money.rs, bob is focused elsewhere and the gate enforces.
fn team() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    let team = env
        .team(&["alice", "bob"])
        .named("team")
        .config("mas.gate", "enforce")
        .frame("alice")
        .focus("alice", "src/money.rs")
        .focus("bob", "src/report.rs")
        .build();
    (env, team.repo)
}

/// The command string in the installed file, found where the host reads it.
fn installed_command(host: &str, repo: &Path) -> String {
    let (file, pointer) = match host {
        "claude-code" => (".claude/settings.json", "/hooks/PreToolUse/0/hooks/0/command"),
        "codex" => (".codex/hooks.json", "/hooks/PreToolUse/0/hooks/0/command"),
        "copilot" => (".github/hooks/git-mas.json", "/hooks/preToolUse/0/bash"),
        "gemini" => (".gemini/settings.json", "/hooks/BeforeTool/0/hooks/0/command"),
        "cursor" => (".cursor/hooks.json", "/hooks/preToolUse/0/command"),
        _ => (".agents/plugins/git-mas/hooks/hooks.json", "/hooks/PreToolUse/0/hooks/0/command"),
    };
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(repo.join(file)).unwrap()).unwrap();
    v.pointer(pointer).and_then(|c| c.as_str()).unwrap_or_else(|| panic!("{host}: {v}")).to_string()
}

/// Runs `command` through sh, as the host does, as bob, with `payload` on stdin.
fn run_hook(env: &TestEnv, repo: &Path, command: &str, payload: &str) -> String {
    let mut cmd = Command::new("sh");
    env.hermetic(&mut cmd);
    let mut child = cmd
        .args(["-c", command])
        .current_dir(repo)
        .env("GIT_MAS_AGENT", "bob")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(payload.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{command}: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn the_installed_command_refuses_an_edit_of_a_held_file() {
    let (env, repo) = team();
    env.mas_quiet_ok(&repo, &["hooks", "install", "--host", "all"]);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hook-payloads");
    // The payloads captured from the real hosts edit src/report.rs; here the file alice holds
    // stands in for it.
    let cases = [
        ("claude-code", "edit.json", "\"permissionDecision\":\"deny\""),
        ("codex", "apply-patch.json", "\"permissionDecision\":\"deny\""),
        ("copilot", "edit.json", "\"permissionDecision\":\"deny\""),
        ("gemini", "replace.json", "\"decision\":\"deny\""),
        ("cursor", "write.json", "\"permission\":\"deny\""),
        ("goose", "write.json", "\"decision\":\"block\""),
    ];
    for (host, fixture, deny) in cases {
        let command = installed_command(host, &repo);
        assert_eq!(command, format!("git-mas-hook --host {host}"));
        let payload = std::fs::read_to_string(fixtures.join(host).join(fixture))
            .unwrap()
            .replace("/home/user/project", repo.to_str().unwrap())
            .replace("src/report.rs", "src/money.rs");
        let answer = run_hook(&env, &repo, &command, &payload);
        assert!(answer.replace(' ', "").contains(deny), "{host}: {answer}");
        assert!(answer.contains("alice"), "{host}: the holder is named: {answer}");
        // The same call on a file nobody holds goes through.
        let free = run_hook(&env, &repo, &command, &payload.replace("src/money.rs", "src/config.rs"));
        assert!(!free.contains("deny") && !free.contains("block"), "{host}: {free}");
    }
}

/// Imports the installed OpenCode plugin under node and calls its `tool.execute.before`.
fn opencode(env: &TestEnv, repo: &Path, tool: &str, file: &str) -> (bool, String) {
    let plugin = repo.join(".opencode/plugins/git-mas.js");
    let harness = format!(
        "const m = await import({plugin:?});\n\
         const hooks = await m.GitMasGate({{ directory: {dir:?}, worktree: {dir:?} }});\n\
         try {{\n\
           await hooks['tool.execute.before']({{ tool: {tool:?}, sessionID: 's', callID: 'c' }}, {{ args: {{ filePath: {file:?}, content: 'x' }} }});\n\
           console.log('ALLOWED');\n\
         }} catch (e) {{ console.log('THREW ' + e.message); }}\n",
        plugin = plugin.to_str().unwrap(),
        dir = repo.to_str().unwrap(),
    );
    let mut cmd = Command::new("node");
    env.hermetic(&mut cmd);
    let out = cmd
        .args(["--input-type=module", "-e", &harness])
        .current_dir(repo)
        .env("GIT_MAS_AGENT", "bob")
        .output()
        .expect("node is installed");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    (text.starts_with("ALLOWED"), text)
}

#[test]
fn the_opencode_plugin_throws_with_the_holder_and_fails_closed() {
    let (env, repo) = team();
    env.mas_quiet_ok(&repo, &["hooks", "install", "--host", "opencode"]);
    let (allowed, text) = opencode(&env, &repo, "write", "src/money.rs");
    assert!(!allowed && text.contains("THREW") && text.contains("alice"), "{text}");
    let (allowed, text) = opencode(&env, &repo, "edit", "src/config.rs");
    assert!(allowed, "an unheld file: {text}");
    let (allowed, text) = opencode(&env, &repo, "read", "src/money.rs");
    assert!(allowed, "a tool that writes nothing is not gated: {text}");
    // No git-mas-hook on PATH: the gate cannot run, so the edit is refused.
    let plugin = repo.join(".opencode/plugins/git-mas.js");
    let text =
        std::fs::read_to_string(&plugin).unwrap().replace("\"git-mas-hook --host", "\"no-such-git-mas-hook --host");
    assert!(text.contains("no-such-git-mas-hook --host opencode"), "{text}");
    std::fs::write(&plugin, text).unwrap();
    let (allowed, text) = opencode(&env, &repo, "write", "src/config.rs");
    assert!(!allowed && text.contains("refused"), "{text}");
}

/// Calls the installed OpenCode plugin's `tool.execute.after` for a shell call, with the post-tool
/// command replaced by the script `stand_in`: the tool's output as the model then reads it.
fn opencode_after(env: &TestEnv, repo: &Path, stand_in: &str) -> String {
    let plugin = repo.join(".opencode/plugins/git-mas.js");
    let text = std::fs::read_to_string(&plugin).unwrap();
    assert!(text.contains("\"git-mas-hook --host opencode --post-tool\""), "{text}");
    let script = env.root().join("post-tool.sh");
    std::fs::write(&script, stand_in).unwrap();
    let copy = repo.join(".opencode/plugins/stand-in.js");
    std::fs::write(
        &copy,
        text.replace("git-mas-hook --host opencode --post-tool", &format!("sh {}", script.display())),
    )
    .unwrap();
    let harness = format!(
        "const m = await import({plugin:?});\n\
         const hooks = await m.GitMasGate({{ directory: {dir:?}, worktree: {dir:?} }});\n\
         const output = {{ title: 'bash', output: 'done', metadata: {{}} }};\n\
         await hooks['tool.execute.after']({{ tool: 'bash', sessionID: 's1', callID: 'c', args: {{ command: 'touch x' }} }}, output);\n\
         console.log(JSON.stringify(output.output));\n",
        plugin = copy.to_str().unwrap(),
        dir = repo.to_str().unwrap(),
    );
    let mut cmd = Command::new("node");
    env.hermetic(&mut cmd);
    let out = cmd.args(["--input-type=module", "-e", &harness]).current_dir(repo).output().expect("node is installed");
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::remove_file(copy).unwrap();
    serde_json::from_str(stdout(&out).trim()).unwrap()
}

#[test]
fn the_opencode_plugin_sends_every_tool_to_the_post_tool_gate_and_tells_the_model_its_answer() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.mas_quiet_ok(&repo, &["hooks", "install", "--host", "opencode"]);
    // The stand-in saves what it was sent and answers as the gate would.
    let sent = env.root().join("sent.json");
    let answer = r#"{"decision":"deny","reason":"src/money.rs is held by alice: put back"}"#;
    let said = opencode_after(&env, &repo, &format!("cat > {}; echo '{answer}'", sent.display()));
    assert_eq!(said, "done\n\nsrc/money.rs is held by alice: put back");
    let payload: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&sent).unwrap()).unwrap();
    assert_eq!(payload["tool"], "bash");
    assert_eq!(payload["sessionID"], "s1");
    assert_eq!(payload["args"]["command"], "touch x");
    assert_eq!(payload["cwd"], repo.to_str().unwrap());
    // Silence adds nothing; a gate that fails is said, and nothing is thrown (the tool ran).
    assert_eq!(opencode_after(&env, &repo, "cat >/dev/null"), "done");
    let failed = opencode_after(&env, &repo, "cat >/dev/null; exit 3");
    assert!(failed.starts_with("done\n\ngit mas gate could not check") && failed.contains("exit 3"), "{failed}");
}

#[test]
fn the_opencode_plugin_ends_each_session_it_served_when_opencode_exits() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.mas_quiet_ok(&repo, &["hooks", "install", "--host", "opencode"]);
    let plugin = std::fs::read_to_string(repo.join(".opencode/plugins/git-mas.js")).unwrap();
    // Stand-ins: the pre-tool gate allows; the session end saves what it was sent.
    let ended = env.root().join("ended.jsonl");
    let end = env.root().join("end.sh");
    std::fs::write(&end, format!("cat >> {}; echo >> {}", ended.display(), ended.display())).unwrap();
    let copy = repo.join(".opencode/plugins/stand-in.js");
    let text = plugin
        .replace("git-mas-hook --host opencode --session-end", &format!("sh {}", end.display()))
        .replace("\"git-mas-hook --host opencode\"", "\"cat >/dev/null; echo '{\\\"decision\\\":\\\"allow\\\"}'\"");
    std::fs::write(&copy, text).unwrap();
    // Two sessions ask the gate (one twice), one only reads; then the process ends.
    let harness = format!(
        "const m = await import({plugin:?});\n\
         const hooks = await m.GitMasGate({{ directory: {dir:?}, worktree: {dir:?} }});\n\
         for (const [tool, sessionID] of [['edit', 's1'], ['bash', 's2'], ['edit', 's1'], ['read', 's3']]) {{\n\
           await hooks['tool.execute.before']({{ tool, sessionID, callID: 'c' }}, {{ args: {{ filePath: 'x' }} }});\n\
         }}\n",
        plugin = copy.to_str().unwrap(),
        dir = repo.to_str().unwrap(),
    );
    let mut cmd = Command::new("node");
    env.hermetic(&mut cmd);
    let out = cmd.args(["--input-type=module", "-e", &harness]).current_dir(&repo).output().expect("node is installed");
    assert!(out.status.success(), "{}", stderr(&out));
    let sent: Vec<serde_json::Value> = std::fs::read_to_string(&ended)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let dir = repo.to_str().unwrap();
    assert_eq!(
        sent,
        [serde_json::json!({"sessionID": "s1", "cwd": dir}), serde_json::json!({"sessionID": "s2", "cwd": dir})],
        "each session that asked the gate, once; not one that only read"
    );
}

/// A development agent standing in for a host: notes whether its host's hook file is in its
/// worktree, writes a note, proposes, endorses, and hands the turn on.
const STAND_IN: &str = r#"prompt=$(cat)
field() { printf '%s\n' "$prompt" | sed -n "s/^$1=//p" | head -n 1; }
for f in .claude/settings.json .codex/hooks.json; do [ -f "$f" ] && echo "$GIT_MAS_AGENT $f" >> "$LOG"; done
case "$(field task)" in
  propose) mkdir -p notes; echo "by $GIT_MAS_AGENT" > "notes/$GIT_MAS_AGENT.md"; git mas propose >&2 ;;
  endorse) for p in $(field endorse | tr , ' '); do git mas endorse "$p" >&2; done ;;
esac
next=$(field next)
if [ "$next" = DONE ]; then echo "done"; echo DONE; else echo "done"; echo "NEXT $next"; fi
"#;

/// Runs a development coordinate with alice on claude-code and bob on codex, both presets
/// pointed at the stand-in: (exit code, JSON lines, stderr).
fn coordinate_presets(env: &TestEnv, repo: &Path, extra: &[&str]) -> (Option<i32>, Vec<serde_json::Value>, String) {
    coordinate_stand_ins(env, repo, "alice=claude-code,bob=codex", "", extra)
}

/// Runs a development coordinate of `agents` (presets named `NAME=<preset>`), every preset
/// pointed at the stand-in, which first runs `before` in its worktree.
fn coordinate_stand_ins(
    env: &TestEnv,
    repo: &Path,
    agents: &str,
    before: &str,
    extra: &[&str],
) -> (Option<i32>, Vec<serde_json::Value>, String) {
    let log = env.root().join("seen");
    let script = env.root().join("stand-in.sh");
    std::fs::write(&script, format!("LOG='{}'\n{before}\n{STAND_IN}", log.display())).unwrap();
    let line = format!("sh {}", script.display());
    env.git_quiet_ok(repo, &["config", "mas.check", "true"]);
    for preset in agents.split(',').filter_map(|a| a.split_once('=')).map(|(_, p)| p) {
        env.git_quiet_ok(repo, &["config", &format!("mas.agent.{preset}.command"), &line]);
    }
    let out = env
        .mas_cmd(repo)
        .args(["--agent", "lead", "coordinate", "--json", "--goal", "notes", "--agents", agents])
        // The test looks into each agent's worktree after the run.
        .args(["--quorum", "1", "--keep-worktrees"])
        .args(extra)
        .output()
        .unwrap();
    let lines = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (out.status.code(), lines, stderr(&out))
}

fn worktrees(lines: &[serde_json::Value]) -> Vec<(String, PathBuf)> {
    lines
        .iter()
        .filter(|l| l["event"] == "worktree")
        .map(|l| (l["agent"].as_str().unwrap().to_string(), PathBuf::from(l["path"].as_str().unwrap())))
        .collect()
}

#[test]
fn coordinate_gates_each_preset_agent_and_keeps_the_hook_out_of_its_proposal() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["lead", "alice", "bob"]);
    // The team commits its own Claude settings: alice's hook goes into that tracked file, bob's
    // Codex hook into a new one.
    std::fs::create_dir_all(repo.join(".claude")).unwrap();
    std::fs::write(repo.join(".claude/settings.json"), "{\"model\": \"opus\"}\n").unwrap();
    env.git_quiet_ok(&repo, &["add", ".claude"]);
    env.git_quiet_ok(&repo, &["commit", "-q", "-m", "team settings"]);
    let (code, lines, err) = coordinate_presets(&env, &repo, &[]);
    assert_eq!(code, Some(0), "{err}\n{lines:?}");
    let seen = std::fs::read_to_string(env.root().join("seen")).unwrap();
    assert!(seen.contains("alice .claude/settings.json") && seen.contains("bob .codex/hooks.json"), "{seen}");
    let trees = worktrees(&lines);
    assert_eq!(trees.len(), 2);
    for (agent, path) in &trees {
        let host = if agent == "alice" { "claude-code" } else { "codex" };
        let st = status(&env, path, &["--host", host]);
        assert_eq!(st.hosts[0].files[0].state, FileState::Installed, "{agent}");
        assert_eq!(env.git(path, &["config", "mas.gate"]), "enforce", "{agent}: the hook acts");
        assert_eq!(env.git(path, &["status", "--porcelain"]), "?? notes/", "{agent}: git sees only the agent's work");
        let run = lines.iter().find(|l| l["event"] == "run-started").unwrap()["run"].as_str().unwrap().to_string();
        let listing =
            env.git(&repo, &["ls-tree", "-r", "--name-only", &format!("refs/mas/runs/{run}/proposals/{agent}")]);
        assert!(listing.contains(&format!("notes/{agent}.md")), "{listing}");
        assert!(!listing.contains(".codex"), "{agent}: {listing}");
        let committed =
            env.git(&repo, &["show", &format!("refs/mas/runs/{run}/proposals/{agent}:.claude/settings.json")]);
        assert_eq!(committed, "{\"model\": \"opus\"}", "{agent}: the proposal keeps the team's version");
    }
    let mut cmd = Command::new("git");
    env.hermetic(&mut cmd);
    let main_mode = cmd.args(["config", "mas.gate"]).current_dir(&repo).output().unwrap();
    assert!(!main_mode.status.success(), "the main checkout's mode stays unset: {}", stdout(&main_mode));
    let landed = env.git(&repo, &["ls-tree", "-r", "--name-only", "main"]);
    assert!(!landed.contains(".codex") && !landed.contains("git mas gate"), "{landed}");
    assert_eq!(env.git(&repo, &["show", "main:.claude/settings.json"]), "{\"model\": \"opus\"}");
}

/// What opencode writes into a `.opencode/` folder it loads (its npm install of
/// `@opencode-ai/plugin`), as it would in a repository with a `.opencode/` of its own.
const OPENCODE_NPM: &str = "mkdir -p .opencode/node_modules/@opencode-ai/plugin
echo '{\"dependencies\":{}}' > .opencode/package.json
echo '{}' > .opencode/package-lock.json
echo 'node_modules' > .opencode/.gitignore
echo '{}' > .opencode/node_modules/@opencode-ai/plugin/package.json";

#[test]
fn what_opencode_installs_beside_the_plugin_stays_out_of_the_proposal() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["lead", "alice", "bob"]);
    let (code, lines, err) = coordinate_stand_ins(&env, &repo, "alice=opencode,bob=opencode", OPENCODE_NPM, &[]);
    assert_eq!(code, Some(0), "{err}\n{lines:?}");
    let run = lines.iter().find(|l| l["event"] == "run-started").unwrap()["run"].as_str().unwrap().to_string();
    for (agent, path) in worktrees(&lines) {
        let git_dir = env.git(&path, &["rev-parse", "--absolute-git-dir"]);
        let plugin = Path::new(git_dir.trim()).join("mas-opencode-gate.js");
        assert!(std::fs::read_to_string(plugin).unwrap().contains("git-mas-hook --host opencode"), "{agent}");
        assert!(!path.join(".opencode/plugins").exists(), "{agent}: no project plugin folder");
        assert!(path.join(".opencode/node_modules").exists(), "{agent}: the stand-in wrote its install");
        assert_eq!(env.git(&path, &["status", "--porcelain"]), "?? notes/", "{agent}: git sees only the agent's work");
        let listing =
            env.git(&repo, &["ls-tree", "-r", "--name-only", &format!("refs/mas/runs/{run}/proposals/{agent}")]);
        assert!(listing.contains(&format!("notes/{agent}.md")) && !listing.contains(".opencode"), "{agent}: {listing}");
    }
}

#[test]
fn in_a_linked_worktree_install_says_what_codex_and_copilot_need() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    let wt = env.root().join("wt");
    env.git_quiet_ok(&repo, &["worktree", "add", "-q", "-b", "side", wt.to_str().unwrap()]);
    let out: HostHooksOut =
        serde_json::from_str(&env.mas_ok(&wt, &["hooks", "install", "--host", "codex", "--host", "copilot", "--json"]))
            .unwrap();
    let codex = out.hosts[0].notes.join("\n");
    for needle in ["main checkout", "--dangerously-bypass-hook-trust", "hooks.PreToolUse=", "git-mas-hook --host codex"]
    {
        assert!(codex.contains(needle), "codex's notes lack {needle}: {codex}");
    }
    assert!(out.hosts[1].notes.iter().any(|n| n.contains("--trust-folder")), "{:?}", out.hosts[1]);
    // In the main checkout codex's notes are about trust, not the worktree.
    let main: HostHooksOut =
        serde_json::from_str(&env.mas_ok(&repo, &["hooks", "install", "--host", "codex", "--json"])).unwrap();
    assert!(main.hosts[0].notes.iter().all(|n| !n.contains("main checkout")), "{:?}", main.hosts[0]);
}

#[test]
fn coordinate_with_no_edit_gate_installs_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["lead", "alice", "bob"]);
    let (code, lines, err) = coordinate_presets(&env, &repo, &["--no-edit-gate", "--no-mcp"]);
    assert_eq!(code, Some(0), "{err}\n{lines:?}");
    assert!(!env.root().join("seen").exists(), "no agent saw a hook file");
    for (agent, path) in worktrees(&lines) {
        assert!(!path.join(".claude").exists() && !path.join(".codex").exists(), "{agent}");
        let excludes =
            env.git_cmd(&path).args(["config", "--worktree", "--get", "core.excludesFile"]).output().unwrap();
        assert_eq!(excludes.status.code(), Some(1), "{agent}: no excludes file of ours");
        let mode = env.git_cmd(&path).args(["config", "mas.gate"]).output().unwrap();
        assert_eq!(mode.status.code(), Some(1), "{agent}: the gate's mode is left alone");
    }
}

#[test]
fn the_help_names_every_hosts_file_and_override() {
    let env = TestEnv::new();
    let help = env.mas_ok(env.root(), &["hooks", "install", "--help"]);
    for needle in [
        ".claude/settings.json",
        "CLAUDE_CONFIG_DIR",
        ".codex/hooks.json",
        "CODEX_HOME",
        ".github/hooks/git-mas.json",
        "COPILOT_HOME",
        ".gemini/settings.json",
        ".cursor/hooks.json",
        ".agents/plugins/git-mas/",
        ".opencode/plugins/git-mas.js",
        "XDG_CONFIG_HOME",
        "With --json",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}:\n{help}");
    }
}

/// An edit hook that finds the gate off lets everything through: a project install turns the gate
/// on where mas.gate is unset, and leaves a value the user chose.
#[test]
fn a_project_install_sets_the_gate_to_enforce_only_when_unset() {
    let env = TestEnv::new();
    let gate = |repo: &Path| {
        let mut cmd = Command::new("git");
        env.hermetic(&mut cmd);
        let out = cmd.args(["config", "mas.gate"]).current_dir(repo).output().unwrap();
        out.status.success().then(|| stdout(&out).trim().to_string())
    };
    let repo = env.repo("r");
    assert_eq!(gate(&repo), None);
    env.mas_quiet_ok(&repo, &["hooks", "install", "--host", "claude-code"]);
    assert_eq!(gate(&repo).as_deref(), Some("enforce"));
    let other = env.repo("s");
    env.git_quiet_ok(&other, &["config", "mas.gate", "warn"]);
    env.mas_quiet_ok(&other, &["hooks", "install", "--host", "codex"]);
    assert_eq!(gate(&other).as_deref(), Some("warn"), "a chosen mode stays");
    let third = env.repo("t");
    env.mas_quiet_ok(&third, &["hooks", "install", "--global", "--host", "claude-code"]);
    assert_eq!(gate(&third), None, "a global install leaves each repository's mode alone");
}

/// A settings file that is a symbolic link (dotfile managers make them) stays a link through
/// install and uninstall, in the project and in the user's home: the entry goes into the link's
/// final target (a chain of links is followed to its end) and uninstall gives that target back its
/// bytes. A dangling link's target is created by install and removed by uninstall, the link left
/// dangling as it was. Nothing else appears beside the targets.
#[test]
fn a_symlinked_settings_file_stays_a_link_and_its_target_gets_the_entry() {
    use std::os::unix::fs::symlink;
    let env = TestEnv::new();
    let repo = env.repo("r");
    let home = env.root().join("home");
    let codex_home = env.root().join("codex-home");
    let dots = env.root().join("dotfiles");
    for dir in [&dots, &repo.join(".claude"), &repo.join(".gemini"), &home.join(".claude"), &codex_home] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(dots.join("claude.json"), CLAUDE_SETTINGS).unwrap();
    std::fs::write(dots.join("gemini.json"), GEMINI_SETTINGS).unwrap();
    std::fs::write(dots.join("global-claude.json"), CLAUDE_SETTINGS).unwrap();
    symlink(dots.join("claude.json"), repo.join(".claude/settings.json")).unwrap();
    // A chain of two relative links.
    symlink("gemini.json", dots.join("gemini-current.json")).unwrap();
    symlink("../../dotfiles/gemini-current.json", repo.join(".gemini/settings.json")).unwrap();
    symlink(dots.join("global-claude.json"), home.join(".claude/settings.json")).unwrap();
    symlink(dots.join("codex-hooks.json"), codex_home.join("hooks.json")).unwrap();
    let links = [
        (repo.join(".claude/settings.json"), dots.join("claude.json"), "claude-code"),
        (repo.join(".gemini/settings.json"), dots.join("gemini.json"), "gemini"),
        (home.join(".claude/settings.json"), dots.join("global-claude.json"), "claude-code"),
        (codex_home.join("hooks.json"), dots.join("codex-hooks.json"), "codex"),
    ];
    let run = |args: &[&str]| {
        let mut cmd = env.mas_cmd(&repo);
        cmd.args(args).env("CODEX_HOME", &codex_home).env_remove("CLAUDE_CONFIG_DIR");
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    };
    let dots_before = tree(&dots);
    run(&["hooks", "install", "--host", "claude-code", "--host", "gemini"]);
    run(&["hooks", "install", "--global", "--host", "claude-code", "--host", "codex"]);
    for (link, target, host) in &links {
        assert!(std::fs::symlink_metadata(link).unwrap().is_symlink(), "{} is still a link", link.display());
        let text = std::fs::read_to_string(target).unwrap_or_default();
        assert!(text.contains(&format!("git-mas-hook --host {host}")), "{}: {text}", target.display());
    }
    let claude = std::fs::read_to_string(dots.join("claude.json")).unwrap();
    assert!(claude.starts_with("{\n    \"model\" :\"opus\","), "the user's bytes kept: {claude}");
    run(&["hooks", "uninstall", "--host", "claude-code", "--host", "gemini"]);
    run(&["hooks", "uninstall", "--global", "--host", "claude-code", "--host", "codex"]);
    assert_eq!(tree(&dots), dots_before, "every target as it was, nothing left beside them");
    for (link, _, _) in &links {
        assert!(std::fs::symlink_metadata(link).unwrap().is_symlink(), "{} is still a link", link.display());
    }
    assert!(!dots.join("codex-hooks.json").exists(), "the dangling link dangles again");
}

/// `hooks install --host codex --trust` writes two files, each through a temporary and a rename
/// (the project's .codex/hooks.json, then codex's config.toml). Killed at either rename, the
/// user's config.toml is as it was or whole; the install run again completes, and codex's trust
/// is then in force with every byte of the user's config kept.
#[test]
fn a_trust_install_killed_at_each_rename_is_completed_by_running_it_again() {
    use crate::killpoints::{RENAMES, Trigger, kill_at};
    let mine = "# my codex settings\nmodel = \"gpt-5.5\"\n";
    for n in 1..=2 {
        let env = TestEnv::new();
        let repo = env.repo("trust");
        let codex_home = env.root().join("codex-home");
        std::fs::create_dir_all(&codex_home).unwrap();
        let config = codex_home.join("config.toml");
        std::fs::write(&config, mine).unwrap();
        let install = || {
            let mut cmd = env.mas_cmd(&repo);
            cmd.args(["hooks", "install", "--host", "codex", "--trust"]).env("CODEX_HOME", &codex_home);
            cmd
        };
        let attempt = kill_at(&install(), &Trigger::on(RENAMES), n);
        assert!(attempt.killed, "rename {n}: the install was killed");
        assert_ne!(attempt.output.status.code(), Some(0), "rename {n}: the install was killed");
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(text == mine || (text.starts_with(mine) && text.contains("trust_level")), "rename {n}: {text}");
        let again = install().output().unwrap();
        assert_eq!(again.status.code(), Some(0), "rename {n}: {}", stderr(&again));
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(
            text.starts_with(mine) && text.contains("trust_level = \"trusted\"") && text.contains("trusted_hash"),
            "{text}"
        );
        let status = env
            .mas_cmd(&repo)
            .args(["hooks", "status", "--host", "codex", "--json"])
            .env("CODEX_HOME", &codex_home)
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
        assert_eq!(json["hosts"][0]["effect"]["loaded"], true, "rename {n}: {json}");
    }
}

use super::*;
use crate::hosts::ProcessEnv;

const ALL: [Host; 7] = Host::ALL;

fn project() -> Scope {
    Scope::Project(PathBuf::from("/repo"))
}

fn merged(host: Host) -> HookFile {
    hook_files(host, &project(), &ProcessEnv).unwrap().remove(0)
}

/// Installs into `text`, then uninstalls: (installed text, uninstalled plan).
fn round_trip(host: Host, text: &str) -> (String, Plan) {
    let file = merged(host);
    let Plan::Write(installed) = plan_install(host, &file, Some(text)).unwrap() else {
        panic!("install wrote nothing")
    };
    assert_eq!(file_state(host, &file, Some(&installed)), FileState::Installed, "{host:?}:\n{installed}");
    assert_eq!(
        plan_install(host, &file, Some(&installed)).unwrap(),
        Plan::Keep,
        "{host:?}: a second install changes nothing"
    );
    let back = plan_uninstall(host, &file, Some(&installed)).unwrap();
    (installed, back)
}

const MERGED: [Host; 4] = [Host::ClaudeCode, Host::Codex, Host::Gemini, Host::Cursor];

#[test]
fn a_users_file_comes_back_byte_for_byte() {
    let claude_like = "{\n    \"model\":   \"opus\",\n  \"hooks\": {\n      \"PreToolUse\": [ {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./guard.sh\"}]} ],\n      \"Stop\": []\n  },\n  \"permissions\": {\"allow\": [\"Bash(git:*)\"]}\n}\n";
    let cases: Vec<(Host, String)> = vec![
        (Host::ClaudeCode, claude_like.to_string()),
        (Host::ClaudeCode, "{\"model\":\"opus\"}".to_string()),
        (Host::ClaudeCode, "{}".to_string()),
        (Host::ClaudeCode, "{\n\t\"hooks\": {\"Stop\": [{\"hooks\": []}]}\n}".to_string()),
        (Host::Codex, claude_like.to_string()),
        (Host::Gemini, claude_like.replace("PreToolUse", "BeforeTool")),
        (Host::Gemini, "// my settings\n{\n  /* theme */ \"theme\": \"dark\", // trailing note\n  \"hooks\": {\"BeforeTool\": [{\"matcher\": \"run_shell_command\", \"hooks\": [{\"type\": \"command\", \"command\": \"x\"}]}]}\n}\n".to_string()),
        (Host::Cursor, "{\"version\": 1, \"hooks\": {\"preToolUse\": [{\"command\": \"./mine.sh\"}], \"afterFileEdit\": [{\"command\": \"fmt\"}]}}".to_string()),
        (Host::Cursor, "{\n  \"version\": 1\n}\n".to_string()),
    ];
    for (host, text) in cases {
        let (installed, back) = round_trip(host, &text);
        let v: serde_json::Value = if comments_allowed(host) {
            jsonc_parser::parse_to_serde_value(&installed, &Default::default()).unwrap()
        } else {
            serde_json::from_str(&installed).unwrap()
        };
        for (stage, event) in stages(host) {
            let list = v["hooks"][event].as_array().unwrap();
            assert!(list.contains(&entry_value(host, stage)), "{host:?} {stage:?}: {installed}");
        }
        assert_eq!(back, Plan::Write(text.clone()), "{host:?}: uninstall gives the original back:\n{installed}");
    }
}

#[test]
fn a_new_file_is_removed_again_and_a_users_hooks_are_kept() {
    for host in MERGED {
        let file = merged(host);
        let Plan::Write(new) = plan_install(host, &file, None).unwrap() else { panic!() };
        assert_eq!(file_state(host, &file, Some(&new)), FileState::Installed, "{host:?}");
        assert_eq!(plan_uninstall(host, &file, Some(&new)).unwrap(), Plan::Remove, "{host:?}");
        assert_eq!(plan_uninstall(host, &file, None).unwrap(), Plan::Keep, "{host:?}");
    }
}

#[test]
fn our_entry_is_found_by_its_command_wherever_it_stands() {
    let host = Host::ClaudeCode;
    let file = merged(host);
    // Our hook inside a group of the user's: only our hook goes; the group stays.
    let shared = r#"{"hooks":{"PreToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"./mine"},{"type":"command","command":"git mas gate --host claude-code"}]}]}}"#;
    assert_eq!(file_state(host, &file, Some(shared)), FileState::Other);
    let Plan::Write(out) = plan_uninstall(host, &file, Some(shared)).unwrap() else { panic!() };
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["hooks"]["PreToolUse"][0]["hooks"], serde_json::json!([{"type":"command","command":"./mine"}]));
    // A stale entry of ours (another matcher) is replaced, not duplicated.
    let stale = r#"{"hooks":{"PreToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"git mas gate --host claude-code"}]}]}}"#;
    let Plan::Write(out) = plan_install(host, &file, Some(stale)).unwrap() else { panic!() };
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["hooks"]["PreToolUse"], serde_json::json!([entry_value(host, Stage::PreTool)]));
    assert_eq!(v["hooks"]["PostToolUse"], serde_json::json!([entry_value(host, Stage::PostTool)]));
    // A hook that only mentions the gate later in its command is not ours.
    let other =
        r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"echo git mas gate --host claude-code"}]}]}}"#;
    assert_eq!(file_state(host, &file, Some(other)), FileState::NotInstalled);
    assert_eq!(plan_uninstall(host, &file, Some(other)).unwrap(), Plan::Keep);
}

#[test]
fn a_file_that_does_not_parse_or_has_another_shape_is_refused() {
    let cases: [(Host, &str, bool); 9] = [
        (Host::ClaudeCode, "{\"model\": ", true),
        (Host::ClaudeCode, "// a comment\n{}", true),
        (Host::ClaudeCode, "{\"a\": 1,}", true),
        (Host::ClaudeCode, "[]", true),
        (Host::ClaudeCode, "", true),
        (Host::Gemini, "{\"a\": 1,}", true),
        (Host::ClaudeCode, "{\"hooks\": []}", false),
        (Host::Codex, "{\"hooks\": {\"PreToolUse\": {}}}", false),
        (Host::Cursor, "{\"hooks\": \"x\"}", false),
    ];
    for (host, text, invalid) in cases {
        let file = merged(host);
        let err = plan_install(host, &file, Some(text)).unwrap_err();
        assert_eq!(matches!(err, HostHookError::Invalid { .. }), invalid, "{host:?} {text:?}: {err}");
        assert!(matches!(err, HostHookError::Invalid { .. } | HostHookError::Shape { .. }), "{err}");
        assert!(plan_uninstall(host, &file, Some(text)).is_err(), "{host:?} {text:?}");
        assert_eq!(file_state(host, &file, Some(text)), FileState::Invalid, "{host:?} {text:?}");
    }
    // Gemini reads comments; the others do not.
    assert!(plan_install(Host::Gemini, &merged(Host::Gemini), Some("// c\n{}")).is_ok());
}

#[test]
fn files_of_our_own_are_written_whole_and_others_refused() {
    for host in [Host::Copilot, Host::Goose, Host::OpenCode] {
        for file in hook_files(host, &project(), &ProcessEnv).unwrap() {
            let FileKind::Own(ours) = &file.kind else { panic!("{host:?}") };
            assert_eq!(plan_install(host, &file, None).unwrap(), Plan::Write(ours.clone()));
            assert_eq!(plan_install(host, &file, Some(ours)).unwrap(), Plan::Keep);
            assert_eq!(file_state(host, &file, Some(ours)), FileState::Installed);
            assert_eq!(plan_uninstall(host, &file, Some(ours)).unwrap(), Plan::Remove);
            let theirs = format!("{ours} ");
            assert_eq!(file_state(host, &file, Some(&theirs)), FileState::Other);
            assert!(matches!(plan_install(host, &file, Some(&theirs)), Err(HostHookError::NotOurs { .. })));
            assert!(matches!(plan_uninstall(host, &file, Some(&theirs)), Err(HostHookError::NotOurs { .. })));
        }
    }
}

#[test]
fn every_host_runs_its_own_gate_command() {
    for host in ALL {
        let files = hook_files(host, &project(), &ProcessEnv).unwrap();
        let text = match &files.last().unwrap().kind {
            FileKind::Own(t) => t.clone(),
            FileKind::Merged => new_file(host),
        };
        assert!(
            text.contains(&format!("\"{}\"", gate_command(host))) || text.contains(&gate_command(host)),
            "{host:?}"
        );
        for other in ALL.iter().filter(|h| **h != host) {
            assert!(!text.contains(&gate_command(*other)), "{host:?} runs {other:?}'s");
        }
    }
}

struct Vars(Vec<(&'static str, &'static str)>);

impl Env for Vars {
    fn var(&self, name: &str) -> Option<PathBuf> {
        self.0.iter().find(|(k, _)| *k == name).map(|(_, v)| PathBuf::from(v))
    }
}

#[test]
fn the_global_files_follow_home_and_the_hosts_overrides() {
    let home = Vars(vec![("HOME", "/h")]);
    let table: [(Host, &str, &str, &str); 7] = [
        (Host::ClaudeCode, "/h/.claude/settings.json", "CLAUDE_CONFIG_DIR", "/c/settings.json"),
        (Host::Codex, "/h/.codex/hooks.json", "CODEX_HOME", "/c/hooks.json"),
        (Host::Copilot, "/h/.copilot/hooks/git-mas.json", "COPILOT_HOME", "/c/hooks/git-mas.json"),
        (Host::Gemini, "/h/.gemini/settings.json", "GEMINI_CLI_HOME", "/c/.gemini/settings.json"),
        (Host::Cursor, "/h/.cursor/hooks.json", "", ""),
        (Host::Goose, "/h/.agents/plugins/git-mas/hooks/hooks.json", "", ""),
        (Host::OpenCode, "/h/.config/opencode/plugins/git-mas.js", "XDG_CONFIG_HOME", "/c/opencode/plugins/git-mas.js"),
    ];
    for (host, at_home, var, overridden) in table {
        let files = hook_files(host, &Scope::Global, &home).unwrap();
        assert_eq!(files.last().unwrap().path(), PathBuf::from(at_home), "{host:?}");
        assert_eq!(host.facts().hooks.user_dir.var.unwrap_or(""), var, "{host:?}");
        if !var.is_empty() {
            let env = Vars(vec![("HOME", "/h"), (var, "/c")]);
            assert_eq!(
                hook_files(host, &Scope::Global, &env).unwrap().last().unwrap().path(),
                PathBuf::from(overridden)
            );
        }
        assert!(hook_files(host, &Scope::Global, &Vars(vec![])).is_none(), "{host:?}");
        let project = hook_files(host, &project(), &home).unwrap();
        assert_eq!(project[0].base, PathBuf::from("/repo"), "{host:?}: the host's folder may be removed");
        // The edit gate's paths are the files' paths, in each scope.
        for (scope, env) in
            [(Scope::Project(PathBuf::from("/repo")), &home), (Scope::Global, &home), (Scope::Global, &Vars(vec![]))]
        {
            let paths = hook_files(host, &scope, env).map(|f| f.iter().map(HookFile::path).collect::<Vec<_>>());
            assert_eq!(hook_paths(host, &scope, env), paths, "{host:?} {scope:?}");
        }
    }
}

#[test]
fn an_earlier_release_of_a_file_of_ours_is_replaced_and_removed() {
    for host in [Host::Goose, Host::OpenCode] {
        let file = hook_files(host, &project(), &ProcessEnv).unwrap().pop().unwrap();
        let FileKind::Own(ours) = &file.kind else { panic!("{host:?}") };
        let earlier = earlier_releases(host, ours);
        // Goose: the pre-tool entry alone, and with the narrower matcher. OpenCode: each of its
        // plugin's earlier releases. Then the file as it was before the hook's own binary.
        assert_eq!(earlier.len(), if host == Host::OpenCode { 5 } else { 3 }, "{host:?}");
        assert_eq!(earlier.last(), Some(&ours.replace(GATE_COMMAND_PREFIX, EARLIER_COMMAND_PREFIX)), "{host:?}");
        for text in &earlier {
            assert_ne!(text, ours, "{host:?}");
            assert!(text.contains(EARLIER_COMMAND_PREFIX) && !text.contains(GATE_COMMAND_PREFIX), "{host:?}");
            assert_eq!(plan_install(host, &file, Some(text)).unwrap(), Plan::Write(ours.clone()));
            assert_eq!(plan_uninstall(host, &file, Some(text)).unwrap(), Plan::Remove);
        }
    }
}

/// The bytes each earlier release of the OpenCode plugin wrote, oldest first.
const OPENCODE_RELEASES: [&str; 5] = [
    include_str!("../../tests/fixtures/opencode-plugin/1-edit-tools.js"),
    include_str!("../../tests/fixtures/opencode-plugin/2-all-but-reading.js"),
    include_str!("../../tests/fixtures/opencode-plugin/3-session-id.js"),
    include_str!("../../tests/fixtures/opencode-plugin/4-post-tool.js"),
    // The last release that ran `git mas gate --host opencode`, before the hook's own binary.
    include_str!("../../tests/fixtures/opencode-plugin/5-session-end.js"),
];

#[test]
fn every_earlier_opencode_plugin_is_recognised_byte_for_byte() {
    let ours = own_content(Host::OpenCode);
    assert_eq!(earlier_releases(Host::OpenCode, &ours), OPENCODE_RELEASES.map(String::from));
    assert!(!OPENCODE_RELEASES.contains(&ours.as_str()), "the current release is a new one");
}

#[test]
fn the_opencode_plugin_ends_the_sessions_it_served_when_opencode_exits() {
    let plugin = own_content(Host::OpenCode);
    // One handler for the process, not one per plugin instance.
    let (top, hooks) = plugin.split_once("export const GitMasGate").unwrap();
    assert!(top.contains("const SESSIONS = new Map();\nprocess.on(\"exit\", () => {"), "{top}");
    assert!(top.contains("\"git-mas-hook --host opencode --session-end\""), "{top}");
    assert!(top.contains("JSON.stringify({ sessionID, cwd })"), "{top}");
    // Every session that asked the gate is ended, before its call is decided.
    let before = hooks.split("\"tool.execute.after\"").next().unwrap();
    let record = before.find("SESSIONS.set(input.sessionID, cwd)").expect("the session is kept");
    assert!(record < before.find("spawnSync").unwrap(), "{before}");
    // The session-end payload is one the gate reads as the session's.
    let event =
        crate::hosts::payload::parse_session_event(Host::OpenCode, br#"{"sessionID": "ses_1", "cwd": "/r"}"#).unwrap();
    assert_eq!(event.session.as_deref(), Some("ses_1"));
}

#[test]
fn the_opencode_plugin_sends_the_session_id_it_is_given() {
    let plugin = own_content(Host::OpenCode);
    let before = plugin.split("\"tool.execute.before\"").nth(1).unwrap();
    let payload = before.lines().find(|l| l.trim_start().starts_with("const payload")).unwrap();
    assert!(payload.contains("sessionID: input.sessionID"), "{payload}");
    assert!(plugin.contains(r#"{"tool","args","cwd","sessionID"}"#), "{plugin}");
    // The releases before it sent none, and are still recognised as ours.
    let earlier = earlier_releases(Host::OpenCode, &plugin);
    for text in &earlier[..2] {
        assert!(!text.contains("sessionID"), "{text}");
    }
}

#[test]
fn the_matchers_route_every_writing_tool() {
    // (host, tools that write a file, tools that must not reach the gate)
    let cases: [(Host, &[&str], &[&str]); 6] = [
        (Host::ClaudeCode, &["Write", "Edit", "MultiEdit", "NotebookEdit", "mcp__fs__write_file"], &[]),
        (Host::Codex, &["apply_patch", "mcp__fs__write_file"], &[]),
        (Host::Cursor, &["Write", "StrReplace", "Edit", "Delete", "TabWrite"], &[]),
        (Host::Gemini, &["write_file", "replace", "mcp_fs_write_file", "fs__write"], &[]),
        (Host::Goose, &["developer__write", "developer__edit", "developer__text_editor", "fs__write_file"], &[]),
        (Host::OpenCode, &[], &[]),
    ];
    for (host, writers, _) in cases {
        let re = regex::Regex::new(&format!("^(?:{})$", matcher(host))).unwrap();
        for tool in writers {
            assert!(re.is_match(tool), "{host:?}: {tool} is not routed by {}", matcher(host));
        }
    }
    // The shell tools too: team mode keeps the files other sessions hold before a shell call, or
    // the post-tool entry has nothing to put back (codex names its shell `Bash` in hook payloads).
    for (host, shell) in [(Host::ClaudeCode, "Bash"), (Host::Codex, "Bash"), (Host::Cursor, "Shell")] {
        assert!(host.facts().payload.shell_tools.contains(&shell), "{host:?}");
        let re = regex::Regex::new(&format!("^(?:{})$", matcher(host))).unwrap();
        assert!(re.is_match(shell), "{host:?}: {shell} is not routed by {}", matcher(host));
    }
    // Copilot's entry has no matcher at all (every tool comes).
    assert!(entry_value(Host::Copilot, Stage::PreTool).get("matcher").is_none());
    // OpenCode's plugin skips only the reading tools.
    let plugin = own_content(Host::OpenCode);
    assert!(plugin.contains("if (READ_ONLY.has(input.tool)) return;"), "{plugin}");
    let read_only = plugin.lines().find(|l| l.starts_with("const READ_ONLY")).unwrap();
    for writer in ["edit", "write", "patch", "multiedit", "apply_patch", "bash"] {
        assert!(!read_only.contains(&format!("\"{writer}\"")), "{writer}: {read_only}");
    }
}

#[test]
fn each_stage_of_the_table_gets_its_entry_under_its_event() {
    // (host, the events install fills, in order)
    let cases: [(Host, &[&str]); 7] = [
        (Host::ClaudeCode, &["PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionEnd"]),
        (Host::Codex, &["PreToolUse", "PostToolUse", "SessionEnd"]),
        (Host::Copilot, &["preToolUse", "postToolUse", "sessionEnd"]),
        (Host::Gemini, &["BeforeTool", "AfterTool", "SessionEnd"]),
        (Host::Cursor, &["preToolUse", "postToolUse", "postToolUseFailure", "sessionEnd"]),
        (Host::Goose, &["PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionEnd"]),
        (Host::OpenCode, &["tool.execute.before", "tool.execute.after"]),
    ];
    for (host, events) in cases {
        assert_eq!(stages(host).iter().map(|(_, e)| *e).collect::<Vec<_>>(), events, "{host:?}");
        if host == Host::OpenCode {
            continue;
        }
        let file = hook_files(host, &project(), &ProcessEnv).unwrap().pop().unwrap();
        let text = match &file.kind {
            FileKind::Own(t) => t.clone(),
            FileKind::Merged => new_file(host),
        };
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        for (stage, event) in stages(host) {
            let entry = &v["hooks"][event][0];
            let command = entry.pointer("/hooks/0/command").or(entry.get("command")).or(entry.get("bash"));
            assert_eq!(command.and_then(|c| c.as_str()), Some(stage.command(host).as_str()), "{host:?} {event}");
            let matcher = entry.get("matcher").and_then(|m| m.as_str());
            match stage {
                Stage::PreTool => assert_eq!(matcher, entry_value(host, stage)["matcher"].as_str()),
                // Every tool after it ran; at the end, no matcher at all.
                Stage::PostTool | Stage::PostToolFailure => {
                    assert!(matcher.is_none_or(|m| m == ".*"), "{host:?}: {entry}")
                }
                Stage::SessionEnd => assert_eq!(matcher, None, "{host:?}: {entry}"),
            }
            let refuses = entry.get("failClosed").is_some() || entry.pointer("/hooks/0/on_failure").is_some();
            assert_eq!(refuses, stage == Stage::PreTool && matches!(host, Host::Cursor | Host::Goose), "{host:?}");
        }
    }
    assert_eq!(Stage::PostTool.command(Host::Codex), "git-mas-hook --host codex --post-tool");
    // A failed call is checked as a call that succeeded is.
    assert_eq!(Stage::PostToolFailure.command(Host::ClaudeCode), "git-mas-hook --host claude-code --post-tool");
    assert_eq!(Stage::SessionEnd.command(Host::Gemini), "git-mas-hook --host gemini --session-end");
}

#[test]
fn a_file_an_earlier_release_installed_is_upgraded_and_uninstalled() {
    // What the releases before the post-tool and session-end entries wrote into a user's file.
    let before = "{\n  \"model\": \"opus\"\n}\n";
    for host in MERGED {
        let file = merged(host);
        let pre_only = insert_entry(host, &file.path(), before, Stage::PreTool, event_name(host)).unwrap();
        assert_eq!(file_state(host, &file, Some(&pre_only)), FileState::Other, "{host:?}");
        let Plan::Write(upgraded) = plan_install(host, &file, Some(&pre_only)).unwrap() else { panic!("{host:?}") };
        assert_eq!(file_state(host, &file, Some(&upgraded)), FileState::Installed, "{host:?}: {upgraded}");
        assert_eq!(plan_uninstall(host, &file, Some(&upgraded)).unwrap(), Plan::Write(before.to_string()), "{host:?}");
        assert_eq!(plan_uninstall(host, &file, Some(&pre_only)).unwrap(), Plan::Write(before.to_string()), "{host:?}");
    }
}

#[test]
fn the_opencode_plugin_runs_the_post_tool_gate_after_every_tool() {
    let plugin = own_content(Host::OpenCode);
    let after = plugin.split("\"tool.execute.after\"").nth(1).expect("a tool.execute.after hook");
    assert!(after.contains("\"git-mas-hook --host opencode --post-tool\""), "{after}");
    assert!(after.contains("sessionID: input.sessionID") && after.contains("args: input.args"), "{after}");
    assert!(!after.contains("READ_ONLY") && !after.contains("throw"), "every tool, and nothing thrown: {after}");
    assert!(plugin.ends_with("  },\n});\n"), "{plugin}");
}

/// Every OpenCode plugin git-mas writes or recognises — the current release's and each earlier
/// one's, rendered from the templates in `src/hosts/opencode/` — is JavaScript node accepts
/// (`node --check`, as the ES module opencode imports). Node is required: the hosts' tests
/// install it (`tests/setup.sh`).
#[test]
fn every_rendered_opencode_plugin_passes_node_check() {
    let dir = tempfile::tempdir().unwrap();
    let releases = OpenCodeRelease::EARLIER.iter().chain(std::iter::once(&OpenCodeRelease::CURRENT));
    for (i, release) in releases.enumerate() {
        let text = opencode_plugin(Host::OpenCode, release);
        assert!(!text.contains('@'), "a placeholder left unfilled in release {i}:\n{text}");
        let file = dir.path().join(format!("plugin-{i}.mjs"));
        std::fs::write(&file, &text).unwrap();
        let out = std::process::Command::new("node")
            .arg("--check")
            .arg(&file)
            .output()
            .expect("node runs (installed by tests/setup.sh)");
        assert!(out.status.success(), "release {i}: {}\n{text}", String::from_utf8_lossy(&out.stderr));
    }
}

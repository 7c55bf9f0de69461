use super::*;
use std::path::Path;

fn install(host: Host, text: Option<&str>, agent: Option<&str>) -> String {
    match plan_install(host, Path::new("f"), text, agent).unwrap() {
        Plan::Write(t) => t,
        Plan::Keep => text.unwrap().to_string(),
        Plan::Remove => panic!("install removes nothing"),
    }
}

fn uninstall(host: Host, text: &str) -> Option<String> {
    match plan_uninstall(host, Path::new("f"), Some(text), None).unwrap() {
        Plan::Write(t) => Some(t),
        Plan::Keep => Some(text.to_string()),
        Plan::Remove => None,
    }
}

#[test]
fn every_editable_host_round_trips_a_users_file_byte_for_byte() {
    let cases: &[(Host, &str)] = &[
        (Host::ClaudeCode, "{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}\n  }\n}\n"),
        (Host::ClaudeCode, "{\"theme\": \"dark\"}"),
        (Host::ClaudeCode, "{\n    \"theme\": \"dark\"\n}\n"),
        (Host::Cursor, "{}\n"),
        (Host::Gemini, "{\n  // mine\n  \"model\": {\"name\": \"m\"}\n}\n"),
        (Host::OpenCode, "{\n  \"$schema\": \"https://opencode.ai/config.json\"\n}\n"),
        (Host::Copilot, "{\n  \"mcpServers\": {}\n}\n"),
        (Host::Codex, "model = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n"),
        (Host::Codex, "model = \"o3\" # mine\n"),
    ];
    for (host, before) in cases {
        let once = install(*host, Some(before), Some("alice"));
        assert_ne!(&once, before, "{host:?}: install adds the server");
        assert_eq!(
            file_state(*host, Path::new("f"), Some(&once), Some("alice")),
            FileState::Installed,
            "{host:?}\n{once}"
        );
        assert_eq!(install(*host, Some(&once), Some("alice")), once, "{host:?}: idempotent");
        let back = uninstall(*host, &once);
        let expected =
            if *before == "{\n  \"mcpServers\": {}\n}\n" { "{\n}\n".to_string() } else { before.to_string() };
        assert_eq!(back.as_deref(), Some(expected.as_str()), "{host:?}:\n{once}");
    }
}

#[test]
fn a_new_file_is_removed_again_and_a_stale_entry_is_replaced() {
    for host in Host::ALL.into_iter().filter(|h| *h != Host::Goose) {
        let created = install(host, None, None);
        assert_eq!(uninstall(host, &created), None, "{host:?}");
        let other = install(host, Some(&created), Some("bob"));
        assert_eq!(file_state(host, Path::new("f"), Some(&other), Some("bob")), FileState::Installed, "{host:?}");
        assert_eq!(file_state(host, Path::new("f"), Some(&other), None), FileState::Installed, "{host:?}");
        assert_eq!(file_state(host, Path::new("f"), Some(&other), Some("carol")), FileState::Other, "{host:?}");
        assert_eq!(uninstall(host, &other), None, "{host:?}: {other}");
    }
}

#[test]
fn invalid_files_and_goose_are_refused() {
    for host in [Host::ClaudeCode, Host::Codex, Host::Gemini] {
        assert!(plan_install(host, Path::new("f"), Some("{ nope"), None).is_err(), "{host:?}");
        assert_eq!(file_state(host, Path::new("f"), Some("{ nope"), None), FileState::Invalid);
    }
    let scope = Scope::Project("/p".into());
    assert!(matches!(
        config_file(Host::Goose, &scope, &crate::hosts::ProcessEnv),
        Err(HostMcpError::Unsupported { .. })
    ));
}

#[test]
fn the_registered_command_names_the_agent() {
    assert_eq!(server_argv(None), ["git", "mas", "mcp"]);
    assert_eq!(server_argv(Some("a")), ["git", "mas", "mcp", "--agent", "a"]);
    let created = install(Host::OpenCode, None, Some("a"));
    let v: serde_json::Value = serde_json::from_str(&created).unwrap();
    assert_eq!(v["mcp"]["git-mas"]["command"], serde_json::json!(["git", "mas", "mcp", "--agent", "a"]));
}

/// The `-c key=value` words of a codex session, read as codex reads them: the value is TOML.
fn codex_layer(agent: Option<&str>) -> toml_edit::DocumentMut {
    let args = session_args(Host::Codex, agent);
    assert_eq!(args.len(), 2, "{args:?}");
    assert_eq!(args[0], "-c");
    let (key, value) = args[1].split_once('=').unwrap();
    assert_eq!(key, "mcp_servers.git-mas", "{args:?}");
    format!("server = {value}\n").parse().unwrap_or_else(|e| panic!("not TOML ({e}): {value}"))
}

#[test]
fn a_codex_session_carries_the_server_with_its_environment_approved_and_required() {
    let strings = |v: &toml_edit::Item| -> Vec<String> {
        v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
    };
    for (agent, want_args) in [
        (Some("alice"), vec!["mas", "mcp", "--agent", "alice"]),
        (None, vec!["mas", "mcp"]),
        (Some("o\"dd \\ name"), vec!["mas", "mcp", "--agent", "o\"dd \\ name"]),
    ] {
        let doc = codex_layer(agent);
        let server = doc["server"].as_inline_table().map(|t| t.clone().into_table()).unwrap();
        let server = toml_edit::Item::Table(server);
        assert_eq!(server["command"].as_str(), Some("git"), "{agent:?}");
        assert_eq!(strings(&server["args"]), want_args, "{agent:?}");
        let env = strings(&server["env_vars"]);
        for var in ["GIT_MAS_AGENT", "GIT_MAS_KEY_DIR", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_COMMITTER_NAME"] {
            assert!(env.iter().any(|e| e == var), "{var} is not forwarded: {env:?}");
        }
        assert_eq!(server["default_tools_approval_mode"].as_str(), Some("approve"), "{agent:?}");
        assert_eq!(server["required"].as_bool(), Some(true), "{agent:?}");
    }
}

#[test]
fn codex_notes_say_how_its_exec_approves_writing_tools() {
    let global = notes(Host::Codex, &Scope::Global);
    assert_eq!(global.len(), 1, "{global:?}");
    assert!(global[0].contains("default_tools_approval_mode = \"approve\""), "{global:?}");
    let project = notes(Host::Codex, &Scope::Project("/p".into()));
    assert!(project[0].contains("trusted project") && project[1] == global[0], "{project:?}");
}

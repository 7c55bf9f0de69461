use super::*;
use std::path::Path;

fn install(host: GateHost, text: Option<&str>, agent: Option<&str>) -> String {
    match plan_install(host, Path::new("f"), text, agent).unwrap() {
        Plan::Write(t) => t,
        Plan::Keep => text.unwrap().to_string(),
        Plan::Remove => panic!("install removes nothing"),
    }
}

fn uninstall(host: GateHost, text: &str) -> Option<String> {
    match plan_uninstall(host, Path::new("f"), Some(text), None).unwrap() {
        Plan::Write(t) => Some(t),
        Plan::Keep => Some(text.to_string()),
        Plan::Remove => None,
    }
}

#[test]
fn every_editable_host_round_trips_a_users_file_byte_for_byte() {
    let cases: &[(GateHost, &str)] = &[
        (GateHost::ClaudeCode, "{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}\n  }\n}\n"),
        (GateHost::ClaudeCode, "{\"theme\": \"dark\"}"),
        (GateHost::ClaudeCode, "{\n    \"theme\": \"dark\"\n}\n"),
        (GateHost::Cursor, "{}\n"),
        (GateHost::Gemini, "{\n  // mine\n  \"model\": {\"name\": \"m\"}\n}\n"),
        (GateHost::OpenCode, "{\n  \"$schema\": \"https://opencode.ai/config.json\"\n}\n"),
        (GateHost::Copilot, "{\n  \"mcpServers\": {}\n}\n"),
        (GateHost::Codex, "model = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n"),
        (GateHost::Codex, "model = \"o3\" # mine\n"),
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
    for host in GateHost::ALL.into_iter().filter(|h| *h != GateHost::Goose) {
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
    for host in [GateHost::ClaudeCode, GateHost::Codex, GateHost::Gemini] {
        assert!(plan_install(host, Path::new("f"), Some("{ nope"), None).is_err(), "{host:?}");
        assert_eq!(file_state(host, Path::new("f"), Some("{ nope"), None), FileState::Invalid);
    }
    let scope = Scope::Project("/p".into());
    assert!(matches!(
        config_file(GateHost::Goose, &scope, &host_hooks::ProcessEnv),
        Err(HostMcpError::Unsupported { .. })
    ));
}

#[test]
fn the_registered_command_names_the_agent() {
    assert_eq!(server_argv(None), ["git", "mas", "mcp"]);
    assert_eq!(server_argv(Some("a")), ["git", "mas", "mcp", "--agent", "a"]);
    let created = install(GateHost::OpenCode, None, Some("a"));
    let v: serde_json::Value = serde_json::from_str(&created).unwrap();
    assert_eq!(v["mcp"]["git-mas"]["command"], serde_json::json!(["git", "mas", "mcp", "--agent", "a"]));
}

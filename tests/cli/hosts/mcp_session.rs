//! The presets' own command lines start the git-mas MCP server that `git mas mcp install --host
//! <host> --agent <name>` registered in an agent's worktree (what coordinate does), with nothing
//! else configured: the host advertises the server's tools and a scripted `gate` call is
//! answered by the server acting as that agent.

use super::claude::claude_env;
use super::copilot::copilot_env;
use super::gemini::gemini_env;
use super::opencode::opencode_env;
use super::*;
use git_mas::hosts::Host;
use git_mas::peers::Wiring;

/// A worktree given the MCP server and nothing else.
const MCP: Wiring = Wiring { edit_gate: false, mcp: true };

/// alice holds `src/lib.rs`, bob `src/money.rs`; alice's worktree has the server registered for `host`, as alice;
/// `preset`'s line, wired for it, runs a scripted `gate` call on that file. Returns the tools the
/// host advertised and the tool results it sent back.
fn gate_through_the_preset(
    preset: Host,
    env: impl FnOnce(&Bench) -> Vec<(&'static str, String)>,
) -> (Vec<String>, String) {
    let bench = Bench::gate_call_on_bobs_file();
    let team = &bench.team;
    team.quiet_ok(&bench.worktree, "alice", &["mcp", "install", "--host", preset.name(), "--agent", "alice"]);

    let line = preset.session_command_line(Some(&bench.check()), MCP, "alice");
    let run = bench.run(&line, &env(&bench), "Gate src/money.rs.", Duration::from_secs(120));
    let context = format!("{line}\n{}", bench.context(&run));
    assert_eq!(run.code, Some(0), "{context}");
    let advertised: Vec<String> = bench.server.turns().iter().flat_map(server::tools).map(|t| t.name).collect();
    let results = bench.tool_results();
    assert!(
        results.contains(r#""holder":"bob""#) && results.contains("held by bob"),
        "the gate result names bob: {results}\n{context}"
    );
    (advertised, results)
}

fn assert_advertised(advertised: &[String], tools: &[&str]) {
    for tool in tools {
        assert!(
            advertised.iter().any(|a| a.ends_with(tool) && a.to_ascii_lowercase().contains("git")),
            "{tool} not advertised: {advertised:?}"
        );
    }
}

#[test]
fn claude_codes_preset_line_starts_the_worktree_server_and_may_call_it() {
    host("claude");
    let (advertised, _) = gate_through_the_preset(Host::ClaudeCode, |bench| {
        let mut env = claude_env(&bench.home(), &bench.server.url());
        // Claude defers MCP tools behind its ToolSearch tool; the scripted model needs them whole.
        env.push(("ENABLE_TOOL_SEARCH", "false".into()));
        env
    });
    assert_advertised(&advertised, &["__gate", "__propose", "__endorse", "__focus_publish"]);
}

#[test]
fn copilots_preset_line_starts_the_worktree_server_and_may_call_it() {
    host("copilot");
    let (advertised, _) =
        gate_through_the_preset(Host::Copilot, |bench| copilot_env(&bench.home(), &bench.server.url()));
    assert_advertised(&advertised, &["gate", "propose", "endorse", "focus_publish"]);
}

#[test]
fn opencode_reads_the_worktree_registration_by_itself() {
    host("opencode");
    let (advertised, _) =
        gate_through_the_preset(Host::OpenCode, |bench| opencode_env(&bench.home(), &bench.server.url()));
    assert_advertised(&advertised, &["gate", "propose", "endorse", "focus_publish"]);
}

#[test]
fn geminis_preset_line_starts_the_worktree_server_and_may_call_it() {
    host("gemini");
    let (advertised, _) = gate_through_the_preset(Host::Gemini, |bench| gemini_env(&bench.home(), &bench.server.url()));
    assert_advertised(&advertised, &["gate", "propose", "endorse", "focus_publish"]);
}

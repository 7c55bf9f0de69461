//! Real hosts using the git-mas MCP server (`git mas mcp`) with the scripted model: claude-code
//! advertises the server's tools and calls `gate`, whose result names the holder.

use super::claude::claude_env;
use super::*;

/// How each host is told to start the git-mas server: `git mas mcp`, acting as the agent in
/// `GIT_MAS_AGENT`. The one place registration is written in these tests.
mod register {
    use std::path::{Path, PathBuf};

    /// Claude: an `--mcp-config` file (servers named on the command line need no project
    /// approval, unlike a project `.mcp.json`); returns the file.
    pub fn claude(dir: &Path) -> PathBuf {
        let path = dir.join("git-mas-mcp.json");
        let config = serde_json::json!({"mcpServers": {"git-mas": {"command": "git", "args": ["mas", "mcp"]}}});
        std::fs::write(&path, config.to_string()).unwrap();
        path
    }
}

fn context(bench: &Bench, run: &HostRun) -> String {
    format!(
        "exit {:?} after {:?}\nstdout: {}\nstderr: {}\nrequests:\n{}",
        run.code,
        run.elapsed,
        run.stdout,
        run.stderr,
        bench.server.dump()
    )
}

#[test]
fn claude_code_advertises_the_git_mas_tools_and_its_gate_call_names_the_holder() {
    host("claude");
    let bench = Bench::new(|_, _| {
        Scenario::single(
            vec![Step::Mcp { tool: "gate".into(), arguments: serde_json::json!({"paths": ["src/money.rs"]}) }],
            "Gated.\nDONE",
        )
    });
    let team = &bench.team;
    team.ok(&team.repo, "alice", &["snapshot", "--publish"]);
    team.ok(&team.repo, "alice", &["focus", "publish", "--targets", "src/lib.rs"]);
    team.ok(&team.repo, "bob", &["focus", "publish", "--targets", "src/money.rs"]);
    let cli = team.as_agent(&bench.worktree, "alice", &["gate", "--paths", "src/money.rs"]);
    assert_eq!(cli.status.code(), Some(6), "bob holds the file: {}", stderr(&cli));

    let config = register::claude(team.env.root());
    let line =
        format!("claude -p --strict-mcp-config --mcp-config {} --allowedTools 'mcp__git-mas__gate'", config.display());
    // Claude defers MCP tools behind its ToolSearch tool; ENABLE_TOOL_SEARCH=false sends them whole.
    let mut env = claude_env(&bench.home(), &bench.server.url());
    env.push(("ENABLE_TOOL_SEARCH", "false".into()));
    let run = bench.run(&line, &env, "Gate src/money.rs.", Duration::from_secs(90));
    assert_eq!(run.code, Some(0), "{}", context(&bench, &run));
    let advertised: Vec<String> = bench.server.turns().iter().flat_map(server::tools).map(|t| t.name).collect();
    for tool in ["gate", "focus_publish", "propose", "endorse", "whoami"] {
        let name = format!("mcp__git-mas__{tool}");
        assert!(advertised.contains(&name), "{name} not advertised: {advertised:?}");
    }
    let results = bench.tool_results();
    assert!(
        results.contains(r#""holder":"bob""#) && results.contains("held by bob"),
        "the gate result names bob: {results}\n{}",
        context(&bench, &run)
    );
}

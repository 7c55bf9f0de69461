//! Real hosts using the git-mas MCP server (`git mas mcp`) with the scripted model: claude-code
//! advertises the server's tools and calls `gate`, whose result names the holder; codex, in its
//! `workspace-write` sandbox (where `git mas propose` from its shell fails), proposes and endorses
//! through the server's tools, started as `mcp::session_args` says, and the run lands once.

use super::claude::claude_env;
use super::codex::codex_env;
use super::*;
use crate::json::endorse::EndorsedOut;
use crate::json::land::LandOut;
use crate::json::mcp::ToolOut;
use crate::json::propose::ProposedOut;
use crate::json::tally::TallyOut;
use git_mas::hosts::Host;
use git_mas::hosts::hooks::shell_word;
use git_mas::hosts::mcp;
use server::Branch;

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

#[test]
fn claude_code_advertises_the_git_mas_tools_and_its_gate_call_names_the_holder() {
    host("claude");
    let bench = Bench::gate_call_on_bobs_file();
    let team = &bench.team;
    let cli = team.as_agent(&bench.worktree, "alice", &["gate", "--paths", "src/money.rs"]);
    assert_eq!(cli.status.code(), Some(6), "bob holds the file: {}", stderr(&cli));

    let config = register::claude(team.env.root());
    let line =
        format!("claude -p --strict-mcp-config --mcp-config {} --allowedTools 'mcp__git-mas__gate'", config.display());
    // Claude defers MCP tools behind its ToolSearch tool; ENABLE_TOOL_SEARCH=false sends them whole.
    let mut env = claude_env(&bench.home(), &bench.server.url());
    env.push(("ENABLE_TOOL_SEARCH", "false".into()));
    let run = bench.run(&line, &env, "Gate src/money.rs.", Duration::from_secs(90));
    assert_eq!(run.code, Some(0), "{}", bench.context(&run));
    let advertised: Vec<String> = bench.server.turns().iter().flat_map(server::tools).map(|t| t.name).collect();
    for tool in ["gate", "focus_publish", "propose", "endorse", "whoami"] {
        let name = format!("mcp__git-mas__{tool}");
        assert!(advertised.contains(&name), "{name} not advertised: {advertised:?}");
    }
    let results = bench.tool_results();
    assert!(
        results.contains(r#""holder":"bob""#) && results.contains("held by bob"),
        "the gate result names bob: {results}\n{}",
        bench.context(&run)
    );
}

/// Every distinct JSON object the host handed its model as an MCP tool's output (codex: the
/// server's structured result after `Output:`), in the order first seen.
fn mcp_outputs(bench: &Bench) -> Vec<serde_json::Value> {
    let mut seen: Vec<serde_json::Value> = Vec::new();
    for body in bench.server.turns() {
        for item in body["input"].as_array().into_iter().flatten().filter(|i| i["type"] == "function_call_output") {
            let texts: Vec<String> = match &item["output"] {
                serde_json::Value::String(s) => vec![s.clone()],
                other => other
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["text"].as_str().map(String::from))
                    .collect(),
            };
            for text in texts {
                let Some(at) = text.find("Output:\n") else { continue };
                let Ok(value) = serde_json::from_str::<serde_json::Value>(text[at + 8..].trim()) else { continue };
                if value.get("tool").is_some() && !seen.contains(&value) {
                    seen.push(value);
                }
            }
        }
    }
    seen
}

/// `codex exec` in its `workspace-write` sandbox with the server on its command line as
/// [`mcp::session_args`] gives it for `agent`, in `dir`.
fn codex_line(dir: &Path, agent: &str) -> String {
    let args: Vec<String> = mcp::session_args(Host::Codex, Some(agent)).iter().map(|a| shell_word(a)).collect();
    format!(
        "cd {} && codex exec --sandbox workspace-write --ephemeral --color never {} -",
        shell_word(&dir.display().to_string()),
        args.join(" ")
    )
}

/// The scripted codex of the MCP test: `task=propose` writes NOTES.md through codex's own patch
/// tool and proposes through the server's `propose`; `task=endorse` endorses alice's proposal
/// through `endorse`.
fn sandboxed_scenario(worktree: &Path) -> Scenario {
    let endorse = serde_json::json!({"proposer": "alice"});
    let propose = serde_json::json!({"message": "a note from alice's sandbox"});
    let note = Step::Write {
        path: worktree.join("NOTES.md").display().to_string(),
        content: "alice was here, in the sandbox\n".into(),
    };
    Scenario {
        branches: vec![
            Branch {
                when: "task=endorse".into(),
                steps: vec![Step::Mcp { tool: "endorse".into(), arguments: endorse }],
                reply: "Endorsed alice's proposal.\nDONE".into(),
            },
            Branch {
                when: "task=propose".into(),
                steps: vec![note, Step::Mcp { tool: "propose".into(), arguments: propose }],
                reply: "Proposed.\nDONE".into(),
            },
        ],
    }
}

#[test]
fn codex_in_its_sandbox_proposes_and_endorses_through_the_mcp_tools_and_the_run_lands_once() {
    host("codex");
    // Three agents: the quorum is two endorsements, bob's and carol's, each its own codex session.
    let bench = Bench::with_agents(&["alice", "bob", "carol"], |worktree, _| sandboxed_scenario(worktree));
    let team = &bench.team;
    let before = team.main_tip();
    let env = codex_env(&bench.home(), &bench.server.url());
    let limit = Duration::from_secs(120);

    let run = bench.run(&codex_line(&bench.worktree, "alice"), &env, "task=propose\nPropose a note.", limit);
    assert_eq!(run.code, Some(0), "{}", bench.context(&run));
    let proposal = "refs/mas/runs/r1/proposals/alice";
    let results = || format!("tool results:\n{}\n{}", bench.tool_results(), bench.context(&run));
    assert!(team.git_ok(&["rev-parse", "--verify", proposal]), "no proposal\n{}", results());
    assert!(run.stderr.contains("sandbox: workspace-write"), "{}", run.stderr);
    assert_eq!(team.git(&["show", &format!("{proposal}:NOTES.md")]), "alice was here, in the sandbox");
    let tree = team.git(&["rev-parse", &format!("{proposal}^{{tree}}")]);

    for endorser in ["bob", "carol"] {
        let worktree = team.worktree(&bench.run, endorser);
        let mut env = env.clone();
        env.push(("GIT_MAS_AGENT", endorser.into()));
        let run = bench.run(&codex_line(&worktree, endorser), &env, "task=endorse\nEndorse alice's proposal.", limit);
        assert_eq!(run.code, Some(0), "{endorser}: {}", bench.context(&run));
        let event = format!("refs/mas/runs/r1/events/{endorser}");
        assert!(team.git_ok(&["rev-parse", "--verify", &event]), "no record of {endorser}'s endorsement");
    }

    // The model saw each tool's structured result: the command's own --json, and no refusal.
    let calls: Vec<ToolOut> = mcp_outputs(&bench)
        .into_iter()
        .map(|v| serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("not a tool's result ({e}): {v}")))
        .collect();
    let who: Vec<(&str, &str)> = calls.iter().map(|c| (c.tool.as_str(), c.agent.as_str())).collect();
    assert_eq!(who, [("propose", "alice"), ("endorse", "bob"), ("endorse", "carol")], "{}", bench.server.dump());
    assert!(calls.iter().all(|c| c.outcome == "ok" && c.exit_code == 0), "{calls:?}");
    let proposed: ProposedOut = serde_json::from_value(calls[0].result.clone()).unwrap();
    assert_eq!((proposed.agent.as_str(), proposed.tree.as_str()), ("alice", tree.as_str()));
    for (call, endorser) in calls[1..].iter().zip(["bob", "carol"]) {
        // The endorsement ran the run's check on that tree.
        let endorsed: EndorsedOut = serde_json::from_value(call.result.clone()).unwrap();
        let verdict = (endorsed.endorser.as_str(), endorsed.proposer.as_str(), endorsed.verdict.as_str());
        assert_eq!(verdict, (endorser, "alice", "passed"), "{endorsed:?}");
        assert_eq!((endorsed.tree.as_str(), endorsed.exit_status), (tree.as_str(), Some(0)), "{endorsed:?}");
        assert!(endorsed.command.as_deref().is_some_and(|c| c.contains("check.sh")), "{endorsed:?}");
    }
    let tally: TallyOut = team.json_as(&team.repo, "alice", &["tally", "r1"]);
    assert_eq!(tally.at_quorum, ["alice"], "{tally:?}");

    // The run lands once: one commit on main, alice's tree, endorsed by bob and carol.
    let landed: LandOut = team.json_as(&team.repo, "alice", &["land", "r1"]);
    assert_eq!(landed.status, "landed", "{landed:?}");
    assert_eq!(team.git(&["rev-list", "--count", &format!("{before}..main")]), "1");
    assert_eq!(team.git(&["rev-parse", "main^{tree}"]), tree);
    assert_eq!(team.git(&["diff", "--name-only", &before, "main"]), "NOTES.md");
    let trailers = team.git(&["log", "-1", "--format=%(trailers:only,unfold)", "main"]);
    assert!(trailers.contains("Mas-Endorsed-By: bob, carol"), "{trailers}");
}

//! codex (`codex exec`) against the scripted OpenAI Responses server.

use super::*;
use git_mas::hosts::Host;

/// Points codex at the scripted server: `$CODEX_HOME/config.toml` with a custom provider (the
/// Responses wire API), no retries, no update check.
pub fn codex_env(home: &Path, url: &str) -> Vec<(&'static str, String)> {
    let home = home.join(".codex");
    std::fs::create_dir_all(&home).unwrap();
    let config = format!(
        r#"model = "gpt-5.5"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "{}/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 30000

[features]
apply_patch_freeform = true
"#,
        url
    );
    std::fs::write(home.join("config.toml"), config).unwrap();
    vec![("CODEX_HOME", home.display().to_string()), ("MOCK_API_KEY", "dummy-key-for-the-scripted-server".into())]
}

#[test]
fn codex_runs_the_working_loop_through_its_own_tools() {
    host("codex");
    let bench = Bench::new(propose_scenario);
    bench.install_skills("codex");
    let run = bench.run(
        &Host::Codex.command_line(Some(&bench.check())),
        &codex_env(&bench.home(), &bench.server.url()),
        &big_prompt(),
        Duration::from_secs(90),
    );
    assert_proposed(&bench, &run);
    bench.assert_skills_advertised();
    assert_prompt_arrived(&bench);
    // Only the final message is on stdout.
    assert_eq!(run.stdout.trim(), "Proposed a note.\nDONE", "{}", run.stderr);
}

/// Why the preset gives codex full access: in its `workspace-write` sandbox `.git` is read-only,
/// so `git mas propose` cannot write `refs/mas`. Should a codex release lift that, this fails and
/// the preset can be narrowed.
#[test]
fn codex_workspace_write_sandbox_cannot_write_refs_mas() {
    host("codex");
    let bench = Bench::new(|_, _| {
        Scenario::single(vec![Step::Shell("git mas propose -m 'from the sandbox'".into())], "Tried.\nDONE")
    });
    std::fs::write(bench.worktree.join("NOTES.md"), "sandboxed\n").unwrap();
    let run = bench.run(
        "codex exec --sandbox workspace-write --ephemeral --color never -",
        &codex_env(&bench.home(), &bench.server.url()),
        "Propose.",
        Duration::from_secs(90),
    );
    assert_eq!(run.code, Some(0), "{}\n{}", run.stderr, bench.server.dump());
    assert!(
        !bench.team.git_ok(&["rev-parse", "--verify", "refs/mas/runs/r1/proposals/alice"]),
        "a sandboxed codex wrote refs/mas: the preset's full access may no longer be needed"
    );
    let results = bench.tool_results();
    assert!(results.contains("Read-only file system"), "{results}\n{}", run.stderr);
}

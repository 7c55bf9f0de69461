//! claude-code (`claude`) against the scripted Anthropic Messages server.

use super::*;
use git_mas::hosts::Host;

/// The environment that points claude at the scripted server, offline.
pub fn claude_env(home: &Path, url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", url.to_owned()),
        ("ANTHROPIC_API_KEY", "dummy-key-for-the-scripted-server".into()),
        ("CLAUDE_CONFIG_DIR", home.join(".claude").display().to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        ("DISABLE_TELEMETRY", "1".into()),
        ("DISABLE_ERROR_REPORTING", "1".into()),
    ]
}

#[test]
fn claude_code_runs_the_working_loop_through_its_own_tools() {
    host("claude");
    let bench = Bench::new(propose_scenario);
    bench.install_skills("claude-code");
    let run = bench.run(
        &Host::ClaudeCode.command_line(Some(&bench.check())),
        &claude_env(&bench.home(), &bench.server.url()),
        &big_prompt(),
        Duration::from_secs(90),
    );
    assert_proposed(&bench, &run);
    bench.assert_skills_advertised();
    assert_prompt_arrived(&bench);
}

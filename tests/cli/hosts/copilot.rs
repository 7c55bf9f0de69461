//! copilot (GitHub Copilot CLI) against the scripted OpenAI Chat Completions server, through
//! its documented bring-your-own-model configuration, offline.

use super::*;
use git_mas::hosts::Host;

/// Points copilot at the scripted server: `COPILOT_PROVIDER_BASE_URL` (type `openai`, the Chat
/// Completions API), `COPILOT_MODEL`, and `COPILOT_OFFLINE` so that it never contacts GitHub (no
/// GitHub login is needed with a provider of one's own).
pub fn copilot_env(home: &Path, url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("COPILOT_PROVIDER_BASE_URL", format!("{url}/v1")),
        ("COPILOT_PROVIDER_TYPE", "openai".into()),
        ("COPILOT_PROVIDER_API_KEY", "dummy-key-for-the-scripted-server".into()),
        ("COPILOT_MODEL", "mock-model".into()),
        ("COPILOT_OFFLINE", "true".into()),
        ("COPILOT_HOME", home.join(".copilot").display().to_string()),
    ]
}

#[test]
fn copilot_runs_the_working_loop_through_its_own_tools() {
    host("copilot");
    let bench = Bench::new(propose_scenario);
    bench.install_skills("copilot");
    let run = bench.run(
        &Host::Copilot.command_line(Some(&bench.check())),
        &copilot_env(&bench.home(), &bench.server.url()),
        &big_prompt(),
        Duration::from_secs(90),
    );
    assert_proposed(&bench, &run);
    bench.assert_skills_advertised();
    assert_prompt_arrived(&bench);
}

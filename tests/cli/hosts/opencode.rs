//! opencode (`opencode run`) against the scripted OpenAI Chat Completions server, through a
//! custom OpenAI-compatible provider.

use super::*;
use git_mas::hosts::Host;

/// Points opencode at the scripted server: a config file (`OPENCODE_CONFIG`) with an
/// `@ai-sdk/openai-compatible` provider whose `baseURL` is the server, its model the default; no
/// update check, no model catalog fetch, no sharing.
pub fn opencode_env(home: &Path, url: &str) -> Vec<(&'static str, String)> {
    let config = home.join("opencode.json");
    let text = serde_json::json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "mock": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted model",
                "options": {"baseURL": format!("{url}/v1"), "apiKey": "dummy-key-for-the-scripted-server"},
                "models": {"mock-model": {"name": "Scripted model", "tool_call": true}}
            }
        },
        "model": "mock/mock-model",
        "small_model": "mock/mock-model",
        "autoupdate": false,
        "share": "disabled"
    });
    std::fs::write(&config, text.to_string()).unwrap();
    vec![
        ("OPENCODE_CONFIG", config.display().to_string()),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
        ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
        ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".into()),
    ]
}

#[test]
fn opencode_runs_the_working_loop_through_its_own_tools() {
    host("opencode");
    let bench = Bench::new(propose_scenario);
    bench.install_skills("opencode");
    let run = bench.run(
        &Host::OpenCode.command_line(Some(&bench.check())),
        &opencode_env(&bench.home(), &bench.server.url()),
        &big_prompt(),
        Duration::from_secs(90),
    );
    assert_proposed(&bench, &run);
    bench.assert_skills_advertised();
    assert_prompt_arrived(&bench);
}

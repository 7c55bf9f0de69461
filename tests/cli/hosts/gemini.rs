//! gemini (`@google/gemini-cli`) against the scripted Gemini API server.

use super::*;
use crate::json::hooks::HostHooksOut;

/// Points gemini at the scripted server: `GOOGLE_GEMINI_BASE_URL` and a dummy `GEMINI_API_KEY`,
/// which gemini uses only with `security.auth.selectedType: "gemini-api-key"` in the user's
/// `~/.gemini/settings.json` (without it: "Invalid auth method selected", exit 41). The same file
/// turns off what would leave loopback: usage statistics (without
/// `privacy.usageStatisticsEnabled: false` gemini 0.61.0 resolves its statistics host through
/// DNS), telemetry and the update check.
pub fn gemini_env(home: &Path, url: &str) -> Vec<(&'static str, String)> {
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = serde_json::json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": true, "enableAutoUpdateNotification": false},
        "telemetry": {"enabled": false},
        "privacy": {"usageStatisticsEnabled": false}
    });
    std::fs::write(dir.join("settings.json"), serde_json::to_string_pretty(&settings).unwrap()).unwrap();
    vec![("GOOGLE_GEMINI_BASE_URL", url.to_owned()), ("GEMINI_API_KEY", "dummy-key-for-the-scripted-server".into())]
}

/// The file bob holds.
const HELD: &str = "src/money.rs";

/// alice holds src/lib.rs and bob src/money.rs on a published frame, the gate enforces, the
/// gemini hook is installed in the main checkout (`--trust` when `trust`), and the scripted model
/// overwrites src/money.rs, then replaces a line of it.
fn trust_bench(trust: bool) -> Bench {
    host("gemini");
    let bench = Bench::new(|_, _| {
        Scenario::single(
            vec![
                Step::Write { path: HELD.into(), content: "// alice was here\n".into() },
                Step::Edit {
                    path: HELD.into(),
                    old: "pub struct Money(i64);".into(),
                    new: "pub struct Money(i64); // alice".into(),
                },
            ],
            "Edited.\nDONE",
        )
    });
    let team = &bench.team;
    team.ok(&team.repo, "alice", &["snapshot", "--publish"]);
    team.ok(&team.repo, "alice", &["focus", "publish", "--targets", "src/lib.rs"]);
    team.ok(&team.repo, "bob", &["focus", "publish", "--targets", HELD]);
    let mut args = vec!["hooks", "install", "--host", "gemini"];
    if trust {
        args.push("--trust");
    }
    team.here(&team.repo, &args);
    team.git(&["config", "mas.gate", "enforce"]);
    bench
}

fn status(bench: &Bench) -> HostHooksOut {
    bench.team.here_as(&bench.team.repo, &["hooks", "status", "--host", "gemini"])
}

/// Runs `gemini FLAGS` in the main checkout, the prompt on stdin.
fn run_gemini(bench: &Bench, flags: &str) -> HostRun {
    let line = format!("cd '{}' && gemini {flags}", bench.team.repo.display());
    let env = gemini_env(&bench.home(), &bench.server.url());
    bench.run(&line, &env, "Edit src/money.rs.", Duration::from_secs(90))
}

/// Untrusted, gemini 0.61.0 will not run headless at all; with `--skip-trust` it runs, but reads
/// none of the project's settings (hooks, MCP servers) and writes the held file. Status says the
/// hook is not loaded, and how to trust the folder.
#[test]
fn gemini_ignores_an_untrusted_folders_hook_and_status_says_it_is_not_loaded() {
    let bench = trust_bench(false);
    let effect = status(&bench).hosts[0].effect.clone().expect("gemini's trust is read");
    assert!(!effect.loaded, "{effect:?}");
    assert_eq!(effect.reason, "folder not trusted by gemini");
    let remedy = effect.remedy.unwrap();
    assert!(remedy.contains("trustedFolders.json") && remedy.contains("GEMINI_CLI_TRUST_WORKSPACE=true"), "{remedy}");

    let before = std::fs::read(bench.team.repo.join(HELD)).unwrap();
    let run = run_gemini(&bench, "--yolo");
    assert_eq!(run.code, Some(55), "{}", bench.context(&run));
    assert!(run.stderr.contains("not running in a trusted directory"), "{}", bench.context(&run));
    assert!(bench.server.log().is_empty(), "{}", bench.context(&run));

    let run = run_gemini(&bench, "--yolo --skip-trust");
    assert_eq!(run.code, Some(0), "{}", bench.context(&run));
    let after = std::fs::read(bench.team.repo.join(HELD)).unwrap();
    assert_ne!(after, before, "gemini ran the untrusted folder's hook after all:\n{}", bench.context(&run));
    assert!(!bench.tool_results().contains("held by bob"), "{}", bench.context(&run));
}

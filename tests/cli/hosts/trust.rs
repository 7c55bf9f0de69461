//! A host that ignores the hook it was given: codex 0.171.0 loads a project's `.codex/hooks.json`
//! only in a project trusted in its `config.toml`, and runs a hook only once that hook is trusted
//! there. `hooks status` reads that trust and says the hook is not loaded, and `hooks install
//! --host codex --trust` writes it, after which a plain `codex exec` is refused bob's file.

use super::codex::codex_env;
use super::*;
use crate::json::hooks::HostHooksOut;

/// The file bob holds.
const HELD: &str = "src/money.rs";

/// alice holds src/lib.rs and bob src/money.rs on a published frame, the gate enforces, the codex hook is installed in
/// the main checkout (`--trust` when `trust`), and the scripted model patches src/money.rs.
fn bench(trust: bool) -> Bench {
    host("codex");
    let bench = Bench::new(|_, _| {
        Scenario::single(
            vec![Step::Edit {
                path: HELD.into(),
                old: "pub struct Money(i64);".into(),
                new: "pub struct Money(i64); // alice".into(),
            }],
            "Edited.\nDONE",
        )
    });
    let team = &bench.team;
    team.quiet_ok(&team.repo, "alice", &["snapshot", "--publish"]);
    team.quiet_ok(&team.repo, "alice", &["focus", "publish", "--targets", "src/lib.rs"]);
    team.quiet_ok(&team.repo, "bob", &["focus", "publish", "--targets", HELD]);
    // The scripted model's provider first: trust is written into the same config.toml.
    codex_env(&bench.home(), &bench.server.url());
    let mut args = vec!["hooks", "install", "--host", "codex"];
    if trust {
        args.push("--trust");
    }
    team.here_quiet_ok(&team.repo, &args);
    team.git_quiet_ok(&["config", "mas.gate", "enforce"]);
    bench
}

fn status(bench: &Bench) -> HostHooksOut {
    bench.team.here_as(&bench.team.repo, &["hooks", "status", "--host", "codex"])
}

/// Runs a plain `codex exec` in the main checkout.
fn run_codex(bench: &Bench) -> HostRun {
    let line = format!(
        "cd '{}' && codex exec --sandbox danger-full-access --ephemeral --color never -",
        bench.team.repo.display()
    );
    // codex_env's variables, without writing its config.toml again (that would drop the trust).
    let env = [
        ("CODEX_HOME", bench.home().join(".codex").display().to_string()),
        ("MOCK_API_KEY", "dummy-key-for-the-scripted-server".to_string()),
    ];
    bench.run(&line, &env, "Edit src/money.rs.", Duration::from_secs(90))
}

/// The finding: installed as the README said, the hook sat in `.codex/hooks.json` while codex, not
/// trusting the project, never ran it and wrote the held file. Status must say so.
#[test]
fn codex_ignores_an_untrusted_projects_hook_and_status_says_it_is_not_loaded() {
    let bench = bench(false);
    let st = status(&bench);
    let effect = st.hosts[0].effect.clone().expect("codex's trust is read");
    assert!(!effect.loaded, "{effect:?}");
    assert_eq!(effect.reason, "project not trusted by codex");
    let remedy = effect.remedy.unwrap();
    assert!(
        remedy.contains("git mas hooks install --host codex --trust") && remedy.contains("config.toml"),
        "{remedy}"
    );
    let text = bench.team.here(&bench.team.repo, &["hooks", "status", "--host", "codex"]);
    assert!(text.contains("installed, not loaded: project not trusted by codex"), "{text}");

    let before = std::fs::read(bench.team.repo.join(HELD)).unwrap();
    let run = run_codex(&bench);
    let after = std::fs::read(bench.team.repo.join(HELD)).unwrap();
    assert_ne!(after, before, "codex ran the untrusted project's hook after all:\n{}", bench.context(&run));
    assert!(!bench.tool_results().contains("held by bob"), "{}", bench.context(&run));
}

#[test]
fn codex_with_the_hook_trusted_by_install_is_refused_a_held_file() {
    let bench = bench(true);
    let config = std::fs::read_to_string(bench.home().join(".codex/config.toml")).unwrap();
    assert!(config.contains("[model_providers.mock]") && config.contains("trust_level = \"trusted\""), "{config}");
    let effect = status(&bench).hosts[0].effect.clone().expect("codex's trust is read");
    assert!(effect.loaded && effect.remedy.is_none(), "{effect:?}");
    assert_eq!(effect.reason, "project and hooks trusted by codex");
    // The human view says it is loaded.
    let said = bench.team.here(&bench.team.repo, &["hooks", "status", "--host", "codex"]);
    assert!(said.contains("installed, loaded: project and hooks trusted by codex"), "{said}");

    let before = std::fs::read(bench.team.repo.join(HELD)).unwrap();
    let run = run_codex(&bench);
    assert_eq!(std::fs::read(bench.team.repo.join(HELD)).unwrap(), before, "{}", bench.context(&run));
    let results = bench.tool_results();
    assert!(
        results.contains(&format!("{HELD} is held by bob")),
        "the refusal did not reach the model:\n{results}\n{}",
        bench.context(&run)
    );
}

//! gemini (`@google/gemini-cli`) against the scripted Gemini API server: the preset's working
//! loop with the git-mas skills it reads, the folder trust its hooks need (`hooks install --trust`),
//! and the git-mas MCP server it starts, signing as the agent.

use super::*;
use crate::json::hooks::HostHooksOut;
use git_mas::hosts::Host;
use git_mas::peers::Wiring;

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
    team.quiet_ok(&team.repo, "alice", &["snapshot", "--publish"]);
    team.quiet_ok(&team.repo, "alice", &["focus", "publish", "--targets", "src/lib.rs"]);
    team.quiet_ok(&team.repo, "bob", &["focus", "publish", "--targets", HELD]);
    let mut args = vec!["hooks", "install", "--host", "gemini"];
    if trust {
        args.push("--trust");
    }
    team.here_quiet_ok(&team.repo, &args);
    team.git_quiet_ok(&["config", "mas.gate", "enforce"]);
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

#[test]
fn gemini_with_the_folder_trusted_by_install_is_refused_a_held_file() {
    let bench = trust_bench(true);
    let folders = std::fs::read_to_string(bench.home().join(".gemini/trustedFolders.json")).unwrap();
    let repo = std::fs::canonicalize(&bench.team.repo).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&folders).unwrap();
    assert_eq!(parsed[repo.display().to_string()], "TRUST_FOLDER", "{folders}");
    let effect = status(&bench).hosts[0].effect.clone().expect("gemini's trust is read");
    assert!(effect.loaded && effect.remedy.is_none(), "{effect:?}");
    assert_eq!(effect.reason, "folder trusted by gemini");

    let before = std::fs::read(bench.team.repo.join(HELD)).unwrap();
    let run = run_gemini(&bench, "--yolo");
    assert_eq!(run.code, Some(0), "{}", bench.context(&run));
    assert_eq!(std::fs::read(bench.team.repo.join(HELD)).unwrap(), before, "{}", bench.context(&run));
    let results = bench.tool_results();
    assert!(
        results.matches(&format!("{HELD} is held by bob")).count() >= 2,
        "the refusals of the write and the replace did not reach the model:\n{results}\n{}",
        bench.context(&run)
    );
}

/// Asserts that gemini offered the model the git-mas skill by name through its `activate_skill`
/// tool, as well as in the prompt ([`Bench::assert_skills_advertised`]).
fn assert_skill_activatable(bench: &Bench) {
    bench.assert_skills_advertised();
    let turns = bench.server.turns();
    let activate = turns.first().and_then(|b| server::tools(b).into_iter().find(|t| t.name == "activate_skill"));
    let names = activate.map(|t| t.schema["properties"]["name"]["enum"].clone()).unwrap_or_default();
    assert!(
        names.as_array().is_some_and(|n| n.contains(&serde_json::json!("git-mas"))),
        "activate_skill does not offer git-mas: {names}"
    );
}

/// The preset's line, the prompt on stdin: a 160 KiB prompt arrives whole, the project's skills
/// (`skills install --host gemini`, `.agents/skills`) are offered although `--skip-trust` leaves
/// the project's settings unread, and the working loop proposes.
#[test]
fn gemini_runs_the_working_loop_through_its_own_tools() {
    host("gemini");
    let bench = Bench::new(propose_scenario);
    bench.install_skills("gemini");
    assert!(bench.worktree.join(".agents/skills/git-mas/SKILL.md").is_file());
    let run = bench.run(
        &Host::Gemini.command_line(Some(&bench.check())),
        &gemini_env(&bench.home(), &bench.server.url()),
        &big_prompt(),
        Duration::from_secs(90),
    );
    assert_proposed(&bench, &run);
    assert_skill_activatable(&bench);
    assert_prompt_arrived(&bench);
    // Only the reply is on stdout.
    assert_eq!(run.stdout.trim(), "Proposed a note.\nDONE", "{}", run.stderr);
    // Every request went to the Gemini API of the scripted server.
    let paths: Vec<String> = bench.server.log().iter().map(|r| r.path.clone()).collect();
    assert!(paths.iter().all(|p| p.starts_with("/v1beta/models/")), "{paths:?}");
    assert!(paths.iter().any(|p| p.ends_with(":streamGenerateContent?alt=sse")), "{paths:?}");
}

/// `skills install --host gemini --global` writes `~/.gemini/skills`, which gemini reads too.
#[test]
fn gemini_reads_the_skills_installed_for_the_user() {
    host("gemini");
    let bench = Bench::new(|_, _| Scenario::single(vec![], "Nothing to do.\nDONE"));
    let out = bench.team.here(&bench.worktree, &["skills", "install", "--host", "gemini", "--global"]);
    assert!(bench.home().join(".gemini/skills/git-mas/SKILL.md").is_file(), "{out}");
    let run = bench.run(
        &Host::Gemini.command_line(None),
        &gemini_env(&bench.home(), &bench.server.url()),
        "Say DONE.",
        Duration::from_secs(90),
    );
    assert_eq!(run.code, Some(0), "{}", bench.context(&run));
    assert_skill_activatable(&bench);
}

/// alice's worktree with the git-mas server registered for gemini as alice (`mcp install --host
/// gemini --agent alice`, as coordinate does), a frame published, and the scripted model calling
/// the server's `whoami` and `focus_publish`.
fn mcp_bench() -> Bench {
    host("gemini");
    let bench = Bench::new(|_, _| {
        Scenario::single(
            vec![
                Step::Mcp { tool: "whoami".into(), arguments: serde_json::json!({}) },
                Step::Mcp { tool: "focus_publish".into(), arguments: serde_json::json!({"targets": ["src/lib.rs"]}) },
            ],
            "Published.\nDONE",
        )
    });
    let team = &bench.team;
    team.quiet_ok(&team.repo, "alice", &["snapshot", "--publish"]);
    team.quiet_ok(&bench.worktree, "alice", &["mcp", "install", "--host", "gemini", "--agent", "alice"]);
    bench
}

/// Gemini starts a server with its own environment minus every variable whose name holds KEY,
/// so `GIT_MAS_KEY_DIR` (the test's key directory, not the default one) reaches the server only
/// through the registration's `env`; signed with it, alice's focus is published.
#[test]
fn gemini_starts_the_worktree_server_which_signs_as_the_agent() {
    let bench = mcp_bench();
    let team = &bench.team;
    let settings = std::fs::read_to_string(bench.worktree.join(".gemini/settings.json")).unwrap();
    assert!(settings.contains(r#""GIT_MAS_KEY_DIR": "${GIT_MAS_KEY_DIR:-}""#), "{settings}");
    let wiring = Wiring { edit_gate: false, mcp: true };
    let line = Host::Gemini.session_command_line(Some(&bench.check()), wiring, "alice");
    let run = bench.run(&line, &gemini_env(&bench.home(), &bench.server.url()), "Publish.", Duration::from_secs(90));
    let context = format!("{line}\n{}\nresults:\n{}", bench.context(&run), bench.tool_results());
    assert_eq!(run.code, Some(0), "{context}");
    let advertised: Vec<String> = bench.server.turns().iter().flat_map(server::tools).map(|t| t.name).collect();
    for tool in ["gate", "propose", "endorse", "focus_publish", "whoami"] {
        let name = format!("mcp_git-mas_{tool}");
        assert!(advertised.contains(&name), "{name} not advertised: {advertised:?}");
    }
    let results = bench.tool_results();
    assert!(results.contains("whoami: ok: alice") && results.contains("can sign: true"), "{context}");
    assert!(!results.contains("no private key"), "{context}");
    let status = team.json(&bench.worktree, "alice", &["focus", "status"]);
    assert_eq!(status["state"], "live", "{status}\n{context}");
    assert_eq!(status["focus"]["focus"]["targets"], serde_json::json!(["src/lib.rs"]), "{status}");
}

/// Gemini adds a boolean `wait_for_previous` to every tool's schema and passes it on to the
/// server when its model sets it, as gemini's models do: the server ignores it and answers.
#[test]
fn gemini_s_wait_for_previous_argument_is_ignored_by_the_server() {
    host("gemini");
    let bench = Bench::new(|_, _| {
        let wait = |mut v: serde_json::Value| {
            v["wait_for_previous"] = true.into();
            v
        };
        Scenario::single(
            vec![
                Step::Mcp { tool: "whoami".into(), arguments: wait(serde_json::json!({})) },
                Step::Mcp {
                    tool: "focus_publish".into(),
                    arguments: wait(serde_json::json!({"targets": ["src/lib.rs"]})),
                },
            ],
            "Published.\nDONE",
        )
    });
    bench.team.quiet_ok(&bench.team.repo, "alice", &["snapshot", "--publish"]);
    bench.team.quiet_ok(&bench.worktree, "alice", &["mcp", "install", "--host", "gemini", "--agent", "alice"]);
    let wiring = Wiring { edit_gate: false, mcp: true };
    let line = Host::Gemini.session_command_line(Some(&bench.check()), wiring, "alice");
    let run = bench.run(&line, &gemini_env(&bench.home(), &bench.server.url()), "Publish.", Duration::from_secs(90));
    let results = bench.tool_results();
    assert!(!results.contains("unknown field"), "{results}\n{}", bench.context(&run));
    assert!(results.contains("can sign: true"), "{results}");
    let status = bench.team.json(&bench.worktree, "alice", &["focus", "status"]);
    assert_eq!(status["state"], "live", "{status}");
}

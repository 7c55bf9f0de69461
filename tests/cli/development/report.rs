//! The convergence report of real runs: every termination reason, one per terminal report, and
//! never a quality signal that was not measured.

use super::land::{CHECK, three_proposals};
use super::*;
use crate::json::report::ReportEventOut;

fn report(team: &Team, run: &str) -> Value {
    team.json(&team.repo, "alice", &["report", run])
}

/// The report stored under refs/mas/runs/<run>/report, newest.
fn stored(team: &Team, run: &str) -> Value {
    let (_, log) = log_chains(&team.env, &team.repo, &format!("refs/mas/runs/{run}/report"));
    log[0].records[0].payload.clone().expect("the stored report")
}

/// A run in which alice's proposal reaches quorum; `endorse` adds flags to both endorsements.
fn endorsed_run(team: &Team, id: &str, start: &[&str], endorse: &[&str]) -> PathBuf {
    let mut flags = vec!["--id", id, "--quorum", "2"];
    flags.extend_from_slice(start);
    assert_eq!(team.start("alice", &flags), id);
    let [a, b, c] = ["alice", "bob", "carol"].map(|n| team.worktree(id, n));
    std::fs::write(a.join("status.txt"), "ok\n").unwrap();
    team.here_quiet_ok(&a, &["propose"]);
    for wt in [&b, &c] {
        let mut args = vec!["endorse", "alice"];
        args.extend_from_slice(endorse);
        team.here_quiet_ok(wt, &args);
    }
    b
}

#[test]
fn termination_reasons_arise_from_real_runs_and_each_terminal_report_has_exactly_one() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let mut reports: Vec<(String, Value)> = Vec::new();

    // quality_reached: landed, every check of the landed content passed.
    let b = endorsed_run(&team, "quality", &["--check", CHECK], &[]);
    team.here_quiet_ok(&b, &["land"]);
    reports.push(("quality_reached".into(), report(&team, "quality")));

    // tasks_completed (converged): landed on review alone — no check ever ran, so quality is
    // unknown, and the report does not pretend otherwise.
    let b = endorsed_run(&team, "reviewed", &[], &["--no-check"]);
    team.here_quiet_ok(&b, &["land"]);
    let r = report(&team, "reviewed");
    assert_eq!(r["quality_state"]["pass_rate"], Value::Null);
    assert_eq!(r["quality_state"]["reached"], Value::Null);
    assert_eq!(r["quality_state"]["total"], 0);
    let text = team.ok(&team.repo, "alice", &["report", "reviewed"]);
    assert!(text.contains("quality:     unknown — no check ran"), "{text}");
    reports.push(("tasks_completed".into(), r));

    // max_rounds_reached: landed in the last allowed round.
    let b = endorsed_run(&team, "rounds", &["--check", CHECK, "--max-rounds", "1"], &[]);
    team.here_quiet_ok(&b, &["land"]);
    reports.push(("max_rounds_reached".into(), report(&team, "rounds")));

    // tasks_completed (failed): aborted, no other signal.
    endorsed_run(&team, "abandoned", &["--check", CHECK], &[]);
    let out: crate::json::run::AbortedOut =
        team.json_as(&team.repo, "bob", &["run", "abort", "abandoned", "--reason", "goal withdrawn"]);
    assert_eq!(out.report.status.name(), "failed");
    assert_eq!(out.aborted.reason, "goal withdrawn");
    reports.push(("tasks_completed".into(), report(&team, "abandoned")));

    // risk_blocked: aborted because of a risk.
    endorsed_run(&team, "risky", &["--check", CHECK], &[]);
    team.quiet_ok(&team.repo, "bob", &["run", "abort", "risky", "--reason", "licence problem", "--risk"]);
    let r = report(&team, "risky");
    assert_eq!(r["unresolved_risks"][0], "aborted as a risk: licence problem");
    reports.push(("risk_blocked".into(), r));

    let mut seen = std::collections::BTreeSet::new();
    for (want, r) in &reports {
        assert_eq!(r["termination_reason"], want.as_str(), "{r:#}");
        assert_ne!(r["status"], "running");
        assert!(r["termination_reason"].is_string(), "exactly one reason: {r:#}");
        if r["quality_state"]["total"] == 0 {
            assert_ne!(r["termination_reason"], "quality_reached");
        }
        // The stored report is the same report.
        let run = r["run"].as_str().unwrap();
        assert_eq!(stored(&team, run)["termination_reason"], r["termination_reason"]);
        seen.insert(want.clone());
    }
    // budget_exhausted comes from its own test below (it waits for the budget to run out).
    assert_eq!(seen.len(), 4, "quality, tasks, rounds, risk: {seen:?}");
    assert_eq!(reports[0].1["status"], "converged");
    assert_eq!(reports[3].1["status"], "failed");
    assert_eq!(reports[4].1["status"], "blocked");
}

#[test]
fn landing_after_the_budget_ran_out_reports_budget_exhausted() {
    let team = Team::new(&["alice", "bob", "carol"]);
    // budget_exhausted: landed after the budget ran out.
    let b = endorsed_run(&team, "budget", &["--check", CHECK, "--budget", "3s"], &[]);
    let started =
        team.json_as::<git_mas::devrun::RunMeta>(&team.repo, "alice", &["run", "show", "budget"]).def.created_at_ms;
    let now = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    std::thread::sleep(std::time::Duration::from_millis((started + 3100).saturating_sub(now())));
    team.here_quiet_ok(&b, &["land"]);
    let r = report(&team, "budget");
    assert_eq!(r["budget_state"]["exhausted"], true);
    assert_eq!((r["status"].as_str(), r["termination_reason"].as_str()), (Some("converged"), Some("budget_exhausted")));
    assert_eq!(r["quality_state"]["reached"], true, "quality was reached too, but the budget comes first");
    assert_eq!(stored(&team, "budget")["termination_reason"], "budget_exhausted");
}

#[test]
fn a_running_run_has_no_reason_and_events_stream_as_json_lines() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let (run, wts) = three_proposals(&team, &[]);
    // carol's proposal fails bob's check: a test_failure, open while the run runs.
    std::fs::write(wts[2].join("status.txt"), "broken\n").unwrap();
    team.here_quiet_ok(&wts[2], &["propose"]);
    assert_eq!(team.env.mas(&wts[1], &["endorse", "carol"]).status.code(), Some(9));
    let r = report(&team, &run);
    assert_eq!(r["status"], "running");
    assert_eq!(r["termination_reason"], Value::Null);
    assert_eq!(r["conflicts"][0]["type"], "test_failure");
    assert_eq!(r["conflicts"][0]["resolved"], false);
    // Two of three proposals are in no conflict.
    assert!((r["consensus_score"].as_f64().unwrap() - 200.0 / 3.0).abs() < 1e-9);
    // Once alice lands, carol's failure is resolved by selection.
    team.here_quiet_ok(&wts[0], &["land"]);
    let out = team.ok(&team.repo, "alice", &["report", &run, "--events"]);
    let lines: Vec<ReportEventOut> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let types: Vec<&str> = lines.iter().map(|l| l.kind.as_str()).collect();
    assert_eq!(
        types,
        ["convergence.started", "conflict.detected", "conflict.resolved", "consensus.updated", "convergence.reached"]
    );
    assert!(lines[2].fields["resolution"].as_str().unwrap().starts_with("not landed"));
    assert_eq!(lines[4].fields["termination_reason"], "quality_reached");
}

/// The tiny crate the cargo test scenario coordinates on: one function, one test.
fn tiny_crate(env: &TestEnv) -> PathBuf {
    let dir = env.root().join("tiny");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(dir.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    panic!(\"add {a} {b}: not written\")\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 3), 5);\n    }\n}\n",
    )
    .unwrap();
    env.git_quiet_ok(&dir, &["init", "--quiet", "-b", "main"]);
    env.git_quiet_ok(&dir, &["add", "."]);
    env.git_quiet_ok(&dir, &["commit", "--quiet", "-m", "tiny crate"]);
    dir
}

#[test]
fn cargo_test_endorses_the_right_implementation_of_a_tiny_crate() {
    let env = TestEnv::new();
    let repo = tiny_crate(&env);
    env.agents(&repo, &["alice", "bob", "carol"]);
    let team = Team { env, repo };
    let check = "cargo test --quiet --offline";
    let run = team.start("alice", &["--id", "tiny", "--check", check]);
    let [a, b, c] = ["alice", "bob", "carol"].map(|n| team.worktree(&run, n));
    for (wt, body) in [(&a, "a + b"), (&b, "a - b"), (&c, "b + a")] {
        let lib = std::fs::read_to_string(wt.join("src/lib.rs")).unwrap();
        std::fs::write(wt.join("src/lib.rs"), lib.replace("panic!(\"add {a} {b}: not written\")", body)).unwrap();
        team.here_quiet_ok(wt, &["propose"]);
    }
    // The check runs cargo.
    let endorse = |wt: &Path, whom: &str| {
        with_toolchain(&mut team.env.mas_cmd(wt)).args(["endorse", whom, "--json"]).output().unwrap()
    };
    // bob's subtraction fails the real test suite: a failed endorsement.
    let out = endorse(&a, "bob");
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["verdict"], "failed");
    assert_eq!(json["command"], check);
    for (wt, whom) in [(&b, "alice"), (&c, "alice")] {
        let out = endorse(wt, whom);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    team.here_quiet_ok(&b, &["land"]);
    assert!(team.git(&["show", "main:src/lib.rs"]).contains("a + b"));
    let r = report(&team, &run);
    assert_eq!(r["termination_reason"], "quality_reached");
    assert_eq!(r["conflicts"][0]["type"], "test_failure");
    assert_eq!(r["conflicts"][0]["resolved"], true);
}

#[test]
fn a_check_killed_with_status_137_is_reported_killed_in_every_form() {
    let team = Team::new(&["alice", "bob", "carol"]);
    // The check's command is killed by SIGKILL, as the out-of-memory killer does: its shell
    // reports 137.
    let killed = "sh -c 'kill -9 $$'";
    assert_eq!(team.start("alice", &["--id", "oom", "--quorum", "2", "--check", killed]), "oom");
    let [a, b] = ["alice", "bob"].map(|n| team.worktree("oom", n));
    std::fs::write(a.join("status.txt"), "ok\n").unwrap();
    team.here_quiet_ok(&a, &["propose"]);
    let out = team.env.mas(&b, &["endorse", "alice"]);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let said = "killed (SIGKILL: out of memory or killed; exit 137)";
    assert!(stderr(&out).contains(&format!("was {said}")), "{}", stderr(&out));

    let json = report(&team, "oom");
    let detail = json["conflicts"][0]["detail"].as_str().unwrap_or_default();
    assert!(detail.ends_with(&format!("was {said}")), "{json:#}");
    let text = team.ok(&team.repo, "alice", &["report", "oom"]);
    assert!(text.contains(&format!("of alice's proposal was {said}")) && !text.contains("exited 137"), "{text}");
    let tally = team.ok(&team.repo, "alice", &["tally", "oom"]);
    assert!(tally.contains(&format!("FAILED — {said}")), "{tally}");
    let html = team.ok(&team.repo, "alice", &["report", "oom", "--html", "-"]);
    assert!(html.contains(&format!("was {said} in")) && !html.contains("(exit 137)"), "{html}");
}

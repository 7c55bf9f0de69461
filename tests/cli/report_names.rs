//! One name for one thing across every form: the quorum a team was asked for is the quorum every
//! line shows (the preflight refuses one the team can never reach), and one ending of a run has
//! one name in `coordinate`'s halt line, `git mas report` and the run listings.

use crate::common::*;
use crate::coordinate_any::{coordinate, fixer, missing, project};
use crate::development::Team;

#[test]
fn quorum_5_with_3_agents_is_refused_by_the_preflight_saying_5() {
    let env = TestEnv::new();
    let repo = project(&env, &["alice", "bob", "carol"], Some("true"));
    let agents = vec![fixer(&env, "alice"), fixer(&env, "bob"), fixer(&env, "carol")];
    for extra in [&[][..], &["--aggregate"][..]] {
        let args = [extra, &["--quorum", "5", "--dry-run"][..]].concat();
        let (out, _) = coordinate(&env, &repo, &agents, &args);
        assert_eq!(out.code, Some(1), "{}", out.stderr);
        let refused = missing(out.events("preflight")[0]);
        assert_eq!(
            refused,
            [(
                "quorum".to_string(),
                "--quorum 5 can never be reached: 3 agent(s) can give a proposal at most 2 endorsement(s) \
                 (self-endorsement off)"
                    .to_string(),
                "--quorum 2".to_string()
            )],
            "{extra:?}"
        );
    }
    // With self-endorsement on, 3 agents give at most 3: 5 is still never reached.
    env.git_quiet_ok(&repo, &["config", "mas.allowSelfEndorse", "true"]);
    let (out, _) = coordinate(&env, &repo, &agents, &["--quorum", "5", "--dry-run"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(missing(out.events("preflight")[0])[0].2, "--quorum 3");
}

#[test]
fn a_run_asked_for_quorum_5_with_3_agents_says_5_everywhere_it_shows_its_quorum() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let out = team.as_agent(&team.repo, "alice", &["run", "start", "--goal", "g", "--id", "q5", "--quorum", "5"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let asked = "quorum 5 (capped at 3, the roster's size: never more endorsements than agents)";
    assert!(stderr(&out).contains(asked), "{}", stderr(&out));
    let show = team.ok(&team.repo, "alice", &["run", "show", "q5"]);
    assert!(show.contains("quorum    5 (capped at 3"), "{show}");
    let tally = team.ok(&team.repo, "alice", &["tally", "q5"]);
    assert!(tally.contains(&format!("{asked} of 3")), "{tally}");
    let status = team.ok(&team.repo, "alice", &["status"]);
    assert!(status.contains(&format!("{asked},")), "{status}");
    let json = team.json(&team.repo, "alice", &["status"]);
    let run = json["runs"].as_array().unwrap().iter().find(|r| r["id"] == "q5").cloned().unwrap_or_default();
    assert_eq!((&run["quorum"], &run["requested_quorum"]), (&3.into(), &5.into()), "{json:#}");
    let html = team.ok(&team.repo, "alice", &["report", "q5", "--html", "-"]);
    assert!(html.contains("5 valid endorsements asked, capped at 3"), "{html}");
}

#[test]
fn a_run_whose_rounds_ran_out_with_a_failing_check_has_one_name_in_every_form() {
    let env = TestEnv::new();
    // Every check fails: each proposal is judged against (an unresolved test_failure), and the
    // one round runs out unlanded.
    let repo = project(&env, &["alice", "bob"], Some("false"));
    let agents = [fixer(&env, "alice"), fixer(&env, "bob")];
    let out = env
        .mas_cmd(&repo)
        .args(["--agent", "lead", "coordinate", "--goal", "make the test suite pass", "--wait", "2s"])
        .args(["--agents", &agents.join(","), "--quorum", "1", "--max-rounds", "1"])
        .output()
        .unwrap();
    let (said, summary) = (stderr(&out), stdout(&out));
    assert_eq!(out.status.code(), Some(8), "{said}\n{summary}");
    let name = "max-rounds-reached";
    assert!(said.contains(&format!("halt {name}: ")), "{said}");
    let headline = summary.lines().next().unwrap_or_default();
    assert!(headline.ends_with(&format!(": {name} (failed, max_rounds_reached)")), "{summary}");
    let run = headline.trim_start_matches("run ").split(':').next().unwrap().to_string();

    // The report, read again: the same name and the same reason; the failing checks are risks.
    let json: serde_json::Value = serde_json::from_str(&env.mas_ok(&repo, &["report", &run, "--json"])).unwrap();
    assert_eq!(
        (&json["ending"], &json["status"], &json["termination_reason"]),
        (&name.into(), &"failed".into(), &"max_rounds_reached".into()),
        "{json:#}"
    );
    assert!(
        json["unresolved_risks"].as_array().unwrap().iter().any(|r| r.as_str().unwrap().starts_with("test_failure")),
        "{json:#}"
    );
    assert_eq!(env.mas_ok(&repo, &["report", &run]).lines().next(), Some(headline));
    let html = env.mas_ok(&repo, &["report", &run, "--html", "-"]);
    assert!(html.contains(&format!("<p id=\"ending\" data-ending=\"{name}\">")), "{html}");
    assert!(!html.contains("risk_blocked"), "{html}");

    // The listings.
    let list = env.mas_ok(&repo, &["run", "list"]);
    let line = list.lines().find(|l| l.starts_with(&run)).unwrap_or_default();
    assert!(line.contains(name) && !line.contains("aborted"), "{list}");
    let listed: serde_json::Value = serde_json::from_str(&env.mas_ok(&repo, &["run", "list", "--json"])).unwrap();
    let entry = listed.as_array().unwrap().iter().find(|r| r["id"] == run.as_str()).cloned().unwrap_or_default();
    assert_eq!((&entry["phase"], &entry["ending"]), (&"aborted".into(), &name.into()), "{listed:#}");
    let show = env.mas_ok(&repo, &["run", "show", &run]);
    assert!(show.contains(&format!("phase     {name} (aborted by lead)")), "{show}");
}

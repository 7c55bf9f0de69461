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

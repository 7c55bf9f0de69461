//! `git mas run start|list|show|abort`.

use super::*;
use crate::json::run::Listed;
use git_mas::devrun::{Phase, RunMeta};
use git_mas::runtime::PatternKind;

#[test]
fn a_run_records_its_definition_with_main_as_base() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let id = team.start("alice", &["--id", "tax-fix", "--quorum", "9", "--check", "sh check.sh", "--budget", "2h"]);
    assert_eq!(id, "tax-fix");
    let shown: RunMeta = team.json_as(&team.repo, "bob", &["run", "show", "tax-fix"]);
    let def = &shown.def;
    assert_eq!(def.base, team.main_tip());
    assert_eq!(def.roster, ["alice", "bob", "carol"]);
    assert_eq!(def.quorum, 3, "capped at the roster");
    assert_eq!(def.requested_quorum, Some(9));
    assert_eq!(def.class, PatternKind::Development);
    assert_eq!(def.check.as_deref(), Some("sh check.sh"));
    assert_eq!(def.budget_ms, Some(7_200_000));
    assert_eq!(def.started_by, "alice");
    assert_eq!(shown.phase, Phase::Open);
    // The definition is a signed record in the shared meta chain.
    let (code, log) = log_chains(&team.env, &team.repo, "refs/mas/runs/tax-fix/meta");
    assert_eq!(code, Some(0));
    assert_eq!(log[0].records.len(), 1);
    assert!(all_verified(&log[0]));
    // A fresh id is generated when none is given; the default quorum is a strict majority.
    let other = team.start("bob", &["--roster", "bob,carol"]);
    assert_eq!(other.len(), 8);
    let shown: RunMeta = team.json_as(&team.repo, "bob", &["run", "show", &other]);
    assert_eq!(shown.def.quorum, 2);
    assert_eq!(shown.def.roster, ["bob", "carol"]);
    let list: Vec<Listed> = team.json_as(&team.repo, "bob", &["run", "list"]);
    let mut ids: Vec<&str> = list.iter().map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    let mut want = vec!["tax-fix", other.as_str()];
    want.sort_unstable();
    assert_eq!(ids, want);
    assert!(list.iter().all(|r| r.phase == "open" && r.problem.is_none()), "{list:?}");
    let text = team.ok(&team.repo, "bob", &["run", "list"]);
    assert!(text.contains("tax-fix") && text.contains("open"), "{text}");
}

#[test]
fn bad_run_settings_are_refused_and_change_nothing() {
    let team = Team::new(&["alice", "bob"]);
    assert_eq!(team.start("alice", &["--id", "taken"]), "taken");
    let before = team.refs();
    let cases: &[(&[&str], i32, &str)] = &[
        (&["run", "start", "--goal", " "], 2, "goal is empty"),
        (&["run", "start", "--goal", "g", "--quorum", "0"], 2, "--quorum must be at least 1"),
        (&["run", "start", "--goal", "g", "--roster", "alice,zed"], 1, "'zed', who is not on the repository's roster"),
        (&["run", "start", "--goal", "g", "--id", "Bad/Id"], 1, "run id \"Bad/Id\" is not valid"),
        (&["run", "start", "--goal", "g", "--id", "taken"], 1, "already exists"),
        (&["run", "start", "--goal", "g", "--max-rounds", "0"], 2, "--max-rounds must be at least 1"),
        (&["run", "start", "--goal", "g", "--budget", "soon"], 2, "soon"),
        (&["run", "start", "--goal", "g", "--quorum", "-1"], 2, "-1"),
        (&["run", "start"], 2, "--goal"),
        (&["run", "show", "nope"], 1, "no run \"nope\""),
        (&["run", "abort", "taken"], 2, "--reason"),
        (&["run", "abort", "taken", "--reason", ""], 2, "reason is empty"),
    ];
    for (args, code, want) in cases {
        let out = team.as_agent(&team.repo, "alice", args);
        assert_refused(&team, out, *code, want, &before);
    }
    // An unidentified caller cannot start a run.
    let out = team.env.mas(&team.repo, &["run", "start", "--goal", "g"]);
    assert_refused(&team, out, 1, "no agent identity", &before);
}

#[test]
fn an_aborted_run_stays_aborted() {
    let team = Team::new(&["alice", "bob"]);
    let id = team.start("alice", &[]);
    team.quiet_ok(&team.repo, "bob", &["run", "abort", &id, "--reason", "goal withdrawn"]);
    let shown: RunMeta = team.json_as(&team.repo, "alice", &["run", "show"]);
    let Phase::Aborted { by, abort } = &shown.phase else { panic!("not aborted: {:?}", shown.phase) };
    assert_eq!(abort.reason, "goal withdrawn");
    assert_eq!(by, "bob");
    let before = team.refs();
    let out = team.as_agent(&team.repo, "alice", &["run", "abort", &id, "--reason", "again"]);
    assert_refused(&team, out, 1, "was aborted: goal withdrawn", &before);
}

#[test]
fn every_run_command_refuses_an_unknown_or_malformed_run_and_changes_nothing() {
    let team = Team::new(&["alice", "bob"]);
    assert_eq!(team.start("alice", &["--id", "real", "--quorum", "1"]), "real");
    let before = team.refs();
    for args in [
        &["tally", "nope"][..],
        &["report", "nope"],
        &["land", "nope"],
        &["land", "nope", "--dry-run"],
        &["propose", "--run", "nope"],
        &["endorse", "bob", "--run", "nope"],
        &["worktree", "add", "bob", "--run", "nope"],
        &["worktree", "remove", "bob", "--run", "nope"],
        &["run", "abort", "nope", "--reason", "x"],
    ] {
        let out = team.as_agent(&team.repo, "alice", args);
        assert_refused(&team, out, 1, "no run \"nope\"", &before);
    }
    for args in [&["tally", "../x"][..], &["report", "Real"], &["land", "a..b"]] {
        let out = team.as_agent(&team.repo, "alice", args);
        assert_refused(&team, out, 1, "is not valid", &before);
    }
    let out = team.as_agent(&team.repo, "alice", &["report", "real", "--json", "--events"]);
    assert_refused(&team, out, 2, "cannot be used with", &before);
    // A landing ref written by hand is never overwritten.
    let a = team.worktree("real", "alice");
    let b = team.worktree("real", "bob");
    std::fs::write(a.join("x.txt"), "x\n").unwrap();
    team.here_quiet_ok(&a, &["propose"]);
    team.here_quiet_ok(&b, &["endorse", "alice", "--no-check"]);
    let main = team.main_tip();
    team.git_quiet_ok(&["update-ref", "refs/mas/runs/real/landed", &main]);
    let before = team.refs();
    let out = team.env.mas(&b, &["land"]);
    assert_refused(&team, out, 1, "written outside `git mas land`", &before);
}

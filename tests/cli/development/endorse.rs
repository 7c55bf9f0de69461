//! `git mas endorse`.

use super::*;
use crate::json::endorse::EndorsedOut;
use crate::json::propose::ProposedOut;
use git_mas::devrun::events::EventRecord;
use git_mas::runtime::SemanticPayload;

/// A run with a fast real check (the proposal's status.txt must say ok), and worktrees.
fn setup(team: &Team) -> (String, PathBuf, PathBuf) {
    let run = team.start("alice", &["--id", "r1", "--check", "grep -qx ok status.txt"]);
    (run.clone(), team.worktree(&run, "alice"), team.worktree(&run, "bob"))
}

#[test]
fn an_endorsement_records_the_check_bound_to_the_proposal_tree() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let (_, alice, bob) = setup(&team);
    std::fs::write(alice.join("status.txt"), "ok\n").unwrap();
    // The checkout is a plain directory outside any repository, with executable bits kept.
    std::fs::write(alice.join("probe.sh"), "#!/bin/sh\necho probed\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(alice.join("probe.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let proposed: ProposedOut = team.here_as(&alice, &["propose"]);
    let out: EndorsedOut = team.here_as(
        &bob,
        &[
            "endorse",
            "alice",
            "--check",
            "grep -qx ok status.txt && ./probe.sh && ! git rev-parse --git-dir 2>/dev/null && test \"$GIT_MAS_PROPOSER\" = alice",
        ],
    );
    assert_eq!(out.verdict, "passed", "{out:?}");
    assert_eq!(out.exit_status, Some(0));
    assert_eq!(out.tree, proposed.tree);
    assert_eq!(out.valid_endorsements, ["bob"]);
    assert!(out.output_digest.as_deref().unwrap().starts_with("sha256:"));
    // The record: a ToolResult whose subject is the tree, the output kept beside it.
    let (code, log) = log_chains(&team.env, &team.repo, "refs/mas/runs/r1/events/bob");
    assert_eq!(code, Some(0));
    let payload: EventRecord = serde_json::from_value(log[0].records[0].payload.clone().unwrap()).unwrap();
    let SemanticPayload::ToolResult { subject, exit_status, duration_ms, .. } = &payload.event.payload else {
        panic!("a check's endorsement is a tool result: {payload:?}")
    };
    assert_eq!(subject, &proposed.tree);
    assert_eq!(*exit_status, Some(0));
    assert_eq!(Some(*duration_ms), out.duration_ms);
    assert_eq!(payload.proposer.as_deref(), Some("alice"));
    let record = log[0].records[0].commit.as_str();
    assert_eq!(team.git(&["show", &format!("{record}:output.txt")]), "probed");
    // Nothing was left behind in the repository's worktree list.
    assert_eq!(team.git(&["worktree", "list"]).lines().count(), 3);
}

#[test]
fn a_failing_check_records_a_failed_endorsement_and_exits_9() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let (_, alice, bob) = setup(&team);
    std::fs::write(alice.join("status.txt"), "broken\n").unwrap();
    team.here_quiet_ok(&alice, &["propose"]);
    let out = team.env.mas(&bob, &["endorse", "alice", "--json"]);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let json: EndorsedOut = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json.verdict, "failed");
    assert_eq!(json.exit_status, Some(1));
    assert!(json.valid_endorsements.is_empty());
    let (_, log) = log_chains(&team.env, &team.repo, "refs/mas/runs/r1/events/bob");
    let payload: EventRecord = serde_json::from_value(log[0].records[0].payload.clone().unwrap()).unwrap();
    assert!(matches!(payload.event.payload, SemanticPayload::ToolResult { exit_status: Some(1), .. }), "{payload:?}");
    // Human output names the failure.
    let out = team.env.mas(&bob, &["endorse", "alice"]);
    assert_eq!(out.status.code(), Some(9));
    assert!(
        stderr(&out).contains("failed with exit status 1") && stderr(&out).contains("test_failure"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn endorsements_follow_content_across_re_proposals() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let (run, alice, bob) = setup(&team);
    let carol = team.worktree(&run, "carol");
    std::fs::write(alice.join("status.txt"), "ok\n").unwrap();
    team.here_quiet_ok(&alice, &["propose"]);
    team.here_quiet_ok(&bob, &["endorse", "alice"]);
    let second: EndorsedOut = team.here_as(&carol, &["endorse", "alice"]);
    assert_eq!(second.valid_endorsements, ["bob", "carol"]);
    assert!(second.at_quorum);
    // Identical content, new commit: the endorsements stay.
    let again: ProposedOut = team.here_as(&alice, &["propose", "-m", "same tree, new words"]);
    assert_eq!(again.endorsements_kept, ["bob", "carol"]);
    // Changed content: they are voided.
    std::fs::write(alice.join("extra.txt"), "more\n").unwrap();
    let changed: ProposedOut = team.here_as(&alice, &["propose"]);
    assert_eq!(changed.endorsements_voided, ["bob", "carol"]);
    let out: EndorsedOut = team.here_as(&bob, &["endorse", "alice"]);
    assert_eq!(out.valid_endorsements, ["bob"]);
    // A later verdict by the same endorser on the same content replaces the earlier one.
    let out: EndorsedOut = team.here_as(&bob, &["endorse", "alice", "--reject", "--reason", "extra.txt is noise"]);
    assert_eq!(out.verdict, "rejected");
    assert_eq!(out.reason.as_deref(), Some("extra.txt is noise"));
    assert!(out.valid_endorsements.is_empty());
}

#[test]
fn self_endorsement_is_refused_unless_configured() {
    let team = Team::new(&["alice", "bob"]);
    let (_, alice, _) = setup(&team);
    std::fs::write(alice.join("status.txt"), "ok\n").unwrap();
    team.here_quiet_ok(&alice, &["propose"]);
    let before = team.refs();
    let out = team.env.mas(&alice, &["endorse", "alice"]);
    assert_refused(&team, out, 1, "self-endorsement is off", &before);
    assert!(stderr(&team.env.mas(&alice, &["endorse", "alice"])).contains("mas.allowSelfEndorse"));
    team.git_quiet_ok(&["config", "mas.allowSelfEndorse", "true"]);
    let out: EndorsedOut = team.here_as(&alice, &["endorse", "alice"]);
    assert_eq!(out.valid_endorsements, ["alice"]);
}

#[test]
fn bad_endorsements_are_refused_and_change_nothing() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let run = team.start("alice", &["--id", "nocheck", "--roster", "alice,bob"]);
    let alice = team.worktree(&run, "alice");
    let bob = team.worktree(&run, "bob");
    let before = team.refs();
    let out = team.env.mas(&bob, &["endorse", "alice"]);
    assert_refused(&team, out, 1, "alice has no proposal in run nocheck", &before);
    std::fs::write(alice.join("status.txt"), "ok\n").unwrap();
    team.here_quiet_ok(&alice, &["propose"]);
    let before = team.refs();
    let cases: &[(&[&str], i32, &str)] = &[
        (&["endorse", "alice"], 1, "no check command"),
        (&["endorse", "alice", "--check", ""], 2, "--check is empty"),
        (&["endorse", "alice", "--check", "  "], 2, "--check is empty"),
        (&["endorse", "alice", "--reject"], 2, "--reason"),
        (&["endorse", "alice", "--reject", "--reason", " "], 2, "--reason is empty"),
        (&["endorse", "alice", "--no-check", "--check", "true"], 2, "cannot be used with"),
        (&["endorse", "carol"], 1, "'carol' is not on run nocheck's roster"),
        (&["endorse", "Alice"], 1, "agent name"),
        (&["endorse", "alice", "--timeout", "soon"], 2, "soon"),
    ];
    for (args, code, want) in cases {
        let out = team.env.mas(&bob, args);
        assert_refused(&team, out, *code, want, &before);
    }
    // A proposal ref moved by hand no longer matches its event: endorsing it is refused.
    let base = team.git(&["rev-parse", "refs/heads/main"]);
    team.git_quiet_ok(&["update-ref", "refs/mas/runs/nocheck/proposals/alice", &base]);
    let before = team.refs();
    let out = team.env.mas(&bob, &["endorse", "alice", "--no-check"]);
    assert_refused(&team, out, 1, "changed outside `git mas propose`", &before);
}

/// Two bugs on main, each failing one pytest test; `fix_*` are their fixes.
const SHOP: &[(&str, &str)] = &[
    ("shop/pricing.py", "def total(prices):\n    return sum(prices[1:])\n"),
    ("shop/stock.py", "def in_stock(count):\n    return count > 1\n"),
    (
        "tests/test_shop.py",
        "import sys, os\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'shop'))\nfrom pricing import total\nfrom stock import in_stock\n\n\ndef test_total():\n    assert total([1, 2, 3]) == 6\n\n\ndef test_in_stock():\n    assert in_stock(1)\n\n\ndef test_empty():\n    assert total([]) == 0\n",
    ),
];

/// The shop committed on main (so the run's base fails two pytest tests), and a run whose check
/// is `check`.
fn shop_run(team: &Team, check: &str) -> String {
    for (path, text) in SHOP {
        let at = team.repo.join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, text).unwrap();
    }
    team.git_quiet_ok(&["add", "shop", "tests"]);
    team.git_quiet_ok(&["commit", "--quiet", "-m", "shop"]);
    team.start("alice", &["--id", "r1", "--check", check])
}

#[test]
fn pytest_q_output_is_read_and_a_proposal_fixing_one_of_two_failures_improves_the_base() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let run = shop_run(&team, "python3 -m pytest -q -p no:cacheprovider tests");
    let alice = team.worktree(&run, "alice");
    std::fs::write(alice.join("shop/pricing.py"), "def total(prices):\n    return sum(prices)\n").unwrap();
    team.here_quiet_ok(&alice, &["propose"]);
    let bob = team.worktree(&run, "bob");
    let out = team.env.mas(&bob, &["endorse", "alice", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["verdict"], "improved", "{json:#}");
    assert_eq!(json["exit_status"], 1);
    let delta = &json["differential"];
    assert_eq!(delta["format"], "pytest");
    assert_eq!(delta["fixed"], serde_json::json!(["tests/test_shop.py::test_total"]), "{delta:#}");
    assert_eq!(delta["broken"], serde_json::json!([]));
    assert_eq!(delta["still_failing"], 1);
    assert_eq!(json["valid_endorsements"], serde_json::json!(["bob"]));
}

#[test]
fn the_base_check_runs_once_for_two_endorsements_on_one_base() {
    let team = Team::new(&["alice", "bob", "carol"]);
    // The check counts its runs on the base in a file outside every checkout.
    let count = team.env.root().join("base-runs");
    let check = format!(
        "if [ -n \"$GIT_MAS_BASELINE\" ]; then echo \"$GIT_MAS_TREE\" >> '{}'; fi; python3 -m pytest -q -p no:cacheprovider tests",
        count.display()
    );
    let run = shop_run(&team, &check);
    let alice = team.worktree(&run, "alice");
    std::fs::write(alice.join("shop/pricing.py"), "def total(prices):\n    return sum(prices)\n").unwrap();
    team.here_quiet_ok(&alice, &["propose"]);
    let bob = team.worktree(&run, "bob");
    std::fs::write(bob.join("shop/stock.py"), "def in_stock(count):\n    return count >= 1\n").unwrap();
    team.here_quiet_ok(&bob, &["propose"]);
    let carol = team.worktree(&run, "carol");
    for proposer in ["alice", "bob"] {
        let out: Value = team.here_json(&carol, &["endorse", proposer]);
        assert_eq!(out["verdict"], "improved", "{proposer}: {out:#}");
        assert_eq!(out["differential"]["fixed"].as_array().unwrap().len(), 1, "{out:#}");
    }
    let runs = std::fs::read_to_string(&count).unwrap();
    assert_eq!(runs.lines().count(), 1, "the base's check ran more than once: {runs}");
    // The kept result is under the common git dir; one that does not read is run again and
    // rewritten.
    let cache = team.repo.join(".git/mas/check-cache");
    let entries: Vec<_> = std::fs::read_dir(&cache).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    std::fs::write(&entries[0], "not a cached run").unwrap();
    let again: Value = team.here_json(&bob, &["endorse", "alice"]);
    assert_eq!(again["verdict"], "improved", "{again:#}");
    assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 2);
    assert!(std::fs::read(&entries[0]).unwrap().starts_with(b"{"), "the unreadable entry was rewritten");
}

#[test]
fn a_check_whose_command_is_not_found_fails_saying_so() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let run = team.start("alice", &["--id", "r1", "--check", "no-such-test-runner -q"]);
    let alice = team.worktree(&run, "alice");
    let bob = team.worktree(&run, "bob");
    team.here_quiet_ok(&alice, &["propose"]);
    let out = team.env.mas(&bob, &["endorse", "alice"]);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("could not run: exit status 127, command not found")
            && err.contains("no-such-test-runner: not found"),
        "{err}"
    );
}

#[test]
fn a_check_past_the_runs_check_timeout_is_killed_and_recorded_as_timed_out() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let run = team.start("alice", &["--id", "r1", "--check", "echo started; sleep 30", "--check-timeout", "1s"]);
    let def: Value = team.here_json(&team.repo, &["run", "show", &run]);
    assert_eq!(def["def"]["check_timeout_ms"], 1000, "{def:#}");
    let alice = team.worktree(&run, "alice");
    let bob = team.worktree(&run, "bob");
    team.here_quiet_ok(&alice, &["propose"]);
    let started = std::time::Instant::now();
    let out = team.env.mas(&bob, &["endorse", "alice"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(15), "took {:?}", started.elapsed());
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert!(stderr(&out).contains("timed out after"), "{}", stderr(&out));
    // The record says why: its output ends with the timeout.
    let (_, log) = log_chains(&team.env, &team.repo, "refs/mas/runs/r1/events/bob");
    let record = log[0].records[0].commit.as_str();
    let output = team.git(&["show", &format!("{record}:output.txt")]);
    assert!(
        output.starts_with("started") && output.ends_with("git-mas: the check timed out after 1s and was killed"),
        "{output}"
    );
    // No time at all is refused as a usage error.
    let zero = team.as_agent(
        &team.repo,
        "alice",
        &["run", "start", "--goal", "g", "--check", "true", "--check-timeout", "0s"],
    );
    assert_eq!(zero.status.code(), Some(2), "{}", stderr(&zero));
    assert!(stderr(&zero).contains("must be more than 0s"), "{}", stderr(&zero));
    // --timeout on the command line overrides the run's.
    let out = team.env.mas(&bob, &["endorse", "alice", "--check-timeout", "2s"]);
    assert!(stderr(&out).contains("timed out after 2"), "{}", stderr(&out));
}

//! `git mas land`: exactly one commit on main.

use super::*;
use crate::json::land::LandOut;
use git_mas::convergence::{ConflictType, TerminationReason};

/// The fast check: the proposal's status.txt must say ok.
pub const CHECK: &str = "grep -qx ok status.txt";

/// Three agents, three worktrees, three different proposals; alice's is endorsed by bob and carol.
pub fn three_proposals(team: &Team, extra: &[&str]) -> (String, [PathBuf; 3]) {
    let mut flags = vec!["--id", "r1", "--check", CHECK, "--quorum", "2"];
    flags.extend_from_slice(extra);
    let run = team.start("alice", &flags);
    let wts = ["alice", "bob", "carol"].map(|n| team.worktree(&run, n));
    for (wt, name) in wts.iter().zip(["alice", "bob", "carol"]) {
        std::fs::write(wt.join("status.txt"), "ok\n").unwrap();
        let money = std::fs::read_to_string(wt.join("src/money.rs")).unwrap();
        std::fs::write(
            wt.join("src/money.rs"),
            money.replace("rounded half up", &format!("rounded half up ({name}'s version)")),
        )
        .unwrap();
        team.here_quiet_ok(wt, &["propose", "-m", &format!("{name}'s implementation")]);
    }
    team.here_quiet_ok(&wts[1], &["endorse", "alice"]);
    team.here_quiet_ok(&wts[2], &["endorse", "alice"]);
    (run, wts)
}

fn trailers(team: &Team, commit: &str) -> Vec<String> {
    team.git(&["log", "-1", "--format=%(trailers:only,unfold)", commit]).lines().map(str::to_string).collect()
}

#[test]
fn three_agents_quorum_two_lands_exactly_one_commit_with_trailers_and_a_second_land_is_refused() {
    let team = Team::new(&["alice", "bob", "carol"]);
    // A published frame: the landing names it.
    team.quiet_ok(&team.repo, "alice", &["snapshot", "--task", "fix money rounding", "--publish"]);
    let (_, log) = log_json(&team.env, &team.repo, "refs/mas/frame");
    let frame = log[0]["records"][0]["payload"]["hash"].as_str().unwrap().to_string();
    let (run, wts) = three_proposals(&team, &[]);
    let before = team.main_tip();
    let alice_tree = team.git(&["rev-parse", "refs/mas/runs/r1/proposals/alice^{tree}"]);
    let out = team.land_json(&wts[1], &["land"]);
    assert_eq!(out.status, "landed");
    let commit = out.commit.as_deref().unwrap();
    // Exactly one commit, on top of the old main, holding alice's tree.
    assert_eq!(team.main_tip(), commit);
    assert_eq!(team.git(&["rev-list", "--count", &format!("{before}..main")]), "1");
    assert_eq!(team.git(&["rev-parse", "main^"]), before);
    assert_eq!(team.git(&["rev-parse", "main^{tree}"]), alice_tree);
    assert_eq!(
        trailers(&team, commit),
        [
            "Mas-Run: r1".to_string(),
            "Mas-Class: development".into(),
            "Mas-Winner: alice".into(),
            "Mas-Endorsed-By: bob, carol".into(),
            format!("Mas-Frame: {frame}"),
            "Mas-Termination: quality_reached".into(),
        ]
    );
    // landed and the meta chain's tip are the landing record, which names the commit.
    let landed = team.git(&["rev-parse", "refs/mas/runs/r1/landed"]);
    assert_eq!(team.git(&["rev-parse", "refs/mas/runs/r1/meta"]), landed);
    let (code, meta) = log_json(&team.env, &team.repo, "refs/mas/runs/r1/meta");
    assert_eq!(code, Some(0));
    assert_eq!(meta[0]["records"][0]["payload"]["commit"], commit);
    // The clean checkout of main (the main worktree) followed the landing.
    assert_eq!(std::fs::read_to_string(team.repo.join("status.txt")).unwrap(), "ok\n");
    assert_eq!(team.git(&["status", "--porcelain"]), "");
    // A second landing is refused and names the first; nothing moves.
    let refs = team.refs();
    let out = team.env.mas(&wts[2], &["land", &run]);
    assert_refused(&team, out, 1, &format!("already landed as {commit} (by bob)"), &refs);
    // The report was stored.
    let (_, report) = log_json(&team.env, &team.repo, "refs/mas/runs/r1/report");
    assert_eq!(report[0]["records"][0]["payload"]["status"], "converged");
    assert_eq!(report[0]["records"][0]["payload"]["termination_reason"], "quality_reached");
    assert!(team.git_ok(&["fsck", "--strict", "--no-progress"]));
}

#[test]
fn land_refuses_without_quorum_and_with_a_dirty_checkout_of_main() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let run = team.start("alice", &["--id", "r1", "--check", CHECK]);
    let a = team.worktree(&run, "alice");
    let b = team.worktree(&run, "bob");
    std::fs::write(a.join("status.txt"), "ok\n").unwrap();
    team.here_quiet_ok(&a, &["propose"]);
    let refs = team.refs();
    assert_refused(&team, team.env.mas(&b, &["land"]), 1, "no proposal has a valid endorsement", &refs);
    team.here_quiet_ok(&b, &["endorse", "alice"]);
    let refs = team.refs();
    assert_refused(&team, team.env.mas(&b, &["land"]), 1, "the leader, alice, has 1/2", &refs);
    let c = team.worktree(&run, "carol");
    team.here_quiet_ok(&c, &["endorse", "alice"]);
    // main is checked out in the main worktree, with an uncommitted change: never overwritten.
    std::fs::write(team.repo.join("README.md"), "local edit\n").unwrap();
    let refs = team.refs();
    assert_refused(
        &team,
        team.env.mas(&b, &["land"]),
        1,
        "cannot follow the landing: it has uncommitted changes",
        &refs,
    );
    assert_eq!(std::fs::read_to_string(team.repo.join("README.md")).unwrap(), "local edit\n");
    // A dry run says what would land and writes nothing.
    team.git_quiet_ok(&["checkout", "--", "README.md"]);
    let refs = team.refs();
    let out = team.land_json(&b, &["land", "--dry-run"]);
    assert_eq!(out.status, "would-land");
    assert_eq!(out.termination.as_deref(), Some("quality_reached"));
    assert_eq!(out.commit, None);
    assert_eq!(team.refs(), refs);
    team.here_quiet_ok(&b, &["land"]);
}

#[test]
fn a_moved_main_merges_cleanly_or_blocks_with_artifact_mismatch() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let (run, wts) = three_proposals(&team, &[]);
    // main moves on a file no proposal touched: the landing is a three-way merge onto it.
    std::fs::write(team.repo.join("CHANGES.md"), "main moved\n").unwrap();
    team.git_quiet_ok(&["add", "CHANGES.md"]);
    team.git_quiet_ok(&["commit", "-qm", "main moved"]);
    let moved = team.main_tip();
    let out = team.land_json(&wts[0], &["land", &run, "--dry-run"]);
    let plan = out.plan.expect("a dry run shows the plan");
    assert!(plan.merged);
    // The merged tree is checked before it lands.
    assert_eq!(plan.merged_check.and_then(|c| c.exit_status), Some(0));
    let out = team.land_json(&wts[0], &["land", &run]);
    let commit = out.commit.as_deref().unwrap();
    assert_eq!(team.git(&["rev-parse", &format!("{commit}^")]), moved);
    assert_eq!(team.git(&["show", &format!("{commit}:CHANGES.md")]), "main moved");
    assert!(team.git(&["show", &format!("{commit}:src/money.rs")]).contains("alice's version"));
    assert_eq!(team.git(&["rev-list", "--count", &format!("{moved}..main")]), "1");

    // Another run: main then changes the very line alice changed.
    let team = Team::new(&["alice", "bob", "carol"]);
    let (run, wts) = three_proposals(&team, &[]);
    let money = std::fs::read_to_string(team.repo.join("src/money.rs")).unwrap();
    std::fs::write(team.repo.join("src/money.rs"), money.replace("rounded half up", "rounded half to even")).unwrap();
    team.git_quiet_ok(&["commit", "-qam", "main changes rounding"]);
    let main_before = team.main_tip();
    let out = team.env.mas(&wts[0], &["land", &run, "--json"]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let json: LandOut = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json.status, "blocked");
    let conflict = &json.plan.as_ref().unwrap().conflicts[0];
    assert_eq!(conflict.kind, ConflictType::ArtifactMismatch);
    assert_eq!(conflict.paths, ["src/money.rs"]);
    assert_eq!(conflict.parties, ["main", "alice"]);
    assert_eq!(team.main_tip(), main_before, "main did not move");
    assert!(
        team.env
            .git_cmd(&team.repo)
            .args(["rev-parse", "-q", "--verify", "refs/mas/runs/r1/landed"])
            .output()
            .unwrap()
            .stdout
            .is_empty()
    );
    let report = team.here_json(&wts[0], &["report"]);
    assert_eq!(report["status"], "blocked");
    assert_eq!(report["termination_reason"], "risk_blocked");
    assert_eq!(report["conflicts"][0]["type"], "artifact_mismatch");
    assert_eq!(report["conflicts"][0]["resolved"], false);
    let text = team.here(&wts[0], &["report"]);
    assert!(text.contains("land-blocked (blocked, risk_blocked)") && text.contains("artifact_mismatch"), "{text}");
}

#[test]
fn aggregate_lands_complementary_proposals_once_and_blocks_conflicting_ones() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let run =
        team.start("alice", &["--id", "agg", "--check", "test -f a.txt && test -f b.txt || test ! -f both-required"]);
    let [a, b, c] = ["alice", "bob", "carol"].map(|n| team.worktree(&run, n));
    std::fs::write(a.join("a.txt"), "alice's part\n").unwrap();
    std::fs::write(b.join("b.txt"), "bob's part\n").unwrap();
    team.here_quiet_ok(&a, &["propose"]);
    team.here_quiet_ok(&b, &["propose"]);
    // Not every proposal is settled yet: the barrier waits.
    team.here_quiet_ok(&c, &["endorse", "alice"]);
    team.here_quiet_ok(&b, &["endorse", "alice"]);
    let refs = team.refs();
    assert_refused(&team, team.env.mas(&c, &["land", "--aggregate"]), 1, "still waiting for bob (0/2)", &refs);
    // --partial would land alice's alone, leaving bob's out: a dry run says so and writes nothing.
    let dry = team.land_json(&c, &["land", "--aggregate", "--partial", "--dry-run"]);
    let plan = dry.plan.as_ref().unwrap();
    assert_eq!(plan.members.iter().map(|(a, _)| a.as_str()).collect::<Vec<_>>(), ["alice"]);
    assert_eq!(plan.left_out, [("bob".to_string(), "waiting for endorsements (0/2)".to_string())]);
    assert_eq!(team.refs(), refs, "a dry run writes nothing");
    let usage = team.env.mas(&c, &["land", "--partial"]);
    assert_eq!(usage.status.code(), Some(2), "--partial needs --aggregate: {}", stderr(&usage));
    team.here_quiet_ok(&c, &["endorse", "bob"]);
    team.here_quiet_ok(&a, &["endorse", "bob"]);
    let before = team.main_tip();
    let out = team.land_json(&c, &["land", "--aggregate"]);
    let commit = out.commit.as_deref().unwrap();
    assert_eq!(team.git(&["rev-list", "--count", &format!("{before}..main")]), "1");
    assert_eq!(team.git(&["show", &format!("{commit}:a.txt")]), "alice's part");
    assert_eq!(team.git(&["show", &format!("{commit}:b.txt")]), "bob's part");
    let t = trailers(&team, commit);
    assert!(t.contains(&"Mas-Winner: alice".to_string()) && t.contains(&"Mas-Winner: bob".to_string()), "{t:?}");
    assert!(t.contains(&"Mas-Endorsed-By: bob, carol (for alice)".to_string()), "{t:?}");
    let checked = out.plan.as_ref().and_then(|p| p.merged_check.as_ref()).and_then(|c| c.exit_status);
    assert_eq!(checked, Some(0), "the merged tree was checked");

    // Two proposals that change the same line differently cannot be aggregated.
    let team = Team::new(&["alice", "bob", "carol"]);
    let run = team.start("alice", &["--id", "agg", "--check", "true"]);
    let [a, b, c] = ["alice", "bob", "carol"].map(|n| team.worktree(&run, n));
    for (wt, who) in [(&a, "alice"), (&b, "bob")] {
        let money = std::fs::read_to_string(wt.join("src/money.rs")).unwrap();
        std::fs::write(wt.join("src/money.rs"), money.replace("rounded half up", &format!("rounded by {who}")))
            .unwrap();
        team.here_quiet_ok(wt, &["propose"]);
    }
    for (wt, whom) in [(&c, "alice"), (&b, "alice"), (&c, "bob"), (&a, "bob")] {
        team.here_quiet_ok(wt, &["endorse", whom]);
    }
    let main_before = team.main_tip();
    let out = team.env.mas(&c, &["land", "--aggregate", "--json"]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let json: LandOut = serde_json::from_slice(&out.stdout).unwrap();
    let conflict = &json.plan.as_ref().unwrap().conflicts[0];
    assert_eq!(conflict.kind, ConflictType::ArtifactMismatch);
    assert_eq!(conflict.proposals, ["alice", "bob"]);
    assert_eq!(team.main_tip(), main_before);
}

#[test]
fn a_failing_check_of_the_merged_tree_blocks_the_landing() {
    let team = Team::new(&["alice", "bob", "carol"]);
    // Each part passes on its own; together they break the check.
    let run = team.start("alice", &["--id", "agg", "--check", "! { test -f a.txt && test -f b.txt; }"]);
    let [a, b, c] = ["alice", "bob", "carol"].map(|n| team.worktree(&run, n));
    std::fs::write(a.join("a.txt"), "a\n").unwrap();
    std::fs::write(b.join("b.txt"), "b\n").unwrap();
    team.here_quiet_ok(&a, &["propose"]);
    team.here_quiet_ok(&b, &["propose"]);
    for (wt, whom) in [(&c, "alice"), (&b, "alice"), (&c, "bob"), (&a, "bob")] {
        team.here_quiet_ok(wt, &["endorse", whom]);
    }
    let out = team.env.mas(&c, &["land", "--aggregate", "--json"]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let json: LandOut = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json.plan.as_ref().unwrap().conflicts[0].kind, ConflictType::TestFailure);
    assert_eq!(json.report.unwrap().termination_reason, Some(TerminationReason::RiskBlocked));
}

#[test]
fn land_processes_at_once_land_exactly_once_and_the_losers_say_already_landed() {
    for _ in 0..3 {
        let team = Team::new(&["alice", "bob", "carol"]);
        let (run, wts) = three_proposals(&team, &[]);
        let before = team.main_tip();
        let spawn = |wt: &Path| {
            team.env
                .mas_cmd(wt)
                .args(["land", &run])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let procs: Vec<_> = wts.iter().map(|wt| spawn(wt)).collect();
        let outs: Vec<_> = procs.into_iter().map(|p| p.wait_with_output().unwrap()).collect();
        let winners = outs.iter().filter(|o| o.status.success()).count();
        let all: Vec<String> = outs.iter().map(stderr).collect();
        assert_eq!(winners, 1, "{all:#?}");
        for loser in outs.iter().filter(|o| !o.status.success()) {
            assert_eq!(loser.status.code(), Some(1), "{all:#?}");
            assert!(stderr(loser).contains("already landed"), "{}", stderr(loser));
        }
        assert_eq!(team.git(&["rev-list", "--count", &format!("{before}..main")]), "1");
        assert_eq!(team.git(&["status", "--porcelain"]), "");
        assert_eq!(
            team.git(&["rev-parse", "refs/mas/runs/r1/landed"]),
            team.git(&["rev-parse", "refs/mas/runs/r1/meta"])
        );
        assert!(team.git_ok(&["fsck", "--strict", "--no-progress"]));
    }
}

#[test]
fn unlanded_proposals_survive_gc() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let (run, wts) = three_proposals(&team, &[]);
    team.here_quiet_ok(&wts[0], &["land", &run]);
    let bob = team.git(&["rev-parse", "refs/mas/runs/r1/proposals/bob"]);
    let carol_tree = team.git(&["rev-parse", "refs/mas/runs/r1/proposals/carol^{tree}"]);
    // Remove the worktrees too: the proposals live in refs/mas, not in any worktree.
    for agent in ["alice", "bob", "carol"] {
        team.quiet_ok(&team.repo, agent, &["worktree", "remove", agent, "--run", &run]);
    }
    team.git_quiet_ok(&["reflog", "expire", "--expire=now", "--all"]);
    team.git_quiet_ok(&["gc", "--quiet", "--prune=now"]);
    assert!(team.git_ok(&["cat-file", "-e", &bob]));
    assert!(team.git_ok(&["cat-file", "-e", &carol_tree]));
    assert!(team.git(&["show", &format!("{bob}:src/money.rs")]).contains("bob's version"));
    // The tally still reads every proposal.
    let t: crate::json::tally::TallyOut = team.json_as(&team.repo, "alice", &["tally", &run]);
    let agents: Vec<&str> = t.proposals.iter().map(|p| p.agent.as_str()).collect();
    assert_eq!(agents, ["alice", "bob", "carol"]);
}

#[test]
fn a_checkout_changed_after_a_complete_landing_is_left_alone_by_readers() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let (run, wts) = three_proposals(&team, &[]);
    team.here_quiet_ok(&wts[1], &["land"]);
    let marks: Vec<_> = std::fs::read_dir(team.repo.join(".git"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("mas-landing-checkout"))
        .collect();
    assert!(marks.is_empty(), "the mark outlived the landing: {marks:?}");
    // Someone prepares a revert of the landing in the checkout of main: its index is main's old
    // tree again, exactly what a landing interrupted before the checkout followed leaves.
    team.git_quiet_ok(&["revert", "--no-commit", "HEAD"]);
    let staged = team.git(&["status", "--porcelain"]);
    assert!(!staged.is_empty());
    for args in [&["run", "show", &run][..], &["tally", &run], &["report", &run], &["land", &run]] {
        let _ = team.env.mas(&wts[0], args);
        assert_eq!(team.git(&["status", "--porcelain"]), staged, "`git mas {args:?}` touched the checkout");
    }
}

#[test]
fn doctor_lists_an_interrupted_landing_and_fix_completes_it() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let (run, wts) = three_proposals(&team, &[]);
    let before = team.main_tip();
    team.here_quiet_ok(&wts[1], &["land"]);
    let landed = team.main_tip();
    assert_ne!(landed, before);
    // As a kill between the intent and the branch leaves it: main still at its previous tip, no
    // landed ref (the checkout of main already holds the landed files, as `read-tree` left them).
    team.git_quiet_ok(&["update-ref", "refs/heads/main", &before]);
    team.git_quiet_ok(&["update-ref", "-d", &format!("refs/mas/runs/{run}/landed")]);
    let doctor = |args: &[&str]| {
        let mut all = vec!["doctor", "--json"];
        all.extend_from_slice(args);
        let out = team.env.mas_cmd(&team.repo).env("TMPDIR", team.env.root()).args(&all).output().unwrap();
        let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
        (out.status.code(), json)
    };
    let (code, json) = doctor(&[]);
    assert_eq!(code, Some(1), "{json}");
    assert_eq!(json["half_finished"][0]["run"], run.as_str(), "{json}");
    assert_eq!(json["half_finished"][0]["operation"], "landing");
    assert_eq!(team.main_tip(), before, "doctor without --fix changes nothing");

    let (code, json) = doctor(&["--fix"]);
    assert_eq!(code, Some(0), "{json}");
    let steps: Vec<&str> = json["completed"]["landings"][0]["done"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    assert!(steps.contains(&"moved_branch") && steps.contains(&"created_landed"), "{json}");
    assert_eq!(team.main_tip(), landed, "main holds the landing again");
    assert!(team.git_ok(&["rev-parse", "--verify", &format!("refs/mas/runs/{run}/landed")]));
    assert_eq!(team.git(&["status", "--porcelain", "--untracked-files=no"]), "", "the checkout of main is clean");
    let (code, json) = doctor(&[]);
    assert_eq!((code, json["half_finished"].as_array().map(Vec::len)), (Some(0), Some(0)), "{json}");
}

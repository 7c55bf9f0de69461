//! `git mas propose`.

use super::*;
use crate::json::propose::ProposedOut;
use git_mas::devrun::events::EventRecord;
use git_mas::runtime::SemanticPayload;

#[test]
fn a_proposal_is_the_worktree_as_git_add_all_sees_it_without_touching_its_index() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let run = team.start("alice", &["--id", "r1"]);
    let base = team.main_tip();
    let wt = team.worktree(&run, "alice");
    // A tracked change (staged, then changed again on disk), an untracked file, an ignored one and
    // a deletion.
    std::fs::write(wt.join("src/money.rs"), "// staged\n").unwrap();
    team.env.git_quiet_ok(&wt, &["add", "src/money.rs"]);
    std::fs::write(wt.join("src/money.rs"), "// on disk\n").unwrap();
    std::fs::write(wt.join("NOTES.md"), "new file\n").unwrap();
    std::fs::create_dir_all(wt.join("target")).unwrap();
    std::fs::write(wt.join("target/ignored.o"), "junk").unwrap();
    std::fs::remove_file(wt.join("README.md")).unwrap();
    let index_path = PathBuf::from(team.env.git(&wt, &["rev-parse", "--absolute-git-dir"])).join("index");
    let index_before = std::fs::read(&index_path).expect("the worktree has an index");
    let status_before = team.env.git(&wt, &["status", "--porcelain"]);
    let main_before = team.main_tip();

    let out: ProposedOut = team.here_as(&wt, &["propose", "-m", "alice's take"]);
    assert_eq!(out.agent, "alice");
    assert_eq!(out.round, 1);
    let commit = out.commit.as_str();
    assert_eq!(team.git(&["rev-parse", "refs/mas/runs/r1/proposals/alice"]), commit);
    assert_eq!(team.git(&["rev-parse", &format!("{commit}^")]), base, "the base is the parent");
    assert_eq!(team.git(&["log", "-1", "--format=%s", commit]), "alice's take");
    assert_eq!(team.git(&["show", &format!("{commit}:src/money.rs")]), "// on disk");
    assert_eq!(team.git(&["show", &format!("{commit}:NOTES.md")]), "new file");
    let files = team.git(&["ls-tree", "-r", "--name-only", commit]);
    assert!(!files.contains("target/") && !files.contains("README.md"), "{files}");
    // The worktree's index and status are as they were; main did not move.
    assert_eq!(std::fs::read(&index_path).unwrap(), index_before);
    assert_eq!(team.env.git(&wt, &["status", "--porcelain"]), status_before);
    assert_eq!(team.main_tip(), main_before);
    assert!(!wt.join(".git").is_dir());
    // The event is a verified record in alice's chain of the run.
    let (code, log) = log_chains(&team.env, &team.repo, "refs/mas/runs/r1/events/alice");
    assert_eq!(code, Some(0));
    assert_eq!(log[0].records.len(), 1);
    assert!(all_verified(&log[0]));
    let record: EventRecord = serde_json::from_value(log[0].records[0].payload.clone().unwrap()).unwrap();
    let SemanticPayload::ExternalBytes { digest, .. } = &record.event.payload else {
        panic!("a proposal event is external bytes: {record:?}")
    };
    assert_eq!(digest, &out.tree);
    assert_eq!(record.commit, commit);
}

#[test]
fn re_proposing_replaces_and_rounds_count_content_changes() {
    let team = Team::new(&["alice", "bob"]);
    let run = team.start("alice", &["--max-rounds", "2"]);
    let wt = team.worktree(&run, "alice");
    std::fs::write(wt.join("a.txt"), "one\n").unwrap();
    let first: ProposedOut = team.here_as(&wt, &["propose"]);
    let same: ProposedOut = team.here_as(&wt, &["propose", "-m", "same content, new message"]);
    assert_eq!(same.tree, first.tree);
    assert_eq!(same.round, 1, "identical content is no new round");
    assert_ne!(same.commit, first.commit);
    std::fs::write(wt.join("a.txt"), "two\n").unwrap();
    let second: ProposedOut = team.here_as(&wt, &["propose"]);
    assert_eq!(second.round, 2);
    assert_eq!(second.previous_tree, Some(first.tree));
    assert_eq!(team.git(&["rev-parse", &format!("refs/mas/runs/{run}/proposals/alice")]), second.commit);
    // A third content would be round 3 of 2: refused, nothing changes.
    std::fs::write(wt.join("a.txt"), "three\n").unwrap();
    let before = team.refs();
    let out = team.env.mas(&wt, &["propose"]);
    assert_refused(&team, out, 1, "round 3 in run", &before);
}

#[test]
fn propose_refuses_outsiders_ended_runs_and_spent_budgets() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let run = team.start("alice", &["--roster", "alice,bob", "--id", "r1"]);
    let before = team.refs();
    // carol is not on the run's roster.
    let out = team.as_agent(&team.repo, "carol", &["propose", "--run", &run]);
    assert_refused(&team, out, 1, "not on run r1's roster", &before);
    // An unknown run.
    let out = team.as_agent(&team.repo, "alice", &["propose", "--run", "nope"]);
    assert_refused(&team, out, 1, "no run \"nope\"", &before);
    // An aborted run.
    team.quiet_ok(&team.repo, "alice", &["run", "abort", &run, "--reason", "stop"]);
    let before = team.refs();
    let out = team.as_agent(&team.repo, "alice", &["propose", "--run", &run]);
    assert_refused(&team, out, 1, "was aborted: stop", &before);
    // A run whose budget is spent.
    let spent = team.start("alice", &["--budget", "1ms"]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let before = team.refs();
    let out = team.as_agent(&team.repo, "alice", &["propose", "--run", &spent]);
    assert_refused(&team, out, 1, "budget of 1ms is exhausted", &before);
}

#[test]
fn a_proposal_is_told_which_files_it_and_another_proposal_or_the_moved_branch_change_differently() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let run = team.start("alice", &["--id", "r1", "--check", "true"]);
    let [a, b, c] = ["alice", "bob", "carol"].map(|n| team.worktree(&run, n));
    let rounding = |wt: &Path, to: &str| {
        let money = std::fs::read_to_string(wt.join("src/money.rs")).unwrap();
        std::fs::write(wt.join("src/money.rs"), money.replace("rounded half up", to)).unwrap();
    };
    // Propose with --json; the warnings on stderr.
    let propose = |wt: &Path| {
        let out = team.env.mas(wt, &["propose", "--json"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        (serde_json::from_slice::<ProposedOut>(&out.stdout).unwrap(), stderr(&out))
    };
    rounding(&a, "rounded by alice");
    std::fs::write(a.join("a.txt"), "alice's part\n").unwrap();
    let (first, said) = propose(&a);
    assert!(first.clashes.is_empty() && said.is_empty(), "{:?} {said}", first.clashes);
    // Bob changes the same line differently, and a file of his own: told, with the file, and
    // recorded all the same.
    rounding(&b, "rounded by bob");
    std::fs::write(b.join("b.txt"), "bob's part\n").unwrap();
    let (second, said) = propose(&b);
    // The merge that found it wrote nothing: no object holds its conflict markers.
    let all = team.env.git_cmd(&team.repo).args(["cat-file", "--batch-all-objects", "--batch"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&all.stdout).contains("<<<<<<< "), "a merge's conflicted blob was written");
    assert_eq!(team.git(&["rev-parse", "refs/mas/runs/r1/proposals/bob"]), second.commit);
    assert_eq!(second.clashes.len(), 1, "{:?}", second.clashes);
    let clash = &second.clashes[0];
    assert_eq!((clash.kind.as_str(), clash.with.as_str()), ("proposal", "alice"));
    assert_eq!(clash.commit, first.commit);
    assert_eq!(clash.paths, ["src/money.rs"]);
    assert!(said.contains("alice's proposal changes src/money.rs differently: only one of the two can land"), "{said}");
    // Carol's change merges with both: nothing to tell.
    std::fs::write(c.join("c.txt"), "carol's part\n").unwrap();
    let (third, said) = propose(&c);
    assert!(third.clashes.is_empty() && said.is_empty(), "{:?} {said}", third.clashes);
    // main moves on the same line: every proposal of that line clashes with it too.
    let money = std::fs::read_to_string(team.repo.join("src/money.rs")).unwrap();
    std::fs::write(team.repo.join("src/money.rs"), money.replace("rounded half up", "rounded half to even")).unwrap();
    team.git_quiet_ok(&["commit", "-qam", "main changes rounding"]);
    let moved = team.main_tip();
    rounding(&c, "rounded by carol");
    let (fourth, said) = propose(&c);
    let got: Vec<(&str, &str, &str)> =
        fourth.clashes.iter().map(|c| (c.kind.as_str(), c.with.as_str(), c.commit.as_str())).collect();
    assert_eq!(
        got,
        [
            ("branch", "main", moved.as_str()),
            ("proposal", "alice", first.commit.as_str()),
            ("proposal", "bob", second.commit.as_str())
        ]
    );
    assert!(fourth.clashes.iter().all(|c| c.paths == ["src/money.rs"]), "{:?}", fourth.clashes);
    assert!(
        said.contains("main moved since the run's base") && said.contains("changes src/money.rs differently"),
        "{said}"
    );
    // status hands them back to every side: each proposal with what it cannot land together with.
    let status = team.here_json(&team.repo, &["status"]);
    let run_status = status["runs"].as_array().unwrap().iter().find(|r| r["id"] == "r1").unwrap().clone();
    let with = |agent: &str| -> Vec<String> {
        let p = run_status["proposals"].as_array().unwrap().iter().find(|p| p["agent"] == agent).unwrap().clone();
        p["clashes"]
            .as_array()
            .map(|c| c.iter().map(|c| c["with"].as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    assert_eq!(with("alice"), ["main", "bob", "carol"], "{run_status}");
    assert_eq!(with("bob"), ["main", "alice", "carol"], "{run_status}");
    assert_eq!(with("carol"), ["main", "alice", "bob"], "{run_status}");
    let text = team.here(&team.repo, &["status"]);
    assert!(text.contains("      cannot land together with bob: both change src/money.rs"), "{text}");
    assert!(text.contains("cannot land together with main (moved since the base): both change src/money.rs"), "{text}");
    // The landing stops where propose said it would.
    for (wt, whom) in [(&c, "alice"), (&b, "alice"), (&a, "bob"), (&c, "bob"), (&a, "carol"), (&b, "carol")] {
        team.here_quiet_ok(wt, &["endorse", whom]);
    }
    let out = team.env.mas(&c, &["land", "--aggregate", "--json"]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let json: crate::json::land::LandOut = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<&String> = json.plan.as_ref().unwrap().conflicts.iter().flat_map(|c| c.paths.iter()).collect();
    assert!(!paths.is_empty() && paths.iter().all(|p| *p == "src/money.rs"), "{paths:?}");
}

//! `git mas tally`.

use super::*;
use crate::json::tally::TallyOut;
use git_mas::convergence::ConflictType;

#[test]
fn tally_replays_proposals_endorsements_quorum_leader_and_conflicts() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let run = team.start("alice", &["--id", "r1", "--check", "grep -qx ok status.txt"]);
    let [a, b, c] = ["alice", "bob", "carol"].map(|n| team.worktree(&run, n));
    for (wt, status) in [(&a, "ok"), (&b, "ok"), (&c, "broken")] {
        std::fs::write(wt.join("status.txt"), format!("{status}\n")).unwrap();
        // Distinct content per agent (identical trees would share their endorsements).
        std::fs::write(wt.join("author.txt"), format!("{}\n", wt.display())).unwrap();
        team.here_quiet_ok(wt, &["propose"]);
    }
    // One endorsement each for alice and bob: a tie, which goes to alice, the first id.
    team.here_quiet_ok(&c, &["endorse", "bob"]);
    team.here_quiet_ok(&c, &["endorse", "alice"]);
    let t: TallyOut = team.here_as(&team.repo, &["tally", "r1"]);
    assert_eq!(t.leader.as_deref(), Some("alice"));
    assert_eq!(t.quorum, 2);
    assert!(!t.quorum_reached);
    // carol's proposal fails alice's check: a test_failure conflict.
    let out = team.env.mas(&a, &["endorse", "carol"]);
    assert_eq!(out.status.code(), Some(9));
    team.here_quiet_ok(&a, &["endorse", "bob"]);
    let index = PathBuf::from(team.env.git(&a, &["rev-parse", "--absolute-git-dir"])).join("index");
    let index_before = std::fs::read(&index).unwrap();
    let status_before = team.env.git(&a, &["status", "--porcelain"]);
    let t: TallyOut = team.here_as(&a, &["tally"]);
    assert_eq!(t.leader.as_deref(), Some("bob"));
    assert!(t.quorum_reached);
    assert_eq!(t.at_quorum, ["bob"]);
    let bob = t.proposals.iter().find(|p| p.agent == "bob").unwrap();
    assert_eq!(bob.endorsers, ["alice", "carol"]);
    let conflicts = &t.conflicts;
    assert_eq!(conflicts.len(), 1, "{conflicts:#?}");
    assert_eq!(conflicts[0].kind, ConflictType::TestFailure);
    assert_eq!(conflicts[0].proposals, ["carol"]);
    assert!(!conflicts[0].resolved);
    assert_eq!(t.counters.applied, 7, "three proposals, four endorsements");
    // Tallying touched no index or working tree, and no ref.
    assert_eq!(std::fs::read(&index).unwrap(), index_before);
    assert_eq!(team.env.git(&a, &["status", "--porcelain"]), status_before);
    let refs = team.refs();
    let text = team.here(&a, &["tally"]);
    assert_eq!(team.refs(), refs);
    for want in [
        "leader: bob (quorum reached",
        "bob  tree",
        "2/2 valid endorsements  QUORUM",
        "test_failure",
        "FAILED (exit 1)",
    ] {
        assert!(text.contains(want), "tally lacks {want:?}:\n{text}");
    }
}

#[test]
fn records_and_events_that_do_not_count_are_listed() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let run = team.start("alice", &["--id", "r1", "--check", "true"]);
    let a = team.worktree(&run, "alice");
    std::fs::write(a.join("x.txt"), "x\n").unwrap();
    team.here_quiet_ok(&a, &["propose"]);
    // A self-endorsement made while the repository allowed it no longer counts once it does not.
    team.git_quiet_ok(&["config", "mas.allowSelfEndorse", "true"]);
    team.here_quiet_ok(&a, &["endorse", "alice"]);
    assert_eq!(team.here_as::<TallyOut>(&a, &["tally"]).proposals[0].endorsers, ["alice"]);
    team.git_quiet_ok(&["config", "mas.allowSelfEndorse", "false"]);
    let t: TallyOut = team.here_as(&a, &["tally"]);
    assert!(t.proposals[0].endorsers.is_empty());
    assert_eq!(t.refused[0].code, "incompatible-payload");
    assert!(t.refused[0].reason.contains("self-endorsement is off"));
    // A record forged into bob's chain with plain git (unsigned) is parked, never applied.
    let payload = r#"{"agent":"bob","kind":"endorsement","payload":{},"schema":1,"seq":1}"#;
    let mut cmd = team.env.git_cmd(&team.repo);
    cmd.args(["hash-object", "-w", "--stdin"]).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(payload.as_bytes()).unwrap();
    let blob = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    let tree = {
        let mut cmd = team.env.git_cmd(&team.repo);
        cmd.args(["mktree"]).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(format!("100644 blob {}\trecord.json\n", blob.trim()).as_bytes())
            .unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
    };
    let commit = team.git(&["commit-tree", tree.trim(), "-m", "forged"]);
    team.git_quiet_ok(&["update-ref", "refs/mas/runs/r1/events/bob", &commit]);
    let t: TallyOut = team.here_as(&a, &["tally"]);
    assert_eq!(t.problems[0].problem, "AUTH_REQUIRED");
    assert_eq!(t.counters.applied, 1, "only alice's proposal counts");
}

#[test]
fn the_verified_chain_cache_follows_tips_and_the_roster_and_survives_garbage() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let run = team.start("alice", &["--id", "r1", "--quorum", "1"]);
    let a = team.worktree(&run, "alice");
    let b = team.worktree(&run, "bob");
    std::fs::write(a.join("x.txt"), "x\n").unwrap();
    team.here_quiet_ok(&a, &["propose"]);
    team.here_quiet_ok(&b, &["endorse", "alice", "--no-check"]);
    let first: TallyOut = team.here_as(&a, &["tally"]);
    assert_eq!(first.leader.as_deref(), Some("alice"));
    let cache = PathBuf::from(team.git(&["rev-parse", "--git-common-dir"])).join("mas-cache/events-v2");
    let cache = if cache.is_absolute() { cache } else { team.repo.join(cache) };
    let files: Vec<PathBuf> = std::fs::read_dir(&cache).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 2, "one cached chain per agent chain");
    // Warm: the same answer.
    assert_eq!(team.here_as::<TallyOut>(&a, &["tally"]).proposals, first.proposals);
    // A chain that moves is read again.
    team.here_quiet_ok(&b, &["endorse", "alice", "--reject", "--reason", "second thoughts"]);
    assert_eq!(team.here_as::<TallyOut>(&a, &["tally"]).leader, None);
    // Garbage in the cache is a miss, not an error.
    for f in &files {
        std::fs::write(f, "not json").unwrap();
    }
    assert_eq!(team.here_as::<TallyOut>(&a, &["tally"]).leader, None);
    // A roster that changes bob's key makes bob's cached verdicts stale: his records are now
    // signed by a key the roster does not list.
    team.quiet_ok(&team.repo, "alice", &["agent", "new", "dave"]);
    let roster = std::fs::read_to_string(team.repo.join(".mas/roster")).unwrap();
    let dave = roster.lines().find(|l| l.starts_with("dave ")).unwrap().split_whitespace().nth(1).unwrap().to_string();
    let edited: Vec<String> = roster
        .lines()
        .filter(|l| !l.starts_with("dave "))
        .map(|l| if l.starts_with("bob ") { format!("bob {dave}") } else { l.to_string() })
        .collect();
    std::fs::write(team.repo.join(".mas/roster"), edited.join("\n") + "\n").unwrap();
    team.git_quiet_ok(&["commit", "-qam", "rotate bob's key"]);
    let t: TallyOut = team.json_as(&team.repo, "alice", &["tally", "r1"]);
    let problems: Vec<&str> = t.problems.iter().map(|p| p.problem.as_str()).collect();
    assert_eq!(problems, ["SPOOF", "SPOOF"], "{t:#?}");
}

//! `git mas worktree add|remove`.

use super::*;

#[test]
fn an_agent_worktree_is_detached_at_the_base_and_knows_its_agent_and_run() {
    let team = Team::new(&["alice", "bob"]);
    let run = team.start("alice", &["--id", "r1"]);
    // main moves on after the run started: the worktree still starts at the run's base.
    let base = team.main_tip();
    std::fs::write(team.repo.join("later.txt"), "later\n").unwrap();
    team.git_quiet_ok(&["add", "later.txt"]);
    team.git_quiet_ok(&["commit", "-qm", "later"]);
    let path = PathBuf::from(team.ok(&team.repo, "alice", &["worktree", "add", "bob", "--run", &run]).trim());
    assert!(path.ends_with("repo-mas/r1/bob"), "{}", path.display());
    assert_eq!(team.env.git(&path, &["rev-parse", "HEAD"]), base);
    let symbolic = team.env.git_cmd(&path).args(["symbolic-ref", "-q", "HEAD"]).output().unwrap();
    assert!(!symbolic.status.success(), "detached");
    assert!(!path.join("later.txt").exists());
    // Commands run there act as bob in r1, without --agent.
    assert_eq!(team.env.mas_ok(&path, &["whoami"]).trim(), "bob");
    assert_eq!(team.env.git(&path, &["config", "--worktree", "mas.run"]), "r1");
    // The main worktree is not affected.
    assert!(team.env.git_cmd(&team.repo).args(["config", "mas.agent"]).output().unwrap().stdout.is_empty());
    // A second worktree for the same agent and run is refused; so is an agent off the roster.
    let before = team.refs();
    let out = team.as_agent(&team.repo, "alice", &["worktree", "add", "bob", "--run", "r1"]);
    assert_refused(&team, out, 1, "already has a worktree", &before);
    let out = team.as_agent(&team.repo, "alice", &["worktree", "add", "zed", "--run", "r1"]);
    assert_refused(&team, out, 1, "not on run r1's roster", &before);
    let out = team.as_agent(&team.repo, "alice", &["worktree", "add", "Bob", "--run", "r1"]);
    assert_refused(&team, out, 1, "agent name", &before);
    // --path, relative to where the command runs.
    let json: crate::json::worktree::WorktreeOut =
        team.json_as(&team.repo, "alice", &["worktree", "add", "alice", "--path", "../alice-wt"]);
    assert_eq!(json.agent, "alice");
    assert!(json.path.join("Cargo.toml").exists());
    assert!(team.env.root().join("alice-wt/Cargo.toml").exists());
}

#[test]
fn removing_a_worktree_refuses_to_discard_unproposed_changes() {
    let team = Team::new(&["alice", "bob"]);
    let run = team.start("alice", &[]);
    let wt = PathBuf::from(team.ok(&team.repo, "alice", &["worktree", "add", "alice"]).trim());
    // Untouched: removed without fuss.
    team.quiet_ok(&team.repo, "alice", &["worktree", "remove", "alice"]);
    assert!(!wt.exists());
    let wt = PathBuf::from(team.ok(&team.repo, "alice", &["worktree", "add", "alice", "--run", &run]).trim());
    std::fs::write(wt.join("notes.md"), "unproposed\n").unwrap();
    std::fs::write(wt.join("src/money.rs"), "// rewritten\n").unwrap();
    let before = team.refs();
    let out = team.as_agent(&team.repo, "alice", &["worktree", "remove", "alice"]);
    assert_refused(
        &team,
        out,
        1,
        "holds changes that are not in the run's base (2 paths: notes.md, src/money.rs)",
        &before,
    );
    assert!(wt.join("notes.md").exists());
    // Ignored files are not changes.
    std::fs::create_dir_all(wt.join("target")).unwrap();
    std::fs::write(wt.join("target/junk"), "x").unwrap();
    let out = team.as_agent(&team.repo, "alice", &["worktree", "remove", "alice", "--json"]);
    assert!(stderr(&out).contains("2 paths"), "{}", stderr(&out));
    // --force discards.
    let json: crate::json::worktree::RemovedOut =
        team.json_as(&team.repo, "alice", &["worktree", "remove", "alice", "--force"]);
    assert_eq!(json.discarded.expect("discarded changes").paths, ["notes.md", "src/money.rs"]);
    assert_eq!(json.removed.agent, "alice");
    assert!(!wt.exists());
    let out = team.as_agent(&team.repo, "alice", &["worktree", "remove", "alice"]);
    assert_refused(&team, out, 1, "has no worktree", &team.refs());
}

/// An edit that keeps a file's size, made in the second the worktree was checked out, is in the
/// proposal once that second has passed, and the worktree holding exactly the proposal is then
/// removed without --force (a copy of the index with a fresh time missed the edit, and removing the
/// worktree lost it).
#[test]
fn a_same_second_same_size_edit_is_proposed_and_the_worktree_goes_only_when_nothing_is_lost() {
    let team = Team::new(&["alice", "bob"]);
    let run = team.start("alice", &["--id", "r1"]);
    let original = std::fs::read_to_string(team.repo.join("src/money.rs")).unwrap();
    let edited = original.replacen('0', "1", 1);
    assert_ne!(edited, original);
    assert_eq!(edited.len(), original.len());
    let mut racy = None;
    for _ in 0..20 {
        let wt = PathBuf::from(team.ok(&team.repo, "alice", &["worktree", "add", "alice", "--run", &run]).trim());
        std::fs::write(wt.join("src/money.rs"), &edited).unwrap();
        let index = PathBuf::from(team.env.git(&wt, &["rev-parse", "--absolute-git-dir"])).join("index");
        let second = |p: &Path| {
            std::fs::metadata(p).unwrap().modified().unwrap().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
        };
        if second(&index) == second(&wt.join("src/money.rs")) {
            racy = Some(wt);
            break;
        }
        team.quiet_ok(&team.repo, "alice", &["worktree", "remove", "alice", "--force"]);
    }
    let wt = racy.expect("an edit in the checkout's own second");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    team.here_quiet_ok(&wt, &["propose", "-m", "one digit"]);
    let proposed = team.git(&["show", "refs/mas/runs/r1/proposals/alice:src/money.rs"]);
    assert_eq!(proposed, edited.trim_end(), "the proposal misses the edit");
    // The worktree holds exactly the proposal: removed without --force, nothing discarded.
    let json: crate::json::worktree::RemovedOut = team.json_as(&team.repo, "alice", &["worktree", "remove", "alice"]);
    assert!(json.discarded.is_none(), "{:?}", json.discarded);
    assert!(!wt.exists());
}

/// After the run landed, a worktree holding exactly the landed tree loses nothing: it is removed
/// without --force, though it differs from its own agent's proposal; one holding anything else is
/// kept.
#[test]
fn a_worktree_holding_exactly_the_landed_tree_is_removed_and_one_differing_is_kept() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let (_, wts) = super::land::three_proposals(&team, &[]);
    team.quiet_ok(&wts[1], "bob", &["land"]);
    // carol takes alice's landed version of the file her own proposal changed differently.
    let landed = team.git(&["show", "main:src/money.rs"]) + "\n";
    std::fs::write(wts[2].join("src/money.rs"), &landed).unwrap();
    let json: crate::json::worktree::RemovedOut = team.json_as(&team.repo, "carol", &["worktree", "remove", "carol"]);
    assert!(json.discarded.is_none(), "{:?}", json.discarded);
    assert!(!wts[2].exists());
    // bob's worktree holds his own proposal: removed too; one more edit and it would be kept.
    std::fs::write(wts[1].join("extra.md"), "unproposed\n").unwrap();
    let before = team.refs();
    let out = team.as_agent(&team.repo, "bob", &["worktree", "remove", "bob"]);
    assert_refused(&team, out, 1, "holds changes that are not in bob's proposal (1 path: extra.md)", &before);
}

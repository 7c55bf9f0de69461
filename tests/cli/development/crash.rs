//! SIGKILL at every ref rename and every child-process point of `propose`, `endorse` and `land`
//! (fast-forward and merge), by strace fault injection on the real binary (through
//! [`crate::killpoints`]): after each kill the repository is consistent (fsck, every chain
//! verifies), a reader completes or ignores what the kill left, and the retry of the same command
//! succeeds with exactly one result.
//!
//! strace counts injections per syscall and per process: `when=N` on `rename` kills git-mas at its
//! Nth rename (and any git child at its Nth); on the spawn family (`clone`, `clone3`, `vfork`) it
//! kills git-mas as it starts its Nth child or thread; `execve` at `when=1` kills every child as it
//! starts. N runs up from 1 until a run completes without a kill.
//!
//! A kill at a rename leaves that ref's `.lock` file (git and gix write a ref by renaming its lock
//! into place). Telling such a lock from a live writer's is the store's business (a stale lock is
//! reported, and `git mas doctor --fix` removes it); here the killed process is known to be dead,
//! so the locks it left are removed, as `doctor --fix` would, and counted.

use super::land::three_proposals;
use super::*;
use crate::json::endorse::EndorsedOut;
use crate::json::tally::TallyOut;
use crate::killpoints::{self, Attempt, SPAWNS, Trigger};
use git_mas::devrun::{Phase, RunMeta};
use std::cell::RefCell;

/// Every ref (and index) rename, in git-mas and in its git children. strace counts `when=N` per
/// syscall, so `rename` (refs, by the store and by git) and `renameat` (objects, by gix) are swept
/// as two triggers: in one set, the Nth `renameat` would always be reached before the Nth ref
/// rename and hide it.
fn ref_renames() -> Trigger {
    Trigger::on("rename")
}

/// Every object (and git's own `renameat`) rename.
fn object_renames() -> Trigger {
    Trigger::on("renameat,?renameat2")
}

/// The triggers every command here is swept over: both renames, git-mas as it starts each child
/// process (or thread), and every child as it starts.
fn triggers() -> Vec<Trigger> {
    vec![ref_renames(), object_renames(), Trigger::on(SPAWNS), Trigger::on("execve").once()]
}

/// `git read-tree -u` updating the checkout of main, killed as it opens the landing's second file
/// (the first is written already, the index is not).
fn midway() -> Trigger {
    Trigger::on_paths("?open,openat,?creat", [PathBuf::from("status.txt")]).once()
}

/// A fresh copy of a prepared team (keys, home and repository), so each kill starts from the same
/// state without redoing the setup.
pub(super) fn copy_team(template: &Team) -> Team {
    let env = TestEnv::new();
    copy_dir(template.env.root(), env.root());
    let repo = env.root().join("repo");
    std::fs::create_dir_all(env.root().join("tmp")).unwrap();
    // The copy has new inodes and times: let the index know its files are unchanged.
    env.git_quiet_ok(&repo, &["update-index", "-q", "--refresh"]);
    Team { env, repo }
}

/// What every kill point must leave: a repository git accepts, refs naming objects that exist, and
/// chains that verify.
pub(super) fn assert_consistent(team: &Team, what: &str) {
    let problems = killpoints::check_repository(&team.env, &team.repo);
    assert!(problems.is_empty(), "{what}: {problems:#?}");
}

pub(super) fn tip(team: &Team, refname: &str) -> Option<String> {
    let out = team.env.git_cmd(&team.repo).args(["rev-parse", "-q", "--verify", refname]).output().unwrap();
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn scratch_left(team: &Team) -> Vec<String> {
    std::fs::read_dir(team.env.root().join("tmp"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("git-mas-check-"))
        .collect()
}

/// Counts of what the kills exercised.
#[derive(Default, Debug)]
pub(super) struct Tally {
    points: u32,
    locks: usize,
    /// What the kills left (landings), by state.
    states: std::collections::BTreeMap<&'static str, u32>,
}

/// Kills `args` at every point of every trigger, each run in a fresh copy of `template` (in the
/// directory `dir_of` gives, after `prepare`), checking after each with `check(team, what, tally)`.
/// A run not killed must succeed, and every trigger not [`Trigger::once`] must kill at least once.
pub(super) fn every_kill_point(
    template: &Team,
    triggers: &[Trigger],
    dir_of: &dyn Fn(&Team) -> PathBuf,
    args: &[&str],
    check: &dyn Fn(&Team, &str, &mut Tally),
) -> Tally {
    let mut tally = Tally::default();
    let current: RefCell<Option<Team>> = RefCell::new(None);
    killpoints::sweep(
        triggers,
        |_, _| {
            let team = copy_team(template);
            let mut cmd = team.env.mas_cmd(&dir_of(&team));
            cmd.args(args);
            *current.borrow_mut() = Some(team);
            cmd
        },
        |attempt: &Attempt| {
            let current = current.borrow();
            let team = current.as_ref().unwrap();
            if !attempt.killed {
                let out = &attempt.output;
                assert!(out.status.success(), "{args:?} under strace without a kill failed: {}", stderr(out));
                assert!(attempt.n > 1 || attempt.trigger.once, "{args:?}: no kill at any {}", attempt.trigger.label());
                return;
            }
            tally.points += 1;
            tally.locks += killpoints::remove_locks(&team.repo.join(".git")).len();
            check(team, &format!("{args:?} killed at {}", attempt.point()), &mut tally);
        },
    );
    tally
}

/// A run whose proposal by alice has a quorum (bob and carol), worktrees removed; with `moved`,
/// main has moved since the run started, so the landing is a merge.
fn landing_template(moved: bool) -> Team {
    let team = Team::new(&["alice", "bob", "carol"]);
    let (run, _) = three_proposals(&team, &[]);
    for agent in ["alice", "bob", "carol"] {
        team.quiet_ok(&team.repo, agent, &["worktree", "remove", agent, "--run", &run]);
    }
    if moved {
        std::fs::write(team.repo.join("CHANGES.md"), "main moved\n").unwrap();
        team.git_quiet_ok(&["add", "CHANGES.md"]);
        team.git_quiet_ok(&["commit", "-qm", "main moved"]);
    }
    team
}

fn land_every_kill_point(moved: bool) -> Tally {
    let template = landing_template(moved);
    let before = template.main_tip();
    // What an uninterrupted landing leaves on main.
    let baseline = copy_team(&template);
    let out = baseline.env.mas(&baseline.repo, &["--agent", "bob", "land", "r1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let want_tree = baseline.git(&["rev-parse", "main^{tree}"]);
    let args = ["--agent", "bob", "land", "r1"];
    let check = |team: &Team, what: &str, tally: &mut Tally| {
        assert_consistent(team, what);
        // What the kill left, before anything reads the run.
        let raw_main = team.main_tip();
        let meta_tip = tip(team, "refs/mas/runs/r1/meta").unwrap();
        let intent_kind = team.git(&["log", "-1", "--format=%s", &meta_tip]);
        let raw_landed = tip(team, "refs/mas/runs/r1/landed").is_some();
        let state = match (intent_kind.starts_with("landing"), raw_main != before, raw_landed) {
            (false, false, false) => "not started",
            (true, false, false) => "intent recorded, main not moved",
            (true, true, false) => "main moved, no landed ref",
            (true, true, true) if !team.git(&["status", "--porcelain"]).is_empty() => "checkout of main behind",
            (true, true, true) => "complete",
            other => panic!("{what}: an impossible state (intent, main moved, landed) = {other:?}"),
        };
        *tally.states.entry(state).or_default() += 1;
        // A reader completes a started landing, or finds it not started.
        let shown = team.env.mas(&team.repo, &["--agent", "carol", "run", "show", "r1", "--json"]);
        assert!(shown.status.success(), "{what}: run show failed: {}", stderr(&shown));
        let meta: RunMeta = serde_json::from_slice(&shown.stdout).unwrap();
        if state != "not started" && state != "complete" {
            assert!(
                stderr(&shown).contains("completed the interrupted landing of run r1"),
                "{what}: the reader did not say what it completed: {}",
                stderr(&shown)
            );
        }
        match &meta.phase {
            Phase::Open => {
                assert_eq!(team.main_tip(), before, "{what}: open, yet main moved");
                assert_eq!(tip(team, "refs/mas/runs/r1/landed"), None, "{what}: open, yet landed exists");
            }
            Phase::Landed { record, landing, .. } => {
                assert_eq!(team.main_tip(), landing.commit, "{what}: landed, but main is not the landing");
                assert_eq!(
                    tip(team, "refs/mas/runs/r1/landed").as_deref(),
                    Some(record.as_str()),
                    "{what}: the landed ref is not the landing record"
                );
                assert_eq!(team.git(&["status", "--porcelain"]), "", "{what}: the checkout of main is not clean");
            }
            other => panic!("{what}: a reader left the run {}", other.name()),
        }
        // The retry of the same command succeeds.
        let out = team.env.mas(&team.repo, &args);
        assert!(out.status.success(), "{what}: the retry failed: {}", stderr(&out));
        assert_eq!(team.git(&["rev-list", "--count", &format!("{before}..main")]), "1", "{what}: not one commit");
        assert_eq!(team.git(&["rev-parse", "main^{tree}"]), want_tree, "{what}: main holds another tree");
        assert_eq!(team.git(&["log", "-1", "--format=%(trailers:key=Mas-Run,valueonly)", "main"]), "r1");
        let meta: RunMeta =
            serde_json::from_str(&team.here(&team.repo, &["--agent", "carol", "run", "show", "r1", "--json"])).unwrap();
        let Phase::Landed { record, landing, .. } = &meta.phase else { panic!("{what}: not landed: {:?}", meta.phase) };
        assert_eq!(landing.commit, team.main_tip(), "{what}");
        assert_eq!(tip(team, "refs/mas/runs/r1/landed").as_deref(), Some(record.as_str()), "{what}");
        assert_eq!(team.git(&["status", "--porcelain"]), "", "{what}: the checkout of main is not clean");
        assert!(scratch_left(team).is_empty(), "{what}: scratch checkouts left: {:?}", scratch_left(team));
        assert_consistent(team, what);
        let report = team.here_json(&team.repo, &["--agent", "carol", "report", "r1"]);
        assert_eq!(report["status"], "converged", "{what}");
    };
    every_kill_point(&template, &[triggers(), vec![midway()]].concat(), &|t: &Team| t.repo.clone(), &args, &check)
}

#[test]
fn a_fast_forward_landing_killed_anywhere_lands_exactly_once() {
    let tally = land_every_kill_point(false);
    eprintln!("land (fast-forward): {tally:?}");
    assert!(tally.points >= 12, "{tally:?}");
    assert_eq!(tally.states.len(), 5, "not every step of the landing was interrupted: {tally:?}");
}

#[test]
fn a_merge_landing_killed_anywhere_lands_exactly_once() {
    let tally = land_every_kill_point(true);
    eprintln!("land (merge): {tally:?}");
    assert!(tally.points >= 12, "{tally:?}");
    assert_eq!(tally.states.len(), 5, "not every step of the landing was interrupted: {tally:?}");
}

#[test]
fn a_proposal_killed_anywhere_is_recorded_once_with_its_content() {
    // alice proposed once; the proposal killed is her second, with new content.
    let template = Team::new(&["alice", "bob", "carol"]);
    assert_eq!(template.start("alice", &["--id", "r1", "--check", super::land::CHECK, "--quorum", "2"]), "r1");
    let wt = template.worktree("r1", "alice");
    std::fs::write(wt.join("status.txt"), "ok\n").unwrap();
    template.here_quiet_ok(&wt, &["propose", "-m", "alice's first try"]);
    template.quiet_ok(&template.repo, "alice", &["worktree", "remove", "alice", "--run", "r1"]);
    let first_event = tip(&template, "refs/mas/runs/r1/events/alice").unwrap();
    let first_proposal = tip(&template, "refs/mas/runs/r1/proposals/alice").unwrap();
    let prepare = |team: &Team| -> PathBuf {
        let wt = team.worktree("r1", "alice");
        std::fs::write(wt.join("status.txt"), "ok\n").unwrap();
        std::fs::write(wt.join("NEW.md"), "a new file\n").unwrap();
        wt
    };
    let args = ["propose", "-m", "alice's implementation"];
    let check = |team: &Team, what: &str, tally: &mut Tally| {
        assert_consistent(team, what);
        let wt = worktree_of(team);
        let gitdir = PathBuf::from(team.env.git(&wt, &["rev-parse", "--absolute-git-dir"]));
        let event = tip(team, "refs/mas/runs/r1/events/alice").unwrap() != first_event;
        let artifact = tip(team, "refs/mas/runs/r1/proposals/alice").unwrap() != first_proposal;
        let state = match (event, artifact) {
            (false, false) => "not started",
            (true, false) => "event recorded, proposal ref not moved",
            (true, true) => "complete",
            (false, true) => panic!("{what}: a proposal ref without its event"),
        };
        *tally.states.entry(state).or_default() += 1;
        let left = std::fs::read_dir(&gitdir)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("mas-snapshot-"));
        if left {
            *tally.states.entry("temporary index left").or_default() += 1;
        }
        // The first to read the run, an endorser, settles the proposal ref and endorses what the
        // latest event names.
        let endorsed: EndorsedOut = team.json_as(&team.repo, "bob", &["endorse", "alice", "--run", "r1"]);
        let held = tip(team, "refs/mas/runs/r1/proposals/alice^{tree}").unwrap();
        assert_eq!(endorsed.tree, held, "{what}: endorsed another tree than the proposal ref holds");
        let t: TallyOut = team.json_as(&team.repo, "bob", &["tally", "r1"]);
        let proposals = &t.proposals;
        let issues = team.here_json(&team.repo, &["--agent", "bob", "report", "r1"]);
        assert!(
            issues["conflicts"].as_array().unwrap().iter().all(|c| c["type"] != "dependency_inconsistency"),
            "{what}: {issues}"
        );
        if let Some(p) = proposals.first() {
            let held = tip(team, "refs/mas/runs/r1/proposals/alice^{tree}");
            assert_eq!(
                held.as_deref(),
                Some(p.tree.as_str()),
                "{what}: the proposal ref does not hold the event's tree"
            );
        }
        let out = team.env.mas(&wt, &args);
        assert!(out.status.success(), "{what}: the retry failed: {}", stderr(&out));
        let t: TallyOut = team.json_as(&team.repo, "bob", &["tally", "r1"]);
        let p = &t.proposals[0];
        assert_eq!(p.agent, "alice");
        let held = tip(team, "refs/mas/runs/r1/proposals/alice^{tree}").unwrap();
        assert_eq!(p.tree, held, "{what}");
        assert_eq!(team.git(&["show", &format!("{held}:NEW.md")]), "a new file", "{what}");
        assert_eq!(team.git(&["show", &format!("{held}:status.txt")]), "ok", "{what}");
        let snapshots: Vec<_> = std::fs::read_dir(&gitdir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("mas-snapshot-"))
            .collect();
        assert!(snapshots.is_empty(), "{what}: temporary indexes left: {snapshots:?}");
        assert_consistent(team, what);
    };
    let tally = every_kill_point(&template, &triggers(), &prepare, &args, &check);
    eprintln!("propose: {tally:?}");
    assert!(tally.points >= 8, "{tally:?}");
    for state in ["not started", "event recorded, proposal ref not moved", "temporary index left"] {
        assert!(tally.states.contains_key(state), "no kill left {state:?}: {tally:?}");
    }
}

fn worktree_of(team: &Team) -> PathBuf {
    let list = team.git(&["worktree", "list", "--porcelain"]);
    list.lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(PathBuf::from)
        .find(|p| p != &team.repo)
        .expect("alice's worktree")
}

#[test]
fn an_endorsement_killed_anywhere_is_recorded_once_and_leaves_no_scratch() {
    let template = Team::new(&["alice", "bob", "carol"]);
    let run = template.start("alice", &["--id", "r1", "--check", super::land::CHECK, "--quorum", "2"]);
    let wt = template.worktree(&run, "alice");
    std::fs::write(wt.join("status.txt"), "ok\n").unwrap();
    template.here_quiet_ok(&wt, &["propose"]);
    template.quiet_ok(&template.repo, "alice", &["worktree", "remove", "alice", "--run", &run]);
    let args = ["--agent", "bob", "endorse", "alice", "--run", "r1"];
    let check = |team: &Team, what: &str, tally: &mut Tally| {
        assert_consistent(team, what);
        if !scratch_left(team).is_empty() {
            *tally.states.entry("scratch checkout left").or_default() += 1;
        }
        let out = team.env.mas(&team.repo, &args);
        assert!(out.status.success(), "{what}: the retry failed: {}", stderr(&out));
        let t: TallyOut = team.json_as(&team.repo, "carol", &["tally", "r1"]);
        assert_eq!(t.proposals[0].endorsers, ["bob"], "{what}");
        assert!(scratch_left(team).is_empty(), "{what}: scratch checkouts left: {:?}", scratch_left(team));
        assert_consistent(team, what);
    };
    let tally = every_kill_point(&template, &triggers(), &|t: &Team| t.repo.clone(), &args, &check);
    eprintln!("endorse: {tally:?}");
    assert!(tally.points >= 4, "{tally:?}");
    assert!(tally.states.contains_key("scratch checkout left"), "no kill left a scratch checkout to sweep: {tally:?}");
}

#[test]
fn an_intent_whose_main_moved_elsewhere_is_void_and_the_run_lands_once_later() {
    let template = landing_template(false);
    let before = template.main_tip();
    let args = ["--agent", "bob", "land", "r1"];
    // Find the kill that leaves the intent recorded and main not moved.
    let renames = ref_renames();
    let team = (1..40)
        .find_map(|n| {
            let team = copy_team(&template);
            let mut cmd = team.env.mas_cmd(&team.repo);
            cmd.args(args);
            assert!(killpoints::kill_at(&cmd, &renames, n).killed, "no kill point leaves a recorded intent");
            killpoints::remove_locks(&team.repo.join(".git"));
            let meta_tip = tip(&team, "refs/mas/runs/r1/meta").unwrap();
            let kind = team.git(&["log", "-1", "--format=%s", &meta_tip]);
            (kind.starts_with("landing") && team.main_tip() == before).then_some(team)
        })
        .expect("a kill point between the intent and main");
    // Someone commits on main before any git-mas command reads the run: the intent is void.
    std::fs::write(team.repo.join("CHANGES.md"), "main moved\n").unwrap();
    team.git_quiet_ok(&["add", "CHANGES.md"]);
    team.git_quiet_ok(&["commit", "-qm", "main moved by hand"]);
    let moved = team.main_tip();
    let shown = team.env.mas(&team.repo, &["--agent", "carol", "run", "show", "r1", "--json"]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let meta: RunMeta = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(meta.phase, Phase::Open, "a void intent does not land the run");
    assert!(meta.problems.iter().any(|p| p.problem.contains("void landing intent")), "{meta:?}");
    assert_eq!(team.main_tip(), moved, "reading the run moved main");
    assert_eq!(tip(&team, "refs/mas/runs/r1/landed"), None);
    // Landing again merges onto the moved main, once.
    let out = team.env.mas(&team.repo, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(team.git(&["rev-list", "--count", &format!("{moved}..main")]), "1");
    assert_eq!(team.git(&["show", "main:CHANGES.md"]), "main moved");
    let meta: RunMeta =
        serde_json::from_str(&team.here(&team.repo, &["--agent", "carol", "run", "show", "r1", "--json"])).unwrap();
    let Phase::Landed { record, landing, .. } = &meta.phase else { panic!("not landed: {:?}", meta.phase) };
    assert_eq!(landing.previous, moved);
    assert_eq!(tip(&team, "refs/mas/runs/r1/landed").as_deref(), Some(record.as_str()));
    assert_eq!(team.git(&["status", "--porcelain"]), "");
    assert_consistent(&team, "after a void intent");
}

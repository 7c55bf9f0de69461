//! SIGKILL at every ref rename and every child-process point of `propose`, `endorse` and `land`
//! (fast-forward and merge), by strace fault injection on the real binary: after each kill the
//! repository is consistent (fsck, every chain verifies), a reader completes or ignores what the
//! kill left, and the retry of the same command succeeds with exactly one result.
//!
//! strace counts injections per syscall and per process: `when=N` on the rename family kills
//! git-mas at its Nth rename (and any git child at its Nth); on the spawn family (`clone`,
//! `clone3`, `vfork`) it kills git-mas as it starts its Nth child or thread; `execve` at `when=1`
//! kills every child as it starts. N runs up from 1 until a run completes without a kill.
//!
//! A kill at a rename leaves that ref's `.lock` file (git and gix write a ref by renaming its lock
//! into place). Telling such a lock from a live writer's is the store's business (a stale lock is
//! reported, and `git mas doctor --fix` removes it); here the killed process is known to be dead,
//! so the harness removes the locks it left, as `doctor --fix` would, and counts them.

use super::land::three_proposals;
use super::*;
use crate::json::endorse::EndorsedOut;
use crate::json::tally::TallyOut;
use git_mas::devrun::{Phase, RunMeta};
use std::process::{Command, Output};

/// Where kills are injected: a set of syscalls, optionally only those naming one of `paths`
/// (relative to the repository), at every invocation number (`every`) or at the first only.
struct Family {
    label: &'static str,
    syscalls: &'static str,
    paths: &'static [&'static str],
    every: bool,
}

/// Every ref (and index) rename, in git-mas and in its git children. strace counts `when=N` per
/// syscall, so `rename` (refs, by the store and by git) and `renameat` (objects, by gix) are swept
/// as two families: in one set, the Nth `renameat` would always be reached before the Nth ref
/// rename and hide it.
const RENAMES: Family = Family { label: "rename", syscalls: "rename", paths: &[], every: true };
/// Every object (and git's own `renameat`) rename.
const RENAMEATS: Family = Family { label: "renameat", syscalls: "renameat,renameat2", paths: &[], every: true };
/// git-mas as it starts each child process (or thread).
const SPAWNS: Family = Family { label: "spawn", syscalls: "clone,clone3,vfork,fork", paths: &[], every: true };
/// Every child as it starts.
const EXECS: Family = Family { label: "exec", syscalls: "execve", paths: &[], every: false };
/// `git read-tree -u` updating the checkout of main, killed as it opens the landing's second file
/// (the first is written already, the index is not).
const MIDWAY: Family =
    Family { label: "checkout midway", syscalls: "open,openat,creat", paths: &["status.txt"], every: false };

/// Fails, loudly, when strace is missing: these tests must run wherever the suite runs.
fn require_strace() {
    let ok = Command::new("strace").arg("-V").output().is_ok_and(|o| o.status.success());
    assert!(ok, "the crash tests need strace (fault injection): install it, e.g. `apt-get install strace`");
}

/// A fresh copy of a prepared team (keys, home and repository), so each kill starts from the same
/// state without redoing the setup.
fn copy_team(template: &Team) -> Team {
    let env = TestEnv::new();
    copy_dir(template.env.root(), env.root());
    let repo = env.root().join("repo");
    std::fs::create_dir_all(env.root().join("tmp")).unwrap();
    // The copy has new inodes and times: let the index know its files are unchanged.
    env.git(&repo, &["update-index", "-q", "--refresh"]);
    Team { env, repo }
}

fn tmpdir(team: &Team) -> PathBuf {
    team.env.root().join("tmp")
}

/// `git mas ARGS` in `dir` with the team's temporary directory.
fn mas(team: &Team, dir: &Path, args: &[&str]) -> Output {
    team.env.mas_cmd(dir).env("TMPDIR", tmpdir(team)).args(args).output().expect("run git-mas")
}

/// Runs `git mas ARGS` under strace, killing at invocation `n` of the `family`; returns the
/// output and whether a kill happened.
fn killed(team: &Team, dir: &Path, args: &[&str], family: &Family, n: u32) -> (Output, bool) {
    let log = team.env.root().join("strace.log");
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-o"]).arg(&log);
    for p in family.paths {
        cmd.arg("-P").arg(p).arg("-P").arg(team.repo.join(p));
    }
    let set = family.syscalls;
    cmd.args(["-e", &format!("trace={set}"), "-e", &format!("inject={set}:signal=SIGKILL:when={n}"), "--"])
        .arg(BIN)
        .args(args)
        .current_dir(dir);
    team.env.hermetic(&mut cmd);
    cmd.env("TMPDIR", tmpdir(team));
    let out = cmd.output().expect("run strace");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    (out, text.contains("killed by SIGKILL"))
}

/// Removes the lock files a killed process left under the git dir; returns how many.
fn sweep_locks(dir: &Path) -> usize {
    let mut n = 0;
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            n += sweep_locks(&path);
        } else if path.extension().is_some_and(|x| x == "lock") {
            std::fs::remove_file(&path).unwrap();
            n += 1;
        }
    }
    n
}

/// What every kill point must leave: a repository git accepts, and chains that verify.
fn assert_consistent(team: &Team, what: &str) {
    let fsck = team.env.git_cmd(&team.repo).args(["fsck", "--no-progress"]).output().unwrap();
    assert!(fsck.status.success(), "{what}: git fsck failed: {}", stderr(&fsck));
    for line in team.git(&["for-each-ref", "--format=%(refname)", "refs/mas/"]).lines() {
        // Proposal refs and the landed ref are artifacts, not record chains.
        if line.contains("/proposals/") || line.ends_with("/landed") {
            continue;
        }
        let out = team.env.mas(&team.repo, &["log", line]);
        assert_eq!(out.status.code(), Some(0), "{what}: `git mas log {line}` did not verify:\n{}", stdout(&out));
    }
}

fn tip(team: &Team, refname: &str) -> Option<String> {
    let out = team.env.git_cmd(&team.repo).args(["rev-parse", "-q", "--verify", refname]).output().unwrap();
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn scratch_left(team: &Team) -> Vec<String> {
    std::fs::read_dir(tmpdir(team))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("git-mas-check-"))
        .collect()
}

/// Counts of what the kills exercised.
#[derive(Default, Debug)]
struct Tally {
    points: u32,
    locks: usize,
    /// What the kills left (landings), by state.
    states: std::collections::BTreeMap<&'static str, u32>,
}

/// Kills `args` at every point of every family, checking after each with `check(team, tally)`.
fn every_kill_point(
    template: &Team,
    families: &[&Family],
    dir_of: &dyn Fn(&Team) -> PathBuf,
    args: &[&str],
    check: &dyn Fn(&Team, &str, &mut Tally),
) -> Tally {
    require_strace();
    let mut tally = Tally::default();
    for family in families {
        for n in 1.. {
            let team = copy_team(template);
            let dir = dir_of(&team);
            let (out, fired) = killed(&team, &dir, args, family, n);
            if !fired {
                assert!(out.status.success(), "{args:?} under strace without a kill failed: {}", stderr(&out));
                assert!(n > 1 || !family.every, "{args:?}: no kill at any {}", family.label);
                break;
            }
            tally.points += 1;
            tally.locks += sweep_locks(&team.repo.join(".git"));
            let what = format!("{args:?} killed at {} #{n}", family.label);
            check(&team, &what, &mut tally);
            if !family.every {
                break;
            }
            assert!(n < 200, "{what}: no end to the kill points");
        }
    }
    tally
}

/// A run whose proposal by alice has a quorum (bob and carol), worktrees removed; with `moved`,
/// main has moved since the run started, so the landing is a merge.
fn landing_template(moved: bool) -> Team {
    let team = Team::new(&["alice", "bob", "carol"]);
    let (run, _) = three_proposals(&team, &[]);
    for agent in ["alice", "bob", "carol"] {
        team.ok(&team.repo, agent, &["worktree", "remove", agent, "--run", &run]);
    }
    if moved {
        std::fs::write(team.repo.join("CHANGES.md"), "main moved\n").unwrap();
        team.git(&["add", "CHANGES.md"]);
        team.git(&["commit", "-qm", "main moved"]);
    }
    team
}

fn land_every_kill_point(moved: bool) -> Tally {
    let template = landing_template(moved);
    let before = template.main_tip();
    // What an uninterrupted landing leaves on main.
    let baseline = copy_team(&template);
    let out = mas(&baseline, &baseline.repo, &["--agent", "bob", "land", "r1"]);
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
        let shown = mas(team, &team.repo, &["--agent", "carol", "run", "show", "r1", "--json"]);
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
        let out = mas(team, &team.repo, &args);
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
    every_kill_point(
        &template,
        &[&RENAMES, &RENAMEATS, &SPAWNS, &EXECS, &MIDWAY],
        &|t: &Team| t.repo.clone(),
        &args,
        &check,
    )
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
    template.start("alice", &["--id", "r1", "--check", super::land::CHECK, "--quorum", "2"]);
    let wt = template.worktree("r1", "alice");
    std::fs::write(wt.join("status.txt"), "ok\n").unwrap();
    template.here(&wt, &["propose", "-m", "alice's first try"]);
    template.ok(&template.repo, "alice", &["worktree", "remove", "alice", "--run", "r1"]);
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
        let out = mas(team, &wt, &args);
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
    require_strace();
    let mut tally = Tally::default();
    for family in [&RENAMES, &RENAMEATS, &SPAWNS, &EXECS] {
        for n in 1.. {
            let team = copy_team(&template);
            let wt = prepare(&team);
            let (out, fired) = killed(&team, &wt, &args, family, n);
            if !fired {
                assert!(out.status.success(), "propose under strace without a kill failed: {}", stderr(&out));
                break;
            }
            tally.points += 1;
            tally.locks += sweep_locks(&team.repo.join(".git"));
            check(&team, &format!("propose killed at {} #{n}", family.label), &mut tally);
            if !family.every {
                break;
            }
            assert!(n < 200);
        }
    }
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
    template.here(&wt, &["propose"]);
    template.ok(&template.repo, "alice", &["worktree", "remove", "alice", "--run", &run]);
    let args = ["--agent", "bob", "endorse", "alice", "--run", "r1"];
    let check = |team: &Team, what: &str, tally: &mut Tally| {
        assert_consistent(team, what);
        if !scratch_left(team).is_empty() {
            *tally.states.entry("scratch checkout left").or_default() += 1;
        }
        let out = mas(team, &team.repo, &args);
        assert!(out.status.success(), "{what}: the retry failed: {}", stderr(&out));
        let t: TallyOut = team.json_as(&team.repo, "carol", &["tally", "r1"]);
        assert_eq!(t.proposals[0].endorsers, ["bob"], "{what}");
        assert!(scratch_left(team).is_empty(), "{what}: scratch checkouts left: {:?}", scratch_left(team));
        assert_consistent(team, what);
    };
    let tally = every_kill_point(
        &template,
        &[&RENAMES, &RENAMEATS, &SPAWNS, &EXECS],
        &|t: &Team| t.repo.clone(),
        &args,
        &check,
    );
    eprintln!("endorse: {tally:?}");
    assert!(tally.points >= 4, "{tally:?}");
    assert!(tally.states.contains_key("scratch checkout left"), "no kill left a scratch checkout to sweep: {tally:?}");
}

#[test]
fn an_intent_whose_main_moved_elsewhere_is_void_and_the_run_lands_once_later() {
    require_strace();
    let template = landing_template(false);
    let before = template.main_tip();
    let args = ["--agent", "bob", "land", "r1"];
    // Find the kill that leaves the intent recorded and main not moved.
    let team = (1..40)
        .find_map(|n| {
            let team = copy_team(&template);
            let (_, fired) = killed(&team, &team.repo, &args, &RENAMES, n);
            assert!(fired, "no kill point leaves a recorded intent");
            sweep_locks(&team.repo.join(".git"));
            let meta_tip = tip(&team, "refs/mas/runs/r1/meta").unwrap();
            let kind = team.git(&["log", "-1", "--format=%s", &meta_tip]);
            (kind.starts_with("landing") && team.main_tip() == before).then_some(team)
        })
        .expect("a kill point between the intent and main");
    // Someone commits on main before any git-mas command reads the run: the intent is void.
    std::fs::write(team.repo.join("CHANGES.md"), "main moved\n").unwrap();
    team.git(&["add", "CHANGES.md"]);
    team.git(&["commit", "-qm", "main moved by hand"]);
    let moved = team.main_tip();
    let shown = mas(&team, &team.repo, &["--agent", "carol", "run", "show", "r1", "--json"]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let meta: RunMeta = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(meta.phase, Phase::Open, "a void intent does not land the run");
    assert!(meta.problems.iter().any(|p| p.problem.contains("void landing intent")), "{meta:?}");
    assert_eq!(team.main_tip(), moved, "reading the run moved main");
    assert_eq!(tip(&team, "refs/mas/runs/r1/landed"), None);
    // Landing again merges onto the moved main, once.
    let out = mas(&team, &team.repo, &args);
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

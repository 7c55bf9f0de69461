//! Landing: exactly one commit on the integration branch for a run.
//!
//! [`plan`] decides what would land — pure apart from reading objects and writing merged trees to
//! the object database (which changes no ref): the winner's tree when main is still the run's base,
//! else a three-way merge (gix `merge_trees`, ancestor = the base) onto main's tip; with
//! `aggregate`, every proposal at quorum merged in agent order (seed 001 §7: wait for all, merge,
//! verify, land once). Merge conflicts are `artifact_mismatch` conflicts that block the landing.
//! The whole — a merge, or any aggregate landing, whose slices were judged as parts only — is
//! checked before it lands, as a merge queue does (`check_merged`): it may land when the check
//! passes or when its report shows it improving on main (a partial landing,
//! [`LandPlan::still_failing`]); a whole that breaks tests is a `test_failure` naming the members
//! whose combination broke them (`implicated`). A best-of-N winner lands as endorsed, the best at
//! quorum ([`RunView::best_at_quorum`]).
//!
//! [`execute`] writes the landing. git commits a multi-ref transaction with loose refs by renaming
//! one lock file after another, so a crash can split it; a landing therefore moves **one ref at a
//! time**, records its intent first, and makes every later step idempotent and re-checkable.
//! Whether a run landed is derived from the integration branch itself (`devrun::load_meta` judges
//! the landing record against the branch: landed when the branch holds its commit, pending when
//! the branch is still at the record's `previous`, void otherwise), never from the record alone.
//!
//! | step | what moves | a SIGKILL before this step completes leaves | completed by |
//! |------|------------|---------------------------------------------|--------------|
//! | 0 | plan; merged trees and the landing commit `C` (parent `P`, main's tip) are written; each clean checkout of main is marked | unreferenced objects and marks naming a landing that never happened; the run is open | nothing to do: `land` plans afresh (gc prunes the objects; the next landing of the run overwrites or drops the marks) |
//! | 1 | the landing record (intent: `commit` = `C`, `previous` = `P`) appended to the meta chain alone | the chain as it was (a kill at any ref's rename also leaves that ref's `.lock`: a stale lock, for the store to report and `doctor --fix` to remove) | as 0 |
//! | 2 | main: compare-and-swap `P` → `C` | a pending landing (`Phase::Landing`): main at `P`, the intent on the chain | [`recover`], which every git-mas command that reads the run calls (`land`, `run show`, `tally`, `report`, `propose`, `endorse`, `coordinate`): it moves main |
//! | 3 | `refs/mas/runs/<run>/landed` created ("must not exist") → the record's commit | landed (main holds `C`), no landed ref | [`recover`] creates it |
//! | 4 | each clean checkout of main (marked before step 1 with [`super::checkout::CHECKOUT_MARKER`]; the mark is removed once it followed): `git read-tree -m -u P C` | main at `C`, the checkout's index and files still `P`'s (it would show the landing reversed as staged changes) — or, killed inside `read-tree`, git's `index.lock`, some files already `C`'s, one half written, one missing | [`recover`], through `checkout::follow`: a stale `index.lock` removed, then `read-tree -m -u P C` again, or the paths the landing changes finished one by one (nothing else in the checkout is touched; a person's edit of such a path is kept aside first) — the table in [`super::checkout`] |
//! | 5 | the convergence report appended ([`super::land_run`], or a driver when its run ends) | no stored report; `report` computes it from the run | the next `land` attempt or `report` |
//!
//! Once the landed ref names the landing record, the landing is taken as complete without walking
//! the branch (the ref is created only after the branch held the commit). `git mas land` run again
//! by the agent whose landing is recorded succeeds (it completes what is left and stores the report
//! if the crash came before it); run by another agent it completes the landing too and is refused
//! as already landed.
//!
//! **A void intent**: when main moved elsewhere between steps 1 and 2 (someone committed, another
//! run landed), the compare-and-swap of step 2 fails and nothing landed. [`execute`] returns
//! [`PoolError::MainMoved`] and the caller ([`super::land_run`]) plans again onto the
//! new tip, appending a new intent; the fold lists the earlier record as a void intent (a problem,
//! not a phase, and in [`crate::devrun::RunMeta::void_intents`]) and the run stays open until an
//! intent lands. An intent found void by a reader is treated the same way.
//!
//! **Concurrent landings**: the intent's append re-reads the meta chain on every attempt, so of
//! two `land`s of one run one appends the intent and the other sees it (pending or landed) and is
//! refused as already landed — after [`recover`] completed whatever the winner had not yet done,
//! so both see the same finished landing. A checkout of main that looks dirty because a
//! concurrent landing is updating it is judged after re-reading the chain for the same reason.
//!
//! A worktree that has the integration branch checked out is updated when it is clean (`git
//! read-tree -m -u`, the mechanism of a fast-forward); a dirty one is never overwritten: the
//! landing is refused before anything moves.

use crate::convergence::{ConflictType, RecordedConflict};
use crate::devrun::view::RunView;
use crate::devrun::{
    CheckSummary, IntentState, LANDING_KIND, LandingPayload, Phase, intent_state, landed_ref, meta_ref, now_ms,
};
use crate::identity::AgentKey;
use crate::pool::{PoolError, check, git, worktree};
use crate::store::{Append, CasOutcome, Store, StoreError};
use gix::ObjectId;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What a landing would do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LandPlan {
    /// The run.
    pub run: String,
    /// Whether every proposal at quorum is merged.
    pub aggregate: bool,
    /// The proposals landing, in merge order: (agent, tree).
    pub members: Vec<(String, String)>,
    /// Each member's valid endorsers.
    pub endorsers: Vec<(String, Vec<String>)>,
    /// Proposals left out of an aggregate (they did not reach quorum and have a failed check or a
    /// rejection), with why.
    pub left_out: Vec<(String, String)>,
    /// The integration branch's tip the plan was computed on.
    pub main: String,
    /// The run's base.
    pub base: String,
    /// The tree that would land (absent when blocked by a merge conflict).
    pub tree: Option<String>,
    /// Whether that tree is a merge (main moved, or several proposals), not a proposal as endorsed.
    pub merged: bool,
    /// The check of a merged tree, when one ran.
    pub merged_check: Option<CheckSummary>,
    /// The last lines of a failing merged check's output.
    pub merged_check_tail: Option<String>,
    /// How many tests still fail on the tree that would land, when a check's report says (0: the
    /// check passed); more than 0 makes it a partial landing: it improves on main (fixes at
    /// least one test, breaks none) but does not pass.
    #[serde(default)]
    pub still_failing: Option<u64>,
    /// The tests that still fail on the whole that would land (at most 20), when its check's
    /// report names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing: Vec<String>,
    /// What blocks the landing (empty: it can land).
    pub conflicts: Vec<RecordedConflict>,
}

impl LandPlan {
    /// Whether the landing is blocked.
    pub fn blocked(&self) -> bool {
        !self.conflicts.is_empty()
    }
}

fn git_err(context: String) -> impl FnOnce(Box<dyn std::error::Error + Send + Sync>) -> PoolError {
    move |source| PoolError::Store(StoreError::Git { context, source })
}

fn parse(id: &str) -> Result<ObjectId, PoolError> {
    ObjectId::from_hex(id.as_bytes()).map_err(|_| PoolError::NotAnObjectId { text: id.into() })
}

/// (agent, tree) pairs, or (agent, why) pairs.
type Pairs = Vec<(String, String)>;

/// Which proposals land and which an aggregate leaves out, or why none can land; no merge yet.
fn members(view: &RunView, (aggregate, partial): (bool, bool)) -> Result<(Pairs, Pairs), PoolError> {
    let t = &view.tally;
    let run = view.meta.def.id.as_str();
    let mut left_out = Vec::new();
    let members = if aggregate {
        // The wait-all barrier: every proposal must be settled — at quorum, or judged against.
        let mut waiting = Vec::new();
        for p in &t.proposals {
            if p.at_quorum || view.abstained(&p.agent) {
                continue;
            }
            let against: Vec<String> = p
                .failures()
                .map(|v| format!("{}'s check failed", v.endorser))
                .chain(p.rejections().map(|v| format!("{} rejected it", v.endorser)))
                .collect();
            if against.is_empty() && partial {
                left_out
                    .push((p.agent.clone(), format!("waiting for endorsements ({}/{})", p.endorsers.len(), t.quorum)));
            } else if against.is_empty() {
                waiting.push(format!("{} ({}/{})", p.agent, p.endorsers.len(), t.quorum));
            } else {
                left_out.push((p.agent.clone(), against.join("; ")));
            }
        }
        if !waiting.is_empty() {
            return Err(PoolError::AggregateWaiting { run: run.into(), waiting });
        }
        if t.at_quorum.is_empty() {
            return Err(PoolError::NoProposalAtQuorum { run: run.into(), quorum: t.quorum });
        }
        view.candidates(true)
    } else {
        if !t.quorum_reached() {
            let leader = t.leader.as_ref().map(|l| (l.clone(), t.proposal(l).map_or(0, |p| p.endorsers.len())));
            return Err(PoolError::QuorumNotReached { run: run.into(), quorum: t.quorum, leader });
        }
        view.candidates(false)
    };
    for (agent, _) in &members {
        let Some(p) = t.proposal(agent) else { continue };
        let endorsers: Vec<String> = p.failures().map(|v| v.endorser.clone()).collect();
        if !endorsers.is_empty() {
            return Err(PoolError::CheckFailed { run: run.into(), agent: agent.clone(), endorsers });
        }
        if let Some(issue) = view.dependency_issues.iter().find(|i| i.agent == *agent) {
            return Err(PoolError::DependencyInconsistent {
                run: run.into(),
                agent: agent.clone(),
                detail: issue.detail.clone(),
            });
        }
    }
    Ok((members, left_out))
}

/// Computes what a landing would write, running the check on a merged tree (`check_command`);
/// `(aggregate, partial)`: merge every proposal at quorum, and leave out those still waiting.
pub fn plan(
    store: &Store,
    view: &RunView,
    (aggregate, partial): (bool, bool),
    check_command: Option<&str>,
) -> Result<LandPlan, PoolError> {
    view.meta.ensure_open()?;
    let def = &view.meta.def;
    let (members, left_out) = members(view, (aggregate, partial))?;
    let main = view.main_tip.ok_or_else(|| PoolError::NoBranch { branch: def.branch.clone() })?;
    let base = def.base_id()?;
    let endorsers = members
        .iter()
        .map(|(a, _)| (a.clone(), view.tally.proposal(a).map(|p| p.endorsers.clone()).unwrap_or_default()))
        .collect();
    let mut conflicts = Vec::new();
    let merged = main != base || members.len() > 1;
    let tree = if !merged {
        let (_, only) = members.first().ok_or_else(|| PoolError::NothingToLand { run: def.id.clone() })?;
        Some(parse(only)?)
    } else {
        merge_members(store, &def.branch, (base, main), &members, &mut conflicts)?
    };
    let mut merged_check = None;
    let mut merged_check_tail = None;
    let mut still_failing = None;
    let mut failing = Vec::new();
    // The whole is checked before it lands whenever it is not a proposal exactly as endorsed: a
    // merge, or an aggregate run's slices (each was judged as a part only).
    let whole = WholeCheck { store, def, main, members: &members };
    match (tree, merged || aggregate, check_command) {
        (Some(tree), true, Some(command)) => {
            let judged = check_merged(&whole, tree, command, &mut conflicts)?;
            merged_check = Some(judged.summary);
            merged_check_tail = judged.tail;
            still_failing = judged.still_failing;
            failing = judged.failing;
        }
        (Some(_), false, _) => still_failing = winner_still_failing(view, &members),
        _ => {}
    }
    Ok(LandPlan {
        run: def.id.clone(),
        aggregate,
        members,
        endorsers,
        left_out,
        main: main.to_string(),
        base: base.to_string(),
        tree: tree.map(|t| t.to_string()),
        merged,
        merged_check,
        merged_check_tail,
        still_failing,
        failing,
        conflicts,
    })
}

/// How many tests still fail on a best-of-N winner's tree, as its endorsements' checks say: 0
/// when a check passed on it, else the fewest an improving check's report counted; `None` when
/// no check says.
fn winner_still_failing(view: &RunView, members: &Pairs) -> Option<u64> {
    let (agent, _) = members.first()?;
    let p = view.tally.proposal(agent)?;
    let mut best: Option<u64> = None;
    for v in p.verdicts.iter().filter(|v| v.judgement.endorses()) {
        let n = match &v.judgement {
            crate::engines::development::Judgement::Passed { .. } => 0,
            j => match j.delta() {
                Some(d) => d.still_failing,
                None => continue,
            },
        };
        best = Some(best.map_or(n, |b| b.min(n)));
    }
    best
}

/// What the check of a whole needs: the run, main's tip it lands on, and its members.
struct WholeCheck<'a> {
    store: &'a Store,
    def: &'a crate::devrun::RunDef,
    main: ObjectId,
    members: &'a Pairs,
}

impl WholeCheck<'_> {
    /// What a check of a merged tree is run with: the run, and `merged` as its proposer.
    fn env(&self) -> [(&'static str, String); 2] {
        [("GIT_MAS_RUN", self.def.id.clone()), ("GIT_MAS_PROPOSER", "merged".to_string())]
    }
}

/// The check of a whole, judged.
struct Judged {
    summary: CheckSummary,
    tail: Option<String>,
    still_failing: Option<u64>,
    failing: Vec<String>,
}

fn tree_of(repo: &gix::Repository, commit: ObjectId) -> Result<ObjectId, PoolError> {
    let c = repo.find_commit(commit).map_err(|e| git_err(format!("reading {commit}"))(Box::new(e)))?;
    Ok(c.tree_id().map_err(|e| git_err(format!("reading {commit}"))(Box::new(e)))?.detach())
}

/// Merges `members`' trees one after another onto `main`'s (three-way, ancestor: `base`'s);
/// the merged tree, or `None` with each member that conflicts recorded in `conflicts`.
fn merge_members(
    store: &Store,
    branch: &str,
    (base, main): (ObjectId, ObjectId),
    members: &Pairs,
    conflicts: &mut Vec<RecordedConflict>,
) -> Result<Option<ObjectId>, PoolError> {
    let repo = store.repo();
    let base_tree = tree_of(repo, base)?;
    let main_moved = main != base;
    let options = repo.tree_merge_options().map_err(|e| git_err("reading merge options".into())(Box::new(e)))?;
    let mut acc = tree_of(repo, main)?;
    let mut landed_so_far: Vec<String> = Vec::new();
    for (agent, tree) in members {
        let theirs = parse(tree)?;
        let ours_label =
            if landed_so_far.is_empty() { branch.to_string() } else { format!("{branch}+{}", landed_so_far.join("+")) };
        let labels = gix::merge::blob::builtin_driver::text::Labels {
            ancestor: Some("base".into()),
            current: Some(ours_label.as_str().into()),
            other: Some(agent.as_str().into()),
        };
        let mut outcome = repo
            .merge_trees(base_tree, acc, theirs, labels, options.clone())
            .map_err(|e| git_err(format!("merging {agent}'s proposal"))(Box::new(e)))?;
        let paths = crate::pool::merge::unresolved_paths(&outcome);
        if !paths.is_empty() {
            let mut parties: Vec<String> = Vec::new();
            if main_moved {
                parties.push(branch.to_string());
            }
            parties.extend(landed_so_far.iter().cloned());
            let against = if parties.is_empty() { "the base".to_string() } else { parties.join(" and ") };
            parties.push(agent.clone());
            let mut proposals = landed_so_far.clone();
            proposals.push(agent.clone());
            conflicts.push(RecordedConflict {
                kind: ConflictType::ArtifactMismatch,
                proposals,
                parties,
                detail: format!("{agent}'s proposal and {against} change {} differently", paths.join(", ")),
                paths,
            });
            continue;
        }
        acc = outcome
            .tree
            .write()
            .map_err(|e| git_err(format!("writing the merge of {agent}'s proposal"))(Box::new(e)))?
            .detach();
        landed_so_far.push(agent.clone());
    }
    Ok(conflicts.is_empty().then_some(acc))
}

/// Runs `command` on the whole `tree` (a merge, or an aggregate run's slices), as a merge queue
/// does: it may land when the check passes, or when its test report, compared with main's,
/// shows it improving on main — it fixes at least one test and breaks and loses none (a partial
/// landing: `still_failing` says how many tests still fail). Anything else is a `test_failure`
/// recorded in `conflicts`, naming the members whose combination broke (`implicated`). Every
/// check here is killed after the run's check timeout ([`crate::devrun::RunDef::check_timeout`]).
fn check_merged(
    whole: &WholeCheck<'_>,
    tree: ObjectId,
    command: &str,
    conflicts: &mut Vec<RecordedConflict>,
) -> Result<Judged, PoolError> {
    let repo = whole.store.repo();
    let env = whole.env();
    let timeout = whole.def.check_timeout();
    let mut result = check::check_tree(repo, tree, command, &env, Some(timeout))?;
    if result.summary.passed() {
        return Ok(Judged { summary: result.summary, tail: None, still_failing: Some(0), failing: Vec::new() });
    }
    check::differential(repo, whole.main, &mut result, &env, Some(timeout))?;
    let tail = Some(result.tail(20));
    let failing: Vec<String> = result
        .report
        .as_ref()
        .map(|r| {
            r.failed
                .iter()
                .take(20)
                .map(|(suite, test)| if suite.is_empty() { test.clone() } else { format!("{suite}: {test}") })
                .collect()
        })
        .unwrap_or_default();
    if let Some(delta) = result.delta.as_ref().filter(|d| d.improves()) {
        let still_failing = Some(delta.still_failing);
        return Ok(Judged { summary: result.summary, tail, still_failing, failing });
    }
    let names: Vec<String> = whole.members.iter().map(|(a, _)| a.clone()).collect();
    let broken: Vec<String> = result.delta.as_ref().map(|d| d.broken.clone()).unwrap_or_default();
    let culprits = implicated(whole, command, &broken)?;
    let mut parties = culprits.clone();
    parties.push("merged".into());
    let status = match (result.timed_out, result.summary.exit_status) {
        (true, _) => format!("timed out after {}", humantime::format_duration(timeout)),
        (false, code) => crate::runtime::exit::exit_words(code),
    };
    let why = match result.delta.as_ref().and_then(|d| d.shortfall()) {
        Some(why) => format!("{status}: {why}"),
        None => status,
    };
    let by = if culprits.len() < names.len() {
        format!("; the breakage goes with {}", culprits.join(", "))
    } else {
        String::new()
    };
    conflicts.push(RecordedConflict {
        kind: ConflictType::TestFailure,
        proposals: names.clone(),
        parties,
        paths: Vec::new(),
        detail: format!("the check `{command}` failed on the merged tree of {} ({why}){by}", names.join(", ")),
    });
    Ok(Judged { summary: result.summary, tail, still_failing: None, failing })
}

/// The members whose combination broke `broken` (tests that pass on main and fail on the
/// whole): with more than two members, each is left out in turn and the rest merged and checked
/// again; a member whose absence makes every broken test pass again is implicated. With two or
/// fewer members, nothing broken by name (a build that fails, no report), or no single member
/// to blame, every member is.
fn implicated(whole: &WholeCheck<'_>, command: &str, broken: &[String]) -> Result<Vec<String>, PoolError> {
    let all: Vec<String> = whole.members.iter().map(|(a, _)| a.clone()).collect();
    if whole.members.len() <= 2 || broken.is_empty() {
        return Ok(all);
    }
    let repo = whole.store.repo();
    let base = whole.def.base_id()?;
    let (env, timeout) = (whole.env(), Some(whole.def.check_timeout()));
    let mut found = Vec::new();
    for (i, (agent, _)) in whole.members.iter().enumerate() {
        let rest: Pairs = whole.members.iter().enumerate().filter(|(k, _)| *k != i).map(|(_, m)| m.clone()).collect();
        let mut scratch = Vec::new();
        let Some(tree) = merge_members(whole.store, &whole.def.branch, (base, whole.main), &rest, &mut scratch)? else {
            continue;
        };
        let mut without = check::check_tree(repo, tree, command, &env, timeout)?;
        check::differential(repo, whole.main, &mut without, &env, timeout)?;
        let clean = without.summary.passed()
            || without.delta.as_ref().is_some_and(|d| !d.broken.iter().any(|b| broken.contains(b)));
        if clean {
            found.push(agent.clone());
        }
    }
    Ok(if found.is_empty() { all } else { found })
}

/// The landing commit's message: the goal, a summary, and the trailers.
pub fn message(view: &RunView, plan: &LandPlan, termination: &str, frame: Option<&str>) -> String {
    let def = &view.meta.def;
    let winners: Vec<&str> = plan.members.iter().map(|(a, _)| a.as_str()).collect();
    let mut m = format!("{}\n\n", def.goal.lines().next().unwrap_or("Land a run").trim());
    m.push_str(&format!(
        "Land run {} ({}): {} {}",
        def.id,
        def.class,
        if plan.aggregate { "the aggregate of" } else { "the proposal of" },
        winners.join(", ")
    ));
    if plan.merged {
        m.push_str(&format!(", merged onto {} at {}", def.branch, plan.main));
    }
    m.push_str(".\n\n");
    m.push_str(&format!("Mas-Run: {}\nMas-Class: {}\n", def.id, def.class));
    for w in &winners {
        m.push_str(&format!("Mas-Winner: {w}\n"));
    }
    for (agent, endorsers) in &plan.endorsers {
        if plan.members.len() == 1 {
            m.push_str(&format!("Mas-Endorsed-By: {}\n", endorsers.join(", ")));
        } else {
            m.push_str(&format!("Mas-Endorsed-By: {} (for {agent})\n", endorsers.join(", ")));
        }
    }
    if let Some(frame) = frame {
        m.push_str(&format!("Mas-Frame: {frame}\n"));
    }
    m.push_str(&format!("Mas-Termination: {termination}\n"));
    m
}

/// Writes the landing commit with `git commit-tree`, so the author and committer are whoever git
/// says (environment, configuration); without a configured identity, the landing agent.
pub fn write_commit(
    store: &Store,
    tree: &str,
    parent: &str,
    message: &str,
    agent: &str,
) -> Result<ObjectId, PoolError> {
    let dir = store.common_dir();
    let has_identity = git(dir, &["config", "user.name"]).is_ok() && git(dir, &["config", "user.email"]).is_ok();
    let identity = [format!("user.name={agent}"), format!("user.email={agent}@git-mas")];
    let mut args = Vec::new();
    if !has_identity {
        args.extend(["-c", identity[0].as_str(), "-c", identity[1].as_str()]);
    }
    args.extend(["commit-tree", tree, "-p", parent, "-F", "-"]);
    let out = crate::git::Git::new(dir).input(message).run(&args)?;
    parse(String::from_utf8_lossy(&out).trim())
}

/// Worktrees that have the integration branch checked out, each with what stops updating it
/// (`None`: it is clean and can follow the branch).
pub fn branch_worktrees(
    store: &Store,
    branch: &str,
    from: &str,
    to: &str,
) -> Result<Vec<(PathBuf, Option<String>)>, PoolError> {
    let full = format!("refs/heads/{branch}");
    let mut out = Vec::new();
    for w in worktree::list(store.common_dir())? {
        if w.bare || w.prunable || w.branch.as_deref() != Some(full.as_str()) || !w.path.is_dir() {
            continue;
        }
        // An `index.lock` a killed git left would fail every check below with git's raw message:
        // removed when no process holds it ([`crate::pool::lockfile`]).
        if let Some(held) = super::checkout::clear_index_lock(&w.path) {
            out.push((w.path, Some(held)));
            continue;
        }
        let status = git(&w.path, &["status", "--porcelain", "--untracked-files=no"])?;
        let problem = if !status.trim().is_empty() {
            Some(format!("it has uncommitted changes ({} path(s))", status.lines().count()))
        } else {
            // `read-tree -m` trusts the index's stat data: refresh it first (what `git status`
            // does), so a checkout whose files were merely touched is not taken for dirty.
            let _ = git(&w.path, &["update-index", "-q", "--refresh"]);
            match git(&w.path, &["read-tree", "-m", "-u", "-n", from, to]) {
                Ok(_) => None,
                Err(PoolError::Git { stderr, .. }) => Some(stderr),
                Err(e) => return Err(e),
            }
        };
        out.push((w.path, problem));
    }
    Ok(out)
}

/// What [`execute`] did.
#[derive(Debug, Clone, Serialize)]
pub struct Landed {
    /// The landing record.
    pub record: LandingPayload,
    /// The record's commit (the tip of `landed`).
    pub record_commit: String,
    /// Worktrees updated to the new commit.
    pub updated_worktrees: Vec<PathBuf>,
    /// Worktrees that could not be updated, with why (after the branch moved).
    pub stale_worktrees: Vec<(PathBuf, String)>,
}

/// Writes the landing: the commit, the intent on the meta chain, then main, the landed ref and the
/// checked-out worktrees of main, one at a time (see the module docs). `PoolError::MainMoved`
/// asks the caller to plan again.
pub fn execute(
    store: &Store,
    view: &RunView,
    plan: &LandPlan,
    termination: &str,
    frame: Option<String>,
    agent: &str,
    key: &AgentKey,
) -> Result<Landed, PoolError> {
    let def = &view.meta.def;
    let tree = plan.tree.clone().ok_or_else(|| PoolError::LandingBlocked { run: def.id.clone() })?;
    let branch_ref = format!("refs/heads/{}", def.branch);
    let main = parse(&plan.main)?;
    let msg = message(view, plan, termination, frame.as_deref());
    let commit = write_commit(store, &tree, &plan.main, &msg, agent)?;
    let roster = store.roster()?;
    // A dirty checkout of main is never overwritten: refuse before anything moves. A concurrent
    // landing of this run updating that checkout makes it look dirty: re-read the run first.
    let worktrees = branch_worktrees(store, &def.branch, &plan.main, &commit.to_string())?;
    if let Some((path, why)) = worktrees.iter().find_map(|(p, w)| w.as_ref().map(|w| (p, w))) {
        crate::devrun::load_meta(store, &roster, &def.id)?.ensure_open()?;
        return Err(PoolError::CheckoutCannotFollow {
            branch: def.branch.clone(),
            path: path.clone(),
            why: why.clone(),
        });
    }
    // Before the intent: the checkouts that are to follow the landing (see [`super::checkout::CHECKOUT_MARKER`]).
    let paths: Vec<PathBuf> = worktrees.iter().map(|(p, _)| p.clone()).collect();
    super::checkout::mark_checkouts(&def.id, main, commit, &paths)?;
    let record = LandingPayload {
        commit: commit.to_string(),
        previous: plan.main.clone(),
        tree: tree.clone(),
        winners: plan.members.clone(),
        endorsers: plan.endorsers.clone(),
        aggregate: plan.aggregate,
        merged_check: plan.merged_check.clone(),
        still_failing: plan.still_failing,
        termination: termination.into(),
        frame,
        at_ms: now_ms(),
    };
    let value = serde_json::to_value(&record)
        .map_err(|e| PoolError::Store(StoreError::Encode { what: "the landing".into(), source: e }))?;
    let landed = landed_ref(&def.id);
    // Step 1: the intent, alone.
    let appended = store.append_with(&meta_ref(&def.id), agent, key, LANDING_KIND, &[], |_tip| {
        // Re-read on every attempt: another landing (pending or landed) or an abort may have won.
        crate::devrun::load_meta(store, &roster, &def.id)?.ensure_open()?;
        if let Some(existing) = store.tip(&landed)? {
            // A landing that won since the read above (its intent, main and the landed ref all
            // moved in between) is on the meta chain now: say "already landed", as it is.
            crate::devrun::load_meta(store, &roster, &def.id)?.ensure_open()?;
            return Err(PoolError::LandedRefExists { refname: landed.clone(), existing: existing.to_string() });
        }
        if store.tip(&branch_ref)? != Some(main) {
            return Err(PoolError::MainMoved { branch: def.branch.clone() });
        }
        Ok(Some(Append { payload: value.clone(), also: Vec::new() }))
    })?;
    let record_commit = appended.map(|a| a.commit).ok_or_else(|| PoolError::NothingWritten { run: def.id.clone() })?;
    // Steps 2 to 4.
    let done = complete(store, &def.id, &def.branch, record_commit, &record)?;
    let mut updated = Vec::new();
    let mut stale = Vec::new();
    for step in done.done {
        if let Step::UpdatedCheckout { path } = step {
            updated.push(path);
        }
    }
    for s in done.stuck {
        if let Some(path) = s.path {
            stale.push((path, s.why));
        }
    }
    Ok(Landed { record, record_commit: record_commit.to_string(), updated_worktrees: updated, stale_worktrees: stale })
}

/// One thing [`recover`] (or the end of [`execute`]) did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Step {
    /// The integration branch moved to the landing commit.
    MovedBranch {
        /// The branch's full ref name.
        branch: String,
        /// Its tip before (the record's `previous`).
        from: String,
        /// The landing commit.
        to: String,
    },
    /// The landed ref was created.
    CreatedLanded {
        /// The ref.
        refname: String,
        /// The landing record's commit it points at.
        record: String,
    },
    /// A checkout of the integration branch was brought to the landing commit.
    UpdatedCheckout {
        /// The worktree.
        path: PathBuf,
    },
    /// The `index.lock` a killed git left in a checkout was removed (no process held it).
    RemovedIndexLock {
        /// The lock file.
        path: PathBuf,
    },
    /// A path the landing changes held something no landing wrote (a person's edit after the
    /// landing was interrupted): kept before the path was written.
    KeptAside {
        /// The file in the checkout.
        path: PathBuf,
        /// Where its content (or the folder that was in the way) now is.
        kept: PathBuf,
    },
}

/// Something [`recover`] could not complete, with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stuck {
    /// What (a ref name or `checkout`).
    pub what: String,
    /// The worktree, for a checkout.
    pub path: Option<PathBuf>,
    /// Why it was left as it is.
    pub why: String,
}

/// What [`complete`] did and could not do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    /// Steps taken, in order.
    pub done: Vec<Step>,
    /// Steps that could not be taken.
    pub stuck: Vec<Stuck>,
}

/// Where a run's landing stands after [`recover`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryState {
    /// No landing intent, or only void ones (see [`Recovery::void`]): the run is open or aborted.
    NoLanding,
    /// The landing was complete already; nothing was done.
    Complete,
    /// A half-finished landing was completed (see [`Recovery::done`]).
    Completed,
    /// The intent turned out void while recovering (main moved elsewhere): nothing landed.
    Void,
    /// Landed, but something could not be completed (see [`Recovery::stuck`]).
    Incomplete,
}

/// What [`recover`] found and did, for people (`doctor`) and scripts (it serializes).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Recovery {
    /// The run.
    pub run: String,
    /// The outcome.
    pub state: RecoveryState,
    /// The landing record's commit, when there is a pending or landed one.
    pub record: Option<String>,
    /// The landing commit it names.
    pub commit: Option<String>,
    /// Void landing intents on the meta chain (record commits).
    pub void: Vec<String>,
    /// What was done.
    pub done: Vec<Step>,
    /// What could not be done.
    pub stuck: Vec<Stuck>,
}

impl Recovery {
    /// Whether anything was changed.
    pub fn changed(&self) -> bool {
        !self.done.is_empty()
    }
}

/// Completes a half-finished landing of `run`: moves the integration branch from the intent's
/// `previous` to its commit, creates the landed ref, brings clean checkouts of the branch to the
/// landing commit. Idempotent: on a complete landing it changes nothing and says
/// [`RecoveryState::Complete`]; on a run without a landing intent, [`RecoveryState::NoLanding`].
pub fn recover(store: &Store, run: &str) -> Result<Recovery, PoolError> {
    let roster = store.roster()?;
    let meta = crate::devrun::load_meta(store, &roster, run)?;
    recover_meta(store, &meta)
}

/// [`recover`] for a run whose meta chain was just read.
pub fn recover_meta(store: &Store, meta: &crate::devrun::RunMeta) -> Result<Recovery, PoolError> {
    let run = meta.def.id.as_str();
    let void = meta.void_intents.clone();
    let mut out = Recovery {
        run: run.into(),
        state: RecoveryState::NoLanding,
        record: None,
        commit: None,
        void,
        done: Vec::new(),
        stuck: Vec::new(),
    };
    let (record, landing) = match &meta.phase {
        Phase::Landing { record, landing, .. } | Phase::Landed { record, landing, .. } => (record.clone(), landing),
        _ => return Ok(out),
    };
    out.record = Some(record.clone());
    out.commit = Some(landing.commit.clone());
    match complete(store, run, &meta.def.branch, parse(&record)?, landing) {
        Ok(c) => {
            out.state = if !c.stuck.is_empty() {
                RecoveryState::Incomplete
            } else if c.done.is_empty() {
                RecoveryState::Complete
            } else {
                RecoveryState::Completed
            };
            out.done = c.done;
            out.stuck = c.stuck;
        }
        Err(PoolError::MainMoved { .. }) => {
            out.state = RecoveryState::Void;
            out.void.push(record);
        }
        Err(e) => return Err(e),
    }
    Ok(out)
}

/// Steps 2 to 4 of a landing whose intent (`record`, `landing`) is on the meta chain, each done
/// only if not done already. `PoolError::MainMoved` when the branch moved elsewhere (void).
pub fn complete(
    store: &Store,
    run: &str,
    branch: &str,
    record: ObjectId,
    landing: &LandingPayload,
) -> Result<Completion, PoolError> {
    let branch_ref = format!("refs/heads/{branch}");
    let commit = parse(&landing.commit)?;
    let previous = parse(&landing.previous)?;
    let mut out = Completion::default();
    // Step 2: the branch.
    let tip = store.tip(&branch_ref)?;
    if tip != Some(commit) {
        if tip != Some(previous) {
            return match intent_state(store, landing, tip)? {
                IntentState::Landed => complete_refs(store, run, branch, record, commit, previous, out),
                _ => Err(PoolError::MainMoved { branch: branch.into() }),
            };
        }
        let message = format!("git-mas: land run {run}");
        match store.cas(&branch_ref, Some(previous), commit, &message)? {
            CasOutcome::Updated => out.done.push(Step::MovedBranch {
                branch: branch_ref.clone(),
                from: previous.to_string(),
                to: commit.to_string(),
            }),
            CasOutcome::LostRace { actual } => {
                if intent_state(store, landing, actual)? != IntentState::Landed {
                    return Err(PoolError::MainMoved { branch: branch.into() });
                }
            }
        }
    }
    complete_refs(store, run, branch, record, commit, previous, out)
}

fn complete_refs(
    store: &Store,
    run: &str,
    branch: &str,
    record: ObjectId,
    commit: ObjectId,
    previous: ObjectId,
    mut out: Completion,
) -> Result<Completion, PoolError> {
    // Step 3: the landed ref.
    let landed = landed_ref(run);
    let mut now = store.tip(&landed)?;
    if now.is_none() {
        match store.cas(&landed, None, record, &format!("git-mas: run {run} landed"))? {
            CasOutcome::Updated => {
                out.done.push(Step::CreatedLanded { refname: landed.clone(), record: record.to_string() });
                now = Some(record);
            }
            CasOutcome::LostRace { actual } => now = actual,
        }
    }
    if now != Some(record) {
        out.stuck.push(Stuck {
            what: landed.clone(),
            path: None,
            why: format!(
                "it points at {}, not at the landing record {record}; it was written outside `git mas land`",
                now.map_or("nothing".into(), |n| n.to_string())
            ),
        });
    }
    // Step 4: the checkouts that the landing marked before it began.
    super::checkout::follow(store, run, branch, previous, commit, &mut out)?;
    Ok(out)
}

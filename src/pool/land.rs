//! Landing: exactly one commit on the integration branch for a run.
//!
//! [`plan`] decides what would land — pure apart from reading objects and writing merged trees to
//! the object database (which changes no ref): the winner's tree when main is still the run's base,
//! else a three-way merge (gix `merge_trees`, ancestor = the base) onto main's tip; with
//! `aggregate`, every proposal at quorum merged in agent order (seed 001 §7: wait for all, merge,
//! verify, land once). Merge conflicts are `artifact_mismatch` conflicts that block the landing.
//!
//! [`execute`] writes the commit and moves, in **one ref transaction**, the integration branch
//! (from the tip the plan saw), the run's meta chain (the landing record appended) and
//! `refs/mas/runs/<run>/landed` (created: it must not exist). A concurrent landing of the same run
//! loses the compare-and-swap and is refused, naming the landing that won; a main that moved in
//! the meantime makes the caller plan again. A worktree that has the integration branch checked
//! out is updated to the new commit when it is clean (`git read-tree -m -u`, the mechanism of a
//! fast-forward), and a dirty one is never overwritten: the landing is refused before anything
//! moves.

use super::{PoolError, check, git, worktree};
use crate::convergence::{ConflictType, RecordedConflict};
use crate::identity::AgentKey;
use crate::run::view::RunView;
use crate::run::{CheckSummary, LANDING_KIND, LandingPayload, landed_ref, meta_ref, now_ms};
use crate::store::{Append, MoveTo, RefMove, Store, StoreError};
use gix::ObjectId;
use serde::Serialize;
use std::path::PathBuf;

/// What a landing would do.
#[derive(Debug, Clone, Serialize)]
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
    ObjectId::from_hex(id.as_bytes()).map_err(|_| PoolError::Refused(format!("{id:?} is not an object id")))
}

/// (agent, tree) pairs, or (agent, why) pairs.
type Pairs = Vec<(String, String)>;

/// Which proposals land and which an aggregate leaves out, or why none can land; no merge yet.
fn members(view: &RunView, aggregate: bool) -> Result<(Pairs, Pairs), PoolError> {
    let t = &view.tally;
    let mut left_out = Vec::new();
    let members = if aggregate {
        // The wait-all barrier: every proposal must be settled — at quorum, or judged against.
        let mut waiting = Vec::new();
        for p in &t.proposals {
            if p.at_quorum {
                continue;
            }
            let against: Vec<String> = p
                .failures()
                .map(|v| format!("{}'s check failed", v.endorser))
                .chain(p.rejections().map(|v| format!("{} rejected it", v.endorser)))
                .collect();
            if against.is_empty() {
                waiting.push(format!("{} ({}/{})", p.agent, p.endorsers.len(), t.quorum));
            } else {
                left_out.push((p.agent.clone(), against.join("; ")));
            }
        }
        if !waiting.is_empty() {
            return Err(PoolError::Refused(format!(
                "an aggregate landing waits for every proposal to reach quorum or be judged against; still waiting for {}",
                waiting.join(", ")
            )));
        }
        if t.at_quorum.is_empty() {
            return Err(PoolError::Refused(format!("no proposal has reached the quorum of {}", t.quorum)));
        }
        view.candidates(true)
    } else {
        if !t.quorum_reached() {
            let leader = match &t.leader {
                Some(l) => {
                    format!("the leader, {l}, has {}/{}", t.proposal(l).map_or(0, |p| p.endorsers.len()), t.quorum)
                }
                None => "no proposal has a valid endorsement".into(),
            };
            return Err(PoolError::Refused(format!("no proposal has reached the quorum of {}: {leader}", t.quorum)));
        }
        view.candidates(false)
    };
    for (agent, _) in &members {
        let Some(p) = t.proposal(agent) else { continue };
        let failures: Vec<String> = p.failures().map(|v| v.endorser.clone()).collect();
        if !failures.is_empty() {
            return Err(PoolError::Refused(format!(
                "{agent}'s proposal reached quorum, but the latest check by {} failed on it (test_failure); it lands after a passing re-check or a re-proposal",
                failures.join(", ")
            )));
        }
        if let Some(issue) = view.dependency_issues.iter().find(|i| i.agent == *agent) {
            return Err(PoolError::Refused(format!("{} (dependency_inconsistency)", issue.detail)));
        }
    }
    Ok((members, left_out))
}

/// Computes what a landing would write, running the check on a merged tree (`check_command`).
pub fn plan(
    store: &Store,
    view: &RunView,
    aggregate: bool,
    check_command: Option<&str>,
) -> Result<LandPlan, PoolError> {
    view.meta.ensure_open()?;
    let def = &view.meta.def;
    let (members, left_out) = members(view, aggregate)?;
    let main = view.main_tip.ok_or_else(|| PoolError::Refused(format!("the branch {} does not exist", def.branch)))?;
    let base = def.base_id()?;
    let repo = store.repo();
    let tree_of = |commit: ObjectId| -> Result<ObjectId, PoolError> {
        let c = repo.find_commit(commit).map_err(|e| git_err(format!("reading {commit}"))(Box::new(e)))?;
        Ok(c.tree_id().map_err(|e| git_err(format!("reading {commit}"))(Box::new(e)))?.detach())
    };
    let base_tree = tree_of(base)?;
    let main_moved = main != base;
    let endorsers = members
        .iter()
        .map(|(a, _)| (a.clone(), view.tally.proposal(a).map(|p| p.endorsers.clone()).unwrap_or_default()))
        .collect();
    let mut conflicts = Vec::new();
    let merged = main_moved || members.len() > 1;
    let tree = if !merged {
        let (_, only) = members.first().ok_or_else(|| PoolError::Refused("no proposal to land".into()))?;
        Some(parse(only)?)
    } else {
        let options = repo.tree_merge_options().map_err(|e| git_err("reading merge options".into())(Box::new(e)))?;
        let mut acc = tree_of(main)?;
        let mut landed_so_far: Vec<String> = Vec::new();
        for (agent, tree) in &members {
            let theirs = parse(tree)?;
            let ours_label = if landed_so_far.is_empty() {
                def.branch.clone()
            } else {
                format!("{}+{}", def.branch, landed_so_far.join("+"))
            };
            let labels = gix::merge::blob::builtin_driver::text::Labels {
                ancestor: Some("base".into()),
                current: Some(ours_label.as_str().into()),
                other: Some(agent.as_str().into()),
            };
            let mut outcome = repo
                .merge_trees(base_tree, acc, theirs, labels, options.clone())
                .map_err(|e| git_err(format!("merging {agent}'s proposal"))(Box::new(e)))?;
            let how = gix::merge::tree::TreatAsUnresolved::git();
            if outcome.has_unresolved_conflicts(how) {
                let mut paths: Vec<String> = outcome
                    .conflicts
                    .iter()
                    .filter(|c| c.is_unresolved(how))
                    .map(|c| c.ours.location().to_string())
                    .collect();
                paths.sort();
                paths.dedup();
                let mut parties: Vec<String> = Vec::new();
                if main_moved {
                    parties.push(def.branch.clone());
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
        conflicts.is_empty().then_some(acc)
    };
    let mut merged_check = None;
    let mut merged_check_tail = None;
    if let (Some(tree), true, Some(command)) = (tree, merged, check_command) {
        let env = [("GIT_MAS_RUN", def.id.clone()), ("GIT_MAS_PROPOSER", "merged".to_string())];
        let result = check::check_tree(repo, tree, command, &env, None)?;
        if !result.summary.passed() {
            let names: Vec<String> = members.iter().map(|(a, _)| a.clone()).collect();
            let mut parties = names.clone();
            parties.push("merged".into());
            conflicts.push(RecordedConflict {
                kind: ConflictType::TestFailure,
                proposals: names.clone(),
                parties,
                paths: Vec::new(),
                detail: format!(
                    "the check `{command}` failed on the merged tree of {} ({})",
                    names.join(", "),
                    match result.summary.exit_status {
                        Some(code) => format!("exit {code}"),
                        None => "killed".into(),
                    }
                ),
            });
            merged_check_tail = Some(result.tail(20));
        }
        merged_check = Some(result.summary);
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
        conflicts,
    })
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
    use std::io::Write;
    let dir = store.common_dir();
    let has_identity = git(dir, &["config", "user.name"]).is_ok() && git(dir, &["config", "user.email"]).is_ok();
    let mut cmd = super::git_command(dir);
    if !has_identity {
        cmd.args(["-c", &format!("user.name={agent}"), "-c", &format!("user.email={agent}@git-mas")]);
    }
    let mut child = cmd
        .args(["commit-tree", tree, "-p", parent, "-F", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(PoolError::Spawn)?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(message.as_bytes()).map_err(PoolError::Spawn)?;
    }
    let out = child.wait_with_output().map_err(PoolError::Spawn)?;
    if !out.status.success() {
        return Err(PoolError::Git {
            args: "commit-tree".into(),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    parse(String::from_utf8_lossy(&out.stdout).trim())
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
        let status = git(&w.path, &["status", "--porcelain", "--untracked-files=no"])?;
        let problem = if !status.trim().is_empty() {
            Some(format!("it has uncommitted changes ({} path(s))", status.lines().count()))
        } else {
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

/// Writes the landing: the commit, then main + meta + landed in one transaction, then checked-out
/// worktrees of main. `PoolError::MainMoved` asks the caller to plan again.
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
    let tree = plan.tree.clone().ok_or_else(|| PoolError::Refused("the landing is blocked".into()))?;
    let branch_ref = format!("refs/heads/{}", def.branch);
    let main = parse(&plan.main)?;
    let msg = message(view, plan, termination, frame.as_deref());
    let commit = write_commit(store, &tree, &plan.main, &msg, agent)?;
    // A dirty checkout of main is never overwritten: refuse before anything moves.
    let worktrees = branch_worktrees(store, &def.branch, &plan.main, &commit.to_string())?;
    if let Some((path, why)) = worktrees.iter().find_map(|(p, w)| w.as_ref().map(|w| (p, w))) {
        return Err(PoolError::Refused(format!(
            "{} is checked out at {} and cannot follow the landing: {why}",
            def.branch,
            path.display()
        )));
    }
    let record = LandingPayload {
        commit: commit.to_string(),
        previous: plan.main.clone(),
        tree: tree.clone(),
        winners: plan.members.clone(),
        endorsers: plan.endorsers.clone(),
        aggregate: plan.aggregate,
        merged_check: plan.merged_check.clone(),
        termination: termination.into(),
        frame,
        at_ms: now_ms(),
    };
    let value = serde_json::to_value(&record).map_err(|e| {
        PoolError::Store(StoreError::Git { context: "encoding the landing".into(), source: Box::new(e) })
    })?;
    let roster = store.roster()?;
    let landed = landed_ref(&def.id);
    let appended = store.append_with(&meta_ref(&def.id), agent, key, LANDING_KIND, &[], |_tip| {
        // Re-read on every attempt: another landing or an abort may have won.
        crate::run::load_meta(store, &roster, &def.id)?.ensure_open()?;
        if let Some(existing) = store.tip(&landed)? {
            return Err(PoolError::Refused(format!(
                "{landed} already exists (at {existing}) although the run's meta chain records no landing; it was written outside `git mas land`"
            )));
        }
        if store.tip(&branch_ref)? != Some(main) {
            return Err(PoolError::MainMoved);
        }
        Ok(Some(Append {
            payload: value.clone(),
            also: vec![
                RefMove { name: branch_ref.clone(), expected: Some(main), new: MoveTo::Commit(commit) },
                RefMove { name: landed.clone(), expected: None, new: MoveTo::Record },
            ],
        }))
    })?;
    let record_commit =
        appended.map(|a| a.commit.to_string()).ok_or_else(|| PoolError::Refused("the landing wrote nothing".into()))?;
    let mut updated = Vec::new();
    let mut stale = Vec::new();
    for (path, _) in worktrees {
        match git(&path, &["read-tree", "-m", "-u", &plan.main, &commit.to_string()]) {
            Ok(_) => updated.push(path),
            Err(e) => stale.push((path, e.to_string())),
        }
    }
    Ok(Landed { record, record_commit, updated_worktrees: updated, stale_worktrees: stale })
}

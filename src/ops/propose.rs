//! Proposing: a worktree's content becomes an agent's proposal in a run, in one call.
//!
//! The steps are the pool's (`pool::proposal`: the worktree's tree without touching its index,
//! the commit on the run's base, settling the proposal ref) and the run's (its rules, its event
//! chain); this module puts them in their order so that every caller proposes the same way:
//! the rules first ([`rules::may_propose`], the round limit, the message), then the proposal event
//! appended to the agent's chain — with the run re-read and refused if it ended meanwhile — and
//! only then the proposal ref moved to what the tally counts. A crash between the event and the
//! ref is completed by the next reader (`pool::proposal::settle`).
//!
//! Then the proposal is checked against the others ([`clashes`]): a three-way merge of its tree
//! with each other proposal of the run, and with the run's branch when it moved since the base,
//! names the files they change differently. Those would stop a landing that takes both (an
//! aggregate landing, or any landing onto the moved branch); the proposer is told now, with the
//! files, rather than the landing finding them. The check writes nothing: a crash in it leaves the
//! proposal recorded, as after step 2.

use crate::devrun::events::{self, EventRecord, PROPOSAL_KIND};
use crate::devrun::rules::{self, Carried, Refusal};
use crate::devrun::{RunDef, RunError, RunMeta, proposal_ref};
use crate::engines::EngineError;
use crate::engines::development::ProposalTally;
use crate::identity::{AgentKey, Roster};
use crate::pool::{PoolError, merge, proposal};
use crate::runtime::SemanticPayload;
use crate::store::Store;
use gix::ObjectId;
use std::path::Path;
use thiserror::Error;

/// What to propose.
#[derive(Clone, Copy)]
pub struct Ask<'a> {
    /// The proposer.
    pub agent: &'a str,
    /// Its key (the event is signed with it).
    pub key: &'a AgentKey,
    /// The worktree whose content is proposed.
    pub workdir: &'a Path,
    /// The proposal's message (`None`: one naming the proposer and the goal).
    pub message: Option<&'a str>,
    /// The time the budget is checked at (the event is stamped when it is appended).
    pub now_ms: u64,
    /// An abstention (`--abstain`): the slice needs no change, and the message says why. The
    /// worktree must hold the run's base unchanged; what is recorded is a proposal of the base's
    /// tree, which the run reads as an abstention ([`crate::devrun::view::RunView::abstained`]).
    pub abstain: bool,
}

/// The proposal recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposed {
    /// Its commit (the run's base is its parent).
    pub commit: ObjectId,
    /// Its tree.
    pub tree: ObjectId,
    /// Which round of the proposer's it is.
    pub round: u64,
    /// The proposal it replaces, as the tally counted it.
    pub previous: Option<ProposalTally>,
    /// What became of the previous proposal's endorsements.
    pub carried: Carried,
    /// The proposal ref holds another commit than this one: a later proposal of the same agent
    /// counts instead.
    pub superseded: bool,
    /// What it cannot land together with ([`clashes`]).
    pub clashes: Vec<Clash>,
    /// Why it could not be checked against the others (the proposal is recorded all the same).
    pub unchecked: Option<String>,
}

/// A side a proposal cannot land together with, and the files both change differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    /// The other side.
    pub against: Against,
    /// The files, sorted.
    pub paths: Vec<String>,
}

/// The other side of a [`Clash`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Against {
    /// Another agent's proposal in the run, as its proposal ref holds it.
    Proposal {
        /// The agent.
        agent: String,
        /// Its proposal's commit.
        commit: ObjectId,
    },
    /// The run's branch, moved on from the run's base.
    Branch {
        /// The branch.
        name: String,
        /// Its tip.
        tip: ObjectId,
    },
}

/// Why a proposal was not recorded.
#[derive(Debug, Error)]
pub enum ProposeError {
    /// A rule refused it.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The run could not be read or written.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The worktree, the commit or the proposal ref.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// The run's events do not replay.
    #[error("run {run}: {source}")]
    Replay {
        /// The run.
        run: String,
        /// What the engine said.
        source: EngineError,
    },
}

/// Proposes `ask.workdir`'s content as `ask.agent`'s proposal in the run `meta` describes.
pub fn propose(store: &Store, roster: &Roster, meta: &RunMeta, ask: Ask<'_>) -> Result<Proposed, ProposeError> {
    rules::may_propose(meta, ask.agent, ask.now_ms)?;
    let def = &meta.def;
    let tree = proposal::worktree_tree(ask.workdir)?;
    ensure_changes(store, def, tree, (ask.abstain, ask.message))?;
    let (round, previous) = next_round(store, roster, def, ask.agent, tree)?;
    rules::ensure_round(def, round)?;
    let message = rules::proposal_message(ask.message, ask.agent, def)?;
    let len = proposal::tree_size(ask.workdir, tree)?;
    let commit = proposal::write_commit(store, tree, def.base_id()?, ask.agent, &message)?;
    let payload = SemanticPayload::ExternalBytes { digest: tree.to_string(), len };
    let record = EventRecord {
        event: events::event(&def.id, ask.agent, round.saturating_sub(1), payload),
        at_ms: crate::devrun::now_ms(),
        commit: commit.to_string(),
        proposer: None,
        note: Some(message),
    };
    let id = def.id.clone();
    // Step 1: the event.
    events::append(store, ask.key, PROPOSAL_KIND, &record, &[], || {
        crate::devrun::load_meta(store, roster, &id)?.ensure_open()?;
        Ok(Vec::new())
    })?;
    // Step 2: the proposal ref, to the proposal the tally counts.
    let loaded = events::load(store, roster, &def.id)?;
    let runtime = replay(def, store, &loaded)?;
    crate::devrun::settle::settle(store, def, &loaded, &runtime, Some(ask.agent))?;
    let superseded = store.tip(&proposal_ref(&def.id, ask.agent)).map_err(RunError::from)? != Some(commit);
    let carried = rules::carried_endorsements(previous.as_ref(), &tree.to_string());
    let (clashes, unchecked) = match clashes(store, def, ask.agent, tree) {
        Ok(clashes) => (clashes, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    Ok(Proposed { commit, tree, round, previous, carried, superseded, clashes, unchecked })
}

/// What `agent`'s proposal of `tree` in the run `def` cannot land together with: each other
/// agent's proposal (its proposal ref's commit) and the run's branch where it moved since the
/// base, with the files a three-way merge on the base leaves in conflict ([`merge::conflicting_paths`]).
/// An abstention, or a proposal of the same tree, clashes with nothing.
pub fn clashes(store: &Store, def: &RunDef, agent: &str, tree: ObjectId) -> Result<Vec<Clash>, ProposeError> {
    let repo = store.repo();
    let base = def.base_id()?;
    let base_tree = crate::pool::check::tree_of(repo, base)?;
    let tree_of = |commit: ObjectId| crate::pool::check::tree_of(repo, commit);
    let mut out = Vec::new();
    let tip = store.tip(&format!("refs/heads/{}", def.branch)).map_err(RunError::from)?;
    if let Some(tip) = tip.filter(|t| *t != base) {
        let paths = merge::conflicting_paths(repo, base_tree, (tree, tree_of(tip)?), (agent, &def.branch))?;
        if !paths.is_empty() {
            out.push(Clash { against: Against::Branch { name: def.branch.clone(), tip }, paths });
        }
    }
    let prefix = crate::devrun::proposals_prefix(&def.id);
    for info in store.list(&prefix).map_err(RunError::from)? {
        let Some(other) = info.name.strip_prefix(&prefix).filter(|o| *o != agent) else { continue };
        let Some(commit) = info.target.as_deref().and_then(|t| ObjectId::from_hex(t.as_bytes()).ok()) else { continue };
        let paths = merge::conflicting_paths(repo, base_tree, (tree, tree_of(commit)?), (agent, other))?;
        if !paths.is_empty() {
            out.push(Clash { against: Against::Proposal { agent: other.to_string(), commit }, paths });
        }
    }
    Ok(out)
}

/// In an aggregate run a proposal must change something and an abstention nothing; abstaining
/// is an aggregate run's answer only.
fn ensure_changes(
    store: &Store,
    def: &RunDef,
    tree: ObjectId,
    (abstain, message): (bool, Option<&str>),
) -> Result<(), ProposeError> {
    let sliced = def.slices.is_some();
    if abstain && message.is_none() {
        return Err(Refusal::EmptyMessage.into());
    }
    if !sliced && !abstain {
        return Ok(());
    }
    if !sliced {
        return Err(Refusal::AbstainWithoutSlices { run: def.id.clone() }.into());
    }
    let base_tree = crate::pool::check::tree_of(store.repo(), def.base_id()?)?;
    match (abstain, tree == base_tree) {
        (false, true) => Err(Refusal::NothingToPropose { run: def.id.clone() }.into()),
        (true, false) => {
            let paths = proposal::changed_paths(store.common_dir(), base_tree, tree)?;
            Err(Refusal::AbstainWithChanges { run: def.id.clone(), paths }.into())
        }
        _ => Ok(()),
    }
}

fn replay(
    def: &RunDef,
    store: &Store,
    loaded: &events::RunEvents,
) -> Result<crate::runtime::MasRuntime<crate::engines::DevelopmentEngine>, ProposeError> {
    events::replay(def, events::self_endorse_allowed(store), loaded)
        .map_err(|source| ProposeError::Replay { run: def.id.clone(), source })
}

/// The round a proposal of `tree` would be for `agent`, and the agent's current proposal.
fn next_round(
    store: &Store,
    roster: &Roster,
    def: &RunDef,
    agent: &str,
    tree: ObjectId,
) -> Result<(u64, Option<ProposalTally>), ProposeError> {
    let loaded = events::load(store, roster, &def.id)?;
    let runtime = replay(def, store, &loaded)?;
    let engine = runtime.engine();
    Ok((engine.round_of_next(agent, &tree.to_string()), engine.tally().proposal(agent).cloned()))
}

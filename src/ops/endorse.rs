//! Endorsing: judging another agent's proposal and recording the verdict, in two calls around the
//! check.
//!
//! [`prepare`] applies the rules ([`rules::may_endorse`], how to judge) and finds the proposal the
//! tally counts — its ref settled first, and refused when the ref holds other content than the
//! proposal's event names; the caller then runs the check, if one is asked for, in a scratch
//! checkout of that tree (`pool::check`), and [`record`] appends the verdict to the endorser's
//! chain (refused if the run ended meanwhile) and says where the proposal stands after it. The
//! check runs between the two because it may take an hour and its progress is the caller's to
//! show.

use crate::devrun::events::{self, ENDORSEMENT_KIND, EventRecord, RunEvents};
use crate::devrun::rules::{self, EndorseAsk, EndorseMode, Refusal};
use crate::devrun::{RunError, RunMeta, proposal_ref};
use crate::engines::development::Judgement;
use crate::engines::{DevelopmentEngine, EngineError};
use crate::identity::{AgentKey, Roster};
use crate::pool::check::CheckRun;
use crate::pool::{PoolError, proposal};
use crate::runtime::{EventOutcome, MasRuntime, SemanticPayload};
use crate::store::Store;
use gix::ObjectId;
use thiserror::Error;

/// Who endorses whom, and how.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// The endorser.
    pub endorser: &'a str,
    /// Whose proposal.
    pub proposer: &'a str,
    /// The flags that say how to judge.
    pub how: EndorseAsk<'a>,
    /// Whether the repository allows self-endorsement.
    pub allow_self: bool,
    /// The time the budget is checked at.
    pub now_ms: u64,
}

/// The proposal to judge, and how.
pub struct Prepared {
    /// The proposal's tree.
    pub tree: String,
    /// The same, as an id.
    pub tree_id: ObjectId,
    /// The proposal's commit.
    pub commit: String,
    /// How to judge it.
    pub mode: EndorseMode,
    runtime: MasRuntime<DevelopmentEngine>,
}

/// A verdict to record.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The endorsement's payload.
    pub payload: SemanticPayload,
    /// Files kept beside the record (the check's output).
    pub extra: Vec<(String, ObjectId)>,
    /// The record's note (the tail of a failed check's output).
    pub note: Option<String>,
}

impl Verdict {
    /// A review's verdict.
    pub fn review(tree: &str, accept: bool, reason: String) -> Verdict {
        Verdict {
            payload: SemanticPayload::Review { subject: tree.into(), accept, reason },
            extra: Vec::new(),
            note: None,
        }
    }

    /// A check's verdict, its output stored in the repository to be kept beside the record.
    pub fn check(store: &Store, tree: &str, run: &CheckRun) -> Result<Verdict, EndorseError> {
        let output =
            store.repo().write_blob(&run.output).map_err(|e| EndorseError::Output { why: e.to_string() })?.detach();
        Ok(Verdict::of_check(tree, run, output))
    }

    /// A check's verdict, its output already stored as the blob `output`: the tail of the output
    /// is the note of a failed check only.
    pub fn of_check(tree: &str, run: &CheckRun, output: ObjectId) -> Verdict {
        let s = &run.summary;
        Verdict {
            payload: SemanticPayload::ToolResult {
                command: s.command.clone(),
                exit_status: s.exit_status,
                duration_ms: s.duration_ms,
                output_digest: s.output_digest.clone(),
                subject: tree.into(),
                differential: run.delta.clone(),
            },
            extra: vec![("output.txt".to_string(), output)],
            note: (!s.passed()).then(|| run.tail(20)),
        }
    }
}

/// The endorsement recorded, and where the proposal stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endorsed {
    /// What it judged.
    pub judgement: Judgement,
    /// Why the tally does not count it, when it does not.
    pub not_counted: Option<String>,
    /// The proposal's valid endorsers now.
    pub valid_endorsements: Vec<String>,
    /// The run's quorum.
    pub quorum: u32,
    /// Whether the proposal is at quorum now.
    pub at_quorum: bool,
}

/// Why an endorsement was not recorded.
#[derive(Debug, Error)]
pub enum EndorseError {
    /// A rule refused it.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The run could not be read or written.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The proposal ref.
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
    /// The accepted proposal's event is not a proposal of a tree.
    #[error("the accepted proposal is not a tree")]
    NotATree {
        /// The event's payload kind.
        kind: String,
    },
    /// The tree it names is not an object id.
    #[error("{tree:?} is not a tree id")]
    BadTreeId {
        /// What it names.
        tree: String,
    },
    /// The check's output could not be stored.
    #[error("storing the check's output: {why}")]
    Output {
        /// What git said.
        why: String,
    },
    /// The payload to record is not a verdict.
    #[error("the endorsement to record is not a verdict")]
    NotAVerdict,
}

/// Applies the rules and finds the proposal to judge.
pub fn prepare(store: &Store, roster: &Roster, meta: &RunMeta, ask: Ask<'_>) -> Result<Prepared, EndorseError> {
    rules::may_endorse(meta, ask.endorser, ask.proposer, ask.allow_self, ask.now_ms)?;
    let def = &meta.def;
    let loaded = events::load(store, roster, &def.id)?;
    let runtime = events::replay(def, ask.allow_self, &loaded)
        .map_err(|source| EndorseError::Replay { run: def.id.clone(), source })?;
    let (tree, commit) = proposal_of(&loaded, &runtime, ask.proposer, &def.id)?;
    // A proposal whose ref a crash left behind its event is completed first.
    crate::devrun::settle::settle(store, def, &loaded, &runtime, Some(ask.proposer))?;
    // The artifact in the pool must be what the event says it is.
    let found = match store.tip(&proposal_ref(&def.id, ask.proposer)).map_err(RunError::from)? {
        Some(tip) => Some(proposal::tree_of(store, tip)?.to_string()),
        None => None,
    };
    rules::ensure_artifact(ask.proposer, &tree, found.as_deref())?;
    let tree_id = ObjectId::from_hex(tree.as_bytes()).map_err(|_| EndorseError::BadTreeId { tree: tree.clone() })?;
    // An aggregate run's proposal of the base's tree is an abstention: nothing to judge.
    if def.slices.is_some() && crate::pool::check::tree_of(store.repo(), def.base_id()?)? == tree_id {
        return Err(Refusal::Abstained { proposer: ask.proposer.into(), run: def.id.clone() }.into());
    }
    let mode = rules::endorse_mode(ask.how, def, || {
        crate::pool::check::check_command(store, ask.how.check, def.check.as_deref())
    })?;
    Ok(Prepared { tree, tree_id, commit, mode, runtime })
}

/// The tree and commit of `proposer`'s proposal that the tally counts.
fn proposal_of(
    loaded: &RunEvents,
    runtime: &MasRuntime<DevelopmentEngine>,
    proposer: &str,
    run: &str,
) -> Result<(String, String), EndorseError> {
    let Some(stamped) = events::accepted_proposal(runtime, loaded, proposer) else {
        return Err(Refusal::NoProposal { proposer: proposer.into(), run: run.into() }.into());
    };
    let payload = &stamped.record.event.payload;
    let tree = rules::proposed_tree(payload).ok_or_else(|| EndorseError::NotATree { kind: payload.kind().into() })?;
    Ok((tree.to_string(), stamped.record.commit.clone()))
}

/// Records `verdict` on the prepared proposal as `ask.endorser`'s endorsement.
pub fn record(
    store: &Store,
    roster: &Roster,
    meta: &RunMeta,
    key: &AgentKey,
    ask: Ask<'_>,
    prepared: Prepared,
    verdict: Verdict,
) -> Result<Endorsed, EndorseError> {
    let def = &meta.def;
    let judgement = rules::verdict(def, &verdict.payload).ok_or(EndorseError::NotAVerdict)?;
    let mut runtime = prepared.runtime;
    let epoch = rules::endorsement_epoch(runtime.engine().proposals().get(ask.proposer));
    let record = EventRecord {
        event: events::event(&def.id, ask.endorser, epoch, verdict.payload),
        at_ms: crate::devrun::now_ms(),
        commit: prepared.commit,
        proposer: Some(ask.proposer.into()),
        note: verdict.note,
    };
    let id = def.id.clone();
    events::append(store, key, ENDORSEMENT_KIND, &record, &verdict.extra, || {
        crate::devrun::load_meta(store, roster, &id)?.ensure_open()?;
        Ok(Vec::new())
    })?;
    let not_counted = match runtime.apply(record.event) {
        EventOutcome::Rejected(reason) => Some(reason.to_string()),
        _ => None,
    };
    let tally = runtime.engine().tally();
    let now = tally.proposal(ask.proposer);
    Ok(Endorsed {
        judgement,
        not_counted,
        valid_endorsements: now.map(|p| p.endorsers.clone()).unwrap_or_default(),
        quorum: tally.quorum,
        at_quorum: now.is_some_and(|p| p.at_quorum),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devrun::CheckSummary;

    #[test]
    fn a_checks_verdict_keeps_its_output_and_notes_the_tail_of_a_failure() {
        let def: crate::devrun::RunDef = serde_json::from_value(serde_json::json!({
            "id": "r1", "goal": "g", "class": "development", "roster": ["alice", "bob"], "quorum": 1,
            "branch": "main", "base": "0".repeat(40), "max_rounds": null, "budget_ms": null, "check": null,
            "created_at_ms": 1, "started_by": "alice"
        }))
        .unwrap();
        let output = ObjectId::null(gix::hash::Kind::Sha1);
        let lines: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let tail: String = (11..=30).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n");
        let table = [(Some(0), None, "passed"), (Some(2), Some(tail.clone()), "failed"), (None, Some(tail), "failed")];
        for (exit_status, note, judged) in table {
            let run = CheckRun {
                summary: CheckSummary {
                    command: "make".into(),
                    exit_status,
                    duration_ms: 7,
                    output_digest: "sha256:x".into(),
                },
                output: lines.clone().into_bytes(),
                timed_out: false,
                report: None,
                delta: None,
                dir: std::path::PathBuf::new(),
            };
            let v = Verdict::of_check("t", &run, output);
            assert_eq!(v.note, note, "{exit_status:?}");
            assert_eq!(v.extra, [("output.txt".to_string(), output)]);
            assert_eq!(rules::verdict(&def, &v.payload).map(|j| j.name()), Some(judged), "{exit_status:?}");
        }
        let review = Verdict::review("t", false, "noise".into());
        assert!(review.extra.is_empty() && review.note.is_none());
        assert_eq!(rules::verdict(&def, &review.payload), Some(Judgement::Rejected { reason: "noise".into() }));
    }
}

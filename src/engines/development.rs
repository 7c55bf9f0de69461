//! The development engine: proposals of code artifacts, endorsements bound to content, a quorum.
//!
//! Participants send two kinds of events:
//!
//! - a **proposal**, [`SemanticPayload::ExternalBytes`] whose digest is the proposed tree's id: the
//!   sender's artifact is now that tree, replacing any earlier one;
//! - an **endorsement**, [`SemanticPayload::ToolResult`] (a check that ran against a tree: passing
//!   when it exited 0, a failed endorsement otherwise) or [`SemanticPayload::Review`] (a verdict by
//!   review alone: an acceptance, or a rejection with its reason). Its subject is a tree id.
//!
//! Decisions encoded here (the published implementation's defects are not copied):
//!
//! - **Endorsements bind to content.** An endorsement names a tree, not a commit or an agent, and
//!   counts for every current proposal with that tree. A re-proposal of identical content keeps
//!   its endorsements; changed content voids them (they stay recorded, as voided).
//! - **One verdict per endorser and tree; the latest counts.** An endorser may endorse several
//!   proposals (complementary work needs that), but a second verdict on the same tree replaces the
//!   first.
//! - **Self-endorsement** counts only when the configuration allows it. An endorsement of the
//!   sender's own current tree is refused outright; one that becomes self-endorsement later (the
//!   endorser proposes identical content) is kept but not counted.
//! - **Rounds are content changes.** An agent's round count is the number of distinct trees it has
//!   proposed in sequence (re-proposing identical content is not a new round); the engine's epoch
//!   is the highest round count. With `max_rounds`, a proposal that would start round
//!   `max_rounds + 1` is refused as past the horizon.
//! - **The leader** is the proposal with the most valid endorsements (at least one); ties go to
//!   the lexicographically smallest agent id — the first, not the last. A proposal is at quorum
//!   when its valid endorsements reach the quorum (capped at the roster's size).
//! - **Quorum does not close the run.** [`EventOutcome::Finalized`] marks the event that brought a
//!   leader to quorum; events keep being accepted afterwards, because a re-proposal can still void
//!   endorsements until the run lands. Landing, not the engine, ends a run.

use crate::runtime::{
    CoordinationEngine, EpochBook, EpochSummary, EventOutcome, PatternKind, RejectReason, SemanticEvent,
    SemanticPayload,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

use super::EngineError;

/// How a development run counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DevelopmentConfig {
    /// The participants (any order; the engine sorts them).
    pub roster: Vec<String>,
    /// Valid endorsements a proposal needs; capped at the roster's size.
    pub quorum: u32,
    /// The most rounds (distinct proposals) one agent may make.
    pub max_rounds: Option<u64>,
    /// Whether an endorsement of one's own proposal counts.
    pub allow_self_endorse: bool,
}

/// An agent's current proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProposalState {
    /// The proposed tree.
    pub tree: String,
    /// Its size as announced.
    pub len: u64,
    /// How many distinct contents the agent has proposed.
    pub rounds: u64,
    /// The trees it proposed before the current one, oldest first.
    pub earlier: Vec<String>,
    /// The event that made it current.
    pub event_id: String,
}

/// One endorser's latest verdict on one tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Judgement {
    /// A check ran and exited 0.
    Passed {
        /// The command.
        command: String,
        /// Wall time.
        duration_ms: u64,
        /// Output digest.
        output_digest: String,
    },
    /// A check ran and failed (non-zero, killed, or timed out).
    Failed {
        /// The command.
        command: String,
        /// Its exit status (`None`: killed or timed out).
        exit_status: Option<i32>,
        /// Wall time.
        duration_ms: u64,
        /// Output digest.
        output_digest: String,
    },
    /// Accepted by review alone, no tool run.
    Accepted {
        /// The reviewer's note.
        reason: String,
    },
    /// Rejected by review.
    Rejected {
        /// Why.
        reason: String,
    },
}

impl Judgement {
    /// Whether it endorses.
    pub fn endorses(&self) -> bool {
        matches!(self, Judgement::Passed { .. } | Judgement::Accepted { .. })
    }

    /// Whether a check ran (a quality signal).
    pub fn is_check(&self) -> bool {
        matches!(self, Judgement::Passed { .. } | Judgement::Failed { .. })
    }
}

/// A verdict as the tally shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerdictView {
    /// Who gave it.
    pub endorser: String,
    /// The tree.
    pub tree: String,
    /// What it says.
    #[serde(flatten)]
    pub judgement: Judgement,
    /// True when it is the proposer's own verdict (not counted unless self-endorsement is allowed).
    pub own: bool,
}

/// One proposal in the tally.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProposalTally {
    /// The proposer.
    pub agent: String,
    /// Its current tree.
    pub tree: String,
    /// Its size as announced.
    pub len: u64,
    /// Its round count.
    pub rounds: u64,
    /// Valid endorsers, sorted.
    pub endorsers: Vec<String>,
    /// Every latest verdict on the current tree, by endorser.
    pub verdicts: Vec<VerdictView>,
    /// Whether its valid endorsements reach the quorum.
    pub at_quorum: bool,
}

impl ProposalTally {
    /// (passed, total) over the checks that ran on the current tree.
    pub fn checks(&self) -> (u64, u64) {
        let checks = self.verdicts.iter().filter(|v| v.judgement.is_check());
        let (mut passed, mut total) = (0, 0);
        for v in checks {
            total += 1;
            if matches!(v.judgement, Judgement::Passed { .. }) {
                passed += 1;
            }
        }
        (passed, total)
    }

    /// Latest failed checks on the current tree.
    pub fn failures(&self) -> impl Iterator<Item = &VerdictView> {
        self.verdicts.iter().filter(|v| matches!(v.judgement, Judgement::Failed { .. }))
    }

    /// Latest rejections of the current tree.
    pub fn rejections(&self) -> impl Iterator<Item = &VerdictView> {
        self.verdicts.iter().filter(|v| matches!(v.judgement, Judgement::Rejected { .. }))
    }
}

/// A verdict on content its proposer has since replaced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VoidedVerdict {
    /// Whose earlier proposal it was about.
    pub proposer: String,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: VerdictView,
}

/// The state of a development run, derived from its events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// The quorum in force.
    pub quorum: u32,
    /// The highest round count.
    pub rounds: u64,
    /// The round limit.
    pub max_rounds: Option<u64>,
    /// Proposals in agent order.
    pub proposals: Vec<ProposalTally>,
    /// The leader, if any proposal has a valid endorsement.
    pub leader: Option<String>,
    /// Agents whose proposals are at quorum, in agent order.
    pub at_quorum: Vec<String>,
    /// Verdicts voided by a re-proposal.
    pub voided: Vec<VoidedVerdict>,
}

impl Tally {
    /// The proposal of `agent`.
    pub fn proposal(&self, agent: &str) -> Option<&ProposalTally> {
        self.proposals.iter().find(|p| p.agent == agent)
    }

    /// Whether the leader is at quorum.
    pub fn quorum_reached(&self) -> bool {
        self.leader.as_deref().is_some_and(|l| self.at_quorum.iter().any(|a| a == l))
    }
}

/// The development class's engine.
#[derive(Debug, Clone)]
pub struct DevelopmentEngine {
    roster: Vec<String>,
    quorum: u32,
    max_rounds: Option<u64>,
    allow_self_endorse: bool,
    book: EpochBook,
    proposals: BTreeMap<String, ProposalState>,
    /// tree → endorser → that endorser's latest verdict on the tree.
    verdicts: BTreeMap<String, BTreeMap<String, Judgement>>,
    /// Agents whose current proposal is at quorum, kept up to date event by event.
    at_quorum: BTreeSet<String>,
}

fn is_object_id(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl DevelopmentEngine {
    /// An engine for `config`.
    pub fn new(config: DevelopmentConfig) -> Result<Self, EngineError> {
        if config.roster.is_empty() {
            return Err(EngineError::EmptyRoster);
        }
        let mut roster = config.roster.clone();
        roster.sort();
        let unique: BTreeSet<&String> = roster.iter().collect();
        if unique.len() != roster.len() {
            let name = roster.windows(2).find(|w| w[0] == w[1]).map(|w| w[0].clone()).unwrap_or_default();
            return Err(EngineError::DuplicateParticipant { name });
        }
        if config.quorum == 0 {
            return Err(super::bad_config("quorum", "must be at least 1"));
        }
        if config.max_rounds == Some(0) {
            return Err(super::bad_config("max_rounds", "must be at least 1"));
        }
        let size = u32::try_from(roster.len()).unwrap_or(u32::MAX);
        Ok(DevelopmentEngine {
            quorum: config.quorum.min(size),
            max_rounds: config.max_rounds,
            allow_self_endorse: config.allow_self_endorse,
            book: EpochBook::new(PatternKind::Development, 0, None),
            roster,
            proposals: BTreeMap::new(),
            verdicts: BTreeMap::new(),
            at_quorum: BTreeSet::new(),
        })
    }

    /// The quorum in force.
    pub fn quorum(&self) -> u32 {
        self.quorum
    }

    /// Each agent's current proposal.
    pub fn proposals(&self) -> &BTreeMap<String, ProposalState> {
        &self.proposals
    }

    /// The round `agent`'s next proposal of content `tree` would be in (its count after it).
    pub fn round_of_next(&self, agent: &str, tree: &str) -> u64 {
        match self.proposals.get(agent) {
            Some(p) if p.tree == tree => p.rounds,
            Some(p) => p.rounds + 1,
            None => 1,
        }
    }

    fn valid_count(&self, proposer: &str, tree: &str) -> u64 {
        self.verdicts
            .get(tree)
            .into_iter()
            .flatten()
            .filter(|(endorser, j)| j.endorses() && self.counts(proposer, endorser))
            .count() as u64
    }

    fn counts(&self, proposer: &str, endorser: &str) -> bool {
        endorser != proposer || self.allow_self_endorse
    }

    /// The state now.
    pub fn tally(&self) -> Tally {
        let mut proposals = Vec::new();
        for (agent, p) in &self.proposals {
            let verdicts: Vec<VerdictView> = self
                .verdicts
                .get(&p.tree)
                .into_iter()
                .flatten()
                .map(|(endorser, judgement)| VerdictView {
                    endorser: endorser.clone(),
                    tree: p.tree.clone(),
                    judgement: judgement.clone(),
                    own: endorser == agent,
                })
                .collect();
            let endorsers: Vec<String> = verdicts
                .iter()
                .filter(|v| v.judgement.endorses() && self.counts(agent, &v.endorser))
                .map(|v| v.endorser.clone())
                .collect();
            let at_quorum = endorsers.len() as u64 >= u64::from(self.quorum);
            proposals.push(ProposalTally {
                agent: agent.clone(),
                tree: p.tree.clone(),
                len: p.len,
                rounds: p.rounds,
                endorsers,
                verdicts,
                at_quorum,
            });
        }
        let mut leader: Option<&ProposalTally> = None;
        for p in &proposals {
            // Strictly more: among equals the first (smallest agent id, as the map is sorted) stays.
            if !p.endorsers.is_empty() && leader.is_none_or(|l| p.endorsers.len() > l.endorsers.len()) {
                leader = Some(p);
            }
        }
        let leader = leader.map(|p| p.agent.clone());
        let at_quorum = proposals.iter().filter(|p| p.at_quorum).map(|p| p.agent.clone()).collect();
        let mut voided = Vec::new();
        for (agent, p) in &self.proposals {
            for old in p.earlier.iter().collect::<BTreeSet<_>>() {
                if *old == p.tree {
                    continue;
                }
                for (endorser, judgement) in self.verdicts.get(old).into_iter().flatten() {
                    voided.push(VoidedVerdict {
                        proposer: agent.clone(),
                        verdict: VerdictView {
                            endorser: endorser.clone(),
                            tree: old.clone(),
                            judgement: judgement.clone(),
                            own: endorser == agent,
                        },
                    });
                }
            }
        }
        Tally {
            quorum: self.quorum,
            rounds: self.epoch(),
            max_rounds: self.max_rounds,
            proposals,
            leader,
            at_quorum,
            voided,
        }
    }

    fn summary(&self, tally: &Tally) -> EpochSummary {
        let values = tally.proposals.iter().map(|p| (p.agent.clone(), p.endorsers.len() as f64)).collect();
        let metric = tally.leader.as_deref().and_then(|l| tally.proposal(l)).map(|p| p.endorsers.len() as f64);
        let mut state = BTreeMap::new();
        state.insert("quorum".to_string(), f64::from(self.quorum));
        state.insert("rounds".to_string(), tally.rounds as f64);
        EpochSummary {
            epoch: self.epoch(),
            pattern: PatternKind::Development,
            values,
            ballots: BTreeMap::new(),
            metric,
            state,
            complete: false,
        }
    }

    fn check_subject(subject: &str) -> Result<(), RejectReason> {
        if is_object_id(subject) {
            Ok(())
        } else {
            Err(RejectReason::IncompatiblePayload { why: format!("subject {subject:?} is not a tree id") })
        }
    }
}

impl CoordinationEngine for DevelopmentEngine {
    fn pattern(&self) -> PatternKind {
        PatternKind::Development
    }

    fn participants(&self) -> &[String] {
        &self.roster
    }

    fn epoch(&self) -> u64 {
        self.proposals.values().map(|p| p.rounds).max().unwrap_or(0)
    }

    fn apply(&mut self, event: &SemanticEvent) -> EventOutcome {
        let reject = EventOutcome::Rejected;
        if let Err(reason) = self.book.screen_identity(event) {
            return reject(reason);
        }
        let source = event.metadata.source.as_str();
        if !self.roster.iter().any(|a| a == source) {
            return reject(RejectReason::UnknownParticipant { source: source.to_owned() });
        }
        match &event.payload {
            SemanticPayload::ExternalBytes { digest, len } => {
                if let Err(reason) = Self::check_subject(digest) {
                    return reject(reason);
                }
                let round = self.round_of_next(source, digest);
                if let Some(max) = self.max_rounds
                    && round > max
                {
                    return reject(RejectReason::PastHorizon { epoch: round - 1, horizon: max });
                }
                let entry = self.proposals.entry(source.to_owned()).or_insert_with(|| ProposalState {
                    tree: digest.clone(),
                    len: *len,
                    rounds: 0,
                    earlier: Vec::new(),
                    event_id: String::new(),
                });
                if entry.rounds > 0 && entry.tree != *digest {
                    let old = std::mem::replace(&mut entry.tree, digest.clone());
                    entry.earlier.push(old);
                }
                entry.tree = digest.clone();
                entry.len = *len;
                entry.rounds = round;
                entry.event_id = event.metadata.event_id.clone();
            }
            SemanticPayload::ToolResult { command, exit_status, duration_ms, output_digest, subject } => {
                if let Err(reason) = Self::check_subject(subject) {
                    return reject(reason);
                }
                if !self.allow_self_endorse && self.proposals.get(source).is_some_and(|p| p.tree == *subject) {
                    return reject(RejectReason::IncompatiblePayload {
                        why: format!("{source} endorsed its own proposal and self-endorsement is off"),
                    });
                }
                let judgement = if *exit_status == Some(0) {
                    Judgement::Passed {
                        command: command.clone(),
                        duration_ms: *duration_ms,
                        output_digest: output_digest.clone(),
                    }
                } else {
                    Judgement::Failed {
                        command: command.clone(),
                        exit_status: *exit_status,
                        duration_ms: *duration_ms,
                        output_digest: output_digest.clone(),
                    }
                };
                self.verdicts.entry(subject.clone()).or_default().insert(source.to_owned(), judgement);
            }
            SemanticPayload::Review { subject, accept, reason } => {
                if let Err(r) = Self::check_subject(subject) {
                    return reject(r);
                }
                if !accept && reason.trim().is_empty() {
                    return reject(RejectReason::IncompatiblePayload { why: "a rejection needs a reason".into() });
                }
                if *accept && !self.allow_self_endorse && self.proposals.get(source).is_some_and(|p| p.tree == *subject)
                {
                    return reject(RejectReason::IncompatiblePayload {
                        why: format!("{source} endorsed its own proposal and self-endorsement is off"),
                    });
                }
                let judgement = if *accept {
                    Judgement::Accepted { reason: reason.clone() }
                } else {
                    Judgement::Rejected { reason: reason.clone() }
                };
                self.verdicts.entry(subject.clone()).or_default().insert(source.to_owned(), judgement);
            }
            other => {
                return reject(RejectReason::IncompatiblePayload {
                    why: format!(
                        "the development engine takes proposals (external bytes) and endorsements (tool results, reviews), not {}",
                        other.kind()
                    ),
                });
            }
        }
        self.book.accept(&event.metadata.event_id);
        // Only the proposals whose content the event concerns can change their standing: the
        // sender's own (a proposal, or a verdict that may be a self-endorsement) and those with
        // the judged tree. The whole tally is built only when quorum is newly reached.
        let was_held = !self.at_quorum.is_empty();
        let subject = match &event.payload {
            SemanticPayload::ExternalBytes { digest, .. } => digest,
            SemanticPayload::ToolResult { subject, .. } | SemanticPayload::Review { subject, .. } => subject,
            _ => return EventOutcome::Applied,
        };
        let affected: Vec<String> = self
            .proposals
            .iter()
            .filter(|(agent, p)| p.tree == *subject || *agent == source)
            .map(|(agent, _)| agent.clone())
            .collect();
        for agent in affected {
            let at =
                self.proposals.get(&agent).is_some_and(|p| self.valid_count(&agent, &p.tree) >= u64::from(self.quorum));
            if at {
                self.at_quorum.insert(agent);
            } else {
                self.at_quorum.remove(&agent);
            }
        }
        if !was_held && !self.at_quorum.is_empty() {
            EventOutcome::Finalized(self.summary(&self.tally()))
        } else {
            EventOutcome::Applied
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{EventMetadata, MasRuntime, replay};

    const T1: &str = "1111111111111111111111111111111111111111";
    const T2: &str = "2222222222222222222222222222222222222222";
    const T3: &str = "3333333333333333333333333333333333333333";

    fn engine(quorum: u32, max_rounds: Option<u64>, allow_self: bool) -> DevelopmentEngine {
        DevelopmentEngine::new(DevelopmentConfig {
            roster: vec!["carol".into(), "alice".into(), "bob".into()],
            quorum,
            max_rounds,
            allow_self_endorse: allow_self,
        })
        .unwrap()
    }

    struct Ids(u32);
    impl Ids {
        fn meta(&mut self, source: &str) -> EventMetadata {
            self.0 += 1;
            EventMetadata {
                event_id: format!("e{}", self.0),
                correlation_id: "r1".into(),
                epoch: 0,
                source: source.into(),
            }
        }
        fn propose(&mut self, who: &str, tree: &str) -> SemanticEvent {
            SemanticEvent {
                pattern: PatternKind::Development,
                metadata: self.meta(who),
                payload: SemanticPayload::ExternalBytes { digest: tree.into(), len: 10 },
            }
        }
        fn check(&mut self, who: &str, tree: &str, exit: Option<i32>) -> SemanticEvent {
            SemanticEvent {
                pattern: PatternKind::Development,
                metadata: self.meta(who),
                payload: SemanticPayload::ToolResult {
                    command: "sh check.sh".into(),
                    exit_status: exit,
                    duration_ms: 5,
                    output_digest: "sha256:00".into(),
                    subject: tree.into(),
                },
            }
        }
        fn review(&mut self, who: &str, tree: &str, accept: bool, reason: &str) -> SemanticEvent {
            SemanticEvent {
                pattern: PatternKind::Development,
                metadata: self.meta(who),
                payload: SemanticPayload::Review { subject: tree.into(), accept, reason: reason.into() },
            }
        }
    }

    fn code(outcome: &EventOutcome) -> &'static str {
        match outcome {
            EventOutcome::Rejected(r) => r.code(),
            EventOutcome::Applied => "applied",
            EventOutcome::Finalized(_) => "finalized",
            EventOutcome::Deferred { .. } => "deferred",
        }
    }

    #[test]
    fn quorum_leader_and_the_tie_goes_to_the_first_agent() {
        let mut ids = Ids(0);
        let mut rt = MasRuntime::new(engine(2, None, false));
        for e in [ids.propose("bob", T2), ids.propose("alice", T1), ids.propose("carol", T3)] {
            assert_eq!(code(&rt.apply(e)), "applied");
        }
        // One endorsement each for bob and alice: a tie, which alice (the first id) leads.
        rt.apply(ids.check("carol", T2, Some(0)));
        rt.apply(ids.check("carol", T1, Some(0)));
        let t = rt.engine().tally();
        assert_eq!(t.leader.as_deref(), Some("alice"));
        assert!(!t.quorum_reached());
        // bob reaches quorum first: the event that does it finalizes.
        assert_eq!(code(&rt.apply(ids.check("alice", T2, Some(0)))), "finalized");
        let t = rt.engine().tally();
        assert_eq!(t.leader.as_deref(), Some("bob"));
        assert_eq!(t.at_quorum, ["bob"]);
        // alice ties at quorum: the tie goes to alice, and nothing finalizes again.
        assert_eq!(code(&rt.apply(ids.check("bob", T1, Some(0)))), "applied");
        let t = rt.engine().tally();
        assert_eq!(t.leader.as_deref(), Some("alice"));
        assert_eq!(t.at_quorum, ["alice", "bob"]);
        assert_eq!(rt.counters().finalized, 1);
    }

    #[test]
    fn endorsements_bind_to_trees() {
        let mut ids = Ids(0);
        let mut rt = MasRuntime::new(engine(2, None, false));
        rt.apply(ids.propose("alice", T1));
        rt.apply(ids.check("bob", T1, Some(0)));
        rt.apply(ids.review("carol", T1, true, "read it"));
        assert_eq!(rt.engine().tally().proposal("alice").unwrap().endorsers, ["bob", "carol"]);
        // Identical content again: still endorsed, not a new round.
        rt.apply(ids.propose("alice", T1));
        let t = rt.engine().tally();
        assert_eq!(t.proposal("alice").unwrap().endorsers, ["bob", "carol"]);
        assert_eq!(t.rounds, 1);
        // Changed content: endorsements voided (and shown as such), round 2.
        rt.apply(ids.propose("alice", T2));
        let t = rt.engine().tally();
        assert!(t.proposal("alice").unwrap().endorsers.is_empty());
        assert_eq!(t.rounds, 2);
        assert_eq!(t.voided.len(), 2);
        assert!(t.voided.iter().all(|v| v.proposer == "alice" && v.verdict.tree == T1));
        // Back to the first content: its endorsements count again.
        rt.apply(ids.propose("alice", T1));
        assert_eq!(rt.engine().tally().proposal("alice").unwrap().endorsers, ["bob", "carol"]);
    }

    #[test]
    fn latest_verdict_per_endorser_and_tree_counts() {
        let mut ids = Ids(0);
        let mut rt = MasRuntime::new(engine(1, None, false));
        rt.apply(ids.propose("alice", T1));
        rt.apply(ids.check("bob", T1, Some(1)));
        let t = rt.engine().tally();
        let p = t.proposal("alice").unwrap();
        assert!(p.endorsers.is_empty());
        assert_eq!(p.failures().count(), 1);
        assert_eq!(p.checks(), (0, 1));
        assert_eq!(code(&rt.apply(ids.check("bob", T1, Some(0)))), "finalized");
        let t = rt.engine().tally();
        let p = t.proposal("alice").unwrap();
        assert_eq!(p.endorsers, ["bob"]);
        assert_eq!(p.failures().count(), 0);
        rt.apply(ids.review("bob", T1, false, "wrong rounding"));
        let t = rt.engine().tally();
        let p = t.proposal("alice").unwrap();
        assert!(p.endorsers.is_empty() && p.rejections().count() == 1);
        assert_eq!(t.leader, None);
    }

    #[test]
    fn self_endorsement_is_refused_unless_allowed() {
        let mut ids = Ids(0);
        let mut rt = MasRuntime::new(engine(1, None, false));
        rt.apply(ids.propose("alice", T1));
        assert_eq!(code(&rt.apply(ids.check("alice", T1, Some(0)))), "incompatible-payload");
        assert_eq!(code(&rt.apply(ids.review("alice", T1, true, "mine"))), "incompatible-payload");
        // Endorsing content that later becomes one's own: kept, not counted for oneself.
        rt.apply(ids.propose("bob", T2));
        rt.apply(ids.check("carol", T2, Some(0)));
        rt.apply(ids.propose("carol", T2));
        let t = rt.engine().tally();
        assert_eq!(t.proposal("bob").unwrap().endorsers, ["carol"]);
        assert!(t.proposal("carol").unwrap().endorsers.is_empty());
        assert!(t.proposal("carol").unwrap().verdicts[0].own);

        let mut rt = MasRuntime::new(engine(1, None, true));
        rt.apply(ids.propose("alice", T1));
        assert_eq!(code(&rt.apply(ids.check("alice", T1, Some(0)))), "finalized");
    }

    #[test]
    fn rounds_are_bounded_by_max_rounds() {
        let mut ids = Ids(0);
        let mut rt = MasRuntime::new(engine(2, Some(2), false));
        assert_eq!(code(&rt.apply(ids.propose("alice", T1))), "applied");
        assert_eq!(code(&rt.apply(ids.propose("alice", T1))), "applied", "same content is no new round");
        assert_eq!(code(&rt.apply(ids.propose("alice", T2))), "applied");
        assert_eq!(rt.engine().epoch(), 2);
        assert_eq!(code(&rt.apply(ids.propose("alice", T3))), "past-horizon");
        assert_eq!(code(&rt.apply(ids.propose("bob", T3))), "applied", "rounds are per agent");
        assert_eq!(rt.engine().tally().proposal("alice").unwrap().tree, T2);
    }

    #[test]
    fn bad_events_are_rejected_with_named_reasons() {
        let mut ids = Ids(0);
        let mut rt = MasRuntime::new(engine(2, None, false));
        let first = ids.propose("alice", T1);
        rt.apply(first.clone());
        assert_eq!(code(&rt.apply(first)), "duplicate-event");
        assert_eq!(code(&rt.apply(ids.propose("mallory", T1))), "unknown-participant");
        assert_eq!(code(&rt.apply(ids.propose("bob", "not-a-tree"))), "incompatible-payload");
        assert_eq!(code(&rt.apply(ids.check("bob", "zz", Some(0)))), "incompatible-payload");
        assert_eq!(code(&rt.apply(ids.review("bob", T1, false, " "))), "incompatible-payload");
        let scalar = SemanticEvent::scalar(PatternKind::Development, ids.meta("bob"), 1.0);
        assert_eq!(code(&rt.apply(scalar)), "incompatible-payload");
        let foreign = SemanticEvent::scalar(PatternKind::Preference, ids.meta("bob"), 1.0);
        assert_eq!(code(&rt.apply(foreign)), "incompatible-pattern");
    }

    #[test]
    fn replay_gives_the_same_history_and_tally() {
        let mut ids = Ids(0);
        let events = vec![
            ids.propose("alice", T1),
            ids.propose("bob", T2),
            ids.check("bob", T1, Some(0)),
            ids.check("carol", T1, Some(0)),
            ids.review("alice", T2, false, "no tests"),
            ids.propose("bob", T3),
        ];
        let rt = MasRuntime::replay(engine(2, None, false), events.clone());
        let again = MasRuntime::replay(engine(2, None, false), rt.recorded_events());
        assert_eq!(again.history(), rt.history());
        assert_eq!(again.engine().tally(), rt.engine().tally());
        let outcomes: Vec<EventOutcome> = rt.history().iter().map(|t| t.outcome.clone()).collect();
        assert_eq!(replay(engine(2, None, false), events.clone()), outcomes);
        let json = serde_json::to_string(&events).unwrap();
        let parsed: Vec<SemanticEvent> = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed, events);
    }

    #[test]
    fn the_incremental_quorum_set_matches_a_full_tally_after_every_event() {
        let trees = [T1, T2, T3];
        let agents = ["alice", "bob", "carol"];
        let mut state = 0x5eed_u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for allow_self in [false, true] {
            let mut ids = Ids(0);
            let mut engine = engine(2, None, allow_self);
            for _ in 0..600 {
                let who = agents[next(3)];
                let tree = trees[next(3)];
                let event = match next(4) {
                    0 => ids.propose(who, tree),
                    1 => ids.check(who, tree, Some(0)),
                    2 => ids.check(who, tree, Some(1)),
                    _ => ids.review(who, tree, next(2) == 0, "why"),
                };
                engine.apply(&event);
                let full: BTreeSet<String> = engine.tally().at_quorum.into_iter().collect();
                assert_eq!(engine.at_quorum, full);
            }
        }
    }

    #[test]
    fn configuration_is_checked_and_quorum_capped() {
        let config = |roster: Vec<&str>, quorum| DevelopmentConfig {
            roster: roster.into_iter().map(String::from).collect(),
            quorum,
            max_rounds: None,
            allow_self_endorse: false,
        };
        assert_eq!(DevelopmentEngine::new(config(vec![], 1)).unwrap_err(), EngineError::EmptyRoster);
        assert!(matches!(
            DevelopmentEngine::new(config(vec!["a", "a"], 1)),
            Err(EngineError::DuplicateParticipant { .. })
        ));
        assert!(DevelopmentEngine::new(config(vec!["a"], 0)).is_err());
        assert_eq!(DevelopmentEngine::new(config(vec!["a", "b"], 5)).unwrap().quorum(), 2);
    }
}

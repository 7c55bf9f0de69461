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
//!   sender's own current tree is refused outright — unless another agent proposes that very tree
//!   too: two agents who made the identical change each vouch for the other's proposal, so the
//!   endorsement is kept and counts for the other proposers, never for the sender's own. One that
//!   becomes self-endorsement later (the endorser proposes identical content) is kept and counts
//!   the same way: for the others with that tree, not for the endorser.
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
    SemanticPayload, TestDelta,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

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
    /// Whether the proposals are parts of a whole (an aggregate run's slices): a part is judged
    /// by what it breaks, not by what it fixes (`check_judgement`).
    #[serde(default)]
    pub parts: bool,
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
        /// What the proposal changed, test by test, when the runner's report could be read
        /// (it does not improve the base: it breaks, loses or fixes nothing).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delta: Option<TestDelta>,
    },
    /// A check ran and failed, and its test runner's report says the proposal improves the base:
    /// it makes failing tests pass and breaks none, while the suite still fails for other work
    /// (another slice's bug). It endorses; the merged whole must still pass before it lands.
    Improved {
        /// The command.
        command: String,
        /// Its exit status.
        exit_status: Option<i32>,
        /// Wall time.
        duration_ms: u64,
        /// Output digest.
        output_digest: String,
        /// What the proposal changed.
        delta: TestDelta,
    },
    /// A slice's check ran and failed, and its test runner's report says the slice breaks
    /// nothing the base passed and loses no suite (it may fix nothing yet: what the whole fixes
    /// is the merged tree's question). It endorses, in an aggregate run only.
    Sound {
        /// The command.
        command: String,
        /// Its exit status.
        exit_status: Option<i32>,
        /// Wall time.
        duration_ms: u64,
        /// Output digest.
        output_digest: String,
        /// What the slice changed.
        delta: TestDelta,
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
        matches!(
            self,
            Judgement::Passed { .. }
                | Judgement::Improved { .. }
                | Judgement::Sound { .. }
                | Judgement::Accepted { .. }
        )
    }

    /// Whether a check ran and failed: the endorsement records a test failure (`endorse` exits 9).
    pub fn is_test_failure(&self) -> bool {
        matches!(self, Judgement::Failed { .. })
    }

    /// Whether a check ran (a quality signal).
    pub fn is_check(&self) -> bool {
        matches!(
            self,
            Judgement::Passed { .. } | Judgement::Failed { .. } | Judgement::Improved { .. } | Judgement::Sound { .. }
        )
    }

    /// What the checked tree changed test by test, when the check's report was compared with
    /// the base's.
    pub fn delta(&self) -> Option<&TestDelta> {
        match self {
            Judgement::Failed { delta, .. } => delta.as_ref(),
            Judgement::Improved { delta, .. } | Judgement::Sound { delta, .. } => Some(delta),
            _ => None,
        }
    }

    /// Why it does not endorse, in one line (`None` when it does).
    pub fn why_not(&self) -> Option<String> {
        match self {
            Judgement::Failed { exit_status, delta, .. } => {
                let status = match exit_status {
                    Some(code) if crate::runtime::exit::signal_of(*code).is_none() => {
                        format!("the check failed with exit status {code}")
                    }
                    code => format!("the check {}", crate::runtime::exit::exited(*code)),
                };
                Some(match delta.as_ref().and_then(TestDelta::shortfall) {
                    Some(why) => format!("{status} and {why}"),
                    None => status,
                })
            }
            Judgement::Rejected { reason } => Some(format!("rejected by review: {reason}")),
            _ => None,
        }
    }

    /// What an endorsement's payload judges: a check that exited 0 passed, any other exit (or
    /// none: killed, timed out) failed; a review accepts or rejects. `None` for a payload that is
    /// not an endorsement. `parts`: the run's proposals are slices of a whole.
    pub fn of(payload: &SemanticPayload, parts: bool) -> Option<Judgement> {
        Some(match payload {
            SemanticPayload::ToolResult { command, exit_status, duration_ms, output_digest, differential, .. } => {
                let check = Check { command, exit_status: *exit_status, duration_ms: *duration_ms, output_digest };
                check_judgement(check, differential.as_ref(), parts)
            }
            SemanticPayload::Review { accept: true, reason, .. } => Judgement::Accepted { reason: reason.clone() },
            SemanticPayload::Review { accept: false, reason, .. } => Judgement::Rejected { reason: reason.clone() },
            _ => return None,
        })
    }

    /// `passed`, `failed`, `accepted` or `rejected`.
    pub fn name(&self) -> &'static str {
        match self {
            Judgement::Passed { .. } => "passed",
            Judgement::Failed { .. } => "failed",
            Judgement::Improved { .. } => "improved",
            Judgement::Sound { .. } => "sound",
            Judgement::Accepted { .. } => "accepted",
            Judgement::Rejected { .. } => "rejected",
        }
    }
}

/// A verdict as the tally shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoidedVerdict {
    /// Whose earlier proposal it was about.
    pub proposer: String,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: VerdictView,
}

/// The state of a development run, derived from its events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// An agent's position in the sorted roster.
type AgentIx = usize;
/// A tree's position in the engine's table of trees (in order of first mention).
type TreeIx = usize;

/// What the engine knows about one tree: every endorser's latest verdict on it, how many of those
/// endorse, and which agents propose it now.
#[derive(Debug, Clone, Default)]
struct TreeState {
    /// endorser → that endorser's latest verdict on the tree (roster order, as the names sort).
    verdicts: BTreeMap<AgentIx, Judgement>,
    /// How many of `verdicts` endorse.
    endorsing: u64,
    /// The agents whose current proposal is this tree.
    proposers: Vec<AgentIx>,
}

/// The development class's engine.
///
/// The state is indexed so that an event costs the same however many proposals and verdicts the
/// run holds: agents are numbered by their place in the sorted roster, trees by first mention, and
/// every tree keeps its count of endorsing verdicts and its current proposers. An event changes the
/// standing of the sender's proposal and of the proposals of the tree it names, nothing else, so
/// only those are re-counted, each in constant time. The per-agent map of [`ProposalState`] (the
/// public view) changes only on proposals.
#[derive(Debug, Clone)]
pub struct DevelopmentEngine {
    roster: Vec<String>,
    quorum: u32,
    max_rounds: Option<u64>,
    allow_self_endorse: bool,
    /// The proposals are slices of a whole.
    parts: bool,
    book: EpochBook,
    proposals: BTreeMap<String, ProposalState>,
    /// Tree id → its index in `tree_states`.
    trees: HashMap<String, TreeIx>,
    tree_states: Vec<TreeState>,
    /// Each agent's current tree.
    current: Vec<Option<TreeIx>>,
    /// Whether each agent's current proposal is at quorum, kept up to date event by event.
    at_quorum: Vec<bool>,
    /// How many entries of `at_quorum` are true.
    held: usize,
    /// The highest round count (rounds only grow).
    epoch: u64,
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
        let n = roster.len();
        Ok(DevelopmentEngine {
            quorum: config.quorum.min(size),
            max_rounds: config.max_rounds,
            allow_self_endorse: config.allow_self_endorse,
            parts: config.parts,
            book: EpochBook::new(PatternKind::Development, 0, None),
            roster,
            proposals: BTreeMap::new(),
            trees: HashMap::new(),
            tree_states: Vec::new(),
            current: vec![None; n],
            at_quorum: vec![false; n],
            held: 0,
            epoch: 0,
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

    fn agent_ix(&self, name: &str) -> Option<AgentIx> {
        self.roster.binary_search_by(|a| a.as_str().cmp(name)).ok()
    }

    /// The index of `tree`, entered in the table if it is new.
    fn tree_ix(&mut self, tree: &str) -> TreeIx {
        if let Some(&ix) = self.trees.get(tree) {
            return ix;
        }
        let ix = self.tree_states.len();
        self.tree_states.push(TreeState::default());
        self.trees.insert(tree.to_owned(), ix);
        ix
    }

    /// Valid endorsements of `proposer`'s proposal of `tree`.
    fn valid_count(&self, proposer: AgentIx, tree: TreeIx) -> u64 {
        let t = &self.tree_states[tree];
        let own = !self.allow_self_endorse && t.verdicts.get(&proposer).is_some_and(Judgement::endorses);
        t.endorsing - u64::from(own)
    }

    fn counts(&self, proposer: AgentIx, endorser: AgentIx) -> bool {
        endorser != proposer || self.allow_self_endorse
    }

    /// Records `endorser`'s latest verdict on `tree`.
    fn record_verdict(&mut self, endorser: AgentIx, tree: &str, judgement: Judgement) -> TreeIx {
        let ix = self.tree_ix(tree);
        let t = &mut self.tree_states[ix];
        let endorses = judgement.endorses();
        if t.verdicts.insert(endorser, judgement).is_some_and(|old| old.endorses()) {
            t.endorsing -= 1;
        }
        if endorses {
            t.endorsing += 1;
        }
        ix
    }

    /// Makes `tree` `agent`'s current tree in the index.
    fn set_current(&mut self, agent: AgentIx, tree: TreeIx) {
        if self.current[agent] == Some(tree) {
            return;
        }
        if let Some(old) = self.current[agent] {
            self.tree_states[old].proposers.retain(|&a| a != agent);
        }
        self.tree_states[tree].proposers.push(agent);
        self.current[agent] = Some(tree);
    }

    /// Re-counts whether `agent`'s current proposal is at quorum.
    fn refresh(&mut self, agent: AgentIx) {
        let at = self.current[agent].is_some_and(|t| self.valid_count(agent, t) >= u64::from(self.quorum));
        if at != self.at_quorum[agent] {
            self.at_quorum[agent] = at;
            if at {
                self.held += 1;
            } else {
                self.held -= 1;
            }
        }
    }

    /// Whether `source` alone proposes `subject` now (a verdict on it would endorse nobody's
    /// proposal but its own).
    fn sole_proposer(&self, source: AgentIx, subject: &str) -> bool {
        self.current[source].is_some_and(|t| {
            self.trees.get(subject) == Some(&t) && self.tree_states[t].proposers.iter().all(|&a| a == source)
        })
    }

    /// The state now.
    pub fn tally(&self) -> Tally {
        let mut proposals = Vec::new();
        for (agent, name) in self.roster.iter().enumerate() {
            let (Some(tree), Some(p)) = (self.current[agent], self.proposals.get(name)) else { continue };
            let verdicts: Vec<VerdictView> = self.tree_states[tree]
                .verdicts
                .iter()
                .map(|(&endorser, judgement)| VerdictView {
                    endorser: self.roster[endorser].clone(),
                    tree: p.tree.clone(),
                    judgement: judgement.clone(),
                    own: endorser == agent,
                })
                .collect();
            let endorsers: Vec<String> = self.tree_states[tree]
                .verdicts
                .iter()
                .filter(|(endorser, j)| j.endorses() && self.counts(agent, **endorser))
                .map(|(&endorser, _)| self.roster[endorser].clone())
                .collect();
            let at_quorum = endorsers.len() as u64 >= u64::from(self.quorum);
            proposals.push(ProposalTally {
                agent: name.clone(),
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
            // Strictly more: among equals the first (smallest agent id, as the roster is sorted) stays.
            if !p.endorsers.is_empty() && leader.is_none_or(|l| p.endorsers.len() > l.endorsers.len()) {
                leader = Some(p);
            }
        }
        let leader = leader.map(|p| p.agent.clone());
        let at_quorum = proposals.iter().filter(|p| p.at_quorum).map(|p| p.agent.clone()).collect();
        let mut voided = Vec::new();
        for (name, p) in &self.proposals {
            let Some(agent) = self.agent_ix(name) else { continue };
            for old in p.earlier.iter().collect::<BTreeSet<_>>() {
                if *old == p.tree {
                    continue;
                }
                let Some(&tree) = self.trees.get(old.as_str()) else { continue };
                for (&endorser, judgement) in &self.tree_states[tree].verdicts {
                    voided.push(VoidedVerdict {
                        proposer: name.clone(),
                        verdict: VerdictView {
                            endorser: self.roster[endorser].clone(),
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

    /// The summary of the tally now, from the counts alone (the tally's verdicts are not built):
    /// each proposal's valid endorsements, and the leader's.
    fn summary(&self) -> EpochSummary {
        let mut values = BTreeMap::new();
        let mut leader: Option<u64> = None;
        for (agent, name) in self.roster.iter().enumerate() {
            let Some(tree) = self.current[agent] else { continue };
            let count = self.valid_count(agent, tree);
            values.insert(name.clone(), count as f64);
            // Strictly more: among equals the first (smallest agent id) stays, as in the tally.
            if count > 0 && leader.is_none_or(|l| count > l) {
                leader = Some(count);
            }
        }
        let metric = leader.map(|count| count as f64);
        let mut state = BTreeMap::new();
        state.insert("quorum".to_string(), f64::from(self.quorum));
        state.insert("rounds".to_string(), self.epoch() as f64);
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
        self.epoch
    }

    fn apply(&mut self, event: &SemanticEvent) -> EventOutcome {
        match self.take(event) {
            Ok((sender, subject)) => {
                self.book.accept(&event.metadata.event_id);
                self.restand(sender, subject)
            }
            Err(reason) => EventOutcome::Rejected(reason),
        }
    }
}

impl DevelopmentEngine {
    /// Screens `event` and, when it is admissible, folds it into the state: returns the sender and
    /// the tree the event concerns. A refused event changes nothing.
    fn take(&mut self, event: &SemanticEvent) -> Result<(AgentIx, TreeIx), RejectReason> {
        self.book.screen_identity(event)?;
        let source = event.metadata.source.as_str();
        let sender =
            self.agent_ix(source).ok_or_else(|| RejectReason::UnknownParticipant { source: source.to_owned() })?;
        let tree = match &event.payload {
            SemanticPayload::ExternalBytes { digest, len } => {
                self.propose(sender, source, digest, *len, &event.metadata.event_id)?
            }
            SemanticPayload::ToolResult { command, exit_status, duration_ms, output_digest, subject, differential } => {
                Self::check_subject(subject)?;
                if !self.allow_self_endorse && self.sole_proposer(sender, subject) {
                    return Err(self_endorsement(source));
                }
                let check = Check { command, exit_status: *exit_status, duration_ms: *duration_ms, output_digest };
                let judgement = check_judgement(check, differential.as_ref(), self.parts);
                self.record_verdict(sender, subject, judgement)
            }
            SemanticPayload::Review { subject, accept, reason } => {
                Self::check_subject(subject)?;
                let own = !self.allow_self_endorse && self.sole_proposer(sender, subject);
                let judgement = review_judgement(source, *accept, reason, own)?;
                self.record_verdict(sender, subject, judgement)
            }
            other => return Err(not_development(other)),
        };
        Ok((sender, tree))
    }

    /// A proposal of `digest`: the sender's artifact is now that tree (a new round when the
    /// content changed, refused past `max_rounds`).
    fn propose(
        &mut self,
        sender: AgentIx,
        source: &str,
        digest: &str,
        len: u64,
        event_id: &str,
    ) -> Result<TreeIx, RejectReason> {
        Self::check_subject(digest)?;
        let round = self.round_of_next(source, digest);
        if let Some(max) = self.max_rounds
            && round > max
        {
            return Err(RejectReason::PastHorizon { epoch: round - 1, horizon: max });
        }
        let entry = self.proposals.entry(source.to_owned()).or_insert_with(|| ProposalState {
            tree: digest.to_owned(),
            len,
            rounds: 0,
            earlier: Vec::new(),
            event_id: String::new(),
        });
        if entry.rounds > 0 && entry.tree != digest {
            let old = std::mem::replace(&mut entry.tree, digest.to_owned());
            entry.earlier.push(old);
        }
        entry.len = len;
        entry.rounds = round;
        event_id.clone_into(&mut entry.event_id);
        self.epoch = self.epoch.max(round);
        let tree = self.tree_ix(digest);
        self.set_current(sender, tree);
        Ok(tree)
    }

    /// Re-counts the standing of the proposals an accepted event concerns; finalizes the epoch
    /// when quorum is newly reached.
    fn restand(&mut self, sender: AgentIx, subject: TreeIx) -> EventOutcome {
        // Only the proposals whose content the event concerns can change their standing: the
        // sender's own (a proposal, or a verdict that may be a self-endorsement) and those with
        // the judged tree. The whole tally is built only when quorum is newly reached.
        let was_held = self.held > 0;
        self.refresh(sender);
        for k in 0..self.tree_states[subject].proposers.len() {
            let agent = self.tree_states[subject].proposers[k];
            self.refresh(agent);
        }
        if !was_held && self.held > 0 { EventOutcome::Finalized(self.summary()) } else { EventOutcome::Applied }
    }
}

/// A check's result as its payload states it.
#[derive(Debug, Clone, Copy)]
struct Check<'a> {
    command: &'a str,
    exit_status: Option<i32>,
    duration_ms: u64,
    output_digest: &'a str,
}

/// A check's verdict: exit 0 passes; a failure whose test report shows the proposal improving
/// the base is `Improved` (it endorses); with `parts` (an aggregate run's slice), a failure whose
/// report shows the slice breaking and losing nothing is `Sound` (it endorses: a part need not
/// fix anything alone); any other failure fails — a check killed or timed out tells nothing,
/// whatever its output said so far, and a check with no report to compare (a build that failed
/// before any test ran) fails.
fn check_judgement(check: Check<'_>, differential: Option<&TestDelta>, parts: bool) -> Judgement {
    let Check { exit_status, duration_ms, .. } = check;
    let (command, output_digest) = (check.command.to_owned(), check.output_digest.to_owned());
    if exit_status == Some(0) {
        return Judgement::Passed { command, duration_ms, output_digest };
    }
    match differential {
        Some(delta) if delta.improves() && exit_status.is_some() => {
            Judgement::Improved { command, exit_status, duration_ms, output_digest, delta: delta.clone() }
        }
        Some(delta) if parts && delta.sound() && exit_status.is_some() => {
            Judgement::Sound { command, exit_status, duration_ms, output_digest, delta: delta.clone() }
        }
        _ => Judgement::Failed { command, exit_status, duration_ms, output_digest, delta: differential.cloned() },
    }
}

/// The verdict a review gives, or why it is refused: a rejection needs a reason, and an acceptance
/// of `own` content (the sender's current tree, self-endorsement not allowed) is refused.
fn review_judgement(source: &str, accept: bool, reason: &str, own: bool) -> Result<Judgement, RejectReason> {
    if !accept && reason.trim().is_empty() {
        return Err(RejectReason::IncompatiblePayload { why: "a rejection needs a reason".into() });
    }
    if accept && own {
        return Err(self_endorsement(source));
    }
    let reason = reason.to_owned();
    Ok(if accept { Judgement::Accepted { reason } } else { Judgement::Rejected { reason } })
}

/// The refusal of an endorsement of the sender's own proposal.
fn self_endorsement(source: &str) -> RejectReason {
    RejectReason::IncompatiblePayload { why: format!("{source} endorsed its own proposal and self-endorsement is off") }
}

/// The refusal of a payload the development engine does not take.
fn not_development(payload: &SemanticPayload) -> RejectReason {
    RejectReason::IncompatiblePayload {
        why: format!(
            "the development engine takes proposals (external bytes) and endorsements (tool results, reviews), not {}",
            payload.kind()
        ),
    }
}

#[cfg(test)]
#[path = "development_reference.rs"]
mod reference;

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
            parts: false,
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
                    differential: None,
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
    fn verdicts_are_judged_from_their_payloads() {
        let check =
            |exit_status| Check { command: "sh check.sh", exit_status, duration_ms: 5, output_digest: "sha256:0" };
        let checks = [(Some(0), true), (Some(1), false), (Some(-1), false), (None, false)];
        for (exit, passed) in checks {
            for parts in [false, true] {
                let j = check_judgement(check(exit), None, parts);
                assert_eq!(matches!(j, Judgement::Passed { .. }), passed, "{exit:?}");
                assert!(j.is_check());
            }
        }
        // A failed check whose report shows the proposal improving the base endorses; one that
        // breaks a test, or a check killed or timed out, does not.
        let delta = |fixed: &[&str], broken: &[&str], lost: &[&str]| TestDelta {
            format: "unittest".into(),
            fixed: fixed.iter().map(|b| b.to_string()).collect(),
            broken: broken.iter().map(|b| b.to_string()).collect(),
            lost: lost.iter().map(|b| b.to_string()).collect(),
            still_failing: 1,
        };
        let improved = check_judgement(check(Some(1)), Some(&delta(&["m.T.test_a"], &[], &[])), false);
        assert!(matches!(improved, Judgement::Improved { .. }) && improved.endorses() && improved.is_check());
        assert!(!improved.is_test_failure());
        let breaks = check_judgement(check(Some(1)), Some(&delta(&["m.T.test_a"], &["m.T.test_b"], &[])), false);
        assert!(breaks.is_test_failure() && !breaks.endorses());
        assert!(breaks.why_not().unwrap().contains("m.T.test_b"), "{:?}", breaks.why_not());
        let killed = check_judgement(check(None), Some(&delta(&["m.T.test_a"], &[], &[])), false);
        assert!(killed.is_test_failure());
        // A part (an aggregate run's slice) is judged by what it breaks: fixing nothing alone is
        // sound; breaking or losing anything, no report at all, or a kill is not. A whole
        // proposal that fixes nothing fails.
        // (fixed, broken, lost, exit, parts) → the verdict's name.
        type Row<'a> = (&'a [&'a str], &'a [&'a str], &'a [&'a str], Option<i32>, bool, &'a str);
        let table: &[Row] = &[
            (&[], &[], &[], Some(1), true, "sound"),
            (&[], &[], &[], Some(1), false, "failed"),
            (&["m.T.test_a"], &[], &[], Some(1), true, "improved"),
            (&[], &["m.T.test_b"], &[], Some(1), true, "failed"),
            (&[], &[], &["suite"], Some(1), true, "failed"),
            (&[], &[], &[], None, true, "failed"),
        ];
        for (fixed, broken, lost, exit, parts, want) in table {
            let j = check_judgement(check(*exit), Some(&delta(fixed, broken, lost)), *parts);
            assert_eq!(j.name(), *want, "{fixed:?} {broken:?} {lost:?} {exit:?} parts={parts}");
            assert_eq!(j.endorses(), *want != "failed");
        }
        assert_eq!(check_judgement(check(Some(1)), None, true).name(), "failed", "no report: it does not build");
        let accepted = |r: &str| Ok(Judgement::Accepted { reason: r.into() });
        let rejected = |r: &str| Ok(Judgement::Rejected { reason: r.into() });
        let no_reason = || Err(RejectReason::IncompatiblePayload { why: "a rejection needs a reason".into() });
        // (accept, reason, own content, outcome)
        let reviews = [
            (true, "", false, accepted("")),
            (true, "fine", true, Err(self_endorsement("alice"))),
            (false, "wrong", false, rejected("wrong")),
            (false, "wrong", true, rejected("wrong")),
            (false, "  ", false, no_reason()),
            (false, "", true, no_reason()),
        ];
        for (accept, reason, own, expected) in reviews {
            assert_eq!(
                review_judgement("alice", accept, reason, own),
                expected,
                "accept={accept} {reason:?} own={own}"
            );
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
    fn two_agents_with_the_identical_change_each_vouch_for_the_others_proposal() {
        let mut ids = Ids(0);
        let mut rt = MasRuntime::new(engine(1, None, false));
        rt.apply(ids.propose("alice", T1));
        rt.apply(ids.propose("bob", T1));
        // alice's check of T1 counts for bob's proposal of it, never for her own.
        assert_eq!(code(&rt.apply(ids.check("alice", T1, Some(0)))), "finalized");
        let t = rt.engine().tally();
        assert_eq!(t.proposal("bob").unwrap().endorsers, ["alice"]);
        assert!(t.proposal("alice").unwrap().endorsers.is_empty());
        assert_eq!(t.leader.as_deref(), Some("bob"));
        rt.apply(ids.check("bob", T1, Some(0)));
        let t = rt.engine().tally();
        assert_eq!(t.proposal("alice").unwrap().endorsers, ["bob"]);
        assert_eq!(t.leader.as_deref(), Some("alice"), "a tie goes to the first");
        // Once bob moves on, alice alone proposes T1: her verdict on it stays hers, uncounted, and
        // a new one is refused.
        rt.apply(ids.propose("bob", T2));
        let t = rt.engine().tally();
        assert_eq!(t.proposal("alice").unwrap().endorsers, ["bob"], "bob's verdict on T1 still counts for alice");
        assert_eq!(code(&rt.apply(ids.review("alice", T1, true, "mine"))), "incompatible-payload");
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
                let kept: BTreeSet<String> = engine
                    .roster
                    .iter()
                    .zip(&engine.at_quorum)
                    .filter(|(_, at)| **at)
                    .map(|(a, _)| a.clone())
                    .collect();
                assert_eq!(kept, full);
                assert_eq!(engine.held, full.len());
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
            parts: false,
        };
        assert_eq!(DevelopmentEngine::new(config(vec![], 1)).unwrap_err(), EngineError::EmptyRoster);
        assert!(matches!(
            DevelopmentEngine::new(config(vec!["a", "a"], 1)),
            Err(EngineError::DuplicateParticipant { .. })
        ));
        assert!(DevelopmentEngine::new(config(vec!["a"], 0)).is_err());
        assert_eq!(DevelopmentEngine::new(config(vec!["a", "b"], 5)).unwrap().quorum(), 2);
    }

    /// The indexed engine against the engine as it was before indexing (`reference`), on generated
    /// runs: the same outcome for every event, and the same tally, epoch and next rounds after it.
    #[test]
    fn the_indexed_engine_agrees_with_the_reference_event_for_event() {
        use super::reference::ReferenceEngine;
        let agents = ["dave", "alice", "erin", "bob", "carol", "frank"];
        let trees: Vec<String> = (1..=7).map(|i| format!("{i:x}").repeat(40)).collect();
        let (mut finalized, mut refused) = (0, BTreeSet::new());
        for seed in 1..=12_u64 {
            let mut state = 0x9e37_79b9_7f4a_7c15_u64 ^ seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
            let mut next = |n: usize| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % n as u64) as usize
            };
            let config = DevelopmentConfig {
                roster: agents.iter().map(|a| a.to_string()).collect(),
                quorum: [1, 2, 3, 9][seed as usize % 4],
                max_rounds: [None, Some(2), Some(4)][seed as usize % 3],
                allow_self_endorse: seed.is_multiple_of(2),
                parts: seed.is_multiple_of(3),
            };
            let mut fast = DevelopmentEngine::new(config.clone()).unwrap();
            let mut slow = ReferenceEngine::new(config).unwrap();
            let mut ids = Ids(0);
            let mut sent: Vec<SemanticEvent> = Vec::new();
            for step in 0..1500 {
                let who = if next(40) == 0 { "mallory" } else { agents[next(agents.len())] };
                let tree = if next(50) == 0 { "not-a-tree" } else { trees[next(trees.len())].as_str() };
                let event = match next(9) {
                    0 | 1 => ids.propose(who, tree),
                    2 | 3 => ids.check(who, tree, Some(0)),
                    4 => ids.check(who, tree, [Some(1), None][next(2)]),
                    5 => ids.review(who, tree, true, "read it"),
                    6 => ids.review(who, tree, false, ["too slow", " "][next(2)]),
                    7 if !sent.is_empty() => sent[next(sent.len())].clone(),
                    _ => SemanticEvent::scalar(PatternKind::Development, ids.meta(who), 1.0),
                };
                let (a, b) = (fast.apply(&event), slow.apply(&event));
                assert_eq!(a, b, "seed {seed}, step {step}: {event:?}");
                match &a {
                    EventOutcome::Finalized(_) => finalized += 1,
                    EventOutcome::Rejected(r) => _ = refused.insert(r.code()),
                    _ => {}
                }
                assert_eq!(fast.epoch(), slow.epoch(), "seed {seed}, step {step}");
                if step % 25 == 0 || step > 1450 {
                    assert_eq!(fast.tally(), slow.tally(), "seed {seed}, step {step}");
                    assert_eq!(fast.proposals(), slow.proposals());
                }
                for a in agents {
                    assert_eq!(fast.round_of_next(a, tree), slow.round_of_next(a, tree));
                }
                sent.push(event);
            }
            let tally = fast.tally();
            assert_eq!(tally, slow.tally());
            assert!(!tally.proposals.is_empty() && !tally.voided.is_empty(), "seed {seed}: a run worth comparing");
        }
        assert!(finalized >= 9, "quorum reached (and, in some runs, lost and reached again): {finalized}");
        let kinds = ["duplicate-event", "unknown-participant", "incompatible-payload", "past-horizon"];
        assert_eq!(refused, BTreeSet::from(kinds), "every refusal the engine makes was compared");
    }
}

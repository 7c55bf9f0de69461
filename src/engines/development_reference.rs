//! The development engine as it was before its state was indexed (agents and trees by number,
//! endorsement counts kept per tree): every event scanned every proposal and compared names. Kept,
//! for tests only, as the reference the indexed engine must agree with event for event. It shares
//! the indexed engine's judging of one payload (a check's or a review's verdict, the refusals),
//! which indexing does not touch.

use super::{
    Check, DevelopmentConfig, Judgement, ProposalState, ProposalTally, Tally, VerdictView, VoidedVerdict,
    check_judgement, not_development, review_judgement, self_endorsement,
};
use crate::engines::EngineError;
use crate::runtime::{
    CoordinationEngine, EpochBook, EpochSummary, EventOutcome, PatternKind, RejectReason, SemanticEvent,
    SemanticPayload,
};
use std::collections::{BTreeMap, BTreeSet};

/// The development engine before indexing.
#[derive(Debug, Clone)]
pub struct ReferenceEngine {
    roster: Vec<String>,
    quorum: u32,
    max_rounds: Option<u64>,
    allow_self_endorse: bool,
    parts: bool,
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

impl ReferenceEngine {
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
            return Err(crate::engines::bad_config("quorum", "must be at least 1"));
        }
        if config.max_rounds == Some(0) {
            return Err(crate::engines::bad_config("max_rounds", "must be at least 1"));
        }
        let size = u32::try_from(roster.len()).unwrap_or(u32::MAX);
        Ok(ReferenceEngine {
            quorum: config.quorum.min(size),
            max_rounds: config.max_rounds,
            allow_self_endorse: config.allow_self_endorse,
            parts: config.parts,
            book: EpochBook::new(PatternKind::Development, 0, None),
            roster,
            proposals: BTreeMap::new(),
            verdicts: BTreeMap::new(),
            at_quorum: BTreeSet::new(),
        })
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

impl CoordinationEngine for ReferenceEngine {
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
        match self.take(event) {
            Ok((source, subject)) => {
                self.book.accept(&event.metadata.event_id);
                self.restand(&source, &subject)
            }
            Err(reason) => EventOutcome::Rejected(reason),
        }
    }
}

impl ReferenceEngine {
    /// Screens `event` and, when it is admissible, folds it into the state: returns the sender and
    /// the tree the event concerns. A refused event changes nothing.
    fn take(&mut self, event: &SemanticEvent) -> Result<(String, String), RejectReason> {
        self.book.screen_identity(event)?;
        let source = event.metadata.source.as_str();
        if !self.roster.iter().any(|a| a == source) {
            return Err(RejectReason::UnknownParticipant { source: source.to_owned() });
        }
        let subject = match &event.payload {
            SemanticPayload::ExternalBytes { digest, len } => {
                self.propose(source, digest, *len, &event.metadata.event_id)?;
                digest
            }
            SemanticPayload::ToolResult { command, exit_status, duration_ms, output_digest, subject, differential } => {
                Self::check_subject(subject)?;
                if !self.allow_self_endorse && self.sole_proposer(source, subject) {
                    return Err(self_endorsement(source));
                }
                let check = Check { command, exit_status: *exit_status, duration_ms: *duration_ms, output_digest };
                let judgement = check_judgement(check, differential.as_ref(), self.parts);
                self.verdicts.entry(subject.clone()).or_default().insert(source.to_owned(), judgement);
                subject
            }
            SemanticPayload::Review { subject, accept, reason } => {
                Self::check_subject(subject)?;
                let own = !self.allow_self_endorse && self.sole_proposer(source, subject);
                let judgement = review_judgement(source, *accept, reason, own)?;
                self.verdicts.entry(subject.clone()).or_default().insert(source.to_owned(), judgement);
                subject
            }
            other => return Err(not_development(other)),
        };
        Ok((source.to_owned(), subject.clone()))
    }

    /// Whether `source` proposes `subject` now and no other agent does.
    fn sole_proposer(&self, source: &str, subject: &str) -> bool {
        self.proposals.get(source).is_some_and(|p| p.tree == subject)
            && self.proposals.iter().all(|(a, p)| a == source || p.tree != subject)
    }

    /// A proposal of `digest`: the sender's artifact is now that tree.
    fn propose(&mut self, source: &str, digest: &str, len: u64, event_id: &str) -> Result<(), RejectReason> {
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
        entry.tree = digest.to_owned();
        entry.len = len;
        entry.rounds = round;
        entry.event_id = event_id.to_owned();
        Ok(())
    }

    /// Re-counts the standing of the proposals an accepted event concerns; finalizes the epoch
    /// when quorum is newly reached.
    fn restand(&mut self, source: &str, subject: &str) -> EventOutcome {
        // Only the proposals whose content the event concerns can change their standing: the
        // sender's own (a proposal, or a verdict that may be a self-endorsement) and those with
        // the judged tree. The whole tally is built only when quorum is newly reached.
        let was_held = !self.at_quorum.is_empty();
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

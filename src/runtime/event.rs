//! The values that flow through the runtime: events in, outcomes out.
//!
//! These are stored as JSON records in a run's chains, so every type here is serde-serializable and
//! every field is plain data. Rejection reasons carry the context a person needs to see why an event
//! did not count (which epoch, which id), and [`RejectReason::code`] gives the stable kebab-case name
//! that output and counters use.

use super::PatternKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Where an event sits: its identity, its run, its epoch and who sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventMetadata {
    /// Unique per event; a second event with the same id is a duplicate.
    pub event_id: String,
    /// Groups the events of one run (typically the run id).
    pub correlation_id: String,
    /// The epoch the event belongs to.
    pub epoch: u64,
    /// The participant (agent name) that sent it.
    pub source: String,
}

/// A peer's ballot on whether the team should go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Vote {
    /// `VOTE CONTINUE`.
    Continue,
    /// `VOTE STOP`.
    Stop,
}

/// What an event says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SemanticPayload {
    /// A scalar class's announcement: the sender's next value, computed with its own rule.
    ScalarProposal {
        /// The announced value.
        value: f64,
    },
    /// A ballot for the epoch.
    Ballot {
        /// Continue or stop.
        vote: Vote,
    },
    /// An artifact held outside the event (for development: a proposal's tree).
    ExternalBytes {
        /// The artifact's content id (a git tree id for development).
        digest: String,
        /// Its size in bytes.
        len: u64,
    },
    /// The result of running a tool against a subject (for development: an endorsement).
    ToolResult {
        /// The command line that ran.
        command: String,
        /// Its exit status; `None` when it was killed by a signal or timed out.
        exit_status: Option<i32>,
        /// Wall time in milliseconds.
        duration_ms: u64,
        /// A digest of its output.
        output_digest: String,
        /// What it ran against (for development: the proposal's tree id).
        subject: String,
        /// When the check failed and its test runner's report could be read on the subject and on
        /// its base: what the subject changed, test by test.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        differential: Option<TestDelta>,
    },
    /// A reviewer's verdict on a subject without running a tool (for development: an endorsement
    /// by review alone, or a rejection with its reason).
    Review {
        /// What was reviewed (for development: the proposal's tree id).
        subject: String,
        /// True to accept, false to reject.
        accept: bool,
        /// Why (required for a rejection).
        reason: String,
    },
}

impl SemanticPayload {
    /// A short name for the payload's kind, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            SemanticPayload::ScalarProposal { .. } => "scalar-proposal",
            SemanticPayload::Ballot { .. } => "ballot",
            SemanticPayload::ExternalBytes { .. } => "external-bytes",
            SemanticPayload::ToolResult { .. } => "tool-result",
            SemanticPayload::Review { .. } => "review",
        }
    }
}

/// What a change does to a test suite, read from its runner's report on the change and on its
/// base: the tests it makes pass, the tests it makes fail, the suites in which fewer tests ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestDelta {
    /// The report's format (`libtest`, `unittest`, `pytest`, `tap`).
    pub format: String,
    /// Tests that failed on the base and pass on the change.
    pub fixed: Vec<String>,
    /// Tests that passed on the base and fail on the change.
    pub broken: Vec<String>,
    /// Suites in which fewer tests ran than on the base, or that did not finish.
    pub lost: Vec<String>,
    /// How many tests still fail on the change.
    pub still_failing: u64,
}

impl TestDelta {
    /// Whether the change improves the base: it fixes at least one test, and breaks and loses
    /// none.
    pub fn improves(&self) -> bool {
        !self.fixed.is_empty() && self.broken.is_empty() && self.lost.is_empty()
    }

    /// Whether the change breaks nothing the base passed and loses no suite, whether or not it
    /// fixes anything: what a part of a whole must be.
    pub fn sound(&self) -> bool {
        self.broken.is_empty() && self.lost.is_empty()
    }

    /// Why it does not improve the base, in one line (`None` when it does).
    pub fn shortfall(&self) -> Option<String> {
        let list = |v: &[String]| {
            let mut s = v.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
            if v.len() > 3 {
                s.push_str(&format!(" and {} more", v.len() - 3));
            }
            s
        };
        if !self.broken.is_empty() {
            Some(format!("it breaks {} test(s) that pass on the base: {}", self.broken.len(), list(&self.broken)))
        } else if !self.lost.is_empty() {
            Some(format!("fewer tests ran than on the base: {}", list(&self.lost)))
        } else if self.fixed.is_empty() {
            Some("it makes no failing test of the base pass".to_string())
        } else {
            None
        }
    }
}

/// One event: the unit the runtime applies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SemanticEvent {
    /// The class the sender believes the run is.
    pub pattern: PatternKind,
    /// Identity, run, epoch and sender.
    pub metadata: EventMetadata,
    /// What it says.
    pub payload: SemanticPayload,
}

impl SemanticEvent {
    /// A scalar announcement.
    pub fn scalar(pattern: PatternKind, metadata: EventMetadata, value: f64) -> Self {
        SemanticEvent { pattern, metadata, payload: SemanticPayload::ScalarProposal { value } }
    }

    /// A ballot.
    pub fn ballot(pattern: PatternKind, metadata: EventMetadata, vote: Vote) -> Self {
        SemanticEvent { pattern, metadata, payload: SemanticPayload::Ballot { vote } }
    }
}

/// Why an engine refused an event. Refused events are kept in the history, never applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum RejectReason {
    /// An event with this id was already accepted (or is held for a later epoch), or the sender
    /// already sent this kind of contribution for this epoch.
    DuplicateEvent {
        /// The repeated id.
        event_id: String,
    },
    /// The epoch is before the first epoch this engine ran.
    StaleEpoch {
        /// The event's epoch.
        epoch: u64,
        /// The engine's first epoch.
        first: u64,
    },
    /// The epoch was already closed by this engine.
    FinalizedEpoch {
        /// The event's epoch.
        epoch: u64,
    },
    /// The event names another class.
    IncompatiblePattern {
        /// The engine's class.
        expected: PatternKind,
        /// The event's class.
        received: PatternKind,
    },
    /// The payload is of a kind this engine does not take, or its value is out of range.
    IncompatiblePayload {
        /// What was wrong.
        why: String,
    },
    /// The sender is not in the engine's roster.
    UnknownParticipant {
        /// The sender as given.
        source: String,
    },
    /// The engine has run its last epoch; no later epoch will open. (An addition to the published
    /// reasons: without it such an event would be deferred forever.)
    PastHorizon {
        /// The event's epoch.
        epoch: u64,
        /// The first epoch that will never open.
        horizon: u64,
    },
}

impl RejectReason {
    /// The stable kebab-case name of the reason.
    pub fn code(&self) -> &'static str {
        match self {
            RejectReason::DuplicateEvent { .. } => "duplicate-event",
            RejectReason::StaleEpoch { .. } => "stale-epoch",
            RejectReason::FinalizedEpoch { .. } => "finalized-epoch",
            RejectReason::IncompatiblePattern { .. } => "incompatible-pattern",
            RejectReason::IncompatiblePayload { .. } => "incompatible-payload",
            RejectReason::UnknownParticipant { .. } => "unknown-participant",
            RejectReason::PastHorizon { .. } => "past-horizon",
        }
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RejectReason::DuplicateEvent { event_id } => write!(f, "duplicate event {event_id:?}"),
            RejectReason::StaleEpoch { epoch, first } => {
                write!(f, "epoch {epoch} is before this run's first epoch {first}")
            }
            RejectReason::FinalizedEpoch { epoch } => write!(f, "epoch {epoch} is already finalized"),
            RejectReason::IncompatiblePattern { expected, received } => {
                write!(f, "event is for class {received}, this engine runs {expected}")
            }
            RejectReason::IncompatiblePayload { why } => write!(f, "incompatible payload: {why}"),
            RejectReason::UnknownParticipant { source } => write!(f, "{source:?} is not in the roster"),
            RejectReason::PastHorizon { epoch, horizon } => {
                write!(f, "epoch {epoch} is past the horizon (the last epoch is {})", horizon.saturating_sub(1))
            }
        }
    }
}

/// What closing an epoch produced: the announced values as applied, the ballots, and the class
/// state and metric afterwards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpochSummary {
    /// The epoch that closed.
    pub epoch: u64,
    /// The class.
    pub pattern: PatternKind,
    /// Each participant's announced value, as applied.
    pub values: BTreeMap<String, f64>,
    /// The ballots cast in the epoch (participants that did not vote are absent).
    pub ballots: BTreeMap<String, Vote>,
    /// The class metric after the epoch, when the class has one.
    pub metric: Option<f64>,
    /// Class state after the epoch, by name (for reports and plots).
    pub state: BTreeMap<String, f64>,
    /// True when this was the engine's last epoch (its horizon is reached).
    pub complete: bool,
}

/// What the engine did with an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", content = "detail", rename_all = "kebab-case")]
pub enum EventOutcome {
    /// Accepted; the epoch is not finished.
    Applied,
    /// For a later epoch than the open one; the runtime holds it until the engine gets there.
    Deferred {
        /// The epoch open now.
        expected: u64,
        /// The event's epoch.
        received: u64,
    },
    /// Accepted, and it completed the epoch: the class update was applied.
    Finalized(EpochSummary),
    /// Refused, with the reason.
    Rejected(RejectReason),
}

impl EventOutcome {
    /// True for `Applied` and `Finalized`: the event counted.
    pub fn is_accepted(&self) -> bool {
        matches!(self, EventOutcome::Applied | EventOutcome::Finalized(_))
    }
}

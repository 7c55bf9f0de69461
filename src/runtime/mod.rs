//! The coordination runtime: events in, outcomes out, every transition recorded.
//!
//! Every step of a run is one [`SemanticEvent`] given to a [`CoordinationEngine`], which answers
//! with an [`EventOutcome`]: applied, deferred to a later epoch, finalized (the epoch closed and the
//! class update ran), or rejected with a [`RejectReason`]. [`MasRuntime`] wraps any engine, keeps the
//! history of transitions for audit and replay, and tallies [`RuntimeCounters`].
//!
//! Decisions encoded here:
//!
//! - **The runtime holds deferred events, not the engine.** An engine only says "not yet"
//!   ([`EventOutcome::Deferred`]); the runtime keeps the event and, after every epoch an engine
//!   finalizes, re-submits the held events whose epoch is now open, in the order they arrived.
//!   Their second outcome is recorded as a transition with `released: true`. One implementation
//!   serves every engine, and an engine's state stays a plain function of the events it accepted.
//!   An event whose id matches a held event is a duplicate, refused by the runtime itself.
//! - **Replay is the tally.** In git-mas the events are the records of a run's chains; feeding the
//!   recorded sequence ([`MasRuntime::recorded_events`]) into a fresh engine ([`replay`]) yields the
//!   same outcomes, so any clone computes the same state from the same refs.
//! - **Counters come from outcomes**, in one place, so engines cannot disagree on what they count:
//!   `applied` counts accepted events (including the one that finalized an epoch), `finalized` the
//!   epochs closed, `rejected` every refusal, `duplicates` and `stale` (stale, finalized or
//!   past-horizon epochs) the refusals of those kinds, `deferred` the events held for later.

mod epoch;
mod event;
pub mod exit;
mod pattern;

pub use epoch::EpochBook;
pub use event::{
    EpochSummary, EventMetadata, EventOutcome, RejectReason, SemanticEvent, SemanticPayload, TestDelta, Vote,
};
pub use pattern::{PatternError, PatternKind, ProtocolPhase};

use serde::{Deserialize, Serialize};

/// One class's state machine. Implementations apply what participants send and never compute a
/// participant's contribution themselves.
pub trait CoordinationEngine {
    /// The class this engine runs.
    fn pattern(&self) -> PatternKind;
    /// The participants, in roster order.
    fn participants(&self) -> &[String];
    /// The epoch open now.
    fn epoch(&self) -> u64;
    /// Applies one event and says what happened to it.
    fn apply(&mut self, event: &SemanticEvent) -> EventOutcome;
}

/// One recorded transition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppliedTransition {
    /// Position in the history, from 0.
    pub index: u64,
    /// The event.
    pub event: SemanticEvent,
    /// What the engine (or, for a duplicate of a held event, the runtime) did with it.
    pub outcome: EventOutcome,
    /// The open epoch before the event.
    pub epoch_before: u64,
    /// The open epoch after it.
    pub epoch_after: u64,
    /// True when this is a held event re-submitted by the runtime, not a new submission.
    pub released: bool,
}

/// Tallies of outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeCounters {
    /// Events accepted (`Applied` or `Finalized`).
    pub applied: u64,
    /// Events refused.
    pub rejected: u64,
    /// Events held for a later epoch.
    pub deferred: u64,
    /// Refusals as duplicates.
    pub duplicates: u64,
    /// Refusals for a stale, finalized or past-horizon epoch.
    pub stale: u64,
    /// Epochs closed.
    pub finalized: u64,
}

impl RuntimeCounters {
    fn count(&mut self, outcome: &EventOutcome) {
        match outcome {
            EventOutcome::Applied => self.applied += 1,
            EventOutcome::Finalized(_) => {
                self.applied += 1;
                self.finalized += 1;
            }
            EventOutcome::Deferred { .. } => self.deferred += 1,
            EventOutcome::Rejected(reason) => {
                self.rejected += 1;
                match reason {
                    RejectReason::DuplicateEvent { .. } => self.duplicates += 1,
                    RejectReason::StaleEpoch { .. }
                    | RejectReason::FinalizedEpoch { .. }
                    | RejectReason::PastHorizon { .. } => self.stale += 1,
                    _ => {}
                }
            }
        }
    }
}

/// Wraps an engine: applies events, holds deferred ones, records history and counters.
#[derive(Debug, Clone)]
pub struct MasRuntime<E> {
    engine: E,
    history: Vec<AppliedTransition>,
    counters: RuntimeCounters,
    held: Vec<SemanticEvent>,
}

impl<E: CoordinationEngine> MasRuntime<E> {
    /// A runtime around `engine`, with an empty history.
    pub fn new(engine: E) -> Self {
        MasRuntime { engine, history: Vec::new(), counters: RuntimeCounters::default(), held: Vec::new() }
    }

    /// Feeds `events` in order into `engine` and returns the runtime: the same events into the same
    /// fresh engine always give the same history.
    pub fn replay(engine: E, events: impl IntoIterator<Item = SemanticEvent>) -> Self {
        let mut runtime = MasRuntime::new(engine);
        let events = events.into_iter();
        runtime.history.reserve(events.size_hint().0);
        for event in events {
            runtime.apply(event);
        }
        runtime
    }

    /// Applies one submitted event and returns its outcome. When the event finalizes an epoch, held
    /// events for the newly open epoch are applied too (see the history).
    pub fn apply(&mut self, event: SemanticEvent) -> EventOutcome {
        if self.held.iter().any(|held| held.metadata.event_id == event.metadata.event_id) {
            let outcome =
                EventOutcome::Rejected(RejectReason::DuplicateEvent { event_id: event.metadata.event_id.clone() });
            let epoch = self.engine.epoch();
            self.record(event, outcome.clone(), epoch, false);
            return outcome;
        }
        let outcome = self.step(event, false);
        if matches!(outcome, EventOutcome::Finalized(_)) {
            self.release();
        }
        outcome
    }

    fn step(&mut self, event: SemanticEvent, released: bool) -> EventOutcome {
        let before = self.engine.epoch();
        let outcome = self.engine.apply(&event);
        if matches!(outcome, EventOutcome::Deferred { .. }) {
            self.held.push(event.clone());
        }
        self.record(event, outcome.clone(), before, released);
        outcome
    }

    fn record(&mut self, event: SemanticEvent, outcome: EventOutcome, epoch_before: u64, released: bool) {
        self.counters.count(&outcome);
        let index = self.history.len() as u64;
        let epoch_after = self.engine.epoch();
        self.history.push(AppliedTransition { index, event, outcome, epoch_before, epoch_after, released });
    }

    /// Re-submits held events whose epoch is open (or already past), oldest first, until none is.
    fn release(&mut self) {
        loop {
            let open = self.engine.epoch();
            let Some(pos) = self.held.iter().position(|e| e.metadata.epoch <= open) else {
                return;
            };
            let event = self.held.remove(pos);
            let outcome = self.step(event, true);
            if matches!(outcome, EventOutcome::Deferred { .. }) {
                // The engine disagrees about which epoch is open; stop rather than loop.
                return;
            }
        }
    }

    /// Every transition so far, in order.
    pub fn history(&self) -> &[AppliedTransition] {
        &self.history
    }

    /// The events as they were submitted (not the runtime's re-submissions): the sequence to store
    /// and to replay.
    pub fn recorded_events(&self) -> Vec<SemanticEvent> {
        self.history.iter().filter(|t| !t.released).map(|t| t.event.clone()).collect()
    }

    /// The tallies.
    pub fn counters(&self) -> RuntimeCounters {
        self.counters
    }

    /// The events held for a later epoch, in arrival order.
    pub fn held(&self) -> &[SemanticEvent] {
        &self.held
    }

    /// The engine.
    pub fn engine(&self) -> &E {
        &self.engine
    }

    /// Gives the engine back.
    pub fn into_engine(self) -> E {
        self.engine
    }
}

/// Feeds a recorded event sequence into a fresh engine and returns the outcome of every transition
/// in order (held events re-submitted by the runtime included). Equal inputs give equal outcomes;
/// [`MasRuntime::replay`] gives the whole runtime.
pub fn replay<E: CoordinationEngine>(engine: E, events: impl IntoIterator<Item = SemanticEvent>) -> Vec<EventOutcome> {
    MasRuntime::replay(engine, events).history.into_iter().map(|t| t.outcome).collect()
}

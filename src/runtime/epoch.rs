//! The epoch discipline every engine shares, in one place.
//!
//! An engine embeds an [`EpochBook`] and asks it, in a fixed order, whether an event may touch the
//! open epoch. The order matters for what a person is told, and it is chosen so that an event is
//! never held for later when it could never count: class, duplicate id, sender, payload (those two
//! are the engine's checks, done between [`EpochBook::screen_identity`] and
//! [`EpochBook::screen_epoch`]), and only then the epoch. Epoch numbers:
//!
//! - `first` is the first epoch this engine runs (0 for a fresh run; later when a run is resumed
//!   or re-started at a later epoch). An event before it is [`RejectReason::StaleEpoch`]: it belongs
//!   to something this engine never ran.
//! - An epoch this engine closed is [`RejectReason::FinalizedEpoch`].
//! - The open epoch is `current`; an event for it goes on to the engine.
//! - A later epoch is [`EventOutcome::Deferred`]; the runtime holds the event and re-submits it when
//!   the engine gets there.
//! - An epoch at or after the horizon (when the engine has one) will never open:
//!   [`RejectReason::PastHorizon`].

use super::{EventOutcome, PatternKind, RejectReason, SemanticEvent};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Which epochs are closed, which is open, and which event ids were accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpochBook {
    pattern: PatternKind,
    first: u64,
    current: u64,
    horizon: Option<u64>,
    seen: BTreeSet<String>,
}

impl EpochBook {
    /// A book for `pattern` whose first epoch is `first`, with at most `epochs` epochs (`None`: no
    /// limit).
    pub fn new(pattern: PatternKind, first: u64, epochs: Option<u64>) -> Self {
        let horizon = epochs.map(|n| first.saturating_add(n));
        EpochBook { pattern, first, current: first, horizon, seen: BTreeSet::new() }
    }

    /// The epoch open now (equal to the horizon once the last epoch closed).
    pub fn current(&self) -> u64 {
        self.current
    }

    /// The first epoch this engine runs.
    pub fn first(&self) -> u64 {
        self.first
    }

    /// The first epoch that will never open, if the engine has a horizon.
    pub fn horizon(&self) -> Option<u64> {
        self.horizon
    }

    /// True once the last epoch closed.
    pub fn is_complete(&self) -> bool {
        self.horizon.is_some_and(|h| self.current >= h)
    }

    /// The class and duplicate-id checks, which come before anything else.
    pub fn screen_identity(&self, event: &SemanticEvent) -> Result<(), RejectReason> {
        if event.pattern != self.pattern {
            return Err(RejectReason::IncompatiblePattern { expected: self.pattern, received: event.pattern });
        }
        if self.seen.contains(&event.metadata.event_id) {
            return Err(RejectReason::DuplicateEvent { event_id: event.metadata.event_id.clone() });
        }
        Ok(())
    }

    /// The epoch checks: `Ok` when the event is for the open epoch, else the outcome to return.
    pub fn screen_epoch(&self, epoch: u64) -> Result<(), EventOutcome> {
        if epoch < self.first {
            return Err(EventOutcome::Rejected(RejectReason::StaleEpoch { epoch, first: self.first }));
        }
        if epoch < self.current {
            return Err(EventOutcome::Rejected(RejectReason::FinalizedEpoch { epoch }));
        }
        if let Some(horizon) = self.horizon
            && epoch >= horizon
        {
            return Err(EventOutcome::Rejected(RejectReason::PastHorizon { epoch, horizon }));
        }
        if epoch > self.current {
            return Err(EventOutcome::Deferred { expected: self.current, received: epoch });
        }
        Ok(())
    }

    /// Records an accepted event's id, so that a repeat is a duplicate.
    pub fn accept(&mut self, event_id: &str) {
        self.seen.insert(event_id.to_owned());
    }

    /// Closes the open epoch and opens the next.
    pub fn close(&mut self) {
        self.current = self.current.saturating_add(1);
    }
}

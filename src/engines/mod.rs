//! The class engines: one [`CoordinationEngine`] per implemented class.
//!
//! The development class ([`development`]) has its own engine: proposals of trees and endorsements
//! bound to them, counted to a quorum.
//!
//! The three paper classes (preference, cascade, resource) share one shape, so they share one
//! engine: [`ScalarEngine`] owns the roster, the epoch discipline ([`EpochBook`]), the inbox of
//! announced values and ballots, and the summaries; a [`ScalarModel`] owns only the class's plant —
//! its state, how announced values move it, its metric and what each participant may see. Adding a
//! scalar class is writing a model; the runtime and the engine do not change.
//!
//! Invariants every scalar engine keeps:
//!
//! - **It never computes a participant's next value.** An epoch closes when every participant has
//!   announced; the model then applies the announced values as given. The class's reference rule
//!   ([`crate::assembly::UpdateClass::reference`]) is used only to score rules and to measure how far
//!   an announcement was from it, never to fill in a value.
//! - **A participant sees its named local quantities**, never a suggested next value
//!   ([`ScalarEngine::local_view`]); the names are exactly its class's UPDATE-rule names.
//! - **Nothing is substituted or repaired.** A value that is not finite, beyond
//!   ±[`MAX_ANNOUNCED_MAGNITUDE`], or outside the class's domain (a negative order or extraction) is
//!   refused as an incompatible payload; the driver asks the peer again.
//! - **Ballots ride in the epoch.** A `Ballot` event is accepted for the open epoch (one per
//!   participant) and reported in the epoch's summary, which is what [`halt::ConvergeController`]
//!   reads. A driver records a reply's ballot before its announcement, because the last announcement
//!   closes the epoch.
//! - **A second announcement or ballot from one participant in one epoch is a duplicate**, even
//!   under a new event id.

pub mod cascade;
pub mod development;
pub mod halt;
pub mod preference;
pub mod resource;

pub use cascade::{Cascade, CascadeConfig, CascadeEngine};
pub use development::{DevelopmentConfig, DevelopmentEngine, Tally};
pub use halt::{
    ConvergeController, ConvergeHalt, DEFAULT_PLATEAU_K, EpochSignal, IMPROVEMENT_EPSILON, MetricDirection, MetricSpec,
    preflight,
};
pub use preference::{Preference, PreferenceConfig, PreferenceEngine};
pub use resource::{GREEDY_RULE, Resource, ResourceConfig, ResourceEngine};

use crate::assembly::{ExprError, Quantities, UpdateClass};
use crate::runtime::{
    CoordinationEngine, EpochBook, EpochSummary, EventOutcome, PatternKind, RejectReason, SemanticEvent,
    SemanticPayload, Vote,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use thiserror::Error;

/// The largest magnitude an announced value may have. Far beyond any sensible value of the paper
/// classes, and small enough that every metric stays finite.
pub const MAX_ANNOUNCED_MAGNITUDE: f64 = 1e12;

/// Why an engine could not be built.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum EngineError {
    /// No participants.
    #[error("the roster is empty")]
    EmptyRoster,
    /// A name appears twice in the roster.
    #[error("{name:?} appears twice in the roster")]
    DuplicateParticipant {
        /// The repeated name.
        name: String,
    },
    /// The model was built for another number of participants.
    #[error("the model has {expected} participants but the roster names {found}")]
    RosterSize {
        /// The model's count.
        expected: usize,
        /// The roster's.
        found: usize,
    },
    /// A configuration value is out of range.
    #[error("{field} {why}")]
    BadConfig {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        why: String,
    },
}

pub(crate) fn bad_config(field: &'static str, why: impl Into<String>) -> EngineError {
    EngineError::BadConfig { field, why: why.into() }
}

/// A scalar class's plant: its state, how announced values move it, and what each participant sees.
pub trait ScalarModel: Clone + fmt::Debug {
    /// The class's UPDATE-rule description (names, reference).
    fn class(&self) -> &'static UpdateClass;
    /// How many participants the model was built for.
    fn agents(&self) -> usize;
    /// How many epochs the model can run (`None`: no limit).
    fn epochs(&self) -> Option<u64>;
    /// What participant `agent` (0-based roster position) sees now, by the class's quantity names.
    fn quantities(&self, agent: usize) -> Quantities;
    /// Class-specific checks of an announced value (it is already finite and bounded).
    fn check(&self, value: f64) -> Result<(), String>;
    /// Applies one epoch's announced values, one per participant in roster order.
    fn step(&mut self, announced: &[f64]);
    /// The class metric now.
    fn metric(&self) -> f64;
    /// What the metric is and how it is judged.
    fn metric_spec(&self) -> MetricSpec;
    /// Class-level state now, by name, for summaries.
    fn state(&self) -> BTreeMap<String, f64>;
}

/// What a participant sees in a CONVERGE hop: its named local quantities, no suggested value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalView {
    /// The participant.
    pub agent: String,
    /// The class.
    pub pattern: PatternKind,
    /// The open epoch.
    pub epoch: u64,
    /// The quantities by name.
    pub quantities: Quantities,
}

/// The engine of every scalar class: roster, epoch discipline and inbox around a [`ScalarModel`].
#[derive(Debug, Clone)]
pub struct ScalarEngine<M> {
    model: M,
    roster: Vec<String>,
    book: EpochBook,
    announced: Vec<Option<f64>>,
    ballots: BTreeMap<String, Vote>,
    summaries: Vec<EpochSummary>,
}

impl<M: ScalarModel> ScalarEngine<M> {
    /// An engine over `model` whose participants are `roster` (in the model's order), starting at
    /// epoch 0.
    pub fn new(model: M, roster: Vec<String>) -> Result<Self, EngineError> {
        ScalarEngine::starting_at(model, roster, 0)
    }

    /// As [`ScalarEngine::new`], with the first epoch numbered `first` (a run resumed or re-started
    /// later); events before it are stale.
    pub fn starting_at(model: M, roster: Vec<String>, first: u64) -> Result<Self, EngineError> {
        if roster.is_empty() {
            return Err(EngineError::EmptyRoster);
        }
        let mut seen = BTreeSet::new();
        for name in &roster {
            if !seen.insert(name.as_str()) {
                return Err(EngineError::DuplicateParticipant { name: name.clone() });
            }
        }
        if roster.len() != model.agents() {
            return Err(EngineError::RosterSize { expected: model.agents(), found: roster.len() });
        }
        let book = EpochBook::new(model.class().pattern, first, model.epochs());
        let announced = vec![None; roster.len()];
        Ok(ScalarEngine { model, roster, book, announced, ballots: BTreeMap::new(), summaries: Vec::new() })
    }

    /// The class's plant.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The class's UPDATE-rule description: quantity names and the reference rule.
    pub fn class(&self) -> &'static UpdateClass {
        self.model.class()
    }

    /// What `agent` sees now, or `None` when it is not in the roster.
    pub fn local_view(&self, agent: &str) -> Option<LocalView> {
        let index = self.index_of(agent)?;
        Some(LocalView {
            agent: agent.to_owned(),
            pattern: self.model.class().pattern,
            epoch: self.book.current(),
            quantities: self.model.quantities(index),
        })
    }

    /// What the class's reference rule gives `agent` now — for scoring and execution-gap reports
    /// only; the engine never applies it.
    pub fn reference_value(&self, agent: &str) -> Option<Result<f64, ExprError>> {
        let view = self.local_view(agent)?;
        Some(self.model.class().reference_value(&view.quantities))
    }

    /// The class metric now.
    pub fn metric(&self) -> f64 {
        self.model.metric()
    }

    /// The summaries of the closed epochs, oldest first.
    pub fn summaries(&self) -> &[EpochSummary] {
        &self.summaries
    }

    /// The participants that have not announced in the open epoch.
    pub fn pending(&self) -> Vec<&str> {
        self.roster.iter().zip(&self.announced).filter(|(_, v)| v.is_none()).map(|(n, _)| n.as_str()).collect()
    }

    /// The first epoch that will never open, if the class has a horizon.
    pub fn horizon(&self) -> Option<u64> {
        self.book.horizon()
    }

    /// How many epochs remain before the horizon (`None`: no limit).
    pub fn remaining_epochs(&self) -> Option<u64> {
        self.book.horizon().map(|h| h.saturating_sub(self.book.current()))
    }

    /// True once the last epoch closed.
    pub fn is_complete(&self) -> bool {
        self.book.is_complete()
    }

    fn index_of(&self, agent: &str) -> Option<usize> {
        self.roster.iter().position(|name| name == agent)
    }

    /// Whether an announcement of `value` would be accepted as a payload (finite, bounded, in the
    /// class's domain) — so that a driver can ask a peer again before it sends anything.
    pub fn check_value(&self, value: f64) -> Result<(), RejectReason> {
        self.check_payload(&SemanticPayload::ScalarProposal { value })
    }

    fn check_payload(&self, payload: &SemanticPayload) -> Result<(), RejectReason> {
        let why = match payload {
            SemanticPayload::Ballot { .. } => return Ok(()),
            SemanticPayload::ScalarProposal { value } if !value.is_finite() => {
                format!("{value} is not a finite number")
            }
            SemanticPayload::ScalarProposal { value } if value.abs() > MAX_ANNOUNCED_MAGNITUDE => {
                format!("{value:e} is beyond ±{MAX_ANNOUNCED_MAGNITUDE:e}")
            }
            SemanticPayload::ScalarProposal { value } => match self.model.check(*value) {
                Ok(()) => return Ok(()),
                Err(why) => why,
            },
            other => format!(
                "the {} engine takes scalar proposals and ballots, not {}",
                self.model.class().pattern,
                other.kind()
            ),
        };
        Err(RejectReason::IncompatiblePayload { why })
    }

    fn finalize(&mut self) -> Option<EpochSummary> {
        let values: Vec<f64> = self.announced.iter().copied().collect::<Option<Vec<f64>>>()?;
        self.model.step(&values);
        let epoch = self.book.current();
        self.book.close();
        self.announced.iter_mut().for_each(|v| *v = None);
        let mut state = self.model.state();
        for (index, name) in self.roster.iter().enumerate() {
            for (quantity, value) in self.model.quantities(index) {
                state.insert(format!("{name}.{quantity}"), value);
            }
        }
        let summary = EpochSummary {
            epoch,
            pattern: self.model.class().pattern,
            values: self.roster.iter().cloned().zip(values).collect(),
            ballots: std::mem::take(&mut self.ballots),
            metric: Some(self.model.metric()),
            state,
            complete: self.book.is_complete(),
        };
        self.summaries.push(summary.clone());
        Some(summary)
    }
}

impl<M: ScalarModel> CoordinationEngine for ScalarEngine<M> {
    fn pattern(&self) -> PatternKind {
        self.model.class().pattern
    }

    fn participants(&self) -> &[String] {
        &self.roster
    }

    fn epoch(&self) -> u64 {
        self.book.current()
    }

    fn apply(&mut self, event: &SemanticEvent) -> EventOutcome {
        let reject = EventOutcome::Rejected;
        if let Err(reason) = self.book.screen_identity(event) {
            return reject(reason);
        }
        let Some(index) = self.index_of(&event.metadata.source) else {
            return reject(RejectReason::UnknownParticipant { source: event.metadata.source.clone() });
        };
        if let Err(reason) = self.check_payload(&event.payload) {
            return reject(reason);
        }
        if let Err(outcome) = self.book.screen_epoch(event.metadata.epoch) {
            return outcome;
        }
        let duplicate = || reject(RejectReason::DuplicateEvent { event_id: event.metadata.event_id.clone() });
        match &event.payload {
            SemanticPayload::ScalarProposal { value } => match self.announced.get_mut(index) {
                Some(slot @ None) => *slot = Some(*value),
                _ => return duplicate(),
            },
            SemanticPayload::Ballot { vote } => {
                if self.ballots.contains_key(&event.metadata.source) {
                    return duplicate();
                }
                self.ballots.insert(event.metadata.source.clone(), *vote);
            }
            // `check_payload` refused every other kind.
            _ => return reject(RejectReason::IncompatiblePayload { why: event.payload.kind().into() }),
        }
        self.book.accept(&event.metadata.event_id);
        if self.announced.iter().all(Option::is_some) {
            match self.finalize() {
                Some(summary) => EventOutcome::Finalized(summary),
                None => EventOutcome::Applied,
            }
        } else {
            EventOutcome::Applied
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! The suite every engine must pass, and helpers to drive engines with rules the way peers do.

    use super::*;
    use crate::assembly::Expr;
    use crate::runtime::{EventMetadata, MasRuntime, replay};

    pub(crate) fn meta(id: &str, source: &str, epoch: u64) -> EventMetadata {
        EventMetadata { event_id: id.into(), correlation_id: "run-1".into(), epoch, source: source.into() }
    }

    pub(crate) fn roster(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("agent-{i}")).collect()
    }

    /// Runs `epochs` epochs in which every participant announces what `rule` gives over its own
    /// local view — as a peer applying its own rule would; the engine is only told the values.
    pub(crate) fn drive<M: ScalarModel>(
        engine: ScalarEngine<M>,
        rule: &Expr,
        epochs: u64,
    ) -> MasRuntime<ScalarEngine<M>> {
        let pattern = engine.model().class().pattern;
        let mut runtime = MasRuntime::new(engine);
        for _ in 0..epochs {
            if runtime.engine().is_complete() {
                break;
            }
            let epoch = runtime.engine().epoch();
            let participants = runtime.engine().participants().to_vec();
            let values: Vec<(String, f64)> = participants
                .iter()
                .map(|agent| {
                    let view = runtime.engine().local_view(agent).expect("participant");
                    (agent.clone(), rule.eval(&view.quantities).expect("rule evaluates"))
                })
                .collect();
            for (agent, value) in values {
                let id = format!("{agent}/{epoch}");
                let outcome = runtime.apply(SemanticEvent::scalar(pattern, meta(&id, &agent, epoch), value));
                assert!(outcome.is_accepted(), "{outcome:?}");
            }
        }
        runtime
    }

    /// The epoch-discipline suite. `make(first)` builds a fresh engine whose first epoch is `first`
    /// and which runs exactly two epochs; 1.0 must be a valid announcement.
    pub(crate) fn discipline_suite<E: CoordinationEngine + Clone + fmt::Debug>(make: impl Fn(u64) -> E) {
        let engine = make(0);
        let pattern = engine.pattern();
        let other_pattern =
            if pattern == PatternKind::Preference { PatternKind::Cascade } else { PatternKind::Preference };
        let people = engine.participants().to_vec();
        assert!(people.len() >= 2, "the suite needs two participants");
        let (first, last) = (people[0].clone(), people[people.len() - 1].clone());
        let scalar =
            |id: &str, who: &str, epoch: u64, value: f64| SemanticEvent::scalar(pattern, meta(id, who, epoch), value);
        let mut rt = MasRuntime::new(engine);
        let rejected = |outcome: EventOutcome| match outcome {
            EventOutcome::Rejected(reason) => reason.code(),
            other => panic!("expected a rejection, got {other:?}"),
        };

        // Everyone but the last announces epoch 0.
        for (i, who) in people[..people.len() - 1].iter().enumerate() {
            assert_eq!(rt.apply(scalar(&format!("e0-{i}"), who, 0, 1.0)), EventOutcome::Applied);
        }
        assert_eq!(rejected(rt.apply(scalar("e0-0", &first, 0, 1.0))), "duplicate-event", "same id");
        assert_eq!(rejected(rt.apply(scalar("again", &first, 0, 2.0))), "duplicate-event", "second announcement");
        assert_eq!(rt.apply(SemanticEvent::ballot(pattern, meta("b0", &first, 0), Vote::Stop)), EventOutcome::Applied);
        assert_eq!(
            rejected(rt.apply(SemanticEvent::ballot(pattern, meta("b0-again", &first, 0), Vote::Continue))),
            "duplicate-event",
            "second ballot"
        );
        assert_eq!(rejected(rt.apply(scalar("ghost", "ghost", 0, 1.0))), "unknown-participant");
        assert_eq!(rejected(rt.apply(scalar("nan", &last, 0, f64::NAN))), "incompatible-payload");
        assert_eq!(rejected(rt.apply(scalar("huge", &last, 0, 1e300))), "incompatible-payload");
        let bytes = SemanticEvent {
            pattern,
            metadata: meta("bytes", &last, 0),
            payload: SemanticPayload::ExternalBytes { digest: "abc".into(), len: 3 },
        };
        assert_eq!(rejected(rt.apply(bytes)), "incompatible-payload");
        let foreign = SemanticEvent::scalar(other_pattern, meta("foreign", &last, 0), 1.0);
        assert_eq!(rejected(rt.apply(foreign)), "incompatible-pattern");

        // A future event is deferred and held; its id is taken while held.
        assert_eq!(rt.apply(scalar("e1-0", &first, 1, 1.0)), EventOutcome::Deferred { expected: 0, received: 1 });
        assert_eq!(rt.held().len(), 1);
        assert_eq!(rejected(rt.apply(scalar("e1-0", &first, 1, 1.0))), "duplicate-event", "held id");

        // The last announcement closes epoch 0; the held event is then applied to epoch 1.
        let EventOutcome::Finalized(summary) = rt.apply(scalar("e0-last", &last, 0, 1.0)) else {
            panic!("epoch 0 should finalize")
        };
        assert_eq!(summary.epoch, 0);
        assert_eq!(summary.values.len(), people.len());
        assert_eq!(summary.ballots.get(&first), Some(&Vote::Stop));
        assert!(summary.metric.is_some_and(f64::is_finite));
        assert!(!summary.complete);
        assert!(rt.held().is_empty());
        let released = rt.history().last().expect("history");
        assert!(released.released);
        assert_eq!(released.event.metadata.event_id, "e1-0");
        assert_eq!(released.outcome, EventOutcome::Applied);
        assert_eq!(rt.engine().epoch(), 1);

        // Late: epoch 0 is finalized.
        assert_eq!(rejected(rt.apply(scalar("late", &last, 0, 1.0))), "finalized-epoch");

        // Close epoch 1, the last: the engine is complete and later epochs never open.
        let mut closing = None;
        for (i, who) in people[1..].iter().enumerate() {
            closing = Some(rt.apply(scalar(&format!("e1-{}", i + 1), who, 1, 1.0)));
        }
        let Some(EventOutcome::Finalized(summary)) = closing else { panic!("epoch 1 should finalize: {closing:?}") };
        assert!(summary.complete);
        assert_eq!(rejected(rt.apply(scalar("e2", &first, 2, 1.0))), "past-horizon");

        let counters = rt.counters();
        assert_eq!(counters.finalized, 2);
        assert_eq!(counters.applied as usize, 2 * people.len() + 1, "announcements and one ballot");
        assert_eq!(counters.deferred, 1);
        assert_eq!(counters.duplicates, 4);
        assert_eq!(counters.stale, 2);
        assert_eq!(counters.rejected, 11);

        // Replaying the recorded events into a fresh engine gives the same history.
        let recorded = rt.recorded_events();
        assert_eq!(recorded.len() + 1, rt.history().len(), "one released transition");
        // (Compared as Debug text: the refused NaN announcement is not equal to itself.)
        let again = MasRuntime::replay(make(0), recorded.clone());
        assert_eq!(format!("{:?}", again.history()), format!("{:?}", rt.history()));
        assert_eq!(again.counters(), rt.counters());
        let outcomes: Vec<EventOutcome> = rt.history().iter().map(|t| t.outcome.clone()).collect();
        assert_eq!(replay(make(0), recorded.clone()), outcomes);
        // …and the events and outcomes survive the JSON they are stored as (JSON has no NaN, and
        // nothing that reads announcements ever produces one).
        let storable: Vec<SemanticEvent> = recorded.into_iter().filter(|e| e.metadata.event_id != "nan").collect();
        let json = serde_json::to_string(&storable).expect("serialize");
        let parsed: Vec<SemanticEvent> = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(parsed, storable);
        let json = serde_json::to_string(&outcomes).expect("serialize");
        let parsed: Vec<EventOutcome> = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(parsed, outcomes);

        // Stale: before the first epoch of an engine that started later.
        let mut late_start = MasRuntime::new(make(5));
        assert_eq!(late_start.engine().epoch(), 5);
        assert_eq!(rejected(late_start.apply(scalar("old", &first, 2, 1.0))), "stale-epoch");
        assert_eq!(late_start.apply(scalar("now", &first, 5, 1.0)), EventOutcome::Applied);
    }

    #[test]
    fn every_scalar_engine_keeps_the_epoch_discipline() {
        discipline_suite(|first| {
            let config = PreferenceConfig { max_rounds: Some(2), ..PreferenceConfig::default() };
            ScalarEngine::starting_at(Preference::new(3, config).unwrap(), roster(3), first).unwrap()
        });
        discipline_suite(|first| {
            let config = CascadeConfig { max_rounds: Some(2), ..CascadeConfig::default() };
            ScalarEngine::starting_at(Cascade::new(4, config).unwrap(), roster(4), first).unwrap()
        });
        discipline_suite(|first| {
            let config = ResourceConfig { max_rounds: Some(2), ..ResourceConfig::default() };
            ScalarEngine::starting_at(Resource::new(3, config).unwrap(), roster(3), first).unwrap()
        });
    }

    #[test]
    fn rosters_are_checked() {
        let model = || Preference::new(2, PreferenceConfig::default()).unwrap();
        assert_eq!(ScalarEngine::new(model(), vec![]).unwrap_err(), EngineError::EmptyRoster);
        assert!(matches!(
            ScalarEngine::new(model(), vec!["a".into(), "a".into()]),
            Err(EngineError::DuplicateParticipant { .. })
        ));
        assert!(matches!(ScalarEngine::new(model(), roster(3)), Err(EngineError::RosterSize { .. })));
    }

    #[test]
    fn local_views_use_exactly_the_class_names() {
        let views = [
            Preference::engine(roster(3), PreferenceConfig::default()).unwrap().local_view("agent-1"),
            Cascade::engine(roster(4), CascadeConfig::default()).unwrap().local_view("agent-1"),
            Resource::engine(roster(3), ResourceConfig::default()).unwrap().local_view("agent-1"),
        ];
        for view in views {
            let view = view.expect("agent-1 is in the roster");
            let names: BTreeSet<&str> = view.quantities.keys().map(String::as_str).collect();
            let class = crate::assembly::update_class(view.pattern).expect("scalar class");
            assert_eq!(names, class.names().into_iter().collect(), "{}", view.pattern);
            assert!(view.quantities.values().all(|v| v.is_finite()));
        }
        let engine = Preference::engine(roster(3), PreferenceConfig::default()).unwrap();
        assert!(engine.local_view("ghost").is_none());
    }
}

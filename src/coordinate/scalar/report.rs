//! The run report: derivation apart from execution, the trajectory, the halt.
//!
//! Two questions are kept apart, because they fail independently (seed 000's honest claims):
//!
//! - **Derivation**: did each peer derive the right rule? Its UPDATE rule and the verdict of
//!   scoring it against the class's reference (matches / differs with the worst gap / invalid /
//!   missing).
//! - **Execution**: did each peer apply the rule it derived? For every accepted announcement, its
//!   distance from the peer's *own* rule evaluated on the quantities it was shown (the execution
//!   gap), and from the reference rule on the same quantities (how far the team is from the
//!   ideal). A peer is *faithful* when every execution gap is within the scoring tolerance.
//!
//! [`build_report`] is a pure function of the run definition and the recorded events: it re-infers
//! the class, re-scores the rules, and replays the recorded semantic events into a fresh engine
//! ([`MasRuntime`]). It checks on the way that the replay reproduces every recorded outcome and
//! every view a peer was shown (`replay_matches`), so a report rendered from refs is only as good
//! as the recording, and says so when it is not.

use super::{
    ConvergeDef, ConvergeStart, EngineVisitor, HaltRecord, HopRecord, RunEvent, assess_assembly, controller_for,
    with_engine,
};
use crate::assembly::rules::GAP_TOLERANCE;
use crate::assembly::{Expr, Inference, Verdict};
use crate::engines::{
    Cascade, ConvergeController, ConvergeHalt, EpochSignal, MetricDirection, Preference, Resource, ScalarEngine,
    ScalarModel,
};
use crate::peers::PeerEntry;
use crate::runtime::{EventOutcome, MasRuntime, PatternKind, ProtocolPhase, RuntimeCounters};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Class-specific additions to a report.
pub trait ModelExtras {
    /// The class's optimum and the distance to it, where the class has one.
    fn optimum(&self) -> Option<Optimum> {
        None
    }
}

impl ModelExtras for Preference {
    fn optimum(&self) -> Option<Optimum> {
        Some(Optimum {
            z: self.values().to_vec(),
            z_star: self.optimum().to_vec(),
            distance: crate::engines::preference::distance(self.values(), self.optimum()),
        })
    }
}

impl ModelExtras for Cascade {}
impl ModelExtras for Resource {}

/// One peer's derivation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Derivation {
    /// The peer.
    pub peer: String,
    /// Its spec.
    pub spec: String,
    /// The token of its CLASS line.
    pub class_token: Option<String>,
    /// Its UPDATE rule.
    pub rule: Option<String>,
    /// The rule's verdict against the inferred class's reference (`None`: the class has no rules).
    pub verdict: Option<Verdict>,
    /// Why its ASSEMBLY call failed, if it did.
    pub failure: Option<String>,
}

/// One accepted announcement, measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Announced {
    /// The peer.
    pub peer: String,
    /// The epoch.
    pub epoch: u64,
    /// What it announced.
    pub value: f64,
    /// What its own rule gives on the quantities it was shown.
    pub own_rule: Option<f64>,
    /// `|value − own_rule|`: the execution gap.
    pub own_gap: Option<f64>,
    /// What the reference rule gives on the same quantities.
    pub reference: Option<f64>,
    /// `|value − reference|`.
    pub reference_gap: Option<f64>,
}

/// One peer's execution, summed up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerExecution {
    /// The peer.
    pub peer: String,
    /// Accepted announcements.
    pub announcements: u64,
    /// The largest execution gap.
    pub max_own_gap: Option<f64>,
    /// The largest distance from the reference rule.
    pub max_reference_gap: Option<f64>,
    /// True when every announcement applied the peer's own rule (within the scoring tolerance).
    pub faithful: bool,
}

/// One closed epoch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryPoint {
    /// The epoch that closed.
    pub epoch: u64,
    /// The class metric after it.
    pub metric: Option<f64>,
    /// The announced values, by peer.
    pub values: BTreeMap<String, f64>,
    /// STOP votes from the roster.
    pub stop_votes: usize,
    /// Whether the metric improved.
    pub improved: bool,
    /// Class-level state after it (stock, price, cost, …).
    pub state: BTreeMap<String, f64>,
}

/// The class metric over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricReport {
    /// What it measures.
    pub name: String,
    /// Which way is better.
    pub direction: MetricDirection,
    /// Before the first epoch.
    pub initial: f64,
    /// After the last closed epoch.
    #[serde(rename = "final")]
    pub final_value: f64,
    /// The best seen.
    pub best: Option<f64>,
}

/// Where the team ended against the class's optimum (preference).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Optimum {
    /// The values reached.
    pub z: Vec<f64>,
    /// The optimum.
    pub z_star: Vec<f64>,
    /// `‖z − z*‖₂`.
    pub distance: f64,
}

/// Where the run is recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRefs {
    /// The run definition's chain.
    pub meta: String,
    /// The driver's event chain.
    pub events: String,
}

/// The report of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The run id.
    pub run: String,
    /// The goal.
    pub goal: String,
    /// The class the run was seeded with.
    pub requested: PatternKind,
    /// The class ASSEMBLY inferred.
    pub class: Option<PatternKind>,
    /// The CLASS token the inference rests on, when a CLASS line decided it.
    pub class_token: Option<String>,
    /// How the class was inferred.
    pub inference: Option<Inference>,
    /// The peers, in ring order.
    pub peers: Vec<PeerEntry>,
    /// Each peer's rule and its verdict.
    pub derivation: Vec<Derivation>,
    /// Each peer's execution, summed up.
    pub execution: Vec<PeerExecution>,
    /// Every accepted announcement, measured.
    pub announcements: Vec<Announced>,
    /// The closed epochs.
    pub trajectory: Vec<TrajectoryPoint>,
    /// The class metric (when CONVERGE started).
    pub metric: Option<MetricReport>,
    /// The optimum and the distance to it (preference).
    pub optimum: Option<Optimum>,
    /// Why the run stopped (`None`: the recording ends before it did).
    pub halt: Option<ConvergeHalt>,
    /// The halt, for people.
    pub halt_detail: String,
    /// The peer the halt is about.
    pub halt_peer: Option<String>,
    /// Epochs closed.
    pub epochs: u64,
    /// Calls made to peers.
    pub hops: u64,
    /// Time spent in calls, in milliseconds.
    pub elapsed_ms: u64,
    /// The runtime's tallies (when CONVERGE started).
    pub counters: Option<RuntimeCounters>,
    /// True when replaying the recorded events reproduced every recorded outcome and view.
    pub replay_matches: bool,
    /// Where the run is recorded.
    pub refs: RunRefs,
}

impl Report {
    /// True when the run halted for a reason that leaves it without a result of the protocol: a
    /// peer without a usable rule, an unreadable announcement, the budget.
    pub fn incomplete(&self) -> bool {
        matches!(
            self.halt,
            None | Some(
                ConvergeHalt::MissingUpdateRule | ConvergeHalt::UnreadableAnnouncement | ConvergeHalt::BudgetExhausted
            )
        )
    }
}

/// A closed epoch's halt, for people.
pub fn describe_halt(halt: ConvergeHalt, signal: &EpochSignal) -> String {
    match halt {
        ConvergeHalt::MajorityStop => {
            format!(
                "a strict majority voted STOP in epoch {} ({} STOP votes)",
                signal.epochs.saturating_sub(1),
                signal.stop_votes
            )
        }
        ConvergeHalt::Plateau => format!(
            "the metric stopped improving at its best value ({}) for {} epochs: a fixed point",
            signal.metric, signal.stall
        ),
        ConvergeHalt::NoSolution => format!(
            "the metric did not improve for {} epochs and is not at its best ({}): no progress",
            signal.stall, signal.metric
        ),
        ConvergeHalt::PaperHorizon => format!("the horizon of {} epochs was reached", signal.epochs),
        other => other.code().to_owned(),
    }
}

#[derive(Default)]
struct ConvergeReplay {
    announcements: Vec<Announced>,
    trajectory: Vec<TrajectoryPoint>,
    metric: Option<MetricReport>,
    optimum: Option<Optimum>,
    counters: Option<RuntimeCounters>,
    matches: bool,
}

struct Replay<'a> {
    start: &'a ConvergeStart,
    hops: &'a [&'a HopRecord],
}

impl EngineVisitor for Replay<'_> {
    type Output = ConvergeReplay;

    fn visit<M: ScalarModel + ModelExtras>(self, engine: ScalarEngine<M>) -> ConvergeReplay {
        let class = engine.class();
        let rules: BTreeMap<&str, Option<Expr>> = self
            .start
            .roster
            .iter()
            .zip(&self.start.rules)
            .map(|(peer, rule)| (peer.as_str(), class.parse_rule(rule).ok()))
            .collect();
        let mut controller = controller_for(&engine, self.start);
        let spec = engine.model().metric_spec();
        let initial = engine.metric();
        let mut runtime = MasRuntime::new(engine);
        let mut out = ConvergeReplay { matches: true, ..ConvergeReplay::default() };
        for hop in self.hops {
            let rule = rules.get(hop.peer.as_str()).and_then(|r| r.as_ref());
            replay_hop(&mut runtime, &mut controller, rule, hop, &mut out);
        }
        out.metric = Some(MetricReport {
            name: spec.name.to_owned(),
            direction: spec.direction,
            initial,
            final_value: runtime.engine().metric(),
            best: controller.best(),
        });
        out.optimum = runtime.engine().model().optimum();
        out.counters = Some(runtime.counters());
        out
    }
}

/// Replays one recorded hop's events into the fresh runtime: each accepted announcement is
/// compared with the peer's own rule and the reference, each closed epoch goes to the controller,
/// and any difference from what was recorded clears `out.matches`.
fn replay_hop<M: ScalarModel>(
    runtime: &mut MasRuntime<ScalarEngine<M>>,
    controller: &mut ConvergeController,
    rule: Option<&Expr>,
    hop: &HopRecord,
    out: &mut ConvergeReplay,
) {
    let view = runtime.engine().local_view(&hop.peer).map(|v| v.quantities);
    if hop.shown.is_some() && hop.shown != view {
        out.matches = false;
    }
    if hop.events.len() != hop.outcomes.len() {
        out.matches = false;
    }
    let mut accepted = false;
    for (event, recorded) in hop.events.iter().zip(&hop.outcomes) {
        let own_announcement = matches!(event.payload, crate::runtime::SemanticPayload::ScalarProposal { .. });
        let before = runtime.engine().local_view(&hop.peer).map(|v| v.quantities);
        let reference = runtime.engine().reference_value(&hop.peer).and_then(Result::ok);
        let outcome = runtime.apply(event.clone());
        if outcome != *recorded {
            out.matches = false;
        }
        if own_announcement && outcome.is_accepted() {
            accepted = true;
            if let (Some(value), Some(quantities)) = (hop.announced, before) {
                let own = rule.and_then(|r| r.eval(&quantities).ok());
                out.announcements.push(Announced {
                    peer: hop.peer.clone(),
                    epoch: event.metadata.epoch,
                    value,
                    own_rule: own,
                    own_gap: own.map(|o| (value - o).abs()),
                    reference,
                    reference_gap: reference.map(|r| (value - r).abs()),
                });
            }
        }
        if let EventOutcome::Finalized(summary) = &outcome {
            let signal = controller.observe_summary(summary);
            out.trajectory.push(TrajectoryPoint {
                epoch: summary.epoch,
                metric: summary.metric,
                values: summary.values.clone(),
                stop_votes: signal.stop_votes,
                improved: signal.improved,
                state: summary.state.iter().filter(|(k, _)| !k.contains('.')).map(|(k, v)| (k.clone(), *v)).collect(),
            });
        }
    }
    if accepted != hop.announced.is_some() && hop.failure.is_none() {
        out.matches = false;
    }
}

fn summarize_execution(peers: &[PeerEntry], announcements: &[Announced]) -> Vec<PeerExecution> {
    let max = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, None) => a,
        (None, b) => b,
    };
    peers
        .iter()
        .map(|peer| {
            let mine: Vec<&Announced> = announcements.iter().filter(|a| a.peer == peer.name).collect();
            PeerExecution {
                peer: peer.name.clone(),
                announcements: mine.len() as u64,
                max_own_gap: mine.iter().fold(None, |acc, a| max(acc, a.own_gap)),
                max_reference_gap: mine.iter().fold(None, |acc, a| max(acc, a.reference_gap)),
                faithful: mine.iter().all(|a| match (a.own_gap, a.own_rule) {
                    (Some(gap), Some(own)) => gap <= GAP_TOLERANCE * own.abs().max(1.0),
                    _ => false,
                }),
            }
        })
        .collect()
}

/// The report of a run, from its definition and its events (the recorded ones suffice; derived
/// events are ignored).
pub fn build_report(meta: &ConvergeDef, events: &[RunEvent]) -> Report {
    let hops: Vec<&HopRecord> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Hop(h) => Some(h),
            _ => None,
        })
        .collect();
    let assembly_hops: Vec<&HopRecord> = hops.iter().copied().filter(|h| h.phase == ProtocolPhase::Assembly).collect();
    let converge_hops: Vec<&HopRecord> = hops.iter().copied().filter(|h| h.phase == ProtocolPhase::Converge).collect();
    let assessment = assess_assembly(meta, &assembly_hops);
    let start = events.iter().find_map(|e| match e {
        RunEvent::ConvergeStarted(s) => Some(s),
        _ => None,
    });
    let halt: Option<&HaltRecord> = events.iter().rev().find_map(|e| match e {
        RunEvent::Halt(h) => Some(h),
        _ => None,
    });
    let mut replay = ConvergeReplay { matches: true, ..ConvergeReplay::default() };
    if let Some(start) = start {
        match with_engine(&start.setup, start.roster.clone(), Replay { start, hops: &converge_hops }) {
            Ok(r) => replay = r,
            Err(_) => replay.matches = false,
        }
    } else if !converge_hops.is_empty() {
        replay.matches = false;
    }
    let class_token = match &assessment.summary.inference {
        Some(Inference::ClassLine { token, .. }) => Some(token.clone()),
        _ => None,
    };
    let driver = meta.driver.clone();
    Report {
        run: meta.run.clone(),
        goal: meta.goal.clone(),
        requested: meta.pattern,
        class: assessment.summary.class,
        class_token,
        inference: assessment.summary.inference,
        peers: meta.peers.clone(),
        execution: summarize_execution(&meta.peers, &replay.announcements),
        derivation: assessment.summary.derivation,
        announcements: replay.announcements,
        epochs: replay.trajectory.len() as u64,
        trajectory: replay.trajectory,
        metric: replay.metric,
        optimum: replay.optimum,
        halt: halt.map(|h| h.halt),
        halt_detail: halt.map_or_else(|| "the recording ends before the run halted".to_owned(), |h| h.detail.clone()),
        halt_peer: halt.and_then(|h| h.peer.clone()),
        hops: hops.len() as u64,
        elapsed_ms: hops.iter().map(|h| h.elapsed_ms).sum(),
        counters: replay.counters,
        replay_matches: replay.matches,
        refs: RunRefs {
            meta: super::record::meta_ref(&meta.run),
            events: super::record::events_ref(&meta.run, &driver),
        },
    }
}

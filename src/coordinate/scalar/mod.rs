//! The ASSEMBLY → CONVERGE driver for the scalar classes, as a function over [`Peer`]s.
//!
//! [`run`] takes a run definition ([`ConvergeDef`]) and the peers, and drives both phases:
//!
//! 1. **ASSEMBLY.** Each peer is hopped once, in ring order, with the goal, the seeded class and the
//!    earlier replies. Its CLASS and UPDATE lines are read with the line parsers; the class is
//!    inferred by [`AssemblySession`] (seeded with `--pattern` unless that is `unmapped`), and each
//!    rule is scored against the inferred class's reference ([`crate::assembly::score_rule`]).
//!    [`preflight`] decides whether CONVERGE may start: an unimplemented class halts `unmapped` (a
//!    successful modelling outcome), a peer without a usable rule halts `missing-update-rule`.
//!    ASSEMBLY asks each peer once: its reply *is* the derivation being measured, so a peer is not
//!    coached towards a rule, and a failed call leaves it without one.
//! 2. **CONVERGE.** Epoch by epoch, each peer in ring order sees its own rule and its local
//!    quantities ([`crate::engines::ScalarEngine::local_view`]) and replies with `ANNOUNCE` and
//!    `VOTE`. The driver turns the reply into a ballot event and a scalar event, applies them
//!    through [`MasRuntime`] (ballot first: the last announcement closes the epoch), and feeds each
//!    closed epoch to the [`ConvergeController`]. A reply that cannot be used — a failed call, no
//!    readable ANNOUNCE, an `agent=`/`epoch=` that is not this peer's or this epoch's, a value the
//!    engine would refuse — is asked once more with the reason; a second failure halts
//!    `unreadable-announcement`. Nothing is ever substituted.
//!
//! Every step is a [`RunEvent`] handed to the caller's sink as it happens (the CLI prints it and
//! records it under `refs/mas/runs/<run>/`, see [`record`]). The report ([`report::build_report`])
//! is a pure function of the run definition and the recorded events: it re-derives the class,
//! re-scores the rules and replays the recorded semantic events into a fresh engine, so the report
//! printed at the end of a run and the one `git mas report` renders from the refs are one
//! computation over one input.
//!
//! Limits: every hop has a timeout, and the whole run a budget; a hop's timeout is the smaller of
//! its own and what is left of the budget, and a run whose budget runs out halts
//! `budget-exhausted`.

pub mod plot;
pub mod record;
pub mod report;

pub use report::{Announced, Derivation, MetricReport, Optimum, PeerExecution, Report, TrajectoryPoint, build_report};

use crate::assembly::{
    AssemblySession, Inference, Quantities, parse_announce, parse_update_line, parse_vote, score_rule,
};
use crate::engines::{Cascade, Preference, Resource};
use crate::engines::{
    CascadeConfig, ConvergeController, ConvergeHalt, DEFAULT_PLATEAU_K, EngineError, PreferenceConfig, ResourceConfig,
    ScalarEngine, ScalarModel, preflight,
};
use crate::peers::{Hop, Peer, PeerEntry};
use crate::runtime::{
    CoordinationEngine, EpochSummary, EventMetadata, EventOutcome, MasRuntime, PatternKind, ProtocolPhase,
    SemanticEvent, Vote,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Default CONVERGE horizon cap, in epochs.
pub const DEFAULT_MAX_ROUNDS: u64 = 60;
/// Default time a peer has for one hop.
pub const DEFAULT_HOP_TIMEOUT: Duration = Duration::from_secs(120);
/// Default time the whole run has.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(30 * 60);
/// How much of each earlier reply an ASSEMBLY prompt quotes.
pub const TRANSCRIPT_REPLY_LIMIT: usize = 16 * 1024;

/// The run's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// CONVERGE horizon cap, in epochs (the class's own horizon may be shorter).
    pub max_rounds: u64,
    /// Time a peer has for one hop, in milliseconds.
    pub hop_timeout_ms: u64,
    /// Time the whole run has, in milliseconds.
    pub budget_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_rounds: DEFAULT_MAX_ROUNDS,
            hop_timeout_ms: DEFAULT_HOP_TIMEOUT.as_millis() as u64,
            budget_ms: DEFAULT_BUDGET.as_millis() as u64,
        }
    }
}

/// A converge run's definition, the first record of its `meta` chain ([`crate::devrun::definition`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConvergeDef {
    /// The run id.
    pub run: String,
    /// The team's goal.
    pub goal: String,
    /// The class the run was seeded with (`--pattern`; `unmapped`: none).
    pub pattern: PatternKind,
    /// The peers, in ring order.
    pub peers: Vec<PeerEntry>,
    /// The agent that drives the run and signs its events.
    pub driver: String,
    /// The limits.
    pub limits: Limits,
    /// An ASSEMBLY before an aggregate development run: the frame's files the peers may split
    /// the work into (`SLICE` lines; empty: no split is asked for).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub split: Vec<String>,
}

/// The goal a run gets when none is given: the problem in words, without its answer.
pub fn default_goal(pattern: PatternKind) -> &'static str {
    match pattern {
        PatternKind::Preference => {
            "Agree on shared scores: each node on a line holds a private score and wants a value close to \
             it and to its neighbours' values (quadratic preference aggregation)."
        }
        PatternKind::Cascade => {
            "Keep a supply chain stocked: each stage orders from the stage above to cover the demand it \
             faces, holding inventory near a target without amplifying orders up the pipeline."
        }
        PatternKind::Resource => {
            "Share a renewable resource: each agent extracts from a common stock that regrows, a price on \
             extraction tracks a quota, and the team wants the stock to last."
        }
        PatternKind::Development | PatternKind::Unmapped => {
            "Model the problem the team is given: name its class and derive the rule each member will apply."
        }
    }
}

/// The engine a CONVERGE runs on, with its constants (stored, so a replay builds the same engine).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "class", rename_all = "kebab-case")]
pub enum EngineSetup {
    /// Preference aggregation.
    Preference(PreferenceConfig),
    /// Supply-chain cascade.
    Cascade(CascadeConfig),
    /// Sustainable resource.
    Resource(ResourceConfig),
}

impl EngineSetup {
    /// The published constants for `pattern`, with the horizon capped at `max_rounds` (`None` for
    /// classes without a scalar engine).
    pub fn for_class(pattern: PatternKind, max_rounds: u64) -> Option<EngineSetup> {
        let cap = Some(max_rounds);
        Some(match pattern {
            PatternKind::Preference => {
                EngineSetup::Preference(PreferenceConfig { max_rounds: cap, ..PreferenceConfig::default() })
            }
            PatternKind::Cascade => EngineSetup::Cascade(CascadeConfig { max_rounds: cap, ..CascadeConfig::default() }),
            PatternKind::Resource => {
                EngineSetup::Resource(ResourceConfig { max_rounds: cap, ..ResourceConfig::default() })
            }
            PatternKind::Development | PatternKind::Unmapped => return None,
        })
    }

    /// The class.
    pub fn pattern(&self) -> PatternKind {
        match self {
            EngineSetup::Preference(_) => PatternKind::Preference,
            EngineSetup::Cascade(_) => PatternKind::Cascade,
            EngineSetup::Resource(_) => PatternKind::Resource,
        }
    }
}

/// One call to a peer, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HopRecord {
    /// ASSEMBLY or CONVERGE.
    pub phase: ProtocolPhase,
    /// The peer asked.
    pub peer: String,
    /// The open epoch (CONVERGE only).
    pub epoch: Option<u64>,
    /// 1, or 2 when the first reply could not be used.
    pub attempt: u32,
    /// `sha256:<hex>` of the prompt.
    pub prompt_digest: String,
    /// The prompt's length in bytes.
    pub prompt_bytes: u64,
    /// The reply; `None` when the call failed.
    pub reply: Option<String>,
    /// Why the reply could not be used (a failed call, or in CONVERGE an unusable announcement).
    pub failure: Option<String>,
    /// How long the call took, in milliseconds.
    pub elapsed_ms: u64,
    /// The quantities the peer was shown (CONVERGE only).
    pub shown: Option<Quantities>,
    /// The value read from the reply's ANNOUNCE line, when it was usable.
    pub announced: Option<f64>,
    /// The ballot read from the reply's VOTE line.
    pub vote: Option<Vote>,
    /// The semantic events the reply became, in the order they were applied.
    pub events: Vec<SemanticEvent>,
    /// What the engine did with each.
    pub outcomes: Vec<EventOutcome>,
}

/// What ASSEMBLY concluded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssemblySummary {
    /// The inferred class.
    pub class: Option<PatternKind>,
    /// How it was inferred.
    pub inference: Option<Inference>,
    /// Each peer's rule and its verdict.
    pub derivation: Vec<Derivation>,
}

/// How CONVERGE was set up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConvergeStart {
    /// The engine and its constants.
    pub setup: EngineSetup,
    /// The participants, in ring order.
    pub roster: Vec<String>,
    /// Each participant's rule, in ring order.
    pub rules: Vec<String>,
    /// The horizon in epochs.
    pub horizon: u64,
    /// Non-improving epochs before a stall halt (`None`: the class judges only at its horizon).
    pub plateau_k: Option<u32>,
}

/// A closed epoch, as the controller saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpochRecord {
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
    /// Consecutive non-improving epochs.
    pub stall: u32,
}

/// Why and where the run stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HaltRecord {
    /// The halt.
    pub halt: ConvergeHalt,
    /// The phase it happened in.
    pub phase: ProtocolPhase,
    /// Epochs closed by then.
    pub epochs: u64,
    /// The peer it is about, when one.
    pub peer: Option<String>,
    /// What happened, for people.
    pub detail: String,
}

/// One step of a run, as the sink sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum RunEvent {
    /// A call to a peer.
    Hop(HopRecord),
    /// ASSEMBLY's conclusion (derived from the hops; not recorded).
    Assembled(AssemblySummary),
    /// CONVERGE started.
    ConvergeStarted(ConvergeStart),
    /// An epoch closed (derived from the hops; not recorded).
    Epoch(EpochRecord),
    /// The run halted.
    Halt(HaltRecord),
    /// The final report.
    Report {
        /// The report.
        report: Box<Report>,
    },
}

impl RunEvent {
    /// The record kind it is stored as, or `None` for events derived from others (not stored).
    pub fn record_kind(&self) -> Option<&'static str> {
        match self {
            RunEvent::Hop(_) => Some("hop"),
            RunEvent::ConvergeStarted(_) => Some("converge-start"),
            RunEvent::Halt(_) => Some("halt"),
            RunEvent::Report { .. } => Some("report"),
            RunEvent::Assembled(_) | RunEvent::Epoch(_) => None,
        }
    }
}

/// Why a run could not be driven (as opposed to a halt, which is an outcome).
#[derive(Debug, Error)]
pub enum DriverError {
    /// The peers do not match the run definition.
    #[error("the peers do not match the run's roster: {why}")]
    Roster {
        /// What differs.
        why: String,
    },
    /// The engine could not be built.
    #[error("cannot start the {pattern} engine")]
    Engine {
        /// The class.
        pattern: PatternKind,
        /// The cause.
        #[source]
        source: EngineError,
    },
    /// The sink refused an event (for example, recording it failed).
    #[error("the run's events could not be recorded")]
    Sink {
        /// The cause.
        #[source]
        source: SinkError,
    },
}

/// What a sink may fail with.
pub type SinkError = Box<dyn std::error::Error + Send + Sync>;

/// What ASSEMBLY's hops add up to: the summary and whether CONVERGE may start.
#[derive(Debug, Clone, PartialEq)]
pub struct AssemblyAssessment {
    /// The class, the inference and each peer's derivation.
    pub summary: AssemblySummary,
    /// The class CONVERGE runs on, or the halt and why.
    pub start: Result<PatternKind, (ConvergeHalt, String)>,
}

/// Re-reads ASSEMBLY from its hops (one per peer, ring order): infers the class, scores every rule
/// and decides whether CONVERGE may start. Pure; the driver and the report both use it.
pub fn assess_assembly(meta: &ConvergeDef, hops: &[&HopRecord]) -> AssemblyAssessment {
    let mut session =
        if meta.pattern.is_implemented() { AssemblySession::seeded(meta.pattern) } else { AssemblySession::new() };
    for hop in hops {
        if let Some(reply) = &hop.reply {
            session.ingest(reply);
        }
    }
    let class = session.inferred();
    let scalar = class.filter(|c| c.is_converge_class());
    let derivation: Vec<Derivation> = meta
        .peers
        .iter()
        .map(|peer| {
            let hop = hops.iter().find(|h| h.peer == peer.name);
            let reply = hop.and_then(|h| h.reply.as_deref());
            let rule = reply.and_then(parse_update_line);
            Derivation {
                peer: peer.name.clone(),
                spec: peer.spec.to_string(),
                class_token: reply.and_then(crate::assembly::parse_class_line).map(|c| c.token),
                verdict: scalar.map(|c| score_rule(c, rule.as_deref())),
                rule,
                failure: hop.and_then(|h| h.failure.clone()),
            }
        })
        .collect();
    let verdicts: Vec<_> = derivation.iter().filter_map(|d| d.verdict.clone()).collect();
    let start = match preflight(class, &verdicts) {
        Ok(pattern) if pattern.is_converge_class() => Ok(pattern),
        Ok(pattern) => Err((
            ConvergeHalt::Unmapped,
            format!(
                "ASSEMBLY named class {pattern}, which has no scalar engine: its CONVERGE runs on code artifacts \
                 (`git mas coordinate`), not on announced values"
            ),
        )),
        Err(ConvergeHalt::MissingUpdateRule) => {
            let missing: Vec<String> = derivation
                .iter()
                .filter(|d| !d.verdict.as_ref().is_some_and(|v| v.is_usable()))
                .map(|d| {
                    let why = match (&d.failure, &d.verdict) {
                        (Some(failure), _) => failure.clone(),
                        (None, Some(crate::assembly::Verdict::Invalid { reason })) => format!("invalid rule: {reason}"),
                        _ => "no UPDATE line".to_owned(),
                    };
                    format!("{}: {why}", d.peer)
                })
                .collect();
            Err((ConvergeHalt::MissingUpdateRule, format!("no usable UPDATE rule from {}", missing.join("; "))))
        }
        Err(halt) => {
            let detail = match session.inference() {
                Some(Inference::ClassLine { token, .. }) => format!(
                    "ASSEMBLY named class {token}, which git-mas has no engine for: the team modelled the problem, \
                     no solver ran"
                ),
                _ => "ASSEMBLY inferred no implemented class: no CLASS line named one and no keywords pointed to \
                      one"
                .to_owned(),
            };
            Err((halt, detail))
        }
    };
    AssemblyAssessment {
        summary: AssemblySummary { class, inference: session.inference().cloned(), derivation },
        start,
    }
}

/// Reads a CONVERGE reply: the announced value and the ballot, or why it cannot be used.
pub fn read_announcement(text: &str, peer: &str, epoch: u64) -> Result<(f64, Option<Vote>), String> {
    let announced = parse_announce(text).map_err(|e| e.to_string())?;
    if let Some(agent) = announced.agent.as_deref().filter(|a| *a != peer) {
        return Err(format!(
            "line {}: agent={agent}, but this reply is from {peer}; write agent={peer}",
            announced.line
        ));
    }
    if let Some(said) = announced.epoch.filter(|e| *e != epoch) {
        return Err(format!("line {}: epoch={said}, but epoch {epoch} is open; write epoch={epoch}", announced.line));
    }
    // `-0` is 0: stored records write it so, and a replay must see the same value.
    Ok((announced.value + 0.0, parse_vote(text)))
}

/// The controller for a CONVERGE set up as `start` (the driver and the report build it alike).
pub fn controller_for<M: ScalarModel>(engine: &ScalarEngine<M>, start: &ConvergeStart) -> ConvergeController {
    let direction = engine.model().metric_spec().direction;
    ConvergeController::new(start.roster.clone(), direction, start.horizon, start.plateau_k)
        .with_baseline(engine.metric())
}

/// Builds the engine a setup describes and hands it to `visit` (one generic call per class).
pub trait EngineVisitor {
    /// The result.
    type Output;
    /// Called with the engine.
    fn visit<M: ScalarModel + report::ModelExtras>(self, engine: ScalarEngine<M>) -> Self::Output;
}

/// Builds the engine for `setup` over `roster` and visits it.
pub fn with_engine<V: EngineVisitor>(
    setup: &EngineSetup,
    roster: Vec<String>,
    visitor: V,
) -> Result<V::Output, EngineError> {
    Ok(match setup {
        EngineSetup::Preference(c) => visitor.visit(Preference::engine(roster, c.clone())?),
        EngineSetup::Cascade(c) => visitor.visit(Cascade::engine(roster, c.clone())?),
        EngineSetup::Resource(c) => visitor.visit(Resource::engine(roster, c.clone())?),
    })
}

fn digest(prompt: &str) -> String {
    use sha2::Digest;
    format!("sha256:{}", crate::identity::key::hex(&sha2::Sha256::digest(prompt.as_bytes())))
}

/// The events so far, and the sink they go to.
struct Log<'s> {
    sink: &'s mut dyn FnMut(&RunEvent) -> Result<(), SinkError>,
    events: Vec<RunEvent>,
}

impl Log<'_> {
    fn emit(&mut self, event: RunEvent) -> Result<(), DriverError> {
        (self.sink)(&event).map_err(|source| DriverError::Sink { source })?;
        self.events.push(event);
        Ok(())
    }

    fn halt(
        &mut self,
        halt: ConvergeHalt,
        phase: ProtocolPhase,
        epochs: u64,
        peer: Option<&str>,
        detail: String,
    ) -> Result<(), DriverError> {
        self.emit(RunEvent::Halt(HaltRecord { halt, phase, epochs, peer: peer.map(str::to_owned), detail }))
    }

    /// Halts because the run's budget ran out.
    fn budget_halt(&mut self, phase: ProtocolPhase, epochs: u64, meta: &ConvergeDef) -> Result<(), DriverError> {
        self.halt(ConvergeHalt::BudgetExhausted, phase, epochs, None, budget_detail(meta))
    }
}

struct Budget {
    deadline: Instant,
    hop_timeout: Duration,
}

impl Budget {
    fn new(limits: &Limits) -> Budget {
        let total = Duration::from_millis(limits.budget_ms);
        Budget {
            deadline: Instant::now().checked_add(total).unwrap_or_else(|| Instant::now() + DEFAULT_BUDGET),
            hop_timeout: Duration::from_millis(limits.hop_timeout_ms),
        }
    }

    /// The timeout for the next hop, or `None` when the budget is spent.
    fn next_timeout(&self) -> Option<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        (!left.is_zero()).then(|| left.min(self.hop_timeout))
    }

    fn exhausted(&self) -> bool {
        self.next_timeout().is_none()
    }
}

fn env(def: &ConvergeDef, peer: &str, phase: ProtocolPhase, epoch: Option<u64>, attempt: u32) -> Vec<(String, String)> {
    let mut env = vec![
        ("GIT_MAS_RUN".to_owned(), def.run.clone()),
        ("GIT_MAS_PEER".to_owned(), peer.to_owned()),
        ("GIT_MAS_PHASE".to_owned(), phase.label().to_owned()),
        ("GIT_MAS_ATTEMPT".to_owned(), attempt.to_string()),
    ];
    if let Some(epoch) = epoch {
        env.push(("GIT_MAS_EPOCH".to_owned(), epoch.to_string()));
    }
    env
}

fn budget_detail(meta: &ConvergeDef) -> String {
    format!(
        "the run's budget of {} ran out before the team halted",
        humantime::format_duration(Duration::from_millis(meta.limits.budget_ms))
    )
}

fn quote(reply: &str) -> String {
    if reply.len() <= TRANSCRIPT_REPLY_LIMIT {
        return reply.to_owned();
    }
    let mut end = TRANSCRIPT_REPLY_LIMIT;
    while !reply.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[… {} more bytes not quoted]", &reply[..end], reply.len() - end)
}

/// Drives one run: ASSEMBLY, then CONVERGE when it may start; hands every event to `sink` as it
/// happens and returns the final report (which was the last event).
///
/// `peers` must be the run's roster, in ring order. A halt is an outcome, not an error; an error
/// means the run could not be driven or recorded.
pub async fn run<P: Peer>(
    meta: &ConvergeDef,
    peers: &mut [P],
    sink: &mut dyn FnMut(&RunEvent) -> Result<(), SinkError>,
) -> Result<Report, DriverError> {
    let names: Vec<String> = peers.iter().map(|p| p.name().to_owned()).collect();
    let roster: Vec<String> = meta.peers.iter().map(|p| p.name.clone()).collect();
    if names != roster {
        return Err(DriverError::Roster { why: format!("given {names:?}, defined {roster:?}") });
    }
    if roster.is_empty() {
        return Err(DriverError::Roster { why: "no peers".into() });
    }
    let budget = Budget::new(&meta.limits);
    let mut log = Log { sink, events: Vec::new() };

    if assembly(meta, peers, &budget, &mut log).await? {
        let hops: Vec<&HopRecord> = log
            .events
            .iter()
            .filter_map(|e| match e {
                RunEvent::Hop(h) if h.phase == ProtocolPhase::Assembly => Some(h),
                _ => None,
            })
            .collect();
        let assessment = assess_assembly(meta, &hops);
        log.emit(RunEvent::Assembled(assessment.summary.clone()))?;
        match assessment.start {
            Err((halt, detail)) => log.halt(halt, ProtocolPhase::Assembly, 0, None, detail)?,
            Ok(pattern) => {
                let rules: Vec<String> =
                    assessment.summary.derivation.iter().map(|d| d.rule.clone().unwrap_or_default()).collect();
                converge(meta, peers, pattern, rules, &budget, &mut log).await?;
            }
        }
    }
    let report = build_report(meta, &log.events);
    log.emit(RunEvent::Report { report: Box::new(report.clone()) })?;
    Ok(report)
}

/// ASSEMBLY; false when the run halted in it (the budget ran out).
async fn assembly<P: Peer>(
    meta: &ConvergeDef,
    peers: &mut [P],
    budget: &Budget,
    log: &mut Log<'_>,
) -> Result<bool, DriverError> {
    let names: Vec<String> = meta.peers.iter().map(|p| p.name.clone()).collect();
    let mut transcript: Vec<(String, String)> = Vec::new();
    for i in 0..peers.len() {
        let Some(timeout) = budget.next_timeout() else {
            log.budget_halt(ProtocolPhase::Assembly, 0, meta)?;
            return Ok(false);
        };
        let name = names[i].clone();
        let prompt = crate::peers::AssemblyPrompt {
            run: &meta.run,
            agent: &name,
            peers: &names,
            next: names.get(i + 1).map(String::as_str),
            goal: &meta.goal,
            class: meta.pattern,
            attempt: 1,
            reason: None,
            transcript: &transcript,
            split: &meta.split,
        }
        .render();
        let hop = Hop { env: env(meta, &name, ProtocolPhase::Assembly, None, 1), timeout, prompt };
        let started = Instant::now();
        let result = peers[i].hop(&hop).await;
        let (reply, failure) = match result {
            Ok(reply) => (Some(reply.text), None),
            Err(e) => (None, Some(e.to_string())),
        };
        if let Some(text) = &reply {
            transcript.push((name.clone(), quote(text)));
        }
        log.emit(RunEvent::Hop(HopRecord {
            phase: ProtocolPhase::Assembly,
            peer: name,
            epoch: None,
            attempt: 1,
            prompt_digest: digest(&hop.prompt),
            prompt_bytes: hop.prompt.len() as u64,
            reply,
            failure,
            elapsed_ms: started.elapsed().as_millis() as u64,
            shown: None,
            announced: None,
            vote: None,
            events: Vec::new(),
            outcomes: Vec::new(),
        }))?;
    }
    if budget.exhausted() {
        // A hop cut short by the budget is not a peer without a rule.
        log.budget_halt(ProtocolPhase::Assembly, 0, meta)?;
        return Ok(false);
    }
    Ok(true)
}

async fn converge<P: Peer>(
    meta: &ConvergeDef,
    peers: &mut [P],
    pattern: PatternKind,
    rules: Vec<String>,
    budget: &Budget,
    log: &mut Log<'_>,
) -> Result<(), DriverError> {
    let Some(setup) = EngineSetup::for_class(pattern, meta.limits.max_rounds) else {
        return log.halt(
            ConvergeHalt::Unmapped,
            ProtocolPhase::Assembly,
            0,
            None,
            format!("class {pattern} has no scalar engine"),
        );
    };
    let roster: Vec<String> = meta.peers.iter().map(|p| p.name.clone()).collect();
    let engine_error = |source| DriverError::Engine { pattern, source };
    // The controller's horizon and stall policy, as for_engine decides them, fixed in the record.
    struct Plan(u64);
    impl EngineVisitor for Plan {
        type Output = (u64, Option<u32>);
        fn visit<M: ScalarModel + report::ModelExtras>(self, engine: ScalarEngine<M>) -> (u64, Option<u32>) {
            let horizon = ConvergeController::for_engine(&engine, self.0).horizon();
            (horizon, engine.model().metric_spec().stall_halts.then_some(DEFAULT_PLATEAU_K))
        }
    }
    let (horizon, plateau_k) =
        with_engine(&setup, roster.clone(), Plan(meta.limits.max_rounds)).map_err(engine_error)?;
    let start = ConvergeStart { setup: setup.clone(), roster: roster.clone(), rules, horizon, plateau_k };
    log.emit(RunEvent::ConvergeStarted(start.clone()))?;
    if horizon == 0 {
        let detail = "the horizon is 0 epochs: there is nothing to converge".to_owned();
        return log.halt(ConvergeHalt::PaperHorizon, ProtocolPhase::Converge, 0, None, detail);
    }
    match setup {
        EngineSetup::Preference(c) => {
            let engine = Preference::engine(roster, c).map_err(engine_error)?;
            converge_on(meta, peers, &start, engine, budget, log).await
        }
        EngineSetup::Cascade(c) => {
            let engine = Cascade::engine(roster, c).map_err(engine_error)?;
            converge_on(meta, peers, &start, engine, budget, log).await
        }
        EngineSetup::Resource(c) => {
            let engine = Resource::engine(roster, c).map_err(engine_error)?;
            converge_on(meta, peers, &start, engine, budget, log).await
        }
    }
}

/// What became of one CONVERGE reply.
struct Used {
    announced: Option<f64>,
    vote: Option<Vote>,
    events: Vec<SemanticEvent>,
    outcomes: Vec<EventOutcome>,
    failure: Option<String>,
}

fn use_reply<M: ScalarModel>(
    runtime: &mut MasRuntime<ScalarEngine<M>>,
    meta: &ConvergeDef,
    peer: &str,
    epoch: u64,
    attempt: u32,
    text: &str,
) -> Used {
    let mut used = Used { announced: None, vote: None, events: Vec::new(), outcomes: Vec::new(), failure: None };
    let (value, vote) = match read_announcement(text, peer, epoch) {
        Ok(read) => read,
        Err(why) => {
            used.failure = Some(why);
            return used;
        }
    };
    used.vote = vote;
    if let Err(reason) = runtime.engine().check_value(value) {
        used.failure = Some(format!("ANNOUNCE value={value} cannot be applied: {reason}"));
        return used;
    }
    used.announced = Some(value);
    let pattern = runtime.engine().pattern();
    let metadata = |what: &str| EventMetadata {
        event_id: format!("{}/{peer}/{epoch}/{attempt}/{what}", meta.run),
        correlation_id: meta.run.clone(),
        epoch,
        source: peer.to_owned(),
    };
    if let Some(vote) = vote {
        used.events.push(SemanticEvent::ballot(pattern, metadata("ballot"), vote));
    }
    used.events.push(SemanticEvent::scalar(pattern, metadata("announce"), value));
    for event in &used.events {
        used.outcomes.push(runtime.apply(event.clone()));
    }
    if let Some(EventOutcome::Rejected(reason)) = used.outcomes.last() {
        used.failure = Some(format!("the announcement was refused: {reason}"));
    }
    used
}

/// One peer's turn in a CONVERGE epoch: what its prompt is made of.
struct Turn<'t> {
    meta: &'t ConvergeDef,
    class: PatternKind,
    name: &'t str,
    next: Option<&'t str>,
    epoch: u64,
    rule: &'t str,
    shown: Quantities,
}

/// How a peer's turn ended.
enum TurnEnd {
    /// A reply was used; the epoch it closed, if it did.
    Used(Option<EpochSummary>),
    /// The budget ran out.
    BudgetOut,
    /// No usable reply, asked twice.
    Unusable,
}

async fn converge_on<M: ScalarModel, P: Peer>(
    meta: &ConvergeDef,
    peers: &mut [P],
    start: &ConvergeStart,
    engine: ScalarEngine<M>,
    budget: &Budget,
    log: &mut Log<'_>,
) -> Result<(), DriverError> {
    let class = engine.pattern();
    let mut controller = controller_for(&engine, start);
    let mut runtime = MasRuntime::new(engine);
    let names = &start.roster;
    loop {
        for i in 0..peers.len() {
            let name = &names[i];
            let turn = Turn {
                meta,
                class,
                name,
                next: names.get(i + 1).map(String::as_str),
                epoch: runtime.engine().epoch(),
                rule: start.rules.get(i).map(String::as_str).unwrap_or(""),
                shown: runtime.engine().local_view(name).map(|v| v.quantities).unwrap_or_default(),
            };
            let closed = match take_turn(&mut peers[i], &turn, &mut runtime, budget, log).await? {
                TurnEnd::Used(closed) => closed,
                TurnEnd::BudgetOut => return log.budget_halt(ProtocolPhase::Converge, controller.epochs(), meta),
                TurnEnd::Unusable => return unreadable_halt(&mut controller, &turn, log),
            };
            if let Some(summary) = closed
                && close_epoch(&mut controller, &summary, log)?
            {
                return Ok(());
            }
        }
    }
}

/// Asks a peer for its announcement, once more with the reason when the reply cannot be used.
async fn take_turn<M: ScalarModel, P: Peer>(
    peer: &mut P,
    turn: &Turn<'_>,
    runtime: &mut MasRuntime<ScalarEngine<M>>,
    budget: &Budget,
    log: &mut Log<'_>,
) -> Result<TurnEnd, DriverError> {
    let mut reason: Option<String> = None;
    for attempt in 1..=2u32 {
        let Some(timeout) = budget.next_timeout() else { return Ok(TurnEnd::BudgetOut) };
        let record = converge_hop(peer, turn, attempt, reason.as_deref(), timeout, runtime).await;
        let closed = match record.outcomes.last() {
            Some(EventOutcome::Finalized(summary)) => Some(summary.clone()),
            _ => None,
        };
        let failure = record.failure.clone();
        log.emit(RunEvent::Hop(record))?;
        if failure.is_none() {
            return Ok(TurnEnd::Used(closed));
        }
        if budget.exhausted() {
            return Ok(TurnEnd::BudgetOut);
        }
        reason = failure;
    }
    Ok(TurnEnd::Unusable)
}

/// One CONVERGE hop: the prompt, the peer's reply, and what became of it, as a record.
async fn converge_hop<M: ScalarModel, P: Peer>(
    peer: &mut P,
    turn: &Turn<'_>,
    attempt: u32,
    reason: Option<&str>,
    timeout: Duration,
    runtime: &mut MasRuntime<ScalarEngine<M>>,
) -> HopRecord {
    let (meta, name, epoch) = (turn.meta, turn.name, turn.epoch);
    let prompt = crate::peers::ConvergePrompt {
        run: &meta.run,
        agent: name,
        next: turn.next,
        epoch,
        goal: &meta.goal,
        class: turn.class,
        rule: turn.rule,
        quantities: &turn.shown,
        attempt,
        reason,
    }
    .render();
    let hop = Hop { env: env(meta, name, ProtocolPhase::Converge, Some(epoch), attempt), timeout, prompt };
    let started = Instant::now();
    let result = peer.hop(&hop).await;
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let (reply, used) = match result {
        Ok(reply) => {
            let used = use_reply(runtime, meta, name, epoch, attempt, &reply.text);
            (Some(reply.text), used)
        }
        Err(e) => {
            (None, Used { announced: None, vote: None, events: vec![], outcomes: vec![], failure: Some(e.to_string()) })
        }
    };
    HopRecord {
        phase: ProtocolPhase::Converge,
        peer: name.to_owned(),
        epoch: Some(epoch),
        attempt,
        prompt_digest: digest(&hop.prompt),
        prompt_bytes: hop.prompt.len() as u64,
        reply,
        failure: used.failure,
        elapsed_ms,
        shown: Some(turn.shown.clone()),
        announced: used.announced,
        vote: used.vote,
        events: used.events,
        outcomes: used.outcomes,
    }
}

/// Halts `unreadable-announcement`, quoting why the second reply could not be used.
fn unreadable_halt(controller: &mut ConvergeController, turn: &Turn<'_>, log: &mut Log<'_>) -> Result<(), DriverError> {
    let halt = controller.halt_with(ConvergeHalt::UnreadableAnnouncement);
    let last = match log.events.last() {
        Some(RunEvent::Hop(h)) => h.failure.clone(),
        _ => None,
    };
    let detail = format!(
        "{} gave no usable announcement for epoch {}, asked twice; the second reply: {}",
        turn.name,
        turn.epoch,
        last.as_deref().unwrap_or("no reason recorded")
    );
    log.halt(halt, ProtocolPhase::Converge, controller.epochs(), Some(turn.name), detail)
}

/// Feeds a closed epoch to the controller and records it; true when the controller halts the run.
fn close_epoch(
    controller: &mut ConvergeController,
    summary: &EpochSummary,
    log: &mut Log<'_>,
) -> Result<bool, DriverError> {
    let signal = controller.observe_summary(summary);
    log.emit(RunEvent::Epoch(EpochRecord {
        epoch: summary.epoch,
        metric: summary.metric,
        values: summary.values.clone(),
        stop_votes: signal.stop_votes,
        improved: signal.improved,
        stall: signal.stall,
    }))?;
    let Some(halt) = signal.halt else { return Ok(false) };
    log.halt(halt, ProtocolPhase::Converge, signal.epochs, None, report::describe_halt(halt, &signal))?;
    Ok(true)
}

#[cfg(test)]
mod tests;

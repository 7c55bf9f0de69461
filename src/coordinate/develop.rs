//! The development CONVERGE: a team of agents proposes code artifacts, endorses them by running
//! the team's check, and the driver lands the winner once a quorum holds.
//!
//! [`develop`] drives one run:
//!
//! 1. **Start.** An aggregate run's slices are first taken as lanes ([`crate::attention::lanes`]).
//!    Then `run start` for the team's roster (every peer must be an agent on the committed roster:
//!    agents sign their own records), and one linked worktree per agent at the run's base (`git mas
//!    worktree add`: its configuration names the agent and the run).
//! 2. **Rounds**, up to `max_rounds`. In ring order, each agent gets a *propose* hop (phase
//!    CONVERGE, the goal, its worktree, what to run); then each agent gets an *endorse* hop naming
//!    the proposals it has not judged yet. After each hop the driver waits, up to a deadline, for
//!    the agent's record to appear in `refs/mas/runs/<run>/events/<agent>`: a new proposal, or a
//!    verdict on every proposal named. Then it tallies (the same replay as `git mas tally`) and,
//!    when the leader has its quorum, lands it (the same plan and transaction as `git mas land`).
//! 3. **End.** A landing ends the run; otherwise, after the last round, the run is aborted with the
//!    reason; the slices' lanes are released. Either way the convergence report is stored under
//!    `refs/mas/runs/<run>/report` and returned; after a landing each agent gets a *close* hop.
//!
//! Replies: each must end with `NEXT <agent>` or `DONE` ([`super::read_reply`]). A failed call or a
//! reply without a handoff is asked once more with the reason; a second failure halts the run
//! `unreadable-reply` with that reason. A readable reply whose record does not appear by the
//! deadline is asked once more too; if the record still does not appear, the agent sits the task
//! out (its absence shows in the tally) and the run goes on. The driver never writes a proposal or
//! an endorsement for an agent.
//!
//! Every hop's timeout is the smaller of the per-hop timeout and what is left of the run's budget;
//! a budget spent halts the run `budget-exhausted`.

use super::{DevPrompt, Task, read_reply};
use crate::assembly::Handoff;
use crate::convergence::{ConvergenceReport, RecordedConflict, SliceStatus};
use crate::devrun::events::{self, ENDORSEMENT_KIND, PROPOSAL_KIND};
use crate::devrun::slices::SlicePlan;
use crate::devrun::view::{self, RunView};
use crate::devrun::{self, NewRun, RunError, now_ms};
use crate::identity::{AgentKey, Roster};
use crate::ops::land::{self, LandOptions, LandOutcome, Lander, StoreHost};
use crate::peers::{Hop, Peer, ProcessPeer};
use crate::pool::check::check_command;
use crate::pool::{PoolError, worktree};
use crate::store::{Store, StoreError};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use thiserror::Error;

/// How often the driver looks for an agent's records while it waits.
const POLL: Duration = Duration::from_millis(100);

/// What a development run is given.
#[derive(Debug, Clone)]
pub struct DevSetup {
    /// The team's goal.
    pub goal: String,
    /// Valid endorsements a proposal needs (default: a strict majority).
    pub quorum: Option<u32>,
    /// Rounds of proposals and endorsements.
    pub max_rounds: u64,
    /// The team's check command (default: `git config mas.check`).
    pub check: Option<String>,
    /// Time one hop has.
    pub hop_timeout: Duration,
    /// Time each check of the run has (recorded in the run's definition).
    pub check_timeout: Duration,
    /// Time the whole run has.
    pub budget: Duration,
    /// How long to wait for an agent's record after its reply.
    pub wait: Duration,
    /// The current frame's hash, shown to agents.
    pub frame: Option<String>,
    /// An aggregate run: the slices, and whether a partial landing is allowed.
    pub aggregate: Option<Aggregate>,
}

/// What makes a development run an aggregate one (seed 001 §7): each agent works its own slice,
/// a wait-all barrier holds until every slice is in, and the merged whole lands once.
#[derive(Debug, Clone)]
pub struct Aggregate {
    /// The slices, recorded in the run's definition.
    pub plan: SlicePlan,
    /// Land the slices at quorum when the rounds end without the others (`--partial`), instead
    /// of nothing.
    pub partial: bool,
    /// The plan's files the frame lists: a focus can name only those.
    pub listed: std::collections::BTreeSet<String>,
}

/// Where one slice stands at the barrier.
#[derive(Debug, Clone, Serialize)]
pub struct BarrierSlice {
    /// The agent.
    pub agent: String,
    /// Where its proposal stands.
    pub status: SliceStatus,
    /// Why it was judged against, or what it waits for.
    pub detail: Option<String>,
}

/// Why a development run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DevHalt {
    /// The winner landed.
    Landed,
    /// The landing was blocked (a merge conflict or a failing check of the merged tree).
    LandBlocked,
    /// The rounds ran out without a landable quorum.
    MaxRoundsReached,
    /// A reply could not be used, twice.
    UnreadableReply,
    /// The budget ran out.
    BudgetExhausted,
    /// Every slice's agent abstained: nothing needed a change, nothing landed.
    NothingToLand,
}

impl DevHalt {
    /// The halt's code.
    pub fn code(self) -> &'static str {
        match self {
            DevHalt::Landed => "landed",
            DevHalt::LandBlocked => "land-blocked",
            DevHalt::MaxRoundsReached => "max-rounds-reached",
            DevHalt::UnreadableReply => "unreadable-reply",
            DevHalt::BudgetExhausted => "budget-exhausted",
            DevHalt::NothingToLand => "nothing-to-land",
        }
    }
}

/// One call to an agent, as streamed.
#[derive(Debug, Clone, Serialize)]
pub struct DevHop {
    /// The agent.
    pub peer: String,
    /// What it was asked.
    pub task: Task,
    /// The round.
    pub round: u64,
    /// 1, or 2 when the first reply could not be used.
    pub attempt: u32,
    /// `sha256:<hex>` of the prompt.
    pub prompt_digest: String,
    /// The prompt's length in bytes.
    pub prompt_bytes: u64,
    /// The reply; `None` when the call failed.
    pub reply: Option<String>,
    /// Why the reply could not be used.
    pub failure: Option<String>,
    /// How the reply handed the turn on.
    pub handoff: Option<Handoff>,
    /// How long the call took, in milliseconds.
    pub elapsed_ms: u64,
}

/// One proposal in a tally.
#[derive(Debug, Clone, Serialize)]
pub struct TalliedProposal {
    /// The proposer.
    pub agent: String,
    /// Its tree.
    pub tree: String,
    /// Its valid endorsers.
    pub endorsers: Vec<String>,
    /// Endorsers whose check failed on it.
    pub failed: Vec<String>,
}

/// One step of a development run, as the sink sees it.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum DevEvent {
    /// The run was started.
    RunStarted {
        /// The run id.
        run: String,
        /// Its base (main's tip).
        base: String,
        /// Its roster.
        roster: Vec<String>,
        /// Its quorum.
        quorum: u32,
        /// The quorum asked, when the roster's size capped it (`quorum` is the cap).
        #[serde(skip_serializing_if = "Option::is_none")]
        requested_quorum: Option<u32>,
        /// Its check command, when the run records one.
        check: Option<String>,
    },
    /// An aggregate run's plan, before the first hop.
    Plan {
        /// The slices, in merge order.
        plan: SlicePlan,
    },
    /// Where each slice stands after a round of an aggregate run.
    Barrier {
        /// The round.
        round: u64,
        /// Whether every slice is in (at quorum, or judged against).
        holds: bool,
        /// Each slice.
        slices: Vec<BarrierSlice>,
    },
    /// A conflict an aggregate landing met, recorded in the run, handed to its agents.
    Conflict {
        /// The round.
        round: u64,
        /// The conflict.
        conflict: RecordedConflict,
    },
    /// An agent's worktree was created.
    Worktree {
        /// The agent.
        agent: String,
        /// Its path.
        path: PathBuf,
    },
    /// A call to an agent.
    Hop(DevHop),
    /// An agent's record appeared.
    Recorded {
        /// The agent.
        agent: String,
        /// `proposal` or `endorsement`.
        kind: String,
        /// Whose proposal an endorsement judges.
        proposer: Option<String>,
    },
    /// An agent's record did not appear by the deadline.
    Missing {
        /// The agent.
        agent: String,
        /// The task.
        task: Task,
        /// What is missing.
        detail: String,
    },
    /// Where the run stands after a round.
    Tally {
        /// The round.
        round: u64,
        /// The quorum.
        quorum: u32,
        /// The quorum asked, when the roster's size capped it (`quorum` is the cap).
        #[serde(skip_serializing_if = "Option::is_none")]
        requested_quorum: Option<u32>,
        /// The leader.
        leader: Option<String>,
        /// Whether the leader has its quorum.
        quorum_reached: bool,
        /// Every proposal.
        proposals: Vec<TalliedProposal>,
    },
    /// The gate denied an agent an edit of a file in another agent's slice (aggregate runs): both
    /// are told in the next round's hop.
    SliceDenied {
        /// The round.
        round: u64,
        /// The agent denied.
        agent: String,
        /// Whose slice holds the file.
        holder: String,
        /// The file.
        file: String,
    },
    /// The leader reached quorum but cannot land yet.
    NotLandable {
        /// The round.
        round: u64,
        /// Why.
        detail: String,
    },
    /// The run landed.
    Landed {
        /// The landing commit on main.
        commit: String,
        /// The winners.
        winners: Vec<String>,
        /// The termination reason in the commit's trailers.
        termination: String,
    },
    /// The run stopped.
    Halt {
        /// Why.
        halt: DevHalt,
        /// The agent it is about, when one.
        peer: Option<String>,
        /// What happened, for people.
        detail: String,
    },
    /// The convergence report (stored under `refs/mas/runs/<run>/report`).
    Report {
        /// The report.
        report: Box<ConvergenceReport>,
    },
}

/// What a sink may fail with (the converge driver's sink error: one type for both drivers).
pub use crate::coordinate::scalar::SinkError;

/// Why a development run could not be driven (a halt is an outcome, not an error).
#[derive(Debug, Error)]
pub enum DevError {
    /// A run operation failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A worktree or landing operation failed.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// Reading or writing refs failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The sink refused an event.
    #[error("the run's events could not be streamed")]
    Sink {
        /// The cause.
        #[source]
        source: SinkError,
    },
    /// A slice overlaps a live lane or claim of someone outside the run: no run was started.
    #[error("{agent}'s slice overlaps {holder}'s {what} (both hold {example}): no run was started")]
    SliceHeld {
        /// The slice's agent.
        agent: String,
        /// Who holds it.
        holder: String,
        /// Its lane or claim (`lane src/**`, `claim on src/a.rs`).
        what: String,
        /// A path both hold.
        example: String,
    },
    /// An agent's key, which signs its slice's lane, could not be loaded.
    #[error("the key of {agent}, which signs its slice's lane, could not be loaded")]
    Key {
        /// The agent.
        agent: String,
        /// The cause.
        #[source]
        source: crate::identity::key::KeyError,
    },
    /// The claims lock or the board could not be read while taking the slices' lanes.
    #[error(transparent)]
    Team(#[from] crate::attention::team::TeamError),
}

/// How a development run ended.
#[derive(Debug, Clone)]
pub struct DevOutcome {
    /// The run id.
    pub run: String,
    /// Why it stopped.
    pub halt: DevHalt,
    /// The landing commit, when it landed.
    pub landed: Option<String>,
    /// The convergence report.
    pub report: ConvergenceReport,
    /// The agents' worktrees.
    pub worktrees: Vec<(String, PathBuf)>,
}

struct Budget {
    deadline: Instant,
    hop: Duration,
}

impl Budget {
    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    fn next_timeout(&self) -> Option<Duration> {
        let left = self.left();
        (!left.is_zero()).then(|| left.min(self.hop))
    }
}

fn digest(prompt: &str) -> String {
    use sha2::Digest;
    format!("sha256:{}", crate::identity::key::hex(&sha2::Sha256::digest(prompt.as_bytes())))
}

/// Counts of an agent's records in the run: (agent, kind, proposer) → how many.
type Counts = BTreeMap<(String, String, Option<String>), usize>;

fn counts(store: &Store, roster: &Roster, run: &str) -> Result<Counts, DevError> {
    let loaded = events::load(store, roster, run)?;
    let mut out = Counts::new();
    for e in loaded.events {
        *out.entry((e.agent, e.kind, e.record.proposer)).or_default() += 1;
    }
    Ok(out)
}

fn count(c: &Counts, agent: &str, kind: &str, proposer: Option<&str>) -> usize {
    c.get(&(agent.to_owned(), kind.to_owned(), proposer.map(str::to_owned))).copied().unwrap_or(0)
}

/// Whether the records `task` asks of `agent` have appeared since `before`.
fn recorded(task: Task, agent: &str, targets: &[String], before: &Counts, now: &Counts) -> bool {
    match task {
        Task::Propose => count(now, agent, PROPOSAL_KIND, None) > count(before, agent, PROPOSAL_KIND, None),
        Task::Endorse => targets
            .iter()
            .all(|p| count(now, agent, ENDORSEMENT_KIND, Some(p)) > count(before, agent, ENDORSEMENT_KIND, Some(p))),
        Task::Close => true,
    }
}

struct Driver<'a> {
    store: &'a Store,
    roster: Roster,
    driver: &'a str,
    key: &'a AgentKey,
    setup: &'a DevSetup,
    run: String,
    names: Vec<String>,
    worktrees: Vec<(String, PathBuf)>,
    check: Option<String>,
    budget: Budget,
    sink: &'a mut dyn FnMut(&DevEvent) -> Result<(), SinkError>,
    /// What the last round left for each agent to resolve (aggregate runs).
    notes: BTreeMap<String, Vec<String>>,
    /// The last aggregate landing was blocked: why.
    blocked: Option<String>,
    /// The members of the last whole held back because tests still failed on it: the same whole
    /// again (nothing changed since) lands as it is.
    held: Option<Vec<(String, String)>>,
    /// The gate's denials already handed on: (time, agent, file), and the time from which the
    /// log is read (the run's start, in unix seconds).
    denials_seen: (u64, std::collections::BTreeSet<(u64, String, String)>),
}

/// One request to an agent: who, what, and the attempt.
struct Asking<'a> {
    i: usize,
    task: Task,
    round: u64,
    targets: &'a [String],
    landed: Option<(&'a str, &'a [String])>,
    attempt: u32,
    reason: Option<&'a str>,
}

/// What became of one agent's task.
enum Asked {
    /// The reply was readable (and the records appeared, or the agent sat the task out).
    Done,
    /// The run halts.
    Halt(DevHalt, String),
}

impl Driver<'_> {
    fn emit(&mut self, event: DevEvent) -> Result<(), DevError> {
        (self.sink)(&event).map_err(|source| DevError::Sink { source })
    }

    fn view(&self) -> Result<RunView, DevError> {
        let meta = devrun::load_meta(self.store, &self.roster, &self.run)?;
        Ok(view::load(self.store, &self.roster, meta, events::self_endorse_allowed(self.store))?)
    }

    fn budget_detail(&self) -> String {
        format!(
            "the run's budget of {} ran out before the team converged",
            humantime::format_duration(self.setup.budget)
        )
    }

    /// Asks agent `i` to do `task` (twice at most), then waits for its records.
    async fn ask(
        &mut self,
        peer: &mut ProcessPeer,
        i: usize,
        task: Task,
        round: u64,
        targets: &[String],
        landed: Option<(&str, &[String])>,
    ) -> Result<Asked, DevError> {
        let name = self.names[i].clone();
        let mut reason: Option<String> = None;
        for attempt in 1..=2u32 {
            let Some(timeout) = self.budget.next_timeout() else {
                return Ok(Asked::Halt(DevHalt::BudgetExhausted, self.budget_detail()));
            };
            let asking = Asking { i, task, round, targets, landed, attempt, reason: reason.as_deref() };
            let hop = self.hop(&asking, timeout);
            let before = if task == Task::Close { Counts::new() } else { counts(self.store, &self.roster, &self.run)? };
            let started = Instant::now();
            let result = peer.hop(&hop).await;
            let elapsed_ms = started.elapsed().as_millis() as u64;
            let (reply, read) = match result {
                Ok(r) => {
                    let read = read_reply(&r.text, &self.names);
                    (Some(r.text), read)
                }
                Err(e) => (None, Err(e.to_string())),
            };
            let failure = read.as_ref().err().cloned();
            self.emit(DevEvent::Hop(DevHop {
                peer: name.clone(),
                task,
                round,
                attempt,
                prompt_digest: digest(&hop.prompt),
                prompt_bytes: hop.prompt.len() as u64,
                reply,
                failure: failure.clone(),
                handoff: read.ok(),
                elapsed_ms,
            }))?;
            if let Some(failure) = failure {
                if task == Task::Close {
                    return Ok(Asked::Done);
                }
                if attempt == 2 {
                    let detail =
                        format!("{name}'s reply could not be used, asked twice ({} hop): {failure}", task.name());
                    return Ok(Asked::Halt(DevHalt::UnreadableReply, detail));
                }
                reason = Some(failure);
                continue;
            }
            if task == Task::Close || self.wait_for_records(&name, task, targets, &before).await? {
                return Ok(Asked::Done);
            }
            let detail = self.missing_detail(&name, i, task, targets);
            self.emit(DevEvent::Missing { agent: name.clone(), task, detail: detail.clone() })?;
            if self.budget.next_timeout().is_none() {
                return Ok(Asked::Halt(DevHalt::BudgetExhausted, self.budget_detail()));
            }
            reason = Some(detail);
        }
        Ok(Asked::Done)
    }

    /// The hop that asks agent `a.i` for its task: the prompt and the environment.
    fn hop(&self, a: &Asking<'_>, timeout: Duration) -> Hop {
        let name = &self.names[a.i];
        let next = self.names.get(a.i + 1).cloned();
        let worktree = self.worktrees[a.i].1.display().to_string();
        let slice = self.setup.aggregate.as_ref().and_then(|g| g.plan.slice(name)).filter(|_| a.task == Task::Propose);
        let focus = match (&self.setup.aggregate, slice) {
            (Some(g), Some(s)) => s.focus(|t| g.listed.contains(t)),
            _ => Vec::new(),
        };
        let prompt = DevPrompt {
            run: &self.run,
            agent: name,
            task: a.task,
            round: a.round,
            next: next.as_deref(),
            goal: &self.setup.goal,
            worktree: &worktree,
            frame: self.setup.frame.as_deref(),
            check: self.check.as_deref(),
            endorse: a.targets,
            landed: a.landed.map(|(c, _)| c),
            winners: a.landed.map_or(&[], |(_, w)| w),
            attempt: a.attempt,
            reason: a.reason,
            slice,
            focus: &focus,
            notes: self.notes.get(name).map_or(&[], Vec::as_slice),
        }
        .render();
        let env = vec![
            ("GIT_MAS_AGENT".to_owned(), name.clone()),
            ("GIT_MAS_PEER".to_owned(), name.clone()),
            ("GIT_MAS_RUN".to_owned(), self.run.clone()),
            ("GIT_MAS_PHASE".to_owned(), "CONVERGE".to_owned()),
            ("GIT_MAS_TASK".to_owned(), a.task.name().to_owned()),
            ("GIT_MAS_ROUND".to_owned(), a.round.to_string()),
            ("GIT_MAS_ATTEMPT".to_owned(), a.attempt.to_string()),
            ("GIT_MAS_WORKTREE".to_owned(), worktree),
        ];
        Hop { prompt, timeout, env }
    }

    /// Waits, up to the deadline, for the records a readable reply to `task` stands for; emits
    /// them. Whether they appeared.
    async fn wait_for_records(
        &mut self,
        name: &str,
        task: Task,
        targets: &[String],
        before: &Counts,
    ) -> Result<bool, DevError> {
        let deadline = Instant::now() + self.setup.wait.min(self.budget.left());
        loop {
            let now = counts(self.store, &self.roster, &self.run)?;
            if recorded(task, name, targets, before, &now) {
                match task {
                    Task::Propose => self.emit(DevEvent::Recorded {
                        agent: name.into(),
                        kind: PROPOSAL_KIND.into(),
                        proposer: None,
                    })?,
                    _ => {
                        for p in targets {
                            self.emit(DevEvent::Recorded {
                                agent: name.into(),
                                kind: ENDORSEMENT_KIND.into(),
                                proposer: Some(p.clone()),
                            })?;
                        }
                    }
                }
                return Ok(true);
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// What is missing when agent `i`'s records for `task` did not appear.
    fn missing_detail(&self, name: &str, i: usize, task: Task, targets: &[String]) -> String {
        let wait = humantime::format_duration(self.setup.wait);
        match task {
            Task::Propose => format!(
                "no new proposal from {name} appeared in refs/mas/runs/{}/events/{name} within {wait}; run `git mas propose` in {}",
                self.run,
                self.worktrees[i].1.display()
            ),
            _ => format!(
                "no new endorsement from {name} of each of {} appeared within {wait}; run `git mas endorse <agent>` for each",
                targets.join(", "),
            ),
        }
    }

    fn tally_event(&mut self, round: u64, view: &RunView) -> Result<(), DevError> {
        let t = &view.tally;
        let proposals = t
            .proposals
            .iter()
            .map(|p| TalliedProposal {
                agent: p.agent.clone(),
                tree: p.tree.clone(),
                endorsers: p.endorsers.clone(),
                failed: p.failures().map(|v| v.endorser.clone()).collect(),
            })
            .collect();
        self.emit(DevEvent::Tally {
            round,
            quorum: t.quorum,
            requested_quorum: view.meta.def.requested_quorum,
            leader: t.leader.clone(),
            quorum_reached: t.quorum_reached(),
            proposals,
        })
    }

    /// Lands the leader, or in an aggregate run every slice at quorum (with `partial`, leaving
    /// out those still waiting), through the library's one landing operation. With `hold`, a
    /// whole that would land partial (tests still failing) is not written: [`Landing::Held`].
    fn land(&mut self, round: u64, (partial, hold): (bool, bool)) -> Result<Landing, DevError> {
        let mut host = StoreHost { store: self.store, roster: &self.roster };
        let lander = Lander { name: self.driver, key: self.key };
        // The report is stored when the run ends; a landing recorded by anyone is the result.
        let aggregate = self.setup.aggregate.is_some();
        let options = LandOptions { aggregate, partial, report: false, any_landing: true, hold_partial: hold };
        let (commit, winners, termination) =
            match land::land_run(self.store, &mut host, Some(&self.run), Some(lander), options).map(|r| r.outcome) {
                Ok(LandOutcome::Recorded { landing, .. }) => {
                    let winners: Vec<String> = landing.winners.iter().map(|(a, _)| a.clone()).collect();
                    (landing.commit, winners, landing.termination)
                }
                Ok(LandOutcome::Landed { plan, termination, landed, .. }) => {
                    let winners = plan.members.iter().map(|(a, _)| a.clone()).collect();
                    (landed.record.commit, winners, termination.name().to_string())
                }
                Ok(LandOutcome::Blocked { plan, .. }) => {
                    let detail = plan.conflicts.iter().map(|c| c.detail.clone()).collect::<Vec<_>>().join("; ");
                    return Ok(Landing::Blocked(plan.conflicts, format!("the landing is blocked: {detail}")));
                }
                Ok(LandOutcome::WouldLand { plan, .. }) => return Ok(Landing::Held(Box::new(plan))),
                Err(PoolError::MainMoved { .. }) => {
                    self.emit(DevEvent::NotLandable { round, detail: "main kept moving while landing".into() })?;
                    return Ok(Landing::NotYet);
                }
                Err(e) if e.is_refusal() => {
                    self.emit(DevEvent::NotLandable { round, detail: e.to_string() })?;
                    return Ok(Landing::NotYet);
                }
                Err(e) => return Err(e.into()),
            };
        self.emit(DevEvent::Landed { commit: commit.clone(), winners: winners.clone(), termination })?;
        Ok(Landing::Landed(commit, winners))
    }

    /// Ends an unlanded run after `rounds` rounds: abort with the reason (unless a blocked
    /// landing already records it). An agent that could not be worked with (its reply unusable
    /// twice, its record never made) is a blocking risk: the report says blocked / risk_blocked,
    /// not that the rounds ran out.
    fn end_unlanded(&mut self, halt: DevHalt, detail: &str, rounds: u64) -> Result<(), DevError> {
        if halt != DevHalt::LandBlocked {
            let risk = halt == DevHalt::UnreadableReply;
            let stop = devrun::Stop { reason: detail, risk, rounds: Some(rounds), halt: Some(halt.code()) };
            devrun::abort(self.store, &self.roster, &self.run, stop, self.driver, self.key)?;
        }
        Ok(())
    }
}

/// Drives one development run with `peers` (the team, in ring order; every peer's name an agent
/// on the repository's roster), signed as `driver`. Every step goes to `sink` as it happens.
pub async fn develop(
    store: &Store,
    driver: &str,
    key: &AgentKey,
    setup: &DevSetup,
    peers: &mut [ProcessPeer],
    sink: &mut dyn FnMut(&DevEvent) -> Result<(), SinkError>,
) -> Result<DevOutcome, DevError> {
    let names: Vec<String> = peers.iter().map(|p| p.name().to_owned()).collect();
    let held = setup.aggregate.as_ref().map(|g| lanes::hold_slices(store, &g.plan, driver, &names, setup.budget));
    let held = held.transpose()?.unwrap_or_default();
    let outcome = run(store, driver, key, setup, peers, names, sink).await;
    lanes::release_slices(store, &held);
    outcome
}

/// The run itself, between its slices' lanes being taken and released.
async fn run(
    store: &Store,
    driver: &str,
    key: &AgentKey,
    setup: &DevSetup,
    peers: &mut [ProcessPeer],
    names: Vec<String>,
    sink: &mut dyn FnMut(&DevEvent) -> Result<(), SinkError>,
) -> Result<DevOutcome, DevError> {
    let started = Instant::now();
    let new = NewRun {
        id: None,
        goal: setup.goal.clone(),
        roster: Some(names.clone()),
        quorum: setup.quorum,
        max_rounds: Some(setup.max_rounds),
        budget_ms: Some(u64::try_from(setup.budget.as_millis()).unwrap_or(u64::MAX)),
        check: setup.check.clone(),
        slices: setup.aggregate.as_ref().map(|g| g.plan.clone()),
        check_timeout_ms: Some(u64::try_from(setup.check_timeout.as_millis()).unwrap_or(u64::MAX)),
    };
    let def = devrun::start(store, &new, driver, key)?;
    let check = check_command(store, None, def.check.as_deref());
    let roster = store.roster()?;
    let mut d = Driver {
        store,
        roster,
        driver,
        key,
        setup,
        run: def.id.clone(),
        names: def.roster.clone(),
        worktrees: Vec::new(),
        check,
        budget: Budget { deadline: started + setup.budget, hop: setup.hop_timeout },
        sink,
        notes: BTreeMap::new(),
        blocked: None,
        held: None,
        denials_seen: (crate::attention::focus_store::now_secs().saturating_sub(1), Default::default()),
    };
    d.emit(DevEvent::RunStarted {
        run: def.id.clone(),
        base: def.base.clone(),
        roster: def.roster.clone(),
        quorum: def.quorum,
        requested_quorum: def.requested_quorum,
        check: def.check.clone(),
    })?;
    if let Some(plan) = &def.slices {
        d.emit(DevEvent::Plan { plan: plan.clone() })?;
    }
    // The run's roster is sorted; the ring is the order the peers were given in.
    d.names = names;
    let meta = devrun::load_meta(store, &d.roster, &def.id)?;
    for peer in peers.iter_mut() {
        let name = peer.name().to_owned();
        let path = worktree::default_path(store, &def.id, &name);
        let created = worktree::add(store, &meta, &name, &path)?;
        peer.set_dir(Some(created.path.clone()));
        d.emit(DevEvent::Worktree { agent: name.clone(), path: created.path.clone() })?;
        d.worktrees.push((name, created.path));
    }

    let mut end: Option<End> = None;
    let mut last_round = 0;
    for round in 1..=setup.max_rounds {
        last_round = round;
        end = d.round(peers, round).await?;
        if end.is_some() {
            break;
        }
    }
    let end = end.or_else(|| d.aggregate_rounds_out(setup.max_rounds)).unwrap_or_else(|| End {
        halt: DevHalt::MaxRoundsReached,
        peer: None,
        detail: format!("{} round(s) passed without a landable quorum of {}", setup.max_rounds, def.quorum),
        landed: None,
    });
    d.finish(peers, end, last_round).await
}

/// What a landing attempt came to.
enum Landing {
    /// Landed: the commit and the winners.
    Landed(String, Vec<String>),
    /// Not landable yet (said as an event).
    NotYet,
    /// Blocked: the conflicts (recorded in the run) and what to say.
    Blocked(Vec<RecordedConflict>, String),
    /// Held: the whole improves on main but tests still fail on it (asked with `hold`).
    Held(Box<land::commit::LandPlan>),
}

/// How the rounds ended: the halt, the agent it is about, what happened, and what landed
/// (the commit and the winners).
struct End {
    halt: DevHalt,
    peer: Option<String>,
    detail: String,
    landed: Option<(String, Vec<String>)>,
}

impl End {
    fn halt(halt: DevHalt, peer: Option<String>, detail: String) -> Option<End> {
        Some(End { halt, peer, detail, landed: None })
    }

    fn landed(commit: String, winners: Vec<String>) -> End {
        let detail = if winners.len() > 1 {
            format!("the slices of {} landed on main together as {commit}", winners.join(", "))
        } else {
            format!("{}'s proposal landed on main as {commit}", winners.join(", "))
        };
        End { halt: DevHalt::Landed, peer: None, detail, landed: Some((commit, winners)) }
    }
}

impl Driver<'_> {
    /// One round: a propose hop for every agent (in an aggregate run, every agent with a slice),
    /// an endorse hop for every agent with proposals
    /// to judge, the tally, and the landing once the leader has its quorum. `Some` when the run
    /// ends.
    async fn round(&mut self, peers: &mut [ProcessPeer], round: u64) -> Result<Option<End>, DevError> {
        let settled = self.settled_slices()?;
        for (i, peer) in peers.iter_mut().enumerate() {
            if settled.contains(&self.names[i]) || self.reviews(&self.names[i]) {
                continue;
            }
            if let Asked::Halt(halt, detail) = self.ask(peer, i, Task::Propose, round, &[], None).await? {
                return Ok(End::halt(halt, Some(self.names[i].clone()), detail));
            }
        }
        for (i, peer) in peers.iter_mut().enumerate() {
            let view = self.view()?;
            let me = &self.names[i];
            let targets: Vec<String> = view
                .tally
                .proposals
                .iter()
                .filter(|p| {
                    &p.agent != me && !p.verdicts.iter().any(|v| &v.endorser == me) && !view.abstained(&p.agent)
                })
                .map(|p| p.agent.clone())
                .collect();
            if targets.is_empty() {
                continue;
            }
            if let Asked::Halt(halt, detail) = self.ask(peer, i, Task::Endorse, round, &targets, None).await? {
                return Ok(End::halt(halt, Some(self.names[i].clone()), detail));
            }
        }
        let view = self.view()?;
        self.tally_event(round, &view)?;
        if self.setup.aggregate.is_some() {
            if let Some(end) = self.aggregate_step(round, &view).await? {
                return Ok(Some(end));
            }
        } else if view.tally.quorum_reached() {
            match self.land(round, (false, false))? {
                Landing::Landed(commit, winners) => return Ok(Some(End::landed(commit, winners))),
                Landing::NotYet | Landing::Held(_) => {}
                Landing::Blocked(_, detail) => return Ok(End::halt(DevHalt::LandBlocked, None, detail)),
            }
        }
        if self.budget.next_timeout().is_none() {
            return Ok(End::halt(DevHalt::BudgetExhausted, None, self.budget_detail()));
        }
        Ok(None)
    }

    /// Ends the run: close hops after a landing (else the abort), the halt, and the report,
    /// stored and emitted.
    async fn finish(mut self, peers: &mut [ProcessPeer], end: End, last_round: u64) -> Result<DevOutcome, DevError> {
        let End { halt, peer, detail, landed } = end;
        if halt == DevHalt::Landed {
            for (i, p) in peers.iter_mut().enumerate() {
                // The run has ended: a close hop that fails changes nothing.
                if self.budget.next_timeout().is_some() {
                    let closing = landed.as_ref().map(|(c, w)| (c.as_str(), w.as_slice()));
                    self.ask(p, i, Task::Close, last_round, &[], closing).await?;
                }
            }
        } else {
            self.end_unlanded(halt, &detail, last_round)?;
        }
        let report = self.view()?.report(now_ms());
        let detail = match report.still_failing {
            Some(n) if halt == DevHalt::Landed => format!("{detail}; partial: {n} test(s) still fail on main"),
            _ => detail,
        };
        self.emit(DevEvent::Halt { halt, peer, detail })?;
        land::store_report(self.store, &self.run, &report, Lander { name: self.driver, key: self.key })?;
        self.emit(DevEvent::Report { report: Box::new(report.clone()) })?;
        let landed = landed.map(|(commit, _)| commit);
        Ok(DevOutcome { run: self.run, halt, landed, report, worktrees: self.worktrees })
    }
}

#[path = "develop_aggregate.rs"]
mod aggregate;
#[path = "develop_lanes.rs"]
mod lanes;
pub use aggregate::{barrier, barrier_holds};

#[cfg(test)]
#[path = "develop_tests.rs"]
mod tests;

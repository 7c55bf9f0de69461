//! One landing of a run, from reading the run to storing its report: the operation both `git mas
//! land` and the development driver (`git mas coordinate`) perform.
//!
//! [`land_run`] reads the run (through its caller's [`LandHost`], which completes a landing a
//! crash left half-finished before anything else reads the run), plans the landing with the
//! run's check ([`check_command`]), records a blocked landing on the meta chain, decides the
//! termination reason and the frame the landing names, writes the landing ([`commit::execute`]:
//! the intent first, then main by compare-and-swap, the landed ref, the checkouts — the crash
//! table in [`commit`]'s docs), plans again when main moved in between, and stores the
//! convergence report last (step 5 of that table). What happens on the way that the caller may want to
//! tell people (a re-plan, an unreadable frame, a report that could not be stored) goes to
//! [`LandHost::notice`]; the result is a typed [`LandOutcome`] for the caller to render.
//!
//! The decisions in between are pure functions with table tests: where a landing starts given the
//! run's phase ([`start`]), and what an error of the write means ([`after_error`]).

pub mod checkout;
pub mod commit;

use crate::attention::frame::{FrameError, current_frame_hash};
use crate::convergence::{self, ConvergenceReport, Outcome, TerminationReason};
use crate::devrun::view::{self, RunView};
use crate::devrun::{self, BlockedPayload, LandingPayload, Phase, RunError, now_ms};
use crate::identity::{AgentKey, Roster};
use crate::pool::PoolError;
use crate::pool::check::check_command;
use crate::store::{Store, StoreError};
use commit::{LandPlan, Landed, Recovery, RecoveryState};

/// How many times a landing plans again when main moves under it.
pub const MAX_ATTEMPTS: u32 = 5;

/// The agent a landing is signed by.
#[derive(Clone, Copy)]
pub struct Lander<'a> {
    /// Its name on the roster.
    pub name: &'a str,
    /// Its key.
    pub key: &'a AgentKey,
}

/// How to land.
#[derive(Debug, Clone, Copy, Default)]
pub struct LandOptions {
    /// Merge every proposal at quorum instead of landing the leader.
    pub aggregate: bool,
    /// With `aggregate`: leave out proposals still waiting for endorsements instead of waiting for
    /// them (a partial landing, when the rounds end).
    pub partial: bool,
    /// Compute the convergence report after the landing (or the blocked landing) and store it
    /// under `refs/mas/runs/<run>/report`. A driver that stores the report when the run ends
    /// leaves this off.
    pub report: bool,
    /// Take a landing recorded by any agent as this landing's result; otherwise only the lander's
    /// own (a retry after a crash), and another's is refused as already landed.
    pub any_landing: bool,
    /// Hold a partial landing: a whole that improves on main without passing its check is not
    /// written but returned as [`LandOutcome::WouldLand`] (a driver with rounds left gives its
    /// agents another round first).
    pub hold_partial: bool,
}

/// What [`land_run`] needs from its caller: the run as the caller reads it, and an ear.
pub trait LandHost {
    /// The caller's error: every error of the landing converts into it.
    type Error: From<PoolError> + From<RunError>;
    /// Reads run `run` (`None`: the caller's default run) whole, a half-finished landing
    /// completed first.
    fn view(&mut self, run: Option<&str>) -> Result<RunView, Self::Error>;
    /// Something worth telling happened.
    fn notice(&mut self, notice: LandNotice);
}

/// What happened on the way, for the caller to tell (or not).
#[derive(Debug)]
pub enum LandNotice {
    /// The integration branch moved while landing: planning again.
    Replanning {
        /// The branch.
        branch: String,
    },
    /// The current frame cannot be read, so the landing names none.
    FrameUnreadable {
        /// Why.
        error: FrameError,
    },
    /// Another landing of the run won; it was completed (this is what recovering it found and did).
    LostRace {
        /// The recovery of the winner's landing.
        recovery: Recovery,
    },
    /// The run landed, but its report could not be stored.
    ReportNotStored {
        /// Why.
        error: RunError,
    },
}

/// A landing of a run and how it ended.
#[derive(Debug)]
pub struct LandResult {
    /// The run.
    pub run: String,
    /// Its integration branch.
    pub branch: String,
    /// How it ended.
    pub outcome: LandOutcome,
}

/// How a landing ended (a refusal is an error).
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one value per landing, moved once
pub enum LandOutcome {
    /// The plan is blocked (merge conflicts, a failing check of the merged tree); with a lander it
    /// is recorded on the meta chain.
    Blocked {
        /// The plan.
        plan: LandPlan,
        /// Whether the blocked landing was recorded (not on a dry run).
        recorded: bool,
        /// The report, when [`LandOptions::report`] (and recorded).
        report: Option<ConvergenceReport>,
    },
    /// A dry run: what would land.
    WouldLand {
        /// The plan.
        plan: LandPlan,
        /// The termination reason the landing would record.
        termination: TerminationReason,
        /// The frame it would name.
        frame: Option<String>,
    },
    /// The run landed now.
    Landed {
        /// The plan that landed.
        plan: LandPlan,
        /// The termination reason recorded.
        termination: TerminationReason,
        /// The frame named.
        frame: Option<String>,
        /// What was written.
        landed: Landed,
        /// The report, when [`LandOptions::report`].
        report: Option<ConvergenceReport>,
    },
    /// The run had landed already: the lander's own landing recorded earlier (a retry after a
    /// crash), or with [`LandOptions::any_landing`] anyone's.
    Recorded {
        /// Who landed it.
        by: String,
        /// The landing record.
        landing: LandingPayload,
        /// The report, when [`LandOptions::report`] (stored now if none was).
        report: Option<ConvergenceReport>,
    },
}

/// Where a landing starts, given the run's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// The run is open: plan.
    Plan,
    /// The run has a landing to report as the result.
    Recorded,
    /// The run has ended otherwise (aborted, landed by another, a landing not completed): refused.
    Refuse,
}

/// Where a landing of a run in `phase` starts, for `lander` (`None`: a dry run).
pub fn start(phase: &Phase, lander: Option<&str>, any_landing: bool) -> Start {
    match phase {
        Phase::Open => Start::Plan,
        Phase::Landed { by, .. } if any_landing || lander == Some(by.as_str()) => Start::Recorded,
        Phase::Landed { .. } | Phase::Landing { .. } | Phase::Aborted { .. } => Start::Refuse,
    }
}

/// What an error of attempt `attempt` to write the landing means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterError {
    /// Main moved: plan again.
    Replan,
    /// Another landing of the run won: complete it, then fail with the error.
    LostRace,
    /// Fail with the error.
    Fail,
}

/// What `error`, met on attempt `attempt` (from 1), means for the landing.
pub fn after_error(error: &PoolError, attempt: u32) -> AfterError {
    match error {
        PoolError::MainMoved { .. } if attempt < MAX_ATTEMPTS => AfterError::Replan,
        PoolError::Run(RunError::Landed { .. }) => AfterError::LostRace,
        _ => AfterError::Fail,
    }
}

/// The termination reason a landing of `plan` records: the convergence report's, were the run
/// landed with `plan`'s members now.
pub fn termination(view: &RunView, plan: &LandPlan) -> TerminationReason {
    let mut state = view.state(now_ms());
    state.outcome = Outcome::Landed {
        winners: plan.members.iter().map(|(a, _)| a.clone()).collect(),
        commit: String::new(),
        merged_check_passed: plan.merged_check.as_ref().map(|c| c.passed()),
        still_failing: plan.still_failing,
    };
    // A landed run always has one (see `convergence::evaluate`).
    convergence::evaluate(&state).termination_reason.unwrap_or(TerminationReason::TasksCompleted)
}

/// Lands run `run` (`None`: the host's default run) as `lander` (`None`: a dry run, which writes
/// nothing). See the module docs.
pub fn land_run<H: LandHost>(
    store: &Store,
    host: &mut H,
    run: Option<&str>,
    lander: Option<Lander<'_>>,
    options: LandOptions,
) -> Result<LandResult, H::Error> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let view = host.view(run)?;
        let done =
            |outcome| LandResult { run: view.meta.def.id.clone(), branch: view.meta.def.branch.clone(), outcome };
        let begin = start(&view.meta.phase, lander.map(|l| l.name), options.any_landing);
        if begin == Start::Refuse {
            view.meta.ensure_open()?;
        }
        if let (Start::Recorded, Phase::Landed { by, landing, .. }) = (begin, &view.meta.phase) {
            return recorded(store, host, &view, (by, landing), lander, options).map(done);
        }
        let check = check_command(store, None, view.meta.def.check.as_deref());
        let plan = commit::plan(store, &view, (options.aggregate, options.partial), check.as_deref())?;
        if plan.blocked() {
            return blocked(store, host, &view, plan, lander, options).map(done);
        }
        let termination = termination(&view, &plan);
        let frame = match current_frame_hash(store) {
            Ok(found) => found.map(|(_, hash)| hash).filter(|h| !h.is_empty()),
            Err(error) => {
                host.notice(LandNotice::FrameUnreadable { error });
                None
            }
        };
        let held = options.hold_partial && plan.still_failing.is_some_and(|n| n > 0);
        let Some(lander) = lander.filter(|_| !held) else {
            return Ok(done(LandOutcome::WouldLand { plan, termination, frame }));
        };
        let def = &view.meta.def;
        let written = commit::execute(store, &view, &plan, termination.name(), frame.clone(), lander.name, lander.key);
        let landed = match written {
            Ok(landed) => landed,
            Err(e) => match after_error(&e, attempt) {
                AfterError::Replan => {
                    host.notice(LandNotice::Replanning { branch: def.branch.clone() });
                    continue;
                }
                AfterError::LostRace => {
                    if let Ok(recovery) = commit::recover(store, &def.id) {
                        host.notice(LandNotice::LostRace { recovery });
                    }
                    return Err(e.into());
                }
                AfterError::Fail => return Err(e.into()),
            },
        };
        let report = if options.report {
            let after = host.view(Some(&def.id))?;
            let report = after.report(now_ms());
            if let Err(error) = store_report(store, &def.id, &report, lander) {
                host.notice(LandNotice::ReportNotStored { error });
            }
            Some(report)
        } else {
            None
        };
        return Ok(done(LandOutcome::Landed { plan, termination, frame, landed, report }));
    }
}

/// The run's landing (`by`, `landing`), recorded already: its report stored if a crash came
/// before it was.
fn recorded<H: LandHost>(
    store: &Store,
    host: &mut H,
    view: &RunView,
    (by, landing): (&str, &LandingPayload),
    lander: Option<Lander<'_>>,
    options: LandOptions,
) -> Result<LandOutcome, H::Error> {
    let mut report = None;
    if options.report {
        let r = view.report(now_ms());
        let id = &view.meta.def.id;
        if let Some(lander) = lander
            && store.tip(&devrun::report_ref(id)).map_err(PoolError::from)?.is_none()
            && let Err(error) = store_report(store, id, &r, lander)
        {
            host.notice(LandNotice::ReportNotStored { error });
        }
        report = Some(r);
    }
    Ok(LandOutcome::Recorded { by: by.into(), landing: landing.clone(), report })
}

/// A blocked plan: recorded on the meta chain (with a lander), the report stored after it.
fn blocked<H: LandHost>(
    store: &Store,
    host: &mut H,
    view: &RunView,
    plan: LandPlan,
    lander: Option<Lander<'_>>,
    options: LandOptions,
) -> Result<LandOutcome, H::Error> {
    let Some(lander) = lander else {
        return Ok(LandOutcome::Blocked { plan, recorded: false, report: None });
    };
    let id = &view.meta.def.id;
    let record = BlockedPayload {
        main: plan.main.clone(),
        members: plan.members.clone(),
        aggregate: plan.aggregate,
        conflicts: plan.conflicts.clone(),
        at_ms: now_ms(),
    };
    devrun::record_blocked(store, id, &record, lander.name, lander.key)?;
    let mut report = None;
    if options.report {
        let after = host.view(Some(id))?;
        let r = after.report(now_ms());
        store_report(store, id, &r, lander)?;
        report = Some(r);
    }
    Ok(LandOutcome::Blocked { plan, recorded: true, report })
}

/// Stores `report` as run `id`'s convergence report.
pub fn store_report(store: &Store, id: &str, report: &ConvergenceReport, lander: Lander<'_>) -> Result<(), RunError> {
    let value =
        serde_json::to_value(report).map_err(|e| StoreError::Encode { what: "the report".into(), source: e })?;
    devrun::store_report(store, id, &value, lander.name, lander.key)?;
    Ok(())
}

/// A [`LandHost`] that reads the run straight from the store (completing a half-finished landing
/// first, best effort: planning reports whatever still stands in the way) and tells nothing.
pub struct StoreHost<'a> {
    /// The store.
    pub store: &'a Store,
    /// The roster records are verified against.
    pub roster: &'a Roster,
}

impl LandHost for StoreHost<'_> {
    type Error = PoolError;

    fn view(&mut self, run: Option<&str>) -> Result<RunView, PoolError> {
        let mut meta = devrun::resolve(self.store, self.roster, run)?;
        if meta.landing().is_some()
            && commit::recover_meta(self.store, &meta).is_ok_and(|r| r.changed() || r.state == RecoveryState::Void)
        {
            meta = devrun::load_meta(self.store, self.roster, &meta.def.id)?;
        }
        let allow = devrun::events::self_endorse_allowed(self.store);
        Ok(view::load(self.store, self.roster, meta, allow)?)
    }

    fn notice(&mut self, _: LandNotice) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devrun::{AbortPayload, LandingPayload};

    fn landing() -> Box<LandingPayload> {
        Box::new(LandingPayload {
            commit: "c".repeat(40),
            previous: "p".repeat(40),
            tree: "t".repeat(40),
            winners: Vec::new(),
            endorsers: Vec::new(),
            aggregate: false,
            merged_check: None,
            still_failing: None,
            termination: "tasks_completed".into(),
            frame: None,
            at_ms: 0,
        })
    }

    #[test]
    fn where_a_landing_starts_follows_the_phase_and_the_lander() {
        let landed = Phase::Landed { by: "alice".into(), record: "r".into(), landing: landing() };
        let pending = Phase::Landing { by: "alice".into(), record: "r".into(), landing: landing() };
        let aborted = Phase::Aborted {
            by: "alice".into(),
            abort: AbortPayload { reason: "stop".into(), risk: false, rounds: None, halt: None, at_ms: 0 },
        };
        let table: &[(&Phase, Option<&str>, bool, Start)] = &[
            (&Phase::Open, None, false, Start::Plan),
            (&Phase::Open, Some("bob"), false, Start::Plan),
            (&Phase::Open, Some("bob"), true, Start::Plan),
            // The lander's own landing: a retry after a crash.
            (&landed, Some("alice"), false, Start::Recorded),
            // Another's: refused as already landed, unless any landing is the result.
            (&landed, Some("bob"), false, Start::Refuse),
            (&landed, Some("bob"), true, Start::Recorded),
            (&landed, None, false, Start::Refuse),
            (&landed, None, true, Start::Recorded),
            // A landing not completed (its recovery failed) and an abort end the run.
            (&pending, Some("alice"), false, Start::Refuse),
            (&pending, Some("alice"), true, Start::Refuse),
            (&aborted, Some("alice"), true, Start::Refuse),
            (&aborted, None, false, Start::Refuse),
        ];
        for (phase, lander, any, want) in table {
            assert_eq!(start(phase, *lander, *any), *want, "{} / {lander:?} / any={any}", phase.name());
        }
    }

    #[test]
    fn main_moving_replans_until_the_attempts_run_out() {
        let moved = || PoolError::MainMoved { branch: "main".into() };
        let lost = PoolError::Run(RunError::Landed { id: "r".into(), commit: "c".into(), by: "bob".into() });
        let refused = PoolError::NoBranch { branch: "main".into() };
        let table: &[(PoolError, u32, AfterError)] = &[
            (moved(), 1, AfterError::Replan),
            (moved(), MAX_ATTEMPTS - 1, AfterError::Replan),
            (moved(), MAX_ATTEMPTS, AfterError::Fail),
            (lost, 1, AfterError::LostRace),
            (refused, 1, AfterError::Fail),
        ];
        for (error, attempt, want) in table {
            assert_eq!(after_error(error, *attempt), *want, "{error:?} on attempt {attempt}");
        }
    }
}

//! `git mas report [RUN]`: for development runs the convergence report — status, the one
//! termination reason, conflicts and how they were resolved, consensus, budget, rounds, quality.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::json::report::ReportEventOut;
use crate::cli::output::JsonFlag;
use crate::cli::reports::{converge_report, dev_summary};
use crate::cli::runs::load_view;
use crate::cli::{Done, Outcome};
use git_mas::convergence::{self, ConvergenceReport};
use git_mas::coordinate::scalar::Report;
use git_mas::devrun::now_ms;

/// Show why a run ended (or where it stands): the convergence report.
///
/// Status is running, converged, failed or blocked; every terminal status has exactly one
/// termination reason (quality_reached, budget_exhausted, max_rounds_reached, risk_blocked, or
/// tasks_completed when no stronger signal exists). Conflicts are artifact_mismatch, test_failure,
/// review_disagreement and dependency_inconsistency, each resolved or not, and how. A signal that
/// was never measured (no check ran, no budget set) is shown as unknown, never as 0 or 100.
/// --events prints the report as the six convergence event types, one JSON object per line.
///
/// With --json: the convergence report {run, status, termination_reason, consensus_score,
/// conflicts, quality_state, budget_state, rounds_state, winners, unresolved_risks, …}. With
/// --events: one {type, …the event's fields} per line.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The run (default: `mas.run`, else the only open run, else the latest).
    pub run: Option<String>,
    #[command(flatten)]
    pub output: JsonFlag,
    /// Print convergence.started, conflict.detected, conflict.resolved, consensus.updated and
    /// convergence.reached/failed as JSON lines.
    #[arg(long, conflicts_with = "json")]
    pub events: bool,
}

/// A run's report: a development run's convergence report, or a converge run's report rendered
/// again from its recording.
// One value a command, returned once: boxing the larger report would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum RunReport {
    /// A development run's convergence report.
    Development(ConvergenceReport),
    /// A converge run's report.
    Converge(Report),
}

/// Runs `report`.
pub fn run(ctx: &mut Context, args: ReportArgs) -> Result<Outcome, CliError> {
    let done = report(ctx, &args)?;
    match &done.value {
        RunReport::Development(report) if args.events => {
            for (kind, payload) in convergence::events(report) {
                ctx.ui().json(&ReportEventOut::new(kind, payload))?;
            }
        }
        RunReport::Development(report) => ctx.ui().emit(args.output, report, dev_summary)?,
        RunReport::Converge(report) => {
            ctx.ui().emit(args.output, report, |r| converge_report(r, &|s| ctx.paint(s, "1")))?;
        }
    }
    Ok(done.outcome)
}

/// The report of the run `args.run` names, by the class its definition records.
pub fn report(ctx: &Context, args: &ReportArgs) -> Result<Done<RunReport>, CliError> {
    if let Some(run) = &args.run
        && ctx.store().is_ok_and(|store| git_mas::devrun::is_converge_run(store, run))
    {
        if args.events {
            return Err(CliError::usage("--events applies to development runs; this is a converge run"));
        }
        let done = super::report::report(ctx, &super::report::ReportArgs { run: run.clone(), output: args.output })?;
        return Ok(Done::ended(RunReport::Converge(done.value), done.outcome));
    }
    let view = load_view(ctx, args.run.as_deref())?;
    Ok(Done::ok(RunReport::Development(view.report(now_ms()))))
}

//! `git mas report [RUN]` for development runs: the convergence report — status, the one
//! termination reason, conflicts and how they were resolved, consensus, budget, rounds, quality.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::json::report::ReportEventOut;
use crate::cli::output::JsonFlag;
use crate::cli::reports::dev_summary;
use crate::cli::runs::load_view;
use git_mas::convergence;
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

/// Runs `report` for a development run.
pub fn run(ctx: &mut Context, args: ReportArgs) -> Result<Outcome, CliError> {
    let view = load_view(ctx, args.run.as_deref())?;
    let report = view.report(now_ms());
    if args.events {
        for (kind, payload) in convergence::events(&report) {
            ctx.ui().json(&ReportEventOut::new(kind, payload))?;
        }
    } else {
        ctx.ui().emit(args.output, &report, dev_summary)?;
    }
    Ok(Outcome::Ok)
}

//! `git mas report [RUN]` for development runs: the convergence report — status, the one
//! termination reason, conflicts and how they were resolved, consensus, budget, rounds, quality.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::output::{print_json, print_text};
use crate::cli::runs::load_view;
use git_mas::convergence::{self, ConvergenceReport};
use git_mas::run::now_ms;
use std::fmt::Write as _;
use std::process::ExitCode;

/// Show why a run ended (or where it stands): the convergence report.
///
/// Status is running, converged, failed or blocked; every terminal status has exactly one
/// termination reason (quality_reached, budget_exhausted, max_rounds_reached, risk_blocked, or
/// tasks_completed when no stronger signal exists). Conflicts are artifact_mismatch, test_failure,
/// review_disagreement and dependency_inconsistency, each resolved or not, and how. A signal that
/// was never measured (no check ran, no budget set) is shown as unknown, never as 0 or 100.
/// --events prints the report as the six convergence event types, one JSON object per line.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The run (default: `mas.run`, else the only open run, else the latest).
    pub run: Option<String>,
    /// Print the report as JSON.
    #[arg(long, conflicts_with = "events")]
    pub json: bool,
    /// Print convergence.started, conflict.detected, conflict.resolved, consensus.updated and
    /// convergence.reached/failed as JSON lines.
    #[arg(long)]
    pub events: bool,
}

fn ms(ms: u64) -> String {
    humantime::format_duration(std::time::Duration::from_millis(ms / 100 * 100)).to_string()
}

/// A person's summary of a report.
pub fn summary(r: &ConvergenceReport) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "run {}: {}{}",
        r.run,
        r.status.name(),
        r.termination_reason.map(|t| format!(" ({})", t.name())).unwrap_or_default()
    );
    if !r.winners.is_empty() {
        let label = if r.status == convergence::Status::Converged { "landed" } else { "leading" };
        let _ = writeln!(o, "{label}:      {}", r.winners.join(", "));
    }
    let _ = match r.consensus_score {
        Some(score) => writeln!(
            o,
            "consensus:   {score:.1} ({} of {} proposals in no conflict)",
            r.proposals - r.implicated,
            r.proposals
        ),
        None => writeln!(o, "consensus:   unknown (no proposals)"),
    };
    let q = &r.quality_state;
    let _ = match (q.pass_rate, q.reached) {
        (Some(rate), Some(reached)) => writeln!(
            o,
            "quality:     {}/{} checks passed ({:.0}%, threshold {:.0}%) on {} — {}",
            q.passed,
            q.total,
            rate * 100.0,
            q.threshold * 100.0,
            q.basis,
            if reached { "reached" } else { "not reached" }
        ),
        _ => writeln!(o, "quality:     unknown — no check ran ({})", q.basis),
    };
    let b = &r.budget_state;
    let _ = match (b.limit_ms, b.exhausted) {
        (Some(limit), Some(out)) => {
            writeln!(o, "budget:      {} of {}{}", ms(b.used_ms), ms(limit), if out { " — exhausted" } else { "" })
        }
        _ => writeln!(o, "budget:      none set ({} used)", ms(b.used_ms)),
    };
    let rounds = &r.rounds_state;
    let _ = match rounds.max {
        Some(max) => writeln!(
            o,
            "rounds:      {} of {max}{}",
            rounds.used,
            if rounds.reached == Some(true) { " — limit reached" } else { "" }
        ),
        None => writeln!(o, "rounds:      {} (no limit)", rounds.used),
    };
    if r.conflicts.is_empty() {
        let _ = writeln!(o, "conflicts:   none");
    } else {
        let _ = writeln!(o, "conflicts:");
        for c in &r.conflicts {
            let _ = writeln!(
                o,
                "  [{}] {}: {}\n      {}",
                if c.resolved { "resolved" } else { "open" },
                c.kind.name(),
                c.detail,
                c.resolution
            );
        }
    }
    for risk in &r.unresolved_risks {
        let _ = writeln!(o, "risk:        {risk}");
    }
    o
}

/// Runs `report` for a development run.
pub fn run(ctx: &mut Context, args: ReportArgs) -> Result<ExitCode, CliError> {
    let view = load_view(ctx, args.run.as_deref())?;
    let report = view.report(now_ms());
    if args.events {
        let mut o = String::new();
        for (kind, payload) in convergence::events(&report) {
            let mut line = serde_json::json!({"type": kind});
            if let (Some(map), serde_json::Value::Object(fields)) = (line.as_object_mut(), payload) {
                map.extend(fields);
            }
            let _ = writeln!(o, "{line}");
        }
        print_text(&o)?;
    } else if args.json {
        print_json(&report)?;
    } else {
        print_text(&summary(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}

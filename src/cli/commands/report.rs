//! `git mas report <run>`: a converge run's report, rendered again from its recording alone.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::exit;
use crate::cli::output::print_json;
use git_mas::converge_driver::record::{RecordError, load_run, runs_prefix};
use git_mas::converge_driver::{Report, build_report};
use git_mas::store::canonical::to_canonical_vec;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Render a converge run's report again from its recording in refs/mas/runs/<run>/.
///
/// Reads the run's definition and the driving agent's event chain, verifies every record against
/// the roster, re-infers the class, re-scores each rule and replays the recorded events into a
/// fresh engine. Exits 4 when a record does not verify, when the replay does not reproduce the
/// recorded outcomes, or when the report recorded at the end of the run differs from the one its
/// events give. Run ids are printed by `git mas converge` and appear in `git mas log`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The run id (as `git mas converge` printed it).
    pub run: String,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A run-recording error as the user sees it.
pub fn record_error(e: RecordError) -> CliError {
    match e {
        RecordError::Store(store) => CliError::from(store),
        RecordError::NotFound { .. } => CliError::user(e.to_string()).hinted(format!(
            "runs are recorded under {}<run>/; `git mas log` lists every chain, run ids included",
            runs_prefix()
        )),
        RecordError::BadRunId { .. } => CliError::user(e.to_string()),
        RecordError::Exists { .. } | RecordError::Serialize(_) => CliError::internal(e.to_string()),
        RecordError::Unverified { .. } | RecordError::Malformed { .. } => CliError::user(e.to_string())
            .hinted("inspect the chain with `git mas log <ref>`; a run is rendered only from verified records"),
    }
}

/// Writes `bytes` to `path` for `flag`.
pub fn write_file(path: &Path, bytes: &[u8], flag: &str) -> Result<(), CliError> {
    std::fs::write(path, bytes).map_err(|e| CliError::user(format!("{flag}: cannot write {}: {e}", path.display())))
}

/// Runs `report`.
pub fn run(ctx: &mut Context, args: ReportArgs) -> Result<ExitCode, CliError> {
    let store = ctx.store()?;
    let roster = store.roster()?;
    let recorded = match load_run(store, &roster, &args.run) {
        Ok(run) => run,
        Err(e @ (RecordError::Unverified { .. } | RecordError::Malformed { .. })) => {
            record_error(e).print(ctx);
            return Ok(ExitCode::from(exit::UNVERIFIED));
        }
        Err(e) => return Err(record_error(e)),
    };
    ctx.warn_all(&roster.warnings);
    let report = build_report(&recorded.meta, &recorded.events);
    let mut trusted = true;
    if !report.replay_matches {
        ctx.warn("replaying the recorded events does not reproduce the recorded outcomes");
        trusted = false;
    }
    if let Some(stored) = &recorded.stored_report {
        let same = matches!((to_canonical_vec(stored), to_canonical_vec(&report)), (Ok(a), Ok(b)) if a == b);
        if !same {
            ctx.warn("the report recorded when the run ended differs from the one its events give");
            trusted = false;
        }
    } else {
        ctx.warn("the recording has no final report: the run did not finish");
    }
    if args.json {
        print_json(&report)?;
    } else {
        print_report(ctx, &report)?;
    }
    Ok(ExitCode::from(if trusted { exit::OK } else { exit::UNVERIFIED }))
}

/// A number for people: plain when moderate, scientific when tiny or huge.
fn num(x: f64) -> String {
    if x == 0.0 {
        return "0".to_owned();
    }
    if !x.is_finite() {
        return x.to_string();
    }
    let a = x.abs();
    if (1e-3..1e6).contains(&a) {
        let s = format!("{x:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_owned()
    } else {
        format!("{x:.3e}")
    }
}

fn opt(x: Option<f64>) -> String {
    x.map_or("-".to_owned(), num)
}

/// Prints a report for people.
pub fn print_report(ctx: &Context, report: &Report) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let bold = |s: &str| ctx.paint(s, "1");
    let class = match (report.class, &report.class_token) {
        (Some(c), Some(token)) if token != c.name() => format!("{c} (CLASS {token})"),
        (Some(c), _) => c.to_string(),
        (None, _) => "none inferred".to_owned(),
    };
    let halt = report.halt.map_or("none (the run did not finish)", |h| h.code());
    writeln!(out, "{} {} · class {class} · halt {}", bold("run"), report.run, bold(halt))?;
    writeln!(out, "  {}", report.halt_detail)?;
    writeln!(out, "  goal: {}", report.goal)?;

    writeln!(out, "\n{}", bold("derivation (each peer's UPDATE rule against the class's reference rule)"))?;
    let width = report.peers.iter().map(|p| p.name.len()).max().unwrap_or(4).max(4);
    for d in &report.derivation {
        let verdict = match &d.verdict {
            Some(git_mas::assembly::Verdict::Differs { worst_gap, .. }) => {
                format!("differs (worst gap {})", num(*worst_gap))
            }
            Some(git_mas::assembly::Verdict::Invalid { reason }) => format!("invalid: {reason}"),
            Some(v) => v.label().to_owned(),
            None => "not scored".to_owned(),
        };
        let rule = d.rule.as_deref().unwrap_or("(no UPDATE line)");
        writeln!(out, "  {:<width$}  {:<20}  {verdict}", d.peer, d.spec)?;
        writeln!(out, "  {:<width$}  UPDATE {rule}", "")?;
        if let Some(failure) = &d.failure {
            writeln!(out, "  {:<width$}  call failed: {failure}", "")?;
        }
    }

    if !report.execution.is_empty() && report.metric.is_some() {
        writeln!(
            out,
            "\n{}",
            bold("execution (each announcement against the peer's own rule, and against the reference)")
        )?;
        writeln!(
            out,
            "  {:<width$}  {:>9}  {:>14}  {:>14}  faithful",
            "peer", "announced", "max own gap", "max ref gap"
        )?;
        for e in &report.execution {
            writeln!(
                out,
                "  {:<width$}  {:>9}  {:>14}  {:>14}  {}",
                e.peer,
                e.announcements,
                opt(e.max_own_gap),
                opt(e.max_reference_gap),
                if e.faithful { "yes" } else { "no" }
            )?;
        }
    }

    if let Some(metric) = &report.metric {
        writeln!(out, "\n{}", bold(&format!("trajectory ({} per epoch, values announced)", metric.name)))?;
        let names: Vec<&str> = report.peers.iter().map(|p| p.name.as_str()).collect();
        let mut header = format!("  {:>5}  {:>12}", "epoch", metric.name);
        for name in &names {
            header.push_str(&format!("  {name:>12}"));
        }
        writeln!(out, "{header}")?;
        writeln!(out, "  {:>5}  {:>12}", "start", num(metric.initial))?;
        let points = &report.trajectory;
        let shown: Vec<usize> = if points.len() > 14 {
            (0..6).chain(points.len() - 6..points.len()).collect()
        } else {
            (0..points.len()).collect()
        };
        let mut last = None;
        for i in shown {
            if last.is_some_and(|l: usize| i > l + 1) {
                writeln!(out, "  {:>5}", "…")?;
            }
            last = Some(i);
            let p = &points[i];
            let mut line = format!("  {:>5}  {:>12}", p.epoch, opt(p.metric));
            for name in &names {
                line.push_str(&format!("  {:>12}", opt(p.values.get(*name).copied())));
            }
            writeln!(out, "{line}")?;
        }
        let direction = match metric.direction {
            git_mas::engines::MetricDirection::LowerIsBetter => "lower is better",
            git_mas::engines::MetricDirection::HigherIsBetter => "higher is better",
        };
        writeln!(
            out,
            "\nfinal {} {} ({direction}; start {}, best {}) after {} epochs",
            metric.name,
            bold(&num(metric.final_value)),
            num(metric.initial),
            opt(metric.best),
            report.epochs
        )?;
    }
    if let Some(o) = &report.optimum {
        let list = |v: &[f64]| v.iter().map(|x| num(*x)).collect::<Vec<_>>().join(", ");
        writeln!(out, "‖z − z*‖₂ = {}; z = [{}]; z* = [{}]", num(o.distance), list(&o.z), list(&o.z_star))?;
    }
    writeln!(
        out,
        "\nrecorded in {} and {} ({} hops); `git mas report {}` renders it again",
        report.refs.meta, report.refs.events, report.hops, report.run
    )?;
    Ok(())
}

//! `git mas report <run>`: a converge run's report, rendered again from its recording alone.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::output::JsonFlag;
use crate::cli::{Done, Outcome};
use git_mas::coordinate::scalar::record::load_run;
use git_mas::coordinate::scalar::{HopRecord, Report, RunEvent, build_report};
use git_mas::store::canonical::to_canonical_vec;

/// Render a converge run's report again from its recording in refs/mas/runs/<run>/.
///
/// Reads the run's definition and the driving agent's event chain, verifies every record against
/// the roster, re-infers the class, re-scores each rule and replays the recorded events into a
/// fresh engine. Exits 4 when a record does not verify, when the replay does not reproduce the
/// recorded outcomes, or when the report recorded at the end of the run differs from the one its
/// events give. Run ids are printed by `git mas converge` and appear in `git mas log`.
///
/// With --json: the report as `git mas converge --json` ends with it.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The run id (as `git mas converge` printed it).
    pub run: String,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// The converge run's report, rebuilt from its recording; unverified when the replay or the
/// recorded report disagree with it.
pub fn report(ctx: &Context, args: &ReportArgs) -> Result<Done<Report>, CliError> {
    Ok(recorded(ctx, &args.run)?.1)
}

/// The converge run's recorded hops, in order, and its report as [`report`] gives it.
pub fn recorded(ctx: &Context, run: &str) -> Result<(Vec<HopRecord>, Done<Report>), CliError> {
    let store = ctx.store()?;
    let roster = store.roster()?;
    // A record that does not verify is exit 4 (`Kind::Unverified`).
    let recorded = load_run(store, &roster, run)?;
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
    let hops = recorded
        .events
        .into_iter()
        .filter_map(|e| match e {
            RunEvent::Hop(hop) => Some(hop),
            _ => None,
        })
        .collect();
    Ok((hops, Done::ended(report, if trusted { Outcome::Ok } else { Outcome::Unverified })))
}

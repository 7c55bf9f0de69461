//! `git mas report [RUN]`: for development runs the convergence report — status, the one
//! termination reason, conflicts and how they were resolved, consensus, budget, rounds, quality;
//! with `--html FILE`, the run's whole story as one self-contained page
//! ([`crate::cli::html_report`]). For a converge run (`git mas converge`), its report rendered
//! again from its recording alone: the definition and the driving agent's event chain, every
//! record verified against the roster, the class re-inferred, each rule re-scored and the
//! recorded events replayed into a fresh engine; exit 4 when a record does not verify, when the
//! replay does not reproduce the recorded outcomes, or when the report recorded at the end of the
//! run differs from the one its events give.

use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::html_report::{ConvergeStory, DevStory, converge_page, dev_page};
use crate::cli::json::report::{HtmlWrittenOut, ReportEventOut};
use crate::cli::output::JsonFlag;
use crate::cli::reports::{converge_report, dev_summary};
use crate::cli::runs::load_view;
use crate::cli::{Done, Outcome};
use git_mas::convergence::{self, ConvergenceReport};
use git_mas::coordinate::scalar::record::load_run;
use git_mas::coordinate::scalar::{HopRecord, Report, RunEvent, build_report};
use git_mas::devrun::now_ms;
use git_mas::store::canonical::to_canonical_vec;
use std::path::{Path, PathBuf};

/// Show why a run ended (or where it stands): the convergence report.
///
/// Status is running, converged, failed or blocked; every terminal status has exactly one
/// termination reason (quality_reached, budget_exhausted, max_rounds_reached, risk_blocked, or
/// tasks_completed when no stronger signal exists). Conflicts are artifact_mismatch, test_failure,
/// review_disagreement and dependency_inconsistency, each resolved or not, and how. A signal that
/// was never measured (no check ran, no budget set) is shown as unknown, never as 0 or 100.
/// --events prints the report as the six convergence event types, one JSON object per line.
///
/// The first line names how the run ended in one word, the name `git mas coordinate`'s halt
/// line, `git mas run list` and `git mas status` give it too: open, landed, land-blocked,
/// max-rounds-reached, budget-exhausted, unreadable-reply, nothing-to-land, aborted or
/// aborted-as-risk, then the status and reason (`max-rounds-reached (failed,
/// max_rounds_reached)`). The report lists the paths each proposal changed against the run's
/// base; in an aggregate run, the paths outside the proposer's slice (and whose slice holds
/// them), and a proposal that changed only files outside its slice is `untouched`: its slice is
/// not credited as done. It lists the gate's refusals of an agent's edit of a file in another's
/// slice while the run was open (read from this machine's denial log, `.git/mas/denials.log`).
/// A check or an agent killed by a signal (exit 128+N, e.g. 137 for SIGKILL, the out-of-memory
/// killer's) is said killed, with the signal.
///
/// --html FILE writes the run's story as one HTML page: the goal, the roster and the plan, every
/// round with its proposals and endorsements (each check's result and the tail of its output),
/// the conflicts and how they were resolved, the landing commit with its trailers and the
/// convergence report, with the timeline of rounds and the board drawn as pictures; a converge
/// run's page embeds its plot and lists every hop. The page is self-contained and loads nothing
/// (no script, font or image from anywhere: open it offline, attach it to a CI job, print it). It
/// is written to a temporary file beside FILE and renamed over it, so a crash leaves FILE as it
/// was or whole, never half-written; the folder must exist. `--html -` prints the page instead.
/// For example `git mas report --html run.html` writes the page of the run `git mas report`
/// picks; `git mas report r-1a2b --html - > r.html` that of run r-1a2b.
///
/// With --json: the convergence report {run, status, termination_reason, ending, consensus_score,
/// conflicts, quality_state, budget_state, rounds_state, winners, unresolved_risks, slices,
/// changes: [{agent, paths, outside_slice: [{path, slice_of}], slice_untouched}],
/// slice_refusals: [{agent, file, slice_of, times, first_at, last_at}], …}. With
/// --events: one {type, …the event's fields} per line. With --html FILE: {html: FILE}.
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
    /// Write the run's story as one self-contained HTML page to FILE (`-`: standard output).
    #[arg(long, value_name = "FILE", conflicts_with = "events")]
    pub html: Option<PathBuf>,
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
    if let Some(path) = &args.html {
        return html(ctx, &args, path);
    }
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
        && ctx.store().is_ok_and(|store| is_converge_run(store, run))
    {
        if args.events {
            return Err(CliError::usage("--events applies to development runs; this is a converge run"));
        }
        let done = recorded(ctx, run)?.1;
        return Ok(Done::ended(RunReport::Converge(done.value), done.outcome));
    }
    let view = load_view(ctx, args.run.as_deref())?;
    Ok(Done::ok(RunReport::Development(view.report(now_ms()))))
}

/// Whether run `run` is a converge run, as its definition record says (a run that cannot be read
/// is left to the development reader, which says why).
fn is_converge_run(store: &git_mas::store::Store, run: &str) -> bool {
    git_mas::devrun::definition::run_type(store, run) == Some(git_mas::devrun::RunType::Converge)
}

/// `--html FILE`: the page, written whole or printed.
fn html(ctx: &Context, args: &ReportArgs, path: &Path) -> Result<Outcome, CliError> {
    let to_stdout = path == Path::new("-");
    if to_stdout && args.output.json {
        return Err(CliError::usage("--html - prints the page on standard output, where --json would print too")
            .hinted("write the page to a file (`--html run.html --json`), or drop --json"));
    }
    if !to_stdout {
        check_html_target(path)?;
    }
    let done = page(ctx, args.run.as_deref())?;
    if to_stdout {
        ctx.ui().out(&done.value)?;
        return Ok(done.outcome);
    }
    git_mas::ops::setup::journal::write_atomic(path, done.value.as_bytes(), 0o644).map_err(|e| {
        CliError::with_message(Kind::User, format!("--html: cannot write {}", path.display()), e)
            .hinted("check that the folder is writable and has room")
    })?;
    let written = HtmlWrittenOut { html: path.display().to_string() };
    ctx.ui().emit(args.output, &written, |w| format!("{}\n", w.html))?;
    Ok(done.outcome)
}

/// Refuses a FILE that cannot be written, before any work: its folder must exist and FILE must
/// not be a folder.
fn check_html_target(path: &Path) -> Result<(), CliError> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(CliError::user(format!("--html: the folder {} does not exist", parent.display()))
            .hinted(format!("create it first (`mkdir -p {}`), or write the page elsewhere", parent.display())));
    }
    if path.is_dir() {
        return Err(CliError::user(format!("--html: {} is a folder", path.display()))
            .hinted(format!("name a file in it, e.g. --html {}", path.join("report.html").display())));
    }
    Ok(())
}

/// The page of the run `run` names (the run `git mas report` picks when none is named), and the
/// outcome the report ends with.
pub fn page(ctx: &Context, run: Option<&str>) -> Result<Done<String>, CliError> {
    if let Some(run) = run
        && ctx.store().is_ok_and(|store| is_converge_run(store, run))
    {
        let (hops, done) = recorded(ctx, run)?;
        let mut doubts = Vec::new();
        if done.outcome != Outcome::Ok {
            doubts.push(
                "the recording does not reproduce this report (see `git mas report` for why); it is shown as the \
                 recorded events give it"
                    .to_owned(),
            );
        }
        let plot = git_mas::coordinate::scalar::plot::render_svg(&done.value).map_err(|e| e.to_string());
        let story = ConvergeStory { report: done.value, hops, plot, doubts };
        return Ok(Done::ended(converge_page(&story), done.outcome));
    }
    let view = load_view(ctx, run)?;
    let report = view.report(now_ms());
    let message = view.meta.landing().and_then(|(_, _, landing)| {
        let store = ctx.store().ok()?;
        let id = gix::ObjectId::from_hex(landing.commit.as_bytes()).ok()?;
        let commit = store.repo().find_commit(id).ok()?;
        commit.message_raw().ok().map(|m| String::from_utf8_lossy(m).into_owned())
    });
    let story = DevStory::of(&view, report, message.as_deref());
    Ok(Done::ok(dev_page(&story)))
}

/// A converge run's recorded hops, in order, and its report rebuilt from its recording;
/// unverified when the replay or the recorded report disagree with it.
pub fn recorded(ctx: &Context, run: &str) -> Result<(Vec<HopRecord>, Done<Report>), CliError> {
    let store = ctx.store()?;
    let roster = store.roster()?;
    // A record that does not verify is exit 4 (`Kind::Unverified`).
    let recorded = load_run(store, &roster, run)?;
    ctx.warn_all(&roster.warnings);
    let report = build_report(&recorded.def, &recorded.events);
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

//! `git mas land [RUN]`: exactly one commit on main for a run that reached quorum.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::json::land::{LandOut, LandStatus};
use crate::cli::output::JsonFlag;
use crate::cli::render::{self, describe_recovery, short};
use crate::cli::runs::load_view;
use git_mas::convergence::ConvergenceReport;
use git_mas::devrun::LandingPayload;
use git_mas::devrun::view::RunView;
use git_mas::ops::land::commit::{LandPlan, Landed};
use git_mas::ops::land::{self, LandHost, LandNotice, LandOptions, LandOutcome, LandResult, Lander};
use std::fmt::Write as _;

/// Land a run on main once its proposal has a quorum of valid endorsements.
///
/// Writes exactly one commit to main: the winner's tree when main is still the run's base, else a
/// three-way merge of the winner onto main's tip (ancestor: the base). With --aggregate, every
/// proposal at quorum is merged, in agent order, or an aggregate run's plan order (complementary
/// work; it waits until every proposal has reached quorum or been judged against; with --partial
/// it leaves out the proposals still waiting for endorsements instead). A merged tree is checked with the run's
/// check before it lands. Merge conflicts (artifact_mismatch) or a failing check of the merged
/// tree block the landing: they are recorded and reported, and the command exits 6. The landing
/// is recorded on the run's meta chain first, then main moves (compare-and-swap from the tip the
/// landing was planned on), then refs/mas/runs/<run>/landed is created and clean checkouts of main
/// follow: a run lands at most once, a second landing by another agent is refused and names the
/// first, and a landing interrupted by a crash is completed by running `git mas land` again (it
/// then succeeds) or by any git-mas command that reads the run. A run counts as landed only once
/// main holds its commit. The commit carries trailers: Mas-Run, Mas-Class,
/// Mas-Winner, Mas-Endorsed-By, Mas-Frame (when a frame exists) and Mas-Termination. A worktree
/// with main checked out is updated when clean; a dirty one makes the landing refuse. The
/// convergence report is stored under refs/mas/runs/<run>/report.
///
/// With --json: {run, status (blocked, would-land, landed), plan (absent on a retry), commit,
/// termination, frame, updated_worktrees, report}.
#[derive(Debug, clap::Args)]
pub struct LandArgs {
    /// The run (default: `mas.run`, else the only open run).
    pub run: Option<String>,
    /// Merge every proposal that reached quorum (complementary work) instead of landing the leader.
    #[arg(long)]
    pub aggregate: bool,
    /// With --aggregate: leave out proposals still waiting for endorsements instead of waiting for
    /// them (the report names every proposal left out).
    #[arg(long, requires = "aggregate")]
    pub partial: bool,
    /// Show what would land (and run the merged tree's check) without writing anything.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// The landing's view of the command: the run read as every command reads it (warnings printed,
/// a half-finished landing completed), and what happens on the way told on stderr.
struct Host<'a> {
    ctx: &'a Context,
}

impl LandHost for Host<'_> {
    type Error = CliError;

    fn view(&mut self, run: Option<&str>) -> Result<RunView, CliError> {
        load_view(self.ctx, run)
    }

    fn notice(&mut self, notice: LandNotice) {
        match notice {
            LandNotice::Replanning { branch } => {
                self.ctx.status(&format!("{branch} moved while landing; planning again"))
            }
            LandNotice::FrameUnreadable { error } => {
                self.ctx.warn(&format!("the current frame cannot be read, so the landing names none: {error}"))
            }
            LandNotice::LostRace { recovery } => {
                if let Some(text) = describe_recovery(&recovery) {
                    self.ctx.status(&text);
                }
            }
            LandNotice::ReportNotStored { error } => {
                self.ctx.warn(&format!("landed, but the report could not be stored: {error}"))
            }
        }
    }
}

fn describe(plan: &LandPlan, o: &mut String) {
    let names: Vec<&str> = plan.members.iter().map(|(a, _)| a.as_str()).collect();
    let _ = writeln!(
        o,
        "{} {} onto {}{}",
        if plan.aggregate { "aggregate of" } else { "proposal of" },
        names.join(", "),
        short(&plan.main),
        if plan.merged { " (three-way merge, ancestor: the run's base)" } else { " (main is still the base)" }
    );
    for (agent, endorsers) in &plan.endorsers {
        let _ = writeln!(o, "  {agent}: endorsed by {}", endorsers.join(", "));
    }
    for (agent, why) in &plan.left_out {
        let _ = writeln!(o, "  left out: {agent} ({why})");
    }
    if let Some(c) = &plan.merged_check {
        let _ = writeln!(
            o,
            "  merged tree checked with `{}`: {}",
            c.command,
            if c.passed() { "passed".to_string() } else { render::failed(c.exit_status) }
        );
    } else if plan.merged && plan.tree.is_some() {
        let _ = writeln!(o, "  merged tree not checked: the run has no check command");
    }
    if let Some(n) = plan.still_failing.filter(|n| *n > 0) {
        let _ = writeln!(
            o,
            "  partial: {n} test(s) still fail on what lands (it fixes failing tests of {} and breaks none)",
            short(&plan.main)
        );
    }
}

/// Runs `land`.
pub fn run(ctx: &mut Context, args: LandArgs) -> Result<Outcome, CliError> {
    let caller = if args.dry_run { None } else { Some(ctx.caller()?) };
    let lander = caller.as_ref().map(|c| Lander { name: &c.name, key: &c.key });
    let store = ctx.store()?;
    let options = LandOptions {
        aggregate: args.aggregate,
        partial: args.partial,
        report: true,
        any_landing: false,
        hold_partial: false,
    };
    let result = land::land_run(store, &mut Host { ctx }, args.run.as_deref(), lander, options)?;
    let LandResult { run, branch, outcome } = result;
    let json = args.output;
    let mut partial = None;
    match outcome {
        LandOutcome::Blocked { plan, recorded, report } => {
            let out = out(&run, LandStatus::Blocked, Some(&plan), None, report);
            ctx.ui().emit(json, &out, |_| blocked_text(&run, &plan))?;
            if !json.json && recorded {
                ctx.status(
                    "recorded the blocked landing; the report says risk_blocked until a proposal or main changes",
                );
                ctx.ui()
                    .hint("re-propose content that merges cleanly (or fix the merged tree's check), then land again");
            } else if !json.json {
                ctx.status("dry run: nothing recorded");
            }
            return Ok(Outcome::Blocked);
        }
        LandOutcome::WouldLand { plan, termination, frame } => {
            let landing = Landing { commit: None, termination: termination.name(), frame, updated: Vec::new() };
            let out = out(&run, LandStatus::WouldLand, Some(&plan), Some(landing), None);
            ctx.ui().emit(json, &out, |_| {
                let mut o = format!("would land run {run}: ");
                describe(&plan, &mut o);
                let _ = writeln!(o, "  termination: {}", termination.name());
                o
            })?;
            if !json.json {
                ctx.status("dry run: nothing written");
            }
        }
        LandOutcome::Landed { plan, termination, frame, landed, report } => {
            partial = plan.still_failing.filter(|n| *n > 0);
            landed_now(ctx, json, (&run, &branch), &plan, termination.name(), frame, &landed, report)?
        }
        LandOutcome::Recorded { landing, report, .. } => {
            partial = landing.still_failing.filter(|n| *n > 0);
            retried(ctx, json, (&run, &branch), &landing, report)?
        }
    }
    // Landed, and the checkout of the branch still owes the update (what stopped it was said
    // above): not done, and scripts must see it.
    let store = ctx.store()?;
    let owed: Vec<_> = git_mas::ops::land::checkout::pending(store)?.into_iter().filter(|p| p.run == run).collect();
    if let Some(first) = owed.first() {
        return Err(CliError::user(format!(
            "run {run} landed on {branch} as {}, but the checkout at {} still holds the tree before the landing (or part of it)",
            short(&first.commit),
            first.path.display()
        ))
        .hinted(format!(
            "the lines above say what stopped it; once that is out of the way, `git mas land {run}` (or `git mas doctor --fix`) completes the update"
        )));
    }
    Ok(if partial.is_some() { Outcome::Partial } else { Outcome::Ok })
}

/// What a landing wrote, for [`LandOut`].
struct Landing<'a> {
    commit: Option<String>,
    termination: &'a str,
    frame: Option<String>,
    updated: Vec<String>,
}

fn out(
    run: &str,
    status: LandStatus,
    plan: Option<&LandPlan>,
    landing: Option<Landing<'_>>,
    report: Option<ConvergenceReport>,
) -> LandOut {
    let (commit, termination, frame, updated_worktrees) = match landing {
        Some(l) => (l.commit, Some(l.termination.to_string()), l.frame, l.updated),
        None => (None, None, None, Vec::new()),
    };
    LandOut { run: run.into(), status, plan: plan.cloned(), commit, termination, frame, updated_worktrees, report }
}

fn blocked_text(run: &str, plan: &LandPlan) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "blocked: run {run} cannot land");
    describe(plan, &mut o);
    for c in &plan.conflicts {
        let _ = writeln!(o, "  {}: {}", c.kind.name(), c.detail);
    }
    if let Some(tail) = &plan.merged_check_tail {
        let _ = writeln!(o, "  last lines of the merged tree's check:\n{tail}");
    }
    o
}

/// The run landed now: stale checkouts warned about, the commit printed, the landing described.
#[allow(clippy::too_many_arguments)]
fn landed_now(
    ctx: &Context,
    json: JsonFlag,
    (run, branch): (&str, &str),
    plan: &LandPlan,
    termination: &str,
    frame: Option<String>,
    landed: &Landed,
    report: Option<ConvergenceReport>,
) -> Result<(), CliError> {
    for (path, why) in &landed.stale_worktrees {
        ctx.warn(&format!("{branch} at {} could not be updated to the landing: {why}", path.display()));
    }
    let commit = &landed.record.commit;
    let updated = landed.updated_worktrees.iter().map(|p| p.display().to_string()).collect();
    let landing = Landing { commit: Some(commit.clone()), termination, frame, updated };
    ctx.ui().emit(json, &out(run, LandStatus::Landed, Some(plan), Some(landing), report), |_| format!("{commit}\n"))?;
    if !json.json {
        let mut o = format!("landed run {run} on {branch} as {}: ", short(commit));
        describe(plan, &mut o);
        let _ = write!(o, "  termination: {termination}");
        for p in &landed.updated_worktrees {
            let _ = write!(o, "\n  updated the checkout of {branch} at {}", p.display());
        }
        ctx.status(&o);
    }
    Ok(())
}

/// `land` run again by the agent whose landing is recorded (and, by now, complete): the library
/// stored the report if the crash came before it was; the landing is reported as done.
fn retried(
    ctx: &Context,
    json: JsonFlag,
    (run, branch): (&str, &str),
    landing: &LandingPayload,
    report: Option<ConvergenceReport>,
) -> Result<(), CliError> {
    let done = Landing {
        commit: Some(landing.commit.clone()),
        termination: &landing.termination,
        frame: landing.frame.clone(),
        updated: Vec::new(),
    };
    ctx.ui()
        .emit(json, &out(run, LandStatus::Landed, None, Some(done), report), |_| format!("{}\n", landing.commit))?;
    if !json.json {
        ctx.status(&format!(
            "run {run} is landed on {branch} as {} (your landing, recorded earlier)",
            short(&landing.commit)
        ));
    }
    Ok(())
}

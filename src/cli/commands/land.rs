//! `git mas land [RUN]`: exactly one commit on main for a run that reached quorum.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::exit;
use crate::cli::output::{print_json, print_text};
use crate::cli::render::{describe_recovery, short};
use crate::cli::runs::load_view;
use git_mas::attention::frame::current_frame_hash;
use git_mas::convergence::{self, Outcome};
use git_mas::identity::AgentKey;
use git_mas::pool::PoolError;
use git_mas::pool::land::{self, LandPlan};
use git_mas::run::view::RunView;
use git_mas::run::{self, BlockedPayload, LandingPayload, Phase, RunError, now_ms};
use std::fmt::Write as _;
use std::process::ExitCode;

/// How many times a landing re-plans when main moves under it.
const MAX_REPLANS: u32 = 5;

/// Land a run on main once its proposal has a quorum of valid endorsements.
///
/// Writes exactly one commit to main: the winner's tree when main is still the run's base, else a
/// three-way merge of the winner onto main's tip (ancestor: the base). With --aggregate, every
/// proposal at quorum is merged, in agent order (complementary work; it waits until every
/// proposal has reached quorum or been judged against). A merged tree is checked with the run's
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
#[derive(Debug, clap::Args)]
pub struct LandArgs {
    /// The run (default: `mas.run`, else the only open run).
    pub run: Option<String>,
    /// Merge every proposal that reached quorum (complementary work) instead of landing the leader.
    #[arg(long)]
    pub aggregate: bool,
    /// Show what would land (and run the merged tree's check) without writing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct LandOut<'a> {
    run: &'a str,
    status: &'static str,
    /// Absent when the landing was found recorded already (a retry).
    plan: Option<&'a LandPlan>,
    commit: Option<String>,
    termination: Option<&'a str>,
    frame: Option<String>,
    updated_worktrees: Vec<String>,
    report: Option<convergence::ConvergenceReport>,
}

fn termination_if_landed(view: &RunView, plan: &LandPlan) -> Result<&'static str, CliError> {
    let mut state = view.state(now_ms());
    state.outcome = Outcome::Landed {
        winners: plan.members.iter().map(|(a, _)| a.clone()).collect(),
        commit: String::new(),
        merged_check_passed: plan.merged_check.as_ref().map(|c| c.passed()),
    };
    convergence::evaluate(&state)
        .termination_reason
        .map(|r| r.name())
        .ok_or_else(|| CliError::internal("a landed run has no termination reason"))
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
            if c.passed() { "passed".to_string() } else { format!("FAILED ({:?})", c.exit_status) }
        );
    } else if plan.merged && plan.tree.is_some() {
        let _ = writeln!(o, "  merged tree not checked: the run has no check command");
    }
}

/// Runs `land`.
pub fn run(ctx: &mut Context, args: LandArgs) -> Result<ExitCode, CliError> {
    let caller = if args.dry_run { None } else { Some(ctx.caller()?) };
    let mut attempt = 0;
    loop {
        attempt += 1;
        // Reading the run completes a landing that a crash left half-finished.
        let view = load_view(ctx, args.run.as_deref())?;
        if let (Some(caller), Phase::Landed { by, landing, .. }) = (&caller, &view.meta.phase)
            && *by == caller.name
        {
            // The caller's own landing, recorded already: a retry after a crash, which succeeds.
            return retried(ctx, &view, landing, &caller.name, &caller.key, args.json);
        }
        view.meta.ensure_open()?;
        let store = ctx.store()?;
        let def = &view.meta.def;
        let check = def.check.clone().or_else(|| store.config_string("mas.check")).filter(|c| !c.trim().is_empty());
        let plan = land::plan(store, &view, args.aggregate, check.as_deref())?;
        if plan.blocked() {
            let mut report = None;
            if let Some(caller) = &caller {
                let blocked = BlockedPayload {
                    main: plan.main.clone(),
                    members: plan.members.clone(),
                    aggregate: plan.aggregate,
                    conflicts: plan.conflicts.clone(),
                    at_ms: now_ms(),
                };
                run::record_blocked(store, &def.id, &blocked, &caller.name, &caller.key)?;
                let after = load_view(ctx, Some(&def.id))?;
                let r = after.report(now_ms());
                let value = serde_json::to_value(&r).map_err(|e| CliError::internal(e.to_string()))?;
                run::store_report(store, &def.id, &value, &caller.name, &caller.key)?;
                report = Some(r);
            }
            if args.json {
                print_json(&LandOut {
                    run: &def.id,
                    status: "blocked",
                    plan: Some(&plan),
                    commit: None,
                    termination: None,
                    frame: None,
                    updated_worktrees: Vec::new(),
                    report,
                })?;
            } else {
                let mut o = String::new();
                let _ = writeln!(o, "blocked: run {} cannot land", def.id);
                describe(&plan, &mut o);
                for c in &plan.conflicts {
                    let _ = writeln!(o, "  {}: {}", c.kind.name(), c.detail);
                }
                if let Some(tail) = &plan.merged_check_tail {
                    let _ = writeln!(o, "  last lines of the merged tree's check:\n{tail}");
                }
                print_text(&o)?;
                ctx.status(if caller.is_some() {
                    "recorded the blocked landing; the report says risk_blocked until a proposal or main changes\nhint: re-propose content that merges cleanly (or fix the merged tree's check), then land again"
                } else {
                    "dry run: nothing recorded"
                });
            }
            return Ok(ExitCode::from(exit::BLOCKED));
        }
        let termination = termination_if_landed(&view, &plan)?;
        let frame = match current_frame_hash(store) {
            Ok(found) => found.map(|(_, hash)| hash).filter(|h| !h.is_empty()),
            Err(e) => {
                ctx.warn(&format!("the current frame cannot be read, so the landing names none: {e}"));
                None
            }
        };
        let Some(caller) = &caller else {
            if args.json {
                print_json(&LandOut {
                    run: &def.id,
                    status: "would-land",
                    plan: Some(&plan),
                    commit: None,
                    termination: Some(termination),
                    frame,
                    updated_worktrees: Vec::new(),
                    report: None,
                })?;
            } else {
                let mut o = format!("would land run {}: ", def.id);
                describe(&plan, &mut o);
                let _ = writeln!(o, "  termination: {termination}");
                print_text(&o)?;
                ctx.status("dry run: nothing written");
            }
            return Ok(ExitCode::SUCCESS);
        };
        let landed = match land::execute(store, &view, &plan, termination, frame.clone(), &caller.name, &caller.key) {
            Ok(landed) => landed,
            Err(PoolError::MainMoved) if attempt < MAX_REPLANS => {
                ctx.status(&format!("{} moved while landing; planning again", def.branch));
                continue;
            }
            Err(e @ PoolError::Run(RunError::Landed { .. })) => {
                // Lost to another landing of this run: make sure it is complete, then say so.
                if let Ok(r) = land::recover(store, &def.id)
                    && let Some(text) = describe_recovery(&r)
                {
                    ctx.status(&text);
                }
                return Err(e.into());
            }
            Err(e) => return Err(e.into()),
        };
        let after = load_view(ctx, Some(&def.id))?;
        let report = after.report(now_ms());
        let value = serde_json::to_value(&report).map_err(|e| CliError::internal(e.to_string()))?;
        if let Err(e) = run::store_report(store, &def.id, &value, &caller.name, &caller.key) {
            ctx.warn(&format!("landed, but the report could not be stored: {e}"));
        }
        for (path, why) in &landed.stale_worktrees {
            ctx.warn(&format!("{} at {} could not be updated to the landing: {why}", def.branch, path.display()));
        }
        if args.json {
            print_json(&LandOut {
                run: &def.id,
                status: "landed",
                plan: Some(&plan),
                commit: Some(landed.record.commit.clone()),
                termination: Some(termination),
                frame,
                updated_worktrees: landed.updated_worktrees.iter().map(|p| p.display().to_string()).collect(),
                report: Some(report),
            })?;
        } else {
            print_text(&format!("{}\n", landed.record.commit))?;
            let mut o = format!("landed run {} on {} as {}: ", def.id, def.branch, short(&landed.record.commit));
            describe(&plan, &mut o);
            let _ = write!(o, "  termination: {termination}");
            for p in &landed.updated_worktrees {
                let _ = write!(o, "\n  updated the checkout of {} at {}", def.branch, p.display());
            }
            ctx.status(&o);
        }
        return Ok(ExitCode::SUCCESS);
    }
}

/// `land` run again by the agent whose landing is recorded (and, by now, complete): stores the
/// report if the crash came before it was stored, and reports the landing as done.
fn retried(
    ctx: &Context,
    view: &RunView,
    landing: &LandingPayload,
    agent: &str,
    key: &AgentKey,
    json: bool,
) -> Result<ExitCode, CliError> {
    let store = ctx.store()?;
    let def = &view.meta.def;
    let report = view.report(now_ms());
    if store.tip(&run::report_ref(&def.id))?.is_none() {
        let value = serde_json::to_value(&report).map_err(|e| CliError::internal(e.to_string()))?;
        if let Err(e) = run::store_report(store, &def.id, &value, agent, key) {
            ctx.warn(&format!("landed, but the report could not be stored: {e}"));
        }
    }
    if json {
        print_json(&LandOut {
            run: &def.id,
            status: "landed",
            plan: None,
            commit: Some(landing.commit.clone()),
            termination: Some(&landing.termination),
            frame: landing.frame.clone(),
            updated_worktrees: Vec::new(),
            report: Some(report),
        })?;
    } else {
        print_text(&format!("{}\n", landing.commit))?;
        ctx.status(&format!(
            "run {} is landed on {} as {} (your landing, recorded earlier)",
            def.id,
            def.branch,
            short(&landing.commit)
        ));
    }
    Ok(ExitCode::SUCCESS)
}

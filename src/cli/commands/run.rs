//! `git mas run start|list|show|abort`: development runs.

use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::json::run::{AbortedOut, Listed};
use crate::cli::output::JsonFlag;
use crate::cli::render::{describe_phase, short};
use crate::cli::runs::resolve;
use crate::cli::{Done, Outcome};
use git_mas::convergence::Ending;
use git_mas::devrun::{self, NewRun, Phase, RunMeta};
use std::fmt::Write as _;

/// Start, list, inspect and abort development runs.
///
/// A run is one goal for a roster of agents: each works in its own worktree (`git mas worktree
/// add`), proposes (`git mas propose`), endorses others' proposals by running the team's check
/// (`git mas endorse`), and once a proposal has a quorum of endorsements the team lands it on main
/// exactly once (`git mas land`).
#[derive(Debug, clap::Subcommand)]
pub enum RunCommand {
    Start(StartArgs),
    List(ListArgs),
    Show(ShowArgs),
    Abort(AbortArgs),
}

/// Start a run and print its id. Its base is the integration branch's tip now.
///
/// The roster defaults to every agent on the repository's roster; the quorum (valid endorsements a
/// proposal needs) defaults to a strict majority of the run's roster and is capped at its size.
/// The check command is what `git mas endorse` runs in a scratch checkout of a proposal (default:
/// `git config mas.check`).
///
/// With --json: the run's definition {id, goal, class, roster, quorum, requested_quorum, branch,
/// base, max_rounds, budget_ms, check, created_at_ms, started_by, check_timeout_ms}.
#[derive(Debug, clap::Args)]
pub struct StartArgs {
    /// What the team is to achieve.
    #[arg(long, value_name = "TEXT")]
    pub goal: String,
    /// The run's id (default: eight random hex digits).
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// Valid endorsements a proposal needs to land.
    #[arg(long, value_name = "N")]
    pub quorum: Option<u32>,
    /// The agents taking part, comma-separated (default: the whole roster).
    #[arg(long, value_name = "A,B,…", value_delimiter = ',')]
    pub roster: Option<Vec<String>>,
    /// The most proposals of changed content each agent may make.
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u64>,
    /// The run's wall-clock budget (e.g. 30m, 2h); the report says when it is exhausted.
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<humantime::Duration>,
    /// The team's check command (run with `sh -c` at the root of a proposal's checkout).
    #[arg(long, value_name = "CMD")]
    pub check: Option<String>,
    /// How long each of the run's checks may take (every endorsement's, the landing's) before it
    /// is killed and fails (default: 5m).
    #[arg(long, value_name = "DURATION", value_parser = crate::cli::commands::coordinate::positive_duration)]
    pub check_timeout: Option<humantime::Duration>,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// List every run with its phase (open, aborted, landed) and goal.
///
/// With --json: [{id, phase, goal, created_at_ms, problem}].
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Show a run's definition and phase (default: `mas.run`, else the only open run).
///
/// With --json: {def, phase, blocked, tip, problems}.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The run.
    pub run: Option<String>,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Stop a run without landing it. Its proposals stay in refs/mas for reference.
///
/// With --json: {run, aborted: {reason, risk, at_ms}, report}.
#[derive(Debug, clap::Args)]
pub struct AbortArgs {
    /// The run (default: `mas.run`, else the only open run).
    pub run: Option<String>,
    /// Why the run stops (recorded).
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// The reason is a blocking risk: the report says blocked (risk_blocked) instead of failed.
    #[arg(long)]
    pub risk: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs a `run` subcommand.
pub fn run(ctx: &mut Context, cmd: RunCommand) -> Result<Outcome, CliError> {
    match cmd {
        RunCommand::Start(a) => start(ctx, a),
        RunCommand::List(a) => list(ctx, a),
        RunCommand::Show(a) => show(ctx, a),
        RunCommand::Abort(a) => abort(ctx, a),
    }
}

fn start(ctx: &mut Context, args: StartArgs) -> Result<Outcome, CliError> {
    let caller = ctx.caller()?;
    let budget_ms = args.budget.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let new = NewRun {
        slices: None,
        id: args.id,
        goal: args.goal,
        roster: args.roster,
        quorum: args.quorum,
        max_rounds: args.max_rounds,
        budget_ms,
        check: args.check,
        check_timeout_ms: args.check_timeout.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
    };
    let store = ctx.store()?;
    let def = devrun::start(store, &new, &caller.name, &caller.key)?;
    if let Some(requested) = def.requested_quorum {
        ctx.warn(&format!(
            "--quorum {requested} is more than the run's {} agents can give: it is capped at {}",
            def.roster.len(),
            def.quorum
        ));
    }
    if def.check.is_none() && store.config_string("mas.check").is_none() {
        ctx.warn("no check command: endorsements will need --check, `git config mas.check`, or --no-check");
    }
    ctx.ui().emit(args.output, &def, |d| format!("{}\n", d.id))?;
    if !args.output.json {
        ctx.status(&format!(
            "started run {} on {} at {} — roster {}, quorum {}\nnext: `git mas worktree add <agent> --run {}` for each agent",
            def.id,
            def.branch,
            short(&def.base),
            def.roster.join(", "),
            crate::cli::render::quorum(def.quorum, def.requested_quorum),
            def.id
        ));
    }
    Ok(Outcome::Ok)
}

fn list(ctx: &mut Context, args: ListArgs) -> Result<Outcome, CliError> {
    let done = run_list(ctx, &args)?;
    let out = &done.value;
    if args.output.json {
        ctx.ui().json(out)?;
        return Ok(done.outcome);
    }
    if out.is_empty() {
        ctx.status("no runs; start one with `git mas run start --goal TEXT`");
    }
    let mut o = String::new();
    for r in out {
        let _ = match (&r.goal, &r.problem) {
            (Some(goal), _) => writeln!(o, "{:<10} {:<18} {goal}", r.id, shown(r)),
            (None, Some(p)) => writeln!(o, "{:<10} {:<18} ({p})", r.id, shown(r)),
            (None, None) => writeln!(o, "{:<10} {}", r.id, shown(r)),
        };
    }
    ctx.ui().out(&o)?;
    Ok(done.outcome)
}

/// A listed run's state in one word: its ending, else its phase (`landing`, `unreadable`).
fn shown(r: &Listed) -> String {
    match (r.phase, r.ending) {
        (crate::cli::json::PhaseName::Landing, _) | (_, None) => r.phase.to_string(),
        (_, Some(ending)) => ending.to_string(),
    }
}

/// How a run whose meta chain is `meta` ended, or that it has not ([`Ending`]): its abort's
/// recorded halt, its landing, or, for an open run that recorded a blocked landing, whether
/// that landing still stands (the run read whole, as `git mas report` reads it).
pub fn ending(ctx: &Context, meta: &devrun::RunMeta) -> Ending {
    match &meta.phase {
        Phase::Landed { .. } | Phase::Landing { .. } => Ending::Landed,
        Phase::Aborted { abort, .. } => Ending::of_abort(abort.halt.as_deref(), abort.risk),
        Phase::Open if meta.blocked.is_empty() => Ending::Open,
        Phase::Open => crate::cli::runs::load_view(ctx, Some(&meta.def.id))
            .ok()
            .and_then(|v| v.report(devrun::now_ms()).ending)
            .unwrap_or(Ending::Open),
    }
}

/// Every run with its phase and goal (or why it cannot be read).
pub fn run_list(ctx: &Context, _args: &ListArgs) -> Result<Done<Vec<Listed>>, CliError> {
    let store = ctx.store()?;
    let roster = store.roster()?;
    let mut out = Vec::new();
    // Converge runs share refs/mas/runs/ (`git mas report` shows them; status lists those still
    // going): their definitions say which they are.
    for id in devrun::definition::list_of(store, devrun::RunType::Development)? {
        match devrun::load_meta(store, &roster, &id) {
            Ok(meta) => out.push(Listed {
                id,
                phase: crate::cli::render::phase_name(&meta.phase),
                ending: Some(ending(ctx, &meta)),
                goal: Some(meta.def.goal),
                created_at_ms: Some(meta.def.created_at_ms),
                problem: None,
            }),
            Err(e) => out.push(Listed {
                id,
                phase: crate::cli::json::PhaseName::Unreadable,
                ending: None,
                goal: None,
                created_at_ms: None,
                problem: Some(e.to_string()),
            }),
        }
    }
    Ok(Done::ok(out))
}

fn show(ctx: &mut Context, args: ShowArgs) -> Result<Outcome, CliError> {
    let done = run_show(ctx, &args)?;
    ctx.ui().emit(args.output, &done.value, describe)?;
    Ok(done.outcome)
}

/// The run's definition and phase (a landing a crash left half-finished completed first).
pub fn run_show(ctx: &Context, args: &ShowArgs) -> Result<Done<RunMeta>, CliError> {
    Ok(Done::ok(resolve(ctx, args.run.as_deref())?))
}

/// A run's definition and phase, one field a line.
fn describe(meta: &RunMeta) -> String {
    let d = &meta.def;
    let mut o = String::new();
    let _ = writeln!(o, "run       {}", d.id);
    let _ = writeln!(o, "goal      {}", d.goal);
    let _ = writeln!(o, "phase     {}", describe_phase(&meta.phase));
    let _ = writeln!(o, "class     {}", d.class);
    let _ = writeln!(o, "base      {} ({})", d.base, d.branch);
    let _ = writeln!(o, "roster    {}", d.roster.join(", "));
    let _ = writeln!(o, "quorum    {}", crate::cli::render::quorum(d.quorum, d.requested_quorum));
    let _ = writeln!(o, "rounds    {}", d.max_rounds.map_or("no limit".into(), |n| format!("at most {n}")));
    let _ = writeln!(
        o,
        "budget    {}",
        d.budget_ms
            .map_or("none".into(), |ms| humantime::format_duration(std::time::Duration::from_millis(ms)).to_string())
    );
    let _ = writeln!(o, "check     {}", d.check.as_deref().unwrap_or("(none; `git config mas.check` if set)"));
    let _ = writeln!(o, "started   by {}", d.started_by);
    for (by, b) in &meta.blocked {
        let _ = writeln!(
            o,
            "blocked   landing attempt by {by} on {}: {}",
            short(&b.main),
            b.conflicts.iter().map(|c| c.detail.as_str()).collect::<Vec<_>>().join("; ")
        );
    }
    o
}

fn abort(ctx: &mut Context, args: AbortArgs) -> Result<Outcome, CliError> {
    let caller = ctx.caller()?;
    let meta = resolve(ctx, args.run.as_deref())?;
    let store = ctx.store()?;
    let roster = store.roster()?;
    let payload = {
        let stop = devrun::Stop { reason: &args.reason, risk: args.risk, rounds: None, halt: None };
        devrun::abort(store, &roster, &meta.def.id, stop, &caller.name, &caller.key)?
    };
    // The run ended: store its convergence report.
    let ended = git_mas::devrun::load_meta(store, &roster, &meta.def.id)?;
    let view =
        git_mas::devrun::view::load(store, &roster, ended, git_mas::devrun::events::self_endorse_allowed(store))?;
    let report = view.report(devrun::now_ms());
    let value = serde_json::to_value(&report).map_err(|e| CliError::new(Kind::Internal, e))?;
    if let Err(e) = devrun::store_report(store, &meta.def.id, &value, &caller.name, &caller.key) {
        ctx.warn(&format!("aborted, but the report could not be stored: {e}"));
    }
    let status = format!(
        "report: {}{}",
        report.status.name(),
        report.termination_reason.map(|r| format!(" ({})", r.name())).unwrap_or_default()
    );
    let out = AbortedOut { run: meta.def.id.clone(), aborted: payload, report };
    ctx.ui().emit(args.output, &out, |o| format!("aborted run {}\n", o.run))?;
    if !args.output.json {
        ctx.status(&status);
    }
    Ok(Outcome::Ok)
}

//! `git mas worktree add|remove`: one linked worktree per agent and run.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::json::worktree::{DiscardedOut, RemovedOut, WorktreeOut};
use crate::cli::output::JsonFlag;
use crate::cli::runs::resolve;
use git_mas::devrun::rules;
use git_mas::identity::validate_name;
use git_mas::pool::worktree::{self, AgentWorktree};

/// Create and remove agents' worktrees for a run.
#[derive(Debug, clap::Subcommand)]
pub enum WorktreeCommand {
    Add(AddArgs),
    Remove(RemoveArgs),
}

/// Create AGENT's worktree for a run: a linked worktree detached at the run's base, whose
/// per-worktree config sets `mas.agent` and `mas.run`, so commands run inside it act as AGENT in
/// that run. Prints the worktree's path.
///
/// With --json: {agent, run, path}.
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// The agent (on the run's roster).
    #[arg(id = "worktree_agent", value_name = "AGENT")]
    pub agent: String,
    /// The run (default: `mas.run`, else the only open run).
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    /// Where to create it (default: <repo>-mas/<run>/<agent> beside the main worktree).
    #[arg(long, value_name = "DIR")]
    pub path: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Remove AGENT's worktree of a run. Refuses when the worktree holds changes that AGENT's current
/// proposal does not (propose them first), unless --force.
///
/// With --json: {removed: {agent, run, path}, discarded: {tree, against, paths} or null}.
#[derive(Debug, clap::Args)]
pub struct RemoveArgs {
    /// The agent.
    #[arg(id = "worktree_agent", value_name = "AGENT")]
    pub agent: String,
    /// The run (default: `mas.run`, else the only open run).
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    /// Discard changes that were never proposed.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs a `worktree` subcommand.
pub fn run(ctx: &mut Context, cmd: WorktreeCommand) -> Result<Outcome, CliError> {
    match cmd {
        WorktreeCommand::Add(a) => add(ctx, a),
        WorktreeCommand::Remove(a) => remove(ctx, a),
    }
}

fn add(ctx: &mut Context, args: AddArgs) -> Result<Outcome, CliError> {
    validate_name(&args.agent)?;
    let meta = resolve(ctx, args.run.as_deref())?;
    rules::may_work_in(&meta, &args.agent)?;
    let store = ctx.store()?;
    let path = match args.path {
        Some(p) if p.is_absolute() => p,
        Some(p) => ctx.cwd()?.join(p),
        None => worktree::default_path(store, &meta.def.id, &args.agent),
    };
    let created = worktree::add(store, &meta, &args.agent, &path)?;
    let out = worktree_out(created);
    ctx.ui().emit(args.output, &out, |w| format!("{}\n", w.path.display()))?;
    if !args.output.json {
        let created = &out;
        ctx.status(&format!(
            "created {}'s worktree for run {} at the run's base; commands run there act as {} in run {}",
            created.agent, created.run, created.agent, created.run
        ));
    }
    Ok(Outcome::Ok)
}

fn remove(ctx: &mut Context, args: RemoveArgs) -> Result<Outcome, CliError> {
    validate_name(&args.agent)?;
    let meta = resolve(ctx, args.run.as_deref())?;
    let store = ctx.store()?;
    let Some(found) = worktree::find(store.common_dir(), &meta.def.id, &args.agent)? else {
        return Err(CliError::user(format!("{} has no worktree for run {}", args.agent, meta.def.id))
            .hinted("list worktrees with `git worktree list`"));
    };
    if let Ok(cwd) = ctx.cwd()
        && let (Ok(a), Ok(b)) = (std::fs::canonicalize(&cwd), std::fs::canonicalize(&found.path))
        && a.starts_with(&b)
    {
        return Err(CliError::user(format!(
            "you are inside {}; run this from another directory",
            found.path.display()
        )));
    }
    let lost = worktree::unproposed(store, &meta, &found)?;
    if let Some(lost) = &lost
        && !args.force
    {
        let shown: Vec<&str> = lost.paths.iter().take(10).map(String::as_str).collect();
        let more = lost.paths.len().saturating_sub(shown.len());
        return Err(CliError::user(format!(
            "{}'s worktree at {} holds changes that are not in {} ({} path{}: {}{})",
            args.agent,
            found.path.display(),
            lost.against,
            lost.paths.len(),
            if lost.paths.len() == 1 { "" } else { "s" },
            shown.join(", "),
            if more > 0 { format!(", and {more} more") } else { String::new() }
        ))
        .hinted("propose them first with `git mas propose` in that worktree, or pass --force to discard them"));
    }
    worktree::remove(store, &found)?;
    let out = RemovedOut {
        removed: worktree_out(found),
        discarded: lost.map(|l| DiscardedOut { tree: l.tree, against: l.against, paths: l.paths }),
    };
    ctx.ui().emit(args.output, &out, |r| format!("removed {}\n", r.removed.path.display()))?;
    if let (false, Some(lost)) = (args.output.json, &out.discarded) {
        ctx.warn(&format!("discarded {} unproposed path(s)", lost.paths.len()));
    }
    Ok(Outcome::Ok)
}

fn worktree_out(w: AgentWorktree) -> WorktreeOut {
    WorktreeOut { agent: w.agent, run: w.run, path: w.path }
}

//! `git mas frame`: the current frame and why its top targets rank where they do.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::json::frame::FrameOut;
use crate::cli::output::JsonFlag;
use crate::cli::render;
use crate::cli::{Done, Outcome};
use git_mas::attention::frame::{self, FrameError};
use std::fmt::Write as _;

/// How many top targets `frame` shows unless told.
pub const DEFAULT_TOP: usize = 10;

/// Show the current frame: its hash, who published it, its inputs, and the top targets with each
/// signal's contribution (task, errors, warnings, refs = centrality, recent = recency, editor).
///
/// With --json: {hash, commit, publisher, base, inputs, sources, skipped, targets_total, top}.
#[derive(Debug, clap::Args)]
pub struct FrameArgs {
    /// How many top targets to show.
    #[arg(long, default_value_t = DEFAULT_TOP)]
    pub top: usize,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// The current frame as `frame` shows it.
#[derive(Debug)]
pub struct Shown {
    /// What `--json` prints.
    pub out: FrameOut,
    /// How many targets the snapshot cut.
    pub truncated: u64,
}

/// Runs `frame`.
pub fn run(ctx: &mut Context, args: FrameArgs) -> Result<Outcome, CliError> {
    let done = frame(ctx, &args)?;
    ctx.ui().emit(args.output, &done.value.out, |o| human(o, done.value.truncated))?;
    Ok(done.outcome)
}

/// Reads the current frame and its top `args.top` targets.
pub fn frame(ctx: &Context, args: &FrameArgs) -> Result<Done<Shown>, CliError> {
    let store = ctx.store()?;
    let f = frame::current_frame(store)?.ok_or_else(|| CliError::from(FrameError::NoFrame))?;
    let s = &f.snapshot;
    let out = FrameOut {
        hash: f.hash.clone(),
        commit: f.commit.to_string(),
        publisher: f.publisher.clone(),
        base: s.base.clone(),
        inputs: s.inputs.clone(),
        sources: s.sources.clone(),
        skipped: s.skipped.clone(),
        targets_total: s.targets.len(),
        top: s.targets.iter().take(args.top).cloned().collect(),
    };
    Ok(Done::ok(Shown { out, truncated: s.truncated }))
}

fn human(f: &FrameOut, truncated: u64) -> String {
    let or_dash = |v: Option<&str>| v.unwrap_or("-").to_string();
    let diagnostics = if f.inputs.diagnostics.is_empty() { "-".to_string() } else { f.inputs.diagnostics.join(" ") };
    let cut = if truncated > 0 { format!(" (+{truncated} cut)") } else { String::new() };
    let mut o = String::new();
    let _ = writeln!(o, "frame        {}", f.hash);
    let _ = writeln!(o, "record       {} (published by {})", f.commit, f.publisher);
    let _ = writeln!(o, "base         {}", f.base.as_deref().unwrap_or("(no commits)"));
    let _ = writeln!(o, "task         {}", or_dash(f.inputs.task.as_deref()));
    let _ = writeln!(o, "scip         {}", or_dash(f.inputs.scip.as_deref()));
    let _ = writeln!(o, "diagnostics  {diagnostics}");
    let _ = writeln!(o, "editor       {}", or_dash(f.inputs.editor.as_deref()));
    let _ = writeln!(o, "worktree     {}", f.inputs.worktree);
    let _ = writeln!(o, "targets      {}{cut}\n", f.targets_total);
    o.push_str(&render::targets(&f.top));
    o
}

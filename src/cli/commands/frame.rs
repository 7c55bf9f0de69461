//! `git mas frame`: the current frame and why its top targets rank where they do.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::json::frame::FrameOut;
use crate::cli::output::JsonFlag;
use crate::cli::render;
use git_mas::attention::frame::{self, Frame, FrameError};
use std::fmt::Write as _;

/// Show the current frame: its hash, who published it, its inputs, and the top targets with each
/// signal's contribution (task, errors, warnings, refs = centrality, recent = recency, editor).
///
/// With --json: {hash, commit, publisher, base, inputs, sources, skipped, targets_total, top}.
#[derive(Debug, clap::Args)]
pub struct FrameArgs {
    /// How many top targets to show.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs `frame`.
pub fn run(ctx: &mut Context, args: FrameArgs) -> Result<Outcome, CliError> {
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
    ctx.ui().emit(args.output, &out, |_| human(&f, args.top))?;
    Ok(Outcome::Ok)
}

fn human(f: &Frame, top: usize) -> String {
    let s = &f.snapshot;
    let or_dash = |v: Option<&str>| v.unwrap_or("-").to_string();
    let diagnostics = if s.inputs.diagnostics.is_empty() { "-".to_string() } else { s.inputs.diagnostics.join(" ") };
    let cut = if s.truncated > 0 { format!(" (+{} cut)", s.truncated) } else { String::new() };
    let mut o = String::new();
    let _ = writeln!(o, "frame        {}", f.hash);
    let _ = writeln!(o, "record       {} (published by {})", f.commit, f.publisher);
    let _ = writeln!(o, "base         {}", s.base.as_deref().unwrap_or("(no commits)"));
    let _ = writeln!(o, "task         {}", or_dash(s.inputs.task.as_deref()));
    let _ = writeln!(o, "scip         {}", or_dash(s.inputs.scip.as_deref()));
    let _ = writeln!(o, "diagnostics  {diagnostics}");
    let _ = writeln!(o, "editor       {}", or_dash(s.inputs.editor.as_deref()));
    let _ = writeln!(o, "worktree     {}", s.inputs.worktree);
    let _ = writeln!(o, "targets      {}{cut}\n", s.targets.len());
    o.push_str(&render::targets(s, top));
    o
}

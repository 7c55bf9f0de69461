//! `git mas frame`: the current frame and why its top targets rank where they do.

use crate::cli::commands::snapshot::{frame_error, print_targets};
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::output::print_json;
use git_mas::attention::frame::{self, FrameError};
use std::process::ExitCode;

/// Show the current frame: its hash, who published it, its inputs, and the top targets with each
/// signal's contribution (task, errors, warnings, refs = centrality, recent = recency, editor).
#[derive(Debug, clap::Args)]
pub struct FrameArgs {
    /// How many top targets to show.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `frame`.
pub fn run(ctx: &mut Context, args: FrameArgs) -> Result<ExitCode, CliError> {
    let store = ctx.store()?;
    let f = frame::current_frame(store).map_err(frame_error)?.ok_or_else(|| frame_error(FrameError::NoFrame))?;
    if args.json {
        let mut snapshot = f.snapshot.clone();
        snapshot.targets.truncate(args.top);
        print_json(&serde_json::json!({
            "hash": f.hash, "commit": f.commit.to_string(), "publisher": f.publisher,
            "base": f.snapshot.base, "inputs": f.snapshot.inputs, "sources": f.snapshot.sources,
            "skipped": f.snapshot.skipped, "targets_total": f.snapshot.targets.len(), "top": snapshot.targets,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let s = &f.snapshot;
    println!("frame        {}", f.hash);
    println!("record       {} (published by {})", f.commit, f.publisher);
    println!("base         {}", s.base.as_deref().unwrap_or("(no commits)"));
    println!("task         {}", s.inputs.task.as_deref().unwrap_or("-"));
    println!("scip         {}", s.inputs.scip.as_deref().unwrap_or("-"));
    println!(
        "diagnostics  {}",
        if s.inputs.diagnostics.is_empty() { "-".to_string() } else { s.inputs.diagnostics.join(" ") }
    );
    println!("editor       {}", s.inputs.editor.as_deref().unwrap_or("-"));
    println!("worktree     {}", s.inputs.worktree);
    println!(
        "targets      {}{}\n",
        s.targets.len(),
        if s.truncated > 0 { format!(" (+{} cut)", s.truncated) } else { String::new() }
    );
    print_targets(s, args.top);
    Ok(ExitCode::SUCCESS)
}

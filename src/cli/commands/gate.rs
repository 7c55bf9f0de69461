//! `git mas gate`: may the calling agent commit this change?

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::gating;
use crate::cli::json::gate::{GateOut, TouchedOut};
use crate::cli::output::JsonFlag;
use git_mas::attention::gate_io;
use git_mas::attention::hooks::Mode;
use std::path::PathBuf;
use std::process::ExitCode;

/// Decide whether the calling agent may commit a change, against every other live focus.
///
/// Blocks (exit 6) when another agent holds a target the change touches — as the Serialize holder
/// of a top target you share, or as its own top target — naming the holder, the target and what to
/// do. Fails closed (exit 7) when you have no live focus, when your focus is on an old frame, when
/// another agent's focus on an old frame names a touched target, and when the board cannot be read.
/// Allows (exit 0) otherwise. A held symbol (path#symbol) protects only its lines.
///
/// `git config mas.gate off|warn|enforce` decides what the hooks do with the verdict (default off:
/// the gate is opt-in per repository; `git mas hooks install` turns it to enforce). This command
/// always reports the verdict.
///
/// With --json: {agent, touched: [{lines, path}], verdict: {verdict: "allow", frame, notes} |
/// {verdict: "block", blocks: [{holder, target, why, remedy}]} | {verdict: "fail_closed", reason,
/// remedy}}; the verdict is reported on stderr as well.
#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// Check the staged changes (the default).
    #[arg(long, conflicts_with = "paths")]
    pub staged: bool,
    /// Check these paths instead (whole files).
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs `gate`.
pub fn run(ctx: &mut Context, args: GateArgs) -> Result<ExitCode, CliError> {
    let _ = args.staged;
    let (caller, outcome) = gating::evaluate(ctx, &args.paths)?;
    let verdict = gate_io::verdict_of(&outcome);
    if gating::mode(ctx)? == Mode::Off && !args.output.json {
        ctx.status("note: mas.gate is off here, so the hooks ignore this verdict");
    }
    let code = gating::report(ctx, &caller, &verdict);
    if args.output.json {
        let touched = outcome
            .map(|o| o.touched.into_iter().map(|t| TouchedOut { lines: t.lines, path: t.path }).collect())
            .unwrap_or_default();
        ctx.ui().json(&GateOut { agent: caller, touched, verdict })?;
    }
    Ok(ExitCode::from(code))
}

//! `git mas align A B` and `git mas decide A B`: the pure rule, on two agents' published foci.

use crate::cli::commands::focus::frame_and_board;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::output::print_json;
use git_mas::attention::rule::{self, Decision, Focus};
use std::process::ExitCode;

/// How two agents' foci overlap: the Jaccard overlap of their target sets and whether their top
/// target is shared. Defined only on one frame: across frames it is an error (exit 1).
#[derive(Debug, clap::Args)]
pub struct AlignArgs {
    /// First agent.
    pub a: String,
    /// Second agent.
    pub b: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// What the coordination rule says for two agents: reject (different frames), parallel, or
/// serialize (same top target: the lexicographically smaller agent holds, the other defers).
#[derive(Debug, clap::Args)]
pub struct DecideArgs {
    /// First agent.
    pub a: String,
    /// Second agent.
    pub b: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

fn two_foci(ctx: &mut Context, a: &str, b: &str) -> Result<(Focus, Focus), CliError> {
    let (_, board) = frame_and_board(ctx)?;
    let get = |agent: &str| -> Result<Focus, CliError> {
        match board.entry(agent) {
            Some(e) if e.liveness == git_mas::attention::board::Liveness::Live => Ok(e.focus.clone()),
            Some(e) => Ok(Focus { targets: Vec::new(), ..e.focus.clone() }),
            None => Err(CliError::user(format!("{agent} has published no focus"))),
        }
    };
    Ok((get(a)?, get(b)?))
}

/// Runs `align`.
pub fn align(ctx: &mut Context, args: AlignArgs) -> Result<ExitCode, CliError> {
    let (a, b) = two_foci(ctx, &args.a, &args.b)?;
    let al = rule::align(&a, &b)
        .map_err(|e| CliError::user(e.to_string()).hinted("republish both foci on the current frame"))?;
    if args.json {
        print_json(&al)?;
    } else {
        println!("jaccard {:.3}  top shared: {}  shared: {}", al.jaccard, al.top_shared, al.shared.join(" "));
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `decide`.
pub fn decide(ctx: &mut Context, args: DecideArgs) -> Result<ExitCode, CliError> {
    let (a, b) = two_foci(ctx, &args.a, &args.b)?;
    let d = rule::decide(&a, &b);
    if args.json {
        print_json(&d)?;
    } else {
        match &d {
            Decision::Reject { reason } => println!("reject: {reason}"),
            Decision::Parallel => println!("parallel"),
            Decision::Serialize { holder, deferring, target } => {
                println!("serialize on {target}: {holder} holds, {deferring} defers")
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

//! `git mas align A B` and `git mas decide A B`: the pure rule, on two agents' published foci.

use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::focus_board::frame_and_board;
use crate::cli::output::JsonFlag;
use crate::cli::{Done, Outcome};
use git_mas::attention::rule::{self, Alignment, Decision, Focus};

/// How two agents' foci overlap: the Jaccard overlap of their target sets and whether their top
/// target is shared. Defined only on one frame: across frames it is an error (exit 1).
///
/// With --json: {jaccard, top_shared, shared}.
#[derive(Debug, clap::Args)]
pub struct AlignArgs {
    /// First agent.
    pub a: String,
    /// Second agent.
    pub b: String,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// What the coordination rule says for two agents: reject (different frames), parallel, or
/// serialize (same top target: the lexicographically smaller agent holds, the other defers).
///
/// With --json: {decision: "reject", reason} | {decision: "parallel"} | {decision: "serialize",
/// holder, deferring, target}.
#[derive(Debug, clap::Args)]
pub struct DecideArgs {
    /// First agent.
    pub a: String,
    /// Second agent.
    pub b: String,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// The two agents' foci as the rule sees them ([`git_mas::attention::board::Board::holding`]).
fn two_foci(ctx: &Context, a: &str, b: &str) -> Result<(Focus, Focus), CliError> {
    let (_, board) = frame_and_board(ctx)?;
    let get =
        |agent: &str| board.holding(agent).ok_or_else(|| CliError::user(format!("{agent} has published no focus")));
    Ok((get(a)?, get(b)?))
}

/// Runs `align`.
pub fn align(ctx: &mut Context, args: AlignArgs) -> Result<Outcome, CliError> {
    let done = alignment(ctx, &args)?;
    ctx.ui().emit(args.output, &done.value, |al| {
        format!("jaccard {:.3}  top shared: {}  shared: {}\n", al.jaccard, al.top_shared, al.shared.join(" "))
    })?;
    Ok(done.outcome)
}

/// How the two agents' foci overlap.
pub fn alignment(ctx: &Context, args: &AlignArgs) -> Result<Done<Alignment>, CliError> {
    let (a, b) = two_foci(ctx, &args.a, &args.b)?;
    let al = rule::align(&a, &b)
        .map_err(|e| CliError::new(Kind::User, e).hinted("republish both foci on the current frame"))?;
    Ok(Done::ok(al))
}

/// Runs `decide`.
pub fn decide(ctx: &mut Context, args: DecideArgs) -> Result<Outcome, CliError> {
    let done = decision(ctx, &args)?;
    ctx.ui().emit(args.output, &done.value, |d| match d {
        Decision::Reject { reason } => format!("reject: {reason}\n"),
        Decision::Parallel => "parallel\n".to_string(),
        Decision::Serialize { holder, deferring, target } => {
            format!("serialize on {target}: {holder} holds, {deferring} defers\n")
        }
    })?;
    Ok(done.outcome)
}

/// What the coordination rule says for the two agents.
pub fn decision(ctx: &Context, args: &DecideArgs) -> Result<Done<Decision>, CliError> {
    let (a, b) = two_foci(ctx, &args.a, &args.b)?;
    Ok(Done::ok(rule::decide(&a, &b)))
}

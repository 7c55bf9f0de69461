//! `git mas bench card-alignment|workspace`: the attention protocol's evaluation harnesses.
//!
//! Both run the production snapshot, focus, alignment, rule and gate code against simulated
//! agents and workspaces (the library's `evaluation` module); nothing here touches a repository.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::output::JsonFlag;
use git_mas::attention::rule::Overlap;
use git_mas::evaluation::card::{self, CardConfig, CardReport};
use git_mas::evaluation::stats::{Mean, Proportion};
use git_mas::evaluation::workspace::{self, WorkspaceConfig, WorkspaceReport};
use std::fmt::Write as _;

/// Reproduce the attention protocol's published evaluation: seeded simulations that run the real
/// snapshot, focus, alignment, rule and gate code; only the agents and the workspace are simulated.
///
/// The same seed gives the same table on every machine. Neither harness reads or writes a
/// repository. BENCHMARKS.md puts the full-size results beside the published figures.
#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    CardAlignment(CardArgs),
    Workspace(WorkspaceArgs),
}

/// The card-alignment analog: zero-shot coordination between agents from independent runs.
///
/// Each episode deals five targets whose features (task naming, errors, warnings, references,
/// commits since the last change) are frame-invariant, to two agents from independent runs, each
/// seeing them under a private frame permutation. The agents deliberate for --rounds rounds and
/// then pick privately; an episode succeeds when both pick the same target. Conditions, all on the
/// same deals:
///
///   protocol     both compute the saliency snapshot and its frame hash, publish foci derived from
///                it, ask the coordination rule, and defer to the top target that ranks higher in
///                the shared snapshot (grounded deference)
///   mismatched   the same exchange, but targets are named by private labels that the partner
///                reads in its own frame (mismatched conventions)
///   no signal    each picks its own run's favourite; no messages
///   ungrounded   live candidates shared by name and intersected, but ranked by each agent's own
///                convention: no shared ranking
///   stale        the protocol when one agent's frame is stale with probability R (one row per
///                --stale-rate); the rule rejects mismatched frames and both fail closed, which is
///                counted as a refusal, separately from failures
///
/// Success rates carry 95 % Wilson score intervals. The full configuration (200 pairs × 25
/// episodes = 5,000 episodes per condition) takes seconds in a release build.
///
/// Examples:
///   git mas bench card-alignment
///   git mas bench card-alignment --seed 7 --pairs 20 --episodes 10 --json
///   git mas bench card-alignment --stale-rate 0,0.05,0.5
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct CardArgs {
    /// Seed of every random draw.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Run pairs: each pair draws two agents from independent runs.
    #[arg(long, value_name = "N", default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub pairs: u64,
    /// Episodes per pair.
    #[arg(long, value_name = "N", default_value_t = 25, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub episodes: u64,
    /// Deliberation rounds before the final pick.
    #[arg(long, value_name = "N", default_value_t = 7, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub rounds: u64,
    /// Frame mismatch rates of the stale-frame rows, each in [0, 1] (comma-separated or repeated).
    #[arg(long = "stale-rate", value_name = "R", value_delimiter = ',', default_values_t = [0.0, 0.1, 0.2, 0.3], value_parser = parse_rate)]
    pub stale_rates: Vec<f64>,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// When the protocol serializes two coders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OverlapArg {
    /// Only when their top targets collide (the coordination rule).
    Top,
    /// When their foci share any target (stricter; costs throughput).
    Any,
}

/// The two-coder workspace simulation: conflict rate and steps to finish, with and without the protocol.
///
/// Each run generates a workspace of --files files with heavy-tailed SCIP-like reference counts,
/// diagnostics, history and a task that names a quarter of them. Two coders each get a work list
/// (a quarter of the files, drawn by saliency, so both are drawn to the same hot files) and work
/// in discrete steps: each step they re-snapshot the workspace, derive a focus (their next three
/// files in the snapshot's order) and edit its top file, sometimes spilling into their other focus
/// files or into a central hub file. A step in which both edits touch a common file is a conflict.
///
/// Without the protocol both edit as planned. With it, each publishes its focus and asks the edit
/// gate first: a blocked top file means waiting a step, a blocked spill file is left out.
/// --overlap any also keeps the rule's deferring coder out of every target the two foci share.
///
/// Reported per arm: the conflict rate (runs with at least one conflict, with a 95 % Wilson
/// interval), conflicting steps per run, steps to finish both lists (throughput) and steps spent
/// waiting. Both arms run on the same workspaces and the same planned edits.
///
/// Examples:
///   git mas bench workspace
///   git mas bench workspace --overlap any --runs 50 --json
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct WorkspaceArgs {
    /// Runs per arm.
    #[arg(long, value_name = "N", default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub runs: u64,
    /// Files in the workspace (4 to 4096).
    #[arg(long, value_name = "N", default_value_t = 24, value_parser = clap::value_parser!(u16).range(4..=4096))]
    pub files: u16,
    /// Seed of every random draw.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Serialize on a shared top target only (top), or on any shared target (any).
    #[arg(long, value_enum, default_value_t = OverlapArg::Top)]
    pub overlap: OverlapArg,
    #[command(flatten)]
    pub output: JsonFlag,
}

fn parse_rate(s: &str) -> Result<f64, String> {
    let r: f64 = s.trim().parse().map_err(|_| format!("{s:?} is not a number"))?;
    if (0.0..=1.0).contains(&r) { Ok(r) } else { Err(format!("{s} is outside [0, 1]")) }
}

/// Runs a `bench` subcommand.
pub fn run(ctx: &mut Context, cmd: BenchCommand) -> Result<Outcome, CliError> {
    match cmd {
        BenchCommand::CardAlignment(a) => {
            let cfg = CardConfig {
                seed: a.seed,
                pairs: a.pairs,
                episodes: a.episodes,
                rounds: a.rounds,
                stale_rates: a.stale_rates,
            };
            let report = card::run(&cfg);
            ctx.ui().emit(a.output, &report, card_text)?;
        }
        BenchCommand::Workspace(a) => {
            let overlap = match a.overlap {
                OverlapArg::Top => Overlap::Top,
                OverlapArg::Any => Overlap::Any,
            };
            let cfg = WorkspaceConfig { seed: a.seed, runs: a.runs, files: usize::from(a.files), overlap };
            let report = workspace::run(&cfg);
            ctx.ui().emit(a.output, &report, workspace_text)?;
        }
    }
    Ok(Outcome::Ok)
}

fn ci(p: &Proportion) -> String {
    format!("{:.3} [{:.3}, {:.3}]", p.rate, p.low, p.high)
}

fn mean_ci(m: &Mean) -> String {
    format!("{:.2} [{:.2}, {:.2}]", m.mean, m.low, m.high)
}

fn card_text(r: &CardReport) -> String {
    let c = &r.config;
    let mut out = format!(
        "card alignment: {} pairs × {} episodes = {} episodes per condition, {} rounds, seed {} (chance {:.3})\n\n",
        c.pairs,
        c.episodes,
        c.pairs * c.episodes,
        c.rounds,
        c.seed,
        r.chance
    );
    let _ = writeln!(
        out,
        "{:<56} {:<24} {:<24} {:<8} published",
        "condition", "success [95 % CI]", "refused [95 % CI]", "failed"
    );
    for row in &r.conditions {
        let published = row.published.map_or("-".to_string(), |p| format!("{p:.3}"));
        let _ = writeln!(
            out,
            "{:<56} {:<24} {:<24} {:<8.3} {published}",
            row.label,
            ci(&row.success),
            ci(&row.refused),
            row.failure.rate
        );
    }
    if let Some(d) =
        r.conditions.iter().find(|c| c.condition == "protocol").and_then(|c| c.first_exchange_disagreed.as_ref())
    {
        let _ = writeln!(
            out,
            "\nprotocol: the first exchange disagreed (different top targets) in {} of episodes; \
             grounded deference had to resolve those",
            ci(d)
        );
    }
    out
}

fn workspace_text(r: &WorkspaceReport) -> String {
    let c = &r.config;
    let overlap = match c.overlap {
        Overlap::Top => "top",
        Overlap::Any => "any",
    };
    let mut out = format!(
        "workspace: {} runs per arm, {} files, {} per coder, overlap {overlap}, seed {}\n\n",
        c.runs, c.files, r.work_per_coder, c.seed
    );
    let _ = writeln!(
        out,
        "{:<9} {:<24} {:<22} {:<22} {:<20} published",
        "protocol", "conflict rate [95 % CI]", "conflict steps/run", "steps to finish", "waits/run"
    );
    for arm in &r.arms {
        let _ = writeln!(
            out,
            "{:<9} {:<24} {:<22} {:<22} {:<20} {:.3}",
            arm.arm,
            ci(&arm.conflict_rate),
            mean_ci(&arm.conflict_steps),
            mean_ci(&arm.steps),
            mean_ci(&arm.waits),
            arm.published_conflict_rate
        );
    }
    let unfinished: u64 = r.arms.iter().map(|a| a.unfinished).sum();
    if unfinished > 0 {
        let _ = writeln!(out, "\n{unfinished} runs hit the step cap before both work lists were done");
    }
    out
}

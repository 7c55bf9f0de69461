//! `git mas propose`: this worktree's content becomes the caller's proposal in the run.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::json::propose::{ClashOut, ProposedOut};
use crate::cli::output::JsonFlag;
use crate::cli::render::short;
use crate::cli::runs::resolve;
use crate::cli::{Done, Outcome};
use git_mas::devrun::{now_ms, proposal_ref};
use git_mas::engines::development::ProposalTally;
use git_mas::ops::propose::{self, Against, Ask, Clash};
use std::fmt::Write as _;

/// Propose this worktree's content as your artifact for the run.
///
/// Takes every tracked file as it is on disk and every untracked file that is not ignored (what
/// `git add -A` would take), without touching this worktree's index, and commits it with the run's
/// base as parent under refs/mas/runs/<run>/proposals/<you>. The Proposal event goes to your
/// event chain first and the proposal ref follows it, so a crash in between is completed by the
/// next git-mas command that reads the run (or by proposing again). Proposing again replaces your
/// proposal: identical content keeps
/// its endorsements, changed content starts a new round and needs new ones. Nothing touches main.
///
/// The proposal is then merged (three-way, on the run's base, in memory) with every other
/// proposal of the run and with the run's branch if it moved since the base: each file they
/// change differently is named in a warning, since a landing that takes both stops there. The
/// proposal is recorded either way (exit 0): agree on the file with the other agent, or take the
/// branch's change into your worktree, and propose again.
///
/// With --json: {run, agent, commit, tree, round, previous_tree, endorsements_kept,
/// endorsements_voided, clashes: [{kind: "proposal"|"branch", with, commit, paths}]}.
#[derive(Debug, clap::Args)]
pub struct ProposeArgs {
    /// The proposal's message (default: names you and the run's goal).
    #[arg(short, long, value_name = "MSG")]
    pub message: Option<String>,
    /// Abstain: your slice of an aggregate run needs no change, and -m says why. Your worktree
    /// must hold the run's base unchanged; the run then does not wait for your slice, and nobody
    /// is asked to endorse it. (In an aggregate run a proposal that changes nothing is refused.)
    #[arg(long, requires = "message")]
    pub abstain: bool,
    /// The run (default: `mas.run`, else the only open run).
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// A proposal as `propose` reports it.
#[derive(Debug)]
pub struct Proposed {
    /// What `--json` prints.
    pub out: ProposedOut,
    /// The caller's previous proposal in the run, if any.
    pub previous: Option<ProposalTally>,
}

/// Runs `propose`.
pub fn run(ctx: &mut Context, args: ProposeArgs) -> Result<Outcome, CliError> {
    let done = propose(ctx, &args)?;
    let Proposed { out, previous } = &done.value;
    ctx.ui().emit(args.output, out, |o| format!("{}\n", o.commit))?;
    if !args.output.json {
        ctx.status(&status(out, previous.as_ref()));
    }
    Ok(done.outcome)
}

/// Records the caller's worktree as its proposal in the run.
pub fn propose(ctx: &Context, args: &ProposeArgs) -> Result<Done<Proposed>, CliError> {
    crate::cli::sweep_temp_indexes(ctx);
    let caller = ctx.caller()?;
    let meta = resolve(ctx, args.run.as_deref())?;
    let store = ctx.store()?;
    let ask = Ask {
        agent: &caller.name,
        key: &caller.key,
        workdir: store.workdir()?,
        message: args.message.as_deref(),
        now_ms: now_ms(),
        abstain: args.abstain,
    };
    let p = propose::propose(store, &store.roster()?, &meta, ask)?;
    if p.superseded {
        ctx.warn(&format!(
            "{} does not hold the proposal just recorded ({}): a later proposal of yours counts",
            proposal_ref(&meta.def.id, &caller.name),
            short(&p.commit.to_string())
        ));
    }
    for clash in &p.clashes {
        ctx.warn(&clash_warning(clash, meta.def.slices.is_some()));
    }
    if let Some(why) = &p.unchecked {
        ctx.warn(&format!("the proposal is recorded, but could not be checked against the others: {why}"));
    }
    let out = ProposedOut {
        run: meta.def.id.clone(),
        agent: caller.name.clone(),
        commit: p.commit.to_string(),
        tree: p.tree.to_string(),
        round: p.round,
        previous_tree: p.previous.as_ref().map(|p| p.tree.clone()),
        endorsements_kept: p.carried.kept,
        endorsements_voided: p.carried.voided,
        clashes: p.clashes.iter().map(clash_out).collect(),
    };
    Ok(Done::ok(Proposed { out, previous: p.previous }))
}

/// The proposal in one line (the MCP tool's summary), with what it cannot land together with.
pub fn summary(out: &ProposedOut) -> String {
    let mut summary = format!("proposed tree {} in run {}", out.tree, out.run);
    for c in &out.clashes {
        let with = if c.kind == "branch" { format!("{} (moved since the base)", c.with) } else { c.with.clone() };
        let _ = write!(summary, "; cannot land together with {with}: both change {}", c.paths.join(", "));
    }
    summary
}

/// What the proposer is told of a clash. In a run split into slices every proposal is meant to
/// land; in another only one of two rival proposals does, unless the landing is an aggregate.
fn clash_warning(clash: &Clash, sliced: bool) -> String {
    let files = clash.paths.join(", ");
    match &clash.against {
        Against::Proposal { agent, .. } if sliced => format!(
            "{agent}'s proposal changes {files} differently: the two slices cannot land together; agree with \
             {agent} on it, then propose again"
        ),
        Against::Proposal { agent, .. } => format!(
            "{agent}'s proposal changes {files} differently: only one of the two can land (an aggregate landing \
             stops there)"
        ),
        Against::Branch { name, tip } => format!(
            "{name} moved since the run's base ({}) and changes {files} differently: the landing will stop there; \
             take {name}'s change into this worktree and propose again",
            short(&tip.to_string())
        ),
    }
}

pub fn clash_out(clash: &Clash) -> ClashOut {
    let (kind, with, commit) = match &clash.against {
        Against::Proposal { agent, commit } => ("proposal", agent, commit),
        Against::Branch { name, tip } => ("branch", name, tip),
    };
    ClashOut { kind: kind.into(), with: with.clone(), commit: commit.to_string(), paths: clash.paths.clone() }
}

/// The status lines after a proposal.
fn status(out: &ProposedOut, previous: Option<&ProposalTally>) -> String {
    let mut status =
        format!("proposed {} (tree {}) for run {}, round {}", short(&out.commit), short(&out.tree), out.run, out.round);
    match previous {
        Some(p) if p.tree == out.tree => {
            let kept =
                if out.endorsements_kept.is_empty() { "none yet".into() } else { out.endorsements_kept.join(", ") };
            let _ =
                write!(status, "\nidentical content to your previous proposal: its endorsements still count ({kept})");
        }
        Some(_) if !out.endorsements_voided.is_empty() => {
            let _ = write!(
                status,
                "\nchanged content: the endorsements of your previous proposal ({}) no longer count",
                out.endorsements_voided.join(", ")
            );
        }
        _ => {}
    }
    let _ = write!(status, "\nnext: others endorse it with `git mas endorse {}`", out.agent);
    status
}

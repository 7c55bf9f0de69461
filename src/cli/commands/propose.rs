//! `git mas propose`: this worktree's content becomes the caller's proposal in the run.

use crate::cli::context::{Caller, Context};
use crate::cli::error::CliError;
use crate::cli::json::propose::ProposedOut;
use crate::cli::output::JsonFlag;
use crate::cli::render::short;
use crate::cli::runs::resolve;
use git_mas::engines::development::ProposalTally;
use git_mas::pool::proposal;
use git_mas::run::events::{self, EventRecord, PROPOSAL_KIND};
use git_mas::run::rules::{self, carried_endorsements};
use git_mas::run::{self, RunDef, now_ms, proposal_ref};
use git_mas::runtime::SemanticPayload;
use git_mas::store::Store;
use gix::ObjectId;
use std::fmt::Write as _;
use std::process::ExitCode;

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
/// With --json: {run, agent, commit, tree, round, previous_tree, endorsements_kept,
/// endorsements_voided}.
#[derive(Debug, clap::Args)]
pub struct ProposeArgs {
    /// The proposal's message (default: names you and the run's goal).
    #[arg(short, long, value_name = "MSG")]
    pub message: Option<String>,
    /// The run (default: `mas.run`, else the only open run).
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs `propose`.
pub fn run(ctx: &mut Context, args: ProposeArgs) -> Result<ExitCode, CliError> {
    let caller = ctx.caller()?;
    let meta = resolve(ctx, args.run.as_deref())?;
    rules::may_propose(&meta, &caller.name, now_ms())?;
    let def = &meta.def;
    let store = ctx.store()?;
    let workdir = store.workdir()?.to_path_buf();
    let tree = proposal::worktree_tree(&workdir)?;
    let (round, previous) = next_round(store, def, &caller.name, tree)?;
    rules::ensure_round(def, round)?;
    let message = rules::proposal_message(args.message.as_deref(), &caller.name, def)?;
    let len = proposal::tree_size(&workdir, tree)?;
    let commit = proposal::write_commit(store, tree, def.base_id()?, &caller.name, &message)?;
    let payload = SemanticPayload::ExternalBytes { digest: tree.to_string(), len };
    record(ctx, def, &caller, commit, round, payload, message)?;
    let tree_text = tree.to_string();
    let carried = carried_endorsements(previous.as_ref(), &tree_text);
    let out = ProposedOut {
        run: def.id.clone(),
        agent: caller.name.clone(),
        commit: commit.to_string(),
        tree: tree_text,
        round,
        previous_tree: previous.as_ref().map(|p| p.tree.clone()),
        endorsements_kept: carried.kept,
        endorsements_voided: carried.voided,
    };
    ctx.ui().emit(args.output, &out, |o| format!("{}\n", o.commit))?;
    if !args.output.json {
        ctx.status(&status(&out, previous.as_ref()));
    }
    Ok(ExitCode::SUCCESS)
}

/// The round a proposal of `tree` would be for `agent`, and the agent's current proposal.
fn next_round(
    store: &Store,
    def: &RunDef,
    agent: &str,
    tree: ObjectId,
) -> Result<(u64, Option<ProposalTally>), CliError> {
    let roster = store.roster()?;
    let loaded = events::load(store, &roster, &def.id)?;
    let runtime = events::replay(def, events::self_endorse_allowed(store), &loaded)
        .map_err(|e| CliError::internal(format!("run {}: {e}", def.id)))?;
    let engine = runtime.engine();
    let round = engine.round_of_next(agent, &tree.to_string());
    Ok((round, engine.tally().proposal(agent).cloned()))
}

/// Records the proposal: its event first, then the proposal ref (see `pool::proposal` for why the
/// ref follows the event); warns when a later proposal holds the ref.
fn record(
    ctx: &Context,
    def: &RunDef,
    caller: &Caller,
    commit: ObjectId,
    round: u64,
    payload: SemanticPayload,
    message: String,
) -> Result<(), CliError> {
    let store = ctx.store()?;
    let roster = store.roster()?;
    let record = EventRecord {
        event: events::event(&def.id, &caller.name, round.saturating_sub(1), payload),
        at_ms: now_ms(),
        commit: commit.to_string(),
        proposer: None,
        note: Some(message),
    };
    let id = def.id.clone();
    events::append(store, &caller.key, PROPOSAL_KIND, &record, &[], || {
        run::load_meta(store, &roster, &id)?.ensure_open()?;
        Ok(Vec::new())
    })?;
    let loaded = events::load(store, &roster, &def.id)?;
    let runtime = events::replay(def, events::self_endorse_allowed(store), &loaded)
        .map_err(|e| CliError::internal(format!("run {}: {e}", def.id)))?;
    proposal::settle(store, def, &loaded, &runtime, Some(&caller.name))?;
    let refname = proposal_ref(&def.id, &caller.name);
    if store.tip(&refname)? != Some(commit) {
        ctx.warn(&format!(
            "{refname} does not hold the proposal just recorded ({}): a later proposal of yours counts",
            short(&commit.to_string())
        ));
    }
    Ok(())
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

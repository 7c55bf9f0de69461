//! `git mas propose`: this worktree's content becomes the caller's proposal in the run.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::output::{print_json, print_text};
use crate::cli::render::short;
use crate::cli::runs::resolve;
use git_mas::pool::proposal;
use git_mas::run::events::{self, EventRecord, PROPOSAL_KIND};
use git_mas::run::{self, RunDef, now_ms, proposal_ref};
use git_mas::runtime::SemanticPayload;
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
#[derive(Debug, clap::Args)]
pub struct ProposeArgs {
    /// The proposal's message (default: names you and the run's goal).
    #[arg(short, long, value_name = "MSG")]
    pub message: Option<String>,
    /// The run (default: `mas.run`, else the only open run).
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct Proposed {
    run: String,
    agent: String,
    commit: String,
    tree: String,
    round: u64,
    previous_tree: Option<String>,
    endorsements_kept: Vec<String>,
    endorsements_voided: Vec<String>,
}

/// Refuses when the run's budget is spent.
pub(crate) fn ensure_budget(def: &RunDef) -> Result<(), CliError> {
    if let Some(budget) = def.budget_ms {
        let used = now_ms().saturating_sub(def.created_at_ms);
        if used >= budget {
            return Err(CliError::user(format!(
                "run {}'s budget of {} is exhausted",
                def.id,
                humantime::format_duration(std::time::Duration::from_millis(budget))
            ))
            .hinted("land what has a quorum with `git mas land`, or stop the run with `git mas run abort`"));
        }
    }
    Ok(())
}

/// Runs `propose`.
pub fn run(ctx: &mut Context, args: ProposeArgs) -> Result<ExitCode, CliError> {
    let caller = ctx.caller()?;
    let meta = resolve(ctx, args.run.as_deref())?;
    meta.ensure_open()?;
    let def = &meta.def;
    if !def.has(&caller.name) {
        return Err(CliError::user(format!(
            "you ({}) are not on run {}'s roster ({})",
            caller.name,
            def.id,
            def.roster.join(", ")
        )));
    }
    ensure_budget(def)?;
    let store = ctx.store()?;
    let roster = store.roster()?;
    let workdir = store.workdir()?.to_path_buf();
    let tree = proposal::worktree_tree(&workdir)?;
    let loaded = events::load(store, &roster, &def.id)?;
    let allow_self = events::self_endorse_allowed(store);
    let runtime =
        events::replay(def, allow_self, &loaded).map_err(|e| CliError::internal(format!("run {}: {e}", def.id)))?;
    let engine = runtime.engine();
    let round = engine.round_of_next(&caller.name, &tree.to_string());
    if let Some(max) = def.max_rounds
        && round > max
    {
        return Err(CliError::user(format!(
            "this would be your round {round} in run {}, which allows {max}: your proposal stays as it is",
            def.id
        ))
        .hinted("re-propose your current content, land what has a quorum, or abort the run"));
    }
    let before = engine.tally();
    let previous = before.proposal(&caller.name).cloned();
    let message = match args.message.as_deref().map(str::trim) {
        Some("") => return Err(CliError::usage("the message is empty")),
        Some(m) => m.to_string(),
        None => format!("Proposal by {} for run {}\n\n{}", caller.name, def.id, def.goal),
    };
    let len = proposal::tree_size(&workdir, tree)?;
    let base = def.base_id()?;
    let commit = proposal::write_commit(store, tree, base, &caller.name, &message)?;
    let record = EventRecord {
        event: events::event(
            &def.id,
            &caller.name,
            round.saturating_sub(1),
            SemanticPayload::ExternalBytes { digest: tree.to_string(), len },
        ),
        at_ms: now_ms(),
        commit: commit.to_string(),
        proposer: None,
        note: Some(message),
    };
    let refname = proposal_ref(&def.id, &caller.name);
    let id = def.id.clone();
    // Step 1: the event (see `pool::proposal` for why the ref follows it).
    events::append(store, &caller.key, PROPOSAL_KIND, &record, &[], || {
        run::load_meta(store, &roster, &id)?.ensure_open()?;
        Ok(Vec::new())
    })?;
    // Step 2: the proposal ref, to the proposal the tally counts.
    let loaded = events::load(store, &roster, &def.id)?;
    let runtime =
        events::replay(def, allow_self, &loaded).map_err(|e| CliError::internal(format!("run {}: {e}", def.id)))?;
    proposal::settle(store, def, &loaded, &runtime, Some(&caller.name))?;
    if store.tip(&refname)? != Some(commit) {
        ctx.warn(&format!(
            "{refname} does not hold the proposal just recorded ({}): a later proposal of yours counts",
            short(&commit.to_string())
        ));
    }
    let tree_text = tree.to_string();
    let (kept, voided) = match &previous {
        Some(p) if p.tree == tree_text => (p.endorsers.clone(), Vec::new()),
        Some(p) => (Vec::new(), p.endorsers.clone()),
        None => (Vec::new(), Vec::new()),
    };
    let out = Proposed {
        run: def.id.clone(),
        agent: caller.name.clone(),
        commit: commit.to_string(),
        tree: tree_text.clone(),
        round,
        previous_tree: previous.as_ref().map(|p| p.tree.clone()),
        endorsements_kept: kept,
        endorsements_voided: voided,
    };
    if args.json {
        print_json(&out)?;
        return Ok(ExitCode::SUCCESS);
    }
    print_text(&format!("{}\n", out.commit))?;
    let mut status =
        format!("proposed {} (tree {}) for run {}, round {}", short(&out.commit), short(&out.tree), out.run, out.round);
    match &previous {
        Some(p) if p.tree == tree_text => status.push_str(&format!(
            "\nidentical content to your previous proposal: its endorsements still count ({})",
            if out.endorsements_kept.is_empty() { "none yet".into() } else { out.endorsements_kept.join(", ") }
        )),
        Some(_) if !out.endorsements_voided.is_empty() => status.push_str(&format!(
            "\nchanged content: the endorsements of your previous proposal ({}) no longer count",
            out.endorsements_voided.join(", ")
        )),
        _ => {}
    }
    status.push_str(&format!("\nnext: others endorse it with `git mas endorse {}`", caller.name));
    ctx.status(&status);
    Ok(ExitCode::SUCCESS)
}

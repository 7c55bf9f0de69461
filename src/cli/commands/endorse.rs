//! `git mas endorse <agent>`: run the team's check against another agent's proposal and record the
//! result as an endorsement bound to the proposal's tree.

use crate::cli::context::{Caller, Context};
use crate::cli::error::CliError;
use crate::cli::exit;
use crate::cli::json::endorse::EndorsedOut;
use crate::cli::output::JsonFlag;
use crate::cli::render::short;
use crate::cli::runs::resolve;
use git_mas::engines::DevelopmentEngine;
use git_mas::engines::development::Judgement;
use git_mas::identity::validate_name;
use git_mas::pool::check::CheckRun;
use git_mas::pool::{check, proposal};
use git_mas::run::events::{self, ENDORSEMENT_KIND, EventRecord};
use git_mas::run::rules::{self, EndorseAsk, EndorseMode, Refusal};
use git_mas::run::{self, RunDef, now_ms, proposal_ref};
use git_mas::runtime::{MasRuntime, SemanticPayload};
use std::fmt::Write as _;
use std::process::ExitCode;

/// Endorse AGENT's proposal: run the check in a scratch checkout of it and record the result.
///
/// The check is --check, else the run's check, else `git config mas.check`; it runs with `sh -c`
/// at the root of a fresh checkout of the proposal's tree (outside every repository), with
/// GIT_MAS_RUN, GIT_MAS_PROPOSER and GIT_MAS_TREE set. The endorsement records the command, its
/// exit status, duration, a digest of its output and the proposal's tree id: it counts for that
/// content only, so a re-proposal of identical content keeps it and changed content voids it. A
/// failing check records a failed endorsement (a test failure) and exits 9. --reject records a
/// review disagreement instead (no check runs); --no-check endorses by review alone (no quality
/// signal). One verdict per endorser and content: the latest counts. Endorsing your own proposal
/// is refused unless `git config mas.allowSelfEndorse true`.
///
/// With --json: {run, endorser, proposer, tree, verdict, command, exit_status, duration_ms,
/// output_digest, reason, valid_endorsements, quorum, at_quorum}.
#[derive(Debug, clap::Args)]
pub struct EndorseArgs {
    /// Whose proposal.
    #[arg(id = "proposer", value_name = "AGENT")]
    pub agent: String,
    /// The run (default: `mas.run`, else the only open run).
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    /// The check command to run instead of the run's.
    #[arg(long, value_name = "CMD", conflicts_with_all = ["reject", "no_check"])]
    pub check: Option<String>,
    /// Reject the proposal (a review disagreement); needs --reason.
    #[arg(long, requires = "reason", conflicts_with = "no_check")]
    pub reject: bool,
    /// Why (required with --reject; a note with --no-check).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Endorse by review alone, without running a check.
    #[arg(long)]
    pub no_check: bool,
    /// Kill the check after this long and record it as failed.
    #[arg(long, value_name = "DURATION", default_value = "1h")]
    pub timeout: humantime::Duration,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// The proposal an endorsement judges.
struct Target {
    tree: String,
    tree_id: gix::ObjectId,
    commit: String,
}

/// What the endorsement records: its payload, the files beside it, its note, and the check run.
struct Judged {
    payload: SemanticPayload,
    extra: Vec<(String, gix::ObjectId)>,
    note: Option<String>,
    check: Option<CheckRun>,
}

/// Runs `endorse`.
pub fn run(ctx: &mut Context, args: EndorseArgs) -> Result<ExitCode, CliError> {
    validate_name(&args.agent)?;
    let caller = ctx.caller()?;
    let meta = resolve(ctx, args.run.as_deref())?;
    let store = ctx.store()?;
    let allow_self = events::self_endorse_allowed(store);
    rules::may_endorse(&meta, &caller.name, &args.agent, allow_self, now_ms())?;
    let def = &meta.def;
    let roster = store.roster()?;
    let loaded = events::load(store, &roster, &def.id)?;
    let mut runtime =
        events::replay(def, allow_self, &loaded).map_err(|e| CliError::internal(format!("run {}: {e}", def.id)))?;
    let target = target(ctx, def, &args.agent, &loaded, &runtime)?;
    let ask = EndorseAsk {
        reject: args.reject,
        no_check: args.no_check,
        reason: args.reason.as_deref(),
        check: args.check.as_deref(),
    };
    let mode = rules::endorse_mode(ask, def, store.config_string("mas.check").as_deref())?;
    let judged = judge(ctx, def, &caller, &args, &target, mode)?;
    let epoch = rules::endorsement_epoch(runtime.engine().proposals().get(&args.agent));
    let record = EventRecord {
        event: events::event(&def.id, &caller.name, epoch, judged.payload),
        at_ms: now_ms(),
        commit: target.commit.clone(),
        proposer: Some(args.agent.clone()),
        note: judged.note,
    };
    let id = def.id.clone();
    events::append(store, &caller.key, ENDORSEMENT_KIND, &record, &judged.extra, || {
        run::load_meta(store, &roster, &id)?.ensure_open()?;
        Ok(Vec::new())
    })?;
    if let git_mas::runtime::EventOutcome::Rejected(reason) = &runtime.apply(record.event.clone()) {
        ctx.warn(&format!("the tally does not count this endorsement: {reason}"));
    }
    let out = endorsed(def, &caller.name, &args.agent, &target.tree, &record.event.payload, &runtime)?;
    let check = judged.check.as_ref();
    ctx.ui().emit(args.output, &out, |o| format!("{} {} {}\n", o.verdict, o.proposer, short(&o.tree)))?;
    if !args.output.json {
        ctx.status(&status(&out, check));
    }
    Ok(if out.verdict == "failed" { ExitCode::from(exit::CHECK_FAILED) } else { ExitCode::SUCCESS })
}

/// The proposal of `proposer` the tally counts, its ref settled and checked against its event.
fn target(
    ctx: &Context,
    def: &RunDef,
    proposer: &str,
    loaded: &events::RunEvents,
    runtime: &MasRuntime<DevelopmentEngine>,
) -> Result<Target, CliError> {
    let store = ctx.store()?;
    let Some(stamped) = events::accepted_proposal(runtime, loaded, proposer) else {
        return Err(Refusal::NoProposal { proposer: proposer.into(), run: def.id.clone() }.into());
    };
    let tree = rules::proposed_tree(&stamped.record.event.payload)
        .ok_or_else(|| CliError::internal("the accepted proposal is not a tree"))?
        .to_string();
    // A proposal whose ref a crash left behind its event is completed first.
    proposal::settle(store, def, loaded, runtime, Some(proposer))?;
    // The artifact in the pool must be what the event says it is.
    let found = match store.tip(&proposal_ref(&def.id, proposer))? {
        Some(tip) => Some(proposal::tree_of(store, tip)?.to_string()),
        None => None,
    };
    rules::ensure_artifact(proposer, &tree, found.as_deref())?;
    let tree_id = gix::ObjectId::from_hex(tree.as_bytes())
        .map_err(|_| CliError::internal(format!("{tree:?} is not a tree id")))?;
    Ok(Target { tree, tree_id, commit: stamped.record.commit.clone() })
}

/// Judges the proposal as `mode` says: a review as it is, or the check run in a scratch checkout.
fn judge(
    ctx: &Context,
    def: &RunDef,
    caller: &Caller,
    args: &EndorseArgs,
    target: &Target,
    mode: EndorseMode,
) -> Result<Judged, CliError> {
    let command = match mode {
        EndorseMode::Review { accept, reason } => {
            let payload = SemanticPayload::Review { subject: target.tree.clone(), accept, reason };
            return Ok(Judged { payload, extra: Vec::new(), note: None, check: None });
        }
        EndorseMode::Check { command } => command,
    };
    let store = ctx.store()?;
    ctx.status(&format!("checking {}'s proposal (tree {}) with `{command}`…", args.agent, short(&target.tree)));
    let env = [
        ("GIT_MAS_RUN", def.id.clone()),
        ("GIT_MAS_PROPOSER", args.agent.clone()),
        ("GIT_MAS_ENDORSER", caller.name.clone()),
    ];
    let result = check::check_tree(store.repo(), target.tree_id, &command, &env, Some(args.timeout.into()))?;
    let blob = store
        .repo()
        .write_blob(&result.output)
        .map_err(|e| CliError::internal(format!("storing the check's output: {e}")))?;
    let note = (!result.summary.passed()).then(|| result.tail(20));
    let payload = SemanticPayload::ToolResult {
        command: result.summary.command.clone(),
        exit_status: result.summary.exit_status,
        duration_ms: result.summary.duration_ms,
        output_digest: result.summary.output_digest.clone(),
        subject: target.tree.clone(),
    };
    Ok(Judged { payload, extra: vec![("output.txt".to_string(), blob.detach())], note, check: Some(result) })
}

/// The endorsement as recorded, and where the proposal stands after it.
fn endorsed(
    def: &RunDef,
    endorser: &str,
    proposer: &str,
    tree: &str,
    payload: &SemanticPayload,
    runtime: &MasRuntime<DevelopmentEngine>,
) -> Result<EndorsedOut, CliError> {
    let judgement =
        rules::verdict(payload).ok_or_else(|| CliError::internal("the endorsement recorded is not a verdict"))?;
    let tally = runtime.engine().tally();
    let now = tally.proposal(proposer);
    let (command, exit_status, duration_ms, output_digest, reason) = match &judgement {
        Judgement::Passed { command, duration_ms, output_digest } => {
            (Some(command.clone()), Some(0), Some(*duration_ms), Some(output_digest.clone()), None)
        }
        Judgement::Failed { command, exit_status, duration_ms, output_digest } => {
            (Some(command.clone()), *exit_status, Some(*duration_ms), Some(output_digest.clone()), None)
        }
        Judgement::Accepted { reason } | Judgement::Rejected { reason } => {
            (None, None, None, None, Some(reason.clone()))
        }
    };
    Ok(EndorsedOut {
        run: def.id.clone(),
        endorser: endorser.into(),
        proposer: proposer.into(),
        tree: tree.into(),
        verdict: judgement.name().into(),
        command,
        exit_status,
        duration_ms,
        output_digest,
        reason,
        valid_endorsements: now.map(|p| p.endorsers.clone()).unwrap_or_default(),
        quorum: tally.quorum,
        at_quorum: now.is_some_and(|p| p.at_quorum),
    })
}

/// The status lines after an endorsement.
fn status(out: &EndorsedOut, check: Option<&CheckRun>) -> String {
    let what = match (out.verdict.as_str(), check) {
        ("passed", Some(c)) => format!("`{}` passed in {} ms", c.summary.command, c.summary.duration_ms),
        ("failed", Some(c)) => match (c.timed_out, c.summary.exit_status) {
            (true, _) => format!("`{}` timed out after {} ms", c.summary.command, c.summary.duration_ms),
            (false, Some(code)) => format!("`{}` failed with exit status {code}", c.summary.command),
            (false, None) => format!("`{}` was killed by a signal", c.summary.command),
        },
        ("rejected", _) => "rejected".to_string(),
        _ => "accepted by review (no check run)".to_string(),
    };
    let mut status = format!(
        "{what}; {}'s proposal has {}/{} valid endorsements{}",
        out.proposer,
        out.valid_endorsements.len(),
        out.quorum,
        if out.at_quorum { " — quorum reached" } else { "" }
    );
    if let (true, Some(c)) = (out.verdict == "failed", check) {
        let _ = write!(
            status,
            "\nrecorded as a failed endorsement (test_failure); last lines of its output:\n{}",
            c.tail(20)
        );
    }
    status
}

//! `git mas endorse <agent>`: run the team's check against another agent's proposal and record the
//! result as an endorsement bound to the proposal's tree.

use crate::cli::commands::propose::ensure_budget;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::exit;
use crate::cli::output::{print_json, print_text};
use crate::cli::render::short;
use crate::cli::runs::resolve;
use git_mas::identity::validate_name;
use git_mas::pool::{check, proposal};
use git_mas::run::events::{self, ENDORSEMENT_KIND, EventRecord};
use git_mas::run::{self, now_ms, proposal_ref};
use git_mas::runtime::SemanticPayload;
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
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct Endorsed {
    run: String,
    endorser: String,
    proposer: String,
    tree: String,
    verdict: &'static str,
    command: Option<String>,
    exit_status: Option<i32>,
    duration_ms: Option<u64>,
    output_digest: Option<String>,
    reason: Option<String>,
    valid_endorsements: Vec<String>,
    quorum: u32,
    at_quorum: bool,
}

/// Runs `endorse`.
pub fn run(ctx: &mut Context, args: EndorseArgs) -> Result<ExitCode, CliError> {
    validate_name(&args.agent)?;
    let caller = ctx.caller()?;
    let meta = resolve(ctx, args.run.as_deref())?;
    meta.ensure_open()?;
    let def = &meta.def;
    for who in [&caller.name, &args.agent] {
        if !def.has(who) {
            return Err(CliError::user(format!(
                "'{who}' is not on run {}'s roster ({})",
                def.id,
                def.roster.join(", ")
            )));
        }
    }
    let store = ctx.store()?;
    let allow_self = events::self_endorse_allowed(store);
    if caller.name == args.agent && !allow_self {
        return Err(CliError::user("you cannot endorse your own proposal: self-endorsement is off")
            .hinted("ask another agent to endorse it, or allow it for this repository with `git config mas.allowSelfEndorse true`"));
    }
    ensure_budget(def)?;
    let roster = store.roster()?;
    let loaded = events::load(store, &roster, &def.id)?;
    let mut runtime =
        events::replay(def, allow_self, &loaded).map_err(|e| CliError::internal(format!("run {}: {e}", def.id)))?;
    let Some(stamped) = events::accepted_proposal(&runtime, &loaded, &args.agent) else {
        return Err(CliError::user(format!("{} has no proposal in run {}", args.agent, def.id))
            .hinted(format!("{} proposes with `git mas propose` in its worktree", args.agent)));
    };
    let tree = match &stamped.record.event.payload {
        SemanticPayload::ExternalBytes { digest, .. } => digest.clone(),
        _ => return Err(CliError::internal("the accepted proposal is not a tree")),
    };
    let commit = stamped.record.commit.clone();
    // A proposal whose ref a crash left behind its event is completed first.
    proposal::settle(store, def, &loaded, &runtime, Some(&args.agent))?;
    // The artifact in the pool must be what the event says it is.
    if let Some(tip) = store.tip(&proposal_ref(&def.id, &args.agent))?
        && proposal::tree_of(store, tip)? != tree.as_str()
    {
        return Err(CliError::user(format!(
            "{}'s proposal ref does not hold the content its latest proposal event names (tree {}); it was changed outside `git mas propose`",
            args.agent,
            short(&tree)
        ))
        .hinted(format!("{} re-proposes with `git mas propose`", args.agent)));
    }
    let tree_id = gix::ObjectId::from_hex(tree.as_bytes())
        .map_err(|_| CliError::internal(format!("{tree:?} is not a tree id")))?;

    let mut extra = Vec::new();
    let mut note = None;
    let mut check_run = None;
    let payload = if args.reject {
        let reason = args.reason.clone().unwrap_or_default();
        if reason.trim().is_empty() {
            return Err(CliError::usage("--reason is empty: say why you reject it"));
        }
        SemanticPayload::Review { subject: tree.clone(), accept: false, reason }
    } else if args.no_check {
        let reason = args.reason.clone().unwrap_or_else(|| "reviewed, no check run".into());
        SemanticPayload::Review { subject: tree.clone(), accept: true, reason }
    } else {
        if args.check.as_deref().is_some_and(|c| c.trim().is_empty()) {
            return Err(CliError::usage(
                "--check is empty: give the command to run, or omit --check for the run's own",
            )
            .hinted("endorse by review alone with --no-check"));
        }
        let Some(command) = args
            .check
            .clone()
            .or_else(|| def.check.clone())
            .or_else(|| store.config_string("mas.check"))
            .filter(|c| !c.trim().is_empty())
        else {
            return Err(CliError::user(format!("run {} has no check command to endorse with", def.id))
                .hinted("pass --check CMD, set `git config mas.check CMD`, or endorse by review with --no-check"));
        };
        ctx.status(&format!("checking {}'s proposal (tree {}) with `{command}`…", args.agent, short(&tree)));
        let env = [
            ("GIT_MAS_RUN", def.id.clone()),
            ("GIT_MAS_PROPOSER", args.agent.clone()),
            ("GIT_MAS_ENDORSER", caller.name.clone()),
        ];
        let result = check::check_tree(store.repo(), tree_id, &command, &env, Some(args.timeout.into()))?;
        let blob = store
            .repo()
            .write_blob(&result.output)
            .map_err(|e| CliError::internal(format!("storing the check's output: {e}")))?;
        extra.push(("output.txt".to_string(), blob.detach()));
        if !result.summary.passed() {
            note = Some(result.tail(20));
        }
        let payload = SemanticPayload::ToolResult {
            command: result.summary.command.clone(),
            exit_status: result.summary.exit_status,
            duration_ms: result.summary.duration_ms,
            output_digest: result.summary.output_digest.clone(),
            subject: tree.clone(),
        };
        check_run = Some(result);
        payload
    };
    let epoch = runtime.engine().proposals().get(&args.agent).map_or(0, |p| p.rounds.saturating_sub(1));
    let record = EventRecord {
        event: events::event(&def.id, &caller.name, epoch, payload),
        at_ms: now_ms(),
        commit: commit.clone(),
        proposer: Some(args.agent.clone()),
        note,
    };
    let id = def.id.clone();
    events::append(store, &caller.key, ENDORSEMENT_KIND, &record, &extra, || {
        run::load_meta(store, &roster, &id)?.ensure_open()?;
        Ok(Vec::new())
    })?;
    let outcome = runtime.apply(record.event.clone());
    if let git_mas::runtime::EventOutcome::Rejected(reason) = &outcome {
        ctx.warn(&format!("the tally does not count this endorsement: {reason}"));
    }
    let tally = runtime.engine().tally();
    let now = tally.proposal(&args.agent);
    let (verdict, reason) = match &record.event.payload {
        SemanticPayload::Review { accept: false, reason, .. } => ("rejected", Some(reason.clone())),
        SemanticPayload::Review { reason, .. } => ("accepted", Some(reason.clone())),
        _ if check_run.as_ref().is_some_and(|c| c.summary.passed()) => ("passed", None),
        _ => ("failed", None),
    };
    let out = Endorsed {
        run: def.id.clone(),
        endorser: caller.name.clone(),
        proposer: args.agent.clone(),
        tree: tree.clone(),
        verdict,
        command: check_run.as_ref().map(|c| c.summary.command.clone()),
        exit_status: check_run.as_ref().and_then(|c| c.summary.exit_status),
        duration_ms: check_run.as_ref().map(|c| c.summary.duration_ms),
        output_digest: check_run.as_ref().map(|c| c.summary.output_digest.clone()),
        reason,
        valid_endorsements: now.map(|p| p.endorsers.clone()).unwrap_or_default(),
        quorum: tally.quorum,
        at_quorum: now.is_some_and(|p| p.at_quorum),
    };
    let failed = verdict == "failed";
    if args.json {
        print_json(&out)?;
    } else {
        let what = match (verdict, &check_run) {
            ("passed", Some(c)) => format!("`{}` passed in {} ms", c.summary.command, c.summary.duration_ms),
            ("failed", Some(c)) => match (c.timed_out, c.summary.exit_status) {
                (true, _) => format!("`{}` timed out after {} ms", c.summary.command, c.summary.duration_ms),
                (false, Some(code)) => format!("`{}` failed with exit status {code}", c.summary.command),
                (false, None) => format!("`{}` was killed by a signal", c.summary.command),
            },
            ("rejected", _) => "rejected".to_string(),
            _ => "accepted by review (no check run)".to_string(),
        };
        print_text(&format!("{verdict} {} {}\n", out.proposer, short(&out.tree)))?;
        let mut status = format!(
            "{what}; {}'s proposal has {}/{} valid endorsements{}",
            out.proposer,
            out.valid_endorsements.len(),
            out.quorum,
            if out.at_quorum { " — quorum reached" } else { "" }
        );
        if let (true, Some(c)) = (failed, &check_run) {
            status.push_str(&format!(
                "\nrecorded as a failed endorsement (test_failure); last lines of its output:\n{}",
                c.tail(20)
            ));
        }
        ctx.status(&status);
    }
    Ok(if failed { ExitCode::from(exit::CHECK_FAILED) } else { ExitCode::SUCCESS })
}

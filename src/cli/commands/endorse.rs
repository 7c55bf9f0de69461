//! `git mas endorse <agent>`: run the team's check against another agent's proposal and record the
//! result as an endorsement bound to the proposal's tree.

use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::json::endorse::{EndorseVerdict, EndorsedOut};
use crate::cli::output::JsonFlag;
use crate::cli::render::short;
use crate::cli::runs::resolve;
use crate::cli::{Done, Outcome};
use git_mas::devrun::RunMeta;
use git_mas::devrun::events;
use git_mas::devrun::now_ms;
use git_mas::devrun::rules::{EndorseAsk, EndorseMode};
use git_mas::engines::development::Judgement;
use git_mas::identity::validate_name;
use git_mas::ops::endorse::{self, Ask, Endorsed, Prepared, Verdict};
use git_mas::pool::check::{self, CheckRun};
use git_mas::runtime::exit::exit_words;
use std::fmt::Write as _;

/// Endorse AGENT's proposal: run the check in a scratch checkout of it and record the result.
///
/// The check is --check, else the run's check, else `git config mas.check`; it runs with `sh -c`
/// at the root of a fresh checkout of the proposal's tree (outside every repository). The
/// endorsement records the command, its exit status, duration, a digest of its output and the
/// proposal's tree id: it counts for that content only, so a re-proposal of identical content
/// keeps it and changed content voids it. --reject records a review disagreement instead (no
/// check runs); --no-check endorses by review alone (no quality signal). One verdict per endorser
/// and content: the latest counts. Endorsing your own proposal is refused unless `git config
/// mas.allowSelfEndorse true`.
///
/// A check that exits 0 passes. A check whose command is not there (exit 127) or not executable
/// (126) fails, and says so with the shell's own words. A check still running after --timeout
/// (default: the run's check timeout) is killed and fails; its recorded output ends with
/// "git-mas: the check timed out after <duration> and was killed". When it fails and its output is a test runner's report — cargo
/// test (libtest), python -m unittest, pytest, or TAP — or it wrote a JUnit XML file into its
/// checkout while it ran (pytest --junitxml=report.xml, jest-junit, surefire…; the file is read
/// in preference to the output), the same check runs on the run's base
/// too, and the proposal is judged by what it changes: the tests it makes pass (fixed), the tests
/// that pass on the base and fail on it (broken), the suites in which fewer tests ran (lost). A
/// proposal that fixes at least one test and breaks and loses none is `improved`: it endorses,
/// though the suite still fails for other work (another slice's bug, in an aggregate run; the
/// merged whole must pass the whole check before it lands). Any other failure is `failed`: a
/// failed endorsement (a test failure), exit 9, saying what broke. With no report in the output,
/// the exit status alone decides. A plain `python3 -m unittest` or `cargo test` is a check.
///
/// What the check sees in its environment:
///   GIT_MAS_RUN        the run
///   GIT_MAS_PROPOSER   whose proposal
///   GIT_MAS_ENDORSER   who endorses
///   GIT_MAS_TREE       the tree checked out
///   GIT_MAS_SLICE      the proposer's slice's files, comma-separated (aggregate runs)
///   GIT_MAS_CHANGED    the paths the proposal changes from the base, one per line (aggregate)
///   GIT_MAS_BASELINE   1 when the check runs on the base, to compare (see above)
/// The base's run gets GIT_MAS_BASELINE, GIT_MAS_TREE (the base's tree), GIT_MAS_SLICE and
/// GIT_MAS_CHANGED only: it runs once per base tree, command and environment and is kept under
/// <git common dir>/mas/check-cache, so the next endorsement on that base (and the run's preflight,
/// which ran it first) reuses it.
/// GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE are removed, and GIT_CEILING_DIRECTORIES keeps git
/// from finding a repository above the checkout.
///
/// With --json: {run, endorser, proposer, tree, verdict, command, exit_status, duration_ms,
/// output_digest, reason, differential, valid_endorsements, quorum, at_quorum}.
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
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
    /// Kill the check after this long and record it as failed, saying so (default: the run's
    /// check timeout, `--check-timeout` of `git mas coordinate` or `git mas run start`, else 5m).
    #[arg(long, visible_alias = "check-timeout", value_name = "DURATION",
          value_parser = crate::cli::commands::coordinate::positive_duration)]
    pub timeout: Option<humantime::Duration>,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// An endorsement as `endorse` reports it.
#[derive(Debug)]
pub struct Endorsement {
    /// What `--json` prints.
    pub out: EndorsedOut,
    /// The verdict recorded.
    pub judgement: Judgement,
    /// The check that ran, if one did.
    pub check: Option<CheckRun>,
}

/// Runs `endorse`.
pub fn run(ctx: &mut Context, args: EndorseArgs) -> Result<Outcome, CliError> {
    let done = endorse(ctx, &args)?;
    let e = &done.value;
    ctx.ui().emit(args.output, &e.out, |o| format!("{} {} {}\n", o.verdict, o.proposer, short(&o.tree)))?;
    if !args.output.json {
        ctx.status(&status(&e.out, &e.judgement, e.check.as_ref()));
    }
    Ok(done.outcome)
}

/// Records the caller's verdict on `args.agent`'s proposal, running the check unless it reviews;
/// a failed check ends as check-failed.
pub fn endorse(ctx: &Context, args: &EndorseArgs) -> Result<Done<Endorsement>, CliError> {
    if args.reject && args.reason.is_none() {
        return Err(CliError::usage("--reject needs --reason: say why you reject it"));
    }
    if args.reject && args.no_check {
        return Err(CliError::usage("--reject and --no-check cannot be used together"));
    }
    validate_name(&args.agent)?;
    let caller = ctx.caller()?;
    let meta = resolve(ctx, args.run.as_deref())?;
    let store = ctx.store()?;
    let roster = store.roster()?;
    let ask = Ask {
        endorser: &caller.name,
        proposer: &args.agent,
        how: EndorseAsk {
            reject: args.reject,
            no_check: args.no_check,
            reason: args.reason.as_deref(),
            check: args.check.as_deref(),
        },
        allow_self: events::self_endorse_allowed(store),
        now_ms: now_ms(),
    };
    let prepared = endorse::prepare(store, &roster, &meta, ask)?;
    let (verdict, check) = match &prepared.mode {
        EndorseMode::Review { accept, reason } => (Verdict::review(&prepared.tree, *accept, reason.clone()), None),
        EndorseMode::Check { command } => {
            let run = run_check(ctx, &meta, &caller.name, args, &prepared, command)?;
            (Verdict::check(store, &prepared.tree, &run)?, Some(run))
        }
    };
    let tree = prepared.tree.clone();
    let e = endorse::record(store, &roster, &meta, &caller.key, ask, prepared, verdict)?;
    if let Some(reason) = &e.not_counted {
        ctx.warn(&format!("the tally does not count this endorsement: {reason}"));
    }
    let judgement = e.judgement.clone();
    let out = endorsed(&meta.def.id, &caller.name, &args.agent, tree, e);
    let outcome = if judgement.is_test_failure() { Outcome::CheckFailed } else { Outcome::Ok };
    Ok(Done::ended(Endorsement { out, judgement, check }, outcome))
}

/// Runs the check in a scratch checkout of the proposal's tree.
fn run_check(
    ctx: &Context,
    run: &RunMeta,
    endorser: &str,
    args: &EndorseArgs,
    prepared: &Prepared,
    command: &str,
) -> Result<CheckRun, CliError> {
    ctx.status(&format!("checking {}'s proposal (tree {}) with `{command}`…", args.agent, short(&prepared.tree)));
    let mut env = vec![
        ("GIT_MAS_RUN", run.def.id.clone()),
        ("GIT_MAS_PROPOSER", args.agent.clone()),
        ("GIT_MAS_ENDORSER", endorser.to_string()),
    ];
    env.extend(check::slice_env(ctx.store()?, &run.def, &args.agent, prepared.tree_id)?);
    let repo = ctx.store()?.repo();
    let timeout = Some(args.timeout.map_or_else(|| run.def.check_timeout(), Into::into));
    let mut result = check::check_tree(repo, prepared.tree_id, command, &env, timeout)?;
    if let Some(report) = result.report.as_ref().filter(|_| !result.summary.passed() && !result.timed_out) {
        ctx.status(&format!(
            "the check failed; its {} report names {} failing test(s): running it on the run's base to see what the proposal changed…",
            report.format,
            report.failed.len()
        ));
        let base = run.def.base_id().map_err(|e| CliError::new(Kind::Internal, e))?;
        check::differential(repo, base, &mut result, &env, timeout)?;
    }
    Ok(result)
}

/// The endorsement as recorded, and where the proposal stands after it.
fn endorsed(run: &str, endorser: &str, proposer: &str, tree: String, e: Endorsed) -> EndorsedOut {
    let verdict = match e.judgement {
        Judgement::Passed { .. } => EndorseVerdict::Passed,
        Judgement::Failed { .. } => EndorseVerdict::Failed,
        Judgement::Improved { .. } => EndorseVerdict::Improved,
        Judgement::Sound { .. } => EndorseVerdict::Sound,
        Judgement::Accepted { .. } => EndorseVerdict::Accepted,
        Judgement::Rejected { .. } => EndorseVerdict::Rejected,
    };
    let differential = match &e.judgement {
        Judgement::Improved { delta, .. } | Judgement::Sound { delta, .. } => Some(delta.clone()),
        Judgement::Failed { delta, .. } => delta.clone(),
        _ => None,
    };
    let (command, exit_status, duration_ms, output_digest, reason) = match e.judgement {
        Judgement::Passed { command, duration_ms, output_digest } => {
            (Some(command), Some(0), Some(duration_ms), Some(output_digest), None)
        }
        Judgement::Failed { command, exit_status, duration_ms, output_digest, .. }
        | Judgement::Improved { command, exit_status, duration_ms, output_digest, .. }
        | Judgement::Sound { command, exit_status, duration_ms, output_digest, .. } => {
            (Some(command), exit_status, Some(duration_ms), Some(output_digest), None)
        }
        Judgement::Accepted { reason } | Judgement::Rejected { reason } => (None, None, None, None, Some(reason)),
    };
    EndorsedOut {
        run: run.into(),
        endorser: endorser.into(),
        proposer: proposer.into(),
        tree,
        verdict,
        command,
        exit_status,
        duration_ms,
        output_digest,
        reason,
        differential,
        valid_endorsements: e.valid_endorsements,
        quorum: e.quorum,
        at_quorum: e.at_quorum,
    }
}

/// The status lines after an endorsement.
fn status(out: &EndorsedOut, judgement: &Judgement, check: Option<&CheckRun>) -> String {
    let what = match (judgement, check) {
        (Judgement::Passed { .. }, Some(c)) => {
            format!("`{}` passed in {} ms", c.summary.command, c.summary.duration_ms)
        }
        (Judgement::Failed { .. }, Some(c)) => match (c.timed_out, c.summary.exit_status, check::missing_command(c)) {
            (true, _, _) => {
                format!("`{}` timed out after {} ms and was killed", c.summary.command, c.summary.duration_ms)
            }
            (false, Some(code), Some((what, said))) => format!(
                "`{}` could not run: exit status {code}, {what} (the shell said: {said}); fix the check (`git config mas.check`, or --check)",
                c.summary.command
            ),
            (false, Some(code), None) if git_mas::runtime::exit::signal_of(code).is_none() => {
                format!("`{}` failed with exit status {code}", c.summary.command)
            }
            (false, code, _) => format!("`{}` was {}", c.summary.command, exit_words(code)),
        },
        (Judgement::Improved { delta, .. }, Some(c)) => format!(
            "`{}` failed ({}), but the proposal improves the base ({} report): it makes {} failing test(s) pass ({}) and breaks none; {} still fail, for other work",
            c.summary.command,
            exit_words(c.summary.exit_status),
            delta.format,
            delta.fixed.len(),
            delta.fixed.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
            delta.still_failing
        ),
        (Judgement::Sound { delta, .. }, Some(c)) => format!(
            "`{}` failed ({}), and the slice breaks nothing the base passed ({} report): {}{} still fail — the merged whole is checked before it lands",
            c.summary.command,
            exit_words(c.summary.exit_status),
            delta.format,
            if delta.fixed.is_empty() {
                String::from("it fixes no test alone; ")
            } else {
                format!("it makes {} failing test(s) pass; ", delta.fixed.len())
            },
            delta.still_failing
        ),
        (Judgement::Rejected { .. }, _) => "rejected".to_string(),
        _ => "accepted by review (no check run)".to_string(),
    };
    let mut status = format!(
        "{what}; {}'s proposal has {}/{} valid endorsements{}",
        out.proposer,
        out.valid_endorsements.len(),
        out.quorum,
        if out.at_quorum { " — quorum reached" } else { "" }
    );
    if let (true, Some(c)) = (judgement.is_test_failure(), check) {
        let _ = write!(
            status,
            "\nrecorded as a failed endorsement (test_failure); last lines of its output:\n{}",
            c.tail(20)
        );
    }
    status
}

//! The gate as the commands that run it need it (`gate`, `hook`, `check`): the mode read from
//! git config, the gate's inputs resolved from the command line or the index, a verdict rendered
//! for people with its outcome, and a replayed range. The decisions are the library's
//! ([`git_mas::attention::edit_gate`], [`git_mas::attention::team_gate`]); this renders them.

use super::Outcome;
use super::context::Context;
use super::error::CliError;
use git_mas::attention::caller::{self, Ask};
use git_mas::attention::edit_gate;
use git_mas::attention::focus_store::now_secs;
use git_mas::attention::gate::{Touched, Verdict};
use git_mas::attention::gate_io::{self, GateOutcome, Ungathered};
use git_mas::attention::git_hooks::Mode;
use git_mas::attention::own_ground;
use git_mas::attention::replay::{self, CheckReport, CheckStatus, NO_RECEIPT};
use git_mas::attention::team_gate;
use git_mas::hosts::ProcessEnv;
use git_mas::identity::ROSTER_PATH;
use git_mas::identity::trail::{RosterTrail, TRAIL_TRAILER};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Reads `mas.gate`; an unknown value enforces (fail closed), with a warning
/// ([`edit_gate::mode`]).
pub fn mode(ctx: &Context) -> Result<Mode, CliError> {
    let mut warnings = Vec::new();
    let mode = edit_gate::mode(ctx.store()?, &mut warnings);
    ctx.warn_all(&warnings);
    Ok(mode)
}

/// Runs the gate on the staged change (or `paths`) and returns the caller and the outcome, or why
/// the outcome could not be gathered (the verdict then fails closed: [`gate_io::verdict_of`]).
pub fn evaluate(ctx: &Context, paths: &[PathBuf]) -> Result<(String, Result<GateOutcome, Ungathered>), CliError> {
    let caller = match ctx.caller_name() {
        Ok((name, _)) => name,
        Err(_) => return Ok((String::new(), Err(Ungathered::no_identity("change")))),
    };
    let cwd = ctx.cwd()?;
    let store = ctx.store()?;
    let workdir = store.workdir()?.to_path_buf();
    let (paths, diff_args): (Vec<String>, Vec<&str>) = if paths.is_empty() {
        match gate_io::staged(store, &workdir) {
            Ok(p) => (p, vec!["diff", "--cached"]),
            Err(e) => return Ok((caller, Err(e))),
        }
    } else {
        (repo_relative(paths, &cwd, &workdir)?, vec![])
    };
    let outcome = gate_io::evaluate(
        store,
        &workdir,
        &caller,
        paths,
        &diff_args,
        now_secs(),
        &git_mas::devrun::ledger::Ledger::new(store),
    )
    .map_err(Ungathered::from);
    Ok((caller, outcome))
}

/// The commit gate in team mode: the committer ([`caller::committer`]: an identity pinned for the
/// session, else the session whose shell ran `git commit`) and team mode's verdict on the staged
/// change, or on `paths` (whole files) when given ([`team_gate::commit_verdict`]), with what it
/// touches.
pub fn team_commit_gate(ctx: &Context, paths: &[PathBuf]) -> Result<(Option<String>, Verdict, Vec<Touched>), CliError> {
    let store = ctx.store()?;
    let ask = Ask { pinned: ctx.pinned_agent(), session: None };
    let committer = caller::committer(store, &ask, &ProcessEnv)?;
    let named = repo_relative(paths, &ctx.cwd()?, store.workdir()?)?;
    let runs = git_mas::devrun::ledger::Ledger::new(store);
    let (verdict, touched) = team_gate::commit_verdict(store, committer.as_deref(), &named, &runs);
    Ok((committer, verdict, touched))
}

/// `paths` (relative to `cwd` or absolute) relative to the top of the working tree.
pub fn repo_relative(paths: &[PathBuf], cwd: &Path, workdir: &Path) -> Result<Vec<String>, CliError> {
    let root = std::fs::canonicalize(workdir).unwrap_or(workdir.to_path_buf());
    let mut rel = Vec::new();
    for p in paths {
        let abs = own_ground::resolve(&if p.is_absolute() { p.clone() } else { cwd.join(p) });
        match abs.strip_prefix(&root).or_else(|_| abs.strip_prefix(workdir)) {
            Ok(r) => rel.push(r.to_string_lossy().replace('\\', "/")),
            Err(_) => return Err(CliError::user(format!("{} is outside the repository", p.display()))),
        }
    }
    Ok(rel)
}

/// The outcome a verdict gives.
pub fn outcome(verdict: &Verdict) -> Outcome {
    match verdict {
        Verdict::Allow { .. } => Outcome::Ok,
        Verdict::Block { .. } => Outcome::Blocked,
        Verdict::FailClosed { .. } => Outcome::FailClosed,
    }
}

/// Prints a verdict for people (stderr) and returns its outcome.
pub fn report(ctx: &Context, caller: &str, verdict: &Verdict) -> Outcome {
    ctx.ui().err_text(&verdict_text(ctx, caller, verdict));
    outcome(verdict)
}

/// A verdict for people, as the gate says it on stderr.
pub fn verdict_text(ctx: &Context, caller: &str, verdict: &Verdict) -> String {
    let mut o = String::new();
    match verdict {
        Verdict::Allow { frame, notes } => {
            let whom = if caller.is_empty() { String::new() } else { format!(" for {caller}") };
            let _ = writeln!(o, "git mas gate: allowed{whom} on frame {}", &frame[..frame.len().min(12)]);
            for n in notes {
                let _ = writeln!(o, "  note: {n}");
            }
        }
        Verdict::Block { blocks } => {
            for b in blocks {
                let blocked = ctx.paint("git mas gate: blocked:", "1;31");
                let _ = writeln!(o, "{blocked} {} is held by {} ({})", b.target, b.holder, b.why);
                let _ = writeln!(o, "  {} {}", ctx.paint("remedy:", "1;36"), b.remedy);
            }
        }
        Verdict::FailClosed { reason, remedy } => {
            let _ = writeln!(o, "{} {reason}", ctx.paint("git mas gate: refused (failing closed):", "1;31"));
            let _ = writeln!(o, "  {} {remedy}", ctx.paint("remedy:", "1;36"));
        }
    }
    o
}

/// Replays the gate over `range` ([`replay::replay`]).
pub fn replay(ctx: &Context, range: &[String], require_receipts: bool) -> Result<CheckReport, CliError> {
    let store = ctx.store()?;
    Ok(replay::replay(store, range, require_receipts, &git_mas::devrun::ledger::Ledger::new(store))?)
}

/// Prints the listed commits for people: each on stdout, its verdict on stderr.
pub fn print_listed(ctx: &Context, report: &CheckReport) -> Result<(), CliError> {
    for c in report.listed() {
        ctx.ui().line(&format!("{} {:<10} {}", &c.commit[..12], c.status.as_str(), c.subject))?;
        if matches!(c.status, CheckStatus::Blocked | CheckStatus::Refused) {
            self::report(ctx, c.agent.as_deref().unwrap_or(NO_RECEIPT), &c.verdict);
        }
        if let Some(trail) = c.roster.as_ref().filter(|r| r.listed()) {
            roster_report(ctx, &c.commit, trail);
        }
    }
    Ok(())
}

/// Prints (stderr) why a commit's roster change has no valid trail, and how to sign it.
fn roster_report(ctx: &Context, commit: &str, trail: &RosterTrail) {
    let short = &commit[..commit.len().min(12)];
    let mut o = String::new();
    let head = ctx.paint("git mas check: roster-unsigned:", "1;31");
    let _ = writeln!(o, "{head} {short} changes {ROSTER_PATH} without a valid {TRAIL_TRAILER} trailer");
    for p in &trail.problems {
        let _ = writeln!(o, "  {p}");
    }
    let _ = writeln!(
        o,
        "  {} an agent on the roster before this commit signs it: `git mas --agent NAME agent sign-roster --commit \
         {short}` prints the trailer; add it to the commit's message (`git commit --amend --trailer \"<line>\"` for the \
         last commit, `git rebase -i` otherwise)",
        ctx.paint("remedy:", "1;36")
    );
    ctx.ui().err_text(&o);
}

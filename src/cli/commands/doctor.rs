//! `git mas doctor [--fix]`: what crashed commands left behind, and its removal.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::json::doctor::{DoctorOut, FailedRemoval};
use crate::cli::output::JsonFlag;
use git_mas::doctor::chains::{ChainRepair, DamagedChain, Repair};
use git_mas::doctor::{self, Completed, Debris, DebrisKind, DoctorError, Findings, HalfFinished, Repairs};
use git_mas::hosts::ProcessEnv;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Find (and with --fix remove) what killed git-mas commands left behind.
///
/// A git-mas command killed at the wrong moment (SIGKILL, a crash, a full disk) can leave:
///
///   - lock files: `<ref>.lock` under refs/mas/, `packed-refs.lock`, the integration branch's lock
///     (a landing moves it), `mas-verified.lock`. Until removed, every update of that ref fails. A
///     live writer holds a lock for milliseconds, so a lock older than 3 seconds is stale (the
///     age at which a ref update names the lock instead of waiting on it).
///   - temporary indexes (`mas-snapshot-*.index` in a worktree's git dir) from `propose`: stale when
///     the process id in the name is gone, or, without one, after 1 hour.
///   - scratch checkouts (`git-mas-check-*` in the system temporary directory or the git dir) from
///     `endorse` and `land`: stale when their process is gone, or, without one, after 24 hours.
///     Only this repository's are listed (their names carry a tag of its git dir); one without a
///     tag, from an older release, may belong to another clone on this machine.
///   - cache temporaries (`.tmp-*` under the git dir's mas-cache/), renamed into place in
///     milliseconds: stale after 1 minute.
///   - object temporaries (`objects/.tmp*`), renamed into objects/xx/ when complete: stale after
///     10 minutes (git's own gc does not know them).
///   - installer temporaries (`.NAME.git-mas-PID.tmp` beside a host's settings file, in this
///     repository's working trees or the user's home, or beside a symlinked file's target) from a
///     killed `hooks install` or `mcp install`: stale when their process is gone, or after 10
///     minutes when its id runs again. The settings file itself is never touched.
///   - half-finished operations: a landing interrupted between its intent and the integration
///     branch, or before its landed ref. --fix completes them (as `git mas land` and every command
///     that reads the run would), and brings proposal refs level with their events.
///   - damaged chains: a focus chain that lost an object (`git gc --prune=now` run beside a
///     writer). Meanwhile the gate refuses what that chain may hold, naming it. --fix cuts it back
///     to its last whole record with one new record signed by its owner's key when that key is on
///     this machine (its newest readable state, re-signed), or else ends it (deletes the ref: its
///     agent then holds nothing).
///
/// Everything found is listed with its path and age; files that may still be in use (a fresh
/// lock, a young temporary file) are shown but not counted as problems and never removed.
///
/// Examples:
///
///   git mas doctor              # list; exit 1 if anything is stale
///   git mas doctor --fix        # remove the stale files, complete interrupted landings
///   git mas doctor --json       # for scripts: {"locks": [...], "temp_files": [...], ...}
///
/// Exits 0 when nothing is wrong (or --fix fixed everything), 1 when problems remain.
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct DoctorArgs {
    /// Remove the stale locks and temporary files (each is re-checked just before removal), then
    /// complete interrupted landings and proposals.
    #[arg(long)]
    pub fix: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

fn doctor_error(e: DoctorError) -> CliError {
    match e {
        DoctorError::Store(s) => CliError::from(s),
        other => CliError::internal(other.to_string()),
    }
}

fn kind_label(kind: DebrisKind) -> &'static str {
    match kind {
        DebrisKind::Lock => "lock",
        DebrisKind::SnapshotIndex => "temp index",
        DebrisKind::CheckDir => "check dir",
        DebrisKind::CacheTemp => "cache tmp",
        DebrisKind::ObjectTemp => "object tmp",
        DebrisKind::InstallTemp => "install tmp",
        DebrisKind::WriteTemp => "write tmp",
        DebrisKind::IndexLock => "index lock",
    }
}

fn shown(path: &Path, common: &Path) -> String {
    path.strip_prefix(common).map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
}

/// One file: `state` (STALE, in use?, removed), kind, path, age and why.
fn line(out: &mut String, state: &str, d: &Debris, common: &Path) {
    let _ = writeln!(
        out,
        "{state:<8} {:<10} {}  (age {}; {})",
        kind_label(d.kind),
        shown(&d.path, common),
        doctor::human(Duration::from_secs(d.age_secs)),
        d.why
    );
}

fn operation_line(out: &mut String, op: &HalfFinished) {
    let _ = writeln!(out, "HALF-DONE {} of run {}: {}; run `{}`", op.operation, op.run, op.detail, op.remedy);
}

/// Runs `doctor`.
pub fn run(ctx: &mut Context, args: DoctorArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let common = store.common_dir().to_path_buf();
    let temp = std::env::temp_dir();
    let mut findings = doctor::examine(store, &temp, &ProcessEnv, SystemTime::now()).map_err(doctor_error)?;
    let repairs = if args.fix { doctor::fix(&findings, SystemTime::now()) } else { Default::default() };
    // Stale locks first: a landing's recovery needs the refs they blocked.
    let completed =
        if args.fix { doctor::complete_half_finished(store).map_err(doctor_error)? } else { Default::default() };
    let repaired = if args.fix {
        let now = git_mas::attention::focus_store::now_secs();
        doctor::chains::repair(store, &findings.damaged_chains, now).map_err(doctor_error)?
    } else {
        Vec::new()
    };
    if args.fix {
        // What is there now, after the removals: the exit code must not claim more than was done.
        findings = doctor::examine(store, &temp, &ProcessEnv, SystemTime::now()).map_err(doctor_error)?;
    }
    let problems = findings.problem_count();
    if args.output.json {
        ctx.ui().json(&DoctorOut {
            findings,
            problems,
            fixed: args.fix,
            removed: repairs.removed,
            failed: repairs.failed.into_iter().map(|(debris, error)| FailedRemoval { debris, error }).collect(),
            completed,
            repaired_chains: repaired,
        })?;
    } else {
        ctx.ui().out(&listing(&findings, &repairs, &completed, &common))?;
        ctx.ui().out(&chain_listing(&findings.damaged_chains, &repaired))?;
        for (d, error) in &repairs.failed {
            ctx.warn(&format!("could not remove {}: {error}", d.path.display()));
        }
        for (run, error) in &completed.failed {
            ctx.warn(&format!("could not complete run {run}: {error}"));
        }
        ctx.status(&summary(&findings, &repairs, args.fix, repaired.len()));
    }
    Ok(if problems == 0 { Outcome::Ok } else { Outcome::Refused })
}

/// What was removed and completed, then what is there.
fn listing(findings: &Findings, repairs: &Repairs, completed: &Completed, common: &Path) -> String {
    let mut out = String::new();
    for d in &repairs.removed {
        line(&mut out, "removed", d, common);
    }
    for r in &completed.landings {
        let _ = writeln!(out, "completed landing of run {} ({:?}): {} step(s)", r.run, r.state, r.done.len());
        for step in &r.done {
            let _ = writeln!(out, "  {}", crate::cli::render::describe_step(step));
        }
        for s in &r.stuck {
            let _ = writeln!(out, "stuck    landing of run {}: {}: {}", r.run, s.what, s.why);
        }
    }
    for p in &completed.proposals {
        let _ = writeln!(out, "completed proposal ref {} -> {}", p.refname, p.to);
    }
    for d in findings.locks.iter().chain(&findings.temp_files) {
        line(&mut out, if d.stale { "STALE" } else { "in use?" }, d, common);
    }
    for op in &findings.half_finished {
        operation_line(&mut out, op);
    }
    out
}

fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// The damaged chains repaired, then those found.
fn chain_listing(found: &[DamagedChain], repaired: &[ChainRepair]) -> String {
    let mut out = String::new();
    for r in repaired {
        let _ = match (&r.error, r.repair, &r.to) {
            (Some(e), _, _) => writeln!(out, "FAILED   repair of {}: {e}", r.refname),
            (None, Repair::ReSign, Some(to)) => {
                writeln!(out, "repaired {}: cut back past a missing object, re-signed as {}", r.refname, short(to))
            }
            (None, _, _) => writeln!(out, "ended    {}: its owner's key is not on this machine", r.refname),
        };
    }
    for d in found {
        let how = match d.repair {
            Repair::ReSign => "--fix cuts it back and re-signs it with its owner's key",
            Repair::End => "--fix ends it (its owner's key is not on this machine)",
        };
        let _ = writeln!(
            out,
            "DAMAGED  {}: record {} lost its {} {}; last whole record: {}; {how}",
            d.refname,
            short(&d.record),
            d.part,
            short(&d.missing),
            d.last_whole.as_deref().map_or("none", short),
        );
    }
    out
}

/// The closing status line.
fn summary(findings: &Findings, repairs: &Repairs, fixed: bool, repaired_chains: usize) -> String {
    let problems = findings.problem_count();
    let stale = problems - findings.half_finished.len() - findings.damaged_chains.len();
    let checked = format!("{} run(s) checked for interrupted operations", findings.runs_checked);
    match (problems, fixed) {
        (0, _) if repaired_chains > 0 => format!("repaired {repaired_chains} damaged chain(s); nothing left to repair"),
        (0, _) if repairs.removed.is_empty() => format!("nothing to repair ({checked})"),
        (0, _) => format!("removed {} stale file(s); nothing left to repair", repairs.removed.len()),
        (_, false) => format!(
            "{problems} problem(s): {stale} stale file(s), {} interrupted operation(s), {} damaged chain(s); `git mas \
             doctor --fix` removes the stale files, completes the operations and repairs the chains",
            findings.half_finished.len(),
            findings.damaged_chains.len()
        ),
        (_, true) => format!("{problems} problem(s) remain after --fix (see above)"),
    }
}

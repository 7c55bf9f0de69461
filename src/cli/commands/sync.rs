//! `git mas sync [<remote>]`: push and fetch `refs/mas/*`, fast-forward only.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::output::JsonFlag;
use crate::cli::render::short;
use crate::cli::{Done, Outcome};
use git_mas::sync::{RefAction, SyncReport, Unresolved, Unsettled};
use std::fmt::Write as _;

/// Exchange coordination records (refs/mas/*) with a git remote, fast-forward only.
///
/// Fetches the remote's refs/mas/* into refs/mas-remote/<remote>/*, fast-forwards local chains
/// that are behind, re-parents local records onto the remote tip where a shared chain moved on both
/// sides, and pushes what the remote lacks. Nothing is ever force-pushed: a push rejected because
/// someone advanced the ref meanwhile is re-fetched and retried, up to 10 rounds with a jittered,
/// growing pause between them.
///
/// Records received that do not verify (unsigned, unknown agent, spoofed, replayed, misplaced,
/// malformed) are stored — refs are shared history — but never applied, and each is listed as
/// `parked` with its verdict and the agent it claims; `git mas check --records` lists them all.
///
/// Exits 0 only when every ref under refs/mas/ agrees with the remote at the end. Exits 5 when some
/// ref does not, naming why: still rejected by the remote (it moved on in every round), refused (the
/// remote does not take refs/mas/* at all: a hook or a hosting rule; not retried, and what the
/// server said is shown), diverged (an agent's own chain written
/// from two machines), locked (a lock file, typically left by a crashed writer, is in the way: its
/// path is given; remove it once no git or git-mas process is running) or moving (local writers kept
/// changing it).
///
/// The remote defaults to `git config mas.remote`, else `origin`. Any remote git can push to works:
/// a path, ssh, git://, or HTTP(S) with git's credential helpers. A password in a URL is never
/// printed; git asks for a missing one only when standard input is a terminal.
///
/// With --json: {remote, events: [{round, ref, action, …}], unresolved: [{ref, reason, …}],
/// parked: [{ref, commit, verdict, agent, kind, seq, tip}], swept, rounds}.
#[derive(Debug, clap::Args)]
pub struct SyncArgs {
    /// The remote name or URL.
    pub remote: Option<String>,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs `sync`.
pub fn run(ctx: &mut Context, args: SyncArgs) -> Result<Outcome, CliError> {
    let done = sync(ctx, &args)?;
    let report = &done.value;
    if args.output.json {
        ctx.ui().json(report)?;
    } else {
        for path in &report.swept {
            ctx.status(&format!("removed {path} (left by an interrupted fetch)"));
        }
        ctx.ui().out(&events_text(report))?;
        if report.events.is_empty() && report.parked.is_empty() && report.complete() {
            ctx.status(&format!("refs/mas/* already in sync with {}", report.remote));
        }
        if !report.parked.is_empty() {
            ctx.warn(&format!(
                "{} record(s) received do not verify: stored, never applied (`git mas check --records` lists them)",
                report.parked.len()
            ));
        }
    }
    for u in &report.unresolved {
        ctx.warn(&format!("not synced: {}: {}", u.refname, why_unresolved(u, report.rounds)));
    }
    if report.unresolved.iter().any(|u| matches!(u.why, Unsettled::Refused { .. })) {
        ctx.ui().hint(&format!(
            "{} does not accept refs under refs/mas/, where git mas keeps the team's records; have it \
             accept refs/mas/* (a pre-receive hook, receive.hideRefs, or the hosting service's ref rules), or \
             sync through a remote that does (`git mas sync <remote>`, or `git config mas.remote <remote>`)",
            report.remote
        ));
    }
    Ok(done.outcome)
}

/// Exchanges `refs/mas/*` with the remote (`args.remote`, else `mas.remote`, else origin); ends
/// as sync-incomplete when some ref does not agree with the remote at the end.
pub fn sync(ctx: &Context, args: &SyncArgs) -> Result<Done<SyncReport>, CliError> {
    let store = ctx.store()?;
    let remote = args
        .remote
        .clone()
        .or_else(|| store.config_string("mas.remote").filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "origin".into());
    let report = git_mas::sync::sync(store, &remote)?;
    let outcome = if report.complete() { Outcome::Ok } else { Outcome::SyncIncomplete };
    Ok(Done::ended(report, outcome))
}

/// One line per ref event and per parked record.
fn events_text(report: &SyncReport) -> String {
    let mut o = String::new();
    for ev in &report.events {
        let what = match &ev.action {
            RefAction::Created { to } => format!("created at {}", short(to)),
            RefAction::FastForwarded { from, to } => format!("fast-forwarded {}..{}", short(from), short(to)),
            RefAction::Rebased { records, onto } => {
                format!("{records} local record(s) re-parented onto {}", short(onto))
            }
            RefAction::Pushed { to } => format!("pushed {}", short(to)),
            RefAction::Rejected { reason } if git_mas::sync::is_refusal(reason) => {
                format!("push refused by the remote {reason} (round {})", ev.round)
            }
            RefAction::Rejected { reason } => format!("push rejected {reason} (round {})", ev.round),
            RefAction::Diverged { local, remote } => {
                format!("diverged (local {}, remote {}); left as it is", short(local), short(remote))
            }
            RefAction::Locked { paths } => format!("not updated: {} in the way", paths.join(" and ")),
        };
        let _ = writeln!(o, "{:<44} {what}", ev.refname);
    }
    for p in &report.parked {
        let claims = p.agent.as_deref().map(|a| format!(" (claims {a})")).unwrap_or_default();
        let tip = if p.tip { ", chain tip" } else { "" };
        let _ = writeln!(o, "{:<44} parked {} {}{claims}{tip}", p.refname, short(&p.commit), p.verdict.label());
    }
    o
}

/// Why a ref was left unsynced, and what to do.
fn why_unresolved(u: &Unresolved, rounds: u32) -> String {
    match &u.why {
        Unsettled::Rejected { summary } => format!("the remote still rejects the push {summary} after {rounds} rounds"),
        Unsettled::Refused { summary, remote_said } => {
            let said =
                if remote_said.is_empty() { String::new() } else { format!("; it said: {}", remote_said.join(" / ")) };
            format!("the remote refuses the ref {summary}{said}")
        }
        Unsettled::Diverged { .. } => "diverged: this agent's chain moved on both sides".into(),
        Unsettled::Locked { locks } => {
            let named: Vec<String> = locks
                .iter()
                .map(|l| format!("{}{}", l.path, l.age_secs.map(|s| format!(" ({s}s old)")).unwrap_or_default()))
                .collect();
            format!(
                "locked by {}; if no git or git-mas process is running, remove the lock file(s) and sync again",
                named.join(" and ")
            )
        }
        Unsettled::Moving { .. } => "moved locally during the sync; sync again".into(),
    }
}

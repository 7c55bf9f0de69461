//! `git mas sync [<remote>]`: push and fetch `refs/mas/*`, fast-forward only.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::exit;
use crate::cli::output::print_json;
use git_mas::sync::{RefAction, SyncError, sync};
use std::process::ExitCode;

/// Exchange coordination records (refs/mas/*) with a git remote, fast-forward only.
///
/// Fetches the remote's refs/mas/* into refs/mas-remote/<remote>/*, fast-forwards local chains
/// that are behind, re-parents local records onto the remote tip where a shared chain moved on both
/// sides, and pushes what the remote lacks. Nothing is ever force-pushed: a rejected push (someone
/// advanced the ref meanwhile) is reported and re-fetched. Exits 5 when some ref is still rejected
/// or has diverged (an agent's own chain written from two machines).
///
/// The remote defaults to `git config mas.remote`, else `origin`.
#[derive(Debug, clap::Args)]
pub struct SyncArgs {
    /// The remote name or URL.
    pub remote: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `sync`.
pub fn run(ctx: &mut Context, args: SyncArgs) -> Result<ExitCode, CliError> {
    let store = ctx.store()?;
    let remote = args
        .remote
        .or_else(|| store.config_string("mas.remote").filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "origin".into());
    let report = sync(store, &remote).map_err(|e| match e {
        SyncError::Store(s) => CliError::from(s),
        SyncError::Spawn(_) => CliError::internal(e.to_string()),
        other => CliError::user(other.to_string()).hinted("check the remote with `git remote -v`"),
    })?;
    if args.json {
        print_json(&report)?;
    } else {
        for ev in &report.events {
            let short = |s: &str| s.chars().take(12).collect::<String>();
            let what = match &ev.action {
                RefAction::Created { to } => format!("created at {}", short(to)),
                RefAction::FastForwarded { from, to } => format!("fast-forwarded {}..{}", short(from), short(to)),
                RefAction::Rebased { records, onto } => {
                    format!("{records} local record(s) re-parented onto {}", short(onto))
                }
                RefAction::Pushed { to } => format!("pushed {}", short(to)),
                RefAction::Rejected { reason } => format!("push rejected {reason}; re-fetching"),
                RefAction::Diverged { local, remote } => {
                    format!("diverged (local {}, remote {}); left as it is", short(local), short(remote))
                }
            };
            println!("{:<44} {what}", ev.refname);
        }
        if report.events.is_empty() {
            ctx.status(&format!("refs/mas/* already in sync with {remote}"));
        }
    }
    if report.complete() {
        Ok(ExitCode::from(exit::OK))
    } else {
        ctx.warn(&format!("not synced: {}", report.unresolved.join(", ")));
        Ok(ExitCode::from(exit::SYNC_INCOMPLETE))
    }
}

//! `git mas exchange`: the background exchange of team mode's claims with the team's remote
//! (`git_mas::exchange`). A team-mode hook starts it detached; a person may run it in the
//! foreground to watch it.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::json::exchange::ExchangeOut;
use crate::cli::output::JsonFlag;
use git_mas::exchange::{Ended, ExchangeError, State};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Carry team mode's claims between clones through the team's remote, until no session runs.
///
/// Runs a sync round (`git mas sync`) with the remote every `git config mas.exchangeInterval`
/// (default 1s): it pushes the claims and releases this clone's sessions made since the last
/// round, in one push, and takes the other clones' claims, so their hooks refuse each other's
/// files. With two clones' exchanges running, a claim made on one is on the other's board within
/// two intervals plus two rounds: under 5 s on a LAN.
///
/// You rarely run it yourself: in team mode (`git mas init --team`) with a remote (`git config
/// mas.remote`, else origin), every hook call starts it when it is not running, detached, and
/// never waits for it. It ends, after a last round, once no session of this clone runs (no host
/// process recorded by the hooks is alive) and no hook was called for `git config
/// mas.exchangeIdle` (default 1m); at once when its repository is gone; on Ctrl-C or SIGTERM after
/// a last round. Only one runs per clone: a second ends at once (exit 0, "already running").
///
/// A round that fails (the remote unreachable, a ref it refuses) is retried at the next round;
/// `git mas status` shows whether the exchange runs, its last round and its last failure.
/// `git config mas.exchange false` turns it off: claims then cross clones at each `git mas sync`.
///
/// With --json: how it ended:
/// {already_running, state: {pid, remote, started_at, rounds, last_round_at, last_ok_at, pushed,
/// taken, last_error, ended} | null}.
#[derive(Debug, clap::Args)]
pub struct ExchangeArgs {
    /// Run in a session of its own, as hooks start it (it outlives the terminal or hook that
    /// started it).
    #[arg(long)]
    pub detach: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs `exchange`.
pub fn run(ctx: &mut Context, args: ExchangeArgs) -> Result<Outcome, CliError> {
    if args.detach {
        // Out of the hook's process group and session: a host that ends its hook's group on a
        // deadline does not end the exchange with it.
        let _ = rustix::process::setsid();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .map_err(|e| CliError::with_message(Kind::Internal, "cannot install the signal handler", e))?;
    let dir = ctx.cwd()?;
    if !args.detach {
        ctx.status("exchanging claims with the remote until no session runs (Ctrl-C to stop)");
    }
    let ended = git_mas::exchange::serve(&dir, &|| stop.load(Ordering::SeqCst))?;
    match ended {
        Ended::AlreadyRunning => {
            if args.output.json {
                ctx.ui().json(&ExchangeOut { already_running: true, state: None })?;
            } else {
                ctx.status("an exchange already runs for this clone");
            }
        }
        Ended::Idle(state) => {
            if args.output.json {
                ctx.ui().json(&ExchangeOut { already_running: false, state: Some(state) })?;
            } else {
                ctx.status(&ended_line(&state));
            }
        }
    }
    Ok(Outcome::Ok)
}

/// "ended after 12 rounds with origin (3 pushed, 5 taken): no session ran and no hook called".
fn ended_line(s: &State) -> String {
    let mut line =
        format!("ended after {} round(s) with {} ({} pushed, {} taken)", s.rounds, s.remote, s.pushed, s.taken);
    if let Some(why) = &s.ended {
        line.push_str(": ");
        line.push_str(why);
    }
    if let Some(e) = &s.last_error {
        line.push_str("; the last round failed: ");
        line.push_str(e);
    }
    line
}

impl From<ExchangeError> for CliError {
    fn from(e: ExchangeError) -> Self {
        let e = match e {
            ExchangeError::Store(store) => return CliError::from(store),
            other => other,
        };
        let (kind, hint) = match &e {
            ExchangeError::Store(_) | ExchangeError::Lock { .. } | ExchangeError::Start { .. } => {
                (Kind::Internal, None)
            }
            ExchangeError::BadDuration { .. } | ExchangeError::NoRemote | ExchangeError::Off => {
                (Kind::User, e.remedy())
            }
        };
        let mut err = CliError::new(kind, e);
        err.extend_hints(hint);
        err
    }
}

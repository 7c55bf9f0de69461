//! What the commands that drive a team share: the team of peer processes, the async runtime and
//! the Ctrl-C handler they run on, JSON Lines output of a run's events, the checks of their flags,
//! and the recorded ASSEMBLY → CONVERGE run that `converge` and `coordinate` both drive.

use super::context::Context;
use super::error::{CliError, Kind};
use super::output::{JsonOutput, Ui};
use git_mas::coordinate::scalar::record::RunRecorder;
use git_mas::coordinate::scalar::{self, ConvergeDef, RunEvent, SinkError};
use git_mas::peers::{PeerEntry, ProcessPeer, Wiring, kill_live_peers};
use git_mas::runtime::ProtocolPhase;
use std::path::Path;

/// The longest goal accepted, in bytes.
pub const MAX_GOAL_BYTES: usize = 4096;

/// A duration flag in milliseconds; zero is refused.
pub fn millis(d: std::time::Duration) -> Result<u64, CliError> {
    let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    if ms == 0 {
        return Err(CliError::usage("a duration must be at least 1ms"));
    }
    Ok(ms)
}

/// Refuses `path` for `flag` before a run starts when it cannot be written (no such directory, a
/// directory).
pub fn check_writable(path: &Path, flag: &str) -> Result<(), CliError> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(CliError::user(format!("{flag} {}: {} is not a directory", path.display(), parent.display())));
    }
    if path.is_dir() {
        return Err(CliError::user(format!("{flag} {} is a directory", path.display())));
    }
    Ok(())
}

/// A converge run's progress on stderr.
fn progress(ctx: &Context, event: &RunEvent) {
    match event {
        RunEvent::Hop(hop) => {
            if let Some(failure) = &hop.failure {
                ctx.warn(&format!("{} (attempt {}): {failure}", hop.peer, hop.attempt));
            }
        }
        RunEvent::Epoch(epoch) => {
            let metric = epoch.metric.map_or("-".to_owned(), |m| format!("{m:.6e}"));
            ctx.status(&format!("epoch {:>3}  metric {metric}", epoch.epoch));
        }
        RunEvent::Halt(halt) => ctx.status(&format!("halt {}: {}", halt.halt, halt.detail)),
        _ => {}
    }
}

/// Installs the Ctrl-C handler once per process: every live peer process group is killed, and
/// the command exits 130. Every ref write is one compare-and-swap transaction, so an interrupted
/// run leaves `refs/mas` as of its last completed write.
pub fn install_interrupt_handler() -> Result<(), CliError> {
    static INSTALLED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            ctrlc::set_handler(|| {
                kill_live_peers();
                std::process::exit(130);
            })
            .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| CliError::with_message(Kind::Internal, "cannot install the Ctrl-C handler", e))
}

/// A team of process peers for `peers`, each hop run in `dir`; presets take their command line
/// from git config when it overrides theirs, else their template for a run whose check is
/// `check` (see `git_mas::hosts::preset`), with what the host needs to run the edit hook for
/// what each peer's worktree was given (`wiring`).
pub fn team(
    ctx: &Context,
    peers: Vec<PeerEntry>,
    dir: &Path,
    check: Option<&str>,
    wiring: &dyn Fn(&str) -> Wiring,
) -> Result<Vec<ProcessPeer>, CliError> {
    let store = ctx.store()?;
    let exe = std::env::current_exe()
        .map_err(|e| CliError::with_message(Kind::Internal, "cannot find the running git-mas executable", e))?;
    Ok(peers
        .into_iter()
        .map(|p| {
            let wired = wiring(&p.name);
            ProcessPeer::configured(p, &exe, Some(dir.to_path_buf()), check, wired, |key| store.config_string(key)).0
        })
        .collect())
}

/// The single-threaded async runtime a driver runs its peers' processes on.
pub fn async_runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::with_message(Kind::Internal, "cannot start the async runtime", e))
}

/// `--json` output of a driver: one JSON line per event; a closed stdout stops the printing, not
/// the run.
pub struct JsonLines {
    open: bool,
}

impl JsonLines {
    /// Printing to an open stdout.
    pub fn new() -> JsonLines {
        JsonLines { open: true }
    }

    /// Prints `event` as one JSON line, unless stdout was found closed.
    pub fn print<T: JsonOutput>(&mut self, ui: &Ui, event: &T) -> Result<(), SinkError> {
        if self.open {
            match ui.json(event) {
                Ok(()) => {}
                Err(e) if e.is_broken_pipe() => self.open = false,
                Err(_) => return Err(Box::new(std::io::Error::other("the event could not be written to stdout"))),
            }
        }
        Ok(())
    }
}

/// Records and drives one ASSEMBLY → CONVERGE run, streaming its events (`--json`) or its
/// progress, and returns the report and the ASSEMBLY replies, in order. `git mas coordinate`
/// runs scalar classes through here too.
pub fn execute(
    ctx: &mut Context,
    meta: &ConvergeDef,
    json: bool,
) -> Result<(git_mas::coordinate::scalar::Report, Vec<String>), CliError> {
    let caller = ctx.caller()?;
    let dir = ctx.cwd()?;
    let mut team = team(ctx, meta.peers.clone(), &dir, None, &|_| Wiring::default())?;
    let store = ctx.store()?;
    let mut recorder = RunRecorder::start(store, &caller.key, meta)?;
    ctx.status(&format!("run {}: recording under refs/mas/runs/{}/", meta.run, meta.run));
    install_interrupt_handler()?;
    let runtime = async_runtime()?;

    let ctx_ref = &*ctx;
    let show_progress = !json && ctx.ui().stderr_is_terminal();
    let mut lines = JsonLines::new();
    let mut replies = Vec::new();
    let mut sink = |event: &RunEvent| -> Result<(), SinkError> {
        recorder.record(event)?;
        if let RunEvent::Hop(hop) = event
            && hop.phase == ProtocolPhase::Assembly
            && let Some(reply) = &hop.reply
        {
            replies.push(reply.clone());
        }
        if json {
            lines.print(ctx_ref.ui(), event)?;
        } else if show_progress {
            progress(ctx_ref, event);
        }
        Ok(())
    };
    let result = runtime.block_on(scalar::run(meta, &mut team, &mut sink));
    result.map(|report| (report, replies)).map_err(|e| {
        CliError::from(e).hinted(format!(
            "what was recorded so far is under refs/mas/runs/{}/ (`git mas report {}`)",
            meta.run, meta.run
        ))
    })
}

/// Writes `bytes` to `path` for `flag`.
pub fn write_file(path: &Path, bytes: &[u8], flag: &str) -> Result<(), CliError> {
    std::fs::write(path, bytes)
        .map_err(|e| CliError::with_message(Kind::User, format!("{flag}: cannot write {}", path.display()), e))
}

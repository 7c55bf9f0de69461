//! `git mas watch`: re-snapshot on workspace change, publish only when the frame hash changes.
//!
//! Never on a timer ([`git_mas::attention::watch`] says which changes count). Events are
//! debounced and access events ignored; the snapshot's own inputs (SCIP index, diagnostics files)
//! are watched wherever they live.

use crate::cli::Outcome;
use crate::cli::context::Caller;
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::inputs::{InputArgs, read_inputs};
use crate::cli::json::watch::WatchEventOut;
use git_mas::attention::frame::{self, Published};
use git_mas::attention::snapshot::Snapshot;
use git_mas::attention::watch::{changed_targets, relevant, stale_foci};
use git_mas::store::Store;
use notify::{EventKind, RecursiveMode};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// Watch the working tree and publish a new frame whenever the snapshot's hash changes.
///
/// Prints one JSON line per published frame: {hash, previous, commit, changed_targets,
/// stale_foci} — the targets whose saliency changed, and the agents whose focus is now on an old
/// frame. Input flags are those of `git mas snapshot` (and fall back to the same git config).
/// Stops cleanly on Ctrl-C.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    #[command(flatten)]
    pub inputs: InputArgs,
    /// Quiet period before re-snapshotting, in milliseconds.
    #[arg(long, default_value_t = 300, value_name = "MS")]
    pub debounce_ms: u64,
}

enum Signal {
    Changed,
    Stop,
    Failed(String),
}

type Debouncer = notify_debouncer_full::Debouncer<notify::RecommendedWatcher, notify_debouncer_full::RecommendedCache>;

/// Watches the working tree and the directories of inputs outside it; sends a [`Signal`] per
/// relevant batch of events.
fn start_watcher(
    workdir: &Path,
    inputs: &InputArgs,
    debounce: Duration,
    events: mpsc::Sender<Signal>,
) -> Result<Debouncer, CliError> {
    let mut debouncer = notify_debouncer_full::new_debouncer(
        debounce,
        None,
        move |result: notify_debouncer_full::DebounceEventResult| match result {
            Ok(batch) => {
                let any = batch.iter().any(|e| {
                    !matches!(e.event.kind, EventKind::Access(_)) && e.event.paths.iter().any(|p| relevant(p))
                });
                if any {
                    let _ = events.send(Signal::Changed);
                }
            }
            Err(errors) => {
                let _ =
                    events.send(Signal::Failed(errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ")));
            }
        },
    )
    .map_err(|e| CliError::with_message(Kind::Internal, "cannot start the file watcher", e))?;
    debouncer
        .watch(workdir, RecursiveMode::Recursive)
        .map_err(|e| CliError::with_message(Kind::Internal, format!("cannot watch {}", workdir.display()), e))?;
    let mut extra: BTreeSet<PathBuf> = BTreeSet::new();
    for p in inputs.scip.iter().chain(&inputs.diagnostics) {
        let abs = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        if !abs.starts_with(workdir)
            && let Some(dir) = abs.parent()
        {
            extra.insert(dir.to_path_buf());
        }
    }
    for dir in &extra {
        let _ = debouncer.watch(dir, RecursiveMode::NonRecursive);
    }
    Ok(debouncer)
}

/// Snapshots now and publishes the frame when its hash changed, printing one JSON line for it.
fn publish_now(
    ctx: &Context,
    store: &Store,
    caller: &Caller,
    inputs: &InputArgs,
    last: &mut Option<Snapshot>,
) -> Result<(), CliError> {
    let files = read_inputs(store, inputs)?;
    let (snapshot, view) = frame::snapshot_now(store, &files)?;
    if let Published::New { hash, previous, commit } =
        frame::publish(store, &caller.name, &caller.key, &snapshot, &view, &files)?
    {
        ctx.ui().json(&WatchEventOut {
            changed_targets: changed_targets(last.as_ref(), &snapshot),
            stale_foci: stale_foci(store, &hash),
            commit: commit.to_string(),
            hash,
            previous,
        })?;
    }
    *last = Some(snapshot);
    Ok(())
}

/// Runs `watch`.
pub fn run(ctx: &mut Context, args: WatchArgs) -> Result<Outcome, CliError> {
    let caller = ctx.caller()?;
    let store = ctx.store()?;
    let workdir = store.workdir()?.to_path_buf();
    let (tx, rx) = mpsc::channel::<Signal>();
    let stop = tx.clone();
    ctrlc::set_handler(move || {
        let _ = stop.send(Signal::Stop);
    })
    .map_err(|e| CliError::with_message(Kind::Internal, "cannot install the Ctrl-C handler", e))?;
    let _debouncer = start_watcher(&workdir, &args.inputs, Duration::from_millis(args.debounce_ms), tx)?;

    let mut last: Option<Snapshot> = frame::current_frame(store)?.map(|f| f.snapshot);
    publish_now(ctx, store, &caller, &args.inputs, &mut last)?;
    ctx.status(&format!("watching {} (Ctrl-C to stop)", workdir.display()));
    loop {
        match rx.recv() {
            Ok(Signal::Changed) => {
                // Collapse a burst that arrived while we were busy (a Ctrl-C inside it still stops).
                let mut stopping = false;
                for signal in rx.try_iter() {
                    match signal {
                        Signal::Changed => {}
                        Signal::Stop => stopping = true,
                        Signal::Failed(reason) => ctx.warn(&format!("watcher: {reason}")),
                    }
                }
                if stopping {
                    break;
                }
                match publish_now(ctx, store, &caller, &args.inputs, &mut last) {
                    // Nobody reads the stream any more: stop, quietly.
                    Err(e) if e.is_broken_pipe() => return Err(e),
                    Err(e) => e.print(ctx),
                    Ok(()) => {}
                }
            }
            Ok(Signal::Failed(reason)) => ctx.warn(&format!("watcher: {reason}")),
            Ok(Signal::Stop) | Err(_) => break,
        }
    }
    ctx.status("stopped");
    Ok(Outcome::Ok)
}

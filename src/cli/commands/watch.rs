//! `git mas watch`: re-snapshot on workspace change, publish only when the frame hash changes.
//!
//! Never on a timer: a frame that changes without the workspace changing would strand every focus
//! for nothing. Events are debounced; access events are ignored, and so is everything inside the
//! git dir except `HEAD` and `index` (a commit, checkout or `git add` changes what the snapshot
//! sees). The snapshot's own inputs (SCIP index, diagnostics files) are watched wherever they live.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::inputs::{InputArgs, frame_error, read_inputs};
use crate::cli::output::print_json;
use git_mas::attention::frame::{self, Published};
use git_mas::attention::snapshot::Snapshot;
use git_mas::store::Store;
use notify::{EventKind, RecursiveMode};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

/// Watch the working tree and publish a new frame whenever the snapshot's hash changes.
///
/// Prints one JSON line per published frame: {"hash", "previous", "changed_targets",
/// "stale_foci"} — the targets whose saliency changed, and the agents whose focus is now on an old
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

fn relevant(path: &Path) -> bool {
    let mut in_git = false;
    for c in path.components() {
        if c.as_os_str() == ".git" {
            in_git = true;
        }
    }
    if !in_git {
        return true;
    }
    matches!(path.file_name().and_then(|n| n.to_str()), Some("HEAD" | "index"))
        && path.parent().and_then(Path::file_name).is_some_and(|p| p == ".git")
}

fn changed_targets(old: Option<&Snapshot>, new: &Snapshot) -> Vec<String> {
    let before: BTreeMap<&str, f64> =
        old.map(|s| s.targets.iter().map(|t| (t.id.as_str(), t.saliency)).collect()).unwrap_or_default();
    let after: BTreeMap<&str, f64> = new.targets.iter().map(|t| (t.id.as_str(), t.saliency)).collect();
    let ids: BTreeSet<&str> = before.keys().chain(after.keys()).copied().collect();
    ids.into_iter().filter(|id| before.get(id) != after.get(id)).map(String::from).collect()
}

/// Agents whose latest focus record names a frame other than `hash`.
fn stale_foci(store: &Store, hash: &str) -> Vec<String> {
    let mut out = Vec::new();
    for r in store.list("refs/mas/focus/").unwrap_or_default() {
        let Some(agent) = git_mas::store::owner_of(&r.name) else { continue };
        let Ok(Some(tip)) = store.tip(&r.name) else { continue };
        let Ok(entry) = store.entry(tip) else { continue };
        let frame =
            entry.record.ok().and_then(|rec| rec.payload.get("frame").and_then(|f| f.as_str()).map(String::from));
        if frame.as_deref().is_some_and(|f| f != hash) {
            out.push(agent.to_string());
        }
    }
    out
}

/// Runs `watch`.
pub fn run(ctx: &mut Context, args: WatchArgs) -> Result<ExitCode, CliError> {
    let caller = ctx.caller()?;
    let store = ctx.store()?;
    let workdir = store.workdir()?.to_path_buf();
    let (tx, rx) = mpsc::channel::<Signal>();
    let stop = tx.clone();
    ctrlc::set_handler(move || {
        let _ = stop.send(Signal::Stop);
    })
    .map_err(|e| CliError::internal(format!("cannot install the Ctrl-C handler: {e}")))?;

    let events = tx.clone();
    let mut debouncer = notify_debouncer_full::new_debouncer(
        Duration::from_millis(args.debounce_ms),
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
    .map_err(|e| CliError::internal(format!("cannot start the file watcher: {e}")))?;
    debouncer
        .watch(&workdir, RecursiveMode::Recursive)
        .map_err(|e| CliError::internal(format!("cannot watch {}: {e}", workdir.display())))?;
    let mut extra: BTreeSet<PathBuf> = BTreeSet::new();
    for p in args.inputs.scip.iter().chain(&args.inputs.diagnostics) {
        let abs = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        if !abs.starts_with(&workdir)
            && let Some(dir) = abs.parent()
        {
            extra.insert(dir.to_path_buf());
        }
    }
    for dir in &extra {
        let _ = debouncer.watch(dir, RecursiveMode::NonRecursive);
    }

    let mut last: Option<Snapshot> = frame::current_frame(store).map_err(frame_error)?.map(|f| f.snapshot);
    let publish_now = |last: &mut Option<Snapshot>| -> Result<(), CliError> {
        let files = read_inputs(store, &args.inputs)?;
        let (snapshot, view) = frame::snapshot_now(store, &files).map_err(frame_error)?;
        if let Published::New { hash, previous, commit } =
            frame::publish(store, &caller.name, &caller.key, &snapshot, &view, &files).map_err(frame_error)?
        {
            print_json(&serde_json::json!({
                "hash": hash,
                "previous": previous,
                "commit": commit.to_string(),
                "changed_targets": changed_targets(last.as_ref(), &snapshot),
                "stale_foci": stale_foci(store, &hash),
            }))?;
        }
        *last = Some(snapshot);
        Ok(())
    };
    publish_now(&mut last)?;
    ctx.status(&format!("watching {} (Ctrl-C to stop)", workdir.display()));
    loop {
        match rx.recv() {
            Ok(Signal::Changed) => {
                // Collapse a burst that arrived while we were busy.
                while let Ok(Signal::Changed) = rx.try_recv() {}
                if let Err(e) = publish_now(&mut last) {
                    e.print(ctx);
                }
            }
            Ok(Signal::Failed(reason)) => ctx.warn(&format!("watcher: {reason}")),
            Ok(Signal::Stop) | Err(_) => break,
        }
    }
    ctx.status("stopped");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_internals_are_ignored_except_head_and_index() {
        assert!(relevant(Path::new("/r/src/lib.rs")));
        assert!(relevant(Path::new("/r/.git/HEAD")));
        assert!(relevant(Path::new("/r/.git/index")));
        assert!(!relevant(Path::new("/r/.git/objects/ab/cdef")));
        assert!(!relevant(Path::new("/r/.git/refs/mas/frame")));
        assert!(!relevant(Path::new("/r/.git/logs/HEAD")));
    }
}

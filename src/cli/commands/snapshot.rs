//! `git mas snapshot`: compute, publish or verify the saliency snapshot whose hash is the frame.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::exit;
use crate::cli::output::print_json;
use git_mas::attention::frame::{self, FrameError, InputFiles, InputKind, Published, read_input};
use git_mas::attention::snapshot::Snapshot;
use git_mas::store::Store;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where a snapshot's inputs come from. Each flag falls back to git config: `mas.task`,
/// `mas.taskFile`, `mas.scip`, `mas.diagnostics` (multi-valued), `mas.editorFile`; relative paths in
/// config are relative to the top of the working tree.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct InputArgs {
    /// The team's task text (targets it names as whole words rank higher).
    #[arg(long, conflicts_with = "task_file")]
    pub task: Option<String>,
    /// Read the task text from a file.
    #[arg(long, value_name = "FILE")]
    pub task_file: Option<PathBuf>,
    /// A SCIP index (index.scip) for reference centrality and symbols.
    #[arg(long, value_name = "FILE")]
    pub scip: Option<PathBuf>,
    /// A diagnostics file: cargo --message-format=json, SARIF 2.1.0, or JSON lines {path, line,
    /// severity}. Repeat for several.
    #[arg(long, value_name = "FILE")]
    pub diagnostics: Vec<PathBuf>,
    /// A file open in an editor (a tie-break only). Repeat for several.
    #[arg(long, value_name = "PATH")]
    pub editor_open: Vec<String>,
    /// A file listing open files, one per line.
    #[arg(long, value_name = "FILE")]
    pub editor_file: Option<PathBuf>,
}

/// Compute the saliency snapshot of this repository and its frame hash; publish or verify frames.
///
/// The snapshot ranks files and symbols by five signals (task naming, diagnostics, SCIP
/// centrality, recency, editor state); its SHA-256 is the frame every focus refers to. With
/// --publish it is recorded in refs/mas/frame (with every input, so anyone can re-derive it), but
/// only when the hash differs from the current frame. With --verify it recomputes a stored frame
/// from its stored inputs and exits 4, naming the first differing field, unless the hash
/// reproduces exactly.
#[derive(Debug, clap::Args)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub inputs: InputArgs,
    /// Record the snapshot as the current frame (needs an agent identity).
    #[arg(long, conflicts_with = "verify")]
    pub publish: bool,
    /// Verify a stored frame (default: the current one) instead of computing a new snapshot.
    #[arg(long, value_name = "FRAME", num_args = 0..=1, default_missing_value = "refs/mas/frame")]
    pub verify: Option<String>,
    /// How many top targets to print (human output).
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Print the result as JSON (the whole snapshot).
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn frame_error(e: FrameError) -> CliError {
    match e {
        FrameError::Store(s) => CliError::from(s),
        FrameError::Git { .. } => CliError::internal(e.to_string()),
        FrameError::NoFrame => CliError::user(e.to_string()).hinted("publish one with `git mas snapshot --publish`"),
        other => CliError::user(other.to_string()),
    }
}

fn config_path(store: &Store, key: &str) -> Option<PathBuf> {
    let value = store.config_string(key).filter(|s| !s.is_empty())?;
    let p = PathBuf::from(value);
    Some(if p.is_relative() { store.workdir().map(|w| w.join(&p)).unwrap_or(p) } else { p })
}

/// Whether git config names any snapshot input (the keys [`read_inputs`] falls back to).
pub fn inputs_configured(store: &Store) -> bool {
    let set = |key: &str| store.config_string(key).is_some_and(|v| !v.trim().is_empty());
    ["mas.task", "mas.taskFile", "mas.scip", "mas.editorFile"].iter().any(|k| set(k))
        || store.config_strings("mas.diagnostics").iter().any(|v| !v.trim().is_empty())
}

/// Reads the inputs named by flags, falling back to git config.
pub fn read_inputs(store: &Store, args: &InputArgs) -> Result<InputFiles, CliError> {
    let read_text = |p: &Path, kind: InputKind| {
        let bytes = read_input(p, kind).map_err(|e| match e {
            FrameError::ReadInput { source, .. } => CliError::user(format!("cannot read {}: {source}", p.display())),
            other => frame_error(other),
        })?;
        String::from_utf8(bytes).map_err(|e| CliError::user(format!("cannot read {}: {e}", p.display())))
    };
    let task = match (&args.task, &args.task_file) {
        (Some(t), _) => Some(t.clone()),
        (None, Some(f)) => Some(read_text(f, InputKind::Task)?),
        (None, None) => match store.config_string("mas.task").filter(|s| !s.is_empty()) {
            Some(t) => Some(t),
            None => match config_path(store, "mas.taskFile") {
                Some(f) => Some(read_text(&f, InputKind::Task)?),
                None => None,
            },
        },
    };
    let scip = args.scip.clone().or_else(|| config_path(store, "mas.scip"));
    let diagnostics = if args.diagnostics.is_empty() {
        let values = store.config_strings("mas.diagnostics");
        let top = store.workdir().map(Path::to_path_buf).ok();
        values
            .into_iter()
            .filter(|v| !v.is_empty())
            .map(|v| {
                let p = PathBuf::from(v);
                match (&top, p.is_relative()) {
                    (Some(t), true) => t.join(p),
                    _ => p,
                }
            })
            .collect()
    } else {
        args.diagnostics.clone()
    };
    let mut editor = args.editor_open.clone();
    if let Some(f) = args.editor_file.clone().or_else(|| config_path(store, "mas.editorFile")) {
        editor.extend(
            read_text(&f, InputKind::EditorList)?.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from),
        );
    }
    InputFiles::read(task, scip.as_deref(), &diagnostics, editor).map_err(frame_error)
}

/// Prints the top targets as a table.
pub fn print_targets(snapshot: &Snapshot, top: usize) {
    println!(
        "{:<5} {:<8} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}  target",
        "rank", "saliency", "task", "errors", "warns", "refs", "recent", "editor"
    );
    for (i, t) in snapshot.targets.iter().take(top).enumerate() {
        let s = &t.signals;
        println!(
            "{:<5} {:<8.4} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.4}  {}",
            i + 1,
            t.saliency,
            s.task,
            s.errors,
            s.warnings,
            s.centrality,
            s.recency,
            s.editor,
            t.id
        );
    }
}

/// Runs `snapshot`.
pub fn run(ctx: &mut Context, args: SnapshotArgs) -> Result<ExitCode, CliError> {
    if let Some(rev) = &args.verify {
        return verify(ctx, rev, args.json);
    }
    let caller = if args.publish { Some(ctx.caller()?) } else { None };
    let store = ctx.store()?;
    let files = read_inputs(store, &args.inputs)?;
    let (snapshot, view) = frame::snapshot_now(store, &files).map_err(frame_error)?;
    let hash = snapshot.frame_hash();
    let published = match &caller {
        Some(c) => Some(frame::publish(store, &c.name, &c.key, &snapshot, &view, &files).map_err(frame_error)?),
        None => None,
    };
    if args.json {
        let published_json = published.as_ref().map(|p| match p {
            Published::New { commit, previous, .. } => {
                serde_json::json!({"published": true, "commit": commit.to_string(), "previous": previous})
            }
            Published::Unchanged { .. } => serde_json::json!({"published": false, "reason": "unchanged"}),
        });
        print_json(&serde_json::json!({"hash": hash, "snapshot": snapshot, "publish": published_json}))?;
        exit_without_freeing(snapshot, view, files);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{hash}");
    ctx.status(&format!(
        "{} targets{}; sources: centrality {}, diagnostics [{}], symbols [{}]",
        snapshot.targets.len(),
        if snapshot.truncated > 0 { format!(" ({} more cut at the bound)", snapshot.truncated) } else { String::new() },
        snapshot.sources.centrality.as_deref().unwrap_or("none"),
        snapshot.sources.diagnostics.join(", "),
        snapshot.sources.symbols.join(", "),
    ));
    if args.top > 0 {
        print_targets(&snapshot, args.top);
    }
    match published {
        Some(Published::New { commit, .. }) => ctx.status(&format!("published frame {hash} as {commit}")),
        Some(Published::Unchanged { .. }) => ctx.status("the current frame already has this hash; nothing published"),
        None => {}
    }
    exit_without_freeing(snapshot, view, files);
    Ok(ExitCode::SUCCESS)
}

/// The process ends right after a snapshot: freeing its tens of thousands of small allocations one
/// by one is work nobody needs (it measured several per cent of a snapshot), so they are left to
/// the operating system.
fn exit_without_freeing<A, B, C>(snapshot: A, view: B, files: C) {
    std::mem::forget(snapshot);
    std::mem::forget(view);
    std::mem::forget(files);
}

fn verify(ctx: &mut Context, rev: &str, json: bool) -> Result<ExitCode, CliError> {
    let store = ctx.store()?;
    let commit = store.resolve_commit(rev)?.ok_or_else(|| {
        if rev == frame::FRAME_REF {
            frame_error(FrameError::NoFrame)
        } else {
            CliError::user(format!("{rev:?} names no commit"))
        }
    })?;
    let v = frame::verify(store, commit).map_err(frame_error)?;
    if json {
        print_json(&serde_json::json!({"ok": v.ok(), "verification": v}))?;
    } else if v.ok() {
        println!("{}", v.recorded_hash);
        ctx.status(&format!("frame {} reproduces exactly from its stored inputs", v.commit));
    } else {
        println!("{}", v.recomputed_hash);
        ctx.warn(&format!(
            "frame {} does not reproduce: recorded {}, recomputed {}; first difference: {}",
            v.commit,
            v.recorded_hash,
            v.recomputed_hash,
            v.first_difference.as_deref().unwrap_or("?")
        ));
    }
    Ok(ExitCode::from(if v.ok() { exit::OK } else { exit::UNVERIFIED }))
}

//! A snapshot's inputs as the command line and git config name them (`snapshot`, `watch`,
//! `coordinate`), and how a frame error reads to the user.

use super::error::{CliError, Kind};
use git_mas::attention::frame::{FrameError, InputFiles, InputKind, read_input};
use git_mas::store::Store;
use std::path::{Path, PathBuf};

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

fn config_path(store: &Store, key: &str) -> Option<PathBuf> {
    let value = store.config_string(key).filter(|s| !s.is_empty())?;
    let p = PathBuf::from(value);
    Some(if p.is_relative() { store.workdir().map(|w| w.join(&p)).unwrap_or(p) } else { p })
}

/// Reads the inputs named by flags, falling back to git config.
pub fn read_inputs(store: &Store, args: &InputArgs) -> Result<InputFiles, CliError> {
    let read_text = |p: &Path, kind: InputKind| {
        let bytes = read_input(p, kind).map_err(|e| match e {
            FrameError::ReadInput { source, .. } => {
                CliError::with_message(Kind::User, format!("cannot read {}: {source}", p.display()), source)
            }
            other => CliError::from(other),
        })?;
        String::from_utf8(bytes)
            .map_err(|e| CliError::with_message(Kind::User, format!("cannot read {}", p.display()), e))
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
    InputFiles::read(task, scip.as_deref(), &diagnostics, editor).map_err(CliError::from)
}

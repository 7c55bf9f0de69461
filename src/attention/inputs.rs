//! A snapshot's inputs as the command line names them, each falling back to git config: the task
//! (`mas.task`, `mas.taskFile`), the SCIP index (`mas.scip`), the diagnostics files
//! (`mas.diagnostics`, multi-valued) and the editor's open files (`mas.editorFile`). Relative paths
//! in config are relative to the top of the working tree.
//!
//! One reader for every command that snapshots (`snapshot`, `watch`, `coordinate`) and for team
//! mode's first edit, which publishes a frame from config alone.

use super::frame::{FrameError, InputFiles, InputKind, read_input};
use crate::store::Store;
use std::path::{Path, PathBuf};

/// The inputs the command line names (empty: config decides each).
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// The task text.
    pub task: Option<String>,
    /// A file holding the task text.
    pub task_file: Option<PathBuf>,
    /// A SCIP index.
    pub scip: Option<PathBuf>,
    /// Diagnostics files.
    pub diagnostics: Vec<PathBuf>,
    /// Files open in an editor.
    pub editor_open: Vec<String>,
    /// A file listing open files, one per line.
    pub editor_file: Option<PathBuf>,
}

/// Reads the inputs `sources` names, falling back to git config. A file that is not UTF-8 text
/// where text is expected is [`FrameError::ReadInput`] with an `InvalidData` cause.
pub fn read(store: &Store, sources: &Sources) -> Result<InputFiles, FrameError> {
    let read_text = |p: &Path, kind: InputKind| {
        String::from_utf8(read_input(p, kind)?).map_err(|e| FrameError::ReadInput {
            path: p.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        })
    };
    let task = match (&sources.task, &sources.task_file) {
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
    let scip = sources.scip.clone().or_else(|| config_path(store, "mas.scip"));
    let diagnostics = if sources.diagnostics.is_empty() {
        let top = store.workdir().map(Path::to_path_buf).ok();
        let values = store.config_strings("mas.diagnostics");
        values.into_iter().filter(|v| !v.is_empty()).map(|v| relative_to(top.as_deref(), PathBuf::from(v))).collect()
    } else {
        sources.diagnostics.clone()
    };
    let mut editor = sources.editor_open.clone();
    if let Some(f) = sources.editor_file.clone().or_else(|| config_path(store, "mas.editorFile")) {
        let listed = read_text(&f, InputKind::EditorList)?;
        editor.extend(listed.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from));
    }
    InputFiles::read(task, scip.as_deref(), &diagnostics, editor)
}

/// A path from git config `key`, relative to the top of the working tree when relative.
fn config_path(store: &Store, key: &str) -> Option<PathBuf> {
    let value = store.config_string(key).filter(|s| !s.is_empty())?;
    Some(relative_to(store.workdir().ok(), PathBuf::from(value)))
}

fn relative_to(top: Option<&Path>, p: PathBuf) -> PathBuf {
    match top {
        Some(t) if p.is_relative() => t.join(p),
        _ => p,
    }
}

impl FrameError {
    /// What the user can do about it, when there is something specific to say (said here, beside
    /// the reader of the inputs most of these errors come from; the binary's hints read it too).
    pub fn remedy(&self) -> Option<String> {
        match self {
            FrameError::Store(e) => e.remedy(),
            FrameError::NoFrame => Some("publish one with `git mas snapshot --publish`".into()),
            _ => None,
        }
    }
}

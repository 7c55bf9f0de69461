//! A snapshot's inputs as the command line and git config name them (`snapshot`, `watch`,
//! `coordinate`), and how a frame error reads to the user.

use super::error::{CliError, Kind};
use git_mas::attention::frame::{FrameError, InputFiles};
use git_mas::attention::inputs::{self, Sources};
use git_mas::store::Store;
use std::path::PathBuf;

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

impl InputArgs {
    /// The inputs these flags name, for the library's reader.
    pub fn sources(&self) -> Sources {
        Sources {
            task: self.task.clone(),
            task_file: self.task_file.clone(),
            scip: self.scip.clone(),
            diagnostics: self.diagnostics.clone(),
            editor_open: self.editor_open.clone(),
            editor_file: self.editor_file.clone(),
        }
    }
}

/// Reads the inputs named by flags, falling back to git config ([`inputs::read`]).
pub fn read_inputs(store: &Store, args: &InputArgs) -> Result<InputFiles, CliError> {
    inputs::read(store, &args.sources()).map_err(|e| match e {
        FrameError::ReadInput { path, source } => {
            CliError::with_message(Kind::User, format!("cannot read {}: {source}", path.display()), source)
        }
        other => CliError::from(other),
    })
}

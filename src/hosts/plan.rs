//! What an installer does to one of a host's files: the vocabulary the edit hook's installer
//! and the MCP registration share.
//!
//! Both work in two steps: first every file is planned from its current text ([`Plan`], pure),
//! then the plans are carried out (`carry_out`). A refusal (a file that does not parse, a file
//! of ours' name with other content) happens while planning, so it leaves every file as it was.
//! Kept apart from both installers so that neither imports the other.

use super::files::{HostHookError, remove_file, write_atomic};
use std::path::{Path, PathBuf};

/// What `hooks|mcp install|uninstall|status --host` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Add our entry (or file).
    Install,
    /// Remove it.
    Uninstall,
    /// Only look.
    Status,
}

/// What to do with a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Leave it as it is.
    Keep,
    /// Write these bytes.
    Write(String),
    /// Remove it.
    Remove,
}

/// What taking our entry out of a shared file gives.
pub(crate) enum Removal {
    /// There was no entry of ours.
    Unchanged,
    /// The file is exactly the one install creates: remove it.
    Created,
    /// The file's text without our entry.
    Changed(String),
}

impl Removal {
    /// What uninstall does to the file.
    pub(crate) fn into_plan(self) -> Plan {
        match self {
            Removal::Unchanged => Plan::Keep,
            Removal::Created => Plan::Remove,
            Removal::Changed(t) => Plan::Write(t),
        }
    }
}

/// A host file's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileState {
    /// Our entry is there, exactly as install writes it.
    Installed,
    /// No entry of ours (or no file).
    NotInstalled,
    /// An entry of ours that differs from what install writes, or a file of ours' name with
    /// other content.
    Other,
    /// The file does not parse as the host reads it.
    Invalid,
}

impl FileState {
    /// How `status` shows it.
    pub fn label(self) -> &'static str {
        match self {
            FileState::Installed => "installed",
            FileState::NotInstalled => "not installed",
            FileState::Other => "other (modified, or not git-mas's)",
            FileState::Invalid => "invalid",
        }
    }
}

/// One file after an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    /// The file.
    pub path: PathBuf,
    /// Its state now.
    pub state: FileState,
    /// Whether the action wrote or removed it.
    pub changed: bool,
}

/// Carries out `plan` for the file at `path` (under `base`, the folder a removal never takes
/// away) whose text was `current`; returns its text afterwards (`None`: absent).
pub(crate) fn carry_out(
    base: &Path,
    path: &Path,
    current: Option<String>,
    plan: &Plan,
) -> Result<Option<String>, HostHookError> {
    Ok(match plan {
        Plan::Keep => current,
        Plan::Write(text) => {
            write_atomic(path, text)?;
            Some(text.clone())
        }
        Plan::Remove => {
            remove_file(base, path)?;
            None
        }
    })
}

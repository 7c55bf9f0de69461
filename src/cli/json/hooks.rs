//! `git mas hooks … --json`.

use git_mas::attention::git_hooks::HookState;
use git_mas::hosts::plan::FileState;
use git_mas::hosts::trust::Effect;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Where the hooks are and the state of each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HooksOut {
    /// The hooks directory.
    pub dir: PathBuf,
    /// pre-commit, commit-msg and pre-push, in that order.
    pub hooks: Vec<HookOut>,
}

/// One hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookOut {
    /// Its name.
    pub hook: String,
    /// Its file.
    pub path: PathBuf,
    /// `installed`, `other hook (git-mas not installed)` or `absent`.
    pub state: HookState,
}

/// `git mas hooks install|uninstall|status --host …`: each host's edit-hook configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostHooksOut {
    /// `project` (the working tree) or `global` (the user's configuration).
    pub scope: super::Scope,
    /// One per host, in the order of `--host all`.
    pub hosts: Vec<HostHookOut>,
}

/// One host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostHookOut {
    /// Its name (as `--host` takes it).
    pub host: String,
    /// The command its hook runs.
    pub command: String,
    /// Its files (Goose has two).
    pub files: Vec<HostHookFileOut>,
    /// What the host needs besides the file (e.g. Codex's trust); empty for most.
    pub notes: Vec<String>,
    /// Whether the host will run the installed hook, as its own trust files tell (codex, copilot,
    /// gemini); `null` when not installed or for a host without a trust gate we read.
    #[serde(default)]
    pub effect: Option<Effect>,
}

/// One file of a host's configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostHookFileOut {
    /// The file.
    pub path: PathBuf,
    /// `installed`, `not_installed`, `other` (ours modified, or not ours) or `invalid`.
    pub state: FileState,
    /// Whether this command wrote or removed it.
    pub changed: bool,
}

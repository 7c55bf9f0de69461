//! `git mas hooks … --json`.

use git_mas::attention::hooks::HookState;
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

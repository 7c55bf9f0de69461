//! `git mas mcp install|uninstall|status --host … --json`.

use git_mas::hosts::plan::FileState;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Each host's registration of the MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpInstallOut {
    /// `project` (the working tree) or `global` (the user's configuration).
    pub scope: super::Scope,
    /// The agent the registered server acts as (`--agent`), if one is named.
    pub agent: Option<String>,
    /// One per host, in the order of `--host all`.
    pub hosts: Vec<McpHostOut>,
}

/// One host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpHostOut {
    /// Its name (as `--host` takes it).
    pub host: String,
    /// The command line the host starts.
    pub argv: Vec<String>,
    /// The file the host reads its MCP servers from; `null` where git-mas cannot edit it (goose).
    pub path: Option<PathBuf>,
    /// `installed`, `not_installed`, `other` (another git-mas entry, e.g. another agent) or
    /// `invalid`; `null` with `path`.
    pub state: Option<FileState>,
    /// Whether this command wrote or removed the file.
    pub changed: bool,
    /// What the host needs besides the file, or the manual step.
    pub notes: Vec<String>,
}

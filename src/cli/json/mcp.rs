//! `git mas mcp`: the structured result of every tool call.
//!
//! A tool calls the typed function of the command it names; `result` is the value it returned,
//! in that command's own `--json` shape (the types beside this one).

use serde::{Deserialize, Serialize};

/// A tool call that ran its command (whatever the command's exit code).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOut {
    /// The tool called.
    pub tool: String,
    /// The agent the server acts as.
    pub agent: String,
    /// The command's exit code (docs/README.md, "Exit codes").
    pub exit_code: u8,
    /// The exit code's name: ok, blocked, fail-closed, check-failed, ...
    pub outcome: String,
    /// The command's `--json` output.
    pub result: serde_json::Value,
    /// What the command said on stderr (warnings, notes), one line each, after the arguments the
    /// call gave that the tool does not take (ignored).
    pub notes: Vec<String>,
}

/// A refused tool call: the command's error as the CLI prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRefusalOut {
    /// The tool called.
    pub tool: String,
    /// The agent the server acts as; `None` when it started without one.
    pub agent: Option<String>,
    /// The exit code the command would have ended with (docs/README.md, "Exit codes").
    pub exit_code: u8,
    /// The exit code's name: refused, usage, internal, unverified, ...
    pub outcome: String,
    /// The error's message.
    pub error: String,
    /// Its causes, outermost first.
    pub causes: Vec<String>,
    /// What to do about it.
    pub hints: Vec<String>,
    /// What the command said on stderr before it failed.
    pub notes: Vec<String>,
}

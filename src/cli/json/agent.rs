//! `git mas init`, `agent new`, `agent list`, `agent sign-roster` and `whoami` with `--json`.

use git_mas::identity::EntrySource;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `git mas init --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InitOut {
    /// The roster's path in the worktree (`.mas/roster`).
    pub roster: String,
    /// Whether this call created it.
    pub created: bool,
}

/// `git mas agent new --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NewAgentOut {
    /// The agent's name.
    pub name: String,
    /// Its did:key.
    pub did: String,
    /// Where its private key is.
    pub key_path: PathBuf,
    /// Whether an existing key was put on the roster (`--reuse-key`).
    pub reused_key: bool,
    /// The roster file the line was appended to.
    pub roster: String,
}

/// One row of `git mas agent list --json` (an array of these).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ListedAgent {
    /// The agent's name.
    pub name: String,
    /// Its did:key on the roster.
    pub did: String,
    /// Whether the line is committed on the integration branch or only in this worktree.
    pub source: EntrySource,
    /// Whether this machine holds the matching private key.
    pub key_on_this_machine: bool,
}

/// `git mas agent sign-roster --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SignRosterOut {
    /// The signer (the caller).
    pub agent: String,
    /// The roster blob before the change (`None`: absent).
    pub old: Option<String>,
    /// The roster blob after it (`None`: deleted).
    pub new: Option<String>,
    /// The ed25519 signature over `git-mas roster v1 <old> <new>`, hex.
    pub signature: String,
    /// The whole trailer line: `Mas-Roster-Signed: <agent> <old> <new> <signature>`.
    pub trailer: String,
}

pub use git_mas::attention::caller::Source as IdentitySource;

/// `git mas whoami --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WhoamiOut {
    /// The caller's name.
    pub name: String,
    /// Where the name came from.
    pub identity_from: IdentitySource,
    /// The did:key the roster lists for it.
    pub did: Option<String>,
    /// Whether that roster line is committed.
    pub roster: Option<EntrySource>,
    /// The did:key of the private key on this machine.
    pub key_did: Option<String>,
    /// Whether the key is the roster's: records signed with it verify.
    pub can_sign: bool,
}

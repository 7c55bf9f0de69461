//! Two sessions acting as one agent no longer protect each other: the gate sees one agent, so
//! each may write what the other is writing. It happens with an identity pinned for a whole
//! checkout — `git config mas.agent alice` in a shared checkout outside team mode, the same
//! `GIT_MAS_AGENT` in two sessions, or a plain `git config` in a linked worktree, which writes
//! the shared config. The hooks notice it: each call records, per agent, the sessions and
//! worktrees it came from in the last [`WINDOW_SECS`] (`<common git dir>/mas/sessions/uses/`),
//! and [`observe`] says when another one is seen.

use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How long a use is remembered: a session idle longer is taken to be gone.
pub const WINDOW_SECS: u64 = 15 * 60;

/// One use of an agent's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Use {
    /// The host's session id (empty when the call carried none).
    pub session: String,
    /// The worktree's top directory.
    pub worktree: String,
    /// Unix seconds of the latest call.
    pub at: u64,
}

fn path(store: &Store, agent: &str) -> PathBuf {
    store.common_dir().join("mas").join("sessions").join("uses").join(agent)
}

/// Records this call's use of `agent` and returns the other uses still in the window: sessions
/// or worktrees other than this one acting as the same agent. Writes only when something changed
/// (a new session or worktree, or a use older than a minute).
pub fn observe(store: &Store, agent: &str, session: &str, worktree: &str, now: u64) -> Vec<Use> {
    let file = path(store, agent);
    let mut uses: Vec<Use> =
        std::fs::read(&file).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    uses.retain(|u| u.at + WINDOW_SECS > now);
    let others: Vec<Use> = uses.iter().filter(|u| u.session != session || u.worktree != worktree).cloned().collect();
    let fresh = uses.iter().any(|u| u.session == session && u.worktree == worktree && u.at + 60 > now);
    if !fresh {
        uses.retain(|u| u.session != session || u.worktree != worktree);
        uses.push(Use { session: session.into(), worktree: worktree.into(), at: now });
        if let Some(dir) = file.parent()
            && std::fs::create_dir_all(dir).is_ok()
            && let Ok(bytes) = serde_json::to_vec(&uses)
        {
            let _ = crate::fsx::write_atomic(&file, &bytes, None);
        }
    }
    others
}

/// The warning for `agent` used by `others` too.
pub fn warning(agent: &str, others: &[Use]) -> String {
    let worktrees: std::collections::BTreeSet<&str> = others.iter().map(|u| u.worktree.as_str()).collect();
    format!(
        "git mas gate: warning: {} other session(s) act as {agent} too (in {}), so the gate cannot keep you off \
         each other's files. Give each session its own identity: in team mode (`git mas init --team`) leave \
         GIT_MAS_AGENT unset and do not set mas.agent per session; with one worktree per agent, set it with `git \
         config --worktree mas.agent NAME` (plain `git config` in a linked worktree writes the shared config).",
        others.len(),
        worktrees.into_iter().collect::<Vec<_>>().join(", ")
    )
}

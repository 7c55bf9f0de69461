//! Which refs under `refs/mas/` are record chains and which are artifacts.
//!
//! A proposal (`refs/mas/runs/<run>/proposals/<agent>`) is an *artifact*: a commit of the agent's
//! tree whose parent is the run's base, so walking its first parents walks the integration
//! branch's history, whose commits hold no record. A reader that verifies chains must therefore
//! tell the two apart by the layout ([`ref_kind`]) and read an artifact as what it is (commit,
//! parent, tree) instead of verifying it. So is a lost claim's kept change
//! (`refs/mas/kept/<agent>/<id>`, [`crate::attention::lost`]): a commit on top of the loser's
//! `HEAD`. Every other ref under `refs/mas/` is a record chain.

use super::RUNS_PREFIX;
use crate::store::{Store, StoreError};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// What a ref under `refs/mas/` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefKind {
    /// An append-only chain of signed records.
    Chain,
    /// A commit that is not a record (its history is the project's, not a chain).
    Artifact,
}

/// Classifies a ref by the layout: proposals and kept changes are artifacts, everything else is a
/// record chain.
pub fn ref_kind(refname: &str) -> RefKind {
    if crate::attention::lost::is_kept_ref(refname) {
        return RefKind::Artifact;
    }
    let Some(rest) = refname.strip_prefix(RUNS_PREFIX) else { return RefKind::Chain };
    match rest.split('/').collect::<Vec<_>>().as_slice() {
        [run, "proposals", agent] if !run.is_empty() && !agent.is_empty() => RefKind::Artifact,
        _ => RefKind::Chain,
    }
}

/// An artifact's commit, read without treating it as a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// What kind of artifact: `proposal`, or `kept` (a lost claim's changes).
    pub what: &'static str,
    /// The ref's commit.
    pub commit: String,
    /// Its first parent.
    pub parent: Option<String>,
    /// Its tree.
    pub tree: Option<String>,
}

/// Why an artifact could not be read.
#[derive(Debug, Error)]
pub enum ArtifactError {
    /// The ref could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The ref was deleted while being read.
    #[error("the ref vanished")]
    Vanished {
        /// The ref.
        refname: String,
    },
    /// Its commit is not readable.
    #[error("cannot read commit {commit}: {why}")]
    Commit {
        /// The commit.
        commit: String,
        /// What git said.
        why: String,
    },
}

/// Reads an artifact ref: its commit, first parent and tree.
pub fn read_artifact(store: &Store, refname: &str) -> Result<Artifact, ArtifactError> {
    let tip = store.tip(refname)?.ok_or_else(|| ArtifactError::Vanished { refname: refname.into() })?;
    let commit = store
        .repo()
        .find_commit(tip)
        .map_err(|e| ArtifactError::Commit { commit: tip.to_string(), why: e.to_string() })?;
    let parent = commit.parent_ids().next().map(|id| id.to_string());
    let tree = commit.tree_id().ok().map(|id| id.to_string());
    let what = if crate::attention::lost::is_kept_ref(refname) { "kept" } else { "proposal" };
    Ok(Artifact { what, commit: tip.to_string(), parent, tree })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proposals_are_artifacts_and_everything_else_is_a_chain() {
        let table = [
            ("refs/mas/runs/r1/proposals/alice", RefKind::Artifact),
            ("refs/mas/runs/r1/events/alice", RefKind::Chain),
            ("refs/mas/runs/r1/meta", RefKind::Chain),
            ("refs/mas/runs/r1/landed", RefKind::Chain),
            ("refs/mas/runs/r1/report", RefKind::Chain),
            ("refs/mas/runs/proposals/x", RefKind::Chain),
            ("refs/mas/runs/r1/proposals/alice/extra", RefKind::Chain),
            ("refs/mas/runs//proposals/alice", RefKind::Chain),
            ("refs/mas/runs/r1/proposals/", RefKind::Chain),
            ("refs/mas/frame", RefKind::Chain),
            ("refs/mas/focus/alice", RefKind::Chain),
            ("refs/mas/journal/alice", RefKind::Chain),
            ("refs/mas/shared/proposals/x", RefKind::Chain),
        ];
        for (name, kind) in table {
            assert_eq!(ref_kind(name), kind, "{name}");
        }
    }
}

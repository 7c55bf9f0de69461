//! `git mas log --json`: one entry per ref.

use git_mas::devrun::artifact::RefKind;
use git_mas::store::record::Verdict;
use serde::{Deserialize, Serialize};

/// One record of a chain, with its verification verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggedRecord {
    /// The record's commit.
    pub commit: String,
    /// Its sequence number (`None`: not a readable record).
    pub seq: Option<u64>,
    /// Its kind.
    pub kind: Option<String>,
    /// Its agent.
    pub agent: Option<String>,
    /// What a reader concludes about it.
    pub verdict: Verdict,
    /// Its payload as recorded.
    pub payload: Option<serde_json::Value>,
}

/// An artifact ref's commit (a proposal: the agent's tree on the run's base).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactOut {
    /// What kind of artifact (`proposal`).
    pub what: String,
    /// Its commit.
    pub commit: String,
    /// The commit's first parent.
    pub parent: Option<String>,
    /// Its tree.
    pub tree: Option<String>,
}

/// One ref under `refs/mas/`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggedChain {
    /// The ref.
    #[serde(rename = "ref")]
    pub refname: String,
    /// `chain` or `artifact`.
    pub kind: RefKind,
    /// For an artifact, what it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<ArtifactOut>,
    /// The records shown, newest first.
    pub records: Vec<LoggedRecord>,
    /// How many records of the chain verify.
    pub verified: usize,
    /// How many do not (or 1 when the ref is unreadable).
    pub problems: usize,
    /// Why the ref could not be read.
    pub error: Option<String>,
}

//! `git mas snapshot --json` and `git mas snapshot --verify --json`.

use git_mas::attention::frame::Verification;
use git_mas::attention::snapshot::Snapshot;
use serde::{Deserialize, Serialize};

/// The snapshot, its frame hash and, with `--publish`, what publishing did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotOut {
    /// The frame hash (SHA-256 of the canonical snapshot).
    pub hash: String,
    /// With `--publish`: whether a frame was recorded.
    pub publish: Option<PublishOut>,
    /// The whole snapshot.
    pub snapshot: Snapshot,
}

/// What `--publish` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PublishOut {
    /// A new frame record: `{"commit", "previous", "published": true}`.
    New {
        /// The frame record's commit.
        commit: String,
        /// The frame it replaces.
        previous: Option<String>,
        /// True.
        published: bool,
    },
    /// The current frame already has this hash: `{"published": false, "reason": "unchanged"}`.
    Unchanged {
        /// False.
        published: bool,
        /// `unchanged`.
        reason: String,
    },
}

/// `--verify`: whether the stored frame reproduces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyOut {
    /// Whether it reproduces exactly.
    pub ok: bool,
    /// The hashes compared and the first difference.
    pub verification: Verification,
}

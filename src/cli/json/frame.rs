//! `git mas frame --json`.

use git_mas::attention::snapshot::{InputIds, Skipped, Sources, Target};
use serde::{Deserialize, Serialize};

/// The current frame and its top targets.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FrameOut {
    /// The frame hash (SHA-256 of the canonical snapshot).
    pub hash: String,
    /// The record that published it.
    pub commit: String,
    /// Who published it.
    pub publisher: String,
    /// The commit the snapshot was computed at.
    pub base: Option<String>,
    /// The content ids of its inputs.
    pub inputs: InputIds,
    /// Which signal sources contributed.
    pub sources: Sources,
    /// What was skipped while reading the inputs.
    pub skipped: Skipped,
    /// How many targets the snapshot ranks.
    pub targets_total: usize,
    /// The top `--top` targets.
    pub top: Vec<Target>,
}

//! `git mas focus … --json`.

use git_mas::attention::board::{Board, BoardEntry, FocusState};
use serde::{Deserialize, Serialize};

/// `focus publish --json`: the focus just recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FocusPublishOut {
    /// The publishing agent.
    pub agent: String,
    /// The record's commit.
    pub commit: String,
    /// Unix seconds when the focus stops holding.
    pub expires_at: u64,
    /// The frame hash it is on.
    pub frame: String,
    /// The record's sequence number.
    pub seq: u64,
    /// Its targets, in the snapshot's order (the first is the top target).
    pub targets: Vec<String>,
    /// Its time to live, seconds.
    pub ttl_secs: u64,
}

/// `focus list --json`: the current frame's hash and the whole board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FocusListOut {
    /// Every agent's entry and every rejected record.
    pub board: Board,
    /// The current frame's hash, when one was published.
    pub frame: Option<String>,
}

/// `focus release --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FocusReleaseOut {
    /// The releasing agent.
    pub agent: String,
    /// Always true: the release was recorded.
    pub released: bool,
    /// The release record's sequence number.
    pub seq: u64,
    /// The targets still held (a release of some targets only).
    #[serde(default)]
    pub kept: Vec<String>,
}

/// `focus status --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FocusStatusOut {
    /// The calling agent.
    pub agent: String,
    /// Its board entry, when it published a focus.
    pub focus: Option<BoardEntry>,
    /// The current frame's hash.
    pub frame: Option<String>,
    /// `none`, `released`, `expired`, `old-frame` or `live`.
    pub state: FocusState,
}

/// `focus prune --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FocusPruneOut {
    /// The focus refs deleted.
    pub deleted: Vec<String>,
}

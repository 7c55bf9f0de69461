//! `git mas watch`: one JSON line per published frame.

use serde::{Deserialize, Serialize};

/// A frame `watch` published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchEventOut {
    /// The new frame hash.
    pub hash: String,
    /// The frame it replaces.
    pub previous: Option<String>,
    /// The frame record's commit.
    pub commit: String,
    /// Targets whose saliency changed since the last snapshot.
    pub changed_targets: Vec<String>,
    /// Agents whose focus is now on an old frame.
    pub stale_foci: Vec<String>,
}

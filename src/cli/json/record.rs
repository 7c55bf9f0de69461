//! `git mas record append --json`.

use serde::{Deserialize, Serialize};

/// The record appended.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AppendOut {
    /// The chain.
    #[serde(rename = "ref")]
    pub refname: String,
    /// The record's commit.
    pub commit: String,
    /// Its sequence number.
    pub seq: u64,
    /// Compare-and-swap attempts it took (1 without a race).
    pub attempts: u32,
}

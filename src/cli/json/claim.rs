//! `git mas claim --json` and `git mas release --json`.

/// The caller's lanes after the command, or what refused them.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LanesOut {
    /// The holder.
    pub agent: String,
    /// Its live lanes (empty when refused).
    pub lanes: Vec<LaneOut>,
    /// What the globs overlapped (a refusal; empty otherwise).
    pub overlaps: Vec<OverlapOut>,
}

/// One lane.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LaneOut {
    /// The glob.
    pub glob: String,
    /// When it lapses (seconds since the epoch).
    pub expires_at: u64,
}

/// What a glob overlapped.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct OverlapOut {
    /// The glob asked for.
    pub glob: String,
    /// Who holds the other.
    pub holder: String,
    /// Its lane or its claim.
    pub what: String,
    /// A path both hold.
    pub example: String,
}

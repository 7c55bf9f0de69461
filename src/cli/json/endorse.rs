//! `git mas endorse --json`.

use serde::{Deserialize, Serialize};

/// The endorsement just recorded, and where the proposal stands now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndorsedOut {
    /// The run.
    pub run: String,
    /// Who endorsed.
    pub endorser: String,
    /// Whose proposal.
    pub proposer: String,
    /// The proposal's tree the endorsement binds to.
    pub tree: String,
    /// `passed`, `failed`, `improved` (failed, but fixes tests of the base and breaks none),
    /// `accepted` (review, no check) or `rejected`.
    pub verdict: EndorseVerdict,
    /// The check command, when one ran.
    pub command: Option<String>,
    /// Its exit status (`None`: killed, timed out, or no check ran).
    pub exit_status: Option<i32>,
    /// Its wall time, when one ran.
    pub duration_ms: Option<u64>,
    /// `sha256:<hex>` of its output, when one ran.
    pub output_digest: Option<String>,
    /// The review's reason (with --reject or --no-check).
    pub reason: Option<String>,
    /// What the proposal changes against the run's base, test by test, when the check failed
    /// and its test runner's report could be read on both: {format, fixed, broken, lost,
    /// still_failing}.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub differential: Option<git_mas::runtime::TestDelta>,
    /// The proposal's valid endorsers now.
    pub valid_endorsements: Vec<String>,
    /// The run's quorum.
    pub quorum: u32,
    /// Whether the proposal is at quorum now.
    pub at_quorum: bool,
}

names! {
    /// What an endorsement says.
    pub enum EndorseVerdict {
        /// The check passed.
        Passed = "passed",
        /// The check failed.
        Failed = "failed",
        /// The check failed, and its test report shows the proposal improving the base: it
        /// makes failing tests pass and breaks none. It endorses.
        Improved = "improved",
        /// An aggregate run's slice: the check failed, and its test report shows the slice
        /// breaking nothing the base passed (whether it fixes anything is the merged whole's
        /// question). It endorses.
        Sound = "sound",
        /// Accepted by review, without a check.
        Accepted = "accepted",
        /// Rejected, with a reason.
        Rejected = "rejected",
    }
}

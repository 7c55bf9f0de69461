//! `git mas run list --json` and `git mas run abort --json` (`run start` prints the run's
//! definition, `run show` its meta, as the library has them).

use git_mas::convergence::ConvergenceReport;
use git_mas::devrun::AbortPayload;
use serde::{Deserialize, Serialize};

/// One run in `run list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    /// The run id.
    pub id: String,
    /// `open`, `aborted`, `landing`, `landed`, or `unreadable`.
    pub phase: super::PhaseName,
    /// How it ended, or that it has not: the name `coordinate`'s halt line and `git mas report`
    /// give it (`git_mas::convergence::Ending`: `open`, `landed`, `land-blocked`,
    /// `max-rounds-reached`, …); absent when unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ending: Option<git_mas::convergence::Ending>,
    /// Its goal (`None` when unreadable).
    pub goal: Option<String>,
    /// When it started (`None` when unreadable).
    pub created_at_ms: Option<u64>,
    /// Why it is unreadable.
    pub problem: Option<String>,
}

/// `run abort`: the abort record and the report stored for the ended run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbortedOut {
    /// The run.
    pub run: String,
    /// The abort record's payload.
    pub aborted: AbortPayload,
    /// The run's convergence report.
    pub report: ConvergenceReport,
}

//! `git mas coordinate --json`: the stream is the drivers' own events (one JSON line each, ending
//! with the report); this is the one line the command adds between them.

use serde::{Deserialize, Serialize};

/// ASSEMBLY named class development: CONVERGE continues on code artifacts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ContinueOut {
    /// Always `continue`.
    pub event: super::ContinueEvent,
    /// The class CONVERGE continues with (`development`).
    pub class: git_mas::runtime::PatternKind,
    /// The ASSEMBLY run that named it.
    pub assembly_run: String,
}

/// The preflight: the first line of `coordinate --json`, and the whole of `--dry-run --json`
/// with the plan.
#[derive(Debug, Clone, Serialize)]
pub struct PreflightOut {
    /// Always `preflight`.
    pub event: super::PreflightEvent,
    /// Whether every check holds (the run starts, unless --dry-run).
    pub ok: bool,
    /// Every check: {check, ok, detail, fix}.
    pub items: Vec<git_mas::coordinate::preflight::Item>,
    /// The frame the run would focus on (development): its hash, and whether the run publishes it.
    pub frame: Option<FramePlanOut>,
    /// An aggregate run's plan, with --dry-run.
    pub plan: Option<git_mas::devrun::slices::SlicePlan>,
    /// Whether this was --dry-run (nothing started).
    pub dry_run: bool,
}

/// The frame a development run focuses on.
#[derive(Debug, Clone, Serialize)]
pub struct FramePlanOut {
    /// The frame's hash.
    pub hash: String,
    /// Whether it is already the published frame (else the run publishes it at start).
    pub current: bool,
    /// How many files it ranks.
    pub files: usize,
}

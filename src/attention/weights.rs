//! The saliency weights: one place, named, and summing to one (plus the editor epsilon).
//!
//! Each weight is also the most its signal can ever contribute — the poisoning defence: a target
//! flooded with a billion errors gains at most `ERRORS + WARNINGS`, which is less than what a task
//! naming plus strong centrality gives.

/// The task text names the target (path, file name or symbol) as a whole word.
pub const TASK: f64 = 0.35;
/// Compiler or linter errors on the target, through a saturating response.
pub const ERRORS: f64 = 0.18;
/// Warnings on the target, through a saturating response.
pub const WARNINGS: f64 = 0.07;
/// Inbound references from other documents (SCIP), normalized over the snapshot.
pub const CENTRALITY: f64 = 0.25;
/// Touched in the working tree or index (1), or decaying with commits since the last change.
pub const RECENCY: f64 = 0.15;
/// Open in an editor: a tie-break only, smaller than any other signal's smallest step.
pub const EDITOR: f64 = 0.0005;

/// The count at which the saturating response reaches one half (errors).
pub const ERRORS_HALF: f64 = 2.0;
/// The count at which the saturating response reaches one half (warnings).
pub const WARNINGS_HALF: f64 = 5.0;
/// How many first-parent commits the recency walk looks back; older changes count as none.
pub const RECENCY_WINDOW: usize = 200;
/// The most targets a snapshot lists.
pub const MAX_TARGETS: usize = 4096;

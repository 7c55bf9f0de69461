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

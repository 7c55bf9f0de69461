//! `git mas report --events` (development runs): one convergence event per line.

use serde::{Deserialize, Serialize};

/// One convergence event: its type and its fields.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReportEventOut {
    /// `convergence.started`, `conflict.detected`, `conflict.resolved`, `consensus.updated`,
    /// `convergence.reached` or `convergence.failed`.
    #[serde(rename = "type")]
    pub kind: git_mas::convergence::EventKind,
    /// The event's fields (`run`, and the conflict, score or outcome it carries).
    #[serde(flatten)]
    pub fields: serde_json::Map<String, serde_json::Value>,
}

impl ReportEventOut {
    /// The event `kind` with the fields of `payload` (an object; anything else carries none).
    pub fn new(kind: git_mas::convergence::EventKind, payload: serde_json::Value) -> ReportEventOut {
        let fields = match payload {
            serde_json::Value::Object(fields) => fields,
            _ => serde_json::Map::new(),
        };
        ReportEventOut { kind, fields }
    }
}

/// `git mas report --html FILE --json`: where the page was written.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HtmlWrittenOut {
    /// The file the page was written to.
    pub html: String,
}

//! Signal readers: pure parses from the bytes of an input (a SCIP index, a diagnostics file, a Rust
//! source file, the task text) to plain counts that saliency is computed from.
//!
//! Every reader takes bytes and returns values; none reads the repository, the clock or the
//! environment, so that two agents given the same input bytes derive the same counts. The one
//! exception is [`read_diagnostics`], which may look at the file system to map absolute paths into the
//! repository (symlinks, canonical paths); the paths it returns are still a function of the input.
//!
//! Bad input never panics: each reader either returns a clear error or skips what it cannot use and
//! says how much it skipped, and property tests feed every reader arbitrary bytes.
//!
//! **Target ids.** A target is a file, named by its repository-relative path with `/` separators
//! (`src/ledger/mod.rs`), or a symbol, named `path#symbol` where `symbol` is a dotted name
//! (`src/ledger/mod.rs#Ledger.reserve`, `tools/stockcheck/models.py#Item.value_cents`) that never
//! contains `#`. Splitting a symbol id at its first `#` recovers the path and the name.

pub mod diagnostics;
pub mod rust_items;
pub mod scip;
pub mod scip_symbol;
pub mod task;

pub use diagnostics::{DiagCounts, DiagError, DiagFormat, DiagReport, Diagnostic, Severity, read_diagnostics};
pub use rust_items::{RustItem, RustItemsError, rust_items};
pub use scip::{ScipCounts, ScipError, ScipSymbol, read_scip};
pub use task::{TaskText, named_by_task};

/// Splits a target id into its path and, for a symbol target, its symbol name.
///
/// `"src/lib.rs"` gives `("src/lib.rs", None)`; `"src/lib.rs#Ledger.reserve"` gives
/// `("src/lib.rs", Some("Ledger.reserve"))`.
pub fn split_target(target_id: &str) -> (&str, Option<&str>) {
    match target_id.split_once('#') {
        Some((path, symbol)) => (path, Some(symbol)),
        None => (target_id, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_target_table() {
        assert_eq!(split_target("src/lib.rs"), ("src/lib.rs", None));
        assert_eq!(split_target("src/lib.rs#Ledger.reserve"), ("src/lib.rs", Some("Ledger.reserve")));
        assert_eq!(split_target("a.py#"), ("a.py", Some("")));
    }
}

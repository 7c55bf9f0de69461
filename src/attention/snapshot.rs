//! The saliency snapshot: a ranking of targets computed as a pure function of its inputs, in a
//! canonical byte form whose SHA-256 is the team's frame.
//!
//! Targets are files (repo-relative paths) and symbols (`path#Name.sub`). A symbol inherits its
//! file's recency and editor state, counts the diagnostics whose line falls inside its range, and
//! has its own centrality (SCIP references from other documents) and task naming. Targets with no
//! signal at all are not listed. The list is sorted by (saliency descending, id ascending) and cut
//! at [`weights::MAX_TARGETS`]; how many were cut is recorded, so truncation is visible.

use super::saliency::{Contributions, RawSignals, contributions, normalized_centrality, recency};
use super::weights;
use crate::store::canonical::to_canonical_vec;
use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::collections::{BTreeMap, BTreeSet};

/// The snapshot format version.
pub const SNAPSHOT_VERSION: u64 = 1;

/// What the producer knows about one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFacts {
    /// Repo-relative path.
    pub path: String,
    /// Changed in the working tree or index at snapshot time.
    pub touched: bool,
    /// First-parent commits since it last changed (`Some(0)`: in the base commit itself).
    pub commits_since: Option<usize>,
}

/// A symbol and where it is defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolFacts {
    /// The defining file.
    pub path: String,
    /// Dotted name (`Ledger.reserve`).
    pub name: String,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// References from other documents (SCIP), when an index covers the symbol.
    pub refs: Option<u64>,
}

/// A diagnostic, already mapped to a repo-relative path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagFact {
    /// Repo-relative path.
    pub path: String,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// An error (else a warning).
    pub error: bool,
}

/// Which source fed each signal.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sources {
    /// `"text"` when a task was given.
    pub task: Option<String>,
    /// The diagnostics formats read (`cargo`, `sarif`, `json-lines`), sorted.
    pub diagnostics: Vec<String>,
    /// `"scip"` when an index was given.
    pub centrality: Option<String>,
    /// Where symbols came from (`scip`, `tree-sitter-rust`).
    pub symbols: Vec<String>,
    /// `"git"`: working tree, index and first-parent history.
    pub recency: String,
    /// `"list"` when open files were given.
    pub editor: Option<String>,
}

/// Content hashes (`sha256:<hex>`) of every input, so anyone can check they hold the same ones.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputIds {
    /// The task text.
    pub task: Option<String>,
    /// The SCIP index.
    pub scip: Option<String>,
    /// Each diagnostics file, sorted.
    pub diagnostics: Vec<String>,
    /// The editor list.
    pub editor: Option<String>,
    /// The working-tree changes the producer saw.
    pub worktree: String,
}

/// Inputs counted and left out, by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Diagnostics for paths outside the repository.
    pub diagnostics_outside_repo: u64,
    /// Diagnostics for files that no longer exist.
    pub diagnostics_missing_files: u64,
    /// Diagnostics of other severities or unreadable entries.
    pub diagnostics_other: u64,
    /// SCIP local symbols.
    pub scip_local_symbols: u64,
    /// SCIP documents for files that do not exist in the tree.
    pub scip_missing_documents: u64,
    /// Files whose symbols could not be extracted.
    pub symbol_extraction_failures: u64,
    /// Files whose names are not UTF-8 (they cannot be targets).
    pub non_utf8_paths: u64,
}

/// Everything a snapshot is computed from.
#[derive(Debug, Clone, Default)]
pub struct SnapshotInput {
    /// The base commit, if the repository has one.
    pub base: Option<String>,
    /// Every file in the tree the producer saw.
    pub files: Vec<FileFacts>,
    /// SCIP inbound references per document.
    pub doc_refs: BTreeMap<String, u64>,
    /// Symbols (from SCIP and tree-sitter).
    pub symbols: Vec<SymbolFacts>,
    /// Diagnostics.
    pub diagnostics: Vec<DiagFact>,
    /// Open files.
    pub editor: BTreeSet<String>,
    /// Sources.
    pub sources: Sources,
    /// Input identities.
    pub inputs: InputIds,
    /// Skips.
    pub skipped: Skipped,
}

/// One ranked target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// `path` or `path#symbol`.
    pub id: String,
    /// The sum of the contributions.
    pub saliency: f64,
    /// Each signal's contribution.
    pub signals: Contributions,
    /// A symbol's line range.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub lines: Option<[u32; 2]>,
}

/// The snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Format version.
    pub version: u64,
    /// Base commit.
    pub base: Option<String>,
    /// The weights used (so a reader sees the scale).
    pub weights: BTreeMap<String, f64>,
    /// Sources.
    pub sources: Sources,
    /// Input identities.
    pub inputs: InputIds,
    /// Skips.
    pub skipped: Skipped,
    /// Targets with any signal, ranked.
    pub targets: Vec<Target>,
    /// How many signalled targets were cut by the bound.
    pub truncated: u64,
}

impl Snapshot {
    /// A snapshot of exactly `targets` (tests of the code that reads snapshots).
    #[cfg(test)]
    pub(crate) fn of_targets(targets: Vec<Target>) -> Snapshot {
        Snapshot {
            version: 1,
            base: None,
            weights: BTreeMap::new(),
            sources: Default::default(),
            inputs: Default::default(),
            skipped: Default::default(),
            targets,
            truncated: 0,
        }
    }

    /// The canonical bytes (sorted keys, one float format, no whitespace).
    pub fn canonical_bytes(&self) -> Vec<u8> {
        to_canonical_vec(self).unwrap_or_default()
    }

    /// The frame hash: SHA-256 of the canonical bytes, as lower-case hex.
    pub fn frame_hash(&self) -> String {
        sha256_hex(&self.canonical_bytes())
    }

    /// The target with this id.
    pub fn target(&self, id: &str) -> Option<&Target> {
        self.targets.iter().find(|t| t.id == id)
    }
}

/// SHA-256 as lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    crate::identity::key::hex(&sha2::Sha256::digest(bytes))
}

/// The weights as a map, for the snapshot.
pub fn weight_table() -> BTreeMap<String, f64> {
    [
        ("task", weights::TASK),
        ("errors", weights::ERRORS),
        ("warnings", weights::WARNINGS),
        ("centrality", weights::CENTRALITY),
        ("recency", weights::RECENCY),
        ("editor", weights::EDITOR),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Computes the snapshot. `named` says whether the task text names a target id.
pub fn compute(input: &SnapshotInput, named: impl Fn(&str) -> bool) -> Snapshot {
    let files: BTreeMap<&str, &FileFacts> = input.files.iter().map(|f| (f.path.as_str(), f)).collect();
    let mut diag_by_file: BTreeMap<&str, Vec<&DiagFact>> = BTreeMap::new();
    for d in &input.diagnostics {
        if files.contains_key(d.path.as_str()) {
            diag_by_file.entry(d.path.as_str()).or_default().push(d);
        }
    }
    let max_doc = input.doc_refs.values().copied().max().unwrap_or(0) as f64;
    let max_sym = input.symbols.iter().filter_map(|s| s.refs).max().unwrap_or(0) as f64;

    let mut targets = Vec::new();
    let mut push = |id: String, raw: RawSignals, lines: Option<[u32; 2]>| {
        let signals = contributions(&raw);
        let saliency = signals.total();
        if saliency > 0.0 {
            targets.push(Target { id, saliency, signals, lines });
        }
    };
    for f in &input.files {
        let diags = diag_by_file.get(f.path.as_str()).map(Vec::as_slice).unwrap_or(&[]);
        let errors = diags.iter().filter(|d| d.error).count() as f64;
        let raw = RawSignals {
            task: named(&f.path),
            errors,
            warnings: diags.len() as f64 - errors,
            centrality: normalized_centrality(input.doc_refs.get(&f.path).copied().unwrap_or(0) as f64, max_doc),
            recency: recency(f.touched, f.commits_since),
            editor: input.editor.contains(&f.path),
        };
        push(f.path.clone(), raw, None);
    }
    // Symbols in a fixed order, so that the first of two same-named symbols wins on every machine
    // whatever order the readers produced them in.
    let mut symbols: Vec<&SymbolFacts> = input.symbols.iter().collect();
    symbols.sort_by(|a, b| {
        (&a.path, &a.name, a.start_line, a.end_line).cmp(&(&b.path, &b.name, b.start_line, b.end_line))
    });
    let mut seen = BTreeSet::new();
    for s in symbols {
        let id = format!("{}#{}", s.path, s.name);
        let Some(file) = files.get(s.path.as_str()) else { continue };
        if !seen.insert(id.clone()) {
            continue;
        }
        let in_range = |d: &&&DiagFact| d.line.is_some_and(|l| l >= s.start_line && l <= s.end_line);
        let diags = diag_by_file.get(s.path.as_str()).map(Vec::as_slice).unwrap_or(&[]);
        let errors = diags.iter().filter(in_range).filter(|d| d.error).count() as f64;
        let all = diags.iter().filter(in_range).count() as f64;
        let raw = RawSignals {
            task: named(&id),
            errors,
            warnings: all - errors,
            centrality: normalized_centrality(s.refs.unwrap_or(0) as f64, max_sym),
            recency: recency(file.touched, file.commits_since),
            editor: input.editor.contains(&s.path),
        };
        push(id, raw, Some([s.start_line, s.end_line]));
    }
    targets.sort_by(|a, b| b.saliency.total_cmp(&a.saliency).then_with(|| a.id.cmp(&b.id)));
    let truncated = targets.len().saturating_sub(weights::MAX_TARGETS) as u64;
    targets.truncate(weights::MAX_TARGETS);
    Snapshot {
        version: SNAPSHOT_VERSION,
        base: input.base.clone(),
        weights: weight_table(),
        sources: input.sources.clone(),
        inputs: input.inputs.clone(),
        skipped: input.skipped.clone(),
        targets,
        truncated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, touched: bool, since: Option<usize>) -> FileFacts {
        FileFacts { path: path.into(), touched, commits_since: since }
    }

    fn input() -> SnapshotInput {
        SnapshotInput {
            files: vec![file("a.rs", false, Some(5)), file("b.rs", true, None), file("leaf.rs", false, None)],
            doc_refs: [("a.rs".to_string(), 40), ("b.rs".to_string(), 1)].into(),
            symbols: vec![SymbolFacts {
                path: "a.rs".into(),
                name: "Core".into(),
                start_line: 3,
                end_line: 9,
                refs: Some(30),
            }],
            diagnostics: vec![
                DiagFact { path: "a.rs".into(), line: Some(4), error: true },
                DiagFact { path: "a.rs".into(), line: Some(20), error: false },
                DiagFact { path: "gone.rs".into(), line: Some(1), error: true },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn ranks_signalled_targets_and_drops_silent_ones() {
        let snap = compute(&input(), |id| id == "b.rs");
        let ids: Vec<&str> = snap.targets.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["b.rs", "a.rs", "a.rs#Core"]);
        let core = snap.target("a.rs#Core").unwrap();
        assert_eq!(core.lines, Some([3, 9]));
        assert!(core.signals.errors > 0.0 && core.signals.warnings == 0.0, "only the in-range diagnostic counts");
        assert!(snap.target("leaf.rs").is_none());
    }

    #[test]
    fn the_hash_is_stable_and_sensitive() {
        let a = compute(&input(), |_| false);
        let b = compute(&input(), |_| false);
        assert_eq!(a.canonical_bytes(), b.canonical_bytes());
        assert_eq!(a.frame_hash().len(), 64);
        let mut changed = input();
        changed.editor.insert("leaf.rs".into());
        assert_ne!(compute(&changed, |_| false).frame_hash(), a.frame_hash());
    }

    proptest::proptest! {
        #[test]
        fn input_order_does_not_change_the_bytes(seed in proptest::prelude::any::<u64>()) {
            let base = input();
            let mut shuffled = base.clone();
            // A deterministic shuffle driven by the seed.
            let mut state = seed | 1;
            let mut next = move |n: usize| { state ^= state << 13; state ^= state >> 7; state ^= state << 17; (state % n as u64) as usize };
            for i in (1..shuffled.files.len()).rev() { let j = next(i + 1); shuffled.files.swap(i, j); }
            for i in (1..shuffled.diagnostics.len()).rev() { let j = next(i + 1); shuffled.diagnostics.swap(i, j); }
            shuffled.symbols.push(SymbolFacts { path: "b.rs".into(), name: "X".into(), start_line: 1, end_line: 2, refs: None });
            let mut with_x = base.clone();
            with_x.symbols.insert(0, SymbolFacts { path: "b.rs".into(), name: "X".into(), start_line: 1, end_line: 2, refs: None });
            let named = |id: &str| id == "a.rs";
            proptest::prop_assert_eq!(compute(&with_x, named).canonical_bytes(), compute(&shuffled, named).canonical_bytes());
        }
    }

    #[test]
    fn more_than_the_bound_is_truncated_deterministically() {
        let mut big = SnapshotInput::default();
        for i in 0..(weights::MAX_TARGETS + 10) {
            big.files.push(file(&format!("f{i:05}.rs"), true, None));
        }
        let snap = compute(&big, |_| false);
        assert_eq!(snap.targets.len(), weights::MAX_TARGETS);
        assert_eq!(snap.truncated, 10);
        // Equal saliency: ascending id decides, so the first 4096 names are kept.
        assert_eq!(snap.targets[0].id, "f00000.rs");
        assert_eq!(snap.targets.last().unwrap().id, format!("f{:05}.rs", weights::MAX_TARGETS - 1));
    }
}

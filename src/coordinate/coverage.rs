//! Gathering what an aggregate run's goal concerns, for its plan (the rules:
//! [`crate::devrun::cover`]): the team's check run once on the run's base, the seeds' neighbours
//! from the configured SCIP index and from the seeds' own import statements
//! ([`crate::devrun::imports`]; module names in the text for a language without an import reader).
//!
//! Nothing here writes: the check runs in a scratch checkout of the base's tree
//! ([`crate::pool::check::base_run`]), with `GIT_MAS_BASELINE=1` as in a differential
//! endorsement, and its result is kept for the run's differentials.

use crate::attention::frame::{FrameError, tree_files};
use crate::attention::snapshot::Snapshot;
use crate::devrun::cover::{self, NameIndex, Via};
use crate::devrun::imports::{self, Import};
use crate::devrun::slices::Coverage;
use crate::pool::PoolError;
use crate::pool::check::{CheckRun, base_run};
use crate::store::Store;
use gix::ObjectId;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The largest file read for its imports: a larger file is not read.
const MAX_NAMES_READ: usize = 1 << 20;

/// The base's tree and its files (without git-mas's own and generated files).
fn base_files(store: &Store, base: ObjectId) -> Result<(ObjectId, BTreeMap<String, ObjectId>), FrameError> {
    let repo = store.repo();
    let git = |what: &str, e: &dyn std::fmt::Display| FrameError::Git {
        context: format!("{what} {base}"),
        reason: e.to_string(),
    };
    let tree = repo
        .find_object(base)
        .map_err(|e| git("reading the base", &e))?
        .peel_to_tree()
        .map_err(|e| git("reading the tree of", &e))?
        .id;
    let mut files = BTreeMap::new();
    let mut bad = 0;
    tree_files(repo, tree, "", &mut files, &mut bad)?;
    files.retain(|path, _| !path.starts_with(".mas/") && !crate::devrun::slices::is_generated(path));
    Ok((tree, files))
}

/// A failing test as its section of the output names it (`test_total`), by its whole pytest
/// node id (`tests/test_x.py::test_total`) when the run's report has exactly one that ends so.
fn node_id(run: &CheckRun, test: &str) -> String {
    let suffix = format!("::{test}");
    let mut ids = run.report.iter().flat_map(|r| &r.failed).map(|(_, id)| id).filter(|id| id.ends_with(&suffix));
    match (ids.next(), ids.next()) {
        (Some(id), None) => id.clone(),
        _ => test.to_string(),
    }
}

/// Runs `command` on `base`'s tree (a commit), with `GIT_MAS_BASELINE=1`, killed after `timeout`;
/// kept for the run's differential endorsements, which run the same ([`base_run`]).
pub fn base_check(
    store: &Store,
    base: ObjectId,
    command: &str,
    timeout: Option<Duration>,
) -> Result<CheckRun, PoolError> {
    let repo = store.repo();
    let tree = crate::pool::check::tree_of(repo, base)?;
    base_run(repo, tree, command, &[], timeout)
}

/// What the goal concerns on `base`: the seeds ([`cover::seeds`]: from `snapshot` and, when it
/// failed, the base's `check`) and their neighbours (SCIP edges from `scip`, the index's bytes;
/// module names in each seed's text).
pub fn coverage(
    store: &Store,
    base: ObjectId,
    snapshot: &Snapshot,
    check: Option<&CheckRun>,
    scip: Option<&[u8]>,
) -> Result<Coverage, FrameError> {
    let (_, files) = base_files(store, base)?;
    let names: BTreeSet<String> = files.keys().cloned().collect();
    let mut check_named = match check {
        Some(run) if !run.summary.passed() => crate::pool::testfiles::check_files(
            &String::from_utf8_lossy(&run.output),
            run.report.as_ref(),
            &run.dir.display().to_string(),
            &names,
        ),
        _ => BTreeMap::new(),
    };
    let mut traced: BTreeMap<String, Vec<(String, Option<u32>)>> = match check {
        Some(run) if !run.summary.passed() => crate::pool::testfiles::traced_files(
            &String::from_utf8_lossy(&run.output),
            &run.dir.display().to_string(),
            &names,
        )
        .into_iter()
        .map(|(file, list)| (file, list.into_iter().map(|t| (node_id(run, &t.test), t.line)).collect()))
        .collect(),
        _ => BTreeMap::new(),
    };
    // The check's own script (`sh check.sh`) is named in its output for its own lines: not work.
    if let Some(run) = check {
        for word in run.summary.command.split_whitespace() {
            check_named.remove(word.trim_start_matches("./"));
            traced.remove(word.trim_start_matches("./"));
        }
    }
    let seeds = cover::seeds(snapshot, &check_named, &traced);
    // SCIP edges both ways, when an index is given and reads.
    let edges = scip.and_then(|b| crate::signals::scip::read_scip_edges(b).ok()).unwrap_or_default();
    let index = NameIndex::new(names.iter().map(String::as_str));
    let repo = store.repo();
    let read = |path: &str| -> Option<String> {
        let blob = repo.find_object(*files.get(path)?).ok()?;
        (blob.data.len() <= MAX_NAMES_READ).then(|| String::from_utf8(blob.data.to_vec()).ok()).flatten()
    };
    let imports_repo = imports::Repo::new(&names, &read);
    let mut neighbours: BTreeMap<String, Vec<(String, Via)>> = BTreeMap::new();
    for seed in seeds.keys() {
        let mut list: Vec<(String, Via)> = Vec::new();
        let mut push = |file: &String, via: Via| {
            if names.contains(file) && file != seed && !list.iter().any(|(f, _)| f == file) {
                list.push((file.clone(), via));
            }
        };
        for file in edges.get(seed).into_iter().flatten() {
            push(file, Via::References);
        }
        for (from, to) in &edges {
            if to.contains(seed) {
                push(from, Via::ReferencedBy);
            }
        }
        if let Some(text) = read(seed) {
            // Real import statements where the language has a reader; module names elsewhere.
            match imports::imports(&imports_repo, seed, &text) {
                Some(found) => {
                    for import in found {
                        match import {
                            Import::Module(file) => push(&file, Via::Imports),
                            Import::Through { file, hub, name } => push(&file, Via::Through { hub, name }),
                        }
                    }
                }
                None => {
                    for file in index.named_in(seed, &text) {
                        push(&file, Via::NamedBySeed);
                    }
                }
            }
        }
        if !list.is_empty() {
            neighbours.insert(seed.clone(), list);
        }
    }
    Ok(Coverage { seeds, neighbours })
}

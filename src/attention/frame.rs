//! Gathering a snapshot's inputs from the repository, and storing and verifying frames.
//!
//! The snapshot is a pure function of: the base commit (`HEAD`) and its tree, the working-tree
//! changes the producer saw (each changed file's content as a blob id), first-parent history from
//! the base, the task text, a SCIP index, diagnostics files and an editor list. A **frame** is a
//! record in the shared chain `refs/mas/frame` whose commit tree holds `snapshot.json` and every
//! one of those inputs (`inputs/…`, including the changed files' contents), so that any agent in
//! any clone can re-derive the snapshot and check the hash: [`verify`].
//!
//! Decisions:
//! - The producer's absolute repository root is needed to map absolute diagnostic paths, but it
//!   differs between worktrees of one clone, so it is stored in the frame record (for `--verify`)
//!   and is *not* part of the hashed snapshot.
//! - Diagnostics files are processed in order of their content hash, so listing them in another
//!   order gives the same bytes.
//! - Files whose names are not UTF-8 cannot be targets; they are counted, not listed.
//! - Input files are read up to a bound per kind ([`InputKind::limit`]: SCIP 1 GiB, diagnostics
//!   256 MiB, task file and editor list 1 MiB), with `take(limit + 1)`, so a device or a FIFO named
//!   by mistake fails at the bound with an error naming the file rather than exhausting memory.
//! - Publishing compares with the current frame's hash under the same compare-and-swap that appends,
//!   so an unchanged snapshot never adds a record, even when two producers race.

use super::snapshot::{
    DiagFact, FileFacts, InputIds, Skipped, Snapshot, SnapshotInput, Sources, SymbolFacts, compute, sha256_hex,
};
use super::weights;
use crate::identity::AgentKey;
use crate::signals;
use crate::store::{Entry, Store, StoreError};
use gix::ObjectId;
use gix::bstr::ByteSlice;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The shared chain of frames.
pub const FRAME_REF: &str = "refs/mas/frame";
/// The record kind of a frame.
pub const FRAME_KIND: &str = "frame";

/// Errors gathering inputs, computing, publishing or verifying.
#[derive(Debug, Error)]
pub enum FrameError {
    /// A store operation failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An input file could not be read.
    #[error("cannot read {}", path.display())]
    ReadInput {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// An input file is larger than its kind's limit (see [`InputKind::limit`]); nothing past the
    /// limit was read.
    #[error(
        "the {} {} is larger than {}, the most a snapshot reads from a {}; {}",
        kind.name(), path.display(), human_bytes(kind.limit()), kind.name(), kind.remedy()
    )]
    InputTooLarge { path: PathBuf, kind: InputKind },
    /// The SCIP index could not be decoded.
    #[error("the SCIP index {origin} cannot be read: {reason}")]
    Scip { origin: String, reason: String },
    /// A diagnostics file could not be read.
    #[error("the diagnostics file {origin} cannot be read: {reason}")]
    Diagnostics { origin: String, reason: String },
    /// A git operation failed.
    #[error("git: {context}: {reason}")]
    Git { context: String, reason: String },
    /// No frame has been published.
    #[error("no frame has been published yet (refs/mas/frame is empty)")]
    NoFrame,
    /// A stored frame is missing a part.
    #[error("frame {commit} is incomplete: {what}")]
    Incomplete { commit: String, what: String },
}

fn git<E: std::fmt::Display>(context: &str) -> impl FnOnce(E) -> FrameError + '_ {
    move |e| FrameError::Git { context: context.to_string(), reason: e.to_string() }
}

/// Which snapshot input a file is: it decides the file's size limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A SCIP index ([`signals::scip::MAX_SCIP_BYTES`]).
    Scip,
    /// A diagnostics file ([`signals::diagnostics::MAX_DIAGNOSTICS_BYTES`]).
    Diagnostics,
    /// A task file ([`MAX_TASK_BYTES`]).
    Task,
    /// A file listing the editor's open files ([`MAX_EDITOR_LIST_BYTES`]).
    EditorList,
}

/// The largest task file read: 1 MiB. A task is prose naming what to do; a megabyte is a book.
pub const MAX_TASK_BYTES: u64 = 1 << 20;
/// The largest editor list read: 1 MiB, some 20,000 repository paths.
pub const MAX_EDITOR_LIST_BYTES: u64 = 1 << 20;

impl InputKind {
    /// The most bytes read from such a file.
    pub fn limit(self) -> u64 {
        match self {
            InputKind::Scip => signals::scip::MAX_SCIP_BYTES,
            InputKind::Diagnostics => signals::diagnostics::MAX_DIAGNOSTICS_BYTES,
            InputKind::Task => MAX_TASK_BYTES,
            InputKind::EditorList => MAX_EDITOR_LIST_BYTES,
        }
    }

    /// How the input is named in messages.
    pub fn name(self) -> &'static str {
        match self {
            InputKind::Scip => "SCIP index",
            InputKind::Diagnostics => "diagnostics file",
            InputKind::Task => "task file",
            InputKind::EditorList => "list of open files",
        }
    }

    fn remedy(self) -> &'static str {
        match self {
            InputKind::Scip => "check the path, or index a narrower part of the repository",
            InputKind::Diagnostics => "check the path, or keep only the current run's errors and warnings",
            InputKind::Task => "check the path; a task is a short text",
            InputKind::EditorList => "check the path; the list names open files, one per line",
        }
    }
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n => format!("{n} bytes"),
    }
}

/// Reads a whole input file, but never more than its kind's limit plus one byte: a regular file
/// over the limit is refused from its size alone, and a device or FIFO (`/dev/zero`) stops at the
/// limit instead of exhausting memory.
pub fn read_input(path: &Path, kind: InputKind) -> Result<Vec<u8>, FrameError> {
    use std::io::Read;
    let limit = kind.limit();
    let io = |source| FrameError::ReadInput { path: path.into(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
    if size.is_some_and(|n| n > limit) {
        return Err(FrameError::InputTooLarge { path: path.into(), kind });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size.unwrap_or(0)).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(FrameError::InputTooLarge { path: path.into(), kind });
    }
    Ok(bytes)
}

/// The inputs a user names on the command line (or in git config).
#[derive(Debug, Clone, Default)]
pub struct InputFiles {
    /// Task text.
    pub task: Option<String>,
    /// A SCIP index, with the name it was read from.
    pub scip: Option<(String, Vec<u8>)>,
    /// Diagnostics files, with their names.
    pub diagnostics: Vec<(String, Vec<u8>)>,
    /// Open files (repo-relative).
    pub editor: Vec<String>,
}

impl InputFiles {
    /// Reads the named files.
    pub fn read(
        task: Option<String>,
        scip: Option<&Path>,
        diagnostics: &[PathBuf],
        editor: Vec<String>,
    ) -> Result<Self, FrameError> {
        let scip = match scip {
            Some(p) => Some((p.display().to_string(), read_input(p, InputKind::Scip)?)),
            None => None,
        };
        let mut diags = Vec::new();
        for p in diagnostics {
            diags.push((p.display().to_string(), read_input(p, InputKind::Diagnostics)?));
        }
        Ok(InputFiles { task, scip, diagnostics: diags, editor })
    }
}

/// How one path differs between the base commit and the working tree (including the index).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeChange {
    /// Repo-relative path.
    pub path: String,
    /// `modified`, `added` or `deleted`.
    pub status: String,
    /// The working-tree content's blob id (absent for a deletion).
    pub blob: Option<String>,
}

/// The tree the producer saw: the base commit overlaid with working-tree changes.
#[derive(Debug, Clone, Default)]
pub struct TreeView {
    /// The base commit (`HEAD`), if the repository has commits.
    pub base: Option<ObjectId>,
    /// Every file and its content's blob id.
    pub files: BTreeMap<String, ObjectId>,
    /// The changes, sorted by path.
    pub changes: Vec<WorktreeChange>,
    /// Working-tree file contents by blob id, for changed files (to store them in a frame).
    pub contents: BTreeMap<ObjectId, Vec<u8>>,
    /// Paths that are not UTF-8.
    pub non_utf8_paths: u64,
}

impl TreeView {
    /// The canonical bytes of the change list (an input of the snapshot).
    pub fn changes_bytes(&self) -> Vec<u8> {
        let value = serde_json::json!({
            "base": self.base.map(|b| b.to_string()),
            "changes": self.changes,
        });
        crate::store::canonical::to_canonical_bytes(&value)
    }
}

/// Lists a tree's files recursively (blobs, executables and symlinks), skipping non-UTF-8 names.
pub fn tree_files(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: &str,
    out: &mut BTreeMap<String, ObjectId>,
    bad: &mut u64,
) -> Result<(), FrameError> {
    let tree = repo.find_tree(tree).map_err(git("reading a tree"))?;
    for entry in tree.iter() {
        let entry = entry.map_err(git("decoding a tree"))?;
        let Ok(name) = entry.filename().to_str() else {
            *bad += 1;
            continue;
        };
        let path = if prefix.is_empty() { name.to_string() } else { format!("{prefix}/{name}") };
        let mode = entry.mode();
        if mode.is_tree() {
            tree_files(repo, entry.object_id(), &path, out, bad)?;
        } else if mode.is_blob() || mode.is_link() {
            out.insert(path, entry.object_id());
        }
    }
    Ok(())
}

/// Observes the working tree: `HEAD`'s files overlaid with staged, unstaged and untracked
/// (not ignored) changes. Never writes anything.
pub fn observe(store: &Store) -> Result<TreeView, FrameError> {
    let repo = store.repo();
    let workdir = store.workdir()?.to_path_buf();
    let base = match repo.head_id() {
        Ok(id) => Some(id.detach()),
        Err(_) => None,
    };
    let mut view = TreeView { base, ..Default::default() };
    if let Some(base) = base {
        let tree = repo.find_commit(base).map_err(git("reading HEAD"))?.tree_id().map_err(git("reading HEAD"))?;
        tree_files(repo, tree.detach(), "", &mut view.files, &mut view.non_utf8_paths)?;
    }
    let (touched, non_utf8) = touched_paths(repo)?;
    view.non_utf8_paths += non_utf8;
    for path in touched {
        let Some((change, content)) = change_at(repo, &workdir, &path, view.files.get(&path).copied())? else {
            continue;
        };
        match content {
            Some((id, bytes)) => {
                view.files.insert(path, id);
                view.contents.insert(id, bytes);
            }
            None => {
                view.files.remove(&path);
            }
        }
        view.changes.push(change);
    }
    view.changes.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(view)
}

/// The paths `git status` would show as staged, unstaged or untracked (not ignored; untracked
/// files one by one, not collapsed into their directory), and how many were not UTF-8.
fn touched_paths(repo: &gix::Repository) -> Result<(BTreeSet<String>, u64), FrameError> {
    let mut touched: BTreeSet<String> = BTreeSet::new();
    let mut non_utf8 = 0;
    let status = repo
        .status(gix::progress::Discard)
        .map_err(git("starting status"))?
        .untracked_files(gix::status::UntrackedFiles::Files);
    let iter = status.into_iter(Vec::<gix::bstr::BString>::new()).map_err(git("running status"))?;
    for item in iter {
        let item = item.map_err(git("reading status"))?;
        match item.location().to_str() {
            Ok(p) => {
                touched.insert(p.to_string());
            }
            Err(_) => non_utf8 += 1,
        }
    }
    Ok((touched, non_utf8))
}

/// The change at a touched `path` against its blob in the base (`in_base`), with the new content
/// and its id when the file is there; `None` when there is no change to list (content equal to the
/// base's, a directory or special file, or a deletion of a file the base does not have).
#[allow(clippy::type_complexity)]
fn change_at(
    repo: &gix::Repository,
    workdir: &Path,
    path: &str,
    in_base: Option<ObjectId>,
) -> Result<Option<(WorktreeChange, Option<(ObjectId, Vec<u8>)>)>, FrameError> {
    let abs = workdir.join(path);
    match std::fs::symlink_metadata(&abs) {
        Ok(m) if m.is_file() || m.is_symlink() => {
            let bytes = if m.is_symlink() {
                std::fs::read_link(&abs).map(|t| t.to_string_lossy().into_owned().into_bytes())
            } else {
                std::fs::read(&abs)
            }
            .map_err(|source| FrameError::ReadInput { path: abs.clone(), source })?;
            let id =
                gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, &bytes).map_err(git("hashing"))?;
            if in_base == Some(id) {
                // Staged and then restored, or a stat-only change: content equals the base.
                return Ok(None);
            }
            let status = if in_base.is_some() { "modified" } else { "added" };
            let change = WorktreeChange { path: path.to_string(), status: status.into(), blob: Some(id.to_string()) };
            Ok(Some((change, Some((id, bytes)))))
        }
        Ok(_) => Ok(None), // a directory (untracked, collapsed) or a special file
        Err(_) if in_base.is_none() => Ok(None),
        Err(_) => Ok(Some((WorktreeChange { path: path.to_string(), status: "deleted".into(), blob: None }, None))),
    }
}

/// How the working tree stands against a frame's snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Since {
    /// HEAD and the working tree's changes are what the snapshot saw.
    Same,
    /// HEAD is another commit than the snapshot's base.
    HeadMoved,
    /// HEAD is the same, the working tree's changes are not.
    WorktreeChanged,
}

/// Whether HEAD or the working tree moved on since the frame in `commit` was computed: HEAD
/// against the base the frame recorded, then the working tree's changes (as [`observe`] lists
/// them, looking up only the touched paths in HEAD) against the change list the frame recorded
/// (`inputs/worktree.json`). `None` when that cannot be told: no working tree, or a frame without
/// that file.
pub fn since(store: &Store, commit: ObjectId) -> Result<Option<Since>, FrameError> {
    #[derive(Deserialize)]
    struct Then {
        base: Option<String>,
    }
    let Ok(workdir) = store.workdir().map(Path::to_path_buf) else { return Ok(None) };
    let Some(recorded) = frame_file(store, commit, "inputs/worktree.json")? else { return Ok(None) };
    let Ok(then) = serde_json::from_slice::<Then>(&recorded) else { return Ok(None) };
    let repo = store.repo();
    let base = repo.head_id().ok().map(|id| id.detach());
    if then.base != base.map(|b| b.to_string()) {
        return Ok(Some(Since::HeadMoved));
    }
    let tree = match base {
        Some(b) => Some(repo.find_commit(b).map_err(git("reading HEAD"))?.tree().map_err(git("reading HEAD"))?),
        None => None,
    };
    let (touched, _) = touched_paths(repo)?;
    let mut view = TreeView { base, ..Default::default() };
    for path in touched {
        let in_base = match &tree {
            Some(t) => t
                .lookup_entry_by_path(&path)
                .map_err(git("reading HEAD"))?
                .filter(|e| e.mode().is_blob() || e.mode().is_link())
                .map(|e| e.object_id()),
            None => None,
        };
        if let Some((change, _)) = change_at(repo, &workdir, &path, in_base)? {
            view.changes.push(change);
        }
    }
    view.changes.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Some(if view.changes_bytes() == recorded { Since::Same } else { Since::WorktreeChanged }))
}

/// Changed paths between two trees (by id; no rename detection), descending only into subtrees
/// whose ids differ. In process: a report lists each proposal's paths without a `git` per
/// proposal.
pub(crate) fn changed_paths(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    prefix: &str,
    out: &mut Vec<String>,
) -> Result<(), FrameError> {
    if old == new {
        return Ok(());
    }
    let entries = |id: Option<ObjectId>| -> Result<BTreeMap<Vec<u8>, (ObjectId, bool)>, FrameError> {
        let mut map = BTreeMap::new();
        if let Some(id) = id {
            let tree = repo.find_tree(id).map_err(git("reading a tree"))?;
            for e in tree.iter() {
                let e = e.map_err(git("decoding a tree"))?;
                map.insert(e.filename().to_vec(), (e.object_id(), e.mode().is_tree()));
            }
        }
        Ok(map)
    };
    let (a, b) = (entries(old)?, entries(new)?);
    let names: BTreeSet<&Vec<u8>> = a.keys().chain(b.keys()).collect();
    for name in names {
        let (x, y) = (a.get(name), b.get(name));
        if x == y {
            continue;
        }
        let Ok(name) = name.to_str() else { continue };
        let path = if prefix.is_empty() { name.to_string() } else { format!("{prefix}/{name}") };
        let sub = |e: Option<&(ObjectId, bool)>| e.filter(|(_, t)| *t).map(|(id, _)| *id);
        let (xs, ys) = (sub(x), sub(y));
        if xs.is_some() || ys.is_some() {
            changed_paths(repo, xs, ys, &path, out)?;
        }
        let blob = |e: Option<&(ObjectId, bool)>| e.filter(|(_, t)| !*t).map(|(id, _)| *id);
        if blob(x) != blob(y) {
            out.push(path);
        }
    }
    Ok(())
}

/// For each path, the number of first-parent commits since it last changed, walking at most
/// [`weights::RECENCY_WINDOW`] commits back from `base`.
pub fn recency_walk(repo: &gix::Repository, base: Option<ObjectId>) -> Result<BTreeMap<String, usize>, FrameError> {
    let mut out = BTreeMap::new();
    let mut next = base;
    let mut k = 0;
    while let Some(id) = next {
        if k >= weights::RECENCY_WINDOW {
            break;
        }
        let commit = repo.find_commit(id).map_err(git("reading history"))?;
        let tree = commit.tree_id().map_err(git("reading history"))?.detach();
        let parent = commit.parent_ids().next().map(|p| p.detach());
        let parent_tree = match parent {
            Some(p) => Some(
                repo.find_commit(p)
                    .map_err(git("reading history"))?
                    .tree_id()
                    .map_err(git("reading history"))?
                    .detach(),
            ),
            None => None,
        };
        let mut changed = Vec::new();
        changed_paths(repo, parent_tree, Some(tree), "", &mut changed)?;
        for path in changed {
            out.entry(path).or_insert(k);
        }
        next = parent;
        k += 1;
    }
    Ok(out)
}

/// Reads a blob's bytes.
fn blob_bytes(repo: &gix::Repository, id: ObjectId) -> Result<Vec<u8>, FrameError> {
    Ok(repo.find_object(id).map_err(git("reading a blob"))?.data.clone())
}

/// Builds the snapshot input from an observed tree and the named inputs. `root` is the absolute
/// repository root used to map absolute diagnostic paths.
pub fn build_input(
    repo: &gix::Repository,
    view: &TreeView,
    files: &InputFiles,
    root: &Path,
) -> Result<SnapshotInput, FrameError> {
    let scip = files.scip.as_ref().map(|(_, bytes)| signals::scip::read_scip(bytes));
    build_input_with(repo, view, files, root, scip)
}

/// [`build_input`] with the SCIP index of `files` already read (`scip` is `read_scip` of its bytes),
/// so that the caller can read it while the working tree is observed.
fn build_input_with(
    repo: &gix::Repository,
    view: &TreeView,
    files: &InputFiles,
    root: &Path,
    scip: Option<Result<signals::ScipCounts, signals::ScipError>>,
) -> Result<SnapshotInput, FrameError> {
    let mut input = SnapshotInput {
        base: view.base.map(|b| b.to_string()),
        files: file_facts(repo, view)?,
        sources: Sources { recency: "git".into(), ..Default::default() },
        inputs: InputIds { worktree: format!("sha256:{}", sha256_hex(&view.changes_bytes())), ..Default::default() },
        skipped: Skipped { non_utf8_paths: view.non_utf8_paths, ..Default::default() },
        ..Default::default()
    };
    let covered = match (&files.scip, scip) {
        (Some((origin, bytes)), Some(counts)) => add_scip(&mut input, view, origin, bytes, counts)?,
        _ => BTreeSet::new(),
    };
    add_tree_sitter_symbols(&mut input, repo, view, &covered)?;
    add_diagnostics(&mut input, view, files, root)?;
    add_task_and_editor(&mut input, files);
    Ok(input)
}

/// History and working tree: every file of the view, whether the producer touched it, and the
/// first-parent commits since it last changed.
fn file_facts(repo: &gix::Repository, view: &TreeView) -> Result<Vec<FileFacts>, FrameError> {
    let since = recency_walk(repo, view.base)?;
    let touched: BTreeSet<&str> = view.changes.iter().map(|c| c.path.as_str()).collect();
    Ok(view
        .files
        .keys()
        .map(|p| FileFacts {
            path: p.clone(),
            touched: touched.contains(p.as_str()),
            commits_since: since.get(p).copied(),
        })
        .collect())
}

/// The SCIP index's document references and symbols, for files in the view; returns the
/// documents it covers.
fn add_scip(
    input: &mut SnapshotInput,
    view: &TreeView,
    origin: &str,
    bytes: &[u8],
    counts: Result<signals::ScipCounts, signals::ScipError>,
) -> Result<BTreeSet<String>, FrameError> {
    let counts = counts.map_err(|e| FrameError::Scip { origin: origin.to_string(), reason: e.to_string() })?;
    input.sources.centrality = Some("scip".into());
    input.sources.symbols.push("scip".into());
    input.inputs.scip = Some(format!("sha256:{}", sha256_hex(bytes)));
    input.skipped.scip_local_symbols = counts.skipped_local;
    let mut covered = BTreeSet::new();
    for (path, refs) in &counts.documents {
        if view.files.contains_key(path) {
            input.doc_refs.insert(path.clone(), *refs);
            covered.insert(path.clone());
        } else {
            input.skipped.scip_missing_documents += 1;
        }
    }
    for (id, s) in &counts.symbols {
        let Some((path, name)) = id.split_once('#') else { continue };
        if !view.files.contains_key(path) {
            continue;
        }
        input.symbols.push(SymbolFacts {
            path: path.into(),
            name: name.into(),
            start_line: s.start_line,
            end_line: s.end_line,
            refs: Some(s.refs_from_other_documents),
        });
    }
    Ok(covered)
}

/// Rust files no index covers: symbols from tree-sitter.
fn add_tree_sitter_symbols(
    input: &mut SnapshotInput,
    repo: &gix::Repository,
    view: &TreeView,
    covered: &BTreeSet<String>,
) -> Result<(), FrameError> {
    let mut used_tree_sitter = false;
    for (path, id) in &view.files {
        if !path.ends_with(".rs") || covered.contains(path) {
            continue;
        }
        let bytes = match view.contents.get(id) {
            Some(b) => b.clone(),
            None => blob_bytes(repo, *id)?,
        };
        match signals::rust_items::rust_items(&bytes) {
            Ok(items) => {
                used_tree_sitter = true;
                input.symbols.extend(items.into_iter().map(|item| SymbolFacts {
                    path: path.clone(),
                    name: item.name,
                    start_line: item.start_line,
                    end_line: item.end_line,
                    refs: None,
                }));
            }
            Err(_) => input.skipped.symbol_extraction_failures += 1,
        }
    }
    if used_tree_sitter {
        input.sources.symbols.push("tree-sitter-rust".into());
    }
    Ok(())
}

/// Diagnostics on files in the view, the files read in content-hash order.
fn add_diagnostics(
    input: &mut SnapshotInput,
    view: &TreeView,
    files: &InputFiles,
    root: &Path,
) -> Result<(), FrameError> {
    let mut diag_files: Vec<(String, &String, &Vec<u8>)> =
        files.diagnostics.iter().map(|(o, b)| (sha256_hex(b), o, b)).collect();
    diag_files.sort();
    let mut formats = BTreeSet::new();
    for (hash, origin, bytes) in diag_files {
        let report = signals::diagnostics::read_diagnostics(bytes, root)
            .map_err(|e| FrameError::Diagnostics { origin: origin.clone(), reason: e.to_string() })?;
        formats.insert(format_name(&report.format).to_string());
        input.inputs.diagnostics.push(format!("sha256:{hash}"));
        input.skipped.diagnostics_outside_repo += report.outside_repo;
        input.skipped.diagnostics_other += report.skipped;
        for d in report.diagnostics {
            if !view.files.contains_key(&d.path) {
                input.skipped.diagnostics_missing_files += 1;
                continue;
            }
            let error = matches!(d.severity, signals::diagnostics::Severity::Error);
            input.diagnostics.push(DiagFact { path: d.path, line: d.line, error });
        }
    }
    input.sources.diagnostics = formats.into_iter().collect();
    Ok(())
}

/// The task text's identity and the editor's open files.
fn add_task_and_editor(input: &mut SnapshotInput, files: &InputFiles) {
    if let Some(task) = &files.task {
        input.sources.task = Some("text".into());
        input.inputs.task = Some(task_id(task));
    }
    input.editor = files.editor.iter().map(|p| normalize_rel(p)).collect();
    if !files.editor.is_empty() {
        input.sources.editor = Some("list".into());
        input.inputs.editor = Some(format!("sha256:{}", sha256_hex(editor_bytes(&input.editor).as_slice())));
    }
}

fn format_name(f: &signals::diagnostics::DiagFormat) -> &'static str {
    match f {
        signals::diagnostics::DiagFormat::Cargo => "cargo",
        signals::diagnostics::DiagFormat::Sarif => "sarif",
        signals::diagnostics::DiagFormat::JsonLines => "json-lines",
    }
}

fn normalize_rel(p: &str) -> String {
    p.trim().trim_start_matches("./").replace('\\', "/")
}

fn editor_bytes(editor: &BTreeSet<String>) -> Vec<u8> {
    let mut out = Vec::new();
    for p in editor {
        out.extend_from_slice(p.as_bytes());
        out.push(b'\n');
    }
    out
}

/// Computes the snapshot of the working tree as it is now.
///
/// The SCIP index (a pure function of its bytes, and the largest input) is read on a thread of its
/// own while the working tree is observed: on a 20,000-file repository with a 15 MB index the two
/// take comparable time (`BENCHMARKS.md`).
pub fn snapshot_now(store: &Store, files: &InputFiles) -> Result<(Snapshot, TreeView), FrameError> {
    let (view, scip) = std::thread::scope(|scope| {
        let scip = files.scip.as_ref().map(|(_, bytes)| scope.spawn(move || signals::scip::read_scip(bytes)));
        let view = observe(store);
        // A panic in the reader is a bug; surface it as one rather than as a missing index.
        let scip = scip.map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        (view, scip)
    });
    let view = view?;
    let root = std::fs::canonicalize(store.workdir()?)
        .unwrap_or_else(|_| store.workdir().unwrap_or(Path::new(".")).to_path_buf());
    let input = build_input_with(store.repo(), &view, files, &root, scip)?;
    let task = files.task.clone().unwrap_or_default();
    let snapshot = compute(&input, |id| !task.is_empty() && signals::task::named_by_task(&task, id));
    Ok((snapshot, view))
}

/// The current frame: its record commit, hash and snapshot.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The frame record's commit.
    pub commit: ObjectId,
    /// The frame hash.
    pub hash: String,
    /// Who published it.
    pub publisher: String,
    /// The snapshot.
    pub snapshot: Snapshot,
}

/// The input id of a task text, as a snapshot's `inputs.task` names it.
pub fn task_id(task: &str) -> String {
    format!("sha256:{}", sha256_hex(task.as_bytes()))
}

/// The frame hash a frame record names (empty when it names none).
pub fn recorded_hash(record: &crate::store::record::Record) -> String {
    record.payload.get("hash").and_then(|h| h.as_str()).unwrap_or_default().to_string()
}

/// Reads the frame stored in `commit`.
pub fn read_frame(store: &Store, commit: ObjectId) -> Result<Frame, FrameError> {
    let entry = store.entry(commit)?;
    let record =
        entry.record.map_err(|e| FrameError::Incomplete { commit: commit.to_string(), what: e.to_string() })?;
    let hash = recorded_hash(&record);
    let bytes = frame_file(store, commit, "snapshot.json")?
        .ok_or_else(|| FrameError::Incomplete { commit: commit.to_string(), what: "snapshot.json".into() })?;
    let snapshot: Snapshot = serde_json::from_slice(&bytes)
        .map_err(|e| FrameError::Incomplete { commit: commit.to_string(), what: format!("snapshot.json: {e}") })?;
    Ok(Frame { commit, hash, publisher: record.agent, snapshot })
}

/// The current frame's record: the newest frame record that verifies ([`Store::newest_verified`]).
/// A frame record that does not verify (unsigned, by an agent not on the roster, a spoof or a
/// replay) never becomes current, wherever it sits in the chain.
pub fn current_frame_entry(store: &Store) -> Result<Option<Entry>, FrameError> {
    if store.tip(FRAME_REF)?.is_none() {
        return Ok(None);
    }
    let roster = store.roster()?;
    Ok(store.newest_verified(FRAME_REF, &roster)?)
}

/// The current frame's record commit and hash, without reading its snapshot.
pub fn current_frame_hash(store: &Store) -> Result<Option<(ObjectId, String)>, FrameError> {
    let Some(entry) = current_frame_entry(store)? else { return Ok(None) };
    let commit = entry.commit;
    let record =
        entry.record.map_err(|e| FrameError::Incomplete { commit: commit.to_string(), what: e.to_string() })?;
    let hash = recorded_hash(&record);
    Ok(Some((commit, hash)))
}

/// The current frame, if one was published.
pub fn current_frame(store: &Store) -> Result<Option<Frame>, FrameError> {
    match current_frame_entry(store)? {
        Some(entry) => Ok(Some(read_frame(store, entry.commit)?)),
        None => Ok(None),
    }
}

/// A file from a frame commit's tree.
pub fn frame_file(store: &Store, commit: ObjectId, path: &str) -> Result<Option<Vec<u8>>, FrameError> {
    let repo = store.repo();
    let tree = repo.find_commit(commit).map_err(git("reading a frame"))?.tree().map_err(git("reading a frame"))?;
    match tree.lookup_entry_by_path(path).map_err(git("reading a frame"))? {
        Some(e) => Ok(Some(e.object().map_err(git("reading a frame"))?.data.clone())),
        None => Ok(None),
    }
}

/// The id of `path`'s blob in the frame record `commit`, without reading the blob.
pub fn frame_file_id(store: &Store, commit: ObjectId, path: &str) -> Result<Option<ObjectId>, FrameError> {
    let repo = store.repo();
    let tree = repo.find_commit(commit).map_err(git("reading a frame"))?.tree().map_err(git("reading a frame"))?;
    Ok(tree.lookup_entry_by_path(path).map_err(git("reading a frame"))?.map(|e| e.object_id()))
}

/// The outcome of publishing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Published {
    /// A new frame record.
    New { commit: ObjectId, hash: String, previous: Option<String> },
    /// The current frame already has this hash; nothing was written.
    Unchanged { hash: String },
}

/// Publishes `snapshot` as the current frame unless the current frame has the same hash.
pub fn publish(
    store: &Store,
    agent: &str,
    key: &AgentKey,
    snapshot: &Snapshot,
    view: &TreeView,
    files: &InputFiles,
) -> Result<Published, FrameError> {
    let repo = store.repo();
    let hash = snapshot.frame_hash();
    let write = |bytes: &[u8]| -> Result<ObjectId, FrameError> {
        Ok(repo.write_blob(bytes).map_err(git("writing a frame input"))?.detach())
    };
    // Store every input, so the frame can be re-derived anywhere.
    let mut extra: Vec<(String, ObjectId)> = vec![
        ("snapshot.json".into(), write(&snapshot.canonical_bytes())?),
        ("inputs/worktree.json".into(), write(&view.changes_bytes())?),
    ];
    if let Some(task) = &files.task {
        extra.push(("inputs/task.txt".into(), write(task.as_bytes())?));
    }
    if let Some((_, bytes)) = &files.scip {
        let id = gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, bytes).map_err(git("hashing"))?;
        // An unchanged index keeps its object id: write it only when git does not have it.
        let id = if repo.has_object(id) { id } else { write(bytes)? };
        extra.push(("inputs/index.scip".into(), id));
    }
    let mut diags: Vec<&Vec<u8>> = files.diagnostics.iter().map(|(_, b)| b).collect();
    diags.sort_by_key(|b| sha256_hex(b));
    for (i, bytes) in diags.into_iter().enumerate() {
        extra.push((format!("inputs/diagnostics/{i:04}"), write(bytes)?));
    }
    if !files.editor.is_empty() {
        let editor: BTreeSet<String> = files.editor.iter().map(|p| normalize_rel(p)).collect();
        extra.push(("inputs/editor.txt".into(), write(&editor_bytes(&editor))?));
    }
    for (id, bytes) in &view.contents {
        let written = write(bytes)?;
        extra.push((format!("inputs/contents/{id}"), written));
    }
    let root = std::fs::canonicalize(store.workdir()?).map(|p| p.display().to_string()).unwrap_or_default();
    let mut previous = None;
    let appended = store.append(FRAME_REF, agent, key, FRAME_KIND, &extra, |_tip: Option<&Entry>| {
        // Compared with the current *verified* frame, re-read on every attempt: an unverified
        // record at the tip with our hash must not stop us from publishing it for real.
        let tip_hash = current_frame_hash(store).map_err(|e| match e {
            FrameError::Store(s) => s,
            other => StoreError::Git { context: "reading the current frame".into(), source: Box::new(other) },
        })?;
        let tip_hash = tip_hash.map(|(_, h)| h);
        if tip_hash.as_deref() == Some(hash.as_str()) {
            return Ok(None);
        }
        previous = tip_hash;
        Ok(Some(serde_json::json!({
            "hash": hash,
            "previous": previous,
            "base": view.base.map(|b| b.to_string()),
            "targets": snapshot.targets.len(),
            "truncated": snapshot.truncated,
            "root": root,
        })))
    })?;
    Ok(match appended {
        Some(a) => Published::New { commit: a.commit, hash, previous },
        None => Published::Unchanged { hash },
    })
}

/// The outcome of verifying a frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// The frame's commit.
    pub commit: String,
    /// The hash recorded in the frame.
    pub recorded_hash: String,
    /// The hash of the stored snapshot bytes.
    pub stored_snapshot_hash: String,
    /// The hash recomputed from the stored inputs.
    pub recomputed_hash: String,
    /// The first field that differs, when something does.
    pub first_difference: Option<String>,
}

impl Verification {
    /// Whether the frame reproduces exactly.
    pub fn ok(&self) -> bool {
        self.first_difference.is_none()
    }
}

/// Recomputes a frame's snapshot from its stored inputs and compares.
pub fn verify(store: &Store, commit: ObjectId) -> Result<Verification, FrameError> {
    let entry = store.entry(commit)?;
    let record =
        entry.record.map_err(|e| FrameError::Incomplete { commit: commit.to_string(), what: e.to_string() })?;
    let recorded_hash = recorded_hash(&record);
    let root = PathBuf::from(record.payload.get("root").and_then(|h| h.as_str()).unwrap_or("/"));
    let stored_bytes =
        frame_file(store, commit, "snapshot.json")?.ok_or_else(|| incomplete(commit, "snapshot.json"))?;
    let view = stored_view(store, commit)?;
    let files = stored_inputs(store, commit)?;
    let input = build_input(store.repo(), &view, &files, &root)?;
    let task = files.task.unwrap_or_default();
    let recomputed = compute(&input, |id| !task.is_empty() && signals::task::named_by_task(&task, id));
    let stored_snapshot_hash = sha256_hex(&stored_bytes);
    let recomputed_hash = recomputed.frame_hash();
    let first_difference = if recorded_hash != stored_snapshot_hash {
        Some("snapshot.json does not hash to the frame's recorded hash".to_string())
    } else if recomputed_hash != recorded_hash {
        let stored: serde_json::Value = serde_json::from_slice(&stored_bytes).unwrap_or(serde_json::Value::Null);
        let fresh = serde_json::to_value(&recomputed).unwrap_or(serde_json::Value::Null);
        Some(first_diff(&stored, &fresh, "").unwrap_or_else(|| "(canonical bytes)".into()))
    } else {
        None
    };
    Ok(Verification {
        commit: commit.to_string(),
        recorded_hash,
        stored_snapshot_hash,
        recomputed_hash,
        first_difference,
    })
}

/// The error for a frame missing `what`.
fn incomplete(commit: ObjectId, what: &str) -> FrameError {
    FrameError::Incomplete { commit: commit.to_string(), what: what.into() }
}

/// The tree view a frame's producer saw, rebuilt from its base commit and the stored working-tree
/// changes and contents.
fn stored_view(store: &Store, commit: ObjectId) -> Result<TreeView, FrameError> {
    let repo = store.repo();
    let incomplete = |what: &str| incomplete(commit, what);
    let worktree =
        frame_file(store, commit, "inputs/worktree.json")?.ok_or_else(|| incomplete("inputs/worktree.json"))?;
    #[derive(Deserialize)]
    struct Stored {
        base: Option<String>,
        changes: Vec<WorktreeChange>,
    }
    let stored: Stored =
        serde_json::from_slice(&worktree).map_err(|e| incomplete(&format!("inputs/worktree.json: {e}")))?;
    let base = match &stored.base {
        Some(b) => Some(ObjectId::from_hex(b.as_bytes()).map_err(|_| incomplete("inputs/worktree.json: base"))?),
        None => None,
    };
    let mut view = TreeView { base, changes: stored.changes.clone(), ..Default::default() };
    if let Some(base) = base {
        let tree = repo
            .find_commit(base)
            .map_err(git("reading the frame's base"))?
            .tree_id()
            .map_err(git("reading the frame's base"))?;
        tree_files(repo, tree.detach(), "", &mut view.files, &mut view.non_utf8_paths)?;
    }
    for c in &stored.changes {
        match &c.blob {
            None => {
                view.files.remove(&c.path);
            }
            Some(hex) => {
                let id = ObjectId::from_hex(hex.as_bytes()).map_err(|_| incomplete("inputs/worktree.json: blob"))?;
                let bytes = frame_file(store, commit, &format!("inputs/contents/{id}"))?
                    .ok_or_else(|| incomplete(&format!("inputs/contents/{id}")))?;
                view.files.insert(c.path.clone(), id);
                view.contents.insert(id, bytes);
            }
        }
    }
    Ok(view)
}

/// The named inputs stored in a frame: task, SCIP index, diagnostics files and editor list.
fn stored_inputs(store: &Store, commit: ObjectId) -> Result<InputFiles, FrameError> {
    let task = frame_file(store, commit, "inputs/task.txt")?.map(|b| String::from_utf8_lossy(&b).into_owned());
    let scip = frame_file(store, commit, "inputs/index.scip")?.map(|b| ("inputs/index.scip".to_string(), b));
    let mut diagnostics = Vec::new();
    for i in 0.. {
        let name = format!("inputs/diagnostics/{i:04}");
        match frame_file(store, commit, &name)? {
            Some(b) => diagnostics.push((name, b)),
            None => break,
        }
    }
    let editor = frame_file(store, commit, "inputs/editor.txt")?
        .map(|b| String::from_utf8_lossy(&b).lines().map(String::from).collect())
        .unwrap_or_default();
    Ok(InputFiles { task, scip, diagnostics, editor })
}

/// The path of the first differing field between two JSON values (`targets[3].saliency`).
pub fn first_diff(a: &serde_json::Value, b: &serde_json::Value, path: &str) -> Option<String> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => {
                        if let Some(d) = first_diff(u, v, &p) {
                            return Some(d);
                        }
                    }
                    _ => return Some(p),
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                if let Some(d) = first_diff(u, v, &format!("{path}[{i}]")) {
                    return Some(d);
                }
            }
            (x.len() != y.len()).then(|| format!("{path} (length {} vs {})", x.len(), y.len()))
        }
        _ => (crate::store::canonical::to_canonical_bytes(a) != crate::store::canonical::to_canonical_bytes(b))
            .then(|| path.to_string()),
    }
}

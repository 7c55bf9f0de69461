//! Gathering what the gate decides from — the current frame, the board and the change — and the
//! receipt a gated commit carries.

use super::board::{Board, Liveness};
use super::focus_store::load_live_board;
use super::frame::{Frame, FrameError, current_frame_hash, read_frame};
use super::gate::{Touched, Verdict, gate};
use super::run_end::RunLedger;
use super::touched::{self, TouchedError};
use crate::store::{Store, StoreError};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Trailer naming the agent that made a gated commit.
pub const AGENT_TRAILER: &str = "Mas-Agent";
/// Trailer naming the frame the commit was gated on.
pub const FRAME_TRAILER: &str = "Mas-Frame";
/// The trailer naming the rule that allowed a commit, when it is team mode's (`claims`).
pub const RULE_TRAILER: &str = "Mas-Rule";

/// Errors gathering the gate's inputs, each naming the input that could not be read. The CLI
/// fails closed on every one of them.
#[derive(Debug, thiserror::Error)]
pub enum GateIoError {
    /// The roster, which decides whose foci count, could not be read.
    #[error("the focus board cannot be read: {source}")]
    Roster {
        /// Why.
        #[source]
        source: StoreError,
    },
    /// The current frame (its ref and hash) could not be read.
    #[error("the focus board cannot be read: {source}")]
    CurrentFrame {
        /// Why.
        #[source]
        source: FrameError,
    },
    /// The focus chains could not be read.
    #[error("the focus board cannot be read: {source}")]
    Board {
        /// Why.
        #[source]
        source: StoreError,
    },
    /// The current frame's snapshot, needed for a symbol target's line range, could not be read.
    #[error("the focus board cannot be read: {source}")]
    Frame {
        /// The frame's commit.
        commit: String,
        /// Why.
        #[source]
        source: FrameError,
    },
    /// The change could not be read.
    #[error(transparent)]
    Touched(#[from] TouchedError),
}

impl GateIoError {
    /// What to do about this failure, for the fail-closed verdict: each cause its own remedy (an
    /// unreadable ref is not fixed by naming the agent).
    pub fn remedy(&self) -> String {
        match self {
            GateIoError::Roster { source: StoreError::Roster(_) } => {
                "fix .mas/roster (each line is `name did:key:z…`), then retry".into()
            }
            GateIoError::CurrentFrame { .. } | GateIoError::Frame { .. } => {
                "publish a new frame with `git mas snapshot --publish`, then retry".into()
            }
            GateIoError::Roster { source } | GateIoError::Board { source } => match source {
                StoreError::UnreadableRef { name, .. } => {
                    format!("inspect it with `git show-ref {name}` (`git update-ref -d {name}` removes it), then retry")
                }
                StoreError::StaleLock { lock, .. } => format!(
                    "if no git or git-mas command is still running here, remove {} (`git mas doctor --fix`), then retry",
                    lock.display()
                ),
                _ => RETRY_REMEDY.into(),
            },
            GateIoError::Touched(_) => RETRY_REMEDY.into(),
        }
    }
}

/// The remedy of a failure with nothing more specific to say.
const RETRY_REMEDY: &str = "fix the problem above, then retry";

/// Why the gate's inputs could not be gathered, as its fail-closed verdict words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ungathered {
    /// What could not be read.
    pub reason: String,
    /// What to do about it.
    pub remedy: String,
}

impl Ungathered {
    /// No identity names the caller; `what` is the change or the edit.
    pub fn no_identity(what: &str) -> Self {
        Ungathered {
            reason: format!("no agent identity: the gate cannot tell whose {what} this is"),
            remedy: super::gate::NO_IDENTITY_REMEDY.into(),
        }
    }

    /// Any other failure, with the generic remedy.
    pub fn other(reason: impl std::fmt::Display) -> Self {
        Ungathered { reason: reason.to_string(), remedy: RETRY_REMEDY.into() }
    }
}

/// The paths the index changes against HEAD: in-process (through the cache-tree,
/// [`super::staged`]), git answering what that leaves open ([`super::touched::staged_paths`]).
pub fn staged(store: &Store, workdir: &Path) -> Result<Vec<String>, Ungathered> {
    super::staged::staged_paths(store.repo())
        .map_or_else(|| super::touched::staged_paths(workdir), Ok)
        .map_err(Ungathered::other)
}

impl From<GateIoError> for Ungathered {
    fn from(e: GateIoError) -> Self {
        Ungathered { remedy: e.remedy(), reason: e.to_string() }
    }
}

/// Everything the gate looked at, and its verdict.
#[derive(Debug, Clone)]
pub struct GateOutcome {
    /// The verdict.
    pub verdict: Verdict,
    /// The current frame, when there is one.
    pub frame: Option<Frame>,
    /// The board.
    pub board: Board,
    /// What the change touches.
    pub touched: Vec<Touched>,
}

/// Files in which a live focus holds a symbol target: only these need line ranges.
pub fn symbol_files(board: &Board) -> BTreeSet<String> {
    board
        .entries
        .iter()
        .filter(|e| e.liveness == Liveness::Live)
        .flat_map(|e| e.focus.targets.iter())
        .filter_map(|t| t.split_once('#').map(|(p, _)| p.to_string()))
        .collect()
}

/// Decides for `caller` on `paths`; `diff_args` produce line ranges for files that need them.
pub fn evaluate(
    store: &Store,
    workdir: &Path,
    caller: &str,
    paths: Vec<String>,
    diff_args: &[&str],
    now: u64,
    runs: &dyn RunLedger,
) -> Result<GateOutcome, GateIoError> {
    evaluate_with(
        store,
        caller,
        now,
        runs,
        |symbol_files| touched::touched(workdir, paths, symbol_files, diff_args),
        |_, _| {},
    )
}

/// A file's identity on disk (device, inode): two paths with one identity are one file.
pub type FileId = (u64, u64);

/// The identity of the regular file at `path` when another name shares it (a hard link), else
/// `None`.
pub fn linked_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(path).ok()?;
    (meta.is_file() && meta.nlink() > 1).then(|| (meta.dev(), meta.ino()))
}

/// Decides for `caller` on what a change touches as the caller already knows it (an edit hook's
/// files, with the changed lines where the tool call says which). `linked` are the identities
/// of written files that have other names (hard links): a held file with one of them is touched
/// too, whatever name the write used.
pub fn evaluate_touched(
    store: &Store,
    caller: &str,
    touched: Vec<Touched>,
    linked: &[FileId],
    now: u64,
    runs: &dyn RunLedger,
) -> Result<GateOutcome, GateIoError> {
    let root = store.workdir().ok().map(Path::to_path_buf);
    evaluate_with(
        store,
        caller,
        now,
        runs,
        |_| touched,
        |board, touched| {
            if let Some(root) = &root {
                add_linked(board, caller, root, linked, touched);
            }
        },
    )
}

/// Adds to `touched` every file another live agent holds whose identity is in `linked`.
pub(crate) fn add_linked(board: &Board, caller: &str, root: &Path, linked: &[FileId], touched: &mut Vec<Touched>) {
    use std::os::unix::fs::MetadataExt as _;
    if linked.is_empty() {
        return;
    }
    let held: BTreeSet<&str> = board
        .live()
        .filter(|f| f.agent != caller)
        .flat_map(|f| f.targets.iter())
        .map(|t| t.split_once('#').map_or(t.as_str(), |(p, _)| p))
        .collect();
    for path in held {
        let Ok(meta) = std::fs::metadata(root.join(path)) else { continue };
        if linked.contains(&(meta.dev(), meta.ino())) && !touched.iter().any(|t| t.path == path) {
            touched.push(Touched { path: path.to_string(), lines: None });
        }
    }
}

/// The gathering; `touched_of` is given the files in which a live focus holds a symbol (the only
/// files whose changed lines matter).
fn evaluate_with(
    store: &Store,
    caller: &str,
    now: u64,
    runs: &dyn RunLedger,
    touched_of: impl FnOnce(&BTreeSet<String>) -> Vec<Touched>,
    extend: impl FnOnce(&Board, &mut Vec<Touched>),
) -> Result<GateOutcome, GateIoError> {
    let roster = store.roster().map_err(|source| GateIoError::Roster { source })?;
    // The hash alone is enough unless a symbol target's line range is needed: reading and parsing
    // the snapshot (up to 4,096 targets) is the costliest part of a gate, so it is done on demand.
    let head = current_frame_hash(store).map_err(|source| GateIoError::CurrentFrame { source })?;
    let board = load_live_board(store, &roster, now, None, Some(caller), runs)
        .map_err(|source| GateIoError::Board { source })?;
    let symbol_files = symbol_files(&board);
    let mut touched = touched_of(&symbol_files);
    extend(&board, &mut touched);
    let needs_ranges = touched.iter().any(|t| symbol_files.contains(&t.path));
    let frame = match (&head, needs_ranges) {
        (Some((commit, _)), true) => Some(
            read_frame(store, *commit).map_err(|source| GateIoError::Frame { commit: commit.to_string(), source })?,
        ),
        _ => None,
    };
    let hash = head.map(|(_, h)| h);
    let verdict = decide_with(caller, hash.as_deref(), frame.as_ref(), &board, &touched);
    Ok(GateOutcome { verdict, frame, board, touched })
}

/// The decision with the frame hash given separately from its (optional) snapshot.
fn decide_with(caller: &str, hash: Option<&str>, frame: Option<&Frame>, board: &Board, touched: &[Touched]) -> Verdict {
    let mine = board.entry(caller).filter(|e| e.liveness == Liveness::Live).map(|e| e.focus.clone());
    let others: Vec<_> = board.live().filter(|f| f.agent != caller).cloned().collect();
    let ranges: BTreeMap<&str, [u32; 2]> = frame
        .map(|f| f.snapshot.targets.iter().filter_map(|t| Some((t.id.as_str(), t.lines?))).collect())
        .unwrap_or_default();
    let lines_of = |id: &str| ranges.get(id).copied();
    match gate(caller, mine.as_ref(), hash, &others, touched, &lines_of) {
        verdict if board.damaged.is_empty() => verdict,
        Verdict::Allow { frame, notes } => {
            let mut blocks = Vec::new();
            super::damage::apply(caller, board, touched, &mut blocks);
            if blocks.is_empty() { Verdict::Allow { frame, notes } } else { Verdict::Block { blocks } }
        }
        Verdict::Block { mut blocks } => {
            super::damage::apply(caller, board, touched, &mut blocks);
            Verdict::Block { blocks }
        }
        closed @ Verdict::FailClosed { .. } => closed,
    }
}

/// The pure decision on gathered inputs.
pub fn decide_on(caller: &str, frame: Option<&Frame>, board: &Board, touched: &[Touched]) -> Verdict {
    decide_with(caller, frame.map(|f| f.hash.as_str()), frame, board, touched)
}

/// The verdict of a gathering: the outcome's own, or failing closed on why the gate's inputs could
/// not be gathered.
pub fn verdict_of(outcome: &Result<GateOutcome, Ungathered>) -> Verdict {
    match outcome {
        Ok(o) => o.verdict.clone(),
        Err(why) => super::gate::unreadable(&why.reason, &why.remedy),
    }
}

/// Whether a commit message's trailer block says team mode's rule allowed it (`Mas-Rule:
/// claims`).
pub fn claims_rule(message: &str) -> bool {
    let last = message.trim_end().rsplit("\n\n").next().unwrap_or_default();
    last.lines().any(|l| l.strip_prefix(&format!("{RULE_TRAILER}:")).is_some_and(|v| v.trim() == "claims"))
}

/// Reads `Mas-Agent` and `Mas-Frame` from a commit message's trailer block.
pub fn receipt_of(message: &str) -> Option<(String, String)> {
    let last = message.trim_end().rsplit("\n\n").next()?;
    let mut agent = None;
    let mut frame = None;
    for line in last.lines() {
        if let Some(v) = line.strip_prefix(&format!("{AGENT_TRAILER}:")) {
            agent = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix(&format!("{FRAME_TRAILER}:")) {
            frame = Some(v.trim().to_string());
        }
    }
    Some((agent?, frame?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_of_table() {
        let outcome = |verdict: Verdict| GateOutcome { verdict, frame: None, board: Board::default(), touched: vec![] };
        let allow = Verdict::Allow { frame: "F".into(), notes: vec![] };
        let block = Verdict::Block { blocks: vec![] };
        let cases: Vec<(Result<GateOutcome, Ungathered>, Verdict, bool)> = vec![
            (Ok(outcome(allow.clone())), allow, true),
            (Ok(outcome(block.clone())), block, false),
            (
                Err(Ungathered::other("board unreadable")),
                super::super::gate::unreadable("board unreadable", RETRY_REMEDY),
                false,
            ),
        ];
        for (gathered, want, allows) in cases {
            let v = verdict_of(&gathered);
            assert_eq!((&v, v.allows()), (&want, allows));
        }
        let Verdict::FailClosed { reason, remedy } = verdict_of(&Err(Ungathered::no_identity("change"))) else {
            panic!()
        };
        assert_eq!(reason, "no agent identity: the gate cannot tell whose change this is");
        assert!(remedy.contains("--agent") && remedy.contains("retry"), "{remedy}");
    }

    /// Regression: every fail-closed verdict said to fix the identity flags, even when a ref could
    /// not be read. Only a missing identity names them now.
    #[test]
    fn each_unreadable_input_has_its_own_remedy_and_only_identity_names_the_flags() {
        use crate::identity::RosterError;
        let unreadable = || StoreError::UnreadableRef { name: "refs/mas/focus/bob".into(), content: "junk".into() };
        let lock = || StoreError::StaleLock {
            refname: "refs/mas/focus/bob".into(),
            lock: "/r/.git/refs/mas/focus/bob.lock".into(),
            age: std::time::Duration::from_secs(9),
        };
        let git = || StoreError::Git { context: "listing refs".into(), source: "boom".into() };
        let cases: Vec<(GateIoError, &str)> = vec![
            (
                GateIoError::Board { source: unreadable() },
                "inspect it with `git show-ref refs/mas/focus/bob` (`git update-ref -d refs/mas/focus/bob` removes it), then retry",
            ),
            (
                GateIoError::Roster { source: unreadable() },
                "inspect it with `git show-ref refs/mas/focus/bob` (`git update-ref -d refs/mas/focus/bob` removes it), then retry",
            ),
            (
                GateIoError::Board { source: lock() },
                "if no git or git-mas command is still running here, remove /r/.git/refs/mas/focus/bob.lock (`git mas doctor --fix`), then retry",
            ),
            (GateIoError::Board { source: git() }, RETRY_REMEDY),
            (
                GateIoError::Roster {
                    source: StoreError::Roster(RosterError::Encoding { origin: "main:.mas/roster".into() }),
                },
                "fix .mas/roster (each line is `name did:key:z…`), then retry",
            ),
            (
                GateIoError::CurrentFrame { source: FrameError::NoFrame },
                "publish a new frame with `git mas snapshot --publish`, then retry",
            ),
        ];
        for (error, want) in cases {
            let why = Ungathered::from(error);
            assert_eq!(why.remedy, want, "{}", why.reason);
            assert!(!why.remedy.contains("--agent") && !why.remedy.contains("GIT_MAS_AGENT"), "{}", why.remedy);
        }
    }

    #[test]
    fn receipts_are_read_from_the_last_paragraph() {
        let msg = "Fix tax\n\nBody text.\n\nMas-Agent: alice\nMas-Frame: abc123\n";
        assert_eq!(receipt_of(msg), Some(("alice".into(), "abc123".into())));
        assert_eq!(receipt_of("Fix\n\nMas-Agent: alice\n\nMore text"), None);
        assert_eq!(receipt_of("Fix tax"), None);
    }
}

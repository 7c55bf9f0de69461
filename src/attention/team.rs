//! Team mode on a repository: claims by editing, made under one lock, with the frame kept current
//! without anyone acting.
//!
//! `git config mas.team true` turns it on (the team setup sets it). A session's edit then goes:
//!
//! 1. Read the board and the current frame's hash (no lock, no write). Another live agent holds a
//!    touched file → denied ([`claims::blocks`]). Every touched file is the caller's already, on
//!    the current frame, renewed in the last [`RENEW_AFTER_SECS`] → allowed with nothing written:
//!    the common case costs one read of the board.
//! 2. Otherwise publish a frame if none exists (a repository's first edit), take the claims lock
//!    (`<common git dir>/mas/claims.lock`, an exclusive `flock`), read the board again, decide
//!    again, and append a claim record to the caller's focus chain: the files it holds, in the
//!    rule's order, on the current frame (a focus on an older frame moves, carrying every claim
//!    whose file still exists), with the lease's TTL. The lock is released when the process ends.
//!
//! Why a lock and not only the rule: two sessions that read the board before either wrote would
//! both see the file free. Between claims published on one machine the lock decides who claims
//! first, and the second claimer sees the first claim; the coordination rule's Serialize (the
//! smaller name holds) settles the claims that could not have seen each other — two clones that
//! claimed offline and then synced. The lock lives in the common git dir, so every linked
//! worktree shares it. Departure from "no server, only refs": the lock holds no state, only
//! serializes; `flock` is released by the kernel when its holder dies, so a crash leaves no lock.
//!
//! What a SIGKILL leaves, at any instant of a claim (every syscall of one is a kill point in
//! `tests/cli/team_crash.rs`):
//!
//! - before the lock (opening `claims.lock`, taking its `flock`), and holding it while the
//!   record's objects are written: no claim. At most a temporary or unreferenced object
//!   (`objects/.tmp*`, for `git gc` and `git mas doctor --fix`) and, from the board's read before
//!   the lock, a window cache's `<name>.tmp.<pid>`.
//! - holding it, between creating `refs/mas/focus/<agent>.lock` and renaming it over the ref: no
//!   claim, and that ref lock file is left. Until `git mas doctor --fix` removes it, the
//!   session's edits that must write are refused, naming it (after up to 3 s, the age at which
//!   the store calls a lock stale) — and such an edit waits holding the claims lock, so other
//!   sessions' claims wait with it, up to [`LOCK_WAIT`].
//! - after the ref moved (the lock still held, or the answer being written): the whole claim is
//!   on the board. The host saw its hook die (most hosts then let the edit through, which the
//!   claim now covers).
//!
//! In every case the claims lock is free: the kernel drops a dead holder's `flock`, and the lock
//! file is never removed (a removed file would let two claimers lock two files). Of a release
//! (`focus release`, with or without `--targets`, which takes no claims lock): the release record
//! is on the board whole or not at all, and a kill at the ref's rename leaves its lock file the
//! same way. Of a frame publication: the frame ref is moved by compare-and-swap or not at all.
//!
//! Time: a claim holds for its TTL (`git config mas.claimTtl`, a duration such as `15m`, or
//! seconds; default [`DEFAULT_CLAIM_TTL_SECS`]), renewed by an edit once [`RENEW_AFTER_SECS`] have
//! passed since the last renewal, so after any edit at least TTL − 60 s remain.

use super::board::{Board, FocusPayload, Liveness, Rejection};
use super::board_cache::Pending;
use super::caller::{self, CallerError};
use super::claims::{self, Lease, Next};
use super::focus_store::{self, release_focus};
use super::frame::{self, FrameError, current_frame_hash, frame_file, frame_file_id, read_frame};
use super::gate::{Block, Touched};
use super::gate_io::{FileId, add_linked, symbol_files};
use super::inputs;
use super::run_end::RunLedger;
use crate::identity::AgentKey;
use crate::store::{Store, StoreError};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Default time to live of a claim: 15 minutes.
pub const DEFAULT_CLAIM_TTL_SECS: u64 = 15 * 60;
/// An edit renews its claims when this long has passed since the last renewal.
pub const RENEW_AFTER_SECS: u64 = 60;
/// The longest wait for the claims lock before the edit is refused.
pub const LOCK_WAIT: Duration = Duration::from_secs(3);

/// Whether team mode is on (`mas.team`).
pub fn enabled(store: &Store) -> bool {
    store
        .config_string("mas.team")
        .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1"))
}

/// Why team mode could not decide.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    /// `mas.claimTtl` is not a duration in range.
    #[error("mas.claimTtl {value:?} is not a duration between 1s and 24h (such as 15m, or seconds)")]
    BadTtl {
        /// The value.
        value: String,
    },
    /// The claims lock could not be taken.
    #[error("the claims lock {} {why}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The frame could not be read or published.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// The board or a chain could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `mas.sessionRetention` is not a duration.
    #[error("mas.sessionRetention {value:?} is not a duration (such as 7d)")]
    BadRetention {
        /// The value.
        value: String,
    },
    /// The caller published no frame, and none was there.
    #[error("no frame could be published")]
    NoFrame,
    /// The claim this edit would publish is one the board refuses.
    #[error("the claim would be rejected by the board: {0}")]
    Rejected(#[source] Rejection),
    /// The caller's signing key could not be had.
    #[error(transparent)]
    Caller(#[from] CallerError),
}

impl TeamError {
    /// What the user can do about it, when there is something specific to say.
    pub fn remedy(&self) -> Option<String> {
        match self {
            TeamError::Frame(e) => e.remedy(),
            TeamError::Store(e) => e.remedy(),
            TeamError::Caller(e) => e.remedy(),
            _ => None,
        }
    }
}

/// How long an ended session's focus chain is kept (`git config mas.sessionRetention`, a duration
/// such as `7d`; default [`focus_store::DEFAULT_SESSION_RETENTION_SECS`]).
pub fn retention(store: &Store) -> Result<u64, TeamError> {
    match store.config_string("mas.sessionRetention").filter(|v| !v.trim().is_empty()) {
        None => Ok(focus_store::DEFAULT_SESSION_RETENTION_SECS),
        Some(v) => {
            humantime::parse_duration(v.trim()).map(|d| d.as_secs()).map_err(|_| TeamError::BadRetention { value: v })
        }
    }
}

/// The lease team mode claims with.
pub fn lease(store: &Store) -> Result<Lease, TeamError> {
    let ttl_secs = match store.config_string("mas.claimTtl").filter(|v| !v.trim().is_empty()) {
        None => DEFAULT_CLAIM_TTL_SECS,
        Some(v) => parse_duration(&v).ok_or(TeamError::BadTtl { value: v })?,
    };
    Ok(Lease { ttl_secs, renew_after_secs: RENEW_AFTER_SECS.min(ttl_secs / 2) })
}

/// Seconds in a duration (`900s`, `15m`, `1h`; a bare number is seconds) between 1 s and the
/// board's longest TTL.
pub fn parse_duration(text: &str) -> Option<u64> {
    let t = text.trim();
    let secs = match t.parse::<u64>() {
        Ok(n) => n,
        Err(_) => humantime::parse_duration(t).ok()?.as_secs(),
    };
    (1..=super::board::MAX_TTL_SECS).contains(&secs).then_some(secs)
}

/// The claims lock, held until dropped (or the process ends).
#[derive(Debug)]
pub struct ClaimsLock {
    _file: std::fs::File,
}

/// Takes the claims lock, waiting at most [`LOCK_WAIT`].
pub fn lock(store: &Store) -> Result<ClaimsLock, TeamError> {
    let dir = store.common_dir().join("mas");
    let path = dir.join("claims.lock");
    let fail = |why: String| TeamError::Lock { path: path.clone(), why };
    std::fs::create_dir_all(&dir).map_err(|e| fail(format!("cannot be created: {e}")))?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| fail(format!("cannot be opened: {e}")))?;
    match crate::fsx::lock_within(&file, LOCK_WAIT) {
        Ok(true) => Ok(ClaimsLock { _file: file }),
        Ok(false) => Err(fail(format!("was held by another process for {} s", LOCK_WAIT.as_secs()))),
        Err(e) => Err(fail(format!("cannot be locked: {e}"))),
    }
}

/// What team mode says about an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TeamEdit {
    /// The edit may go ahead.
    Allowed {
        /// The frame it was decided on.
        frame: String,
        /// Files it claimed anew.
        claimed: Vec<String>,
        /// Own claims dropped because their file is gone.
        dropped: Vec<String>,
        /// Whether a claim record was written (a claim, a renewal or a move to the current frame).
        published: bool,
        /// Whether this edit published the frame (there was none).
        published_frame: bool,
        /// The caller's claim had lapsed before this edit (it is claimed again now).
        lapsed: Vec<String>,
    },
    /// Other live agents hold files it touches.
    Blocked {
        /// One per held file.
        blocks: Vec<Block>,
        /// The caller's own claims on those files that lapsed (it held them, the TTL passed).
        lapsed: Vec<String>,
        /// The files the caller holds now (to name a deadlock: a holder refused one of them).
        mine: Vec<String>,
    },
    /// It would make the caller hold more than the cap.
    OverCap {
        /// The files held.
        held: Vec<String>,
        /// The files it would add.
        wanted: Vec<String>,
    },
    /// The board has no place for the caller: its principal's agents, or the whole board, are at
    /// a flood cap ([`super::board::admits`]).
    Flood(Rejection),
}

/// Decides `caller`'s edit of `touched` (plus files hard-linked to a held file, `linked`) and
/// claims what it touches when allowed, for the run of the worktree it edits in, if any
/// ([`focus_store::worktree_run`]). The caller's signing key is loaded only when something must be
/// written ([`caller::signing_key`]), and a frame is published from the inputs git config names
/// when there is none ([`inputs::read`]); `runs` says which runs ended ([`super::run_end`]).
/// `first`: the live board this call has already read (the held files' guard's), on which a
/// denial or an edit of the caller's own claims is decided without listing the board again; a
/// claim always reads it again under the claims lock.
#[allow(clippy::too_many_arguments)]
pub fn edit(
    store: &Store,
    caller: &str,
    touched: Vec<Touched>,
    linked: &[FileId],
    lease: Lease,
    now: u64,
    first: Option<Board>,
    runs: &dyn RunLedger,
) -> Result<TeamEdit, TeamError> {
    let root = store.workdir()?.to_path_buf();
    // The board's read cache is written when this returns without a claim (a claim's append
    // would make it stale at once): each read's `Pending` is dropped at the return, or forgotten.
    // `given`: a live board this call already read, decided on instead of reading it again.
    #[allow(clippy::type_complexity)]
    let read = |touched: &[Touched],
                given: Option<Board>|
     -> Result<(Option<String>, Board, Vec<Touched>, Option<Pending>), TeamError> {
        let head = current_frame_hash(store)?;
        let (board, pending) = match given {
            Some(board) => (board, None),
            None => focus_store::read_live_board(store, &store.roster()?, now, None, Some(caller), runs)?,
        };
        let mut touched = touched.to_vec();
        add_linked(&board, caller, &root, linked, &mut touched);
        Ok((head.map(|(_, h)| h), board, touched, pending))
    };
    // 0. Lanes: an edit inside another agent's live lane is refused; one entirely inside the
    // caller's own lanes needs no claim ([`super::lanes`]).
    if let Some(decided) = in_lanes(store, caller, &touched, now)? {
        return Ok(decided);
    }
    // 1. Without the lock or a write: a denial, or an edit of the caller's own fresh claims —
    // decided on `first`, the live board this call already read, when it has one.
    let (head, board, all, first_read) = read(&touched, first)?;
    if let Some(frame) = &head {
        if let Some(blocked) = blocked(store, caller, frame, &board, &all, now)? {
            return Ok(blocked);
        }
        let paths = paths_of(&all);
        let next = claims::next_claims(board.entry(caller), frame, &paths, &|_| true, &|_| None, lease, now);
        if next == Next::Keep {
            return Ok(allowed(frame, Vec::new(), Vec::new(), false, false, Vec::new()));
        }
    }
    // 2. Write: the frame if there is none, then the claim under the lock. The frame's target
    // order (which orders the claimed files) is read before the lock, for the frame read now:
    // under the lock it is used only if that frame is still the current one.
    let early_order = match &head {
        Some(frame) => frame_order(store, frame)?.map(|order| (frame.clone(), order)),
        None => None,
    };
    let (key, _) = caller::signing_key(store, caller)?;
    // Another session may publish the same frame first: only a new frame record is reported.
    let published_frame = if head.is_none() { publish_frame(store, caller, &key)? } else { false };
    let _lock = lock(store)?;
    // The read under the lock supersedes the first one.
    if let Some(p) = first_read {
        p.forget();
    }
    let (head, board, all, pending) = read(&touched, None)?;
    let Some(frame) = head else {
        return Err(TeamError::NoFrame);
    };
    if let Some(blocked) = blocked(store, caller, &frame, &board, &all, now)? {
        return Ok(blocked);
    }
    let paths = paths_of(&all);
    let lapsed = lapsed(&board, caller, &paths);
    let exists = |p: &str| root.join(p).symlink_metadata().is_ok();
    let mut candidates = paths.clone();
    candidates.extend(board.entry(caller).into_iter().flat_map(|e| e.focus.targets.iter().cloned()));
    let ranks = match early_order {
        Some((early, order)) if early == frame => ranks_in(&order, &candidates),
        _ => ranks(store, &frame, &candidates)?,
    };
    let rank = |t: &str| ranks.get(t).copied();
    let next = claims::next_claims(board.entry(caller), &frame, &paths, &exists, &rank, lease, now);
    let (targets, claimed, dropped) = match next {
        Next::Keep => return Ok(allowed(&frame, Vec::new(), Vec::new(), false, published_frame, lapsed)),
        Next::OverCap { held, wanted } => return Ok(TeamEdit::OverCap { held, wanted }),
        Next::Publish { targets, claimed, dropped } => (targets, claimed, dropped),
    };
    if let Err(rejection) = super::board::admits(&board, caller) {
        return Ok(TeamEdit::Flood(rejection));
    }
    let payload = FocusPayload {
        frame: frame.clone(),
        targets,
        ttl_secs: lease.ttl_secs,
        published_at: now,
        claims: true,
        run: focus_store::worktree_run(store),
    };
    super::board::check_focus(&payload, now, None).map_err(TeamError::Rejected)?;
    if let Some(p) = pending {
        p.forget();
    }
    focus_store::append_focus(store, caller, &key, &payload)?;
    Ok(allowed(&frame, claimed, dropped, true, published_frame, lapsed))
}

/// Publishes a frame of the inputs git config names; true when a new frame record was written.
fn publish_frame(store: &Store, caller: &str, key: &AgentKey) -> Result<bool, TeamError> {
    let files = inputs::read(store, &inputs::Sources::default())?;
    let (snapshot, view) = frame::snapshot_now(store, &files)?;
    let published = frame::publish(store, caller, key, &snapshot, &view, &files)?;
    Ok(matches!(published, frame::Published::New { .. }))
}

fn allowed(
    frame: &str,
    claimed: Vec<String>,
    dropped: Vec<String>,
    published: bool,
    published_frame: bool,
    lapsed: Vec<String>,
) -> TeamEdit {
    TeamEdit::Allowed { frame: frame.to_string(), claimed, dropped, published, published_frame, lapsed }
}

/// Team mode's answer from the live lanes alone, when they decide it: refused when a touched file
/// is inside another agent's lane, allowed with nothing written when every one is inside the
/// caller's own (on the current frame; before the first frame the edit claims as usual).
fn in_lanes(store: &Store, caller: &str, touched: &[Touched], now: u64) -> Result<Option<TeamEdit>, TeamError> {
    let lanes = super::lanes::live(store, now)?;
    if lanes.is_empty() {
        return Ok(None);
    }
    let paths = paths_of(touched);
    let blocks: Vec<Block> = paths
        .iter()
        .filter_map(|p| super::lanes::holder_of(&lanes, caller, p).map(|l| (p, l)))
        .map(|(p, l)| Block {
            holder: l.agent.clone(),
            target: p.clone(),
            why: format!(
                "it is inside {}'s lane {}, which has {} left (`git mas claim` took it before any edit)",
                l.agent,
                l.glob,
                claims::left(l.expires_at.saturating_sub(now))
            ),
            remedy: format!(
                "leave {p} alone: work outside the lane, or ask {} to release it (`git mas release '{}'`)",
                l.agent, l.glob
            ),
        })
        .collect();
    if !blocks.is_empty() {
        return Ok(Some(TeamEdit::Blocked { blocks, lapsed: Vec::new(), mine: Vec::new() }));
    }
    if super::lanes::inside_own(&lanes, caller, &paths)
        && let Some((_, frame)) = current_frame_hash(store)?
    {
        return Ok(Some(allowed(&frame, Vec::new(), Vec::new(), false, false, Vec::new())));
    }
    Ok(None)
}

fn paths_of(touched: &[Touched]) -> Vec<String> {
    let mut p: Vec<String> = touched.iter().map(|t| t.path.clone()).collect();
    p.sort();
    p.dedup();
    p
}

/// The touched files the caller held by a claim whose TTL passed.
fn lapsed(board: &Board, caller: &str, paths: &[String]) -> Vec<String> {
    board
        .entry(caller)
        .filter(|e| e.liveness == Liveness::Expired)
        .map(|e| {
            paths.iter().filter(|p| e.focus.targets.iter().any(|t| claims::file_of(t) == p.as_str())).cloned().collect()
        })
        .unwrap_or_default()
}

/// The denial, when another live agent holds a touched file.
fn blocked(
    store: &Store,
    caller: &str,
    frame: &str,
    board: &Board,
    touched: &[Touched],
    now: u64,
) -> Result<Option<TeamEdit>, TeamError> {
    // A symbol's lines are needed only when a touched file holds a symbol target: reading the
    // snapshot is the costliest part of a decision, so it is done on demand.
    let symbols = symbol_files(board);
    let ranges: BTreeMap<String, [u32; 2]> = if touched.iter().any(|t| symbols.contains(&t.path)) {
        match current_frame_hash(store)? {
            Some((commit, _)) => read_frame(store, commit)?
                .snapshot
                .targets
                .iter()
                .filter_map(|t| Some((t.id.clone(), t.lines?)))
                .collect(),
            None => BTreeMap::new(),
        }
    } else {
        BTreeMap::new()
    };
    let lines_of = |id: &str| ranges.get(id).copied();
    let blocks = claims::blocks(caller, board, frame, touched, &lines_of, now);
    if blocks.is_empty() {
        return Ok(None);
    }
    let held: Vec<String> = blocks.iter().map(|b| claims::file_of(&b.target).to_string()).collect();
    let mine = board
        .entry(caller)
        .filter(|e| e.liveness == Liveness::Live)
        .map(|e| e.focus.targets.iter().map(|t| claims::file_of(t).to_string()).collect())
        .unwrap_or_default();
    Ok(Some(TeamEdit::Blocked { lapsed: lapsed(board, caller, &held), blocks, mine }))
}

/// The place of each of `targets` in the current frame's snapshot (absent: not listed).
///
/// Read from the snapshot's canonical bytes, not parsed: its keys are sorted, so every listed
/// target is an object starting `{"id":<the id as a JSON string>`, in the snapshot's order, after
/// `"targets":[`; the byte offset of that object orders the targets. Parsing the whole snapshot
/// (up to 4,096 targets, hundreds of KB) for at most a few ids was most of a claim's cost.
fn ranks(store: &Store, frame: &str, targets: &[String]) -> Result<BTreeMap<String, usize>, TeamError> {
    if targets.is_empty() {
        return Ok(BTreeMap::new());
    }
    Ok(frame_order(store, frame)?.map(|order| ranks_in(&order, targets)).unwrap_or_default())
}

/// The target order ([`target_order`]) of `frame` when it is the current frame.
fn frame_order(store: &Store, frame: &str) -> Result<Option<Vec<u8>>, TeamError> {
    match current_frame_hash(store)? {
        Some((commit, hash)) if hash == frame => target_order(store, commit),
        _ => Ok(None),
    }
}

/// The file in the common git dir that keeps the current frame's target order.
const ORDER_CACHE: &str = "mas-frame-order";

/// The order of the targets of the frame record `commit`: the snapshot's blob id on the first
/// line, then each target's id as a JSON string on a line of its own, in the snapshot's order.
/// Read from a sealed cache ([`crate::store::sealed`]) keyed by the blob id, so a claim reads
/// the 653 KB snapshot of a 20,000-file repository once per frame instead of on every claim
/// (inflating and searching it was a third of a claim's time); a cache that does not match is
/// written again, and a failed write costs only speed.
fn target_order(store: &Store, commit: gix::ObjectId) -> Result<Option<Vec<u8>>, TeamError> {
    let Some(blob) = frame_file_id(store, commit, "snapshot.json")? else { return Ok(None) };
    let path = store.common_dir().join(ORDER_CACHE);
    let head = format!("{blob}\n");
    if let Ok(bytes) = std::fs::read(&path)
        && let Some(body) = crate::store::sealed::unseal(store.common_dir(), &bytes)
        && body.starts_with(head.as_bytes())
    {
        return Ok(Some(body.to_vec()));
    }
    let Some(bytes) = frame_file(store, commit, "snapshot.json")? else { return Ok(None) };
    #[derive(serde::Deserialize)]
    struct Id {
        id: String,
    }
    #[derive(serde::Deserialize)]
    struct Ids {
        targets: Vec<Id>,
    }
    let Ok(ids) = serde_json::from_slice::<Ids>(&bytes) else { return Ok(None) };
    let body = order_body(&head, ids.targets.iter().map(|t| t.id.as_str()));
    crate::store::sealed::replace(&path, &crate::store::sealed::seal(store.common_dir(), &body));
    Ok(Some(body))
}

/// The body of the order cache: `head`, then each id as a JSON string and a newline.
fn order_body<'a>(head: &str, ids: impl Iterator<Item = &'a str>) -> Vec<u8> {
    let mut body = head.as_bytes().to_vec();
    for id in ids {
        body.extend_from_slice(serde_json::Value::from(id).to_string().as_bytes());
        body.push(b'\n');
    }
    body
}

/// [`ranks`] in an order cache's body: each target's place is its line's offset (a JSON string
/// holds no raw newline, so `\n"id"\n` matches one whole line).
fn ranks_in(order: &[u8], targets: &[String]) -> BTreeMap<String, usize> {
    targets
        .iter()
        .filter_map(|t| {
            let needle = format!("\n{}\n", serde_json::Value::from(t.as_str()));
            memchr::memmem::find(order, needle.as_bytes()).map(|at| (t.clone(), at))
        })
        .collect()
}

/// Ends `caller`'s claims (a session that ended): appends a release when it holds anything.
/// Returns the files it held.
pub fn end(
    store: &Store,
    caller: &str,
    key: &AgentKey,
    now: u64,
    runs: &dyn RunLedger,
) -> Result<Vec<String>, TeamError> {
    let roster = store.roster()?;
    let board = focus_store::load_live_board(store, &roster, now, None, Some(caller), runs)?;
    let Some(entry) = board.entry(caller).filter(|e| e.liveness == Liveness::Live) else { return Ok(Vec::new()) };
    let held = entry.focus.targets.clone();
    release_focus(store, caller, key, now)?;
    Ok(held)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::snapshot::{Snapshot, Target};

    #[test]
    fn ranks_in_the_order_cache_follow_the_snapshots_order() {
        let target = |id: &str| Target { id: id.into(), saliency: 0.5, signals: Default::default(), lines: None };
        let snapshot = Snapshot::of_targets(
            ["src/z.rs", "src/a \"q\".rs", "src/lib.rs#Thing.f", "src/lib.rs", "two\nlines.rs"]
                .into_iter()
                .map(target)
                .collect(),
        );
        let parsed: Snapshot = serde_json::from_slice(&snapshot.canonical_bytes()).unwrap();
        let body = order_body("0123abcd\n", parsed.targets.iter().map(|t| t.id.as_str()));
        let want = [
            "src/lib.rs",
            "src/z.rs",
            "src/a \"q\".rs",
            "missing.rs",
            "src/lib.rs#Thing.f",
            "lines.rs",
            "two\nlines.rs",
        ];
        let got = ranks_in(&body, &want.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let place = |id: &str| parsed.targets.iter().position(|t| t.id == id);
        let mut by_cache: Vec<&str> = want.iter().copied().filter(|t| got.contains_key(*t)).collect();
        by_cache.sort_by_key(|t| got[*t]);
        let mut by_parse: Vec<&str> = want.iter().copied().filter(|t| place(t).is_some()).collect();
        by_parse.sort_by_key(|t| place(t));
        assert_eq!(by_cache, by_parse);
        assert_eq!(by_cache.len(), 5, "{got:?}");
        assert!(!got.contains_key("missing.rs") && !got.contains_key("lines.rs"), "a part of an id is no id");
        // The head is no target.
        assert!(ranks_in(&body, &["0123abcd".to_string()]).is_empty());
    }
}

//! Writes no hook saw: a held file changed while its holder was in no tool call and no shell
//! call of any session was running over it — a process a session left running in the background
//! (`(sleep 3; echo y >> f) &`), an editor, a build — is noticed at a later hook call of any
//! session (the next one that finds no other hook in the guard, and one within
//! [`SWEEP_AT_LEAST_EVERY`] however busy the guard is), and in `git mas status`, put back to the
//! holder's last known state, and both the session that noticed and the holder are told.
//!
//! The holder's last known state of each held file, in every worktree, is kept in
//! `<common git dir>/mas/held/`: `by/<holder>.json` (per worktree and file: what it was — type,
//! SHA-256 and mode, as the shell backstop compares — a [`Stamp`] of its metadata, and whether
//! the holder is in a call now) and a copy of each content (`copies/<sha256>`), and a sweep keeps
//! every holder's records in one more file, `all.json`, which the next sweep reads instead of
//! each holder's while nothing in `by/` has changed (`Snapshot`). It is brought up
//! to date by the holder's own calls: its pre-tool hook marks its files open (the call may change
//! them: nothing is put back while it runs), its post-tool hook records what they are after the
//! call and closes them. Any other change is foreign:
//!
//! | hook | what it does, in order |
//! |---|---|
//! | pre-tool of session C | the pending shell check (if any), the sweep, then C's files open |
//! | post-tool of C | C's open files recorded as they are now, the shell check, the sweep |
//! | `git mas status` | the sweep |
//!
//! The sweep compares every held file that is not open with its last known state (a file whose
//! stamp is unchanged is not read: its status-change time moves with every write and `chmod`,
//! and nothing sets it back — unless it was recorded within [`RACY_NS`] of its last change, when
//! it is read and hashed, as git does with a racily clean index entry) and puts back what
//! changed. What the put-back replaced is kept (`displaced/`, the newest [`DISPLACED_KEPT`]) and
//! named in the message: the write nobody saw is not lost either. A file first seen (a new claim,
//! a new worktree) is recorded as it is, and, when another than its holder sees it first, as
//! open: the claim of a file is made before its edit is written, so its holder may be writing it.
//!
//! What cannot be told apart: a foreign write that lands while the holder's own call runs is
//! taken as the holder's (the holder's edit wins).
//!
//! One lock, `mas/held/flock` (`flock(2)`; never removed, nor is the `turnstile` beside it, which
//! keeps a waiting sweep from being starved), read-write. A sweep and a shell check
//! hold it exclusively, so no two interleave their reads and put-backs, and no session marks its
//! files open while a sweep that read them closed is still comparing them. A session's own books
//! (its files marked open, or recorded and closed) are kept under the shared lock when another
//! hook holds the guard, beside other sessions' own, each in its own `by/<holder>.json`; that
//! call leaves the sweep to a later one. Why: every tool call of every session passes here
//! twice, and with one exclusive section per call 16 sessions calling back to back queued on it
//! for hundreds of milliseconds (BENCHMARKS.md, "Hook latency under load"). A shell check, a
//! reader, and a call that finds the last sweep older than [`SWEEP_AT_LEAST_EVERY`] wait for the
//! exclusive lock, at most [`LOCK_WAIT`]; one that cannot have it then leaves the sweep to the
//! next call rather than keep a host waiting.
//!
//! What a SIGKILL leaves: the lock is the kernel's and goes with the process; each holder's file
//! is written to a temporary and renamed (the previous records or the new ones, whole; not
//! flushed to disk, since every hook call of every session writes one and a flush there was paid
//! by every call queued behind: a power cut may take it back to an earlier state, and a held file
//! no record names is recorded as it is when next seen; a temporary a kill left before its
//! rename is `git mas doctor`'s to find and, once its writer is gone, `--fix`'s to remove); a
//! sweep killed between the holders' files writes each file whole, old or new; one killed after
//! writing them and before removing the earlier `index.json` leaves both, and the holders' files
//! are read first and win; copies are written before a record names them, and those no record
//! names are removed by the next sweep that writes records; `all.json` is removed before any
//! holder's file is written and written (a temporary renamed) after the sweep's last one, so a
//! kill anywhere between leaves none, and the next sweep reads each holder's file; a put-back is
//! `shell_guard::put_back`'s (a temporary renamed over the file), with each temporary's name
//! appended to `restoring` first, which the next sweep removes.

use super::beneath::{self, Open, Stamp};
use super::board::{Board, Liveness};
use super::claims::file_of;
use super::shell_guard::{self, MAX_KEPT_BYTES, RestoreAction, Restored, Was};
use crate::store::Store;
use crate::store::refs::{Seen, seen};
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How close to its last change a file's state may have been recorded and still be trusted by
/// its stamp alone (the kernel's file times move in coarse ticks).
pub const RACY_NS: i64 = 2_000_000_000;
/// How long a hook waits for another's sweep.
pub const LOCK_WAIT: Duration = Duration::from_secs(2);
/// How many displaced contents are kept.
pub const DISPLACED_KEPT: usize = 64;
/// How long the held files may go unswept before a hook waits for the lock to sweep them.
pub const SWEEP_AT_LEAST_EVERY: Duration = Duration::from_secs(1);
/// The folder of each holder's records (`<holder>.json`).
const BY: &str = "by";
/// Where an earlier version kept every holder's records in one file; read, then removed, by the
/// next sweep.
const LEGACY_INDEX: &str = "index.json";
/// Touched by each sweep: its time is the last sweep's.
const SWEPT: &str = "swept";
/// Every holder's records as the last sweep left them, in one file ([`Snapshot`]).
const SNAPSHOT: &str = "all.json";
/// The guard's lock (never removed).
const FLOCK: &str = "flock";
/// Held by a sweep waiting for [`FLOCK`], passed by each session keeping its own books.
const TURNSTILE: &str = "turnstile";

/// One held file's last known state in one worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Rec {
    worktree: String,
    path: String,
    holder: String,
    was: Was,
    stamp: Option<Stamp>,
    /// When it was recorded, nanoseconds since the epoch.
    at_ns: i64,
    /// The holder is in a call that may change it.
    open: bool,
}

/// Which moment of a session a guarded step runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// Before a tool call of this session.
    Before,
    /// After a tool call of this session.
    After,
    /// A reader (`git mas status`), no session.
    Look,
}

/// A foreign change found and dealt with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Noticed {
    /// What was done.
    pub restored: Restored,
    /// Where what the put-back replaced is kept.
    pub displaced: Option<PathBuf>,
}

fn dir_of(store: &Store) -> PathBuf {
    store.common_dir().join("mas").join("held")
}

/// Where the guard keeps a copy of each held file's content, named by its SHA-256 and never
/// written in place.
pub(super) fn copies_dir(store: &Store) -> PathBuf {
    dir_of(store).join("copies")
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The lock file, opened (not locked). The folder exists.
fn lock_file(dir: &Path, name: &str) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(name))
}

/// The guard as one call holds it, until dropped.
struct Guard {
    exclusive: bool,
    _lock: std::fs::File,
}

/// Takes the guard: exclusively when it is free — when `must_sweep`, waiting for it up to
/// [`LOCK_WAIT`] — else shared (waiting up to [`LOCK_WAIT`], or not at all when it waited
/// already); `None` when neither could be had. An exclusive taker holds `turnstile` while it
/// waits for `flock`, and a shared one passes `turnstile` on its way in: a waiting sweep is not
/// starved by sessions' own books coming one after another.
fn take(dir: &Path, must_sweep: bool) -> std::io::Result<Option<Guard>> {
    std::fs::create_dir_all(dir)?;
    let wait = if must_sweep { LOCK_WAIT } else { Duration::ZERO };
    let started = std::time::Instant::now();
    // Opened anew for the shared try: a gave-up exclusive wait's thread may hold these handles.
    {
        let (turnstile, lock) = (lock_file(dir, TURNSTILE)?, lock_file(dir, FLOCK)?);
        if crate::fsx::lock_within(&turnstile, wait)?
            && crate::fsx::lock_within(&lock, wait.saturating_sub(started.elapsed()))?
        {
            return Ok(Some(Guard { exclusive: true, _lock: lock }));
        }
    }
    let wait = if must_sweep { Duration::ZERO } else { LOCK_WAIT };
    let (turnstile, lock) = (lock_file(dir, TURNSTILE)?, lock_file(dir, FLOCK)?);
    if !crate::fsx::lock_shared_within(&turnstile, wait)? {
        return Ok(None);
    }
    let shared = crate::fsx::lock_shared_within(&lock, wait.saturating_sub(started.elapsed()))?;
    drop(turnstile);
    Ok(shared.then_some(Guard { exclusive: false, _lock: lock }))
}

/// The file of `holder`'s records; `None` for a name that is not a plain file name (an agent
/// name always is).
fn holder_file(dir: &Path, holder: &str) -> Option<PathBuf> {
    let plain = !holder.is_empty() && !holder.starts_with('.') && !holder.contains(['/', '\\', '\0']);
    plain.then(|| dir.join(BY).join(format!("{holder}.json")))
}

fn read_recs(path: &Path) -> Vec<Rec> {
    std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
}

/// Every holder's records, then the index an earlier version kept them all in: a sweep killed
/// after writing holders' files and before removing the index leaves both, and the first record
/// of a file is the one that stands.
///
/// Taken from the sweep's [`Snapshot`] when it stands: with 64 sessions, reading their 64 files
/// took 0.4 ms of every edit hook. The `bool` says whether it was.
fn read_all(dir: &Path) -> (Vec<Rec>, bool) {
    if let Some(recs) = Snapshot::read(dir) {
        return (recs, true);
    }
    (read_each(dir), false)
}

/// Every holder's file, read one by one, then the earlier version's index.
fn read_each(dir: &Path) -> Vec<Rec> {
    let mut recs = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir.join(BY)) {
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths.iter().filter(|p| p.extension().is_some_and(|x| x == "json")) {
            recs.extend(read_recs(path));
        }
    }
    recs.extend(read_recs(&dir.join(LEGACY_INDEX)));
    recs
}

/// Removes the file at `path`; one that is not there is removed already.
fn remove_if_there(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Writes `recs` to `holder`'s file, or removes it when there are none.
fn write_holder(dir: &Path, holder: &str, recs: &[&Rec]) -> std::io::Result<()> {
    let Some(path) = holder_file(dir, holder) else { return Ok(()) };
    // Before the holder's file changes: a snapshot read after this would be out of date.
    Snapshot::remove(dir)?;
    if recs.is_empty() {
        return remove_if_there(&path);
    }
    std::fs::create_dir_all(dir.join(BY))?;
    let bytes = serde_json::to_vec(recs).map_err(std::io::Error::other)?;
    crate::fsx::replace_unflushed(&path, &bytes)
}

/// Writes every holder's records that changed from `old`, removes the files of holders with none
/// left (and the earlier version's index), then the copies no record names.
fn write_all(dir: &Path, old: &[Rec], recs: &[Rec]) -> std::io::Result<()> {
    let group = |recs: &[Rec]| {
        let mut by: std::collections::BTreeMap<String, Vec<Rec>> = std::collections::BTreeMap::new();
        for r in recs {
            by.entry(r.holder.clone()).or_default().push(r.clone());
        }
        by
    };
    let (before, after) = (group(old), group(recs));
    // Records read from the earlier index are in no holder's file yet.
    let legacy = dir.join(LEGACY_INDEX).exists();
    for (holder, mine) in &after {
        if legacy || before.get(holder) != Some(mine) {
            write_holder(dir, holder, &mine.iter().collect::<Vec<_>>())?;
        }
    }
    for holder in before.keys().filter(|h| !after.contains_key(*h)) {
        write_holder(dir, holder, &[])?;
    }
    remove_if_there(&dir.join(LEGACY_INDEX))?;
    // Copies no record names (a content replaced, or left by a killed sweep).
    let named: std::collections::HashSet<&str> = recs
        .iter()
        .filter_map(|r| match &r.was {
            Was::File { sha256, kept: true, .. } => Some(sha256.as_str()),
            _ => None,
        })
        .collect();
    if let Ok(entries) = std::fs::read_dir(dir.join("copies")) {
        for e in entries.flatten() {
            if !named.contains(e.file_name().to_string_lossy().as_ref()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    Ok(())
}

/// The records every holder's file holds, as the last sweep wrote them or found them, in the
/// order [`read_each`] reads them, with the identity and times of the `by/` folder then.
///
/// It stands while nothing in `by/` has changed since: every write of a holder's file removes it
/// first ([`write_holder`]), so a writer killed midway leaves no snapshot rather than an old one,
/// and a write by anything else (an earlier version's hook) moves the folder's times. A snapshot
/// is read and written only by a sweep, under the exclusive lock, when no session keeps its own
/// books.
#[derive(Serialize, Deserialize)]
struct Snapshot {
    by: Option<Seen>,
    recs: Vec<Rec>,
}

/// `recs` as the holders' files hold them once written ([`write_all`]) and [`read_each`] reads
/// them: grouped by holder in the order of their files' names, each holder's in the order given,
/// without the records of a holder whose name makes no file.
fn in_file_order(dir: &Path, recs: &[Rec]) -> Vec<Rec> {
    let mut by: std::collections::BTreeMap<PathBuf, Vec<Rec>> = std::collections::BTreeMap::new();
    for r in recs {
        if let Some(file) = holder_file(dir, &r.holder) {
            by.entry(file).or_default().push(r.clone());
        }
    }
    by.into_values().flatten().collect()
}

impl Snapshot {
    fn read(dir: &Path) -> Option<Vec<Rec>> {
        let bytes = std::fs::read(dir.join(SNAPSHOT)).ok()?;
        let snap: Snapshot = serde_json::from_slice(&bytes).ok()?;
        let standing = snap.by == seen(&dir.join(BY)) && !dir.join(LEGACY_INDEX).exists();
        standing.then_some(snap.recs)
    }

    fn write(dir: &Path, recs: &[Rec]) -> std::io::Result<()> {
        let snap = Snapshot { by: seen(&dir.join(BY)), recs: in_file_order(dir, recs) };
        let bytes = serde_json::to_vec(&snap).map_err(std::io::Error::other)?;
        crate::fsx::replace_unflushed(&dir.join(SNAPSHOT), &bytes)
    }

    fn remove(dir: &Path) -> std::io::Result<()> {
        remove_if_there(&dir.join(SNAPSHOT))
    }
}

/// Whether no sweep has run for [`SWEEP_AT_LEAST_EVERY`].
fn overdue(dir: &Path) -> bool {
    let last = std::fs::metadata(dir.join(SWEPT)).and_then(|m| m.modified());
    last.ok().and_then(|t| t.elapsed().ok()).is_none_or(|age| age >= SWEEP_AT_LEAST_EVERY)
}

/// Marks the time of a sweep.
fn mark_swept(dir: &Path) -> std::io::Result<()> {
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(SWEPT))?;
    file.set_modified(std::time::SystemTime::now())
}

/// What `path` beneath `top` is now, recorded (its bytes copied into `dir`); `None` when it
/// cannot be seen without following a link or leaving the tree.
fn record(dir: &Path, top: &str, path: &str, holder: &str, open: bool) -> std::io::Result<Option<Rec>> {
    let root = Path::new(top);
    let stamp = match beneath::stamp(root, path) {
        Ok(s) => s,
        Err(Open::Io(e)) => return Err(e),
        Err(_) => return Ok(None),
    };
    let now = match beneath::now(root, path, MAX_KEPT_BYTES) {
        Ok(n) => n,
        Err(Open::Io(e)) => return Err(e),
        Err(_) => return Ok(None),
    };
    let was = shell_guard::was_of(dir, now)?;
    Ok(Some(Rec {
        worktree: top.to_string(),
        path: path.to_string(),
        holder: holder.to_string(),
        was,
        stamp,
        at_ns: now_ns(),
        open,
    }))
}

/// Whether `rec`'s file is unchanged: its stamp alone when it was recorded well after its last
/// change, else its content, mode and type.
fn unchanged(rec: &Rec) -> std::io::Result<bool> {
    let root = Path::new(&rec.worktree);
    let stamp = match beneath::stamp(root, &rec.path) {
        Ok(s) => s,
        Err(Open::Io(e)) => return Err(e),
        // A link in its path now: changed.
        Err(_) => return Ok(rec.was == Was::Absent),
    };
    if stamp == rec.stamp && rec.stamp.is_none_or(|s| s.ctime_ns.saturating_add(RACY_NS) < rec.at_ns) {
        return Ok(true);
    }
    match beneath::now(root, &rec.path, MAX_KEPT_BYTES) {
        Ok(now) => Ok(shell_guard::same(&rec.was, &now)),
        Err(Open::Io(e)) => Err(e),
        Err(_) => Ok(rec.was == Was::Absent),
    }
}

/// Keeps what is at `path` before a put-back replaces it, when it is a file.
fn displace(dir: &Path, rec: &Rec) -> Option<PathBuf> {
    let beneath::Now::File { bytes: Some(bytes), .. } =
        beneath::now(Path::new(&rec.worktree), &rec.path, MAX_KEPT_BYTES).ok()?
    else {
        return None;
    };
    let folder = dir.join("displaced");
    std::fs::create_dir_all(&folder).ok()?;
    let name = format!("{}-{}", now_ns(), rec.path.replace('/', "%"));
    let path = folder.join(name);
    std::fs::write(&path, bytes).ok()?;
    // The newest are kept.
    if let Ok(entries) = std::fs::read_dir(&folder) {
        let mut names: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        names.sort();
        let extra = names.len().saturating_sub(DISPLACED_KEPT);
        for old in names.into_iter().take(extra) {
            let _ = std::fs::remove_file(old);
        }
    }
    Some(path)
}

/// The files live agents hold (repo-relative), each with its holder.
fn held(board: &Board) -> Vec<(String, String)> {
    let mut held: Vec<(String, String)> = board
        .entries
        .iter()
        .filter(|e| e.liveness == Liveness::Live)
        .flat_map(|e| e.focus.targets.iter().map(|t| (file_of(t).to_string(), e.focus.agent.clone())))
        .collect();
    held.sort();
    held.dedup_by(|a, b| a.0 == b.0);
    held
}

/// The shell backstop's check, when one is due (see [`step`]).
pub type Check<'a> = &'a dyn Fn() -> std::io::Result<Vec<Restored>>;

/// The guarded step of `caller` (`None` for a reader) at `moment`, with `check` — the shell
/// backstop's check, when one is due — run inside it (see the module docs). Returns what `check`
/// did and the foreign changes found; a lock held too long by another hook skips the sweep.
pub fn step(
    store: &Store,
    here: &Path,
    caller: Option<&str>,
    moment: Moment,
    board: &Board,
    check: Option<Check<'_>>,
) -> std::io::Result<(Vec<Restored>, Vec<Noticed>)> {
    let dir = dir_of(store);
    let run_check = || check.map_or_else(|| Ok(Vec::new()), |c| c());
    let must_sweep = check.is_some() || moment == Moment::Look || caller.is_none() || overdue(&dir);
    let guard = take(&dir, must_sweep)?;
    if !guard.as_ref().is_some_and(|g| g.exclusive) {
        // Another hook sweeps or keeps its own books now: this call keeps its own books only
        // (beside others', not beside a sweep), and leaves the sweep to a later call.
        let restored = run_check()?;
        if guard.is_some()
            && let Some(c) = caller
        {
            own_books(store, &dir, c, moment, board)?;
        }
        return Ok((restored, Vec::new()));
    }
    let restoring = dir.join("restoring");
    finish_restoring(&restoring);
    let here = std::fs::canonicalize(here).unwrap_or_else(|_| here.to_path_buf());
    let (old, from_snapshot) = read_all(&dir);
    let mut recs = tracked(store, &dir, &held(board), &old, caller, moment)?;
    let restored = run_check()?;
    // What the shell check put back is the holder's state again.
    for r in &restored {
        let top = r.worktree.clone().unwrap_or_else(|| here.display().to_string());
        if let Some(i) = recs.iter().position(|x| x.worktree == top && x.path == r.path && !x.open)
            && let Some(again) = record(&dir, &top, &r.path, &r.holder, false)?
        {
            recs[i] = again;
        }
    }
    let noticed = sweep(&dir, &restoring, &here, &mut recs)?;
    if moment == Moment::Before
        && let Some(c) = caller
    {
        for r in recs.iter_mut().filter(|r| r.holder == c) {
            r.open = true;
        }
    }
    // Compared as the files hold them: `tracked` lists the records in the board's order, not the
    // files', and compared so, a sweep that changed nothing wrote again on every call.
    let changed = in_file_order(&dir, &recs) != old || dir.join(LEGACY_INDEX).exists();
    if changed {
        write_all(&dir, &old, &recs)?;
    }
    if changed || !from_snapshot {
        // A failed write leaves none, or one that does not stand: the next sweep reads each
        // holder's file.
        let _ = Snapshot::write(&dir, &recs);
    }
    mark_swept(&dir)?;
    let _ = std::fs::remove_file(&restoring);
    Ok((restored, noticed))
}

/// `caller`'s own bookkeeping, under the shared lock (beside other sessions' own, never beside a
/// sweep): its files marked open before its call, recorded and closed after it. No file is put
/// back here: the next sweep compares what is closed.
fn own_books(store: &Store, dir: &Path, caller: &str, moment: Moment, board: &Board) -> std::io::Result<()> {
    let Some(path) = holder_file(dir, caller) else { return Ok(()) };
    let old = read_recs(&path);
    let held: Vec<(String, String)> = held(board).into_iter().filter(|(_, h)| h == caller).collect();
    let mut recs = tracked(store, dir, &held, &old, Some(caller), moment)?;
    if moment == Moment::Before {
        for r in &mut recs {
            r.open = true;
        }
    }
    if recs != old {
        write_holder(dir, caller, &recs.iter().collect::<Vec<_>>())?;
    }
    Ok(())
}

/// Removes the temporaries a put-back killed midway left (each listed in `restoring` before it
/// was made), then the list.
fn finish_restoring(restoring: &Path) {
    let Ok(text) = std::fs::read_to_string(restoring) else { return };
    for t in text.lines().filter_map(|l| serde_json::from_str::<(String, String, String)>(l).ok()) {
        beneath::remove_temp(Path::new(&t.0), &t.1, &t.2);
    }
    let _ = std::fs::remove_file(restoring);
}

/// The records of every held file in every worktree: the ones in `old` that still stand, and a
/// fresh one for each file first seen (open unless `caller` is its holder, who may be in a call
/// that writes it: a claim is made before its edit is written).
fn tracked(
    store: &Store,
    dir: &Path,
    held: &[(String, String)],
    old: &[Rec],
    caller: Option<&str>,
    moment: Moment,
) -> std::io::Result<Vec<Rec>> {
    let roots: Vec<String> = store.worktree_roots().iter().filter_map(|r| r.to_str().map(str::to_string)).collect();
    // Looked up once per held file in every worktree: an index, not a scan of `old` each time
    // (with 1,000 sessions holding 2,000 files, the scans were a tenth of a hook call).
    let index: std::collections::HashMap<(&str, &str, &str), &Rec> =
        old.iter().rev().map(|r| ((r.worktree.as_str(), r.path.as_str(), r.holder.as_str()), r)).collect();
    let find = |top: &str, path: &str, holder: &str| index.get(&(top, path, holder)).copied();
    let mine = |holder: &str| caller == Some(holder);
    let mut recs: Vec<Rec> = Vec::new();
    let mut fresh = Vec::new();
    for top in &roots {
        for (path, holder) in held {
            match find(top, path, holder) {
                // The holder's own call ended: what it did to its files is its own.
                Some(r) if !(moment == Moment::After && mine(holder) && r.open) => recs.push(r.clone()),
                _ => fresh.push((top.clone(), path.clone(), holder.clone())),
            }
        }
    }
    for (top, path, holder) in fresh {
        if let Some(r) = record(dir, &top, &path, &holder, !mine(&holder))? {
            recs.push(r);
        }
    }
    Ok(recs)
}

/// Puts back every closed record's file that changed, each temporary listed in `restoring` before
/// it is made, and returns what was found.
fn sweep(dir: &Path, restoring: &Path, here: &Path, recs: &mut [Rec]) -> std::io::Result<Vec<Noticed>> {
    let mut noticed = Vec::new();
    let record_tmp = |top: &str, path: &str, tmp: &str| -> std::io::Result<()> {
        let line = serde_json::to_string(&(top, path, tmp)).map_err(std::io::Error::other)?;
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(restoring)?;
        f.write_all(format!("{line}\n").as_bytes())
    };
    for rec in recs.iter_mut().filter(|r| !r.open) {
        if unchanged(rec)? {
            continue;
        }
        let displaced = displace(dir, rec);
        let (top, path) = (rec.worktree.clone(), rec.path.clone());
        let (action, moved_aside) =
            shell_guard::put_back(Path::new(&top), &path, &rec.was, dir, &mut |tmp| record_tmp(&top, &path, tmp))?;
        // The state put back, with its new stamp; its content is the one recorded.
        if (action == RestoreAction::PutBack || action == RestoreAction::Removed)
            && let Some(again) = record(dir, &top, &path, &rec.holder, false)?
        {
            rec.stamp = again.stamp;
            rec.at_ns = again.at_ns;
        }
        noticed.push(Noticed {
            restored: Restored {
                worktree: (Path::new(&top) != here).then_some(top),
                path,
                holder: rec.holder.clone(),
                action,
                moved_aside,
            },
            displaced,
        });
    }
    Ok(noticed)
}

/// What the session that noticed is told.
pub fn describe(noticed: &[Noticed]) -> String {
    noticed
        .iter()
        .map(|n| {
            let r = &n.restored;
            let path = match &r.worktree {
                Some(w) => format!("{} in the worktree {w}", r.path),
                None => r.path.clone(),
            };
            let what = match &r.action {
                RestoreAction::PutBack => format!("it was put back to {}'s last version", r.holder),
                RestoreAction::Removed => "it did not exist in its holder's last version and was removed".into(),
                RestoreAction::NotRestorable(why) => format!("it could not be put back: {why}"),
                RestoreAction::Committed(_) => String::new(),
            };
            let kept =
                n.displaced.as_ref().map(|d| format!("; what it held is kept in {}", d.display())).unwrap_or_default();
            format!(
                "git mas gate: {path}, which {} holds, was changed while no call of its holder was running and no \
                 hook saw it (a background process, or a program outside any session); {what}{kept}.",
                r.holder
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Tells each holder, at its next call, what was put back of its files (not `caller`, who is
/// told in its answer).
pub fn tell_holders(store: &Store, caller: Option<&str>, noticed: &[Noticed]) {
    for n in noticed.iter().filter(|n| Some(n.restored.holder.as_str()) != caller) {
        let _ = shell_guard::save_notice(store, &n.restored.holder, &describe(std::slice::from_ref(n)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(holder: &str, path: &str) -> Rec {
        Rec {
            worktree: "/w".into(),
            path: path.into(),
            holder: holder.into(),
            was: Was::File { sha256: "0".repeat(64), mode: 0o644, kept: false },
            stamp: None,
            at_ns: 1,
            open: false,
        }
    }

    /// Writes `recs` as a sweep does: each holder's file, then the snapshot.
    fn sweep_writes(dir: &Path, recs: &[Rec]) {
        write_all(dir, &[], recs).unwrap();
        Snapshot::write(dir, recs).unwrap();
    }

    #[test]
    fn the_snapshot_stands_until_a_holders_file_is_written_and_holds_what_the_files_hold() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path();
        // Given in another order than the files': "a-b.json" sorts before "a.json".
        let recs = vec![rec("a", "x"), rec("a-b", "y"), rec("a", "z")];
        sweep_writes(dir, &recs);
        let files = read_each(dir);
        assert_eq!(files, in_file_order(dir, &recs));
        assert_eq!(files.iter().map(|r| r.holder.as_str()).collect::<Vec<_>>(), ["a-b", "a", "a"]);
        assert_eq!(read_all(dir), (files.clone(), true));
        // A holder's own books: the snapshot is gone before the file changes, whatever the clock.
        write_holder(dir, "a", &[&rec("a", "x")]).unwrap();
        assert!(!dir.join(SNAPSHOT).exists());
        let (now, from_snapshot) = read_all(dir);
        assert!(!from_snapshot);
        assert_eq!(now, [rec("a-b", "y"), rec("a", "x")]);
    }

    #[test]
    fn a_snapshot_does_not_stand_once_by_has_changed_or_an_earlier_index_is_there() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path();
        sweep_writes(dir, &[rec("a", "x")]);
        assert!(Snapshot::read(dir).is_some());
        std::fs::write(dir.join(LEGACY_INDEX), b"[]").unwrap();
        assert!(Snapshot::read(dir).is_none(), "beside an earlier index");
        std::fs::remove_file(dir.join(LEGACY_INDEX)).unwrap();
        assert!(Snapshot::read(dir).is_some());
        // A file renamed into `by/` by something that leaves the snapshot (a later clock tick).
        std::thread::sleep(Duration::from_millis(50));
        std::fs::write(dir.join("tmp"), b"[]").unwrap();
        std::fs::rename(dir.join("tmp"), dir.join(BY).join("b.json")).unwrap();
        assert!(Snapshot::read(dir).is_none(), "by/ changed");
        // A torn snapshot is not taken.
        sweep_writes(dir, &[rec("a", "x")]);
        let bytes = std::fs::read(dir.join(SNAPSHOT)).unwrap();
        std::fs::write(dir.join(SNAPSHOT), &bytes[..bytes.len() / 2]).unwrap();
        assert!(Snapshot::read(dir).is_none(), "torn");
    }
}

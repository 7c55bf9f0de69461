//! Writes no hook saw: a held file changed while its holder was in no tool call and no shell
//! call of any session was running over it — a process a session left running in the background
//! (`(sleep 3; echo y >> f) &`), an editor, a build — is noticed at the next hook call of any
//! session, and in `git mas status`, put back to the holder's last known state, and both the
//! session that noticed and the holder are told.
//!
//! The holder's last known state of each held file, in every worktree, is kept in
//! `<common git dir>/mas/held/`: `index.json` (per worktree and file: its holder, what it was —
//! type, SHA-256 and mode, as the shell backstop compares — a [`Stamp`] of its metadata, and
//! whether the holder is in a call now) and a copy of each content (`copies/<sha256>`). It is
//! brought up to date by the holder's own calls: its pre-tool hook marks its files open (the
//! call may change them: nothing is put back while it runs), its post-tool hook records what
//! they are after the call and closes them. Any other change is foreign:
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
//! taken as the holder's (the holder's edit wins). Everything runs under one lock
//! (`mas/held/flock`, with `flock(2)`; never removed), so two hooks never interleave their reads and put-backs; a hook
//! that cannot take it within [`LOCK_WAIT`] leaves the sweep to the next call rather than keep a
//! host waiting.
//!
//! What a SIGKILL leaves: the lock is the kernel's and goes with the process; `index.json` is
//! written to a temporary and renamed (the previous index or the new one, whole); copies are
//! written before the index names them, and those no index names are removed by the next sweep;
//! a put-back is `shell_guard::put_back`'s (a temporary renamed over the file), with each
//! temporary's name appended to `restoring` first, which the next sweep removes.

use super::beneath::{self, Open, Stamp};
use super::board::{Board, Liveness};
use super::claims::file_of;
use super::shell_guard::{self, MAX_KEPT_BYTES, RestoreAction, Restored, Was};
use crate::store::Store;
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

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Takes the lock, or `None` when another hook holds it for longer than [`LOCK_WAIT`].
fn lock(dir: &Path) -> std::io::Result<Option<std::fs::File>> {
    std::fs::create_dir_all(dir)?;
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(dir.join("flock"))?;
    let started = std::time::Instant::now();
    loop {
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(Some(file)),
            Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR) if started.elapsed() < LOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(rustix::io::Errno::WOULDBLOCK) => return Ok(None),
            Err(e) => return Err(std::io::Error::from_raw_os_error(e.raw_os_error())),
        }
    }
}

fn read_index(dir: &Path) -> Vec<Rec> {
    std::fs::read(dir.join("index.json")).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
}

fn write_index(dir: &Path, recs: &[Rec]) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(recs).map_err(std::io::Error::other)?;
    crate::fsx::write_atomic(&dir.join("index.json"), &bytes, None)?;
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

/// The guarded step of `caller` (`None` for a reader) at `moment`, with `check` — the shell
/// backstop's check, when one is due — run inside it (see the module docs). Returns what `check`
/// did and the foreign changes found; a lock held too long by another hook skips the sweep.
pub fn step(
    store: &Store,
    here: &Path,
    caller: Option<&str>,
    moment: Moment,
    board: &Board,
    check: impl FnOnce() -> std::io::Result<Vec<Restored>>,
) -> std::io::Result<(Vec<Restored>, Vec<Noticed>)> {
    let dir = dir_of(store);
    let Some(_lock) = lock(&dir)? else { return Ok((check()?, Vec::new())) };
    let restoring = dir.join("restoring");
    finish_restoring(&restoring);
    let here = std::fs::canonicalize(here).unwrap_or_else(|_| here.to_path_buf());
    let old = read_index(&dir);
    let mut recs = tracked(store, &dir, board, &old, caller, moment)?;
    let restored = check()?;
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
    if recs != old {
        write_index(&dir, &recs)?;
    }
    let _ = std::fs::remove_file(&restoring);
    Ok((restored, noticed))
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
    board: &Board,
    old: &[Rec],
    caller: Option<&str>,
    moment: Moment,
) -> std::io::Result<Vec<Rec>> {
    let held = held(board);
    let roots: Vec<String> = store.worktree_roots().iter().filter_map(|r| r.to_str().map(str::to_string)).collect();
    let find = |top: &str, path: &str| old.iter().find(|r| r.worktree == top && r.path == path);
    let mine = |holder: &str| caller == Some(holder);
    let mut recs: Vec<Rec> = Vec::new();
    let mut fresh = Vec::new();
    for top in &roots {
        for (path, holder) in &held {
            match find(top, path) {
                // The holder's own call ended: what it did to its files is its own.
                Some(r) if r.holder == *holder && !(moment == Moment::After && mine(holder) && r.open) => {
                    recs.push(r.clone())
                }
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

//! git's `index.lock`: whether a process still holds it, and removing it when none does.
//!
//! git takes a worktree's index lock by creating `index.lock` with `O_CREAT | O_EXCL`, keeps the
//! descriptor open while it writes the new index, and closes it just before renaming the lock
//! over `index` (or deleting it). A process killed in between leaves the file, and every later
//! git command that writes the index fails on it ("Unable to create …/index.lock: File exists")
//! until someone removes it by hand.
//!
//! **Held**, here, means some process on this machine has the lock file open: every live git
//! holding it does, except for the instant between its `close` and its `rename`. So the lock is
//! judged stale only when no process has it open twice, [`SETTLE`] apart, with the file the same
//! one both times (same inode): a live git in that instant has renamed or deleted it by then.
//! Processes are found through `/proc/<pid>/fd`; those whose descriptors cannot be read (another
//! user's) are not seen, and a lock taken from another machine (a repository on a network file
//! system) is not seen either — both are cases git itself leaves to people.
//!
//! Decisions: [`judge`] is pure (what was seen in → what to do out); [`clear_stale`] reads the
//! system and removes.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long apart the two looks for a holder are.
pub const SETTLE: Duration = Duration::from_millis(50);

/// A lock file as it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum LockState {
    /// There is none.
    Absent,
    /// Process `pid` has it open.
    Held {
        /// The holder.
        pid: u32,
    },
    /// No process has it open: a killed process left it.
    Stale,
}

/// One look at a lock: its inode (`None`: absent) and a process that had it open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    /// The lock file's inode.
    pub inode: Option<u64>,
    /// A process that has it open.
    pub holder: Option<u32>,
}

/// What two looks [`SETTLE`] apart say of a lock.
pub fn judge(first: Look, second: Look) -> LockState {
    match (first, second) {
        (_, Look { inode: None, .. }) => LockState::Absent,
        (_, Look { holder: Some(pid), .. }) | (Look { holder: Some(pid), .. }, _) => LockState::Held { pid },
        // Replaced in between: a new holder took it (and may not have opened it yet when looked).
        (Look { inode: a, .. }, Look { inode: b, .. }) if a != b => LockState::Held { pid: 0 },
        _ => LockState::Stale,
    }
}

/// The index lock of the worktree whose git dir is `gitdir`.
pub fn index_lock(gitdir: &Path) -> PathBuf {
    gitdir.join("index.lock")
}

fn look(lock: &Path) -> Look {
    let inode = std::fs::symlink_metadata(lock).ok().map(|m| m.ino());
    Look { inode, holder: inode.and_then(|_| holder(lock)) }
}

/// Where `lock` stands now (two looks, [`SETTLE`] apart, when the first finds no holder).
pub fn state(lock: &Path) -> LockState {
    let first = look(lock);
    if first.inode.is_none() || first.holder.is_some() {
        return judge(first, first);
    }
    std::thread::sleep(SETTLE);
    judge(first, look(lock))
}

/// Removes `lock` when it is stale; what it was.
pub fn clear_stale(lock: &Path) -> std::io::Result<LockState> {
    let found = state(lock);
    if found == LockState::Stale {
        match std::fs::remove_file(lock) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(LockState::Absent),
            Err(e) => return Err(e),
        }
    }
    Ok(found)
}

/// How long [`clear_stale_waiting`] waits for a live holder: a git updating a checkout holds the
/// lock for milliseconds to a second (the patience [`super::run_git`] has with git's own refusal).
pub const PATIENCE: Duration = Duration::from_secs(2);

/// [`clear_stale`], waiting up to `patience` for a live holder to let go (a concurrent landing
/// updating the same checkout); what the lock was last.
pub fn clear_stale_waiting(lock: &Path, patience: Duration) -> std::io::Result<LockState> {
    let start = std::time::Instant::now();
    loop {
        match clear_stale(lock)? {
            LockState::Held { .. } if start.elapsed() < patience => std::thread::sleep(Duration::from_millis(25)),
            found => return Ok(found),
        }
    }
}

/// A process (not this one) that has `path` open, found through `/proc/<pid>/fd`.
pub fn holder(path: &Path) -> Option<u32> {
    let want = canonical(path);
    let me = std::process::id();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if pid == me {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else { continue };
        for fd in fds.flatten() {
            if std::fs::read_link(fd.path()).is_ok_and(|target| target == want) {
                return Some(pid);
            }
        }
    }
    None
}

/// `path` with its folder resolved (the lock itself may be gone), as `/proc/<pid>/fd` names it.
fn canonical(path: &Path) -> PathBuf {
    match (path.parent().and_then(|p| std::fs::canonicalize(p).ok()), path.file_name()) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_is_stale_only_when_nobody_held_the_same_file_in_either_look() {
        let look = |inode: Option<u64>, holder: Option<u32>| Look { inode, holder };
        let table = [
            (look(None, None), look(None, None), LockState::Absent),
            // Committed (renamed away) between the looks.
            (look(Some(7), Some(42)), look(None, None), LockState::Absent),
            (look(Some(7), Some(42)), look(Some(7), None), LockState::Held { pid: 42 }),
            (look(Some(7), None), look(Some(7), Some(43)), LockState::Held { pid: 43 }),
            // Another git took the lock between the looks.
            (look(Some(7), None), look(Some(8), None), LockState::Held { pid: 0 }),
            (look(None, None), look(Some(8), None), LockState::Held { pid: 0 }),
            (look(Some(7), None), look(Some(7), None), LockState::Stale),
        ];
        for (first, second, want) in table {
            assert_eq!(judge(first, second), want, "{first:?} then {second:?}");
        }
    }

    #[test]
    fn a_lock_a_live_process_keeps_open_is_held_and_one_nobody_holds_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let lock = index_lock(dir.path());
        assert_eq!(clear_stale(&lock).unwrap(), LockState::Absent);
        std::fs::write(&lock, "x").unwrap();
        // A child process holding it open, as git does while it writes the index.
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg("exec 3<\"$0\"; echo ready; exec sleep 30")
            .arg(&lock)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
        assert_eq!(clear_stale(&lock).unwrap(), LockState::Held { pid: child.id() });
        assert!(lock.exists());
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(clear_stale(&lock).unwrap(), LockState::Stale);
        assert!(!lock.exists());
    }
}

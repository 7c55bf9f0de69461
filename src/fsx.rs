//! Writing a file atomically: one function for every "write a temporary, rename it over the
//! target" of the crate.
//!
//! Why one function: the temporary's name is what a crash leaves behind and what `git mas doctor`
//! has to recognise, and the steps (create, write, flush, rename, flush the folder, clean up on
//! error) are easy to get subtly wrong. Written once, every file the crate replaces gets the same
//! guarantee — a reader sees the old bytes or the new ones, never a mix — and every leftover the
//! same name.
//!
//! The naming rule: the temporary for `<dir>/<name>` is `<dir>/.<name>.mas-tmp.<pid>.<counter>`
//! — in the target's own folder (a rename does not cross file systems), hidden, carrying the
//! writing process's id (so a leftover whose process is gone is known to be one) and a counter
//! of this process (so two threads writing the same file never share a temporary).
//! [`is_temporary`] and [`temporary_pid`] read the rule back.
//!
//! What is symlink-safe: the temporary is created with `create_new` (`O_CREAT | O_EXCL`), which
//! never follows a symbolic link planted at its name — such a name is skipped for the next
//! counter. The rename replaces whatever is at the target's place, a symbolic link included,
//! rather than writing through it: the link's destination is never touched. A caller that means
//! to write through a link resolves it first and passes the final path.
//!
//! It also holds the crate's one way to wait for a lock file ([`lock_within`]): a hook that
//! queues behind others is woken by the kernel the moment the lock is free, not by a timer.
//!
//! This module imports nothing of the crate: every layer may use it.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What comes between a file's name and the process id in a temporary's name.
pub const TEMP_INFIX: &str = ".mas-tmp.";

/// How many names [`write_atomic`] tries when a name is taken (a leftover of a process whose id
/// this one reuses, or something planted).
const ATTEMPTS: u32 = 16;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh temporary path for a write to `target`: `.<name>.mas-tmp.<pid>.<counter>` beside it.
pub fn temporary_for(target: &Path) -> PathBuf {
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{name}{TEMP_INFIX}{}.{n}", std::process::id()))
}

/// Whether `name` (a file name, not a path) is a temporary of [`write_atomic`]'s rule.
pub fn is_temporary(name: &str) -> bool {
    temporary_pid(name).is_some()
}

/// The process id in a temporary's name (`.<name>.mas-tmp.<pid>.<counter>`); `None` when the
/// name does not follow the rule.
pub fn temporary_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let at = rest.rfind(TEMP_INFIX)?;
    if at == 0 {
        return None;
    }
    let (pid, counter) = rest[at + TEMP_INFIX.len()..].split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(counter) {
        return None;
    }
    pid.parse().ok().filter(|&p| p > 0)
}

/// The temporary's target name: `settings.json` for `.settings.json.mas-tmp.12.0`.
pub fn temporary_target(name: &str) -> Option<&str> {
    temporary_pid(name)?;
    let rest = name.strip_prefix('.')?;
    Some(&rest[..rest.rfind(TEMP_INFIX)?])
}

/// Writes `bytes` to `path` atomically: a temporary beside it (named by the rule above) created
/// new, written, given permission bits `mode` when one is given (else the process's default for
/// a new file), flushed to disk, renamed over `path` — replacing a symbolic link there rather
/// than writing through it —, then the folder flushed. On any error the temporary is removed and
/// `path` is as it was. The folder must exist.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    replace(path, bytes, mode, true)?;
    sync_dir(path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")));
    Ok(())
}

/// Writes `bytes` to `path` as [`write_atomic`] does — a temporary by the same rule, renamed
/// over `path` — but flushes nothing to disk: for a file that only speeds up or remembers what
/// can be seen again, written on a path where a flush would be paid by every caller queued
/// behind a lock. A process killed at any instant leaves the old bytes or the new ones, whole
/// (the rename is atomic for every reader); a power cut may leave the old ones.
pub fn replace_unflushed(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, None, false)
}

/// A temporary beside `path` written with `bytes` (given `mode`, flushed when `flush`) and
/// renamed over it; removed on any error.
fn replace(path: &Path, bytes: &[u8], mode: Option<u32>, flush: bool) -> std::io::Result<()> {
    let (tmp, mut file) = create_temporary(path)?;
    let written = (|| {
        file.write_all(bytes)?;
        if let Some(mode) = mode {
            set_mode(&file, mode)?;
        }
        if flush {
            file.sync_all()?;
        }
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}

/// Creates a new temporary for `target`, trying the next counter when a name is taken.
fn create_temporary(target: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let tmp = temporary_for(target);
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no temporary name")))
}

#[cfg(unix)]
fn set_mode(file: &std::fs::File, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_: &std::fs::File, _: u32) -> std::io::Result<()> {
    Ok(())
}

/// Flushes a folder's entries (a rename or a removal in it) to disk; best effort (not every
/// file system can).
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Takes `file`'s exclusive lock (`flock(2)`, through std), waiting at most `wait`: `Ok(true)`
/// when it is held (until `file` and every handle cloned from it are closed), `Ok(false)` when
/// another process held it all that time.
///
/// The wait is the kernel's, on a thread of its own (a lock call has no deadline), so a waiter
/// runs the moment the lock is let go. Polling with a sleep between tries, as this did before,
/// left a waiter asleep while the lock went to a process that came later: with 16 sessions'
/// hooks queued on one lock the slowest call took hundreds of milliseconds (BENCHMARKS.md, "Hook
/// latency under load"). The thread is started only when the lock is taken. When the wait runs
/// out, the thread stays blocked until the lock is free, then closes its handle, which lets the
/// lock go again: nothing is held for a caller that gave up.
pub fn lock_within(file: &std::fs::File, wait: std::time::Duration) -> std::io::Result<bool> {
    take_within(file, wait, false)
}

/// Takes `file`'s shared lock as [`lock_within`] takes its exclusive one: held beside other
/// shared holders, never beside an exclusive one.
pub fn lock_shared_within(file: &std::fs::File, wait: std::time::Duration) -> std::io::Result<bool> {
    take_within(file, wait, true)
}

fn take_within(file: &std::fs::File, wait: std::time::Duration, shared: bool) -> std::io::Result<bool> {
    let tried = if shared { file.try_lock_shared() } else { file.try_lock() };
    match tried {
        Ok(()) => return Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => {}
        Err(std::fs::TryLockError::Error(e)) => return Err(e),
    }
    if wait.is_zero() {
        return Ok(false);
    }
    let waiter = file.try_clone()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new().name("lock-wait".into()).spawn(move || {
        let _ = tx.send(if shared { waiter.lock_shared() } else { waiter.lock() });
    })?;
    match rx.recv_timeout(wait) {
        Ok(taken) => taken.map(|()| true),
        Err(_) => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_the_content_and_leaves_no_temporary() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("a.json");
        write_atomic(&path, b"one", None).unwrap();
        write_atomic(&path, b"two", None).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(names(t.path()), vec!["a.json".to_string()]);
    }

    #[cfg(unix)]
    #[test]
    fn gives_the_mode_asked_for() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("hook");
        write_atomic(&path, b"#!/bin/sh\n", Some(0o755)).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o755);
        write_atomic(&path, b"#!/bin/sh\n", Some(0o600)).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_at_the_target_is_replaced_not_written_through() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let path = t.path().join("a.json");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        write_atomic(&path, b"new", None).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(!std::fs::symlink_metadata(&path).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_planted_at_a_temporary_name_is_never_followed() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let path = t.path().join("a.json");
        // The next names this process would use, each a planted link.
        let next = COUNTER.load(Ordering::Relaxed);
        for n in next..next + 4 {
            let name = format!(".a.json{TEMP_INFIX}{}.{n}", std::process::id());
            std::os::unix::fs::symlink(&victim, t.path().join(name)).unwrap();
        }
        write_atomic(&path, b"new", None).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
    }

    #[test]
    fn an_error_leaves_no_temporary() {
        let t = tempfile::tempdir().unwrap();
        // The target is a non-empty folder: the rename fails.
        let path = t.path().join("d");
        std::fs::create_dir_all(path.join("inside")).unwrap();
        assert!(write_atomic(&path, b"x", None).is_err());
        assert_eq!(names(t.path()), vec!["d".to_string()]);
    }

    #[test]
    fn a_stale_temporary_is_recognised_by_the_rule() {
        let t = tempfile::tempdir().unwrap();
        let stale = temporary_for(&t.path().join("settings.json"));
        std::fs::write(&stale, b"half").unwrap();
        let name = stale.file_name().unwrap().to_str().unwrap();
        assert!(is_temporary(name), "{name}");
        assert_eq!(temporary_pid(name), Some(std::process::id()));
        assert_eq!(temporary_target(name), Some("settings.json"));
        let table = [
            (".settings.json.mas-tmp.1234.0", Some(1234)),
            (".a.mas-tmp.b.mas-tmp.7.12", Some(7)),
            (".settings.json.mas-tmp.0.1", None),
            (".settings.json.mas-tmp.12a.1", None),
            (".settings.json.mas-tmp.12.", None),
            (".settings.json.mas-tmp.12", None),
            (".mas-tmp.12.1", None),
            ("settings.json.mas-tmp.12.1", None),
            (".settings.json.mas-tmp.12.1.bak", None),
            (".settings.json.git-mas-1234.tmp", None),
        ];
        for (name, want) in table {
            assert_eq!(temporary_pid(name), want, "{name}");
            assert_eq!(is_temporary(name), want.is_some(), "{name}");
        }
    }

    fn open_lock(path: &Path) -> std::fs::File {
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path).unwrap()
    }

    #[test]
    fn a_waiter_gets_the_lock_when_it_is_let_go_and_gives_up_at_its_deadline() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("flock");
        let holder = open_lock(&path);
        assert!(lock_within(&holder, std::time::Duration::ZERO).unwrap());
        // Held by another open of the file: a zero wait and a short one give up.
        let other = open_lock(&path);
        assert!(!lock_within(&other, std::time::Duration::ZERO).unwrap());
        assert!(!lock_within(&other, std::time::Duration::from_millis(50)).unwrap());
        drop(other);
        // Let go while a waiter waits: the waiter has it, long before its deadline.
        let started = std::time::Instant::now();
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            drop(holder);
        });
        let waiter = open_lock(&path);
        assert!(lock_within(&waiter, std::time::Duration::from_secs(20)).unwrap());
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
        releaser.join().unwrap();
        // The waiter that gave up above holds nothing: once the lock is let go, it is free.
        drop(waiter);
        let again = open_lock(&path);
        let mut free = false;
        for _ in 0..200 {
            if lock_within(&again, std::time::Duration::ZERO).unwrap() {
                free = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(free, "an abandoned wait kept the lock");
    }

    #[test]
    fn shared_holders_share_and_exclude_an_exclusive_one() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("flock");
        let (one, two, ex) = (open_lock(&path), open_lock(&path), open_lock(&path));
        assert!(lock_shared_within(&one, std::time::Duration::ZERO).unwrap());
        assert!(lock_shared_within(&two, std::time::Duration::ZERO).unwrap());
        assert!(!lock_within(&ex, std::time::Duration::from_millis(30)).unwrap());
        // The exclusive waiter that gave up holds nothing once it is closed.
        drop((one, two, ex));
        let ex = open_lock(&path);
        assert!(lock_within(&ex, std::time::Duration::from_secs(20)).unwrap());
        let three = open_lock(&path);
        assert!(!lock_shared_within(&three, std::time::Duration::ZERO).unwrap());
    }
}

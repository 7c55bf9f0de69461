//! Reading and compare-and-swapping refs under git's own lock protocol, correct beside
//! `git pack-refs`, `git gc` and `git maintenance`.
//!
//! # Why not a gix ref transaction
//!
//! A gix transaction (0.90) takes its snapshot of `packed-refs` *before* it locks the loose ref, then
//! compares the expected value with the loose file or, when there is none, with that snapshot. `git
//! pack-refs` writes a new `packed-refs` first and only then deletes each loose ref (under that ref's
//! lock). A pack between the snapshot and the lock leaves the transaction looking at a loose ref that
//! is gone and a `packed-refs` that is older than the one on disk: the ref's real value (just packed)
//! is never seen, an old packed value can match the caller's stale expectation, and the update
//! replaces a record that another writer's append had already acknowledged. Measured: with 16
//! writers and a `git pack-refs --all` loop, 17 of 27 runs lost acknowledged records, and appends
//! whose re-read happened to hit the same stale snapshot failed with "Expected reference content".
//!
//! # The protocol here
//!
//! 1. Lock every ref of the update by creating `<ref>.lock` with `O_EXCL` (sorted by name, so two
//!    multi-ref updates never wait on each other in a cycle).
//! 2. Under the locks, read each ref's current value: the loose file, else a **fresh** read of
//!    `packed-refs`. While we hold a ref's lock its packed value cannot change under us: `git
//!    pack-refs` only packs loose refs (a ref with no loose file keeps its packed line), and it takes
//!    the same lock before it deletes a loose file (and deletes it only if it still holds the packed
//!    value). So this read is the ref's true value.
//! 3. Compare with the expected values; any difference is a lost race (a typed outcome the caller
//!    retries after re-reading), never an error.
//! 4. Write each new value into its lock file and rename it over the ref, in the caller's order. A
//!    loose ref always overrides a packed one, so nothing in `packed-refs` needs to change.
//!
//! Readers ([`RefFiles::read`]) read the loose file first and `packed-refs` after it, in that order:
//! a loose ref missing because `pack-refs` just pruned it is already in the `packed-refs` that was
//! renamed into place before the pruning began. A cached `packed-refs` is reused only while the file
//! is the same file (device, inode, size and modification time): a new `packed-refs` is always a new
//! inode, renamed into place.
//!
//! # Crashes and locks
//!
//! A SIGKILL between two renames of a multi-ref update leaves the refs renamed so far moved and the
//! rest unmoved: callers that move several refs design for it (see `pool/land.rs`). A SIGKILL while
//! a lock is held leaves the lock file behind, and git (like us) never breaks another process's lock.
//! A lock held by a live writer lives for microseconds to milliseconds (no lock is held across a
//! child process or a network call), so a lock older than [`STALE_LOCK_AGE`] is reported as
//! [`super::StoreError::StaleLock`] with its path and age instead of being waited on; `git mas
//! doctor --fix` removes such locks.

use gix::ObjectId;
use std::cell::RefCell;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// A lock file this old was left by a process that died: no git-mas or git ref update holds a
/// ref lock for more than milliseconds.
pub const STALE_LOCK_AGE: Duration = Duration::from_secs(3);

/// How long one compare-and-swap waits for a young lock (a live writer) before reporting a lost
/// race, so that the caller re-reads and retries.
const LOCK_WAIT: Duration = Duration::from_millis(100);

/// How many times a listing re-reads a loose ref that vanished between the listing and the read
/// (see [`RefFiles::list`]): once is enough for a pack; more covers a delete and re-create.
pub const VANISHED_RETRIES: u32 = 4;

/// Why a ref could not be read or locked.
#[derive(Debug)]
pub enum RefFileError {
    /// A lock file older than [`STALE_LOCK_AGE`] is in the way.
    Stale { lock: PathBuf, age: Duration },
    /// A ref's loose file holds something that is not an object id.
    Unreadable { name: String, content: String },
    /// `packed-refs` could not be parsed.
    Packed { path: PathBuf, source: Box<dyn std::error::Error + Send + Sync> },
    /// A file operation failed.
    Io { path: PathBuf, source: std::io::Error },
}

/// A ref a listing found: its full name, and its value or why it has none.
pub type Listed = (String, Result<ObjectId, RefFileError>);

/// The outcome of trying to lock one ref.
enum Acquired {
    Locked(RefLock),
    /// A live writer holds the lock: the caller should re-read and retry.
    Busy,
}

/// The identity of a `packed-refs` file: a rewritten one is always a new inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: Option<SystemTime>,
}

fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some(FileId { dev: m.dev(), ino: m.ino(), len: m.len(), mtime: m.modified().ok() })
}

/// The loose and packed ref files of one common git dir.
pub struct RefFiles {
    common_dir: PathBuf,
    hash: gix::hash::Kind,
    packed: RefCell<Option<(FileId, gix::refs::packed::Buffer)>>,
}

/// What a loose ref file holds.
enum Loose {
    Missing,
    Object(ObjectId),
}

impl RefFiles {
    /// The ref files under `common_dir`.
    pub fn new(common_dir: PathBuf, hash: gix::hash::Kind) -> Self {
        RefFiles { common_dir, hash, packed: RefCell::new(None) }
    }

    /// Whether `name` is a ref this module reads and writes directly: a ref stored in the common
    /// git dir (everything under `refs/` except git's per-worktree namespaces).
    pub fn handles(name: &str) -> bool {
        name.starts_with("refs/")
            && !["refs/bisect/", "refs/worktree/", "refs/rewritten/"].iter().any(|p| name.starts_with(p))
    }

    fn loose_path(&self, name: &str) -> PathBuf {
        self.common_dir.join(name)
    }

    /// The path of `packed-refs`.
    pub fn packed_path(&self) -> PathBuf {
        self.common_dir.join("packed-refs")
    }

    fn read_loose(&self, name: &str) -> Result<Loose, RefFileError> {
        let path = self.loose_path(name);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loose::Missing),
            // A directory where the ref would be: `refs/mas/runs` when `refs/mas/runs/x` exists.
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory || path.is_dir() => return Ok(Loose::Missing),
            Err(source) => return Err(RefFileError::Io { path, source }),
        };
        let hex = loose_text(&bytes);
        ObjectId::from_hex(hex.as_bytes())
            .map(Loose::Object)
            .map_err(|_| RefFileError::Unreadable { name: name.into(), content: hex.chars().take(80).collect() })
    }

    /// The ref's value in `packed-refs`, read from disk now (`fresh`) or from the cached buffer
    /// while the file is unchanged.
    fn read_packed(&self, name: &str, fresh: bool) -> Result<Option<ObjectId>, RefFileError> {
        let path = self.packed_path();
        let Some(id) = file_id(&path) else {
            *self.packed.borrow_mut() = None;
            return Ok(None);
        };
        let mut cache = self.packed.borrow_mut();
        if fresh || cache.as_ref().is_none_or(|(cached, _)| *cached != id) {
            match gix::refs::packed::Buffer::open(path.clone(), 32 * 1024, self.hash) {
                Ok(buffer) => *cache = Some((id, buffer)),
                Err(e) => {
                    *cache = None;
                    // Gone between the stat and the open: nothing is packed.
                    if file_id(&path).is_none() {
                        return Ok(None);
                    }
                    return Err(RefFileError::Packed { path, source: Box::new(e) });
                }
            }
        }
        let Some((_, buffer)) = cache.as_ref() else { return Ok(None) };
        match buffer.try_find(name) {
            Ok(found) => Ok(found.map(|r| r.target())),
            Err(e) => Err(RefFileError::Packed { path, source: Box::new(e) }),
        }
    }

    /// The value of ref `name`: its loose file, else its line in `packed-refs` (read after the loose
    /// file, see the module docs).
    pub fn read(&self, name: &str) -> Result<Option<ObjectId>, RefFileError> {
        match self.read_loose(name)? {
            Loose::Object(id) => Ok(Some(id)),
            Loose::Missing => self.read_packed(name, false),
        }
    }

    /// Every ref under `prefix` (a full ref prefix, `refs/mas/focus/` or `refs/mas/runs/r1`), with
    /// its value or why it has none, sorted by name.
    ///
    /// Git's order, which makes a listing correct beside `git pack-refs` without comparing
    /// generations: the loose refs are walked first and `packed-refs` is read after the walk.
    /// `pack-refs` renames the new `packed-refs` into place before it prunes any loose file, so a
    /// ref pruned before the walk reached its directory is in the `packed-refs` read after it, and a
    /// loose file listed but gone when it is opened is re-read from a fresh `packed-refs` (git's
    /// `files_read_raw_ref` does the same after an `ENOENT`), at most [`VANISHED_RETRIES`] times in
    /// case it was deleted and written again. A listed ref found in neither was deleted while we
    /// listed: it is left out, as a listing taken a moment later would leave it out. Only a ref that
    /// really cannot be read (a loose file that is not an object id, a symbolic ref) comes back as
    /// an error, naming the ref.
    pub fn list(&self, prefix: &str) -> Result<Vec<Listed>, RefFileError> {
        Ok(self.list_stamped(prefix)?.0)
    }

    /// [`Self::list`], with what the listing saw of the files it read ([`Stamp`]s): each walked
    /// directory as it was before its entries were read, and `packed-refs` as it was before it
    /// was read. A ref can change only by a rename into its directory (git's lock protocol and
    /// ours), a deletion from it, or a new `packed-refs`, each of which changes a stamp.
    pub fn list_stamped(&self, prefix: &str) -> Result<(Vec<Listed>, Vec<Stamp>), RefFileError> {
        let mut found = std::collections::BTreeMap::new();
        let top = prefix.rfind('/').map_or("", |slash| &prefix[..slash]);
        let mut loose = Vec::new();
        let mut stamps = Vec::new();
        self.walk_loose(&self.common_dir.join(top), top, prefix, &mut loose, &mut stamps)?;
        for (name, read) in loose {
            let read = match read {
                Some(id) => Ok(Some(id)),
                None => self.read_listed(&name),
            };
            match read {
                Ok(Some(id)) => {
                    found.insert(name, Ok(id));
                }
                Ok(None) => {}
                Err(e @ RefFileError::Unreadable { .. }) => {
                    found.insert(name, Err(e));
                }
                Err(e) => return Err(e),
            }
        }
        let path = self.packed_path();
        stamps.push(Stamp::of(PACKED, rustix::fs::stat(&path).ok()));
        if let Some(buffer) = self.fresh_packed()? {
            let iter = buffer
                .iter_prefixed(prefix.into())
                .map_err(|e| RefFileError::Packed { path: path.clone(), source: Box::new(e) })?;
            for r in iter {
                let r = r.map_err(|e| RefFileError::Packed { path: path.clone(), source: Box::new(e) })?;
                let name = r.name.as_bstr().to_string();
                found.entry(name).or_insert_with(|| Ok(r.target()));
            }
        }
        Ok((found.into_iter().collect(), stamps))
    }

    /// Each stamp's file as it is now: equal to a listing's stamps when nothing it read changed.
    pub fn stamps_now(&self, stamps: &[Stamp]) -> Vec<Stamp> {
        stamps.iter().map(|s| Stamp::of(&s.path, rustix::fs::stat(self.common_dir.join(&s.path)).ok())).collect()
    }

    /// The value of a ref a listing found as a loose file: that file, else (pruned by `git
    /// pack-refs` since it was listed) a fresh `packed-refs`. `None`: deleted meanwhile.
    fn read_listed(&self, name: &str) -> Result<Option<ObjectId>, RefFileError> {
        for _ in 0..VANISHED_RETRIES {
            if let Loose::Object(id) = self.read_loose(name)? {
                return Ok(Some(id));
            }
            if let Some(id) = self.read_packed(name, true)? {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }

    /// `packed-refs` as it is on disk now, or `None` when there is none.
    fn fresh_packed(&self) -> Result<Option<gix::refs::packed::Buffer>, RefFileError> {
        let path = self.packed_path();
        match gix::refs::packed::Buffer::open(path.clone(), 32 * 1024, self.hash) {
            Ok(buffer) => Ok(Some(buffer)),
            // Gone (or never there): nothing is packed.
            Err(_) if file_id(&path).is_none() => Ok(None),
            Err(e) => Err(RefFileError::Packed { path, source: Box::new(e) }),
        }
    }

    /// Collects the loose ref files under `dir` (the ref path `name`) whose names start with
    /// `prefix`, recursively, each with its value when its file held an object id as it was read
    /// in the walk (`None`: gone, or anything else, for [`Self::read_listed`] to read as one ref).
    /// A directory that vanished meanwhile (`git pack-refs` removes emptied ones) holds nothing;
    /// lock files and names git would not accept are not refs.
    ///
    /// Each file is opened relative to its directory's descriptor and read into a small buffer:
    /// one `openat`, one or two `read`s and a `close`, where reading by path also walked every
    /// component of the path and asked for the file's size. With 10,000 refs under one prefix this
    /// is most of a listing's cost.
    fn walk_loose(
        &self,
        dir: &Path,
        name: &str,
        prefix: &str,
        out: &mut Vec<LooseRead>,
        stamps: &mut Vec<Stamp>,
    ) -> Result<(), RefFileError> {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::CLOEXEC;
        let fd = match rustix::fs::open(dir, flags | OFlags::DIRECTORY, Mode::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => {
                stamps.push(Stamp::of(name, None));
                return Ok(());
            }
            Err(e) => return Err(RefFileError::Io { path: dir.into(), source: e.into() }),
        };
        // Before any entry is read: a change after this moves the directory's times.
        stamps.push(Stamp::of(name, rustix::fs::fstat(&fd).ok()));
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => return Ok(()),
            Err(source) => return Err(RefFileError::Io { path: dir.into(), source }),
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(source) => return Err(RefFileError::Io { path: dir.into(), source }),
            };
            let Some(file) = entry.file_name().to_str().map(str::to_owned) else { continue };
            let child = if name.is_empty() { file.clone() } else { format!("{name}/{file}") };
            match entry.file_type() {
                Ok(t) if t.is_dir() => {
                    // Only a directory the prefix can reach: `refs/mas/focus/` is not below `refs/mas/runs`.
                    let below = format!("{child}/");
                    if below.starts_with(prefix) || prefix.starts_with(&below) {
                        self.walk_loose(&entry.path(), &child, prefix, out, stamps)?
                    }
                }
                Ok(_) => {
                    if child.starts_with(prefix) && gix::refs::FullName::try_from(child.as_str()).is_ok() {
                        let read = rustix::fs::openat(&fd, file.as_str(), flags, Mode::empty())
                            .ok()
                            .and_then(|f| read_small(&f))
                            .and_then(|bytes| object_id(&bytes));
                        out.push((child, read));
                    }
                }
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(source) => return Err(RefFileError::Io { path: entry.path(), source }),
            }
        }
        Ok(())
    }

    /// The identity of `packed-refs` now, to tell whether a listing raced with a pack.
    pub fn packed_generation(&self) -> Option<impl PartialEq + Copy + std::fmt::Debug> {
        file_id(&self.packed_path())
    }

    /// Moves each `(name, expected, new)` from `expected` (`None`: must not exist) to `new`, under
    /// the refs' locks. `Ok(Err(actual))`: a ref was not as expected (`actual` is the first such
    /// ref's value) or a live writer held a lock; nothing moved.
    pub fn compare_and_swap(
        &self,
        edits: &[(&str, Option<ObjectId>, ObjectId)],
        reflog: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Result<(), Option<ObjectId>>, RefFileError> {
        let mut order: Vec<usize> = (0..edits.len()).collect();
        order.sort_by_key(|&i| edits[i].0);
        let mut locks: Vec<Option<RefLock>> = (0..edits.len()).map(|_| None).collect();
        for &i in &order {
            match RefLock::acquire(&self.loose_path(edits[i].0))? {
                Acquired::Locked(lock) => locks[i] = Some(lock),
                Acquired::Busy => return Ok(Err(self.read(edits[0].0)?)),
            }
        }
        for (name, expected, _) in edits {
            let actual = match self.read_loose(name)? {
                Loose::Object(id) => Some(id),
                Loose::Missing => self.read_packed(name, true)?,
            };
            if actual != *expected {
                return Ok(Err(actual));
            }
        }
        for ((name, expected, new), lock) in edits.iter().zip(locks) {
            let lock = lock.expect("every ref was locked above");
            if let Some(message) = reflog(name) {
                self.append_reflog(name, *expected, *new, &message)?;
            }
            lock.commit(*new)?;
        }
        Ok(Ok(()))
    }

    /// Appends a line to `logs/<name>`, git's reflog format.
    fn append_reflog(&self, name: &str, old: Option<ObjectId>, new: ObjectId, line: &str) -> Result<(), RefFileError> {
        let path = self.common_dir.join("logs").join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| RefFileError::Io { path: parent.into(), source })?;
        }
        let old = old.unwrap_or_else(|| ObjectId::null(self.hash));
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|source| RefFileError::Io { path: path.clone(), source })?;
        file.write_all(format!("{old} {new} {line}\n").as_bytes()).map_err(|source| RefFileError::Io { path, source })
    }

    /// Whether `logs/<name>` exists (git appends to an existing reflog whatever the configuration).
    pub fn has_reflog(&self, name: &str) -> bool {
        self.common_dir.join("logs").join(name).is_file()
    }
}

/// A held `<ref>.lock`, removed on drop unless committed.
struct RefLock {
    file: Option<std::fs::File>,
    lock: PathBuf,
    target: PathBuf,
}

impl RefLock {
    /// Creates `<path>.lock`, waiting up to [`LOCK_WAIT`] for a live writer's lock to go, and
    /// refusing at once a lock older than [`STALE_LOCK_AGE`].
    fn acquire(path: &Path) -> Result<Acquired, RefFileError> {
        let mut lock = path.as_os_str().to_owned();
        lock.push(".lock");
        let lock = PathBuf::from(lock);
        let start = Instant::now();
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            // `git pack-refs` removes emptied directories while we create them: try again.
            if let Some(parent) = lock.parent()
                && let Err(source) = std::fs::create_dir_all(parent)
            {
                if attempt < 64 && matches!(source.kind(), ErrorKind::AlreadyExists | ErrorKind::NotFound) {
                    continue;
                }
                return Err(RefFileError::Io { path: parent.into(), source });
            }
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&lock) {
                Ok(file) => return Ok(Acquired::Locked(RefLock { file: Some(file), lock, target: path.into() })),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    if let Some(age) = lock_age(&lock)
                        && age >= STALE_LOCK_AGE
                    {
                        return Err(RefFileError::Stale { lock, age });
                    }
                    if start.elapsed() >= LOCK_WAIT {
                        return Ok(Acquired::Busy);
                    }
                    std::thread::sleep(Duration::from_micros(100 * u64::from(attempt.min(20))));
                }
                // `git pack-refs` removes emptied directories: create them again.
                Err(e) if e.kind() == ErrorKind::NotFound && attempt < 64 => {}
                Err(source) => return Err(RefFileError::Io { path: lock, source }),
            }
        }
    }

    /// Writes `new` and renames the lock over the ref.
    fn commit(mut self, new: ObjectId) -> Result<(), RefFileError> {
        let mut file = self.file.take().expect("an uncommitted lock has its file");
        file.write_all(format!("{new}\n").as_bytes())
            .map_err(|source| RefFileError::Io { path: self.lock.clone(), source })?;
        drop(file);
        // git's lock protocol (`<ref>.lock`, taken before the write, is what other writers wait
        // on): not `fsx::write_atomic`.
        std::fs::rename(&self.lock, &self.target)
            .map_err(|source| RefFileError::Io { path: self.target.clone(), source })?;
        self.lock = PathBuf::new();
        Ok(())
    }
}

impl Drop for RefLock {
    fn drop(&mut self) {
        if !self.lock.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.lock);
        }
    }
}

/// The name [`Stamp`] gives `packed-refs`.
pub const PACKED: &str = "packed-refs";

/// What a listing saw of one file it read, a directory of loose refs or `packed-refs`: its path
/// under the common git dir and, when it existed, its identity and its modification and change
/// times (nanoseconds since the epoch). Git's ref updates and ours rename a lock file into the
/// ref's directory or unlink from it, and `packed-refs` is always replaced by a rename, so any
/// change to what a listing read changes one of these — unless it lands within the same clock
/// tick as the time recorded, which is why a keeper of listings (`Store::list_kept`) keeps one
/// only when every time it holds was already old when the listing began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// The file's path under the common git dir.
    pub path: String,
    /// `None`: the file did not exist.
    pub seen: Option<Seen>,
}

/// A file's or folder's `(device, inode, modified, changed)`, times in nanoseconds: a rename into
/// or out of a folder moves its times, a replaced file has another inode.
pub type Seen = (u64, u64, i128, i128);

/// The [`Seen`] of what is at `path` now; `None` when nothing is.
pub fn seen(path: &Path) -> Option<Seen> {
    rustix::fs::stat(path).ok().map(|st| seen_of(&st))
}

fn seen_of(st: &rustix::fs::Stat) -> Seen {
    let ns = |s: i64, n: u64| i128::from(s) * 1_000_000_000 + n as i128;
    (st.st_dev, st.st_ino, ns(st.st_mtime, st.st_mtime_nsec), ns(st.st_ctime, st.st_ctime_nsec))
}

impl Stamp {
    fn of(path: &str, stat: Option<rustix::fs::Stat>) -> Stamp {
        Stamp { path: path.to_string(), seen: stat.as_ref().map(seen_of) }
    }
}

/// A loose ref a walk found, with its value when the walk could read one.
type LooseRead = (String, Option<ObjectId>);

/// The whole content of a small file (a loose ref: 41 or 65 bytes), or `None` when it is larger
/// than a ref can be or cannot be read.
fn read_small(fd: &rustix::fd::OwnedFd) -> Option<Vec<u8>> {
    let mut buf = [0u8; 128];
    let mut len = 0;
    loop {
        match rustix::io::read(fd, &mut buf[len..]) {
            Ok(0) => return Some(buf[..len].to_vec()),
            Ok(n) => len += n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return None,
        }
        if len == buf.len() {
            return None;
        }
    }
}

/// The object id a loose ref file's bytes hold (a trailing newline allowed), if they hold one.
fn object_id(bytes: &[u8]) -> Option<ObjectId> {
    ObjectId::from_hex(loose_text(bytes).as_bytes()).ok()
}

/// A loose ref file's text without its line end.
fn loose_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim_end_matches(['\n', '\r']).to_string()
}

/// How long ago `path` was last modified (`None`: it is gone).
pub fn lock_age(path: &Path) -> Option<Duration> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    Some(SystemTime::now().duration_since(modified).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_hex(format!("{n:02x}").repeat(20).as_bytes()).unwrap()
    }

    fn files(dir: &Path) -> RefFiles {
        RefFiles::new(dir.to_path_buf(), gix::hash::Kind::Sha1)
    }

    #[test]
    fn a_packed_ref_is_read_and_a_loose_one_overrides_it() {
        let dir = tempfile::tempdir().unwrap();
        let f = files(dir.path());
        assert_eq!(f.read("refs/mas/x").unwrap(), None);
        std::fs::write(
            dir.path().join("packed-refs"),
            format!("# pack-refs with: peeled fully-peeled sorted \n{} refs/mas/x\n", id(1)),
        )
        .unwrap();
        assert_eq!(f.read("refs/mas/x").unwrap(), Some(id(1)));
        assert_eq!(f.compare_and_swap(&[("refs/mas/x", Some(id(1)), id(2))], &|_| None).unwrap(), Ok(()));
        assert_eq!(f.read("refs/mas/x").unwrap(), Some(id(2)));
        // The expected value is checked against the loose file now.
        assert_eq!(f.compare_and_swap(&[("refs/mas/x", Some(id(1)), id(3))], &|_| None).unwrap(), Err(Some(id(2))));
        assert!(!dir.path().join("refs/mas/x.lock").exists(), "a refused update leaves no lock");
    }

    #[test]
    fn a_rewritten_packed_refs_is_read_again_even_with_the_same_size_and_time() {
        let dir = tempfile::tempdir().unwrap();
        let f = files(dir.path());
        let packed = dir.path().join("packed-refs");
        let write = |v: ObjectId| {
            let tmp = dir.path().join("packed-refs.new");
            std::fs::write(&tmp, format!("{v} refs/mas/x\n")).unwrap();
            std::fs::rename(&tmp, &packed).unwrap();
        };
        write(id(1));
        assert_eq!(f.read("refs/mas/x").unwrap(), Some(id(1)));
        let before = std::fs::metadata(&packed).unwrap().modified().unwrap();
        write(id(2));
        let file = std::fs::File::options().write(true).open(&packed).unwrap();
        file.set_modified(before).unwrap();
        assert_eq!(f.read("refs/mas/x").unwrap(), Some(id(2)));
    }

    #[test]
    fn an_old_lock_is_reported_with_its_path_and_a_young_one_is_a_lost_race() {
        let dir = tempfile::tempdir().unwrap();
        let f = files(dir.path());
        std::fs::create_dir_all(dir.path().join("refs/mas")).unwrap();
        let lock = dir.path().join("refs/mas/x.lock");
        std::fs::write(&lock, "").unwrap();
        assert_eq!(f.compare_and_swap(&[("refs/mas/x", None, id(1))], &|_| None).unwrap(), Err(None));
        let old = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::options().write(true).open(&lock).unwrap().set_modified(old).unwrap();
        match f.compare_and_swap(&[("refs/mas/x", None, id(1))], &|_| None) {
            Err(RefFileError::Stale { lock: l, age }) => {
                assert_eq!(l, lock);
                assert!(age >= Duration::from_secs(59), "{age:?}");
            }
            other => panic!("expected a stale lock, got {other:?}"),
        }
        assert!(lock.exists(), "another process's lock is never removed");
    }

    #[test]
    fn a_listing_reads_loose_then_packed_names_junk_and_skips_locks() {
        let dir = tempfile::tempdir().unwrap();
        let f = files(dir.path());
        let focus = dir.path().join("refs/mas/focus");
        std::fs::create_dir_all(focus.join("deep")).unwrap();
        std::fs::write(focus.join("a"), format!("{}\n", id(2))).unwrap();
        std::fs::write(focus.join("deep/b"), format!("{}\n", id(3))).unwrap();
        std::fs::write(focus.join("c"), "junk\n").unwrap();
        std::fs::write(focus.join("d.lock"), "").unwrap();
        std::fs::write(
            dir.path().join("packed-refs"),
            format!("{} refs/mas/focus/a\n{} refs/mas/focus/p\n{} refs/mas/other\n", id(1), id(4), id(5)),
        )
        .unwrap();
        let listed: Vec<(String, Option<ObjectId>)> =
            f.list("refs/mas/focus/").unwrap().into_iter().map(|(n, v)| (n, v.ok())).collect();
        let want = [
            ("refs/mas/focus/a", Some(id(2))),
            ("refs/mas/focus/c", None),
            ("refs/mas/focus/deep/b", Some(id(3))),
            ("refs/mas/focus/p", Some(id(4))),
        ];
        assert_eq!(listed, want.map(|(n, v)| (n.to_string(), v)), "loose overrides packed; locks are not refs");
        assert!(f.list("refs/nothing/").unwrap().is_empty());
    }

    /// What a listing does when `git pack-refs` prunes a loose file it has just listed.
    #[test]
    fn a_listed_ref_whose_loose_file_vanished_is_read_from_packed_refs() {
        let dir = tempfile::tempdir().unwrap();
        let f = files(dir.path());
        std::fs::write(dir.path().join("packed-refs"), format!("{} refs/mas/focus/a\n", id(1))).unwrap();
        assert_eq!(f.read_listed("refs/mas/focus/a").unwrap(), Some(id(1)));
        assert_eq!(f.read_listed("refs/mas/focus/gone").unwrap(), None, "deleted meanwhile: not listed");
    }

    #[test]
    fn several_refs_move_together_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let f = files(dir.path());
        let edits = [("refs/mas/b", None, id(1)), ("refs/mas/a", None, id(2))];
        assert_eq!(f.compare_and_swap(&edits, &|_| None).unwrap(), Ok(()));
        let again = [("refs/mas/b", Some(id(1)), id(3)), ("refs/mas/a", None, id(4))];
        assert_eq!(f.compare_and_swap(&again, &|_| None).unwrap(), Err(Some(id(2))));
        assert_eq!(f.read("refs/mas/b").unwrap(), Some(id(1)), "nothing moved");
        assert!(!dir.path().join("refs/mas/a.lock").exists() && !dir.path().join("refs/mas/b.lock").exists());
    }
}

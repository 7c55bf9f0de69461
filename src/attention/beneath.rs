//! Reading and writing a file beneath a working tree's top without ever following a link: what
//! the shell backstop ([`super::shell_guard`]) uses to see a held file and to put it back.
//!
//! A shell call can swap any folder of a held file's path for a symbolic link, or plant a link
//! where a restore would write its temporary file. So nothing here resolves a path by name: the
//! top of the working tree is opened once, and each folder below it is opened relative to the
//! one above with `O_NOFOLLOW | O_DIRECTORY`, so a link anywhere in the path is refused
//! ([`Open::Link`]) rather than followed, and `..` or an absolute path is refused before anything
//! is opened. The file itself is read through `O_NOFOLLOW` (a link is seen as a link, its target
//! never read), and written to a temporary file created with `O_CREAT | O_EXCL | O_NOFOLLOW`
//! under a random name in the same (already opened) folder, its mode set on the descriptor, then
//! renamed over the file with `renameat` within that folder. Whatever a concurrent process does to
//! the names above, every write lands in the folder that was checked.
//!
//! A held file whose path is now a folder is not deleted: the folder is renamed aside
//! (`.<name>.git-mas-moved-<hex>`, beside it) and the file put back, so nothing anybody wrote is
//! lost. What a SIGKILL leaves: before the rename, a temporary file under a name the caller
//! recorded first ([`put_file`]'s `before`), which it removes later ([`remove_temp`]); after it,
//! the file whole.

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use sha2::{Digest as _, Sha256};
use std::io::{Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::path::Path;

/// What a path beneath the top is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Now {
    /// Nothing there (or a folder of its path is missing).
    Absent,
    /// A regular file: its content's SHA-256 (hex), its permission bits and its bytes (`None`
    /// when larger than the limit the caller read with).
    File { sha256: String, mode: u32, bytes: Option<Vec<u8>> },
    /// A symbolic link, with its target's bytes.
    Symlink { target: Vec<u8> },
    /// A folder.
    Dir,
    /// Anything else (a FIFO, a socket, a device).
    Other,
}

/// The folder holding a path, opened without following links, and the path's last component.
#[derive(Debug)]
pub struct Parent {
    fd: OwnedFd,
    name: String,
    /// What [`parent`] with `create` moved aside to make the path's folders again: a link or a
    /// file where a folder was (`<path> to <new name>`).
    pub moved: Vec<String>,
}

/// Why a path's folder could not be opened.
#[derive(Debug)]
pub enum Open {
    /// A folder of the path is missing (and was not to be created).
    Missing,
    /// A component is a symbolic link (or not a folder): nothing is read or written through it.
    Link { component: String },
    /// The path is absolute, empty, or has a `..` or `.` component.
    Outside,
    /// Another error.
    Io(std::io::Error),
}

impl std::fmt::Display for Open {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Open::Missing => write!(f, "a folder of its path is missing"),
            Open::Link { component } => {
                write!(f, "{component} is a symbolic link (or not a folder) now, and nothing is written through a link")
            }
            Open::Outside => write!(f, "the path leaves the working tree"),
            Open::Io(e) => write!(f, "{e}"),
        }
    }
}

fn io(e: rustix::io::Errno) -> std::io::Error {
    std::io::Error::from_raw_os_error(e.raw_os_error())
}

/// Opens the folder of `rel` (a `/`-separated path relative to `top`) one component at a time,
/// never following a link; with `create` (to put a file back), a missing folder is made, and a
/// link or a file where a folder belongs is moved aside (renamed beside itself, its target never
/// touched) and the folder made in its place.
pub fn parent(top: &Path, rel: &str, create: bool) -> Result<Parent, Open> {
    let parts: Vec<&str> = rel.split('/').collect();
    if rel.is_empty() || parts.iter().any(|p| p.is_empty() || *p == "." || *p == "..") {
        return Err(Open::Outside);
    }
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut fd = rustix::fs::open(top, dir_flags, Mode::empty()).map_err(|e| Open::Io(io(e)))?;
    let (name, folders) = parts.split_last().ok_or(Open::Outside)?;
    let mut walked = String::new();
    let mut moved = Vec::new();
    for part in folders {
        if !walked.is_empty() {
            walked.push('/');
        }
        walked.push_str(part);
        let opened = match rustix::fs::openat(&fd, *part, dir_flags | OFlags::NOFOLLOW, Mode::empty()) {
            Err(rustix::io::Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&fd, *part, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(Open::Io(io(e))),
                }
                rustix::fs::openat(&fd, *part, dir_flags | OFlags::NOFOLLOW, Mode::empty())
            }
            other => other,
        };
        fd = match opened {
            Ok(next) => next,
            Err(rustix::io::Errno::NOENT) => return Err(Open::Missing),
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) if create => {
                // A link (or a file) where a folder of the path was: moved aside, never followed,
                // and the folder made again.
                let aside = beside(part, "moved");
                rustix::fs::renameat(&fd, *part, &fd, aside.as_str()).map_err(|e| Open::Io(io(e)))?;
                moved.push(format!("{walked} to {}", aside));
                match rustix::fs::mkdirat(&fd, *part, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(Open::Io(io(e))),
                }
                match rustix::fs::openat(&fd, *part, dir_flags | OFlags::NOFOLLOW, Mode::empty()) {
                    Ok(next) => next,
                    Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                        return Err(Open::Link { component: walked });
                    }
                    Err(e) => return Err(Open::Io(io(e))),
                }
            }
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                return Err(Open::Link { component: walked });
            }
            Err(e) => return Err(Open::Io(io(e))),
        };
    }
    Ok(Parent { fd, name: (*name).to_string(), moved })
}

/// What a path's metadata says of it: enough to know it is unchanged without reading it (its
/// status-change time moves with every write and `chmod`, and no process can set it back).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stamp {
    /// Device and inode.
    pub dev: u64,
    /// Inode.
    pub ino: u64,
    /// Size in bytes.
    pub size: i64,
    /// Modification time, nanoseconds.
    pub mtime_ns: i64,
    /// Status-change time, nanoseconds.
    pub ctime_ns: i64,
    /// Type and permission bits.
    pub mode: u32,
}

/// `rel`'s [`Stamp`], not following a link; `None` when nothing is there.
pub fn stamp(top: &Path, rel: &str) -> Result<Option<Stamp>, Open> {
    let p = match parent(top, rel, false) {
        Ok(p) => p,
        Err(Open::Missing) => return Ok(None),
        Err(e) => return Err(e),
    };
    match rustix::fs::statat(&p.fd, p.name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(Stamp {
            dev: st.st_dev,
            ino: st.st_ino,
            size: st.st_size,
            mtime_ns: st.st_mtime.saturating_mul(1_000_000_000).saturating_add(st.st_mtime_nsec as i64),
            ctime_ns: st.st_ctime.saturating_mul(1_000_000_000).saturating_add(st.st_ctime_nsec as i64),
            mode: st.st_mode,
        })),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(Open::Io(io(e))),
    }
}

/// What `rel` beneath `top` is now; a regular file's bytes are kept when at most `limit`.
pub fn now(top: &Path, rel: &str, limit: u64) -> Result<Now, Open> {
    match parent(top, rel, false) {
        Ok(p) => read(&p, limit).map_err(Open::Io),
        Err(Open::Missing) => Ok(Now::Absent),
        Err(e) => Err(e),
    }
}

/// What the path `p` names is now.
pub fn read(p: &Parent, limit: u64) -> std::io::Result<Now> {
    let stat = match rustix::fs::statat(&p.fd, p.name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
        Ok(s) => s,
        Err(rustix::io::Errno::NOENT) => return Ok(Now::Absent),
        Err(e) => return Err(io(e)),
    };
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::Directory => Ok(Now::Dir),
        FileType::Symlink => match rustix::fs::readlinkat(&p.fd, p.name.as_str(), Vec::new()) {
            Ok(target) => Ok(Now::Symlink { target: target.into_bytes() }),
            Err(rustix::io::Errno::NOENT) => Ok(Now::Absent),
            Err(e) => Err(io(e)),
        },
        FileType::RegularFile => {
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
            let fd = match rustix::fs::openat(&p.fd, p.name.as_str(), flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(rustix::io::Errno::NOENT) => return Ok(Now::Absent),
                // Swapped for a link between the stat and the open.
                Err(rustix::io::Errno::LOOP) => return read(p, limit),
                Err(e) => return Err(io(e)),
            };
            let stat = rustix::fs::fstat(&fd).map_err(io)?;
            if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
                return Ok(Now::Other);
            }
            let mut file = std::fs::File::from(fd);
            let mut hasher = Sha256::new();
            let mut kept = Some(Vec::new());
            let mut chunk = vec![0u8; 64 * 1024];
            let mut total = 0u64;
            loop {
                let n = file.read(&mut chunk)?;
                if n == 0 {
                    break;
                }
                hasher.update(&chunk[..n]);
                total += n as u64;
                match kept.as_mut() {
                    Some(_) if total > limit => kept = None,
                    Some(bytes) => bytes.extend_from_slice(&chunk[..n]),
                    None => {}
                }
            }
            let sha256 = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
            Ok(Now::File { sha256, mode: stat.st_mode & 0o7777, bytes: kept })
        }
        _ => Ok(Now::Other),
    }
}

/// A random name beside `name`: `.<name>.git-mas-<what>-<16 hex>`. Not [`crate::fsx`]'s rule:
/// these writes go beneath a folder's descriptor (`openat`/`renameat`, no link followed on the way).
fn beside(name: &str, what: &str) -> String {
    let mut bytes = [0u8; 8];
    // Without randomness the name is still one O_EXCL refuses to reuse: the pid and the time.
    if getrandom::fill(&mut bytes).is_err() {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        bytes = ((t as u64) ^ u64::from(std::process::id())).to_le_bytes();
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(".{name}.git-mas-{what}-{hex}")
}

/// Whether `name` is one of the temporary names [`put_file`] and [`put_symlink`] create.
pub fn is_temp(name: &str) -> bool {
    name.starts_with('.') && name.contains(".git-mas-tmp-")
}

/// Moves what is at the path aside when it is a folder (so that a file can be put there), and
/// says where it went.
fn move_folder_aside(p: &Parent) -> std::io::Result<Option<String>> {
    match rustix::fs::statat(&p.fd, p.name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
        Ok(s) if FileType::from_raw_mode(s.st_mode) == FileType::Directory => {
            let aside = beside(&p.name, "moved");
            rustix::fs::renameat(&p.fd, p.name.as_str(), &p.fd, aside.as_str()).map_err(io)?;
            Ok(Some(aside))
        }
        _ => Ok(None),
    }
}

/// Writes `bytes` with permission bits `mode` over the path `p` names, whole: a temporary file
/// (its name handed to `before` first, so that a caller killed before the rename can remove it)
/// renamed over it. A folder there is moved aside first; its new name is returned.
pub fn put_file(
    p: &Parent,
    bytes: &[u8],
    mode: u32,
    before: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> std::io::Result<Option<String>> {
    let tmp = beside(&p.name, "tmp");
    before(&tmp)?;
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(&p.fd, tmp.as_str(), flags, Mode::from_raw_mode(0o600)).map_err(io)?;
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes)?;
    rustix::fs::fchmod(&file, Mode::from_raw_mode(mode & 0o7777)).map_err(io)?;
    file.sync_all()?;
    drop(file);
    let moved = move_folder_aside(p)?;
    rustix::fs::renameat(&p.fd, tmp.as_str(), &p.fd, p.name.as_str()).map_err(io)?;
    Ok(moved)
}

/// Makes the path `p` names a symbolic link to `target`, whole, as [`put_file`] does a file.
pub fn put_symlink(
    p: &Parent,
    target: &[u8],
    before: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> std::io::Result<Option<String>> {
    use std::os::unix::ffi::OsStrExt as _;
    let tmp = beside(&p.name, "tmp");
    before(&tmp)?;
    rustix::fs::symlinkat(std::ffi::OsStr::from_bytes(target), &p.fd, tmp.as_str()).map_err(io)?;
    let moved = move_folder_aside(p)?;
    rustix::fs::renameat(&p.fd, tmp.as_str(), &p.fd, p.name.as_str()).map_err(io)?;
    Ok(moved)
}

/// Removes what the path `p` names: a file or a link; a folder is moved aside (its new name
/// returned), never deleted.
pub fn remove(p: &Parent) -> std::io::Result<Option<String>> {
    if let Some(moved) = move_folder_aside(p)? {
        return Ok(Some(moved));
    }
    match rustix::fs::unlinkat(&p.fd, p.name.as_str(), AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(io(e)),
    }
}

/// Removes the temporary file `tmp` a killed [`put_file`] may have left beside `rel`.
pub fn remove_temp(top: &Path, rel: &str, tmp: &str) {
    if !is_temp(tmp) || tmp.contains('/') {
        return;
    }
    if let Ok(p) = parent(top, rel, false) {
        let _ = rustix::fs::unlinkat(&p.fd, tmp, AtFlags::empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn top() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("src")).unwrap();
        std::fs::write(t.path().join("src/a.py"), "held\n").unwrap();
        t
    }

    fn ok(_: &str) -> std::io::Result<()> {
        Ok(())
    }

    #[test]
    fn a_file_is_read_and_put_back_with_its_mode() {
        let t = top();
        let Now::File { sha256, mode, bytes } = now(t.path(), "src/a.py", 1024).unwrap() else { panic!() };
        assert_eq!(bytes.as_deref(), Some(&b"held\n"[..]));
        std::fs::write(t.path().join("src/a.py"), "other\n").unwrap();
        std::fs::set_permissions(t.path().join("src/a.py"), std::fs::Permissions::from_mode(0o000)).unwrap();
        let p = parent(t.path(), "src/a.py", false).unwrap();
        put_file(&p, b"held\n", mode | 0o100, &mut ok).unwrap();
        let Now::File { sha256: again, mode: m, .. } = now(t.path(), "src/a.py", 1024).unwrap() else { panic!() };
        assert_eq!(again, sha256);
        assert_eq!(m, mode | 0o100);
        let names: Vec<_> = std::fs::read_dir(t.path().join("src")).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names.len(), 1, "no temporary left: {names:?}");
    }

    #[test]
    fn a_folder_swapped_for_a_link_is_refused_and_nothing_outside_is_written() {
        let t = top();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("a.py"), "nobody's\n").unwrap();
        std::fs::rename(t.path().join("src"), t.path().join("src.bak")).unwrap();
        std::os::unix::fs::symlink(outside.path(), t.path().join("src")).unwrap();
        assert!(matches!(now(t.path(), "src/a.py", 1024), Err(Open::Link { .. })));
        assert!(matches!(parent(t.path(), "src/a.py", false), Err(Open::Link { .. })));
        // To put the file back, the link is moved aside and the folder made again.
        let p = parent(t.path(), "src/a.py", true).unwrap();
        assert_eq!(p.moved.len(), 1, "{:?}", p.moved);
        put_file(&p, b"held\n", 0o644, &mut ok).unwrap();
        assert_eq!(std::fs::read_to_string(t.path().join("src/a.py")).unwrap(), "held\n");
        assert!(std::fs::symlink_metadata(t.path().join("src")).unwrap().is_dir());
        assert_eq!(std::fs::read_to_string(outside.path().join("a.py")).unwrap(), "nobody's\n");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1, "nothing new outside");
    }

    #[test]
    fn a_planted_link_at_the_file_is_replaced_not_written_through() {
        let t = top();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x"), "nobody's\n").unwrap();
        std::fs::remove_file(t.path().join("src/a.py")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("x"), t.path().join("src/a.py")).unwrap();
        assert!(matches!(now(t.path(), "src/a.py", 1024).unwrap(), Now::Symlink { .. }));
        let p = parent(t.path(), "src/a.py", false).unwrap();
        put_file(&p, b"held\n", 0o644, &mut ok).unwrap();
        assert_eq!(std::fs::read_to_string(outside.path().join("x")).unwrap(), "nobody's\n");
        let meta = std::fs::symlink_metadata(t.path().join("src/a.py")).unwrap();
        assert!(meta.is_file(), "a file again, not a link");
    }

    #[test]
    fn a_folder_in_the_way_is_moved_aside_not_deleted() {
        let t = top();
        std::fs::remove_file(t.path().join("src/a.py")).unwrap();
        std::fs::create_dir(t.path().join("src/a.py")).unwrap();
        std::fs::write(t.path().join("src/a.py/inner"), "someone's\n").unwrap();
        let p = parent(t.path(), "src/a.py", false).unwrap();
        let moved = put_file(&p, b"held\n", 0o644, &mut ok).unwrap().unwrap();
        assert_eq!(std::fs::read_to_string(t.path().join("src").join(&moved).join("inner")).unwrap(), "someone's\n");
        assert_eq!(std::fs::read_to_string(t.path().join("src/a.py")).unwrap(), "held\n");
    }

    #[test]
    fn paths_that_leave_the_top_are_refused() {
        let t = top();
        for rel in ["../x", "src/../../x", "/etc/passwd", "", "src//a.py", "./src/a.py"] {
            assert!(matches!(parent(t.path(), rel, true), Err(Open::Outside)), "{rel}");
        }
    }

    #[test]
    fn a_missing_folder_is_made_when_asked() {
        let t = top();
        std::fs::remove_dir_all(t.path().join("src")).unwrap();
        assert_eq!(now(t.path(), "src/a.py", 1024).unwrap(), Now::Absent);
        let p = parent(t.path(), "src/deep/a.py", true).unwrap();
        put_file(&p, b"x", 0o644, &mut ok).unwrap();
        assert_eq!(std::fs::read(t.path().join("src/deep/a.py")).unwrap(), b"x");
    }
}

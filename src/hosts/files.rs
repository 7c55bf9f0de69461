//! The hosts' file toolkit: reading a settings file, writing it atomically through a symbolic
//! link, removing it, and the one error every host file operation returns.
//!
//! Why a module of its own: the hook installer, the MCP registration, the file editor and the
//! trust files all read and write the hosts' files the same way; kept here, below all of them, none of them
//! imports another for it.
//!
//! The decisions: a write goes through [`crate::fsx::write_atomic`] (a reader sees the old bytes
//! or the new ones; a crash leaves a temporary `git mas doctor` finds), keeping the file's
//! permission bits. A settings file that is a symbolic link (a dotfile manager's) is written
//! through: the link is followed to its final target ([`write_target`], at most
//! [`MAX_SYMLINKS`] links) and the temporary renamed over that, so the link stays a link. Folders
//! are created for the path itself, never for a link's target. Bytes that are not UTF-8 are
//! invalid JSON, not a reason to guess an encoding.

use std::path::{Path, PathBuf};

/// Why a hook file cannot be changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostHookError {
    /// The file does not parse.
    #[error("{path} is not valid {syntax}: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// "JSON" or "JSON (comments allowed)".
        syntax: &'static str,
        /// The parser's message.
        reason: String,
    },
    /// The file parses but its shape is not the host's (e.g. `hooks` is not an object).
    #[error("{path}: {what}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// A file of ours' name holds other content.
    #[error("{path} exists and is not the file git-mas writes")]
    NotOurs {
        /// The file.
        path: PathBuf,
    },
    /// No home directory to find the user's configuration in.
    #[error("cannot find {host}'s user configuration: HOME is not set")]
    NoHome {
        /// The host.
        host: &'static str,
    },
    /// A git command in an agent's worktree failed.
    #[error("in {worktree}: `git {command}` failed: {reason}")]
    Git {
        /// The worktree.
        worktree: PathBuf,
        /// The arguments.
        command: String,
        /// What git said.
        reason: String,
    },
    /// Reading, writing or removing failed.
    #[error("cannot {action} {path}: {reason}")]
    Io {
        /// read, write, remove...
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The system's message.
        reason: String,
    },
}

pub(crate) fn io_error(action: &'static str, path: &Path, e: &std::io::Error) -> HostHookError {
    HostHookError::Io { action, path: path.to_path_buf(), reason: e.to_string() }
}

/// The file's text; `None` when it does not exist. Bytes that are not UTF-8 are invalid JSON.
pub(crate) fn read(path: &Path) -> Result<Option<String>, HostHookError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| HostHookError::Invalid {
            path: path.to_path_buf(),
            syntax: "JSON",
            reason: "not UTF-8".into(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error("read", path, &e)),
    }
}

/// How many symbolic links [`write_target`] follows before it gives up (Linux's own limit).
pub const MAX_SYMLINKS: usize = 40;

/// The file a write to `path` lands in: `path` itself, or, when `path` is a symbolic link (a
/// dotfile manager makes settings files links into its own folder), the file at the end of the
/// chain of links, which may not exist yet (a dangling link). A relative link is read from the
/// link's folder, as the kernel reads it. A loop, or a chain longer than [`MAX_SYMLINKS`], is an
/// error.
pub fn write_target(path: &Path) -> Result<PathBuf, HostHookError> {
    let mut current = path.to_path_buf();
    for _ in 0..=MAX_SYMLINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&current).map_err(|e| io_error("read the link", &current, &e))?;
                current = current.parent().unwrap_or(Path::new(".")).join(target);
            }
            Ok(_) => return Ok(current),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(current),
            Err(e) => return Err(io_error("read", &current, &e)),
        }
    }
    Err(HostHookError::Io {
        action: "follow",
        path: path.to_path_buf(),
        reason: format!("more than {MAX_SYMLINKS} symbolic links (a loop?)"),
    })
}

/// What an older build put between a file's name and the process id in its temporary's name
/// (`.<name>.git-mas-<pid>.tmp`), which `git mas doctor` still recognises.
pub const OLD_TEMP_INFIX: &str = ".git-mas-";
/// How an older build's temporary's name ended.
pub const OLD_TEMP_SUFFIX: &str = ".tmp";

/// Writes through [`crate::fsx::write_atomic`], keeping an existing file's permissions. A
/// symbolic link is written through: the link is resolved to its final target
/// ([`write_target`]) and the temporary renamed over that, so the link stays a link. Folders are
/// created for `path` itself, never for a link's target: a dangling link whose target's folder is
/// missing is refused.
pub(crate) fn write_atomic(path: &Path, text: &str) -> Result<(), HostHookError> {
    let target = write_target(path)?;
    let dir = target.parent().unwrap_or(Path::new("."));
    if target == path {
        std::fs::create_dir_all(dir).map_err(|e| io_error("create", dir, &e))?;
    }
    let mode = std::fs::metadata(&target).ok().map(|meta| permission_bits(&meta));
    crate::fsx::write_atomic(&target, text.as_bytes(), mode).map_err(|e| io_error("write", &target, &e))
}

#[cfg(unix)]
fn permission_bits(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn permission_bits(_: &std::fs::Metadata) -> u32 {
    0o644
}

/// Removes the file at `path` (through a symbolic link: the link's final target goes and the
/// link stays, dangling as it may have been before install), then, when `path` was no link, the
/// folders between it and `base` that are left empty.
pub(crate) fn remove_file(base: &Path, path: &Path) -> Result<(), HostHookError> {
    let target = write_target(path)?;
    std::fs::remove_file(&target).map_err(|e| io_error("remove", &target, &e))?;
    if target == path {
        remove_empty_dirs(base, path);
    }
    Ok(())
}

/// Removes the directories between `path` and `base` (exclusive) that are empty, innermost first.
pub(crate) fn remove_empty_dirs(base: &Path, path: &Path) {
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == base || !d.starts_with(base) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

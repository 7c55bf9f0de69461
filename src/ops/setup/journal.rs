//! The setup's record of what it changed, kept so that [`super::undo`] can give every byte back:
//! `<common git dir>/mas-setup/`, holding
//!
//! - `manifest.json`: [`Manifest`], every file the setup wrote (its path, the hash and mode of its
//!   bytes before, or none when the setup created it, and the hash of the bytes it wrote), every
//!   folder it created, every configuration key it set (the value before, or none, and the value
//!   it set), and the key it created;
//! - `blobs/<sha256>`: the bytes a file had before, by their SHA-256 (only files that existed);
//! - `lock`: the process id of the setup or undo running now, while it runs.
//!
//! Every change goes through [`Journal`]: the previous bytes are written to their blob and the
//! manifest naming them is replaced **before** the change is made, each through a temporary file
//! that is flushed to disk and renamed (then the folder flushed), so at any instant the manifest
//! on disk describes every change that may have been made. A change that was recorded but not made
//! leaves the file at its previous bytes, which undo recognises as nothing to do. The manifest
//! keeps the oldest previous state: a second setup records only what the first did not touch, and
//! updates what it wrote.

use super::SetupError;
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The folder of the record, in the common git dir.
pub const DIR: &str = "mas-setup";
/// The manifest's file name.
pub const MANIFEST: &str = "manifest.json";
/// The version [`Manifest::version`] is written with.
pub const VERSION: u32 = 1;

/// What one part of the setup a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// `.mas/roster`.
    Roster,
    /// A git hook (pre-commit, commit-msg, pre-push).
    GitHook,
    /// A host's hook file.
    Hook,
    /// A host's MCP registration.
    Mcp,
    /// A file of a skill.
    Skill,
    /// A host's trust of the project and of its hooks, in the user's own file (codex's
    /// `config.toml`).
    Trust,
}

impl Part {
    /// The word the human output uses.
    pub fn label(self) -> &'static str {
        match self {
            Part::Roster => "roster",
            Part::GitHook => "git hook",
            Part::Hook => "hooks",
            Part::Mcp => "mcp",
            Part::Skill => "skill",
            Part::Trust => "trust",
        }
    }
}

/// A file's bytes before the setup wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Before {
    /// SHA-256 of the bytes, hex: their blob's name.
    pub sha256: String,
    /// The file's permission bits.
    pub mode: u32,
}

/// One file the setup wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// The file (the final target when the path the setup was given is a symbolic link).
    pub path: PathBuf,
    /// What it is.
    pub part: Part,
    /// Its bytes before the first setup that wrote it; `None`: the setup created it.
    pub before: Option<Before>,
    /// SHA-256 of the bytes the last setup wrote, hex.
    pub after: String,
}

/// One configuration key the setup set, in the repository's shared config (`git config --local`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigEntry {
    /// The key.
    pub key: String,
    /// Its value before the first setup that set it; `None`: unset.
    pub before: Option<String>,
    /// The value the last setup set.
    pub after: String,
}

/// The private key the setup created (never removed by undo: it is not a repository file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyEntry {
    /// The member it is the key of.
    pub name: String,
    /// Where it is.
    pub path: PathBuf,
}

/// Everything the setup changed, in the order it changed it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`VERSION`].
    pub version: u32,
    /// The files written.
    pub files: Vec<FileEntry>,
    /// The folders created, each before the folders inside it.
    pub dirs: Vec<PathBuf>,
    /// The configuration keys set.
    pub config: Vec<ConfigEntry>,
    /// The keys created.
    pub keys: Vec<KeyEntry>,
}

/// SHA-256 of `bytes`, hex.
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// A git hook the setup plans is read as `git mas hooks install` reads it; its failures are the
/// setup's own.
impl From<crate::attention::git_hooks::InstallError> for SetupError {
    fn from(e: crate::attention::git_hooks::InstallError) -> Self {
        use crate::attention::git_hooks::InstallError;
        match e {
            InstallError::Io { action, path, source } => SetupError::Io { action, path, source },
            InstallError::NotText { path } => SetupError::NotText { path },
            InstallError::Link(e) => SetupError::Hook(e),
        }
    }
}

pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> SetupError {
    SetupError::Io { action, path: path.to_path_buf(), source }
}

/// A file's bytes and permission bits; `None` when it does not exist. A symbolic link is read
/// through.
pub fn read(path: &Path) -> Result<Option<(Vec<u8>, u32)>, SetupError> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let meta = std::fs::metadata(path).map_err(|e| io("read", path, e))?;
            Ok(Some((bytes, mode_of(&meta))))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("read", path, e)),
    }
}

#[cfg(unix)]
fn mode_of(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode_of(_: &std::fs::Metadata) -> u32 {
    0o644
}

/// Writes `bytes` to `path` with permission bits `mode` through [`crate::fsx::write_atomic`]: at
/// any instant the file has its old bytes or its new ones. The folder must exist.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), SetupError> {
    crate::fsx::write_atomic(path, bytes, Some(mode)).map_err(|e| io("write", path, e))
}

/// Flushes a folder's entries (a rename or a removal in it) to disk; best effort.
pub fn sync_dir(dir: &Path) {
    crate::fsx::sync_dir(dir)
}

/// Removes the temporaries a killed write left beside `path` (of a process that is gone): named
/// by [`crate::fsx`]'s rule, or `.<name>.git-mas-<pid>.tmp` (an older build's).
pub fn sweep_beside(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return };
    let name = name.to_string_lossy().into_owned();
    sweep(dir, |file| {
        let target = crate::fsx::temporary_target(file).map_or_else(|| old_target(file), str::to_string);
        temp_pid(file).filter(|_| target == name)
    });
}

/// Removes each file of `dir` whose name `pid_of` reads a process id from, when that process is
/// gone.
fn sweep(dir: &Path, pid_of: impl Fn(&str) -> Option<u32>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let gone = pid_of(&name).is_some_and(|pid| crate::pool::process_running(pid) == Some(false));
        if gone {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The folders between `path` and the nearest existing ancestor, outermost first: what creating
/// `path`'s folder creates.
pub fn missing_dirs(path: &Path) -> Vec<PathBuf> {
    let mut missing = Vec::new();
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d.as_os_str().is_empty() || d.symlink_metadata().is_ok() {
            break;
        }
        missing.push(d.to_path_buf());
        dir = d.parent();
    }
    missing.reverse();
    missing
}

/// The record in `<common git dir>/mas-setup/`, held (its lock taken) while a setup or an undo
/// runs.
pub struct Journal {
    dir: PathBuf,
    /// What the record says (empty when there is none yet).
    pub manifest: Manifest,
    /// Whether a manifest was on disk when the journal was opened, or has been written since.
    pub exists: bool,
}

impl Journal {
    /// Opens the record of the repository whose common git dir is `common_dir`, taking its lock
    /// and removing the temporaries of killed processes. A setup or undo of this repository
    /// running now is refused ([`SetupError::Busy`]); the lock of one that was killed is taken
    /// over.
    pub fn open(common_dir: &Path) -> Result<Journal, SetupError> {
        let dir = common_dir.join(DIR);
        std::fs::create_dir_all(dir.join("blobs")).map_err(|e| io("create", &dir, e))?;
        lock(&dir)?;
        let journal = (|| {
            sweep(&dir, temp_pid);
            sweep(&dir.join("blobs"), temp_pid);
            let path = dir.join(MANIFEST);
            let (manifest, exists) = match std::fs::read(&path) {
                Ok(bytes) => {
                    let manifest: Manifest = serde_json::from_slice(&bytes)
                        .map_err(|e| SetupError::BadManifest { path: path.clone(), reason: e.to_string() })?;
                    if manifest.version != VERSION {
                        return Err(SetupError::BadManifest {
                            path,
                            reason: format!("version {} (this git-mas reads {VERSION})", manifest.version),
                        });
                    }
                    (manifest, true)
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    (Manifest { version: VERSION, ..Manifest::default() }, false)
                }
                Err(e) => return Err(io("read", &path, e)),
            };
            Ok(Journal { dir: dir.clone(), manifest, exists })
        })();
        if journal.is_err() {
            unlock(&dir);
        }
        journal
    }

    /// The manifest's path.
    pub fn manifest_path(&self) -> PathBuf {
        self.dir.join(MANIFEST)
    }

    /// Where the bytes with this hash are kept.
    pub fn blob_path(&self, sha256: &str) -> PathBuf {
        self.dir.join("blobs").join(sha256)
    }

    /// The bytes a file had before, from their blob (checked against the hash).
    pub fn blob(&self, before: &Before) -> Result<Vec<u8>, SetupError> {
        let path = self.blob_path(&before.sha256);
        let bytes = std::fs::read(&path).map_err(|e| SetupError::BadManifest {
            path: self.manifest_path(),
            reason: format!("the bytes it keeps in {} cannot be read: {e}", path.display()),
        })?;
        if sha256(&bytes) != before.sha256 {
            return Err(SetupError::BadManifest {
                path: self.manifest_path(),
                reason: format!("{} does not hold the bytes its name is the hash of", path.display()),
            });
        }
        Ok(bytes)
    }

    /// Replaces the manifest on disk with [`Journal::manifest`], through a flushed temporary file
    /// and a rename.
    pub fn save(&mut self) -> Result<(), SetupError> {
        let mut text = serde_json::to_vec_pretty(&self.manifest).expect("a manifest serializes");
        text.push(b'\n');
        write_atomic(&self.manifest_path(), &text, 0o644)?;
        self.exists = true;
        Ok(())
    }

    /// Records that `path` (the final target of a write) is about to get `bytes` and that the
    /// folders `new_dirs` are about to be created, then writes the folders and the file: the
    /// previous bytes to their blob and the manifest first, the change after.
    pub fn write(&mut self, path: &Path, part: Part, bytes: &[u8], mode: u32) -> Result<(), SetupError> {
        let current = read(path)?;
        let after = sha256(bytes);
        let mut changed = false;
        match self.manifest.files.iter_mut().find(|f| f.path == path) {
            Some(entry) => {
                if entry.after != after {
                    entry.after = after;
                    changed = true;
                }
            }
            None => {
                let before = match &current {
                    Some((old, mode)) => {
                        let sha = sha256(old);
                        let blob = self.blob_path(&sha);
                        if !blob.exists() {
                            write_atomic(&blob, old, 0o600)?;
                        }
                        Some(Before { sha256: sha, mode: *mode })
                    }
                    None => None,
                };
                self.manifest.files.push(FileEntry { path: path.to_path_buf(), part, before, after });
                changed = true;
            }
        }
        let new_dirs = missing_dirs(path);
        for d in &new_dirs {
            if !self.manifest.dirs.contains(d) {
                self.manifest.dirs.push(d.clone());
                changed = true;
            }
        }
        if changed {
            self.save()?;
        }
        if let Some(dir) = path.parent().filter(|_| !new_dirs.is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
            if let Some(outer) = new_dirs.first().and_then(|d| d.parent()) {
                sync_dir(outer);
            }
        }
        sweep_beside(path);
        write_atomic(path, bytes, mode)
    }

    /// Records that `key` is about to be set to `value` in the repository's shared config (its
    /// value there now is `before`).
    pub fn record_config(&mut self, key: &str, before: Option<&str>, value: &str) -> Result<(), SetupError> {
        match self.manifest.config.iter_mut().find(|c| c.key == key) {
            Some(entry) if entry.after == value => return Ok(()),
            Some(entry) => entry.after = value.to_string(),
            None => self.manifest.config.push(ConfigEntry {
                key: key.to_string(),
                before: before.map(str::to_string),
                after: value.to_string(),
            }),
        }
        self.save()
    }

    /// Records the key about to be created.
    pub fn record_key(&mut self, name: &str, path: &Path) -> Result<(), SetupError> {
        if self.manifest.keys.iter().any(|k| k.path == path) {
            return Ok(());
        }
        self.manifest.keys.push(KeyEntry { name: name.to_string(), path: path.to_path_buf() });
        self.save()
    }

    /// Removes the whole record (the undo is complete): the blobs first, then the manifest, the
    /// lock and the folder. A kill before the manifest goes leaves a manifest whose every change
    /// is undone already; one after it, an empty folder or a lock of a process that is gone.
    pub fn remove(self) -> Result<(), SetupError> {
        let blobs = self.dir.join("blobs");
        if let Ok(entries) = std::fs::read_dir(&blobs) {
            for entry in entries.flatten() {
                std::fs::remove_file(entry.path()).map_err(|e| io("remove", &entry.path(), e))?;
            }
        }
        let _ = std::fs::remove_dir(&blobs);
        let manifest = self.manifest_path();
        match std::fs::remove_file(&manifest) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io("remove", &manifest, e)),
        }
        sync_dir(&self.dir);
        unlock(&self.dir);
        let _ = std::fs::remove_dir(&self.dir);
        std::mem::forget(self);
        Ok(())
    }
}

impl Drop for Journal {
    /// Releases the lock; a record that never got a manifest (a refused setup) leaves no folder.
    fn drop(&mut self) {
        unlock(&self.dir);
        if !self.exists {
            let _ = std::fs::remove_dir(self.dir.join("blobs"));
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

/// The process id in a temporary's name: [`crate::fsx`]'s rule, or `.<name>.git-mas-<pid>.tmp`
/// (an older build's).
fn temp_pid(name: &str) -> Option<u32> {
    crate::fsx::temporary_pid(name).or_else(|| {
        let rest = name.strip_prefix('.')?.strip_suffix(OLD_TEMP_SUFFIX)?;
        let pid = &rest[rest.rfind(OLD_TEMP_INFIX)? + OLD_TEMP_INFIX.len()..];
        pid.bytes().all(|b| b.is_ascii_digit()).then(|| pid.parse().ok()).flatten()
    })
}

/// The target's name in an older build's temporary's name (`.<name>.git-mas-<pid>.tmp`).
fn old_target(name: &str) -> String {
    let rest = name.strip_prefix('.').unwrap_or(name);
    rest.rfind(OLD_TEMP_INFIX).map_or_else(String::new, |i| rest[..i].to_string())
}

/// What an older build put between a file's name and the process id in a temporary's name.
const OLD_TEMP_INFIX: &str = ".git-mas-";
/// How an older build's temporary's name ended.
const OLD_TEMP_SUFFIX: &str = ".tmp";

/// Takes `<dir>/lock` for this process: created new with its id; a lock whose process is gone is
/// taken over.
fn lock(dir: &Path) -> Result<(), SetupError> {
    let path = dir.join("lock");
    for _ in 0..2 {
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => {
                let _ = f.write_all(format!("{}\n", std::process::id()).as_bytes());
                return Ok(());
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let pid = text.trim().parse::<u32>().ok();
                if pid.is_some_and(|p| crate::pool::process_running(p) == Some(true)) {
                    return Err(SetupError::Busy { pid: pid.unwrap_or_default(), lock: path });
                }
                // Killed (or it never wrote its id): its lock is stale.
                let _ = std::fs::remove_file(&path);
            }
            Err(e) => return Err(io("create", &path, e)),
        }
    }
    Err(SetupError::Busy { pid: 0, lock: path })
}

fn unlock(dir: &Path) {
    let path = dir.join("lock");
    if std::fs::read_to_string(&path).is_ok_and(|t| t.trim() == std::process::id().to_string()) {
        let _ = std::fs::remove_file(&path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temporarys_process_id_is_read_from_its_name() {
        assert_eq!(temp_pid(".manifest.json.git-mas-1234.tmp"), Some(1234));
        assert_eq!(temp_pid(".manifest.json.mas-tmp.1234.3"), Some(1234));
        assert_eq!(old_target(".manifest.json.git-mas-1234.tmp"), "manifest.json");
        assert_eq!(temp_pid("manifest.json"), None);
        assert_eq!(temp_pid(".x.tmp"), None);
    }

    #[test]
    fn the_missing_folders_are_listed_outermost_first() {
        let tmp = std::env::temp_dir().join(format!("git-mas-journal-{}", std::process::id()));
        std::fs::create_dir_all(tmp.join("a")).unwrap();
        assert_eq!(missing_dirs(&tmp.join("a/b/c/f")), vec![tmp.join("a/b"), tmp.join("a/b/c")]);
        assert_eq!(missing_dirs(&tmp.join("a/f")), Vec::<PathBuf>::new());
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn a_second_write_keeps_the_oldest_bytes_and_a_second_setting_the_oldest_value() {
        let tmp = std::env::temp_dir().join(format!("git-mas-journal-w-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let file = tmp.join("top/x/settings.json");
        let mut j = Journal::open(&tmp).unwrap();
        assert!(Journal::open(&tmp).is_err_and(|e| matches!(e, SetupError::Busy { .. })), "one at a time");
        j.write(&file, Part::Hook, b"one", 0o644).unwrap();
        std::fs::write(&file, b"edited").unwrap();
        j.write(&file, Part::Hook, b"two", 0o644).unwrap();
        j.record_config("mas.gate", None, "enforce").unwrap();
        j.record_config("mas.gate", Some("enforce"), "warn").unwrap();
        drop(j);
        let j = Journal::open(&tmp).unwrap();
        let m = &j.manifest;
        assert_eq!(m.files.len(), 1);
        assert_eq!((m.files[0].before.as_ref(), m.files[0].after.as_str()), (None, sha256(b"two").as_str()));
        assert_eq!(m.dirs, vec![tmp.join("top"), tmp.join("top/x")]);
        assert_eq!((m.config[0].before.as_deref(), m.config[0].after.as_str()), (None, "warn"));
        assert_eq!(std::fs::read(&file).unwrap(), b"two");
        j.remove().unwrap();
        assert!(!tmp.join(DIR).exists());
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}

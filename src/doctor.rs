//! What a crashed git-mas can leave behind, found and (on request) removed: `git mas doctor`.
//!
//! A process killed at the wrong instant leaves three kinds of debris, none of which git's own
//! maintenance ever removes:
//!
//! - **Lock files.** A ref transaction creates `<ref>.lock` beside every ref it moves (and
//!   `packed-refs.lock` when it rewrites packed refs) and renames or deletes them when it commits.
//!   A live writer holds a lock for milliseconds, so a lock older than [`STALE_LOCK_AFTER`] (3 s)
//!   belongs to a writer that died; until it is removed, every update of that ref fails. Only the
//!   locks git-mas's own transactions take are considered: everything under `refs/mas/`,
//!   `packed-refs.lock`, the integration branch's lock (a landing moves it in the same
//!   transaction as `refs/mas/runs/<run>/landed`), and `mas-verified.lock` (the signature cache).
//! - **Temporary indexes** (`mas-snapshot-*.index` in a worktree's git dir): a proposal builds its
//!   tree in a copy of the worktree's index. Named by `pool::owned_name` they carry the
//!   creating process's id, so a file whose process is gone is an orphan at once
//!   ([`sweep_orphaned_snapshot_indexes`], which commands that build proposals call first). A file
//!   without a readable process id (older releases named them with a random suffix only), or on a
//!   system where liveness cannot be checked, is an orphan once older than [`STALE_TEMP_AFTER`]
//!   (1 h; removing a live one would make its proposal an empty tree, and no `git add -A` runs
//!   that long).
//! - **Scratch checkouts** (`git-mas-check-*` directories) in which `endorse` and `land` run the
//!   team's check: in the system temporary directory or the common git dir. The same process-id
//!   rule applies when the name carries one; otherwise they are orphans after
//!   [`STALE_CHECK_DIR_AFTER`] (24 h, since a test suite may legitimately run for hours). The
//!   temporary directory is shared by every repository on the machine, so a scratch checkout's
//!   name carries a tag of its repository's common git dir (`pool::repo_tag`) and only this
//!   repository's are listed; one without a tag (an older release's) may be another clone's.
//!
//! - **Cache temporaries** (`.tmp-*` under `mas-cache/` in the common git dir): a cache file is
//!   written to a temporary name and renamed over the old one in milliseconds, so one older than
//!   [`STALE_CACHE_TEMP_AFTER`] (1 min) was left by a killed reader.
//!
//! - **Object temporaries** (`objects/.tmp*`): an object is written to a temporary file and
//!   renamed into `objects/xx/`; a writer killed in between leaves the temporary, which git's own
//!   `gc` does not recognise (its own temporaries are named `tmp_obj_*`). Stale after
//!   [`STALE_OBJECT_TEMP_AFTER`] (10 min).
//!
//! - **Write temporaries** (`.<name>.mas-tmp.<pid>.<counter>` anywhere in the common git dir but
//!   `objects/`): every file git-mas replaces is written to such a temporary beside it and renamed
//!   over it ([`crate::fsx::write_atomic`], the one rule for the name), so a killed writer leaves
//!   one. Orphaned at once when the process id in the name is gone; one whose id runs again is a
//!   reused id after [`STALE_INSTALL_TEMP_AFTER`] (10 min).
//!
//! - **Installer temporaries** (`.<name>.mas-tmp.<pid>.<counter>` by the same rule, or an older
//!   build's `.<name>.git-mas-<pid>.tmp`, beside a host's settings file):
//!   `hooks install`, `mcp install` and their uninstall write each file to such a temporary and
//!   rename it over the file ([`crate::hosts::hooks`]), so a killed installer leaves
//!   one. Looked for beside every host's hook and MCP files in each working tree of the repository
//!   and in the user's home (the hosts' own directory overrides honoured), beside the final target
//!   of such a file when it is a symbolic link, and beside each worktree's `mas-exclude` and
//!   OpenCode plugin. Orphaned at once when the process id in the name is gone; an install takes
//!   milliseconds, so one whose id runs again is a reused id after [`STALE_INSTALL_TEMP_AFTER`]
//!   (10 min). The settings file itself is never touched.
//!
//! - **Damaged chains**: a focus chain that lost an object (`git gc --prune=now` beside a
//!   writer). Listed with the missing object and the last whole record, and repaired by `--fix`
//!   ([`chains`], which says how and what a kill leaves).
//!
//! Half-finished operations (a landing whose intent is recorded but whose steps did not all
//! happen) are the fourth kind: [`half_finished_operations`] is their slot in the report.
//!
//! Decisions: finding is separate from fixing ([`examine`] returns data, [`fix`] removes only what
//! [`examine`] judged stale and re-checks each file's age just before removing it), so the command
//! can print, serialize and exit on the same values; nothing here prints.

pub mod chains;

use crate::store::{REF_PREFIX, Store, StoreError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use thiserror::Error;

/// A git-mas lock older than this is stale: its writer is gone. Live ref updates hold their
/// locks for milliseconds (tens on a slow disk). The same age at which a ref update reports the
/// lock instead of waiting on it ([`crate::store::refs::STALE_LOCK_AGE`]), so that what an
/// update names as stale, `doctor --fix` removes.
pub const STALE_LOCK_AFTER: Duration = crate::store::refs::STALE_LOCK_AGE;

/// An object temporary (`objects/.tmp*`) older than this was left by a killed writer: an object
/// is written to a temporary name and renamed into `objects/xx/` as soon as it is complete.
pub const STALE_OBJECT_TEMP_AFTER: Duration = Duration::from_secs(10 * 60);

/// A temporary index whose owner cannot be checked is an orphan after this long.
pub const STALE_TEMP_AFTER: Duration = Duration::from_secs(60 * 60);

/// A scratch checkout whose owner cannot be checked is an orphan after this long.
pub const STALE_CHECK_DIR_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// An installer's temporary whose process id is running again is a reused id after this long:
/// an install writes and renames it in milliseconds.
pub const STALE_INSTALL_TEMP_AFTER: Duration = Duration::from_secs(10 * 60);

/// A cache temporary (`mas-cache/**/.tmp-*`) older than this was left by a killed process.
pub const STALE_CACHE_TEMP_AFTER: Duration = Duration::from_secs(60);

/// The directory of git-mas's caches in the common git dir.
pub const CACHE_ROOT: &str = "mas-cache";

/// The prefix of temporary index files.
pub const SNAPSHOT_INDEX_PREFIX: &str = "mas-snapshot-";
/// The suffix of temporary index files.
pub const SNAPSHOT_INDEX_SUFFIX: &str = ".index";
/// The prefix of scratch checkout directories.
pub const CHECK_DIR_PREFIX: &str = "git-mas-check-";

/// Errors of examining or repairing a repository.
#[derive(Debug, Error)]
pub enum DoctorError {
    /// Reading refs failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The checkouts a landing owes an update could not be read.
    #[error("cannot read the checkouts of the integration branch")]
    Checkout(#[source] Box<crate::pool::PoolError>),
    /// A directory could not be listed.
    #[error("cannot list {}", path.display())]
    Io {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// What a found file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DebrisKind {
    /// A ref (or packed-refs, or cache) lock file.
    Lock,
    /// A temporary index of a proposal (`mas-snapshot-*.index`).
    SnapshotIndex,
    /// A scratch checkout of a check (`git-mas-check-*`).
    CheckDir,
    /// A cache file's temporary (`mas-cache/**/.tmp-*`), renamed into place when complete.
    CacheTemp,
    /// An object's temporary (`objects/.tmp*`), renamed into `objects/xx/` when complete.
    ObjectTemp,
    /// An installer's temporary (`.<name>.mas-tmp.<pid>.<counter>`, or an older build's
    /// `.<name>.git-mas-<pid>.tmp`), renamed over a host's settings file or a git hook.
    InstallTemp,
    /// A file's temporary in the git dir (`.<name>.mas-tmp.<pid>.<counter>`,
    /// [`crate::fsx::write_atomic`]), renamed over the file when complete.
    WriteTemp,
    /// A worktree's `index.lock` (git's): stale when no process has it open
    /// ([`crate::pool::lockfile`]), whatever its age.
    IndexLock,
}

/// One lock file or temporary file found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Debris {
    /// What it is.
    pub kind: DebrisKind,
    /// Where it is.
    pub path: PathBuf,
    /// Seconds since it was last modified.
    pub age_secs: u64,
    /// The process id its name carries, if any.
    pub owner_pid: Option<u32>,
    /// Whether it is left over (safe to remove) rather than possibly in use.
    pub stale: bool,
    /// Why it is judged so, in words.
    pub why: String,
}

/// An operation a crash interrupted that `doctor --fix` (or re-running the command) can complete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HalfFinished {
    /// The run.
    pub run: String,
    /// What was interrupted (e.g. "landing").
    pub operation: String,
    /// What is missing, in words.
    pub detail: String,
    /// The command that completes it.
    pub remedy: String,
}

/// Everything [`examine`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Findings {
    /// Lock files, stale or live.
    pub locks: Vec<Debris>,
    /// Temporary files and directories, stale or possibly in use.
    pub temp_files: Vec<Debris>,
    /// Interrupted operations.
    pub half_finished: Vec<HalfFinished>,
    /// How many runs were looked at for interrupted operations.
    pub runs_checked: usize,
    /// Focus chains that lost an object.
    #[serde(default)]
    pub damaged_chains: Vec<chains::DamagedChain>,
}

impl Findings {
    /// The problems: stale debris and interrupted operations.
    pub fn problem_count(&self) -> usize {
        self.locks.iter().chain(&self.temp_files).filter(|d| d.stale).count()
            + self.half_finished.len()
            + self.damaged_chains.len()
    }
}

/// The result of [`fix`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repairs {
    /// What was removed.
    pub removed: Vec<Debris>,
    /// What could not be removed, with the reason.
    pub failed: Vec<(Debris, String)>,
}

fn lock_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Removes the orphaned temporary indexes in `git_dir` (one worktree's git dir) and returns what
/// it removed. Never fails: a file that cannot be removed stays for `git mas doctor` to report.
pub fn sweep_orphaned_snapshot_indexes(git_dir: &Path, now: SystemTime) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for d in snapshot_indexes_in(git_dir, now) {
        if d.stale && std::fs::remove_file(&d.path).is_ok() {
            removed.push(d.path);
        }
    }
    removed
}

/// [`sweep_orphaned_snapshot_indexes`] over the git dir of every worktree of the repository.
pub fn sweep_repository(store: &Store, now: SystemTime) -> Vec<PathBuf> {
    worktree_git_dirs(store.common_dir()).iter().flat_map(|dir| sweep_orphaned_snapshot_indexes(dir, now)).collect()
}

/// Whether process `pid` is alive on this machine; `None` where that cannot be told.
pub fn process_alive(pid: u32) -> Option<bool> {
    crate::pool::process_running(pid)
}

/// The process id in a temporary name made by `pool::owned_name` (`<prefix><pid namespace>-<pid>-…`),
/// when it is this namespace's.
fn pid_in(name: &str, prefix: &str) -> Option<u32> {
    crate::pool::owner_pid(name, prefix)
}

/// A duration in words (`5s`, `1h`, `2h 3m 4s`).
pub fn human(d: Duration) -> String {
    humantime::format_duration(Duration::from_secs(d.as_secs())).to_string()
}

fn age_of(meta: &std::fs::Metadata, now: SystemTime) -> Duration {
    meta.modified().ok().and_then(|m| now.duration_since(m).ok()).unwrap_or(Duration::ZERO)
}

/// Judges a temporary file: orphaned when the process its name carries is gone, else when older
/// than `fallback`.
fn judge_temp(kind: DebrisKind, path: PathBuf, pid: Option<u32>, age: Duration, fallback: Duration) -> Debris {
    let alive = pid.and_then(process_alive);
    let (stale, why) = match (pid, alive) {
        (Some(p), Some(false)) => (true, format!("its process {p} is gone")),
        (Some(p), Some(true)) if age > fallback => {
            (true, format!("older than {} although process {p} exists (a reused id)", human(fallback)))
        }
        (Some(p), Some(true)) => (false, format!("process {p} is running")),
        _ if age > fallback => (true, format!("older than {}", human(fallback))),
        _ => (false, format!("younger than {}: may be in use", human(fallback))),
    };
    Debris { kind, path, age_secs: age.as_secs(), owner_pid: pid, stale, why }
}

fn snapshot_indexes_in(git_dir: &Path, now: SystemTime) -> Vec<Debris> {
    let Ok(entries) = std::fs::read_dir(git_dir) else { return Vec::new() };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        // The file itself, or git's lock on it left by a killed `git add`.
        let base = name.strip_suffix(".lock").unwrap_or(name);
        if !base.starts_with(SNAPSHOT_INDEX_PREFIX) || !base.ends_with(SNAPSHOT_INDEX_SUFFIX) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let pid = pid_in(base, SNAPSHOT_INDEX_PREFIX);
        out.push(judge_temp(DebrisKind::SnapshotIndex, entry.path(), pid, age_of(&meta, now), STALE_TEMP_AFTER));
    }
    out
}

/// The scratch checkouts in `dir`; with `repo` (a [`crate::pool::repo_tag`]), those tagged for
/// another repository are left out (untagged ones, from older releases, stay in).
fn check_dirs_in(dir: &Path, repo: Option<&str>, now: SystemTime) -> Vec<Debris> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with(CHECK_DIR_PREFIX) {
            continue;
        }
        if let (Some(mine), Some(theirs)) = (repo, crate::pool::scratch_repo_tag(name, CHECK_DIR_PREFIX))
            && mine != theirs
        {
            continue;
        }
        // Not followed: a symlink is not ours to judge.
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else { continue };
        if !meta.is_dir() {
            continue;
        }
        let pid = pid_in(name, CHECK_DIR_PREFIX);
        out.push(judge_temp(DebrisKind::CheckDir, entry.path(), pid, age_of(&meta, now), STALE_CHECK_DIR_AFTER));
    }
    out
}

/// Every `.tmp-*` file under `dir`, recursively.
fn cache_temps_under(dir: &Path, now: SystemTime, out: &mut Vec<Debris>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if meta.is_dir() {
            cache_temps_under(&path, now, out);
        } else if meta.is_file() && entry.file_name().to_str().is_some_and(|n| n.starts_with(".tmp-")) {
            let age = age_of(&meta, now);
            let stale = age > STALE_CACHE_TEMP_AFTER;
            let why = if stale {
                format!("older than {}: its writer is gone", human(STALE_CACHE_TEMP_AFTER))
            } else {
                "fresh: a writer may be renaming it".to_string()
            };
            out.push(Debris {
                kind: DebrisKind::CacheTemp,
                path,
                age_secs: age.as_secs(),
                owner_pid: None,
                stale,
                why,
            });
        }
    }
}

/// Every file under `dir` (recursively; not `objects/`, which holds no such file, nor a scratch
/// checkout) named by [`crate::fsx`]'s rule: a write killed before its rename.
fn write_temps_under(dir: &Path, now: SystemTime, out: &mut Vec<Debris>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        let name = entry.file_name().to_string_lossy().into_owned();
        if meta.is_dir() {
            if name != "objects" && !name.starts_with(CHECK_DIR_PREFIX) {
                write_temps_under(&path, now, out);
            }
        } else if meta.is_file()
            && let Some(pid) = crate::fsx::temporary_pid(&name)
        {
            out.push(judge_temp(DebrisKind::WriteTemp, path, Some(pid), age_of(&meta, now), STALE_INSTALL_TEMP_AFTER));
        }
    }
}

/// Every `.tmp*` file directly in the objects directory.
fn object_temps_in(objects: &Path, now: SystemTime) -> Vec<Debris> {
    let Ok(entries) = std::fs::read_dir(objects) else { return Vec::new() };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if meta.is_file() && entry.file_name().to_str().is_some_and(|n| n.starts_with(".tmp")) {
            let age = age_of(&meta, now);
            let stale = age > STALE_OBJECT_TEMP_AFTER;
            let why = if stale {
                format!("older than {}: its writer is gone", human(STALE_OBJECT_TEMP_AFTER))
            } else {
                "fresh: a writer may be renaming it".to_string()
            };
            out.push(Debris {
                kind: DebrisKind::ObjectTemp,
                path,
                age_secs: age.as_secs(),
                owner_pid: None,
                stale,
                why,
            });
        }
    }
    out
}

/// The process id in an installer's temporary name: `.<name>.mas-tmp.<pid>.<counter>`
/// ([`crate::fsx`]'s rule) or an older build's `.<name>.git-mas-<pid>.tmp`.
fn install_temp_pid(entry: &str, name: &str) -> Option<u32> {
    if crate::fsx::temporary_target(entry) == Some(name) {
        return crate::fsx::temporary_pid(entry);
    }
    use crate::hosts::files::{OLD_TEMP_INFIX as TEMP_INFIX, OLD_TEMP_SUFFIX as TEMP_SUFFIX};
    let pid = entry.strip_prefix('.')?.strip_prefix(name)?.strip_prefix(TEMP_INFIX)?.strip_suffix(TEMP_SUFFIX)?;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok().filter(|&p| p > 0)
}

/// The installers' temporaries beside each of `files` (and beside its final target when it is a
/// symbolic link).
fn install_temps_beside(files: &[PathBuf], now: SystemTime) -> Vec<Debris> {
    use crate::hosts::files::write_target;
    let mut places: Vec<(PathBuf, String)> = Vec::new();
    for file in files {
        let target = write_target(file).unwrap_or_else(|_| file.clone());
        for f in [file, &target] {
            let (Some(dir), Some(name)) = (f.parent(), f.file_name().and_then(|n| n.to_str())) else { continue };
            let place = (dir.to_path_buf(), name.to_string());
            if !places.contains(&place) {
                places.push(place);
            }
        }
    }
    let mut out: Vec<Debris> = Vec::new();
    for (dir, name) in places {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| install_temp_pid(n, &name)) else { continue };
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else { continue };
            if !meta.is_file() || out.iter().any(|d| d.path == entry.path()) {
                continue;
            }
            let age = age_of(&meta, now);
            out.push(judge_temp(DebrisKind::InstallTemp, entry.path(), Some(pid), age, STALE_INSTALL_TEMP_AFTER));
        }
    }
    out
}

/// Every file a host installer writes for this repository: each host's hook and MCP files in
/// each of `worktrees` and in the user's home (as `env` places it), and each worktree git dir's
/// `mas-exclude` and OpenCode plugin.
fn installer_files(worktrees: &[PathBuf], git_dirs: &[PathBuf], env: &dyn crate::hosts::Env) -> Vec<PathBuf> {
    use crate::hosts::hooks::{OPENCODE_WORKTREE_PLUGIN, hook_files};
    use crate::hosts::mcp::config_file;
    use crate::hosts::{Host, Scope};
    let mut scopes: Vec<Scope> = worktrees.iter().map(|w| Scope::Project(w.clone())).collect();
    scopes.push(Scope::Global);
    let mut files = Vec::new();
    for scope in &scopes {
        for host in Host::ALL {
            files.extend(hook_files(host, scope, env).unwrap_or_default().iter().map(|f| f.path()));
            if let Ok((base, rel)) = config_file(host, scope, env) {
                files.push(base.join(rel));
            }
        }
    }
    files.extend(git_dirs.iter().flat_map(|d| [d.join("mas-exclude"), d.join(OPENCODE_WORKTREE_PLUGIN)]));
    files
}

/// The working trees of the repository: the main one (unless bare) and every linked one that
/// still exists.
fn worktree_tops(store: &Store) -> Vec<PathBuf> {
    let common = store.common_dir();
    let mut tops = Vec::new();
    if let Ok(top) = store.workdir() {
        tops.push(top.to_path_buf());
    }
    if common.file_name().is_some_and(|n| n == ".git")
        && let Some(parent) = common.parent()
    {
        tops.push(parent.to_path_buf());
    }
    for dir in worktree_git_dirs(common).into_iter().skip(1) {
        // `gitdir` holds the path of the worktree's `.git` file.
        if let Ok(text) = std::fs::read_to_string(dir.join("gitdir"))
            && let Some(top) = Path::new(text.trim()).parent()
        {
            tops.push(top.to_path_buf());
        }
    }
    let mut unique: Vec<PathBuf> = Vec::new();
    for top in tops {
        let top = top.canonicalize().unwrap_or(top);
        if top.is_dir() && !unique.contains(&top) {
            unique.push(top);
        }
    }
    unique
}

fn lock_debris(path: PathBuf, meta: &std::fs::Metadata, now: SystemTime) -> Debris {
    let age = age_of(meta, now);
    let stale = age > STALE_LOCK_AFTER;
    let why = if stale {
        format!("older than {}: its writer is gone", human(STALE_LOCK_AFTER))
    } else {
        "fresh: a writer may hold it".to_string()
    };
    Debris { kind: DebrisKind::Lock, path, age_secs: age.as_secs(), owner_pid: None, stale, why }
}

/// Every `*.lock` file under `dir`, recursively.
fn locks_under(dir: &Path, now: SystemTime, out: &mut Vec<Debris>) -> Result<(), DoctorError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(DoctorError::Io { path: dir.into(), source }),
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if meta.is_dir() {
            locks_under(&path, now, out)?;
        } else if meta.is_file() && path.extension().is_some_and(|e| e == "lock") {
            out.push(lock_debris(path, &meta, now));
        }
    }
    Ok(())
}

/// The git dirs of every worktree of the repository: the common dir (the main worktree's) and
/// A worktree's `index.lock`, when there is one (`dir`: its git dir).
fn index_lock_in(dir: &Path, now: SystemTime) -> Option<Debris> {
    let path = crate::pool::lockfile::index_lock(dir);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    let (stale, why) = match crate::pool::lockfile::state(&path) {
        crate::pool::lockfile::LockState::Absent => return None,
        crate::pool::lockfile::LockState::Held { pid: 0 } => (false, "git took it again while it was looked at".into()),
        crate::pool::lockfile::LockState::Held { pid } => (false, format!("process {pid} has it open")),
        crate::pool::lockfile::LockState::Stale => (
            true,
            "no process has it open: a killed git left it, and every git command that writes this index fails on it"
                .into(),
        ),
    };
    Some(Debris {
        kind: DebrisKind::IndexLock,
        path,
        age_secs: age_of(&meta, now).as_secs(),
        owner_pid: None,
        stale,
        why,
    })
}

/// `<common>/worktrees/*`.
fn worktree_git_dirs(common: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![common.to_path_buf()];
    if let Ok(entries) = std::fs::read_dir(common.join("worktrees")) {
        dirs.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    dirs
}

/// The run ids with a meta chain.
fn run_ids(store: &Store) -> Result<Vec<String>, DoctorError> {
    let prefix = format!("{REF_PREFIX}runs/");
    Ok(store
        .list(&prefix)?
        .into_iter()
        .filter_map(|r| r.name.strip_prefix(&prefix)?.strip_suffix("/meta").map(String::from))
        .filter(|run| !run.contains('/'))
        .collect())
}

/// Interrupted landings of the runs in this repository, read without writing anything: a
/// landing whose intent is on the meta chain while the integration branch is still at its
/// `previous` (killed between the intent and the branch), or a landed run without its
/// `refs/mas/runs/<run>/landed` ref (killed before the ref). Both are what `ops::land::commit::recover`
/// completes — [`complete_half_finished`], `git mas land`, or any command that reads the run.
/// Returns the operations and how many runs were looked at.
pub fn half_finished_operations(store: &Store) -> Result<(Vec<HalfFinished>, usize), DoctorError> {
    let runs = run_ids(store)?;
    let roster = store.roster()?;
    let mut out = Vec::new();
    for run in &runs {
        // A run whose definition does not verify is `git mas log`'s to report, not ours.
        let Ok(meta) = crate::devrun::load_meta(store, &roster, run) else { continue };
        let remedy = "git mas doctor --fix (or git mas land, or any git-mas command that reads the run)".to_string();
        match &meta.phase {
            crate::devrun::Phase::Landing { landing, .. } => out.push(HalfFinished {
                run: run.clone(),
                operation: "landing".into(),
                detail: format!(
                    "the landing of {} is recorded but {} is still at {}",
                    landing.commit, meta.def.branch, landing.previous
                ),
                remedy,
            }),
            crate::devrun::Phase::Landed { .. } if store.tip(&crate::devrun::landed_ref(run))?.is_none() => {
                out.push(HalfFinished {
                    run: run.clone(),
                    operation: "landing".into(),
                    detail: format!("landed on {}, but {} is missing", meta.def.branch, crate::devrun::landed_ref(run)),
                    remedy,
                })
            }
            _ => {}
        }
    }
    for p in crate::ops::land::checkout::pending(store).map_err(|e| DoctorError::Checkout(Box::new(e)))? {
        let lock = match p.index_lock {
            crate::pool::lockfile::LockState::Stale => "; a killed git left its index.lock",
            crate::pool::lockfile::LockState::Held { .. } => "; a running git holds its index.lock",
            crate::pool::lockfile::LockState::Absent => "",
        };
        out.push(HalfFinished {
            run: p.run.clone(),
            operation: "checkout update".into(),
            detail: format!(
                "{} is at {} (run {} landed), but the checkout at {} was not brought from {} to it{lock}",
                store.integration_branch(),
                p.commit,
                p.run,
                p.path.display(),
                p.previous
            ),
            remedy: format!("git mas land {} (or git mas doctor --fix)", p.run),
        });
    }
    Ok((out, runs.len()))
}

/// What completing the interrupted operations did: each run's landing recovery that changed
/// something, and the proposal refs brought level with their events.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Completed {
    /// Landings completed (or found void), per run.
    pub landings: Vec<crate::ops::land::commit::Recovery>,
    /// Proposal refs moved to the proposal their event names.
    pub proposals: Vec<crate::devrun::settle::Settled>,
    /// Runs whose recovery failed, with why.
    pub failed: Vec<(String, String)>,
}

/// Completes every interrupted landing and proposal (`doctor --fix`), through the same recovery
/// every reader of a run calls.
pub fn complete_half_finished(store: &Store) -> Result<Completed, DoctorError> {
    let mut out = Completed::default();
    for run in run_ids(store)? {
        match crate::ops::land::commit::recover(store, &run) {
            Ok(r) if r.changed() || !r.stuck.is_empty() => out.landings.push(r),
            Ok(_) => {}
            Err(e) => out.failed.push((run.clone(), e.to_string())),
        }
        match crate::devrun::settle::settle_run(store, &run) {
            Ok(settled) => out.proposals.extend(settled),
            Err(e) => out.failed.push((run.clone(), e.to_string())),
        }
    }
    Ok(out)
}

/// Looks for stale locks, leftover temporary files and interrupted operations. `temp_dir` is the
/// system temporary directory (`std::env::temp_dir()`), passed in so the caller decides.
pub fn examine(
    store: &Store,
    temp_dir: &Path,
    env: &dyn crate::hosts::Env,
    now: SystemTime,
) -> Result<Findings, DoctorError> {
    let common = store.common_dir();
    let mut locks = Vec::new();
    locks_under(&common.join("refs/mas"), now, &mut locks)?;
    let mut candidates =
        vec![common.join("packed-refs.lock"), lock_of(&common.join(crate::store::sigcache::CACHE_FILE))];
    // Only a valid branch name can be joined to a path (`../../etc` would leave the git dir).
    let branch = format!("refs/heads/{}", store.integration_branch());
    if gix::refs::FullName::try_from(branch.as_str()).is_ok() {
        candidates.push(lock_of(&common.join(&branch)));
    }
    for path in candidates {
        if let Ok(meta) = std::fs::symlink_metadata(&path)
            && meta.is_file()
        {
            locks.push(lock_debris(path, &meta, now));
        }
    }
    for dir in worktree_git_dirs(common) {
        locks.extend(index_lock_in(&dir, now));
    }
    let mut temp_files = Vec::new();
    for dir in worktree_git_dirs(common) {
        temp_files.extend(snapshot_indexes_in(&dir, now));
    }
    temp_files.extend(check_dirs_in(common, None, now));
    cache_temps_under(&common.join(CACHE_ROOT), now, &mut temp_files);
    temp_files.extend(object_temps_in(&common.join("objects"), now));
    if temp_dir != common {
        temp_files.extend(check_dirs_in(temp_dir, Some(&crate::pool::repo_tag(common)), now));
    }
    write_temps_under(common, now, &mut temp_files);
    let mut files = installer_files(&worktree_tops(store), &worktree_git_dirs(common), env);
    // The git hooks, whose folder (`core.hooksPath`) may be anywhere.
    let hooks = store.hooks_dir().into_iter().flat_map(|d| crate::attention::git_hooks::HOOK_NAMES.map(|n| d.join(n)));
    files.extend(hooks);
    for found in install_temps_beside(&files, now) {
        if !temp_files.iter().any(|d| d.path == found.path) {
            temp_files.push(found);
        }
    }
    locks.sort_by(|a, b| a.path.cmp(&b.path));
    temp_files.sort_by(|a, b| a.path.cmp(&b.path));
    let (half_finished, runs_checked) = half_finished_operations(store)?;
    let damaged_chains = chains::examine(store)?;
    Ok(Findings { locks, temp_files, half_finished, runs_checked, damaged_chains })
}

/// Removes the stale locks and temporary files of `findings`. Each is judged again just before
/// its removal (a lock that became fresh, a file that vanished, is left alone), so a writer that
/// took a lock after [`examine`] keeps it.
///
/// Interrupted operations ([`Findings::half_finished`]) are not completed here: completing one is
/// the operation's own recovery (re-running it), to be called from here once
/// [`half_finished_operations`] reports them.
pub fn fix(findings: &Findings, now: SystemTime) -> Repairs {
    let mut repairs = Repairs::default();
    for d in findings.locks.iter().chain(&findings.temp_files).filter(|d| d.stale) {
        let Ok(meta) = std::fs::symlink_metadata(&d.path) else { continue };
        let still_stale = match d.kind {
            DebrisKind::Lock => age_of(&meta, now) > STALE_LOCK_AFTER,
            DebrisKind::IndexLock => {
                // Judged and removed in one step, so that a git that took the lock since is never
                // robbed of it.
                match crate::pool::lockfile::clear_stale(&d.path) {
                    Ok(crate::pool::lockfile::LockState::Stale) => repairs.removed.push(d.clone()),
                    Ok(_) => {}
                    Err(e) => repairs.failed.push((d.clone(), e.to_string())),
                }
                continue;
            }
            DebrisKind::CacheTemp => age_of(&meta, now) > STALE_CACHE_TEMP_AFTER,
            DebrisKind::ObjectTemp => age_of(&meta, now) > STALE_OBJECT_TEMP_AFTER,
            DebrisKind::SnapshotIndex | DebrisKind::CheckDir | DebrisKind::InstallTemp | DebrisKind::WriteTemp => {
                let fallback = match d.kind {
                    DebrisKind::CheckDir => STALE_CHECK_DIR_AFTER,
                    DebrisKind::InstallTemp | DebrisKind::WriteTemp => STALE_INSTALL_TEMP_AFTER,
                    _ => STALE_TEMP_AFTER,
                };
                judge_temp(d.kind, d.path.clone(), d.owner_pid, age_of(&meta, now), fallback).stale
            }
        };
        if !still_stale {
            continue;
        }
        let result = if d.kind == DebrisKind::CheckDir {
            std::fs::remove_dir_all(&d.path)
        } else {
            std::fs::remove_file(&d.path)
        };
        match result {
            Ok(()) => repairs.removed.push(d.clone()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => repairs.failed.push((d.clone(), e.to_string())),
        }
    }
    repairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_ids_are_read_from_temporary_names() {
        let ns = crate::pool::pid_namespace();
        let table = [
            (format!("mas-snapshot-{ns}-1234-ab12.index"), SNAPSHOT_INDEX_PREFIX, Some(1234)),
            ("mas-snapshot-ab12cd.index".to_string(), SNAPSHOT_INDEX_PREFIX, None),
            (format!("mas-snapshot-{ns}-12ab-cd.index"), SNAPSHOT_INDEX_PREFIX, None),
            (format!("mas-snapshot-{ns}-0-cd.index"), SNAPSHOT_INDEX_PREFIX, None),
            (format!("mas-snapshot-{ns}--cd.index"), SNAPSHOT_INDEX_PREFIX, None),
            ("mas-snapshot-1-1234-ab12.index".to_string(), SNAPSHOT_INDEX_PREFIX, None),
            (format!("git-mas-check-{ns}-77-ff"), CHECK_DIR_PREFIX, Some(77)),
            ("git-mas-check-0123456789abcdef".to_string(), CHECK_DIR_PREFIX, None),
            (format!("git-mas-check-{ns}-99999999999-ff"), CHECK_DIR_PREFIX, None),
        ];
        for (name, prefix, want) in table {
            assert_eq!(pid_in(&name, prefix), want, "{name}");
        }
    }

    #[test]
    fn process_ids_are_read_from_installers_temporary_names() {
        let table = [
            (".settings.json.git-mas-1234.tmp", "settings.json", Some(1234)),
            (".settings.json.git-mas-0.tmp", "settings.json", None),
            (".settings.json.git-mas-.tmp", "settings.json", None),
            (".settings.json.git-mas-12a.tmp", "settings.json", None),
            (".hooks.json.git-mas-1234.tmp", "settings.json", None),
            ("settings.json.git-mas-1234.tmp", "settings.json", None),
            (".settings.json.git-mas-1234.tmp.bak", "settings.json", None),
            (".settings.json.mas-tmp.1234.0", "settings.json", Some(1234)),
            (".settings.json.mas-tmp.0.0", "settings.json", None),
            (".hooks.json.mas-tmp.1234.0", "settings.json", None),
        ];
        for (entry, name, want) in table {
            assert_eq!(install_temp_pid(entry, name), want, "{entry}");
        }
    }

    #[test]
    fn a_temporary_file_is_stale_when_its_process_is_gone_or_it_is_old() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let me = std::process::id();
        let young = Duration::from_secs(1);
        let old = STALE_TEMP_AFTER + Duration::from_secs(1);
        let judge = |pid, age| judge_temp(DebrisKind::SnapshotIndex, PathBuf::from("x"), pid, age, STALE_TEMP_AFTER);
        if process_alive(me) == Some(true) {
            assert!(judge(Some(dead), young).stale, "a dead owner makes it an orphan at once");
            assert!(!judge(Some(me), young).stale, "a live owner keeps it");
        }
        assert!(judge(Some(me), old).stale, "an old file with a live id is a reused id");
        assert!(!judge(None, young).stale, "no id: young may be in use");
        assert!(judge(None, old).stale);
    }

    #[test]
    fn the_sweep_removes_only_orphaned_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        if process_alive(std::process::id()) != Some(true) {
            return;
        }
        let ns = crate::pool::pid_namespace();
        let orphan = dir.path().join(format!("mas-snapshot-{ns}-{dead}-aa.index"));
        let orphan_lock = dir.path().join(format!("mas-snapshot-{ns}-{dead}-aa.index.lock"));
        let live = dir.path().join(format!("mas-snapshot-{ns}-{}-bb.index", std::process::id()));
        let legacy = dir.path().join("mas-snapshot-0123abcd.index");
        let other = dir.path().join("index");
        for p in [&orphan, &orphan_lock, &live, &legacy, &other] {
            std::fs::write(p, b"x").unwrap();
        }
        let mut removed = sweep_orphaned_snapshot_indexes(dir.path(), SystemTime::now());
        removed.sort();
        assert_eq!(removed, vec![orphan.clone(), orphan_lock.clone()]);
        assert!(live.exists() && legacy.exists() && other.exists());
    }
}

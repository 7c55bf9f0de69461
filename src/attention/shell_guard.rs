//! The backstop for the shell: a shell command can write any file, and the edit hooks see only
//! the edit tools. Before a session's shell call, the files other live agents hold are kept
//! ([`keep`]); after it, each is compared and put back when the call changed it ([`check`]).
//!
//! Where the bytes are kept: `<common git dir>/mas/shell/<agent>/` — a copy of each held file
//! (`0`, `1`, …) and `manifest.json` naming, per file, its path, its holder and what it was
//! (absent, or its size, modification time and inode). The copies are written before the
//! manifest, and the manifest is written to a temporary file and renamed, so a manifest always
//! names complete copies. A second shell call of the same agent before the first one's check
//! adds the files the manifest lacks and keeps the earlier bytes of the rest.
//!
//! The holder's own edits between the two are not undone: an allowed edit of a held file marks it
//! in every pending manifest ([`holder_edited`]), and [`check`] leaves a marked file as it is.
//!
//! What a SIGKILL leaves: during [`keep`], copies without a manifest (or the previous manifest),
//! which the next [`keep`] overwrites and [`check`] ignores; during [`check`], a file either
//! still changed or put back whole (the copy is written to `.<name>.git-mas-restore` beside it
//! and renamed over it; a temporary left by a kill is removed by the next check, which knows to
//! look from the `restoring` file the killed check created first), and the
//! manifest stays until every file is checked, so the next call (pre- or post-tool) of the same
//! agent checks again; killed after the manifest was removed, only unnamed copies are left in the
//! agent's folder, which its next shell call or its session's end removes. Killed at each of
//! these points in `tests/cli/team_crash.rs`.

use super::board::{Board, Liveness};
use super::claims::file_of;
use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// The largest file kept: a bigger one is checked for change but cannot be put back.
pub const MAX_KEPT_BYTES: u64 = 16 * 1024 * 1024;

/// What a held file was before a shell call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    /// Repo-relative path.
    pub path: String,
    /// The agent holding it.
    pub holder: String,
    /// The copy's name in the agent's directory; `None` when the file did not exist (or was too
    /// large to keep, with `size` set).
    pub copy: Option<String>,
    /// Size, modification time (ns) and inode, when it existed.
    pub stat: Option<(u64, i64, u64)>,
    /// The holder edited it since: leave it as it is.
    #[serde(default)]
    pub holder_edited: bool,
}

/// What [`check`] did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// Repo-relative path.
    pub path: String,
    /// Its holder.
    pub holder: String,
    /// What was done.
    pub action: RestoreAction,
}

/// How a changed held file was dealt with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreAction {
    /// Its bytes from before the call were put back.
    PutBack,
    /// It did not exist before the call and was removed.
    Removed,
    /// It changed but could not be put back (too large to keep).
    NotRestorable,
}

fn dir_of(store: &Store, agent: &str) -> PathBuf {
    store.common_dir().join("mas").join("shell").join(agent)
}

fn stat_of(meta: &std::fs::Metadata) -> (u64, i64, u64) {
    (meta.len(), meta.mtime() * 1_000_000_000 + meta.mtime_nsec(), meta.ino())
}

fn read_manifest(dir: &Path) -> Vec<Kept> {
    std::fs::read(dir.join("manifest.json")).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
}

fn write_manifest(dir: &Path, kept: &[Kept]) -> std::io::Result<()> {
    let tmp = dir.join("manifest.json.tmp");
    std::fs::write(&tmp, serde_json::to_vec(kept).map_err(std::io::Error::other)?)?;
    std::fs::File::open(&tmp)?.sync_all()?;
    std::fs::rename(&tmp, dir.join("manifest.json"))
}

/// Keeps the files other live agents hold, before `agent`'s shell call. Returns how many.
pub fn keep(store: &Store, root: &Path, agent: &str, board: &Board) -> std::io::Result<usize> {
    let mut held: Vec<(String, String)> = board
        .entries
        .iter()
        .filter(|e| e.liveness == Liveness::Live && e.focus.agent != agent)
        .flat_map(|e| e.focus.targets.iter().map(|t| (file_of(t).to_string(), e.focus.agent.clone())))
        .collect();
    held.sort();
    held.dedup_by(|a, b| a.0 == b.0);
    if held.is_empty() {
        return Ok(0);
    }
    let dir = dir_of(store, agent);
    std::fs::create_dir_all(&dir)?;
    let mut kept = read_manifest(&dir);
    let mut next = kept.iter().filter_map(|k| k.copy.as_ref()?.parse::<usize>().ok()).max().map_or(0, |n| n + 1);
    for (path, holder) in held {
        if kept.iter().any(|k| k.path == path) {
            continue;
        }
        let file = root.join(&path);
        let entry = match std::fs::symlink_metadata(&file) {
            Err(_) => Kept { path, holder, copy: None, stat: None, holder_edited: false },
            Ok(meta) if !meta.is_file() => continue,
            Ok(meta) if meta.len() > MAX_KEPT_BYTES => {
                Kept { path, holder, copy: None, stat: Some(stat_of(&meta)), holder_edited: false }
            }
            Ok(meta) => {
                let name = next.to_string();
                next += 1;
                std::fs::copy(&file, dir.join(&name))?;
                Kept { path, holder, copy: Some(name), stat: Some(stat_of(&meta)), holder_edited: false }
            }
        };
        kept.push(entry);
    }
    write_manifest(&dir, &kept)?;
    Ok(kept.len())
}

/// Whether `agent` has a shell call whose check is pending.
pub fn pending(store: &Store, agent: &str) -> bool {
    dir_of(store, agent).join("manifest.json").exists()
}

/// Compares every file kept before `agent`'s shell call and puts back what changed; then forgets
/// the call. Returns what was done.
pub fn check(store: &Store, root: &Path, agent: &str) -> std::io::Result<Vec<Restored>> {
    let dir = dir_of(store, agent);
    let kept = read_manifest(&dir);
    let mut done = Vec::new();
    // A check marks the folder before it first changes the working tree: only after a check
    // that was killed can a put-back's temporary file be left beside a kept file.
    let marker = dir.join(RESTORING);
    let after_a_kill = marker.exists();
    let mut marked = after_a_kill;
    for k in kept.iter() {
        let file = root.join(&k.path);
        if after_a_kill {
            // A put-back killed before its rename left its temporary file beside the file.
            let _ = std::fs::remove_file(restore_tmp(&file));
        }
        if k.holder_edited {
            continue;
        }
        let now = std::fs::symlink_metadata(&file).ok();
        let unchanged = match (&now, &k.stat) {
            (None, None) => true,
            (Some(m), Some(s)) => m.is_file() && stat_of(m) == *s,
            _ => false,
        };
        if unchanged {
            continue;
        }
        if !marked && (k.copy.is_some() || k.stat.is_none()) {
            std::fs::File::create(&marker)?;
            marked = true;
        }
        let action = match (&k.copy, &k.stat) {
            (None, None) => {
                std::fs::remove_file(&file).or_else(|e| if file.exists() { Err(e) } else { Ok(()) })?;
                RestoreAction::Removed
            }
            (None, Some(_)) => RestoreAction::NotRestorable,
            (Some(copy), _) => {
                let copy = dir.join(copy);
                if now.as_ref().is_some_and(|m| m.is_file()) && std::fs::read(&file)? == std::fs::read(&copy)? {
                    continue; // touched, same bytes
                }
                put_back(&copy, &file)?;
                RestoreAction::PutBack
            }
        };
        done.push(Restored { path: k.path.clone(), holder: k.holder.clone(), action });
    }
    // The manifest first: killed after it, the call is checked and what is left is copies that
    // no manifest names (removed by the agent's next shell call, or when its session ends).
    let manifest = dir.join("manifest.json");
    std::fs::remove_file(&manifest).or_else(|e| if manifest.exists() { Err(e) } else { Ok(()) })?;
    std::fs::remove_dir_all(&dir).or_else(|e| if dir.exists() { Err(e) } else { Ok(()) })?;
    Ok(done)
}

/// The file a check creates in the agent's folder before it first puts a file back or removes
/// one: a check that finds it was killed after that, and looks for temporary files beside the
/// kept files (a check that finds none knows there are none, and spares a `unlink` per file).
const RESTORING: &str = "restoring";

/// The temporary file a put-back of `file` writes first, beside it.
fn restore_tmp(file: &Path) -> PathBuf {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    file.with_file_name(format!(".{name}.git-mas-restore"))
}

/// Writes `copy`'s bytes over `file` whole: to a temporary file beside it, then renamed.
fn put_back(copy: &Path, file: &Path) -> std::io::Result<()> {
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = restore_tmp(file);
    if file.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(file)?;
    }
    std::fs::copy(copy, &tmp)?;
    std::fs::rename(&tmp, file)
}

/// Marks `paths` as edited by their holder in every pending shell call's manifest, so that its
/// check leaves them as they are.
pub fn holder_edited(store: &Store, paths: &[String]) -> std::io::Result<()> {
    let base = store.common_dir().join("mas").join("shell");
    let Ok(dirs) = std::fs::read_dir(&base) else { return Ok(()) };
    for d in dirs.flatten() {
        let dir = d.path();
        let mut kept = read_manifest(&dir);
        let mut changed = false;
        for k in kept.iter_mut().filter(|k| paths.contains(&k.path) && !k.holder_edited) {
            k.holder_edited = true;
            changed = true;
        }
        if changed {
            write_manifest(&dir, &kept)?;
        }
    }
    Ok(())
}

/// Forgets `agent`'s pending shell calls and notices (its session ended).
pub fn forget(store: &Store, agent: &str) {
    let _ = std::fs::remove_dir_all(dir_of(store, agent));
    let _ = std::fs::remove_file(notice_path(store, agent));
}

fn notice_path(store: &Store, agent: &str) -> PathBuf {
    store.common_dir().join("mas").join("shell").join(format!("{agent}.notice"))
}

/// Keeps `text` for `agent`'s next pre-tool call (a host whose post-tool answer the agent does
/// not see).
pub fn save_notice(store: &Store, agent: &str, text: &str) -> std::io::Result<()> {
    let path = notice_path(store, agent);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut all = std::fs::read_to_string(&path).unwrap_or_default();
    all.push_str(text);
    all.push('\n');
    std::fs::write(path, all)
}

/// Takes the notice kept for `agent`, if any.
pub fn take_notice(store: &Store, agent: &str) -> Option<String> {
    let path = notice_path(store, agent);
    let text = std::fs::read_to_string(&path).ok()?;
    let _ = std::fs::remove_file(&path);
    Some(text.trim_end().to_string()).filter(|t| !t.is_empty())
}

/// What [`check`] did, told to the agent whose shell call it was.
pub fn describe(restored: &[Restored]) -> String {
    restored
        .iter()
        .map(|r| {
            let what = match r.action {
                RestoreAction::PutBack => "it was put back to its bytes from before the command",
                RestoreAction::Removed => "it did not exist before the command and was removed",
                RestoreAction::NotRestorable => "it is too large to have been kept, so it could not be put back",
            };
            format!(
                "git mas gate: your shell command changed {path}, which {holder} holds; {what}. Leave {path} alone: \
                 pick other work, or ask {holder} through the team's channel.",
                path = r.path,
                holder = r.holder
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

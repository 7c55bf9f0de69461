//! The backstop for the shell: a shell command can write any file, and the edit hooks see only
//! the edit tools. Before a session's shell call, the files other live agents hold are kept, in
//! every working tree of the repository ([`keep`]); after it (the host's post-tool hook, its
//! failure hook for a call that failed, the session's next call, or its end), each is compared
//! and put back when the call changed it ([`check`]).
//!
//! What is compared: the file's type (absent, a regular file, a symbolic link), its content's
//! SHA-256 and its permission bits — never its size or modification time, which a shell sets at
//! will (`touch -r`). What is put back: all three. Claims name paths, and a claim holds its path
//! in every linked worktree (the edit hooks refuse it there too), so a held file is kept in each
//! worktree: a session's `echo x > ../wt2/f.py` is put back like one in its own.
//!
//! Nothing is read or written through a link: [`super::beneath`] opens each folder of a path
//! without following links, refuses a path whose folder was swapped for a link (it is reported,
//! not put back, and nothing outside the repository is touched), and writes through a temporary
//! file created `O_EXCL | O_NOFOLLOW` under a random name, renamed within the checked folder.
//!
//! Where the bytes are kept: `<common git dir>/mas/shell/<agent>/` — one copy per content
//! (`copies/<sha256>`) and `manifest.json` naming, per worktree and file, its holder and what it
//! was. A copy is a second name (a hard link) of the held files' guard's copy of the same content
//! when there is one (`mas/held/copies/<sha256>`, never written in place), else written and
//! flushed. The copies are on disk before the manifest (the folder flushed once after the
//! links), and the manifest is written to a temporary file and renamed, so a manifest always
//! names complete copies. A second shell call of the same
//! agent before the first one's check adds the files the manifest lacks and keeps the earlier
//! state of the rest.
//!
//! The holder's own edits between the two are not undone: an allowed edit of a held file marks it
//! in every pending manifest ([`holder_edited`]), and [`check`] leaves a marked file as it is.
//!
//! What a SIGKILL leaves: during [`keep`], copies without a manifest (or the previous manifest),
//! which the next [`keep`] reuses and [`check`] ignores; during [`check`], a file either still
//! changed or put back whole (each put-back's temporary name is appended to the folder's
//! `restoring` file before the temporary is created, and the next check removes what a killed one
//! left), and the manifest stays until every file is checked, so the next call (pre- or
//! post-tool) of the same agent, or its session's end, checks again; killed after the manifest
//! was removed, only unnamed copies are left in the agent's folder, which its next shell call or
//! its session's end removes. Killed at each of these points in `tests/cli/team_crash.rs`.

use super::beneath::{self, Now, Open};
use super::board::{Board, Liveness};
use super::claims::file_of;
use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The largest file kept: a bigger one is checked for change but cannot be put back.
pub const MAX_KEPT_BYTES: u64 = 16 * 1024 * 1024;

/// What a held file was before a shell call, in one working tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    /// The top of the working tree.
    pub worktree: String,
    /// Repo-relative path.
    pub path: String,
    /// The agent holding it.
    pub holder: String,
    /// What it was.
    pub was: Was,
    /// The holder edited it since: leave it as it is.
    #[serde(default)]
    pub holder_edited: bool,
}

/// What a held path was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Was {
    /// Nothing was there.
    Absent,
    /// A regular file: its content's SHA-256, its permission bits, and whether a copy was kept
    /// (`copies/<sha256>`; not when larger than [`MAX_KEPT_BYTES`]).
    File { sha256: String, mode: u32, kept: bool },
    /// A symbolic link to `target` (bytes).
    Symlink { target: Vec<u8> },
    /// A folder or a special file: not compared.
    Other,
}

/// What [`check`] did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The working tree, when it is not the one the check ran in.
    pub worktree: Option<String>,
    /// Repo-relative path.
    pub path: String,
    /// Its holder.
    pub holder: String,
    /// What was done.
    pub action: RestoreAction,
    /// A folder found where the file belongs, moved aside (its new name, beside the file).
    pub moved_aside: Option<String>,
}

/// How a changed held file was dealt with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreAction {
    /// Its content, mode and type from before the call were put back.
    PutBack,
    /// It did not exist before the call and was removed.
    Removed,
    /// It changed but could not be put back; why.
    NotRestorable(String),
    /// The call committed it (the commit gate skipped: `--no-verify`), in this commit; the
    /// commit stays, and both sessions are told.
    Committed(String),
}

fn dir_of(store: &Store, agent: &str) -> PathBuf {
    store.common_dir().join("mas").join("shell").join(agent)
}

fn read_manifest(dir: &Path) -> Vec<Kept> {
    std::fs::read(dir.join("manifest.json")).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
}

fn write_manifest(dir: &Path, kept: &[Kept]) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(kept).map_err(std::io::Error::other)?;
    crate::fsx::write_atomic(&dir.join("manifest.json"), &bytes, None)
}

/// Writes `bytes` as the copy named by their hash, unless it is there already, or — when `from`
/// holds that copy — gives that copy a second name. `true` when it did the latter: the folder is
/// then the caller's to flush, once for all its copies.
///
/// Why: a shell call keeps every file other sessions hold, and each copy written and flushed
/// (the file and its folder) cost some 4 ms here, over 100 ms for 30 held files, on every shell
/// call; the held files' guard keeps the same contents, flushed, under the same names.
fn keep_copy(dir: &Path, sha256: &str, bytes: &[u8], from: Option<&Path>) -> std::io::Result<bool> {
    let copies = dir.join("copies");
    let path = copies.join(sha256);
    if path.is_file() {
        return Ok(false);
    }
    std::fs::create_dir_all(&copies)?;
    // Copies are never written in place (a temporary renamed), so a second name of one keeps its
    // bytes whatever happens to the first.
    if let Some(from) = from
        && std::fs::hard_link(from.join(sha256), &path).is_ok()
    {
        return Ok(true);
    }
    crate::fsx::write_atomic(&path, bytes, None)?;
    Ok(false)
}

/// What `now` is, as a manifest keeps it (its bytes copied into `dir`).
pub(super) fn was_of(dir: &Path, now: Now) -> std::io::Result<Was> {
    was_linking(dir, now, None).map(|(was, _)| was)
}

/// [`was_of`], taking the copy from `from` when it holds it ([`keep_copy`]); `true` when it did.
fn was_linking(dir: &Path, now: Now, from: Option<&Path>) -> std::io::Result<(Was, bool)> {
    let mut linked = false;
    let was = match now {
        Now::Absent => Was::Absent,
        Now::File { sha256, mode, bytes } => {
            if let Some(bytes) = &bytes {
                linked = keep_copy(dir, &sha256, bytes, from)?;
            }
            Was::File { sha256, mode, kept: bytes.is_some() }
        }
        Now::Symlink { target } => Was::Symlink { target },
        Now::Dir | Now::Other => Was::Other,
    };
    Ok((was, linked))
}

pub(super) fn same(was: &Was, now: &Now) -> bool {
    match (was, now) {
        (Was::Absent, Now::Absent) | (Was::Other, _) => true,
        (Was::File { sha256, mode, .. }, Now::File { sha256: s, mode: m, .. }) => sha256 == s && mode == m,
        (Was::Symlink { target }, Now::Symlink { target: t }) => target == t,
        _ => false,
    }
}

/// The files other live agents hold, each once with its holder.
fn held_by_others(board: &Board, agent: &str) -> Vec<(String, String)> {
    let mut held: Vec<(String, String)> = board
        .entries
        .iter()
        .filter(|e| e.liveness == Liveness::Live && e.focus.agent != agent)
        .flat_map(|e| e.focus.targets.iter().map(|t| (file_of(t).to_string(), e.focus.agent.clone())))
        .collect();
    held.sort();
    held.dedup_by(|a, b| a.0 == b.0);
    held
}

/// Keeps the files other live agents hold, in every working tree of the repository, before
/// `agent`'s shell call. Returns how many files the pending manifest names.
pub fn keep(store: &Store, agent: &str, board: &Board) -> std::io::Result<usize> {
    let held = held_by_others(board, agent);
    if held.is_empty() {
        return Ok(0);
    }
    let dir = dir_of(store, agent);
    std::fs::create_dir_all(&dir)?;
    // HEAD as the first pending call found it: a commit the calls make is compared with it.
    let head = dir.join(HEAD);
    if !head.exists()
        && let Ok(id) = store.repo().head_id()
    {
        std::fs::write(&head, id.to_string())?;
    }
    let mut kept = read_manifest(&dir);
    let from = super::held_guard::copies_dir(store);
    let mut linked = false;
    for root in store.worktree_roots() {
        let Some(top) = root.to_str().map(str::to_string) else { continue };
        for (path, holder) in &held {
            if kept.iter().any(|k| k.worktree == top && k.path == *path) {
                continue;
            }
            let was = match beneath::now(&root, path, MAX_KEPT_BYTES) {
                Ok(now) => {
                    let (was, l) = was_linking(&dir, now, Some(&from))?;
                    linked |= l;
                    was
                }
                // Nothing is kept through a link or outside the tree, and nothing will be put
                // back there.
                Err(Open::Link { .. } | Open::Outside | Open::Missing) => continue,
                Err(Open::Io(e)) => return Err(e),
            };
            kept.push(Kept {
                worktree: top.clone(),
                path: path.clone(),
                holder: holder.clone(),
                was,
                holder_edited: false,
            });
        }
    }
    if linked {
        // The second names are on disk before the manifest that names them.
        crate::fsx::sync_dir(&dir.join("copies"));
    }
    write_manifest(&dir, &kept)?;
    Ok(kept.len())
}

/// Whether `agent` has a shell call whose check is pending.
pub fn pending(store: &Store, agent: &str) -> bool {
    dir_of(store, agent).join("manifest.json").exists()
}

/// One temporary file a put-back is about to create, as the `restoring` file lists them.
#[derive(Serialize, Deserialize)]
struct Temp {
    worktree: String,
    path: String,
    tmp: String,
}

/// Compares every file kept before `agent`'s shell call (in `here`, the working tree the check
/// runs in, and every other) and puts back what changed; then forgets the call. Returns what
/// was done.
pub fn check(store: &Store, here: &Path, agent: &str) -> std::io::Result<Vec<Restored>> {
    let dir = dir_of(store, agent);
    let kept = read_manifest(&dir);
    let mut done = Vec::new();
    // A check lists each temporary file before it creates it: only a check that was killed
    // leaves one, and the next removes it.
    let restoring = dir.join(RESTORING);
    if let Ok(text) = std::fs::read_to_string(&restoring) {
        for t in text.lines().filter_map(|l| serde_json::from_str::<Temp>(l).ok()) {
            beneath::remove_temp(Path::new(&t.worktree), &t.path, &t.tmp);
        }
    }
    let here = std::fs::canonicalize(here).unwrap_or_else(|_| here.to_path_buf());
    for k in kept.iter().filter(|k| !k.holder_edited && k.was != Was::Other) {
        let top = Path::new(&k.worktree);
        let mut told = |action: RestoreAction, moved_aside: Option<String>| {
            done.push(Restored {
                worktree: (top != here).then(|| k.worktree.clone()),
                path: k.path.clone(),
                holder: k.holder.clone(),
                action,
                moved_aside,
            })
        };
        let now = match beneath::now(top, &k.path, MAX_KEPT_BYTES) {
            Ok(now) => Some(now),
            // A folder of its path is a link now: the file is put back in a folder made again
            // (the link moved aside), unless there was none to put back.
            Err(Open::Link { .. }) if k.was != Was::Absent => None,
            Err(Open::Io(e)) => return Err(e),
            Err(_) => continue,
        };
        if now.as_ref().is_some_and(|now| same(&k.was, now)) {
            continue;
        }
        let mut record = |tmp: &str| -> std::io::Result<()> {
            let line =
                serde_json::to_string(&Temp { worktree: k.worktree.clone(), path: k.path.clone(), tmp: tmp.into() })
                    .map_err(std::io::Error::other)?;
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&restoring)?;
            f.write_all(format!("{line}\n").as_bytes())
        };
        let (action, moved) = put_back(top, &k.path, &k.was, &dir, &mut record)?;
        told(action, moved);
    }
    // A commit the call made (the commit gate skipped) that holds a file another agent holds.
    let head_then = std::fs::read_to_string(dir.join(HEAD)).ok();
    let head_now = store.repo().head_id().ok().map(|id| id.to_string());
    if let (Some(then), Some(now)) = (head_then.as_deref().map(str::trim), head_now.as_deref())
        && then != now
    {
        let out = match crate::git::run(&here, &["diff", "--name-only", "-z", then, now, "--"]) {
            Ok(out) => out,
            // HEAD before the call no longer in the repository (pruned since): no commit to name.
            Err(crate::git::GitError::Failed { .. }) => Vec::new(),
            Err(e) => return Err(std::io::Error::other(e)),
        };
        let changed: Vec<String> =
            out.split(|b| *b == 0).filter(|p| !p.is_empty()).map(|p| String::from_utf8_lossy(p).into_owned()).collect();
        let mut seen = std::collections::BTreeSet::new();
        for k in &kept {
            if changed.contains(&k.path) && seen.insert(k.path.clone()) {
                done.push(Restored {
                    worktree: None,
                    path: k.path.clone(),
                    holder: k.holder.clone(),
                    action: RestoreAction::Committed(now[..now.len().min(12)].to_string()),
                    moved_aside: None,
                });
            }
        }
    }
    // The manifest first: killed after it, the call is checked and what is left is copies that
    // no manifest names (removed by the agent's next shell call, or when its session ends).
    let manifest = dir.join("manifest.json");
    std::fs::remove_file(&manifest).or_else(|e| if manifest.exists() { Err(e) } else { Ok(()) })?;
    std::fs::remove_dir_all(&dir).or_else(|e| if dir.exists() { Err(e) } else { Ok(()) })?;
    Ok(done)
}

/// Makes `path` beneath `top` what `was` says (copies in `dir`'s `copies/`): the file's bytes and
/// mode, the link, or nothing; `record` is handed each temporary name before it is created. Says
/// what was done and what was moved aside for it.
pub(super) fn put_back(
    top: &Path,
    path: &str,
    was: &Was,
    dir: &Path,
    record: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> std::io::Result<(RestoreAction, Option<String>)> {
    let opened = |create: bool| match beneath::parent(top, path, create) {
        Ok(p) => Ok(Ok(p)),
        Err(Open::Io(e)) => Err(e),
        Err(other) => Ok(Err(other)),
    };
    let not = |why: String| Ok((RestoreAction::NotRestorable(why), None));
    match was {
        Was::Other => Ok((RestoreAction::PutBack, None)),
        Was::Absent => match opened(false)? {
            Ok(p) => Ok((RestoreAction::Removed, beneath::remove(&p)?)),
            Err(why) => not(why.to_string()),
        },
        Was::File { kept: false, .. } => not("it is too large to have been kept, so it could not be put back".into()),
        Was::File { sha256, mode, kept: true } => {
            let Ok(bytes) = std::fs::read(dir.join("copies").join(sha256)) else {
                return not("its kept copy is gone".into());
            };
            match opened(true)? {
                Ok(p) => {
                    let moved = beneath::put_file(&p, &bytes, *mode, record)?;
                    Ok((RestoreAction::PutBack, aside(&p, moved)))
                }
                Err(why) => not(why.to_string()),
            }
        }
        Was::Symlink { target } => match opened(true)? {
            Ok(p) => {
                let moved = beneath::put_symlink(&p, target, record)?;
                Ok((RestoreAction::PutBack, aside(&p, moved)))
            }
            Err(why) => not(why.to_string()),
        },
    }
}

/// What was moved aside to put a file back: links or files where its folders were, and a folder
/// where it was.
fn aside(p: &beneath::Parent, moved: Option<String>) -> Option<String> {
    let mut all = p.moved.clone();
    all.extend(moved.map(|m| format!("{m}, beside it")));
    (!all.is_empty()).then(|| all.join("; "))
}

/// The file that keeps HEAD as the first pending shell call found it.
const HEAD: &str = "head";

/// The file a check appends each put-back's temporary name to before creating it, so that the
/// check after a killed one removes what it left.
const RESTORING: &str = "restoring";

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
            let what = match &r.action {
                RestoreAction::PutBack => {
                    "it was put back as it was before the command (content, mode and type)".to_string()
                }
                RestoreAction::Removed => "it did not exist before the command and was removed".to_string(),
                RestoreAction::NotRestorable(why) => format!("it could not be put back: {why}"),
                RestoreAction::Committed(_) => String::new(),
            };
            let aside = r
                .moved_aside
                .as_ref()
                .map(|m| format!(" (what stood in its way was moved aside, nothing deleted: {m})"))
                .unwrap_or_default();
            let path = match &r.worktree {
                Some(w) => format!("{} in the worktree {w}", r.path),
                None => r.path.clone(),
            };
            if let RestoreAction::Committed(commit) = &r.action {
                return format!(
                    "git mas gate: your shell command committed {path}, which {holder} holds, in {commit}, without the \
                     commit gate (--no-verify?). The commit stays and {holder} is told; if {path} was not yours to \
                     commit, undo it with `git reset --soft HEAD~1` and `git restore --staged -- {path}`.",
                    holder = r.holder,
                );
            }
            format!(
                "git mas gate: your shell command changed {path}, which {holder} holds; {what}{aside}. Leave {file} \
                 alone: pick other work, or ask {holder} through the team's channel.",
                holder = r.holder,
                file = r.path,
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

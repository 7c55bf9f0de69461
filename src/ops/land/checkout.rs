//! Step 4 of a landing ([`super::commit`]'s crash table): each clean checkout of the integration
//! branch follows the landing, and an update that a kill interrupted is finished by the next
//! reader of the run (`git mas land`, `git mas doctor --fix`, any command that reads the run).
//!
//! A landing marks each checkout that is to follow it before it records its intent
//! ([`CHECKOUT_MARKER`]), updates it with `git read-tree -m -u <previous> <commit>` (git's own
//! fast-forward) once the branch holds the commit, and removes the mark. Only a marked checkout is
//! ever updated, and only while the landing is the branch's tip.
//!
//! A kill inside that update leaves one of these (measured by killing the landing at every
//! system call that touches the checkout, tests/cli/development/checkout_crash.rs):
//!
//! | left behind | finished by `follow` |
//! |-------------|------------------------|
//! | `index.lock` of a killed git | removed once no process holds it ([`crate::pool::lockfile`]); a live holder is waited for by the next attempt |
//! | the index still the previous tree, files untouched | `read-tree -m -u` again |
//! | the index still the previous tree, some files the landing's, one of them half written, one missing (git unlinks a file before writing its new content) | by path, below |
//! | the index the landing's tree, files not yet all written (a kill inside this repair) | by path, below |
//!
//! **By path**: only the paths the landing changes (`diff-tree <previous> <commit>`) are looked at
//! or written; every other file of the checkout stays as it is, whatever it holds. Each changed
//! path is what the landing left it as — the previous content, the landed content, nothing, or a
//! prefix of the landed content (a file killed mid-write) — or something else, which no kill of
//! the landing can produce: a person's edit after the kill. That one is copied to
//! `<git dir>/mas/landing-kept/<run>/<path>` (a folder in the way is renamed beside itself)
//! before the path is written, and the copy is named in what the recovery reports. Then the index
//! takes the landing's entries for those paths (`read-tree -m -i`, index only), the files are
//! written from it (`checkout-index -f -u`, filters and modes as git applies them), files the
//! landing deletes are removed (never through a symbolic link, [`crate::attention::beneath`]),
//! and the index's stat data refreshed. Every step is idempotent and judged afresh, so a kill
//! anywhere in the repair leaves a state of the table above.
//!
//! When the index holds neither tree (someone staged something after the kill), nothing is
//! touched and the recovery says so, with what to do.

use super::commit::{Completion, Step, Stuck};
use crate::attention::beneath::{self, Now};
use crate::pool::lockfile::{self, LockState};
use crate::pool::{PoolError, git, proposal, worktree};
use crate::store::Store;
use gix::ObjectId;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file (`mas-landing-checkout-<commit>`), in the git dir of each clean checkout of the branch,
/// that a landing writes before it records its intent (`<run> <previous> <commit>`) and removes
/// once the checkout followed: only a marked checkout is brought to the landing by
/// [`super::commit::recover`], so a checkout someone changed after a completed landing (say,
/// `git checkout <previous> -- .` to prepare a revert) is never undone.
pub const CHECKOUT_MARKER: &str = "mas-landing-checkout";

/// The mark of the landing `commit` in a worktree's git dir: one file per landing commit, so that
/// two concurrent landings of a run never overwrite each other's mark.
fn marker_path(gitdir: &Path, commit: ObjectId) -> PathBuf {
    gitdir.join(format!("{CHECKOUT_MARKER}-{commit}"))
}

/// Every landing mark in a worktree's git dir.
fn markers_in(gitdir: &Path) -> Vec<PathBuf> {
    let prefix = format!("{CHECKOUT_MARKER}-");
    std::fs::read_dir(gitdir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with(&prefix) && !n.contains(".tmp")))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether any worktree of the repository (its git dir `common`) holds a [`CHECKOUT_MARKER`].
fn any_marked(common: &Path) -> bool {
    if !markers_in(common).is_empty() {
        return true;
    }
    std::fs::read_dir(common.join("worktrees"))
        .map(|entries| entries.flatten().any(|e| !markers_in(&e.path()).is_empty()))
        .unwrap_or(false)
}

/// The git dir of the worktree at `path`: its `.git` directory, or where its `.git` file points.
fn gitdir_of(path: &Path) -> Option<PathBuf> {
    let dot = path.join(".git");
    if dot.is_dir() {
        return Some(dot);
    }
    let text = std::fs::read_to_string(&dot).ok()?;
    let target = PathBuf::from(text.strip_prefix("gitdir:")?.trim());
    Some(if target.is_absolute() { target } else { path.join(target) })
}

fn marker_text(run: &str, previous: ObjectId, commit: ObjectId) -> String {
    format!("{run} {previous} {commit}\n")
}

/// Marks the checkouts at `paths` as to follow the landing `previous` → `commit` of `run`.
pub(super) fn mark_checkouts(
    run: &str,
    previous: ObjectId,
    commit: ObjectId,
    paths: &[PathBuf],
) -> Result<(), PoolError> {
    for path in paths {
        let gitdir = match gitdir_of(path) {
            Some(dir) => dir,
            None => PathBuf::from(git(path, &["rev-parse", "--absolute-git-dir"])?),
        };
        let marker = marker_path(&gitdir, commit);
        // An older build's temporaries (`mas-landing-checkout.tmp-<pid>…`) a killed process left;
        // this build's are `git mas doctor`'s ([`crate::fsx`]'s rule).
        crate::pool::sweep_dead(&gitdir, &format!("{CHECKOUT_MARKER}.tmp-"));
        crate::fsx::write_atomic(&marker, marker_text(run, previous, commit).as_bytes(), None)
            .map_err(crate::pool::io_err(&marker))?;
    }
    Ok(())
}

/// Removes the checkout's `index.lock` when a killed git left it; what stops the checkout when a
/// running process holds it (`None`: no lock now).
pub(super) fn clear_index_lock(dir: &Path) -> Option<String> {
    let lock = lockfile::index_lock(&gitdir_of(dir)?);
    match lockfile::clear_stale_waiting(&lock, lockfile::PATIENCE) {
        Ok(LockState::Absent | LockState::Stale) => None,
        Ok(LockState::Held { pid }) => Some(format!(
            "{} is held by a running process{}: let it finish, then land again",
            lock.display(),
            if pid == 0 { String::new() } else { format!(" (pid {pid})") }
        )),
        Err(e) => Some(format!("{} (left by a killed git) cannot be removed: {e}", lock.display())),
    }
}

/// A checkout of the integration branch that still owes a landing its update: marked, while the
/// landing is the branch's tip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The run.
    pub run: String,
    /// The checkout.
    pub path: PathBuf,
    /// The branch's tip before the landing.
    pub previous: String,
    /// The landing commit.
    pub commit: String,
    /// The checkout's `index.lock`, as it stands.
    pub index_lock: LockState,
}

/// Every checkout update a landing still owes (an interrupted one; empty in the common case, read
/// without starting git when no worktree is marked).
pub fn pending(store: &Store) -> Result<Vec<Pending>, PoolError> {
    let mut out = Vec::new();
    if !any_marked(store.common_dir()) {
        return Ok(out);
    }
    for w in worktree::list(store.common_dir())? {
        let Some(branch) = w.branch.as_deref() else { continue };
        if w.bare || w.prunable || !w.path.is_dir() {
            continue;
        }
        let Some(gitdir) = gitdir_of(&w.path) else { continue };
        let tip = store.tip(branch)?;
        for marker in markers_in(&gitdir) {
            let Ok(text) = std::fs::read_to_string(&marker) else { continue };
            let mut words = text.split_whitespace();
            let (Some(run), Some(previous), Some(commit)) = (words.next(), words.next(), words.next()) else {
                continue;
            };
            if tip.map(|t| t.to_string()).as_deref() != Some(commit) {
                continue;
            }
            let index_lock = lockfile::state(&lockfile::index_lock(&gitdir));
            if index_lock == LockState::Absent && !owes(&w.path, previous, commit) {
                // A mark with nothing left to do (a concurrent landing of the same commit wrote it
                // again after the winner's update): the next reader of the run drops it.
                continue;
            }
            out.push(Pending {
                run: run.into(),
                path: w.path.clone(),
                previous: previous.into(),
                commit: commit.into(),
                index_lock,
            });
        }
    }
    Ok(out)
}

/// Whether the checkout at `dir` still differs from the landing `previous` → `commit` where the
/// landing changes it: its index is not the landing's, or a path the landing changes differs from
/// the index (read only: no lock is taken, nothing is written). Unsure counts as owing.
fn owes(dir: &Path, previous: &str, commit: &str) -> bool {
    if git(dir, &["diff-index", "--cached", "--quiet", commit, "--"]).is_err() {
        return true;
    }
    let Ok(changed) = git(dir, &["diff-tree", "-r", "-z", "--no-renames", "--name-only", previous, commit]) else {
        return true;
    };
    let paths: Vec<&str> = changed.split('\0').filter(|p| !p.is_empty()).collect();
    if paths.is_empty() {
        return false;
    }
    let literal: Vec<String> = paths.iter().map(|p| format!(":(literal){p}")).collect();
    let mut args = vec!["status", "--porcelain", "--untracked-files=no", "--"];
    args.extend(literal.iter().map(String::as_str));
    git(dir, &args).map_or(true, |out| !out.trim().is_empty())
}

/// Step 4 for the landing `previous` → `commit` of `run` on `branch`: each marked checkout is
/// brought to the landing (or what stops it goes to `out.stuck`), its mark removed once it has.
pub(super) fn follow(
    store: &Store,
    run: &str,
    branch: &str,
    previous: ObjectId,
    commit: ObjectId,
    out: &mut Completion,
) -> Result<(), PoolError> {
    // An unmarked checkout is never touched: it followed already, or whatever its index holds was
    // put there by someone after the landing.
    if !any_marked(store.common_dir()) {
        // Nothing to follow (the common case once a landing completed): no git to ask.
        return Ok(());
    }
    let full = format!("refs/heads/{branch}");
    // Once the branch moved on, a checkout's state is someone else's business.
    let at_tip = store.tip(&full)? == Some(commit);
    let mine = marker_text(run, previous, commit);
    for w in worktree::list(store.common_dir())? {
        if w.bare || w.prunable || w.branch.as_deref() != Some(full.as_str()) || !w.path.is_dir() {
            continue;
        }
        let Some(gitdir) = gitdir_of(&w.path) else { continue };
        // Marks of this run's other attempts (a concurrent loser, an attempt that never landed):
        // dropped. Another run's mark is that run's business.
        for other in markers_in(&gitdir) {
            if other != marker_path(&gitdir, commit)
                && std::fs::read_to_string(&other).is_ok_and(|t| t.split_whitespace().next() == Some(run))
            {
                let _ = std::fs::remove_file(&other);
            }
        }
        let marker = marker_path(&gitdir, commit);
        let Ok(text) = std::fs::read_to_string(&marker) else { continue };
        if text != mine {
            continue;
        }
        if !at_tip {
            let _ = std::fs::remove_file(&marker);
            continue;
        }
        let mut update = Update { store, dir: &w.path, gitdir: &gitdir, run, done: Vec::new() };
        let result = update.run(previous, commit);
        out.done.append(&mut update.done);
        match result {
            Ok(updated) => {
                let _ = std::fs::remove_file(&marker);
                if updated {
                    out.done.push(Step::UpdatedCheckout { path: w.path });
                }
            }
            Err(why) => out.stuck.push(Stuck { what: "checkout".into(), path: Some(w.path), why }),
        }
    }
    Ok(())
}

/// One side of a changed path: its mode and blob.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Side {
    mode: u32,
    blob: String,
}

/// A path the landing changes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Change {
    path: String,
    before: Option<Side>,
    after: Option<Side>,
}

const GITLINK: u32 = 0o160000;
const SYMLINK: u32 = 0o120000;

/// What a changed path holds, judged against the two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// The landed content already.
    Landed,
    /// What a landing leaves on its way: the previous content, nothing, or the landed content
    /// cut short.
    OnTheWay,
    /// Something no kill of the landing produces.
    Foreign,
}

/// What the path holds, given its bytes as git would write each side (`None`: that side has no
/// such path). Pure.
fn judge(now: &Now, before: Option<(&Side, &[u8])>, after: Option<(&Side, &[u8])>) -> Held {
    let is = |side: Option<(&Side, &[u8])>| match (now, side) {
        (Now::Absent, None) => true,
        (Now::File { mode, bytes: Some(b), .. }, Some((s, want))) if s.mode != SYMLINK => {
            b.as_slice() == want && (mode & 0o100 != 0) == (s.mode == 0o100755)
        }
        (Now::Symlink { target }, Some((s, want))) if s.mode == SYMLINK => target.as_slice() == want,
        _ => false,
    };
    if is(after) {
        return Held::Landed;
    }
    let cut_short = match (now, after) {
        (Now::File { bytes: Some(b), .. }, Some((s, want))) if s.mode != SYMLINK => want.starts_with(b),
        _ => false,
    };
    if is(before) || matches!(now, Now::Absent) || cut_short { Held::OnTheWay } else { Held::Foreign }
}

/// One checkout's update, collecting what it did.
struct Update<'a> {
    store: &'a Store,
    dir: &'a Path,
    gitdir: &'a Path,
    run: &'a str,
    done: Vec<Step>,
}

impl Update<'_> {
    fn git(&self, args: &[&str]) -> Result<String, String> {
        git(self.dir, args).map_err(|e| e.to_string())
    }

    /// Brings the checkout from `from` to `to`; `Ok(false)` when it held `to` already.
    fn run(&mut self, from: ObjectId, to: ObjectId) -> Result<bool, String> {
        let lock = lockfile::index_lock(self.gitdir);
        match lockfile::clear_stale_waiting(&lock, lockfile::PATIENCE) {
            Ok(LockState::Absent) => {}
            Ok(LockState::Stale) => self.done.push(Step::RemovedIndexLock { path: lock.clone() }),
            Ok(LockState::Held { pid }) => {
                return Err(format!(
                    "{} is held by a running process ({}); once it has finished, `git mas land {}` (or `git mas doctor --fix`) completes the update",
                    lock.display(),
                    if pid == 0 { "it changed hands while looked at".to_string() } else { format!("pid {pid}") },
                    self.run
                ));
            }
            Err(e) => return Err(format!("{} cannot be removed: {e}", lock.display())),
        }
        let tree = |c: ObjectId| proposal::tree_of(self.store, c).map_err(|e| e.to_string());
        let (from_tree, to_tree) = (tree(from)?, tree(to)?);
        if from_tree == to_tree {
            return Ok(false);
        }
        let index = self.git(&["write-tree"]).map_err(|e| format!("its index cannot be read: {e}"))?;
        let at_from = index == from_tree;
        if !at_from && index != to_tree {
            return Err(format!(
                "its index holds tree {index}, neither {from_tree} (before the landing) nor {to_tree} (the landing): something was staged after the landing was interrupted; nothing was changed. Unstage it (`git restore --staged .` keeps your files), then `git mas land {}` completes the update",
                self.run
            ));
        }
        let changes = self.changes(from_tree, to_tree)?;
        if at_from {
            // Not started, or killed before it wrote anything: git's own fast-forward.
            let _ = self.git(&["update-index", "-q", "--refresh"]);
            if self.git(&["read-tree", "-m", "-u", &from.to_string(), &to.to_string()]).is_ok() {
                return Ok(true);
            }
        } else if self.all_landed(&changes)? {
            let _ = self.git(&["update-index", "-q", "--refresh"]);
            return Ok(false);
        }
        self.by_path(&changes, at_from, (from, to))?;
        Ok(true)
    }

    /// The paths the landing changes, with both sides.
    fn changes(&self, from: ObjectId, to: ObjectId) -> Result<Vec<Change>, String> {
        let out = self.git(&["diff-tree", "-r", "-z", "--no-renames", &from.to_string(), &to.to_string()])?;
        let mut fields = out.split('\0');
        let mut changes = Vec::new();
        while let Some(head) = fields.next() {
            let Some(head) = head.strip_prefix(':') else { continue };
            let Some(path) = fields.next() else { break };
            let parts: Vec<&str> = head.split_whitespace().collect();
            let [old_mode, new_mode, old_blob, new_blob, ..] = parts[..] else { continue };
            let side = |mode: &str, blob: &str| {
                let mode = u32::from_str_radix(mode, 8).unwrap_or(0);
                (mode != 0).then(|| Side { mode, blob: blob.to_string() })
            };
            changes.push(Change {
                path: path.to_string(),
                before: side(old_mode, old_blob),
                after: side(new_mode, new_blob),
            });
        }
        Ok(changes)
    }

    /// The bytes git writes for `side` at `path`: a file's content through the checkout's
    /// filters, a link's target.
    fn bytes(&self, path: &str, side: &Side) -> Result<Vec<u8>, String> {
        let filters = format!("--path={path}");
        let args = if side.mode == SYMLINK {
            ["cat-file", "blob", &side.blob].to_vec()
        } else {
            ["cat-file", "--filters", &filters, &side.blob].to_vec()
        };
        crate::git::Git::new(self.dir).run(&args).map_err(|e| format!("cannot read {} for {path}: {e}", side.blob))
    }

    /// What each changed path holds.
    fn held(&self, change: &Change) -> Result<(Now, Held), String> {
        let now = beneath::now(self.dir, &change.path, u64::MAX).map_err(|e| format!("{}: {e}", change.path))?;
        let before = change.before.as_ref().map(|s| self.bytes(&change.path, s).map(|b| (s, b))).transpose()?;
        let after = change.after.as_ref().map(|s| self.bytes(&change.path, s).map(|b| (s, b))).transpose()?;
        let held = judge(
            &now,
            before.as_ref().map(|(s, b)| (*s, b.as_slice())),
            after.as_ref().map(|(s, b)| (*s, b.as_slice())),
        );
        Ok((now, held))
    }

    fn all_landed(&self, changes: &[Change]) -> Result<bool, String> {
        for c in changes.iter().filter(|c| !is_gitlink(c)) {
            if self.held(c)?.1 != Held::Landed {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Finishes the update path by path (see the module docs).
    fn by_path(&mut self, changes: &[Change], at_from: bool, (from, to): (ObjectId, ObjectId)) -> Result<(), String> {
        let mut write = Vec::new();
        let mut delete = Vec::new();
        for c in changes.iter().filter(|c| !is_gitlink(c)) {
            let (now, held) = self.held(c)?;
            if held == Held::Landed {
                continue;
            }
            if held == Held::Foreign {
                // A person's edit, or a folder where the landing has a file: kept, never lost.
                self.keep_aside(&c.path, &now)?;
            }
            if c.after.is_some() { write.push(c.path.clone()) } else { delete.push(c.path.clone()) }
        }
        if at_from {
            self.git(&["read-tree", "-m", "-i", &from.to_string(), &to.to_string()])
                .map_err(|e| format!("its index cannot take the landing: {e}"))?;
        }
        if !write.is_empty() {
            let input: Vec<u8> = write.iter().flat_map(|p| p.bytes().chain(std::iter::once(0))).collect();
            crate::git::Git::new(self.dir)
                .input(input)
                .run(&["checkout-index", "-f", "-u", "-q", "-z", "--stdin"])
                .map_err(|e| format!("the landing's files cannot be written: {e}"))?;
        }
        for path in &delete {
            if let Ok(p) = beneath::parent(self.dir, path, false) {
                beneath::remove(&p).map_err(|e| format!("{path} cannot be removed: {e}"))?;
            }
            remove_empty_folders(self.dir, path);
        }
        let _ = self.git(&["update-index", "-q", "--refresh"]);
        let index = self.git(&["write-tree"])?;
        let to_tree = proposal::tree_of(self.store, to).map_err(|e| e.to_string())?;
        if index != to_tree {
            return Err(format!("its index holds tree {index} after the update, not the landing's {to_tree}"));
        }
        for c in changes.iter().filter(|c| !is_gitlink(c)) {
            if self.held(c)?.1 != Held::Landed {
                return Err(format!("{} does not hold the landing's content after the update", c.path));
            }
        }
        Ok(())
    }

    /// Keeps what a changed path holds that no landing wrote: a file's bytes or a link's target
    /// copied under `mas/landing-kept/<run>/`, a folder renamed beside itself.
    fn keep_aside(&mut self, path: &str, now: &Now) -> Result<(), String> {
        let kept = match now {
            Now::File { bytes: Some(bytes), .. } => self.copy_to_kept(path, "", bytes)?,
            Now::Symlink { target } => self.copy_to_kept(path, ".symlink-target", target)?,
            Now::Dir | Now::Other => {
                let p = beneath::parent(self.dir, path, false).map_err(|e| format!("{path}: {e}"))?;
                match beneath::remove(&p).map_err(|e| format!("{path} cannot be moved aside: {e}"))? {
                    Some(aside) => Path::new(path).with_file_name(aside),
                    None => return Ok(()),
                }
            }
            Now::Absent | Now::File { bytes: None, .. } => return Ok(()),
        };
        self.done.push(Step::KeptAside { path: self.dir.join(path), kept });
        Ok(())
    }

    fn copy_to_kept(&self, path: &str, suffix: &str, bytes: &[u8]) -> Result<PathBuf, String> {
        let root = self.gitdir.join("mas").join("landing-kept").join(self.run);
        let mut kept = root.join(format!("{path}{suffix}"));
        let mut n = 1;
        while kept.symlink_metadata().is_ok() {
            n += 1;
            kept = root.join(format!("{path}{suffix}.{n}"));
        }
        if let Some(parent) = kept.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&kept, bytes).map_err(|e| format!("{}: {e}", kept.display()))?;
        Ok(kept)
    }
}

fn is_gitlink(c: &Change) -> bool {
    c.before.as_ref().is_some_and(|s| s.mode == GITLINK) || c.after.as_ref().is_some_and(|s| s.mode == GITLINK)
}

/// Removes the folders of `path` that the removal left empty, deepest first (never the top).
fn remove_empty_folders(top: &Path, path: &str) {
    let mut rel = Path::new(path).parent();
    while let Some(folder) = rel.filter(|p| !p.as_os_str().is_empty()) {
        if std::fs::remove_dir(top.join(folder)).is_err() {
            break;
        }
        rel = folder.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(bytes: &[u8], mode: u32) -> Now {
        Now::File { sha256: String::new(), mode, bytes: Some(bytes.to_vec()) }
    }

    #[test]
    fn a_changed_path_is_foreign_only_when_no_kill_of_the_landing_explains_it() {
        let regular = Side { mode: 0o100644, blob: "b".into() };
        let exec = Side { mode: 0o100755, blob: "e".into() };
        let link = Side { mode: SYMLINK, blob: "l".into() };
        let old: &[u8] = b"old content\n";
        let new: &[u8] = b"the landed content\n";
        type Row<'a> = (&'a str, Now, Option<(&'a Side, &'a [u8])>, Option<(&'a Side, &'a [u8])>, Held);
        let table: Vec<Row<'_>> = vec![
            ("landed", file(new, 0o644), Some((&regular, old)), Some((&regular, new)), Held::Landed),
            ("previous", file(old, 0o644), Some((&regular, old)), Some((&regular, new)), Held::OnTheWay),
            ("unlinked before the write", Now::Absent, Some((&regular, old)), Some((&regular, new)), Held::OnTheWay),
            ("cut short", file(b"the lan", 0o644), Some((&regular, old)), Some((&regular, new)), Held::OnTheWay),
            ("created empty", file(b"", 0o644), Some((&regular, old)), Some((&regular, new)), Held::OnTheWay),
            ("a person's edit", file(b"mine\n", 0o644), Some((&regular, old)), Some((&regular, new)), Held::Foreign),
            (
                "longer than landed",
                file(b"the landed content\nmore", 0o644),
                None,
                Some((&regular, new)),
                Held::Foreign,
            ),
            ("deleted: gone", Now::Absent, Some((&regular, old)), None, Held::Landed),
            ("deleted: still there", file(old, 0o644), Some((&regular, old)), None, Held::OnTheWay),
            ("deleted: edited", file(b"mine\n", 0o644), Some((&regular, old)), None, Held::Foreign),
            ("mode still old", file(new, 0o644), Some((&regular, new)), Some((&exec, new)), Held::OnTheWay),
            ("mode landed", file(new, 0o755), Some((&regular, new)), Some((&exec, new)), Held::Landed),
            ("a link landed", Now::Symlink { target: b"t".to_vec() }, None, Some((&link, b"t")), Held::Landed),
            ("a link elsewhere", Now::Symlink { target: b"u".to_vec() }, None, Some((&link, b"t")), Held::Foreign),
            ("a folder in the way", Now::Dir, None, Some((&regular, new)), Held::Foreign),
        ];
        for (what, now, before, after, want) in table {
            assert_eq!(judge(&now, before, after), want, "{what}");
        }
    }
}

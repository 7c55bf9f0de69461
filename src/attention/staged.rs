//! Staged paths without spawning git: the index against HEAD's tree, skipping every directory whose
//! cache-tree entry says it is unchanged.
//!
//! This is what `git diff --cached --name-only -z --no-renames` prints, computed in-process. The
//! index is loaded without re-hashing it (its trailing checksum guards against disk corruption,
//! which git itself does not check on every read either), then walked together with HEAD's tree
//! one directory at a time. A directory whose cache-tree entry is valid and names the same tree as
//! HEAD's is skipped whole, as git does; after `git add`, only the directories on the path to a
//! changed file are invalid, and `git commit` makes the whole cache-tree valid before its hooks run,
//! so a commit of a few files reads a handful of trees out of thousands.
//!
//! Decisions:
//! - **A fallback, not a second opinion.** Whatever this reader does not handle exactly as git does
//!   returns `None`, and the caller asks git: an unborn HEAD, a missing index, a split or sparse
//!   index, unmerged entries and intent-to-add entries. Errors reading objects do the same, so the
//!   gate fails closed exactly when `git diff --cached` would fail.
//! - **`GIT_INDEX_FILE` is honoured**: git sets it for the hooks of `git commit -a` and
//!   `git commit <paths>`, whose staged change is in a temporary index.
//! - **Order.** Paths come out in byte order, which is the order `git diff --cached` prints them in;
//!   the tests compare the two on real repositories.

use gix::bstr::{BString, ByteSlice};
use gix::index::extension::Tree as CacheTree;
use gix::objs::tree::EntryKind;
use std::path::{Path, PathBuf};

/// The index file git would use here: `GIT_INDEX_FILE` (relative to the current directory) when
/// set, else the repository's.
pub fn index_path(repo: &gix::Repository) -> PathBuf {
    match std::env::var_os("GIT_INDEX_FILE") {
        Some(p) if !p.is_empty() => {
            let p = PathBuf::from(p);
            if p.is_absolute() { p } else { std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p) }
        }
        _ => repo.index_path(),
    }
}

/// The blob staged at `path` (repository-relative, stage 0) in the index git would use here:
/// `Some(None)` when nothing is staged there; `None` when this reader leaves the index to git (it
/// cannot be read, or it is split or sparse).
pub fn staged_blob(repo: &gix::Repository, path: &str) -> Option<Option<gix::ObjectId>> {
    let options = gix::index::decode::Options { thread_limit: Some(1), ..Default::default() };
    let file = gix::index::File::at(index_path(repo), repo.object_hash(), true, options).ok()?;
    if file.link().is_some() || file.is_sparse() {
        return None;
    }
    Some(file.entry_by_path_and_stage(path.as_bytes().as_bstr(), gix::index::entry::Stage::Unconflicted).map(|e| e.id))
}

/// Paths staged for commit, relative to the top of the working tree, in byte order; `None` when the
/// index or the repository is in a state this reader leaves to git (see the module docs).
pub fn staged_paths(repo: &gix::Repository) -> Option<Vec<String>> {
    staged_paths_at(repo, &index_path(repo))
}

/// [`staged_paths`] for the index file at `index`.
pub fn staged_paths_at(repo: &gix::Repository, index: &Path) -> Option<Vec<String>> {
    let head_tree = repo.head_tree_id().ok()?.detach();
    let options = gix::index::decode::Options { thread_limit: Some(1), ..Default::default() };
    let file = gix::index::File::at(index, repo.object_hash(), true, options).ok()?;
    if file.link().is_some() || file.is_sparse() {
        return None;
    }
    let unusual = gix::index::entry::Flags::INTENT_TO_ADD;
    if file.entries().iter().any(|e| e.stage_raw() != 0 || e.flags.intersects(unusual)) {
        return None;
    }
    let mut walk = Walk { repo, state: &file, out: Vec::new() };
    walk.dir(Some(head_tree), file.tree(), file.entries(), 0).ok()?;
    let mut out = walk.out;
    out.sort();
    out.dedup();
    Some(out.into_iter().map(|p| p.to_str_lossy().into_owned()).collect())
}

struct Walk<'a> {
    repo: &'a gix::Repository,
    state: &'a gix::index::State,
    out: Vec<BString>,
}

/// A tree entry, owned (the tree's buffer is reused while recursing).
struct TreeItem {
    name: BString,
    kind: EntryKind,
    id: gix::ObjectId,
    matched: bool,
}

/// Something went wrong reading objects: the caller falls back to git.
struct Unreadable;

impl Walk<'_> {
    fn tree_items(&self, id: gix::ObjectId) -> Result<Vec<TreeItem>, Unreadable> {
        let tree = self.repo.find_tree(id).map_err(|_| Unreadable)?;
        let decoded = tree.decode().map_err(|_| Unreadable)?;
        Ok(decoded
            .entries
            .iter()
            .map(|e| TreeItem {
                name: e.filename.to_owned(),
                kind: e.mode.kind(),
                id: e.oid.to_owned(),
                matched: false,
            })
            .collect())
    }

    /// Every blob below `id`, as deleted paths under `prefix`.
    fn all_deleted(&mut self, id: gix::ObjectId, prefix: &[u8]) -> Result<(), Unreadable> {
        let items = self.tree_items(id)?;
        self.deleted(items, prefix)
    }

    /// `items` (entries of a tree at `prefix`) and every blob below them, as deleted paths.
    fn deleted(&mut self, items: impl IntoIterator<Item = TreeItem>, prefix: &[u8]) -> Result<(), Unreadable> {
        for item in items {
            let mut path = prefix.to_vec();
            path.extend_from_slice(&item.name);
            if item.kind == EntryKind::Tree {
                path.push(b'/');
                self.all_deleted(item.id, &path)?;
            } else {
                self.out.push(path.into());
            }
        }
        Ok(())
    }

    /// Compares the directory at `prefix_len` bytes of every entry path (`entries` are exactly the
    /// index entries below it) with `tree` (`None`: the directory is new).
    fn dir(
        &mut self,
        tree: Option<gix::ObjectId>,
        cache: Option<&CacheTree>,
        entries: &[gix::index::Entry],
        prefix_len: usize,
    ) -> Result<(), Unreadable> {
        if let (Some(tree), Some(cache)) = (tree, cache)
            && cache.num_entries.is_some()
            && cache.id == tree
        {
            return Ok(());
        }
        let mut items = match tree {
            Some(id) => self.tree_items(id)?,
            None => Vec::new(),
        };
        let state = self.state;
        let find = |items: &[TreeItem], name: &[u8]| items.iter().position(|i| i.name.as_slice() == name);
        let mut i = 0;
        while i < entries.len() {
            let path: &[u8] = entries[i].path(state);
            let rest = &path[prefix_len..];
            match rest.find_byte(b'/') {
                None => {
                    let entry = &entries[i];
                    let changed = match find(&items, rest) {
                        Some(at) if items[at].kind != EntryKind::Tree => {
                            items[at].matched = true;
                            let same_kind = entry.mode.to_tree_entry_mode().map(|m| m.kind()) == Some(items[at].kind);
                            !same_kind || entry.id != items[at].id
                        }
                        _ => true,
                    };
                    if changed {
                        self.out.push(path.into());
                    }
                    i += 1;
                }
                Some(slash) => {
                    let name = &rest[..slash];
                    let dir_len = prefix_len + slash + 1;
                    let dir_prefix = &path[..dir_len];
                    let end = i + entries[i..].partition_point(|e| e.path(state).starts_with(dir_prefix));
                    let sub_tree = match find(&items, name) {
                        Some(at) if items[at].kind == EntryKind::Tree => {
                            items[at].matched = true;
                            Some(items[at].id)
                        }
                        _ => None,
                    };
                    let sub_cache = cache.and_then(|c| c.children.iter().find(|c| c.name.as_slice() == name));
                    self.dir(sub_tree, sub_cache, &entries[i..end], dir_len)?;
                    i = end;
                }
            }
        }
        let prefix: Vec<u8> = match entries.first() {
            Some(e) => e.path(state)[..prefix_len].to_vec(),
            None => Vec::new(),
        };
        self.deleted(items.into_iter().filter(|i| !i.matched), &prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
        let out = Command::new("git")
            .current_dir(dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .env_remove("GIT_INDEX_FILE")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }

    fn write(dir: &Path, path: &str, text: &str) {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// What `git diff --cached` says, beside what this module says.
    fn both(dir: &Path) -> (Vec<String>, Option<Vec<String>>) {
        let out = git(dir, &["diff", "--cached", "--name-only", "-z", "--no-renames"]);
        let want =
            out.split(|b| *b == 0).filter(|p| !p.is_empty()).map(|p| String::from_utf8_lossy(p).into()).collect();
        let repo = gix::open(dir).unwrap();
        (want, staged_paths_at(&repo, &repo.index_path()))
    }

    fn assert_agrees(dir: &Path, what: &str) -> Vec<String> {
        let (want, got) = both(dir);
        assert_eq!(got.as_ref(), Some(&want), "{what}");
        // With a fully valid cache-tree (what `git commit` leaves for its hooks) the answer is the same.
        git(dir, &["write-tree"]);
        let (want2, got2) = both(dir);
        assert_eq!(want2, want, "{what}: write-tree changed git's answer");
        assert_eq!(got2, Some(want.clone()), "{what}, valid cache-tree");
        want
    }

    #[test]
    fn agrees_with_git_diff_cached_through_a_series_of_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        for p in ["a", "a.txt", "a-b/f", "d/e/f.txt", "d/g.txt", "d/h/i/j.txt", "z/é.txt", "gone/x", "gone/y/z"] {
            write(dir, p, p);
        }
        for k in 0..40 {
            write(dir, &format!("keep/k{k:02}/file.txt"), "keep");
        }
        std::os::unix::fs::symlink("a.txt", dir.join("link")).unwrap();
        git(dir, &["add", "."]);
        git(dir, &["commit", "-qm", "base"]);
        assert!(assert_agrees(dir, "nothing staged").is_empty());

        write(dir, "d/e/f.txt", "changed");
        git(dir, &["add", "d/e/f.txt"]);
        assert_eq!(assert_agrees(dir, "one modified file"), ["d/e/f.txt"]);

        git(dir, &["rm", "-q", "--cached", "d/g.txt"]);
        write(dir, "new/dir/n.txt", "n");
        write(dir, "d/h/i/k.txt", "k");
        git(dir, &["add", "new", "d/h"]);
        git(dir, &["update-index", "--chmod=+x", "a.txt"]);
        git(dir, &["rm", "-q", "-r", "--cached", "gone"]);
        assert_agrees(dir, "deletions, additions, a mode change and a deleted directory");

        // A file becomes a directory and a directory becomes a file; a symlink changes target.
        git(dir, &["rm", "-q", "--cached", "a"]);
        std::fs::remove_file(dir.join("a")).unwrap();
        write(dir, "a/inner", "x");
        git(dir, &["rm", "-q", "-r", "--cached", "a-b"]);
        std::fs::remove_dir_all(dir.join("a-b")).unwrap();
        write(dir, "a-b", "now a file");
        std::fs::remove_file(dir.join("link")).unwrap();
        std::os::unix::fs::symlink("d/g.txt", dir.join("link")).unwrap();
        git(dir, &["add", "-A", "a", "a-b", "link", "z"]);
        let paths = assert_agrees(dir, "file/directory swaps");
        assert!(paths.contains(&"a".to_string()) && paths.contains(&"a/inner".to_string()), "{paths:?}");

        git(dir, &["commit", "-qm", "next"]);
        assert!(assert_agrees(dir, "after the commit").is_empty());
    }

    #[test]
    fn leaves_unusual_states_to_git() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        write(dir, "a.txt", "a");
        git(dir, &["add", "a.txt"]);
        let repo = gix::open(dir).unwrap();
        assert_eq!(staged_paths_at(&repo, &repo.index_path()), None, "unborn HEAD");
        git(dir, &["commit", "-qm", "base"]);
        write(dir, "b.txt", "b");
        git(dir, &["add", "-N", "b.txt"]);
        let repo = gix::open(dir).unwrap();
        assert_eq!(staged_paths_at(&repo, &repo.index_path()), None, "intent to add");
        assert_eq!(staged_paths_at(&repo, &dir.join(".git/no-such-index")), None, "missing index");
    }
}

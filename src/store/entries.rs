//! Reading a chain's records from their objects, with the newest records of a chain kept in memory.
//!
//! A commit id names its record (the commit names its tree, the tree the record's blob), so a record
//! read once stays true for as long as the store lives. The records a window's walk reads (at most
//! [`KEPT_WALK`] of a chain, the board's and the sequence rule's windows; never a whole chain's
//! history, which a tally walks once) are kept, up to [`KEPT`] in all, and [`Store::entry`] takes
//! them from there. A claim read the caller's chain for the board (twice: before the claims lock
//! and under it), then its sequence number (`Store::seq_floor`) read the same records again, one
//! by one from the objects: 17 reads of about 0.1 ms here, under the lock every other claim waits on.

use super::record::{ParseError, Record};
use super::{Entry, RECORD_FILE, Store, StoreError, damage, git_err};
use gix::ObjectId;

/// The longest walk whose records are kept.
const KEPT_WALK: usize = 64;
/// How many records a store keeps.
const KEPT: usize = 1024;

impl Store {
    /// Reads the record stored in `commit`.
    pub fn entry(&self, commit: ObjectId) -> Result<Entry, StoreError> {
        if let Some(entry) = self.entries.borrow().get(&commit) {
            return Ok(entry.clone());
        }
        self.entry_read(commit)
    }

    /// [`Store::entry`] from the objects.
    fn entry_read(&self, commit: ObjectId) -> Result<Entry, StoreError> {
        match Self::entry_in(&self.repo, commit) {
            Ok(entry) => Ok(entry),
            // `git gc` may have moved the objects into a new pack and deleted the loose ones while
            // this process's view of the packs was taken: read again through a fresh view.
            Err(first) => match gix::open(self.repo.path()) {
                Ok(fresh) => {
                    Self::entry_in(&fresh, commit).map_err(|_| damage::missing_part(&fresh, commit).unwrap_or(first))
                }
                Err(_) => Err(first),
            },
        }
    }

    fn entry_in(repo: &gix::Repository, commit: ObjectId) -> Result<Entry, StoreError> {
        let c = repo.find_commit(commit).map_err(git_err(format!("reading record commit {commit}")))?;
        let parent = c.parent_ids().next().map(|id| id.detach());
        let tree = c.tree().map_err(git_err(format!("reading the tree of {commit}")))?;
        let (blob, record) = match tree.find_entry(RECORD_FILE) {
            Some(e) => {
                let id = e.object_id();
                let object = e.object().map_err(git_err(format!("reading {RECORD_FILE} of {commit}")))?;
                (Some(id), Record::parse(&object.data))
            }
            None => (None, Err(ParseError::NotJson(format!("the commit has no {RECORD_FILE}")))),
        };
        Ok(Entry { commit, parent, blob, record })
    }

    /// Walks a chain from its tip, newest first, reading at most `limit` records.
    pub fn walk(&self, refname: &str, limit: usize) -> Result<Vec<Entry>, StoreError> {
        self.walk_from(self.tip(refname)?, limit)
    }

    /// Walks a chain from `tip`, newest first, reading at most `limit` records.
    pub(super) fn walk_from(&self, tip: Option<ObjectId>, limit: usize) -> Result<Vec<Entry>, StoreError> {
        let mut out = Vec::new();
        let mut next = tip;
        while let Some(id) = next {
            if out.len() >= limit {
                break;
            }
            let entry = self.entry(id)?;
            next = entry.parent;
            if limit <= KEPT_WALK {
                let mut kept = self.entries.borrow_mut();
                if kept.len() < KEPT && !kept.contains_key(&id) {
                    kept.insert(id, entry.clone());
                }
            }
            out.push(entry);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::identity::AgentKey;
    use crate::store::Store;
    use std::process::Command;

    const CHAIN: &str = "refs/mas/journal/alice";

    /// A repository whose committed roster names alice.
    struct Scratch {
        _dir: tempfile::TempDir,
        store: Store,
        key: AgentKey,
    }

    fn scratch() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let key = AgentKey::from_seed([7; 32]);
        let git =
            |args: &[&str]| assert!(Command::new("git").args(args).current_dir(dir.path()).status().unwrap().success());
        git(&["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(dir.path().join(".mas")).unwrap();
        std::fs::write(dir.path().join(crate::identity::ROSTER_PATH), format!("alice {}\n", key.did())).unwrap();
        git(&["add", "."]);
        git(&["-c", "user.name=a", "-c", "user.email=a@example.invalid", "commit", "-qm", "roster"]);
        let store = Store::discover(dir.path()).unwrap();
        Scratch { _dir: dir, store, key }
    }

    /// Removes the loose object `id` (the scratch repository is never packed).
    fn lose(s: &Scratch, id: gix::ObjectId) {
        let hex = id.to_string();
        let objects = s.store.common_dir().join("objects");
        std::fs::remove_file(objects.join(&hex[..2]).join(&hex[2..])).unwrap();
    }

    #[test]
    fn a_windows_records_are_read_once_and_a_whole_chains_are_not_kept() {
        let s = scratch();
        for n in 0..3 {
            s.store.append(CHAIN, "alice", &s.key, "note", &[], |_| Ok(Some(serde_json::json!({ "n": n })))).unwrap();
        }
        // A walk of the whole chain keeps nothing.
        assert_eq!(s.store.walk(CHAIN, usize::MAX).unwrap().len(), 3);
        assert!(s.store.entries.borrow().is_empty(), "a whole chain's walk kept its records");
        // A window's walk keeps what it read: lost afterwards, the records are still what was read.
        let window = s.store.walk(CHAIN, 2).unwrap();
        for e in &window {
            lose(&s, e.commit);
        }
        for e in &window {
            let again = s.store.entry(e.commit).unwrap();
            assert_eq!((again.parent, again.blob), (e.parent, e.blob));
            assert_eq!(again.record.as_ref().ok(), e.record.as_ref().ok());
            assert!(Store::discover(s._dir.path()).unwrap().entry(e.commit).is_err(), "the object is gone");
        }
        // And the next append takes its sequence number from them.
        let appended =
            s.store.append(CHAIN, "alice", &s.key, "note", &[], |_| Ok(Some(serde_json::json!({ "n": 3 })))).unwrap();
        assert_eq!(appended.map(|a| a.seq), Some(4));
    }
}

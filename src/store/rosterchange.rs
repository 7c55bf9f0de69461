//! The change a commit or the index makes to `.mas/roster`: the git side of
//! [`crate::identity::trail`], which decides whether its signature trail is valid.
//!
//! A commit's change is measured against its first parent (the roster it stood on); a commit whose
//! roster equals one of its parents' changes nothing of its own (a merge that takes one side's
//! roster: the change was judged in that side's history). Blobs are read by id, so a roster that
//! does not parse is still a change: the parent's is reported as unreadable, the new one counts as
//! naming nobody.

use super::{Store, StoreError, git_err};
use crate::identity::trail::RosterChange;
use crate::identity::{ROSTER_PATH, parse_roster};
use gix::ObjectId;

impl Store {
    /// The blob id of `.mas/roster` in `commit`'s tree, `None` when it has none.
    pub fn roster_blob_in(&self, commit: ObjectId) -> Result<Option<ObjectId>, StoreError> {
        let c = self.repo.find_commit(commit).map_err(git_err(format!("reading commit {commit}")))?;
        let tree = c.tree().map_err(git_err(format!("reading the tree of {commit}")))?;
        let entry = tree.lookup_entry_by_path(ROSTER_PATH).map_err(git_err(format!("looking up {ROSTER_PATH}")))?;
        Ok(entry.filter(|e| e.mode().is_blob()).map(|e| e.object_id()))
    }

    /// The change from the roster blob `old` to `new` (`None`: absent), or `None` when they are equal.
    pub fn roster_change(
        &self,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
    ) -> Result<Option<RosterChange>, StoreError> {
        if old == new {
            return Ok(None);
        }
        let read = |id: Option<ObjectId>, origin: &str| -> Result<Result<Vec<(String, String)>, String>, StoreError> {
            let Some(id) = id else { return Ok(Ok(Vec::new())) };
            let blob = self.repo.find_object(id).map_err(git_err(format!("reading {origin}")))?;
            Ok(parse_roster(&blob.data, origin).map_err(|e| e.to_string()))
        };
        let before = read(old, &format!("{ROSTER_PATH} (parent)"))?;
        let after = read(new, ROSTER_PATH)?.unwrap_or_default();
        Ok(Some(RosterChange { old: old.map(|o| o.to_string()), new: new.map(|n| n.to_string()), before, after }))
    }

    /// The change `commit` makes to `.mas/roster` against its first parent; `None` when its roster
    /// equals one of its parents'. A root commit is measured against no roster.
    pub fn commit_roster_change(&self, commit: ObjectId) -> Result<Option<RosterChange>, StoreError> {
        let c = self.repo.find_commit(commit).map_err(git_err(format!("reading commit {commit}")))?;
        let new = self.roster_blob_in(commit)?;
        let mut parents = Vec::new();
        for p in c.parent_ids() {
            parents.push(self.roster_blob_in(p.detach())?);
        }
        if parents.contains(&new) {
            return Ok(None);
        }
        self.roster_change(parents.first().copied().flatten(), new)
    }
}

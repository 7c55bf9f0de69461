//! Which files two changes of one base change differently: a three-way merge of trees, in
//! memory, as `git merge-tree --write-tree` does it (gix's tree merge, whose unresolved conflicts
//! are git's own: [`gix::merge::tree::TreatAsUnresolved::git`]). Nothing is written: the merge
//! runs on a handle with object memory on (gix would otherwise write merged blobs to the object
//! database), whose objects are dropped with it. A crash in it leaves nothing.
//!
//! A proposal is checked this way against the other proposals of its run and against the run's
//! branch when it moved (`ops::propose`), so the files that would stop a landing are named when the
//! proposal is made, not when the landing tries to merge it.

use super::PoolError;
use crate::store::StoreError;
use gix::ObjectId;

/// The files `ours` and `theirs` (trees, both changed from `base`) change in ways a three-way
/// merge cannot join, sorted; empty when they merge cleanly. `labels`: the two sides' names.
pub fn conflicting_paths(
    repo: &gix::Repository,
    base: ObjectId,
    (ours, theirs): (ObjectId, ObjectId),
    (ours_label, theirs_label): (&str, &str),
) -> Result<Vec<String>, PoolError> {
    if ours == theirs || ours == base || theirs == base {
        return Ok(Vec::new());
    }
    let err = |e: Box<dyn std::error::Error + Send + Sync>| {
        PoolError::Store(StoreError::Git {
            context: format!("merging {ours_label}'s tree with {theirs_label}'s"),
            source: e,
        })
    };
    let repo = repo.clone().with_object_memory();
    let options = repo.tree_merge_options().map_err(|e| err(Box::new(e)))?;
    let labels = gix::merge::blob::builtin_driver::text::Labels {
        ancestor: Some("base".into()),
        current: Some(ours_label.into()),
        other: Some(theirs_label.into()),
    };
    let outcome = repo.merge_trees(base, ours, theirs, labels, options).map_err(|e| err(Box::new(e)))?;
    Ok(unresolved_paths(&outcome))
}

/// The files a tree merge left in conflict by git's rules, sorted; empty when it merged cleanly.
/// The landing's merge of its members reads its outcomes this way too.
pub fn unresolved_paths(outcome: &gix::merge::tree::Outcome<'_>) -> Vec<String> {
    let how = gix::merge::tree::TreatAsUnresolved::git();
    let mut paths: Vec<String> =
        outcome.conflicts.iter().filter(|c| c.is_unresolved(how)).map(|c| c.ours.location().to_string()).collect();
    paths.sort();
    paths.dedup();
    paths
}

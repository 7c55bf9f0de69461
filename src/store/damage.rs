//! Damaged chains: a ref under `refs/mas/` whose chain lost an object.
//!
//! A chain's ref keeps its records reachable, so `git gc` never drops a record that a ref points
//! at. It can still lose one: `git gc --prune=now` run beside a writer (git warns against it)
//! prunes the blob, tree and commit a writer has just written but not yet pointed its ref at, and
//! the writer's compare-and-swap then points the ref at a commit whose objects are gone. A lost
//! pack does the same to older records. From then on every walk of that chain fails.
//!
//! This module makes such a chain a typed state instead of an error of every read:
//!
//! - [`StoreError::MissingObject`] names the record and the object (commit, tree or record blob)
//!   that is missing (`missing_part`, called by [`Store::entry`] when a read fails twice);
//! - [`Store::readable_window_at`] reads a chain's newest records down to the first one that
//!   cannot be read and returns them with the [`Break`]: the board folds the readable part and
//!   marks the chain damaged (the attention layer's focus store), so one damaged chain no longer
//!   takes down every reader of the board;
//! - [`Store::readable_chain`] reads every record of a chain that can be read, across its
//!   breaks, for the replay of `git mas check` (which judges commits against whole histories);
//! - [`Store::chain_damage`] walks a whole chain for `git mas doctor`: where it breaks, the
//!   newest record that is readable, the highest sequence number seen, and the **last whole
//!   record** — the newest record that can be read together with everything below it down to the
//!   chain's root (none when a missing commit hides what lay below it).
//!
//! Repairing is `git mas doctor`'s: it decides what to write, then calls
//! [`Store::cut_back`], which writes one new record on top of the last whole record and moves
//! the ref there by compare-and-swap from the damaged tip.

use super::record::{Record, Verdict};
use super::{CasOutcome, Entry, Store, StoreError};
use crate::identity::Roster;
use gix::ObjectId;
use serde::{Deserialize, Serialize};

/// Which object of a record is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// The record's commit.
    Commit,
    /// The commit's tree.
    Tree,
    /// The record blob (`record.json`).
    Blob,
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Part::Commit => "commit",
            Part::Tree => "tree",
            Part::Blob => "record blob",
        })
    }
}

/// Where a walk down a chain stopped: the first record (from the tip) that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Break {
    /// The record's commit.
    pub record: ObjectId,
    /// The object that is missing (the commit itself, its tree or its record blob).
    pub missing: ObjectId,
    /// Which of the three it is.
    pub part: Part,
    /// The record's parent, when its commit could be read (its tree or blob is what is missing).
    pub parent: Option<ObjectId>,
}

/// What [`Store::chain_damage`] found in a damaged chain.
#[derive(Debug, Clone)]
pub struct Damage {
    /// The chain's ref.
    pub refname: String,
    /// Where the ref points (the damaged tip).
    pub tip: ObjectId,
    /// The newest break.
    pub at: Break,
    /// The newest record that could be read (above the break, else below it), if any.
    pub newest: Option<Entry>,
    /// The highest sequence number of any record that could be read.
    pub max_seq: u64,
    /// The newest record readable together with everything below it, if any.
    pub last_whole: Option<ObjectId>,
}

/// A break in a chain read whole ([`Store::readable_chain`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lost {
    /// The record that cannot be read, and what of it is missing.
    pub at: Break,
    /// How many of the readable records (oldest first) lie below it: the record just below is
    /// the one at `below - 1`, the one just above at `below`.
    pub below: usize,
}

/// The missing object of the record `commit` in `repo`, as a [`StoreError::MissingObject`], or
/// `None` when its commit, tree and record blob are all there (the read failed for another reason).
pub(super) fn missing_part(repo: &gix::Repository, commit: ObjectId) -> Option<StoreError> {
    let missing = |missing, what| Some(StoreError::MissingObject { record: commit, missing, what });
    if !repo.has_object(commit) {
        return missing(commit, Part::Commit);
    }
    let c = repo.find_commit(commit).ok()?;
    let tree = c.tree_id().ok()?.detach();
    if !repo.has_object(tree) {
        return missing(tree, Part::Tree);
    }
    let blob = repo.find_tree(tree).ok()?.find_entry(super::record::RECORD_FILE)?.object_id();
    if !repo.has_object(blob) {
        return missing(blob, Part::Blob);
    }
    None
}

impl Store {
    /// The break that the error `e` of reading `commit` stands for, or `e` back when it is not a
    /// missing object.
    fn break_of(&self, e: StoreError) -> Result<Break, StoreError> {
        match e {
            StoreError::MissingObject { record, missing, what } => {
                let parent = match what {
                    Part::Commit => None,
                    Part::Tree | Part::Blob => {
                        self.repo.find_commit(record).ok().and_then(|c| c.parent_ids().next().map(|p| p.detach()))
                    }
                };
                Ok(Break { record, missing, part: what, parent })
            }
            other => Err(other),
        }
    }

    /// The newest records (at most `window`) of `refname`'s chain at `tip`, down to the first one
    /// that cannot be read, verified against the roster and oldest first, with where the walk
    /// broke (`None`: the window read whole, as [`Store::verified_window_at`] reads it).
    #[allow(clippy::type_complexity)]
    pub fn readable_window_at(
        &self,
        refname: &str,
        tip: ObjectId,
        roster: &Roster,
        window: usize,
    ) -> Result<(Vec<(Entry, Verdict)>, Option<Break>), StoreError> {
        let mut entries = Vec::new();
        let mut next = Some(tip);
        let mut broke = None;
        while let Some(id) = next {
            if entries.len() >= window {
                break;
            }
            match self.entry(id) {
                Ok(entry) => {
                    next = entry.parent;
                    entries.push(entry);
                }
                Err(e) => {
                    broke = Some(self.break_of(e)?);
                    break;
                }
            }
        }
        entries.reverse();
        Ok((self.verify_window(refname, entries, roster), broke))
    }

    /// Every record of `refname`'s chain that can be read, verified against the roster and oldest
    /// first, with each break newest first. A break whose commit is lost hides everything below
    /// it; one whose tree or blob is lost is stepped over to its parent. An undamaged chain reads
    /// as [`Store::verified_chain`] reads it, with no break.
    #[allow(clippy::type_complexity)]
    pub fn readable_chain(
        &self,
        refname: &str,
        roster: &Roster,
    ) -> Result<(Vec<(Entry, Verdict)>, Vec<Lost>), StoreError> {
        let mut entries = Vec::new();
        let mut breaks = Vec::new();
        let mut next = self.tip(refname)?;
        while let Some(id) = next {
            match self.entry(id) {
                Ok(entry) => {
                    next = entry.parent;
                    entries.push(entry);
                }
                Err(e) => {
                    let at = self.break_of(e)?;
                    next = at.parent;
                    breaks.push((at, entries.len()));
                }
            }
        }
        let total = entries.len();
        entries.reverse();
        let lost = breaks.into_iter().map(|(at, above)| Lost { at, below: total - above }).collect();
        Ok((self.verify_window(refname, entries, roster), lost))
    }

    /// Walks `refname`'s whole chain and returns how it is damaged, or `None` when every record
    /// reads (or the ref does not exist).
    pub fn chain_damage(&self, refname: &str) -> Result<Option<Damage>, StoreError> {
        let Some(tip) = self.tip(refname)? else { return Ok(None) };
        let mut next = Some(tip);
        let mut newest_break: Option<Break> = None;
        let mut newest: Option<Entry> = None;
        let mut max_seq = 0u64;
        let mut last_whole = Some(tip);
        while let Some(id) = next {
            match self.entry(id) {
                Ok(entry) => {
                    if let Ok(r) = &entry.record {
                        max_seq = max_seq.max(r.seq);
                    }
                    next = entry.parent;
                    newest.get_or_insert(entry);
                }
                Err(e) => {
                    let b = self.break_of(e)?;
                    // Everything from here up is not whole; what lies below starts again.
                    last_whole = b.parent;
                    next = b.parent;
                    newest_break.get_or_insert(b);
                }
            }
        }
        Ok(newest_break.map(|at| Damage { refname: refname.to_string(), tip, at, newest, max_seq, last_whole }))
    }

    /// Cuts `refname` back to `last_whole` (none: to nothing) with `record` on top, moving the
    /// ref from `damaged_tip` by compare-and-swap. The record's objects are written first and
    /// the ref moves in one rename: a process killed before it leaves the ref at the damaged tip
    /// (and unreferenced objects `git gc` removes), after it the repaired chain.
    pub fn cut_back(
        &self,
        refname: &str,
        damaged_tip: ObjectId,
        last_whole: Option<ObjectId>,
        record: &Record,
    ) -> Result<(ObjectId, CasOutcome), StoreError> {
        super::validate_ref(refname)?;
        let commit = self.write_record_commit(record, &[], last_whole)?;
        let outcome = self.cas(
            refname,
            Some(damaged_tip),
            commit,
            &format!("git-mas doctor: cut {refname} back past a missing object"),
        )?;
        Ok((commit, outcome))
    }
}

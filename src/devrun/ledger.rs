//! The runs' answer to a board reader: which runs named by live foci have ended, and when
//! ([`crate::attention::run_end`]), read from each run's meta chain as [`super::load_meta`] folds
//! it.
//!
//! A pending landing counts as open (it may still turn void); a run that cannot be read (not
//! fetched here, a chain that does not verify) has no answer, so its foci hold on. The roster is
//! read once, and only when a live focus names a run; each run is read once per ledger (a
//! command's reads, or `git mas check`'s replay of a range).

use super::{Phase, load_meta};
use crate::attention::run_end::{RunLedger, RunOutcome, RunState};
use crate::identity::Roster;
use crate::store::Store;
use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;

/// A [`RunLedger`] over the runs of `store`, verified against the roster as committed.
pub struct Ledger<'a> {
    store: &'a Store,
    roster: OnceCell<Option<Roster>>,
    read: RefCell<BTreeMap<String, Option<RunState>>>,
}

impl<'a> Ledger<'a> {
    /// The runs of `store`.
    pub fn new(store: &'a Store) -> Self {
        Ledger { store, roster: OnceCell::new(), read: RefCell::new(BTreeMap::new()) }
    }

    fn read(&self, run: &str) -> Option<RunState> {
        let roster = self.roster.get_or_init(|| self.store.roster().ok()).as_ref()?;
        let meta = load_meta(self.store, roster, run).ok()?;
        let (outcome, at_ms) = match &meta.phase {
            Phase::Open | Phase::Landing { .. } => return Some(RunState::Open),
            Phase::Landed { landing, .. } => (RunOutcome::Landed, landing.at_ms),
            Phase::Aborted { abort, .. } => (RunOutcome::Aborted, abort.at_ms),
        };
        Some(RunState::Ended { outcome, at: at_ms / 1000, members: meta.def.roster })
    }
}

impl RunLedger for Ledger<'_> {
    fn state(&self, run: &str) -> Option<RunState> {
        if let Some(known) = self.read.borrow().get(run) {
            return known.clone();
        }
        let state = self.read(run);
        self.read.borrow_mut().insert(run.to_string(), state.clone());
        state
    }

    fn others_slices(&self, run: &str, caller: &str, paths: &[String]) -> Vec<(String, String)> {
        let Some(roster) = self.roster.get_or_init(|| self.store.roster().ok()).as_ref() else { return Vec::new() };
        let Ok(meta) = load_meta(self.store, roster, run) else { return Vec::new() };
        if meta.ensure_open().is_err() {
            return Vec::new();
        }
        // A reviewer holds no slice: every slice's file is another agent's.
        let Some(plan) = meta.def.slices.as_ref().filter(|p| p.slice(caller).is_some() || p.reviews(caller)) else {
            return Vec::new();
        };
        paths
            .iter()
            .filter_map(|path| {
                let owner = plan.owner_of(path).filter(|o| *o != caller)?;
                Some((path.clone(), owner.to_string()))
            })
            .collect()
    }
}

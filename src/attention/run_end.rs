//! Claims that end with their run.
//!
//! A development run's agents claim files in their run's worktrees: `git mas focus publish` (the
//! built-in agents of `coordinate --aggregate` publish their slice that way), or by editing in team
//! mode. Their leases run on after the run: a focus published with the default TTL held its files
//! for 30 minutes after the run landed, halted or was aborted, and a person editing one of them
//! was refused for that long.
//!
//! **Decision: a run's end is read, never written.** A focus record names the run it was
//! published for ([`FocusPayload::run`](super::board::FocusPayload::run): the run of the worktree it
//! was published from, its own `mas.run` that `git mas worktree add` sets; a person's checkout names
//! none). Every board reader folds such a focus as [`Liveness::Released`] once that run's meta chain
//! says it ended — landed on the integration branch, or aborted (by `git mas run abort`, or by
//! `coordinate` when it halts) — and the entry keeps its targets and says which run's end released
//! them ([`BoardEntry::ended_with`](super::board::BoardEntry::ended_with)), so `status` and
//! `focus list` can say so. Nothing is appended to the agents' chains: releases written at the end of
//! a run would need every agent's key (one writer per chain), and whatever a kill interrupted would
//! have to be completed by the next reader. Here there is nothing to complete: the landing's and the
//! abort's own records are the release, so a SIGKILL at any instant of a landing or an abort leaves
//! the claims exactly as live as the run is open.
//!
//! What stays held, failing closed:
//!
//! - a focus that names no run — a person's own claims, or an agent's outside a run's worktree;
//! - a focus whose run is open, or whose landing is pending (recorded but not on the branch yet:
//!   it may still turn void, and then the run is open again);
//! - a focus whose run cannot be read (no such run here yet — a clone that fetched the focus but
//!   not the run —, or a meta chain that does not verify): only a verified record ends a run;
//! - a focus of an agent not on the run's roster: it names the run, but it is not one of the run's
//!   agents' claims.
//!
//! A focus is one record, so it names one run: when an agent publishes again from elsewhere, its
//! newer focus names that place's run (or none) and the earlier run's end no longer touches it.
//!
//! The runs' side lives above this module ([`RunLedger`] is implemented by `devrun`, which reads
//! the meta chain); the decision ([`ended_by`]) is pure, over plain data. Cost: one read of a run's
//! meta chain per distinct run named by a live focus, per board read, and none when no live focus
//! names a run (a team with no run in progress pays nothing). Measured on the edit hook's
//! common path (`git mas gate --host claude-code`, a session re-editing its own claim, a live
//! focus naming an open run beside it; debug build, hyperfine, 100 runs): 907 syscalls against
//! 879 when the focus names no run, and no difference in median time or CPU above the noise of a
//! shared machine (10.50 vs 10.49 ms user+system).

use super::board::{Board, BoardEntry, Liveness};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// Its landing is on the integration branch.
    Landed,
    /// It was aborted (by hand, or by its driver when it halted).
    Aborted,
}

impl RunOutcome {
    /// `landed` or `aborted`, as `--json` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Landed => "landed",
            RunOutcome::Aborted => "aborted",
        }
    }
}

/// The end of the run that released a focus.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunEnd {
    /// The run.
    pub run: String,
    /// How it ended.
    pub outcome: RunOutcome,
}

/// Where a run stands, as a board reader needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunState {
    /// Neither landed nor aborted (a pending landing included).
    Open,
    /// Ended.
    Ended {
        /// How.
        outcome: RunOutcome,
        /// When, Unix seconds (the landing's or the abort's record time): a reader whose clock is
        /// before it (the gate replayed on an older commit) still sees the run open.
        at: u64,
        /// The run's roster: its agents.
        members: Vec<String>,
    },
}

/// What a board reader asks about the runs its foci name.
pub trait RunLedger {
    /// Run `run`'s state; `None` when it cannot be read (its foci then hold on).
    fn state(&self, run: &str) -> Option<RunState>;

    /// In open run `run`'s split of the work, the owner of each of `paths` that is another agent's
    /// slice than `caller`'s, as (path, owner). Empty when the run is not open or cannot be read,
    /// has no split, or does not name `caller` (neither a slice nor a review); a file in no slice
    /// is not listed.
    fn others_slices(&self, run: &str, caller: &str, paths: &[String]) -> Vec<(String, String)> {
        let _ = (run, caller, paths);
        Vec::new()
    }
}

/// A ledger that knows no run: every focus holds by its lease alone (for readers with no runs
/// at hand, and tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRuns;

impl RunLedger for NoRuns {
    fn state(&self, _run: &str) -> Option<RunState> {
        None
    }
}

/// Whether `entry`'s focus ended with its run (see the module docs): the run's end when the focus
/// is live, names a run whose `state` is ended by `now`, and its agent is one of that run's.
pub fn ended_by(entry: &BoardEntry, state: Option<&RunState>, now: u64) -> Option<RunEnd> {
    if entry.liveness != Liveness::Live {
        return None;
    }
    let run = entry.run.as_ref()?;
    match state? {
        RunState::Open => None,
        RunState::Ended { outcome, at, members } => {
            (*at <= now && members.contains(&entry.focus.agent)).then(|| RunEnd { run: run.clone(), outcome: *outcome })
        }
    }
}

/// Folds every live focus whose run ended by `now` as released by it, asking `ledger` once per run
/// named.
pub fn end_runs(board: &mut Board, ledger: &dyn RunLedger, now: u64) {
    let mut states: BTreeMap<String, Option<RunState>> = BTreeMap::new();
    for e in board.entries.iter_mut() {
        let Some(run) = e.run.as_ref().filter(|_| e.liveness == Liveness::Live) else { continue };
        let state = states.entry(run.clone()).or_insert_with(|| ledger.state(run));
        if let Some(end) = ended_by(e, state.as_ref(), now) {
            e.liveness = Liveness::Released;
            e.ended_with = Some(end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::rule::Focus;

    fn entry(agent: &str, run: Option<&str>, liveness: Liveness) -> BoardEntry {
        let focus = Focus { agent: agent.into(), frame: "F".into(), seq: 1, targets: vec!["src/tax.rs".into()] };
        BoardEntry {
            focus,
            liveness,
            expires_at: 0,
            published_at: 0,
            commit: String::new(),
            run: run.map(str::to_string),
            ended_with: None,
        }
    }

    /// A run that ended at time 100.
    fn ended(outcome: RunOutcome, members: &[&str]) -> Option<RunState> {
        Some(RunState::Ended { outcome, at: 100, members: members.iter().map(|m| m.to_string()).collect() })
    }

    #[test]
    fn a_runs_end_releases_its_agents_live_claims_and_nothing_else() {
        use Liveness::{Expired, Live, Released};
        use RunOutcome::{Aborted, Landed};
        let end = |outcome| Some(RunEnd { run: "r1".into(), outcome });
        // (case, entry, the run's state, the reader's clock, the end that releases it)
        type Case = (&'static str, BoardEntry, Option<RunState>, u64, Option<RunEnd>);
        let cases: Vec<Case> = vec![
            ("landed: released", entry("bob", Some("r1"), Live), ended(Landed, &["alice", "bob"]), 150, end(Landed)),
            ("aborted: released", entry("bob", Some("r1"), Live), ended(Aborted, &["bob"]), 150, end(Aborted)),
            ("at the end's instant", entry("bob", Some("r1"), Live), ended(Landed, &["bob"]), 100, end(Landed)),
            ("before the end: held", entry("bob", Some("r1"), Live), ended(Landed, &["bob"]), 99, None),
            ("open: held", entry("bob", Some("r1"), Live), Some(RunState::Open), 150, None),
            ("unreadable run: held", entry("bob", Some("r1"), Live), None, 150, None),
            ("a person's own focus: held", entry("dave", None, Live), ended(Landed, &["dave"]), 150, None),
            ("not the run's agent: held", entry("dave", Some("r1"), Live), ended(Landed, &["bob"]), 150, None),
            ("expired stays expired", entry("bob", Some("r1"), Expired), ended(Landed, &["bob"]), 150, None),
            ("released stays released", entry("bob", Some("r1"), Released), ended(Aborted, &["bob"]), 150, None),
        ];
        for (name, e, state, now, want) in cases {
            assert_eq!(ended_by(&e, state.as_ref(), now), want, "{name}");
        }
    }

    /// A ledger over a table, counting its questions.
    struct Table(BTreeMap<&'static str, RunState>, std::cell::Cell<usize>);

    impl RunLedger for Table {
        fn state(&self, run: &str) -> Option<RunState> {
            self.1.set(self.1.get() + 1);
            self.0.get(run).cloned()
        }
    }

    #[test]
    fn the_fold_releases_ended_runs_once_per_run_and_keeps_what_they_held() {
        let mut board = Board {
            entries: vec![
                entry("alice", Some("r1"), Liveness::Live),
                entry("bob", Some("r1"), Liveness::Live),
                entry("carol", Some("r2"), Liveness::Live),
                entry("dave", None, Liveness::Live),
            ],
            ..Board::default()
        };
        let ledger = Table(
            [("r1", ended(RunOutcome::Landed, &["alice", "bob"]).unwrap()), ("r2", RunState::Open)].into(),
            std::cell::Cell::new(0),
        );
        end_runs(&mut board, &ledger, 150);
        assert_eq!(ledger.1.get(), 2, "one question per run");
        let got: Vec<(&str, Liveness, Option<&str>, usize)> = board
            .entries
            .iter()
            .map(|e| {
                (
                    e.focus.agent.as_str(),
                    e.liveness,
                    e.ended_with.as_ref().map(|r| r.run.as_str()),
                    e.focus.targets.len(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("alice", Liveness::Released, Some("r1"), 1),
                ("bob", Liveness::Released, Some("r1"), 1),
                ("carol", Liveness::Live, None, 1),
                ("dave", Liveness::Live, None, 1),
            ]
        );
        assert_eq!(board.live().count(), 2);
        let mut quiet = Board { entries: vec![entry("dave", None, Liveness::Live)], ..Board::default() };
        let ledger = Table(BTreeMap::new(), std::cell::Cell::new(0));
        end_runs(&mut quiet, &ledger, 150);
        assert_eq!(ledger.1.get(), 0, "no focus names a run: no run is read");
    }
}

//! What each proposal changed, and the gate's refusals of slice files: the part of the report
//! that says what the team did, not only whether it converged (pure).
//!
//! A tally knows a proposal by its tree; a person reading the report wants the files. So the
//! reader of a run (`devrun::view`) diffs each current proposal's tree against the run's
//! base and hands the paths here, with the run's slices. In an aggregate run each changed path is
//! judged against the proposer's own slice: a path outside it is listed with whose slice holds it
//! (none: a file no slice names). A proposal that changed files and **none of them in its own
//! slice** is `slice_untouched`: its agent did someone else's work (or work nobody was given), so
//! the report does not credit it with its slice — the slice's status is
//! [`super::SliceStatus::Untouched`] rather than landed or at quorum, and the quality gate counts
//! the slice as not in what landed. A proposal that changed nothing (an abstention) is not
//! untouched: it claims no work.
//!
//! The gate's refusals come from the machine's denial log (`attention::denials`): the
//! denials of the run's agents, while the run was open, of a file in another agent's slice, the
//! same refusals the driver hands to both agents after a round. The log is local and bounded, so
//! a report read on another machine, or long after, may list fewer; it never lists one that did
//! not happen.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A changed path outside the proposer's slice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutsidePath {
    /// The path.
    pub path: String,
    /// The agent whose slice holds it (null: no slice names it).
    pub slice_of: Option<String>,
}

/// What one proposal changed against the run's base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposalChanges {
    /// The proposer.
    pub agent: String,
    /// The paths its tree changes against the run's base (added, modified or deleted), sorted.
    pub paths: Vec<String>,
    /// In an aggregate run, the changed paths outside the proposer's slice (empty otherwise).
    #[serde(default)]
    pub outside_slice: Vec<OutsidePath>,
    /// In an aggregate run: it changed files, and none in its own slice.
    #[serde(default)]
    pub slice_untouched: bool,
}

/// The gate's refusals of one agent's edits of one file in another agent's slice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SliceRefusal {
    /// The agent refused.
    pub agent: String,
    /// The file.
    pub file: String,
    /// Whose slice holds it.
    pub slice_of: String,
    /// How many times it was refused.
    pub times: u64,
    /// The first refusal, unix seconds.
    pub first_at: u64,
    /// The last refusal, unix seconds.
    pub last_at: u64,
}

/// One denial of the gate, as the log records it: (unix seconds, agent refused, holder, file).
pub type Denied<'a> = (u64, &'a str, &'a str, &'a str);

/// Each proposal's changes, in the order given; `slices` are the run's (agent, targets), empty
/// for best-of-N.
pub fn proposal_changes(changed: &[(String, Vec<String>)], slices: &[(String, Vec<String>)]) -> Vec<ProposalChanges> {
    let owner = |path: &str| slices.iter().find(|(_, t)| t.iter().any(|t| t == path)).map(|(a, _)| a.clone());
    changed
        .iter()
        .map(|(agent, paths)| {
            let mut paths = paths.clone();
            paths.sort();
            paths.dedup();
            let own = slices.iter().find(|(a, _)| a == agent).map(|(_, t)| t);
            let outside_slice: Vec<OutsidePath> = match own {
                Some(own) => paths
                    .iter()
                    .filter(|p| !own.contains(p))
                    .map(|p| OutsidePath { path: p.clone(), slice_of: owner(p) })
                    .collect(),
                None => Vec::new(),
            };
            let slice_untouched = own.is_some() && !paths.is_empty() && outside_slice.len() == paths.len();
            ProposalChanges { agent: agent.clone(), paths, outside_slice, slice_untouched }
        })
        .collect()
}

/// The gate's refusals of slice files during a run: the denials of `agents` from `from` to
/// `until` (unix seconds, inclusive; `None`: still open) of a file in another agent's slice,
/// whose holder is that slice's agent, grouped by (agent, file), sorted by agent then file.
pub fn slice_refusals(
    denied: &[Denied<'_>],
    agents: &[String],
    slices: &[(String, Vec<String>)],
    from: u64,
    until: Option<u64>,
) -> Vec<SliceRefusal> {
    let owner = |path: &str| slices.iter().find(|(_, t)| t.iter().any(|t| t == path)).map(|(a, _)| a.as_str());
    let mut grouped: BTreeMap<(String, String), SliceRefusal> = BTreeMap::new();
    for &(at, agent, holder, file) in denied {
        let in_run = at >= from && until.is_none_or(|u| at <= u);
        if !in_run || !agents.iter().any(|a| a == agent) || owner(file) != Some(holder) || holder == agent {
            continue;
        }
        let r = grouped.entry((agent.to_owned(), file.to_owned())).or_insert_with(|| SliceRefusal {
            agent: agent.to_owned(),
            file: file.to_owned(),
            slice_of: holder.to_owned(),
            times: 0,
            first_at: at,
            last_at: at,
        });
        r.times += 1;
        r.first_at = r.first_at.min(at);
        r.last_at = r.last_at.max(at);
    }
    grouped.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slices() -> Vec<(String, Vec<String>)> {
        vec![("alice".into(), vec!["a.rs".into(), "a2.rs".into()]), ("bob".into(), vec!["b.rs".into()])]
    }

    fn changed(rows: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
        rows.iter().map(|(a, p)| (a.to_string(), p.iter().map(|p| p.to_string()).collect())).collect()
    }

    #[test]
    fn a_proposal_that_changed_only_another_slice_is_marked_untouched() {
        let got = proposal_changes(
            &changed(&[
                ("alice", &["a.rs", "b.rs", "free.rs"]), // its slice and more
                ("bob", &["a2.rs", "a.rs"]),             // only alice's slice
                ("carol", &["x.rs"]),                    // no slice of its own (not in the plan)
            ]),
            &slices(),
        );
        let row = |i: usize| {
            let c = &got[i];
            let outside: Vec<(&str, Option<&str>)> =
                c.outside_slice.iter().map(|o| (o.path.as_str(), o.slice_of.as_deref())).collect();
            (c.agent.as_str(), c.paths.clone(), outside, c.slice_untouched)
        };
        assert_eq!(
            row(0),
            (
                "alice",
                vec!["a.rs".into(), "b.rs".into(), "free.rs".into()],
                vec![("b.rs", Some("bob")), ("free.rs", None)],
                false
            )
        );
        assert_eq!(
            row(1),
            ("bob", vec!["a.rs".into(), "a2.rs".into()], vec![("a.rs", Some("alice")), ("a2.rs", Some("alice"))], true),
            "paths are sorted; every one is alice's"
        );
        assert_eq!(row(2), ("carol", vec!["x.rs".into()], vec![], false), "no slice: nothing to be outside of");
    }

    #[test]
    fn an_empty_proposal_and_a_best_of_n_run_claim_nothing_untouched() {
        let abstained = proposal_changes(&changed(&[("bob", &[])]), &slices());
        assert!(!abstained[0].slice_untouched && abstained[0].outside_slice.is_empty());
        let best_of_n = proposal_changes(&changed(&[("bob", &["a.rs"])]), &[]);
        assert!(!best_of_n[0].slice_untouched && best_of_n[0].outside_slice.is_empty());
        assert_eq!(best_of_n[0].paths, ["a.rs"]);
    }

    #[test]
    fn slice_refusals_keep_the_runs_agents_window_and_slice_owners() {
        let agents = vec!["alice".to_string(), "bob".to_string()];
        let denied: Vec<Denied<'_>> = vec![
            (100, "bob", "alice", "a.rs"),
            (150, "bob", "alice", "a.rs"),
            (120, "alice", "bob", "b.rs"),
            (99, "bob", "alice", "a.rs"),     // before the run
            (201, "bob", "alice", "a.rs"),    // after it ended
            (130, "dave", "alice", "a.rs"),   // not the run's agent
            (130, "bob", "carol", "a.rs"),    // held by someone else than the slice's agent
            (130, "bob", "alice", "free.rs"), // in no slice
        ];
        let got = slice_refusals(&denied, &agents, &slices(), 100, Some(200));
        let rows: Vec<(&str, &str, &str, u64, u64, u64)> = got
            .iter()
            .map(|r| (r.agent.as_str(), r.file.as_str(), r.slice_of.as_str(), r.times, r.first_at, r.last_at))
            .collect();
        assert_eq!(rows, [("alice", "b.rs", "bob", 1, 120, 120), ("bob", "a.rs", "alice", 2, 100, 150)]);
        let open = slice_refusals(&denied, &agents, &slices(), 100, None);
        assert_eq!(open.iter().find(|r| r.agent == "bob").map(|r| r.times), Some(3), "an open run reads to now");
    }
}

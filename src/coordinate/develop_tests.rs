//! The tests of `develop.rs`.

use super::*;

fn c(entries: &[(&str, &str, Option<&str>, usize)]) -> Counts {
    entries.iter().map(|(a, k, p, n)| ((a.to_string(), k.to_string(), p.map(str::to_owned)), *n)).collect()
}

#[test]
fn every_halt_code_is_the_name_of_an_ending() {
    use crate::convergence::Ending;
    let halts = [
        DevHalt::Landed,
        DevHalt::LandBlocked,
        DevHalt::MaxRoundsReached,
        DevHalt::UnreadableReply,
        DevHalt::BudgetExhausted,
        DevHalt::NothingToLand,
    ];
    for halt in halts {
        let ending = Ending::parse(halt.code()).unwrap_or_else(|| panic!("{} names no ending", halt.code()));
        assert_eq!(serde_json::to_value(halt).unwrap(), ending.name());
    }
}

#[test]
fn a_proposal_counts_only_when_new() {
    let before = c(&[("alice", PROPOSAL_KIND, None, 1)]);
    assert!(!recorded(Task::Propose, "alice", &[], &before, &before));
    let after = c(&[("alice", PROPOSAL_KIND, None, 2)]);
    assert!(recorded(Task::Propose, "alice", &[], &before, &after));
    let other = c(&[("alice", PROPOSAL_KIND, None, 1), ("bob", PROPOSAL_KIND, None, 1)]);
    assert!(!recorded(Task::Propose, "alice", &[], &before, &other));
}

#[test]
fn an_endorse_task_needs_a_verdict_on_every_target() {
    let targets = vec!["bob".to_owned(), "carol".to_owned()];
    let before = Counts::new();
    let one = c(&[("alice", ENDORSEMENT_KIND, Some("bob"), 1)]);
    assert!(!recorded(Task::Endorse, "alice", &targets, &before, &one));
    let both = c(&[("alice", ENDORSEMENT_KIND, Some("bob"), 1), ("alice", ENDORSEMENT_KIND, Some("carol"), 1)]);
    assert!(recorded(Task::Endorse, "alice", &targets, &before, &both));
    // Someone else's endorsements are not alice's.
    let others = c(&[("bob", ENDORSEMENT_KIND, Some("carol"), 1), ("dave", ENDORSEMENT_KIND, Some("bob"), 1)]);
    assert!(!recorded(Task::Endorse, "alice", &targets, &before, &others));
}

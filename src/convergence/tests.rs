//! Table tests of the termination function, conflicts, resolution and consensus.

use super::*;
use crate::engines::{DevelopmentConfig, DevelopmentEngine};
use crate::runtime::{CoordinationEngine, EventMetadata, PatternKind, SemanticEvent, SemanticPayload};

/// A script of events, one per line: `propose AGENT TREE`, `pass ENDORSER TREE`, `fail ENDORSER
/// TREE`, `accept ENDORSER TREE`, `reject ENDORSER TREE`.
fn tally(quorum: u32, max_rounds: Option<u64>, script: &[&str]) -> Tally {
    let mut engine = DevelopmentEngine::new(DevelopmentConfig {
        parts: false,
        roster: vec!["alice".into(), "bob".into(), "carol".into()],
        quorum,
        max_rounds,
        allow_self_endorse: false,
    })
    .unwrap();
    for (i, line) in script.iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let [verb, who, tree] = words[..] else { panic!("bad line {line}") };
        let payload = match verb {
            "propose" => SemanticPayload::ExternalBytes { digest: tree.into(), len: 1 },
            "pass" | "fail" => SemanticPayload::ToolResult {
                command: "sh check.sh".into(),
                exit_status: Some(if verb == "pass" { 0 } else { 1 }),
                duration_ms: 1,
                output_digest: "sha256:0".into(),
                subject: tree.into(),
                differential: None,
            },
            "accept" | "reject" => {
                SemanticPayload::Review { subject: tree.into(), accept: verb == "accept", reason: "because".into() }
            }
            other => panic!("unknown verb {other}"),
        };
        let event = SemanticEvent {
            pattern: PatternKind::Development,
            metadata: EventMetadata {
                event_id: format!("e{i}"),
                correlation_id: "r".into(),
                epoch: 0,
                source: who.into(),
            },
            payload,
        };
        let outcome = engine.apply(&event);
        assert!(outcome.is_accepted(), "{line}: {outcome:?}");
    }
    engine.tally()
}

fn state(tally: Tally, outcome: Outcome) -> RunState {
    RunState {
        run: "r".into(),
        tally,
        outcome,
        blocked: Vec::new(),
        dependency_issues: Vec::new(),
        budget_ms: None,
        used_ms: 1000,
        quality_threshold: 1.0,
        slices: Vec::new(),
        abstained: Vec::new(),
        rounds_held: None,
        changed: Vec::new(),
        slice_refusals: Vec::new(),
        reviewers: Vec::new(),
    }
}

fn landed(winners: &[&str]) -> Outcome {
    Outcome::Landed {
        winners: winners.iter().map(|s| s.to_string()).collect(),
        commit: "c0ffee".into(),
        merged_check_passed: None,
        still_failing: None,
    }
}

fn aborted(risk: bool) -> Outcome {
    Outcome::Aborted { reason: "stop".into(), risk, halt: None }
}

/// alice proposes A, endorsed by passing checks from bob and carol.
const CHECKED: &[&str] = &[
    "propose alice aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "pass bob aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "pass carol aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
];
/// The same, endorsed by review only (no quality signal).
const REVIEWED: &[&str] = &[
    "propose alice aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "accept bob aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "accept carol aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
];

fn blocked(current: bool) -> BlockedAttempt {
    BlockedAttempt {
        conflicts: vec![RecordedConflict {
            kind: ConflictType::ArtifactMismatch,
            proposals: vec!["alice".into()],
            parties: vec!["alice".into(), "main".into()],
            paths: vec!["src/money.rs".into()],
            detail: "alice's proposal and main both changed src/money.rs".into(),
        }],
        current,
    }
}

#[test]
fn the_termination_function_follows_the_seeds_precedence() {
    struct Case {
        name: &'static str,
        script: &'static [&'static str],
        max_rounds: Option<u64>,
        outcome: Outcome,
        budget_ms: Option<u64>,
        blocked: Vec<BlockedAttempt>,
        want: (Status, Option<TerminationReason>),
    }
    use Status::*;
    use TerminationReason::*;
    let cases = vec![
        Case {
            name: "nothing yet",
            script: &[],
            max_rounds: None,
            outcome: Outcome::Open,
            budget_ms: None,
            blocked: vec![],
            want: (Running, None),
        },
        Case {
            name: "open with quorum",
            script: CHECKED,
            max_rounds: None,
            outcome: Outcome::Open,
            budget_ms: None,
            blocked: vec![],
            want: (Running, None),
        },
        Case {
            name: "open, budget spent, still running",
            script: CHECKED,
            max_rounds: None,
            outcome: Outcome::Open,
            budget_ms: Some(10),
            blocked: vec![],
            want: (Running, None),
        },
        Case {
            name: "landed, every check passed",
            script: CHECKED,
            max_rounds: None,
            outcome: landed(&["alice"]),
            budget_ms: Some(5000),
            blocked: vec![],
            want: (Converged, Some(QualityReached)),
        },
        Case {
            name: "landed, no check ran",
            script: REVIEWED,
            max_rounds: None,
            outcome: landed(&["alice"]),
            budget_ms: None,
            blocked: vec![],
            want: (Converged, Some(TasksCompleted)),
        },
        Case {
            name: "landed, budget spent beats quality",
            script: CHECKED,
            max_rounds: None,
            outcome: landed(&["alice"]),
            budget_ms: Some(1000),
            blocked: vec![],
            want: (Converged, Some(BudgetExhausted)),
        },
        Case {
            name: "landed, rounds at the limit beat quality",
            script: CHECKED,
            max_rounds: Some(1),
            outcome: landed(&["alice"]),
            budget_ms: Some(5000),
            blocked: vec![],
            want: (Converged, Some(MaxRoundsReached)),
        },
        Case {
            name: "landed, budget beats rounds",
            script: CHECKED,
            max_rounds: Some(1),
            outcome: landed(&["alice"]),
            budget_ms: Some(999),
            blocked: vec![],
            want: (Converged, Some(BudgetExhausted)),
        },
        Case {
            name: "landed after a blocked attempt",
            script: CHECKED,
            max_rounds: None,
            outcome: landed(&["alice"]),
            budget_ms: None,
            blocked: vec![blocked(true)],
            want: (Converged, Some(QualityReached)),
        },
        Case {
            name: "aborted",
            script: CHECKED,
            max_rounds: None,
            outcome: aborted(false),
            budget_ms: None,
            blocked: vec![],
            want: (Failed, Some(TasksCompleted)),
        },
        Case {
            name: "aborted, budget spent",
            script: CHECKED,
            max_rounds: Some(1),
            outcome: aborted(false),
            budget_ms: Some(1),
            blocked: vec![],
            want: (Failed, Some(BudgetExhausted)),
        },
        Case {
            name: "aborted, rounds at the limit",
            script: CHECKED,
            max_rounds: Some(1),
            outcome: aborted(false),
            budget_ms: None,
            blocked: vec![],
            want: (Failed, Some(MaxRoundsReached)),
        },
        Case {
            name: "aborted as a risk",
            script: CHECKED,
            max_rounds: Some(1),
            outcome: aborted(true),
            budget_ms: Some(1),
            blocked: vec![],
            want: (Blocked, Some(RiskBlocked)),
        },
        Case {
            name: "aborted over a failing check",
            script: &[
                "propose alice aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "fail bob aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            ],
            max_rounds: None,
            outcome: aborted(false),
            budget_ms: None,
            blocked: vec![],
            want: (Blocked, Some(RiskBlocked)),
        },
        Case {
            name: "aborted over a rejection only",
            script: &[
                "propose alice aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "reject bob aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            ],
            max_rounds: None,
            outcome: aborted(false),
            budget_ms: None,
            blocked: vec![],
            want: (Failed, Some(TasksCompleted)),
        },
        Case {
            name: "open, landing blocked now",
            script: CHECKED,
            max_rounds: None,
            outcome: Outcome::Open,
            budget_ms: Some(1),
            blocked: vec![blocked(true)],
            want: (Blocked, Some(RiskBlocked)),
        },
        Case {
            name: "open, blocked attempt superseded",
            script: CHECKED,
            max_rounds: None,
            outcome: Outcome::Open,
            budget_ms: None,
            blocked: vec![blocked(false)],
            want: (Running, None),
        },
    ];
    for case in cases {
        let mut s = state(tally(2, case.max_rounds, case.script), case.outcome);
        s.budget_ms = case.budget_ms;
        s.blocked = case.blocked;
        let report = evaluate(&s);
        assert_eq!((report.status, report.termination_reason), case.want, "{}", case.name);
    }
}

#[test]
fn every_terminal_report_has_exactly_one_reason_and_no_signal_is_invented() {
    let scripts: [&[&str]; 4] = [
        &[],
        CHECKED,
        REVIEWED,
        &[
            "propose alice aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "fail bob aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "pass carol aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ],
    ];
    let outcomes = [Outcome::Open, landed(&["alice"]), aborted(false), aborted(true)];
    for script in scripts {
        for outcome in &outcomes {
            for budget in [None, Some(1), Some(1_000_000)] {
                for max_rounds in [None, Some(1), Some(5)] {
                    for blocks in [vec![], vec![blocked(true)], vec![blocked(false)]] {
                        let mut s = state(tally(2, max_rounds, script), outcome.clone());
                        s.budget_ms = budget;
                        s.blocked = blocks;
                        let r = evaluate(&s);
                        assert_eq!(r.status == Status::Running, r.termination_reason.is_none(), "{r:#?}");
                        if r.quality_state.total == 0 {
                            assert_eq!(r.quality_state.pass_rate, None);
                            assert_eq!(r.quality_state.reached, None);
                            assert_ne!(r.termination_reason, Some(TerminationReason::QualityReached));
                        }
                        if budget.is_none() {
                            assert_eq!(r.budget_state.exhausted, None);
                            assert_ne!(r.termination_reason, Some(TerminationReason::BudgetExhausted));
                        }
                        if max_rounds.is_none() {
                            assert_eq!(r.rounds_state.reached, None);
                        }
                        if r.proposals == 0 {
                            assert_eq!(r.consensus_score, None, "no proposals: no score, not 0");
                        }
                        if r.status == Status::Blocked {
                            assert!(!r.unresolved_risks.is_empty());
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn conflicts_are_detected_and_resolved_conservatively() {
    let script = &[
        "propose alice aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "propose bob bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        "propose carol cccccccccccccccccccccccccccccccccccccccc",
        // alice: endorsed to quorum, and rejected once.
        "pass bob aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "pass carol aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        // bob: a failing check.
        "fail alice bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        // carol: rejected, then re-proposed (the rejection is voided).
        "reject alice cccccccccccccccccccccccccccccccccccccccc",
        "propose carol dddddddddddddddddddddddddddddddddddddddd",
    ];
    let open = evaluate(&state(tally(2, None, script), Outcome::Open));
    let kinds: Vec<(ConflictType, bool)> = open.conflicts.iter().map(|c| (c.kind, c.resolved)).collect();
    assert_eq!(kinds, [(ConflictType::TestFailure, false), (ConflictType::ReviewDisagreement, true)]);
    assert!(open.conflicts[0].resolution.contains("re-proposal by bob or a passing re-check by alice"));
    assert!(open.conflicts[1].resolution.contains("voided: carol re-proposed"));
    assert_eq!(open.winners, ["alice"]);
    // Consensus: bob and carol are implicated, alice is not: 1 of 3.
    assert_eq!((open.proposals, open.implicated), (3, 2));
    assert!((open.consensus_score.unwrap() - 100.0 / 3.0).abs() < 1e-9);

    // After alice lands, bob's failure is resolved by selection.
    let done = evaluate(&state(tally(2, None, script), landed(&["alice"])));
    assert!(done.conflicts.iter().all(|c| c.resolved), "{:#?}", done.conflicts);
    assert!(done.conflicts[0].resolution.starts_with("not landed: the team landed alice"));
    assert_eq!((done.status, done.termination_reason), (Status::Converged, Some(TerminationReason::QualityReached)));
    assert_eq!((done.quality_state.passed, done.quality_state.total), (2, 2));

    // Blocked landings: artifact mismatch in force, then superseded.
    let mut s = state(tally(2, None, CHECKED), Outcome::Open);
    s.blocked = vec![blocked(true)];
    let r = evaluate(&s);
    assert_eq!(r.conflicts[0].kind, ConflictType::ArtifactMismatch);
    assert_eq!(r.conflicts[0].paths, ["src/money.rs"]);
    assert!(!r.conflicts[0].resolved);
    assert_eq!(r.unresolved_risks, ["artifact_mismatch: alice's proposal and main both changed src/money.rs"]);
    s.blocked = vec![blocked(false)];
    assert!(evaluate(&s).conflicts[0].resolution.starts_with("superseded"));

    // A pool artifact that does not match its record.
    let mut s = state(tally(2, None, CHECKED), aborted(false));
    s.dependency_issues = vec![DependencyIssue { agent: "alice".into(), detail: "moved by hand".into() }];
    let r = evaluate(&s);
    assert_eq!(r.conflicts[0].kind, ConflictType::DependencyInconsistency);
    assert_eq!((r.status, r.termination_reason), (Status::Blocked, Some(TerminationReason::RiskBlocked)));
}

#[test]
fn a_rejection_of_the_winner_is_resolved_as_outvoted() {
    let script = [
        "propose alice aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "pass bob aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "accept carol aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ];
    // carol's later rejection replaces her acceptance; bob's check still makes the quorum of 1.
    let mut script = script.to_vec();
    script.push("reject carol aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    let t = tally(1, None, &script);
    let r = evaluate(&state(t, landed(&["alice"])));
    assert_eq!(r.conflicts.len(), 1);
    assert_eq!(r.conflicts[0].kind, ConflictType::ReviewDisagreement);
    assert!(r.conflicts[0].resolved && r.conflicts[0].resolution.starts_with("outvoted"), "{:#?}", r.conflicts);
}

#[test]
fn a_merged_tree_check_counts_toward_quality() {
    let mut s = state(tally(2, None, REVIEWED), landed(&["alice"]));
    if let Outcome::Landed { merged_check_passed, .. } = &mut s.outcome {
        *merged_check_passed = Some(true);
    }
    let r = evaluate(&s);
    assert_eq!((r.quality_state.passed, r.quality_state.total), (1, 1));
    assert_eq!(r.termination_reason, Some(TerminationReason::QualityReached));
}

#[test]
fn events_stream_the_six_types_in_order() {
    let script = &[
        "propose alice aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "propose bob bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        "pass bob aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "pass carol aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "fail alice bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
    ];
    let done = evaluate(&state(tally(2, None, script), landed(&["alice"])));
    let types: Vec<&str> = events(&done).into_iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        types,
        ["convergence.started", "conflict.detected", "conflict.resolved", "consensus.updated", "convergence.reached"]
    );
    let failed = evaluate(&state(tally(2, None, script), aborted(true)));
    assert_eq!(events(&failed).last().map(|(t, _)| t.as_str()), Some("convergence.failed"));
    let running = evaluate(&state(tally(2, None, script), Outcome::Open));
    assert_eq!(events(&running).last().map(|(t, _)| t.as_str()), Some("consensus.updated"));
}

#[test]
fn terminate_applies_the_precedence_to_decided_signals() {
    use Status::*;
    use TerminationReason::*;
    let none =
        Signals { blocked_now: false, risks: false, budget_out: false, rounds_out: false, quality_reached: false };
    let open = Outcome::Open;
    let landed = landed(&["alice"]);
    let aborted = aborted(false);
    // (outcome, signals, expected status, expected reason)
    let table: Vec<(&Outcome, Signals, Status, Option<TerminationReason>)> = vec![
        (&open, none, Running, None),
        (&open, Signals { risks: true, ..none }, Running, None),
        (&open, Signals { blocked_now: true, risks: true, ..none }, Blocked, Some(RiskBlocked)),
        (&open, Signals { blocked_now: true, ..none }, Running, None),
        (&aborted, Signals { risks: true, budget_out: true, ..none }, Blocked, Some(RiskBlocked)),
        (&aborted, Signals { budget_out: true, rounds_out: true, ..none }, Failed, Some(BudgetExhausted)),
        (&aborted, Signals { rounds_out: true, quality_reached: true, ..none }, Failed, Some(MaxRoundsReached)),
        (&aborted, Signals { quality_reached: true, ..none }, Failed, Some(TasksCompleted)),
        (&landed, Signals { risks: true, ..none }, Blocked, Some(RiskBlocked)),
        (
            &landed,
            Signals { budget_out: true, rounds_out: true, quality_reached: true, ..none },
            Converged,
            Some(BudgetExhausted),
        ),
        (&landed, Signals { rounds_out: true, quality_reached: true, ..none }, Converged, Some(MaxRoundsReached)),
        (&landed, Signals { quality_reached: true, ..none }, Converged, Some(QualityReached)),
        (&landed, none, Converged, Some(TasksCompleted)),
    ];
    for (i, (outcome, signals, status, reason)) in table.into_iter().enumerate() {
        assert_eq!(terminate(outcome, signals), (status, reason), "row {i}: {outcome:?} {signals:?}");
    }
}

#[test]
fn a_landed_slice_that_changed_only_another_slice_is_not_credited_with_it() {
    let script = &[
        "propose alice aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "propose bob bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        "pass carol aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "pass carol bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
    ];
    let mut s = state(tally(1, None, script), landed(&["alice", "bob"]));
    s.slices = vec![("alice".into(), vec!["a.rs".into()]), ("bob".into(), vec!["b.rs".into()])];
    s.changed = vec![("alice".into(), vec!["a.rs".into()]), ("bob".into(), vec!["a.rs".into()])];
    let r = evaluate(&s);
    let status: Vec<(&str, SliceStatus)> = r.slices.iter().map(|s| (s.agent.as_str(), s.status)).collect();
    assert_eq!(status, [("alice", SliceStatus::Landed), ("bob", SliceStatus::Untouched)]);
    assert!(r.changes[1].slice_untouched && !r.changes[0].slice_untouched, "{:#?}", r.changes);
    assert_eq!(r.changes[1].outside_slice[0].slice_of.as_deref(), Some("alice"));
    // Every check passed, but bob's slice is not in what landed: the goal is not reached.
    assert_eq!(r.quality_state.reached, Some(false), "{:#?}", r.quality_state);
    assert!(r.quality_state.basis.ends_with("slices not in it: bob"), "{}", r.quality_state.basis);
    assert_eq!(r.termination_reason, Some(TerminationReason::TasksCompleted));
    // With bob's own file changed, the same run reaches its goal.
    s.changed[1].1.push("b.rs".into());
    let r = evaluate(&s);
    assert_eq!(r.slices[1].status, SliceStatus::Landed);
    assert_eq!(r.termination_reason, Some(TerminationReason::QualityReached));
}

#[test]
fn an_aggregate_landing_is_measured_by_its_merged_whole_not_its_parts_checks() {
    // Each part alone fails the whole suite (the other part's bug is still in it); the merged
    // whole is what landed and what the goal is about.
    let script = &[
        "propose alice aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "propose bob bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        "fail carol aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "fail carol bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
    ];
    let mut s = state(tally(1, None, script), landed(&["alice", "bob"]));
    s.slices = vec![("alice".into(), vec!["a.rs".into()]), ("bob".into(), vec!["b.rs".into()])];
    s.changed = vec![("alice".into(), vec!["a.rs".into()]), ("bob".into(), vec!["b.rs".into()])];
    for (merged, reached) in [(true, true), (false, false)] {
        if let Outcome::Landed { merged_check_passed, .. } = &mut s.outcome {
            *merged_check_passed = Some(merged);
        }
        let r = evaluate(&s);
        assert_eq!((r.quality_state.passed, r.quality_state.total), (u64::from(merged), 1), "{:#?}", r.quality_state);
        assert_eq!(r.quality_state.reached, Some(reached), "{:#?}", r.quality_state);
        assert!(r.quality_state.basis.starts_with("the check of the merged whole"), "{}", r.quality_state.basis);
        let want = if reached { TerminationReason::QualityReached } else { TerminationReason::TasksCompleted };
        assert_eq!(r.termination_reason, Some(want));
    }
}

#[test]
fn a_report_stored_before_changes_were_kept_still_reads() {
    let r = evaluate(&state(tally(2, None, REVIEWED), landed(&["alice"])));
    let mut json = serde_json::to_value(&r).unwrap();
    let obj = json.as_object_mut().unwrap();
    assert!(obj.remove("changes").is_some() && obj.remove("slice_refusals").is_some());
    let back: ConvergenceReport = serde_json::from_value(json).unwrap();
    assert!(back.changes.is_empty() && back.slice_refusals.is_empty());
}

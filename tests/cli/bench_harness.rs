//! `git mas bench card-alignment|workspace`: small configurations of the evaluation harnesses,
//! checked for determinism and for the bounds any correct implementation must meet.

use crate::common::*;
use git_mas::evaluation::card::{CardReport, ConditionResult};
use git_mas::evaluation::workspace::WorkspaceReport;

/// `git mas bench ARGS --json`, read into the report type the command prints.
fn bench_json<T: serde::de::DeserializeOwned>(env: &TestEnv, args: &[&str]) -> T {
    let mut full = vec!["bench"];
    full.extend_from_slice(args);
    full.push("--json");
    let out = env.mas_ok(env.root(), &full);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn card(env: &TestEnv, seed: &str) -> CardReport {
    bench_json(env, &["card-alignment", "--seed", seed, "--pairs", "40", "--episodes", "10", "--stale-rate", "0,0.3"])
}

fn row<'a>(report: &'a CardReport, condition: &str) -> &'a ConditionResult {
    report.conditions.iter().find(|c| c.condition == condition).unwrap()
}

#[test]
fn card_alignment_is_deterministic_per_seed() {
    let env = TestEnv::new();
    let args = ["bench", "card-alignment", "--pairs", "10", "--episodes", "5", "--seed", "3"];
    let a = env.mas_ok(env.root(), &args);
    let b = env.mas_ok(env.root(), &args);
    assert_eq!(a, b);
    assert!(a.contains("no signal") && a.contains("published"), "{a}");
    assert_ne!(card(&env, "1").conditions, card(&env, "2").conditions);
    assert_eq!(card(&env, "1"), card(&env, "1"));
}

#[test]
fn card_alignment_meets_the_sanity_bounds() {
    let env = TestEnv::new();
    for seed in ["1", "2"] {
        let r = card(&env, seed);
        assert_eq!(r.chance, 0.2);
        let protocol = &row(&r, "protocol").success;
        let none = &row(&r, "no_signal").success;
        let mismatched = &row(&r, "mismatched").success;
        let ungrounded = &row(&r, "ungrounded").success;
        assert_eq!(protocol.trials, 400);
        // The ceiling is reached through deference, not because the agents already agreed.
        let disagreed = row(&r, "protocol").first_exchange_disagreed.as_ref().expect("counted for the protocol");
        assert!(disagreed.count > 40, "seed {seed}");
        // No signal is chance: its interval holds 1/5.
        assert!(none.low <= 0.2 && 0.2 <= none.high, "seed {seed}: {none:?}");
        // The protocol beats every baseline, beyond their intervals.
        for baseline in [none, mismatched, ungrounded] {
            assert!(protocol.rate > baseline.high, "seed {seed}: {protocol:?} vs {baseline:?}");
        }
        // Ungrounded sharing sits between no signal and the protocol.
        assert!(none.rate < ungrounded.rate && ungrounded.rate < protocol.rate);
        // Stale frames: refusals are their own count, and only appear with mismatched frames.
        let stale: Vec<&ConditionResult> = r.conditions.iter().filter(|c| c.condition == "stale").collect();
        assert_eq!(stale.len(), 2);
        assert_eq!(stale[0].refused.count, 0);
        assert_eq!(stale[0].success, *protocol);
        assert!(stale[1].refused.count > 0, "seed {seed}: a 30 % mismatch rate refused nothing");
        let total = stale[1].success.count + stale[1].failure.count + stale[1].refused.count;
        assert_eq!(total, 400);
        // Still better than every baseline.
        assert!(stale[1].success.rate > ungrounded.rate);
    }
}

fn workspace(env: &TestEnv, overlap: &str, seed: &str) -> WorkspaceReport {
    bench_json(env, &["workspace", "--runs", "40", "--seed", seed, "--overlap", overlap])
}

#[test]
fn workspace_protocol_lowers_conflicts_and_any_is_no_higher_than_top() {
    let env = TestEnv::new();
    for seed in ["1", "2"] {
        let top = workspace(&env, "top", seed);
        let any = workspace(&env, "any", seed);
        let rate = |r: &WorkspaceReport, arm: usize| r.arms[arm].conflict_rate.rate;
        assert_eq!(top.arms[0].arm, "without");
        assert!(rate(&top, 1) < rate(&top, 0), "seed {seed}: {:?}", top.arms);
        assert!(rate(&any, 1) <= rate(&top, 1), "seed {seed}: any {:?} vs top {:?}", any.arms[1], top.arms[1]);
        // The arm without the protocol does not depend on --overlap.
        assert_eq!(any.arms[0], top.arms[0]);
        // Serializing costs waiting, never a split frame or a fail-closed verdict.
        assert!(top.arms[1].waits.mean > 0.0);
        assert_eq!(top.arms[1].frame_splits, 0);
        assert_eq!(top.arms[1].fail_closed, 0);
    }
    let a = env.mas_ok(env.root(), &["bench", "workspace", "--runs", "10", "--seed", "9"]);
    assert_eq!(a, env.mas_ok(env.root(), &["bench", "workspace", "--runs", "10", "--seed", "9"]));
    assert_ne!(a, env.mas_ok(env.root(), &["bench", "workspace", "--runs", "10", "--seed", "10"]));
    assert!(a.contains("conflict rate") && a.contains("steps to finish"), "{a}");
}

#[test]
fn bad_flags_are_usage_errors() {
    let env = TestEnv::new();
    let cases: &[&[&str]] = &[
        &["bench", "card-alignment", "--stale-rate", "1.5"],
        &["bench", "card-alignment", "--stale-rate", "-0.1"],
        &["bench", "card-alignment", "--stale-rate", "often"],
        &["bench", "card-alignment", "--pairs", "0"],
        &["bench", "card-alignment", "--rounds", "0"],
        &["bench", "card-alignment", "--seed", "-1"],
        &["bench", "workspace", "--overlap", "sideways"],
        &["bench", "workspace", "--files", "2"],
        &["bench", "workspace", "--runs", "0"],
        &["bench", "workspace", "--frobnicate"],
        &["bench", "tournament"],
    ];
    for args in cases {
        let out = env.mas(env.root(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{args:?}");
    }
}

#[test]
fn help_explains_what_each_harness_simulates() {
    let env = TestEnv::new();
    let out = env.mas_ok(env.root(), &["bench", "card-alignment", "--help"]);
    for needle in ["private frame permutation", "grounded deference", "refusal", "Wilson", "--stale-rate"] {
        assert!(out.contains(needle), "missing {needle:?}: {out}");
    }
    let out = env.mas_ok(env.root(), &["bench", "workspace", "--help"]);
    for needle in ["conflict", "steps to finish", "gate", "--overlap"] {
        assert!(out.contains(needle), "missing {needle:?}: {out}");
    }
    let out = env.mas_ok(env.root(), &["bench", "--help"]);
    assert!(out.contains("card-alignment") && out.contains("workspace"), "{out}");
}

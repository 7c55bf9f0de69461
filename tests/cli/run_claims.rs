//! Claims that end with their run: once a run lands or is aborted, the files its agents claimed
//! for it are free at once — a person's edit passes the gate, and `status` says which run's end
//! released them — while a person's own claims stay held.

use crate::common::*;
use crate::json::focus::FocusListOut;
use crate::json::status::StatusOut;
use crate::team_mode::{hook, write_payload};
use git_mas::attention::board::Liveness;
use git_mas::attention::run_end::RunOutcome;
use std::path::{Path, PathBuf};

/// The check the run's endorsements run.
const CHECK: &str = "grep -qx ok status.txt";

/// A team-mode repository (alice, bob, carol), a person's session `p` holding src/lib.rs, and run
/// r1 whose agents claimed files for it: bob by publishing a focus in his run worktree (as the
/// built-in agents of `coordinate` do), carol by editing in hers (as a host session in a run's
/// worktree does). Returns the repository and the three agents' worktrees.
fn run_with_claims(env: &TestEnv) -> (PathBuf, [PathBuf; 3]) {
    let repo = env
        .team(&["alice", "bob", "carol"])
        .config("mas.agent", "alice")
        .config("mas.team", "true")
        .config("mas.gate", "enforce")
        .build()
        .repo;
    // A person's own claim (it publishes the frame too).
    assert_eq!(hook(env, &repo, &write_payload(&repo, "p", "src/lib.rs")).0, "allow");
    env.mas_quiet_ok(&repo, &["run", "start", "--id", "r1", "--goal", "say ok", "--check", CHECK, "--quorum", "2"]);
    let wt = |agent: &str| {
        PathBuf::from(env.mas_ok(&repo, &["--agent", agent, "worktree", "add", agent, "--run", "r1"]).trim())
    };
    let wts = [wt("alice"), wt("bob"), wt("carol")];
    env.mas_quiet_ok(&wts[1], &["focus", "publish", "--targets", "src/pricing/tax.rs"]);
    let (verdict, note) = hook(env, &wts[2], &write_payload(&wts[2], "carol-host", "src/money.rs"));
    assert_eq!(verdict, "allow", "{note}");
    // Both claims name the run; the person's names none.
    let board: FocusListOut = serde_json::from_str(&env.mas_ok(&repo, &["focus", "list", "--json"])).unwrap();
    let run_of = |agent: &str| board.board.entry(agent).and_then(|e| e.run.clone());
    assert_eq!((run_of("bob").as_deref(), run_of("carol").as_deref()), (Some("r1"), Some("r1")), "{board:?}");
    assert!(board.board.entries.iter().filter(|e| e.focus.agent.starts_with("alice.")).all(|e| e.run.is_none()));
    // While the run is open, another person is refused both files.
    for file in ["src/pricing/tax.rs", "src/money.rs"] {
        let (verdict, reason) = hook(env, &repo, &write_payload(&repo, "q", file));
        assert_eq!(verdict, "deny", "{file} is held by the run's agent: {reason}");
    }
    (repo, wts)
}

fn status(env: &TestEnv, repo: &Path) -> StatusOut {
    let out = env.mas_ok(repo, &["status", "--json"]);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// What is true once run r1 ended with `outcome`: the run's claims are released, the person's is not.
fn assert_released_by(env: &TestEnv, repo: &Path, outcome: RunOutcome) {
    for file in ["src/pricing/tax.rs", "src/money.rs"] {
        let (verdict, reason) = hook(env, repo, &write_payload(repo, "q", file));
        assert_eq!(verdict, "allow", "the run ended, so {file} is free at once: {reason}");
    }
    let (verdict, reason) = hook(env, repo, &write_payload(repo, "r", "src/lib.rs"));
    assert_eq!(verdict, "deny", "a person's own claim outlives the run: {reason}");

    let s = status(env, repo);
    let released: Vec<(&str, &str, RunOutcome, &[String])> =
        s.released_by_run.iter().map(|r| (r.agent.as_str(), r.run.as_str(), r.outcome, r.claims.as_slice())).collect();
    assert_eq!(
        released,
        [
            ("bob", "r1", outcome, &["src/pricing/tax.rs".to_string()][..]),
            ("carol", "r1", outcome, &["src/money.rs".to_string()][..]),
        ],
        "{s:?}"
    );
    assert!(s.agents.iter().all(|a| a.agent != "bob" && a.agent != "carol"), "not live: {:?}", s.agents);
    let human = env.mas_ok(repo, &["status"]);
    let line = format!("bob: released: run r1 {} (its claims on src/pricing/tax.rs ended with it)", outcome.as_str());
    assert!(human.contains(&line), "{human}");
    let board: FocusListOut = serde_json::from_str(&env.mas_ok(repo, &["focus", "list", "--json"])).unwrap();
    let bob = board.board.entry("bob").unwrap();
    assert_eq!(bob.liveness, Liveness::Released);
    assert_eq!(bob.ended_with.as_ref().map(|e| (e.run.as_str(), e.outcome)), Some(("r1", outcome)));
    let list = env.mas_ok(repo, &["focus", "list"]);
    assert!(list.contains(&format!("released: run r1 {}", outcome.as_str())), "{list}");
}

#[test]
fn a_landed_runs_claims_are_released_at_once_and_a_persons_are_not() {
    let env = TestEnv::new();
    let (repo, [alice, bob, carol]) = run_with_claims(&env);
    std::fs::write(bob.join("status.txt"), "ok\n").unwrap();
    env.mas_quiet_ok(&bob, &["propose", "-m", "say ok"]);
    env.mas_quiet_ok(&alice, &["endorse", "bob"]);
    env.mas_quiet_ok(&carol, &["endorse", "bob"]);
    env.mas_quiet_ok(&bob, &["land"]);
    assert_released_by(&env, &repo, RunOutcome::Landed);
}

#[test]
fn an_aborted_runs_claims_are_released_at_once_and_a_persons_are_not() {
    let env = TestEnv::new();
    let (repo, _) = run_with_claims(&env);
    env.mas_quiet_ok(&repo, &["run", "abort", "r1", "--reason", "not needed"]);
    assert_released_by(&env, &repo, RunOutcome::Aborted);
}

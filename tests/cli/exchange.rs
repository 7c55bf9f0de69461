//! Claims travelling between clones by themselves: team mode with a remote starts the background
//! exchange (`git mas exchange`) from its hooks, through the suite's smart-HTTP remote, with no
//! `git mas sync` typed.

use crate::common::*;
use crate::json::status::StatusOut;
use crate::sync_http::{HttpRemote, served_team};
use crate::team_mode::{hook, write_payload};
use std::path::Path;
use std::time::{Duration, Instant};

/// The bound the exchange states (`git_mas::exchange::BOUND`).
const BOUND: Duration = Duration::from_secs(5);

fn status(env: &TestEnv, repo: &Path) -> StatusOut {
    serde_json::from_str(&env.mas_ok(repo, &["status", "--json"])).unwrap()
}

/// The running exchange's process id, as `status` shows it, waiting up to 10 s for its first round.
fn exchange_pid(env: &TestEnv, repo: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let x = status(env, repo).remote.and_then(|r| r.exchange).expect("team mode with a remote shows the exchange");
        if let (true, Some(st)) = (x.running, &x.state) {
            return st.pid;
        }
        assert!(Instant::now() < deadline, "no exchange ran a round: {x:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        let state = s.rfind(')').and_then(|i| s.get(i + 2..i + 3)).unwrap_or("X");
        state != "Z" && state != "X"
    })
}

/// Waits until `repo`'s board shows a live session holding `file`, and returns how long it took.
fn seen(env: &TestEnv, repo: &Path, file: &str, from: Instant, within: Duration) -> Duration {
    loop {
        let board = crate::team_mode::board(env, repo);
        let live = |e: &&git_mas::attention::board::BoardEntry| e.liveness == git_mas::attention::board::Liveness::Live;
        if board.board.entries.iter().filter(live).any(|e| e.focus.targets.iter().any(|t| t == file)) {
            return from.elapsed();
        }
        assert!(from.elapsed() < within, "{file} was not seen claimed within {within:?}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Two clones in team mode, both with the suite's authenticated smart-HTTP remote as origin.
fn two_clones(env: &TestEnv, http: &HttpRemote) -> Vec<std::path::PathBuf> {
    let (_, clones) = served_team(env, http, &["alice", "bob"]);
    for (dir, name) in clones.iter().zip(["alice", "bob"]) {
        for (k, v) in [("mas.agent", name), ("mas.team", "true"), ("mas.gate", "enforce")] {
            env.git_quiet_ok(dir, &["config", k, v]);
        }
    }
    clones
}

#[test]
fn a_claim_in_one_clone_refuses_the_other_clones_session_within_the_bound_with_no_sync_typed() {
    let env = TestEnv::new();
    let http = HttpRemote::start(&env);
    let clones = two_clones(&env, &http);
    let (a, b) = (&clones[0], &clones[1]);

    // Bob's session works on another file: its first hook call starts bob's exchange.
    assert_eq!(hook(&env, b, &write_payload(b, "bob-s", "src/config.rs")).0, "allow");
    let bob_exchange = exchange_pid(&env, b);
    // Alice's session claims a file: her hook starts her exchange and answers at once.
    let claimed = Instant::now();
    assert_eq!(hook(&env, a, &write_payload(a, "alice-s", "src/lib.rs")).0, "allow");
    let took = seen(&env, b, "src/lib.rs", claimed, BOUND);
    eprintln!("alice's claim reached bob's board in {took:?}");
    let (verdict, reason) = hook(&env, b, &write_payload(b, "bob-s", "src/lib.rs"));
    assert_eq!(verdict, "deny", "{reason}");
    assert!(reason.contains("alice"), "the holder is named: {reason}");
    // No sync was typed: only the exchanges moved refs between the clones.
    let x = status(&env, a).remote.unwrap().exchange.unwrap();
    assert!(x.running && !x.off, "{x:?}");
    let st = x.state.unwrap();
    assert!(st.pushed >= 1 && st.last_error.is_none(), "{st:?}");
    assert!(env.mas_ok(a, &["status"]).contains("exchange   running (pid"));

    // Killing alice's exchange loses no claim: a new claim made while none runs is pushed by the
    // exchange her next hook call starts.
    let alice_exchange = exchange_pid(&env, a);
    rustix_kill(alice_exchange);
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(alice_exchange) {
        assert!(Instant::now() < deadline, "the exchange did not die");
        std::thread::sleep(Duration::from_millis(10));
    }
    let x = status(&env, a).remote.unwrap().exchange.unwrap();
    assert!(!x.running, "a killed exchange is not shown running: {x:?}");
    assert!(env.mas_ok(a, &["status"]).contains("exchange   not running"));
    let claimed = Instant::now();
    assert_eq!(hook(&env, a, &write_payload(a, "alice-s", "src/money.rs")).0, "allow");
    let took = seen(&env, b, "src/money.rs", claimed, BOUND);
    eprintln!("after a SIGKILL of the exchange, the next claim reached bob's board in {took:?}");
    assert_ne!(exchange_pid(&env, a), alice_exchange, "a new exchange runs");
    assert!(alive(bob_exchange), "bob's exchange ran throughout");
    let (verdict, _) = hook(&env, b, &write_payload(b, "bob-s", "src/money.rs"));
    assert_eq!(verdict, "deny");
}

#[test]
fn the_exchange_ends_once_no_session_runs_and_no_hook_is_called() {
    let env = TestEnv::new();
    let http = HttpRemote::start(&env);
    let clones = two_clones(&env, &http);
    let a = &clones[0];
    env.git_quiet_ok(a, &["config", "mas.exchangeIdle", "2s"]);
    // The hook runs under a host process of its own (python), which ends after the call: the
    // session's host is gone, as when a host exits.
    let payload = write_payload(a, "short-s", "src/lib.rs");
    let mut cmd = std::process::Command::new("python3");
    env.hermetic(&mut cmd);
    cmd.current_dir(a)
        .args(["-c", "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"])
        .arg(env!("CARGO_BIN_EXE_git-mas"))
        .args(["gate", "--host", "claude-code"]);
    let out = fed(&mut cmd, payload.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let pid = exchange_pid(&env, a);
    // The claim reaches the remote before the exchange ends.
    let deadline = Instant::now() + Duration::from_secs(20);
    while alive(pid) {
        assert!(Instant::now() < deadline, "the exchange outlived its sessions by 20 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    let x = status(&env, a).remote.unwrap().exchange.unwrap();
    assert!(!x.running, "{x:?}");
    let st = x.state.expect("it wrote its state");
    assert_eq!(st.ended.as_deref(), Some("no session ran and no hook called"), "{st:?}");
    assert!(st.pushed >= 1, "the claim was pushed: {st:?}");
    let remote_refs = env.git(a, &["ls-remote", "origin", "refs/mas/focus/*"]);
    assert!(remote_refs.contains("refs/mas/focus/"), "{remote_refs}");
    // `git config mas.exchange false`: no exchange starts, and status says so.
    env.git_quiet_ok(a, &["config", "mas.exchange", "false"]);
    assert_eq!(hook(&env, a, &write_payload(a, "other-s", "src/config.rs")).0, "allow");
    let x = status(&env, a).remote.unwrap().exchange.unwrap();
    assert!(x.off && !x.running, "{x:?}");
}

/// SIGKILL, by pid.
fn rustix_kill(pid: u32) {
    let status = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    assert!(status.success());
}

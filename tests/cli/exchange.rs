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

    // A lane crosses the same way: taken by alice from her terminal, it refuses bob's session.
    let taken = Instant::now();
    env.mas_quiet_ok(a, &["claim", "tools/**", "--ttl", "1h"]);
    while env
        .git_cmd(b)
        .args(["rev-parse", "-q", "--verify", "refs/mas/lanes/alice"])
        .output()
        .unwrap()
        .stdout
        .is_empty()
    {
        assert!(taken.elapsed() < BOUND, "alice's lane did not reach bob's clone within the bound");
        std::thread::sleep(Duration::from_millis(25));
    }
    eprintln!("alice's lane reached bob's clone in {:?}", taken.elapsed());
    let (verdict, reason) = hook(&env, b, &write_payload(b, "bob-s", "tools/new.sh"));
    assert_eq!(verdict, "deny", "{reason}");
    assert!(reason.contains("alice's lane tools/**"), "{reason}");
}

#[test]
fn the_exchange_ends_once_no_session_runs_and_no_hook_is_called() {
    let env = TestEnv::new();
    let http = HttpRemote::start(&env);
    let clones = two_clones(&env, &http);
    let a = &clones[0];
    env.git_quiet_ok(a, &["config", "mas.exchangeIdle", "2s"]);
    // The hook runs under a host process of its own, which ends after the call: the session's
    // host is gone, as when a host exits.
    hosted_hook(&env, a, &write_payload(a, "short-s", "src/lib.rs"));
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

/// The claude-code hook run under a host process of its own (python), which ends after the call,
/// as a host does when its session ends. Asserts it allowed the call.
fn hosted_hook(env: &TestEnv, repo: &Path, payload: &serde_json::Value) {
    let mut cmd = std::process::Command::new("python3");
    env.hermetic(&mut cmd);
    cmd.current_dir(repo)
        .args(["-c", "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"])
        .arg(HOOK_BIN)
        .args(["--host", "claude-code"]);
    let out = fed(&mut cmd, payload.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("deny"), "{}", shown(&out));
}

#[test]
fn the_exchange_killed_at_any_step_of_a_round_loses_no_claim_and_leaves_nothing_doctor_cannot_name() {
    use crate::killpoints::{RENAMES, SPAWNS, Trigger, check_repository, require_strace, sweep};
    require_strace();
    let env = TestEnv::new();
    // Through the HTTP remote: its receive-pack is the server's process, not the exchange's child,
    // so the kills are the exchange's own (and its git's), as on a real machine.
    let http = HttpRemote::start(&env);
    let (_, clones) = served_team(&env, &http, &["alice", "bob"]);
    let (a, b) = (clones[0].clone(), clones[1].clone());
    for (dir, name) in [(&a, "alice"), (&b, "bob")] {
        for (k, v) in [("mas.agent", name), ("mas.team", "true"), ("mas.gate", "enforce"), ("mas.exchangeIdle", "1s")] {
            env.git_quiet_ok(dir, &["config", k, v]);
        }
    }
    // Each run first claims a new file in a new session (its hook starting no exchange), then runs
    // `git mas exchange` in the foreground: with no session's host alive it ends after its second
    // round. The claim is what the run must carry.
    let claim = |env: &TestEnv, n: usize| {
        env.git_quiet_ok(&a, &["config", "mas.exchange", "false"]);
        hosted_hook(env, &a, &write_payload(&a, &format!("k-{n}"), &format!("new/{n}.txt")));
        env.git_quiet_ok(&a, &["config", "mas.exchange", "true"]);
    };
    let triggers = [Trigger::on(RENAMES), Trigger::on(SPAWNS).own_process(), Trigger::on("wait4").own_process()];
    let made = std::cell::Cell::new(0usize);
    let swept = sweep(
        &triggers,
        |_, _| {
            claim(&env, made.get());
            made.set(made.get() + 1);
            let mut cmd = env.mas_cmd(&a);
            cmd.arg("exchange");
            cmd
        },
        |attempt| {
            // Whatever the kill left, the next exchange (the next hook's) carries every claim.
            let out = env.mas(&a, &["exchange"]);
            assert_eq!(out.status.code(), Some(0), "{}: {}", attempt.point(), shown(&out));
            env.mas_quiet_ok(&b, &["sync"]);
            let board = crate::team_mode::board(&env, &b);
            let made = made.get();
            let carried = (0..made)
                .filter(|n| {
                    let file = format!("new/{n}.txt");
                    board.board.entries.iter().any(|e| e.focus.targets.contains(&file))
                })
                .count();
            assert_eq!(
                carried,
                made,
                "{}: a claim was lost; exchange said {}; a: {}; b: {}; remote: {}",
                attempt.point(),
                shown(&out),
                env.refs(&a),
                env.refs(&b),
                env.git(&a, &["ls-remote", "origin"])
            );
            // What the kill left is named by doctor (a killed writer's temporary state file, an
            // interrupted fetch's staging lock) and cleared by `doctor --fix`.
            let fixed = env.mas(&a, &["doctor", "--fix", "--json"]);
            assert_eq!(fixed.status.code(), Some(0), "{}: {}", attempt.point(), shown(&fixed));
            let doctor = env.mas(&a, &["doctor", "--json"]);
            assert_eq!(doctor.status.code(), Some(0), "{}: {}", attempt.point(), shown(&doctor));
            assert_eq!(check_repository(&env, &a), Vec::<String>::new(), "{}", attempt.point());
        },
    );
    assert!(swept.iter().filter(|(_, n)| *n > 0).count() >= 3, "kill points exercised: {swept:?}");
    eprintln!("kill points: {swept:?}");
}

/// SIGKILL, by pid.
fn rustix_kill(pid: u32) {
    let status = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    assert!(status.success());
}

/// A Claude Code Read payload: a call that claims nothing.
fn read_payload(repo: &Path, session: &str, path: &str) -> serde_json::Value {
    serde_json::json!({
        "session_id": session,
        "cwd": repo,
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": repo.join(path)},
    })
}

/// The live sessions holding `file` on `repo`'s board.
fn holders(env: &TestEnv, repo: &Path, file: &str) -> Vec<String> {
    let board = crate::team_mode::board(env, repo);
    let mut out: Vec<String> = board
        .board
        .entries
        .iter()
        .filter(|e| e.liveness == git_mas::attention::board::Liveness::Live)
        .filter(|e| e.focus.targets.iter().any(|t| t == file))
        .map(|e| e.focus.agent.clone())
        .collect();
    out.sort();
    out
}

#[test]
fn sixteen_sessions_in_four_clones_racing_one_file_end_with_one_holder_every_loser_told_and_no_edit_lost() {
    let env = TestEnv::new();
    let http = HttpRemote::start(&env);
    let names = ["alice", "bob", "carol", "dave"];
    let (_, clones) = served_team(&env, &http, &names);
    for (dir, name) in clones.iter().zip(names) {
        for (k, v) in [("mas.agent", name), ("mas.team", "true"), ("mas.gate", "enforce"), ("mas.exchange", "false")] {
            env.git_quiet_ok(dir, &["config", k, v]);
        }
    }
    let file = "src/lib.rs";
    // The race, with the clones not exchanging yet (as clones offline, or claims made within one
    // round of each other): every session of every clone edits the file at once. Each allowed
    // session writes its own content, as its host would.
    let results: Vec<(usize, String, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..16)
            .map(|i| {
                let (env, clones) = (&env, &clones);
                s.spawn(move || {
                    let repo = &clones[i / 4];
                    let session = format!("race-{i}");
                    let (verdict, _) = hook(env, repo, &write_payload(repo, &session, file));
                    (i, session, verdict)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut wrote = std::collections::BTreeMap::new();
    for (i, session, verdict) in &results {
        if verdict == "allow" {
            let content = format!("the edit of {session} in {}\n", names[i / 4]);
            std::fs::write(clones[i / 4].join(file), &content).unwrap();
            wrote.insert(session.clone(), (i / 4, content));
        } else {
            assert_eq!(verdict, "deny");
        }
    }
    // The claims lock lets one session per clone through; no clone saw another's claim.
    let per_clone: Vec<usize> = (0..4).map(|c| wrote.values().filter(|(k, _)| *k == c).count()).collect();
    assert_eq!(per_clone, [1, 1, 1, 1], "{results:?}");

    // The clones exchange again: one call each that claims nothing starts each exchange.
    for (c, dir) in clones.iter().enumerate() {
        env.git_quiet_ok(dir, &["config", "mas.exchange", "true"]);
        assert_eq!(hook(&env, dir, &read_payload(dir, &format!("race-{}", c * 4), "README.md")).0, "allow");
    }
    let started = Instant::now();
    let all = loop {
        let seen: Vec<Vec<String>> = clones.iter().map(|d| holders(&env, d, file)).collect();
        if seen.iter().all(|h| h.len() == 4 && *h == seen[0]) {
            break seen[0].clone();
        }
        assert!(started.elapsed() < BOUND * 2, "the four claims did not reach every clone: {seen:?}");
        std::thread::sleep(Duration::from_millis(50));
    };
    eprintln!("four clones' claims on one file reached every clone in {:?}", started.elapsed());
    let holder = all[0].clone();

    // Every session's next call: exactly one may edit the file, the smallest name of the four
    // claimers; every other is refused, and each loser that had written is told where its
    // changes are kept.
    let mut allowed = Vec::new();
    let mut kept = Vec::new();
    for i in 0..16 {
        let repo = &clones[i / 4];
        let session = format!("race-{i}");
        let (verdict, reason) = hook(&env, repo, &write_payload(repo, &session, file));
        if verdict == "allow" {
            allowed.push(session);
            continue;
        }
        assert_eq!(verdict, "deny", "{reason}");
        assert!(reason.contains(&holder), "the holder is named: {reason}");
        if let Some((_, content)) = wrote.get(&session) {
            assert!(reason.contains("Nothing of your work is lost"), "{reason}");
            let refname = reason.split("kept as ").nth(1).and_then(|r| r.split(' ').next()).expect("the ref is named");
            let kept_content = env.git(repo, &["show", &format!("{refname}:{file}")]);
            assert_eq!(kept_content, content.trim_end(), "the kept change is the loser's edit (git output trimmed)");
            assert_eq!(std::fs::read_to_string(repo.join(file)).unwrap(), *content, "the working copy is untouched");
            kept.push((refname.to_string(), content.clone()));
        }
    }
    assert_eq!(allowed.len(), 1, "exactly one holder: {allowed:?}");
    assert_eq!(kept.len(), 3, "three losers had written, and each was told: {kept:?}");
    // The holder's clone receives every kept change, and status lists them for the holder.
    let home = &clones[names.iter().position(|n| holder.starts_with(n)).unwrap()];
    let started = Instant::now();
    loop {
        let listed = status(&env, home).kept;
        if listed.len() == 3 {
            for (refname, content) in &kept {
                let l = listed.iter().find(|l| &l.refname == refname).expect("each kept change is listed");
                assert_eq!(l.file, file);
                assert_eq!(env.git(home, &["show", &format!("{}:{file}", l.commit)]), content.trim_end());
            }
            break;
        }
        assert!(started.elapsed() < BOUND, "the kept changes did not reach the holder's clone: {listed:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // A kept change is an artifact, not a record: no clone counts it as an unverified record.
    for dir in &clones {
        let out = env.mas(dir, &["check", "--records"]);
        assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    }
    let human = env.mas_ok(home, &["status"]);
    assert!(human.contains("to a claim made on another clone; its changes are kept in"), "{human}");
    // Told once: a loser's call after that is refused by the rule alone.
    let loser = wrote.keys().find(|s| !allowed.contains(s)).unwrap();
    let c = wrote[loser].0;
    let (_, reason) = hook(&env, &clones[c], &write_payload(&clones[c], loser, file));
    assert!(!reason.contains("Nothing of your work is lost"), "{reason}");
}

#[test]
fn a_clone_offline_names_the_failure_in_status_and_exchanges_its_claims_once_it_reconnects() {
    let env = TestEnv::new();
    let http = HttpRemote::start(&env);
    let names = ["alice", "carol"];
    let (_, clones) = served_team(&env, &http, &names);
    for (dir, name) in clones.iter().zip(names) {
        for (k, v) in [("mas.agent", name), ("mas.team", "true"), ("mas.gate", "enforce")] {
            env.git_quiet_ok(dir, &["config", k, v]);
        }
    }
    let (a, c) = (&clones[0], &clones[1]);
    // Carol's clone goes offline: nothing answers at its remote's address.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let good = env.git(c, &["remote", "get-url", "origin"]);
    env.git_quiet_ok(c, &["remote", "set-url", "origin", &format!("http://127.0.0.1:{closed}/git/team.git")]);
    assert_eq!(hook(&env, c, &write_payload(c, "carol-s", "src/config.rs")).0, "allow", "offline, a claim is local");
    assert_eq!(hook(&env, a, &write_payload(a, "alice-s", "src/lib.rs")).0, "allow");
    exchange_pid(&env, c);
    let x = status(&env, c).remote.unwrap().exchange.unwrap();
    let error = x.state.as_ref().and_then(|s| s.last_error.clone()).expect("the failed round is named");
    assert!(x.running && error.contains("git fetch"), "{x:?}");
    assert!(env.mas_ok(c, &["status"]).contains("its last round failed: git fetch"), "status names it");
    // Its claim waits; alice's cannot reach it.
    std::thread::sleep(Duration::from_secs(2));
    assert!(holders(&env, a, "src/config.rs").is_empty());
    assert!(holders(&env, c, "src/lib.rs").is_empty());
    // Back online, with no command typed but git's own: both claims cross within the bound.
    let back = Instant::now();
    env.git_quiet_ok(c, &["remote", "set-url", "origin", &good]);
    let took = seen(&env, a, "src/config.rs", back, BOUND);
    seen(&env, c, "src/lib.rs", back, BOUND);
    eprintln!("after reconnecting, the offline clone's claim reached the other in {took:?}");
    assert_eq!(hook(&env, a, &write_payload(a, "alice-s", "src/config.rs")).0, "deny");
    assert_eq!(hook(&env, c, &write_payload(c, "carol-s", "src/lib.rs")).0, "deny");
    let x = status(&env, c).remote.unwrap().exchange.unwrap();
    assert!(x.state.unwrap().last_error.is_none(), "the failure is gone once a round completes");
}

#[test]
fn an_exchange_that_cannot_start_says_why_and_status_shows_it() {
    let env = TestEnv::new();
    let repo = crate::team_mode::team_repo(&env);
    // No remote: nothing to exchange with, and a hook starts nothing.
    let out = env.mas(&repo, &["exchange"]);
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    assert!(
        stderr(&out).contains("no remote to exchange claims with") && stderr(&out).contains("git remote add origin")
    );
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "s", "src/lib.rs")).0, "allow");
    assert!(!repo.join(".git/mas/exchange.lock").exists(), "no remote: the hook touched nothing of the exchange's");
    let remote = env.root().join("remote.git");
    env.git_quiet_ok(env.root(), &["init", "--quiet", "--bare", "-b", "main", remote.to_str().unwrap()]);
    env.git_quiet_ok(&repo, &["remote", "add", "origin", remote.to_str().unwrap()]);
    // Turned off.
    env.git_quiet_ok(&repo, &["config", "mas.exchange", "false"]);
    let out = env.mas(&repo, &["exchange"]);
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    assert!(
        stderr(&out).contains("turned off") && stderr(&out).contains("git config mas.exchange true"),
        "{}",
        shown(&out)
    );
    // A configured interval that is no duration: a hook's exchange cannot say it on a terminal,
    // so it is in status.
    env.git_quiet_ok(&repo, &["config", "mas.exchange", "true"]);
    env.git_quiet_ok(&repo, &["config", "mas.exchangeInterval", "soon"]);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "s", "src/lib.rs")).0, "allow", "the hook answers all the same");
    let started = Instant::now();
    let x = loop {
        let x = status(&env, &repo).remote.unwrap().exchange.unwrap();
        if x.state.as_ref().is_some_and(|s| s.ended.is_some()) {
            break x;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{x:?}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!x.running, "{x:?}");
    let ended = x.state.unwrap().ended.unwrap();
    assert!(ended.contains("could not start") && ended.contains("mas.exchangeInterval"), "{ended}");
    let human = env.mas_ok(&repo, &["status"]);
    assert!(human.contains("exchange   not running") && human.contains("mas.exchangeInterval"), "{human}");
    let out = env.mas(&repo, &["exchange", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
}

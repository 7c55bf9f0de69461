//! Team mode under contention: sixteen hook processes, sixteen sessions, one file, started
//! together — exactly one claims it, every other one is denied naming the one that did.
//!
//! How a round starts them together: every process is spawned with its stdin open, and the test
//! waits until each waits for its payload (its watchdog thread exists and its main thread is in
//! `poll` on stdin: it is past start-up); then every payload is
//! written, and only then are all the stdins closed, one after another in a loop (the hook reads
//! to the end of its input). What is left between the first and the last process is the kernel
//! waking sixteen readers on two cores.
//!
//! The first round starts with no frame, so its racers also race to publish the first one.
//!
//! Each round claims a new file (`race/<tag>-<round>.txt`, which does not exist: a claim needs no file),
//! so claims accumulate and the board at the end must show every file held by the round's
//! winner alone. A session holds at most eight files, so a session that has won eight rounds is
//! retired and a new session id takes its place in the next round (a principal's 64 live agents
//! are never reached: 16 + 100 / 8 sessions at most).
//!
//! Without the claims lock this test fails: two processes that read the board before either
//! wrote both see the file free and both claim it (two winners in a round, two holders on the
//! board).

use crate::common::*;
use crate::json::focus::FocusListOut;
use crate::team_mode::{board, team_repo, write_payload};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Processes per round.
const RACERS: usize = 16;
/// Rounds of the one-checkout race.
const ROUNDS: usize = 100;
/// Rounds of the race across linked worktrees.
const WORKTREE_ROUNDS: usize = 25;
/// The most files one agent holds (`rule::MAX_FOCUS_TARGETS`).
const MAX_CLAIMS: usize = 8;

/// One racer's answer.
#[derive(Debug)]
struct Answer {
    session: String,
    /// `allow` or `deny`.
    verdict: String,
    /// The deny reason, or the allow's note (stderr).
    text: String,
}

/// Whether the hook process `pid` is waiting for its payload: its watchdog thread exists (two
/// tasks) and its main thread is in `poll` (7) or `ppoll` (271) on stdin; or it has already ended.
fn waiting_for_payload(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return true };
    if tasks.count() < 2 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/syscall")) {
        Ok(call) => matches!(call.split_whitespace().next(), Some("7" | "271")),
        Err(_) => !std::path::Path::new(&format!("/proc/{pid}")).exists(),
    }
}

/// Runs one round: `racers` (a checkout and a session id each) send a Write payload for `path`
/// to `git mas gate --host claude-code` at once. Returns their answers.
fn race(env: &TestEnv, racers: &[(PathBuf, String)], path: &str) -> Vec<Answer> {
    let mut children: Vec<(Child, &str, Vec<u8>)> = racers
        .iter()
        .map(|(dir, session)| {
            let child = env
                .mas_cmd(dir)
                .args(["gate", "--host", "claude-code"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn the hook");
            (child, session.as_str(), write_payload(dir, session, path).to_string().into_bytes())
        })
        .collect();
    let started = Instant::now();
    while !children.iter().all(|(c, _, _)| waiting_for_payload(c.id())) {
        assert!(started.elapsed() < Duration::from_secs(5), "the hooks never all waited for their payload");
        std::thread::sleep(Duration::from_millis(1));
    }
    for (child, _, payload) in &mut children {
        child.stdin.as_mut().unwrap().write_all(payload).unwrap();
    }
    for (child, _, _) in &mut children {
        drop(child.stdin.take());
    }
    children
        .into_iter()
        .map(|(child, session, _)| {
            let out = child.wait_with_output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{session}: {}", shown(&out));
            let (verdict, text) = if out.stdout.is_empty() {
                ("allow".to_string(), stderr(&out))
            } else {
                let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                let h = &v["hookSpecificOutput"];
                (h["permissionDecision"].as_str().unwrap_or("?").to_string(), h["permissionDecisionReason"].to_string())
            };
            Answer { session: session.to_string(), verdict, text }
        })
        .collect()
}

/// The live agents holding `path`.
fn holders(board: &FocusListOut, path: &str) -> Vec<String> {
    board.board.live().filter(|f| f.targets.iter().any(|t| t == path)).map(|f| f.agent.clone()).collect()
}

/// Checks a round: exactly one allowed, and it claimed `path`; every other one denied, naming it.
/// Returns the winner's session and agent.
fn one_winner(round: usize, path: &str, answers: &[Answer]) -> (String, String) {
    let shown = || answers.iter().map(|a| format!("  {} {}: {}", a.session, a.verdict, a.text)).collect::<Vec<_>>();
    let winners: Vec<&Answer> = answers.iter().filter(|a| a.verdict == "allow").collect();
    assert_eq!(winners.len(), 1, "round {round}: {} allowed\n{}", winners.len(), shown().join("\n"));
    let note = &winners[0].text;
    let claims = format!(" claims {path}");
    let agent = note
        .split(&['\n', ';'][..])
        .find_map(|part| part.trim().strip_suffix(claims.as_str())?.split_whitespace().last().map(str::to_string))
        .unwrap_or_else(|| panic!("round {round}: the allowed edit did not say it claims {path}: {note}"));
    for a in answers.iter().filter(|a| a.verdict != "allow") {
        assert_eq!(a.verdict, "deny", "round {round}: {}\n{}", a.session, shown().join("\n"));
        assert!(
            a.text.contains(&agent) && a.text.contains(path),
            "round {round}: {} was denied without naming the winner {agent}: {}",
            a.session,
            a.text
        );
    }
    (winners[0].session.clone(), agent)
}

/// Races `rounds` rounds of [`RACERS`] sessions over `dirs` (racer i runs in `dirs[i % len]`),
/// checking each round and the board after each, then the whole board at the end.
fn rounds(env: &TestEnv, repo: &Path, dirs: &[PathBuf], rounds: usize, tag: &str) {
    let mut next_session = 0;
    let mut fresh = || {
        next_session += 1;
        format!("{tag}-session-{next_session:03}")
    };
    let mut sessions: Vec<String> = (0..RACERS).map(|_| fresh()).collect();
    let mut held: BTreeMap<String, String> = BTreeMap::new(); // file → agent
    let mut wins: BTreeMap<String, usize> = BTreeMap::new(); // session → files held
    for round in 0..rounds {
        let path = format!("race/{tag}-{round:03}.txt");
        let racers: Vec<(PathBuf, String)> =
            sessions.iter().enumerate().map(|(i, s)| (dirs[i % dirs.len()].clone(), s.clone())).collect();
        let answers = race(env, &racers, &path);
        let (session, agent) = one_winner(round, &path, &answers);
        assert_eq!(
            holders(&board(env, repo), &path),
            std::slice::from_ref(&agent),
            "round {round}: the board's holder"
        );
        held.insert(path, agent);
        let won = wins.entry(session.clone()).or_default();
        *won += 1;
        if *won == MAX_CLAIMS {
            let i = sessions.iter().position(|s| *s == session).unwrap();
            sessions[i] = fresh();
        }
    }
    // The board at the end: every file held, by its round's winner alone.
    let end = board(env, repo);
    for (path, agent) in &held {
        assert_eq!(holders(&end, path), std::slice::from_ref(agent), "{path} at the end");
    }
    let claimed: usize = end.board.live().map(|f| f.targets.len()).sum();
    assert_eq!(claimed, held.len(), "no target beyond the rounds' files: {end:?}");
    // The first round found no frame: each racer may have published one, and one frame resulted
    // (a publication of the current hash writes nothing).
    assert_eq!(env.git(repo, &["rev-list", "--count", "refs/mas/frame"]), "1", "one frame record");
}

#[test]
fn sixteen_sessions_claiming_one_file_at_once_leave_one_holder_in_each_of_100_rounds() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let started = Instant::now();
    rounds(&env, &repo, std::slice::from_ref(&repo), ROUNDS, "one");
    eprintln!("{ROUNDS} rounds of {RACERS} racers: {:.1?}", started.elapsed());
}

#[test]
fn sixteen_sessions_in_two_linked_worktrees_claiming_one_file_leave_one_holder() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let dirs: Vec<PathBuf> = ["wt-left", "wt-right"]
        .iter()
        .map(|name| {
            let dir = env.root().join(name);
            env.git_quiet_ok(&repo, &["worktree", "add", "--quiet", "-b", name, dir.to_str().unwrap()]);
            dir
        })
        .collect();
    let started = Instant::now();
    rounds(&env, &repo, &dirs, WORKTREE_ROUNDS, "two");
    eprintln!("{WORKTREE_ROUNDS} rounds of {RACERS} racers over two worktrees: {:.1?}", started.elapsed());
}

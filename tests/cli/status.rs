//! `git mas status`: the team in one view, from the board and the gate's denial log, with real
//! hook calls making the claims, the waits and a deadlock.

use crate::common::*;
use crate::json::status::StatusOut;
use crate::team_mode::{event, hook, team_repo, write_payload};
use serde_json::json;
use std::path::Path;

fn status(env: &TestEnv, repo: &Path) -> StatusOut {
    let out = env.mas_ok(repo, &["status", "--json"]);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn status_shows_who_holds_what_who_waits_on_whom_and_a_deadlock() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let s = status(&env, &repo);
    assert!(s.frame.is_none() && s.agents.is_empty() && s.waiting.is_empty(), "{s:?}");
    let empty = env.mas_ok(&repo, &["status"]);
    assert!(empty.contains("none published yet") && empty.contains("0 live"), "{empty}");

    // A and B claim a file each; C claims one and its session ends.
    for (session, file) in [("a", "src/lib.rs"), ("b", "src/money.rs"), ("c", "src/config.rs")] {
        assert_eq!(hook(&env, &repo, &write_payload(&repo, session, file)).0, "allow", "{file}");
    }
    let end = json!({"session_id": "c", "cwd": repo, "hook_event_name": "SessionEnd", "reason": "other"});
    event(&env, &repo, "claude-code", Some("--session-end"), &end);
    // B is refused A's file twice: B waits on A.
    for _ in 0..2 {
        let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs"));
        assert_eq!(verdict, "deny", "{reason}");
        assert!(!reason.contains("Deadlock"), "one way is no deadlock: {reason}");
    }
    let s = status(&env, &repo);
    let frame = s.frame.clone().expect("the first edit published a frame");
    assert!(frame.publisher.starts_with("alice.claude-"), "the first edit's session published it: {frame:?}");
    // Its commit's time (the tests fix the committer date).
    assert_eq!(frame.published_at, 1_767_225_600, "{frame:?}");
    let names: Vec<&str> = s.agents.iter().map(|a| a.agent.as_str()).collect();
    assert_eq!(names.len(), 2, "C ended, so it is not live: {s:?}");
    assert_eq!(s.not_live, 1);
    let by = |file: &str| s.agents.iter().find(|a| a.claims.iter().any(|c| c == file)).unwrap();
    let (a, b) = (by("src/lib.rs").agent.clone(), by("src/money.rs").agent.clone());
    for agent in &s.agents {
        assert_eq!(agent.host.as_deref(), Some("claude-code"));
        assert_eq!(agent.frame, frame.hash);
        let left = agent.expires_at - s.now;
        assert!((800..=900).contains(&left), "a fresh claim has about 15 min left: {left}");
        assert!(s.now - agent.last_activity < 300);
    }
    assert_eq!(s.waiting.len(), 1, "{:?}", s.waiting);
    let w = &s.waiting[0];
    assert_eq!(
        (w.agent.as_str(), w.holder.as_str(), w.file.as_str(), w.times),
        (b.as_str(), a.as_str(), "src/lib.rs", 2)
    );
    assert!(s.deadlocks.is_empty());

    // A is refused B's file while B waits on A's: a deadlock, named in A's refusal and in status.
    let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "a", "src/money.rs"));
    assert_eq!(verdict, "deny");
    assert!(
        reason.contains("Deadlock") && reason.contains(&b) && reason.contains("focus release --targets src/lib.rs"),
        "{reason}"
    );
    let s = status(&env, &repo);
    assert_eq!(s.deadlocks.len(), 1, "{s:?}");
    let pair = [s.deadlocks[0].a.clone(), s.deadlocks[0].b.clone()];
    let mut want = [a.clone(), b.clone()];
    want.sort();
    assert_eq!(pair, want);
    let human = env.mas_ok(&repo, &["status"]);
    let mut ages = insta::Settings::clone_current();
    ages.add_filter(r"\b\d+ (s|min|h|d) ago\b", "[AGE] ago");
    ages.bind(|| redacted(&env, || insta::assert_snapshot!("status_with_a_deadlock", human)));

    // A releases the file B waits on: B waits no more, and the deadlock is gone.
    env.mas_quiet_ok(&repo, &["--agent", &a, "focus", "release", "--force", "--targets", "src/lib.rs"]);
    let s = status(&env, &repo);
    assert!(s.waiting.iter().all(|w| w.agent != b) && s.deadlocks.is_empty(), "{s:?}");
}

#[test]
fn status_outside_a_repository_and_with_bad_arguments_says_so() {
    let env = TestEnv::new();
    let out = env.mas(env.root(), &["status"]);
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    assert!(stderr(&out).contains("git repository"), "{}", shown(&out));
    let repo = team_repo(&env);
    assert_eq!(env.mas(&repo, &["status", "--nosuch"]).status.code(), Some(2));
    let help = env.mas_ok(&repo, &["status", "--help"]);
    assert!(help.contains("waits on") && help.contains("--json") && help.contains("denials.log"), "{help}");
}

#[test]
fn status_shows_the_runs_in_progress_and_what_a_crash_left() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    let s = status(&env, &repo);
    assert!(s.runs.is_empty() && s.debris.problems == 0 && s.debris.remedy.is_none(), "{s:?}");

    // A run mid-round, and one that ended (not listed).
    for id in ["r1", "r2"] {
        env.mas_quiet_ok(&repo, &["--agent", "alice", "run", "start", "--id", id, "--goal", &format!("goal of {id}")]);
    }
    env.mas_quiet_ok(&repo, &["--agent", "alice", "run", "abort", "r2", "--reason", "not needed"]);
    // A lock left by a process that died an hour ago.
    let lock = repo.join(".git/refs/mas/focus/ghost.lock");
    std::fs::write(&lock, b"").unwrap();
    crate::doctor::touch(&lock, "1 hour ago");

    let s = status(&env, &repo);
    let runs: Vec<(&str, String, Option<&str>)> =
        s.runs.iter().map(|r| (r.id.as_str(), r.phase.to_string(), r.goal.as_deref())).collect();
    assert_eq!(runs, [("r1", "open".to_string(), Some("goal of r1"))]);
    assert_eq!(s.debris.problems, 1, "{:?}", s.debris);
    assert!(s.debris.stale_locks.iter().any(|p| p.ends_with("refs/mas/focus/ghost.lock")), "{:?}", s.debris);
    assert_eq!(s.debris.remedy.as_deref(), Some("git mas doctor --fix"));
    let human = env.mas_ok(&repo, &["status"]);
    assert!(
        human.contains("runs       1 in progress") && human.contains("r1 (open, best-of-n): goal of r1"),
        "{human}"
    );
    assert_eq!((s.runs[0].class.as_deref(), s.runs[0].barrier_holds), (Some("best_of_n"), None));
    assert!(
        human.contains("1 stale lock") && human.contains("ghost.lock") && human.contains("git mas doctor --fix"),
        "{human}"
    );

    // Cleared as it says.
    env.mas_quiet_ok(&repo, &["doctor", "--fix"]);
    let s = status(&env, &repo);
    assert_eq!(s.debris.problems, 0, "{:?}", s.debris);
}

/// Reads `reader` on a thread into a shared buffer, so that a test can wait for text to appear.
fn collect(mut reader: impl std::io::Read + Send + 'static) -> std::sync::Arc<std::sync::Mutex<Vec<u8>>> {
    let buf = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let out = buf.clone();
    std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(n) = reader.read(&mut chunk) {
            if n == 0 {
                break;
            }
            out.lock().unwrap().extend_from_slice(&chunk[..n]);
        }
    });
    buf
}

/// Waits (at most 20 s) until `buf` holds `count` occurrences of `text`.
fn wait_for(buf: &std::sync::Mutex<Vec<u8>>, text: &str, count: usize) -> String {
    let started = std::time::Instant::now();
    loop {
        let now = String::from_utf8_lossy(&buf.lock().unwrap()).into_owned();
        if now.matches(text).count() >= count || started.elapsed() > std::time::Duration::from_secs(20) {
            return now;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn status_watch_prints_a_view_per_change_and_stops_cleanly_on_ctrl_c() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    let mut child = GroupChild::spawn(
        env.mas_cmd(&repo)
            .args(["status", "--watch"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped()),
    )
    .unwrap();
    let out = collect(child.stdout.take().unwrap());
    let err = collect(child.stderr.take().unwrap());
    let first = wait_for(&out, "agents     1 live", 1);
    assert!(first.contains("agents     1 live") && !first.contains('\x1b'), "plain lines off a terminal: {first}");
    // Quiet while nothing changes.
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert_eq!(String::from_utf8_lossy(&out.lock().unwrap()).matches("agents").count(), 1, "no change, no view");
    // A claim in another process: a new view.
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/money.rs")).0, "allow");
    let second = wait_for(&out, "agents     2 live", 1);
    assert!(second.contains("agents     2 live") && second.contains("src/money.rs"), "{second}");
    let pid = child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "Ctrl-C is a clean stop: {}", String::from_utf8_lossy(&err.lock().unwrap()));
}

/// In a terminal (a pseudo-terminal made by `script`), each view replaces the last, and Ctrl-C
/// typed at it stops the command with the terminal as it was.
#[test]
fn status_watch_in_a_terminal_redraws_and_a_typed_ctrl_c_stops_it() {
    use std::io::Write as _;
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs")).0, "allow");
    let bin = env.mas_cmd(&repo).get_program().to_string_lossy().into_owned();
    let mut cmd = std::process::Command::new("script");
    env.hermetic(&mut cmd);
    cmd.args(["-qefc", &format!("exec '{bin}' status --watch"), "/dev/null"])
        .current_dir(&repo)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = GroupChild::spawn(&mut cmd).unwrap();
    let mut typed = child.stdin.take().unwrap();
    let out = collect(child.stdout.take().unwrap());
    let first = wait_for(&out, "(watching; Ctrl-C to stop)", 1);
    assert!(first.contains("\x1b[H\x1b[2J") && first.contains("agents     1 live"), "a terminal view: {first:?}");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/money.rs")).0, "allow");
    let second = wait_for(&out, "\x1b[H\x1b[2J", 2);
    assert_eq!(second.matches("\x1b[H\x1b[2J").count(), 2, "{second:?}");
    assert!(second.contains("agents     2 live"), "{second:?}");
    typed.write_all(b"\x03").unwrap();
    typed.flush().unwrap();
    let status = child.wait().unwrap();
    let all = String::from_utf8_lossy(&out.lock().unwrap()).into_owned();
    assert_eq!(status.code(), Some(0), "{all:?}");
    assert!(all.contains("stopped"), "{all:?}");
    // Nothing but the clear-and-home it draws with: no mode set that would need undoing.
    assert!(!all.contains("\x1b[?"), "no terminal mode changed: {all:?}");
}

/// A run mid-round: its proposals with endorsements and checks, and what keeps it from landing —
/// then that it can land.
#[test]
fn status_shows_a_runs_proposals_endorsements_and_what_blocks_its_landing() {
    let env = TestEnv::new();
    let repo = env.team(&["alice", "bob", "carol"]).build().repo;
    let start = ["--agent", "alice", "run", "start", "--id", "r1", "--goal", "say ok", "--quorum", "2"];
    env.mas_quiet_ok(&repo, &[&start[..], &["--check", "grep -qx ok status.txt"]].concat());
    let s = status(&env, &repo);
    assert_eq!(s.runs.len(), 1);
    assert_eq!((s.runs[0].quorum, s.runs[0].blocks_landing.as_deref()), (2, Some("no proposal yet")));
    let wt = |name: &str| {
        std::path::PathBuf::from(env.mas_ok(&repo, &["--agent", name, "worktree", "add", name, "--run", "r1"]).trim())
    };
    let (alice, bob, carol) = (wt("alice"), wt("bob"), wt("carol"));
    std::fs::write(alice.join("status.txt"), "ok\n").unwrap();
    env.mas_quiet_ok(&alice, &["propose", "-m", "say ok"]);
    env.mas_quiet_ok(&bob, &["endorse", "alice"]);
    let s = status(&env, &repo);
    let r = &s.runs[0];
    assert_eq!(r.proposals.len(), 1, "{r:?}");
    let p = &r.proposals[0];
    assert_eq!(
        (p.agent.as_str(), p.endorsers.as_slice(), p.checks_passed, p.checks_run, p.at_quorum),
        ("alice", &["bob".to_string()][..], 1, 1, false)
    );
    assert_eq!(r.blocks_landing.as_deref(), Some("no proposal at quorum (1 of 2 valid endorsements at most)"));
    let human = env.mas_ok(&repo, &["status"]);
    assert!(
        human.contains("alice: 1 endorsement (bob), checks 1/1")
            && human.contains("not landing: no proposal at quorum"),
        "{human}"
    );
    env.mas_quiet_ok(&carol, &["endorse", "alice"]);
    let s = status(&env, &repo);
    assert_eq!(s.runs[0].blocks_landing, None, "{:?}", s.runs[0]);
    assert!(env.mas_ok(&repo, &["status"]).contains("can land: `git mas land r1`"));
}

/// The status once `ready` holds of it, asked for at most `limit_secs`.
fn status_when(
    env: &TestEnv,
    repo: &Path,
    limit_secs: u64,
    what: &str,
    ready: impl Fn(&StatusOut) -> bool,
) -> StatusOut {
    let started = std::time::Instant::now();
    loop {
        let s = status(env, repo);
        if ready(&s) {
            return s;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(limit_secs), "never: {what}: {s:?}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The exit code of `run`, waited for at most `limit_secs`.
fn exit_code(run: &mut GroupChild, limit_secs: u64) -> Option<i32> {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = run.try_wait().unwrap() {
            return status.code();
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(limit_secs), "the run did not end");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn status_shows_an_aggregate_run_mid_round_with_its_slices_and_the_barrier() {
    let env = TestEnv::new();
    let repo = crate::aggregate::setup(&env, &["alice", "bob", "carol"]);
    let agents = [
        crate::aggregate::agent(&env, "alice", "slice"),
        crate::aggregate::agent(&env, "bob", "held"),
        crate::aggregate::agent(&env, "carol", "slice"),
    ];
    let mut run = GroupChild::spawn(
        with_toolchain(&mut env.mas_cmd(&repo))
            .args(["--agent", "lead", "coordinate", "--json", "--aggregate", "--goal", "fix the bugs", "--wait", "2s"])
            .args(["--agents", &agents.join(","), "--quorum", "2"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null()),
    )
    .unwrap();
    // Mid-round: alice has proposed and bob, asked next, holds his proposal back.
    let s = status_when(&env, &repo, 120, "the run got to bob", |s| {
        s.runs.first().is_some_and(|r| r.proposals.iter().any(|p| p.agent == "alice"))
            && env.root().join("prompts.bob").exists()
    });
    let r = &s.runs[0];
    assert_eq!((r.phase.to_string().as_str(), r.class.as_deref()), ("open", Some("aggregate")), "{r:?}");
    let slices: Vec<(&str, &str)> = r.slices.iter().map(|sl| (sl.agent.as_str(), sl.status.as_str())).collect();
    assert_eq!(slices, [("alice", "waiting"), ("bob", "missing"), ("carol", "missing")], "{r:?}");
    assert!(r.slices.iter().all(|sl| sl.files > 0), "{r:?}");
    assert_eq!(r.barrier_holds, Some(false));
    let blocks = r.blocks_landing.as_deref().unwrap_or_default();
    assert!(blocks.starts_with("the barrier waits for") && blocks.contains("bob (missing)"), "{blocks}");
    let human = env.mas_ok(&repo, &["status"]);
    assert!(human.contains("(open, aggregate): fix the bugs") && human.contains("barrier waits"), "{human}");
    assert!(human.contains("alice waiting") && human.contains("bob missing"), "{human}");

    // Bob goes on: the run lands and is no longer in progress.
    std::fs::write(env.root().join("prompts.go"), b"").unwrap();
    assert_eq!(exit_code(&mut run, 300), Some(0));
    assert!(status(&env, &repo).runs.is_empty());
}

#[test]
fn status_says_whether_the_checkout_moved_on_since_the_frame_and_how_refs_mas_stands_against_the_remote() {
    use git_mas::attention::frame::Since;
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let (verdict, _) = hook(&env, &repo, &write_payload(&repo, "a", "src/lib.rs"));
    assert_eq!(verdict, "allow");
    let since = |env: &TestEnv| status(env, &repo).frame.expect("a frame").since;
    assert_eq!(since(&env), Some(Since::Same));
    assert!(status(&env, &repo).remote.is_none(), "no remote, no sync");
    std::fs::write(repo.join("NOTES.md"), "a new file\n").unwrap();
    assert_eq!(since(&env), Some(Since::WorktreeChanged));
    // In team mode the next edit publishes the frame: status asks nobody to.
    let human = env.mas_ok(&repo, &["status"]);
    assert!(!human.contains("changed since") && !human.contains("snapshot --publish"), "{human}");
    assert!(status(&env, &repo).team);
    env.git_quiet_ok(&repo, &["config", "mas.team", "false"]);
    let human = env.mas_ok(&repo, &["status"]);
    assert!(human.contains("the working tree changed since") && human.contains("snapshot --publish"), "{human}");
    env.git_quiet_ok(&repo, &["config", "mas.team", "true"]);
    std::fs::remove_file(repo.join("NOTES.md")).unwrap();
    assert_eq!(since(&env), Some(Since::Same), "back as it was");
    std::fs::write(repo.join("NOTES.md"), "a new file\n").unwrap();
    env.git_quiet_ok(&repo, &["add", "NOTES.md"]);
    env.git_quiet_ok(&repo, &["commit", "--quiet", "-m", "notes"]);
    assert_eq!(since(&env), Some(Since::HeadMoved));
    assert!(!env.mas_ok(&repo, &["status"]).contains("HEAD moved on since"));
    env.git_quiet_ok(&repo, &["config", "mas.team", "false"]);
    assert!(env.mas_ok(&repo, &["status"]).contains("HEAD moved on since"));
    env.git_quiet_ok(&repo, &["config", "mas.team", "true"]);

    // A remote never synced with, then in sync, then one record ahead.
    let remote = env.root().join("remote.git");
    env.git_quiet_ok(env.root(), &["init", "--quiet", "--bare", "-b", "main", remote.to_str().unwrap()]);
    env.git_quiet_ok(&repo, &["remote", "add", "origin", remote.to_str().unwrap()]);
    let r = status(&env, &repo).remote.expect("origin is configured");
    assert!(!r.fetched, "{r:?}");
    assert!(env.mas_ok(&repo, &["status"]).contains("remote     origin: never synced"));
    env.mas_quiet_ok(&repo, &["sync"]);
    let r = status(&env, &repo).remote.unwrap();
    assert!(r.fetched && r.same > 0 && r.ahead == 0 && r.behind == 0 && r.diverged.is_empty(), "{r:?}");
    let session = status(&env, &repo).agents[0].agent.clone();
    env.mas_quiet_ok(&repo, &["--agent", &session, "focus", "release", "--force"]);
    let r = status(&env, &repo).remote.unwrap();
    assert_eq!((r.ahead, r.behind), (1, 0), "{r:?}");
    assert!(env.mas_ok(&repo, &["status"]).contains("1 ahead as of the last sync"));

    // Alice's own chain moved on in another clone too: diverged, and left so by sync.
    env.git_quiet_ok(&repo, &["push", "--quiet", "origin", "main"]);
    let other = env.root().join("other");
    env.git_quiet_ok(env.root(), &["clone", "--quiet", remote.to_str().unwrap(), other.to_str().unwrap()]);
    env.git_quiet_ok(&other, &["fetch", "--quiet", "origin", "+refs/mas/*:refs/mas/*"]);
    env.mas_quiet_ok(&other, &["--agent", "alice", "focus", "publish", "--targets", "src/config.rs"]);
    env.mas_quiet_ok(&other, &["sync"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "focus", "publish", "--targets", "src/money.rs"]);
    assert_eq!(env.mas(&repo, &["sync"]).status.code(), Some(5), "diverged");
    let r = status(&env, &repo).remote.unwrap();
    assert_eq!(r.diverged, ["refs/mas/focus/alice"], "{r:?}");
    assert!(env.mas_ok(&repo, &["status"]).contains("1 diverged (refs/mas/focus/"));
}

#[test]
fn status_lists_a_converge_run_until_its_report_is_recorded_and_run_list_leaves_it_out() {
    let env = TestEnv::new();
    let repo = env.team(&["alice"]).build().repo;
    // A reference peer that answers only once the mark exists.
    let mark = env.root().join("go");
    let peer = env.root().join("held.sh");
    std::fs::write(
        &peer,
        format!("while [ ! -e '{}' ]; do sleep 0.1; done\nexec git-mas peer reference\n", mark.display()),
    )
    .unwrap();
    let mut run = GroupChild::spawn(
        env.mas_cmd(&repo)
            .args(["--agent", "alice", "converge", "--pattern", "preference", "--max-rounds", "20", "--agents"])
            .arg(format!("builtin:reference,cmd:sh {}", peer.display()))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null()),
    )
    .unwrap();
    let s = status_when(&env, &repo, 60, "the run is listed", |s| !s.converging.is_empty());
    let c = &s.converging[0];
    assert_eq!((c.class.as_str(), c.driver.as_str(), c.peers.len()), ("preference", "alice", 2), "{c:?}");
    assert!(s.runs.is_empty(), "a converge run is not a development run: {:?}", s.runs);
    let human = env.mas_ok(&repo, &["status"]);
    assert!(human.contains(&format!("converge   {} (preference, driven by alice", c.id)), "{human}");
    assert!(human.contains("no report yet"), "{human}");

    std::fs::write(&mark, b"").unwrap();
    assert_eq!(exit_code(&mut run, 120), Some(0));
    let s = status(&env, &repo);
    assert!(s.converging.is_empty() && s.runs.is_empty(), "{s:?}");
    let listed = env.mas_ok(&repo, &["run", "list"]);
    assert!(!listed.contains(&c.id) && !listed.contains("unreadable"), "{listed}");
}

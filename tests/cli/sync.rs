//! Two clones exchanging records through a real bare remote.

use crate::common::*;
use crate::killpoints::{self, RENAMES, SPAWNS, Trigger};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};

struct Pair {
    env: TestEnv,
    a: PathBuf,
    b: PathBuf,
}

fn pair() -> Pair {
    let env = TestEnv::new();
    let team = env.team(&["alice", "bob"]).named("a").remote().build();
    let b = env.clone_of(team.remote(), "b");
    Pair { env, a: team.repo, b }
}

pub(crate) fn append(env: &TestEnv, dir: &Path, agent: &str, refname: Option<&str>, n: i64) {
    let payload = format!(r#"{{"n":{n}}}"#);
    let mut args = vec!["--agent", agent, "record", "append", "--kind", "note", "--payload", &payload];
    if let Some(r) = refname {
        args.extend(["--ref", r]);
    }
    env.mas_quiet_ok(dir, &args);
}

fn ns(env: &TestEnv, dir: &Path, refname: &str) -> Vec<i64> {
    let (_, json) = log_json(env, dir, refname);
    json[0]["records"].as_array().unwrap().iter().map(|r| r["payload"]["n"].as_i64().unwrap()).collect()
}

#[test]
fn records_from_each_clone_appear_in_the_other() {
    let Pair { env, a, b } = pair();
    append(&env, &a, "alice", None, 1);
    append(&env, &b, "bob", None, 2);
    append(&env, &a, "alice", Some("refs/mas/shared/x"), 10);
    append(&env, &b, "bob", Some("refs/mas/shared/x"), 20);

    env.mas_quiet_ok(&a, &["sync"]);
    let out = env.mas_ok(&b, &["sync", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let actions: Vec<&str> =
        report["events"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert!(actions.contains(&"rebased") && actions.contains(&"created") && actions.contains(&"pushed"), "{actions:?}");
    env.mas_quiet_ok(&a, &["sync"]);

    for dir in [&a, &b] {
        assert_eq!(ns(&env, dir, "refs/mas/journal/alice"), vec![1]);
        assert_eq!(ns(&env, dir, "refs/mas/journal/bob"), vec![2]);
        assert_eq!(ns(&env, dir, "refs/mas/shared/x"), vec![20, 10]);
        let (code, _) = log_json(&env, dir, "refs/mas/shared/x");
        assert_eq!(code, Some(0), "re-parented records still verify");
    }
    assert_eq!(env.git(&a, &["rev-parse", "refs/mas/shared/x"]), env.git(&b, &["rev-parse", "refs/mas/shared/x"]));
    // A second sync has nothing to do.
    let out = env.mas(&a, &["sync", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["events"].as_array().unwrap().len(), 0);
}

#[test]
fn a_stale_push_is_rejected_then_recovered_by_a_refetch_and_never_forced() {
    let Pair { env, a, b } = pair();
    append(&env, &a, "alice", Some("refs/mas/shared/x"), 1);
    env.mas_quiet_ok(&a, &["sync"]);
    env.mas_quiet_ok(&b, &["sync"]);
    // Both clones add to the shared chain; the remote has only the first record.
    append(&env, &a, "alice", Some("refs/mas/shared/x"), 2);
    append(&env, &b, "bob", Some("refs/mas/shared/x"), 3);
    // Between b's fetch and b's push, a pushes: b's push is stale. A pre-push hook makes it so.
    let hook = b.join(".git/hooks/pre-push");
    let marker = env.root().join("hook-ran");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\nif [ ! -e '{m}' ]; then touch '{m}'; cd '{a}' && '{bin}' sync >/dev/null 2>&1; fi\nexit 0\n",
            m = marker.display(),
            a = a.display(),
            bin = BIN
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();

    let out = env.mas(&b, &["sync", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let events = report["events"].as_array().unwrap();
    let rejected = events.iter().position(|e| e["action"] == "rejected" && e["ref"] == "refs/mas/shared/x");
    let pushed = events.iter().rposition(|e| e["action"] == "pushed" && e["ref"] == "refs/mas/shared/x");
    assert!(rejected.is_some() && pushed.is_some() && rejected < pushed, "{events:#?}");
    assert!(report["rounds"].as_u64().unwrap() >= 2);
    assert!(marker.exists());
    env.mas_quiet_ok(&a, &["sync"]);
    // Nothing was lost: all three records, in both clones and on the remote.
    for dir in [&a, &b] {
        let mut got = ns(&env, dir, "refs/mas/shared/x");
        got.sort();
        assert_eq!(got, vec![1, 2, 3]);
    }
    let remote = env.root().join("remote.git");
    assert_eq!(env.git(&remote, &["rev-list", "--count", "refs/mas/shared/x"]), "3");
}

/// Two clones where alice's journal moved on both sides: a's side is on the remote, b has not
/// synced since.
fn diverged_pair() -> Pair {
    let Pair { env, a, b } = pair();
    append(&env, &a, "alice", None, 1);
    env.mas_quiet_ok(&a, &["sync"]);
    env.mas_quiet_ok(&b, &["sync"]);
    append(&env, &a, "alice", None, 2);
    append(&env, &b, "alice", None, 3);
    env.mas_quiet_ok(&a, &["sync"]);
    Pair { env, a, b }
}

#[test]
fn an_agents_own_chain_written_from_two_clones_is_reported_diverged_and_left_alone() {
    let Pair { env, b, .. } = diverged_pair();
    let before = env.git(&b, &["rev-parse", "refs/mas/journal/alice"]);
    let out = env.mas(&b, &["sync"]);
    assert_eq!(out.status.code(), Some(5));
    assert!(stdout(&out).contains("diverged"), "{}", stdout(&out));
    assert!(stderr(&out).contains("refs/mas/journal/alice"));
    assert_eq!(env.git(&b, &["rev-parse", "refs/mas/journal/alice"]), before);
}

#[test]
fn many_refs_go_in_one_pattern_push_which_still_never_forces_a_diverged_chain() {
    let Pair { env, a, b } = diverged_pair();
    // b has more new refs than sync names one by one, and alice's journal moved on both sides.
    let many = 70;
    for i in 0..many {
        append(&env, &b, "bob", Some(&format!("refs/mas/shared/s{i:03}")), i);
    }
    let remote = env.root().join("remote.git");
    let remote_journal = env.git(&remote, &["rev-parse", "refs/mas/journal/alice"]);
    let out = env.mas(&b, &["sync", "--json"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let unresolved: Vec<(&str, &str)> = report["unresolved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["ref"].as_str().unwrap(), u["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(unresolved, [("refs/mas/journal/alice", "diverged")], "{report:#}");
    let pushed = report["events"].as_array().unwrap().iter().filter(|e| e["action"] == "pushed").count();
    assert_eq!(pushed, many as usize, "{report:#}");
    assert_eq!(env.git(&remote, &["rev-parse", "refs/mas/journal/alice"]), remote_journal, "never forced");
    for i in [0, 35, 69] {
        let r = format!("refs/mas/shared/s{i:03}");
        assert_eq!(env.git(&remote, &["rev-parse", &r]), env.git(&b, &["rev-parse", &r]));
    }
    env.mas_quiet_ok(&a, &["sync"]);
    assert_eq!(ns(&env, &a, "refs/mas/shared/s069"), [69]);
}

#[test]
fn sync_asks_the_remote_for_refs_mas_only_even_when_the_clone_says_protocol_v0() {
    let Pair { env, a, b } = pair();
    // The remote holds branches and tags beside the team's records.
    for i in 0..20 {
        env.git_quiet_ok(&a, &["branch", &format!("topic-{i}")]);
        env.git_quiet_ok(&a, &["tag", &format!("v0.{i}")]);
    }
    env.git_quiet_ok(&a, &["push", "--quiet", "origin", "refs/heads/*:refs/heads/*", "refs/tags/*:refs/tags/*"]);
    append(&env, &a, "alice", None, 1);
    env.mas_quiet_ok(&a, &["sync"]);
    env.git_quiet_ok(&b, &["config", "protocol.version", "0"]);
    let trace = env.root().join("packets.txt");
    let out = env.mas_cmd(&b).args(["sync"]).env("GIT_TRACE_PACKET", &trace).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let packets = std::fs::read_to_string(&trace).unwrap();
    let fetch: Vec<&str> = packets.lines().filter(|l| l.contains("fetch<") || l.contains("fetch>")).collect();
    assert!(fetch.iter().any(|l| l.ends_with("fetch> ref-prefix refs/mas/")), "{fetch:#?}");
    let advertised: Vec<&str> =
        fetch.iter().filter_map(|l| l.split("fetch< ").nth(1)).filter(|l| l.contains(" refs/")).collect();
    assert!(advertised.iter().any(|l| l.ends_with(" refs/mas/journal/alice")), "{advertised:#?}");
    assert!(advertised.iter().all(|l| l.contains(" refs/mas/")), "only refs/mas/* advertised: {advertised:#?}");
    assert_eq!(ns(&env, &b, "refs/mas/journal/alice"), [1]);
}

#[test]
fn sync_with_a_missing_remote_fails_cleanly() {
    let env = TestEnv::new();
    let repo = env.repo("lonely");
    let before = env.refs(&repo);
    let out = env.mas(&repo, &["sync", "nowhere"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("git fetch from nowhere failed"), "{}", stderr(&out));
    assert_eq!(env.refs(&repo), before);
}

/// A remote name git would refuse, or could never be given (1 MB in `mas.remote`; 100 KB on the
/// command line, under the kernel's limit for one argument), is a usage error (exit 2) with a short
/// message, not "cannot run git" (exit 3) or a fetch's failure; nothing changes.
#[test]
fn a_huge_or_malformed_remote_name_is_a_usage_error() {
    let env = TestEnv::new();
    let repo = env.repo("names");
    env.agents(&repo, &["alice"]);
    let before = env.refs(&repo);
    let expect_usage = |out: &std::process::Output, what: &str, why: &str| {
        let err = stderr(out);
        let start: String = err.chars().take(300).collect();
        assert_eq!(out.status.code(), Some(2), "{what}: {start}");
        assert!(err.contains(why), "{what}: {start}");
        assert!(err.len() < 1000, "{what}: the name is not printed whole: {} bytes", err.len());
    };
    let long = "a".repeat(100 * 1024);
    expect_usage(&env.mas(&repo, &["sync", &long]), "100 KB argument", "longer than 4096 bytes");
    expect_usage(&env.mas(&repo, &["sync", "a..b"]), "a..b", "not a valid remote name");
    expect_usage(&env.mas(&repo, &["sync", "--", "-x"]), "-x", "starts with '-'");
    let config = repo.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!("[mas]\n\tremote = {}\n", "a".repeat(1 << 20)));
    std::fs::write(&config, text).unwrap();
    expect_usage(&env.mas(&repo, &["sync"]), "1 MB mas.remote", "longer than 4096 bytes");
    assert_eq!(env.refs(&repo), before);
}

#[test]
fn a_stale_lock_in_the_way_is_named_and_sync_does_not_exit_0_while_refs_differ() {
    let Pair { env, a, b } = pair();
    append(&env, &a, "alice", Some("refs/mas/shared/x"), 1);
    env.mas_quiet_ok(&a, &["sync"]);
    env.mas_quiet_ok(&b, &["sync"]);
    append(&env, &a, "alice", Some("refs/mas/shared/x"), 2);
    append(&env, &a, "alice", None, 3);
    env.mas_quiet_ok(&a, &["sync"]);
    // Locks a crashed writer left behind in b: on a ref b has (behind the remote) and on one it
    // lacks.
    let git_dir = b.join(".git");
    let shared_lock = git_dir.join("refs/mas/shared/x.lock");
    std::fs::write(&shared_lock, "0000000000000000000000000000000000000000\n").unwrap();
    std::fs::create_dir_all(git_dir.join("refs/mas/journal")).unwrap();
    let journal_lock = git_dir.join("refs/mas/journal/alice.lock");
    std::fs::write(&journal_lock, "").unwrap();
    let before = env.git(&b, &["rev-parse", "refs/mas/shared/x"]);

    let started = std::time::Instant::now();
    let out = env.mas(&b, &["sync", "--json"]);
    assert_eq!(out.status.code(), Some(5), "refs differ from the remote: {}", stderr(&out));
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "a lock is not spun on");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut locked: Vec<(String, String)> = report["unresolved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            assert_eq!(u["reason"], "locked", "{u}");
            (u["ref"].as_str().unwrap().to_string(), u["locks"][0]["path"].as_str().unwrap().to_string())
        })
        .collect();
    locked.sort();
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap().display().to_string();
    assert_eq!(
        locked,
        vec![
            ("refs/mas/journal/alice".to_string(), canon(&journal_lock)),
            ("refs/mas/shared/x".to_string(), canon(&shared_lock)),
        ]
    );
    assert_eq!(env.git(&b, &["rev-parse", "refs/mas/shared/x"]), before, "nothing forced past the lock");
    // In text, the message names the lock file and the remedy.
    let out = env.mas(&b, &["sync"]);
    assert_eq!(out.status.code(), Some(5));
    let err = stderr(&out);
    assert!(err.contains("refs/mas/shared/x.lock") && err.contains("remove the lock"), "{err}");

    // Once the locks are gone, the next sync completes and both sides agree.
    std::fs::remove_file(&shared_lock).unwrap();
    std::fs::remove_file(&journal_lock).unwrap();
    env.mas_quiet_ok(&b, &["sync"]);
    let remote = env.root().join("remote.git");
    assert_eq!(mas_refs(&env, &b), mas_refs(&env, &remote));
    assert_eq!(ns(&env, &b, "refs/mas/shared/x"), vec![2, 1]);
}

/// `refname objectname` of every ref under refs/mas/, one a line.
pub(crate) fn mas_refs(env: &TestEnv, dir: &Path) -> String {
    env.git(dir, &["for-each-ref", "--format=%(refname) %(objectname)", "refs/mas/"])
}

/// A `git daemon` serving `base` on 127.0.0.1 (push enabled), stopped when dropped. `git daemon`
/// is a wrapper that runs `git-daemon` as its child, so the daemon gets a process group of its
/// own and the whole group is killed: killing the wrapper alone left `git-daemon` listening after
/// every run of the suite.
struct Daemon {
    child: std::process::Child,
    port: u16,
}

impl Daemon {
    fn start(env: &TestEnv, base: &Path) -> Daemon {
        // A port the kernel just handed out, released for the daemon to bind.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut cmd = env.git_cmd(base);
        cmd.args(["daemon", "--export-all", "--enable=receive-pack", "--reuseaddr", "--listen=127.0.0.1"])
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", base.display()))
            .arg(base)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0);
        let child = cmd.spawn().expect("start git daemon");
        let daemon = Daemon { child, port };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "git daemon did not listen on {port}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        daemon
    }

    fn url(&self, repo: &str) -> String {
        format!("git://127.0.0.1:{}/{repo}", self.port)
    }
}

impl Daemon {
    /// Stops it and asserts that it is gone: no process of its group runs, its port refuses.
    fn stop(self) {
        let (pgid, port) = (self.child.id(), self.port);
        drop(self);
        assert_eq!(group_members(pgid), vec![], "the daemon's processes are gone");
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err(), "nothing listens on {port}");
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // `stop` asserts that nothing is left; a drop cannot (it may be unwinding already).
        let _ = kill_group_and_wait(self.child.id());
        let _ = self.child.wait();
    }
}

#[test]
fn a_git_daemon_a_test_started_is_gone_with_its_child_when_stopped() {
    let env = TestEnv::new();
    let served = env.root().join("served");
    std::fs::create_dir_all(&served).unwrap();
    let daemon = Daemon::start(&env, &served);
    let wrapper = daemon.child.id();
    let under: Vec<Proc> = processes().into_iter().filter(|p| p.ppid == wrapper).collect();
    assert!(under.iter().any(|p| p.name == "git-daemon"), "git daemon runs git-daemon under it: {under:?}");
    daemon.stop();
    let alive: Vec<Proc> = processes().into_iter().filter(|p| under.iter().any(|u| u.pid == p.pid)).collect();
    assert_eq!(alive, vec![], "no git-daemon the test started is alive");
}

/// Every payload `n` on a chain, sorted (duplicates kept, so that a duplicate shows).
pub(crate) fn sorted_ns(env: &TestEnv, dir: &Path, refname: &str) -> Vec<i64> {
    let mut got = ns(env, dir, refname);
    got.sort();
    got
}

/// What one clone saw while looping.
#[derive(Default)]
pub(crate) struct Tally {
    shared: Vec<i64>,
    journal: Vec<i64>,
    pub(crate) codes: Vec<i32>,
}

/// Each clone (its agent is `names[c]`) loops for `run_for`: one append to the shared chain, one
/// to its own journal, one sync (which must exit 0 or 5); then every clone syncs twice over (the
/// second pass carries the last ones' records to the first ones).
pub(crate) fn sync_loop(env: &TestEnv, clones: &[PathBuf], names: &[&str], run_for: std::time::Duration) -> Vec<Tally> {
    let start = std::time::Instant::now();
    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let handles: Vec<_> = clones
            .iter()
            .enumerate()
            .map(|(c, dir)| {
                s.spawn(move || {
                    let agent = names[c];
                    let mut t = Tally::default();
                    let mut i = 0;
                    while start.elapsed() < run_for {
                        i += 1;
                        let n = (c as i64) * 100_000 + i;
                        let payload = format!(r#"{{"n":{n}}}"#);
                        let shared = ["--agent", agent, "record", "append", "--kind", "note"];
                        let out = env
                            .mas(dir, &[&shared[..], &["--ref", "refs/mas/shared/x", "--payload", &payload]].concat());
                        if out.status.success() {
                            t.shared.push(n);
                        }
                        let out = env.mas(dir, &[&shared[..], &["--payload", &payload]].concat());
                        if out.status.success() {
                            t.journal.push(n);
                        }
                        let out = env.mas(dir, &["sync"]);
                        let code = out.status.code().unwrap_or(-1);
                        assert!(code == 0 || code == 5, "sync in {agent} exited {code}: {}", stderr(&out));
                        t.codes.push(code);
                    }
                    t
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for _ in 0..2 {
        for dir in clones {
            env.mas_quiet_ok(dir, &["sync"]);
        }
    }
    tallies
}

/// Nothing lost: every acknowledged append exactly once in every clone, nothing else, and every
/// clone's `refs/mas/` the same as the remote's (`remote`, the served bare repository).
pub(crate) fn assert_nothing_lost(env: &TestEnv, clones: &[PathBuf], names: &[&str], tallies: &[Tally], remote: &Path) {
    let mut acked: Vec<i64> = tallies.iter().flat_map(|t| t.shared.iter().copied()).collect();
    acked.sort();
    assert!(acked.len() >= clones.len(), "every clone appended at least once: {}", acked.len());
    let remote_refs = mas_refs(env, remote);
    for (c, dir) in clones.iter().enumerate() {
        assert_eq!(sorted_ns(env, dir, "refs/mas/shared/x"), acked, "shared chain in {}", names[c]);
        for (j, t) in tallies.iter().enumerate() {
            assert_eq!(sorted_ns(env, dir, &format!("refs/mas/journal/{}", names[j])), t.journal);
        }
        assert_eq!(mas_refs(env, dir), remote_refs, "{} agrees with the remote", names[c]);
    }
}

/// A directory to serve (`<root>/served`) holding an empty bare repository `remote.git`.
fn served_remote(env: &TestEnv) -> (PathBuf, PathBuf) {
    let served = env.root().join("served");
    std::fs::create_dir_all(&served).unwrap();
    let remote = served.join("remote.git");
    env.git_quiet_ok(env.root(), &["init", "--quiet", "--bare", "-b", "main", remote.to_str().unwrap()]);
    (served, remote)
}

#[test]
fn six_clones_syncing_through_a_git_daemon_lose_nothing_and_rarely_exit_5() {
    let env = TestEnv::new();
    let (served, remote) = served_remote(&env);
    let names = ["c0", "c1", "c2", "c3", "c4", "c5"];
    let seed = env.repo("seed");
    env.agents(&seed, &names);
    let daemon = Daemon::start(&env, &served);
    let url = daemon.url("remote.git");
    env.git_quiet_ok(&seed, &["push", "--quiet", &url, "main"]);
    let clones: Vec<PathBuf> = names
        .iter()
        .map(|n| {
            let dir = env.root().join(n);
            env.git_quiet_ok(env.root(), &["clone", "--quiet", &url, dir.to_str().unwrap()]);
            dir
        })
        .collect();

    // 20 s of looping: the figure the target is stated for.
    let tallies = sync_loop(&env, &clones, &names, std::time::Duration::from_secs(20));
    daemon.stop();
    assert_nothing_lost(&env, &clones, &names, &tallies, &remote);
    // The rate of incomplete syncs. The target (at most 10 %, no clone more than 3 in a row) is
    // measured by bench/sync-contention.sh on a release build; this test runs a debug build beside
    // whatever else the machine does, so it asserts looser bounds that still catch a sync that
    // gives up after a round or two (which measured 44-56 % here).
    let syncs: usize = tallies.iter().map(|t| t.codes.len()).sum();
    let fives: usize = tallies.iter().map(|t| t.codes.iter().filter(|&&c| c == 5).count()).sum();
    let worst_run =
        tallies.iter().map(|t| t.codes.split(|&c| c != 5).map(<[i32]>::len).max().unwrap_or(0)).max().unwrap_or(0);
    eprintln!("{fives} of {syncs} syncs exited 5; longest run of 5s in one clone: {worst_run}");
    assert!(syncs >= 6, "{syncs} syncs");
    assert!(fives * 4 <= syncs, "{fives} of {syncs} syncs exited 5");
    assert!(worst_run <= 6, "a clone exited 5 {worst_run} times in a row");
}

/// One kill point: where strace kills, and what it stops.
struct KillPoint {
    name: &'static str,
    trigger: Trigger,
    n: usize,
}

/// The points of one sync (a fetch that updates two staged refs, a fast-forward, a re-parented
/// record, a compare-and-swap, a push of two refs) where a SIGKILL lands. Traced as its own
/// process only, the counts are git-mas's: each child spawn (clone), each child's end (wait4),
/// each rename (ref updates, object writes). Following children, the first process to reach the
/// count dies: the fetch, which comes first. `flock` is the sync lock sync takes first.
fn kill_points() -> Vec<KillPoint> {
    let own = |syscall| Trigger::on(syscall).own_process();
    let point = |name, trigger, n| KillPoint { name, trigger, n };
    vec![
        point("taking the sync lock", own("flock"), 1),
        point("before the fetch starts", own(SPAWNS), 1),
        point("after the fetch ended", own("wait4"), 1),
        point("at the 1st rename", own(RENAMES), 1),
        point("at the 2nd rename", own(RENAMES), 2),
        point("at the 3rd rename", own(RENAMES), 3),
        point("before the push starts", own(SPAWNS), 2),
        point("after the push ended", own("wait4"), 2),
        point("fetch, at its 1st ref update", Trigger::on(RENAMES), 1),
        point("fetch, at its 2nd ref update", Trigger::on(RENAMES), 2),
        point("fetch, after unpacking", Trigger::on("wait4"), 1),
    ]
}

#[test]
fn a_sync_killed_at_each_rename_and_child_point_is_completed_by_the_next_sync() {
    let env = TestEnv::new();
    let (served, remote) = served_remote(&env);
    let a = env.repo("a");
    env.agents(&a, &["alice", "bob"]);
    // Over git://, so that only this machine's side of the exchange is traced and killed.
    let daemon = Daemon::start(&env, &served);
    let url = daemon.url("remote.git");
    env.git_quiet_ok(&a, &["remote", "add", "origin", &url]);
    env.git_quiet_ok(&a, &["push", "--quiet", "origin", "main"]);
    let b = env.root().join("b");
    env.git_quiet_ok(env.root(), &["clone", "--quiet", &url, b.to_str().unwrap()]);
    // The kill points are sync's: git's detached auto-maintenance (which a fetch may start) would be
    // traced and killed too, and leave its own packed-refs.lock.
    env.git_quiet_ok(&b, &["config", "maintenance.auto", "false"]);
    env.git_quiet_ok(&b, &["config", "gc.auto", "0"]);

    let points = kill_points();
    let mut acked = Vec::new();
    let mut killed = Vec::new();
    let mut left_locks = Vec::new();
    let mut swept_at = Vec::new();
    for (k, point) in points.iter().enumerate() {
        let n = |i: i64| (k as i64) * 10 + i;
        // The remote moves on (a's journal and the shared chain), and b has records of its own.
        append(&env, &a, "alice", None, n(1));
        append(&env, &a, "alice", Some("refs/mas/shared/x"), n(2));
        env.mas_quiet_ok(&a, &["sync"]);
        append(&env, &b, "bob", None, n(3));
        append(&env, &b, "bob", Some("refs/mas/shared/x"), n(4));
        acked.extend([n(2), n(4)]);

        let mut sync = env.mas_cmd(&b);
        sync.arg("sync");
        let out = killpoints::kill_at(&sync, &point.trigger, point.n).output;
        if !out.status.success() {
            killed.push(point.name);
        }
        if !point.trigger.follow {
            // Only git-mas is traced: when the point is reached, git-mas itself dies of the signal
            // (strace passes it on), and a child's death shows as a plain failure.
            use std::os::unix::process::ExitStatusExt;
            assert!(out.status.success() || out.status.signal() == Some(9), "{}: {:?}", point.name, out.status);
        }

        // The next sync completes what the killed one left. A compare-and-swap killed at its rename
        // leaves its lock file: sync names it and exits 5, and once it is removed (as the message
        // says), sync completes.
        let out = env.mas(&b, &["sync", "--json"]);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        // A fetch killed at a ref update leaves its lock in the staging namespace; the next sync
        // removes it (only a sync, holding the sync lock, writes there) and says so.
        let swept = report["swept"].as_array().unwrap();
        if point.name.starts_with("fetch, at its") {
            assert!(
                swept.iter().any(|p| p.as_str().unwrap().contains("refs/mas-remote/")),
                "{}: {report:#}",
                point.name
            );
        }
        swept_at.extend(swept.iter().map(|_| point.name));
        if out.status.code() == Some(5) {
            for u in report["unresolved"].as_array().unwrap() {
                assert_eq!(u["reason"], "locked", "{}: {u}", point.name);
                for lock in u["locks"].as_array().unwrap() {
                    let path = PathBuf::from(lock["path"].as_str().unwrap());
                    // A lock already removed for an earlier report is skipped.
                    if path.exists() {
                        std::fs::remove_file(&path).unwrap();
                        left_locks.push(format!("{}: {}", point.name, path.file_name().unwrap().to_string_lossy()));
                    }
                }
            }
            let out = env.mas(&b, &["sync"]);
            assert_eq!(out.status.code(), Some(0), "{}: {}", point.name, stderr(&out));
        } else {
            assert_eq!(out.status.code(), Some(0), "{}: {}", point.name, stderr(&out));
        }
        assert_eq!(mas_refs(&env, &b), mas_refs(&env, &remote), "{}: b agrees with the remote", point.name);
        let mut expected = acked.clone();
        expected.sort();
        assert_eq!(sorted_ns(&env, &b, "refs/mas/shared/x"), expected, "{}: nothing lost or doubled", point.name);
        let fsck = env.git_cmd(&b).args(["fsck", "--no-dangling", "--no-progress"]).output().unwrap();
        assert!(fsck.status.success() && fsck.stderr.is_empty(), "{}: {}", point.name, stderr(&fsck));
    }
    env.mas_quiet_ok(&a, &["sync"]);
    let mut expected = acked.clone();
    expected.sort();
    assert_eq!(sorted_ns(&env, &a, "refs/mas/shared/x"), expected);
    let fsck = env.git_cmd(&remote).args(["fsck", "--no-dangling", "--no-progress"]).output().unwrap();
    assert!(fsck.status.success(), "{}", stderr(&fsck));
    let missed: Vec<&str> = points.iter().map(|p| p.name).filter(|n| !killed.contains(n)).collect();
    eprintln!(
        "killed at {} of {} points (not reached: {missed:?}); stale locks left and named: {left_locks:?}; \
         staging locks swept after: {swept_at:?}",
        killed.len(),
        points.len()
    );
    assert!(killed.len() >= 10, "the kill points were reached: only {killed:?}");
    daemon.stop();
}

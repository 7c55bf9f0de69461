//! SIGKILL at every ref update and object write of `record append` (an agent's own journal, a
//! shared chain, a packed chain, a new chain), `focus publish` and `snapshot --publish`: after each
//! kill the repository is consistent, and retrying the same command succeeds and adds its record
//! once.
//!
//! The kill points are found, not listed: gix writes each loose object to a temporary file and
//! renames it into place (`renameat`), then the store creates `<ref>.lock`, writes the new id into
//! it and renames it over the ref (`openat`, `write`, `rename`; no fsync). `packed-refs.lock` stays
//! in the lock trigger so that a return to taking it would be swept too. So a sweep kills at every rename, at the `openat`s that
//! create those locks, and at every `write` (object bytes, the lock's contents, the acknowledgement
//! printed after the ref moved); and, should the command start child processes (these do not
//! today; a first run counts them), around each child.
//!
//! A kill at the lock's rename or while the lock is written leaves the lock behind: the retry must
//! then fail within seconds naming it, and succeed once it is removed. A kill after the ref moved
//! leaves the record in; `record append` and `focus publish` carry no request id, so their retry
//! appends a second record, while `snapshot --publish` sees its frame is current and adds none.

use crate::common::*;
use crate::killpoints::{self, Attempt, Trigger};
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The kill points for a command that moves `chain` (a ref name) in the repository at `git_dir`,
/// and, if it runs child processes, around each of them.
fn triggers(git_dir: &Path, chain: &str, children: usize) -> Vec<Trigger> {
    let mut triggers = vec![
        Trigger::on(killpoints::RENAMES),
        // Creating the ref's lock, and packed-refs' (gix takes it to update a packed ref).
        Trigger::on_paths("openat", [git_dir.join(format!("{chain}.lock")), git_dir.join("packed-refs.lock")]),
        Trigger::on("write"),
    ];
    if children > 0 {
        triggers.extend(Trigger::child_processes());
    }
    triggers
}

/// How many records a successful retry leaves, beyond those before the killed run.
#[derive(Clone, Copy)]
enum OnRetry {
    /// Every invocation appends one record (`record append`, `focus publish`): the killed run's
    /// record, if it got in, plus the retry's.
    Appends,
    /// The retry publishes only what is not there yet (`snapshot --publish` publishes a frame only
    /// when the hash changed): one record in all.
    Completes,
}

/// One killed run, as the survey reports it.
struct Row {
    point: String,
    /// Locks and temporary files the killed run added to the git directory.
    left: Vec<String>,
    /// Records the killed run had written (0 or 1).
    committed: i64,
    /// Those of `left` still there after the retry.
    after_retry: Vec<String>,
    problems: Vec<String>,
}

struct Survey {
    command: String,
    swept: Vec<(String, usize)>,
    rows: Vec<Row>,
    /// Problems in runs that were not killed (the last run of each sweep).
    completed: Vec<String>,
}

impl Survey {
    fn kills(&self) -> usize {
        self.swept.iter().map(|(_, n)| n).sum()
    }

    fn table(&self) -> String {
        let mut s = format!("{} — {} kill points {:?}\n", self.command, self.kills(), self.swept);
        for r in &self.rows {
            s.push_str(&format!(
                "  {:<45} committed={} left={} after-retry={}{}\n",
                r.point,
                r.committed,
                summary(&r.left),
                summary(&r.after_retry),
                if r.problems.is_empty() { String::new() } else { format!("\n      PROBLEMS: {:?}", r.problems) }
            ));
        }
        for p in &self.completed {
            s.push_str(&format!("  completed run: {p}\n"));
        }
        s
    }

    /// Every trigger killed at least once (each was chosen because the command makes that call),
    /// and no run left a problem.
    fn assert_consistent(&self) {
        for (trigger, kills) in &self.swept {
            assert!(*kills > 0, "{}: no kill at {trigger}; the trigger list is stale\n{}", self.command, self.table());
        }
        let bad = self.rows.iter().filter(|r| !r.problems.is_empty()).count();
        assert!(
            bad == 0 && self.completed.is_empty(),
            "{}: {bad} of {} kill points inconsistent\n{}",
            self.command,
            self.rows.len(),
            self.table()
        );
        eprintln!("{}", self.table());
    }
}

/// Leftover files, object temporaries counted rather than named: `[refs/x.lock, objects/.tmp* x2]`.
fn summary(files: &[String]) -> String {
    let temps = files.iter().filter(|f| f.starts_with("objects/.tmp")).count();
    let mut shown: Vec<String> = files.iter().filter(|f| !f.starts_with("objects/.tmp")).cloned().collect();
    if temps > 0 {
        shown.push(format!("objects/.tmp* x{temps}"));
    }
    format!("[{}]", shown.join(", "))
}

/// Records on `chain` (0 when the ref does not exist).
fn chain_len(env: &TestEnv, repo: &Path, chain: &str) -> i64 {
    let exists = env.git_cmd(repo).args(["rev-parse", "--verify", "--quiet", chain]).output().unwrap();
    if !exists.status.success() {
        return 0;
    }
    let out = env.git_cmd(repo).args(["rev-list", "--count", chain, "--"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(-1)
}

/// Payloads on `chain`, newest first.
fn payloads(env: &TestEnv, repo: &Path, chain: &str) -> Vec<serde_json::Value> {
    let (_, json) = log_json(env, repo, chain);
    json[0]["records"].as_array().map(|rs| rs.iter().map(|r| r["payload"].clone()).collect()).unwrap_or_default()
}

/// Sweeps `args(point)` (the arguments of `git-mas` for the kill point named `point`) over the
/// triggers for `chain`, checking after each run; `prepare` runs before each killed run.
fn sweep(
    env: &TestEnv,
    repo: &Path,
    chain: &str,
    on_retry: OnRetry,
    args: impl Fn(&str) -> Vec<String>,
    prepare: impl Fn(),
    extra: impl Fn(&str, i64) -> Vec<String>,
) -> Survey {
    let git_dir: PathBuf = repo.join(".git");
    let command = |point: &str| -> Command {
        let mut cmd = env.mas_cmd(repo);
        cmd.args(args(point));
        cmd
    };
    // One run first, unkilled: it must succeed, and it shows whether the command runs children.
    let (children, probe) = killpoints::child_count(&command("probe"));
    assert!(probe.status.success(), "{}", stderr(&probe));
    let before = Cell::new(0);
    let left_before = RefCell::new(Vec::new());
    let mut rows = Vec::new();
    let mut completed = Vec::new();
    let swept = killpoints::sweep(
        &triggers(&git_dir, chain, children),
        |trigger, n| {
            prepare();
            before.set(chain_len(env, repo, chain));
            *left_before.borrow_mut() = killpoints::leftovers(&git_dir);
            command(&killpoints::point(trigger, n))
        },
        |attempt: &Attempt| {
            let point = attempt.point();
            let before = before.get();
            let now = chain_len(env, repo, chain);
            if !attempt.killed {
                let out = &attempt.output;
                if !out.status.success() {
                    completed.push(format!("{point}: exited {:?}: {}", out.status.code(), stderr(out)));
                }
                if now != before + 1 {
                    completed.push(format!("{point}: {} records added, expected 1", now - before));
                }
                completed.extend(killpoints::check_repository(env, repo).into_iter().map(|p| format!("{point}: {p}")));
                return;
            }
            let old = left_before.borrow();
            let left: Vec<String> = killpoints::leftovers(&git_dir).into_iter().filter(|f| !old.contains(f)).collect();
            let committed = now - before;
            let mut problems = Vec::new();
            if !(0..=1).contains(&committed) {
                problems.push(format!("the killed run added {committed} records"));
            }
            problems
                .extend(killpoints::check_repository(env, repo).into_iter().map(|p| format!("after the kill: {p}")));
            let retried = killpoints::retry(env, repo, || command(&point));
            problems.extend(retried.problems);
            if retried.output.is_some() {
                let added = chain_len(env, repo, chain) - before;
                let expected = match on_retry {
                    OnRetry::Appends => committed + 1,
                    OnRetry::Completes => 1,
                };
                if added != expected {
                    problems.push(format!("after the retry {added} records were added, expected {expected}"));
                }
                problems.extend(extra(&point, committed));
                problems.extend(
                    killpoints::check_repository(env, repo).into_iter().map(|p| format!("after the retry: {p}")),
                );
            }
            let still = killpoints::leftovers(&git_dir);
            let after_retry = left.iter().filter(|f| still.contains(f)).cloned().collect();
            rows.push(Row { point, left, committed, after_retry, problems });
        },
    );
    Survey { command: args("<point>").join(" "), swept, rows, completed }
}

/// A fixture repository with agents alice and bob.
fn team(env: &TestEnv, name: &str) -> PathBuf {
    env.team(&["alice", "bob"]).named(name).build().repo
}

/// The killed run's record is on the chain at most once, and the retry's exactly once more.
fn record_once(env: &TestEnv, repo: &Path, chain: &str, point: &str, committed: i64) -> Vec<String> {
    let copies = payloads(env, repo, chain).iter().filter(|p| p["id"] == point).count() as i64;
    if copies == committed + 1 {
        Vec::new()
    } else {
        vec![format!("record {point:?} is on {chain} {copies} times (the killed run wrote {committed})")]
    }
}

fn append_args(agent: &'static str, chain: Option<&'static str>) -> impl Fn(&str) -> Vec<String> {
    move |point| {
        let mut args = vec!["--agent".to_string(), agent.into(), "record".into(), "append".into()];
        if let Some(chain) = chain {
            args.extend(["--ref".to_string(), chain.to_string()]);
        }
        args.extend([
            "--kind".into(),
            "note".into(),
            "--payload".into(),
            serde_json::json!({ "id": point }).to_string(),
        ]);
        args
    }
}

#[test]
fn a_kill_at_any_point_of_an_append_to_an_own_journal_leaves_it_consistent_and_the_retry_appends() {
    let env = TestEnv::new();
    let repo = team(&env, "journal");
    let chain = "refs/mas/journal/alice";
    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note", "--payload", "0"]);
    let survey = sweep(
        &env,
        &repo,
        chain,
        OnRetry::Appends,
        append_args("alice", None),
        || (),
        |point, committed| record_once(&env, &repo, chain, point, committed),
    );
    survey.assert_consistent();
}

#[test]
fn a_kill_at_any_point_of_an_append_to_a_shared_chain_leaves_it_consistent_and_the_retry_appends() {
    let env = TestEnv::new();
    let repo = team(&env, "shared");
    let chain = "refs/mas/shared/crash";
    env.mas_quiet_ok(
        &repo,
        &["--agent", "bob", "record", "append", "--ref", chain, "--kind", "note", "--payload", "0"],
    );
    let survey = sweep(
        &env,
        &repo,
        chain,
        OnRetry::Appends,
        append_args("alice", Some(chain)),
        || (),
        |point, committed| record_once(&env, &repo, chain, point, committed),
    );
    survey.assert_consistent();
}

#[test]
fn a_kill_at_any_point_of_an_append_to_a_packed_chain_leaves_it_consistent_and_the_retry_appends() {
    let env = TestEnv::new();
    let repo = team(&env, "packed");
    let chain = "refs/mas/shared/packed";
    env.mas_quiet_ok(
        &repo,
        &["--agent", "bob", "record", "append", "--ref", chain, "--kind", "note", "--payload", "0"],
    );
    // Before each run the chain's ref is in packed-refs only, as `git gc` and `git maintenance`
    // leave it.
    let pack = || {
        env.git_quiet_ok(&repo, &["pack-refs", "--all"]);
    };
    let survey =
        sweep(&env, &repo, chain, OnRetry::Appends, append_args("alice", Some(chain)), pack, |point, committed| {
            record_once(&env, &repo, chain, point, committed)
        });
    survey.assert_consistent();
}

#[test]
fn a_kill_at_any_point_of_the_first_append_to_a_new_chain_leaves_no_ref_or_a_whole_one() {
    let env = TestEnv::new();
    let repo = team(&env, "new-chain");
    let chain = "refs/mas/shared/new";
    // Every run creates the chain: the ref is deleted before each (its records become dangling).
    let delete = || {
        env.git_quiet_ok(&repo, &["update-ref", "-d", chain]);
    };
    let survey =
        sweep(&env, &repo, chain, OnRetry::Appends, append_args("alice", Some(chain)), delete, |point, committed| {
            record_once(&env, &repo, chain, point, committed)
        });
    survey.assert_consistent();
}

#[test]
fn a_kill_at_any_point_of_a_focus_publish_leaves_the_board_consistent_and_the_retry_publishes() {
    let env = TestEnv::new();
    let repo = team(&env, "focus");
    env.mas_quiet_ok(&repo, &["--agent", "alice", "snapshot", "--publish"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "focus", "publish", "--targets", "src/lib.rs"]);
    let chain = "refs/mas/focus/alice";
    let args = |_: &str| ["--agent", "alice", "focus", "publish", "--targets", "src/lib.rs"].map(String::from).to_vec();
    let survey = sweep(
        &env,
        &repo,
        chain,
        OnRetry::Appends,
        args,
        || (),
        |_, _| {
            // The retry's focus is alice's live focus on the current frame.
            let status = env.mas(&repo, &["--agent", "alice", "focus", "status"]);
            if status.status.success() {
                Vec::new()
            } else {
                vec![format!("focus status after the retry exited {:?}: {}", status.status.code(), stderr(&status))]
            }
        },
    );
    survey.assert_consistent();
}

#[test]
fn a_kill_at_any_point_of_a_snapshot_publish_leaves_the_frame_consistent_and_the_retry_publishes_it_once() {
    let env = TestEnv::new();
    let repo = team(&env, "frame");
    env.mas_quiet_ok(&repo, &["--agent", "alice", "snapshot", "--publish"]);
    let chain = "refs/mas/frame";
    // A task per kill point, so that each run has a new frame to publish.
    let args = |point: &str| {
        ["--agent", "alice", "snapshot", "--publish", "--task", &format!("crash at {point}")].map(String::from).to_vec()
    };
    let survey = sweep(
        &env,
        &repo,
        chain,
        OnRetry::Completes,
        args,
        || (),
        |_, _| {
            // The newest frame is the current one and appears once on the chain.
            let frames = payloads(&env, &repo, chain);
            let newest = frames.first().map(|f| f["hash"].clone()).unwrap_or_default();
            let copies = frames.iter().filter(|f| f["hash"] == newest).count();
            let current = env.mas(&repo, &["frame", "--json"]);
            let current: serde_json::Value = serde_json::from_slice(&current.stdout).unwrap_or_default();
            let mut problems = Vec::new();
            if copies != 1 {
                problems.push(format!("frame {newest} is on the chain {copies} times"));
            }
            if current["hash"] != newest {
                problems.push(format!("git mas frame shows {} while the newest frame is {newest}", current["hash"]));
            }
            problems
        },
    );
    survey.assert_consistent();
}

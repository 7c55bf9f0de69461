//! The human output of the main commands, as snapshots (insta): the gate allowing and blocking,
//! a blocked landing, a tally, a convergence report, and an error with hints. Paths, object ids,
//! hashes, keys and times are redacted, so a snapshot changes only when what a user reads does.
//! `INSTA_UPDATE=always cargo test --test cli output::` rewrites them; review the diff.

use crate::common::*;
use std::path::Path;
use std::process::Output;

/// Both streams and the exit code, as a user sees them.
fn shown(out: &Output) -> String {
    format!("exit: {:?}\n--- stdout\n{}--- stderr\n{}", out.status.code(), stdout(out), stderr(out))
}

/// Runs `body` with the redactions every snapshot here needs.
fn redacted(env: &TestEnv, body: impl FnOnce()) {
    let root = regex_escape(&env.root().display().to_string());
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.add_filter(&root, "[ROOT]");
    settings.add_filter(r"did:key:z[1-9A-HJ-NP-Za-km-z]+", "[DID]");
    settings.add_filter(r"\b[0-9a-f]{64}\b", "[HASH]");
    settings.add_filter(r"\b[0-9a-f]{40}\b", "[OID]");
    settings.add_filter(r"\b[0-9a-f]{12}\b", "[SHORT]");
    settings.add_filter(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\b", "[TIME]");
    // An elapsed time reads "850ms", "3s" or "1m 2s": each is one [DURATION].
    settings.add_filter(r"\b\d+(\.\d+)?\s?(ms|s|m|h)\b(\s\d+(\.\d+)?\s?(ms|s|m|h)\b)*", "[DURATION]");
    // A duration inside a padded column changes the padding after it ("30m left" and "29m 59s
    // left" are padded to one width): the first run of two or more spaces after a [DURATION] on its
    // line becomes two.
    settings.add_filter(r"(\[DURATION\][^\n]*?) {2,}", "${1}  ");
    settings.add_filter(r"/tmp/[^\s)]+", "[TMP]");
    // Milliseconds since the epoch (a run's created_at_ms).
    settings.add_filter(r"\b1\d{12}\b", "[EPOCH_MS]");
    settings.bind(body);
}

/// The flake of `the_frame_the_board_and_a_decision`: `focus list` pads its status column, so a
/// focus listed at "30m left" and one listed a second later at "29m 59s left" differed in the
/// spaces after the redacted duration.
#[test]
fn a_duration_in_a_padded_column_redacts_alike_whatever_its_width() {
    let env = TestEnv::new();
    let line =
        |d: &str| format!("{:<16} {:<40} {}\n", "alice", format!("live, {d} left, current frame"), "src/money.rs");
    redacted(&env, || {
        insta::allow_duplicates! {
            for d in ["30m", "29m 59s", "1h", "59m 59s 999ms"] {
                insta::assert_snapshot!(line(d), @"alice            live, [DURATION] left, current frame  src/money.rs");
            }
        }
    });
}

fn regex_escape(text: &str) -> String {
    text.chars().fold(String::new(), |mut s, c| {
        if "\\.+*?()|[]{}^$".contains(c) {
            s.push('\\');
        }
        s.push(c);
        s
    })
}

fn as_agent(env: &TestEnv, dir: &Path, agent: &str, args: &[&str]) -> Output {
    let mut all = vec!["--agent", agent];
    all.extend_from_slice(args);
    env.mas(dir, &all)
}

#[test]
fn the_gate_allowing_and_blocking() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["alice", "bob"]);
    env.mas_ok(&repo, &["--agent", "alice", "snapshot", "--publish"]);
    env.mas_ok(&repo, &["--agent", "alice", "focus", "publish", "--targets", "src/money.rs"]);
    env.mas_ok(&repo, &["--agent", "bob", "focus", "publish", "--targets", "src/pricing/mod.rs"]);
    let allowed = as_agent(&env, &repo, "bob", &["gate", "--paths", "src/pricing/mod.rs"]);
    let blocked = as_agent(&env, &repo, "bob", &["gate", "--paths", "src/money.rs"]);
    assert_eq!((allowed.status.code(), blocked.status.code()), (Some(0), Some(6)));
    redacted(&env, || {
        insta::assert_snapshot!("gate_allowed", shown(&allowed));
        insta::assert_snapshot!("gate_blocked", shown(&blocked));
    });
}

/// A run `r1` with proposals by alice and bob that each pass the check alone and fail it
/// together, each endorsed twice; returns carol's worktree.
fn two_parts_that_break_together(env: &TestEnv, repo: &Path) -> std::path::PathBuf {
    env.agents(repo, &["alice", "bob", "carol"]);
    let check = "! { test -f a.txt && test -f b.txt; }";
    env.mas_ok(repo, &["--agent", "alice", "run", "start", "--id", "r1", "--goal", "two parts", "--check", check]);
    let wt = |name: &str| {
        std::path::PathBuf::from(env.mas_ok(repo, &["--agent", name, "worktree", "add", name, "--run", "r1"]).trim())
    };
    let (a, b, c) = (wt("alice"), wt("bob"), wt("carol"));
    std::fs::write(a.join("a.txt"), "a\n").unwrap();
    std::fs::write(b.join("b.txt"), "b\n").unwrap();
    env.mas_ok(&a, &["propose"]);
    env.mas_ok(&b, &["propose"]);
    for (dir, whom) in [(&c, "alice"), (&b, "alice"), (&c, "bob"), (&a, "bob")] {
        env.mas_ok(dir, &["endorse", whom]);
    }
    c
}

#[test]
fn a_tally_and_a_blocked_landing_and_its_report() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    let carol = two_parts_that_break_together(&env, &repo);
    let tally = env.mas(&carol, &["tally"]);
    let land = env.mas(&carol, &["land", "--aggregate"]);
    assert_eq!((tally.status.code(), land.status.code()), (Some(0), Some(6)));
    let report = env.mas(&carol, &["report"]);
    redacted(&env, || {
        insta::assert_snapshot!("tally", shown(&tally));
        insta::assert_snapshot!("land_blocked", shown(&land));
        insta::assert_snapshot!("report_blocked", shown(&report));
    });
}

#[test]
fn an_error_with_hints() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["alice"]);
    let no_identity = env.mas(&repo, &["whoami"]);
    let no_frame = env.mas(&repo, &["frame"]);
    assert_eq!((no_identity.status.code(), no_frame.status.code()), (Some(1), Some(1)));
    redacted(&env, || {
        insta::assert_snapshot!("error_no_identity", shown(&no_identity));
        insta::assert_snapshot!("error_no_frame", shown(&no_frame));
    });
}

#[test]
fn the_frame_the_board_and_a_decision() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["alice", "bob"]);
    env.mas_ok(&repo, &["--agent", "alice", "snapshot", "--publish", "--task", "fix money rounding"]);
    env.mas_ok(&repo, &["--agent", "alice", "focus", "publish", "--targets", "src/money.rs"]);
    env.mas_ok(&repo, &["--agent", "bob", "focus", "publish", "--targets", "src/money.rs"]);
    let frame = env.mas(&repo, &["frame", "--top", "3"]);
    let list = env.mas(&repo, &["focus", "list"]);
    let status = as_agent(&env, &repo, "bob", &["focus", "status"]);
    let decide = env.mas(&repo, &["decide", "alice", "bob"]);
    for out in [&frame, &list, &status, &decide] {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    }
    redacted(&env, || {
        insta::assert_snapshot!("frame", shown(&frame));
        insta::assert_snapshot!("focus_list", shown(&list));
        insta::assert_snapshot!("focus_status", shown(&status));
        insta::assert_snapshot!("decide", shown(&decide));
    });
}

#[test]
fn a_run_its_chains_and_the_doctor() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["alice"]);
    env.mas_ok(&repo, &["--agent", "alice", "run", "start", "--id", "r1", "--goal", "one part", "--check", "true"]);
    let list = env.mas(&repo, &["run", "list"]);
    let show = env.mas(&repo, &["run", "show", "r1"]);
    let log = env.mas(&repo, &["log", "refs/mas/runs/r1/meta"]);
    let doctor = env.mas(&repo, &["doctor"]);
    for out in [&list, &show, &log, &doctor] {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    }
    redacted(&env, || {
        insta::assert_snapshot!("run_list", shown(&list));
        insta::assert_snapshot!("run_show", shown(&show));
        insta::assert_snapshot!("log_meta", shown(&log));
        insta::assert_snapshot!("doctor_clean", shown(&doctor));
    });
}

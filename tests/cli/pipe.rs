//! A closed stdout (`git mas log | head -1` once head has exited) ends every command quietly with
//! git's status for it, 141, and never with a panic (101) or a message about the pipe.

use crate::common::*;
use std::path::Path;
use std::process::Command;

/// Runs `git mas ARGS` in `dir` with its stdout the write end of a pipe whose read end is closed;
/// returns the exit code and stderr.
fn into_closed_pipe(env: &TestEnv, dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut cmd: Command = env.mas_cmd(dir);
    let out = cmd.args(args).stdout(writer).output().expect("run git-mas");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn every_command_that_prints_ends_quietly_with_141_when_stdout_is_closed() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["alice", "bob"]);
    let alice = |args: &[&str]| {
        let mut all = vec!["--agent", "alice"];
        all.extend_from_slice(args);
        env.mas_ok(&repo, &all)
    };
    alice(&["snapshot", "--publish"]);
    alice(&["focus", "publish", "--targets", "src/money.rs"]);
    alice(&["record", "append", "--kind", "note"]);
    let run = alice(&["run", "start", "--id", "r1", "--goal", "a goal", "--check", "true"]).trim().to_string();
    let wt = std::path::PathBuf::from(alice(&["worktree", "add", "alice", "--run", &run]).trim());
    std::fs::write(wt.join("status.txt"), "ok\n").unwrap();
    env.mas_quiet_ok(&wt, &["propose"]);

    // Commands whose output is written to stdout, read-only ones first; each with and without
    // --json where it has one.
    let cases: &[&[&str]] = &[
        &["completions", "bash"],
        &["install-man", "--print"],
        &["agent", "list"],
        &["agent", "list", "--json"],
        &["--agent", "alice", "whoami"],
        &["--agent", "alice", "whoami", "--json"],
        &["log"],
        &["log", "--json"],
        &["log", "alice"],
        &["snapshot"],
        &["snapshot", "--json"],
        &["snapshot", "--verify"],
        &["frame"],
        &["frame", "--json"],
        &["focus", "list"],
        &["focus", "list", "--json"],
        &["--agent", "alice", "focus", "status"],
        &["--agent", "alice", "focus", "show"],
        &["decide", "alice", "bob"],
        &["--agent", "bob", "gate", "--paths", "src/money.rs", "--json"],
        &["check", "--records"],
        &["run", "list"],
        &["run", "list", "--json"],
        &["run", "show", "r1"],
        &["tally", "r1"],
        &["tally", "r1", "--json"],
        &["report", "r1"],
        &["skills", "list"],
        &["skills", "list", "--json"],
        &["doctor"],
        &["doctor", "--json"],
        &["bench", "workspace", "--runs", "2"],
        &["bench", "card-alignment", "--pairs", "2", "--episodes", "2"],
        &["--agent", "alice", "record", "append", "--kind", "note"],
        &["init"],
    ];
    let mut failures = Vec::new();
    for args in cases {
        // Run as usual first: a command that prints nothing on stdout has nothing to stop it.
        let normal = env.mas(&repo, args);
        assert!(normal.status.code().is_some_and(|c| c < 100), "git mas {args:?}: {}", stderr(&normal));
        let want = if normal.stdout.is_empty() { normal.status.code() } else { Some(141) };
        let (code, err) = into_closed_pipe(&env, &repo, args);
        if code != want || err.contains("panicked") || err.contains("Broken pipe") {
            failures.push(format!("git mas {}: exit {code:?} (want {want:?}), stderr: {err}", args.join(" ")));
        }
    }
    assert!(failures.is_empty(), "not quiet on a closed stdout:\n{}", failures.join("\n"));
    // Most of them print: the test would not notice a regression if none did.
    let printing = cases.iter().filter(|a| !env.mas(&repo, a).stdout.is_empty()).count();
    assert!(printing >= cases.len() - 3, "only {printing} of {} commands printed", cases.len());
}

//! The human output of the main commands, as snapshots (insta): the gate allowing and blocking,
//! a blocked landing, a tally, a convergence report, an error with hints, and every command that
//! writes (propose, endorse, land, coordinate's narration, hooks and MCP install, sync, skills
//! install). Paths, object ids, hashes, keys, run ids, process ids and times are redacted
//! ([`redacted`]), so a snapshot changes only when what a user reads does.
//! `INSTA_UPDATE=always cargo test --test cli output::` rewrites them; review the diff.

use crate::common::*;
use std::path::Path;
use std::process::Output;

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
    env.mas_quiet_ok(&repo, &["--agent", "alice", "snapshot", "--publish"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "focus", "publish", "--targets", "src/money.rs"]);
    env.mas_quiet_ok(&repo, &["--agent", "bob", "focus", "publish", "--targets", "src/pricing/mod.rs"]);
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
    env.mas_quiet_ok(
        repo,
        &["--agent", "alice", "run", "start", "--id", "r1", "--goal", "two parts", "--check", check],
    );
    let wt = |name: &str| {
        std::path::PathBuf::from(env.mas_ok(repo, &["--agent", name, "worktree", "add", name, "--run", "r1"]).trim())
    };
    let (a, b, c) = (wt("alice"), wt("bob"), wt("carol"));
    std::fs::write(a.join("a.txt"), "a\n").unwrap();
    std::fs::write(b.join("b.txt"), "b\n").unwrap();
    env.mas_quiet_ok(&a, &["propose"]);
    env.mas_quiet_ok(&b, &["propose"]);
    for (dir, whom) in [(&c, "alice"), (&b, "alice"), (&c, "bob"), (&a, "bob")] {
        env.mas_quiet_ok(dir, &["endorse", whom]);
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
    env.mas_quiet_ok(&repo, &["--agent", "alice", "snapshot", "--publish", "--task", "fix money rounding"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "focus", "publish", "--targets", "src/money.rs"]);
    env.mas_quiet_ok(&repo, &["--agent", "bob", "focus", "publish", "--targets", "src/money.rs"]);
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
    env.mas_quiet_ok(
        &repo,
        &["--agent", "alice", "run", "start", "--id", "r1", "--goal", "one part", "--check", "true"],
    );
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

/// A run `r1` whose check needs `status.txt` to read "ok": alice proposes, bob and carol endorse,
/// bob lands.
#[test]
fn a_proposal_its_endorsements_and_the_landing() {
    let env = TestEnv::new();
    let repo = env.team(&["alice", "bob", "carol"]).build().repo;
    let start = ["--agent", "alice", "run", "start", "--id", "r1", "--goal", "say ok", "--quorum", "2"];
    env.mas_quiet_ok(&repo, &[&start[..], &["--check", "grep -qx ok status.txt"]].concat());
    let wt = |name: &str| {
        std::path::PathBuf::from(env.mas_ok(&repo, &["--agent", name, "worktree", "add", name, "--run", "r1"]).trim())
    };
    let (alice, bob, carol) = (wt("alice"), wt("bob"), wt("carol"));
    std::fs::write(alice.join("status.txt"), "ok\n").unwrap();
    let propose = env.mas(&alice, &["propose", "-m", "say ok"]);
    let endorse_bob = env.mas(&bob, &["endorse", "alice"]);
    let endorse_carol = env.mas(&carol, &["endorse", "alice"]);
    let land = env.mas(&bob, &["land"]);
    for out in [&propose, &endorse_bob, &endorse_carol, &land] {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    }
    redacted(&env, || {
        insta::assert_snapshot!("propose", shown(&propose));
        insta::assert_snapshot!("endorse", shown(&endorse_bob));
        insta::assert_snapshot!("endorse_quorum", shown(&endorse_carol));
        insta::assert_snapshot!("land", shown(&land));
    });
}

/// `git mas coordinate` with git-mas's own scripted peers: what it narrates to a person.
#[test]
fn coordinates_narration_with_builtin_peers() {
    let env = TestEnv::new();
    let repo = env.team(&["lead", "alice", "bob", "carol"]).config("mas.check", "! grep -rq BROKEN .").build().repo;
    let agents = "alice=builtin:reference,bob=builtin:reference,carol=builtin:reference";
    let out = env.mas(&repo, &["--agent", "lead", "coordinate", "--goal", "fix the bugs", "--agents", agents]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    redacted(&env, || insta::assert_snapshot!("coordinate", shown(&out)));
}

/// The git hooks and two hosts' hooks installed in a project, and the MCP server registered for
/// two hosts.
#[test]
fn hooks_and_mcp_install() {
    let env = TestEnv::new();
    let repo = env.team(&["alice"]).build().repo;
    let git_hooks = env.mas(&repo, &["hooks", "install"]);
    let host_hooks = env.mas(&repo, &["hooks", "install", "--host", "claude-code", "--host", "codex"]);
    let mcp = env.mas(&repo, &["mcp", "install", "--host", "claude-code", "--host", "cursor"]);
    let again = env.mas(&repo, &["mcp", "install", "--host", "claude-code", "--host", "cursor"]);
    for out in [&git_hooks, &host_hooks, &mcp, &again] {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    }
    redacted(&env, || {
        insta::assert_snapshot!("hooks_install", shown(&git_hooks));
        insta::assert_snapshot!("hooks_install_hosts", shown(&host_hooks));
        insta::assert_snapshot!("mcp_install", shown(&mcp));
        insta::assert_snapshot!("mcp_install_again", shown(&again));
    });
}

/// Two clones exchanging records: the first sync pushes, the second rebases a shared record and
/// pushes, and a third has nothing to do.
#[test]
fn sync_between_two_clones() {
    let env = TestEnv::new();
    let team = env.team(&["alice", "bob"]).named("a").remote().build();
    let (a, b) = (team.repo.clone(), env.clone_of(team.remote(), "b"));
    let append = |dir: &Path, agent: &str, n: u32| {
        let payload = format!(r#"{{"n":{n}}}"#);
        let args = ["--agent", agent, "record", "append", "--kind", "note", "--ref", "refs/mas/shared/x"];
        env.mas_quiet_ok(dir, &[&args[..], &["--payload", &payload]].concat());
    };
    append(&a, "alice", 1);
    append(&b, "bob", 2);
    let first = env.mas(&a, &["sync"]);
    let second = env.mas(&b, &["sync"]);
    let nothing = env.mas(&b, &["sync"]);
    for out in [&first, &second, &nothing] {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    }
    redacted(&env, || {
        insta::assert_snapshot!("sync_push", shown(&first));
        insta::assert_snapshot!("sync_rebase", shown(&second));
        insta::assert_snapshot!("sync_nothing", shown(&nothing));
    });
}

/// The skills installed for one host in the project, then again with one edited locally.
#[test]
fn skills_install() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    let first = env.mas(&repo, &["skills", "install", "--host", "claude-code"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let skill = std::fs::read_dir(repo.join(".claude/skills")).unwrap().flatten().map(|e| e.path()).min().unwrap();
    std::fs::write(skill.join("SKILL.md"), "edited\n").unwrap();
    let again = env.mas(&repo, &["skills", "install", "--host", "claude-code"]);
    redacted(&env, || {
        insta::assert_snapshot!("skills_install", shown(&first));
        insta::assert_snapshot!("skills_install_edited", shown(&again));
    });
}

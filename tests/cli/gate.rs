//! The focus board, the gate, hooks, receipts and the CI check, with two agents in two linked
//! worktrees and signed records.

use crate::common::*;
use crate::json::check::CheckOut;
use crate::json::focus::{FocusListOut, FocusPublishOut, FocusReleaseOut, FocusStatusOut};
use crate::json::gate::GateOut;
use crate::json::hooks::HooksOut;
use git_mas::attention::board::{FocusState, Rejection};
use git_mas::attention::gate::Verdict;
use git_mas::attention::git_hooks::HookState;
use git_mas::attention::replay::CheckStatus;
use git_mas::attention::rule::Decision;
use std::path::{Path, PathBuf};

struct Team {
    env: TestEnv,
    repo: PathBuf,
    alice: PathBuf,
    bob: PathBuf,
}

/// A repository with agents alice and bob, each in its own linked worktree (per-worktree
/// `mas.agent`), a published frame, and hooks installed.
fn team() -> Team {
    let env = TestEnv::new();
    let team = env.team(&["alice", "bob"]).named("team").worktrees().frame("alice").build();
    let repo = team.repo.clone();
    env.mas_quiet_ok(&repo, &["hooks", "install"]);
    let hooks: HooksOut = serde_json::from_str(&env.mas_ok(&repo, &["hooks", "status", "--json"])).unwrap();
    let states: Vec<(&str, HookState)> = hooks.hooks.iter().map(|h| (h.hook.as_str(), h.state)).collect();
    assert_eq!(
        states,
        [
            ("pre-commit", HookState::Installed),
            ("commit-msg", HookState::Installed),
            ("pre-push", HookState::Installed)
        ]
    );
    assert!(hooks.hooks.iter().all(|h| h.path.starts_with(&hooks.dir)), "{hooks:?}");
    let (alice, bob) = (team.worktree("alice").to_path_buf(), team.worktree("bob").to_path_buf());
    Team { env, repo, alice, bob }
}

fn edit_and_commit(env: &TestEnv, dir: &Path, file: &str, extra: &[&str]) -> std::process::Output {
    let path = dir.join(file);
    let mut text = std::fs::read_to_string(&path).unwrap_or_default();
    text.push_str("// edit\n");
    std::fs::write(&path, text).unwrap();
    env.git_quiet_ok(dir, &["add", file]);
    let mut args = vec!["commit", "-m", "edit"];
    args.extend_from_slice(extra);
    // Real dates: `git mas check` judges a commit against the board at the commit's time.
    env.git_cmd(dir).env_remove("GIT_AUTHOR_DATE").env_remove("GIT_COMMITTER_DATE").args(&args).output().unwrap()
}

#[test]
fn the_deferring_agent_is_blocked_until_the_holder_releases() {
    let Team { env, alice, bob, .. } = team();
    env.mas_quiet_ok(&alice, &["focus", "publish", "--targets", "src/money.rs"]);
    env.mas_quiet_ok(&bob, &["focus", "publish", "--targets", "src/money.rs"]);
    let d: Decision = serde_json::from_str(&env.mas_ok(&bob, &["decide", "alice", "bob", "--json"])).unwrap();
    assert!(
        matches!(&d, Decision::Serialize { holder, deferring, .. } if holder == "alice" && deferring == "bob"),
        "{d:?}"
    );

    // Bob's commit touching the held target is blocked by the pre-commit hook, naming alice.
    let out = edit_and_commit(&env, &bob, "src/money.rs", &[]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("src/money.rs is held by alice") && err.contains("remedy"), "{err}");
    // The gate itself says the same, with its own exit code.
    assert_eq!(env.mas(&bob, &["gate"]).status.code(), Some(6));
    // A change touching only non-held files passes, with a receipt.
    env.git_quiet_ok(&bob, &["reset", "--quiet", "HEAD", "--", "src/money.rs"]);
    env.git_quiet_ok(&bob, &["checkout", "--", "src/money.rs"]);
    let out = edit_and_commit(&env, &bob, "src/error.rs", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let msg = env.git(&bob, &["log", "-1", "--format=%B"]);
    assert!(msg.contains("Mas-Agent: bob") && msg.contains("Mas-Frame: "), "{msg}");
    // The holder's own commit passes.
    let out = edit_and_commit(&env, &alice, "src/money.rs", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    // After alice releases, bob passes.
    let released: FocusReleaseOut = serde_json::from_str(&env.mas_ok(&alice, &["focus", "release", "--json"])).unwrap();
    assert!(released.agent == "alice" && released.released, "{released:?}");
    let out = edit_and_commit(&env, &bob, "src/money.rs", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn an_expired_focus_holds_nothing() {
    let Team { env, alice, bob, .. } = team();
    let published: FocusPublishOut = serde_json::from_str(
        &env.mas_ok(&alice, &["focus", "publish", "--targets", "src/money.rs", "--ttl", "4s", "--json"]),
    )
    .unwrap();
    assert_eq!((published.agent.as_str(), published.ttl_secs), ("alice", 4));
    assert_eq!(published.targets, ["src/money.rs"]);
    env.mas_quiet_ok(&bob, &["focus", "publish", "--targets", "src/config.rs"]);
    let out = env.mas(&bob, &["gate", "--paths", "src/money.rs", "--json"]);
    assert_eq!(out.status.code(), Some(6));
    let gate: GateOut = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(gate.agent, "bob");
    assert_eq!(gate.touched.iter().map(|t| t.path.as_str()).collect::<Vec<_>>(), ["src/money.rs"]);
    let Verdict::Block { blocks } = &gate.verdict else { panic!("{:?}", gate.verdict) };
    assert_eq!((blocks[0].holder.as_str(), blocks[0].target.as_str()), ("alice", "src/money.rs"));
    std::thread::sleep(std::time::Duration::from_millis(4500));
    let out = env.mas(&bob, &["gate", "--paths", "src/money.rs"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let status = env.mas(&alice, &["focus", "status", "--json"]);
    assert_eq!(status.status.code(), Some(7));
    let status: FocusStatusOut = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!((status.agent.as_str(), status.state), ("alice", FocusState::Expired));
}

#[test]
fn a_new_frame_fails_the_stale_agent_closed() {
    let Team { env, alice, bob, .. } = team();
    env.mas_quiet_ok(&bob, &["focus", "publish", "--targets", "src/config.rs"]);
    assert_eq!(env.mas(&bob, &["focus", "status"]).status.code(), Some(0));
    // Alice edits and publishes a new frame; bob does not republish.
    std::fs::write(alice.join("src/report.rs"), "// changed\n").unwrap();
    env.mas_quiet_ok(&alice, &["snapshot", "--publish"]);
    let out = env.mas(&bob, &["gate", "--paths", "src/config.rs"]);
    assert_eq!(out.status.code(), Some(7));
    assert!(stderr(&out).contains("republish your focus"), "{}", stderr(&out));
    let out = env.mas(&bob, &["focus", "status"]);
    assert_eq!(out.status.code(), Some(7));
    assert!(stdout(&out).contains("old-frame"));
}

#[test]
fn check_reports_bypassed_and_unreceipted_commits() {
    let Team { env, alice, bob, .. } = team();
    env.mas_quiet_ok(&alice, &["focus", "publish", "--targets", "src/money.rs"]);
    env.mas_quiet_ok(&bob, &["focus", "publish", "--targets", "src/config.rs"]);
    let base = env.git(&bob, &["rev-parse", "HEAD"]);
    let out = edit_and_commit(&env, &bob, "src/config.rs", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let clean_end = env.git(&bob, &["rev-parse", "HEAD"]);
    // A clean range passes, receipts and all.
    let out = env.mas(&bob, &["check", &format!("{base}..{clean_end}"), "--require-receipts"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    // Bypassing the hook over alice's target.
    let out = edit_and_commit(&env, &bob, "src/money.rs", &["--no-verify"]);
    assert!(out.status.success());
    let bypass = env.git(&bob, &["rev-parse", "HEAD"]);
    // A commit with no receipt that touches nothing held.
    let out = edit_and_commit(&env, &bob, "src/error.rs", &["--no-verify"]);
    assert!(out.status.success());
    let unreceipted = env.git(&bob, &["rev-parse", "HEAD"]);

    let range = format!("{base}..HEAD");
    let out = env.mas(&bob, &["check", &range, "--json"]);
    assert_eq!(out.status.code(), Some(6));
    let v: CheckOut = serde_json::from_slice(&out.stdout).unwrap();
    let status_of = |v: &CheckOut, c: &str| v.commits.iter().find(|x| x.commit == c).unwrap().status;
    assert_eq!(status_of(&v, &bypass), CheckStatus::Blocked);
    assert_eq!(status_of(&v, &unreceipted), CheckStatus::Ok, "without --require-receipts a receipt is not needed");
    assert_eq!(status_of(&v, &clean_end), CheckStatus::Ok);
    assert!(v.unverified.is_none(), "without --records no records are listed");
    let out = env.mas(&bob, &["check", &range, "--require-receipts", "--json"]);
    let v: CheckOut = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status_of(&v, &unreceipted), CheckStatus::NoReceipt);
    let human = env.mas(&bob, &["check", &range]);
    assert!(stdout(&human).contains("blocked") && stderr(&human).contains("held by alice"), "{}", stdout(&human));
}

#[test]
fn bad_foci_are_refused_by_name() {
    let Team { env, alice, .. } = team();
    let nine: Vec<String> = [
        "src/lib.rs",
        "src/main.rs",
        "src/error.rs",
        "src/money.rs",
        "src/config.rs",
        "src/report.rs",
        "src/ledger/mod.rs",
        "src/ledger/item.rs",
        "src/orders/mod.rs",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut args = vec!["focus", "publish", "--targets"];
    args.extend(nine.iter().map(String::as_str));
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (args, "at most 8 targets; 9 given"),
        (vec!["focus", "publish", "--targets", "src/nope.rs"], "not in the current frame's snapshot"),
        (vec!["focus", "publish", "--targets", "../outside.rs"], "escapes the repository"),
        (vec!["focus", "publish", "--targets", "src/lib.rs", "--ttl", "48h"], "bad lease"),
    ];
    let before = env.refs(&alice);
    for (args, want) in cases {
        let out = env.mas(&alice, &args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(env.refs(&alice), before);
}

#[test]
fn spoofed_and_replayed_focus_records_are_rejected_on_the_board() {
    use git_mas::identity::AgentKey;
    use git_mas::store::record::Record;
    let Team { env, repo, alice, bob } = team();
    env.mas_quiet_ok(&alice, &["focus", "publish", "--targets", "src/money.rs"]);
    let frame = env.git(&repo, &["cat-file", "-p", "refs/mas/frame:record.json"]);
    let frame: serde_json::Value = serde_json::from_str(&frame).unwrap();
    let first = env.git(&repo, &["cat-file", "-p", "refs/mas/focus/alice:record.json"]);
    env.mas_quiet_ok(&alice, &["focus", "publish", "--targets", "src/config.rs"]);
    // Bob's key, claiming to be alice, grabbing src/report.rs.
    let hex = std::fs::read_to_string(env.keys().join("bob.key")).unwrap();
    let bob_key = AgentKey::from_seed(git_mas::identity::key::decode_hex(hex.trim()).unwrap().try_into().unwrap());
    let payload = serde_json::json!({"frame": frame["payload"]["hash"], "targets": ["src/report.rs"], "ttl_secs": 600, "published_at": 1});
    let spoof = Record::new("focus", "alice", 50, payload).sign(&bob_key).to_bytes();
    let plumb = |bytes: &[u8]| {
        let f = env.root().join("rec.json");
        std::fs::write(&f, bytes).unwrap();
        let blob = env.git(&repo, &["hash-object", "-w", f.to_str().unwrap()]);
        let mut mk = env.git_cmd(&repo);
        mk.arg("mktree").stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
        let mut child = mk.spawn().unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(format!("100644 blob {blob}\trecord.json\n").as_bytes()).unwrap();
        let tree = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
        let parent = env.git(&repo, &["rev-parse", "refs/mas/focus/alice"]);
        let commit = env.git(&repo, &["commit-tree", tree.trim(), "-p", &parent, "-m", "focus"]);
        env.git_quiet_ok(&repo, &["update-ref", "refs/mas/focus/alice", &commit]);
    };
    plumb(&spoof);
    plumb(first.as_bytes()); // replay of alice's genuine first focus
    let out = env.mas_ok(&bob, &["focus", "list"]);
    assert!(out.contains("REJECTED UNVERIFIED") || out.contains("REJECTED"), "{out}");
    let v: FocusListOut = serde_json::from_str(&env.mas_ok(&bob, &["focus", "list", "--json"])).unwrap();
    let verdicts: Vec<&str> = v
        .board
        .rejected
        .iter()
        .filter_map(|r| match &r.rejection {
            Rejection::Unverified { verdict } => Some(verdict.as_str()),
            _ => None,
        })
        .collect();
    assert!(verdicts.contains(&"SPOOF") && verdicts.contains(&"REPLAY"), "{verdicts:?}");
    // Alice's board entry is still her genuine latest focus.
    let alice_entry = v.board.entry("alice").unwrap();
    assert_eq!(alice_entry.focus.targets, ["src/config.rs"]);
}

#[test]
fn a_principals_sixty_fifth_session_is_refused_as_a_flood_and_another_principal_still_publishes() {
    let env = TestEnv::new();
    let repo = env.repo("flood");
    env.agents(&repo, &["alice", "bob"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "snapshot", "--publish"]);
    let sessions: Vec<String> = (0..65).map(|i| format!("alice.claude-{i:08x}")).collect();
    for s in &sessions[..64] {
        env.mas_quiet_ok(&repo, &["--agent", s, "focus", "publish", "--targets", "src/lib.rs"]);
    }
    let out = env.mas(&repo, &["--agent", &sessions[64], "focus", "publish", "--targets", "src/lib.rs"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("alice already has 64 live agents on the board (the per-principal flood cap)"),
        "{}",
        stderr(&out)
    );
    // Another principal is not crowded out: the cap bounds a key, not the team.
    env.mas_quiet_ok(&repo, &["--agent", "bob", "focus", "publish", "--targets", "src/lib.rs"]);
    env.mas_quiet_ok(&repo, &["--agent", "bob.codex-0000abcd", "focus", "publish", "--targets", "src/lib.rs"]);
    let out = env.mas_ok(&repo, &["--agent", "bob", "focus", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let live = v["board"]["entries"].as_array().unwrap().iter().filter(|e| e["liveness"] == "live").count();
    assert_eq!(live, 66, "{v}");
}

#[test]
fn hooks_install_is_idempotent_keeps_user_lines_and_honors_core_hooks_path() {
    let env = TestEnv::new();
    let repo = env.repo("hooks");
    let hooks = repo.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(hooks.join("pre-commit"), "#!/bin/sh\necho user-check\n").unwrap();
    env.mas_quiet_ok(&repo, &["hooks", "install"]);
    let once: Vec<String> = ["pre-commit", "commit-msg", "pre-push"]
        .iter()
        .map(|h| std::fs::read_to_string(hooks.join(h)).unwrap())
        .collect();
    env.mas_quiet_ok(&repo, &["hooks", "install"]);
    let twice: Vec<String> = ["pre-commit", "commit-msg", "pre-push"]
        .iter()
        .map(|h| std::fs::read_to_string(hooks.join(h)).unwrap())
        .collect();
    assert_eq!(once, twice);
    assert!(once[0].contains("echo user-check") && once[0].contains("git mas hook pre-commit"));
    assert_eq!(env.git(&repo, &["config", "mas.gate"]), "enforce");
    let status = env.mas_ok(&repo, &["hooks", "status"]);
    assert_eq!(status.matches("installed").count(), 3, "{status}");
    env.mas_quiet_ok(&repo, &["hooks", "uninstall"]);
    assert_eq!(std::fs::read_to_string(hooks.join("pre-commit")).unwrap(), "#!/bin/sh\necho user-check\n");
    assert!(!hooks.join("commit-msg").exists());

    // core.hooksPath, relative to the top of the working tree.
    env.git_quiet_ok(&repo, &["config", "core.hooksPath", "my-hooks"]);
    env.mas_quiet_ok(&repo, &["hooks", "install"]);
    assert!(repo.join("my-hooks/pre-commit").exists());
    assert!(!hooks.join("commit-msg").exists());
}

/// `hooks install` writes each git hook whole through a temporary beside it and a rename. Killed
/// at any of its renames, flushes or writes, every hook is as it was or installed whole and
/// executable (the user's own lines kept); what is left beside them is at most a
/// `.HOOK.mas-tmp.PID.N` that `doctor` lists as stale and `--fix` removes; and the install run
/// again completes.
#[test]
fn a_hooks_install_killed_anywhere_leaves_each_hook_old_or_new_whole() {
    use crate::killpoints::{RENAMES, Trigger, sweep};
    use std::os::unix::fs::PermissionsExt as _;
    let env = TestEnv::new();
    let repo = env.repo("hooks-kill");
    let hooks = repo.join(".git/hooks");
    let names = ["pre-commit", "commit-msg", "pre-push"];
    let user = "#!/bin/sh\necho user-check\n";
    let ours = |name: &str, text: &str| {
        let whole = text.ends_with("# <<< git-mas <<<\n") && text.contains(&format!("git mas hook {name} "));
        whole && (name != "pre-commit" || text.starts_with(user))
    };
    let temps = || -> Vec<PathBuf> {
        let entries = std::fs::read_dir(&hooks).unwrap().flatten().map(|e| e.path());
        entries.filter(|p| git_mas::fsx::is_temporary(p.file_name().unwrap().to_str().unwrap())).collect()
    };
    // Every hook as it is now is as it was or installed whole and executable.
    let check = |point: &str| {
        for name in names {
            let path = hooks.join(name);
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            if name == "pre-commit" && text == user {
                continue;
            }
            assert!(ours(name, &text), "{point}: {name} is neither as it was nor installed whole: {text:?}");
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o111, 0o111, "{point}: {name} installed but not executable ({mode:o})");
        }
    };
    let doctor = |fix: bool| {
        let mut cmd = env.mas_cmd(&repo);
        cmd.env("TMPDIR", env.root()).args(["doctor", "--json"]);
        if fix {
            cmd.arg("--fix");
        }
        let out = cmd.output().unwrap();
        let json: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
        (out.status.code(), json)
    };
    let triggers = [
        Trigger::on(RENAMES).own_process(),
        Trigger::on("?fsync,fdatasync").own_process(),
        Trigger::on("write").own_process(),
    ];
    let mut killed = 0;
    let swept = sweep(
        &triggers,
        |_, _| {
            for name in names {
                let _ = std::fs::remove_file(hooks.join(name));
            }
            std::fs::create_dir_all(&hooks).unwrap();
            std::fs::write(hooks.join("pre-commit"), user).unwrap();
            std::fs::set_permissions(hooks.join("pre-commit"), std::fs::Permissions::from_mode(0o755)).unwrap();
            let mut cmd = env.mas_cmd(&repo);
            cmd.args(["hooks", "install"]);
            cmd
        },
        |attempt| {
            let point = attempt.point();
            check(&point);
            let left = temps();
            if !attempt.killed {
                assert_eq!(attempt.output.status.code(), Some(0), "{point}: {}", stderr(&attempt.output));
                assert!(left.is_empty(), "{point}: a completed install left {left:?}");
                return;
            }
            killed += 1;
            assert!(left.len() <= 1, "{point}: more than one temporary left: {left:?}");
            if !left.is_empty() {
                let (code, json) = doctor(false);
                assert_eq!(code, Some(1), "{point}: {json}");
                for temp in &left {
                    let listed =
                        json["temp_files"].as_array().unwrap().iter().find(|d| d["path"] == temp.to_str().unwrap());
                    let d = listed.unwrap_or_else(|| panic!("{point}: {} not listed: {json}", temp.display()));
                    assert_eq!(d["stale"], true, "{point}: {d}");
                }
                let (code, json) = doctor(true);
                assert_eq!(code, Some(0), "{point}: {json}");
                assert!(temps().is_empty(), "{point}: --fix left {:?}", temps());
            }
            let again = env.mas_cmd(&repo).args(["hooks", "install"]).output().unwrap();
            assert_eq!(again.status.code(), Some(0), "{point}: {}", stderr(&again));
            for name in names {
                let text = std::fs::read_to_string(hooks.join(name)).unwrap();
                assert!(ours(name, &text), "{point}: the install run again left {name}: {text:?}");
            }
            check(&point);
        },
    );
    assert!(killed >= 3 && swept.iter().all(|(_, n)| *n > 0), "every trigger killed the install: {swept:?}");
}

#[test]
fn with_the_gate_off_the_hooks_do_nothing() {
    let Team { env, alice, bob, .. } = team();
    env.mas_quiet_ok(&alice, &["focus", "publish", "--targets", "src/money.rs"]);
    env.mas_quiet_ok(&bob, &["focus", "publish", "--targets", "src/money.rs"]);
    env.git_quiet_ok(&bob, &["config", "mas.gate", "off"]);
    let out = edit_and_commit(&env, &bob, "src/money.rs", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    env.git_quiet_ok(&bob, &["config", "mas.gate", "warn"]);
    let out = edit_and_commit(&env, &bob, "src/money.rs", &[]);
    assert!(out.status.success());
    assert!(stderr(&out).contains("held by alice") && stderr(&out).contains("committing anyway"), "{}", stderr(&out));
}

#[test]
fn commits_that_build_their_own_index_are_gated_on_what_they_commit() {
    // `git commit -a` and `git commit <paths>` hand the hooks a temporary index (GIT_INDEX_FILE):
    // the gate must judge that index, not the one on disk, in which nothing is staged.
    let Team { env, alice, bob, .. } = team();
    env.mas_quiet_ok(&alice, &["focus", "publish", "--targets", "src/money.rs"]);
    env.mas_quiet_ok(&bob, &["focus", "publish", "--targets", "src/money.rs"]);
    let money = bob.join("src/money.rs");
    let original = std::fs::read_to_string(&money).unwrap();
    std::fs::write(&money, format!("{original}// unstaged edit\n")).unwrap();
    let head = env.git(&bob, &["rev-parse", "HEAD"]);
    for args in [&["commit", "-a", "-m", "all"][..], &["commit", "-m", "only", "src/money.rs"]] {
        let out = env.git_cmd(&bob).args(args).output().unwrap();
        assert!(!out.status.success(), "`git {}` was allowed", args.join(" "));
        assert!(stderr(&out).contains("src/money.rs is held by alice"), "{}", stderr(&out));
        assert_eq!(env.git(&bob, &["rev-parse", "HEAD"]), head, "nothing was committed");
    }
    // A path nobody holds goes through `git commit <paths>` with its receipt, while the held
    // edit stays uncommitted in the working tree.
    let error = bob.join("src/error.rs");
    std::fs::write(&error, format!("{}// edit\n", std::fs::read_to_string(&error).unwrap())).unwrap();
    let out = env.git_cmd(&bob).args(["commit", "-m", "error only", "src/error.rs"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let msg = env.git(&bob, &["log", "-1", "--format=%B"]);
    assert!(msg.contains("Mas-Agent: bob"), "{msg}");
    let changed = env.git(&bob, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(changed.trim(), "src/error.rs");
    let status = env.git(&bob, &["status", "--porcelain"]);
    assert!(status.lines().any(|l| l.trim_start() == "M src/money.rs"), "{status}");
}

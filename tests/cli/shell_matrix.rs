//! The shell-write matrix: every way a session's shell call can write, move, chmod, link or run
//! git over files another session holds, in its own worktree and in another, through the real
//! hooks (`git mas gate --host claude-code` before the call, `--post-tool` after it, the failure
//! event's payload for a call that exited non-zero) and a real `sh` between them.
//!
//! After each call, every held file in both worktrees has its bytes, mode and type as before
//! (or the call was refused before it ran); the caller's own unrelated file is kept; nothing
//! outside the repository changed; no hook or command hangs (each runs under a time limit).
//! A SIGKILL of the check is swept in `team_crash.rs`.

use crate::common::*;
use crate::team_mode::{hook, team_repo, write_payload};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// The files session A holds: modified, made executable, new and untracked, and claimed but not
/// written yet.
const HELD: [&str; 4] = ["src/lib.rs", "src/money.rs", "src/new_a.rs", "src/planned.rs"];

/// What a path is: its type, bytes (or link target) and mode.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Absent,
    File(Vec<u8>, u32),
    Link(PathBuf),
    Dir,
}

fn state(path: &Path) -> State {
    match std::fs::symlink_metadata(path) {
        Err(_) => State::Absent,
        Ok(m) if m.file_type().is_symlink() => State::Link(std::fs::read_link(path).unwrap()),
        Ok(m) if m.is_dir() => State::Dir,
        Ok(m) => {
            let mode = m.permissions().mode() & 0o7777;
            // A file the call made unreadable is read after a chmod of its own copy's mode.
            let bytes = std::fs::read(path).unwrap_or_else(|_| {
                let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
                let b = std::fs::read(path).unwrap_or_default();
                let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
                b
            });
            State::File(bytes, mode)
        }
    }
}

/// Every held path in both worktrees.
fn held_state(roots: &[PathBuf]) -> Vec<(String, State)> {
    roots.iter().flat_map(|r| HELD.iter().map(move |h| (r.join(h).display().to_string(), state(&r.join(h))))).collect()
}

/// The Claude Code payload of a Bash call of session `b`.
fn bash(repo: &Path, event: &str, command: &str) -> Value {
    json!({"session_id": "b", "cwd": repo, "hook_event_name": event, "tool_name": "Bash",
        "tool_input": {"command": command}})
}

fn gate(env: &TestEnv, repo: &Path, flag: Option<&str>, payload: &Value) -> std::process::Output {
    let mut cmd = std::process::Command::new("timeout");
    env.hermetic(&mut cmd);
    cmd.current_dir(repo).args(["20", BIN, "gate", "--host", "claude-code"]);
    if let Some(f) = flag {
        cmd.arg(f);
    }
    fed(&mut cmd, payload.to_string().as_bytes())
}

/// One way of writing: its script (`$OUT` a folder outside the repository whose files must
/// never change, `$SCR` a scratch folder outside it, `$W2` the other worktree), and whether the
/// caller's own file survives it (a `git clean` or `git stash -u` takes untracked files, the
/// caller's own too).
struct Case {
    script: &'static str,
    own_kept: bool,
}

const fn case(script: &'static str) -> Case {
    Case { script, own_kept: true }
}

const CASES: &[Case] = &[
    case("echo x > src/lib.rs"),
    case("echo x >> src/lib.rs"),
    case("rm src/lib.rs"),
    case("rm -f src/lib.rs; exit 1"),
    case("mv src/lib.rs \"$SCR/stolen\""),
    case("cp \"$SCR/other\" src/report.rs && mv src/report.rs src/lib.rs"),
    case("cp \"$SCR/other\" src/lib.rs"),
    case("chmod 000 src/lib.rs"),
    case("chmod -x src/money.rs"),
    case("chmod +x src/lib.rs; exit 2"),
    case("sed -i s/pub/pib/ src/lib.rs"),
    case("cp -p src/lib.rs \"$SCR/ref\" && sed -i 's/pub/bup/' src/lib.rs && touch -r \"$SCR/ref\" src/lib.rs"),
    case("printf zz | dd of=src/lib.rs bs=1 seek=0 conv=notrunc 2>/dev/null"),
    case("truncate -s 0 src/lib.rs"),
    case("ln -sf \"$OUT/victim\" src/lib.rs"),
    case("rm src/lib.rs && mkdir src/lib.rs && echo y > src/lib.rs/inner"),
    case("echo new > src/planned.rs"),
    case("mkdir src/planned.rs"),
    case("rm src/new_a.rs"),
    case("rm -rf src"),
    case("mv src \"$SCR/src-moved\" && ln -s \"$OUT\" src"),
    case("ln -s \"$OUT/victim\" src/.lib.rs.git-mas-restore; echo x > src/lib.rs"),
    case("echo x > \"$W2/src/lib.rs\""),
    case("echo x > ../wt2/src/money.rs"),
    case("chmod 000 \"$W2/src/money.rs\""),
    case("rm \"$W2/src/lib.rs\"; exit 1"),
    case("echo sneaky > \"$W2/src/planned.rs\""),
    case("python3 -c \"open('src/lib.rs','w').write('py')\""),
    case("perl -pi -e 's/m/n/' src/money.rs"),
    case("cat \"$SCR/other\" > src/lib.rs; exit 3"),
    case("tee src/lib.rs < /dev/null > /dev/null"),
    case("install -m 755 \"$SCR/other\" src/lib.rs"),
    case("ln src/lib.rs \"$SCR/hard\" 2>/dev/null || ln src/lib.rs hard; echo x >> src/lib.rs"),
    case("mv src/lib.rs src/lib2.rs"),
    case("touch src/lib.rs"),
    case("git checkout -- src/lib.rs"),
    case("git restore ."),
    case("git checkout -- ."),
    case("git reset --hard -q"),
    case("git stash -q"),
    Case { script: "git stash -q -u", own_kept: false },
    Case { script: "git clean -fdq", own_kept: false },
    case("git -C \"$W2\" reset --hard -q"),
    // The safe forms run.
    case("echo z >> src/report.rs && git stash push -q -- src/report.rs"),
    case("echo z >> src/config.rs && git checkout -- src/config.rs"),
    case("git add src/lib.rs && git commit -q --no-verify -m 'took it'"),
];

/// The ways that must be refused before they run (git commands that take others' work).
fn refused(script: &str) -> bool {
    ["git checkout -- src/lib.rs", "git restore .", "git checkout -- .", "git reset", "git stash -q", "git clean"]
        .iter()
        .any(|p| script.starts_with(p))
        || script.contains("\"$W2\" reset")
}

#[test]
fn every_way_a_shell_call_can_change_a_held_file_is_put_back_or_refused() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let w2 = env.root().join("wt2");
    env.git_quiet_ok(&repo, &["worktree", "add", "--quiet", "-b", "wt2", w2.to_str().unwrap()]);
    let (out, scr) = (env.root().join("outside"), env.root().join("scratch"));
    std::fs::create_dir_all(&out).unwrap();
    std::fs::create_dir_all(&scr).unwrap();
    std::fs::write(out.join("victim"), "nobody's\n").unwrap();
    std::fs::write(scr.join("other"), "another file's text\n").unwrap();
    // A's claims and A's uncommitted work.
    for f in HELD {
        assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", f)).0, "allow", "{f}");
    }
    std::fs::write(repo.join("src/lib.rs"), "A's uncommitted work\npub mod config;\n").unwrap();
    std::fs::write(repo.join("src/money.rs"), "A's money\n").unwrap();
    std::fs::set_permissions(repo.join("src/money.rs"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(repo.join("src/new_a.rs"), "A's new file\n").unwrap();
    let roots = [std::fs::canonicalize(&repo).unwrap(), std::fs::canonicalize(&w2).unwrap()];
    let before = held_state(&roots);
    let outside = || (tree(&out), std::fs::read_dir(&out).unwrap().count());
    let outside_before = outside();

    let mut rows = Vec::new();
    let mut failed = 0;
    for (i, c) in CASES.iter().enumerate() {
        let own = format!("own_{i}.txt");
        let script = format!("echo mine > {own}; {}", c.script);
        let mut problems = Vec::new();
        let pre = gate(&env, &repo, None, &bash(&repo, "PreToolUse", &script));
        if pre.status.code() != Some(0) {
            problems.push(format!("pre-tool hook: {}", shown(&pre)));
        }
        let refused_now = String::from_utf8_lossy(&pre.stdout).contains("\"deny\"");
        if refused_now != refused(c.script) {
            problems.push(format!(
                "refused before it ran: {refused_now}, expected {}: {}",
                refused(c.script),
                shown(&pre)
            ));
        }
        let refused = refused_now;
        let mut outcome = "refused before".to_string();
        if !refused {
            let mut sh = std::process::Command::new("timeout");
            env.hermetic(&mut sh);
            sh.current_dir(&repo).env("OUT", &out).env("SCR", &scr).env("W2", &w2).args(["20", "sh", "-c", &script]);
            let ran = sh.output().unwrap();
            if ran.status.code() == Some(124) {
                problems.push("the command hung".into());
            }
            let changed = held_state(&roots) != before;
            let event = if ran.status.success() { "PostToolUse" } else { "PostToolUseFailure" };
            let post = gate(&env, &repo, Some("--post-tool"), &bash(&repo, event, &script));
            if post.status.code() != Some(0) {
                problems.push(format!("post-tool hook: {}", shown(&post)));
            }
            let told = stdout(&post);
            if c.script.contains("--no-verify") && !told.contains("committed src/lib.rs") {
                problems.push(format!("a commit of a held file with --no-verify went unsaid: {}", shown(&post)));
            }
            if changed && !(told.contains("put back") || told.contains("removed")) {
                problems.push(format!("a held file changed and B was not told: {}", shown(&post)));
            }
            if event == "PostToolUseFailure" && changed {
                let v: Value = serde_json::from_str(told.trim()).unwrap_or_default();
                if v["hookSpecificOutput"]["hookEventName"] != "PostToolUseFailure" {
                    problems.push(format!("the failure hook's answer names another event: {told}"));
                }
            }
            outcome = format!("ran (exit {:?}), {}", ran.status.code(), if changed { "put back" } else { "no change" });
            if c.own_kept && std::fs::read_to_string(repo.join(&own)).ok().as_deref() != Some("mine\n") {
                problems.push(format!("the caller's own {own} was lost"));
            }
        }
        let now = held_state(&roots);
        for ((path, was), (_, is)) in before.iter().zip(&now) {
            if was != is {
                problems.push(format!("{path}: {was:?} became {is:?}"));
            }
        }
        if outside() != outside_before {
            problems.push("a file outside the repository changed".into());
        }
        if !problems.is_empty() {
            failed += 1;
        }
        rows.push(format!(
            "{i:>2} {:<70} {outcome}{}",
            c.script,
            problems.iter().map(|p| format!("\n     PROBLEM: {p}")).collect::<String>()
        ));
    }
    // The holder is told of the commit at its next call, which runs.
    let a_next = gate(&env, &repo, None, &write_payload(&repo, "a", "src/lib.rs"));
    let a_told = stdout(&a_next);
    assert!(
        a_told.contains("committed src/lib.rs, which you hold") && !a_told.contains("\"deny\""),
        "{}",
        shown(&a_next)
    );
    eprintln!("{}", rows.join("\n"));
    assert!(CASES.len() >= 30);
    assert_eq!(failed, 0, "{} of {} ways lost or changed a held file:\n{}", failed, CASES.len(), rows.join("\n"));
}

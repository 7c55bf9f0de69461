//! A landing killed at every system call that touches the checkout of main — its index, its
//! `index.lock`, every file the landing writes or deletes — by strace fault injection on the real
//! binary and its git children (see [`crate::killpoints`]). The calls are not guessed: one
//! uninterrupted landing is traced first, and every syscall it made on those paths is swept from
//! its first call to its last.
//!
//! After each kill: `git mas status` names what is left to do (an interrupted checkout update, or
//! the stale `index.lock`) with the command that finishes it; a person then edits a file the
//! landing does not change; and one command — `git mas land` or `git mas doctor --fix`, in turn —
//! brings main, the index and the files to the landing (or, killed before the landing was
//! recorded, leaves them at the base), with no lock left, the person's edit and untracked file
//! untouched, and nothing else different. No lock is removed by the test.

use super::crash::{assert_consistent, copy_team, tip};
use super::land::CHECK;
use super::*;
use crate::killpoints::{self, Attempt, Trigger};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The paths (relative to the checkout) whose system calls are swept.
const PATHS: [&str; 7] =
    [".git/index", ".git/index.lock", "src/money.rs", "status.txt", "docs/landing/notes.md", "check.sh", "README.md"];

/// A run whose proposal by alice (a changed file, two new ones — one in a new folder —, a
/// deleted one and a mode change) has its quorum; the main checkout holds an untracked file of a
/// person's. Worktrees removed.
fn template() -> Team {
    let team = Team::new(&["alice", "bob", "carol"]);
    let run = team.start("alice", &["--id", "r1", "--check", CHECK, "--quorum", "2"]);
    let wts = ["alice", "bob", "carol"].map(|n| team.worktree(&run, n));
    for (wt, name) in wts.iter().zip(["alice", "bob", "carol"]) {
        std::fs::write(wt.join("status.txt"), "ok\n").unwrap();
        let money = std::fs::read_to_string(wt.join("src/money.rs")).unwrap();
        std::fs::write(wt.join("src/money.rs"), money.replace("rounded half up", &format!("rounded ({name})")))
            .unwrap();
        if name == "alice" {
            std::fs::create_dir_all(wt.join("docs/landing")).unwrap();
            std::fs::write(wt.join("docs/landing/notes.md"), "# notes\n".repeat(2000)).unwrap();
            std::fs::remove_file(wt.join("README.md")).unwrap();
            use std::os::unix::fs::PermissionsExt as _;
            let script = wt.join("check.sh");
            let mode = std::fs::metadata(&script).unwrap().permissions().mode();
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(mode ^ 0o111)).unwrap();
        }
        team.here_quiet_ok(wt, &["propose", "-m", &format!("{name}'s implementation")]);
    }
    team.here_quiet_ok(&wts[1], &["endorse", "alice"]);
    team.here_quiet_ok(&wts[2], &["endorse", "alice"]);
    for agent in ["alice", "bob", "carol"] {
        team.quiet_ok(&team.repo, agent, &["worktree", "remove", agent, "--run", &run]);
    }
    std::fs::create_dir_all(team.repo.join("scratch")).unwrap();
    std::fs::write(team.repo.join("scratch/mine.txt"), "a person's untracked file\n").unwrap();
    assert_eq!(team.git(&["status", "--porcelain"]), "?? scratch/");
    team
}

/// `git status --porcelain` as printed.
fn porcelain(team: &Team) -> String {
    let out = team.env.git_cmd(&team.repo).args(["status", "--porcelain"]).output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_landing_killed_at_any_call_on_the_checkout_is_finished_by_one_land_or_doctor_fix() {
    let template = template();
    let before = template.main_tip();
    let base_tree = template.git(&["rev-parse", "main^{tree}"]);
    let args = ["--agent", "bob", "land", "r1"];
    let baseline = copy_team(&template);
    let out = baseline.env.mas(&baseline.repo, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let want_tree = baseline.git(&["rev-parse", "main^{tree}"]);
    assert_eq!(baseline.git(&["status", "--porcelain"]), "?? scratch/");
    let traced = copy_team(&template);
    let mut cmd = traced.env.mas_cmd(&traced.repo);
    cmd.args(args);
    let calls = killpoints::calls_on_paths(&cmd, &PATHS);
    for (needed, path) in [("openat", "status.txt"), ("write", "docs/landing/notes.md"), ("unlink", "README.md")] {
        assert!(calls.contains_key(&(needed.to_string(), path)), "the landing made no {needed} on {path}: {calls:?}");
    }
    let triggers = killpoints::path_triggers(&calls);
    let mut states: BTreeMap<&'static str, u32> = BTreeMap::new();
    let mut kills = 0u32;
    let current: RefCell<Option<Team>> = RefCell::new(None);
    killpoints::sweep(
        &triggers,
        |_, _| {
            let team = copy_team(&template);
            let mut cmd = team.env.mas_cmd(&team.repo);
            cmd.args(args);
            *current.borrow_mut() = Some(team);
            cmd
        },
        |attempt: &Attempt| {
            let current = current.borrow();
            let team = current.as_ref().unwrap();
            let what = format!("land killed at {}", attempt.point());
            if !attempt.killed {
                assert!(attempt.output.status.success(), "{what}: not killed, yet failed: {}", stderr(&attempt.output));
                return;
            }
            kills += 1;
            assert_consistent(team, &what);
            let lock = team.repo.join(".git/index.lock").exists();
            let moved = team.main_tip() != before;
            let landed_ref = tip(team, "refs/mas/runs/r1/landed").is_some();
            let index_at = team.git(&["ls-files", "-s", "--", "src/money.rs"]);
            let checkout_clean = !lock
                && team.git(&["status", "--porcelain", "--untracked-files=no"]).is_empty()
                && (!moved || team.git(&["diff-index", "--cached", "--quiet", "HEAD"]).is_empty());
            let state = match (moved, lock, checkout_clean) {
                (false, false, true) => "before main moved",
                (false, true, _) => "before main moved, index.lock left",
                (false, false, false) => panic!("{what}: main did not move, yet the checkout changed: {index_at}"),
                (true, _, true) if landed_ref => "complete",
                (true, _, true) => "main moved, checkout followed, no landed ref",
                (true, true, false) => "checkout half updated, index.lock left",
                (true, false, false) => "checkout half updated",
            };
            *states.entry(state).or_default() += 1;
            // Between the kill and the repair, status says what is left and how to finish it.
            if lock || (moved && !checkout_clean) {
                let status = team.env.mas(&team.repo, &["--agent", "carol", "status", "--json"]);
                assert!(status.status.success(), "{what}: status failed: {}", stderr(&status));
                let s: Value = serde_json::from_slice(&status.stdout).unwrap();
                let debris = &s["debris"];
                let named_lock = debris["stale_locks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p.as_str().unwrap().ends_with("index.lock"));
                let named_update = debris["operations"].as_array().unwrap().iter().any(|op| {
                    op["operation"] == "checkout update" && op["remedy"].as_str().unwrap().contains("git mas land r1")
                });
                assert!(named_lock || named_update, "{what}: status names neither the lock nor the update: {debris}");
                if moved && !checkout_clean && landed_ref {
                    assert!(named_update, "{what}: status does not name the interrupted update: {debris}");
                }
                let text = team.env.mas(&team.repo, &["--agent", "carol", "status"]);
                assert!(stdout(&text).contains("doctor --fix"), "{what}: {}", stdout(&text));
            }
            // A person edits a file the landing does not change (only once the branch moved: a
            // dirty checkout refuses a landing that has not begun).
            let edit = "# a person's edit after the kill\n";
            if moved {
                let mut cargo = std::fs::read_to_string(team.repo.join("Cargo.toml")).unwrap();
                cargo.push_str(edit);
                std::fs::write(team.repo.join("Cargo.toml"), cargo).unwrap();
            }
            // One command repairs it.
            let by_land = kills % 2 == 1;
            let repair = if by_land {
                team.env.mas(&team.repo, &args)
            } else {
                team.env.mas(&team.repo, &["--agent", "carol", "doctor", "--fix"])
            };
            let landed_now = team.main_tip() != before;
            assert!(
                repair.status.success(),
                "{what}: the repair ({}) failed: {}{}",
                if by_land { "land" } else { "doctor --fix" },
                stdout(&repair),
                stderr(&repair)
            );
            assert!(!team.repo.join(".git/index.lock").exists(), "{what}: index.lock left after the repair");
            if landed_now {
                assert_eq!(team.git(&["rev-list", "--count", &format!("{before}..main")]), "1", "{what}");
                assert_eq!(team.git(&["rev-parse", "main^{tree}"]), want_tree, "{what}");
                assert_eq!(team.git(&["write-tree"]), want_tree, "{what}: the index is not the landing");
            } else {
                assert!(!by_land, "{what}: land did not land");
                assert_eq!(team.git(&["write-tree"]), base_tree, "{what}: the index is not the base");
            }
            let want_status = if moved { " M Cargo.toml\n?? scratch/\n" } else { "?? scratch/\n" };
            assert_eq!(porcelain(team), want_status, "{what}");
            assert_eq!(
                std::fs::read_to_string(team.repo.join("scratch/mine.txt")).unwrap(),
                "a person's untracked file\n",
                "{what}"
            );
            if moved {
                assert!(std::fs::read_to_string(team.repo.join("Cargo.toml")).unwrap().ends_with(edit), "{what}");
            }
            assert_consistent(team, &what);
        },
    );
    eprintln!("checkout kills: {kills} over {} syscalls {calls:?}: {states:?}", triggers.len());
    assert!(kills >= 20, "{kills}");
    for state in
        ["checkout half updated", "checkout half updated, index.lock left", "before main moved, index.lock left"]
    {
        assert!(states.contains_key(state), "no kill left {state:?}: {states:?}");
    }
}

/// Killed as git writes the landing's src/money.rs: then a person writes their own text into it
/// and edits Cargo.toml, and a process holds the index lock for a while. `land` says who holds the
/// lock and exits non-zero; once it is gone, `land` finishes the update, keeps the person's text
/// of src/money.rs aside (named), and leaves Cargo.toml's edit as it is.
#[test]
fn finishing_an_interrupted_update_keeps_a_persons_edit_of_a_landed_file_and_waits_for_a_live_lock() {
    let template = template();
    let before = template.main_tip();
    let team = copy_team(&template);
    let args = ["--agent", "bob", "land", "r1"];
    let mut cmd = team.env.mas_cmd(&team.repo);
    cmd.args(args);
    let attempt = killpoints::kill_at(&cmd, &Trigger::on_paths("write", [PathBuf::from("src/money.rs")]), 1);
    assert!(attempt.killed, "the landing was not killed: {}", stderr(&attempt.output));
    assert_ne!(team.main_tip(), before, "the kill came before main moved");
    assert!(team.repo.join(".git/index.lock").exists(), "the killed read-tree left no index.lock");
    let shown = team.env.mas(&team.repo, &["--agent", "carol", "status"]);
    let text = stdout(&shown);
    assert!(
        text.contains("interrupted checkout update of run r1")
            && text.contains("`git mas land r1 (or git mas doctor --fix)`"),
        "{text}"
    );
    std::fs::write(team.repo.join("src/money.rs"), "a person's own text\n").unwrap();
    let mut cargo = std::fs::read_to_string(team.repo.join("Cargo.toml")).unwrap();
    cargo.push_str("# mine\n");
    std::fs::write(team.repo.join("Cargo.toml"), &cargo).unwrap();
    // A live process holding the lock (as a running git does): land waits for it, and says so.
    let lock = team.repo.join(".git/index.lock");
    let mut holder = std::process::Command::new("sh")
        .arg("-c")
        .arg("exec 3<\"$0\"; echo ready; exec sleep 30")
        .arg(&lock)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(holder.stdout.take().unwrap()), &mut line).unwrap();
    let out = team.env.mas(&team.repo, &args);
    assert_eq!(out.status.code(), Some(1), "land with a live lock holder: {}", stderr(&out));
    assert!(stderr(&out).contains(&format!("pid {}", holder.id())), "{}", stderr(&out));
    assert!(stderr(&out).contains("git mas land r1"), "{}", stderr(&out));
    assert!(lock.exists(), "a held lock was removed");
    assert_eq!(std::fs::read_to_string(team.repo.join("src/money.rs")).unwrap(), "a person's own text\n");
    holder.kill().unwrap();
    holder.wait().unwrap();
    // The holder is gone: one land finishes it.
    let out = team.env.mas(&team.repo, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("removed") && err.contains("index.lock"), "{err}");
    let kept = team.repo.join(".git/mas/landing-kept/r1/src/money.rs");
    assert!(err.contains(&kept.display().to_string()), "the kept copy is not named: {err}");
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "a person's own text\n");
    assert_eq!(team.git(&["write-tree"]), team.git(&["rev-parse", "main^{tree}"]));
    assert_eq!(porcelain(&team), " M Cargo.toml\n?? scratch/\n");
    assert_eq!(std::fs::read_to_string(team.repo.join("Cargo.toml")).unwrap(), cargo);
    assert_eq!(
        std::fs::read_to_string(team.repo.join("src/money.rs")).unwrap(),
        team.git(&["show", "main:src/money.rs"]) + "\n"
    );
    let status = team.here_json(&team.repo, &["--agent", "carol", "status"]);
    assert_eq!(status["debris"]["problems"], 0, "{status}");
}

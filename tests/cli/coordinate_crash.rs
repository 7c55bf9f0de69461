//! `git mas coordinate` killed while its landing updates the checkout of main: at every system
//! call the run makes on main's index, its `index.lock` and the file the landing adds (found by
//! tracing one uninterrupted run, [`killpoints::calls_on_paths`]). After each kill, `status` names
//! what is left, a person edits a file the landing does not change, and one `git mas land <run>`
//! or `git mas doctor --fix` (in turn) brings main, the index and the files to the landing — or
//! leaves the base, when the kill came before the landing was recorded — touching nothing else.

use crate::common::*;
use crate::coordinate::{dev_agent, setup};
use crate::killpoints::{self, Attempt};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;

const PATHS: [&str; 3] = [".git/index", ".git/index.lock", "notes/alice.md"];

struct Scene {
    env: TestEnv,
    repo: PathBuf,
    base: String,
}

fn scene() -> (Scene, std::process::Command) {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob", "carol"]);
    std::fs::write(repo.join("mine.txt"), "a person's untracked file\n").unwrap();
    let base = env.git(&repo, &["rev-parse", "main"]);
    let agents = [dev_agent(&env, "alice", "good"), dev_agent(&env, "bob", "good"), dev_agent(&env, "carol", "BROKEN")]
        .join(",");
    let mut cmd = env.mas_cmd(&repo);
    cmd.args(["--agent", "lead", "coordinate", "--goal", "write a note", "--agents", &agents, "--quorum", "2"]);
    (Scene { env, repo, base }, cmd)
}

fn porcelain(s: &Scene) -> String {
    let out = s.env.git_cmd(&s.repo).args(["status", "--porcelain"]).output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn coordinate_killed_at_any_call_on_the_checkout_of_main_is_finished_by_one_land_or_doctor_fix() {
    let (traced, cmd) = scene();
    let calls = killpoints::calls_on_paths(&cmd, &PATHS);
    assert_eq!(traced.env.git(&traced.repo, &["show", "main:notes/alice.md"]), "good by alice");
    assert!(calls.contains_key(&("openat".to_string(), "notes/alice.md")), "{calls:?}");
    let triggers = killpoints::path_triggers(&calls);
    let current: RefCell<Option<Scene>> = RefCell::new(None);
    let mut kills = 0u32;
    let mut states: BTreeMap<&'static str, u32> = BTreeMap::new();
    killpoints::sweep(
        &triggers,
        |_, _| {
            let (s, cmd) = scene();
            *current.borrow_mut() = Some(s);
            cmd
        },
        |attempt: &Attempt| {
            let current = current.borrow();
            let s = current.as_ref().unwrap();
            let what = format!("coordinate killed at {}", attempt.point());
            if !attempt.killed {
                assert!(attempt.output.status.success(), "{what}: not killed, yet failed: {}", stderr(&attempt.output));
                return;
            }
            kills += 1;
            let problems = killpoints::check_repository(&s.env, &s.repo);
            assert!(problems.is_empty(), "{what}: {problems:#?}");
            let runs = s.env.mas_ok(&s.repo, &["--agent", "lead", "run", "list", "--json"]);
            let runs: serde_json::Value = serde_json::from_str(&runs).unwrap();
            let run = runs.as_array().and_then(|r| r.first()).and_then(|r| r["id"].as_str()).map(str::to_string);
            let moved = s.env.git(&s.repo, &["rev-parse", "main"]) != s.base;
            let lock = s.repo.join(".git/index.lock").exists();
            // (Read without the index lock, which the kill may have left.)
            let behind = moved && s.env.git(&s.repo, &["ls-files", "--stage", "--", "notes"]).is_empty();
            *states
                .entry(match (moved, lock, behind) {
                    (false, false, _) => "before main moved",
                    (false, true, _) => "before main moved, index.lock left",
                    (true, _, false) => "main moved, index followed",
                    (true, true, true) => "checkout behind, index.lock left",
                    (true, false, true) => "checkout behind",
                })
                .or_default() += 1;
            if lock || behind {
                let status: serde_json::Value =
                    serde_json::from_str(&s.env.mas_ok(&s.repo, &["--agent", "carol", "status", "--json"])).unwrap();
                assert!(
                    status["debris"]["problems"].as_u64().unwrap() > 0,
                    "{what}: status sees nothing: {}",
                    status["debris"]
                );
            }
            let edit = "a person's edit after the kill\n";
            if moved {
                std::fs::write(s.repo.join("README.md"), edit).unwrap();
            }
            let by_land = kills % 2 == 1 && run.is_some();
            let repair = if by_land {
                s.env.mas(&s.repo, &["--agent", "lead", "land", run.as_deref().unwrap()])
            } else {
                s.env.mas(&s.repo, &["--agent", "carol", "doctor", "--fix"])
            };
            // A land of a run that had not landed yet may be refused (no quorum): the base stays.
            let landed = s.env.git(&s.repo, &["rev-parse", "main"]) != s.base;
            if !by_land || landed {
                assert!(repair.status.success(), "{what}: the repair failed: {}{}", stdout(&repair), stderr(&repair));
            }
            assert!(!s.repo.join(".git/index.lock").exists(), "{what}: index.lock left");
            // (A relative `-P` path also names the agents' own notes/alice.md in their worktrees:
            // a kill there changes who wins, not what must hold.)
            let head_tree = s.env.git(&s.repo, &["rev-parse", "main^{tree}"]);
            assert_eq!(s.env.git(&s.repo, &["write-tree"]), head_tree, "{what}: the index is not main");
            if landed {
                assert_eq!(s.env.git(&s.repo, &["rev-list", "--count", &format!("{}..main", s.base)]), "1", "{what}");
            } else {
                assert_eq!(head_tree, s.env.git(&s.repo, &["rev-parse", &format!("{}^{{tree}}", s.base)]), "{what}");
            }
            let want = if moved { " M README.md\n?? mine.txt\n" } else { "?? mine.txt\n" };
            assert_eq!(porcelain(s), want, "{what}");
            assert_eq!(std::fs::read_to_string(s.repo.join("mine.txt")).unwrap(), "a person's untracked file\n");
        },
    );
    eprintln!("coordinate checkout kills: {kills} over {} (syscall, path) pairs: {states:?}", triggers.len());
    assert!(kills >= 10, "{kills}");
    assert!(states.contains_key("checkout behind, index.lock left"), "{states:?}");
}

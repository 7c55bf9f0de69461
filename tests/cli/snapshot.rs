//! Snapshots and frames on the fixture project, through the real binary.

use crate::common::*;
use crate::json::snapshot::{PublishOut, SnapshotOut, VerifyOut};
use crate::json::watch::WatchEventOut;
use git_mas::attention::snapshot::Target;
use std::path::Path;

/// The fixture's own inputs, as a user would pass them.
const INPUTS: &[&str] =
    &["--scip", "index.scip", "--diagnostics", "diagnostics/cargo.json", "--diagnostics", "diagnostics/ruff.sarif"];

fn snapshot_json(env: &TestEnv, dir: &Path, extra: &[&str]) -> SnapshotOut {
    let mut args = vec!["snapshot", "--json"];
    args.extend_from_slice(extra);
    let out = env.mas(dir, &args);
    assert!(out.status.success(), "snapshot {extra:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn ids(v: &SnapshotOut) -> Vec<String> {
    v.snapshot.targets.iter().map(|t| t.id.clone()).collect()
}

#[test]
fn snapshots_are_byte_identical_across_runs_worktrees_and_input_order() {
    let env = TestEnv::new();
    let repo = env.repo("det");
    let wt = env.root().join("det-wt");
    env.git_quiet_ok(&repo, &["worktree", "add", "--quiet", "--detach", wt.to_str().unwrap()]);
    let task = ["--task", "fix the tax rounding in pricing"];
    let args: Vec<&str> = INPUTS.iter().copied().chain(task).collect();
    let a = snapshot_json(&env, &repo, &args);
    let b = snapshot_json(&env, &repo, &args);
    assert_eq!(a.hash, b.hash);
    assert_eq!(a.snapshot, b.snapshot);
    // The linked worktree reads its own copies of the same input files.
    let c = snapshot_json(&env, &wt, &args);
    assert_eq!(a.hash, c.hash, "main worktree and linked worktree agree");
    // Diagnostics listed in the other order.
    let reordered =
        ["--scip", "index.scip", "--diagnostics", "diagnostics/ruff.sarif", "--diagnostics", "diagnostics/cargo.json"];
    let d = snapshot_json(&env, &repo, &reordered.iter().copied().chain(task).collect::<Vec<_>>());
    assert_eq!(a.hash, d.hash);
    // And the hash is the SHA-256 of the canonical snapshot bytes.
    assert_eq!(a.hash, a.snapshot.frame_hash());
    assert_eq!(a.hash.len(), 64);
    let sources = &a.snapshot.sources;
    assert_eq!(sources.centrality.as_deref(), Some("scip"));
    assert_eq!(sources.diagnostics, ["cargo", "sarif"]);
    assert!(sources.symbols.iter().any(|s| s == "tree-sitter-rust"));
}

#[test]
fn ranking_follows_references_errors_and_the_task() {
    let env = TestEnv::new();
    let repo = env.repo("rank");
    let args: Vec<&str> = INPUTS.iter().copied().chain(["--task", "make report.rs print totals"]).collect();
    let v = snapshot_json(&env, &repo, &args);
    let ids = ids(&v);
    let pos = |id: &str| ids.iter().position(|x| x == id);
    // The task names report.rs: it is in the top 3.
    assert!(pos("src/report.rs").is_some_and(|p| p < 3), "{ids:?}");
    // Every target that carries a signal outranks a leaf file that carries none (and is unlisted).
    let targets = &v.snapshot.targets;
    for t in targets {
        assert!(t.saliency > 0.0);
        let s = &t.signals;
        for (name, got, w) in [
            ("task", s.task, 0.35),
            ("errors", s.errors, 0.18),
            ("warnings", s.warnings, 0.07),
            ("centrality", s.centrality, 0.25),
            ("recency", s.recency, 0.15),
        ] {
            assert!(got <= w, "{} {name}", t.id);
        }
    }
    // The most referenced document in the index ranks above files with no references and no errors.
    let file = |t: &&Target| !t.id.contains('#');
    let central =
        targets.iter().filter(file).max_by(|a, b| a.signals.centrality.total_cmp(&b.signals.centrality)).unwrap();
    let quiet = targets.iter().filter(file).find(|t| {
        let s = &t.signals;
        s.centrality == 0.0 && s.errors == 0.0 && s.task == 0.0
    });
    if let Some(q) = quiet {
        assert!(pos(&central.id) < pos(&q.id));
    }
    // Files with errors outrank untouched leaves too.
    let with_errors: Vec<&Target> = targets.iter().filter(|t| t.signals.errors > 0.0).collect();
    assert!(!with_errors.is_empty(), "the fixture's diagnostics include errors");
}

#[test]
fn publish_only_on_change_and_verify_reproduces() {
    let env = TestEnv::new();
    let repo = env.repo("pub");
    env.agents(&repo, &["alice"]);
    let mut args = vec!["--agent", "alice", "snapshot", "--publish", "--json", "--task", "tax"];
    args.extend_from_slice(INPUTS);
    let first: SnapshotOut = serde_json::from_str(&env.mas_ok(&repo, &args)).unwrap();
    assert!(
        matches!(first.publish, Some(PublishOut::New { published: true, previous: None, .. })),
        "{:?}",
        first.publish
    );
    let second: SnapshotOut = serde_json::from_str(&env.mas_ok(&repo, &args)).unwrap();
    assert_eq!(
        second.publish,
        Some(PublishOut::Unchanged { published: false, reason: "unchanged".into() }),
        "same hash: nothing published"
    );
    assert_eq!(env.git(&repo, &["rev-list", "--count", "refs/mas/frame"]), "1");
    // A working-tree change is a new frame, whose record names the previous one.
    std::fs::write(
        repo.join("src/money.rs"),
        std::fs::read_to_string(repo.join("src/money.rs")).unwrap() + "\n// edited\n",
    )
    .unwrap();
    let third: SnapshotOut = serde_json::from_str(&env.mas_ok(&repo, &args)).unwrap();
    let Some(PublishOut::New { published: true, previous, commit }) = &third.publish else {
        panic!("{:?}", third.publish)
    };
    assert_eq!(previous.as_ref(), Some(&first.hash));
    assert_eq!(commit, &env.git(&repo, &["rev-parse", "refs/mas/frame"]));
    let money = third.snapshot.targets.iter().find(|t| t.id == "src/money.rs").unwrap();
    assert_eq!(money.signals.recency, 0.15);

    // --verify recomputes from the stored inputs, even after the working tree moved on.
    std::fs::write(repo.join("src/money.rs"), "// rewritten\n").unwrap();
    let out = env.mas(&repo, &["snapshot", "--verify", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: VerifyOut = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.ok && v.verification.first_difference.is_none(), "{v:?}");
    assert_eq!(v.verification.recomputed_hash, third.hash);
    // And from another clone.
    let other = env.root().join("other");
    env.git_quiet_ok(env.root(), &["clone", "--quiet", repo.to_str().unwrap(), other.to_str().unwrap()]);
    env.git_quiet_ok(&other, &["fetch", "--quiet", "origin", "refs/mas/*:refs/mas/*"]);
    let out = env.mas(&other, &["snapshot", "--verify"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let shown = env.mas_ok(&repo, &["frame", "--top", "5"]);
    assert!(shown.contains(&third.hash) && shown.contains("saliency"), "{shown}");
}

/// Rewrites the current frame's commit with one file of its tree replaced, as a forger would.
fn tamper(env: &TestEnv, repo: &Path, path: &str, content: &str) {
    let tmp = env.root().join("tamper-index");
    let git_env = |cmd: &mut std::process::Command| {
        cmd.env("GIT_INDEX_FILE", &tmp);
    };
    let mut read = env.git_cmd(repo);
    git_env(&mut read);
    assert!(read.args(["read-tree", "refs/mas/frame"]).status().unwrap().success());
    let file = env.root().join("tampered");
    std::fs::write(&file, content).unwrap();
    let blob = env.git(repo, &["hash-object", "-w", file.to_str().unwrap()]);
    let mut upd = env.git_cmd(repo);
    git_env(&mut upd);
    assert!(
        upd.args(["update-index", "--add", "--cacheinfo", &format!("100644,{blob},{path}")])
            .status()
            .unwrap()
            .success()
    );
    let mut wt = env.git_cmd(repo);
    git_env(&mut wt);
    let tree = String::from_utf8(wt.arg("write-tree").output().unwrap().stdout).unwrap();
    let parents = env.git(repo, &["log", "-1", "--format=%P", "refs/mas/frame"]);
    let mut args = vec!["commit-tree", tree.trim(), "-m", "frame"];
    for p in parents.split_whitespace() {
        args.extend(["-p", p]);
    }
    let commit = env.git(repo, &args);
    env.git_quiet_ok(repo, &["update-ref", "refs/mas/frame", &commit]);
}

#[test]
fn verify_catches_a_tampered_input_and_a_tampered_snapshot() {
    let env = TestEnv::new();
    let repo = env.repo("tamper");
    env.agents(&repo, &["alice"]);
    let mut args = vec!["--agent", "alice", "snapshot", "--publish", "--task", "fix report.rs"];
    args.extend_from_slice(INPUTS);
    env.mas_quiet_ok(&repo, &args);
    let good = env.git(&repo, &["rev-parse", "refs/mas/frame"]);

    tamper(&env, &repo, "inputs/task.txt", "fix money.rs");
    let out = env.mas(&repo, &["snapshot", "--verify"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(stderr(&out).contains("first difference: inputs.task"), "{}", stderr(&out));

    env.git_quiet_ok(&repo, &["update-ref", "refs/mas/frame", &good]);
    tamper(&env, &repo, "snapshot.json", "{}");
    let out = env.mas(&repo, &["snapshot", "--verify", "--json"]);
    assert_eq!(out.status.code(), Some(4));
    let v: VerifyOut = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!v.ok);
    assert!(v.verification.first_difference.as_deref().unwrap().contains("snapshot.json does not hash"), "{v:?}");
    // Verifying a named frame works too.
    assert_eq!(env.mas(&repo, &["snapshot", "--verify", &good]).status.code(), Some(0));
}

#[test]
fn bad_inputs_are_errors_or_counted_skips_and_change_no_ref() {
    let env = TestEnv::new();
    let repo = env.repo("bad");
    env.agents(&repo, &["alice"]);
    let before = env.refs(&repo);
    let garbage = env.root().join("garbage.scip");
    std::fs::write(&garbage, b"\x0a\xff\xff\xff\xff\x0f garbage").unwrap();
    let truncated = env.root().join("truncated.scip");
    let real = std::fs::read(repo.join("index.scip")).unwrap();
    std::fs::write(&truncated, &real[..real.len() / 2]).unwrap();
    let sarif_v2 = env.root().join("old.sarif");
    std::fs::write(&sarif_v2, r#"{"version":"2.0.0","runs":[]}"#).unwrap();
    for args in [
        vec!["--agent", "alice", "snapshot", "--publish", "--scip", garbage.to_str().unwrap()],
        vec!["--agent", "alice", "snapshot", "--publish", "--scip", truncated.to_str().unwrap()],
        vec!["--agent", "alice", "snapshot", "--publish", "--diagnostics", sarif_v2.to_str().unwrap()],
        vec!["--agent", "alice", "snapshot", "--publish", "--scip", "no-such-file.scip"],
    ] {
        let out = env.mas(&repo, &args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).starts_with("Error:"), "{}", stderr(&out));
    }
    assert_eq!(env.refs(&repo), before);

    // An empty index file is an error that says so (an indexer that failed), not an empty frame.
    let empty = env.root().join("empty.scip");
    std::fs::write(&empty, b"").unwrap();
    let out = env.mas(&repo, &["--agent", "alice", "snapshot", "--publish", "--scip", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("empty"), "{}", stderr(&out));
    assert_eq!(env.refs(&repo), before);
    // Regex metacharacters in the task are plain text.
    let v = snapshot_json(&env, &repo, &["--task", r"fix (.*)+ [a-z]{2,} \d $^ report.rs?"]);
    assert!(v.snapshot.targets.iter().any(|t| t.id == "src/report.rs" && t.signals.task > 0.0));
    // Diagnostics for a file that no longer exists are counted, not listed.
    let diags = env.root().join("gone.jsonl");
    std::fs::write(&diags, "{\"path\":\"src/deleted.rs\",\"line\":3,\"severity\":\"error\"}\n{\"path\":\"/elsewhere/x.rs\",\"line\":1,\"severity\":\"error\"}\n").unwrap();
    let v = snapshot_json(&env, &repo, &["--diagnostics", diags.to_str().unwrap()]);
    assert_eq!(v.snapshot.skipped.diagnostics_missing_files, 1);
    assert_eq!(v.snapshot.skipped.diagnostics_outside_repo, 1);
}

#[test]
fn a_repository_without_commits_and_non_utf8_names() {
    let env = TestEnv::new();
    let dir = env.root().join("fresh");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures-repo"), &dir);
    env.git_quiet_ok(&dir, &["init", "--quiet", "-b", "main"]);
    use std::os::unix::ffi::OsStrExt;
    std::fs::write(dir.join(std::ffi::OsStr::from_bytes(b"bad-\xff-name.rs")), "fn main() {}\n").unwrap();
    let v = snapshot_json(&env, &dir, &[]);
    assert!(v.snapshot.base.is_none());
    // Everything is new in the working tree, so every file is touched.
    let ids = ids(&v);
    assert!(ids.iter().any(|i| i == "src/lib.rs"), "{ids:?}");
    assert_eq!(v.snapshot.skipped.non_utf8_paths, 1);
}

#[test]
fn watch_publishes_a_frame_when_the_workspace_changes_and_stops_on_ctrl_c() {
    use std::io::BufRead;
    let env = TestEnv::new();
    let repo = env.repo("watch");
    env.agents(&repo, &["alice"]);
    // Killed when dropped: a failed assertion must not leave the watcher running.
    let mut child = GroupChild::spawn(
        env.mas_cmd(&repo)
            .args(["--agent", "alice", "watch", "--debounce-ms", "100"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped()),
    )
    .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first: WatchEventOut = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert!(first.previous.is_none());
    // Wait until the watcher is running, then change a tracked file.
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("watching") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "watch exited early");
    }
    std::fs::write(repo.join("src/config.rs"), "// changed\n").unwrap();
    let second: WatchEventOut = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(second.previous.as_ref(), Some(&first.hash));
    assert!(second.changed_targets.iter().any(|t| t == "src/config.rs"), "{second:?}");
    assert_eq!(second.commit, env.git(&repo, &["rev-parse", "refs/mas/frame"]));
    assert_eq!(env.git(&repo, &["rev-list", "--count", "refs/mas/frame"]), "2");
    let pid = child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "Ctrl-C is a clean stop");
}

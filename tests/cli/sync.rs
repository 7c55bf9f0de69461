//! Two clones exchanging records through a real bare remote.

use crate::common::*;
use std::path::{Path, PathBuf};

struct Pair {
    env: TestEnv,
    a: PathBuf,
    b: PathBuf,
}

fn pair() -> Pair {
    let env = TestEnv::new();
    let remote = env.root().join("remote.git");
    env.git(env.root(), &["init", "--quiet", "--bare", "-b", "main", remote.to_str().unwrap()]);
    let a = env.repo("a");
    env.agents(&a, &["alice", "bob"]);
    env.git(&a, &["remote", "add", "origin", remote.to_str().unwrap()]);
    env.git(&a, &["push", "--quiet", "origin", "main"]);
    let b = env.root().join("b");
    env.git(env.root(), &["clone", "--quiet", remote.to_str().unwrap(), b.to_str().unwrap()]);
    Pair { env, a, b }
}

fn append(env: &TestEnv, dir: &Path, agent: &str, refname: Option<&str>, n: i64) {
    let payload = format!(r#"{{"n":{n}}}"#);
    let mut args = vec!["--agent", agent, "record", "append", "--kind", "note", "--payload", &payload];
    if let Some(r) = refname {
        args.extend(["--ref", r]);
    }
    env.mas_ok(dir, &args);
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

    env.mas_ok(&a, &["sync"]);
    let out = env.mas_ok(&b, &["sync", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let actions: Vec<&str> =
        report["events"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert!(actions.contains(&"rebased") && actions.contains(&"created") && actions.contains(&"pushed"), "{actions:?}");
    env.mas_ok(&a, &["sync"]);

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
    env.mas_ok(&a, &["sync"]);
    env.mas_ok(&b, &["sync"]);
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
    env.mas_ok(&a, &["sync"]);
    // Nothing was lost: all three records, in both clones and on the remote.
    for dir in [&a, &b] {
        let mut got = ns(&env, dir, "refs/mas/shared/x");
        got.sort();
        assert_eq!(got, vec![1, 2, 3]);
    }
    let remote = env.root().join("remote.git");
    assert_eq!(env.git(&remote, &["rev-list", "--count", "refs/mas/shared/x"]), "3");
}

#[test]
fn an_agents_own_chain_written_from_two_clones_is_reported_diverged_and_left_alone() {
    let Pair { env, a, b } = pair();
    append(&env, &a, "alice", None, 1);
    env.mas_ok(&a, &["sync"]);
    env.mas_ok(&b, &["sync"]);
    append(&env, &a, "alice", None, 2);
    append(&env, &b, "alice", None, 3);
    env.mas_ok(&a, &["sync"]);
    let before = env.git(&b, &["rev-parse", "refs/mas/journal/alice"]);
    let out = env.mas(&b, &["sync"]);
    assert_eq!(out.status.code(), Some(5));
    assert!(stdout(&out).contains("diverged"), "{}", stdout(&out));
    assert!(stderr(&out).contains("refs/mas/journal/alice"));
    assert_eq!(env.git(&b, &["rev-parse", "refs/mas/journal/alice"]), before);
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

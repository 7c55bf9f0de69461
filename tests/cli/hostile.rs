//! Records pushed with plain git and no key never change a decision: not the next sequence
//! number, not the current frame, not the gate.

use crate::common::*;
use crate::json::frame::FrameOut;
use crate::json::snapshot::{PublishOut, SnapshotOut};
use git_mas::identity::AgentKey;
use git_mas::store::record::Record;
use serde_json::json;
use std::path::Path;

#[test]
fn an_unsigned_record_with_the_largest_sequence_number_does_not_stop_later_appends() {
    let env = TestEnv::new();
    let repo = env.repo("overflow");
    env.agents(&repo, &["alice", "bob"]);
    let shared = "refs/mas/shared/board";
    env.mas_quiet_ok(
        &repo,
        &["--agent", "alice", "record", "append", "--ref", shared, "--kind", "note", "--payload", "{}"],
    );
    let forged = Record::new("note", "alice", u64::MAX, json!({"n": "max"}));
    forge_record(&env, &repo, shared, &forged.to_bytes(), "");
    // A signed record by someone not on the roster, with a huge number too.
    let stranger = Record::new("note", "mallory", u64::MAX - 1, json!({})).sign(&AgentKey::from_seed([7; 32]));
    forge_record(&env, &repo, shared, &stranger.to_bytes(), "");

    for agent in ["bob", "alice", "bob"] {
        env.mas_quiet_ok(
            &repo,
            &["--agent", agent, "record", "append", "--ref", shared, "--kind", "note", "--payload", "{}"],
        );
    }
    let (code, json) = log_json(&env, &repo, shared);
    assert_eq!(code, Some(4), "the forged records are reported");
    assert_eq!(
        statuses(&json[0]),
        ["verified", "verified", "verified", "unknown_participant", "auth_required", "verified"]
    );
    let seqs: Vec<u64> = json[0]["records"].as_array().unwrap().iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert_eq!(&seqs[..3], [4, 3, 2], "numbers follow the last verified record: {seqs:?}");
}

#[test]
fn a_frame_by_a_stranger_at_the_tip_is_not_the_current_frame_and_the_gate_still_works() {
    let env = TestEnv::new();
    let repo = env.repo("frames");
    env.agents(&repo, &["alice", "bob"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "snapshot", "--publish"]);
    let frame: FrameOut = serde_json::from_str(&env.mas_ok(&repo, &["frame", "--json"])).unwrap();
    let hash = frame.hash;
    env.mas_quiet_ok(&repo, &["--agent", "bob", "focus", "publish", "--targets", "src/money.rs"]);
    assert_eq!(env.mas(&repo, &["--agent", "bob", "focus", "status"]).status.code(), Some(0));

    // mallory (not on the roster) and an unsigned record claiming alice, each with a snapshot.
    let snapshot = env.git(&repo, &["rev-parse", "refs/mas/frame:snapshot.json"]);
    let extra = format!("100644 blob {snapshot}\tsnapshot.json\n");
    let fake = json!({"hash": "f".repeat(64), "previous": hash, "targets": 1, "truncated": false});
    let by_mallory = Record::new("frame", "mallory", 99, fake.clone()).sign(&AgentKey::from_seed([9; 32]));
    forge_record(&env, &repo, "refs/mas/frame", &by_mallory.to_bytes(), &extra);
    forge_record(&env, &repo, "refs/mas/frame", &Record::new("frame", "alice", 100, fake).to_bytes(), &extra);

    let now: FrameOut = serde_json::from_str(&env.mas_ok(&repo, &["frame", "--json"])).unwrap();
    assert_eq!(now.hash, hash, "the current frame is the newest verified one");
    assert_eq!(now.publisher, "alice");
    let status = env.mas(&repo, &["--agent", "bob", "focus", "status"]);
    assert_eq!(status.status.code(), Some(0), "bob's focus is not old-frame: {}", stdout(&status));
    let gate = env.mas(&repo, &["--agent", "bob", "gate", "--paths", "src/money.rs"]);
    assert_eq!(gate.status.code(), Some(0), "the gate does not fail closed: {}", stderr(&gate));
    // Publishing the same snapshot again writes nothing: it is already the current verified frame.
    let again: SnapshotOut =
        serde_json::from_str(&env.mas_ok(&repo, &["--agent", "alice", "snapshot", "--publish", "--json"])).unwrap();
    assert!(matches!(again.publish, Some(PublishOut::Unchanged { published: false, .. })), "{:?}", again.publish);
}

#[test]
fn a_lock_left_by_a_crash_is_named_within_seconds_not_spun_on() {
    let env = TestEnv::new();
    let repo = env.repo("stale-lock");
    env.agents(&repo, &["alice"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note", "--payload", "{}"]);
    let lock = repo.join(".git/refs/mas/journal/alice.lock");
    // Fresh, as if its writer had died just now: reported once it is old enough, within seconds.
    std::fs::write(&lock, "").unwrap();
    let started = std::time::Instant::now();
    let out = env.mas(&repo, &["--agent", "alice", "record", "append", "--kind", "note", "--payload", "{}"]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
    let err = stderr(&out);
    assert!(err.contains(lock.to_str().unwrap()) && err.contains("doctor --fix"), "{err}");
    // An old one at once.
    std::process::Command::new("touch").args(["-d", "1 hour ago"]).arg(&lock).status().unwrap();
    let started = std::time::Instant::now();
    let out = env.mas(&repo, &["--agent", "alice", "record", "append", "--kind", "note", "--payload", "{}"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    assert!(stderr(&out).contains("3600 s ago") || stderr(&out).contains("3601 s ago"), "{}", stderr(&out));
    assert!(lock.exists(), "another process's lock is never removed by an append");
    std::fs::remove_file(&lock).unwrap();
    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note", "--payload", "{}"]);
    let (code, json) = log_json(&env, &repo, "refs/mas/journal/alice");
    assert_eq!((code, json[0]["verified"].as_u64()), (Some(0), Some(2)), "nothing was written by the refused appends");
}

#[test]
fn a_record_re_parented_by_sync_below_higher_numbers_is_no_replay_trap() {
    let env = TestEnv::new();
    let team = env.team(&["alice", "bob"]).named("a").remote().build();
    let (a, b) = (team.repo.clone(), env.clone_of(team.remote(), "b"));
    let shared = "refs/mas/shared/x";
    let append = |dir: &Path, agent: &str| {
        env.mas_quiet_ok(
            dir,
            &["--agent", agent, "record", "append", "--ref", shared, "--kind", "note", "--payload", "{}"],
        );
    };
    append(&a, "alice");
    env.mas_quiet_ok(&a, &["sync"]);
    env.mas_quiet_ok(&b, &["sync"]);
    append(&b, "bob");
    append(&b, "bob");
    env.mas_quiet_ok(&b, &["sync"]);
    // alice's second record (seq 2) is re-parented on top of bob's seq 3.
    append(&a, "alice");
    env.mas_quiet_ok(&a, &["sync"]);
    env.mas_quiet_ok(&b, &["sync"]);
    // bob's next record must be numbered above his own 3, not above the tip's 2.
    append(&b, "bob");
    env.mas_quiet_ok(&b, &["sync"]);
    env.mas_quiet_ok(&a, &["sync"]);
    for dir in [&a, &b] {
        let (code, json) = log_json(&env, dir, shared);
        assert_eq!(code, Some(0), "every record verifies: {}", json[0]);
        assert_eq!(json[0]["verified"], 5);
    }
}

//! Records forged with plain git are read, named, and never count: spoofed, unsigned, replayed,
//! from an unknown agent, misplaced, not JSON, or of an unknown schema.

use crate::common::*;
use crate::json::check::CheckOut;
use git_mas::identity::AgentKey;
use git_mas::store::record::Record;
use serde_json::json;
use std::path::Path;

/// Appends raw record bytes on top of `refname` with git plumbing, as an attacker would.
fn plumb(env: &TestEnv, repo: &Path, refname: &str, bytes: &[u8]) {
    forge_record(env, repo, refname, bytes, "");
}

fn seed_of(env: &TestEnv, agent: &str) -> AgentKey {
    let hex = std::fs::read_to_string(env.keys().join(format!("{agent}.key"))).unwrap();
    let bytes = git_mas::identity::key::decode_hex(hex.trim()).unwrap();
    AgentKey::from_seed(bytes.try_into().unwrap())
}

#[test]
fn spoofed_unsigned_replayed_and_unknown_records_are_named_and_not_verified() {
    let env = TestEnv::new();
    let repo = env.repo("verify");
    env.agents(&repo, &["alice", "bob"]);
    let journal = "refs/mas/journal/alice";
    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note", "--payload", r#"{"n":1}"#]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note", "--payload", r#"{"n":2}"#]);
    let first_blob = env.git(&repo, &["cat-file", "-p", &format!("{journal}~1:record.json")]);

    // Signed with bob's key but claiming alice.
    let spoof = Record::new("note", "alice", 3, json!({"n": "spoof"})).sign(&seed_of(&env, "bob"));
    plumb(&env, &repo, journal, &spoof.to_bytes());
    // Unsigned.
    plumb(&env, &repo, journal, &Record::new("note", "alice", 4, json!({"n": "unsigned"})).to_bytes());
    // A replay: alice's genuine first record, appended again.
    plumb(&env, &repo, journal, first_blob.as_bytes());
    // An agent nobody put on the roster.
    let stranger = AgentKey::from_seed([42; 32]);
    plumb(&env, &repo, journal, &Record::new("note", "zed", 9, json!({})).sign(&stranger).to_bytes());
    // Bob's genuine record, placed in alice's chain.
    let bobs = Record::new("note", "bob", 10, json!({})).sign(&seed_of(&env, "bob"));
    plumb(&env, &repo, journal, &bobs.to_bytes());
    // And a genuine later record by alice still verifies after all of that.
    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note", "--payload", r#"{"n":11}"#]);

    let (code, json) = log_json(&env, &repo, journal);
    assert_eq!(code, Some(4), "exit 4 when something did not verify");
    assert_eq!(
        statuses(&json[0]),
        ["verified", "misplaced", "unknown_participant", "replay", "auth_required", "spoof", "verified", "verified"]
    );
    assert_eq!(json[0]["verified"], 3);
    assert_eq!(json[0]["problems"], 5);

    let human = env.mas(&repo, &["log", "alice"]);
    let text = stdout(&human);
    for label in ["SPOOF", "AUTH_REQUIRED", "REPLAY", "UNKNOWN_PARTICIPANT", "MISPLACED"] {
        assert!(text.contains(label), "{label} missing from:\n{text}");
    }
    assert!(text.contains("seq 1 after 2"), "{text}");
}

#[test]
fn broken_blobs_are_listed_and_the_broken_ref_is_named() {
    let env = TestEnv::new();
    let repo = env.repo("broken");
    env.agents(&repo, &["alice"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note"]);
    plumb(&env, &repo, "refs/mas/junk/not-json", b"this is not json");
    plumb(&env, &repo, "refs/mas/junk/v99", br#"{"schema":99,"kind":"note","agent":"alice","seq":1,"payload":null}"#);

    let out = env.mas(&repo, &["log"]);
    assert_eq!(out.status.code(), Some(4));
    let text = stdout(&out);
    assert!(text.contains("refs/mas/journal/alice") && text.contains("refs/mas/junk/not-json"), "{text}");
    let (_, json) = log_json(&env, &repo, "refs/mas/junk/v99");
    assert_eq!(statuses(&json[0]), ["malformed"]);
    assert!(json[0]["records"][0]["verdict"]["reason"].as_str().unwrap().contains("unknown schema version 99"));
    let (_, json) = log_json(&env, &repo, "refs/mas/junk/not-json");
    assert!(json[0]["records"][0]["verdict"]["reason"].as_str().unwrap().contains("not JSON"));
    // Appending on top of a broken tip still works and keeps counting.
    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note", "--ref", "refs/mas/junk/v99"]);
}

/// Like [`plumb`], but the forged commit's tree is `like`'s tree with its `record.json` replaced, so
/// a forged frame carries a real snapshot.
fn plumb_like(env: &TestEnv, repo: &Path, refname: &str, like: &str, bytes: &[u8]) {
    let file = env.root().join("forged.json");
    std::fs::write(&file, bytes).unwrap();
    let blob = env.git(repo, &["hash-object", "-w", file.to_str().unwrap()]);
    let listing: String =
        env.git(repo, &["ls-tree", like])
            .lines()
            .map(|l| {
                if l.ends_with("\trecord.json") {
                    format!("100644 blob {blob}\trecord.json\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
    forge_tree(env, repo, refname, &listing, Some(like));
}

/// The record at the tip of `refname`, as stored.
fn tip_record(env: &TestEnv, repo: &Path, refname: &str) -> serde_json::Value {
    serde_json::from_str(&env.git(repo, &["cat-file", "-p", &format!("{refname}:record.json")])).unwrap()
}

/// A team's clone `a` with a verified frame, alice's focus and a shared chain, all synced to a bare
/// remote; then someone with push access and no key pushes, with plain git, an unsigned record with
/// the largest sequence number on the shared chain, an unsigned frame by "mallory" (not on the
/// roster) and a focus record claiming alice signed with bob's key. Returns (env, remote, the
/// verified frame's hash).
fn hostile_remote() -> (TestEnv, std::path::PathBuf, String) {
    let env = TestEnv::new();
    let team = env.team(&["alice", "bob"]).named("a").frame("alice").focus("alice", "src/money.rs").remote().build();
    let (remote, a) = (team.remote().to_path_buf(), team.repo);
    env.mas_quiet_ok(
        &a,
        &[
            "--agent",
            "alice",
            "record",
            "append",
            "--kind",
            "note",
            "--ref",
            "refs/mas/shared/x",
            "--payload",
            r#"{"n":1}"#,
        ],
    );
    env.mas_quiet_ok(&a, &["sync"]);
    let frame_hash = tip_record(&env, &a, "refs/mas/frame")["payload"]["hash"].as_str().unwrap().to_string();

    // The attacker: a plain clone, plain git, no key.
    let m = env.root().join("mallory");
    env.git_quiet_ok(env.root(), &["clone", "--quiet", remote.to_str().unwrap(), m.to_str().unwrap()]);
    env.git_quiet_ok(&m, &["fetch", "--quiet", "origin", "refs/mas/*:refs/mas/*"]);
    let overflow = Record::new("note", "alice", u64::MAX, json!({"n": "overflow"}));
    plumb(&env, &m, "refs/mas/shared/x", &overflow.to_bytes());
    let frame_seq = tip_record(&env, &m, "refs/mas/frame")["seq"].as_u64().unwrap();
    let fake = Record::new("frame", "mallory", frame_seq + 1, json!({"hash": "0".repeat(64)}));
    plumb_like(&env, &m, "refs/mas/frame", "refs/mas/frame", &fake.to_bytes());
    let focus = tip_record(&env, &m, "refs/mas/focus/alice");
    let spoof = Record::new("focus", "alice", focus["seq"].as_u64().unwrap() + 1, focus["payload"].clone())
        .sign(&seed_of(&env, "bob"));
    plumb_like(&env, &m, "refs/mas/focus/alice", "refs/mas/focus/alice", &spoof.to_bytes());
    env.git_quiet_ok(&m, &["push", "--quiet", "origin", "refs/mas/shared/x", "refs/mas/frame", "refs/mas/focus/alice"]);
    (env, remote, frame_hash)
}

const FORGED: [(&str, &str, &str); 3] = [
    ("refs/mas/focus/alice", "spoof", "alice"),
    ("refs/mas/frame", "auth_required", "mallory"),
    ("refs/mas/shared/x", "auth_required", "alice"),
];

#[test]
fn records_pushed_with_plain_git_are_named_parked_by_sync_and_listed_by_check() {
    let (env, remote, _) = hostile_remote();

    // Sync stores them (refs are shared history) and names each one, as JSON...
    let b = env.clone_of(&remote, "b");
    let out = env.mas(&b, &["sync", "--json"]);
    assert_eq!(out.status.code(), Some(0), "every ref agrees with the remote: {}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut parked: Vec<(String, String, String, bool)> = report["parked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["ref"].as_str().unwrap().to_string(),
                p["verdict"]["status"].as_str().unwrap().to_string(),
                p["agent"].as_str().unwrap().to_string(),
                p["tip"].as_bool().unwrap(),
            )
        })
        .collect();
    parked.sort();
    let expected: Vec<(String, String, String, bool)> =
        FORGED.iter().map(|(r, v, a)| (r.to_string(), v.to_string(), a.to_string(), true)).collect();
    assert_eq!(parked, expected, "{report:#}");
    for (refname, _, _) in FORGED {
        assert_eq!(env.git(&b, &["rev-parse", refname]), env.git(&remote, &["rev-parse", refname]));
    }
    // ...and as text, with a warning pointing at `check --records`.
    let c = env.clone_of(&remote, "c");
    let out = env.mas(&c, &["sync"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for (refname, label, agent) in
        [("refs/mas/focus/alice", "SPOOF", "alice"), ("refs/mas/frame", "AUTH_REQUIRED", "mallory")]
    {
        let line = text.lines().find(|l| l.starts_with(refname) && l.contains("parked")).unwrap_or_else(|| {
            panic!("no parked line for {refname} in:\n{text}");
        });
        assert!(line.contains(label) && line.contains(&format!("claims {agent}")), "{line}");
    }
    assert!(stderr(&out).contains("check --records"), "{}", stderr(&out));
    // A second sync received nothing new: nothing to name.
    let again: serde_json::Value = serde_json::from_str(&env.mas_ok(&c, &["sync", "--json"])).unwrap();
    assert_eq!(again["parked"].as_array().unwrap().len(), 0);

    // `check --records` lists every record that does not verify, for CI to fail on (exit 6).
    let out = env.mas(&b, &["check", "--records", "--json"]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let listed: CheckOut = serde_json::from_slice(&out.stdout).unwrap();
    assert!(listed.commits.is_empty(), "no range: no commits");
    let mut got: Vec<(String, String)> =
        listed.unverified.unwrap().into_iter().map(|p| (p.refname, p.verdict.label().to_lowercase())).collect();
    got.sort();
    assert_eq!(got, FORGED.iter().map(|(r, v, _)| (r.to_string(), v.to_string())).collect::<Vec<_>>());
    let out = env.mas(&b, &["check", "--records"]);
    assert_eq!(out.status.code(), Some(6));
    assert!(stdout(&out).contains("SPOOF") && stdout(&out).contains("refs/mas/frame"), "{}", stdout(&out));
    // Without --records, check judges commits only; a clean store passes --records.
    let other = TestEnv::new();
    let clean = other.repo("clean");
    other.agents(&clean, &["alice"]);
    other.mas_quiet_ok(&clean, &["--agent", "alice", "record", "append", "--kind", "note"]);
    let out = other.mas(&clean, &["check", "--records"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// What the store's reading rule (only verified records count: the current frame is the newest
/// verified frame record, the next sequence number follows the last verified record) makes true
/// after such a sync.
#[test]
fn records_pushed_with_plain_git_change_no_decision_after_a_sync() {
    let (env, remote, frame_hash) = hostile_remote();
    let b = env.clone_of(&remote, "b");
    env.mas_quiet_ok(&b, &["sync"]);
    // The unsigned record with the largest sequence number does not stop appends.
    env.mas_quiet_ok(
        &b,
        &[
            "--agent",
            "bob",
            "record",
            "append",
            "--kind",
            "note",
            "--ref",
            "refs/mas/shared/x",
            "--payload",
            r#"{"n":2}"#,
        ],
    );
    let (_, log) = log_json(&env, &b, "refs/mas/shared/x");
    assert_eq!(statuses(&log[0]), ["verified", "auth_required", "verified"]);
    // The non-roster frame is not the current frame.
    let frame: serde_json::Value = serde_json::from_str(&env.mas_ok(&b, &["frame", "--json"])).unwrap();
    assert_eq!(frame["hash"], frame_hash.as_str());
    assert_eq!(frame["publisher"], "alice");
    // And the append goes out.
    env.mas_quiet_ok(&b, &["sync"]);
    assert_eq!(env.git(&b, &["rev-parse", "refs/mas/shared/x"]), env.git(&remote, &["rev-parse", "refs/mas/shared/x"]));
}

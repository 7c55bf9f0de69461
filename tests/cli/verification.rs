//! Records forged with plain git are read, named, and never count: spoofed, unsigned, replayed,
//! from an unknown agent, misplaced, not JSON, or of an unknown schema.

use crate::common::*;
use git_mas::identity::AgentKey;
use git_mas::store::record::Record;
use serde_json::json;
use std::path::Path;

/// Appends raw record bytes on top of `refname` with git plumbing, as an attacker would.
fn plumb(env: &TestEnv, repo: &Path, refname: &str, bytes: &[u8]) {
    let file = env.root().join("forged.json");
    std::fs::write(&file, bytes).unwrap();
    let blob = env.git(repo, &["hash-object", "-w", file.to_str().unwrap()]);
    let mut mktree = env.git_cmd(repo);
    mktree.arg("mktree").stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
    let mut child = mktree.spawn().unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(format!("100644 blob {blob}\trecord.json\n").as_bytes()).unwrap();
    let tree = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    let out = env.git_cmd(repo).args(["rev-parse", "--verify", "--quiet", refname]).output().unwrap();
    let parent = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let mut args = vec!["commit-tree", tree.trim(), "-m", "forged"];
    if !parent.is_empty() {
        args.extend(["-p", parent.as_str()]);
    }
    let commit = env.git(repo, &args);
    env.git(repo, &["update-ref", refname, &commit]);
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
    env.mas_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note", "--payload", r#"{"n":1}"#]);
    env.mas_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note", "--payload", r#"{"n":2}"#]);
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
    env.mas_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note", "--payload", r#"{"n":11}"#]);

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
    env.mas_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note"]);
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
    env.mas_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note", "--ref", "refs/mas/junk/v99"]);
}

//! The definition record of both types of run, as earlier versions wrote it and as this one
//! writes it: read by the same readers, verified under the same signatures.

use super::*;
use crate::devrun::{NewRun, Phase, RunDef, load_meta, start};
use crate::identity::{AgentKey, Roster};
use crate::store::record::{Record, Verdict};
use crate::store::{CasOutcome, Store};
use serde_json::json;
use std::path::Path;
use std::process::Command;

/// The seed of the key that signed the fixtures (alice's, on the scratch repository's roster).
const SEED: [u8; 32] = [7; 32];

/// A development run's definition as versions before [`RUN_TYPE_FIELD`] stored it: the bytes of
/// `Record::new("run", "alice", 1, serde_json::to_value(&run_def)).sign(key).to_bytes()`, with no
/// type in the payload.
pub(crate) const OLD_DEVELOPMENT: &str = r#"{"agent":"alice","kind":"run","payload":{"base":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","branch":"main","budget_ms":null,"check":"true","class":"development","created_at_ms":1767225600000,"goal":"fix tax","id":"r1","max_rounds":null,"quorum":1,"roster":["alice"],"started_by":"alice"},"schema":1,"seq":1,"sig":"0719c5dbfbd5aed42a708c1ce6d3abd04435d2189b926c93ea7723268153fd917651330e2381893652510edab7cb1779e97794c9cc26dadb766f858c3820030f"}"#;

/// A converge run's definition as versions before [`RUN_TYPE_FIELD`] stored it (the converge
/// recorder's `serde_json::to_value(&def)`, signed the same way): no type, no `class`.
pub(crate) const OLD_CONVERGE: &str = r#"{"agent":"alice","kind":"run","payload":{"driver":"alice","goal":"agree on shared scores","limits":{"budget_ms":1800000,"hop_timeout_ms":120000,"max_rounds":60},"pattern":"preference","peers":[{"name":"reference-0","spec":"builtin:reference"},{"name":"greedy-1","spec":"builtin:greedy"}],"run":"20260101T000000Z-1a2b3c4d"},"schema":1,"seq":1,"sig":"ddb6d8cc532951deccb2a41ae62aeac27728e3387deddf4fd9946aae98d96e1265685656fb6d252fe37f6393d1400503bde73594034248aa50f734f2552cdf03"}"#;

/// The run [`OLD_CONVERGE`] defines.
pub(crate) const OLD_CONVERGE_ID: &str = "20260101T000000Z-1a2b3c4d";

/// A repository whose committed roster names alice with the fixtures' key.
pub(crate) struct Scratch {
    _dir: tempfile::TempDir,
    /// Its store.
    pub store: Store,
    /// Its roster.
    pub roster: Roster,
    /// Alice's key.
    pub key: AgentKey,
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A fresh [`Scratch`] repository.
pub(crate) fn scratch() -> Scratch {
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::from_seed(SEED);
    git(dir.path(), &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(dir.path().join(".mas")).unwrap();
    std::fs::write(dir.path().join(crate::identity::ROSTER_PATH), format!("alice {}\n", key.did())).unwrap();
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-qm", "roster"]);
    let store = Store::discover(dir.path()).unwrap();
    let roster = store.roster().unwrap();
    assert!(roster.get("alice").is_some());
    Scratch { _dir: dir, store, roster, key }
}

/// Stores `bytes` (a fixture) as the first record of `refname`, byte for byte.
pub(crate) fn put(store: &Store, refname: &str, bytes: &str) {
    let record = Record::parse(bytes.as_bytes()).unwrap();
    assert_eq!(record.to_bytes(), bytes.as_bytes(), "the fixture is stored as it was written");
    let commit = store.write_record_commit(&record, &[], None).unwrap();
    assert_eq!(store.cas(refname, None, commit, "fixture").unwrap(), CasOutcome::Updated);
}

/// The verdict and payload of the first record of `refname`.
pub(crate) fn first(s: &Scratch, refname: &str) -> (Verdict, serde_json::Value) {
    let (entry, verdict) = s.store.verified_chain(refname, &s.roster).unwrap().remove(0);
    (verdict, entry.record.unwrap().payload)
}

#[test]
fn an_old_development_definition_still_verifies_and_reads_as_before() {
    let s = scratch();
    put(&s.store, &meta_ref("r1"), OLD_DEVELOPMENT);
    let (verdict, payload) = first(&s, &meta_ref("r1"));
    assert_eq!(verdict, Verdict::Verified, "an old signature still verifies");
    assert!(payload.get(RUN_TYPE_FIELD).is_none());
    assert_eq!(RunType::of_definition(&payload), Ok(RunType::Development));

    let meta = load_meta(&s.store, &s.roster, "r1").unwrap();
    let want: RunDef = serde_json::from_value(json!({
        "id": "r1", "goal": "fix tax", "class": "development", "roster": ["alice"], "quorum": 1,
        "branch": "main", "base": "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "max_rounds": null,
        "budget_ms": null, "check": "true", "created_at_ms": 1_767_225_600_000_u64, "started_by": "alice"
    }))
    .unwrap();
    assert_eq!(meta.def, want);
    assert_eq!((meta.phase, meta.problems), (Phase::Open, Vec::new()));
    assert_eq!(run_type(&s.store, "r1"), Some(RunType::Development));
    assert_eq!(list_of(&s.store, RunType::Development).unwrap(), ["r1"]);
    assert!(list_of(&s.store, RunType::Converge).unwrap().is_empty());
}

#[test]
fn a_new_development_definition_is_tagged_signed_and_reads() {
    let s = scratch();
    put(&s.store, &meta_ref("r1"), OLD_DEVELOPMENT);
    let new = NewRun { id: Some("r2".into()), goal: "fix tax".into(), ..NewRun::default() };
    let def = start(&s.store, &new, "alice", &s.key).unwrap();

    let (verdict, mut payload) = first(&s, &meta_ref("r2"));
    assert_eq!(verdict, Verdict::Verified);
    let tag = payload.as_object_mut().unwrap().remove(RUN_TYPE_FIELD);
    assert_eq!(tag, Some(json!("development")));
    assert_eq!(payload, serde_json::to_value(&def).unwrap(), "beside the tag, the definition's own fields");

    assert_eq!(load_meta(&s.store, &s.roster, "r2").unwrap().def, def);
    assert_eq!(run_type(&s.store, "r2"), Some(RunType::Development));
    assert_eq!(list_of(&s.store, RunType::Development).unwrap(), ["r1", "r2"], "old and new side by side");
    assert_eq!(first(&s, &meta_ref("r1")).0, Verdict::Verified);
}

#[test]
fn an_old_converge_definition_is_a_converge_run() {
    let s = scratch();
    put(&s.store, &meta_ref(OLD_CONVERGE_ID), OLD_CONVERGE);
    let (verdict, payload) = first(&s, &meta_ref(OLD_CONVERGE_ID));
    assert_eq!(verdict, Verdict::Verified, "an old signature still verifies");
    assert!(payload.get(RUN_TYPE_FIELD).is_none());
    assert_eq!(RunType::of_definition(&payload), Ok(RunType::Converge));
    assert_eq!(run_type(&s.store, OLD_CONVERGE_ID), Some(RunType::Converge));
    assert_eq!(list_of(&s.store, RunType::Converge).unwrap(), [OLD_CONVERGE_ID]);
    assert!(list_of(&s.store, RunType::Development).unwrap().is_empty());
}

#[test]
fn a_development_reader_refuses_a_converge_definition_by_its_type_not_its_id() {
    let s = scratch();
    // A tagged converge definition under an id a development run could have.
    let mut payload: serde_json::Value =
        serde_json::from_str::<serde_json::Value>(OLD_CONVERGE).unwrap()["payload"].clone();
    payload["run"] = "c1".into();
    let record = Record::new(RUN_KIND, "alice", 1, RunType::Converge.tag(payload)).sign(&s.key);
    let commit = s.store.write_record_commit(&record, &[], None).unwrap();
    s.store.cas(&meta_ref("c1"), None, commit, "fixture").unwrap();

    assert_eq!(run_type(&s.store, "c1"), Some(RunType::Converge));
    assert!(list_of(&s.store, RunType::Development).unwrap().is_empty());
    let err = load_meta(&s.store, &s.roster, "c1").unwrap_err().to_string();
    assert!(err.contains("it defines a converge run, not a development run"), "{err}");
}

#[test]
fn the_tag_decides_and_a_type_this_build_does_not_know_is_refused() {
    let cases = [
        (json!({"class": "development", "run_type": "converge"}), Ok(RunType::Converge)),
        (json!({"run": "x", "run_type": "development"}), Ok(RunType::Development)),
        (json!({"class": "development"}), Ok(RunType::Development)),
        (json!({"pattern": "preference"}), Ok(RunType::Converge)),
    ];
    for (payload, want) in cases {
        assert_eq!(RunType::of_definition(&payload), want, "{payload}");
    }
    for payload in [json!({"run_type": "nightly"}), json!({"run_type": 3})] {
        assert!(RunType::of_definition(&payload).is_err(), "{payload}");
    }
    let tagged = RunType::Development.tag(json!({"id": "r1"}));
    assert_eq!(tagged, json!({"id": "r1", "run_type": "development"}));
    assert_eq!(RunType::Converge.name(), "converge");
}

//! Lanes: `git mas claim '<glob>' --ttl` takes a lease on paths before any edit; the hooks refuse
//! other sessions' edits inside it and let its holder edit there without claiming.

use crate::common::*;
use crate::json::claim::LanesOut;
use crate::team_mode::{board, hook, team_repo, write_payload};
use std::path::Path;

/// The session agent holding `file`.
fn holder(env: &TestEnv, repo: &Path, file: &str) -> String {
    let b = board(env, repo);
    b.board.entries.iter().find(|e| e.focus.targets.iter().any(|t| t == file)).expect("held").focus.agent.clone()
}

fn claim(env: &TestEnv, repo: &Path, agent: &str, args: &[&str]) -> (Option<i32>, LanesOut) {
    let out = env.mas(repo, &[&["--agent", agent, "claim", "--json"][..], args].concat());
    let parsed = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", shown(&out)));
    (out.status.code(), parsed)
}

#[test]
fn a_lane_refuses_other_sessions_inside_it_frees_its_holder_and_overlaps_are_refused_by_name() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "s1", "README.md")).0, "allow");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "s2", "Cargo.toml")).0, "allow");
    let (s1, s2) = (holder(&env, &repo, "README.md"), holder(&env, &repo, "Cargo.toml"));

    // s1 takes a lane from its shell.
    let (code, out) = claim(&env, &repo, &s1, &["src/**", "--ttl", "4h"]);
    assert_eq!(code, Some(0), "{out:?}");
    assert_eq!(out.lanes.iter().map(|l| l.glob.as_str()).collect::<Vec<_>>(), ["src/**"]);
    // Its own edits inside need no claim: nothing is written.
    let focus = format!("refs/mas/focus/{s1}");
    let before = env.git(&repo, &["rev-parse", &focus]);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "s1", "src/orders/mod.rs")).0, "allow");
    assert_eq!(env.git(&repo, &["rev-parse", &focus]), before, "an edit inside its own lane claims nothing");
    // Another session's edit inside is refused, naming the lane and its holder; outside, allowed.
    let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "s2", "src/lib.rs"));
    assert_eq!(verdict, "deny", "{reason}");
    assert!(reason.contains(&s1) && reason.contains("lane src/**"), "{reason}");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "s2", "check.sh")).0, "allow");

    // Overlaps are refused, naming the holder: another's lane, another's claim.
    let refs = env.refs(&repo);
    let (code, out) = claim(&env, &repo, &s2, &["src/lib.rs"]);
    assert_eq!(code, Some(6), "{out:?}");
    assert_eq!((out.overlaps[0].holder.as_str(), out.overlaps[0].what.as_str()), (s1.as_str(), "its lane src/**"));
    let (code, out) = claim(&env, &repo, &s2, &["*.md"]);
    assert_eq!(code, Some(6), "{out:?}");
    assert_eq!(out.overlaps[0].what, "its claim on README.md");
    // Without --json, the refusal in words.
    let out = env.mas(&repo, &["--agent", &s2, "claim", "src/lib.rs"]);
    assert_eq!(out.status.code(), Some(6), "{}", shown(&out));
    let said = format!("src/lib.rs overlaps {s1}: its lane src/** (both hold src/lib.rs)");
    assert!(stderr(&out).contains(&said), "{}", shown(&out));
    assert_eq!(env.refs(&repo), refs, "a refused lane writes nothing");
    // A person's lane, from a terminal (mas.agent): the sessions keep off it too.
    let (code, _) = claim(&env, &repo, "alice", &["tools/**", "--ttl", "30m"]);
    assert_eq!(code, Some(0));
    let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "s2", "tools/new.sh"));
    assert_eq!(verdict, "deny", "{reason}");
    assert!(reason.contains("alice's lane tools/**"), "{reason}");

    // status lists the live lanes.
    let st: crate::json::status::StatusOut = serde_json::from_str(&env.mas_ok(&repo, &["status", "--json"])).unwrap();
    let mut listed: Vec<(String, String)> = st.lanes.iter().map(|l| (l.agent.clone(), l.glob.clone())).collect();
    listed.sort();
    assert_eq!(listed, [("alice".to_string(), "tools/**".to_string()), (s1.clone(), "src/**".to_string())]);
    assert!(env.mas_ok(&repo, &["status"]).contains("alice: lane tools/** (30 min left)"));
    // The commit gate refuses a file inside another's lane, as it refuses a held one.
    std::fs::write(repo.join("tools/new.sh"), "echo\n").unwrap();
    env.git_quiet_ok(&repo, &["add", "tools/new.sh"]);
    let out = env.mas(&repo, &["--agent", &s2, "gate", "--json"]);
    assert_eq!(out.status.code(), Some(6), "{}", shown(&out));
    assert!(stdout(&out).contains("alice's lane tools/**"), "{}", shown(&out));
    env.git_quiet_ok(&repo, &["rm", "--cached", "--quiet", "tools/new.sh"]);
    // Released: the path is free again.
    let out = env.mas(&repo, &["--agent", &s1, "release", "src/**", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let left: LanesOut = serde_json::from_slice(&out.stdout).unwrap();
    assert!(left.lanes.is_empty(), "{left:?}");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "s2", "src/lib.rs")).0, "allow");
    // A glob that leaves the repository is refused as usage.
    let out = env.mas(&repo, &["claim", "../outside/**"]);
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
}

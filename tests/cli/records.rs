//! Append, read and walk records from the main worktree, a subdirectory and linked worktrees.

use crate::common::*;
use git_mas::devrun::artifact::RefKind;
use git_mas::store::record::Verdict;

#[test]
fn records_written_in_one_worktree_are_read_in_the_others() {
    let env = TestEnv::new();
    let repo = env.repo("main-wt");
    env.agents(&repo, &["alice", "bob", "carol"]);
    let wt1 = env.root().join("wt1");
    let wt2 = env.root().join("wt2");
    env.git_quiet_ok(&repo, &["worktree", "add", "--quiet", "--detach", wt1.to_str().unwrap()]);
    env.git_quiet_ok(&repo, &["worktree", "add", "--quiet", "--detach", wt2.to_str().unwrap()]);

    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note", "--payload", r#"{"n":1}"#]);
    env.mas_quiet_ok(&wt1, &["--agent", "bob", "record", "append", "--kind", "note", "--payload", r#"{"n":2}"#]);
    // From a subdirectory of the second linked worktree.
    let sub = wt2.join("src/ledger");
    env.mas_quiet_ok(&sub, &["--agent", "carol", "record", "append", "--kind", "note", "--payload", r#"{"n":3}"#]);
    env.mas_quiet_ok(&sub, &["--agent", "carol", "record", "append", "--kind", "note", "--payload", r#"{"n":4}"#]);

    for dir in [&repo, &wt1, &wt2.join("src")] {
        for (agent, payloads) in [("alice", vec![1]), ("bob", vec![2]), ("carol", vec![4, 3])] {
            let (code, json) = log_chains(&env, dir, agent);
            assert_eq!(code, Some(0), "{agent} from {}", dir.display());
            let chain = &json[0];
            assert_eq!(chain.refname, format!("refs/mas/journal/{agent}"));
            let got: Vec<i64> =
                chain.records.iter().map(|r| r.payload.as_ref().unwrap()["n"].as_i64().unwrap()).collect();
            assert_eq!(got, payloads);
            assert!(all_verified(chain));
        }
    }
    // The per-agent sequence numbers run 1, 2, … along the chain.
    let (_, json) = log_chains(&env, &wt1, "carol");
    let seqs: Vec<Option<u64>> = json[0].records.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, vec![Some(2), Some(1)]);
    // Nothing touched any index or working tree.
    for dir in [&repo, &wt1, &wt2] {
        assert_eq!(env.git(dir, &["status", "--porcelain"]), "");
    }
}

#[test]
fn records_survive_gc_and_the_chain_is_a_linear_commit_history() {
    let env = TestEnv::new();
    let repo = env.repo("gc");
    env.agents(&repo, &["alice"]);
    for i in 0..5 {
        env.mas_quiet_ok(
            &repo,
            &["--agent", "alice", "record", "append", "--kind", "note", "--payload", &i.to_string()],
        );
    }
    env.git_quiet_ok(&repo, &["gc", "--quiet", "--prune=now"]);
    env.git_quiet_ok(&repo, &["fsck", "--strict", "--no-dangling"]);
    let count = env.git(&repo, &["rev-list", "--count", "refs/mas/journal/alice"]);
    assert_eq!(count, "5");
    let (code, json) = log_chains(&env, &repo, "refs/mas/journal/alice");
    assert_eq!(code, Some(0));
    assert_eq!(json[0].records.len(), 5);
    assert!(all_verified(&json[0]));
    // The record is canonical JSON in record.json.
    let blob = env.git(&repo, &["cat-file", "-p", "refs/mas/journal/alice:record.json"]);
    assert!(blob.starts_with(r#"{"agent":"alice","kind":"note","payload":4,"schema":1,"seq":5,"sig":""#), "{blob}");
}

#[test]
fn the_caller_comes_from_flag_then_env_then_config() {
    let env = TestEnv::new();
    let repo = env.repo("who");
    env.agents(&repo, &["alice", "bob"]);
    let out = env.mas(&repo, &["whoami"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no agent identity"), "{}", stderr(&out));

    env.git_quiet_ok(&repo, &["config", "mas.agent", "alice"]);
    assert_eq!(env.mas_ok(&repo, &["whoami"]).trim(), "alice");
    let out = env.mas_cmd(&repo).env("GIT_MAS_AGENT", "bob").arg("whoami").output().unwrap();
    assert_eq!(stdout(&out).trim(), "bob");
    let out =
        env.mas_cmd(&repo).env("GIT_MAS_AGENT", "bob").args(["--agent", "alice", "whoami", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["name"], "alice");
    assert_eq!(v["can_sign"], true);
}

#[test]
fn agent_list_reports_committed_and_uncommitted_entries() {
    let env = TestEnv::new();
    let repo = env.repo("list");
    env.agents(&repo, &["alice"]);
    env.mas_quiet_ok(&repo, &["agent", "new", "bob"]);
    let out = env.mas(&repo, &["agent", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["name"], "alice");
    assert_eq!(v[0]["source"], "committed");
    assert_eq!(v[1]["name"], "bob");
    assert_eq!(v[1]["source"], "worktree_only");
    assert_eq!(v[1]["key_on_this_machine"], true);
    assert!(stderr(&out).contains("'bob' is not committed on main"), "{}", stderr(&out));
    // The uncommitted entry counts in its own worktree only: a linked worktree does not know bob.
    let wt = env.root().join("wt");
    env.git_quiet_ok(&repo, &["worktree", "add", "--quiet", "--detach", wt.to_str().unwrap()]);
    env.mas_quiet_ok(&repo, &["--agent", "bob", "record", "append", "--kind", "note"]);
    let (code, json) = log_chains(&env, &wt, "bob");
    assert_eq!(code, Some(4));
    let verdicts: Vec<&Verdict> = json[0].records.iter().map(|r| &r.verdict).collect();
    assert_eq!(verdicts, [&Verdict::UnknownParticipant]);
}

#[test]
fn agent_new_writes_a_private_key_with_mode_0600_outside_the_repository() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let repo = env.repo("keyrepo");
    let did = env.mas_ok(&repo, &["init"]);
    assert!(did.contains(".mas/roster"));
    let did = env.mas_ok(&repo, &["agent", "new", "alice"]);
    assert!(did.trim().starts_with("did:key:z6Mk"), "{did}");
    let key = env.keys().join("alice.key");
    let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let roster = std::fs::read_to_string(repo.join(".mas/roster")).unwrap();
    assert!(roster.contains(&format!("alice {}", did.trim())), "{roster}");
    // The key is nowhere in the working tree.
    assert!(!env.git(&repo, &["status", "--porcelain", "--untracked-files=all"]).contains(".key"));
}

#[test]
fn log_exits_0_after_a_proposal_and_lists_the_proposal_as_an_artifact_not_a_malformed_chain() {
    let team = crate::development::Team::new(&["alice", "bob"]);
    let run = team.start("alice", &["--id", "r1"]);
    let base = team.main_tip();
    let wt = team.worktree(&run, "alice");
    std::fs::write(wt.join("NOTES.md"), "alice's notes\n").unwrap();
    let proposed: crate::json::propose::ProposedOut = team.here_as(&wt, &["propose"]);
    let commit = proposed.commit.as_str();

    // The summary: exit 0, the proposal listed as an artifact, nothing MALFORMED.
    let out = team.env.mas(&team.repo, &["log"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    let line = text.lines().find(|l| l.starts_with("refs/mas/runs/r1/proposals/alice")).expect("proposal listed");
    assert!(line.contains("ARTIFACT") && line.contains(&commit[..12]), "{line}");
    assert!(!text.contains("MALFORMED") && !text.contains("UNREADABLE"), "{text}");

    // Per agent, as JSON: the artifact names its commit, the base as parent and no records.
    let (code, chains) = log_chains(&team.env, &team.repo, "alice");
    assert_eq!(code, Some(0));
    let art = chains.iter().find(|c| c.refname == "refs/mas/runs/r1/proposals/alice").expect("artifact entry");
    assert_eq!(art.kind, RefKind::Artifact);
    let a = art.artifact.as_ref().expect("the artifact's commit");
    assert_eq!(a.what, "proposal");
    assert_eq!(a.commit, commit);
    assert_eq!(a.parent.as_deref(), Some(base.as_str()));
    assert_eq!(art.problems, 0);
    assert!(art.records.is_empty());
    // The proposal event itself is in alice's events chain, verified.
    let events = chains.iter().find(|c| c.refname == "refs/mas/runs/r1/events/alice").expect("events chain");
    assert_eq!(events.kind, RefKind::Chain);
    assert!(all_verified(events));

    // Named directly, the proposal ref is still an artifact, and exits 0.
    let (code, json) = log_chains(&team.env, &team.repo, "refs/mas/runs/r1/proposals/alice");
    assert_eq!(code, Some(0));
    assert_eq!(json[0].kind, RefKind::Artifact);
}

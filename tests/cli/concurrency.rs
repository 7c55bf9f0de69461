//! Many processes appending at once: every record present exactly once, chains unbroken, fsck clean.

use crate::common::*;
use std::collections::BTreeSet;
use std::path::Path;

const WRITERS: usize = 8;
const APPENDS: usize = 50;

/// Starts one `sh` process per agent, each running `git-mas record append` APPENDS times.
fn hammer(env: &TestEnv, repo: &Path, agents: &[String], shared_ref: Option<&str>) {
    let mut children = Vec::new();
    for agent in agents {
        let target = shared_ref.map(|r| format!("--ref {r}")).unwrap_or_default();
        let script = format!(
            "for i in $(seq 1 {APPENDS}); do \"$BIN\" --agent {agent} record append --kind tick {target} --payload \"{{\\\"agent\\\":\\\"{agent}\\\",\\\"i\\\":$i}}\" >/dev/null || exit 1; done"
        );
        let mut cmd = std::process::Command::new("sh");
        env.hermetic(&mut cmd);
        cmd.current_dir(repo).env("BIN", BIN).arg("-c").arg(script);
        children.push(cmd.spawn().expect("spawn sh"));
    }
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a writer failed");
    }
}

fn payload_set(chain: &serde_json::Value) -> Vec<(String, i64)> {
    chain["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["payload"]["agent"].as_str().unwrap().to_string(), r["payload"]["i"].as_i64().unwrap()))
        .collect()
}

fn expected(agents: &[String]) -> BTreeSet<(String, i64)> {
    agents.iter().flat_map(|a| (1..=APPENDS as i64).map(move |i| (a.clone(), i))).collect()
}

#[test]
fn eight_writers_on_their_own_chains_and_on_one_shared_chain_lose_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("concurrent");
    let agents: Vec<String> = (0..WRITERS).map(|i| format!("w{i}")).collect();
    env.agents(&repo, &agents.iter().map(String::as_str).collect::<Vec<_>>());

    // 8 × 50 appends, each writer to its own chain.
    hammer(&env, &repo, &agents, None);
    for agent in &agents {
        let (code, json) = log_json(&env, &repo, &format!("refs/mas/journal/{agent}"));
        assert_eq!(code, Some(0));
        let got = payload_set(&json[0]);
        assert_eq!(got.len(), APPENDS, "{agent}: every record exactly once");
        let ids: BTreeSet<i64> = got.iter().map(|(_, i)| *i).collect();
        assert_eq!(ids.len(), APPENDS);
    }

    // 8 × 50 compare-and-swap appends to one shared chain.
    let shared = "refs/mas/shared/counter";
    hammer(&env, &repo, &agents, Some(shared));
    let (code, json) = log_json(&env, &repo, shared);
    assert_eq!(code, Some(0), "all verified");
    let got = payload_set(&json[0]);
    assert_eq!(got.len(), WRITERS * APPENDS, "no record lost or duplicated");
    assert_eq!(got.iter().cloned().collect::<BTreeSet<_>>(), expected(&agents));
    // Each writer's own records appear in the order it wrote them (its seq increases).
    for agent in &agents {
        let mine: Vec<i64> = got.iter().rev().filter(|(a, _)| a == agent).map(|(_, i)| *i).collect();
        assert_eq!(mine, (1..=APPENDS as i64).collect::<Vec<_>>());
    }
    // The chain is unbroken: a linear history of exactly 400 commits.
    assert_eq!(env.git(&repo, &["rev-list", "--count", shared]), (WRITERS * APPENDS).to_string());
    assert_eq!(env.git(&repo, &["rev-list", "--min-parents=2", shared]), "");
    env.git(&repo, &["fsck", "--strict"]);
}

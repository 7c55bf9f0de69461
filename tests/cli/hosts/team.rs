//! `git mas coordinate` with a team of real hosts: claude-code, codex, opencode and copilot (and,
//! on their own, two gemini agents) walk the development loop (whoami, edit with their own file
//! tool, run the check, propose; endorse the others) and the run lands exactly once on main; each
//! host's edit hook, installed by coordinate, refuses it a file another agent holds.

use super::claude::claude_env;
use super::codex::codex_env;
use super::copilot::copilot_env;
use super::gemini::gemini_env;
use super::opencode::opencode_env;
use super::*;
use serde_json::Value;
use server::Branch;

/// The scripted model for every hop of a development run, whichever agent and host asks.
fn development_scenario() -> Scenario {
    let branch = |when: &str, steps: Vec<Step>, reply: &str| Branch { when: when.into(), steps, reply: reply.into() };
    Scenario {
        branches: vec![
            branch(
                "task=propose",
                vec![
                    Step::Shell("git mas whoami --json".into()),
                    // The gate enforces: an agent edits only with a live focus of its own.
                    Step::Shell("git mas focus publish --targets src/config.rs".into()),
                    Step::Edit {
                        path: "{worktree}/src/report.rs".into(),
                        old: "use crate::config::Config;".into(),
                        new: "use crate::config::Config; // {agent}".into(),
                    },
                    Step::Write { path: "{worktree}/NOTES-{agent}.md".into(), content: "a note by {agent}\n".into() },
                    Step::Shell("{check}".into()),
                    Step::Shell("git mas propose -m 'a note by {agent}'".into()),
                ],
                "Proposed a note.\nDONE",
            ),
            branch("task=endorse", vec![Step::ShellEach("git mas endorse {item}".into())], "Endorsed.\nDONE"),
            branch("task=close", vec![], "Nothing held.\nDONE"),
        ],
    }
}

#[test]
fn four_hosts_walk_the_loop_and_land_one_proposal_on_main() {
    for program in ["claude", "codex", "opencode", "copilot"] {
        host(program);
    }
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["lead", "alice", "bob", "carol", "dave", "eve"]);
    // eve, outside the run, holds src/report.rs; every agent's script tries to edit it.
    env.git_quiet_ok(&repo, &["config", "mas.gate", "enforce"]);
    env.mas_quiet_ok(&repo, &["--agent", "eve", "snapshot", "--publish"]);
    env.mas_quiet_ok(&repo, &["--agent", "eve", "focus", "publish", "--targets", "src/report.rs"]);
    let report_before = env.git(&repo, &["show", "main:src/report.rs"]);
    let check = env.root().join("check.sh");
    std::fs::write(
        &check,
        "echo \"check: agent=$GIT_MAS_AGENT run=$GIT_MAS_RUN\"\n! grep -rq BROKEN --exclude-dir=.git .\n",
    )
    .unwrap();
    env.git_quiet_ok(&repo, &["config", "mas.check", &format!("sh {}", check.display())]);
    let base = env.git(&repo, &["rev-parse", "main"]);
    let server = ModelServer::start(development_scenario());
    let home = env.root().join("home");

    let mut cmd = env.mas_cmd(&repo);
    cmd.env("PATH", format!("{}:{}", hosts_bin().display(), path_with_bin())).env("NO_PROXY", "*");
    let url = server.url();
    let hosts_env =
        [claude_env(&home, &url), codex_env(&home, &url), opencode_env(&home, &url), copilot_env(&home, &url)];
    for (k, v) in hosts_env.into_iter().flatten() {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let out = cmd
        .args(["--agent", "lead", "coordinate", "--json", "--goal", "leave a note", "--quorum", "2"])
        .args(["--agents", "alice=claude-code,bob=codex,carol=opencode,dave=copilot"])
        .args(["--max-rounds", "1", "--hop-timeout", "90s", "--wait", "5s"])
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let lines: Vec<Value> = stdout(&out).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let context = || {
        format!("after {elapsed:?}\nstdout: {}\nstderr: {}\nrequests:\n{}", stdout(&out), stderr(&out), server.dump())
    };
    let all_results = || {
        let mut r = String::new();
        for body in server.turns() {
            collect_results(&body, &mut r);
        }
        r
    };
    assert_eq!(out.status.code(), Some(0), "{}\ntool results:\n{}", context(), all_results());
    let events = |kind: &str| lines.iter().filter(|l| l["event"] == kind).cloned().collect::<Vec<_>>();
    // Every agent proposed through its host, and endorsed the other three.
    let recorded = events("recorded");
    for agent in ["alice", "bob", "carol", "dave"] {
        assert!(recorded.iter().any(|r| r["agent"] == agent && r["kind"] == "proposal"), "{agent}\n{}", context());
        let endorsed = recorded.iter().filter(|r| r["agent"] == agent && r["kind"] == "endorsement").count();
        assert_eq!(endorsed, 3, "{agent}\n{}", context());
    }
    assert!(events("hop").iter().all(|h| h["failure"].is_null()), "{}", context());
    // The run landed exactly once on main, with one agent's note.
    assert_eq!(events("landed").len(), 1, "{}", context());
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    let files = env.git(&repo, &["ls-tree", "--name-only", "main"]);
    assert_eq!(files.lines().filter(|f| f.starts_with("NOTES-")).count(), 1, "{files}");
    assert_eq!(lines.last().unwrap()["report"]["status"], "converged", "{}", context());
    // Each host was refused the held file by its hook, and no proposal carries an edit of it.
    let mut refused = std::collections::BTreeMap::new();
    for body in server.turns() {
        let names: Vec<String> = server::tools(&body).into_iter().map(|t| t.name).collect();
        let has = |n: &str| names.iter().any(|t| t == n);
        let host = match () {
            _ if has("Edit") => "claude-code",
            _ if has("apply_patch") => "codex",
            _ if has("view") => "copilot",
            _ if has("todowrite") => "opencode",
            _ => "unknown",
        };
        let mut results = String::new();
        collect_results(&body, &mut results);
        *refused.entry(host).or_insert(false) |= results.contains("src/report.rs is held by eve");
    }
    for host in ["claude-code", "codex", "copilot", "opencode"] {
        assert_eq!(refused.get(host), Some(&true), "{host} was not refused: {refused:?}\n{}", context());
    }
    let run = events("run-started")[0]["run"].as_str().unwrap().to_string();
    for agent in ["alice", "bob", "carol", "dave"] {
        let proposal = format!("refs/mas/runs/{run}/proposals/{agent}:src/report.rs");
        assert_eq!(env.git(&repo, &["show", &proposal]), report_before, "{agent}");
    }
    assert_eq!(env.git(&repo, &["show", "main:src/report.rs"]), report_before);
    // All three APIs were spoken: claude's Messages, codex's Responses, opencode's and
    // copilot's Chat Completions.
    let paths: Vec<String> = server.log().iter().map(|r| r.path.clone()).collect();
    for api in ["/v1/messages", "/v1/responses", "/v1/chat/completions"] {
        assert!(paths.iter().any(|p| p.starts_with(api)), "{api}: {paths:?}");
    }
}

/// Two gemini agents, each started with the preset's session line (the worktree trusted for the
/// process, so that the hook and the server coordinate registered there load): both propose,
/// each endorses the other, eve's file is refused to both, and the run lands once.
#[test]
fn gemini_agents_walk_the_loop_and_land_one_proposal_on_main() {
    host("gemini");
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["lead", "alice", "bob", "eve"]);
    env.git_quiet_ok(&repo, &["config", "mas.gate", "enforce"]);
    env.mas_quiet_ok(&repo, &["--agent", "eve", "snapshot", "--publish"]);
    env.mas_quiet_ok(&repo, &["--agent", "eve", "focus", "publish", "--targets", "src/report.rs"]);
    let report_before = env.git(&repo, &["show", "main:src/report.rs"]);
    let check = env.root().join("check.sh");
    std::fs::write(&check, "echo \"check: agent=$GIT_MAS_AGENT\"\n! grep -rq BROKEN --exclude-dir=.git .\n").unwrap();
    env.git_quiet_ok(&repo, &["config", "mas.check", &format!("sh {}", check.display())]);
    let base = env.git(&repo, &["rev-parse", "main"]);
    let server = ModelServer::start(development_scenario());
    let mut cmd = env.mas_cmd(&repo);
    cmd.env("PATH", format!("{}:{}", hosts_bin().display(), path_with_bin())).env("NO_PROXY", "*");
    for (k, v) in gemini_env(&env.root().join("home"), &server.url()) {
        cmd.env(k, v);
    }
    let out = cmd
        .args(["--agent", "lead", "coordinate", "--json", "--goal", "leave a note", "--quorum", "1"])
        .args(["--agents", "alice=gemini,bob=gemini"])
        .args(["--max-rounds", "1", "--hop-timeout", "90s", "--wait", "5s"])
        .output()
        .unwrap();
    let lines: Vec<Value> = stdout(&out).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let mut results = String::new();
    for body in server.turns() {
        collect_results(&body, &mut results);
    }
    let context = || format!("stdout: {}\nstderr: {}\nresults:\n{results}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{}", context());
    let recorded: Vec<&Value> = lines.iter().filter(|l| l["event"] == "recorded").collect();
    for agent in ["alice", "bob"] {
        assert!(recorded.iter().any(|r| r["agent"] == agent && r["kind"] == "proposal"), "{agent}\n{}", context());
        assert!(recorded.iter().any(|r| r["agent"] == agent && r["kind"] == "endorsement"), "{agent}\n{}", context());
    }
    assert_eq!(lines.iter().filter(|l| l["event"] == "landed").count(), 1, "{}", context());
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    assert_eq!(lines.last().unwrap()["report"]["status"], "converged", "{}", context());
    // Both sessions were refused eve's file by the hook coordinate installed.
    assert!(results.matches("src/report.rs is held by eve").count() >= 2, "{}", context());
    assert_eq!(env.git(&repo, &["show", "main:src/report.rs"]), report_before);
    let paths: Vec<String> = server.log().iter().map(|r| r.path.clone()).collect();
    assert!(paths.iter().any(|p| p.ends_with(":streamGenerateContent?alt=sse")), "{paths:?}");
}

#[test]
fn a_host_that_is_not_logged_in_is_a_failed_call_quoting_its_words() {
    host("claude");
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["lead", "alice"]);
    // One agent: its own endorsement must count for the preflight to let the run start, and a
    // check must be there.
    env.git_quiet_ok(&repo, &["config", "mas.allowSelfEndorse", "true"]);
    env.git_quiet_ok(&repo, &["config", "mas.check", "true"]);
    // claude with no credentials and no model server: it says so on stdout and exits 1.
    let out = env
        .mas_cmd(&repo)
        .env("PATH", format!("{}:{}", hosts_bin().display(), path_with_bin()))
        .env("DISABLE_AUTOUPDATER", "1")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .args(["--agent", "lead", "coordinate", "--json", "--goal", "g", "--agents", "alice=claude-code"])
        .args(["--hop-timeout", "60s"])
        .output()
        .unwrap();
    let lines: Vec<Value> = stdout(&out).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert_eq!(out.status.code(), Some(8), "{}\n{}", stdout(&out), stderr(&out));
    let hops: Vec<&Value> = lines.iter().filter(|l| l["event"] == "hop").collect();
    assert_eq!(hops.len(), 2, "asked once more, then halted: {}", stdout(&out));
    for hop in &hops {
        assert!(hop["reply"].is_null(), "the login error is no reply: {hop}");
        let failure = hop["failure"].as_str().unwrap();
        assert_eq!(failure, "the peer exited with exit status 1; it said on stdout: Not logged in · Please run /login");
    }
    let halt = lines.iter().find(|l| l["event"] == "halt").unwrap();
    assert_eq!(halt["halt"], "unreadable-reply");
    assert_eq!(halt["peer"], "alice");
    assert!(halt["detail"].as_str().unwrap().contains("Not logged in · Please run /login"), "{halt}");
}

#[test]
fn a_host_whose_model_never_answers_is_stopped_at_the_hop_timeout() {
    host("claude");
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["lead", "alice"]);
    // One agent: its own endorsement must count for the preflight to let the run start, and a
    // check must be there.
    env.git_quiet_ok(&repo, &["config", "mas.allowSelfEndorse", "true"]);
    env.git_quiet_ok(&repo, &["config", "mas.check", "true"]);
    // A model endpoint that accepts connections and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let home = env.root().join("home");
    let mut cmd = env.mas_cmd(&repo);
    cmd.env("PATH", format!("{}:{}", hosts_bin().display(), path_with_bin())).env("NO_PROXY", "*");
    for (k, v) in claude_env(&home, &url) {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let out = cmd
        .args(["--agent", "lead", "coordinate", "--json", "--goal", "g", "--agents", "alice=claude-code"])
        .args(["--hop-timeout", "3s"])
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    drop(silent);
    let lines: Vec<Value> = stdout(&out).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert_eq!(out.status.code(), Some(8), "{}\n{}", stdout(&out), stderr(&out));
    let hops: Vec<&Value> = lines.iter().filter(|l| l["event"] == "hop").collect();
    assert_eq!(hops.len(), 2, "{}", stdout(&out));
    for hop in &hops {
        let failure = hop["failure"].as_str().unwrap();
        assert!(failure.starts_with("no reply within 3s; the peer was stopped"), "{failure}");
    }
    // Two hops of 3 s, not claude's own minutes of retrying.
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");
    let halt = lines.iter().find(|l| l["event"] == "halt").unwrap();
    assert_eq!(halt["halt"], "unreadable-reply", "{halt}");
}

#[test]
fn the_help_says_which_presets_are_unverified() {
    let env = TestEnv::new();
    let help = env.mas_ok(env.root(), &["coordinate", "--help"]);
    for preset in git_mas::hosts::Host::ALL {
        let line = format!("{:<13} {}", preset.name(), preset.default_command());
        let shown =
            help.lines().find(|l| l.trim_start().starts_with(&line)).unwrap_or_else(|| panic!("{line}\n{help}"));
        assert_eq!(shown.contains("(unverified)"), !preset.verified(), "{shown}");
    }
    assert!(help.contains("cursor and goose follow their vendors' docs, unverified"), "{help}");
}

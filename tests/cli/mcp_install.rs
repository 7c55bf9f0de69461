//! `git mas mcp install|uninstall|status --host`: each host's MCP registration in a real
//! repository, a user's own file kept byte for byte, invalid files refused untouched, the
//! registered command started as the host starts it, and `coordinate` registering the server in
//! each preset agent's worktree while keeping it out of the proposal.

use crate::common::*;
use crate::json::mcp_install::McpInstallOut;
use git_mas::hosts::plan::FileState;
use serde_json::{Value, json};
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn status(env: &TestEnv, dir: &Path, extra: &[&str]) -> McpInstallOut {
    let mut args = vec!["mcp", "status", "--json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&env.mas_ok(dir, &args)).unwrap()
}

const USER_FILES: [(&str, &str); 5] = [
    (
        ".mcp.json",
        "{\n    \"mcpServers\": {\n        \"db\": {\"command\": \"db-mcp\", \"args\": [\"--ro\"]}\n    }\n}\n",
    ),
    (".codex/config.toml", "model = \"o3\" # mine\n\n[mcp_servers.db]\ncommand = \"db-mcp\"\n"),
    (".gemini/settings.json", "// my settings\n{\n  \"theme\": \"dark\" /* kept */\n}\n"),
    (".cursor/mcp.json", "{\"mcpServers\":{}}"),
    ("opencode.json", "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"model\": \"x/y\"\n}\n"),
];

#[test]
fn a_users_files_survive_install_and_uninstall_byte_for_byte_and_install_twice_is_the_same() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    for (rel, text) in USER_FILES {
        std::fs::create_dir_all(repo.join(rel).parent().unwrap()).unwrap();
        std::fs::write(repo.join(rel), text).unwrap();
    }
    let before = tree(&repo);
    env.mas_quiet_ok(&repo, &["mcp", "install", "--host", "all"]);
    let once = tree(&repo);
    assert_ne!(once, before);
    env.mas_quiet_ok(&repo, &["mcp", "install", "--host", "all"]);
    assert_eq!(tree(&repo), once, "a second install changes nothing");
    let st = status(&env, &repo, &["--host", "all"]);
    assert_eq!(st.scope, "project");
    for h in &st.hosts {
        match h.host.as_str() {
            "goose" => assert!(h.path.is_none() && h.notes[0].contains("goose configure"), "{h:?}"),
            _ => assert_eq!(h.state, Some(FileState::Installed), "{h:?}"),
        }
    }
    let toml = std::fs::read_to_string(repo.join(".codex/config.toml")).unwrap();
    assert!(toml.starts_with(USER_FILES[1].1) && toml.contains("[mcp_servers.git-mas]"), "{toml}");
    env.mas_quiet_ok(&repo, &["mcp", "uninstall", "--host", "all"]);
    // The one byte not given back: cursor's `mcpServers` that only our entry kept non-empty.
    let mut expected = before.clone();
    expected.retain(|(p, _)| p != Path::new(".cursor/mcp.json"));
    let mut after = tree(&repo);
    let cursor = after.iter().position(|(p, _)| p == Path::new(".cursor/mcp.json")).unwrap();
    assert_eq!(String::from_utf8(after.remove(cursor).1).unwrap(), "{}");
    assert_eq!(after, expected, "everything else is as it was");
}

#[test]
fn an_invalid_file_is_refused_and_nothing_is_written() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    std::fs::write(repo.join(".mcp.json"), "{\"mcpServers\": {,}").unwrap();
    std::fs::create_dir_all(repo.join(".codex")).unwrap();
    std::fs::write(repo.join(".codex/config.toml"), "[mcp_servers\n").unwrap();
    let before = tree(&repo);
    for host in ["claude-code", "codex"] {
        let out = env.mas(&repo, &["mcp", "install", "--host", host]);
        assert_eq!(out.status.code(), Some(1), "{host}: {}", stderr(&out));
        assert!(stderr(&out).contains("not valid"), "{host}: {}", stderr(&out));
        assert_eq!(tree(&repo), before, "{host}: nothing written");
    }
    let st = status(&env, &repo, &["--host", "claude-code", "--host", "codex"]);
    assert!(st.hosts.iter().all(|h| h.state == Some(FileState::Invalid)), "{st:?}");
    let goose = env.mas(&repo, &["mcp", "install", "--host", "goose"]);
    assert_eq!(goose.status.code(), Some(1));
    assert!(stderr(&goose).contains("goose configure"), "{}", stderr(&goose));
}

#[test]
fn global_goes_to_the_users_home_or_the_hosts_own_directory() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let home = env.root().join("home");
    let codex_home = env.root().join("codex-home");
    let run = |args: &[&str]| {
        let mut cmd = env.mas_cmd(&repo);
        cmd.args(args).env("CODEX_HOME", &codex_home).env_remove("CLAUDE_CONFIG_DIR").env_remove("COPILOT_HOME");
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    let repo_before = tree(&repo);
    run(&["mcp", "install", "--global", "--host", "all"]);
    assert!(home.join(".claude.json").is_file());
    assert!(codex_home.join("config.toml").is_file(), "CODEX_HOME is honoured");
    assert!(home.join(".copilot/mcp-config.json").is_file());
    assert!(home.join(".config/opencode/opencode.json").is_file(), "XDG_CONFIG_HOME is honoured");
    assert_eq!(tree(&repo), repo_before, "the project is not touched");
    let st: McpInstallOut =
        serde_json::from_str(&run(&["mcp", "status", "--global", "--json", "--host", "claude-code"])).unwrap();
    assert_eq!((st.scope.as_str(), st.hosts[0].path.clone()), ("global", Some(home.join(".claude.json"))));
    assert_eq!(st.hosts[0].state, Some(FileState::Installed));
    run(&["mcp", "uninstall", "--global", "--host", "all"]);
    assert!(!home.join(".claude.json").exists() && !codex_home.join("config.toml").exists());
    assert!(!home.join(".config/opencode/opencode.json").exists() && !home.join(".copilot/mcp-config.json").exists());
}

/// Starts `argv` as a host would (in `dir`) and returns the tool names `tools/list` gives.
fn tools_of(env: &TestEnv, dir: &Path, argv: &[String]) -> Vec<String> {
    let mut cmd = Command::new(&argv[0]);
    env.hermetic(&mut cmd);
    let mut child = cmd
        .args(&argv[1..])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
        "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}});
    writeln!(stdin, "{init}").unwrap();
    let reply: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert!(reply["result"]["serverInfo"]["name"].is_string(), "{reply}");
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).unwrap();
    let list: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    drop(stdin);
    child.wait().unwrap();
    list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn the_registered_command_started_as_the_host_starts_it_serves_the_tools_as_the_agent() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.agents(&repo, &["alice"]);
    env.mas_quiet_ok(
        &repo,
        &["--agent", "alice", "mcp", "install", "--host", "claude-code", "--host", "opencode", "--host", "codex"],
    );
    let claude: Value = serde_json::from_str(&std::fs::read_to_string(repo.join(".mcp.json")).unwrap()).unwrap();
    let entry = &claude["mcpServers"]["git-mas"];
    let mut argv = vec![entry["command"].as_str().unwrap().to_string()];
    argv.extend(entry["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()));
    assert_eq!(argv, ["git", "mas", "mcp", "--agent", "alice"]);
    let tools = tools_of(&env, &repo, &argv);
    for t in ["gate", "focus_publish", "propose", "endorse", "whoami"] {
        assert!(tools.iter().any(|n| n == t), "{t} in {tools:?}");
    }
    let opencode: Value = serde_json::from_str(&std::fs::read_to_string(repo.join("opencode.json")).unwrap()).unwrap();
    let argv: Vec<String> = serde_json::from_value(opencode["mcp"]["git-mas"]["command"].clone()).unwrap();
    assert!(tools_of(&env, &repo, &argv).iter().any(|n| n == "gate"));
    let toml = std::fs::read_to_string(repo.join(".codex/config.toml")).unwrap();
    assert!(toml.contains("args = [\"mas\", \"mcp\", \"--agent\", \"alice\"]"), "{toml}");
    let st = status(&env, &repo, &["--host", "claude-code"]);
    assert_eq!(st.hosts[0].state, Some(FileState::Installed), "status without --agent sees alice's entry");
}

const STAND_IN: &str = r#"prompt=$(cat)
field() { printf '%s\n' "$prompt" | sed -n "s/^$1=//p" | head -n 1; }
for f in .mcp.json .codex/config.toml; do [ -f "$f" ] && echo "$GIT_MAS_AGENT $f" >> "$LOG"; done
case "$(field task)" in
  propose) mkdir -p notes; echo "by $GIT_MAS_AGENT" > "notes/$GIT_MAS_AGENT.md"; git mas propose >&2 ;;
  endorse) for p in $(field endorse | tr , ' '); do git mas endorse "$p" >&2; done ;;
esac
next=$(field next)
if [ "$next" = DONE ]; then echo "done"; echo DONE; else echo "done"; echo "NEXT $next"; fi
"#;

/// A development coordinate of alice on claude-code and bob on codex, both pointed at the
/// stand-in: (exit code, JSON lines, stderr).
fn coordinate(env: &TestEnv, repo: &Path, extra: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    let log = env.root().join("seen");
    let script = env.root().join("stand-in.sh");
    std::fs::write(&script, format!("LOG='{}'\n{STAND_IN}", log.display())).unwrap();
    env.git_quiet_ok(repo, &["config", "mas.check", "true"]);
    for preset in ["claude-code", "codex"] {
        env.git_quiet_ok(
            repo,
            &["config", &format!("mas.agent.{preset}.command"), &format!("sh {}", script.display())],
        );
    }
    let out = env
        .mas_cmd(repo)
        .args(["--agent", "lead", "coordinate", "--json", "--goal", "notes", "--agents", "alice=claude-code,bob=codex"])
        // The test looks into each agent's worktree after the run.
        .args(["--quorum", "1", "--keep-worktrees"])
        .args(extra)
        .output()
        .unwrap();
    let lines = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (out.status.code(), lines, stderr(&out))
}

fn worktrees(lines: &[Value]) -> Vec<(String, PathBuf)> {
    lines
        .iter()
        .filter(|l| l["event"] == "worktree")
        .map(|l| (l["agent"].as_str().unwrap().to_string(), PathBuf::from(l["path"].as_str().unwrap())))
        .collect()
}

#[test]
fn coordinate_registers_the_server_as_each_agent_and_keeps_it_out_of_the_proposal() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["lead", "alice", "bob"]);
    let (code, lines, err) = coordinate(&env, &repo, &[]);
    assert_eq!(code, Some(0), "{err}\n{lines:?}");
    let seen = std::fs::read_to_string(env.root().join("seen")).unwrap();
    assert!(seen.contains("alice .mcp.json") && seen.contains("bob .codex/config.toml"), "{seen}");
    let run = lines.iter().find(|l| l["event"] == "run-started").unwrap()["run"].as_str().unwrap().to_string();
    for (agent, path) in worktrees(&lines) {
        let host = if agent == "alice" { "claude-code" } else { "codex" };
        let st = status(&env, &path, &["--agent", &agent, "--host", host]);
        assert_eq!(st.hosts[0].state, Some(FileState::Installed), "{agent}: registered as {agent}");
        assert_eq!(env.git(&path, &["status", "--porcelain"]), "?? notes/", "{agent}: git sees only the agent's work");
        let listing =
            env.git(&repo, &["ls-tree", "-r", "--name-only", &format!("refs/mas/runs/{run}/proposals/{agent}")]);
        assert!(listing.contains(&format!("notes/{agent}.md")), "{listing}");
        assert!(!listing.contains(".mcp.json") && !listing.contains("config.toml"), "{agent}: {listing}");
    }
    if let Some((_, alice)) = worktrees(&lines).into_iter().find(|(a, _)| a == "alice") {
        let text = std::fs::read_to_string(alice.join(".mcp.json")).unwrap();
        assert!(text.contains("\"alice\""), "{text}");
    }
    let landed = env.git(&repo, &["ls-tree", "-r", "--name-only", "main"]);
    assert!(!landed.contains(".mcp.json") && !landed.contains(".codex"), "{landed}");
}

#[test]
fn coordinate_with_no_mcp_registers_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["lead", "alice", "bob"]);
    let (code, lines, err) = coordinate(&env, &repo, &["--no-mcp", "--no-edit-gate"]);
    assert_eq!(code, Some(0), "{err}\n{lines:?}");
    assert!(!env.root().join("seen").exists(), "no agent saw a registration");
    for (agent, path) in worktrees(&lines) {
        assert!(!path.join(".mcp.json").exists() && !path.join(".codex").exists(), "{agent}");
    }
}

/// A registration file that is a symbolic link (dotfile managers make them) stays a link through
/// install and uninstall, in the project and in the user's home: the entry goes into the link's
/// final target (a chain of links is followed to its end), uninstall gives the target back its
/// bytes, and a dangling link's target is created by install and removed by uninstall.
#[test]
fn a_symlinked_registration_file_stays_a_link_and_its_target_gets_the_entry() {
    use std::os::unix::fs::symlink;
    let env = TestEnv::new();
    let repo = env.repo("r");
    let home = env.root().join("home");
    let dots = env.root().join("dotfiles");
    for dir in [&dots, &repo.join(".codex"), &home.join(".config/opencode")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let (mcp, codex) = (USER_FILES[0].1, USER_FILES[1].1);
    std::fs::write(dots.join("mcp.json"), mcp).unwrap();
    std::fs::write(dots.join("codex.toml"), codex).unwrap();
    std::fs::write(dots.join("claude.json"), mcp).unwrap();
    symlink(dots.join("mcp.json"), repo.join(".mcp.json")).unwrap();
    // A chain of two relative links.
    symlink("codex.toml", dots.join("codex-current.toml")).unwrap();
    symlink("../../dotfiles/codex-current.toml", repo.join(".codex/config.toml")).unwrap();
    symlink(dots.join("claude.json"), home.join(".claude.json")).unwrap();
    symlink(dots.join("opencode.json"), home.join(".config/opencode/opencode.json")).unwrap();
    let links = [
        (repo.join(".mcp.json"), dots.join("mcp.json")),
        (repo.join(".codex/config.toml"), dots.join("codex.toml")),
        (home.join(".claude.json"), dots.join("claude.json")),
        (home.join(".config/opencode/opencode.json"), dots.join("opencode.json")),
    ];
    let run = |args: &[&str]| {
        let mut cmd = env.mas_cmd(&repo);
        cmd.args(args).env_remove("CLAUDE_CONFIG_DIR").env_remove("CODEX_HOME");
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    };
    let dots_before = tree(&dots);
    run(&["mcp", "install", "--host", "claude-code", "--host", "codex"]);
    run(&["mcp", "install", "--global", "--host", "claude-code", "--host", "opencode"]);
    for (link, target) in &links {
        assert!(std::fs::symlink_metadata(link).unwrap().is_symlink(), "{} is still a link", link.display());
        let text = std::fs::read_to_string(target).unwrap_or_default();
        assert!(text.contains("git-mas"), "{}: {text}", target.display());
    }
    let toml = std::fs::read_to_string(dots.join("codex.toml")).unwrap();
    assert!(toml.starts_with(codex) && toml.contains("[mcp_servers.git-mas]"), "{toml}");
    run(&["mcp", "uninstall", "--host", "claude-code", "--host", "codex"]);
    run(&["mcp", "uninstall", "--global", "--host", "claude-code", "--host", "opencode"]);
    assert_eq!(tree(&dots), dots_before, "every target as it was, nothing left beside them");
    for (link, _) in &links {
        assert!(std::fs::symlink_metadata(link).unwrap().is_symlink(), "{} is still a link", link.display());
    }
    assert!(!dots.join("opencode.json").exists(), "the dangling link dangles again");
}

//! `git mas init --team` and `git mas init --team --undo`: the one setup of team mode in a real
//! repository (the member and its key, the configuration, the git hooks, each host's hook, MCP and
//! skills files, a frame, the commit to make), a second run that writes nothing, an undo that gives
//! every byte back (a user's settings and pre-commit hook among them) or refuses a file changed
//! since, the hosts detected, and a SIGKILL at every point of the setup and of the undo.

use crate::common::*;
use crate::killpoints::{self, Trigger};
use git_mas::hosts::{Detection, Host};
use git_mas::ops::setup::journal::Part;
use git_mas::ops::setup::{
    Chosen, ConfigChange, ConfigRestored, FileChange, FileRestored, NameSource, TeamSetup, TeamUndo,
};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The team's own Claude Code settings, committed: a hook of theirs and no comments.
const CLAUDE_SETTINGS: &str = "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./guard.sh\"}]}\n    ]\n  }\n}\n";
/// A pre-commit hook the user had.
const PRE_COMMIT: &str = "#!/bin/sh\n# the user's own check\ntest -z \"$(git diff --cached --name-only -- secrets)\"\n";
const KEYS: [&str; 3] = ["mas.agent", "mas.gate", "mas.team"];

/// A repository holding the fixture project, with the team's `.claude/settings.json` committed, a
/// pre-commit hook of the user's (mode 0750) and `mas.gate=warn`.
fn repo(env: &TestEnv, name: &str) -> PathBuf {
    let repo = env.repo(name);
    std::fs::create_dir_all(repo.join(".claude")).unwrap();
    std::fs::write(repo.join(".claude/settings.json"), CLAUDE_SETTINGS).unwrap();
    env.git_quiet_ok(&repo, &["add", ".claude"]);
    env.git_quiet_ok(&repo, &["commit", "-q", "-m", "team settings"]);
    let hook = repo.join(".git/hooks/pre-commit");
    std::fs::write(&hook, PRE_COMMIT).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o750)).unwrap();
    env.git_quiet_ok(&repo, &["config", "mas.gate", "warn"]);
    repo
}

/// What "restored byte for byte" compares: every file of the working tree, every file of the
/// hooks folder with its mode, the keys the setup sets, and whether its record is there.
#[derive(Debug, Clone, PartialEq)]
struct State {
    tree: Vec<(PathBuf, Vec<u8>)>,
    hooks: Vec<(String, Vec<u8>, u32)>,
    config: Vec<(String, Option<String>)>,
    record: bool,
}

impl State {
    /// The same files, hooks and keys (a record's empty folder aside: what a kill after undo
    /// removed the record may leave).
    fn same_files(&self, other: &State) -> bool {
        (&self.tree, &self.hooks, &self.config) == (&other.tree, &other.hooks, &other.config)
    }
}

fn state(env: &TestEnv, repo: &Path) -> State {
    let mut hooks: Vec<(String, Vec<u8>, u32)> = std::fs::read_dir(repo.join(".git/hooks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
            (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap(), mode)
        })
        .collect();
    hooks.sort();
    State {
        tree: tree(repo),
        hooks,
        config: KEYS.iter().map(|k| (k.to_string(), config(env, repo, k))).collect(),
        record: repo.join(".git/mas-setup").exists(),
    }
}

/// `git config --local KEY`, `None` when unset.
fn config(env: &TestEnv, repo: &Path, key: &str) -> Option<String> {
    let out = env.git_cmd(repo).args(["config", "--local", "--get", key]).output().unwrap();
    out.status.success().then(|| stdout(&out).trim().to_string())
}

/// A file's bytes, mode and modification time.
type Stamp = (Vec<u8>, u32, std::time::SystemTime);

/// The files of `after` whose bytes, mode or time differ from `before`'s, or that only one has.
fn touched(before: &[(PathBuf, Stamp)], after: &[(PathBuf, Stamp)]) -> Vec<String> {
    let mut out = Vec::new();
    for (p, stamp) in after {
        match before.iter().find(|(q, _)| q == p) {
            None => out.push(format!("new {}", p.display())),
            Some((_, old)) if old != stamp => out.push(format!("written {}", p.display())),
            _ => {}
        }
    }
    out.extend(
        before.iter().filter(|(p, _)| !after.iter().any(|(q, _)| q == p)).map(|(p, _)| format!("gone {}", p.display())),
    );
    out
}

/// Every file under `dir` (the git dir included) with its bytes, mode and modification time.
fn stamped(dir: &Path) -> Vec<(PathBuf, Stamp)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap_or_default();
                out.push((p, (bytes, meta.permissions().mode(), meta.modified().unwrap())));
            }
        }
    }
    out.sort();
    out
}

fn setup_json(env: &TestEnv, repo: &Path, extra: &[&str]) -> TeamSetup {
    let mut args = vec!["init", "--team", "--json"];
    args.extend_from_slice(extra);
    let out = env.mas_ok(repo, &args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not the setup's shape ({e}): {out}"))
}

fn undo_json(env: &TestEnv, repo: &Path, extra: &[&str]) -> TeamUndo {
    let mut args = vec!["init", "--team", "--undo", "--json"];
    args.extend_from_slice(extra);
    let out = env.mas_ok(repo, &args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not the undo's shape ({e}): {out}"))
}

fn rel(repo: &Path, path: &Path) -> String {
    path.strip_prefix(repo).unwrap_or(path).display().to_string()
}

fn read(repo: &Path, rel: &str) -> String {
    std::fs::read_to_string(repo.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn setup_in_a_fresh_repository_writes_every_part_and_says_what_to_commit() {
    let env = TestEnv::new();
    let repo = repo(&env, "repo");
    let s = setup_json(&env, &repo, &["--name", "alice", "--host", "claude-code", "--host", "codex"]);

    // The member: a new key, a roster line, mas.agent naming it.
    assert_eq!((s.member.name.as_str(), s.member.source), ("alice", NameSource::Flag));
    assert!(s.member.added && s.member.key_created, "{:?}", s.member);
    assert_eq!(s.member.key_path, env.keys().join("alice.key"));
    let key_mode = std::fs::metadata(&s.member.key_path).unwrap().permissions().mode() & 0o777;
    assert_eq!(key_mode, 0o600);
    assert!(read(&repo, ".mas/roster").ends_with(&format!("\nalice {}\n", s.member.did)));
    let config: Vec<(&str, &str, Option<&str>, ConfigChange)> =
        s.config.iter().map(|c| (c.key.as_str(), c.value.as_str(), c.previous.as_deref(), c.change)).collect();
    assert_eq!(
        config,
        vec![
            ("mas.agent", "alice", None, ConfigChange::Set),
            ("mas.gate", "enforce", Some("warn"), ConfigChange::Set),
            ("mas.team", "true", None, ConfigChange::Set),
        ]
    );
    assert_eq!(config_values(&env, &repo), ["alice", "enforce", "true"]);

    // The git hooks, the user's pre-commit kept above the block.
    let pre_commit = read(&repo, ".git/hooks/pre-commit");
    assert!(pre_commit.starts_with(PRE_COMMIT) && pre_commit.contains("git-mas hook pre-commit"), "{pre_commit}");
    for hook in ["commit-msg", "pre-push"] {
        assert!(read(&repo, &format!(".git/hooks/{hook}")).contains(&format!("git-mas hook {hook}")));
        let mode = std::fs::metadata(repo.join(".git/hooks").join(hook)).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0o111, "{hook} is executable");
    }

    // Each host's hook entries before a tool, after it and at the session's end, beside the user's.
    let claude: serde_json::Value = serde_json::from_str(&read(&repo, ".claude/settings.json")).unwrap();
    assert_eq!(claude["model"], "opus");
    assert_eq!(claude["hooks"]["PreToolUse"][0]["hooks"][0]["command"], "./guard.sh");
    assert_eq!(claude["hooks"]["PreToolUse"][1]["hooks"][0]["command"], "git-mas-hook --host claude-code");
    assert_eq!(claude["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "git-mas-hook --host claude-code --post-tool");
    assert_eq!(
        claude["hooks"]["SessionEnd"][0]["hooks"][0]["command"],
        "git-mas-hook --host claude-code --session-end"
    );
    let codex: serde_json::Value = serde_json::from_str(&read(&repo, ".codex/hooks.json")).unwrap();
    for (event, command) in [
        ("PreToolUse", "git-mas-hook --host codex"),
        ("PostToolUse", "git-mas-hook --host codex --post-tool"),
        ("SessionEnd", "git-mas-hook --host codex --session-end"),
    ] {
        assert_eq!(codex["hooks"][event][0]["hooks"][0]["command"], command, "{codex}");
    }
    // The MCP server, and the skills where each host reads them.
    let mcp: serde_json::Value = serde_json::from_str(&read(&repo, ".mcp.json")).unwrap();
    assert_eq!(mcp["mcpServers"]["git-mas"]["args"], serde_json::json!(["mas", "mcp"]));
    assert!(read(&repo, ".codex/config.toml").contains("[mcp_servers.git-mas]"));
    for dir in [".claude/skills", ".agents/skills"] {
        for skill in ["assembly", "converge", "git-mas"] {
            assert!(repo.join(dir).join(skill).join("SKILL.md").is_file(), "{dir}/{skill}");
        }
    }
    let changes: Vec<(String, Vec<Part>, FileChange)> =
        s.files.iter().map(|f| (rel(&repo, &f.path), f.parts.clone(), f.change)).collect();
    for (path, part, change) in [
        (".mas/roster", Part::Roster, FileChange::Created),
        (".git/hooks/pre-commit", Part::GitHook, FileChange::Updated),
        (".git/hooks/commit-msg", Part::GitHook, FileChange::Created),
        (".claude/settings.json", Part::Hook, FileChange::Updated),
        (".mcp.json", Part::Mcp, FileChange::Created),
        (".codex/hooks.json", Part::Hook, FileChange::Created),
        (".codex/config.toml", Part::Mcp, FileChange::Created),
        (".agents/skills/git-mas/SKILL.md", Part::Skill, FileChange::Created),
    ] {
        assert!(changes.contains(&(path.to_string(), vec![part], change)), "{path}: {changes:?}");
    }
    assert_eq!(
        s.hosts.iter().map(|h| (h.host, h.chosen)).collect::<Vec<_>>(),
        [(Host::ClaudeCode, Chosen::Named), (Host::Codex, Chosen::Named)]
    );
    // Codex's trust of the project and of each of the three hooks, in the user's codex config:
    // codex runs no untrusted hook.
    let user_codex = env.root().join("home/.codex/config.toml");
    let trust = std::fs::read_to_string(&user_codex).unwrap();
    let top = std::fs::canonicalize(&repo).unwrap();
    assert!(trust.contains(&format!("[projects.\"{}\"]\ntrust_level = \"trusted\"", top.display())), "{trust}");
    assert_eq!(trust.matches("trusted_hash = \"sha256:").count(), 3, "{trust}");
    let trust_file = s.files.iter().find(|f| f.path == user_codex).expect("the trust file is listed");
    assert_eq!((&trust_file.parts[..], trust_file.change), (&[Part::Trust][..], FileChange::Created));
    assert!(
        s.hosts[1].notes.iter().any(|n| n.contains("trusted") && n.contains(&user_codex.display().to_string())),
        "codex's note names the trust it got: {:?}",
        s.hosts[1]
    );
    let status = env.mas_ok(&repo, &["hooks", "status", "--host", "codex", "--json"]);
    assert!(status.contains("project and hooks trusted by codex"), "{status}");

    // A frame, published as alice, which this checkout verifies before anything is committed.
    assert!(s.frame.published);
    let frame = env.mas_ok(&repo, &["frame", "--json"]);
    assert!(frame.contains(&s.frame.hash), "{frame}");
    let whoami: serde_json::Value = serde_json::from_str(&env.mas_ok(&repo, &["whoami", "--json"])).unwrap();
    assert_eq!((whoami["name"].as_str(), whoami["can_sign"].as_bool()), (Some("alice"), Some(true)));

    // The commit: exactly the files of the working tree it wrote; made as printed, it leaves
    // nothing of the setup uncommitted.
    let commit = s.commit.expect("something to commit");
    assert_eq!(
        commit.command,
        "git add .mas .claude/settings.json .mcp.json .codex .claude/skills .agents && git commit -m 'Set up git-mas \
         team mode'"
    );
    assert!(!commit.needs_roster_signature, "the first roster needs no signature");
    let mut sh = Command::new("sh");
    env.hermetic(&mut sh);
    let made = sh.args(["-c", &commit.command]).current_dir(&repo).output().unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    assert_eq!(env.git(&repo, &["status", "--porcelain"]), "");
    let again = setup_json(&env, &repo, &["--host", "claude-code", "--host", "codex"]);
    assert!(again.commit.is_none() && !again.changed(), "{again:?}");
}

fn config_values(env: &TestEnv, repo: &Path) -> Vec<String> {
    KEYS.iter().map(|k| config(env, repo, k).unwrap_or_default()).collect()
}

#[test]
fn a_second_setup_changes_no_byte_and_no_time() {
    let env = TestEnv::new();
    let repo = repo(&env, "repo");
    let args =
        ["--name", "alice", "--host", "claude-code", "--host", "codex", "--host", "gemini", "--host", "opencode"];
    let first = setup_json(&env, &repo, &args);
    assert!(first.changed());
    // What any command that reads the board writes: git-mas's caches in the git dir, warm now.
    env.mas_quiet_ok(&repo, &["frame"]);
    let before = stamped(&repo);
    let keys = stamped(&env.keys());
    let user_codex = env.root().join("home/.codex");
    let trust = stamped(&user_codex);
    let again = env.mas(&repo, &[&["init", "--team"][..], &args].concat());
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(stderr(&again).contains("nothing changed"), "{}", stderr(&again));
    assert_eq!(touched(&before, &stamped(&repo)), Vec::<String>::new(), "no file written, in the git dir neither");
    assert_eq!(touched(&keys, &stamped(&env.keys())), Vec::<String>::new());
    assert_eq!(touched(&trust, &stamped(&user_codex)), Vec::<String>::new(), "codex's trust is in place");
    let json = setup_json(&env, &repo, &args);
    assert!(!json.changed(), "{json:?}");
    assert!(json.files.iter().all(|f| f.change == FileChange::Unchanged), "{:?}", json.files);
    assert!(json.config.iter().all(|c| c.change == ConfigChange::Unchanged), "{:?}", json.config);
    assert!(!json.member.added && !json.member.key_created, "{:?}", json.member);
    // Gemini's settings file holds its hooks and its MCP server: one file, planned once.
    let gemini: Vec<_> = json.files.iter().filter(|f| f.path.ends_with(".gemini/settings.json")).collect();
    assert_eq!(gemini.len(), 1);
    assert_eq!(gemini[0].parts, [Part::Hook, Part::Mcp]);
    assert_eq!(touched(&before, &stamped(&repo)), Vec::<String>::new());
}

#[test]
fn undo_gives_every_byte_back_and_keeps_the_key_and_the_frame() {
    let env = TestEnv::new();
    let repo = repo(&env, "repo");
    let original = state(&env, &repo);
    let s = setup_json(&env, &repo, &["--name", "alice", "--host", "claude-code", "--host", "codex"]);
    // A second setup (another host) keeps the state before the first.
    setup_json(&env, &repo, &["--host", "claude-code", "--host", "copilot"]);
    let frame = env.git(&repo, &["rev-parse", "refs/mas/frame"]);
    assert_ne!(state(&env, &repo), original);

    let u = undo_json(&env, &repo, &[]);
    assert_eq!(state(&env, &repo), original, "every file, hook (and its mode) and key as before");
    assert_eq!(config(&env, &repo, "mas.gate").as_deref(), Some("warn"));
    assert_eq!(config(&env, &repo, "mas.agent"), None);
    let restored = |p: &str| u.files.iter().find(|f| rel(&repo, &f.path) == p).map(|f| f.change);
    assert_eq!(restored(".claude/settings.json"), Some(FileRestored::Restored));
    assert_eq!(restored(".git/hooks/pre-commit"), Some(FileRestored::Restored));
    assert_eq!(restored(".git/hooks/commit-msg"), Some(FileRestored::Removed));
    assert_eq!(restored(".github/hooks/git-mas.json"), Some(FileRestored::Removed));
    assert!(!env.root().join("home/.codex/config.toml").exists(), "the codex trust the setup created is gone");
    assert!(u.dirs.iter().any(|d| rel(&repo, &d.path) == ".codex" && d.removed), "{:?}", u.dirs);
    let gate = u.config.iter().find(|c| c.key == "mas.gate").unwrap();
    assert_eq!((gate.value.as_deref(), gate.change), (Some("warn"), ConfigRestored::Restored));
    assert_eq!(u.config.iter().find(|c| c.key == "mas.team").unwrap().change, ConfigRestored::Unset);
    // Not repository files: the key, and the frame (history).
    assert_eq!(u.keys_kept, std::slice::from_ref(&s.member.key_path));
    assert!(s.member.key_path.is_file());
    assert_eq!(env.git(&repo, &["rev-parse", "refs/mas/frame"]), frame);

    // Nothing left to undo: said, exit 1, nothing changed.
    let none = env.mas(&repo, &["init", "--team", "--undo"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(stderr(&none).contains("there is no team setup to undo here"), "{}", stderr(&none));
    assert_eq!(state(&env, &repo), original);
}

/// Codex writes its own config.toml (a project trusted at its prompt): an undo after that takes
/// back the setup's trust entries and keeps codex's change, without --force.
#[test]
fn undo_takes_back_codexs_trust_and_keeps_what_codex_wrote_since() {
    let env = TestEnv::new();
    let repo = repo(&env, "repo");
    let user_codex = env.root().join("home/.codex/config.toml");
    std::fs::create_dir_all(user_codex.parent().unwrap()).unwrap();
    let before = "model = \"o3\"\n";
    std::fs::write(&user_codex, before).unwrap();
    setup_json(&env, &repo, &["--name", "alice", "--host", "codex"]);
    let trusted = std::fs::read_to_string(&user_codex).unwrap();
    assert!(trusted.starts_with(before) && trusted.contains("trusted_hash"), "{trusted}");
    let codex_wrote = "\n[projects.\"/elsewhere\"]\ntrust_level = \"trusted\"\n";
    std::fs::write(&user_codex, format!("{trusted}{codex_wrote}")).unwrap();

    let u = undo_json(&env, &repo, &[]);
    let file = u.files.iter().find(|f| f.path == user_codex).expect("listed");
    assert_eq!((file.change, file.forced), (FileRestored::Restored, false));
    let after = std::fs::read_to_string(&user_codex).unwrap();
    assert!(after.starts_with(before) && after.contains("[projects.\"/elsewhere\"]"), "{after}");
    assert!(!after.contains("trusted_hash") && !after.contains("[hooks"), "{after}");
    assert!(!after.contains(&std::fs::canonicalize(&repo).unwrap().display().to_string()), "{after}");
}

/// A second setup that writes a file again keeps the bytes the file had before the first, and a
/// setup started through a symbolic link to the checkout names the same files.
#[test]
fn a_second_setup_keeps_the_state_before_the_first() {
    let env = TestEnv::new();
    let repo = repo(&env, "repo");
    let original = state(&env, &repo);
    setup_json(&env, &repo, &["--name", "alice", "--host", "claude-code"]);
    // The entries taken out by hand and the file edited: the second setup writes it again.
    env.mas_quiet_ok(&repo, &["hooks", "uninstall", "--host", "claude-code"]);
    let edited = read(&repo, ".claude/settings.json").replace("\"opus\"", "\"sonnet\"");
    std::fs::write(repo.join(".claude/settings.json"), edited).unwrap();
    let link = env.root().join("link");
    std::os::unix::fs::symlink(&repo, &link).unwrap();
    let again = setup_json(&env, &link, &["--host", "claude-code"]);
    let settings = again.files.iter().find(|f| f.path.ends_with(".claude/settings.json")).unwrap();
    assert_eq!(settings.change, FileChange::Updated);
    assert!(again.files.iter().filter(|f| f.change != FileChange::Updated).all(|f| f.change == FileChange::Unchanged));
    let u = undo_json(&env, &repo, &[]);
    assert!(u.files.iter().all(|f| !f.forced), "{:?}", u.files);
    assert_eq!(state(&env, &repo), original, "the bytes before the first setup, not the edit between");
}

#[test]
fn undo_refuses_a_file_changed_since_the_setup_unless_forced() {
    let env = TestEnv::new();
    let repo = repo(&env, "repo");
    let original = state(&env, &repo);
    setup_json(&env, &repo, &["--name", "alice", "--host", "claude-code"]);
    let edited = read(&repo, ".claude/settings.json").replace("\"opus\"", "\"sonnet\"");
    std::fs::write(repo.join(".claude/settings.json"), &edited).unwrap();
    env.git_quiet_ok(&repo, &["config", "mas.team", "false"]);
    let before = state(&env, &repo);
    let refused = env.mas(&repo, &["init", "--team", "--undo"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    let err = stderr(&refused);
    assert!(err.contains(".claude/settings.json") && err.contains("config mas.team"), "{err}");
    assert!(err.contains("--undo --force") && err.contains("nothing was undone"), "{err}");
    assert_eq!(state(&env, &repo), before, "nothing undone");
    // A file the user changed back to what the setup wrote is its again.
    let u = undo_json(&env, &repo, &["--force"]);
    assert!(u.files.iter().any(|f| rel(&repo, &f.path) == ".claude/settings.json" && f.forced));
    assert!(u.config.iter().any(|c| c.key == "mas.team" && c.forced));
    assert_eq!(state(&env, &repo), original);
}

#[test]
fn a_file_that_cannot_be_changed_refuses_the_setup_and_nothing_is_written() {
    let env = TestEnv::new();
    let repo = repo(&env, "repo");
    std::fs::create_dir_all(repo.join(".codex")).unwrap();
    std::fs::write(repo.join(".codex/hooks.json"), "{\"hooks\": [}\n").unwrap();
    let before = state(&env, &repo);
    let out = env.mas(&repo, &["init", "--team", "--name", "alice", "--host", "claude-code", "--host", "codex"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(".codex/hooks.json is not valid JSON"), "{}", stderr(&out));
    assert_eq!(state(&env, &repo), before, "no file, hook or key changed, and no record");
    assert!(!env.keys().exists(), "no key created");
}

#[test]
fn the_hosts_are_detected_by_their_folder_or_their_program() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    std::fs::create_dir_all(repo.join(".gemini")).unwrap();
    // A PATH with git, sh and a `codex` program, and no other host's.
    let bin = env.root().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["git", "sh"] {
        let found = std::env::split_paths(&std::env::var_os("PATH").unwrap())
            .map(|d| d.join(tool))
            .find(|p| p.is_file())
            .unwrap();
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    std::fs::write(bin.join("codex"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(bin.join("codex"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", Path::new(BIN).parent().unwrap().display(), bin.display());
    let out =
        env.mas_cmd(&repo).args(["init", "--team", "--json"]).env("PATH", &path).env("USER", "Alice Smith").output();
    let out = out.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s: TeamSetup = serde_json::from_slice(&out.stdout).unwrap();
    let hosts: Vec<(Host, Chosen, Vec<Detection>)> =
        s.hosts.iter().map(|h| (h.host, h.chosen, h.detected.clone())).collect();
    assert_eq!(
        hosts,
        [
            (
                Host::Codex,
                Chosen::Detected,
                vec![Detection::Program { program: "codex".into(), path: bin.join("codex") }]
            ),
            (Host::Gemini, Chosen::Detected, vec![Detection::Marker { marker: ".gemini".into() }]),
        ]
    );
    assert!(repo.join(".codex/hooks.json").is_file() && repo.join(".gemini/settings.json").is_file());
    assert!(!repo.join(".claude").exists(), "claude-code was not detected");
    // $USER made an agent name.
    assert_eq!((s.member.name.as_str(), s.member.source), ("alice-smith", NameSource::User));
    // The human output says why each host was chosen.
    let text = env.mas_cmd(&repo).args(["init", "--team"]).env("PATH", &path).output().unwrap();
    assert!(stdout(&text).contains("codex (detected: `codex` on PATH"), "{}", stdout(&text));
    assert!(stdout(&text).contains("gemini (detected: .gemini exists)"), "{}", stdout(&text));
    // No host anywhere: the rest is set up, and the setup says how to name one.
    std::fs::remove_file(bin.join("codex")).unwrap();
    let bare = env.repo("bare");
    let out = env.mas_cmd(&bare).args(["init", "--team", "--name", "bob"]).env("PATH", &path).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("no coding-agent host was detected here") && stderr(&out).contains("--host"));
    assert!(bare.join(".git/hooks/pre-push").is_file() && !bare.join(".agents").exists());
}

#[test]
fn the_member_is_the_roster_entry_whose_key_is_here() {
    let env = TestEnv::new();
    let repo = env.team(&["carol", "dave"]).build().repo;
    // Only dave's key is on this machine.
    std::fs::remove_file(env.keys().join("carol.key")).unwrap();
    let s = setup_json(&env, &repo, &["--host", "claude-code"]);
    assert_eq!((s.member.name.as_str(), s.member.source, s.member.added), ("dave", NameSource::Roster, false));
    let roster = s.files.iter().find(|f| f.path.ends_with(".mas/roster")).unwrap();
    assert_eq!(roster.change, FileChange::Unchanged, "the roster is not touched");
    assert_eq!(config(&env, &repo, "mas.agent").as_deref(), Some("dave"));
    // A name on the roster whose key is elsewhere is refused.
    let other = env.team(&["erin"]).named("other").build().repo;
    std::fs::remove_file(env.keys().join("erin.key")).unwrap();
    let out = env.mas(&other, &["init", "--team", "--name", "erin", "--host", "claude-code"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("agent 'erin' is on the roster, but this machine holds no key for it"),
        "{}",
        stderr(&out)
    );
    // A new member on a roster with entries: its commit needs a signature.
    let s = setup_json(&env, &other, &["--name", "frank", "--host", "claude-code"]);
    assert!(s.member.added && s.commit.as_ref().is_some_and(|c| c.needs_roster_signature), "{:?}", s.commit);
    // No $USER, no git identity: the OS account names it (the error for no name at all is
    // pinned in the CLI's error table; every account here has a name).
    let third = env.repo("third");
    let account = std::process::Command::new("id").arg("-un").output().unwrap();
    let account = String::from_utf8_lossy(&account.stdout).trim().to_lowercase();
    let s = setup_json(&env, &third, &["--host", "claude-code"]);
    assert_eq!((s.member.name.as_str(), s.member.source), (account.as_str(), NameSource::User));
    // `git config mas.agent` names it.
    let fourth = env.repo("fourth");
    env.git_quiet_ok(&fourth, &["config", "mas.agent", "gina"]);
    let s = setup_json(&env, &fourth, &["--host", "claude-code"]);
    assert_eq!((s.member.name.as_str(), s.member.source), ("gina", NameSource::Config));
}

#[test]
fn the_human_output_of_setup_and_undo() {
    let env = TestEnv::new();
    let repo = repo(&env, "repo");
    let setup = env.mas(&repo, &["init", "--team", "--name", "alice", "--host", "claude-code"]);
    let again = env.mas(&repo, &["init", "--team", "--host", "claude-code"]);
    let undo = env.mas(&repo, &["init", "--team", "--undo"]);
    for out in [&setup, &again, &undo] {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    }
    redacted(&env, || {
        insta::assert_snapshot!("init_team", shown(&setup));
        insta::assert_snapshot!("init_team_again", shown(&again));
        insta::assert_snapshot!("init_team_undo", shown(&undo));
    });
}

#[test]
fn the_help_says_what_undo_keeps_and_where_the_record_is() {
    let env = TestEnv::new();
    let help = env.mas_ok(env.root(), &["init", "--help"]);
    for needle in
        ["--team", "--undo", "--force", "--host", "--name", "mas-setup", "not a repository file", "With --json"]
    {
        assert!(help.contains(needle), "--help lacks {needle}:\n{help}");
    }
    let repo = env.repo("repo");
    for args in [
        &["init", "--undo"][..],
        &["init", "--name", "x"],
        &["init", "--team", "--force"],
        &["init", "--team", "--undo", "--host", "codex"],
    ] {
        assert_eq!(env.mas(&repo, args).status.code(), Some(2), "{args:?}");
    }
}

/// The setup as the crash tests run it.
fn setup_cmd(env: &TestEnv, repo: &Path) -> Command {
    let mut cmd = env.mas_cmd(repo);
    cmd.args(["init", "--team", "--name", "alice", "--host", "claude-code"]);
    cmd
}

fn undo_cmd(env: &TestEnv, repo: &Path) -> Command {
    let mut cmd = env.mas_cmd(repo);
    cmd.args(["init", "--team", "--undo"]);
    cmd
}

/// The working tree a complete setup leaves, the roster aside (its key is each test's own).
fn installed(repo: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    tree(repo).into_iter().filter(|(p, _)| p != Path::new(".mas/roster")).collect()
}

/// Runs `cmd` and returns its exit code and stderr.
fn run(mut cmd: Command) -> (Option<i32>, String) {
    let out = cmd.output().unwrap();
    (out.status.code(), stderr(&out))
}

/// A SIGKILL at every rename (each file's and the record's temporary renamed into place, the
/// frame's objects and ref; git config's lock), every folder created, the key linked to its name,
/// every child's start and every wait for one. After each: undo (every other point) gives back
/// the state before the setup, the setup run again completes (the same files as a setup never
/// killed), and undo then gives back every byte.
#[test]
fn a_setup_killed_at_any_point_is_undone_or_completed() {
    let reference = {
        let env = TestEnv::new();
        let repo = repo(&env, "repo");
        assert_eq!(run(setup_cmd(&env, &repo)).0, Some(0));
        installed(&repo)
    };
    let original = {
        let env = TestEnv::new();
        let repo = repo(&env, "repo");
        state(&env, &repo)
    };
    let triggers = [
        Trigger::on(killpoints::RENAMES),
        // git config's own rename of its lock (each child counts its own calls: the first one's).
        Trigger::on_paths(killpoints::RENAMES, [PathBuf::from(".git/config.lock")]),
        Trigger::on("mkdir,?mkdirat"),
        // The new key linked to its name.
        Trigger::on("?link,linkat"),
        Trigger::on("execve").once(),
        Trigger::on(killpoints::WAITS).own_process(),
    ];
    let mut problems = Vec::new();
    let mut kills = 0;
    let envs = std::cell::RefCell::new(Vec::new());
    let swept = killpoints::sweep(
        &triggers,
        |_, _| {
            let env = TestEnv::new();
            let repo = repo(&env, "repo");
            let cmd = setup_cmd(&env, &repo);
            envs.borrow_mut().push((env, repo));
            cmd
        },
        |attempt| {
            let envs = envs.borrow();
            let (env, repo) = envs.last().unwrap();
            let point = attempt.point();
            if !attempt.killed {
                return;
            }
            kills += 1;
            // A killed process holds no lock any more: what git or the store left is stale.
            let git_dir = killpoints::git_dir(env, repo);
            killpoints::remove_locks(&git_dir);
            if attempt.n % 2 == 1 {
                let (code, err) = run(undo_cmd(env, repo));
                let nothing = code == Some(1) && err.contains("no team setup to undo");
                if code != Some(0) && !nothing {
                    problems.push(format!("{point}: undo exited {code:?}: {err}"));
                }
                let after = state(env, repo);
                if !after.same_files(&original) {
                    problems.push(format!("{point}: undo after the kill left {:?}", diff(&original, &after)));
                }
            }
            let (code, err) = run(setup_cmd(env, repo));
            if code != Some(0) {
                problems.push(format!("{point}: the setup run again exited {code:?}: {err}"));
                return;
            }
            if installed(repo) != reference {
                problems.push(format!("{point}: the setup run again left another tree"));
            }
            let (code, err) = run(undo_cmd(env, repo));
            if code != Some(0) {
                problems.push(format!("{point}: undo exited {code:?}: {err}"));
            }
            let after = state(env, repo);
            if after != original {
                problems.push(format!("{point}: undo did not restore it: {:?}", diff(&original, &after)));
            }
        },
    );
    eprintln!("kill points of the setup: {swept:?}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(kills >= 10, "the sweep killed the setup {kills} times: {swept:?}");
}

/// A SIGKILL at every rename (a file written back; git config's lock), removal of a file or a
/// folder and wait of the undo: undo run again completes it, and the state before the setup is
/// back.
#[test]
fn an_undo_killed_at_any_point_is_completed_by_undo_again() {
    let triggers = [
        Trigger::on(killpoints::RENAMES),
        Trigger::on_paths(killpoints::RENAMES, [PathBuf::from(".git/config.lock")]),
        Trigger::on("?unlink,unlinkat"),
        Trigger::on("?rmdir"),
        Trigger::on(killpoints::WAITS).own_process(),
    ];
    let original = {
        let env = TestEnv::new();
        let repo = repo(&env, "repo");
        state(&env, &repo)
    };
    let mut problems = Vec::new();
    let mut kills = 0;
    let envs = std::cell::RefCell::new(Vec::new());
    let swept = killpoints::sweep(
        &triggers,
        |_, _| {
            let env = TestEnv::new();
            let repo = repo(&env, "repo");
            assert_eq!(run(setup_cmd(&env, &repo)).0, Some(0));
            let cmd = undo_cmd(&env, &repo);
            envs.borrow_mut().push((env, repo));
            cmd
        },
        |attempt| {
            let envs = envs.borrow();
            let (env, repo) = envs.last().unwrap();
            let point = attempt.point();
            if attempt.killed {
                kills += 1;
                killpoints::remove_locks(&killpoints::git_dir(env, repo));
                let (code, err) = run(undo_cmd(env, repo));
                let nothing = code == Some(1) && err.contains("no team setup to undo");
                if code != Some(0) && !nothing {
                    problems.push(format!("{point}: undo run again exited {code:?}: {err}"));
                }
            }
            let after = state(env, repo);
            // After the record is gone an empty folder of it may stay; everything else is back.
            if !after.same_files(&original) {
                problems.push(format!("{point}: left {:?}", diff(&original, &after)));
            }
        },
    );
    eprintln!("kill points of the undo: {swept:?}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(kills >= 10, "the sweep killed the undo {kills} times: {swept:?}");
}

/// What differs between two states, by name.
fn diff(want: &State, got: &State) -> Vec<String> {
    let mut out = Vec::new();
    let names = |t: &[(PathBuf, Vec<u8>)]| t.iter().map(|(p, _)| p.display().to_string()).collect::<Vec<_>>();
    for (p, b) in &got.tree {
        match want.tree.iter().find(|(q, _)| q == p) {
            None => out.push(format!("extra {}", p.display())),
            Some((_, c)) if c != b => out.push(format!("changed {}", p.display())),
            _ => {}
        }
    }
    for p in names(&want.tree) {
        if !names(&got.tree).contains(&p) {
            out.push(format!("missing {p}"));
        }
    }
    if want.hooks != got.hooks {
        out.push(format!("hooks {:?}", got.hooks.iter().map(|h| (&h.0, h.2)).collect::<Vec<_>>()));
    }
    if want.config != got.config {
        out.push(format!("config {:?}", got.config));
    }
    if want.record != got.record {
        out.push(format!("record {}", got.record));
    }
    out
}

#[test]
fn without_user_the_member_is_named_from_gits_user_email_and_no_rust_none_is_printed() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    // The hermetic environment has no $USER or $LOGNAME (a container's shell).
    env.git_quiet_ok(&repo, &["config", "user.email", "Carol.Q@example.org"]);
    let out = env.mas_cmd(&repo).args(["init", "--team", "--json", "--host", "codex"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let s: TeamSetup = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((s.member.name.as_str(), s.member.source), ("carol.q", NameSource::User));
    assert!(!stderr(&out).contains("None"), "{}", stderr(&out));
}

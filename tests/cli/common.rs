//! The hermetic test environment.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_git-mas");
/// The hook's own binary, which the hosts' installed entries run (`git-mas-hook --host HOST`).
pub const HOOK_BIN: &str = env!("CARGO_BIN_EXE_git-mas-hook");

/// A temporary HOME, key directory and set of repositories.
pub struct TestEnv {
    pub tmp: tempfile::TempDir,
}

impl TestEnv {
    pub fn new() -> Self {
        let tmp = tempfile::Builder::new().prefix("git-mas-test").tempdir().expect("tempdir");
        std::fs::create_dir_all(tmp.path().join("home")).unwrap();
        std::fs::create_dir_all(tmp.path().join("tmp")).unwrap();
        TestEnv { tmp }
    }

    pub fn root(&self) -> &Path {
        self.tmp.path()
    }

    pub fn keys(&self) -> PathBuf {
        self.root().join("keys")
    }

    /// Applies the hermetic environment to a command: it starts from an empty environment, so
    /// nothing of the caller's git, git-mas or hosts' configuration (a test run from a git hook, or
    /// by an agent under `git mas coordinate`, has `GIT_*` and `GIT_MAS_*` variables; a developer
    /// has `CODEX_HOME` or a proxy) gets through, and sets only what the tests need:
    ///
    /// - `PATH`: the built binary's directory first, then the caller's (git, sh, strace, node);
    /// - `HOME` and `XDG_CONFIG_HOME`: the test's own home (where `--global` installs write);
    /// - `TMPDIR`: the test's own temporary directory (`<root>/tmp`: scratch checkouts are made
    ///   there and `doctor` reads it, so tests running at once never see each other's);
    /// - git's configuration (none: `GIT_CONFIG_GLOBAL=/dev/null`, `GIT_CONFIG_NOSYSTEM=1`), a
    ///   fixed author and committer with fixed dates;
    /// - `GIT_MAS_KEY_DIR`: the test's key directory;
    /// - `NO_COLOR`, and `LANG`/`LC_ALL=C` so that git's messages are the untranslated ones.
    ///
    /// A test that needs anything else (`CODEX_HOME`, `GIT_MAS_AGENT`) sets it on the command.
    pub fn hermetic(&self, cmd: &mut Command) {
        let home = self.root().join("home");
        cmd.env_clear()
            .env("PATH", path_with_bin())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("TMPDIR", self.root().join("tmp"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
            .env("GIT_AUTHOR_DATE", "1767225600 +0000")
            .env("GIT_COMMITTER_DATE", "1767225600 +0000")
            .env("GIT_MAS_KEY_DIR", self.keys())
            .env("NO_COLOR", "1")
            .env("LANG", "C")
            .env("LC_ALL", "C");
    }

    #[must_use]
    pub fn git_cmd(&self, dir: &Path) -> Command {
        let mut cmd = Command::new("git");
        cmd.current_dir(dir);
        self.hermetic(&mut cmd);
        cmd
    }

    /// Runs git and asserts success; returns trimmed stdout.
    #[must_use]
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git_cmd(dir).args(args).output().expect("run git");
        assert!(out.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Runs git and asserts success, for a step whose output the test does not read (setting up a
    /// repository: `add`, `commit`, `config`).
    pub fn git_quiet_ok(&self, dir: &Path, args: &[&str]) {
        let _ = self.git(dir, args);
    }

    #[must_use]
    pub fn mas_cmd(&self, dir: &Path) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.current_dir(dir);
        self.hermetic(&mut cmd);
        cmd
    }

    /// `git-mas-hook` in `dir`, in the hermetic environment: the command a host's hook entry runs.
    #[must_use]
    pub fn hook_cmd(&self, dir: &Path) -> Command {
        let mut cmd = Command::new(HOOK_BIN);
        cmd.current_dir(dir);
        self.hermetic(&mut cmd);
        cmd
    }

    /// Runs git-mas and returns its output, whatever the exit code.
    #[must_use]
    pub fn mas(&self, dir: &Path, args: &[&str]) -> Output {
        self.mas_cmd(dir).args(args).output().expect("run git-mas")
    }

    /// Runs git-mas, asserts success, returns stdout.
    #[must_use]
    pub fn mas_ok(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.mas(dir, args);
        assert!(
            out.status.success(),
            "git mas {args:?} exited {:?}\nstdout: {}\nstderr: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs git-mas and asserts success, for a step whose output the test does not read (setting
    /// up what the command under test then reads: a frame, a focus, an agent).
    pub fn mas_quiet_ok(&self, dir: &Path, args: &[&str]) {
        let _ = self.mas_ok(dir, args);
    }

    /// A new repository holding a copy of the fixture project, committed on main.
    #[must_use]
    pub fn repo(&self, name: &str) -> PathBuf {
        let dir = self.root().join(name);
        copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures-repo"), &dir);
        self.git_quiet_ok(&dir, &["init", "--quiet", "-b", "main"]);
        self.git_quiet_ok(&dir, &["add", "."]);
        self.git_quiet_ok(&dir, &["commit", "--quiet", "-m", "fixture"]);
        dir
    }

    /// Creates agents and commits the roster.
    pub fn agents(&self, repo: &Path, names: &[&str]) {
        for n in names {
            self.mas_quiet_ok(repo, &["agent", "new", n]);
        }
        self.git_quiet_ok(repo, &["add", ".mas/roster"]);
        self.git_quiet_ok(repo, &["commit", "--quiet", "-m", "roster"]);
    }

    /// A team in one call: a repository holding the fixture project with `agents` on its
    /// committed roster, and whatever else the builder is told (a name, configuration, linked
    /// worktrees, a published frame, focuses, a remote). `build` makes it.
    pub fn team(&self, agents: &[&str]) -> TeamBuilder<'_> {
        TeamBuilder {
            env: self,
            name: "repo".into(),
            agents: agents.iter().map(|a| a.to_string()).collect(),
            config: Vec::new(),
            worktrees: false,
            frame: None,
            focus: Vec::new(),
            remote: false,
        }
    }

    /// A clone of `remote` named `name` in the test root.
    #[must_use]
    pub fn clone_of(&self, remote: &Path, name: &str) -> PathBuf {
        let dir = self.root().join(name);
        self.git_quiet_ok(self.root(), &["clone", "--quiet", remote.to_str().unwrap(), dir.to_str().unwrap()]);
        dir
    }

    /// All refs with their targets (to check that a failing command changed none).
    #[must_use]
    pub fn refs(&self, repo: &Path) -> String {
        self.git(repo, &["for-each-ref", "--format=%(refname) %(objectname)"])
    }
}

/// What [`TestEnv::team`] builds, step by step in this order: the repository and its roster,
/// configuration, linked worktrees, the frame, the focuses, the remote.
#[must_use = "a team is made by `build`"]
pub struct TeamBuilder<'a> {
    env: &'a TestEnv,
    name: String,
    agents: Vec<String>,
    config: Vec<(String, String)>,
    worktrees: bool,
    frame: Option<String>,
    focus: Vec<(String, String)>,
    remote: bool,
}

impl TeamBuilder<'_> {
    /// The repository's directory name in the test root (default `repo`).
    pub fn named(mut self, name: &str) -> Self {
        self.name = name.into();
        self
    }

    /// `git config KEY VALUE` in the repository.
    pub fn config(mut self, key: &str, value: &str) -> Self {
        self.config.push((key.into(), value.into()));
        self
    }

    /// Each agent in a linked worktree of its own (`wt-<agent>` in the test root, on branch
    /// `work-<agent>`), whose per-worktree `mas.agent` names it.
    pub fn worktrees(mut self) -> Self {
        self.worktrees = true;
        self
    }

    /// A frame published by `agent` (from its worktree, with [`TeamBuilder::worktrees`]).
    pub fn frame(mut self, agent: &str) -> Self {
        self.frame = Some(agent.into());
        self
    }

    /// `agent` publishes its focus on `targets` (after the frame).
    pub fn focus(mut self, agent: &str, targets: &str) -> Self {
        self.focus.push((agent.into(), targets.into()));
        self
    }

    /// A bare remote `remote.git` in the test root, the repository's `origin`, main pushed.
    pub fn remote(mut self) -> Self {
        self.remote = true;
        self
    }

    pub fn build(self) -> TeamRepo {
        let env = self.env;
        let repo = env.repo(&self.name);
        env.agents(&repo, &self.agents.iter().map(String::as_str).collect::<Vec<_>>());
        for (key, value) in &self.config {
            env.git_quiet_ok(&repo, &["config", key, value]);
        }
        let mut worktrees = Vec::new();
        if self.worktrees {
            env.git_quiet_ok(&repo, &["config", "extensions.worktreeConfig", "true"]);
            for name in &self.agents {
                let wt = env.root().join(format!("wt-{name}"));
                env.git_quiet_ok(
                    &repo,
                    &["worktree", "add", "--quiet", "-b", &format!("work-{name}"), wt.to_str().unwrap()],
                );
                env.git_quiet_ok(&wt, &["config", "--worktree", "mas.agent", name]);
                worktrees.push(wt);
            }
        }
        let team = TeamRepo { repo, agents: self.agents, worktrees, remote: None };
        let as_agent = |agent: &str, args: &[&str]| {
            if team.worktrees.is_empty() {
                env.mas_quiet_ok(&team.repo, &[&["--agent", agent][..], args].concat());
            } else {
                env.mas_quiet_ok(team.worktree(agent), args);
            }
        };
        if let Some(agent) = &self.frame {
            as_agent(agent, &["snapshot", "--publish"]);
        }
        for (agent, targets) in &self.focus {
            as_agent(agent, &["focus", "publish", "--targets", targets]);
        }
        let remote = self.remote.then(|| {
            let remote = env.root().join("remote.git");
            env.git_quiet_ok(env.root(), &["init", "--quiet", "--bare", "-b", "main", remote.to_str().unwrap()]);
            env.git_quiet_ok(&team.repo, &["remote", "add", "origin", remote.to_str().unwrap()]);
            env.git_quiet_ok(&team.repo, &["push", "--quiet", "origin", "main"]);
            remote
        });
        TeamRepo { remote, ..team }
    }
}

/// A repository with a team on its roster, as [`TestEnv::team`] built it.
pub struct TeamRepo {
    pub repo: PathBuf,
    pub agents: Vec<String>,
    /// Each agent's linked worktree, in the order of `agents` (empty unless asked for).
    pub worktrees: Vec<PathBuf>,
    /// The bare remote, if asked for.
    pub remote: Option<PathBuf>,
}

impl TeamRepo {
    /// `agent`'s linked worktree.
    #[must_use]
    pub fn worktree(&self, agent: &str) -> &Path {
        let i = self.agents.iter().position(|a| a == agent).unwrap_or_else(|| panic!("{agent} is not on the team"));
        &self.worktrees[i]
    }

    /// The bare remote.
    #[must_use]
    pub fn remote(&self) -> &Path {
        self.remote.as_deref().expect("the team was built with a remote")
    }
}

/// Passes the Rust toolchain's variables to `cmd`, a command whose check runs `cargo` (the fixture's
/// `check.sh`, a crate's `cargo test`): the hermetic environment has none of them and its HOME hides
/// rustup's and cargo's homes, so they are pointed at the ones this test runs with.
pub fn with_toolchain(cmd: &mut Command) -> &mut Command {
    let home = std::env::var("HOME").unwrap_or_default();
    cmd.env("RUSTUP_HOME", std::env::var("RUSTUP_HOME").unwrap_or(format!("{home}/.rustup")))
        .env("CARGO_HOME", std::env::var("CARGO_HOME").unwrap_or(format!("{home}/.cargo")));
    if let Ok(toolchain) = std::env::var("RUSTUP_TOOLCHAIN") {
        cmd.env("RUSTUP_TOOLCHAIN", toolchain);
    }
    cmd
}

/// Both streams and the exit code of a command, as a user sees them.
#[must_use]
pub fn shown(out: &Output) -> String {
    format!("exit: {:?}\n--- stdout\n{}--- stderr\n{}", out.status.code(), stdout(out), stderr(out))
}

/// Runs `body` (which takes insta snapshots) with the redactions that make a command's human
/// output the same on every machine and every run: the test's directories, keys, object ids and
/// hashes, run ids, process ids, times and durations.
pub fn redacted(env: &TestEnv, body: impl FnOnce()) {
    let root = regex_escape(&env.root().display().to_string());
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.add_filter(&root, "[ROOT]");
    settings.add_filter(r"did:key:z[1-9A-HJ-NP-Za-km-z]+", "[DID]");
    settings.add_filter(r"\b[0-9a-f]{64}\b", "[HASH]");
    settings.add_filter(r"\b[0-9a-f]{40}\b", "[OID]");
    settings.add_filter(r"\b[0-9a-f]{12}\b", "[SHORT]");
    settings.add_filter(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\b", "[TIME]");
    // An elapsed time reads "850ms", "3s" or "1m 2s": each is one [DURATION].
    settings.add_filter(r"\b\d+(\.\d+)?\s?(ms|s|m|h)\b(\s\d+(\.\d+)?\s?(ms|s|m|h)\b)*", "[DURATION]");
    // A duration inside a padded column changes the padding after it ("30m left" and "29m 59s
    // left" are padded to one width): the first run of two or more spaces after a [DURATION] on its
    // line becomes two.
    settings.add_filter(r"(\[DURATION\][^\n]*?) {2,}", "${1}  ");
    settings.add_filter(r"/tmp/[^\s)]+", "[TMP]");
    // Milliseconds since the epoch (a run's created_at_ms).
    settings.add_filter(r"\b1\d{12}\b", "[EPOCH_MS]");
    // A run id git-mas made up (`coordinate` without --id): eight hex digits.
    settings.add_filter(r"\b[0-9a-f]{8}\b", "[RUN]");
    // A process id in a temporary file's name (`.settings.json.git-mas-1234.tmp`).
    settings.add_filter(r"git-mas-\d+", "git-mas-[PID]");
    settings.bind(body);
}

fn regex_escape(text: &str) -> String {
    text.chars().fold(String::new(), |mut s, c| {
        if "\\.+*?()|[]{}^$".contains(c) {
            s.push('\\');
        }
        s.push(c);
        s
    })
}

/// `PATH` with the binary's directory first, so `git mas` (as the hooks call it) is this build.
pub fn path_with_bin() -> String {
    let dir = Path::new(BIN).parent().expect("binary has a directory");
    format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default())
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

#[must_use]
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[must_use]
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `git mas log <target> --json`, parsed.
#[must_use]
pub fn log_json(env: &TestEnv, dir: &Path, target: &str) -> (Option<i32>, serde_json::Value) {
    let out = env.mas(dir, &["log", target, "--json"]);
    let value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("log --json output is not JSON ({e}): {}\n{}", stdout(&out), stderr(&out)));
    (out.status.code(), value)
}

/// `git mas log <target> --json`, deserialized into the CLI's own shape.
#[must_use]
pub fn log_chains(env: &TestEnv, dir: &Path, target: &str) -> (Option<i32>, Vec<crate::json::log::LoggedChain>) {
    let out = env.mas(dir, &["log", target, "--json"]);
    let value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("log --json output is not its shape ({e}): {}\n{}", stdout(&out), stderr(&out)));
    (out.status.code(), value)
}

/// Whether every record of a chain verifies (and there is at least one).
pub fn all_verified(chain: &crate::json::log::LoggedChain) -> bool {
    !chain.records.is_empty() && chain.records.iter().all(|r| r.verdict == git_mas::store::record::Verdict::Verified)
}

/// The (status labels) of one chain in `log --json` output, newest first.
pub fn statuses(chain: &serde_json::Value) -> Vec<String> {
    chain["records"].as_array().unwrap().iter().map(|r| r["verdict"]["status"].as_str().unwrap().to_string()).collect()
}

/// Commits the tree `listing` (`git mktree` lines) on top of `parent` (default: the ref's tip, if
/// any) and moves `refname` there — with plain git and no key, as an attacker would.
pub fn forge_tree(env: &TestEnv, repo: &Path, refname: &str, listing: &str, parent: Option<&str>) {
    use std::io::Write;
    let mut mktree = env.git_cmd(repo);
    mktree.arg("mktree").stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
    let mut child = mktree.spawn().unwrap();
    child.stdin.take().unwrap().write_all(listing.as_bytes()).unwrap();
    let tree = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    let tip = env.git_cmd(repo).args(["rev-parse", "--verify", "--quiet", refname]).output().unwrap();
    let tip = String::from_utf8(tip.stdout).unwrap().trim().to_string();
    let parent = parent.map(str::to_string).or((!tip.is_empty()).then_some(tip));
    let mut args = vec!["commit-tree", tree.trim(), "-m", "forged"];
    if let Some(p) = &parent {
        args.extend(["-p", p.as_str()]);
    }
    let commit = env.git(repo, &args);
    env.git_quiet_ok(repo, &["update-ref", refname, &commit]);
}

/// Forges a record commit on top of `refname`: `record.json` holds `bytes`, plus the `extra`
/// `git mktree` lines.
pub fn forge_record(env: &TestEnv, repo: &Path, refname: &str, bytes: &[u8], extra: &str) {
    let file = env.root().join("forged.json");
    std::fs::write(&file, bytes).unwrap();
    let blob = env.git(repo, &["hash-object", "-w", file.to_str().unwrap()]);
    forge_tree(env, repo, refname, &format!("100644 blob {blob}\trecord.json\n{extra}"), None);
}

/// Every file and folder under `dir` (outside .git) with its bytes (`<dir>` for a folder), sorted:
/// what "byte for byte" compares.
#[must_use]
pub fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                out.push((p.strip_prefix(dir).unwrap().to_path_buf(), b"<dir>".to_vec()));
                stack.push(p);
            } else {
                out.push((p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A command's `--json` event stream (one JSON value per stdout line), its exit code and stderr.
pub struct JsonRun {
    pub code: Option<i32>,
    pub lines: Vec<serde_json::Value>,
    pub stderr: String,
}

impl JsonRun {
    /// Reads `out`; a stdout line that is not JSON fails the test.
    pub fn of(out: &std::process::Output) -> JsonRun {
        let lines = stdout(out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect();
        JsonRun { code: out.status.code(), lines, stderr: stderr(out) }
    }

    /// The events of one kind (`event` field), in order.
    pub fn events(&self, kind: &str) -> Vec<&serde_json::Value> {
        self.lines.iter().filter(|l| l["event"] == kind).collect()
    }

    /// The last line.
    pub fn last(&self) -> &serde_json::Value {
        self.lines.last().unwrap_or_else(|| panic!("no output; stderr: {}", self.stderr))
    }
}

/// Kills process group `pgid` (never group 0 or 1: that would be every process). Not through
/// procps `kill -KILL -PID`, which parses a negative PID as a signal and may signal group -1.
pub fn kill_group(pgid: u32) {
    if let Some(pid) = i32::try_from(pgid).ok().filter(|p| *p > 1).and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// A running process (zombies left out) as `/proc/<pid>/stat` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    pub pid: u32,
    pub name: String,
    pub ppid: u32,
    pub pgrp: u32,
}

/// Every running process, read from `/proc`.
#[must_use]
pub fn processes() -> Vec<Proc> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses.
        let Some((head, rest)) = stat.rsplit_once(')') else { continue };
        let name = head.split_once('(').map_or("", |(_, c)| c).to_string();
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if let [state, ppid, pgrp, ..] = fields[..]
            && state != "Z"
            && let (Ok(ppid), Ok(pgrp)) = (ppid.parse(), pgrp.parse())
        {
            out.push(Proc { pid, name, ppid, pgrp });
        }
    }
    out
}

/// The processes of group `pgid` still running.
#[must_use]
pub fn group_members(pgid: u32) -> Vec<Proc> {
    processes().into_iter().filter(|p| p.pgrp == pgid).collect()
}

/// Kills group `pgid` and waits (up to 5 s) until none of its processes runs; returns those still
/// running then.
#[must_use]
pub fn kill_group_and_wait(pgid: u32) -> Vec<Proc> {
    kill_group(pgid);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let left = group_members(pgid);
        if left.is_empty() || std::time::Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A long-lived child (a watcher, a maintenance loop) started in a process group of its own and
/// killed with everything it started when dropped, so that a failed assertion does not leave it
/// running after the suite.
pub struct GroupChild(pub std::process::Child);

impl GroupChild {
    /// Spawns `cmd` as the leader of a new process group.
    pub fn spawn(cmd: &mut Command) -> std::io::Result<GroupChild> {
        use std::os::unix::process::CommandExt as _;
        cmd.process_group(0).spawn().map(GroupChild)
    }
}

impl std::ops::Deref for GroupChild {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for GroupChild {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for GroupChild {
    fn drop(&mut self) {
        // Only while something of the group runs: a group id nobody holds may be reused.
        // What is left running cannot fail the test from a drop (it may be unwinding already).
        if !group_members(self.0.id()).is_empty() {
            let _ = kill_group_and_wait(self.0.id());
        }
        let _ = self.0.wait();
    }
}

/// Runs `cmd` with `input` on its stdin (closed after it) and returns what it did.
pub fn fed(cmd: &mut Command, input: &[u8]) -> Output {
    use std::io::Write as _;
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

//! The real coding-agent CLIs (claude-code, codex, opencode, copilot, gemini) driving git-mas, offline:
//! each host is the pinned npm release that `tests/hosts/install.sh` puts in a cache folder, its
//! model is the scripted server of [`server`] on loopback, its HOME a throwaway directory, and what
//! it runs is the preset's own command line.
//!
//! A host that is not installed fails its test with a message naming the install script: these
//! tests are never skipped.

use crate::common::*;
use crate::development::Team;
use server::{ModelServer, Scenario, Step};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod claude;
mod codex;
mod copilot;
mod edit_gate;
mod gemini;
mod inspector;
mod mcp;
mod mcp_session;
mod opencode;
mod server;
mod team;
mod team_mode;
mod trust;

/// The folder `tests/hosts/install.sh` installs into.
pub fn hosts_dir() -> PathBuf {
    match std::env::var_os("GIT_MAS_HOSTS_DIR") {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("CARGO_TARGET_DIR") {
            Some(t) => PathBuf::from(t).join("hosts"),
            None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/hosts"),
        },
    }
}

/// Where `tests/hosts/install.sh` installs the CLIs.
pub fn hosts_bin() -> PathBuf {
    hosts_dir().join("node_modules/.bin")
}

/// The installed CLI `program`; panics naming the install script when it is missing.
pub fn host(program: &str) -> PathBuf {
    let path = hosts_bin().join(program);
    assert!(
        path.exists(),
        "{program} is not installed at {}: run `bash tests/hosts/install.sh` from the repository root first",
        path.display()
    );
    path
}

/// What one run of a host printed.
pub struct HostRun {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// A team repository, one agent's worktree in a started run, and a model server.
pub struct Bench {
    pub team: Team,
    pub run: String,
    pub worktree: PathBuf,
    pub server: ModelServer,
}

impl Bench {
    /// What to show when a host run fails: its exit, time, output and the requests the server saw.
    pub fn context(&self, run: &HostRun) -> String {
        format!(
            "exit {:?} after {:?}\nstdout: {}\nstderr: {}\nrequests:\n{}",
            run.code,
            run.elapsed,
            run.stdout,
            run.stderr,
            self.server.dump()
        )
    }

    /// alice holds `src/lib.rs` and bob `src/money.rs` on a published frame, and the scripted
    /// model calls the git-mas server's `gate` on `src/money.rs`, then replies DONE.
    pub fn gate_call_on_bobs_file() -> Bench {
        let bench = Bench::new(|_, _| {
            Scenario::single(
                vec![Step::Mcp { tool: "gate".into(), arguments: serde_json::json!({"paths": ["src/money.rs"]}) }],
                "Gated.\nDONE",
            )
        });
        let team = &bench.team;
        team.quiet_ok(&team.repo, "alice", &["snapshot", "--publish"]);
        team.quiet_ok(&team.repo, "alice", &["focus", "publish", "--targets", "src/lib.rs"]);
        team.quiet_ok(&team.repo, "bob", &["focus", "publish", "--targets", "src/money.rs"]);
        bench
    }

    /// Team `alice`, `bob`; run `r1`; alice's worktree; the server playing the scenario made for it.
    pub fn new(scenario: impl FnOnce(&Path, &str) -> Scenario) -> Bench {
        Bench::with_agents(&["alice", "bob"], scenario)
    }

    /// Like [`Bench::new`] with the team `agents` (alice among them).
    pub fn with_agents(agents: &[&str], scenario: impl FnOnce(&Path, &str) -> Scenario) -> Bench {
        let team = Team::new(agents);
        let run = team.start("alice", &["--id", "r1"]);
        let worktree = team.worktree(&run, "alice");
        // The team's check: it shows the environment it ran in, and fails on the word BROKEN.
        let check = team.env.root().join("check.sh");
        std::fs::write(
            &check,
            "echo \"check: agent=$GIT_MAS_AGENT run=$GIT_MAS_RUN cwd=$(pwd)\"\n! grep -rq BROKEN --exclude-dir=.git .\n",
        )
        .unwrap();
        let check = format!("sh {}", check.display());
        team.git_quiet_ok(&["config", "mas.check", &check]);
        let server = ModelServer::start(scenario(&worktree, &check));
        Bench { team, run, worktree, server }
    }

    /// `git mas skills install --host HOST` in the worktree (the project default), kept out of the
    /// proposal by the repository's exclude file.
    pub fn install_skills(&self, host: &str) {
        self.team.here_quiet_ok(&self.worktree, &["skills", "install", "--host", host]);
        let common = PathBuf::from(self.team.git(&["rev-parse", "--git-common-dir"]));
        let exclude = self.team.repo.join(common).join("info/exclude");
        std::fs::create_dir_all(exclude.parent().unwrap()).unwrap();
        let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
        text.push_str("/.claude/\n/.agents/\n");
        std::fs::write(&exclude, text).unwrap();
    }

    /// Asserts that the host told its model about the installed git-mas skill (its name and the
    /// start of its description).
    pub fn assert_skills_advertised(&self) {
        let sent: Vec<String> = self.server.log().iter().map(|r| r.body.clone()).collect();
        let want = "Work on a git repository alongside other agents with git mas";
        assert!(
            sent.iter().any(|b| b.contains(want) && b.contains("git-mas")),
            "no request names the git-mas skill:\n{}",
            self.server.dump()
        );
    }

    /// The team's check command (`mas.check`).
    pub fn check(&self) -> String {
        self.team.git(&["config", "mas.check"])
    }

    pub fn home(&self) -> PathBuf {
        self.team.env.root().join("home")
    }

    /// [`host_command`] in the worktree, acting for alice in the run.
    pub fn command(&self, line: &str, extra: &[(&str, String)]) -> Command {
        let mut cmd = host_command(&self.team.env, &self.worktree, line, extra);
        cmd.env("GIT_MAS_AGENT", "alice").env("GIT_MAS_RUN", &self.run).env("GIT_MAS_WORKTREE", &self.worktree);
        cmd
    }

    /// Runs `line` under `sh -c` in the worktree, `prompt` on stdin, killed after `limit`.
    pub fn run(&self, line: &str, extra: &[(&str, String)], prompt: &str, limit: Duration) -> HostRun {
        let root = self.team.env.root();
        Running::spawn(self.command(line, extra), prompt, &root.join("host.stdout"), &root.join("host.stderr"))
            .wait(limit)
    }

    /// Every tool result text the host sent back to the model, joined.
    pub fn tool_results(&self) -> String {
        let mut out = String::new();
        for body in self.server.turns() {
            collect_results(&body, &mut out);
        }
        out
    }
}

/// `sh -c LINE` in `dir` with the hermetic environment of `env`, the hosts on PATH, no proxy,
/// and `extra`.
pub fn host_command(env: &TestEnv, dir: &Path, line: &str, extra: &[(&str, String)]) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(line).current_dir(dir);
    env.hermetic(&mut cmd);
    cmd.env("PATH", format!("{}:{}", hosts_bin().display(), path_with_bin()))
        // The test's root, not its `tmp/`: copilot lets a shell command read the temporary
        // directory without asking, and the team's check script lies in the root.
        .env("TMPDIR", env.root())
        .env("NO_PROXY", "*")
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .env_remove("ALL_PROXY");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd
}

/// A host started in a process group of its own, its prompt given on stdin and closed, its
/// output going to files.
pub struct Running {
    child: std::process::Child,
    stdout: PathBuf,
    stderr: PathBuf,
    started: Instant,
}

impl Running {
    /// Starts `cmd`, `prompt` on its stdin, its stdout and stderr to these files.
    pub fn spawn(mut cmd: Command, prompt: &str, stdout: &Path, stderr: &Path) -> Running {
        let started = Instant::now();
        cmd.stdin(Stdio::piped())
            .stdout(std::fs::File::create(stdout).unwrap())
            .stderr(std::fs::File::create(stderr).unwrap())
            .process_group(0);
        let mut child = cmd.spawn().expect("start sh");
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(prompt.as_bytes());
        drop(stdin);
        Running { child, stdout: stdout.to_path_buf(), stderr: stderr.to_path_buf(), started }
    }

    /// Waits for the host to exit, killing it `limit` after it started; whatever it left running
    /// in its process group is stopped.
    pub fn wait(self, limit: Duration) -> HostRun {
        self.wait_lingering(limit, Duration::ZERO)
    }

    /// [`Running::wait`], giving what the host left running in its group (a hook it did not wait
    /// for) up to `linger` to end by itself before it is stopped.
    pub fn wait_lingering(mut self, limit: Duration, linger: Duration) -> HostRun {
        let code = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status.code();
            }
            if self.started.elapsed() > limit {
                kill_group(self.child.id());
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let exited = Instant::now();
        while exited.elapsed() < linger && !group_members(self.child.id()).is_empty() {
            std::thread::sleep(Duration::from_millis(50));
        }
        kill_group(self.child.id());
        HostRun {
            code,
            stdout: std::fs::read_to_string(&self.stdout).unwrap_or_default(),
            stderr: std::fs::read_to_string(&self.stderr).unwrap_or_default(),
            elapsed: self.started.elapsed(),
        }
    }
}

impl Drop for Running {
    /// A host abandoned by a failing test is stopped with its group.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            kill_group(self.child.id());
            let _ = self.child.wait();
        }
    }
}

/// Appends every tool result in a request body (any of the four APIs) to `out`.
fn collect_results(body: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    fn text(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(a) => a.iter().for_each(|x| text(x, out)),
            Value::Object(o) => o.values().for_each(|x| text(x, out)),
            _ => {}
        }
    }
    for m in body["messages"].as_array().into_iter().flatten() {
        if m["role"] == "tool" {
            text(&m["content"], out);
        }
        for c in m["content"].as_array().into_iter().flatten() {
            if c["type"] == "tool_result" {
                text(&c["content"], out);
            }
        }
    }
    for i in body["input"].as_array().into_iter().flatten() {
        if i["type"].as_str().is_some_and(|t| t.ends_with("_output")) {
            text(&i["output"], out);
        }
    }
    for c in body["contents"].as_array().into_iter().flatten() {
        for p in c["parts"].as_array().into_iter().flatten() {
            text(&p["functionResponse"]["response"], out);
        }
    }
}

/// A hop prompt above 128 KiB, the most one argument may be (`Argument list too long`): a host
/// gets it whole only on stdin.
pub fn big_prompt() -> String {
    let mut prompt = String::from("Propose a note, then answer DONE.\n\nContext follows.\n");
    let mut i = 0;
    while prompt.len() <= 160 * 1024 {
        prompt.push_str(&format!("context line {i}: nothing to do here, keep reading.\n"));
        i += 1;
    }
    prompt.push_str("END OF THE PROMPT\n");
    prompt
}

/// Asserts that the whole prompt reached the model, its last line included.
pub fn assert_prompt_arrived(bench: &Bench) {
    let sent = bench.server.log().iter().any(|r| r.body.contains("END OF THE PROMPT") && r.body.len() > 160 * 1024);
    assert!(sent, "no request carries the whole prompt");
}

/// The working loop one agent walks in a hop: who am I, write a file, run the team's check,
/// propose.
pub fn propose_scenario(worktree: &Path, check: &str) -> Scenario {
    Scenario::single(
        vec![
            Step::Shell("git mas whoami --json".into()),
            Step::Write { path: worktree.join("NOTES.md").display().to_string(), content: "alice was here\n".into() },
            Step::Shell(check.to_owned()),
            Step::Shell("git mas propose -m 'a note from alice'".into()),
        ],
        "Proposed a note.\nDONE",
    )
}

/// Asserts that the hop proposed NOTES.md in run r1 and that the tool results the host sent its
/// model show the hop's environment.
pub fn assert_proposed(bench: &Bench, run: &HostRun) {
    if let Some(dir) = std::env::var_os("GIT_MAS_HOSTS_DEBUG") {
        let name = std::thread::current().name().unwrap_or("host").replace("::", "-");
        let full: Vec<String> =
            bench.server.log().iter().map(|r| format!("{} {}\n{}\n", r.method, r.path, r.body)).collect();
        let text = format!("{}\n--- stdout\n{}\n--- stderr\n{}", full.join("\n"), run.stdout, run.stderr);
        std::fs::write(Path::new(&dir).join(name), text).unwrap();
    }
    let context = || bench.context(run);
    assert_eq!(run.code, Some(0), "{}", context());
    let team = &bench.team;
    assert!(team.git_ok(&["rev-parse", "--verify", "refs/mas/runs/r1/proposals/alice"]), "no proposal\n{}", context());
    assert_eq!(team.git(&["show", "refs/mas/runs/r1/proposals/alice:NOTES.md"]), "alice was here", "{}", context());
    let results = bench.tool_results();
    let cwd = std::fs::canonicalize(&bench.worktree).unwrap();
    // GIT_MAS_AGENT reached the shell (the worktree's config would say `config`)…
    assert!(results.contains("flag_or_env"), "whoami:\n{results}\n{}", context());
    // …and the check ran, in the worktree, with the hop's environment.
    let want = format!("check: agent=alice run=r1 cwd={}", cwd.display());
    assert!(results.contains(&want), "the shell tool's result lacks {want:?}:\n{results}\n{}", context());
    assert!(results.contains("proposed "), "{}", context());
    assert!(run.stdout.contains("DONE"), "the reply is not on stdout\n{}", context());
}

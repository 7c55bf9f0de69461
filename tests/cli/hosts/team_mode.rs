//! Team mode with the real hosts: after `git mas init --team --host H` and nothing else of
//! git-mas's, two sessions (of one host, of two hosts side by side, or in two linked worktrees of
//! one repository) run at once against one scripted model server and keep off each other's files
//! by their hooks alone: no `GIT_MAS_AGENT`, no focus published, no `git config mas.*`.
//!
//! Each pair plays one scenario. A reads and edits `f` (allowed: A's session agent claims it),
//! then in a shell step marks that and waits for the test's mark that it has seen B done. B
//! waits for A's mark, is refused its edit of `f` naming A's agent (`alice.<host>-…`), edits `g`
//! (allowed, claimed), overwrites `f` with the shell (put back after the call, and B is told at
//! once), makes one more call (it runs: no call is refused to tell B), marks that it is done and
//! waits for a mark the test makes once A's host has exited; then B edits `f` again, allowed, as
//! A's session end released it. While both run the test reads `git mas focus list --json` (A's
//! agent holds `f`, B's `g`) and the files (`f` is A's, byte for byte); after each host exits,
//! its agent holds nothing. The branches of the scenario are chosen by a word of each session's
//! prompt, so one server plays both; a session waits only inside a shell step, never inside a
//! hook. A shell step may outlive the host's wait for it (codex's `exec_command` yields after
//! 10 s): the server then polls it, as a model would, until it ends.
//!
//! Each host runs as a user of team mode runs it unattended, with what the host needs to load a
//! project's hooks, which is the host's own setting (the setup's notes name each):
//!
//! - claude-code: `claude -p`, its edits accepted and the shell allowed.
//! - codex: `codex exec`; the setup itself trusts the project and each of its hooks in codex's
//!   `config.toml` (codex runs no untrusted hook, and says nothing). In a linked worktree it runs
//!   the main checkout's trusted hooks, in the worktree.
//! - copilot: `copilot -s --trust-folder` (in prompt mode it loads `.github/hooks/` only in a
//!   trusted folder).
//! - gemini: `GEMINI_CLI_TRUST_WORKSPACE=true` (it reads a project's settings only in a trusted
//!   folder).
//! - opencode: `opencode run`, its config folders' npm dependency marked as installed (else it
//!   npm-installs into them before it loads a plugin).
//!
//! What the hosts did (claude-code 2.1.332, codex 0.171.0, copilot 1.0.102, gemini 0.61.0,
//! opencode 1.18.33; what they called for is in docs/hosts.md, "What the real hosts were seen to do"):
//!
//! - Every host's session-end hook ran as its session ended, before its process was gone or
//!   within [`LINGER`] of it; opencode, which has none, ends its sessions from its plugin when
//!   the process exits.
//! - The message that a shell write was put back reaches the model: in the shell call's own
//!   result for codex, copilot, gemini and opencode; claude-code adds it as a text of its own
//!   after the call ("PostToolUse:Bash hook blocking error from command: …").
//! - Two opencode processes started at one instant with one data folder: one failed at once
//!   ("database is locked"), so B starts once A has asked its model.
//! - Gemini refuses a shell command holding `$(…)` ("Command injection detected"), so the marks
//!   are waited for without one.

use super::claude::claude_env;
use super::codex::codex_env;
use super::copilot::copilot_env;
use super::edit_gate::seed_opencode_dependencies;
use super::gemini::gemini_env;
use super::opencode::opencode_env;
use super::*;
use crate::json::focus::FocusListOut;
use git_mas::hosts::Host;
use git_mas::ops::setup::TeamSetup;
use server::Branch;
use std::os::unix::fs::PermissionsExt as _;

/// The file A claims and B is refused.
const F: &str = "src/lib.rs";
/// A's edit of `f`.
const A_OLD: &str = "pub mod config;";
const A_NEW: &str = "pub mod config; // A";
/// B's edit of `f` (another line of it: the whole file is held).
const B_OLD: &str = "pub mod error;";
const B_NEW: &str = "pub mod error; // B";
/// The file B claims.
const G: &str = "src/money.rs";
const G_OLD: &str = "pub struct Money(i64);";
const G_NEW: &str = "pub struct Money(i64); // B";
/// What B's shell writes over `f`.
const CLOBBER: &str = "clobbered by the shell of B";
/// What B's call after its shell write prints (not the words of the command itself).
const NEXT_CALL: &str = "echo next call | tr a-z A-Z";
const NEXT_CALL_RAN: &str = "NEXT CALL";

/// The word of each session's prompt that chooses its branch of the scenario.
const A_WORD: &str = "TEAM-SESSION-A";
const B_WORD: &str = "TEAM-SESSION-B";

/// How long a host may run, and how long a shell step waits for a mark.
const LIMIT: Duration = Duration::from_secs(90);
const MARK_WAIT_SECS: u32 = 60;
/// How long a host's session-end hook, which it may leave running as it exits, has to end.
const LINGER: Duration = Duration::from_secs(10);

type HostEnv = fn(&Path, &str) -> Vec<(&'static str, String)>;

/// One host as a team-mode session runs it (see the module docs).
#[derive(Clone, Copy)]
struct Kind {
    host: Host,
    program: &'static str,
    env: HostEnv,
    line: &'static str,
    /// Whether the post-tool hook's message reaches the model inside the shell call's own result
    /// (else as a text of the host's own beside it: Claude Code's "PostToolUse:Bash hook blocking
    /// error from command: …").
    told_in_result: bool,
}

const CLAUDE: Kind = Kind {
    host: Host::ClaudeCode,
    program: "claude",
    env: claude_env,
    line: "claude -p --permission-mode acceptEdits --allowedTools Bash",
    told_in_result: false,
};
const CODEX: Kind = Kind {
    host: Host::Codex,
    program: "codex",
    env: codex_env,
    line: "codex exec --sandbox danger-full-access --ephemeral --color never -",
    told_in_result: true,
};
const COPILOT: Kind = Kind {
    host: Host::Copilot,
    program: "copilot",
    env: copilot_env,
    line: "copilot -s --allow-all-tools --no-ask-user --trust-folder",
    told_in_result: true,
};
const GEMINI: Kind = Kind {
    host: Host::Gemini,
    program: "gemini",
    env: gemini_env,
    line: "GEMINI_CLI_TRUST_WORKSPACE=true gemini --approval-mode yolo",
    told_in_result: true,
};
const OPENCODE: Kind = Kind {
    host: Host::OpenCode,
    program: "opencode",
    env: opencode_env,
    line: "opencode run --auto",
    told_in_result: true,
};

/// Where B runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// In A's checkout.
    OneCheckout,
    /// In a linked worktree added after the setup was committed.
    Worktrees,
}

/// The marks the two sessions and the test leave for each other, outside the repository.
struct Marks {
    dir: PathBuf,
}

impl Marks {
    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// A shell line that waits (at most [`MARK_WAIT_SECS`]) for mark `name`, and says whether it
    /// came. No `$(…)`: gemini refuses a command holding one ("Command injection detected").
    fn wait(&self, name: &str) -> String {
        let path = self.path(name);
        format!(
            "timeout {MARK_WAIT_SECS} sh -c 'until [ -e {path} ]; do sleep 0.1; done'; \
             if [ -e {path} ]; then echo saw {name}; else echo no {name}; fi"
        )
    }

    fn touch(&self, name: &str) -> String {
        format!("touch {}", self.path(name))
    }

    fn exists(&self, name: &str) -> bool {
        self.dir.join(name).exists()
    }
}

/// A's and B's scripts; `a` and `b` are their checkouts. Each file is read before it is edited
/// (claude-code and opencode edit only a file read since it last changed).
fn scenario(marks: &Marks, a: &Path, b: &Path) -> Scenario {
    let at = |dir: &Path, p: &str| dir.join(p).display().to_string();
    let a_steps = vec![
        Step::Read { path: at(a, F) },
        Step::Edit { path: at(a, F), old: A_OLD.into(), new: A_NEW.into() },
        // The test's mark, made once it has read the board while both ran: A ending at B's
        // mark would race the test's reading.
        Step::Shell(format!("{} && {}", marks.touch("a-edited"), marks.wait("b-seen"))),
    ];
    let b_steps = vec![
        Step::Shell(marks.wait("a-edited")),
        Step::Read { path: at(b, F) },
        Step::Edit { path: at(b, F), old: B_OLD.into(), new: B_NEW.into() },
        Step::Read { path: at(b, G) },
        Step::Edit { path: at(b, G), old: G_OLD.into(), new: G_NEW.into() },
        Step::Shell(format!("echo '{CLOBBER}' > {}", at(b, F))),
        Step::Shell(NEXT_CALL.into()),
        Step::Shell(format!("{} && {}", marks.touch("b-done"), marks.wait("a-ended"))),
        Step::Read { path: at(b, F) },
        Step::Edit { path: at(b, F), old: B_OLD.into(), new: B_NEW.into() },
    ];
    let branch = |when: &str, steps, reply: &str| Branch { when: when.into(), steps, reply: reply.into() };
    Scenario {
        branches: vec![branch(A_WORD, a_steps, "A is done.\nDONE"), branch(B_WORD, b_steps, "B is done.\nDONE")],
    }
}

/// A repository set up for team mode for two hosts, B's checkout, the marks and the server.
struct TeamBench {
    env: TestEnv,
    repo: PathBuf,
    /// Where B runs.
    b_dir: PathBuf,
    marks: Marks,
    server: ModelServer,
}

impl TeamBench {
    /// The repository after `git mas init --team --host A --host B` (in [`Layout::Worktrees`],
    /// the setup committed as it says and B's worktree added), with each host's environment.
    fn new(kinds: [Kind; 2], layout: Layout) -> (TeamBench, [Vec<(&'static str, String)>; 2]) {
        TeamBench::new_with(kinds, layout, scenario)
    }

    /// [`TeamBench::new`] with another scenario.
    fn new_with(
        kinds: [Kind; 2],
        layout: Layout,
        scenario: fn(&Marks, &Path, &Path) -> Scenario,
    ) -> (TeamBench, [Vec<(&'static str, String)>; 2]) {
        for k in kinds {
            host(k.program);
        }
        let env = TestEnv::new();
        let repo = env.repo("repo");
        let b_dir = match layout {
            Layout::OneCheckout => repo.clone(),
            Layout::Worktrees => env.root().join("wt-b"),
        };
        let marks = Marks { dir: env.root().join("marks") };
        std::fs::create_dir_all(&marks.dir).unwrap();
        let server = ModelServer::start(scenario(&marks, &repo, &b_dir));
        let home = env.root().join("home");
        // Each host's own files first: codex's config.toml then gets the trust written into it.
        let mut envs = kinds.map(|k| (k.env)(&home, &server.url()));
        if kinds[0].host == kinds[1].host {
            envs[1] = envs[0].clone();
        }
        let mut args = vec!["init", "--team", "--name", "alice", "--json"];
        for k in kinds {
            args.extend(["--host", k.host.name()]);
        }
        let out = env.mas_ok(&repo, &args);
        let setup: TeamSetup = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        if layout == Layout::Worktrees {
            let commit = setup.commit.expect("the setup has files to commit");
            let mut sh = Command::new("sh");
            env.hermetic(&mut sh);
            let made = sh.args(["-c", &commit.command]).current_dir(&repo).output().unwrap();
            assert!(made.status.success(), "{}", shown(&made));
            env.git_quiet_ok(&repo, &["worktree", "add", "--quiet", "-b", "b", b_dir.to_str().unwrap()]);
        }
        if kinds.iter().any(|k| k.host == Host::OpenCode) {
            seed_opencode_dependencies(&home.join(".config/opencode"));
            for dir in [&repo, &b_dir] {
                seed_opencode_dependencies(&dir.join(".opencode"));
            }
        }
        (TeamBench { env, repo, b_dir, marks, server }, envs)
    }

    fn start(&self, kind: Kind, dir: &Path, word: &str, env: &[(&'static str, String)]) -> Running {
        let cmd = host_command(&self.env, dir, kind.line, env);
        let prompt = format!("{word}: edit the files as the scenario says, then answer DONE.");
        let root = self.env.root();
        Running::spawn(cmd, &prompt, &root.join(format!("{word}.stdout")), &root.join(format!("{word}.stderr")))
    }

    /// Under `GIT_MAS_HOSTS_DEBUG=DIR`, every request whole, in DIR/<the test's name>.
    fn save_debug(&self) {
        let Some(dir) = std::env::var_os("GIT_MAS_HOSTS_DEBUG") else { return };
        let name = std::thread::current().name().unwrap_or("host").replace("::", "-");
        let full: Vec<String> =
            self.server.log().iter().map(|r| format!("{} {}\n{}\n", r.method, r.path, r.body)).collect();
        std::fs::write(Path::new(&dir).join(name), full.join("\n")).unwrap();
    }

    /// The latest request of the session whose prompt holds `word` (each carries the whole
    /// conversation).
    fn latest(&self, word: &str) -> serde_json::Value {
        self.server.turns().into_iter().rev().find(|b| b.to_string().contains(word)).unwrap_or_default()
    }

    /// The tool results that session sent its model.
    fn results(&self, word: &str) -> String {
        let mut out = String::new();
        collect_results(&self.latest(word), &mut out);
        out
    }

    /// Every text of that session's conversation: the tool results, and what the host added
    /// beside them.
    fn conversation(&self, word: &str) -> String {
        fn strings(v: &serde_json::Value, out: &mut String) {
            match v {
                serde_json::Value::String(s) => {
                    out.push_str(s);
                    out.push('\n');
                }
                serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
                serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
                _ => {}
            }
        }
        let body = self.latest(word);
        let mut out = String::new();
        for key in ["messages", "input", "contents"] {
            strings(&body[key], &mut out);
        }
        out
    }

    /// The live agents of the board and the files each holds.
    fn live(&self) -> Vec<(String, Vec<String>)> {
        let out = self.env.mas_ok(&self.repo, &["focus", "list", "--json"]);
        let board: FocusListOut = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        board.board.live().map(|f| (f.agent.clone(), f.targets.clone())).collect()
    }

    /// What to show when an assertion fails: both hosts' output, the results each sent its model
    /// and the board.
    fn context(&self, what: &str) -> String {
        self.save_debug();
        let read = |name: String| std::fs::read_to_string(self.env.root().join(name)).unwrap_or_default();
        let mut text = format!("{what}\n");
        for word in [A_WORD, B_WORD] {
            text.push_str(&format!(
                "--- {word} stdout:\n{}\n--- {word} stderr:\n{}\n--- {word}'s tool results:\n{}\n",
                read(format!("{word}.stdout")),
                read(format!("{word}.stderr")),
                self.results(word)
            ));
        }
        text.push_str(&format!("--- board: {:?}\n", self.live()));
        text
    }
}

/// Waits until `done` holds (polling every 100 ms), at most `limit`; whether it did.
fn until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    done()
}

/// `text` with `old` (which occurs once) replaced by `new`.
fn edited(text: &str, old: &str, new: &str) -> String {
    assert_eq!(text.matches(old).count(), 1, "{old:?}");
    text.replacen(old, new, 1)
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// Plays the scenario with A a session of `a` in the repository and B one of `b` (in the same
/// checkout or a linked worktree), and asserts what is seen of it: the tool results each model
/// got, the files' bytes and the board.
fn pair(a: Kind, b: Kind, layout: Layout) {
    let started = Instant::now();
    let (bench, envs) = TeamBench::new([a, b], layout);
    let original = read(bench.repo.join(F));
    let a_version = edited(&original, A_OLD, A_NEW);
    let g_version = edited(&read(bench.b_dir.join(G)), G_OLD, G_NEW);
    let context = |what: &str| bench.context(what);

    let a_run = bench.start(a, &bench.repo, A_WORD, &envs[0]);
    // B starts once A has asked its model: two opencode processes starting at one instant with
    // one data folder fail one of them ("database is locked").
    let asked = until(LIMIT, || bench.server.log().iter().any(|r| r.body.contains(A_WORD)));
    assert!(asked, "{}", context("A never asked its model"));
    let b_run = bench.start(b, &bench.b_dir, B_WORD, &envs[1]);

    // While both run: B was refused f naming A's agent and claimed g; f is A's, byte for byte.
    assert!(until(LIMIT, || bench.marks.exists("b-done")), "{}", context("B never got to its end"));
    let live = bench.live();
    let holder = |file: &str| live.iter().find(|(_, t)| t.iter().any(|x| x == file)).map(|(agent, _)| agent.clone());
    let a_agent = holder(F).unwrap_or_else(|| panic!("{}", context("nobody holds f")));
    let b_agent = holder(G).unwrap_or_else(|| panic!("{}", context("nobody holds g")));
    let named = |k: Kind, agent: &str| agent.starts_with(&format!("alice.{}-", k.host.session_name()));
    assert!(named(a, &a_agent) && named(b, &b_agent), "{}", context("the session agents' names"));
    assert_ne!(a_agent, b_agent, "{}", context("A and B are one agent"));
    assert_eq!(live.len(), 2, "{}", context("two agents hold files"));
    let refused = format!("{F} is held by {a_agent}");
    assert!(bench.results(B_WORD).contains(&refused), "{}", context("B's refusal does not name A's agent"));
    assert_eq!(read(bench.repo.join(F)), a_version, "{}", context("f is not A's"));
    if layout == Layout::Worktrees {
        assert_eq!(read(bench.b_dir.join(F)), original, "{}", context("B's f is not as committed"));
    }
    assert_eq!(read(bench.b_dir.join(G)), g_version, "{}", context("B's edit of g"));
    // B's shell write to f was put back after the call, B was told at once, and its next call ran.
    let told = format!("your shell command changed {F}, which {a_agent} holds; it was put back");
    let (results, conversation) = (bench.results(B_WORD), bench.conversation(B_WORD));
    let seen = if b.told_in_result { &results } else { &conversation };
    assert!(seen.contains(&told), "{}", context("B was not told its shell write was put back"));
    assert!(results.contains(NEXT_CALL_RAN), "{}", context("B's next call did not run"));

    std::fs::write(bench.marks.dir.join("b-seen"), "").unwrap();

    // A ends, and with its session its claim.
    let a_done = a_run.wait_lingering(LIMIT, LINGER);
    assert_eq!(a_done.code, Some(0), "{}", context("A failed"));
    assert!(a_done.stdout.contains("DONE"), "{}", context("A's reply"));
    let released = until(LINGER, || !bench.live().iter().any(|(agent, _)| *agent == a_agent));
    assert!(released, "{}", context("A's claim outlived A"));
    std::fs::write(bench.marks.dir.join("a-ended"), "").unwrap();

    // B's edit of f is allowed now; B ends, and with its session its claims.
    let b_done = b_run.wait_lingering(LIMIT, LINGER);
    assert_eq!(b_done.code, Some(0), "{}", context("B failed"));
    assert!(b_done.stdout.contains("DONE"), "{}", context("B's reply"));
    let results = bench.results(B_WORD);
    assert_eq!(results.matches(&refused).count(), 1, "{}", context("B's last edit of f was refused"));
    let b_version = match layout {
        Layout::OneCheckout => edited(&a_version, B_OLD, B_NEW),
        Layout::Worktrees => edited(&original, B_OLD, B_NEW),
    };
    assert_eq!(read(bench.b_dir.join(F)), b_version, "{}", context("B's last edit of f"));
    assert!(until(LINGER, || bench.live().is_empty()), "{}", context("B's claims outlived B"));
    bench.save_debug();
    eprintln!(
        "{} + {} ({}): A {:.1?}, B {:.1?}, the whole test {:.1?}",
        a.host.name(),
        b.host.name(),
        if layout == Layout::OneCheckout { "one checkout" } else { "two worktrees" },
        a_done.elapsed,
        b_done.elapsed,
        started.elapsed()
    );
}

#[test]
fn two_claude_code_sessions_in_one_checkout_keep_off_each_others_files() {
    pair(CLAUDE, CLAUDE, Layout::OneCheckout);
}

#[test]
fn two_codex_sessions_in_one_checkout_keep_off_each_others_files() {
    pair(CODEX, CODEX, Layout::OneCheckout);
}

#[test]
fn two_copilot_sessions_in_one_checkout_keep_off_each_others_files() {
    pair(COPILOT, COPILOT, Layout::OneCheckout);
}

#[test]
fn two_gemini_sessions_in_one_checkout_keep_off_each_others_files() {
    pair(GEMINI, GEMINI, Layout::OneCheckout);
}

#[test]
fn two_opencode_sessions_in_one_checkout_keep_off_each_others_files() {
    pair(OPENCODE, OPENCODE, Layout::OneCheckout);
}

#[test]
fn claude_code_and_codex_side_by_side_keep_off_each_others_files() {
    pair(CLAUDE, CODEX, Layout::OneCheckout);
}

#[test]
fn copilot_and_opencode_side_by_side_keep_off_each_others_files() {
    pair(COPILOT, OPENCODE, Layout::OneCheckout);
}

#[test]
fn gemini_and_claude_code_side_by_side_keep_off_each_others_files() {
    pair(GEMINI, CLAUDE, Layout::OneCheckout);
}

#[test]
fn claude_code_sessions_in_two_worktrees_keep_off_each_others_files() {
    pair(CLAUDE, CLAUDE, Layout::Worktrees);
}

#[test]
fn codex_sessions_in_two_worktrees_keep_off_each_others_files() {
    pair(CODEX, CODEX, Layout::Worktrees);
}

#[test]
fn copilot_sessions_in_two_worktrees_keep_off_each_others_files() {
    pair(COPILOT, COPILOT, Layout::Worktrees);
}

#[test]
fn gemini_sessions_in_two_worktrees_keep_off_each_others_files() {
    pair(GEMINI, GEMINI, Layout::Worktrees);
}

#[test]
fn opencode_sessions_in_two_worktrees_keep_off_each_others_files() {
    pair(OPENCODE, OPENCODE, Layout::Worktrees);
}

/// A's and B's scripts when B's shell calls fail (exit non-zero): B makes A's file unreadable in a
/// call that exits 1, makes one more call, and as its last call deletes A's file and exits 1.
fn failing_scenario(marks: &Marks, a: &Path, b: &Path) -> Scenario {
    let at = |dir: &Path, p: &str| dir.join(p).display().to_string();
    let a_steps = vec![
        Step::Read { path: at(a, F) },
        Step::Edit { path: at(a, F), old: A_OLD.into(), new: A_NEW.into() },
        Step::Shell(format!("{} && {}", marks.touch("a-edited"), marks.wait("b-ended"))),
    ];
    let b_steps = vec![
        Step::Shell(marks.wait("a-edited")),
        Step::Shell(format!("chmod 000 {}; exit 1", at(b, F))),
        Step::Shell(NEXT_CALL.into()),
        Step::Shell(format!("rm -f {}; exit 1", at(b, F))),
    ];
    let branch = |when: &str, steps, reply: &str| Branch { when: when.into(), steps, reply: reply.into() };
    Scenario {
        branches: vec![branch(A_WORD, a_steps, "A is done.\nDONE"), branch(B_WORD, b_steps, "B is done.\nDONE")],
    }
}

/// B's shell calls that fail still have their changes to A's file put back: the mode of the
/// first (the host's failure hook, or the post-tool hook where the host has no other), B's next
/// call runs unrefused, and the deletion by B's last call is undone by the time B's host has
/// exited (its failure hook, else its session end).
fn failing_calls(kind: Kind) {
    let (bench, envs) = TeamBench::new_with([kind, kind], Layout::OneCheckout, failing_scenario);
    let original = read(bench.repo.join(F));
    let a_version = edited(&original, A_OLD, A_NEW);
    let original_mode = std::fs::metadata(bench.repo.join(F)).unwrap().permissions().mode() & 0o7777;
    let context = |what: &str| bench.context(what);
    let a_run = bench.start(kind, &bench.repo, A_WORD, &envs[0]);
    assert!(until(LIMIT, || bench.marks.exists("a-edited")), "{}", context("A never edited f"));
    let b_run = bench.start(kind, &bench.repo, B_WORD, &envs[1]);
    let b_done = b_run.wait_lingering(LIMIT, LINGER);
    assert_eq!(b_done.code, Some(0), "{}", context("B failed"));
    let f = bench.repo.join(F);
    let back = until(LINGER, || std::fs::read_to_string(&f).ok().as_deref() == Some(a_version.as_str()));
    assert!(back, "{}", context("A's f is not back after B's failing last call"));
    let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, original_mode, "{}", context("f's mode is not put back"));
    let results = bench.results(B_WORD);
    assert!(results.contains(NEXT_CALL_RAN), "{}", context("B's next call did not run"));
    assert!(!results.contains("was not run"), "{}", context("an innocent call was refused"));
    let told = format!("your shell command changed {F}");
    let seen = if kind.told_in_result { results } else { bench.conversation(B_WORD) };
    assert!(seen.contains(&told), "{}", context("B was not told its failing call was undone"));
    std::fs::write(bench.marks.dir.join("b-ended"), "").unwrap();
    let a_done = a_run.wait_lingering(LIMIT, LINGER);
    assert_eq!(a_done.code, Some(0), "{}", context("A failed"));
    assert_eq!(read(f), a_version, "{}", context("f is not A's at the end"));
    bench.save_debug();
}

#[test]
fn claude_codes_failing_shell_calls_are_put_back_and_the_next_call_runs() {
    failing_calls(CLAUDE);
}

#[test]
fn codexs_failing_shell_calls_are_put_back_and_the_next_call_runs() {
    failing_calls(CODEX);
}

/// A's and B's scripts for releases from the shell: A claims f and g, releases g from its own
/// shell (a plain `git mas focus release --targets g`), then waits; B tries to release A's
/// claims by name, with and without --force.
fn release_scenario(marks: &Marks, a: &Path, b: &Path) -> Scenario {
    let at = |dir: &Path, p: &str| dir.join(p).display().to_string();
    let a_steps = vec![
        Step::Read { path: at(a, F) },
        Step::Edit { path: at(a, F), old: A_OLD.into(), new: A_NEW.into() },
        Step::Read { path: at(a, G) },
        Step::Edit { path: at(a, G), old: G_OLD.into(), new: G_NEW.into() },
        Step::Shell(format!(
            "echo \"SID:${{CLAUDE_CODE_SESSION_ID:-unset}}\"; git mas whoami --json; git mas focus release --targets {G}; \
             echo release-rc=$?; {}",
            marks.touch("a-released"),
        )),
        // Until the test has seen B done, however long B takes on a loaded machine.
        Step::Shell(format!("timeout 600 sh -c 'until [ -e {} ]; do sleep 0.1; done'", marks.path("test-done"))),
    ];
    let name = marks.path("a-name");
    let b_steps = vec![
        Step::Shell(marks.wait("a-named")),
        Step::Shell(format!("git mas --agent \"$(cat {name})\" focus release; echo plain-rc=$?")),
        Step::Shell(format!("git mas --agent \"$(cat {name})\" focus release --force; echo force-rc=$?")),
        Step::Shell(marks.touch("b-done")),
    ];
    let branch = |when: &str, steps, reply: &str| Branch { when: when.into(), steps, reply: reply.into() };
    let _ = b;
    Scenario {
        branches: vec![branch(A_WORD, a_steps, "A is done.\nDONE"), branch(B_WORD, b_steps, "B is done.\nDONE")],
    }
}

/// A Claude Code session's shell acts as the session (its `CLAUDE_CODE_SESSION_ID`): its plain
/// `focus release --targets g` frees g and keeps f; another session's shell cannot release A's
/// claims, with --force or without, and A still holds f.
#[test]
fn a_claude_code_sessions_shell_releases_its_own_claims_and_not_anothers() {
    let (bench, envs) = TeamBench::new_with([CLAUDE, CLAUDE], Layout::OneCheckout, release_scenario);
    let context = |what: &str| bench.context(what);
    let a_run = bench.start(CLAUDE, &bench.repo, A_WORD, &envs[0]);
    assert!(until(LIMIT, || bench.results(A_WORD).contains("release-rc=")), "{}", context("A never released g"));
    let live = bench.live();
    let a_agent = live.iter().find(|(_, t)| t.iter().any(|x| x == F)).map(|(a, _)| a.clone());
    let a_agent = a_agent.unwrap_or_else(|| panic!("{}", context("nobody holds f")));
    assert!(!live.iter().any(|(_, t)| t.iter().any(|x| x == G)), "{}", context("g is still held"));
    let results = bench.results(A_WORD);
    assert!(!results.contains("SID:unset") && results.contains("SID:"), "{}", context("no session id in the shell"));
    assert!(
        results.contains("release-rc=0") && results.contains("\"identity_from\":\"session\""),
        "{}",
        context("A's release")
    );
    std::fs::write(bench.marks.dir.join("a-name"), &a_agent).unwrap();
    std::fs::write(bench.marks.dir.join("a-named"), "").unwrap();
    let b_run = bench.start(CLAUDE, &bench.repo, B_WORD, &envs[1]);
    let b_done = b_run.wait_lingering(LIMIT, LINGER);
    assert_eq!(b_done.code, Some(0), "{}", context("B failed"));
    let results = bench.results(B_WORD);
    assert!(results.contains("plain-rc=1") && results.contains("force-rc=1"), "{}", context("B released A's claims"));
    assert!(results.contains(&format!("cannot release the claims of {a_agent}")), "{}", context("B's refusal"));
    assert!(bench.live().iter().any(|(a, t)| *a == a_agent && t.iter().any(|x| x == F)), "{}", context("A lost f"));
    std::fs::write(bench.marks.dir.join("test-done"), "").unwrap();
    let a_done = a_run.wait_lingering(LIMIT, LINGER);
    assert_eq!(a_done.code, Some(0), "{}", context("A failed"));
    bench.save_debug();
}

/// A's and B's scripts for a write no hook saw: A claims f; B's shell starts a background write
/// to f that lands after the call ended, waits for it elsewhere, then makes one more call.
fn background_scenario(marks: &Marks, a: &Path, b: &Path) -> Scenario {
    let at = |dir: &Path, p: &str| dir.join(p).display().to_string();
    let f = at(b, F);
    let landed = marks.path("landed");
    // A thinks a long while after its edit: it is in no call when the write lands.
    let a_steps = vec![
        Step::Read { path: at(a, F) },
        Step::Edit { path: at(a, F), old: A_OLD.into(), new: A_NEW.into() },
        Step::Think {
            pause: Duration::from_secs(20),
            then: Box::new(Step::Shell(format!(
                "timeout 600 sh -c 'until [ -e {} ]; do sleep 0.1; done'",
                marks.path("test-done")
            ))),
        },
    ];
    // B's background write lands while B thinks, after its shell call ended.
    let b_steps = vec![
        // setsid: codex ends a shell call's whole process group when the call returns.
        Step::Shell(format!(
            "setsid sh -c \"sleep 2; echo '{CLOBBER}' >> {f}; touch {landed}\" > /dev/null 2>&1 < /dev/null &"
        )),
        Step::Think { pause: Duration::from_secs(5), then: Box::new(Step::Shell(NEXT_CALL.into())) },
    ];
    let branch = |when: &str, steps, reply: &str| Branch { when: when.into(), steps, reply: reply.into() };
    Scenario {
        branches: vec![branch(A_WORD, a_steps, "A is done.\nDONE"), branch(B_WORD, b_steps, "B is done.\nDONE")],
    }
}

/// A background write of B's to A's file, landing after B's shell call ended, is put back at the
/// next hook call (B's own here), B is told, and what it wrote is kept.
fn background_write(kind: Kind) {
    let (bench, envs) = TeamBench::new_with([kind, kind], Layout::OneCheckout, background_scenario);
    let a_version = edited(&read(bench.repo.join(F)), A_OLD, A_NEW);
    let context = |what: &str| bench.context(what);
    let a_run = bench.start(kind, &bench.repo, A_WORD, &envs[0]);
    // A's edit written and its post-tool hook done: A is thinking.
    let edited = until(LIMIT, || {
        read(bench.repo.join(F)) == a_version
            && bench.server.log().iter().filter(|r| r.body.contains(A_WORD)).count() >= 3
    });
    assert!(edited, "{}", context("A never edited f"));
    let b_run = bench.start(kind, &bench.repo, B_WORD, &envs[1]);
    let b_done = b_run.wait_lingering(LIMIT, LINGER);
    assert_eq!(b_done.code, Some(0), "{}", context("B failed"));
    assert!(bench.marks.exists("landed"), "{}", context("the background write never landed"));
    assert_eq!(read(bench.repo.join(F)), a_version, "{}", context("f is not A's after B's next call"));
    let told = bench.conversation(B_WORD);
    assert!(told.contains("no hook saw it") && told.contains(F), "{}", context("B was not told"));
    let kept = bench.repo.join(".git/mas/held/displaced");
    let kept: Vec<String> =
        std::fs::read_dir(kept).map(|d| d.flatten().map(|e| read(e.path())).collect()).unwrap_or_default();
    assert!(kept.iter().any(|k| k.contains(CLOBBER)), "{}", context("the background write's bytes were not kept"));
    std::fs::write(bench.marks.dir.join("test-done"), "").unwrap();
    let a_done = a_run.wait_lingering(LIMIT, LINGER);
    assert_eq!(a_done.code, Some(0), "{}", context("A failed"));
    assert_eq!(read(bench.repo.join(F)), a_version, "{}", context("f is not A's at the end"));
    bench.save_debug();
}

#[test]
fn a_claude_code_sessions_background_write_is_put_back_at_the_next_call() {
    background_write(CLAUDE);
}

#[test]
fn a_codex_sessions_background_write_is_put_back_at_the_next_call() {
    background_write(CODEX);
}

#[test]
fn copilots_failing_shell_calls_are_put_back_and_the_next_call_runs() {
    failing_calls(COPILOT);
}

#[test]
fn geminis_failing_shell_calls_are_put_back_and_the_next_call_runs() {
    failing_calls(GEMINI);
}

#[test]
fn opencodes_failing_shell_calls_are_put_back_and_the_next_call_runs() {
    failing_calls(OPENCODE);
}

/// A's script when its host is to be killed: it claims f, then waits in a shell call.
fn killed_scenario(marks: &Marks, a: &Path, _b: &Path) -> Scenario {
    let at = |dir: &Path, p: &str| dir.join(p).display().to_string();
    let a_steps = vec![
        Step::Read { path: at(a, F) },
        Step::Edit { path: at(a, F), old: A_OLD.into(), new: A_NEW.into() },
        Step::Shell(format!("timeout 600 sh -c 'until [ -e {} ]; do sleep 0.1; done'", marks.path("never"))),
    ];
    Scenario { branches: vec![Branch { when: A_WORD.into(), steps: a_steps, reply: "A is done.\nDONE".into() }] }
}

/// A host SIGKILLed mid-session runs no session-end hook: its session's claims end with its
/// process at once, `status` says "process gone", and another session may edit the file.
#[test]
fn a_killed_claude_code_sessions_claims_end_with_its_process() {
    use crate::json::status::StatusOut;
    use crate::team_mode::{hook, write_payload};
    let (bench, envs) = TeamBench::new_with([CLAUDE, CLAUDE], Layout::OneCheckout, killed_scenario);
    let context = |what: &str| bench.context(what);
    let a_version = edited(&read(bench.repo.join(F)), A_OLD, A_NEW);
    let a_run = bench.start(CLAUDE, &bench.repo, A_WORD, &envs[0]);
    let waiting = until(LIMIT, || {
        read(bench.repo.join(F)) == a_version
            && bench.server.log().iter().filter(|r| r.body.contains(A_WORD)).count() >= 3
    });
    assert!(waiting, "{}", context("A never edited f"));
    let a_agent = bench.live().into_iter().find(|(_, t)| t.iter().any(|x| x == F)).map(|(a, _)| a);
    let a_agent = a_agent.unwrap_or_else(|| panic!("{}", context("nobody holds f")));
    assert_eq!(hook(&bench.env, &bench.repo, &write_payload(&bench.repo, "z", F)).0, "deny", "A runs");
    drop(a_run); // SIGKILL to A's whole process group
    let status = || -> (String, StatusOut) {
        let out = bench.env.mas_ok(&bench.repo, &["status", "--json"]);
        let s = serde_json::from_str(&out).unwrap();
        (out, s)
    };
    // The host's process is gone once the kernel has reaped it (its parent, killed too, may take
    // a moment to be).
    assert!(until(LINGER, || !status().1.process_gone.is_empty()), "{}", context("A's process never counted as gone"));
    let (out, s) = status();
    assert!(s.agents.iter().all(|a| a.agent != a_agent), "{out}");
    assert!(s.process_gone.iter().any(|g| g.agent == a_agent), "{out}");
    assert_eq!(
        hook(&bench.env, &bench.repo, &write_payload(&bench.repo, "z", F)).0,
        "allow",
        "{}",
        context("A's claim outlived A")
    );
    bench.save_debug();
}

//! `git mas demo`: the main job, end to end, on a scratch copy of the fixture project.
//!
//! Every step is a real process — `git`, or this very binary as `git-mas` — run in real
//! repositories, and each command is echoed before its output, so the demo doubles as a tutorial.
//! The demo uses its own key directory inside the scratch directory and never touches the user's
//! keys or repositories. It opens with team mode — two coding-agent sessions of one member in one
//! checkout, as their hooks see them: one claims a file by editing it, the other is refused it,
//! its shell write to it is put back, and `git mas status` shows the team — then, by hand, it
//! covers identities, signed records, verification, sync of two clones
//! through a bare remote, a frame, foci and the gate, and a team of built-in scripted agents
//! (`builtin:reference`, `builtin:faulty`) taking one goal through `git mas coordinate`: proposals,
//! endorsements with a real check, one landing, the report — best-of-N first, then, on a fresh
//! copy of the project, the aggregate run (`--aggregate`, no `--partial`): the goal split into one slice per
//! group of files it concerns (its two bugs: two slices), the agents left over reviewing — the
//! faulty one among them, with nothing to break — and the slices merged and landed as one commit.
//!
//! The team's check is the fixture's own test suite (`sh check.sh`: `cargo test`, then the
//! stockcheck `unittest`s), and the fixture carries two real bugs its tests catch; the reference
//! agents fix them (the catalogue in `coordinate::builtin`), the faulty one breaks the crate. The
//! demo runs the check on main before the run (it fails) and after the landing (it passes), so
//! what landed is shown to work, not assumed to. Where cargo or python3 does not run, the demo
//! says so and checks with the suite that runs; where neither does, no real check can run and the
//! demo stops before the team's step rather than pretend (it never stands in a lesser check).
//! The scratch directory is kept and its path printed, so everything can be inspected afterwards.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::output::Ui;
use git_mas::git::Git;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

mod fixture {
    include!(concat!(env!("OUT_DIR"), "/fixture_files.rs"));
}

/// Run the whole flow on a scratch copy of the fixture project, printing each command.
///
/// Opens with team mode (`git mas init --team`): two Claude Code sessions in one checkout, as
/// their hooks see them — the first edit claims a file, the other session's edit of it is refused,
/// its shell write to it is put back after the call, and `git mas status` shows who holds what.
/// Then, by hand: creates a bare remote and two clones, gives each an agent (alice, bob), writes signed records
/// (each to its own journal and both to one shared chain), syncs through the remote, verifies
/// everything from the other side, shows a forged record being rejected as a spoof, publishes a
/// saliency frame and re-derives it in the other clone, and has the edit gate hold one agent back
/// while the other holds the file both want — until the holder's work lands: a team of scripted
/// agents (alice, bob, carol) runs `git mas coordinate`, proposes, endorses by running a real
/// check (the fixture's own test suite, `sh check.sh`: it fails on main before the run, on the
/// two bugs the fixture carries, and passes on main after the landing), lands exactly one commit
/// on main and prints the convergence report. Then, on a fresh copy of the project, a team of
/// four splits the goal (`coordinate --aggregate`): one slice per bug, the two agents left over
/// (the faulty one among them) review, and the slices land as one commit; the tests pass on that
/// main too. Needs cargo or python3 for the check (with one of
/// them, only its suite runs, and the demo says so). Takes well under a minute. The scratch
/// directory is kept and its path printed.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Scratch directory to build in (must not exist yet; default: a new temporary directory).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Remove the scratch directory afterwards (it is kept by default, for inspection).
    #[arg(long, conflicts_with = "dir")]
    pub clean: bool,
    /// Keep the scratch directory (the default; accepted for compatibility).
    #[arg(long, hide = true)]
    pub keep: bool,
}

/// The team's task in the demo.
const TASK: &str =
    "fix the rounding of tax in pricing (tax_on truncates a cent) and the reorder threshold in stockcheck";

/// The team's check in the demo: the fixture's test suite.
const CHECK_ALL: &str = "sh check.sh";

/// The check when only one of the suites can run: (the command, what the demo says).
const CHECK_RUST: (&str, &str) =
    ("sh check.sh rust", "   (python3 does not run here: the team's check is the crate's tests alone)");
const CHECK_PYTHON: (&str, &str) =
    ("sh check.sh python", "   (cargo does not run here: the team's check is the stockcheck tests alone)");

/// The fixture's check that can run, from whether cargo and python3 do (`None`: neither), and
/// what the demo says about the suites it leaves out.
fn check_for(cargo: bool, python: bool) -> Option<(&'static str, Option<&'static str>)> {
    match (cargo, python) {
        (true, true) => Some((CHECK_ALL, None)),
        (true, false) => Some((CHECK_RUST.0, Some(CHECK_RUST.1))),
        (false, true) => Some((CHECK_PYTHON.0, Some(CHECK_PYTHON.1))),
        (false, false) => None,
    }
}

/// The demo's check: the fixture's test suites that run here, said so when one is left out.
fn demo_check(d: &Demo, dir: &Path) -> Result<&'static str, CliError> {
    let runs =
        |program: &str| d.base(Path::new(program), dir).arg("--version").output().is_ok_and(|o| o.status.success());
    let Some((check, note)) = check_for(runs("cargo"), runs("python3")) else {
        d.say("   neither cargo nor python3 runs here: no real check of the fixture can run, so the demo")?;
        d.say("   cannot show the team's proposals judged by its tests, nor the tests passing on main")?;
        return Err(CliError::user("no real check can run here (neither cargo nor python3 works)")
            .hinted("install a Rust toolchain or Python 3 and run `git mas demo` again"));
    };
    if let Some(note) = note {
        d.say(note)?;
    }
    Ok(check)
}

struct Demo {
    root: PathBuf,
    exe: PathBuf,
    keys: PathBuf,
    ui: Ui,
}

impl Demo {
    /// Prints one line of the demo's narration (stdout: the demo is its own output).
    fn say(&self, line: &str) -> Result<(), CliError> {
        self.ui.line(line)
    }

    /// The demo's environment: (variable, value), or `None` to remove it.
    fn env(&self) -> Vec<(&'static str, Option<OsString>)> {
        // This binary first on PATH, so `git mas` (as the hooks call it) is the one running the demo.
        let bin_dir = self.exe.parent().map(Path::to_path_buf).unwrap_or_default();
        let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
        let set = |v: &str| Some(OsString::from(v));
        vec![
            ("PATH", set(&path)),
            ("GIT_MAS_KEY_DIR", Some(self.keys.clone().into_os_string())),
            ("GIT_AUTHOR_NAME", set("Demo")),
            ("GIT_AUTHOR_EMAIL", set("demo@example.invalid")),
            ("GIT_COMMITTER_NAME", set("Demo")),
            ("GIT_COMMITTER_EMAIL", set("demo@example.invalid")),
            ("GIT_MAS_AGENT", None),
            // A failing test's panic prints its message, not a backtrace: the check's output stays readable.
            ("RUST_BACKTRACE", set("0")),
            // Real time: leases and `git mas check` judge commits by when they were made.
            ("GIT_AUTHOR_DATE", None),
            ("GIT_COMMITTER_DATE", None),
            ("GIT_DIR", None),
            ("GIT_WORK_TREE", None),
        ]
    }

    /// `program` (not git) in `dir` with the demo's environment.
    fn base(&self, program: &Path, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(dir);
        for (key, value) in self.env() {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        cmd
    }

    /// git in `dir` with the demo's environment, started and read the way git-mas runs git
    /// ([`git_mas::git::Git`]: no redirecting variable, one locale, its failures said whole).
    fn git_in(&self, dir: &Path) -> Git {
        self.env().into_iter().fold(Git::new(dir), |git, (key, value)| match value {
            Some(value) => git.env(key, value),
            None => git.env_remove(key),
        })
    }

    /// Runs a command in `dir`, echoing it and its output; `expect` is the exit code it must give.
    fn run(&self, dir: &Path, program: &str, args: &[&str], expect: i32) -> Result<String, CliError> {
        let shown = format!("{} {}", program.replace("git-mas", "git mas"), args.join(" "));
        let rel = dir.strip_prefix(&self.root).unwrap_or(dir).display().to_string();
        self.say(&format!("\n[{rel}]$ {shown}"))?;
        let (code, stdout, stderr) = if program == "git" {
            let out = self.git_in(dir).answers(&[expect]).output(args).map_err(|e| {
                CliError::with_message(Kind::Internal, format!("demo step `{shown}` failed, expected exit {expect}"), e)
            })?;
            (out.code, out.stdout, out.stderr)
        } else {
            let exe = if program == "git-mas" { self.exe.clone() } else { PathBuf::from(program) };
            let out = self
                .base(&exe, dir)
                .args(args)
                .output()
                .map_err(|e| CliError::with_message(Kind::Internal, format!("cannot run {program}"), e))?;
            (out.status.code().unwrap_or(-1), out.stdout, out.stderr)
        };
        let stdout = String::from_utf8_lossy(&stdout).into_owned();
        let stderr = String::from_utf8_lossy(&stderr);
        // A narrated command (coordinate) tells its story on stderr and ends with its result on stdout.
        let story_first = args.first() == Some(&"coordinate");
        let (first, second) = if story_first { (&*stderr, stdout.as_str()) } else { (stdout.as_str(), &*stderr) };
        for line in first.lines().chain(second.lines()) {
            self.say(&format!("  {line}"))?;
        }
        if code != expect {
            return Err(CliError::internal(format!("demo step `{shown}` exited {code}, expected {expect}")));
        }
        Ok(stdout)
    }

    fn git(&self, dir: &Path, args: &[&str]) -> Result<String, CliError> {
        self.run(dir, "git", args, 0)
    }

    fn mas(&self, dir: &Path, args: &[&str]) -> Result<String, CliError> {
        self.run(dir, "git-mas", args, 0)
    }
}

fn write_fixture(dir: &Path) -> Result<(), CliError> {
    for (rel, bytes) in fixture::FIXTURE_FILES {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| CliError::with_message(Kind::Internal, format!("{}", parent.display()), e))?;
        }
        std::fs::write(&path, bytes)
            .map_err(|e| CliError::with_message(Kind::Internal, format!("{}", path.display()), e))?;
    }
    Ok(())
}

/// Runs `demo`.
pub fn run(ctx: &mut Context, args: DemoArgs) -> Result<Outcome, CliError> {
    let (root, keep) = match &args.dir {
        Some(d) => {
            if d.exists() {
                return Err(CliError::user(format!("{} already exists; the demo needs a new directory", d.display())));
            }
            std::fs::create_dir_all(d)
                .map_err(|e| CliError::with_message(Kind::User, format!("cannot create {}", d.display()), e))?;
            (std::fs::canonicalize(d)?, true)
        }
        None => {
            let d = std::env::temp_dir().join(format!("git-mas-demo-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d)?;
            (d, !args.clean)
        }
    };
    let demo =
        Demo { exe: std::env::current_exe()?, keys: root.join("keys"), root: root.clone(), ui: ctx.ui().clone() };
    let started = std::time::Instant::now();
    let result = steps(&demo);
    if keep || result.is_err() {
        demo.say(&format!(
            "\nscratch repositories kept for inspection at {} ({:.1}s)",
            root.display(),
            started.elapsed().as_secs_f64()
        ))?;
    } else {
        let _ = std::fs::remove_dir_all(&root);
    }
    result
}

fn steps(d: &Demo) -> Result<Outcome, CliError> {
    let root = &d.root;
    let (remote, a, b) = (root.join("remote.git"), root.join("alice"), root.join("bob"));
    d.say(&format!("== git-mas demo in {}", root.display()))?;
    team_mode(d)?;
    import_fixture(d, &remote, &a)?;
    identities(d, &remote, &a, &b)?;
    records_and_sync(d, &a, &b)?;
    forgery(d, &b)?;
    shared_frame(d, &a, &b)?;
    foci_and_gate(d, &a, &b)?;
    team_lands(d, &a)?;
    after_landing(d, &a, &b)?;
    aggregate_lands(d)
}

/// Step 1: team mode. Two Claude Code sessions of one member in one checkout, as their hooks see
/// them: the first edit claims a file, the second session's edit of it is refused, its shell write
/// to it is put back after the call, and `git mas status` shows who holds what.
fn team_mode(d: &Demo) -> Result<(), CliError> {
    let dir = d.root.join("team-mode");
    d.say("== 1. team mode: two coding-agent sessions in one checkout, kept off each other's files")?;
    std::fs::create_dir_all(&dir)?;
    write_fixture(&dir)?;
    d.git(&dir, &["init", "--quiet", "-b", "main"])?;
    d.git(&dir, &["add", "."])?;
    d.git(&dir, &["commit", "--quiet", "-m", "Import the inventory project"])?;
    d.mas(&dir, &["init", "--team", "--name", "dana", "--host", "claude-code"])?;
    d.git(&dir, &["add", ".mas", ".claude", ".mcp.json"])?;
    d.git(&dir, &["commit", "--quiet", "-m", "Set up git-mas team mode"])?;
    let file = dir.join("src/money.rs");
    let write = |session: &str| {
        serde_json::json!({
            "session_id": session, "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": file, "content": "// rewritten\n"},
        })
    };
    let shell = |event: &str| {
        serde_json::json!({
            "session_id": "session-b", "cwd": dir, "hook_event_name": event, "tool_name": "Bash",
            "tool_input": {"command": "echo '// mine' >> src/money.rs"},
        })
    };
    d.say("\n   session a's Write of src/money.rs: its PreToolUse hook asks the gate, and the edit claims the file")?;
    hook(d, &dir, "session a's Write", &write("session-a"), None)?;
    d.say("\n   session b's Write of the same file: refused before it is written, naming the holder")?;
    let refused = hook(d, &dir, "session b's Write", &write("session-b"), None)?;
    if !refused.contains("\"deny\"") {
        return Err(CliError::internal("demo step: session b's write was not refused"));
    }
    d.say("\n   session b tries the shell instead: the call runs, and what it wrote is put back after it")?;
    let before = std::fs::read(&file)?;
    hook(d, &dir, "session b's Bash call", &shell("PreToolUse"), None)?;
    d.say("\n[team-mode]$ echo '// mine' >> src/money.rs        # session b's shell call")?;
    let mut text = before.clone();
    text.extend_from_slice(b"// mine\n");
    std::fs::write(&file, text)?;
    hook(d, &dir, "session b's Bash call", &shell("PostToolUse"), Some("--post-tool"))?;
    if std::fs::read(&file)? != before {
        return Err(CliError::internal("demo step: the shell write to a held file was not put back"));
    }
    d.say("   src/money.rs is byte for byte what session a left")?;
    d.mas(&dir, &["status"])?;
    Ok(())
}

/// Runs `git mas gate --host claude-code [flag]` with a hook payload, as the host's hook does.
fn hook(d: &Demo, dir: &Path, what: &str, payload: &serde_json::Value, flag: Option<&str>) -> Result<String, CliError> {
    use std::io::Write;
    let mut args = vec!["gate", "--host", "claude-code"];
    args.extend(flag);
    let rel = dir.strip_prefix(&d.root).unwrap_or(dir).display().to_string();
    d.say(&format!("\n[{rel}]$ git mas {}   < the hook payload of {what}", args.join(" ")))?;
    let mut child = d
        .base(&d.exe, dir)
        .args(&args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    child.stdin.take().ok_or_else(|| CliError::internal("no stdin"))?.write_all(payload.to_string().as_bytes())?;
    let out = child.wait_with_output()?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    for line in stdout.lines().chain(String::from_utf8_lossy(&out.stderr).lines()) {
        d.say(&format!("  {line}"))?;
    }
    if !out.status.success() {
        return Err(CliError::internal(format!(
            "demo step `git mas {}` exited {:?}",
            args.join(" "),
            out.status.code()
        )));
    }
    Ok(stdout)
}

/// Step 2: a bare remote and a first clone holding the fixture project.
fn import_fixture(d: &Demo, remote: &Path, a: &Path) -> Result<(), CliError> {
    let root = &d.root;
    d.say("\n== 2. a shared bare remote, and a first clone holding the fixture project")?;
    d.git(root, &["init", "--quiet", "--bare", "-b", "main", "remote.git"])?;
    std::fs::create_dir_all(a)?;
    write_fixture(a)?;
    d.git(a, &["init", "--quiet", "-b", "main"])?;
    d.git(a, &["add", "."])?;
    d.git(a, &["commit", "--quiet", "-m", "Import the inventory project"])?;
    d.git(a, &["remote", "add", "origin", remote.to_str().unwrap_or_default()])?;
    Ok(())
}

/// Step 3: identities, the roster committed like code.
fn identities(d: &Demo, remote: &Path, a: &Path, b: &Path) -> Result<(), CliError> {
    let root = &d.root;
    d.say("\n== 3. identities: alice in the first clone, with carol (a scripted teammate); the roster is committed like code")?;
    d.mas(a, &["init"])?;
    d.mas(a, &["agent", "new", "alice"])?;
    d.mas(a, &["agent", "new", "carol"])?;
    d.git(a, &["add", ".mas/roster"])?;
    d.git(a, &["commit", "--quiet", "-m", "Add agents alice and carol"])?;
    d.git(a, &["push", "--quiet", "origin", "main"])?;
    d.git(root, &["clone", "--quiet", remote.to_str().unwrap_or_default(), "bob"])?;
    d.mas(b, &["agent", "new", "bob"])?;
    d.git(b, &["commit", "--quiet", "-am", "Add agent bob"])?;
    d.git(b, &["push", "--quiet", "origin", "main"])?;
    d.git(a, &["pull", "--quiet", "--ff-only", "origin", "main"])?;
    d.git(a, &["config", "mas.agent", "alice"])?;
    d.git(b, &["config", "mas.agent", "bob"])?;
    d.mas(a, &["whoami"])?;
    d.mas(a, &["agent", "list"])?;
    Ok(())
}

/// Step 4 and 5: signed records, and sync through the remote.
fn records_and_sync(d: &Demo, a: &Path, b: &Path) -> Result<(), CliError> {
    d.say("\n== 4. signed records: each agent's own journal, and one shared chain written by both")?;
    d.mas(a, &["record", "append", "--kind", "note", "--payload", r#"{"text":"I will take the pricing module"}"#])?;
    d.mas(
        a,
        &["record", "append", "--kind", "tick", "--ref", "refs/mas/demo/shared", "--payload", r#"{"from":"alice"}"#],
    )?;
    d.mas(b, &["record", "append", "--kind", "note", "--payload", r#"{"text":"I will take the parser"}"#])?;
    d.mas(
        b,
        &["record", "append", "--kind", "tick", "--ref", "refs/mas/demo/shared", "--payload", r#"{"from":"bob"}"#],
    )?;

    d.say("\n== 5. sync both clones through the remote (fast-forward only; bob's shared record is re-parented)")?;
    d.mas(a, &["sync"])?;
    d.mas(b, &["sync"])?;
    d.mas(a, &["sync"])?;
    d.mas(a, &["log"])?;
    d.mas(a, &["log", "bob"])?;
    d.mas(b, &["log", "refs/mas/demo/shared"])?;
    Ok(())
}

/// Step 6: a forged record, refused by git mas and written with plain git, is named a spoof.
fn forgery(d: &Demo, b: &Path) -> Result<(), CliError> {
    let root = &d.root;
    d.say("\n== 6. a forged record: someone with bob's key writes as alice, using plain git")?;
    let forged_key = root.join("forged");
    std::fs::create_dir_all(&forged_key)?;
    // Bob's key, filed under alice's name: git mas itself refuses to sign with it...
    let bob_key = std::fs::read(d.keys.join("bob.key"))?;
    write_private(&forged_key.join("alice.key"), &bob_key)?;
    let mut refuse = d.base(&d.exe, b);
    refuse.env("GIT_MAS_KEY_DIR", &forged_key).args(["--agent", "alice", "record", "append", "--kind", "note"]);
    d.say("\n[bob]$ GIT_MAS_KEY_DIR=forged git mas --agent alice record append --kind note")?;
    let out = refuse.output()?;
    d.say(&format!("  {}", String::from_utf8_lossy(&out.stderr).lines().next().unwrap_or_default()))?;
    d.say(&format!("  (exit {})", out.status.code().unwrap_or(-1)))?;
    // ...so the forger builds the record by hand and appends it with git plumbing.
    let forged = forge_record("alice", &bob_key)?;
    std::fs::write(root.join("forged.json"), &forged)?;
    let blob = d.git(b, &["hash-object", "-w", "../forged.json"])?;
    let tree_spec = format!("100644 blob {}\trecord.json\n", blob.trim());
    let tree = pipe(d, b, &["mktree"], &tree_spec)?;
    let parent = d.git(b, &["rev-parse", "refs/mas/journal/alice"])?;
    let commit = d.git(b, &["commit-tree", tree.trim(), "-p", parent.trim(), "-m", "note"])?;
    d.git(b, &["update-ref", "refs/mas/journal/alice", commit.trim(), parent.trim()])?;
    d.run(b, "git-mas", &["log", "alice"], 4)?;
    Ok(())
}

/// Step 7: a shared frame, re-derived in the other clone.
fn shared_frame(d: &Demo, a: &Path, b: &Path) -> Result<(), CliError> {
    d.say("\n== 7. a shared frame: alice computes the saliency snapshot from the project's SCIP index, diagnostics and task")?;
    d.mas(
        a,
        &[
            "snapshot",
            "--publish",
            "--top",
            "8",
            "--task",
            TASK,
            "--scip",
            "index.scip",
            "--diagnostics",
            "diagnostics/cargo.json",
            "--diagnostics",
            "diagnostics/ruff.sarif",
        ],
    )?;
    d.mas(a, &["frame", "--top", "5"])?;
    d.mas(a, &["sync"])?;
    d.mas(b, &["sync"])?;
    d.say("\n   bob re-derives the frame from its stored inputs in his own clone:")?;
    d.mas(b, &["snapshot", "--verify"])?;
    Ok(())
}

/// Step 8: foci and the gate: the pre-commit hook blocks bob.
fn foci_and_gate(d: &Demo, a: &Path, b: &Path) -> Result<(), CliError> {
    d.say("\n== 8. foci and the gate: both want src/money.rs; the rule serializes them (alice < bob holds)")?;
    d.mas(a, &["focus", "publish", "--targets", "src/money.rs", "src/pricing/mod.rs"])?;
    d.mas(a, &["sync"])?;
    d.mas(b, &["sync"])?;
    d.mas(b, &["focus", "publish", "--targets", "src/money.rs"])?;
    d.mas(b, &["focus", "list"])?;
    d.mas(b, &["decide", "alice", "bob"])?;
    d.mas(b, &["hooks", "install"])?;
    std::fs::write(b.join("src/money.rs"), std::fs::read_to_string(b.join("src/money.rs"))? + "// rounding fix\n")?;
    d.git(b, &["add", "src/money.rs"])?;
    d.say("\n   bob's commit touches the target alice holds: the pre-commit hook blocks it")?;
    d.run(b, "git", &["commit", "-m", "Fix rounding"], 1)?;
    Ok(())
}

/// Step 9: the holder lands its work through a team of scripted agents.
fn team_lands(d: &Demo, a: &Path) -> Result<(), CliError> {
    d.say("\n== 9. the holder lands its work: alice drives a team of scripted agents through `git mas coordinate`")?;
    d.say("   the team's check is the project's own test suite (sh check.sh: cargo test, then the stockcheck")?;
    d.say("   unittests); the project carries two real bugs (tax truncated instead of rounded, a reorder")?;
    d.say("   threshold off by one), so on main, before the run, the check fails:")?;
    let check = demo_check(d, a)?;
    check_main(d, a, check, "main-before", 1)?;
    d.say("\n   each agent works in its own worktree and proposes; alice and bob fix both bugs, carol's proposal")?;
    d.say("   is broken on purpose; each endorses the others' proposals by running the check in a scratch")?;
    d.say("   checkout, so it fails on carol's; alice's proposal reaches the quorum of 2 and lands on main,")?;
    d.say("   once; her work landed, she releases her focus")?;
    d.git(a, &["config", "mas.check", check])?;
    d.mas(
        a,
        &[
            "coordinate",
            "--goal",
            TASK,
            "--agents",
            "alice=builtin:reference,bob=builtin:reference,carol=builtin:faulty",
            "--quorum",
            "2",
        ],
    )?;
    d.git(a, &["log", "--oneline", "-3", "main"])?;
    d.git(a, &["log", "-1", "--format=%B", "main"])?;
    d.say("\n   commits on main that land a run:")?;
    d.git(a, &["rev-list", "--count", "--grep=^Mas-Run:", "main"])?;
    d.say("\n   the same check on main's tip after the landing: the project's tests pass")?;
    check_main(d, a, check, "main-after", 0)
}

/// Runs `check` on main's tip in clone `a`, in a fresh export of its tree (`name`, beside the
/// clones) as an endorsement runs it; `expect` is the exit code it must give.
fn check_main(d: &Demo, a: &Path, check: &str, name: &str, expect: i32) -> Result<(), CliError> {
    let clone = a.strip_prefix(&d.root).unwrap_or(a).display().to_string();
    d.run(&d.root, "sh", &["-c", &format!("mkdir {name} && git -C {clone} archive main | tar -x -C {name}")], 0)?;
    d.run(&d.root.join(name), "sh", &["-c", check], expect)?;
    Ok(())
}

/// Step 10: bob's commit passes once the holder landed, with a receipt.
fn after_landing(d: &Demo, a: &Path, b: &Path) -> Result<Outcome, CliError> {
    d.say("\n== 10. blocked, then allowed after the holder lands: bob's commit passes now and carries a receipt")?;
    d.mas(a, &["sync"])?;
    d.mas(b, &["sync"])?;
    d.mas(b, &["focus", "list"])?;
    d.git(b, &["commit", "--quiet", "-m", "Fix rounding"])?;
    d.git(b, &["log", "-1", "--format=%B"])?;
    d.mas(b, &["check", "HEAD~1..HEAD", "--require-receipts"])?;
    Ok(Outcome::Ok)
}

/// The aggregate task: the demo's, naming the files its two bugs are in.
const AGGREGATE_TASK: &str = "fix the rounding of tax in pricing (src/pricing/tax.rs) and the reorder threshold in \
     stockcheck (tools/stockcheck/reorder.py)";

/// Step 11: complementary work on a fresh copy of the project: the goal split into one slice per
/// group of files it concerns, the agents left over reviewing, the merged whole landed once.
fn aggregate_lands(d: &Demo) -> Result<Outcome, CliError> {
    let t = d.root.join("team");
    d.say(
        "\n== 11. complementary work: a fresh copy of the project, its two bugs back; a team of four splits the goal",
    )?;
    d.say("   (`coordinate --aggregate`): each agent gets a slice of files no one else holds — what the goal")?;
    d.say("   concerns, the failing tests' files with the modules they import — works it alone and proposes;")?;
    d.say("   two bugs make two slices: the agents left over hold nothing and review (dave, faulty, has nothing to")?;
    d.say("   break); a wait-all barrier holds until every slice is judged, then the slices are merged, checked as")?;
    d.say("   a whole and land as one commit when the merged tree passes the check or improves on main")?;
    std::fs::create_dir_all(&t)?;
    write_fixture(&t)?;
    d.git(&t, &["init", "--quiet", "-b", "main"])?;
    d.git(&t, &["add", "."])?;
    d.git(&t, &["commit", "--quiet", "-m", "Import the inventory project"])?;
    for agent in ["erin", "frank", "grace", "dave"] {
        d.mas(&t, &["agent", "new", agent])?;
    }
    d.git(&t, &["add", ".mas/roster"])?;
    d.git(&t, &["commit", "--quiet", "-m", "Add the team"])?;
    let check = demo_check(d, &t)?;
    d.git(&t, &["config", "mas.agent", "erin"])?;
    d.git(&t, &["config", "mas.check", check])?;
    check_main(d, &t, check, "team-before", 1)?;
    let agents = "erin=builtin:reference,frank=builtin:reference,grace=builtin:reference,dave=builtin:faulty";
    d.mas(&t, &["coordinate", "--aggregate", "--goal", AGGREGATE_TASK, "--agents", agents, "--quorum", "2"])?;
    let message = d.git(&t, &["log", "-1", "--format=%B", "main"])?;
    let team = ["erin", "frank", "grace", "dave"];
    let (landed, others) = landed_slices(&message, &team);
    if landed.is_empty() {
        return Err(CliError::internal("the aggregate run landed no slice"));
    }
    let statuses = slice_statuses(d, &t)?;
    let status = |a: &str| statuses.iter().find(|(x, _)| x == a).map(|(_, s)| s.as_str());
    let abstained: Vec<&str> = others.iter().copied().filter(|a| status(a) == Some("abstained")).collect();
    let reviewed: Vec<&str> = others.iter().copied().filter(|a| status(a).is_none()).collect();
    let left: Vec<&str> = others.iter().copied().filter(|a| status(a).is_some_and(|s| s != "abstained")).collect();
    let mut out = vec![format!("one commit on main holds the slices of {}", landed.join(", "))];
    if !abstained.is_empty() {
        out.push(format!("abstained (their slice needed no change): {}", abstained.join(", ")));
    }
    if !reviewed.is_empty() {
        out.push(format!("reviewed, with no slice of their own: {}", reviewed.join(", ")));
    }
    out.push(if left.is_empty() {
        "every slice with work landed".to_string()
    } else {
        format!("left out: {} (the report above says why)", left.join(", "))
    });
    d.say(&format!("\n   {}", out.join("; ")))?;
    d.say("   the same check on main's tip after the aggregate landing: the project's tests pass")?;
    check_main(d, &t, check, "team-after", 0)?;

    d.say("\n== done: every record above was signed, stored in refs/mas/, verified against the committed roster,")?;
    d.say("   and carried between clones by an ordinary git remote. The forged one is named SPOOF and never applied;")?;
    d.say("   the frame re-derived byte for byte in the other clone; the gate held bob back until alice's work")?;
    d.say("   landed; the team's proposals were checked by the project's tests and exactly one landed on main,")?;
    d.say("   with its report: the tests that failed on main before the run pass on it now. Then a team split the")?;
    let whole = if left.is_empty() { "every slice with work" } else { "the slices at quorum" };
    d.say(&format!(
        "   goal into slices and {whole} ({}) landed as one commit, the check passing on it.",
        landed.join(", ")
    ))?;
    Ok(Outcome::Ok)
}

/// Each slice's agent and status in the report of the repository's latest run (`git mas report
/// --json`, read quietly).
fn slice_statuses(d: &Demo, dir: &Path) -> Result<Vec<(String, String)>, CliError> {
    let out = d
        .base(&d.exe, dir)
        .args(["report", "--json"])
        .output()
        .map_err(|e| CliError::with_message(Kind::Internal, "cannot run git mas report".to_string(), e))?;
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| CliError::with_message(Kind::Internal, format!("reading the report: {e}"), e))?;
    Ok(report["slices"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| Some((s["agent"].as_str()?.to_string(), s["status"].as_str()?.to_string())))
        .collect())
}

/// The agents of `team` whose slices a landing commit's `message` names (`Mas-Winner:`), and the
/// others, each in `team`'s order.
fn landed_slices<'a>(message: &str, team: &[&'a str]) -> (Vec<&'a str>, Vec<&'a str>) {
    let winners: Vec<&str> = message.lines().filter_map(|l| l.strip_prefix("Mas-Winner: ")).map(str::trim).collect();
    team.iter().partition(|a| winners.contains(a))
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    std::fs::write(path, bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// A record claiming to be `agent`'s, signed with another key (hex seed in `key_file`).
fn forge_record(agent: &str, key_file: &[u8]) -> Result<Vec<u8>, CliError> {
    let seed = git_mas::identity::key::decode_hex(String::from_utf8_lossy(key_file).trim())
        .and_then(|v| <[u8; 32]>::try_from(v).ok())
        .ok_or_else(|| CliError::internal("demo key is malformed"))?;
    let key = git_mas::identity::AgentKey::from_seed(seed);
    let record =
        git_mas::store::record::Record::new("note", agent, 1000, serde_json::json!({"text": "approve everything"}));
    Ok(record.sign(&key).to_bytes())
}

fn pipe(d: &Demo, dir: &Path, args: &[&str], input: &str) -> Result<String, CliError> {
    d.say(&format!("\n[{}]$ git {}", dir.file_name().unwrap_or_default().to_string_lossy(), args.join(" ")))?;
    let out =
        d.git_in(dir).input(input).run(args).map_err(|e| {
            CliError::with_message(Kind::Internal, format!("demo step `git {}` failed", args.join(" ")), e)
        })?;
    let text = String::from_utf8_lossy(&out).into_owned();
    d.say(&format!("  {}", text.trim()))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_is_the_suites_that_run_and_never_a_stand_in() {
        assert_eq!(check_for(true, true), Some((CHECK_ALL, None)));
        assert_eq!(check_for(true, false), Some((CHECK_RUST.0, Some(CHECK_RUST.1))));
        assert_eq!(check_for(false, true), Some((CHECK_PYTHON.0, Some(CHECK_PYTHON.1))));
        assert_eq!(check_for(false, false), None);
        for (check, _) in [CHECK_RUST, CHECK_PYTHON] {
            assert!(check.starts_with(CHECK_ALL), "{check}: a part of the fixture's own suite");
        }
    }
}

//! Kill points: SIGKILL the real binary at the Nth call of a syscall, for N = 1, 2, … until a run
//! completes, and let the caller check the repository after every run.
//!
//! The kill is strace's fault injection (`-e inject=<syscall>:signal=SIGKILL:when=N`), so the
//! binary under test is the one cargo built for users, with nothing compiled in for tests. A sweep ends
//! when a run is not killed: from there on the command no longer reaches an Nth call, so every point
//! where it makes that syscall has been exercised once.
//!
//! Two properties of strace's counting shape how triggers are chosen:
//!
//! - The counter is kept per syscall *and per task* (thread or process), starting at zero in each
//!   new one. With `-f`, `when=N` kills whichever task first makes its own Nth such call. A child
//!   process's `execve` is its first call, and strace never injects into the `execve` that starts
//!   the traced command, so an `execve` trigger kills children as they start (N = 1) and never
//!   the parent. To kill a parent around its child processes, trigger on the parent's `clone3`,
//!   `clone` or `vfork` (before the child exists) and `wait4` (after the child has done its work).
//! - The counter is per syscall number, and each [`Trigger`] is swept on its own. A trigger naming
//!   a set of syscalls dies at whichever of them first reaches N in some task, so a set suits
//!   alternatives that one task does not mix (git renames with `rename`, gix with `renameat`);
//!   syscalls one task interleaves (`openat` and `write`) belong in separate triggers.
//!
//! `-P <path>` narrows a trigger to calls that name that path (for example the `openat` that
//! creates a ref's lock file), since strace only injects into the calls it traces.
//!
//! A trigger can also be narrowed to the command's own process ([`Trigger::own_process`]: strace
//! without `-f`, so children run untraced and only the parent's calls count), and to its first
//! call only ([`Trigger::once`]: a sweep stops after `when=1`, for points such as `execve` where
//! `when=1` already kills every child as it starts).
//!
//! Every crash test runs through this module: a sweep ([`sweep`]) when it walks every call, a
//! single point ([`kill_at`]) when it names the points it kills at.

use crate::common::TestEnv;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Where a sweep kills: the Nth call of a syscall, optionally only calls naming one of `paths`.
///
/// `syscall` may be a strace set such as [`RENAMES`] (one kind of operation that different code
/// makes through different syscalls); each syscall in it still counts on its own. A `?` before a
/// name lets strace skip it on an architecture that lacks it.
#[derive(Clone, Debug)]
pub struct Trigger {
    pub syscall: &'static str,
    /// Only calls naming one of these (strace `-P`). A relative path names the file both as given
    /// and under the command's directory.
    pub paths: Vec<PathBuf>,
    /// Whether children are traced (`-f`) and so counted and killed too.
    pub follow: bool,
    /// Whether a sweep stops after the first call (`when=1`).
    pub once: bool,
}

/// Every syscall that renames: how git and gix commit a ref (`<ref>.lock` over `<ref>`) and a
/// loose object (a temporary file into `objects/xx/`).
pub const RENAMES: &str = "?rename,renameat,?renameat2";
/// Where a process starts a child (or a thread): killing the parent before the child exists.
pub const SPAWNS: &str = "clone,?clone3,?vfork,?fork";
/// Where a parent collects a child: killing it after the child did its work, before it acts on it.
pub const WAITS: &str = "?wait4,waitid";

impl Trigger {
    /// Every call of `syscall`.
    pub fn on(syscall: &'static str) -> Self {
        Trigger { syscall, paths: Vec::new(), follow: true, once: false }
    }

    /// Only the calls of `syscall` that name one of `paths` (strace `-P`).
    pub fn on_paths(syscall: &'static str, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        Trigger { paths: paths.into_iter().collect(), ..Trigger::on(syscall) }
    }

    /// Only the command's own calls: its children are not traced, counted or killed.
    #[must_use]
    pub fn own_process(self) -> Self {
        Trigger { follow: false, ..self }
    }

    /// Only the first call: a sweep runs `when=1` and stops.
    #[must_use]
    pub fn once(self) -> Self {
        Trigger { once: true, ..self }
    }

    /// The triggers for the points where a process runs children: before each spawn, at each
    /// child's `execve`, and after each wait.
    pub fn child_processes() -> Vec<Trigger> {
        vec![Trigger::on(SPAWNS), Trigger::on("execve"), Trigger::on(WAITS)]
    }

    /// A short label for messages: `rename,renameat,renameat2`, or `openat(-P refs/mas/frame.lock)`.
    pub fn label(&self) -> String {
        let mut label = self.syscall.replace('?', "");
        if !self.follow {
            label.push_str("(own)");
        }
        if !self.paths.is_empty() {
            let names: Vec<String> = self.paths.iter().map(|p| short(p)).collect();
            label.push_str(&format!("(-P {})", names.join(",")));
        }
        label
    }
}

/// A path shown from its `.git` component on, so messages stay readable.
fn short(path: &Path) -> String {
    let s = path.display().to_string();
    s.find(".git/").map_or(s.clone(), |i| s[i + 5..].to_string())
}

/// One run of the command under strace.
pub struct Attempt {
    pub trigger: Trigger,
    /// The injection's `when=`.
    pub n: usize,
    /// Whether strace reported a task killed by SIGKILL.
    pub killed: bool,
    pub output: Output,
}

impl Attempt {
    /// `renameat#3`, for messages and survey rows.
    pub fn point(&self) -> String {
        point(&self.trigger, self.n)
    }
}

/// The name of kill point `n` of `trigger`: `renameat#3`.
pub fn point(trigger: &Trigger, n: usize) -> String {
    format!("{}#{n}", trigger.label())
}

/// How many child processes `cmd` starts (the `execve` calls strace sees beyond the command's
/// own), and its output. Run once before a sweep to decide whether it needs
/// [`Trigger::child_processes`].
pub fn child_count(cmd: &Command) -> (usize, Output) {
    require_strace();
    let trace = trace_file();
    let mut s = Command::new("strace");
    s.arg("-f").arg("-o").arg(trace.path()).arg("-e").arg("trace=execve");
    s.arg("--").arg(cmd.get_program()).args(cmd.get_args());
    copy_context(cmd, &mut s);
    let output = s.output().expect("run strace");
    let log = std::fs::read_to_string(trace.path()).unwrap_or_default();
    let execs = log
        .lines()
        .filter(|l| (l.contains("execve(") || l.contains("execve resumed>")) && l.trim_end().ends_with("= 0"))
        .count();
    (execs.saturating_sub(1), output)
}

/// Gives `to` the environment and directory of `from`, a command [`TestEnv::hermetic`] made: its
/// environment starts empty (which `get_envs` does not tell), so `to`'s does too.
fn copy_context(from: &Command, to: &mut Command) {
    to.env_clear();
    for (k, v) in from.get_envs() {
        match v {
            Some(v) => to.env(k, v),
            None => to.env_remove(k),
        };
    }
    if let Some(dir) = from.get_current_dir() {
        to.current_dir(dir);
    }
}

/// Fails the test with a clear message when strace cannot run or trace here (CI installs it;
/// a container may forbid ptrace).
pub fn require_strace() {
    let probe = Command::new("strace").args(["-o", "/dev/null", "true"]).output();
    assert!(
        probe.as_ref().is_ok_and(|o| o.status.success()),
        "the crash tests need strace on PATH, allowed to trace (apt-get install strace; ptrace allowed): {probe:?}"
    );
}

/// A file for one strace run's trace, removed when dropped.
fn trace_file() -> tempfile::NamedTempFile {
    tempfile::Builder::new().prefix("git-mas-strace").tempfile().expect("a trace file")
}

/// `cmd` (its program, arguments, environment and directory) run under strace so that the `n`th
/// call of the trigger's syscall raises SIGKILL instead. The trace (only that syscall) goes to
/// `trace`.
fn under_strace(cmd: &Command, trigger: &Trigger, n: usize, trace: &Path) -> Command {
    let mut s = Command::new("strace");
    if trigger.follow {
        s.arg("-f");
    }
    s.arg("-o").arg(trace);
    s.arg("-e").arg(format!("trace={}", trigger.syscall));
    s.arg("-e").arg(format!("inject={}:signal=SIGKILL:when={n}", trigger.syscall));
    for p in &trigger.paths {
        s.arg("-P").arg(p);
        if let Some(dir) = cmd.get_current_dir().filter(|_| p.is_relative()) {
            s.arg("-P").arg(dir.join(p));
        }
    }
    s.arg("--").arg(cmd.get_program()).args(cmd.get_args());
    copy_context(cmd, &mut s);
    s
}

/// Runs `cmd` once under strace with a SIGKILL injected at the `n`th call of the trigger's
/// syscall; the attempt says whether a task was killed.
pub fn kill_at(cmd: &Command, trigger: &Trigger, n: usize) -> Attempt {
    attempt(cmd, trigger, n, None)
}

/// [`kill_at`], with `input` (when given) written whole to the command's stdin, then closed.
fn attempt(cmd: &Command, trigger: &Trigger, n: usize, input: Option<&[u8]>) -> Attempt {
    require_strace();
    let trace = trace_file();
    let mut strace = under_strace(cmd, trigger, n, trace.path());
    let output = match input {
        None => strace.output().expect("run strace"),
        Some(input) => {
            use std::io::Write as _;
            let mut child =
                strace.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run strace");
            // A command killed before it read its input closes the pipe: that is no failure.
            let _ = child.stdin.take().unwrap().write_all(input);
            child.wait_with_output().expect("run strace")
        }
    };
    let log = std::fs::read_to_string(trace.path()).unwrap_or_default();
    let killed = log.contains("+++ killed by SIGKILL");
    let attempt = Attempt { trigger: trigger.clone(), n, killed, output };
    // strace reports its own failures (a misspelt syscall, no ptrace) on stderr.
    // (A `-P` path that exists is resolved to its real path as well, and strace says so.)
    let err = String::from_utf8_lossy(&attempt.output.stderr);
    let own = err.lines().find(|l| l.starts_with("strace: ") && !l.starts_with("strace: Requested path "));
    assert!(own.is_none(), "{}: {err}", attempt.point());
    attempt
}

/// Sweeps every trigger: for N = 1, 2, … runs `command(trigger, n)` under strace with a SIGKILL
/// injected at the Nth call ([`kill_at`]), calls `after` with the attempt (killed or not), and
/// stops at the first run that was not killed (or after N = 1 for a [`Trigger::once`]). Returns,
/// per trigger, how many runs were killed: the kill points exercised.
///
/// `command` is called once per run, so it can reset or vary the state (a fresh payload, a fresh
/// copy of a repository) before returning the command to run.
pub fn sweep(
    triggers: &[Trigger],
    command: impl FnMut(&Trigger, usize) -> Command,
    after: impl FnMut(&Attempt),
) -> Vec<(String, usize)> {
    sweep_inner(triggers, None, command, after)
}

/// [`sweep`] for a command that reads `input` on its stdin (a hook and its payload): each run gets
/// it whole, then its stdin is closed.
pub fn sweep_fed(
    triggers: &[Trigger],
    input: &[u8],
    command: impl FnMut(&Trigger, usize) -> Command,
    after: impl FnMut(&Attempt),
) -> Vec<(String, usize)> {
    sweep_inner(triggers, Some(input), command, after)
}

fn sweep_inner(
    triggers: &[Trigger],
    input: Option<&[u8]>,
    mut command: impl FnMut(&Trigger, usize) -> Command,
    mut after: impl FnMut(&Attempt),
) -> Vec<(String, usize)> {
    let mut swept = Vec::new();
    for trigger in triggers {
        let mut kills = 0;
        for n in 1.. {
            assert!(n < 2000, "{}: still killed at N = {n}; the command does not terminate", trigger.label());
            let cmd = command(trigger, n);
            let attempt = attempt(&cmd, trigger, n, input);
            after(&attempt);
            if !attempt.killed {
                break;
            }
            kills += 1;
            if trigger.once {
                break;
            }
        }
        swept.push((trigger.label(), kills));
    }
    swept
}

/// A command's output, with how long it ran, or `None` when it was still running at `limit` (it
/// is then killed).
pub struct Timed {
    pub output: Option<Output>,
    pub elapsed: Duration,
}

/// Runs `cmd` with piped output, killing it if it runs longer than `limit`.
pub fn run_with_timeout(mut cmd: Command, limit: Duration) -> Timed {
    let start = Instant::now();
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err.read_to_end(&mut buf);
        buf
    });
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let elapsed = start.elapsed();
            let stdout = out_reader.join().unwrap();
            let stderr = err_reader.join().unwrap();
            return Timed { output: Some(Output { status, stdout, stderr }), elapsed };
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let _ = (out_reader.join(), err_reader.join());
            return Timed { output: None, elapsed: start.elapsed() };
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Files a killed command may leave in a git directory: lock files (`*.lock` anywhere) and
/// temporary files (object temp files, `mas-snapshot-*.index`, `tmp_*`, a file's atomic write's
/// `.<name>.mas-tmp.<pid>.<counter>`, an older build's `<name>.tmp.<pid>`), relative to `git_dir`. Not the claims lock ([`CLAIMS_LOCK`]): that file
/// stays, and a dead holder's `flock` on it is released by the kernel.
pub fn leftovers(git_dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, base: &Path, found: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                walk(&path, base, found);
            } else if name.ends_with(".lock")
                || name.starts_with(".tmp")
                || name.starts_with("tmp_")
                || name.starts_with("mas-snapshot-")
                || name.contains(".tmp.")
                || git_mas::fsx::is_temporary(&name)
            {
                let relative = path.strip_prefix(base).unwrap().display().to_string();
                if relative != CLAIMS_LOCK {
                    found.push(relative);
                }
            }
        }
    }
    let mut found = Vec::new();
    walk(git_dir, git_dir, &mut found);
    found.sort();
    found
}

/// Team mode's claims lock, relative to the common git directory: a file that is never removed,
/// locked with `flock` by a claimer.
pub const CLAIMS_LOCK: &str = "mas/claims.lock";

/// The repository's common git directory (where refs, objects and their locks live), absolute.
pub fn git_dir(env: &TestEnv, repo: &Path) -> PathBuf {
    PathBuf::from(env.git(repo, &["rev-parse", "--path-format=absolute", "--git-common-dir"]))
}

/// The lock files among [`leftovers`].
pub fn locks(git_dir: &Path) -> Vec<String> {
    leftovers(git_dir).into_iter().filter(|f| f.ends_with(".lock")).collect()
}

/// Removes every lock file under `git_dir` (a killed process is known to be dead, so its locks
/// are stale), as `git mas doctor --fix` would; returns them.
pub fn remove_locks(git_dir: &Path) -> Vec<String> {
    let stale = locks(git_dir);
    for lock in &stale {
        std::fs::remove_file(git_dir.join(lock)).expect("remove a stale lock");
    }
    stale
}

/// How long a retry may take to give up on a lock a crash left behind.
pub const STALE_LOCK_REPORT: Duration = Duration::from_secs(5);
/// How long a retry is let run before it is called spinning and killed (past
/// [`STALE_LOCK_REPORT`] it has failed already; this only bounds how long the test watches).
pub const RETRY_LIMIT: Duration = Duration::from_secs(6);

/// What a retry after a kill came to.
pub struct Retried {
    /// The successful run, if the command succeeded in the end.
    pub output: Option<Output>,
    /// What went wrong on the way (a stale lock spun on or not named, a failed retry).
    pub problems: Vec<String>,
}

/// Retries a killed command as a user would: when the kill left lock files in the git directory
/// of `repo` (any worktree of it), the retry must fail within [`STALE_LOCK_REPORT`] naming the lock (its path relative
/// to the git directory appears in stderr); the locks are then cleared with [`clear_locks`] and the
/// command run again, and that run must succeed.
pub fn retry(env: &TestEnv, repo: &Path, mut command: impl FnMut() -> Command) -> Retried {
    let git_dir = &git_dir(env, repo);
    let mut problems = Vec::new();
    let stale = locks(git_dir);
    if !stale.is_empty() {
        let timed = run_with_timeout(command(), RETRY_LIMIT);
        match timed.output {
            None => problems.push(format!(
                "retry beside the stale lock(s) {stale:?} still ran after {:.0?}; expected it to fail within {:?} naming the lock",
                timed.elapsed, STALE_LOCK_REPORT
            )),
            Some(out) => {
                let err = String::from_utf8_lossy(&out.stderr);
                if out.status.success() {
                    problems.push(format!("retry beside the stale lock(s) {stale:?} exited 0"));
                } else {
                    if timed.elapsed > STALE_LOCK_REPORT {
                        problems.push(format!(
                            "retry beside the stale lock(s) {stale:?} took {:.1?} to fail (limit {:?})",
                            timed.elapsed, STALE_LOCK_REPORT
                        ));
                    }
                    if !stale.iter().any(|l| err.contains(l.as_str())) {
                        problems.push(format!(
                            "retry beside the stale lock(s) {stale:?} failed without naming one: {}",
                            err.trim()
                        ));
                    }
                }
            }
        }
        problems.extend(clear_locks(env, repo, git_dir, &stale));
    }
    let timed = run_with_timeout(command(), RETRY_LIMIT);
    let output = match timed.output {
        None => {
            problems.push(format!("retry still ran after {:.0?}", timed.elapsed));
            None
        }
        Some(out) if out.status.success() => Some(out),
        Some(out) => {
            problems.push(format!(
                "retry exited {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            None
        }
    };
    Retried { output, problems }
}

/// Clears the stale locks a crash left, as the user is told to: with `git mas doctor --fix` where
/// the binary has that command (it must exit 0 and leave none of them), otherwise by removing
/// them by hand. Returns the problems found.
pub fn clear_locks(env: &TestEnv, repo: &Path, git_dir: &Path, stale: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    if env.mas(repo, &["doctor", "--help"]).status.success() {
        let out = env.mas(repo, &["doctor", "--fix"]);
        if !out.status.success() {
            problems.push(format!(
                "git mas doctor --fix exited {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let left: Vec<&String> = stale.iter().filter(|l| git_dir.join(l).exists()).collect();
        if !left.is_empty() {
            problems.push(format!("git mas doctor --fix left the stale lock(s) {left:?}"));
        }
    }
    for lock in stale {
        let _ = std::fs::remove_file(git_dir.join(lock));
    }
    problems
}

/// Checks a repository as a crash must leave it: `git fsck --no-dangling` clean, every ref naming
/// an object that exists (and no broken ref), and every chain `git mas log` walks verified (exit
/// 0, no verdict other than verified, no chain error). Returns the problems found.
pub fn check_repository(env: &TestEnv, repo: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let fsck = env.git_cmd(repo).args(["fsck", "--no-dangling", "--no-progress"]).output().expect("run git fsck");
    if !fsck.status.success() {
        problems.push(format!(
            "git fsck exited {:?}: {}",
            fsck.status.code(),
            String::from_utf8_lossy(&fsck.stderr).trim()
        ));
    }
    let refs = env.git_cmd(repo).args(["for-each-ref", "--format=%(objectname) %(refname)"]).output().expect("run git");
    let err = String::from_utf8_lossy(&refs.stderr);
    if !refs.status.success() || !err.trim().is_empty() {
        problems.push(format!("git for-each-ref: {}", err.trim()));
    }
    let listing = String::from_utf8_lossy(&refs.stdout).into_owned();
    let mut batch = env.git_cmd(repo);
    batch.args(["cat-file", "--batch-check=%(objectname) %(objecttype)"]);
    let mut child =
        batch.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run git cat-file");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        for line in listing.lines() {
            let oid = line.split(' ').next().unwrap_or_default();
            writeln!(stdin, "{oid}").unwrap();
        }
    }
    let found = child.wait_with_output().expect("git cat-file");
    for (line, answer) in listing.lines().zip(String::from_utf8_lossy(&found.stdout).lines()) {
        if answer.ends_with("missing") {
            problems.push(format!("{line}: the ref names a missing object"));
        }
    }
    let log = env.mas(repo, &["log", "--json"]);
    match serde_json::from_slice::<serde_json::Value>(&log.stdout) {
        Err(e) => problems.push(format!(
            "git mas log --json exited {:?} with no JSON ({e}): {}",
            log.status.code(),
            String::from_utf8_lossy(&log.stderr).trim()
        )),
        Ok(chains) => {
            if log.status.code() != Some(0) {
                problems.push(format!("git mas log exited {:?}", log.status.code()));
            }
            for chain in chains.as_array().into_iter().flatten() {
                let name = chain["ref"].as_str().unwrap_or("?");
                if !chain["error"].is_null() {
                    problems.push(format!("{name}: {}", chain["error"]));
                }
                for record in chain["records"].as_array().into_iter().flatten() {
                    let status = record["verdict"]["status"].as_str().unwrap_or("?");
                    if status != "verified" {
                        problems.push(format!("{name}: record {} is {status}", record["commit"]));
                    }
                }
            }
        }
    }
    problems
}

/// Every (syscall, path) pair that `cmd` (and its children), run once to the end under strace,
/// makes on `paths` (relative to its directory; a call on a descriptor counts for the file it
/// names), with how often — the points a sweep over [`path_triggers`] kills at.
pub fn calls_on_paths(
    cmd: &Command,
    paths: &[&'static str],
) -> std::collections::BTreeMap<(String, &'static str), usize> {
    require_strace();
    let trace = trace_file();
    let dir = cmd.get_current_dir().expect("a command with a directory").to_path_buf();
    let mut s = Command::new("strace");
    s.args(["-f", "-qq", "-y", "-s", "256", "-o"]).arg(trace.path());
    for p in paths {
        s.arg("-P").arg(p).arg("-P").arg(dir.join(p));
    }
    s.arg("--").arg(cmd.get_program()).args(cmd.get_args());
    copy_context(cmd, &mut s);
    let out = s.output().expect("run strace");
    assert!(out.status.success(), "the traced command failed: {}", String::from_utf8_lossy(&out.stderr));
    let mut counts = std::collections::BTreeMap::new();
    for line in std::fs::read_to_string(trace.path()).unwrap_or_default().lines() {
        let call = line.split_whitespace().nth(1).and_then(|c| c.split('(').next()).unwrap_or("");
        if call.is_empty() || !call.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        for p in paths {
            // `.git/index` is also the start of `.git/index.lock`: a name ends at a quote, a `>`,
            // a comma or a parenthesis.
            if ["\"", ">", ",", ")"].iter().any(|end| line.contains(&format!("{p}{end}"))) {
                *counts.entry((call.to_string(), *p)).or_insert(0) += 1;
            }
        }
    }
    counts
}

/// One trigger per (syscall, path) pair of [`calls_on_paths`].
pub fn path_triggers(calls: &std::collections::BTreeMap<(String, &'static str), usize>) -> Vec<Trigger> {
    calls
        .keys()
        .map(|(call, path)| Trigger::on_paths(Box::leak(call.clone().into_boxed_str()), [PathBuf::from(path)]))
        .collect()
}

//! A peer as a process: one process per hop, the prompt on its stdin, the reply on its stdout.
//!
//! Decisions:
//!
//! - **One process per hop.** A hop is a call: start, write the prompt, close stdin, read stdout to
//!   its end, wait for the exit. Nothing survives between hops, so a peer's only memory is what the
//!   prompt shows it (and whatever it keeps on disk itself).
//! - **Each hop runs in its own process group**, and the whole group is killed (SIGKILL) when the
//!   hop ends, however it ends: on a timeout, on an oversized reply, on an error, and after a normal
//!   exit too, so that neither a hanging `sh -c` pipeline nor a background process it started is
//!   left running. The groups alive right now are listed in a process-wide registry, so that an
//!   interrupted command can kill them too ([`kill_live_peers`]).
//! - **A reply ends when stdout and stderr close and the process exits**, within the hop's
//!   timeout. A reply larger than [`MAX_REPLY_BYTES`] is refused. Bytes that are not UTF-8 are
//!   replaced, not refused: the line parsers decide whether the reply is readable.
//! - **A failed call quotes the host's own words**: a non-zero exit, or a hop stopped at its
//!   timeout, is reported with the first lines the process printed — its stderr, else its
//!   stdout, because a coding-agent CLI that is not logged in may say so on stdout (claude-code:
//!   `Not logged in · Please run /login`, exit 1) and that text must never be read as a reply.
//!   The first lines, not the last: a host states why it cannot work before any noise it prints
//!   while giving up.

use super::spec::PeerSpec;
use super::{Hop, HopError, HopReply};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// The largest reply accepted, in bytes.
pub const MAX_REPLY_BYTES: usize = 1 << 20;

/// How much of a peer's stderr is kept for error messages, in bytes.
pub const STDERR_TAIL_BYTES: usize = 2048;

/// How many lines, and bytes at most, of what a peer printed a failed call quotes.
pub const QUOTED_LINES: usize = 6;
/// See [`QUOTED_LINES`].
pub const QUOTED_BYTES: usize = 600;

/// How long to wait for a killed process to be reaped.
const REAP_GRACE: Duration = Duration::from_secs(5);

/// The program and arguments a peer runs as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessCommand {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
}

impl ProcessCommand {
    /// The process for `spec`: `sh -c <command line>` for `cmd:`, `<exe> peer <kind>` for a
    /// built-in (`exe` is the running `git-mas`).
    pub fn for_spec(spec: &PeerSpec, exe: &Path) -> ProcessCommand {
        match spec {
            PeerSpec::Cmd { command } => ProcessCommand::shell(command),
            PeerSpec::Builtin { kind } => {
                ProcessCommand { program: exe.to_path_buf(), args: vec!["peer".to_owned(), kind.name().to_owned()] }
            }
            PeerSpec::Preset { preset } => ProcessCommand::shell(&preset.command_line(None)),
        }
    }

    /// `sh -c <command line>`.
    pub fn shell(command: &str) -> ProcessCommand {
        ProcessCommand { program: PathBuf::from("sh"), args: vec!["-c".to_owned(), command.to_owned()] }
    }
}

static LIVE_GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn live_groups() -> std::sync::MutexGuard<'static, BTreeSet<i32>> {
    LIVE_GROUPS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn kill_group(pgid: i32) {
    #[cfg(unix)]
    if pgid > 1
        && let Some(pid) = rustix::process::Pid::from_raw(pgid)
    {
        // ESRCH (the group is gone) is the usual answer after a normal exit.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

/// Kills every peer process group that is running now (for an interrupted command).
pub fn kill_live_peers() {
    for pgid in live_groups().iter() {
        kill_group(*pgid);
    }
}

/// A hop's process group: registered while the hop runs, killed when it ends.
struct GroupGuard(i32);

impl GroupGuard {
    fn register(pid: u32) -> Option<GroupGuard> {
        let pgid = i32::try_from(pid).ok().filter(|p| *p > 1)?;
        live_groups().insert(pgid);
        Some(GroupGuard(pgid))
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        kill_group(self.0);
        live_groups().remove(&self.0);
    }
}

/// What a peer printed on one stream, shared with the hop so that a timeout can still quote it.
#[derive(Default)]
struct Captured {
    /// Everything, up to `cap + 1` bytes (stdout: the reply).
    all: Vec<u8>,
    /// The first bytes (stderr: what a failed call quotes).
    head: Vec<u8>,
    /// The last bytes (stderr: the diagnostics a reply carries).
    tail: Vec<u8>,
}

type Shared = std::sync::Arc<Mutex<Captured>>;

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Captured> {
    shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Reads `reader` into `into`, keeping its first and its last [`STDERR_TAIL_BYTES`]; with
/// `cap`, all of it too, stopping once it exceeds `cap` bytes (without, it reads to the end, so
/// that a peer never blocks writing).
async fn capture(mut reader: impl AsyncRead + Unpin, cap: Option<usize>, into: Shared) -> std::io::Result<()> {
    let mut chunk = [0u8; 8192];
    loop {
        let n = reader.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        let mut c = lock(&into);
        if let Some(cap) = cap {
            let room = (cap + 1).saturating_sub(c.all.len());
            c.all.extend_from_slice(&chunk[..n.min(room)]);
        }
        let head_room = STDERR_TAIL_BYTES.saturating_sub(c.head.len());
        c.head.extend_from_slice(&chunk[..n.min(head_room)]);
        c.tail.extend_from_slice(&chunk[..n]);
        if c.tail.len() > STDERR_TAIL_BYTES * 2 {
            let cut = c.tail.len() - STDERR_TAIL_BYTES;
            c.tail.drain(..cut);
        }
        if cap.is_some_and(|cap| c.all.len() > cap) {
            return Ok(());
        }
    }
}

fn tail_text(bytes: &[u8]) -> String {
    let start = bytes.len().saturating_sub(STDERR_TAIL_BYTES);
    String::from_utf8_lossy(&bytes[start..]).trim().to_owned()
}

/// The non-blank lines of `bytes` a failed call quotes, joined with ` | `: all of them when
/// there are at most [`QUOTED_LINES`], else the first and the last half of that (a host says why
/// it cannot start first, and why it gave up last), at most [`QUOTED_BYTES`] (cut at a character
/// boundary, marked with `…`).
pub fn first_lines(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let joined = if lines.len() <= QUOTED_LINES {
        lines.join(" | ")
    } else {
        let half = QUOTED_LINES / 2;
        format!("{} | … | {}", lines[..half].join(" | "), lines[lines.len() - half..].join(" | "))
    };
    if joined.len() <= QUOTED_BYTES {
        return joined;
    }
    // Keep the head and the tail of an overlong quote.
    let mut head = QUOTED_BYTES / 2;
    while !joined.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = joined.len() - QUOTED_BYTES / 2;
    while !joined.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}…{}", &joined[..head], &joined[tail..])
}

/// What a failed call quotes: the first and last lines of stderr, else of stdout, and which it
/// was.
fn said(stdout: &[u8], stderr: &Captured) -> (String, &'static str) {
    let err = if stderr.head.len() < STDERR_TAIL_BYTES {
        first_lines(&stderr.head)
    } else {
        // More than the head holds: its first lines, and the last lines of the tail.
        first_lines(&[&stderr.head[..], b"\n", &stderr.tail[..]].concat())
    };
    if !err.is_empty() {
        return (err, "stderr");
    }
    (first_lines(stdout), "stdout")
}

/// Runs one hop of `command` (in `dir`, when given): the prompt on stdin, the reply from stdout,
/// within `hop.timeout`. The process and everything it started are gone when this returns.
pub async fn run_hop(command: &ProcessCommand, dir: Option<&Path>, hop: &Hop) -> Result<HopReply, HopError> {
    let started = Instant::now();
    let program = command.program.display().to_string();
    let mut child = hop_command(command, dir, hop).spawn().map_err(|source| HopError::Spawn { program, source })?;
    let group = child.id().and_then(GroupGuard::register);
    let pgid = group.as_ref().map(|g| g.0);
    let out_buf = Shared::default();
    let err_buf = Shared::default();
    let exchanged = exchange(&mut child, hop.prompt.as_bytes(), pgid, &out_buf, &err_buf);
    let outcome = match tokio::time::timeout(hop.timeout, exchanged).await {
        Ok(result) => result,
        Err(_) => {
            let out = lock(&out_buf).all.clone();
            let (said, _) = said(&out, &lock(&err_buf));
            Err(HopError::TimedOut { after: hop.timeout, said: (!said.is_empty()).then_some(said) })
        }
    };
    match outcome {
        Ok(status) => {
            let out = std::mem::take(&mut lock(&out_buf).all);
            reply(status, out, &lock(&err_buf), started.elapsed())
        }
        Err(e) => {
            pgid.into_iter().for_each(kill_group);
            let _ = child.start_kill();
            let _ = tokio::time::timeout(REAP_GRACE, child.wait()).await;
            Err(e)
        }
    }
}

/// The hop's process: piped stdio, the hop's environment, in a process group of its own.
fn hop_command(command: &ProcessCommand, dir: Option<&Path>, hop: &Hop) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(&command.program);
    cmd.args(&command.args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    for (key, value) in &hop.env {
        cmd.env(key, value);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    cmd
}

/// Writes the prompt, reads stdout (up to [`MAX_REPLY_BYTES`]) and stderr to their ends, and waits
/// for the exit. An oversized reply stops the process group at once.
async fn exchange(
    child: &mut tokio::process::Child,
    prompt: &[u8],
    pgid: Option<i32>,
    out_buf: &Shared,
    err_buf: &Shared,
) -> Result<std::process::ExitStatus, HopError> {
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let write = async move {
        let Some(mut stdin) = stdin else { return Ok(()) };
        match stdin.write_all(prompt).await {
            // A peer may answer without reading its prompt.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    };
    let out_into = out_buf.clone();
    let read = async move {
        let result = match stdout {
            Some(out) => capture(out, Some(MAX_REPLY_BYTES), out_into.clone()).await,
            None => Ok(()),
        };
        if lock(&out_into).all.len() > MAX_REPLY_BYTES {
            // Stop it now: it may be blocked writing more, holding stderr open.
            pgid.into_iter().for_each(kill_group);
        }
        result
    };
    let err_into = err_buf.clone();
    let read_err = async move {
        if let Some(err) = stderr {
            // A read error ends what is kept of stderr; it never fails the hop.
            let _ = capture(err, None, err_into).await;
        }
    };
    let (written, read, ()) = tokio::join!(write, read, read_err);
    read.map_err(|source| HopError::Io { source })?;
    if lock(out_buf).all.len() > MAX_REPLY_BYTES {
        return Err(HopError::TooLarge { limit: MAX_REPLY_BYTES });
    }
    written.map_err(|source| HopError::Io { source })?;
    child.wait().await.map_err(|source| HopError::Io { source })
}

/// How a process that did not succeed ended: `exit status N`, or, killed (a status 128 + N from
/// its shell, or a signal), `… — killed (SIGKILL: out of memory or killed)`
/// ([`crate::runtime::exit`]).
fn status_words(status: std::process::ExitStatus) -> String {
    use crate::runtime::exit::{signal_of, signal_words};
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => match signal_of(code) {
            Some(signal) => format!("exit status {code} — killed ({})", signal_words(signal)),
            None => format!("exit status {code}"),
        },
        (None, Some(signal)) => format!("signal {signal} — killed ({})", signal_words(signal)),
        (None, None) => "a signal".to_owned(),
    }
}

/// A finished process's reply: its stdout when it exited 0, else a failed call quoting what it
/// printed.
fn reply(
    status: std::process::ExitStatus,
    out: Vec<u8>,
    err: &Captured,
    elapsed: Duration,
) -> Result<HopReply, HopError> {
    if !status.success() {
        let status = status_words(status);
        let (said, stream) = said(&out, err);
        return Err(HopError::Failed { status, said, stream });
    }
    Ok(HopReply { text: String::from_utf8_lossy(&out).into_owned(), elapsed, stderr: tail_text(&err.tail) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peers::spec::BuiltinKind;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    }

    fn sh(script: &str) -> ProcessCommand {
        ProcessCommand::for_spec(&PeerSpec::Cmd { command: script.to_owned() }, Path::new("unused"))
    }

    fn hop(prompt: &str, timeout_ms: u64) -> Hop {
        Hop {
            prompt: prompt.to_owned(),
            timeout: Duration::from_millis(timeout_ms),
            env: vec![("HOP_X".into(), "42".into())],
        }
    }

    fn alive(pid: i32) -> bool {
        // A zombie is not running; its parent (here init) reaps it in its own time.
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => !stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
            Err(_) => false,
        }
    }

    #[test]
    fn builtins_run_as_git_mas_peer() {
        let cmd = ProcessCommand::for_spec(&PeerSpec::Builtin { kind: BuiltinKind::Faulty }, Path::new("/x/git-mas"));
        assert_eq!(cmd.program, PathBuf::from("/x/git-mas"));
        assert_eq!(cmd.args, ["peer", "faulty"]);
    }

    #[test]
    fn the_prompt_goes_in_and_the_reply_comes_out() {
        let reply = runtime().block_on(run_hop(&sh("tr a-z A-Z; echo \"x=$HOP_X\" >&2"), None, &hop("hello", 5000)));
        let reply = reply.unwrap();
        assert_eq!(reply.text, "HELLO");
        assert_eq!(reply.stderr, "x=42");
    }

    #[test]
    fn a_peer_that_ignores_its_prompt_still_replies() {
        let big = "p".repeat(1 << 18);
        let reply = runtime().block_on(run_hop(&sh("echo ANNOUNCE value=1"), None, &hop(&big, 5000))).unwrap();
        assert_eq!(reply.text.trim(), "ANNOUNCE value=1");
    }

    #[test]
    fn a_failing_peer_is_a_failed_call_with_its_stderr() {
        let err = runtime().block_on(run_hop(&sh("echo oops >&2; exit 3"), None, &hop("", 5000))).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("exit status 3") && text.contains("oops"), "{text}");
        let err = runtime()
            .block_on(run_hop(
                &ProcessCommand { program: "/nonexistent/peer".into(), args: vec![] },
                None,
                &hop("", 5000),
            ))
            .unwrap_err();
        assert!(matches!(err, HopError::Spawn { .. }), "{err}");
    }

    #[test]
    fn a_peer_killed_by_a_signal_or_reported_137_is_said_killed() {
        // Its shell reports the killed command as 137 (the out-of-memory killer sends SIGKILL).
        let err = runtime().block_on(run_hop(&sh("sh -c 'kill -9 $$'"), None, &hop("", 5000))).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("the peer exited with exit status 137 — killed (SIGKILL: out of memory or killed)"),
            "{text}"
        );
        // The peer's own process killed: no exit code, the signal.
        let err = runtime().block_on(run_hop(&sh("kill -TERM $$"), None, &hop("", 5000))).unwrap_err();
        assert!(err.to_string().starts_with("the peer exited with signal 15 — killed (SIGTERM: terminated)"), "{err}");
    }

    #[test]
    fn a_login_error_on_stdout_is_a_failed_call_that_quotes_it() {
        // As claude-code says it when it has no credentials: on stdout, exit 1.
        let err = runtime()
            .block_on(run_hop(&sh("echo 'Not logged in · Please run /login'; exit 1"), None, &hop("", 5000)))
            .unwrap_err();
        assert!(matches!(&err, HopError::Failed { stream: "stdout", .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "the peer exited with exit status 1; it said on stdout: Not logged in · Please run /login"
        );
        // stderr wins when there is some, and the first lines are quoted, not the last.
        // stderr wins when there is some; a long one is quoted by its first and last lines (a
        // banner first, a panic last).
        let script = "echo reply-ish; echo 'Error: no credentials' >&2; for i in $(seq 1 50); do echo noise $i >&2; done; echo 'panicked at main.rs' >&2; exit 2";
        let err = runtime().block_on(run_hop(&sh(script), None, &hop("", 5000))).unwrap_err();
        let text = err.to_string();
        assert!(text.ends_with("it said on stderr: Error: no credentials | noise 1 | noise 2 | … | noise 49 | noise 50 | panicked at main.rs"), "{text}");
        assert!(!text.contains("noise 3 ") && !text.contains("reply-ish"), "{text}");
    }

    #[test]
    fn a_hang_quotes_what_the_peer_had_said() {
        let err = runtime()
            .block_on(run_hop(&sh("echo 'retrying the model (1/10)' >&2; sleep 30"), None, &hop("", 300)))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "no reply within 300ms; the peer was stopped; it had said: retrying the model (1/10)"
        );
        let err = runtime().block_on(run_hop(&sh("sleep 30"), None, &hop("", 200))).unwrap_err();
        assert!(matches!(err, HopError::TimedOut { said: None, .. }), "{err:?}");
    }

    #[test]
    fn quotes_are_bounded_and_cut_at_a_character() {
        let long = format!("a{}z", "é".repeat(QUOTED_BYTES));
        let quoted = first_lines(long.as_bytes());
        assert!(quoted.len() <= QUOTED_BYTES + '…'.len_utf8() + 2, "{quoted}");
        assert!(quoted.starts_with("aé") && quoted.ends_with("éz") && quoted.contains('…'), "{quoted}");
        assert_eq!(first_lines(b"\n  \na\n\nb\n"), "a | b");
        let many: String = (0..20).map(|i| format!("l{i}\n")).collect();
        assert_eq!(first_lines(many.as_bytes()), "l0 | l1 | l2 | … | l17 | l18 | l19");
    }

    #[test]
    fn an_oversized_reply_is_refused() {
        let err = runtime().block_on(run_hop(&sh("yes ANNOUNCE"), None, &hop("", 10_000))).unwrap_err();
        assert!(matches!(err, HopError::TooLarge { .. }), "{err}");
    }

    #[test]
    fn a_hanging_peer_and_its_children_are_killed_at_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let script = "sleep 30 & echo $! > child.pid; echo $$ > shell.pid; wait";
        let started = Instant::now();
        let err = runtime().block_on(run_hop(&sh(script), Some(dir.path()), &hop("", 300))).unwrap_err();
        assert!(matches!(err, HopError::TimedOut { .. }), "{err}");
        assert!(err.to_string().contains("300ms"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
        for file in ["child.pid", "shell.pid"] {
            let pid: i32 = std::fs::read_to_string(dir.path().join(file)).unwrap().trim().parse().unwrap();
            let deadline = Instant::now() + Duration::from_secs(2);
            while alive(pid) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            assert!(!alive(pid), "{file}: {pid} still runs");
        }
    }
}

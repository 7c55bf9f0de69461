//! A host's hook answered: `git mas gate --host HOST [--post-tool|--session-end]`, and the hook's
//! own small binary, `git-mas-hook` (`src/bin/git-mas-hook.rs`), which the hosts' entries run.
//!
//! Every tool call of every session in team mode runs a hook, so what a hook's process costs is
//! paid thousands of times a day. The installed entries run `git-mas-hook --host HOST`, not
//! `git mas gate --host HOST`: no `git` process first (git's start and its dispatch to `git-mas`
//! were a whole process per call), and a binary that links only what this module reaches — this
//! module, [`Context`], [`CliError`], [`Ui`] and [`Outcome`], included by path — not the command
//! line's parser, the MCP server, plotting or the parsers of `snapshot`. Both entries run [`run`]:
//! the same answer, deadline and failure handling, byte for byte.

use super::Outcome;
use super::context::Context;
use super::error::CliError;
use super::output::Ui;
use git_mas::attention::edit_gate::{self, Call};
use git_mas::attention::team;
use git_mas::attention::team_gate;
use git_mas::hosts::payload::{self, MAX_PAYLOAD, Payload};
use git_mas::hosts::reply::{self, Answer};
use git_mas::hosts::{Host, ProcessEnv};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Which of a host's hooks is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// Before a tool call: allow or deny it.
    PreTool,
    /// After a tool call: undo a shell call's change to files other agents hold.
    PostTool,
    /// The session ended: release its claims.
    SessionEnd,
}

impl HookEvent {
    /// The event `--post-tool` and `--session-end` name (neither: the pre-tool hook).
    pub fn of_flags(post_tool: bool, session_end: bool) -> HookEvent {
        match (post_tool, session_end) {
            (true, _) => HookEvent::PostTool,
            (_, true) => HookEvent::SessionEnd,
            _ => HookEvent::PreTool,
        }
    }
}

/// A hook's flags, as the installed entries give them: `--host HOST` (or `--host=HOST`), alone
/// or with `--post-tool` or `--session-end`. `None` for anything else (another flag, an unknown
/// host), which the caller hands to the full parser (`git mas gate`) or refuses (`git-mas-hook`).
pub fn parse_flags(words: &[&str]) -> Option<(Host, HookEvent)> {
    let (host, rest) = match words {
        ["--host", host, rest @ ..] => (*host, rest),
        [flag, rest @ ..] => (flag.strip_prefix("--host=")?, rest),
        [] => return None,
    };
    let host = Host::from_name(host)?;
    let event = match rest {
        [] => HookEvent::PreTool,
        ["--post-tool"] => HookEvent::PostTool,
        ["--session-end"] => HookEvent::SessionEnd,
        _ => return None,
    };
    Some((host, event))
}

/// The hook: payload in, the host's answer out. Nothing here may end the process otherwise: a
/// host that sees a crash lets the edit through, so every failure of a pre-tool hook is answered
/// with a deny (a post-tool or session-end hook decides nothing: its failures are reported).
///
/// Everything runs under [`payload::DEADLINE`]: the payload is read with a deadline (a host may
/// leave stdin open, [`read_payload`]), and a watchdog answers with a deny and ends the process when the
/// deadline passes first. One answer is written, whoever is first: the answer's lock decides.
pub fn run(ctx: &mut Context, host: Host, event: HookEvent) -> Result<Outcome, CliError> {
    let started = Instant::now();
    let answered = Arc::new(Mutex::new(false));
    spawn_watchdog(ctx.ui().clone(), host, event, answered.clone(), started);
    let received = read_payload(started + payload::DEADLINE);
    let ctx: &Context = ctx;
    let reply = match event {
        HookEvent::PreTool => reply::reply(host, &pre_tool(ctx, host, received)),
        HookEvent::PostTool | HookEvent::SessionEnd => after(ctx, host, event, received),
    };
    let mut done = answered.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if *done {
        // The watchdog answered and is ending the process.
        drop(done);
        loop {
            std::thread::park();
        }
    }
    *done = true;
    ctx.ui().err_text(&reply.stderr);
    ctx.ui().bytes(&reply.stdout)?;
    keep_exchange(ctx);
    Ok(Outcome::of_host_reply(reply.code))
}

/// In team mode with a remote, after the answer is written: renews the background exchange's
/// activity, or starts it when none runs ([`git_mas::exchange`]). Nothing here changes the answer,
/// and a failure is left for `git mas status` to show (the exchange is then not running).
fn keep_exchange(ctx: &Context) {
    let Ok(store) = ctx.store() else { return };
    if !team::enabled(store) {
        return;
    }
    if let Ok(git_mas::exchange::Poke::Stopped) = git_mas::exchange::poke(store)
        && let Some(program) = git_mas_program()
    {
        let _ = git_mas::exchange::start(store, &program);
    }
}

/// The `git-mas` binary, which runs `exchange`: this process's own, or, in `git-mas-hook` (which
/// has no such command), the `git-mas` installed beside it. `None` when the executable's path
/// cannot be read.
fn git_mas_program() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    if exe.file_name() == Some(std::ffi::OsStr::new(git_mas::hosts::hooks::HOOK_PROGRAM)) {
        return Some(exe.with_file_name("git-mas"));
    }
    Some(exe)
}

/// The payload, or why not: `Err(Late)` when it had not arrived whole by the deadline.
type Received = Result<std::io::Result<Vec<u8>>, Late>;

/// The payload did not arrive whole before the deadline.
#[derive(Debug)]
struct Late;

/// Reads stdin to its end (at most [`MAX_PAYLOAD`] + 1 bytes: more is refused by the parser) on
/// this thread, waiting for each read with `poll` so that a host that leaves stdin open is given
/// up on at `deadline`. (A thread of its own for the read cost a thread start and a hand-over on
/// every tool call.) Each read lands in the payload's own unused capacity, which doubles from
/// 16 KiB as it fills, rather than in a zeroed 64 KiB buffer copied from. (That buffer's 16
/// page faults were a twentieth of an edit hook's in `perf record -e page-faults`, but measured
/// per call the total did not fall: its freed pages served later allocations.)
fn read_payload(deadline: Instant) -> Received {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use std::os::fd::AsFd as _;
    let stdin = std::io::stdin();
    let fd = stdin.as_fd();
    let mut bytes: Vec<u8> = Vec::with_capacity(16 * 1024);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Late);
        }
        let timeout = Timespec {
            tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) => return Err(Late),
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Ok(Err(e.into())),
        }
        if bytes.len() == bytes.capacity() {
            bytes.reserve(bytes.capacity());
        }
        match rustix::io::read(fd, rustix::buffer::spare_capacity(&mut bytes)) {
            Ok(0) => return Ok(Ok(bytes)),
            Ok(_) => {
                if bytes.len() as u64 > MAX_PAYLOAD {
                    bytes.truncate(usize::try_from(MAX_PAYLOAD + 1).unwrap_or(usize::MAX));
                    return Ok(Ok(bytes));
                }
            }
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(e) => return Ok(Err(e.into())),
        }
    }
}

/// The pre-tool answer.
fn pre_tool(ctx: &Context, host: Host, received: Received) -> Answer {
    match received {
        Err(_) => late(host),
        Ok(Err(e)) => Answer::Deny { reason: format!("git mas gate cannot read the hook payload on stdin: {e}") },
        Ok(Ok(bytes)) => match payload::parse(host, &bytes) {
            Err(e) => reply::bad_payload(host, &e),
            Ok(payload) => match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decide(ctx, host, &payload)))
            {
                Ok(Ok(answer)) => answer,
                Ok(Err(e)) => Answer::Deny {
                    reason: format!("git mas gate refused (failing closed): {}", e.render(false).trim_end()),
                },
                Err(_) => Answer::Deny { reason: "git mas gate refused (failing closed): an internal error".into() },
            },
        },
    }
}

/// The library's decision on `payload` ([`edit_gate::decide`]), its warnings printed. Outside a
/// repository a call that writes files is refused with why, any other allowed.
fn decide(ctx: &Context, host: Host, payload: &Payload) -> Result<Answer, CliError> {
    let store = match ctx.store() {
        Ok(store) => store,
        Err(e) if edit_gate::needs_repository(payload) => return Err(e),
        Err(_) => return Ok(Answer::Allow { note: None }),
    };
    let cwd = ctx.cwd()?;
    let call = Call { host, payload, pinned: ctx.pinned_agent(), cwd: &cwd };
    let decision = edit_gate::decide(store, &call, &ProcessEnv, &git_mas::devrun::ledger::Ledger::new(store))?;
    ctx.warn_all(&decision.warnings);
    Ok(decision.answer)
}

/// The answer of a post-tool or session-end hook: what was done, for the agent where the host
/// shows it; a failure is reported, never a crash.
fn after(ctx: &Context, host: Host, event: HookEvent, received: Received) -> reply::Reply {
    let quiet = |text: String| reply::Reply { stdout: Vec::new(), stderr: text, code: 0 };
    let bytes = match received {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(e)) => return quiet(format!("git mas gate: cannot read the hook payload on stdin: {e}\n")),
        Err(_) => return quiet("git mas gate: the hook payload did not arrive whole in time\n".into()),
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // Outside a repository there is nothing to put back or release.
        let Ok(store) = ctx.store() else { return Ok(None) };
        let runs = git_mas::devrun::ledger::Ledger::new(store);
        let call = team_gate::Event { host, bytes: &bytes, pinned: ctx.pinned_agent() };
        match event {
            HookEvent::PostTool => team_gate::post_tool(store, &call, &ProcessEnv, &runs),
            _ => team_gate::session_end(store, &call, &ProcessEnv, &runs).map(|ended| {
                ctx.warn_all(&ended.warnings);
                (!ended.held.is_empty())
                    .then(|| quiet(format!("git mas gate: the session ended; released {}\n", ended.held.join(", "))))
            }),
        }
    }));
    match result {
        Ok(Ok(reply)) => reply.unwrap_or_else(|| quiet(String::new())),
        Ok(Err(e)) => {
            let text = format!("git mas gate: {}", CliError::from(e).render(false).trim_end());
            match event {
                HookEvent::PostTool => reply::post_tool(
                    host,
                    &text,
                    payload::post_tool_result(host, &bytes).as_ref(),
                    payload::hook_event_name(&bytes).as_deref(),
                )
                .unwrap_or_else(|| quiet(format!("{text}\n"))),
                _ => quiet(format!("{text}\n")),
            }
        }
        Err(_) => quiet("git mas gate: an internal error\n".into()),
    }
}

/// The answer when the deadline passed before the gate could answer.
fn late(host: Host) -> Answer {
    Answer::Deny {
        reason: format!(
            "git mas gate refused (failing closed): no answer within {} s (the {} hook payload did not arrive \
             whole, or the board could not be read in time); retry the edit",
            payload::DEADLINE.as_secs(),
            host.name()
        ),
    }
}

/// Answers with a deny (a pre-tool hook; the others with nothing) and ends the process when the
/// deadline passes before the hook answered.
fn spawn_watchdog(ui: Ui, host: Host, event: HookEvent, answered: Arc<Mutex<bool>>, started: Instant) {
    std::thread::spawn(move || {
        std::thread::sleep(payload::DEADLINE.saturating_sub(started.elapsed()));
        let mut done = answered.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if *done {
            return;
        }
        *done = true;
        let reply = match event {
            HookEvent::PreTool => reply::reply(host, &late(host)),
            _ => reply::Reply {
                stdout: Vec::new(),
                stderr: "git mas gate: no answer within the deadline\n".into(),
                code: 0,
            },
        };
        ui.err_text(&reply.stderr);
        let _ = ui.bytes(&reply.stdout);
        std::process::exit(i32::from(reply.code));
    });
}

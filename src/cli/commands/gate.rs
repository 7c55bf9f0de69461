//! `git mas gate`: may the calling agent commit this change?

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::gating;
use crate::cli::json::gate::{GateOut, TouchedOut};
use crate::cli::output::JsonFlag;
use crate::cli::output::Ui;
use crate::cli::{Done, Outcome};
use git_mas::attention::edit_gate::{self, Call};
use git_mas::attention::gate_io;
use git_mas::attention::git_hooks::Mode;
use git_mas::attention::team;
use git_mas::attention::team_gate;
use git_mas::hosts::payload::{self, MAX_PAYLOAD, Payload};
use git_mas::hosts::reply::{self, Answer};
use git_mas::hosts::{Host, ProcessEnv};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Decide whether the calling agent may commit a change, against every other live focus.
///
/// The long help (`--help`) is [`long_help`]: its list of hosts and of their answers is written
/// from the host table ([`git_mas::hosts::help`]).
#[derive(Debug, clap::Args)]
#[command(long_about = long_help())]
pub struct GateArgs {
    /// Check the staged changes (the default).
    #[arg(long, conflicts_with = "paths")]
    pub staged: bool,
    /// Check these paths instead (whole files).
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Answer a coding-agent host's pre-tool hook: read its payload on stdin (see above).
    #[arg(long, value_name = "HOST", value_parser = parse_host, conflicts_with_all = ["paths", "staged", "json"])]
    pub host: Option<Host>,
    /// With --host: answer the host's post-tool hook instead (team mode: put back what a shell
    /// call changed in files other agents hold, and tell the agent).
    #[arg(long, requires = "host", conflicts_with = "session_end")]
    pub post_tool: bool,
    /// With --host: answer the host's session-end hook instead (team mode: release the session's
    /// claims at once).
    #[arg(long, requires = "host")]
    pub session_end: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// The gate's verdict as `gate` reports it: the output, and the mode the hooks apply it in.
#[derive(Debug)]
pub struct Gated {
    /// What `--json` prints.
    pub out: GateOut,
    /// `mas.gate`: what the hooks do with the verdict.
    pub mode: Mode,
}

/// Runs `gate`.
pub fn run(ctx: &mut Context, args: GateArgs) -> Result<Outcome, CliError> {
    if let Some(host) = args.host {
        let event = match (args.post_tool, args.session_end) {
            (true, _) => HookEvent::PostTool,
            (_, true) => HookEvent::SessionEnd,
            _ => HookEvent::PreTool,
        };
        return run_host(ctx, host, event);
    }
    let done = gate(ctx, &args)?;
    let Gated { out, mode } = &done.value;
    if *mode == Mode::Off && !args.output.json {
        ctx.status("note: mas.gate is off here, so the hooks ignore this verdict");
    }
    ctx.ui().err_text(&gating::verdict_text(ctx, &out.agent, &out.verdict));
    if args.output.json {
        ctx.ui().json(out)?;
    }
    Ok(done.outcome)
}

/// The gate's verdict on the staged change (or `args.paths`) for the caller; its outcome is the
/// verdict's (allow, blocked, fail-closed).
pub fn gate(ctx: &Context, args: &GateArgs) -> Result<Done<Gated>, CliError> {
    let store = ctx.store()?;
    let (agent, verdict, touched) = if team::enabled(store) {
        // Team mode's rule, as the pre-commit hook applies it.
        let (caller, verdict, touched) = gating::team_commit_gate(ctx, &args.paths)?;
        (caller.unwrap_or_default(), verdict, touched)
    } else {
        let (caller, outcome) = gating::evaluate(ctx, &args.paths)?;
        let verdict = gate_io::verdict_of(&outcome);
        let verdict = match (&outcome, caller.is_empty()) {
            (Ok(o), false) => {
                let paths: Vec<String> = o.touched.iter().map(|t| t.path.clone()).collect();
                let runs = git_mas::devrun::ledger::Ledger::new(store);
                edit_gate::with_slice_blocks(verdict, edit_gate::slice_blocks(store, &caller, &paths, &runs))
            }
            _ => verdict,
        };
        (caller, verdict, outcome.map(|o| o.touched).unwrap_or_default())
    };
    let mode = gating::mode(ctx)?;
    let touched = touched.into_iter().map(|t| TouchedOut { lines: t.lines, path: t.path }).collect();
    let outcome = gating::outcome(&verdict);
    Ok(Done::ended(Gated { out: GateOut { agent, touched, verdict }, mode }, outcome))
}

/// The long help of `git mas gate`, the hosts and their answers read from the host table.
fn long_help() -> String {
    format!(
        "{SUMMARY}\n\n{BEFORE}\n\n{HOST_INTRO}({hosts}) {AFTER}\n\n{formats}",
        hosts = git_mas::hosts::help::host_names(),
        formats = git_mas::hosts::help::answer_formats(),
    )
}

const SUMMARY: &str = "Decide whether the calling agent may commit a change, against every other live focus.";

const BEFORE: &str = "Blocks (exit 6) when another agent holds a target the change touches — as the Serialize holder \
     of a top target you share, or as its own top target — naming the holder, the target and what to \
     do. Fails closed (exit 7) when you have no live focus, when your focus is on an old frame, when \
     another agent's focus on an old frame names a touched target, and when the board cannot be read. \
     Allows (exit 0) otherwise. A held symbol (path#symbol) protects only its lines.\n\nIn team mode \
     (`mas.team`) the rule is team mode's, as the pre-commit hook applies it: blocked when the change \
     touches a file another live agent holds (any file of its focus), allowed otherwise, never \
     refused for want of a focus of your own.\n\n`git config mas.gate off|warn|enforce` decides what \
     the hooks do with the verdict (default off: the gate is opt-in per repository; `git mas hooks \
     install` turns it to enforce). This command always reports the verdict.\n\nWith --json: {agent, \
     touched: [{lines, path}], verdict: {verdict: \"allow\", frame, notes} | {verdict: \"block\", \
     blocks: [{holder, target, why, remedy}]} | {verdict: \"fail_closed\", reason, remedy}}; the \
     verdict is reported on stderr as well.";

const HOST_INTRO: &str = "With --host HOST ";

const AFTER: &str = "this is a coding-agent host's pre-tool hook: it reads the host's hook payload (JSON, at most 16 \
     MiB) on stdin and answers before the edit is written. The files the tool call would write come \
     from Claude Code Write/Edit/MultiEdit (tool_input.file_path) and NotebookEdit (notebook_path), \
     Codex apply_patch (every Add/Update/Delete File and Move to in tool_input.command), Copilot \
     create/edit (toolArgs.path; toolArgs may be a JSON string), Gemini write_file/replace and Cursor \
     Write/StrReplace/Edit (tool_input.file_path), Goose developer__write/developer__edit \
     (tool_input.path), and OpenCode write/edit, whose plugin passes {tool, args, cwd} \
     (args.filePath). Paths are taken relative to the payload's cwd. Where the call says which lines \
     change (an edit's old string found once in the file, a patch hunk's lines), only a held symbol \
     in those lines blocks; otherwise the whole file counts. Any other tool, a repository without \
     .mas/roster, mas.gate=off and files outside the repository are allowed; with mas.gate=warn a \
     refusal lets the edit through with the message. The decision is the commit gate's; a payload \
     that cannot be read and every internal error refuse (failing closed).\n\nIn team mode (`git \
     config mas.team true`, set by `git mas init --team`) the hook needs no identity, frame or focus: \
     a call that carries the host's session id is that session's own agent (`<principal>.<host>-<8 \
     hex>`, signing with the key of the principal — the shared `mas.agent`, else the roster member \
     whose key this machine holds), unless --agent, GIT_MAS_AGENT or the worktree's own `mas.agent` \
     pins one. A write to a file no other live agent holds is allowed and claims it (every file of a \
     live focus is held, not only its top target); a write to a file another holds is refused, naming \
     the holder and the time its claim has left. Claims renew with edits and lapse after \
     `mas.claimTtl` (default 15m); a ninth claim is refused with the release command. A frame is \
     published when there is none. Before a shell call (Bash, shell, run_shell_command, …) the files \
     other agents hold are kept, in every worktree, and a command running git stash, reset --hard, \
     checkout/restore or clean -f over them is refused with the safe form; --post-tool (the host's \
     post-tool hook, and Claude Code's PostToolUseFailure) puts back what the call changed (type, \
     content, mode; never through a link), says so of a commit of a held file made without the gate, \
     and tells the agent in its answer (claude-code, codex, copilot, gemini, opencode), or with its \
     next call (cursor, goose, whose post-tool answers do not reach the agent). --session-end (the \
     host's session-end hook) releases the session's claims at once (opencode's plugin sends it for \
     each session it served when opencode exits).\n\nThe hook answers within 6 seconds, under every \
     host's hook timeout: when the payload has not arrived whole by then (stdin left open) or the \
     board could not be read in time, it refuses.\n\nA tool the gate does not know that names a path \
     (file_path, path, paths, …) counts as writing it, unless the host documents it as reading or its \
     name says so; a path with a NUL byte is refused. A hard link to a held file is the held file. In \
     enforce mode an edit of git-mas's own ground is refused: .git/ (config, hooks), .mas/ (the \
     roster), and the hook and MCP files of the hosts that carry git-mas's entries — a person changes \
     those with `git config` and the `git mas hooks|mcp|agent` commands.";

fn parse_host(name: &str) -> Result<Host, String> {
    Host::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Host::ALL.iter().map(|h| h.name()).collect();
        format!("unknown host {name:?}; expected one of {}", names.join(", "))
    })
}

/// Which of a host's hooks is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HookEvent {
    /// Before a tool call: allow or deny it.
    PreTool,
    /// After a tool call: undo a shell call's change to files other agents hold.
    PostTool,
    /// The session ended: release its claims.
    SessionEnd,
}

/// The hook: payload in, the host's answer out. Nothing here may end the process otherwise: a
/// host that sees a crash lets the edit through, so every failure of a pre-tool hook is answered
/// with a deny (a post-tool or session-end hook decides nothing: its failures are reported).
///
/// Everything runs under [`payload::DEADLINE`]: the payload is read on a thread of its own (a
/// host may leave stdin open), and a watchdog answers with a deny and ends the process when the
/// deadline passes first. One answer is written, whoever is first: the answer's lock decides.
fn run_host(ctx: &mut Context, host: Host, event: HookEvent) -> Result<Outcome, CliError> {
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
        && let Ok(exe) = std::env::current_exe()
    {
        let _ = git_mas::exchange::start(store, &exe);
    }
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

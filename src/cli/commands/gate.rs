//! `git mas gate`: may the calling agent commit this change?

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::gating;
use crate::cli::hook_host::{self, HookEvent};
use crate::cli::json::gate::{GateOut, TouchedOut};
use crate::cli::output::JsonFlag;
use crate::cli::{Done, Outcome};
use git_mas::attention::edit_gate;
use git_mas::attention::gate_io;
use git_mas::attention::git_hooks::Mode;
use git_mas::attention::team;
use git_mas::hosts::Host;
use std::path::PathBuf;

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
        return hook_host::run(ctx, host, HookEvent::of_flags(args.post_tool, args.session_end));
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

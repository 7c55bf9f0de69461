//! `git mas hook <name>`: what the installed git hooks run.
//!
//! - `pre-commit`: runs the gate on the staged change; with `mas.gate=enforce` a block or a
//!   fail-closed verdict aborts the commit; when allowed, leaves a receipt for `commit-msg`.
//! - `commit-msg <file>`: appends `Mas-Agent:` and `Mas-Frame:` trailers when `pre-commit` allowed
//!   this very commit (the receipt is bound to HEAD and the index file's state); plain messages
//!   in-process ([`append_trailers`]), the rest through `git interpret-trailers`.
//! - `pre-push`: replays the gate over the commits being pushed, like `git mas check`.

use crate::cli::commands::check;
use crate::cli::commands::gate::{self, Mode};
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::exit;
use git_mas::attention::gate::Verdict;
use git_mas::attention::gate_io::{AGENT_TRAILER, FRAME_TRAILER};
use git_mas::attention::trailers::append_trailers;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// Run a git hook's logic (called by the shims that `git mas hooks install` writes).
#[derive(Debug, clap::Args)]
#[command(hide = true)]
pub struct HookArgs {
    /// The hook: pre-commit, commit-msg or pre-push.
    pub name: String,
    /// The arguments git passed to the hook.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

fn receipt_path(ctx: &mut Context) -> Result<PathBuf, CliError> {
    Ok(ctx.store()?.repo().git_dir().join("mas-receipt"))
}

/// What binds a receipt to one commit attempt: HEAD and the index file's length and mtime.
fn binding(ctx: &mut Context) -> Result<String, CliError> {
    let store = ctx.store()?;
    let head = store.repo().head_id().map(|id| id.to_string()).unwrap_or_default();
    let index = store.repo().index_path();
    let stamp =
        std::fs::metadata(&index).ok().map(|m| format!("{}:{:?}", m.len(), m.modified().ok())).unwrap_or_default();
    Ok(format!("{head} {stamp}"))
}

/// Runs `hook`.
pub fn run(ctx: &mut Context, args: HookArgs) -> Result<ExitCode, CliError> {
    let mode = gate::mode(ctx)?;
    if mode == Mode::Off {
        return Ok(ExitCode::SUCCESS);
    }
    match args.name.as_str() {
        "pre-commit" => pre_commit(ctx, mode),
        "commit-msg" => commit_msg(ctx, args.args.first().map(PathBuf::from)),
        "pre-push" => pre_push(ctx, mode, &args.args),
        other => Err(CliError::usage(format!("unknown hook {other:?}; expected pre-commit, commit-msg or pre-push"))),
    }
}

fn pre_commit(ctx: &mut Context, mode: Mode) -> Result<ExitCode, CliError> {
    let receipt = receipt_path(ctx)?;
    let _ = std::fs::remove_file(&receipt);
    let (caller, outcome) = gate::evaluate(ctx, &[])?;
    let verdict = gate::verdict_of(&outcome);
    let code = gate::report(ctx, &caller, &verdict);
    if let Verdict::Allow { frame, .. } = &verdict {
        let bind = binding(ctx)?;
        std::fs::write(&receipt, format!("{caller}\n{frame}\n{bind}\n"))
            .map_err(|e| CliError::internal(format!("cannot write {}: {e}", receipt.display())))?;
    }
    if mode == Mode::Warn && code != exit::OK {
        ctx.warn("mas.gate is warn: committing anyway");
        return Ok(ExitCode::SUCCESS);
    }
    Ok(ExitCode::from(code))
}

fn commit_msg(ctx: &mut Context, file: Option<PathBuf>) -> Result<ExitCode, CliError> {
    let file = file.ok_or_else(|| CliError::usage("commit-msg needs the message file"))?;
    let receipt = receipt_path(ctx)?;
    let Ok(text) = std::fs::read_to_string(&receipt) else {
        return Ok(ExitCode::SUCCESS);
    };
    let _ = std::fs::remove_file(&receipt);
    let mut lines = text.lines();
    let (Some(agent), Some(frame), Some(bind)) = (lines.next(), lines.next(), lines.next()) else {
        return Ok(ExitCode::SUCCESS);
    };
    if bind != binding(ctx)? {
        // The receipt belongs to another commit attempt: add nothing.
        return Ok(ExitCode::SUCCESS);
    }
    // The plain messages agents write get their trailers here; git decides the rest.
    let store = ctx.store()?;
    let configured = {
        let config = store.repo().config_snapshot();
        let plumbing = config.plumbing();
        plumbing.sections_by_name("trailer").is_some_and(|mut s| s.next().is_some())
            || config.string("core.commentChar").is_some()
            || config.string("core.commentString").is_some()
    };
    if !configured
        && let Ok(message) = std::fs::read_to_string(&file)
        && let Some(text) = append_trailers(&message, &[(AGENT_TRAILER, agent), (FRAME_TRAILER, frame)])
    {
        std::fs::write(&file, text).map_err(|e| CliError::internal(format!("cannot write {}: {e}", file.display())))?;
        return Ok(ExitCode::SUCCESS);
    }
    let workdir = store.workdir()?.to_path_buf();
    let out = Command::new("git")
        .current_dir(&workdir)
        .args(["interpret-trailers", "--in-place", "--if-exists", "replace"])
        .arg("--trailer")
        .arg(format!("{AGENT_TRAILER}: {agent}"))
        .arg("--trailer")
        .arg(format!("{FRAME_TRAILER}: {frame}"))
        .arg(&file)
        .output()
        .map_err(|e| CliError::internal(format!("cannot run git interpret-trailers: {e}")))?;
    if !out.status.success() {
        return Err(CliError::internal(format!(
            "git interpret-trailers failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(ExitCode::SUCCESS)
}

fn pre_push(ctx: &mut Context, mode: Mode, args: &[String]) -> Result<ExitCode, CliError> {
    let remote = args.first().cloned().unwrap_or_else(|| "origin".into());
    let mut input = String::new();
    use std::io::Read;
    let _ = std::io::stdin().read_to_string(&mut input);
    let zero = |s: &str| s.chars().all(|c| c == '0');
    let mut ranges = Vec::new();
    for line in input.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        // Only branches carry code; refs/mas/* and other refs are not gated.
        if f.len() < 4 || zero(f[1]) || !f[2].starts_with("refs/heads/") {
            continue;
        }
        if zero(f[3]) {
            ranges.push(vec![f[1].to_string(), "--not".to_string(), format!("--remotes={remote}")]);
        } else {
            ranges.push(vec![format!("{}..{}", f[3], f[1])]);
        }
    }
    let mut worst = exit::OK;
    for r in ranges {
        let report = check::check_range(ctx, &r, false)?;
        check::print_human(ctx, &report);
        if !report.clean() {
            worst = exit::BLOCKED;
        }
    }
    if mode == Mode::Warn && worst != exit::OK {
        ctx.warn("mas.gate is warn: pushing anyway");
        return Ok(ExitCode::SUCCESS);
    }
    Ok(ExitCode::from(worst))
}

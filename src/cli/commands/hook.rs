//! `git mas hook <name>`: what the installed git hooks run.
//!
//! - `pre-commit`: runs the gate on the staged change; with `mas.gate=enforce` a block or a
//!   fail-closed verdict aborts the commit; when allowed, leaves a receipt for `commit-msg`.
//! - `commit-msg <file>`: appends `Mas-Agent:` and `Mas-Frame:` trailers when `pre-commit` allowed
//!   this very commit (the receipt is bound to HEAD and the index file's state); plain messages
//!   in-process ([`append_trailers`]), the rest through `git interpret-trailers`.
//! - `pre-push`: replays the gate over the commits being pushed, like `git mas check`.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::exit;
use crate::cli::gating;
use git_mas::attention::gate::Verdict;
use git_mas::attention::gate_io::{self, AGENT_TRAILER, FRAME_TRAILER};
use git_mas::attention::hooks::{HookOutcome, Mode, Receipt, push_ranges};
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

fn receipt_path(ctx: &Context) -> Result<PathBuf, CliError> {
    Ok(ctx.store()?.repo().git_dir().join("mas-receipt"))
}

/// What binds a receipt to one commit attempt: HEAD and the index file's length and mtime.
fn binding(ctx: &Context) -> Result<String, CliError> {
    let store = ctx.store()?;
    let head = store.repo().head_id().map(|id| id.to_string()).unwrap_or_default();
    let index = store.repo().index_path();
    let stamp =
        std::fs::metadata(&index).ok().map(|m| format!("{}:{:?}", m.len(), m.modified().ok())).unwrap_or_default();
    Ok(format!("{head} {stamp}"))
}

/// Runs `hook`.
pub fn run(ctx: &mut Context, args: HookArgs) -> Result<ExitCode, CliError> {
    let mode = gating::mode(ctx)?;
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

/// What a hook exits with: the gate's `code` unless the mode lets git go on anyway.
fn finish(ctx: &Context, mode: Mode, code: u8, what: &str) -> ExitCode {
    match mode.outcome(code != exit::OK) {
        HookOutcome::Proceed | HookOutcome::Stop => ExitCode::from(code),
        HookOutcome::ProceedDespite => {
            ctx.warn(&format!("mas.gate is warn: {what} anyway"));
            ExitCode::SUCCESS
        }
    }
}

fn pre_commit(ctx: &mut Context, mode: Mode) -> Result<ExitCode, CliError> {
    let receipt = receipt_path(ctx)?;
    let _ = std::fs::remove_file(&receipt);
    let (caller, outcome) = gating::evaluate(ctx, &[])?;
    let verdict = gate_io::verdict_of(&outcome);
    let code = gating::report(ctx, &caller, &verdict);
    if let Verdict::Allow { frame, .. } = &verdict {
        let text = Receipt { agent: caller, frame: frame.clone(), binding: binding(ctx)? }.to_text();
        std::fs::write(&receipt, text)
            .map_err(|e| CliError::internal(format!("cannot write {}: {e}", receipt.display())))?;
    }
    Ok(finish(ctx, mode, code, "committing"))
}

fn commit_msg(ctx: &mut Context, file: Option<PathBuf>) -> Result<ExitCode, CliError> {
    let file = file.ok_or_else(|| CliError::usage("commit-msg needs the message file"))?;
    let receipt = receipt_path(ctx)?;
    let Ok(text) = std::fs::read_to_string(&receipt) else {
        return Ok(ExitCode::SUCCESS);
    };
    let _ = std::fs::remove_file(&receipt);
    // A receipt left by another commit attempt adds nothing.
    let Some(Receipt { agent, frame, .. }) = Receipt::for_attempt(&text, &binding(ctx)?) else {
        return Ok(ExitCode::SUCCESS);
    };
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
        && let Some(text) = append_trailers(&message, &[(AGENT_TRAILER, &agent), (FRAME_TRAILER, &frame)])
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
    let mut worst = exit::OK;
    for range in push_ranges(&input, &remote) {
        let report = gating::replay(ctx, &range, false)?;
        gating::print_listed(ctx, &report)?;
        if !report.clean() {
            worst = exit::BLOCKED;
        }
    }
    Ok(finish(ctx, mode, worst, "pushing"))
}

//! `git mas record append`: the plumbing under every higher-level command — append one signed
//! record to a chain. Later capabilities (focus, runs, proposals) write through the same path.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::json::record::AppendOut;
use crate::cli::output::JsonFlag;
use git_mas::store::{journal_ref, owner_of, validate_ref};

/// Low-level access to record chains (plumbing).
#[derive(Debug, clap::Subcommand)]
pub enum RecordCommand {
    Append(AppendArgs),
}

/// Append one signed record to a chain in refs/mas/.
///
/// The record is signed with the caller's key and added by compare-and-swap; a lost race is
/// re-read and retried, so concurrent writers never lose or duplicate a record. Without --ref the
/// record goes to the caller's journal, refs/mas/journal/<agent>. A per-agent chain
/// (refs/mas/journal/<a>, refs/mas/focus/<a>, refs/mas/runs/<r>/events/<a>, …/proposals/<a>) can
/// only be written by its agent; any other ref under refs/mas/ is shared.
///
/// With --json: {ref, commit, seq, attempts}.
#[derive(Debug, clap::Args)]
pub struct AppendArgs {
    /// The record's kind: a lower-case word such as `note`.
    #[arg(long)]
    pub kind: String,
    /// The payload, as JSON (default `null`).
    #[arg(long, default_value = "null")]
    pub payload: String,
    /// The chain to append to (a full ref under refs/mas/).
    #[arg(long = "ref", value_name = "REF")]
    pub refname: Option<String>,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs a `record` subcommand.
pub fn run(ctx: &mut Context, cmd: RecordCommand) -> Result<Outcome, CliError> {
    match cmd {
        RecordCommand::Append(args) => append(ctx, args),
    }
}

fn valid_kind(kind: &str) -> bool {
    let mut chars = kind.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && kind.len() <= 32
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
}

fn append(ctx: &mut Context, args: AppendArgs) -> Result<Outcome, CliError> {
    if !valid_kind(&args.kind) {
        return Err(CliError::usage(format!(
            "record kind {:?} is not a lower-case word (letters, digits, '-', '_', '.'; at most 32)",
            args.kind
        )));
    }
    let payload: serde_json::Value = serde_json::from_str(&args.payload)
        .map_err(|e| CliError::with_message(Kind::Usage, "--payload is not valid JSON", e))?;
    let caller = ctx.caller()?;
    let refname = args.refname.unwrap_or_else(|| journal_ref(&caller.name));
    validate_ref(&refname)?;
    if let Some(owner) = owner_of(&refname)
        && owner != caller.name
    {
        return Err(CliError::user(format!("{refname} belongs to agent '{owner}'; only it may write there"))
            .hinted("write to your own chain, or to a shared ref"));
    }
    let store = ctx.store()?;
    let appended = store
        .append(&refname, &caller.name, &caller.key, &args.kind, &[], |_| Ok(Some(payload.clone())))?
        .ok_or_else(|| CliError::internal("the append wrote nothing"))?;
    let out =
        AppendOut { refname, commit: appended.commit.to_string(), seq: appended.seq, attempts: appended.attempts };
    ctx.ui().emit(args.output, &out, |o| format!("{} {} #{}\n", o.commit, o.refname, o.seq))?;
    Ok(Outcome::Ok)
}

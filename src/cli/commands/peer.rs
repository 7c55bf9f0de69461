//! `git mas peer <kind>` (hidden): one hop of a built-in peer, the prompt on stdin, the reply on
//! stdout. `git mas converge` starts it for every `builtin:<kind>` peer; it needs no repository.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use git_mas::peers::BuiltinKind;
use git_mas::peers::builtin::reply;
use std::io::{Read, Write};
use std::process::ExitCode;

/// The largest prompt read, in bytes.
const MAX_PROMPT_BYTES: u64 = 16 << 20;

/// Answer one hop as a built-in peer: read the prompt on stdin, write the reply on stdout.
#[derive(Debug, clap::Args)]
pub struct PeerArgs {
    /// reference, greedy or faulty.
    #[arg(value_parser = parse_kind)]
    pub kind: BuiltinKind,
}

fn parse_kind(value: &str) -> Result<BuiltinKind, String> {
    BuiltinKind::lookup(value)
        .ok_or_else(|| format!("unknown built-in peer {value:?}; expected reference, greedy or faulty"))
}

/// Runs `peer`.
pub fn run(_ctx: &mut Context, args: PeerArgs) -> Result<ExitCode, CliError> {
    let mut prompt = Vec::new();
    std::io::stdin().lock().take(MAX_PROMPT_BYTES).read_to_end(&mut prompt)?;
    let text = reply(args.kind, &String::from_utf8_lossy(&prompt));
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

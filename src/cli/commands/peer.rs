//! `git mas peer <kind>` (hidden): one hop of a built-in peer, the prompt on stdin, the reply on
//! stdout. `git mas converge` and `git mas coordinate` start it for every `builtin:<kind>` peer.
//! A scalar hop needs no repository; a development hop is done with real `git mas` commands in
//! the hop's worktree (`git_mas::coordinate::builtin`).

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use git_mas::coordinate::builtin::act;
use git_mas::peers::BuiltinKind;
use git_mas::peers::builtin::reply;
use git_mas::peers::prompt::PromptHeader;
use git_mas::runtime::ProtocolPhase;
use std::io::Read;

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
pub fn run(ctx: &mut Context, args: PeerArgs) -> Result<Outcome, CliError> {
    let mut prompt = Vec::new();
    std::io::stdin().lock().take(MAX_PROMPT_BYTES).read_to_end(&mut prompt)?;
    let prompt = String::from_utf8_lossy(&prompt);
    let header = PromptHeader::parse(&prompt);
    let text = if header.phase() == Some(ProtocolPhase::Converge) && header.get("class") == Some("development") {
        // A development hop: do the work with real `git mas` commands in this (the hop's) worktree.
        let exe = std::env::current_exe()
            .map_err(|e| CliError::with_message(Kind::Internal, "cannot find the running git-mas executable", e))?;
        act(args.kind, &header, &exe, &std::env::current_dir()?)
    } else {
        reply(args.kind, &prompt)
    };
    ctx.ui().out(&text)?;
    Ok(Outcome::Ok)
}

//! `git mas completions <shell>`: shell completion scripts generated from the clap definitions.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use clap_complete::Shell;

/// Print a shell completion script for bash, zsh, fish, elvish or powershell.
///
/// Examples:
///   git mas completions bash > ~/.local/share/bash-completion/completions/git-mas
///   git mas completions zsh  > "${fpath[1]}/_git-mas"
///   git mas completions fish > ~/.config/fish/completions/git-mas.fish
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct CompletionsArgs {
    /// The shell to generate for.
    pub shell: Shell,
}

/// Runs `completions`.
pub fn run(ctx: &mut Context, args: CompletionsArgs) -> Result<Outcome, CliError> {
    let mut cmd = crate::cli::command();
    // Generated into a buffer and printed once: clap_complete panics on a write error, and a
    // closed pipe (`git mas completions bash | head`) must end the command quietly.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "git-mas", &mut script);
    ctx.ui().bytes(&script)?;
    Ok(Outcome::Ok)
}

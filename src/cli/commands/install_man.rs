//! `git mas install-man`: write man pages generated from the clap definitions.
//!
//! git turns `git mas --help` into `man git-mas`, so `--help` works only once a `git-mas.1` page is
//! where `man` looks. man-db derives its search path from `PATH` (`<dir>/bin` → `<dir>/share/man`),
//! so the default destination is `share/man/man1` beside the directory holding this binary — for
//! `cargo install`, `~/.cargo/share/man/man1`.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use std::path::PathBuf;

/// Install man pages (git-mas.1 and one per subcommand) so that `git mas --help` works.
///
/// By default they go to share/man/man1 beside the directory holding this binary, which `man`
/// searches when that directory is on PATH.
#[derive(Debug, clap::Args)]
pub struct InstallManArgs {
    /// Write the pages into this directory instead.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Print git-mas.1 to stdout instead of installing.
    #[arg(long, conflicts_with = "dir")]
    pub print: bool,
}

/// Runs `install-man`.
pub fn run(ctx: &mut Context, args: InstallManArgs) -> Result<Outcome, CliError> {
    let cmd = crate::cli::command().name("git-mas").bin_name("git-mas");
    if args.print {
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut page)?;
        ctx.ui().bytes(&page)?;
        return Ok(Outcome::Ok);
    }
    let dir = match args.dir {
        Some(d) => d,
        None => {
            let exe = std::env::current_exe()?;
            let bin = exe.parent().ok_or_else(|| CliError::internal("cannot locate this binary's directory"))?;
            bin.parent().unwrap_or(bin).join("share").join("man").join("man1")
        }
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::with_message(Kind::User, format!("cannot create {}", dir.display()), e))?;
    clap_mangen::generate_to(cmd, &dir)
        .map_err(|e| CliError::with_message(Kind::User, format!("cannot write man pages to {}", dir.display()), e))?;
    ctx.ui().line(&dir.join("git-mas.1").display().to_string())?;
    ctx.status("installed; `git mas --help` now opens the manual (if that directory is not searched, add its parent to MANPATH)");
    Ok(Outcome::Ok)
}

//! `git mas init`: create `.mas/roster` when missing; record nothing else.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::json::agent::InitOut;
use crate::cli::output::JsonFlag;
use git_mas::identity::ROSTER_PATH;

/// Prepare this repository for git-mas: create an empty roster (.mas/roster) if there is none.
///
/// Writes nothing to git and no refs; the roster is a file you review and commit like code.
///
/// With --json: {roster, created}.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    #[command(flatten)]
    pub output: JsonFlag,
}

const HEADER: &str = "# git-mas roster: one `name did:key` per line. Review and commit it like code;\n# records are verified against the roster committed on the integration branch.\n";

/// Runs `init`.
pub fn run(ctx: &mut Context, args: InitArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let workdir = store.workdir()?.to_path_buf();
    let path = workdir.join(ROSTER_PATH);
    let created = if path.exists() {
        // Validate it, so a broken roster is found now rather than at the first verification.
        store.roster()?;
        false
    } else {
        let dir = path.parent().expect("roster path has a parent");
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::with_message(Kind::Internal, format!("cannot create {}", dir.display()), e))?;
        std::fs::write(&path, HEADER)
            .map_err(|e| CliError::with_message(Kind::Internal, format!("cannot write {}", path.display()), e))?;
        true
    };
    let out = InitOut { roster: ROSTER_PATH.into(), created };
    ctx.ui().emit(args.output, &out, |o| {
        if o.created {
            format!("created {}\n", o.roster)
        } else {
            format!("{} already exists; nothing to do\n", o.roster)
        }
    })?;
    ctx.status("next steps:\n  git mas agent new <name>      create an agent's key and add it to the roster\n  git add .mas/roster && git commit -m 'Add agents'\n  git config mas.agent <name>   (or --agent / GIT_MAS_AGENT) to act as that agent");
    Ok(Outcome::Ok)
}

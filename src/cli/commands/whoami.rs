//! `git mas whoami`: which agent this shell acts as, and whether it can sign.

use crate::cli::Outcome;
use crate::cli::context::{Context, IdentitySource};
use crate::cli::error::CliError;
use crate::cli::json::agent::WhoamiOut;
use crate::cli::output::JsonFlag;
use git_mas::identity::AgentKey;

/// Show the agent you act as (--agent, else $GIT_MAS_AGENT, else `git config mas.agent`), its
/// did:key on the roster, and whether this machine holds the matching private key.
///
/// Exits 1 when no identity is set, the agent is not on the roster, or the key is missing or wrong.
///
/// With --json: {name, identity_from: flag_or_env|config, did, roster, key_did, can_sign}.
#[derive(Debug, clap::Args)]
pub struct WhoamiArgs {
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs `whoami`.
pub fn run(ctx: &mut Context, args: WhoamiArgs) -> Result<Outcome, CliError> {
    let (name, source) = ctx.caller_name()?;
    let roster = ctx.store()?.roster()?;
    ctx.warn_all(&roster.warnings);
    let entry = roster.get(&name).cloned();
    let key = AgentKey::load(&name);
    let key_did = key.as_ref().ok().map(AgentKey::did);
    let key_matches = matches!((&entry, &key_did), (Some(e), Some(d)) if &e.did == d);
    let out = WhoamiOut {
        name: name.clone(),
        identity_from: source,
        did: entry.as_ref().map(|e| e.did.clone()),
        roster: entry.as_ref().map(|e| e.source),
        key_did,
        can_sign: key_matches,
    };
    ctx.ui().emit(args.output, &out, |o| format!("{}\n", o.name))?;
    if !args.output.json {
        let from = match source {
            IdentitySource::FlagOrEnv => "--agent/GIT_MAS_AGENT",
            IdentitySource::Config => "git config mas.agent",
        };
        ctx.status(&format!("identity from {from}"));
        match &entry {
            Some(e) => ctx.status(&format!("roster: {}", e.did)),
            None => ctx.status("roster: not listed"),
        }
    }
    if entry.is_none() {
        return Err(CliError::user(format!("agent '{name}' is not on the roster"))
            .hinted(format!("create it with `git mas agent new {name}`")));
    }
    match key {
        Err(e) => Err(e.into()),
        Ok(_) if !key_matches => {
            Err(CliError::user(format!("the key for '{name}' on this machine does not match the roster's did:key")))
        }
        Ok(_) => Ok(Outcome::Ok),
    }
}

//! `git mas whoami`: which agent this shell acts as, and whether it can sign.

use crate::cli::context::{Context, IdentitySource};
use crate::cli::error::CliError;
use crate::cli::json::agent::WhoamiOut;
use crate::cli::output::JsonFlag;
use crate::cli::{Done, Outcome};
use git_mas::identity::AgentKey;

/// Show the agent you act as (--agent, else $GIT_MAS_AGENT, else — in team mode, run from a host
/// session's shell — that session's agent, else `git config mas.agent`), its did:key on the
/// roster, and whether this machine holds the matching private key.
///
/// Exits 1 when no identity is set, the agent is not on the roster, or the key is missing or wrong.
///
/// With --json: {name, identity_from: flag_or_env|config|session, did, roster, key_did, can_sign}.
#[derive(Debug, clap::Args)]
pub struct WhoamiArgs {
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Who the caller is, as far as it resolves: the output, and why the caller cannot sign (not on
/// the roster, no key, the wrong key), which ends the command as that error after the output.
#[derive(Debug)]
pub struct Whoami {
    /// What `--json` prints.
    pub out: WhoamiOut,
    /// Why the caller cannot act; `None` when it can.
    pub refused: Option<CliError>,
}

/// Runs `whoami`.
pub fn run(ctx: &mut Context, args: WhoamiArgs) -> Result<Outcome, CliError> {
    let done = whoami(ctx, &args)?;
    render(ctx, args.output, &done.value)?;
    match done.value.refused {
        Some(e) => Err(e),
        None => Ok(done.outcome),
    }
}

/// Resolves the caller's name, its roster entry and its key.
pub fn whoami(ctx: &Context, _args: &WhoamiArgs) -> Result<Done<Whoami>, CliError> {
    let (name, source) = ctx.caller_name()?;
    let roster = ctx.store()?.roster()?;
    ctx.warn_all(&roster.warnings);
    // A session agent (`alice.claude-3f2a9c1b`) is its principal's entry and key.
    let entry = roster.signer(&name).cloned();
    let key = AgentKey::load(entry.as_ref().map_or(name.as_str(), |e| e.name.as_str()));
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
    let refused = if entry.is_none() {
        Some(
            CliError::user(format!("agent '{name}' is not on the roster"))
                .hinted(format!("create it with `git mas agent new {name}`")),
        )
    } else {
        match key {
            Err(e) => Some(e.into()),
            Ok(_) if !key_matches => Some(CliError::user(format!(
                "the key for '{name}' on this machine does not match the roster's did:key"
            ))),
            Ok(_) => None,
        }
    };
    Ok(Done::ok(Whoami { out, refused }))
}

/// Prints the name (or the JSON), and where the identity came from on stderr.
fn render(ctx: &Context, output: JsonFlag, w: &Whoami) -> Result<(), CliError> {
    ctx.ui().emit(output, &w.out, |o| format!("{}\n", o.name))?;
    if !output.json {
        let from = match w.out.identity_from {
            IdentitySource::FlagOrEnv => "--agent/GIT_MAS_AGENT",
            IdentitySource::Config => "git config mas.agent",
            IdentitySource::Session => "the team-mode session whose shell runs this",
            IdentitySource::Principal => "the roster member whose key this machine holds (team mode)",
        };
        ctx.status(&format!("identity from {from}"));
        match &w.out.did {
            Some(did) => ctx.status(&format!("roster: {did}")),
            None => ctx.status("roster: not listed"),
        }
    }
    Ok(())
}

//! `git mas agent new|list`: create identities and show the roster.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::json::agent::{ListedAgent, NewAgentOut};
use crate::cli::output::JsonFlag;
use git_mas::identity::{AgentKey, EntrySource, ROSTER_PATH, append_to_roster, key, parse_roster, validate_name};
use std::fmt::Write as _;
use std::process::ExitCode;

/// Create agent identities and list the roster.
#[derive(Debug, clap::Subcommand)]
pub enum AgentCommand {
    New(NewArgs),
    List(ListArgs),
}

/// Create an agent: an ed25519 key (mode 0600, outside the repository) and a roster line.
///
/// Prints the agent's did:key on stdout and appends `name did:key` to .mas/roster in this
/// worktree. Commit .mas/roster so that every worktree and clone accepts the agent's records.
///
/// With --json: {name, did, key_path, reused_key, roster}.
#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The agent's name: lower-case letters, digits, '.', '_' and '-', at most 63 characters.
    pub name: String,
    /// Use the key this machine already has for NAME instead of refusing.
    #[arg(long)]
    pub reuse_key: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// List the roster: each agent, its did:key, whether it is committed, and whether this machine has
/// its private key.
///
/// With --json: an array of {name, did, source: committed|worktree_only, key_on_this_machine}.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs an `agent` subcommand.
pub fn run(ctx: &mut Context, cmd: AgentCommand) -> Result<ExitCode, CliError> {
    match cmd {
        AgentCommand::New(args) => new(ctx, args),
        AgentCommand::List(args) => list(ctx, args),
    }
}

fn new(ctx: &mut Context, args: NewArgs) -> Result<ExitCode, CliError> {
    validate_name(&args.name)?;
    let store = ctx.store()?;
    let workdir = store.workdir()?.to_path_buf();
    // Refuse on a broken roster or a name that is already taken, before creating any key.
    let roster = store.roster()?;
    let path = workdir.join(ROSTER_PATH);
    let local = match std::fs::read(&path) {
        Ok(bytes) => parse_roster(&bytes, ROSTER_PATH)?,
        Err(_) => Vec::new(),
    };
    if roster.get(&args.name).is_some() || local.iter().any(|(n, _)| n == &args.name) {
        return Err(CliError::user(format!("agent '{}' is already on the roster", args.name))
            .hinted("choose another name, or remove the line from .mas/roster first"));
    }
    let (agent_key, key_path, reused) = if args.reuse_key {
        let key_path = key::key_path(&args.name)?;
        (AgentKey::load(&args.name)?, key_path, true)
    } else {
        let k = AgentKey::generate()?;
        let p = k.save(&args.name)?;
        (k, p, false)
    };
    let did = agent_key.did();
    append_to_roster(&path, &args.name, &did)
        .map_err(|e| CliError::internal(format!("cannot write {}: {e}", path.display())))?;
    let out = NewAgentOut {
        name: args.name.clone(),
        did: did.clone(),
        key_path: key_path.clone(),
        reused_key: reused,
        roster: ROSTER_PATH.into(),
    };
    ctx.ui().emit(args.output, &out, |o| format!("{}\n", o.did))?;
    ctx.status(&format!(
        "{} agent '{}' ({}); key at {}\nnext: git add {ROSTER_PATH} && git commit -m 'Add agent {}'",
        if reused { "added" } else { "created" },
        args.name,
        did,
        key_path.display(),
        args.name
    ));
    Ok(ExitCode::SUCCESS)
}

fn list(ctx: &mut Context, args: ListArgs) -> Result<ExitCode, CliError> {
    let roster = ctx.store()?.roster()?;
    ctx.warn_all(&roster.warnings);
    let listed: Vec<ListedAgent> = roster
        .entries()
        .map(|e| ListedAgent {
            name: e.name.clone(),
            did: e.did.clone(),
            source: e.source,
            key_on_this_machine: AgentKey::load(&e.name).is_ok_and(|k| k.did() == e.did),
        })
        .collect();
    if listed.is_empty() && !args.output.json {
        ctx.status("the roster is empty; create an agent with `git mas agent new <name>`");
    }
    ctx.ui().emit(args.output, &listed, |listed| {
        let mut o = String::new();
        for a in listed {
            let source = match a.source {
                EntrySource::Committed => "committed",
                EntrySource::WorktreeOnly => "uncommitted",
            };
            let key = if a.key_on_this_machine { "key here" } else { "no key here" };
            let _ = writeln!(o, "{:<20} {}  {source}, {key}", a.name, a.did);
        }
        o
    })?;
    Ok(ExitCode::SUCCESS)
}

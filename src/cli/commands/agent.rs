//! `git mas agent new|list|sign-roster`: create identities, show the roster, and sign a change to
//! it ([`git_mas::identity::trail`] says why a roster change needs a signature).

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::json::agent::{ListedAgent, NewAgentOut, SignRosterOut};
use crate::cli::output::JsonFlag;
use git_mas::identity::trail::{RosterChange, TRAIL_TRAILER, Trail};
use git_mas::identity::{AgentKey, EntrySource, ROSTER_PATH, append_to_roster, key, parse_roster, validate_name};
use std::fmt::Write as _;

/// Create agent identities and list the roster.
#[derive(Debug, clap::Subcommand)]
pub enum AgentCommand {
    New(NewArgs),
    List(ListArgs),
    SignRoster(SignRosterArgs),
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

/// Sign a change to .mas/roster as the caller, printing its Mas-Roster-Signed trailer line.
///
/// A commit that changes .mas/roster must carry the signature of an agent on the roster as it
/// stood in the commit's first parent, or `git mas check` lists it as roster-unsigned. The
/// commit-msg hook signs for the committing agent; this is the way by hand, for a person adding a
/// teammate or for a commit already made:
///
///   git commit --trailer "$(git mas --agent alice agent sign-roster)"     # the staged change
///   git commit --amend --trailer "$(git mas --agent alice agent sign-roster --commit HEAD)"
///
/// Without --commit, signs the staged change against HEAD; with --commit REV, the change REV made
/// against its first parent (rewording REV keeps the signature valid: it covers the roster's blobs,
/// `git-mas roster v1 <old blob> <new blob>`, not the commit). Refused when there is no change, no
/// signature is needed (the first roster), or the caller is not on the base roster with the key
/// this machine holds.
///
/// With --json: {agent, old, new, signature, trailer}.
#[derive(Debug, clap::Args)]
pub struct SignRosterArgs {
    /// Sign the change this commit made instead of the staged one.
    #[arg(long, value_name = "REV")]
    pub commit: Option<String>,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// The change the index makes to `.mas/roster` against HEAD, `None` when it makes none.
pub(crate) fn staged_roster_change(ctx: &Context) -> Result<Option<RosterChange>, CliError> {
    let store = ctx.store()?;
    let old = match store.repo().head_id() {
        Ok(head) => store.roster_blob_in(head.detach())?,
        Err(_) => None,
    };
    Ok(store.roster_change(old, staged_roster(ctx)?)?)
}

/// The staged roster blob: from the index in-process, else (a split or sparse index) from git.
fn staged_roster(ctx: &Context) -> Result<Option<gix::ObjectId>, CliError> {
    let store = ctx.store()?;
    if let Some(found) = git_mas::attention::staged::staged_blob(store.repo(), ROSTER_PATH) {
        return Ok(found);
    }
    // Exit 1: nothing staged at that path.
    let (_, out) = git_mas::git::run_allowing(
        store.workdir()?,
        &["rev-parse", "--verify", "--quiet", &format!(":{ROSTER_PATH}")],
        &[1],
    )
    .map_err(|e| CliError::with_message(Kind::Internal, format!("cannot read the staged {ROSTER_PATH}"), e))?;
    Ok(std::str::from_utf8(&out).ok().and_then(|s| gix::ObjectId::from_hex(s.trim().as_bytes()).ok()))
}

fn sign_roster(ctx: &mut Context, args: SignRosterArgs) -> Result<Outcome, CliError> {
    let (caller, _) = ctx.caller_name()?;
    let store = ctx.store()?;
    let (change, what) = match &args.commit {
        Some(rev) => {
            let id = store.resolve_commit(rev)?.ok_or_else(|| CliError::user(format!("{rev:?} is not a commit")))?;
            (store.commit_roster_change(id)?, format!("commit {rev}"))
        }
        None => (staged_roster_change(ctx)?, "the staged change".to_string()),
    };
    let Some(change) = change else {
        return Err(CliError::user(format!("{what} does not change {ROSTER_PATH}; there is nothing to sign")));
    };
    if !change.needs_trail() {
        return Err(CliError::user(format!(
            "{what} makes the first roster: nobody is on the roster before it, so no signature is needed"
        )));
    }
    let before = change.before.as_ref().map_err(|e| {
        CliError::user(format!("the roster before {what} does not parse ({e}): nobody can be trusted to sign"))
    })?;
    let Some((_, did)) = before.iter().find(|(n, _)| *n == caller) else {
        return Err(CliError::user(format!("agent '{caller}' is not on the roster before {what}, so it cannot sign"))
            .hinted("an agent already on the roster signs: pass --agent NAME"));
    };
    let key = AgentKey::load(&caller)?;
    if key.did() != *did {
        return Err(CliError::user(format!(
            "the key this machine holds for '{caller}' is not the one the roster before {what} lists"
        )));
    }
    let trail = Trail::sign(&caller, &key, change.old.as_deref(), change.new.as_deref());
    let out = SignRosterOut {
        agent: caller,
        old: change.old.clone(),
        new: change.new.clone(),
        signature: trail.signature.clone(),
        trailer: trail.line(),
    };
    ctx.ui().emit(args.output, &out, |o| format!("{}\n", o.trailer))?;
    ctx.status(&format!(
        "add the line to the commit's message ({TRAIL_TRAILER} trailer): git commit --trailer \"<line>\""
    ));
    Ok(Outcome::Ok)
}

/// Runs an `agent` subcommand.
pub fn run(ctx: &mut Context, cmd: AgentCommand) -> Result<Outcome, CliError> {
    match cmd {
        AgentCommand::New(args) => new(ctx, args),
        AgentCommand::List(args) => list(ctx, args),
        AgentCommand::SignRoster(args) => sign_roster(ctx, args),
    }
}

fn new(ctx: &mut Context, args: NewArgs) -> Result<Outcome, CliError> {
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
    if let Some(principal) = roster.session_of_member(&args.name) {
        return Err(CliError::user(format!(
            "'{}' is shaped like a session of '{principal}' (`<member>.<host>-<8 hex>`): only {principal}'s key signs \
             for it",
            args.name
        ))
        .hinted("choose a name without a session's shape (no `.<host>-<8 hex>` ending)"));
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
        .map_err(|e| CliError::with_message(Kind::Internal, format!("cannot write {}", path.display()), e))?;
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
    Ok(Outcome::Ok)
}

fn list(ctx: &mut Context, args: ListArgs) -> Result<Outcome, CliError> {
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
    Ok(Outcome::Ok)
}

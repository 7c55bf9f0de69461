//! Who is calling: one rule for every command, every hook and the MCP server.
//!
//! [`resolve`] names the caller, first match wins:
//!
//! 1. an identity pinned for this process: `--agent` or `GIT_MAS_AGENT` ([`Source::FlagOrEnv`]);
//! 2. outside team mode, `git config mas.agent` ([`Source::Config`]);
//! 3. in team mode, `mas.agent` in this worktree's own config — a worktree dedicated to one agent,
//!    as `coordinate` and `worktree add` set it ([`Source::Config`]);
//! 4. in team mode, the host session the call belongs to ([`Source::Session`]): the session id a
//!    hook payload carries, else the one the host put in this process's environment
//!    ([`crate::hosts::PayloadFacts::session_env`]), each named `<principal>.<host>-<8 hex>`
//!    ([`session_agent`]); else the session whose recorded host process this process descends
//!    from ([`ancestry::find`]);
//! 5. in team mode, the principal ([`principal`]): the shared `mas.agent`, else the first roster
//!    member whose private key this machine holds ([`Source::Principal`]).
//!
//! [`signing_key`] then gives the name its key, refused unless the key is the one the roster
//! lists for the name (a session agent signs with its principal's key).
//!
//! Why here and not in `identity`: the rule reads team mode, the host table's session variables
//! and the recorded session processes, which live in this layer and the hosts layer; `identity`
//! stays the mechanics of names, keys and the roster, which this module uses.

use super::{ancestry, team};
use crate::hosts::{Env, Host};
use crate::identity::{AgentKey, KeyError, NameError, session_agent, validate_name};
use crate::store::{Store, StoreError};
use serde::{Deserialize, Serialize};

/// Where the caller's name came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `--agent` or `GIT_MAS_AGENT`.
    FlagOrEnv,
    /// `git config mas.agent` (in team mode, this worktree's own).
    Config,
    /// Team mode: the host session the call belongs to.
    Session,
    /// Team mode: no session, so the principal this machine's sessions sign for.
    Principal,
}

/// The caller, named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The agent's name.
    pub name: String,
    /// Where the name came from.
    pub source: Source,
}

/// What the call itself says about who makes it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ask<'a> {
    /// The identity pinned by `--agent` or `GIT_MAS_AGENT`.
    pub pinned: Option<&'a str>,
    /// The host and session id a hook payload carries.
    pub session: Option<(Host, &'a str)>,
}

/// Why the caller could not be named or given its key.
#[derive(Debug, thiserror::Error)]
pub enum CallerError {
    /// A name that is not a valid agent name.
    #[error("{0}")]
    Name(#[from] NameError),
    /// Outside team mode, nothing names the caller.
    #[error("no agent identity: this command must know who is calling")]
    NoIdentity,
    /// In team mode, no roster member's key is on this machine.
    #[error("no roster member's key is on this machine, so no session can sign its claims")]
    NoPrincipal,
    /// The name is not on the roster (nor is its principal).
    #[error("agent '{name}' is not on the roster (.mas/roster)")]
    NotOnRoster {
        /// The name.
        name: String,
    },
    /// The key on this machine is not the one the roster lists.
    #[error("the private key for '{name}' on this machine ({here}) is not the one on the roster ({listed})")]
    WrongKey {
        /// The name.
        name: String,
        /// The key's did:key here.
        here: String,
        /// The roster's.
        listed: String,
    },
    /// The key could not be loaded.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The roster could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl CallerError {
    /// What the user can do about it, when there is something specific to say.
    pub fn remedy(&self) -> Option<String> {
        match self {
            CallerError::Name(_) => None,
            CallerError::NoIdentity => {
                Some("pass --agent NAME, set GIT_MAS_AGENT, or run `git config mas.agent NAME`".into())
            }
            CallerError::NoPrincipal => {
                Some("run `git mas init --team` here (it creates this machine's member), then retry".into())
            }
            CallerError::NotOnRoster { name } => {
                Some(format!("create it with `git mas agent new {name}` and commit .mas/roster"))
            }
            CallerError::WrongKey { .. } => Some(
                "every record you wrote with it would be rejected as a spoof; use the right GIT_MAS_KEY_DIR".into(),
            ),
            CallerError::Key(e) => e.remedy(),
            CallerError::Store(e) => e.remedy(),
        }
    }
}

/// The caller of this call, by the module's rule.
pub fn resolve(store: &Store, ask: &Ask<'_>, env: &dyn Env) -> Result<Caller, CallerError> {
    if let Some(caller) = identified(store, ask, env)? {
        return Ok(caller);
    }
    if !team::enabled(store) {
        return Err(CallerError::NoIdentity);
    }
    let (name, source) = principal(store)?;
    Ok(Caller { name, source })
}

/// The caller by rules 1 to 4: `None` when only the principal (or, outside team mode, nothing)
/// would name it.
pub fn identified(store: &Store, ask: &Ask<'_>, env: &dyn Env) -> Result<Option<Caller>, CallerError> {
    let named = |name: String, source| -> Result<Option<Caller>, CallerError> {
        validate_name(&name)?;
        Ok(Some(Caller { name, source }))
    };
    if let Some(name) = ask.pinned.filter(|n| !n.is_empty()) {
        return named(name.to_string(), Source::FlagOrEnv);
    }
    if !team::enabled(store) {
        return match store.config_string("mas.agent").filter(|n| !n.is_empty()) {
            Some(name) => named(name, Source::Config),
            None => Ok(None),
        };
    }
    if let Some(name) = store.worktree_config_string("mas.agent").filter(|n| !n.is_empty()) {
        return named(name, Source::Config);
    }
    match session(store, ask, env)? {
        Some(name) => named(name, Source::Session),
        None => Ok(None),
    }
}

/// The team-mode session a call belongs to, by rule 4 of the module docs; `None` outside any.
fn session(store: &Store, ask: &Ask<'_>, env: &dyn Env) -> Result<Option<String>, CallerError> {
    let given = ask.session.filter(|(_, id)| !id.is_empty()).map(|(host, id)| (host, id.to_string()));
    let from_env = || {
        Host::ALL.into_iter().find_map(|host| {
            let id = env.var(host.facts().payload.session_env?)?;
            Some((host, id.to_string_lossy().into_owned()))
        })
    };
    match given.or_else(from_env) {
        Some((host, id)) => {
            let (principal, _) = principal(store)?;
            Ok(Some(session_agent(&principal, host.session_name(), &id)?))
        }
        None => Ok(ancestry::find(store)),
    }
}

/// The principal whose key signs for this machine's sessions: `mas.agent` from the shared config
/// ([`Source::Config`]), else the first roster entry (by name) whose private key this machine holds
/// ([`Source::Principal`]).
pub fn principal(store: &Store) -> Result<(String, Source), CallerError> {
    if let Some(name) = store.config_string("mas.agent").filter(|n| !n.is_empty()) {
        validate_name(&name)?;
        return Ok((name, Source::Config));
    }
    let roster = store.roster()?;
    roster
        .entries()
        .find(|e| AgentKey::load(&e.name).is_ok_and(|k| k.did() == e.did))
        .map(|e| (e.name.clone(), Source::Principal))
        .ok_or(CallerError::NoPrincipal)
}

/// `name`'s signing key, refused unless it is the one the roster lists for the name or, for a
/// session agent (`alice.claude-3f2a9c1b`), for its principal. Also returns the roster's warnings.
pub fn signing_key(store: &Store, name: &str) -> Result<(AgentKey, Vec<String>), CallerError> {
    let roster = store.roster()?;
    let Some(entry) = roster.signer(name) else {
        return Err(CallerError::NotOnRoster { name: name.to_string() });
    };
    let key = AgentKey::load(&entry.name)?;
    if key.did() != entry.did {
        return Err(CallerError::WrongKey { name: name.to_string(), here: key.did(), listed: entry.did.clone() });
    }
    Ok((key, roster.warnings))
}

/// The identity a commit in team mode is made as: the caller by rules 1 to 4, `None` when only
/// the principal would name it (no pinned identity and no session: who committed is not known).
/// A session whose principal this machine cannot name is not known either.
pub fn committer(store: &Store, ask: &Ask<'_>, env: &dyn Env) -> Result<Option<String>, CallerError> {
    match identified(store, ask, env) {
        Ok(caller) => Ok(caller.map(|c| c.name)),
        Err(CallerError::NoPrincipal) => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
#[path = "caller_tests.rs"]
mod tests;

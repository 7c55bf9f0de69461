//! Errors as the user sees them: a message, its causes, a hint, and an exit code.

use super::context::Context;
use super::exit;
use git_mas::identity::{KeyError, NameError, RosterError};
use git_mas::store::StoreError;

/// Who is at fault, which decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The input or the repository's state (exit 1).
    User,
    /// Us or git (exit 3).
    Internal,
}

/// An error with an optional hint on what to do next.
#[derive(Debug)]
pub struct CliError {
    kind: Kind,
    message: String,
    causes: Vec<String>,
    hint: Option<String>,
    broken_pipe: bool,
}

impl CliError {
    /// A user error.
    pub fn user(message: impl Into<String>) -> Self {
        CliError { kind: Kind::User, message: message.into(), causes: Vec::new(), hint: None, broken_pipe: false }
    }

    /// An internal error.
    pub fn internal(message: impl Into<String>) -> Self {
        CliError { kind: Kind::Internal, ..Self::user(message) }
    }

    /// Adds a hint.
    pub fn hinted(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    fn with_causes(mut self, err: &dyn std::error::Error) -> Self {
        let mut source = err.source();
        while let Some(s) = source {
            let text = s.to_string();
            if !self.message.contains(&text) {
                self.causes.push(text);
            }
            source = s.source();
        }
        self
    }

    /// The process exit code.
    pub fn exit_code(&self) -> u8 {
        match self.kind {
            Kind::User => exit::USER,
            Kind::Internal => exit::INTERNAL,
        }
    }

    /// Whether this is a write to a closed pipe (exit quietly, like other Unix tools).
    pub fn is_broken_pipe(&self) -> bool {
        self.broken_pipe
    }

    /// Prints to stderr.
    pub fn print(&self, ctx: &Context) {
        let label = ctx.paint("error:", "1;31");
        eprintln!("{label} {}", self.message);
        for cause in &self.causes {
            eprintln!("  caused by: {cause}");
        }
        if let Some(hint) = &self.hint {
            eprintln!("{} {hint}", ctx.paint("hint:", "1;36"));
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        let broken_pipe = e.kind() == std::io::ErrorKind::BrokenPipe;
        CliError { broken_pipe, ..CliError::internal(format!("i/o error: {e}")) }
    }
}

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        let base = match &e {
            StoreError::NotARepository { .. } => CliError::user(e.to_string())
                .hinted("run this inside a git repository, or pass -C <path>; `git init` creates one"),
            StoreError::Bare { .. } => {
                CliError::user(e.to_string()).hinted("run it in a clone or a worktree of this repository")
            }
            StoreError::BadRefName { .. } => CliError::user(e.to_string()),
            StoreError::Roster(r) => return CliError::from(r.clone()),
            StoreError::SeqOverflow { .. } => CliError::user(e.to_string()),
            StoreError::StaleLock { lock, .. } => CliError::user(e.to_string()).hinted(format!(
                "if no git-mas or git command is still running here, remove it: `git mas doctor --fix` (or `rm {}`)",
                lock.display()
            )),
            StoreError::UnreadableRef { name, .. } => CliError::user(e.to_string())
                .hinted(format!("inspect it with `git show-ref {name}`; `git update-ref -d {name}` removes it")),
            StoreError::TooManyRetries { .. } | StoreError::Git { .. } | StoreError::Io { .. } => {
                CliError::internal(e.to_string())
            }
        };
        base.with_causes(&e)
    }
}

impl From<RosterError> for CliError {
    fn from(e: RosterError) -> Self {
        CliError::user(format!("invalid roster: {e}"))
            .hinted("each roster line is `name did:key:z…`; fix the line, or remove it and run `git mas agent new`")
    }
}

impl From<NameError> for CliError {
    fn from(e: NameError) -> Self {
        CliError::user(e.to_string())
    }
}

impl From<KeyError> for CliError {
    fn from(e: KeyError) -> Self {
        let hint = match &e {
            KeyError::Missing { name, .. } => Some(format!(
                "this machine has no key for '{name}'; set GIT_MAS_KEY_DIR to where it is, or create a new agent with `git mas agent new`"
            )),
            KeyError::TooOpen { path, .. } => Some(format!("chmod 600 {}", path.display())),
            KeyError::Exists { name, .. } => {
                Some(format!("pass --reuse-key to put the existing key for '{name}' on this roster"))
            }
            _ => None,
        };
        let kind = match e {
            KeyError::Random(_) | KeyError::Io { .. } => Kind::Internal,
            _ => Kind::User,
        };
        let mut err = CliError { kind, ..CliError::user(e.to_string()) }.with_causes(&e);
        err.hint = hint;
        err
    }
}

impl From<git_mas::run::RunError> for CliError {
    fn from(e: git_mas::run::RunError) -> Self {
        use git_mas::run::RunError;
        let e = match e {
            RunError::Store(s) => return CliError::from(s),
            other => other,
        };
        let base = match &e {
            RunError::Store(_) => CliError::internal(e.to_string()),
            RunError::NoSuchRun { .. } => CliError::user(e.to_string()).hinted("list the runs with `git mas run list`"),
            RunError::Exists { .. } => CliError::user(e.to_string()).hinted("choose another --id, or omit it"),
            RunError::Landed { .. } => CliError::user(e.to_string()).hinted("start a new run for further work"),
            RunError::Aborted { .. } => CliError::user(e.to_string()).hinted("start a new run for further work"),
            RunError::NoBranch { .. } => CliError::user(e.to_string())
                .hinted("commit something on the integration branch first, or name it with `git config mas.branch`"),
            RunError::BadId { .. } | RunError::Unreadable { .. } | RunError::BadSetting(_) => {
                CliError::user(e.to_string())
            }
        };
        base.with_causes(&e)
    }
}

impl From<git_mas::pool::PoolError> for CliError {
    fn from(e: git_mas::pool::PoolError) -> Self {
        use git_mas::pool::PoolError;
        match e {
            PoolError::Store(s) => CliError::from(s),
            PoolError::Run(r) => CliError::from(r),
            PoolError::WorktreeExists { ref agent, ref run, .. } => {
                let hint = format!("work in it, or remove it first: `git mas worktree remove {agent} --run {run}`");
                CliError::user(e.to_string()).hinted(hint)
            }
            PoolError::PathNotEmpty { .. } => {
                CliError::user(e.to_string()).hinted("choose another path, or empty that directory first")
            }
            PoolError::PathNotUtf8 { .. } => CliError::user(e.to_string()).hinted("use a path that is valid UTF-8"),
            PoolError::UnsafeTreeEntry { .. } => CliError::user(e.to_string())
                .hinted("the proposal's tree cannot be checked out safely; re-propose it without that entry"),
            PoolError::CheckSpawn { .. } => CliError::user(e.to_string()).with_causes(&e),
            PoolError::AggregateWaiting { .. } => CliError::user(e.to_string()).hinted(
                "wait for the remaining endorsements (`git mas tally`), or land the leader alone without --aggregate",
            ),
            PoolError::NoProposalAtQuorum { .. } | PoolError::QuorumNotReached { .. } => {
                CliError::user(e.to_string()).hinted("`git mas tally` shows each proposal's valid endorsements")
            }
            PoolError::CheckFailed { ref agent, .. } => CliError::user(e.to_string())
                .hinted(format!("re-check with `git mas endorse {agent}`, or re-propose with `git mas propose`")),
            PoolError::DependencyInconsistent { .. } => CliError::user(e.to_string())
                .hinted("re-propose on the run's base, or land the proposal it depends on first"),
            PoolError::NoBranch { .. } => CliError::user(e.to_string())
                .hinted("commit something on the integration branch first, or name it with `git config mas.branch`"),
            PoolError::NothingToLand { .. } => CliError::user(e.to_string()),
            PoolError::CheckoutCannotFollow { .. } => {
                CliError::user(e.to_string()).hinted("commit or stash the changes in that checkout, then land again")
            }
            PoolError::LandedRefExists { ref refname, .. } => CliError::user(e.to_string())
                .hinted(format!("inspect it with `git show-ref {refname}`; `git update-ref -d {refname}` removes it")),
            other => {
                let text = other.to_string();
                CliError::internal(text).with_causes(&other)
            }
        }
    }
}

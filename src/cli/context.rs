//! What every command needs: where it runs, who calls it, how to print.

use super::error::{CliError, Kind};
use super::output::{ColorChoice, Ui};
use git_mas::attention::caller::{self, Ask, CallerError};
use git_mas::hosts::ProcessEnv;
use git_mas::identity::AgentKey;
use git_mas::store::{Memory, Store};
use std::path::PathBuf;

pub use git_mas::attention::caller::Source as IdentitySource;

/// The caller, resolved and checked against the roster.
pub struct Caller {
    /// Agent name.
    pub name: String,
    /// Its private key.
    pub key: AgentKey,
}

/// Per-invocation state.
pub struct Context {
    dir: Option<PathBuf>,
    agent: Option<String>,
    ui: Ui,
    store: std::cell::OnceCell<Store>,
    /// What an earlier context's store learned, handed to this one's store when it opens.
    memory: std::cell::Cell<Option<Memory>>,
}

/// Refuses a `mas.branch` that is not a valid branch name (`../../etc`, `a..b`, `x.lock`): every
/// command reads the roster from that branch, and git would only fail later with a ref-format
/// error that says nothing about the setting.
fn check_branch_setting(store: &Store) -> Result<(), CliError> {
    let Some(branch) = store.config_string("mas.branch").filter(|b| !b.is_empty()) else { return Ok(()) };
    let full = format!("refs/heads/{branch}");
    if gix::refs::FullName::try_from(full.as_str()).is_ok() && !branch.starts_with('-') {
        return Ok(());
    }
    Err(CliError::user(format!("git config mas.branch is {branch:?}, which is not a valid branch name"))
        .hinted("set it to the integration branch's short name, e.g. `git config mas.branch main`, or remove it with `git config --unset mas.branch`"))
}

impl Context {
    /// Builds the context from the global flags.
    pub fn new(dir: Option<PathBuf>, agent: Option<String>, color: ColorChoice) -> Self {
        Context {
            dir,
            agent: agent.filter(|a| !a.is_empty()),
            ui: Ui::new(color),
            store: std::cell::OnceCell::new(),
            memory: std::cell::Cell::new(None),
        }
    }

    /// The context of a command run inside another process's work (the MCP server's tool calls):
    /// its directory and caller fixed by the host, its output going to `ui`. Its store is opened
    /// fresh (repository handle, config, refs) and given `memory`, what the previous call's store
    /// learned ([`Memory`]: caches keyed by exact ref tips and roster bytes); get it back with
    /// [`Context::into_memory`].
    pub fn with_ui(dir: PathBuf, agent: String, ui: Ui, memory: Option<Memory>) -> Self {
        Context {
            dir: Some(dir),
            agent: Some(agent),
            ui,
            store: std::cell::OnceCell::new(),
            memory: std::cell::Cell::new(memory),
        }
    }

    /// What this context's store learned (or the memory it was given, when no store was opened).
    pub fn into_memory(self) -> Option<Memory> {
        match self.store.into_inner() {
            Some(store) => Some(store.into_memory()),
            None => self.memory.into_inner(),
        }
    }

    /// The directory the command runs in: `-C PATH` resolved against the process's directory
    /// (as `git -C` does by changing into it), else the current directory. Always absolute:
    /// repository discovery from a relative path with `..` components (`-C ../repo.git`) is not
    /// reliable, so it is never handed one.
    pub fn cwd(&self) -> Result<PathBuf, CliError> {
        let current = || {
            std::env::current_dir()
                .map_err(|e| CliError::with_message(Kind::Internal, "cannot read the current directory", e))
        };
        match &self.dir {
            Some(d) if d.is_absolute() => Ok(d.clone()),
            Some(d) => {
                let joined = current()?.join(d);
                // Canonical when it exists (what `cd` would give); else as joined, for the error.
                Ok(joined.canonicalize().unwrap_or(joined))
            }
            None => current(),
        }
    }

    /// The repository's store, opened once.
    pub fn store(&self) -> Result<&Store, CliError> {
        if let Some(store) = self.store.get() {
            return Ok(store);
        }
        let cwd = self.cwd()?;
        if !cwd.is_dir() {
            return Err(CliError::user(format!("{} is not a directory", cwd.display())));
        }
        let mut store = Store::discover(&cwd)?;
        if let Some(memory) = self.memory.take() {
            store = store.remember(memory);
        }
        check_branch_setting(&store)?;
        let _ = self.store.set(store);
        self.store.get().ok_or_else(|| CliError::internal("the repository could not be opened"))
    }

    /// The identity pinned by `--agent` or `GIT_MAS_AGENT`, if any (no repository read).
    pub fn pinned_agent(&self) -> Option<&str> {
        self.agent.as_deref()
    }

    /// The caller's name and where it came from, without loading the key ([`caller::resolve`]:
    /// one rule for every command, hook and the MCP server).
    pub fn caller_name(&self) -> Result<(String, IdentitySource), CliError> {
        let ask = Ask { pinned: self.agent.as_deref(), session: None };
        if let Some(name) = &ask.pinned {
            // A pinned name needs no repository to be named.
            git_mas::identity::validate_name(name)?;
            return Ok((name.to_string(), IdentitySource::FlagOrEnv));
        }
        let who = caller::resolve(self.store()?, &ask, &ProcessEnv)?;
        Ok((who.name, who.source))
    }

    /// In team mode, the host session whose shell runs this command (`--agent` aside): the
    /// session id the host put in the shell's environment, else the session whose recorded host
    /// process this one descends from ([`caller::identified`]). `None` outside team mode, in a
    /// worktree pinned to one agent, and outside any session.
    pub fn session_caller(&self) -> Result<Option<String>, CliError> {
        let found = caller::identified(self.store()?, &Ask::default(), &ProcessEnv)?;
        Ok(found.filter(|c| c.source == IdentitySource::Session).map(|c| c.name))
    }

    /// The caller with its key, refused unless the key is the one the roster lists for the name.
    pub fn caller(&self) -> Result<Caller, CliError> {
        let (name, _) = self.caller_name()?;
        self.caller_as(name)
    }

    /// `name` (the caller, or a session agent derived for it) with its key, refused unless the key
    /// is the one the roster lists for the name or its principal ([`caller::signing_key`]).
    pub fn caller_as(&self, name: String) -> Result<Caller, CliError> {
        let (key, warnings) = caller::signing_key(self.store()?, &name)?;
        self.warn_all(&warnings);
        Ok(Caller { name, key })
    }

    /// Standard output and standard error.
    pub fn ui(&self) -> &Ui {
        &self.ui
    }

    /// Prints a warning on stderr.
    pub fn warn(&self, message: &str) {
        self.ui.warn(message);
    }

    /// Prints every warning.
    pub fn warn_all(&self, messages: &[String]) {
        for m in messages {
            self.warn(m);
        }
    }

    /// Prints a status line on stderr.
    pub fn status(&self, message: &str) {
        self.ui.status(message);
    }

    /// Wraps `text` in an ANSI color when color is on.
    pub fn paint(&self, text: &str, code: &str) -> String {
        self.ui.paint(text, code)
    }
}

impl From<CallerError> for CliError {
    fn from(e: CallerError) -> Self {
        match e {
            CallerError::Store(e) => CliError::from(e),
            CallerError::Key(e) => CliError::from(e),
            CallerError::Name(e) => CliError::from(e),
            e => {
                let hint = e.remedy();
                let mut err = CliError::new(Kind::User, e);
                err.extend_hints(hint);
                err
            }
        }
    }
}

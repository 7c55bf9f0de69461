//! `git mas init --team`: the one setup of team mode, and its undo.
//!
//! Team mode keeps any number of coding-agent sessions in one checkout off each other's files
//! with nothing asked of a session. What it needs is spread over a dozen places — a roster member
//! whose key this machine holds, `mas.agent` naming it (the principal every session acts for), the
//! git hooks, each host's hook file, MCP registration and skills, the gate's mode, a frame — and
//! each of them has a command of its own. [`setup`] does them all in one call, planned before
//! anything is written, and [`undo`] takes every one of them back, byte for byte.
//!
//! What [`setup`] does, in this order:
//!
//! 1. **The member.** The roster entry whose private key this machine holds (the one
//!    `mas.agent` names when there are several); with `--name NAME`, that one. When there is none,
//!    a key is created (or the key this machine already has for the name is used) and
//!    `name did:key` appended to `.mas/roster` (created with `git mas init`'s header when
//!    missing). The name: `--name`, else `git config mas.agent`, else `$USER` (else `$LOGNAME`, git's `user.email` or `user.name`, the OS account) made a valid agent
//!    name ([`crate::identity::name_from`]).
//! 2. **The git hooks** (pre-commit, commit-msg, pre-push; `git mas hooks install`).
//! 3. **Each host** named with `--host` (or `all`), else each detected ([`crate::hosts::detect`]):
//!    its hook file with the pre-tool, post-tool and session-end entries
//!    ([`crate::hosts::hooks`]), its MCP registration ([`crate::hosts::mcp`]; goose has none) and
//!    the skills ([`crate::hosts::skills`]). For codex, also its trust of the project and of each
//!    of those hooks, in the user's `config.toml` ([`crate::hosts::trust`]): codex skips an
//!    untrusted hook without a word, so without it a codex session would edit unprotected. Undo
//!    takes exactly those entries back, keeping what codex wrote in the file since.
//! 4. **The configuration**, in the repository's shared config: `mas.agent` (only when unset),
//!    `mas.gate=enforce`, `mas.team=true`.
//! 5. **A frame**, published as the member when none is.
//!
//! Everything is planned first — the roster, every file's new bytes, every key's value — so a
//! refusal (a settings file that is not valid JSON, a skills folder with other content, a name
//! another key holds) writes nothing at all. A file several steps write (gemini's
//! `.gemini/settings.json` holds its hooks and its MCP server) is planned once, each step on top
//! of the one before. Then each change is made through the [`journal`]: the bytes before are
//! saved and the manifest that names them replaced before the change, so that [`undo`] can give
//! them back whatever happened since. Run again, the setup finds everything in place and writes
//! nothing, not even the manifest.
//!
//! What a SIGKILL leaves, at any instant of [`setup`] (each write is a flushed temporary file
//! renamed over its target, so no file is ever half written):
//!
//! | killed | what is left | what completes it |
//! |---|---|---|
//! | while planning | nothing changed | — |
//! | after the key was created, before the roster names it | a key file (`<key dir>/<name>.key`, whole: written to a temporary and linked) | the next setup uses it; undo leaves it (not a repository file) |
//! | while the previous bytes' blob or the manifest is written | the manifest as it was, and perhaps `mas-setup/.….git-mas-<pid>.tmp` | removed by the next setup or undo |
//! | after the manifest names a change, before the change | that file, folder or key still as before | undo finds it as it was (nothing to do); setup makes the change |
//! | while a file is written | the file as before, and perhaps `.<name>.git-mas-<pid>.tmp` beside it | the next setup or undo removes that temporary; `git mas doctor` lists one beside a host's file |
//! | inside `git config` | the key as before or as set, and perhaps `config.lock` in the git dir | undo or setup, once the lock is removed (`git config` names it) |
//! | while the frame is published | no frame, or the frame; perhaps a lock under `refs/mas/` | the next setup publishes it (`git mas doctor --fix` removes the lock) |
//! | any time | `mas-setup/lock` with the id of a process that is gone | taken over by the next setup or undo |
//!
//! And at any instant of [`undo`] (it changes nothing before it has checked every file and key):
//!
//! | killed | what is left | what completes it |
//! |---|---|---|
//! | before its first change | everything as setup left it | undo again |
//! | between two changes (a file restored or removed, a folder removed, a key restored) | the changes made so far, the manifest whole | undo again: what is already as before is left, the rest restored |
//! | while a file is written back | the file as setup left it or as before, perhaps a temporary beside it | undo again (it removes the temporary) |
//! | after the blobs were removed, before the manifest | a manifest whose every change is undone | undo again removes it |
//! | after the manifest was removed | an empty `mas-setup/` (or one holding only the lock) | nothing to do: undo says there is no setup; the next setup reuses the folder |
//!
//! Undo never deletes a private key the setup created (a key is not a repository file, and
//! records signed with it stay in history) and leaves the frame (`refs/mas` is history). A file
//! or key changed since the setup (its bytes are neither the setup's nor the ones before) is
//! refused, named, with nothing undone, unless `force`: then the bytes before the setup win. The
//! one exception is codex's `config.toml`, a file of the user's that codex itself writes (a
//! project trusted at its prompt): changed since, only the setup's trust entries in it are put
//! back as they were.

pub mod journal;
mod undo;

pub use undo::{ConfigRestored, FileRestored, TeamUndo, UndoneConfig, UndoneDir, UndoneFile, undo};

use crate::attention::frame::{self, FrameError, InputFiles, Published};
use crate::attention::git_hooks;
use crate::hosts::files::{HostHookError, write_target};
use crate::hosts::hooks as host_hooks;
use crate::hosts::mcp::{self, HostMcpError};
use crate::hosts::plan::Plan as FilePlan;
use crate::hosts::skills::{self, SkillsError};
use crate::hosts::{Detection, Env, Host, Scope};
use crate::identity::{AgentKey, KeyError, NameError, ROSTER_PATH, key, name_from, validate_name, with_entry};
use crate::store::{Store, StoreError};
use journal::{Journal, Part};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The configuration key that says team mode is on.
pub const TEAM_KEY: &str = "mas.team";
/// The message of the commit the setup proposes.
pub const COMMIT_MESSAGE: &str = "Set up git-mas team mode";

/// Which hosts to set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hosts {
    /// Each host detected in the project ([`crate::hosts::detect`]).
    Detect,
    /// These (`--host`, `--host all`).
    Named(Vec<Host>),
}

/// What [`setup`] is asked.
#[derive(Debug, Clone)]
pub struct Options {
    /// The member's name when one is created (`--name`).
    pub name: Option<String>,
    /// The hosts.
    pub hosts: Hosts,
}

/// Where the member's name came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NameSource {
    /// An entry of the roster whose key this machine holds.
    Roster,
    /// `--name`.
    Flag,
    /// `git config mas.agent`.
    Config,
    /// `$USER`.
    User,
}

/// This machine's roster member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    /// Its name.
    pub name: String,
    /// Its did:key.
    pub did: String,
    /// Where the name came from.
    pub source: NameSource,
    /// Whether this setup appended it to `.mas/roster`.
    pub added: bool,
    /// Its private key.
    pub key_path: PathBuf,
    /// Whether this setup created the key.
    pub key_created: bool,
}

/// How a host came to be set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Chosen {
    /// Named with `--host` (or `all`).
    Named,
    /// Detected.
    Detected,
}

/// One host set up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostSetup {
    /// The host.
    pub host: Host,
    /// How it was chosen.
    pub chosen: Chosen,
    /// Why it counts as used here (empty when named and not detected).
    pub detected: Vec<Detection>,
    /// What the host needs besides its files (trust, a manual step).
    pub notes: Vec<String>,
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChange {
    /// It did not exist.
    Created,
    /// Its bytes (or its mode) changed.
    Updated,
    /// It was already as the setup writes it.
    Unchanged,
}

/// One file the setup wrote or found in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSetup {
    /// The file (the final target of a symbolic link).
    pub path: PathBuf,
    /// What it is (a host's settings file may hold its hooks and its MCP server).
    pub parts: Vec<Part>,
    /// The hosts it is for.
    pub hosts: Vec<Host>,
    /// What happened to it.
    pub change: FileChange,
}

/// What happened to a configuration key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfigChange {
    /// Set to the value.
    Set,
    /// It had the value already.
    Unchanged,
    /// It has another value, which stays (`mas.agent` is set only when unset).
    Kept,
}

/// One configuration key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigSetup {
    /// The key.
    pub key: String,
    /// Its value now.
    pub value: String,
    /// Its value in the repository's shared config before (`None`: unset there).
    pub previous: Option<String>,
    /// What happened.
    pub change: ConfigChange,
}

/// The frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameSetup {
    /// Whether this setup published it (else one was published already).
    pub published: bool,
    /// Its hash.
    pub hash: String,
    /// Its record's commit.
    pub commit: Option<String>,
}

/// The commit that shares the setup with the team.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitSetup {
    /// The paths to add, relative to the top of the working tree.
    pub paths: Vec<String>,
    /// The whole command.
    pub command: String,
    /// Whether the roster change needs a signature of an agent on the committed roster (a member
    /// added to a roster that has entries).
    pub needs_roster_signature: bool,
}

/// What [`setup`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamSetup {
    /// The top of the working tree.
    pub top: PathBuf,
    /// This machine's member.
    pub member: Member,
    /// The hosts set up.
    pub hosts: Vec<HostSetup>,
    /// Every file written or found in place.
    pub files: Vec<FileSetup>,
    /// Every configuration key.
    pub config: Vec<ConfigSetup>,
    /// The frame.
    pub frame: FrameSetup,
    /// The record undo reads.
    pub manifest: PathBuf,
    /// What to commit; `None` when every file the setup wrote is committed.
    pub commit: Option<CommitSetup>,
    /// Anything else to know.
    pub notes: Vec<String>,
}

impl TeamSetup {
    /// Whether this run changed anything.
    pub fn changed(&self) -> bool {
        self.member.added
            || self.member.key_created
            || self.files.iter().any(|f| f.change != FileChange::Unchanged)
            || self.config.iter().any(|c| c.change == ConfigChange::Set)
            || self.frame.published
    }
}

/// A file or key changed since the setup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Changed {
    /// The file's path (from the top of the working tree when inside it), or `config <key>`.
    pub what: String,
}

/// Why the setup or its undo cannot be done.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// Reading the repository failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A key could not be read or written.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The name given (or configured) is not an agent name.
    #[error(transparent)]
    Name(#[from] NameError),
    /// A host's hook file cannot be changed.
    #[error(transparent)]
    Hook(#[from] HostHookError),
    /// A host's MCP file cannot be changed.
    #[error(transparent)]
    Mcp(#[from] HostMcpError),
    /// The skills cannot be installed.
    #[error(transparent)]
    Skills(#[from] SkillsError),
    /// The frame cannot be published.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// No name for a new member.
    #[error(
        "cannot name this machine's roster member: no --name, no `git config mas.agent`, and no usable name in \
         $USER, $LOGNAME, git's user.email or user.name, or this OS account"
    )]
    NoName,
    /// The name is on the roster with a key this machine does not hold.
    #[error("agent '{name}' is on the roster, but this machine holds no key for it")]
    NotHeld {
        /// The name.
        name: String,
    },
    /// A file is not text where text is edited.
    #[error("{path} is not UTF-8 text")]
    NotText {
        /// The file.
        path: PathBuf,
    },
    /// Reading, writing or removing failed.
    #[error("cannot {action} {path}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A git command failed.
    #[error("`git {command}` failed: {reason}")]
    Git {
        /// Its arguments.
        command: String,
        /// What git said.
        reason: String,
    },
    /// Another setup or undo of this repository is running.
    #[error("another git mas init --team of this repository is running (process {pid}, {lock})")]
    Busy {
        /// Its process id.
        pid: u32,
        /// The lock file.
        lock: PathBuf,
    },
    /// Undo found no record.
    #[error("there is no team setup to undo here: {path} does not exist")]
    NoManifest {
        /// Where the record would be.
        path: PathBuf,
    },
    /// The record cannot be read.
    #[error("the record of the team setup, {path}, cannot be used: {reason}")]
    BadManifest {
        /// The manifest.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Undo found files or keys changed since the setup.
    #[error("changed since the team setup, so not undone: {}", .changed.iter().map(|c| c.what.as_str()).collect::<Vec<_>>().join(", "))]
    Changed {
        /// What changed.
        changed: Vec<Changed>,
    },
}

/// The top of the working tree, its symbolic links resolved: every path the record names is
/// spelt from it, whichever spelling the command was started with.
pub(crate) fn top_of(store: &Store) -> Result<PathBuf, SetupError> {
    let top = store.workdir()?;
    Ok(std::fs::canonicalize(top).unwrap_or_else(|_| top.to_path_buf()))
}

/// The record's folder in the repository's common git dir.
pub fn record_dir(store: &Store) -> PathBuf {
    store.common_dir().join(journal::DIR)
}

/// A file as the setup plans it.
struct Planned {
    path: PathBuf,
    parts: Vec<Part>,
    hosts: Vec<Host>,
    before: Option<(Vec<u8>, u32)>,
    bytes: Vec<u8>,
    mode: u32,
}

impl Planned {
    fn change(&self) -> FileChange {
        match &self.before {
            None => FileChange::Created,
            Some((bytes, mode)) if *bytes == self.bytes && *mode == self.mode => FileChange::Unchanged,
            Some(_) => FileChange::Updated,
        }
    }
}

/// Every file's new bytes, in the order they are written; a file planned twice keeps one place.
#[derive(Default)]
struct Plan {
    files: Vec<Planned>,
}

impl Plan {
    fn find(&self, path: &Path) -> Option<&Planned> {
        self.files.iter().find(|f| f.path == path)
    }

    /// The file's text as planned so far (from disk when not planned yet).
    fn text(&self, path: &Path) -> Result<Option<String>, SetupError> {
        let bytes = match self.find(path) {
            Some(p) => Some(p.bytes.clone()),
            None => journal::read(path)?.map(|(b, _)| b),
        };
        bytes.map(|b| String::from_utf8(b).map_err(|_| SetupError::NotText { path: path.to_path_buf() })).transpose()
    }

    /// Plans `bytes` (with `mode`; `None`: the file's own, else 0644) for `path`.
    fn put(
        &mut self,
        path: &Path,
        part: Part,
        host: Option<Host>,
        bytes: Vec<u8>,
        mode: Option<u32>,
    ) -> Result<(), SetupError> {
        if let Some(p) = self.files.iter_mut().find(|f| f.path == path) {
            p.bytes = bytes;
            p.mode = mode.unwrap_or(p.mode);
            if !p.parts.contains(&part) {
                p.parts.push(part);
            }
            if let Some(h) = host.filter(|h| !p.hosts.contains(h)) {
                p.hosts.push(h);
            }
            return Ok(());
        }
        let before = journal::read(path)?;
        let mode = mode.or(before.as_ref().map(|(_, m)| *m)).unwrap_or(0o644);
        self.files.push(Planned {
            path: path.to_path_buf(),
            parts: vec![part],
            hosts: host.into_iter().collect(),
            before,
            bytes,
            mode,
        });
        Ok(())
    }
}

/// The member as planned: existing, or to be added (and its key perhaps to be created).
struct PlannedMember {
    name: String,
    key: AgentKey,
    source: NameSource,
    add: bool,
    create_key: bool,
    key_path: PathBuf,
}

/// Runs `git` in `dir` with `args`: its trimmed stdout, `None` when it exits 1 (`git config` of
/// an unset key).
fn git(dir: &Path, args: &[&str]) -> Result<Option<String>, SetupError> {
    match crate::git::run_allowing(dir, args, &[1]) {
        Ok((0, out)) => Ok(Some(String::from_utf8_lossy(&out).trim_end_matches('\n').to_string())),
        Ok(_) => Ok(None),
        Err(e) => Err(SetupError::Git { command: e.args().to_string(), reason: e.reason() }),
    }
}

/// `key`'s value in the repository's shared config (`git config --local`).
pub(crate) fn local_config(top: &Path, key: &str) -> Result<Option<String>, SetupError> {
    git(top, &["config", "--local", "--get", key])
}

/// This machine's member: see the module docs.
fn plan_member(store: &Store, options: &Options, env: &dyn Env) -> Result<PlannedMember, SetupError> {
    let roster = store.roster()?;
    let held = |name: &str| roster.get(name).is_some_and(|e| AgentKey::load(&e.name).is_ok_and(|k| k.did() == e.did));
    let existing = |name: &str, source| -> Result<PlannedMember, SetupError> {
        Ok(PlannedMember {
            name: name.to_string(),
            key: AgentKey::load(name)?,
            source,
            add: false,
            create_key: false,
            key_path: key::key_path(name)?,
        })
    };
    let configured = store.config_string("mas.agent").filter(|s| !s.trim().is_empty());
    let (name, source) = if let Some(name) = &options.name {
        (name.clone(), NameSource::Flag)
    } else {
        let mut held_names = roster.entries().map(|e| e.name.clone()).filter(|n| held(n));
        let preferred = configured.as_deref().filter(|c| held(c)).map(str::to_string);
        if let Some(name) = preferred.or_else(|| held_names.next()) {
            return existing(&name, NameSource::Roster);
        }
        match configured {
            Some(name) => (name, NameSource::Config),
            None => {
                let var = |v: &str| env.var(v).map(|u| u.to_string_lossy().into_owned());
                let email_local =
                    store.config_string("user.email").and_then(|e| e.split('@').next().map(str::to_string));
                let name = [var("USER"), var("LOGNAME"), email_local, store.config_string("user.name"), account_name()]
                    .into_iter()
                    .flatten()
                    .find_map(|candidate| name_from(&candidate))
                    .ok_or(SetupError::NoName)?;
                (name, NameSource::User)
            }
        }
    };
    validate_name(&name)?;
    if roster.get(&name).is_some() {
        if held(&name) {
            return existing(&name, if source == NameSource::Flag { NameSource::Flag } else { NameSource::Roster });
        }
        return Err(SetupError::NotHeld { name });
    }
    let key_path = key::key_path(&name)?;
    let (key, create_key) =
        if key_path.exists() { (AgentKey::load(&name)?, false) } else { (AgentKey::generate()?, true) };
    Ok(PlannedMember { name, key, source, add: true, create_key, key_path })
}

/// The name of the OS account this process runs as (`/etc/passwd`), where `$USER` is unset (a
/// container's shell often has none).
fn account_name() -> Option<String> {
    let uid = rustix::process::getuid().as_raw().to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        (fields.nth(1)? == uid).then(|| name.to_string())
    })
}

/// The hosts to set up, with why each counts as used here.
fn plan_hosts(top: &Path, hosts: &Hosts, env: &dyn Env) -> Vec<HostSetup> {
    Host::ALL
        .into_iter()
        .filter_map(|host| {
            let detected = crate::hosts::detect(host, top, env);
            let chosen = match hosts {
                Hosts::Named(named) if named.contains(&host) => Chosen::Named,
                Hosts::Detect if !detected.is_empty() => Chosen::Detected,
                _ => return None,
            };
            Some(HostSetup { host, chosen, detected, notes: Vec::new() })
        })
        .collect()
}

/// The configuration keys the setup sets, with their values: `mas.agent` only when unset.
fn plan_config(store: &Store, top: &Path, member: &str) -> Result<Vec<ConfigSetup>, SetupError> {
    let mut keys = Vec::new();
    let agent = store.config_string("mas.agent").filter(|s| !s.trim().is_empty());
    for (key, value) in [("mas.agent", member), ("mas.gate", "enforce"), (TEAM_KEY, "true")] {
        let previous = local_config(top, key)?;
        let (change, value) = match (key, &agent) {
            // Set at any level (a worktree's own config, the user's), mas.agent stays.
            ("mas.agent", Some(agent)) if agent == member => (ConfigChange::Unchanged, agent.clone()),
            ("mas.agent", Some(agent)) => (ConfigChange::Kept, agent.clone()),
            _ if previous.as_deref() == Some(value) => (ConfigChange::Unchanged, value.to_string()),
            _ => (ConfigChange::Set, value.to_string()),
        };
        keys.push(ConfigSetup { key: key.to_string(), value, previous, change });
    }
    Ok(keys)
}

/// Every file's new bytes.
fn plan_files(
    store: &Store,
    journal: &Journal,
    member: &PlannedMember,
    hosts: &mut [HostSetup],
    env: &dyn Env,
) -> Result<Plan, SetupError> {
    let top = &top_of(store)?;
    let mut plan = Plan::default();
    let roster = top.join(ROSTER_PATH);
    let current = journal::read(&roster)?.map(|(b, _)| b);
    match (member.add, current) {
        (true, current) => {
            let bytes = with_entry(current.as_deref(), &member.name, &member.key.did());
            plan.put(&roster, Part::Roster, None, bytes, None)?;
        }
        // Reported as it is.
        (false, Some(current)) => plan.put(&roster, Part::Roster, None, current, None)?,
        (false, None) => {}
    }
    // The hooks `git mas hooks install` writes, through the journal.
    let hooks_dir = store.hooks_dir()?;
    for hook in git_hooks::planned(&std::fs::canonicalize(&hooks_dir).unwrap_or(hooks_dir))? {
        plan.put(&hook.path, Part::GitHook, None, hook.text.into_bytes(), Some(hook.mode))?;
    }
    let scope = Scope::Project(top.to_path_buf());
    for setup in hosts.iter_mut() {
        let host = setup.host;
        for file in host_hooks::hook_files(host, &scope, env).unwrap_or_default() {
            let path = write_target(&file.path())?;
            let current = plan.text(&path)?;
            let text = match host_hooks::plan_install(host, &file, current.as_deref())? {
                FilePlan::Write(text) => text,
                FilePlan::Keep | FilePlan::Remove => current.unwrap_or_default(),
            };
            plan.put(&path, Part::Hook, Some(host), text.into_bytes(), None)?;
        }
        if host == Host::Codex && !top.join(".git").is_file() {
            plan_codex_trust(&mut plan, top, env, setup)?;
        } else {
            setup.notes.extend(host_hooks::notes(host, &scope));
        }
        match mcp::config_file(host, &scope, env) {
            Ok((base, rel)) => {
                let given = base.join(rel);
                let path = write_target(&given)?;
                let current = plan.text(&path)?;
                let text = match mcp::plan_install(host, &given, current.as_deref(), None)? {
                    FilePlan::Write(text) => text,
                    FilePlan::Keep | FilePlan::Remove => current.unwrap_or_default(),
                };
                plan.put(&path, Part::Mcp, Some(host), text.into_bytes(), None)?;
                setup.notes.extend(mcp::notes(host, &scope));
            }
            Err(HostMcpError::Unsupported { reason, .. }) => {
                setup.notes.push(format!("no MCP registration is written for {}: {reason}", host.name()));
            }
            Err(e) => return Err(e.into()),
        }
    }
    plan_skills(&mut plan, journal, top, hosts)?;
    Ok(plan)
}

/// Every bundled skill's files, in each host's project skills folder; refused when one holds bytes
/// someone else wrote.
fn plan_skills(plan: &mut Plan, journal: &Journal, top: &Path, hosts: &[HostSetup]) -> Result<(), SetupError> {
    let bundled = skills::bundled();
    let mut roots: Vec<(PathBuf, Vec<Host>)> = Vec::new();
    for setup in hosts.iter() {
        let root = top.join(setup.host.skills_project_dir());
        match roots.iter_mut().find(|(r, _)| *r == root) {
            Some((_, hs)) => hs.push(setup.host),
            None => roots.push((root, vec![setup.host])),
        }
    }
    // A shipped file that holds other bytes is someone's, unless the setup wrote it (an earlier
    // release's skill); a missing one is written (a killed setup may have made only its folder).
    let mut conflicts = Vec::new();
    for (root, for_hosts) in &roots {
        for skill in &bundled {
            let folder = root.join(skill.name);
            if folder.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
                conflicts.push(skills::Conflict {
                    skill: skill.name.into(),
                    path: folder,
                    differing: Vec::new(),
                    extra: Vec::new(),
                    not_a_directory: true,
                });
                continue;
            }
            let mut differing = Vec::new();
            for (rel, bytes) in &skill.files {
                let path = folder.join(rel);
                let current = journal::read(&path)?.map(|(b, _)| b);
                let ours =
                    |b: &[u8]| journal.manifest.files.iter().any(|f| f.path == path && f.after == journal::sha256(b));
                match current.as_deref() {
                    Some(b) if b != *bytes && !ours(b) => differing.push(rel.to_string()),
                    _ => {
                        for h in for_hosts {
                            plan.put(&path, Part::Skill, Some(*h), bytes.to_vec(), None)?;
                        }
                    }
                }
            }
            if !differing.is_empty() {
                conflicts.push(skills::Conflict {
                    skill: skill.name.into(),
                    path: folder,
                    differing,
                    extra: Vec::new(),
                    not_a_directory: false,
                });
            }
        }
    }
    if !conflicts.is_empty() {
        return Err(SkillsError::Conflicts(conflicts).into());
    }
    Ok(())
}

/// Codex's trust of the project and of each of our hooks in its hooks file as planned, in the
/// user's `config.toml` (`$CODEX_HOME`, else `~/.codex`): codex runs a project's hooks only when
/// both are trusted, and skips an untrusted one without a word, so a team-mode session of codex
/// would edit unprotected. The entries are ours to take back: undo restores them even when codex
/// wrote the file since ([`undo`]). Not in a linked worktree, where codex reads the main
/// checkout's hooks (the notes say so).
fn plan_codex_trust(plan: &mut Plan, top: &Path, env: &dyn Env, setup: &mut HostSetup) -> Result<(), SetupError> {
    let Some(config) = crate::hosts::trust::codex_config(env) else {
        setup.notes.extend(host_hooks::notes(Host::Codex, &Scope::Project(top.to_path_buf())));
        return Ok(());
    };
    let config = write_target(&config)?;
    let hooks_file = crate::hosts::trust::codex_project_hooks(top);
    let hooks_text = plan.text(&write_target(&hooks_file)?)?.unwrap_or_default();
    let current = plan.text(&config)?;
    let trusted =
        crate::hosts::trust::codex_project_trusted(current.as_deref(), &config, top, &hooks_file, &hooks_text)?;
    if let Some(text) = trusted.or(current) {
        plan.put(&config, Part::Trust, Some(Host::Codex), text.into_bytes(), None)?;
    }
    setup.notes.push(format!(
        "codex runs a project's hooks only when the project and each hook are trusted: that trust is in {} \
         (undo takes it back)",
        config.display()
    ));
    Ok(())
}

/// Sets up team mode in the working tree of `store` (see the module docs); `env` is where hosts'
/// programs are looked for (`PATH`) and `$USER` read.
pub fn setup(store: &Store, options: &Options, env: &dyn Env) -> Result<TeamSetup, SetupError> {
    let top = top_of(store)?;
    let mut journal = Journal::open(store.common_dir())?;
    let member = plan_member(store, options, env)?;
    let mut hosts = plan_hosts(&top, &options.hosts, env);
    let plan = plan_files(store, &journal, &member, &mut hosts, env)?;
    let config = plan_config(store, &top, &member.name)?;

    // Nothing was written so far; from here on every change goes through the journal.
    if member.create_key {
        journal.record_key(&member.name, &member.key_path)?;
        match member.key.save(&member.name) {
            Ok(_) => {}
            // Saved by a setup killed before it wrote the roster: the same name, so it is used.
            Err(KeyError::Exists { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let key = if member.create_key { AgentKey::load(&member.name)? } else { member.key };
    let did = key.did();
    let mut files = Vec::new();
    for planned in &plan.files {
        let change = planned.change();
        if change != FileChange::Unchanged {
            let bytes = match planned.parts.first() {
                // The key loaded above may be one a killed setup saved: the roster names it.
                Some(Part::Roster) if member.add => {
                    let current = planned.before.as_ref().map(|(b, _)| b.as_slice());
                    with_entry(current, &member.name, &did)
                }
                _ => planned.bytes.clone(),
            };
            journal.write(&planned.path, planned.parts[0], &bytes, planned.mode)?;
        }
        files.push(FileSetup {
            path: planned.path.clone(),
            parts: planned.parts.clone(),
            hosts: planned.hosts.clone(),
            change,
        });
    }
    for c in config.iter().filter(|c| c.change == ConfigChange::Set) {
        journal.record_config(&c.key, c.previous.as_deref(), &c.value)?;
        git(&top, &["config", "--local", &c.key, &c.value])?;
    }
    let frame = setup_frame(store, &member.name, &key)?;
    let mut notes = Vec::new();
    if hosts.is_empty() {
        notes.push(
            "no coding-agent host was detected here (no host's program on PATH, no .claude/, .codex/, .gemini/, \
             .cursor/, .opencode/ …): name one with --host HOST, or --host all"
                .to_string(),
        );
    }
    if let Some(kept) = config.iter().find(|c| c.change == ConfigChange::Kept) {
        notes.push(format!(
            "mas.agent is {}, not {}: sessions here act for {} (`git config mas.agent {}` to change it)",
            kept.value, member.name, kept.value, member.name
        ));
    }
    let commit = commit_command(store, &top, &journal, member.add)?;
    Ok(TeamSetup {
        top: top.clone(),
        member: Member {
            name: member.name.clone(),
            did,
            source: member.source,
            added: member.add,
            key_path: member.key_path.clone(),
            key_created: member.create_key,
        },
        hosts,
        files,
        config,
        frame,
        manifest: journal.manifest_path(),
        commit,
        notes,
    })
}

/// The frame the team starts on: the current one, or one published now by the member.
fn setup_frame(store: &Store, name: &str, key: &AgentKey) -> Result<FrameSetup, SetupError> {
    Ok(match frame::current_frame_hash(store)? {
        Some((commit, hash)) => FrameSetup { published: false, hash, commit: Some(commit.to_string()) },
        None => {
            let inputs = InputFiles::default();
            let (snapshot, view) = frame::snapshot_now(store, &inputs)?;
            match frame::publish(store, name, key, &snapshot, &view, &inputs)? {
                Published::New { commit, hash, .. } => {
                    FrameSetup { published: true, hash, commit: Some(commit.to_string()) }
                }
                Published::Unchanged { hash } => FrameSetup { published: false, hash, commit: None },
            }
        }
    })
}

/// The `git add … && git commit` that shares what the setup wrote in the working tree (every
/// file the record names there that git sees as new or changed; a folder the setup created is
/// added whole), with the member's focus around the commit, or `None` when there is nothing to
/// commit.
fn commit_command(
    store: &Store,
    top: &Path,
    journal: &Journal,
    added: bool,
) -> Result<Option<CommitSetup>, SetupError> {
    let git_dir = store.common_dir();
    let inside = |p: &Path| p.starts_with(top) && !p.starts_with(git_dir) && !p.starts_with(top.join(".git"));
    let mut candidates: Vec<PathBuf> = Vec::new();
    for entry in journal.manifest.files.iter().filter(|f| inside(&f.path)) {
        // The outermost folder the setup created in the working tree that holds the file.
        let folder = journal.manifest.dirs.iter().find(|d| inside(d) && entry.path.starts_with(d));
        let path = folder.cloned().unwrap_or_else(|| entry.path.clone());
        if !candidates.contains(&path) {
            candidates.push(path);
        }
    }
    if candidates.is_empty() {
        return Ok(None);
    }
    let rel: Vec<String> =
        candidates.iter().map(|p| p.strip_prefix(top).unwrap_or(p).to_string_lossy().replace('\\', "/")).collect();
    let mut args = vec!["status", "--porcelain=v1", "--untracked-files=all", "--"];
    args.extend(rel.iter().map(String::as_str));
    let status = git(top, &args)?.unwrap_or_default();
    let changed: Vec<&str> = status.lines().filter_map(|l| l.get(3..)).map(|p| p.trim_matches('"')).collect();
    let paths: Vec<String> =
        rel.into_iter().filter(|r| changed.iter().any(|c| c == r || c.starts_with(&format!("{r}/")))).collect();
    if paths.is_empty() {
        return Ok(None);
    }
    let words: Vec<String> = paths.iter().map(|p| host_hooks::shell_word(p)).collect();
    // In team mode the commit gate refuses only files another live agent holds: a plain commit.
    let command = format!("git add {} && git commit -m {}", words.join(" "), host_hooks::shell_word(COMMIT_MESSAGE));
    let roster_changed = paths.iter().any(|p| p == ROSTER_PATH);
    let committed_roster = store.committed_file(&store.integration_branch(), ROSTER_PATH)?;
    let has_entries = committed_roster
        .as_deref()
        .and_then(|b| crate::identity::parse_roster(b, ROSTER_PATH).ok())
        .is_some_and(|entries| !entries.is_empty());
    Ok(Some(CommitSetup { paths, command, needs_roster_signature: added && roster_changed && has_entries }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planned_file_is_created_updated_or_unchanged() {
        let planned = |before: Option<(&[u8], u32)>, bytes: &[u8], mode: u32| Planned {
            path: PathBuf::from("/r/f"),
            parts: vec![Part::Hook],
            hosts: Vec::new(),
            before: before.map(|(b, m)| (b.to_vec(), m)),
            bytes: bytes.to_vec(),
            mode,
        };
        assert_eq!(planned(None, b"x", 0o644).change(), FileChange::Created);
        assert_eq!(planned(Some((b"x", 0o644)), b"x", 0o644).change(), FileChange::Unchanged);
        assert_eq!(planned(Some((b"x", 0o644)), b"y", 0o644).change(), FileChange::Updated);
        assert_eq!(planned(Some((b"x", 0o644)), b"x", 0o755).change(), FileChange::Updated, "made executable");
    }
}

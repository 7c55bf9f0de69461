//! Peers: the members of a team, each a real process, behind one trait.
//!
//! A driver (ASSEMBLY → CONVERGE in `coordinate::scalar`, development in `coordinate::develop`; both sit
//! above this module, which names neither) talks to every peer the same way: it renders a hop prompt ([`prompt`]), hands it to [`Peer::hop`] with a
//! timeout, and reads the reply with the line parsers ([`crate::assembly::protocol`]). What a peer
//! *is* stays behind the trait: today every peer is a [`ProcessPeer`] — a `cmd:` command line (a
//! script, a coding-agent CLI), a coding-agent [`crate::hosts::preset`] (a command template), or one of
//! git-mas's own [`builtin`] peers started as a `git-mas peer <kind>` subprocess — and a peer over
//! another transport would be another implementation.
//!
//! The trait is async (tokio): a hop is a process with a timeout, and a later driver may hop
//! several peers at once. Nothing here prints; a failed call is a [`HopError`] whose message is
//! meant for the run's record and for the peer's second attempt.

pub mod builtin;
pub mod process;
pub mod prompt;
pub mod spec;

pub use crate::hosts::preset::{CommandSource, Wiring, resolve_command};
pub use process::{MAX_REPLY_BYTES, ProcessCommand, kill_live_peers, run_hop};
pub use prompt::{AssemblyPrompt, ConvergePrompt, PromptHeader};
pub use spec::{BuiltinKind, MAX_PEERS, PeerEntry, PeerSpec, SpecError, parse_agents};

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

/// One call to a peer.
#[derive(Debug, Clone)]
pub struct Hop {
    /// The prompt.
    pub prompt: String,
    /// How long the peer has to reply.
    pub timeout: Duration,
    /// Extra environment for a process peer (`GIT_MAS_PHASE`, …).
    pub env: Vec<(String, String)>,
}

/// A peer's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HopReply {
    /// What it wrote (stdout for a process), lossily decoded as UTF-8.
    pub text: String,
    /// How long the call took.
    pub elapsed: Duration,
    /// The end of what it wrote on stderr (diagnostics only).
    pub stderr: String,
}

/// Why a call to a peer failed.
#[derive(Debug, Error)]
pub enum HopError {
    /// The process could not be started.
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// No reply within the timeout; the process was killed.
    #[error("no reply within {}; the peer was stopped{}", humantime::format_duration(*after), said.as_ref().map(|s| format!("; it had said: {s}")).unwrap_or_default())]
    TimedOut {
        /// The timeout.
        after: Duration,
        /// The first lines it had printed by then (stderr, else stdout), when any.
        said: Option<String>,
    },
    /// The process exited unsuccessfully.
    #[error("the peer exited with {status}{}", if said.is_empty() { String::new() } else { format!("; it said on {stream}: {said}") })]
    Failed {
        /// `exit status N`, or how it was killed (`signal 9 — killed (SIGKILL: …)`).
        status: String,
        /// The first lines of what it printed: its stderr, else its stdout (a host that is not
        /// logged in may say so on stdout).
        said: String,
        /// `stderr` or `stdout`: where `said` comes from.
        stream: &'static str,
    },
    /// The reply was too large; the process was killed.
    #[error("the reply exceeds {limit} bytes; the peer was stopped")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// Reading from or writing to the peer failed.
    #[error("talking to the peer failed: {source}")]
    Io {
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Another kind of peer failed in its own way.
    #[error("{message}")]
    Other {
        /// What happened.
        message: String,
    },
}

/// A member of a team that can be asked one hop at a time.
pub trait Peer: Send {
    /// The peer's name (its participant id).
    fn name(&self) -> &str;
    /// Asks the peer: the prompt in, the reply out, within `hop.timeout`.
    fn hop(&mut self, hop: &Hop) -> impl Future<Output = Result<HopReply, HopError>> + Send;
}

/// A peer that runs one process per hop.
#[derive(Debug, Clone)]
pub struct ProcessPeer {
    entry: PeerEntry,
    command: ProcessCommand,
    dir: Option<PathBuf>,
}

impl ProcessPeer {
    /// The peer for `entry`; built-ins run as `exe peer <kind>` (`exe` is the running `git-mas`),
    /// and every hop runs in `dir` when given.
    pub fn new(entry: PeerEntry, exe: &Path, dir: Option<PathBuf>) -> ProcessPeer {
        let command = ProcessCommand::for_spec(&entry.spec, exe);
        ProcessPeer { entry, command, dir }
    }

    /// The peer for `entry` with its command line resolved against git config: a preset's
    /// template (for a run whose check is `check`) is overridden by `mas.agent.<name>.command` or
    /// `mas.agent.<preset>.command` when `lookup` finds one (see [`crate::hosts::preset`]), and carries what the
    /// host needs to use what the peer's worktree was given (`wiring`); other specs run as
    /// [`ProcessPeer::new`] runs them.
    pub fn configured(
        entry: PeerEntry,
        exe: &Path,
        dir: Option<PathBuf>,
        check: Option<&str>,
        wiring: Wiring,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> (ProcessPeer, Option<CommandSource>) {
        match &entry.spec {
            PeerSpec::Preset { preset } => {
                let (line, source) = resolve_command(*preset, &entry.name, check, wiring, lookup);
                (ProcessPeer { command: ProcessCommand::shell(&line), entry, dir }, Some(source))
            }
            _ => (ProcessPeer::new(entry, exe, dir), None),
        }
    }

    /// Runs every hop in `dir` from now on.
    pub fn set_dir(&mut self, dir: Option<PathBuf>) {
        self.dir = dir;
    }

    /// The roster entry.
    pub fn entry(&self) -> &PeerEntry {
        &self.entry
    }

    /// What runs on each hop.
    pub fn command(&self) -> &ProcessCommand {
        &self.command
    }
}

impl Peer for ProcessPeer {
    fn name(&self) -> &str {
        &self.entry.name
    }

    fn hop(&mut self, hop: &Hop) -> impl Future<Output = Result<HopReply, HopError>> + Send {
        run_hop(&self.command, self.dir.as_deref(), hop)
    }
}

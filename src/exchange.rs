//! The exchange: claims travel between clones by themselves, through the team's own git remote.
//!
//! In team mode a claim is a record on the session's chain in `refs/mas/`. [`crate::sync`] carries
//! those chains through any git remote, but only when someone runs it. The exchange is one
//! background process per clone that runs a sync round every [`DEFAULT_INTERVAL`] (`git config
//! mas.exchangeInterval`): it pushes what this clone's sessions claimed and released since the
//! last round (every claim of a round in one push: coalesced), and fetches what the other clones
//! pushed, so their claims reach this clone's hooks. A round that fails is retried at the next one,
//! and its failure is kept in the state file for `git mas status` ([`State::last_error`]).
//!
//! **Off the hook's path.** A hook never talks to the remote. It only [`poke`]s: it opens
//! [`LOCK_FILE`] and tries its `flock` without waiting. Held: the exchange runs, and the hook
//! marks the file's modification time as the clone's last activity (one `futimens`). Free: the
//! hook starts `git mas exchange` as a detached process (its own session, standard streams on
//! `/dev/null`, so no host waits on it) and answers at once. Two hooks that start one each leave
//! one running: the second cannot take the lock and ends.
//!
//! **Bound.** A claim made on one clone is pushed by that clone's next round and fetched by the
//! other clone's next round: with both exchanges running it is on the other clone's board within
//! two intervals plus two rounds (a fetch and a push each). With the default of 1 s and a remote
//! on a LAN, that is under [`BOUND`]; `bench/exchange.sh` measures it.
//!
//! **Ending.** The exchange ends — after a last round, so a release made as the last session ended
//! is pushed — when no session of this clone is running and no hook touched the clone for
//! [`DEFAULT_IDLE`] (`git config mas.exchangeIdle`): no host process recorded in
//! `<common git dir>/mas/hosts/` is alive ([`crate::attention::ancestry::any_host_running`]), and
//! the lock file's modification time is older than that. It ends at once when its repository is
//! gone. Nothing is left running after the last session ends.
//!
//! **Off.** `git config mas.exchange false` turns it off (claims then cross clones at each `git mas
//! sync`); without a remote (`mas.remote`, else `origin`) it never starts.
//!
//! What a SIGKILL of the exchange leaves, at any instant: what a killed [`crate::sync::sync`]
//! leaves (at worst a staged ref newer than the local one, or a local chain the remote lacks —
//! the next round takes and pushes them; no claim is lost, since claims are written by the hooks
//! to local refs and the exchange only copies them), and a state file that names a process no
//! longer running, which `status` shows as not running. The `flock` goes with the process, so the
//! next hook starts a new exchange.

use crate::store::{Store, StoreError};
use crate::sync::SyncError;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The lock the running exchange holds (in the common git dir); its modification time is the
/// clone's last hook activity.
pub const LOCK_FILE: &str = "mas/exchange.lock";

/// What the exchange last did, for `status` (in the common git dir).
pub const STATE_FILE: &str = "mas/exchange.json";

/// Time between two rounds, by default.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// How long the exchange outlives the clone's last session and last hook call, by default.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(60);

/// The stated bound: a claim is on every other running clone's board within this time.
pub const BOUND: Duration = Duration::from_secs(5);

/// Errors of the exchange.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// A configured duration is not one.
    #[error("{key} {value:?} is not a duration between {min:?} and {max:?} (such as 1s or 500ms)")]
    BadDuration {
        /// The config key.
        key: &'static str,
        /// Its value.
        value: String,
        /// The least accepted.
        min: Duration,
        /// The most accepted.
        max: Duration,
    },
    /// The lock file could not be opened.
    #[error("cannot open the exchange's lock {}", path.display())]
    Lock {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The exchange could not be started.
    #[error("cannot start {}", program.display())]
    Start {
        /// The program.
        program: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// No remote to exchange with.
    #[error("no remote to exchange claims with")]
    NoRemote,
    /// `git config mas.exchange false`.
    #[error("the exchange is turned off (git config mas.exchange false)")]
    Off,
    /// The repository could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ExchangeError {
    /// What the user can do about it.
    pub fn remedy(&self) -> Option<String> {
        match self {
            ExchangeError::Store(e) => e.remedy(),
            ExchangeError::NoRemote => Some(
                "give the clone the team's remote: `git remote add origin <url>`, or `git config mas.remote <remote>`"
                    .into(),
            ),
            ExchangeError::Off => {
                Some("`git config mas.exchange true` turns it on; `git mas sync` exchanges by hand".into())
            }
            ExchangeError::BadDuration { key, .. } => {
                Some(format!("fix it with `git config {key} <duration>`, or unset it"))
            }
            _ => None,
        }
    }
}

/// The remote a team-mode clone exchanges claims with: `mas.remote`, else `origin` when it is
/// configured; none when `mas.exchange` is false.
pub fn remote(store: &Store) -> Option<String> {
    if off(store) {
        return None;
    }
    match store.config_string("mas.remote").filter(|r| !r.trim().is_empty()) {
        Some(r) => Some(r),
        None => store.config_string("remote.origin.url").map(|_| "origin".to_string()),
    }
}

/// Whether `git config mas.exchange` turns the exchange off.
fn off(store: &Store) -> bool {
    store
        .config_string("mas.exchange")
        .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "false" | "no" | "off" | "0"))
}

/// A duration from git config, within `min..=max`, else `default`.
fn duration(
    store: &Store,
    key: &'static str,
    default: Duration,
    min: Duration,
    max: Duration,
) -> Result<Duration, ExchangeError> {
    let Some(value) = store.config_string(key).filter(|v| !v.trim().is_empty()) else { return Ok(default) };
    humantime::parse_duration(value.trim()).ok().filter(|d| (min..=max).contains(d)).ok_or(ExchangeError::BadDuration {
        key,
        value,
        min,
        max,
    })
}

/// The time between rounds (`mas.exchangeInterval`, 100 ms to 10 min).
pub fn interval(store: &Store) -> Result<Duration, ExchangeError> {
    duration(store, "mas.exchangeInterval", DEFAULT_INTERVAL, Duration::from_millis(100), Duration::from_secs(600))
}

/// How long the exchange outlives the last session (`mas.exchangeIdle`, 1 s to 1 day).
pub fn idle(store: &Store) -> Result<Duration, ExchangeError> {
    duration(store, "mas.exchangeIdle", DEFAULT_IDLE, Duration::from_secs(1), Duration::from_secs(86_400))
}

fn open_lock(common: &Path) -> Result<std::fs::File, ExchangeError> {
    let path = common.join(LOCK_FILE);
    let open = || std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path);
    let file = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let _ = std::fs::create_dir_all(common.join("mas"));
            open()
        }
        other => other,
    };
    file.map_err(|source| ExchangeError::Lock { path, source })
}

/// What a hook's [`poke`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Poke {
    /// No remote, or turned off: nothing to do.
    Off,
    /// An exchange runs; its activity time was renewed.
    Running,
    /// None runs: start one.
    Stopped,
}

/// A hook's part: whether an exchange runs for this team-mode clone, without waiting for
/// anything. When one runs, its activity time is renewed; when none runs, the caller starts one
/// ([`start`]).
pub fn poke(store: &Store) -> Result<Poke, ExchangeError> {
    if remote(store).is_none() {
        return Ok(Poke::Off);
    }
    let file = open_lock(store.common_dir())?;
    let _ = file.set_modified(SystemTime::now());
    match file.try_lock() {
        Err(std::fs::TryLockError::WouldBlock) => Ok(Poke::Running),
        Err(std::fs::TryLockError::Error(source)) => {
            Err(ExchangeError::Lock { path: store.common_dir().join(LOCK_FILE), source })
        }
        // Let go (by closing) before the exchange takes it.
        Ok(()) => Ok(Poke::Stopped),
    }
}

/// Starts `program exchange --detach` for this clone, its standard streams on `/dev/null`, and
/// returns its process id without waiting for it.
pub fn start(store: &Store, program: &Path) -> Result<u32, ExchangeError> {
    let dir = store.repo().workdir().unwrap_or(store.common_dir()).to_path_buf();
    let child = std::process::Command::new(program)
        .args(["exchange", "--detach"])
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|source| ExchangeError::Start { program: program.to_path_buf(), source })?;
    Ok(child.id())
}

/// What the exchange last did: written after every round (temporary + rename).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct State {
    /// Its process id.
    pub pid: u32,
    /// The remote, as sync shows it (a password redacted).
    pub remote: String,
    /// When it started (seconds since the epoch).
    pub started_at: u64,
    /// Rounds run.
    pub rounds: u64,
    /// When its last round ended.
    pub last_round_at: u64,
    /// When a round last completed with every ref in agreement with the remote.
    pub last_ok_at: Option<u64>,
    /// Refs pushed and taken over its life.
    pub pushed: u64,
    /// Refs created or fast-forwarded from the remote over its life.
    pub taken: u64,
    /// Why the last round did not complete, when it did not.
    pub last_error: Option<String>,
    /// When it ended, and why (none while it runs).
    pub ended: Option<String>,
}

/// How the exchange stands, for `status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    /// Whether an exchange holds the lock now.
    pub running: bool,
    /// What the last one wrote, if any.
    pub state: Option<State>,
}

/// Whether an exchange runs for this clone, and what it last did. Takes the lock shared for an
/// instant when none holds it: a hook poking in that instant takes it for running, and the next
/// hook starts it.
pub fn standing(store: &Store) -> Standing {
    let common = store.common_dir();
    let state = std::fs::read(common.join(STATE_FILE)).ok().and_then(|b| serde_json::from_slice(&b).ok());
    let running = std::fs::File::open(common.join(LOCK_FILE))
        .is_ok_and(|f| matches!(f.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock)));
    Standing { running, state }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn write_state(common: &Path, state: &State) {
    if let Ok(bytes) = serde_json::to_vec_pretty(state) {
        let _ = crate::fsx::write_atomic(&common.join(STATE_FILE), &bytes, None);
    }
}

/// How an exchange ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Another exchange held the lock: this one did nothing.
    AlreadyRunning,
    /// It ran and ended, for this reason.
    Idle(State),
}

/// Why a round did not complete, in a line.
fn failure(result: &Result<crate::sync::SyncReport, SyncError>) -> Option<String> {
    match result {
        Err(e) => Some(crate::attention::team_gate::said(e).replace('\n', "; ")),
        Ok(r) if r.complete() => None,
        Ok(r) => Some(format!(
            "{} ref(s) not in agreement with the remote: {}",
            r.unresolved.len(),
            r.unresolved.iter().map(|u| u.refname.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Runs the exchange for the clone of `dir` until it is idle ([`Ended`]): a sync round every
/// interval, the state file written after each. `stop` is asked between rounds (a signal).
///
/// An exchange that cannot start (a configured duration that is not one, no remote) writes why
/// in the state file, for `status`: one that a hook started has nowhere else to say it.
pub fn serve(dir: &Path, stop: &dyn Fn() -> bool) -> Result<Ended, ExchangeError> {
    let store = Store::discover(dir)?;
    let common = store.common_dir().to_path_buf();
    let settings = || -> Result<(String, Duration, Duration), ExchangeError> {
        if off(&store) {
            return Err(ExchangeError::Off);
        }
        let remote = remote(&store).ok_or(ExchangeError::NoRemote)?;
        Ok((remote, interval(&store)?, idle(&store)?))
    };
    let (remote, every, idle) = match settings() {
        Ok(s) => s,
        Err(e) => {
            let ended = Some(format!("it could not start: {e}"));
            write_state(&common, &State { pid: std::process::id(), started_at: now(), ended, ..State::default() });
            return Err(e);
        }
    };
    let lock = open_lock(&common)?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(Ended::AlreadyRunning),
        Err(std::fs::TryLockError::Error(source)) => {
            return Err(ExchangeError::Lock { path: common.join(LOCK_FILE), source });
        }
    }
    drop(store);
    let mut state = State {
        pid: std::process::id(),
        remote: crate::sync::shown_remote(&remote),
        started_at: now(),
        ..State::default()
    };
    let mut last = false;
    loop {
        // A fresh store each round: what a store caches (windows, records) must not outlive refs
        // another process moved.
        let Some(store) = Store::discover(dir).ok().filter(|s| s.common_dir() == common) else {
            state.ended = Some("its repository is gone".into());
            return Ok(Ended::Idle(state));
        };
        let result = crate::sync::sync(&store, &remote);
        state.rounds += 1;
        state.last_round_at = now();
        if let Ok(r) = &result {
            for e in &r.events {
                match e.action {
                    crate::sync::RefAction::Pushed { .. } => state.pushed += 1,
                    crate::sync::RefAction::Created { .. } | crate::sync::RefAction::FastForwarded { .. } => {
                        state.taken += 1;
                    }
                    _ => {}
                }
            }
        }
        state.last_error = failure(&result);
        if state.last_error.is_none() {
            state.last_ok_at = Some(state.last_round_at);
        }
        if last {
            state.ended = Some(if stop() { "stopped by a signal" } else { "no session ran and no hook called" }.into());
            write_state(&common, &state);
            return Ok(Ended::Idle(state));
        }
        write_state(&common, &state);
        if !common.is_dir() {
            state.ended = Some("its repository is gone".into());
            return Ok(Ended::Idle(state));
        }
        let touched = lock.metadata().and_then(|m| m.modified()).ok();
        let quiet = touched.is_none_or(|t| t.elapsed().unwrap_or_default() >= idle);
        if stop() || (quiet && !crate::attention::ancestry::any_host_running(&store)) {
            // One more round: what the last session released is pushed.
            last = true;
            continue;
        }
        drop(store);
        let slept = std::time::Instant::now();
        while slept.elapsed() < every && !stop() {
            std::thread::sleep(every.min(Duration::from_millis(100)));
        }
    }
}

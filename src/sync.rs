//! `sync`: exchange `refs/mas/*` with an ordinary git remote, fast-forward only.
//!
//! gix has no push, so transport uses the system `git` (`fetch` and `push --porcelain`); every local
//! ref update goes through [`Store::cas`]. One round is:
//!
//! 1. fetch the remote's `refs/mas/*` into a staging namespace, `refs/mas-remote/<remote>/*` (outside
//!    `refs/mas/`, so staged refs are never mistaken for our own chains);
//! 2. integrate each staged ref: create it locally when missing, fast-forward when the local chain is
//!    behind, leave it when the local chain is ahead. When both moved on a **shared** chain, the local
//!    records the remote lacks are re-parented (same trees, same signed blobs) on top of the remote tip:
//!    a shared chain is a set of records in arrival order, and this is the cross-machine form of
//!    re-reading after a lost compare-and-swap. When both moved on a **per-agent** chain (one agent
//!    writing from two machines) nothing is rewritten: the ref is reported as diverged;
//! 3. push every local ref the remote lacks or is behind on, without force.
//!
//! **Contention.** A ref the remote rejects (someone advanced it between our fetch and our push) is
//! the cross-machine form of a lost compare-and-swap: the round starts again with a re-fetch, after
//! a jittered exponential backoff (so clones that collided once do not collide again in lockstep),
//! at most [`MAX_ROUNDS`] times. Only a ref still rejected after the last round is reported.
//!
//! **A remote that refuses.** A push the remote rejects for a reason of its own — a hook that
//! declines refs outside branches and tags, `receive.hideRefs`, a hosting service's ref rules — is
//! not a race: another round would be refused the same way. Such a ref ([`is_refusal`]: `[remote
//! rejected]` for anything but a lost ref lock or a stale old value) is not retried; it ends the
//! sync as `refused`, with what the server said on its `remote:` lines.
//!
//! **At scale.** The fetch speaks protocol v2 and asks only for `refs/mas/` (`ref-prefix`), so
//! the remote's branches and tags are never advertised to it. A push is git's `receive-pack`,
//! which has no v2: its advertisement lists every ref of the remote, as any `git push` does. From
//! [`PATTERN_PUSH_FROM`] refs to push on, sync pushes the pattern `refs/mas/*` rather than one
//! refspec per ref (git matches each refspec against every ref: quadratic).
//!
//! **Credentials.** Sync passes the remote to git as given, so git's credential helpers, a URL's
//! user and git's own HTTP settings apply. A password written in a URL is never printed: the
//! report, the errors and git's messages show it as `<redacted>` ([`shown_remote`]). git asks for
//! a missing password only when sync's standard input is a terminal (`GIT_TERMINAL_PROMPT=0`
//! otherwise), so a sync run by an agent or a hook fails at once instead of waiting on a prompt
//! nobody sees.
//!
//! **Honest ending.** A sync is complete only when every ref under `refs/mas/` agrees with the
//! remote as of sync's last exchange with it: the tip fetched last, or the tip the remote accepted
//! from our push. Every ref that does not is listed in [`SyncReport::unresolved`] with why —
//! `rejected` (the remote kept rejecting our push as behind), `refused` (the remote refuses the ref
//! itself), `diverged` (an agent's own chain moved on both
//! sides), `locked` (a `.lock` file, typically left by a crashed writer, is in the way of the local
//! update; its path and age are given) or `moving` (local writers kept moving the ref during the
//! sync). A remote that moves on after our last exchange is the next sync's business.
//!
//! **Unverified records.** Refs are shared history: a record that does not verify (unsigned, an
//! unknown agent, a spoof, a replay, misplaced, malformed) is still stored, because refusing it would
//! leave the chain forever different from the remote's — every later sync would fail and no record
//! could be pushed on top of it, so one unsigned push would stop a whole team. Readers apply only
//! verified records, so storing one changes no decision. Every such record that this sync received
//! from the remote is named in [`SyncReport::parked`] (ref, commit, verdict, the agent it claims),
//! including one that is now a shared chain's tip; `git mas check --records` lists every such record
//! in the store, for CI to fail on. Proposal refs (`refs/mas/runs/<run>/proposals/<agent>`) are
//! artifacts (a commit on top of the run's base), not record chains, and are not verified.
//!
//! **Crashes.** Only one sync runs at a time per clone: each takes an advisory lock
//! ([`MUTEX_FILE`] in the common git dir, `flock`, released by the kernel when the process dies, even
//! by SIGKILL). Holding it, sync alone writes the staging namespace, so a `.lock` file found there is
//! left by a killed `git fetch` and is removed ([`SyncReport::swept`]). A SIGKILL at any other point
//! leaves at worst a staged ref newer than the local one, a re-parented commit no ref names yet, or
//! a local chain the remote lacks: the next sync fetches, integrates and pushes again. A lock that a
//! killed compare-and-swap leaves under `refs/mas/` is not sync's to remove (another command may
//! hold it): it is reported as `locked` with its path.

use crate::git::{Git, GitError};
use crate::identity::Roster;
use crate::store::record::Verdict;
use crate::store::{CasOutcome, REF_PREFIX, Store, StoreError, owner_of};
use gix::ObjectId;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

/// Fetch–integrate–push rounds before giving up on refs that keep being rejected.
pub const MAX_ROUNDS: u32 = 10;

/// The first backoff after a rejected round; it doubles each round up to [`BACKOFF_CAP`].
pub const BACKOFF_BASE: Duration = Duration::from_millis(20);

/// The longest backoff between two rounds.
pub const BACKOFF_CAP: Duration = Duration::from_millis(800);

/// Compare-and-swap attempts per ref and round before the ref counts as moving.
const LOCAL_ATTEMPTS: u32 = 8;

/// The pause after a compare-and-swap failed on a lock, times the attempt: a lock still there after
/// every attempt (about 1.8 s in all) is reported as `locked`.
const LOCK_PAUSE: Duration = Duration::from_millis(50);

/// The advisory lock file (in the common git dir) that serializes syncs of one clone.
pub const MUTEX_FILE: &str = "git-mas-sync.mutex";

/// How long a sync waits for another sync of the same clone to finish.
pub const MUTEX_WAIT: Duration = Duration::from_secs(120);

/// Errors from sync.
#[derive(Debug, Error)]
pub enum SyncError {
    /// The remote name or URL is unusable ([`remote_problem`]).
    #[error("remote {remote:?} is not a usable remote name or URL: {why}")]
    BadRemote {
        /// The name as given, cut to its first 64 characters when longer.
        remote: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// `git` could not be started.
    #[error("cannot run git")]
    Spawn {
        #[source]
        source: std::io::Error,
    },
    /// `git fetch` failed.
    #[error("git fetch from {remote} failed: {stderr}")]
    Fetch { remote: String, stderr: String },
    /// `git push` failed for a reason other than a rejected ref.
    #[error("git push to {remote} failed: {stderr}")]
    Push { remote: String, stderr: String },
    /// The sync lock file could not be opened or locked.
    #[error("cannot lock {}", path.display())]
    Mutex {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Another sync of this clone kept running.
    #[error("another git mas sync of this repository is still running (waited {}s for {})", waited.as_secs(), path.display())]
    Busy { path: PathBuf, waited: Duration },
    /// A file in the staging namespace could not be removed.
    #[error("cannot remove the stale lock {}", path.display())]
    Sweep {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A store operation failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What happened to one ref.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum RefAction {
    /// Created locally from the remote.
    Created { to: String },
    /// Fast-forwarded locally.
    FastForwarded { from: String, to: String },
    /// Local records re-parented onto the remote tip (shared chains only).
    Rebased { records: usize, onto: String },
    /// Pushed to the remote.
    Pushed { to: String },
    /// The remote rejected our push: it moved since our fetch, or it refuses the ref itself
    /// ([`is_refusal`] of the reason).
    Rejected { reason: String },
    /// Both sides moved on a per-agent chain; left untouched.
    Diverged { local: String, remote: String },
    /// Lock files are in the way of the local update.
    Locked { paths: Vec<String> },
}

/// One ref's event in one round.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RefEvent {
    /// The round (1-based).
    pub round: u32,
    /// The ref.
    #[serde(rename = "ref")]
    pub refname: String,
    /// What happened.
    #[serde(flatten)]
    pub action: RefAction,
}

/// Why a ref does not agree with the remote at the end of a sync.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Unsettled {
    /// The remote rejected our push as behind in every round.
    Rejected { summary: String },
    /// The remote refuses the ref itself ([`is_refusal`]): not retried.
    Refused {
        /// git's summary (`[remote rejected] (pre-receive hook declined)`).
        summary: String,
        /// What the remote said on its `remote:` lines, in order.
        remote_said: Vec<String>,
    },
    /// Both sides moved on a per-agent chain.
    Diverged { local: String, remote: String },
    /// Lock files are in the way of the local update.
    Locked { locks: Vec<LockFile> },
    /// Local writers kept moving the ref (or it moved after sync integrated it).
    Moving { local: Option<String>, remote: Option<String> },
}

/// A lock file in the way.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LockFile {
    /// Its path.
    pub path: String,
    /// Its age in seconds, when its time stamp could be read.
    pub age_secs: Option<u64>,
}

/// A ref that does not agree with the remote, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Unresolved {
    /// The ref.
    #[serde(rename = "ref")]
    pub refname: String,
    /// Why.
    #[serde(flatten)]
    pub why: Unsettled,
}

/// A stored record that does not verify.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Parked {
    /// The chain.
    #[serde(rename = "ref")]
    pub refname: String,
    /// The record's commit.
    pub commit: String,
    /// Why it does not verify.
    pub verdict: Verdict,
    /// The agent the record claims (absent when it is not a readable record).
    pub agent: Option<String>,
    /// Its kind, when readable.
    pub kind: Option<String>,
    /// Its sequence number, when readable.
    pub seq: Option<u64>,
    /// Whether it is the chain's tip.
    pub tip: bool,
}

/// The outcome of a sync.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SyncReport {
    /// The remote synced with, as given (a URL's password shown as `<redacted>`).
    pub remote: String,
    /// Every ref event, in order.
    pub events: Vec<RefEvent>,
    /// Refs that do not agree with the remote at the end, with why.
    pub unresolved: Vec<Unresolved>,
    /// Records received from the remote that do not verify (stored, never applied).
    pub parked: Vec<Parked>,
    /// Stale lock files removed from the staging namespace (left by an interrupted fetch).
    pub swept: Vec<String>,
    /// Rounds run.
    pub rounds: u32,
}

impl SyncReport {
    /// Whether every ref ended in agreement with the remote.
    pub fn complete(&self) -> bool {
        self.unresolved.is_empty()
    }
}

/// Whether `refname` is a record chain (every commit one record). Proposal refs and a lost claim's
/// kept changes (`refs/mas/kept/<agent>/<id>`) are artifacts: a commit on top of the project's.
pub fn is_record_chain(refname: &str) -> bool {
    let Some(rest) = refname.strip_prefix(REF_PREFIX) else { return false };
    let parts: Vec<&str> = rest.split('/').collect();
    !matches!(parts.as_slice(), ["runs", _, "proposals", _] | ["kept", _, _])
}

/// Every record under `refs/mas/` that does not verify against `roster`, chain by chain (sorted by
/// ref name), oldest first within a chain. Proposal refs are skipped ([`is_record_chain`]).
pub fn parked_records(store: &Store, roster: &Roster) -> Result<Vec<Parked>, StoreError> {
    let mut out = Vec::new();
    for info in store.list(REF_PREFIX)? {
        if info.target.is_none() || !is_record_chain(&info.name) {
            continue;
        }
        out.extend(parked_in(store, roster, &info.name, |_| true)?);
    }
    Ok(out)
}

/// The records of one chain that do not verify and that `select` picks (by commit).
fn parked_in(
    store: &Store,
    roster: &Roster,
    refname: &str,
    select: impl Fn(&ObjectId) -> bool,
) -> Result<Vec<Parked>, StoreError> {
    let chain = store.verified_chain(refname, roster)?;
    let tip = chain.last().map(|(e, _)| e.commit);
    Ok(chain
        .into_iter()
        .filter(|(e, v)| !v.is_verified() && select(&e.commit))
        .map(|(e, verdict)| {
            let record = e.record.as_ref().ok();
            Parked {
                refname: refname.to_string(),
                commit: e.commit.to_string(),
                verdict,
                agent: record.map(|r| r.agent.clone()),
                kind: record.map(|r| r.kind.clone()),
                seq: record.map(|r| r.seq),
                tip: Some(e.commit) == tip,
            }
        })
        .collect())
}

/// The staging namespace for `remote`'s refs.
pub fn staging_prefix(remote: &str) -> String {
    let ok = !remote.is_empty()
        && remote.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !remote.contains("..")
        && !remote.starts_with('.');
    let component = if ok {
        remote.to_string()
    } else {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(remote.as_bytes());
        format!("url-{}", crate::identity::key::hex(&digest[..8]))
    };
    format!("refs/mas-remote/{component}/")
}

/// git on the clone's common dir, never asking for a password without a terminal to ask on.
fn git(store: &Store) -> Git {
    use std::io::IsTerminal as _;
    let git = Git::new(store.common_dir()).env("GIT_DIR", store.common_dir());
    if std::io::stdin().is_terminal() { git } else { git.env("GIT_TERMINAL_PROMPT", "0") }
}

/// A failed fetch or push as sync reports it (`failed`: which), `remote`'s password scrubbed.
fn failure(e: GitError, remote: &str, failed: fn(String, String) -> SyncError) -> SyncError {
    match e {
        GitError::Spawn { source, .. } => SyncError::Spawn { source },
        GitError::Failed { stderr, .. } => failed(shown_remote(remote), scrub(&stderr, remote)),
    }
}

/// `remote` as sync shows it: a URL's password (`https://user:secret@host/…`) replaced by
/// `<redacted>`; anything else unchanged.
pub fn shown_remote(remote: &str) -> String {
    match password_span(remote) {
        Some((start, end)) => format!("{}<redacted>{}", &remote[..start], &remote[end..]),
        None => remote.to_string(),
    }
}

/// The byte range of a URL's password: between the first `:` of the user part and the `@` that
/// ends it, in `scheme://user:password@host…`.
fn password_span(remote: &str) -> Option<(usize, usize)> {
    let after_scheme = remote.find("://")? + 3;
    let rest = &remote[after_scheme..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let at = authority.rfind('@')?;
    let colon = authority[..at].find(':')?;
    Some((after_scheme + colon + 1, after_scheme + at))
}

/// `text` (git's messages) with `remote`'s password, wherever it appears, shown as `<redacted>`.
fn scrub(text: &str, remote: &str) -> String {
    match password_span(remote) {
        Some((start, end)) if end > start => text.replace(&remote[start..end], "<redacted>"),
        _ => text.to_string(),
    }
}

/// Runs `git fetch` of `refs/mas/*` into the staging namespace.
fn fetch(store: &Store, remote: &str) -> Result<(), SyncError> {
    let staging = staging_prefix(remote);
    // Protocol v2 whatever the clone's configuration says: its `ls-refs` asks for `ref-prefix
    // refs/mas/`, so a remote with thousands of branches and tags advertises only the team's refs
    // (a server that speaks only v0 still answers, with everything).
    let refspec = format!("+{REF_PREFIX}*:{staging}*");
    let args = ["-c", "protocol.version=2", "fetch", "--quiet", "--no-tags", "--prune", "--no-write-fetch-head"];
    git(store)
        .run(&[&args[..], &[remote, &refspec]].concat())
        .map(drop)
        .map_err(|e| failure(e, remote, |remote, stderr| SyncError::Fetch { remote, stderr }))
}

/// The parent of a chain commit (chains are linear: the first parent).
fn parent_of(store: &Store, id: ObjectId) -> Result<Option<ObjectId>, StoreError> {
    let c = store
        .repo()
        .find_commit(id)
        .map_err(|e| StoreError::Git { context: format!("reading {id}"), source: Box::new(e) })?;
    Ok(c.parent_ids().next().map(|p| p.detach()))
}

/// The commits of the linear chain at `tip`, newest first, up to (not including) `stop` or the root.
fn commits_until(store: &Store, tip: ObjectId, stop: Option<ObjectId>) -> Result<Vec<ObjectId>, StoreError> {
    let mut out = Vec::new();
    let mut next = Some(tip);
    while let Some(id) = next {
        if Some(id) == stop {
            break;
        }
        out.push(id);
        next = parent_of(store, id)?;
    }
    Ok(out)
}

/// The newest commit two linear chains share, walking both back in step, so that the cost is the
/// distance to it rather than the chains' length.
fn merge_base(store: &Store, a: ObjectId, b: ObjectId) -> Result<Option<ObjectId>, StoreError> {
    let (mut seen_a, mut seen_b) = (BTreeSet::from([a]), BTreeSet::from([b]));
    let (mut next_a, mut next_b) = (Some(a), Some(b));
    loop {
        if let Some(x) = next_a {
            if seen_b.contains(&x) {
                return Ok(Some(x));
            }
            seen_a.insert(x);
            next_a = parent_of(store, x)?;
        }
        if let Some(y) = next_b {
            if seen_a.contains(&y) {
                return Ok(Some(y));
            }
            seen_b.insert(y);
            next_b = parent_of(store, y)?;
        }
        if next_a.is_none() && next_b.is_none() {
            return Ok(None);
        }
    }
}

/// The lock file in the way of updating `refname` locally: the ref's own (the store's update takes
/// no other lock; `packed-refs.lock` never blocks it, see `store::refs`).
fn lock_in_the_way(store: &Store, refname: &str) -> Option<Unsettled> {
    let candidates = [store.common_dir().join(format!("{refname}.lock"))];
    let locks: Vec<LockFile> = candidates
        .into_iter()
        .filter(|p| p.exists())
        .map(|path| {
            let age_secs = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .map(|d| d.as_secs());
            LockFile { path: path.display().to_string(), age_secs }
        })
        .collect();
    (!locks.is_empty()).then_some(Unsettled::Locked { locks })
}

/// Where one ref stands after integration.
enum State {
    /// Local equals the remote.
    Agreed,
    /// Local is ahead (or the remote lacks it): push.
    Ahead,
    /// Could not be brought into agreement locally.
    Stuck(Unsettled),
}

/// Integrates one staged ref into the local ref; records the commits received from the remote.
fn integrate_ref(
    store: &Store,
    local_name: &str,
    remote_tip: ObjectId,
    mut event: impl FnMut(RefAction),
    received: &mut BTreeMap<String, BTreeSet<ObjectId>>,
) -> Result<State, SyncError> {
    // Each step is a compare-and-swap from what we just read; a lost race (another local writer) is
    // re-read on the next pass.
    let mut last_local = None;
    for attempt in 1..=LOCAL_ATTEMPTS {
        let local = store.tip(local_name)?;
        last_local = local;
        let Some(l) = local else {
            let got = commits_until(store, remote_tip, None)?;
            let action = RefAction::Created { to: remote_tip.to_string() };
            match try_cas(store, local_name, None, remote_tip, attempt, &mut event)? {
                Cas::Done => {
                    received.entry(local_name.to_string()).or_default().extend(got);
                    event(action);
                    return Ok(State::Agreed);
                }
                Cas::Again => continue,
                Cas::Locked(state) => return Ok(state),
            }
        };
        if l == remote_tip {
            return Ok(State::Agreed);
        }
        let base = merge_base(store, l, remote_tip)?;
        let (new, action, got) = if base == Some(l) {
            let got = commits_until(store, remote_tip, Some(l))?;
            (remote_tip, RefAction::FastForwarded { from: l.to_string(), to: remote_tip.to_string() }, got)
        } else if base == Some(remote_tip) {
            return Ok(State::Ahead);
        } else if owner_of(local_name).is_some() {
            event(RefAction::Diverged { local: l.to_string(), remote: remote_tip.to_string() });
            return Ok(State::Stuck(Unsettled::Diverged { local: l.to_string(), remote: remote_tip.to_string() }));
        } else {
            let got = commits_until(store, remote_tip, base)?;
            let mut only_local = commits_until(store, l, base)?;
            only_local.reverse();
            let mut parent = remote_tip;
            for c in &only_local {
                parent = store.reparent(*c, parent)?;
            }
            (parent, RefAction::Rebased { records: only_local.len(), onto: remote_tip.to_string() }, got)
        };
        match try_cas(store, local_name, Some(l), new, attempt, &mut event)? {
            Cas::Done => {
                received.entry(local_name.to_string()).or_default().extend(got);
                event(action);
                return Ok(State::Agreed);
            }
            Cas::Again => {}
            Cas::Locked(state) => return Ok(state),
        }
    }
    Ok(State::Stuck(Unsettled::Moving {
        local: last_local.map(|l| l.to_string()),
        remote: Some(remote_tip.to_string()),
    }))
}

/// The outcome of one local compare-and-swap attempt during integration.
enum Cas {
    /// The ref moved.
    Done,
    /// Lost a race (or a lock was briefly in the way): read again.
    Again,
    /// A lock stayed in the way through every attempt.
    Locked(State),
}

fn try_cas(
    store: &Store,
    refname: &str,
    expected: Option<ObjectId>,
    new: ObjectId,
    attempt: u32,
    event: &mut impl FnMut(RefAction),
) -> Result<Cas, SyncError> {
    let lock_or = |err: Option<StoreError>, event: &mut dyn FnMut(RefAction)| -> Result<Cas, SyncError> {
        match (lock_in_the_way(store, refname), err) {
            (Some(locked), _) if attempt == LOCAL_ATTEMPTS => {
                if let Unsettled::Locked { locks } = &locked {
                    event(RefAction::Locked { paths: locks.iter().map(|l| l.path.clone()).collect() });
                }
                Ok(Cas::Locked(State::Stuck(locked)))
            }
            (Some(_), _) => {
                // A live git (a `pack-refs` run by maintenance, another writer) holds a lock for
                // milliseconds; one still there after every attempt is reported.
                std::thread::sleep(LOCK_PAUSE * attempt);
                Ok(Cas::Again)
            }
            (None, Some(e)) => Err(e.into()),
            (None, None) => Ok(Cas::Again),
        }
    };
    match store.cas(refname, expected, new, "git-mas sync: integrate") {
        Ok(CasOutcome::Updated) => Ok(Cas::Done),
        // Nobody moved the ref, yet the swap failed: perhaps a lock is in the way.
        Ok(CasOutcome::LostRace { .. }) if store.tip(refname)? == expected => lock_or(None, event),
        Ok(CasOutcome::LostRace { .. }) => Ok(Cas::Again),
        Err(e) => lock_or(Some(e), event),
    }
}
/// Parses `git push --porcelain` output into (ref, rejected?, summary).
fn parse_porcelain(stdout: &str) -> Vec<(String, bool, String)> {
    stdout
        .lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, '\t');
            let flag = parts.next()?;
            let spec = parts.next()?;
            let summary = parts.next().unwrap_or("").to_string();
            if flag.len() != 1 {
                return None;
            }
            let dst = spec.rsplit(':').next()?.to_string();
            Some((dst, flag == "!", summary))
        })
        .collect()
}

/// The pause before round `round + 1`: exponential in the round, capped, with "equal jitter" (half
/// fixed, half uniformly random), so clones that collided spread out instead of colliding again.
pub fn backoff_delay(round: u32, random: u16) -> Duration {
    let full = BACKOFF_BASE.saturating_mul(1u32 << round.saturating_sub(1).min(16)).min(BACKOFF_CAP);
    let half = full / 2;
    half + half.mul_f64(f64::from(random) / f64::from(u16::MAX))
}

fn random_u16() -> u16 {
    let mut bytes = [0u8; 2];
    let _ = getrandom::fill(&mut bytes);
    u16::from_le_bytes(bytes)
}

/// Holds the per-clone sync lock until dropped.
struct SyncMutex {
    _file: std::fs::File,
}

fn lock_mutex(store: &Store) -> Result<SyncMutex, SyncError> {
    let path = store.common_dir().join(MUTEX_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|source| SyncError::Mutex { path: path.clone(), source })?;
    let start = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(SyncMutex { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => {
                if start.elapsed() >= MUTEX_WAIT {
                    return Err(SyncError::Busy { path, waited: start.elapsed() });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(std::fs::TryLockError::Error(source)) => return Err(SyncError::Mutex { path, source }),
        }
    }
}

/// Removes `.lock` files under the staging namespace. Only a sync holding the sync lock writes
/// there, so any lock file found is left by a killed `git fetch`, which would refuse to run.
fn sweep_staging(store: &Store, staging: &str) -> Result<Vec<String>, SyncError> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "lock") {
                out.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(&store.common_dir().join(staging.trim_end_matches('/')), &mut found);
    let mut swept = Vec::new();
    for path in found {
        match std::fs::remove_file(&path) {
            Ok(()) => swept.push(path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(SyncError::Sweep { path, source }),
        }
    }
    Ok(swept)
}

/// What a sync has learned so far, across its rounds.
#[derive(Default)]
struct Exchange {
    /// Every ref event, in order.
    events: Vec<RefEvent>,
    /// Per local ref: the commits received from the remote.
    received: BTreeMap<String, BTreeSet<ObjectId>>,
    /// Per ref: the remote tip as last observed (fetched, or accepted from our push).
    observed: BTreeMap<String, Option<ObjectId>>,
    /// Per ref: what is still unsettled about it.
    stuck: BTreeMap<String, Unsettled>,
}

impl Exchange {
    /// The remote tip of `refname` as last observed.
    fn seen(&self, refname: &str) -> Option<ObjectId> {
        self.observed.get(refname).copied().flatten()
    }
}

/// A ref's target as an object id (a symbolic or unreadable ref has none).
fn tip_of(target: Option<&str>) -> Option<ObjectId> {
    target.and_then(|t| ObjectId::from_hex(t.as_bytes()).ok())
}

/// Step 2 of a round: integrates every staged ref into its local ref.
fn integrate_staged(store: &Store, staging: &str, round: u32, ex: &mut Exchange) -> Result<(), SyncError> {
    for staged in store.list(staging)? {
        let Some(remote_tip) = tip_of(staged.target.as_deref()) else { continue };
        let local_name = format!("{REF_PREFIX}{}", &staged.name[staging.len()..]);
        ex.observed.insert(local_name.clone(), Some(remote_tip));
        let events = &mut ex.events;
        let state = integrate_ref(
            store,
            &local_name,
            remote_tip,
            |action| events.push(RefEvent { round, refname: local_name.clone(), action }),
            &mut ex.received,
        )?;
        if let State::Stuck(why) = state {
            ex.stuck.insert(local_name, why);
        }
    }
    Ok(())
}

/// What to push: every local chain the remote lacks or is behind on. A ref behind or beside the
/// remote without being stuck was moved by a local writer after integration: it is marked moving.
fn refs_to_push(store: &Store, ex: &mut Exchange) -> Result<Vec<(String, ObjectId)>, SyncError> {
    let mut to_push = Vec::new();
    for local in store.list(REF_PREFIX)? {
        let Some(tip) = tip_of(local.target.as_deref()) else { continue };
        if ex.stuck.contains_key(&local.name) {
            continue;
        }
        let seen = ex.seen(&local.name);
        let push = match seen {
            None => true,
            Some(r) if r == tip => false,
            Some(r) => store.is_ancestor(r, tip)?,
        };
        if push {
            to_push.push((local.name, tip));
        } else if seen != Some(tip) {
            ex.stuck.insert(
                local.name.clone(),
                Unsettled::Moving { local: Some(tip.to_string()), remote: seen.map(|r| r.to_string()) },
            );
        }
    }
    Ok(to_push)
}

/// What `git push` reported: per-ref statuses (ref, rejected?, summary) and what the remote said
/// on its `remote:` lines (a hook's message, at most [`REMOTE_LINES`] of them).
type Pushed = (Vec<(String, bool, String)>, Vec<String>);

/// The most `remote:` lines of a push kept for the report.
const REMOTE_LINES: usize = 8;

/// From this many refs to push on, one pattern refspec (`refs/mas/*:refs/mas/*`) is pushed instead
/// of one refspec per ref: git matches every explicit refspec against every ref (10,000 refspecs
/// took 110 s here, the pattern under 3 s).
pub const PATTERN_PUSH_FROM: usize = 64;

/// Runs `git push --porcelain` of `to_push` (without force) and returns its per-ref statuses.
///
/// Up to [`PATTERN_PUSH_FROM`] refs, each is named; beyond, the pattern pushes every local ref
/// under `refs/mas/` that differs from the remote's. The refs it pushes beyond `to_push` are
/// ones sync left alone this round: a diverged or locked one is behind or beside the remote, and
/// the remote rejects it (never forced); a moving one is ahead and lands, as the next sync would
/// push it. Either way only `to_push`'s statuses are read, and [`settle`] judges every ref
/// against the remote afterwards as before.
fn push(store: &Store, remote: &str, to_push: &[(String, ObjectId)]) -> Result<Pushed, SyncError> {
    // Hooks run as for any push (git-mas's own pre-push hook gates branches only and lets
    // refs/mas/* through).
    let mut args = vec!["push".to_string(), "--porcelain".into(), remote.into()];
    if to_push.len() >= PATTERN_PUSH_FROM {
        args.push(format!("{REF_PREFIX}*:{REF_PREFIX}*"));
    } else {
        args.extend(to_push.iter().map(|(name, _)| format!("{name}:{name}")));
    }
    // Exit 1: a ref was rejected; 128: git died. Either way the statuses printed say what landed.
    let push = |remote, stderr| SyncError::Push { remote, stderr };
    let out = git(store).answers(&[1, 128]).output(&args).map_err(|e| failure(e, remote, push))?;
    let statuses = parse_porcelain(&String::from_utf8_lossy(&out.stdout));
    let stderr = scrub(&String::from_utf8_lossy(&out.stderr), remote);
    if statuses.is_empty() && out.code != 0 {
        return Err(SyncError::Push { remote: shown_remote(remote), stderr: stderr.trim().into() });
    }
    let said = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("remote:"))
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .take(REMOTE_LINES)
        .collect();
    Ok((statuses, said))
}

/// Whether a rejected push's summary is the remote refusing the ref itself, which another round
/// would not change: `[remote rejected]` for any reason but a lost race on the remote's ref
/// (a ref lock taken, an old value that no longer holds). `[rejected]` (behind: fetch first,
/// non-fast-forward, stale info) is always a race.
pub fn is_refusal(summary: &str) -> bool {
    const RACES: [&str; 5] =
        ["cannot lock ref", "failed to lock", "unable to lock", "failed to update ref", "incorrect old value"];
    summary.starts_with("[remote rejected]") && !RACES.iter().any(|r| summary.contains(r))
}

/// Records what the remote said of each pushed ref; returns whether a ref must be tried again
/// (rejected, or not mentioned by git and so not known to have landed).
fn record_push(round: u32, to_push: &[(String, ObjectId)], pushed: &Pushed, ex: &mut Exchange) -> bool {
    let (statuses, said) = pushed;
    let by_ref: std::collections::HashMap<&str, (bool, &String)> =
        statuses.iter().map(|(dst, bad, summary)| (dst.as_str(), (*bad, summary))).collect();
    let mut retry = false;
    for (name, tip) in to_push {
        match by_ref.get(name.as_str()) {
            Some(&(true, summary)) => {
                let why = if is_refusal(summary) {
                    Unsettled::Refused { summary: summary.clone(), remote_said: said.clone() }
                } else {
                    retry = true;
                    Unsettled::Rejected { summary: summary.clone() }
                };
                ex.stuck.insert(name.clone(), why);
                ex.events.push(RefEvent {
                    round,
                    refname: name.clone(),
                    action: RefAction::Rejected { reason: summary.clone() },
                });
            }
            Some(&(false, summary)) => {
                ex.observed.insert(name.clone(), Some(*tip));
                if summary != "[up to date]" {
                    ex.events.push(RefEvent {
                        round,
                        refname: name.clone(),
                        action: RefAction::Pushed { to: tip.to_string() },
                    });
                }
            }
            None => {
                retry = true;
                ex.stuck.insert(name.clone(), Unsettled::Rejected { summary: "no status from git push".into() });
            }
        }
    }
    retry
}

/// One fetch–integrate–push round; returns whether another round is needed.
fn run_round(store: &Store, remote: &str, staging: &str, round: u32, ex: &mut Exchange) -> Result<bool, SyncError> {
    fetch(store, remote)?;
    ex.observed.clear();
    ex.stuck.clear();
    integrate_staged(store, staging, round, ex)?;
    let to_push = refs_to_push(store, ex)?;
    let mut retry = ex.stuck.values().any(|w| matches!(w, Unsettled::Moving { .. }));
    if !to_push.is_empty() {
        let pushed = push(store, remote, &to_push)?;
        retry |= record_push(round, &to_push, &pushed, ex);
    }
    Ok(retry)
}

/// Moves each staging ref to the tip the remote accepted from our push, so that the staging
/// namespace holds the remote's refs as of this sync's last exchange with it, not only as of its
/// last fetch ([`standing`] reads it). Best effort: a staging ref left behind makes `standing`
/// say "ahead" until the next sync, and changes no decision (nothing but `standing` reads it
/// outside a sync, and every sync fetches it anew).
fn record_pushed(store: &Store, staging: &str, ex: &Exchange) {
    for (name, tip) in &ex.observed {
        let (Some(tip), Some(rest)) = (tip, name.strip_prefix(REF_PREFIX)) else { continue };
        let staged = format!("{staging}{rest}");
        let Ok(current) = store.tip(&staged) else { continue };
        if current != Some(*tip) {
            let _ = store.cas(&staged, current, *tip, "git mas sync: pushed");
        }
    }
}

/// The final word: every local ref against the remote tip last observed, and every observed ref
/// that no longer exists locally; what disagrees and is not already stuck is moving.
fn settle(store: &Store, ex: &mut Exchange) -> Result<(), SyncError> {
    for local in store.list(REF_PREFIX)? {
        let tip = tip_of(local.target.as_deref());
        let seen = ex.seen(&local.name);
        if tip != seen && !ex.stuck.contains_key(&local.name) {
            ex.stuck.insert(
                local.name.clone(),
                Unsettled::Moving { local: tip.map(|t| t.to_string()), remote: seen.map(|s| s.to_string()) },
            );
        }
    }
    for (name, seen) in &ex.observed {
        if seen.is_some() && store.tip(name)?.is_none() && !ex.stuck.contains_key(name) {
            ex.stuck.insert(name.clone(), Unsettled::Moving { local: None, remote: seen.map(|s| s.to_string()) });
        }
    }
    Ok(())
}

/// The longest remote name or URL sync passes to git (Linux's `PATH_MAX`; the kernel refuses a
/// single argument over 128 KiB, which would otherwise surface as "cannot run git").
pub const MAX_REMOTE_LEN: usize = 4096;

/// Why `remote` cannot be synced with, or `None` when git may be given it. A URL or a path
/// (anything with `/` or `:`, `.` and `..`) is git's to judge; a remote's name must be one git
/// itself accepts (`refs/remotes/<name>/x` a valid ref name, git's `valid_remote_name`). Any of
/// them must be non-empty, not start with `-` (git would read an option), hold no control
/// character and be at most [`MAX_REMOTE_LEN`] bytes.
pub fn remote_problem(remote: &str) -> Option<&'static str> {
    if remote.is_empty() {
        return Some("it is empty");
    }
    if remote.len() > MAX_REMOTE_LEN {
        return Some("it is longer than 4096 bytes");
    }
    if remote.starts_with('-') {
        return Some("it starts with '-' (git would read it as an option)");
    }
    if remote.chars().any(char::is_control) {
        return Some("it holds a control character");
    }
    let path_or_url = remote.contains(['/', ':']) || remote == "." || remote == "..";
    if !path_or_url && gix::refs::FullName::try_from(format!("refs/remotes/{remote}/x").as_str()).is_err() {
        return Some("it is not a valid remote name (see git check-ref-format)");
    }
    None
}

/// How `refs/mas/` stands against a remote as of the last sync's fetch (its staging namespace,
/// [`staging_prefix`]): nothing here talks to the remote.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Standing {
    /// Whether a sync has fetched from this remote (its staging namespace holds any ref).
    pub fetched: bool,
    /// Refs at the same commit on both sides.
    pub same: usize,
    /// Refs the remote lacks or is behind on: the next sync pushes them.
    pub ahead: Vec<String>,
    /// Refs the remote has newer or that only it has: the next sync takes them.
    pub behind: Vec<String>,
    /// Refs that moved on both sides.
    pub diverged: Vec<String>,
}

/// [`Standing`] of `refs/mas/` against `remote`'s refs as the last sync fetched them.
pub fn standing(store: &Store, remote: &str) -> Result<Standing, StoreError> {
    let staging = staging_prefix(remote);
    let tips = |prefix: &str, strip: &str| -> Result<BTreeMap<String, ObjectId>, StoreError> {
        Ok(store
            .list(prefix)?
            .into_iter()
            .filter_map(|r| {
                let tip = tip_of(r.target.as_deref())?;
                Some((format!("{REF_PREFIX}{}", r.name.strip_prefix(strip)?), tip))
            })
            .collect())
    };
    let local = tips(REF_PREFIX, REF_PREFIX)?;
    let remote_tips = tips(&staging, &staging)?;
    let mut out = Standing { fetched: !remote_tips.is_empty(), ..Standing::default() };
    let names: BTreeSet<&String> = local.keys().chain(remote_tips.keys()).collect();
    for name in names {
        match (local.get(name), remote_tips.get(name)) {
            (Some(l), Some(r)) if l == r => out.same += 1,
            (Some(_), None) => out.ahead.push(name.clone()),
            (None, Some(_)) => out.behind.push(name.clone()),
            (Some(&l), Some(&r)) => match merge_base(store, l, r)? {
                Some(b) if b == r => out.ahead.push(name.clone()),
                Some(b) if b == l => out.behind.push(name.clone()),
                _ => out.diverged.push(name.clone()),
            },
            (None, None) => {}
        }
    }
    Ok(out)
}

/// Syncs `refs/mas/*` with `remote`.
pub fn sync(store: &Store, remote: &str) -> Result<SyncReport, SyncError> {
    if let Some(why) = remote_problem(remote) {
        let shown = match remote.char_indices().nth(64) {
            Some((cut, _)) => format!("{}…", &remote[..cut]),
            None => remote.to_string(),
        };
        return Err(SyncError::BadRemote { remote: shown, why });
    }
    // Read before anything moves: a broken roster fails the sync with nothing changed.
    let roster = store.roster()?;
    let _mutex = lock_mutex(store)?;
    let staging = staging_prefix(remote);
    let swept = sweep_staging(store, &staging)?;
    let mut ex = Exchange::default();
    let mut rounds = 0;
    for n in 1..=MAX_ROUNDS {
        rounds = n;
        if !run_round(store, remote, &staging, n, &mut ex)? {
            break;
        }
        if n < MAX_ROUNDS {
            std::thread::sleep(backoff_delay(n, random_u16()));
        }
    }
    settle(store, &mut ex)?;
    record_pushed(store, &staging, &ex);
    let unresolved =
        std::mem::take(&mut ex.stuck).into_iter().map(|(refname, why)| Unresolved { refname, why }).collect();
    let mut parked = Vec::new();
    for (refname, got) in &ex.received {
        if is_record_chain(refname) {
            parked.extend(parked_in(store, &roster, refname, |c| got.contains(c))?);
        }
    }
    Ok(SyncReport { remote: shown_remote(remote), events: ex.events, unresolved, parked, swept, rounds })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_names_are_judged_as_git_judges_them() {
        let long = "a".repeat(MAX_REMOTE_LEN + 1);
        let table: Vec<(&str, bool)> = vec![
            ("origin", true),
            ("my-fork_2.old", true),
            ("git://127.0.0.1:9418/remote.git", true),
            ("../remote.git", true),
            ("/srv/git/remote.git", true),
            ("host:path/repo", true),
            (".", true),
            ("", false),
            ("-x", false),
            ("--upload-pack=evil", false),
            ("a..b", false),
            ("a b", false),
            ("a~1", false),
            ("has\nnewline", false),
            ("back\\slash", false),
            (&long, false),
        ];
        for (remote, ok) in table {
            assert_eq!(remote_problem(remote).is_none(), ok, "{remote:?}: {:?}", remote_problem(remote));
        }
    }

    #[test]
    fn push_statuses_settle_refs_or_ask_for_another_round() {
        let a = ObjectId::from_hex(b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa").unwrap();
        let name = "refs/mas/frame".to_string();
        let rejected = || Unsettled::Rejected { summary: "[rejected] (fetch first)".into() };
        // (status from git, retry?, observed tip, unsettled, events)
        let table = [
            (Some((false, "[new reference]")), false, Some(a), None, 1),
            (Some((false, "[up to date]")), false, Some(a), None, 0),
            (Some((true, "[rejected] (fetch first)")), true, None, Some(rejected()), 1),
            (None, true, None, Some(Unsettled::Rejected { summary: "no status from git push".into() }), 0),
            (
                Some((true, "[remote rejected] (pre-receive hook declined)")),
                false,
                None,
                Some(Unsettled::Refused {
                    summary: "[remote rejected] (pre-receive hook declined)".into(),
                    remote_said: vec!["only branches and tags".into()],
                }),
                1,
            ),
        ];
        for (status, retry, observed, unsettled, events) in table {
            let statuses: Vec<(String, bool, String)> =
                status.iter().map(|(bad, summary)| (name.clone(), *bad, summary.to_string())).collect();
            let mut ex = Exchange::default();
            let pushed = (statuses, vec!["only branches and tags".to_string()]);
            assert_eq!(record_push(1, &[(name.clone(), a)], &pushed, &mut ex), retry, "{status:?}");
            assert_eq!(ex.seen(&name), observed, "{status:?}");
            assert_eq!(ex.stuck.get(&name), unsettled.as_ref(), "{status:?}");
            assert_eq!(ex.events.len(), events, "{status:?}");
        }
    }

    #[test]
    fn a_remote_refusing_the_ref_is_told_from_a_race() {
        for refusal in [
            "[remote rejected] (pre-receive hook declined)",
            "[remote rejected] (hook declined)",
            "[remote rejected] (deny updating a hidden ref)",
            "[remote rejected] (shallow update not allowed)",
        ] {
            assert!(is_refusal(refusal), "{refusal}");
        }
        for race in [
            "[rejected] (fetch first)",
            "[rejected] (non-fast-forward)",
            "[rejected] (stale info)",
            "[remote rejected] (cannot lock ref 'refs/mas/shared/x': is at 1 but expected 2)",
            "[remote rejected] (failed to update ref)",
            "[remote rejected] (incorrect old value provided)",
            "",
        ] {
            assert!(!is_refusal(race), "{race}");
        }
    }

    #[test]
    fn a_password_in_a_url_is_never_shown() {
        let cases = [
            ("https://alice:s3cret@example.com/team.git", "https://alice:<redacted>@example.com/team.git"),
            ("http://alice:p%40ss@127.0.0.1:8080/git/t.git", "http://alice:<redacted>@127.0.0.1:8080/git/t.git"),
            ("https://alice@example.com/team.git", "https://alice@example.com/team.git"),
            ("https://example.com/a:b@c", "https://example.com/a:b@c"),
            ("git@example.com:team.git", "git@example.com:team.git"),
            ("origin", "origin"),
            ("/srv/git/team.git", "/srv/git/team.git"),
        ];
        for (given, shown) in cases {
            assert_eq!(shown_remote(given), shown, "{given}");
        }
        let url = "https://alice:s3cret@example.com/team.git";
        assert_eq!(
            scrub("fatal: unable to access 'https://alice:s3cret@example.com/'", url),
            "fatal: unable to access 'https://alice:<redacted>@example.com/'"
        );
    }

    #[test]
    fn porcelain_lines_are_parsed() {
        let out = "To /tmp/r.git\n \trefs/mas/a:refs/mas/a\t[new reference]\n!\trefs/mas/b:refs/mas/b\t[rejected] (fetch first)\nDone\n";
        let parsed = parse_porcelain(out);
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0], ("refs/mas/a".into(), false, "[new reference]".into()));
        assert!(parsed[1].1);
    }

    #[test]
    fn staging_names_are_ref_safe() {
        assert_eq!(staging_prefix("origin"), "refs/mas-remote/origin/");
        let url = staging_prefix("/tmp/some path/remote.git");
        assert!(url.starts_with("refs/mas-remote/url-") && !url.contains(' '));
    }

    #[test]
    fn backoff_grows_is_capped_and_jittered_within_bounds() {
        let cases = [(1, 20), (2, 40), (3, 80), (4, 160), (5, 320), (6, 640), (7, 800), (9, 800), (40, 800)];
        for (round, full_ms) in cases {
            let full = Duration::from_millis(full_ms);
            assert_eq!(backoff_delay(round, 0), full / 2, "round {round}, no jitter");
            let most = backoff_delay(round, u16::MAX);
            assert!(most <= full && most > full / 2 + (full / 2).mul_f64(0.99), "round {round}: {most:?}");
        }
    }

    #[test]
    fn proposal_refs_are_not_record_chains() {
        assert!(is_record_chain("refs/mas/frame"));
        assert!(is_record_chain("refs/mas/runs/r1/events/alice"));
        assert!(is_record_chain("refs/mas/runs/r1/meta"));
        assert!(!is_record_chain("refs/mas/runs/r1/proposals/alice") && !is_record_chain("refs/mas/kept/bob/01ab"));
        assert!(!is_record_chain("refs/heads/main"));
    }
}

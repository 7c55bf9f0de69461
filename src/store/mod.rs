//! Event-sourced coordination state in `refs/mas/`, read and written through `gix` only.
//!
//! Every ref under `refs/mas/` is an append-only **chain**: each commit's tree holds one record
//! (`record.json`, canonical JSON, signed) plus any files the record refers to, and its parent is the
//! previous record. Appending is "write blob, tree and commit, then compare-and-swap the ref from the
//! tip we read to the new commit". Losing that race is an expected, typed outcome
//! ([`CasOutcome::LostRace`]); [`Store::append`] re-reads, re-signs and retries it, up to
//! [`MAX_APPEND_ATTEMPTS`] times, so a record is never lost and never written twice.
//!
//! Nothing here touches an index or a working tree (apart from reading `.mas/roster`), and all state
//! lives in the common git dir, so every linked worktree sees every record at once. Refs keep their
//! chains reachable, so `git gc` never drops a record.
//!
//! Which agent may write a chain follows from its name ([`owner_of`]): the last component of
//! `refs/mas/journal/<agent>`, `refs/mas/focus/<agent>`, `refs/mas/runs/<run>/events/<agent>` and
//! `refs/mas/runs/<run>/proposals/<agent>` is its only writer; any other ref is shared, written by
//! compare-and-swap by any roster agent.

pub mod canonical;
pub mod damage;
mod entries;
mod listcache;
pub mod record;
pub mod refs;
mod remedy;
pub mod rostercache;
mod rosterchange;
pub mod sealed;
pub mod sigcache;
pub mod windowcache;

use crate::identity::{self, AgentKey, ROSTER_PATH, Roster, RosterError};
use gix::ObjectId;
use gix::bstr::ByteSlice;
use record::{ParseError, RECORD_FILE, Record, Verdict};
use refs::{RefFileError, RefFiles};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The namespace of all coordination state.
pub const REF_PREFIX: &str = "refs/mas/";

/// How many times an append re-reads and retries after losing a race.
pub const MAX_APPEND_ATTEMPTS: u32 = 1000;

/// How many of a chain's newest records an append reads for the next sequence number, and how
/// far back it reads for its writer's own last record (see `Store::seq_floor`).
pub const SEQ_WINDOW: usize = 16;
/// See [`SEQ_WINDOW`].
pub const SEQ_WALK: usize = 4096;

/// How many of a chain's newest records [`Store::newest_verified`] verifies before the whole chain.
pub const CURRENT_WINDOW: usize = 32;

/// Errors from the store.
#[derive(Debug, Error)]
pub enum StoreError {
    /// No repository at or above the path.
    #[error("not a git repository (or any parent up to the file system root): {}", path.display())]
    NotARepository { path: PathBuf },
    /// A command that needs a working tree ran in a bare repository.
    #[error("this command needs a working tree, but {} is a bare repository", path.display())]
    Bare { path: PathBuf },
    /// A ref name outside `refs/mas/` or not valid for git.
    #[error("{name:?} is not a valid ref under {REF_PREFIX}")]
    BadRefName { name: String },
    /// The roster could not be read.
    #[error(transparent)]
    Roster(#[from] RosterError),
    /// An append kept losing races.
    #[error("gave up appending to {refname} after {attempts} lost races")]
    TooManyRetries { refname: String, attempts: u32 },
    /// The chain tip's sequence number cannot be incremented.
    #[error("sequence number overflow in {refname}")]
    SeqOverflow { refname: String },
    /// A lock file left behind by a process that died blocks a ref update.
    #[error("{} blocks updating {refname}: it was left {} s ago by a process that did not finish", lock.display(), age.as_secs())]
    StaleLock { refname: String, lock: PathBuf, age: std::time::Duration },
    /// A loose ref file holds something that is not an object id.
    #[error("ref {name} is unreadable: it holds {content:?}")]
    UnreadableRef { name: String, content: String },
    /// A git operation failed.
    #[error("git: {context}")]
    Git {
        context: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A record's commit, tree or blob is not in the object database (`git gc --prune=now` beside
    /// a writer, a lost pack): its chain is damaged ([`damage`]).
    #[error("record {record} cannot be read: its {what} {missing} is missing from the object database")]
    MissingObject { record: ObjectId, missing: ObjectId, what: damage::Part },
    /// A record's payload could not be encoded as JSON: serde refused a value, not git.
    #[error("cannot encode {what}")]
    Encode {
        what: String,
        #[source]
        source: serde_json::Error,
    },
    /// A file operation failed.
    #[error("cannot access {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn git_err<E: std::error::Error + Send + Sync + 'static>(context: impl Into<String>) -> impl FnOnce(E) -> StoreError {
    let context = context.into();
    move |e| StoreError::Git { context, source: Box::new(e) }
}

/// The outcome of a compare-and-swap ref update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CasOutcome {
    /// The ref now points at the new value.
    Updated,
    /// Someone else moved the ref first; it points at `actual` (`None`: it does not exist).
    LostRace { actual: Option<ObjectId> },
}

/// One record of a chain as stored.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The record's commit.
    pub commit: ObjectId,
    /// Its parent (the previous record), if any.
    pub parent: Option<ObjectId>,
    /// The record blob's id, when the tree has one.
    pub blob: Option<ObjectId>,
    /// The parsed record, or why it could not be parsed.
    pub record: Result<Record, ParseError>,
}

/// A ref under a prefix, with its target (or why it has none).
#[derive(Debug, Clone, serde::Serialize)]
pub struct RefInfo {
    /// Full ref name.
    pub name: String,
    /// The commit it points at.
    pub target: Option<String>,
    /// Why it could not be read, if it could not.
    pub problem: Option<String>,
}

/// What an append wrote.
#[derive(Debug, Clone)]
pub struct Appended {
    /// The new record's commit.
    pub commit: ObjectId,
    /// Its sequence number.
    pub seq: u64,
    /// How many attempts it took (1 when no race was lost).
    pub attempts: u32,
}

/// What one attempt of [`Store::append_with`] appends: the payload, and other refs to move with it.
#[derive(Debug, Clone)]
pub struct Append {
    /// The record's payload.
    pub payload: serde_json::Value,
    /// Other refs moved in the same transaction.
    pub also: Vec<RefMove>,
}

/// A ref moved together with an append.
#[derive(Debug, Clone)]
pub struct RefMove {
    /// Full ref name (any ref, not only under `refs/mas/`).
    pub name: String,
    /// The value it must have now (`None`: it must not exist).
    pub expected: Option<ObjectId>,
    /// What it moves to.
    pub new: MoveTo,
}

/// Where a [`RefMove`] points its ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveTo {
    /// The record commit being appended.
    Record,
    /// A given commit.
    Commit(ObjectId),
}

/// The agent that alone may write `refname`, or `None` for a shared chain.
pub fn owner_of(refname: &str) -> Option<&str> {
    let rest = refname.strip_prefix(REF_PREFIX)?;
    let parts: Vec<&str> = rest.split('/').collect();
    match parts.as_slice() {
        ["journal" | "focus" | "lanes", agent] => Some(agent),
        ["runs", _, "events" | "proposals", agent] => Some(agent),
        _ => None,
    }
}

/// The per-agent journal chain (general-purpose records).
pub fn journal_ref(agent: &str) -> String {
    format!("{REF_PREFIX}journal/{agent}")
}

/// Checks that `name` is a full ref under `refs/mas/` that git would accept.
pub fn validate_ref(name: &str) -> Result<(), StoreError> {
    let bad = || StoreError::BadRefName { name: name.into() };
    let rest = name.strip_prefix(REF_PREFIX).ok_or_else(bad)?;
    if rest.is_empty() || rest.ends_with('/') {
        return Err(bad());
    }
    gix::refs::FullName::try_from(name).map_err(|_| bad())?;
    Ok(())
}

/// The coordination store of one repository.
pub struct Store {
    repo: gix::Repository,
    common_dir: PathBuf,
    refs: RefFiles,
    sigs: std::cell::RefCell<Option<sigcache::SigCache>>,
    roster_cache: std::cell::RefCell<Option<Roster>>,
    roster_parsed: std::cell::RefCell<Option<(RosterSources, Roster)>>,
    windows: std::cell::RefCell<std::collections::HashMap<windowcache::CacheKey, windowcache::Remembered>>,
    /// Files read from a commit's tree ([`Store::committed_file`]), by commit and path: a commit
    /// id names its tree, so what was read once stays true (the roster is read several times per
    /// command).
    committed_files: std::cell::RefCell<HashMap<(ObjectId, String), CommittedFile>>,
    /// Records read from their objects ([`Store::entry`]), by commit (the `entries` module).
    entries: std::cell::RefCell<HashMap<ObjectId, Entry>>,
}

/// A file's bytes in a commit's tree, or `None` when the tree has no such file.
type CommittedFile = Option<Vec<u8>>;

/// What a store has learned that stays true for as long as the key it is filed under holds, carried
/// from one store to the next by a long-lived process (the MCP server opens a fresh store for every
/// tool call, so its repository handle, config and refs are never stale, and hands it this).
///
/// - the signature cache: blob id and did:key → "verifies" (objects are content-addressed);
/// - the parsed roster, keyed by the exact bytes it was parsed from (the integration branch's name,
///   its committed `.mas/roster`, the worktree's) — those bytes are re-read on every call;
/// - the verified windows of the focus and frame chains ([`windowcache::Remembered`]), keyed by
///   prefix, window length and roster digest, each window by its ref's exact tip — the refs are
///   re-read on every call.
///
/// A stale entry cannot change a decision: an entry is used only when its key is exactly what was
/// read this time, and what it holds is a pure function of that key. Nothing that depends on the
/// clock is kept (no board, no liveness): folds run at read time, so a lease lapses on time with no
/// ref moving. Memory from another repository is dropped ([`Store::remember`]).
#[derive(Debug)]
pub struct Memory {
    common_dir: PathBuf,
    sigs: Option<sigcache::SigCache>,
    roster_parsed: Option<(RosterSources, Roster)>,
    windows: std::collections::HashMap<windowcache::CacheKey, windowcache::Remembered>,
}

/// What a roster is parsed from: the integration branch, its committed file, the worktree's file.
/// What a roster is parsed from: the integration branch, its tip, the worktree's file.
type RosterSources = (String, Option<ObjectId>, Option<Vec<u8>>);

impl Store {
    /// Finds the repository containing `start` (any subdirectory, any linked worktree, or a bare
    /// repository).
    pub fn discover(start: &Path) -> Result<Self, StoreError> {
        let repo = gix::discover(start).map_err(|_| StoreError::NotARepository { path: start.into() })?;
        Ok(Self::from_repo(repo))
    }

    /// Wraps an open repository.
    pub fn from_repo(repo: gix::Repository) -> Self {
        let common = repo.common_dir();
        let common_dir = std::fs::canonicalize(common).unwrap_or_else(|_| common.to_path_buf());
        let refs = RefFiles::new(common_dir.clone(), repo.object_hash());
        Store {
            repo,
            common_dir,
            refs,
            sigs: std::cell::RefCell::new(None),
            roster_cache: std::cell::RefCell::new(None),
            roster_parsed: std::cell::RefCell::new(None),
            windows: std::cell::RefCell::new(std::collections::HashMap::new()),
            committed_files: std::cell::RefCell::new(HashMap::new()),
            entries: std::cell::RefCell::new(HashMap::new()),
        }
    }

    /// This store with what an earlier store of the same repository learned ([`Memory`]); memory
    /// from another repository is dropped.
    pub fn remember(self, memory: Memory) -> Self {
        if memory.common_dir != self.common_dir {
            return self;
        }
        *self.sigs.borrow_mut() = memory.sigs;
        *self.roster_parsed.borrow_mut() = memory.roster_parsed;
        *self.windows.borrow_mut() = memory.windows;
        self
    }

    /// What this store learned, for the next store of this repository ([`Store::remember`]).
    pub fn into_memory(self) -> Memory {
        Memory {
            common_dir: self.common_dir,
            sigs: self.sigs.into_inner(),
            roster_parsed: self.roster_parsed.into_inner(),
            windows: self.windows.into_inner(),
        }
    }

    /// The repository.
    pub fn repo(&self) -> &gix::Repository {
        &self.repo
    }

    /// The common git dir, canonical: the same for every worktree of one clone.
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// The working tree, or an error naming the bare repository.
    pub fn workdir(&self) -> Result<&Path, StoreError> {
        self.repo.workdir().ok_or_else(|| StoreError::Bare { path: self.common_dir.clone() })
    }

    /// The top of every working tree of the repository, canonical: this one first, then the main
    /// one and every linked worktree whose folder exists (`git worktree list`'s, read from the
    /// common git dir).
    pub fn worktree_roots(&self) -> Vec<PathBuf> {
        let canon = |p: &Path| std::fs::canonicalize(p).ok().filter(|p| p.is_dir());
        let mut roots: Vec<PathBuf> = self.repo.workdir().and_then(canon).into_iter().collect();
        let bare = self.repo.config_snapshot().boolean("core.bare").unwrap_or(false);
        if !bare && self.common_dir.file_name().is_some_and(|n| n == ".git") {
            roots.extend(self.common_dir.parent().and_then(canon));
        }
        for proxy in self.repo.worktrees().unwrap_or_default() {
            roots.extend(proxy.base().ok().as_deref().and_then(canon));
        }
        let mut seen = std::collections::HashSet::new();
        roots.retain(|r| seen.insert(r.clone()));
        roots
    }

    /// Where git looks for hooks: `core.hooksPath` when set (relative to the top of the working
    /// tree, `~/` for the home directory), else the common git dir's `hooks/` (shared by every
    /// linked worktree).
    pub fn hooks_dir(&self) -> Result<PathBuf, StoreError> {
        match self.config_string("core.hooksPath").filter(|s| !s.is_empty()) {
            Some(p) => {
                let p = match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
                    (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
                    _ => PathBuf::from(p),
                };
                Ok(if p.is_relative() { self.workdir()?.join(p) } else { p })
            }
            None => Ok(self.common_dir.join("hooks")),
        }
    }

    /// A string from git config (the repository's, including per-worktree config).
    pub fn config_string(&self, key: &str) -> Option<String> {
        self.repo.config_snapshot().string(key).map(|s| s.to_str_lossy().into_owned())
    }

    /// A git config value set in this worktree's own configuration (`config.worktree`, with
    /// `extensions.worktreeConfig`), not inherited from the shared or global configuration.
    pub fn worktree_config_string(&self, key: &str) -> Option<String> {
        self.repo
            .config_snapshot()
            .plumbing()
            .string_filter(key, |meta| meta.source == gix::config::Source::Worktree)
            .map(|s| s.to_str_lossy().into_owned())
    }

    /// Every value of a multi-valued git config key, in order.
    pub fn config_strings(&self, key: &str) -> Vec<String> {
        self.repo
            .config_snapshot()
            .strings(key)
            .map(|v| v.into_iter().map(|s| s.to_str_lossy().into_owned()).collect())
            .unwrap_or_default()
    }

    /// The commit a revision names — a full object id, an abbreviated one of at least 7 digits, or a
    /// ref name — or `None` when it names no commit.
    pub fn resolve_commit(&self, rev: &str) -> Result<Option<ObjectId>, StoreError> {
        let id = if let Ok(id) = ObjectId::from_hex(rev.as_bytes()) {
            Some(id)
        } else if rev.len() >= 7 && rev.len() < 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()) {
            let prefix = gix::hash::Prefix::from_hex(rev).map_err(git_err(format!("parsing {rev}")))?;
            match self.repo.objects.lookup_prefix(prefix, None) {
                Ok(Some(Ok(id))) => Some(id),
                _ => None,
            }
        } else {
            match self.repo.try_find_reference(rev) {
                Ok(Some(mut r)) => r.peel_to_id().ok().map(|id| id.detach()),
                _ => None,
            }
        };
        let Some(id) = id else { return Ok(None) };
        Ok(self.repo.find_commit(id).ok().map(|c| c.id))
    }

    /// The integration branch's short name: `mas.branch`, else `main` when it exists, else the branch
    /// the repository's `HEAD` names, else `main`.
    pub fn integration_branch(&self) -> String {
        if let Some(b) = self.config_string("mas.branch").filter(|b| !b.is_empty()) {
            return b;
        }
        if matches!(self.tip("refs/heads/main"), Ok(Some(_))) {
            return "main".into();
        }
        // The common dir's HEAD is the main worktree's (or a bare repository's default branch).
        if let Ok(text) = std::fs::read_to_string(self.common_dir.join("HEAD"))
            && let Some(branch) = text.trim().strip_prefix("ref: refs/heads/")
        {
            return branch.to_string();
        }
        "main".into()
    }

    /// The roster: committed on the integration branch, plus this worktree's uncommitted entries.
    /// Read on every call; parsed only when this store has not parsed those bytes before and the
    /// roster cache ([`rostercache`]) does not hold what they parse to (parsing decodes every
    /// agent's key).
    pub fn roster(&self) -> Result<Roster, StoreError> {
        let branch = self.integration_branch();
        let tip = self.tip(&format!("refs/heads/{branch}"))?;
        let worktree = match self.repo.workdir() {
            Some(dir) => {
                let path = dir.join(ROSTER_PATH);
                match std::fs::read(&path) {
                    Ok(bytes) => Some(bytes),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(source) => return Err(StoreError::Io { path, source }),
                }
            }
            None => None,
        };
        let sources = (branch, tip, worktree);
        if let Some((seen, roster)) = self.roster_parsed.borrow().as_ref()
            && *seen == sources
        {
            return Ok(roster.clone());
        }
        let (branch, tip, worktree) = &sources;
        // The tip names the committed file: its bytes are read only when the cache has no entry.
        let tip_hex = tip.map(|t| t.to_string());
        let digest = rostercache::sources_digest(branch, tip_hex.as_deref().map(str::as_bytes), worktree.as_deref());
        let (committed, worktree) = match rostercache::load(&self.common_dir, &digest) {
            Some(parsed) => parsed,
            None => {
                let committed = match tip {
                    Some(tip) => self.file_in_commit(*tip, branch, ROSTER_PATH)?,
                    None => None,
                };
                let parse = |bytes: &Option<Vec<u8>>, origin: &str| match bytes {
                    Some(b) => identity::parse_roster(b, origin),
                    None => Ok(Vec::new()),
                };
                let parsed = (parse(&committed, &format!("{branch}:{ROSTER_PATH}"))?, parse(worktree, ROSTER_PATH)?);
                rostercache::save(&self.common_dir, &digest, &parsed.0, &parsed.1);
                parsed
            }
        };
        let roster = Roster::merge(committed, worktree, branch);
        *self.roster_parsed.borrow_mut() = Some((sources, roster.clone()));
        Ok(roster)
    }

    /// A file's bytes as committed at the tip of `branch`, if both exist.
    pub fn committed_file(&self, branch: &str, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(tip) = self.tip(&format!("refs/heads/{branch}"))? else {
            return Ok(None);
        };
        self.file_in_commit(tip, branch, path)
    }

    /// A file's bytes as committed in `tip` (a commit of `branch`, named in errors), if it exists.
    fn file_in_commit(&self, tip: ObjectId, branch: &str, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let key = (tip, path.to_string());
        if let Some(found) = self.committed_files.borrow().get(&key) {
            return Ok(found.clone());
        }
        let found = match Self::file_at(&self.repo, tip, branch, path) {
            Ok(found) => found,
            // As in `entry`: `git gc` may have repacked the objects since this process's view of the
            // packs was taken; read again through a fresh view.
            Err(first) => match gix::open(self.repo.path()) {
                Ok(fresh) => Self::file_at(&fresh, tip, branch, path).map_err(|_| first)?,
                Err(_) => return Err(first),
            },
        };
        self.committed_files.borrow_mut().insert(key, found.clone());
        Ok(found)
    }

    fn file_at(repo: &gix::Repository, tip: ObjectId, branch: &str, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let commit = repo.find_commit(tip).map_err(git_err(format!("reading {branch}")))?;
        let tree = commit.tree().map_err(git_err(format!("reading {branch}'s tree")))?;
        let Some(entry) = tree.lookup_entry_by_path(path).map_err(git_err(format!("looking up {path}")))? else {
            return Ok(None);
        };
        let object = entry.object().map_err(git_err(format!("reading {path}")))?;
        Ok(Some(object.data.clone()))
    }

    /// The commit a ref points at, `None` when the ref does not exist. Refs in the common git dir
    /// are read by [`refs::RefFiles`], correct while `git pack-refs` runs beside us.
    pub fn tip(&self, refname: &str) -> Result<Option<ObjectId>, StoreError> {
        if RefFiles::handles(refname) {
            return self.refs.read(refname).map_err(|e| ref_file_err(refname, e));
        }
        let found = self.repo.try_find_reference(refname).map_err(git_err(format!("reading {refname}")))?;
        Ok(found.and_then(|r| r.target().try_id().map(ToOwned::to_owned)))
    }

    /// Walks a chain and verifies every record against the roster. Returns (entry, verdict) pairs
    /// oldest first.
    pub fn verified_chain(&self, refname: &str, roster: &Roster) -> Result<Vec<(Entry, Verdict)>, StoreError> {
        self.verified_window(refname, roster, usize::MAX)
    }

    /// Like [`Store::verified_chain`], but reads only the newest `window` records: sequence checks
    /// then cover the window alone. For folds that only need each chain's latest state.
    pub fn verified_window(
        &self,
        refname: &str,
        roster: &Roster,
        window: usize,
    ) -> Result<Vec<(Entry, Verdict)>, StoreError> {
        self.verified_window_at(refname, self.tip(refname)?, roster, window)
    }

    /// [`Store::verified_window`] of the chain as it stands at `tip` (the ref's value as listed).
    pub fn verified_window_at(
        &self,
        refname: &str,
        tip: Option<ObjectId>,
        roster: &Roster,
        window: usize,
    ) -> Result<Vec<(Entry, Verdict)>, StoreError> {
        let mut entries = self.walk_from(tip, window)?;
        entries.reverse();
        Ok(self.verify_window(refname, entries, roster))
    }

    /// The newest `window` records of the chain at `tip`, oldest first, given `earlier`, a window
    /// of the same chain read at `earlier_tip`: only the records after `earlier_tip` are read, and
    /// joined to it. When `earlier_tip` is not among the newest `window` records at `tip` (the
    /// chain moved further, or was rewritten), those are read whole, as [`Store::walk_from`] does.
    fn walk_onto(
        &self,
        tip: ObjectId,
        earlier_tip: ObjectId,
        earlier: windowcache::Window,
        window: usize,
    ) -> Result<Vec<Entry>, StoreError> {
        let mut newer = Vec::new();
        let mut next = Some(tip);
        while let Some(id) = next {
            if newer.len() >= window {
                break;
            }
            if id == earlier_tip {
                let mut out: Vec<Entry> = earlier.into_iter().map(|(e, _)| e).collect();
                out.extend(newer.into_iter().rev());
                let excess = out.len().saturating_sub(window);
                out.drain(..excess);
                return Ok(out);
            }
            let entry = self.entry(id)?;
            next = entry.parent;
            newer.push(entry);
        }
        newer.reverse();
        Ok(newer)
    }

    /// Verifies a window of `refname`'s chain (entries oldest first) against the roster, through
    /// the signature cache.
    fn verify_window(&self, refname: &str, entries: Vec<Entry>, roster: &Roster) -> Vec<(Entry, Verdict)> {
        // Borrowed, not cloned: cloning every parsed payload measured ~7 % of a cold tally.
        let records: Vec<_> = entries.iter().map(|e| &e.record).collect();
        let mut cache = self.sigs.borrow_mut();
        let cache = cache.get_or_insert_with(|| sigcache::SigCache::load(&self.common_dir));
        let mut sig_ok = |i: usize, r: &Record, did: &str, key: &mut record::KeyFn<'_>| {
            let blob = entries[i].blob;
            if let Some(b) = &blob
                && cache.contains(b, did)
            {
                return true;
            }
            let ok = key().is_some_and(|key| r.signature_valid_under(&key));
            if ok && let Some(b) = &blob {
                cache.insert(b, did);
            }
            ok
        };
        let verdicts = record::verify_chain_with(
            &records,
            |n| roster.signer(n).map(|e| e.did.as_str()),
            owner_of(refname),
            &mut sig_ok,
        );
        cache.save();
        entries.into_iter().zip(verdicts).collect()
    }

    /// [`Store::verified_window`] of every chain under `prefix`, sorted by ref name, through the
    /// window cache ([`windowcache`]): a chain whose ref still points where it did when last read,
    /// under the same roster, is taken from the cache without reading an object or checking a
    /// signature. A ref that cannot be listed with a target is read as [`Store::verified_window`]
    /// reads it.
    pub fn verified_windows(
        &self,
        prefix: &str,
        roster: &Roster,
        window: usize,
    ) -> Result<Vec<(String, windowcache::Window)>, StoreError> {
        let mut cache = self.window_cache(prefix, roster, window);
        let mut out = Vec::new();
        for info in self.list(prefix)? {
            let tip = info.target.as_deref().and_then(|t| ObjectId::from_hex(t.as_bytes()).ok());
            let chain = match tip {
                Some(tip) => self.window_through(&mut cache, &info.name, tip, roster, window)?,
                None => self.verified_window(&info.name, roster, window)?,
            };
            out.push((info.name, chain));
        }
        self.keep_windows(cache);
        Ok(out)
    }

    /// The window cache of the chains under `prefix` (or of the one ref `prefix` names).
    /// Taken from this store's memory when it has one for the same key, else from the file.
    fn window_cache(&self, prefix: &str, roster: &Roster, window: usize) -> windowcache::WindowCache {
        let key = windowcache::CacheKey {
            common_dir: self.common_dir.clone(),
            prefix: prefix.to_string(),
            window,
            roster: windowcache::roster_digest(roster),
        };
        match self.windows.borrow_mut().remove(&key) {
            Some(remembered) => windowcache::WindowCache::resume(key, remembered),
            None => windowcache::WindowCache::load(key),
        }
    }

    /// Saves `cache` and keeps what it holds in this store's memory.
    fn keep_windows(&self, cache: windowcache::WindowCache) {
        let key = cache.key().clone();
        let remembered = cache.save();
        // One entry per prefix and window: an entry under a roster no longer current is dropped.
        let mut windows = self.windows.borrow_mut();
        windows.retain(|k, _| k.prefix != key.prefix || k.window != key.window);
        windows.insert(key, remembered);
    }

    /// The verified window of `refname` at `tip`: from `cache` when it has it, else read and kept.
    fn window_through(
        &self,
        cache: &mut windowcache::WindowCache,
        refname: &str,
        tip: ObjectId,
        roster: &Roster,
        window: usize,
    ) -> Result<windowcache::Window, StoreError> {
        if let Some(cached) = cache.get(refname, &tip) {
            return Ok(cached);
        }
        // A ref that moved on from a cached tip is read back to that tip only (an append is one
        // record): what a window verifies to depends only on its records, whoever read them.
        let entries = match cache.earlier(refname) {
            Some((earlier_tip, earlier)) => self.walk_onto(tip, earlier_tip, earlier, window)?,
            None => {
                let mut entries = self.walk_from(Some(tip), window)?;
                entries.reverse();
                entries
            }
        };
        let fresh = self.verify_window(refname, entries, roster);
        cache.put(refname, &tip, &fresh);
        Ok(fresh)
    }

    /// Lists refs under `prefix` (a full ref prefix such as `refs/mas/`), sorted by name. Refs that
    /// cannot be read are listed with the problem, not skipped.
    ///
    /// Refs in the common git dir are listed by [`refs::RefFiles::list`], correct while `git
    /// pack-refs` runs beside us: a ref that moves from loose to packed mid-listing is read from
    /// `packed-refs`, never reported as unreadable.
    pub fn list(&self, prefix: &str) -> Result<Vec<RefInfo>, StoreError> {
        if RefFiles::handles(prefix) {
            return Ok(listcache::ref_infos(self.refs.list(prefix).map_err(|e| ref_file_err(prefix, e))?));
        }
        // gix snapshots `packed-refs` before it walks the loose refs: a `git pack-refs` in between
        // would hide a ref that moved from loose to packed. List again until no pack happened.
        let mut last = Vec::new();
        for _ in 0..16 {
            let before = self.refs.packed_generation();
            last = self.list_once(prefix)?;
            if self.refs.packed_generation() == before {
                break;
            }
        }
        Ok(last)
    }

    fn list_once(&self, prefix: &str) -> Result<Vec<RefInfo>, StoreError> {
        let platform = self.repo.references().map_err(git_err("listing refs"))?;
        let iter = platform.prefixed(prefix).map_err(git_err(format!("listing refs under {prefix}")))?;
        let mut out = Vec::new();
        for item in iter {
            match item {
                Ok(r) => {
                    let name = r.name().as_bstr().to_str_lossy().into_owned();
                    let target = r.target().try_id().map(|id| id.to_string());
                    let problem = target.is_none().then(|| "symbolic ref".to_string());
                    out.push(RefInfo { name, target, problem });
                }
                Err(e) => {
                    out.push(RefInfo { name: "(unreadable ref)".into(), target: None, problem: Some(e.to_string()) })
                }
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Moves `refname` from `expected` (`None`: must not exist) to `new`, atomically.
    pub fn cas(
        &self,
        refname: &str,
        expected: Option<ObjectId>,
        new: ObjectId,
        message: &str,
    ) -> Result<CasOutcome, StoreError> {
        self.cas_many(&[(refname, expected, new)], message)
    }

    /// Moves several refs together under their locks ([`refs::RefFiles::compare_and_swap`]): when
    /// any ref is not as expected, none moves and the race is reported as lost. The renames happen
    /// in the order given, so a process killed between two of them leaves a prefix moved: callers
    /// that move several refs order them so that every prefix can be recognised and completed.
    pub fn cas_many(
        &self,
        edits: &[(&str, Option<ObjectId>, ObjectId)],
        message: &str,
    ) -> Result<CasOutcome, StoreError> {
        for (i, (name, _, _)) in edits.iter().enumerate() {
            gix::refs::FullName::try_from(*name).map_err(|_| StoreError::BadRefName { name: (*name).into() })?;
            if !RefFiles::handles(name) || edits[..i].iter().any(|(n, _, _)| n == name) {
                return Err(StoreError::BadRefName { name: (*name).into() });
            }
        }
        let logs_branches =
            !self.repo.is_bare() && !matches!(self.config_string("core.logAllRefUpdates").as_deref(), Some("false"));
        let reflog = |name: &str| -> Option<String> {
            let wanted = (logs_branches && name.starts_with("refs/heads/")) || self.refs.has_reflog(name);
            wanted.then(|| {
                let who = signature("git-mas", "git-mas");
                let message = message.replace('\n', " ");
                format!("{} <{}> {} +0000\t{message}", who.name, who.email, who.time.seconds)
            })
        };
        match self.refs.compare_and_swap(edits, &reflog) {
            Ok(Ok(())) => Ok(CasOutcome::Updated),
            Ok(Err(actual)) => Ok(CasOutcome::LostRace { actual }),
            Err(e) => Err(ref_file_err(edits.first().map_or("", |e| e.0), e)),
        }
    }

    /// Writes a blob to the object database (retried where `git gc` removed a fan-out directory
    /// under our feet, see `retry_odb`).
    pub fn write_blob(&self, bytes: &[u8]) -> Result<ObjectId, StoreError> {
        retry_odb(|| self.repo.write_blob(bytes).map(|id| id.detach())).map_err(git_err("writing a blob"))
    }

    /// Writes an object to the object database, like [`Store::write_blob`].
    pub fn write_object(&self, object: impl gix::objs::WriteTo, context: &str) -> Result<ObjectId, StoreError> {
        retry_odb(|| self.repo.write_object(&object).map(|id| id.detach())).map_err(git_err(context))
    }

    /// Writes `record` (plus `extra` tree entries: path → blob id) as a new commit on top of `parent`.
    pub fn write_record_commit(
        &self,
        record: &Record,
        extra: &[(String, ObjectId)],
        parent: Option<ObjectId>,
    ) -> Result<ObjectId, StoreError> {
        let bytes = record.to_bytes();
        let blob = self.write_blob(&bytes)?;
        let tree = if extra.is_empty() {
            // The common case, written directly: one entry, no tree editor.
            let tree = gix::objs::Tree {
                entries: vec![gix::objs::tree::Entry {
                    mode: gix::objs::tree::EntryKind::Blob.into(),
                    filename: RECORD_FILE.into(),
                    oid: blob,
                }],
            };
            self.write_object(&tree, "writing a record tree")?
        } else {
            let mut editor = self
                .repo
                .edit_tree(ObjectId::empty_tree(self.repo.object_hash()))
                .map_err(git_err("building a record tree"))?;
            editor
                .upsert(RECORD_FILE, gix::objs::tree::EntryKind::Blob, blob)
                .map_err(git_err("building a record tree"))?;
            for (path, id) in extra {
                editor
                    .upsert(path.as_str(), gix::objs::tree::EntryKind::Blob, *id)
                    .map_err(git_err(format!("adding {path} to a record tree")))?;
            }
            retry_odb(|| editor.write().map(|id| id.detach())).map_err(git_err("writing a record tree"))?
        };
        let who = signature(&record.agent, &record.agent);
        let commit = gix::objs::Commit {
            tree,
            parents: parent.into_iter().collect(),
            author: who.clone(),
            committer: who,
            encoding: None,
            message: format!("{} #{} by {}\n", record.kind, record.seq, record.agent).into(),
            extra_headers: Vec::new(),
        };
        self.write_object(&commit, "writing a record commit")
    }

    /// Appends a signed record of `kind` by `agent` to `refname`, retrying lost races.
    ///
    /// The sequence number is one more than the tip's. `make_payload` is called once per attempt with
    /// the chain's current tip, so a record that depends on the previous state is rebuilt after a
    /// lost race instead of overwriting what someone else wrote; it returns `None` when, given that
    /// tip, there is nothing to append (then nothing is written and `Ok(None)` is returned).
    pub fn append<F>(
        &self,
        refname: &str,
        agent: &str,
        key: &AgentKey,
        kind: &str,
        extra: &[(String, ObjectId)],
        mut make_payload: F,
    ) -> Result<Option<Appended>, StoreError>
    where
        F: FnMut(Option<&Entry>) -> Result<Option<serde_json::Value>, StoreError>,
    {
        self.append_with(refname, agent, key, kind, extra, |tip| {
            Ok(make_payload(tip)?.map(|payload| Append { payload, also: Vec::new() }))
        })
    }

    /// Like [`Store::append`], but the closure may also name other refs to move in the same
    /// transaction as the chain (all move or none does), and may refuse with its own error type.
    ///
    /// Each attempt re-reads the chain's tip and calls `make` again, so the expected values of the
    /// other refs are re-read too. A lost race on any of the refs is retried.
    pub fn append_with<F, E>(
        &self,
        refname: &str,
        agent: &str,
        key: &AgentKey,
        kind: &str,
        extra: &[(String, ObjectId)],
        mut make: F,
    ) -> Result<Option<Appended>, E>
    where
        F: FnMut(Option<&Entry>) -> Result<Option<Append>, E>,
        E: From<StoreError>,
    {
        validate_ref(refname)?;
        let known = self.remembered_entries(refname);
        for attempt in 1..=MAX_APPEND_ATTEMPTS {
            let tip = self.tip(refname)?;
            let tip_entry = match tip {
                Some(id) => Some(self.known_entry(&known, id)?),
                None => None,
            };
            let last_seq = match &tip_entry {
                Some(e) => self.seq_floor(refname, agent, e, &known)?,
                None => 0,
            };
            let seq = last_seq.checked_add(1).ok_or_else(|| StoreError::SeqOverflow { refname: refname.into() })?;
            let Some(append) = make(tip_entry.as_ref())? else {
                return Ok(None);
            };
            let record = Record::new(kind, agent, seq, append.payload).sign(key);
            let commit = self.write_record_commit(&record, extra, tip)?;
            let mut edits: Vec<(&str, Option<ObjectId>, ObjectId)> = vec![(refname, tip, commit)];
            for other in &append.also {
                let new = match other.new {
                    MoveTo::Record => commit,
                    MoveTo::Commit(id) => id,
                };
                edits.push((other.name.as_str(), other.expected, new));
            }
            match self.cas_many(&edits, &format!("git-mas: {kind} #{seq} by {agent}"))? {
                CasOutcome::Updated => return Ok(Some(Appended { commit, seq, attempts: attempt })),
                CasOutcome::LostRace { .. } => backoff(attempt),
            }
        }
        Err(StoreError::TooManyRetries { refname: refname.into(), attempts: MAX_APPEND_ATTEMPTS }.into())
    }

    /// The sequence number a new record by `agent` must exceed: the highest of the **verified**
    /// records among the newest [`SEQ_WINDOW`], read further back (at most [`SEQ_WALK`] records) until
    /// one of `agent`'s own is found.
    ///
    /// Only records that verify count (signed by the roster key of an agent allowed in this chain):
    /// an unsigned record with seq 2^64−1 pushed with plain git must not end every later append, and
    /// a broken tip must not reset the sequence. Taking the maximum over a window, not the first
    /// record found, keeps the next number above the agent's real last one when a copy of an older
    /// record of its own was pushed on top (a replay), and above another writer's higher numbers
    /// where a sync re-parented our last record below them.
    ///
    /// Records this process already read into a verified window (`known`: a claim reads the board
    /// just before it appends) are taken from there, not read again.
    fn seq_floor(
        &self,
        refname: &str,
        agent: &str,
        tip: &Entry,
        known: &HashMap<ObjectId, Entry>,
    ) -> Result<u64, StoreError> {
        let roster = self.cached_roster()?;
        let owner = owner_of(refname);
        let mut floor = 0u64;
        let mut found_own = false;
        let mut entry = std::borrow::Cow::Borrowed(tip);
        for read in 0..SEQ_WALK {
            if read >= SEQ_WINDOW && found_own {
                break;
            }
            if let Ok(r) = &entry.record
                && owner.is_none_or(|o| o == r.agent)
                && let Some(listed) = roster.signer(&r.agent)
                && self.signature_counts(r, entry.blob, &listed.did)
            {
                floor = floor.max(r.seq);
                found_own |= r.agent == agent;
            }
            match entry.parent {
                Some(parent) => entry = std::borrow::Cow::Owned(self.known_entry(known, parent)?),
                None => break,
            }
        }
        Ok(floor)
    }

    /// The records of `refname` this process already read into a verified window (the board
    /// read before a claim), by commit. A commit id names its record, so a remembered entry is
    /// what reading the objects again would give.
    fn remembered_entries(&self, refname: &str) -> HashMap<ObjectId, Entry> {
        self.windows
            .borrow()
            .values()
            .filter_map(|r| r.window(refname))
            .flat_map(|(_, window)| window.iter().map(|(e, _)| (e.commit, e.clone())))
            .collect()
    }

    /// The entry of `commit`: from `known` when it is there, else read.
    fn known_entry(&self, known: &HashMap<ObjectId, Entry>, commit: ObjectId) -> Result<Entry, StoreError> {
        match known.get(&commit) {
            Some(e) => Ok(e.clone()),
            None => self.entry(commit),
        }
    }

    /// Whether `record`'s signature verifies under `did`, through the signature cache.
    fn signature_counts(&self, record: &Record, blob: Option<ObjectId>, did: &str) -> bool {
        let mut cache = self.sigs.borrow_mut();
        let cache = cache.get_or_insert_with(|| sigcache::SigCache::load(&self.common_dir));
        if let Some(b) = &blob
            && cache.contains(b, did)
        {
            return true;
        }
        let ok = record.signature_valid(did);
        if ok && let Some(b) = &blob {
            cache.insert(b, did);
            cache.save();
        }
        ok
    }

    /// The roster, read once per process for the sequence rule.
    fn cached_roster(&self) -> Result<std::cell::Ref<'_, Roster>, StoreError> {
        if self.roster_cache.borrow().is_none() {
            let roster = self.roster()?;
            *self.roster_cache.borrow_mut() = Some(roster);
        }
        Ok(std::cell::Ref::map(self.roster_cache.borrow(), |r| r.as_ref().expect("filled above")))
    }

    /// The newest record of `refname` that verifies in its chain (read over the newest
    /// [`CURRENT_WINDOW`] records, then the whole chain when none of those verifies), with its
    /// entry. Records that do not verify never become current: a frame pushed by a stranger, an
    /// unsigned record or a replayed one stays in the chain and is reported, never used.
    /// The first window comes through the window cache ([`windowcache`], a file of its own for
    /// this ref), so an unmoved ref costs no object read and no signature check.
    pub fn newest_verified(&self, refname: &str, roster: &Roster) -> Result<Option<Entry>, StoreError> {
        for window in [CURRENT_WINDOW, usize::MAX] {
            let chain = match (window, self.tip(refname)?) {
                (CURRENT_WINDOW, Some(tip)) => {
                    let mut cache = self.window_cache(refname, roster, window);
                    let chain = self.window_through(&mut cache, refname, tip, roster, window)?;
                    self.keep_windows(cache);
                    chain
                }
                _ => self.verified_window(refname, roster, window)?,
            };
            let complete = chain.len() < window;
            if let Some((entry, _)) = chain.into_iter().rev().find(|(_, v)| v.is_verified()) {
                return Ok(Some(entry));
            }
            if complete {
                break;
            }
        }
        Ok(None)
    }

    /// Whether `ancestor` is `descendant` or reachable from it by first parents (chains are linear).
    pub fn is_ancestor(&self, ancestor: ObjectId, descendant: ObjectId) -> Result<bool, StoreError> {
        let mut next = Some(descendant);
        while let Some(id) = next {
            if id == ancestor {
                return Ok(true);
            }
            let c = self.repo.find_commit(id).map_err(git_err(format!("reading {id}")))?;
            next = c.parent_ids().next().map(|p| p.detach());
        }
        Ok(false)
    }

    /// Re-creates `commit` (same tree, message, author) on top of `parent`.
    pub fn reparent(&self, commit: ObjectId, parent: ObjectId) -> Result<ObjectId, StoreError> {
        let c = self.repo.find_commit(commit).map_err(git_err(format!("reading {commit}")))?;
        let decoded = c.decode().map_err(git_err(format!("decoding {commit}")))?;
        let mut owned: gix::objs::Commit = decoded.try_into().map_err(git_err(format!("decoding {commit}")))?;
        owned.parents = std::iter::once(parent).collect();
        self.write_object(&owned, "writing a rebased record commit")
    }
}

/// Runs an object write again when it failed because a directory it needed vanished: `git gc`
/// (`prune-packed`) removes emptied `objects/xx/` directories while we write into them, and git
/// itself retries in that case.
fn retry_odb<T, E: std::error::Error + 'static>(mut write: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    let mut attempt = 0;
    loop {
        match write() {
            Err(e) if attempt < 8 && caused_by_not_found(&e) => attempt += 1,
            other => return other,
        }
    }
}

fn caused_by_not_found(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(e);
    while let Some(err) = next {
        if err.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound) {
            return true;
        }
        next = err.source();
    }
    false
}

fn ref_file_err(refname: &str, e: RefFileError) -> StoreError {
    match e {
        RefFileError::Stale { lock, age } => StoreError::StaleLock { refname: refname.into(), lock, age },
        RefFileError::Unreadable { name, content } => StoreError::UnreadableRef { name, content },
        RefFileError::Packed { path, source } => {
            StoreError::Git { context: format!("reading {}", path.display()), source }
        }
        RefFileError::Io { path, source } => StoreError::Io { path, source },
    }
}

/// Sleeps a little, growing with the attempt number and jittered, so racing writers spread out.
fn backoff(attempt: u32) {
    let mut jitter = [0u8; 1];
    let _ = getrandom::fill(&mut jitter);
    let micros = 200 * u64::from(attempt.min(25)) + u64::from(jitter[0]) * 8;
    std::thread::sleep(std::time::Duration::from_micros(micros));
}

/// A commit signature for `name`: the email slot holds a fixed marker, and the time is
/// `GIT_COMMITTER_DATE` when set (hermetic tests), else now in UTC. Record commits never use the
/// local time zone: looking it up walks the system's zoneinfo tree, which measured as a visible
/// share of an append's cost, and a record's meaning never depends on its time stamp.
pub fn signature(name: &str, email_user: &str) -> gix::actor::Signature {
    let time =
        std::env::var("GIT_COMMITTER_DATE").ok().and_then(|d| gix::date::parse(&d, None).ok()).unwrap_or_else(|| {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
            gix::date::Time::new(secs, 0)
        });
    gix::actor::Signature { name: name.into(), email: format!("{email_user}@git-mas").into(), time }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;

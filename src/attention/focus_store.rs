//! Reading and writing focus chains (`refs/mas/focus/<agent>`), and loading the board.

use super::board::{self, Board, ChainItems, FOCUS_KIND, FocusPayload, RELEASE_KIND, Rejection, ReleasePayload};
use super::board_cache;
use super::frame::Frame;
use super::run_end::{self, RunLedger};
use crate::identity::{AgentKey, Roster};
use crate::store::{Appended, Store, StoreError};
use std::collections::BTreeSet;
use std::path::Path;

/// The prefix of every focus chain.
pub const FOCUS_PREFIX: &str = "refs/mas/focus/";

/// An agent's focus chain.
pub fn focus_ref(agent: &str) -> String {
    format!("{FOCUS_PREFIX}{agent}")
}

/// The run whose worktree this is: its own `mas.run`, which `git mas worktree add` sets in a run's
/// worktree, never one inherited from the shared configuration (a person's checkout names none,
/// so a person's focus never ends with a run: [`run_end`]).
pub fn worktree_run(store: &Store) -> Option<String> {
    store.worktree_config_string("mas.run").map(|r| r.trim().to_string()).filter(|r| !r.is_empty())
}

/// Unix seconds now.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// How many of the newest records of each focus chain the board reads. The board needs only each
/// agent's latest valid focus; an older record matters only when every newer one in the window is
/// invalid, and then the agent simply shows no focus (which holds nothing and fails the agent's own
/// gate closed). A replayed old record still shows: its sequence number is below the newer ones'.
pub const BOARD_WINDOW: usize = 32;

/// Loads the board: every focus chain (its newest [`BOARD_WINDOW`] records), verified against the
/// roster, folded at time `now`. Chains whose ref did not move since the last read under the same
/// roster come from the store's window cache (no object read, no signature checked); the fold, and
/// with it every clock-dependent judgement (expiry, a publication in the future), runs on every
/// call. Targets are checked against `frame`'s snapshot when a focus is on
/// that frame. A focus published for a run that `runs` says ended is released by it
/// ([`run_end`]).
pub fn load_board(
    store: &Store,
    roster: &Roster,
    now: u64,
    frame: Option<&Frame>,
    runs: &dyn RunLedger,
) -> Result<Board, StoreError> {
    Ok(read_board(store, roster, now, frame, runs)?.0)
}

/// [`load_board`], with the board's read cache still to be written when it missed: written when
/// the [`board_cache::Pending`] is dropped, or not at all when the reader forgets it because it
/// is about to append to a focus chain (a claim), which would make the file stale at once.
pub fn read_board(
    store: &Store,
    roster: &Roster,
    now: u64,
    frame: Option<&Frame>,
    runs: &dyn RunLedger,
) -> Result<(Board, Option<board_cache::Pending>), StoreError> {
    fold_read(store, roster, now, frame, None, runs)
}

/// The live board for `caller`: [`read_board`] without the chains its read cache shows lapsed
/// (every focus record in them expired by `now`, [`board_cache::horizon`]) other than `caller`'s
/// own. Every live entry, the caller's entry whatever its state, the flood caps and every rejected
/// live record are as [`read_board`] gives them; other agents' expired and released entries (and
/// records rejected in lapsed chains) may be missing. For the gate, the edit hook and a claim,
/// which decide from live foci and the caller's own entry alone.
pub fn read_live_board(
    store: &Store,
    roster: &Roster,
    now: u64,
    frame: Option<&Frame>,
    caller: Option<&str>,
    runs: &dyn RunLedger,
) -> Result<(Board, Option<board_cache::Pending>), StoreError> {
    fold_read(store, roster, now, frame, Some((now, caller)), runs)
}

/// [`read_live_board`]'s board without its pending cache write.
pub fn load_live_board(
    store: &Store,
    roster: &Roster,
    now: u64,
    frame: Option<&Frame>,
    caller: Option<&str>,
    runs: &dyn RunLedger,
) -> Result<Board, StoreError> {
    Ok(read_live_board(store, roster, now, frame, caller, runs)?.0)
}

fn fold_read(
    store: &Store,
    roster: &Roster,
    now: u64,
    frame: Option<&Frame>,
    live_for: Option<(u64, Option<&str>)>,
    runs: &dyn RunLedger,
) -> Result<(Board, Option<board_cache::Pending>), StoreError> {
    let (chains, damaged, pending) = board_chains(store, roster, live_for)?;
    let ids: Option<(String, BTreeSet<&str>)> =
        frame.map(|f| (f.hash.clone(), f.snapshot.targets.iter().map(|t| t.id.as_str()).collect()));
    let in_frame = |hash: &str, target: &str| -> Option<bool> {
        let (h, set) = ids.as_ref()?;
        (h == hash).then(|| target.is_empty() || set.contains(target))
    };
    let mut board = board::fold_items(&chains, now, &in_frame);
    board.damaged = damaged;
    end_gone_sessions(store, &mut board);
    run_end::end_runs(&mut board, runs, now);
    Ok((board, pending))
}

/// A live session agent whose host process on this machine has ended ([`super::ancestry::gone`])
/// holds nothing: its entry is folded as expired. So does a session's damaged chain: whatever its
/// lost record claimed ended with the process, so the chain is no longer listed as damaged on the
/// board and the gate refuses nothing for it (`git mas doctor` still finds and repairs it).
fn end_gone_sessions(store: &Store, board: &mut Board) {
    let session = |agent: &str| crate::identity::principal_of(agent).is_some();
    let sessions = |e: &board::BoardEntry| e.liveness == board::Liveness::Live && session(&e.focus.agent);
    if !board.entries.iter().any(sessions) && !board.damaged.iter().any(|d| session(&d.agent)) {
        return;
    }
    let asked = board.entries.iter().filter(|e| sessions(e)).map(|e| e.focus.agent.as_str());
    let damaged = board.damaged.iter().filter(|d| session(&d.agent)).map(|d| d.agent.as_str());
    let gone = super::ancestry::gone(store, asked.chain(damaged));
    for e in board.entries.iter_mut().filter(|e| sessions(e) && gone.contains(&e.focus.agent)) {
        e.liveness = board::Liveness::Expired;
    }
    board.damaged.retain(|d| !(session(&d.agent) && gone.contains(&d.agent)));
}

/// Every focus chain's window as the fold reads it, sorted by ref name: from the board's read
/// cache ([`board_cache`]) for every listed focus ref still where the file says; the others
/// (moved, new) read alone — or all through the store's window cache when there is no such file
/// (a first read, a roster change, a damaged file) or more than [`REREAD_ALONE`] moved — with what
/// to keep for the next reader when anything differed from the file. So a claim, which moves one
/// chain, costs the next reader one chain's read, not the whole board's.
fn board_chains(
    store: &Store,
    roster: &Roster,
    live_for: Option<(u64, Option<&str>)>,
) -> Result<BoardChains, StoreError> {
    let mut damaged = Vec::new();
    let digest = crate::store::windowcache::roster_digest(roster);
    let listed: Option<Vec<(String, String)>> =
        store.list_kept(FOCUS_PREFIX)?.into_iter().map(|info| Some((info.name, info.target?))).collect();
    if let Some(listed) = &listed {
        let mut kept: std::collections::HashMap<String, board_cache::Chain> =
            board_cache::load(store.common_dir(), &digest, BOARD_WINDOW)
                .into_iter()
                .map(|c| (c.refname.clone(), c))
                .collect();
        let moved = listed.iter().filter(|(name, tip)| kept.get(name).is_none_or(|c| c.tip != *tip)).count();
        if !kept.is_empty() && moved <= REREAD_ALONE {
            let mut stale = moved > 0 || kept.len() != listed.len();
            let mut chains = Vec::with_capacity(listed.len());
            let mut keep = Vec::with_capacity(listed.len());
            for (refname, tip) in listed {
                let Some(agent) = crate::store::owner_of(refname) else { continue };
                // The file's chain at another tip is kept aside: a damaged chain's last known window.
                let (cached, remembered) = match kept.remove(refname) {
                    Some(c) if c.tip == *tip => (Some(c), None),
                    other => (None, other),
                };
                let lapsed = |c: &board_cache::Chain| {
                    live_for.is_some_and(|(now, caller)| c.horizon <= now && caller != Some(agent))
                };
                if let Some(c) = cached.as_ref().filter(|c| lapsed(c)) {
                    keep.push(c.clone());
                    continue;
                }
                let parsed = cached.as_ref().and_then(board_cache::Chain::items);
                let cached = cached.filter(|_| parsed.is_some());
                stale |= cached.is_none();
                let items = match parsed {
                    Some(items) => items,
                    None => {
                        let at = gix::ObjectId::from_hex(tip.as_bytes()).ok();
                        let (items, broke) = read_chain(store, roster, refname, agent, at, remembered.as_ref())?;
                        if let Some(d) = broke {
                            // Not kept at its damaged tip: the next reader reads it again (and
                            // sees the damage) and still finds its last whole window here.
                            keep.extend(remembered);
                            damaged.push(d);
                            chains.push((agent.to_string(), items));
                            continue;
                        }
                        items
                    }
                };
                match cached {
                    Some(c) => keep.push(c),
                    None => keep.extend(board_cache::Chain::new(refname.clone(), tip.clone(), &items)),
                }
                chains.push((agent.to_string(), items));
            }
            let pending = stale.then(|| board_cache::Pending::new(store.common_dir(), &digest, BOARD_WINDOW, keep));
            return Ok((chains, damaged, pending));
        }
    }
    let mut chains = Vec::new();
    let mut keep = Vec::new();
    let windows = match store.verified_windows(FOCUS_PREFIX, roster, BOARD_WINDOW) {
        Ok(windows) => windows,
        // A chain lost an object: read each chain on its own, the damaged one down to its break.
        Err(StoreError::MissingObject { .. }) => return board_chains_one_by_one(store, roster, &digest),
        Err(e) => return Err(e),
    };
    for (refname, window) in windows {
        let Some(agent) = crate::store::owner_of(&refname) else { continue };
        let tip = window.last().map(|(e, _)| e.commit.to_string());
        let items = chain_items(window);
        if let Some(tip) = tip {
            keep.extend(board_cache::Chain::new(refname.clone(), tip, &items));
        }
        chains.push((agent.to_string(), items));
    }
    Ok((chains, damaged, Some(board_cache::Pending::new(store.common_dir(), &digest, BOARD_WINDOW, keep))))
}

/// [`board_chains`] when a chain lost an object: every focus chain read on its own (not through
/// the window cache), each damaged one down to its break ([`read_chain`]).
fn board_chains_one_by_one(store: &Store, roster: &Roster, digest: &str) -> Result<BoardChains, StoreError> {
    let mut remembered: std::collections::HashMap<String, board_cache::Chain> =
        board_cache::load(store.common_dir(), digest, BOARD_WINDOW)
            .into_iter()
            .map(|c| (c.refname.clone(), c))
            .collect();
    let (mut chains, mut damaged, mut keep) = (Vec::new(), Vec::new(), Vec::new());
    for info in store.list(FOCUS_PREFIX)? {
        let Some(agent) = crate::store::owner_of(&info.name) else { continue };
        let tip = info.target.as_deref().and_then(|t| gix::ObjectId::from_hex(t.as_bytes()).ok());
        let before = remembered.remove(&info.name);
        let (items, broke) = read_chain(store, roster, &info.name, agent, tip, before.as_ref())?;
        match (broke, tip) {
            (Some(d), _) => {
                keep.extend(before);
                damaged.push(d);
            }
            (None, Some(tip)) => keep.extend(board_cache::Chain::new(info.name.clone(), tip.to_string(), &items)),
            (None, None) => {}
        }
        chains.push((agent.to_string(), items));
    }
    Ok((chains, damaged, Some(board_cache::Pending::new(store.common_dir(), digest, BOARD_WINDOW, keep))))
}

/// `refname`'s window at `tip` as the fold reads it. A chain that lost an object
/// ([`StoreError::MissingObject`]) is read down to the break: its readable newest records when
/// there are any; else (its newest record is what is lost) its last state that can be read —
/// the records below the break when the lost record's commit still names its parent, else the
/// window `remembered` by the board's read cache at an earlier tip — with the damage named.
fn read_chain(
    store: &Store,
    roster: &Roster,
    refname: &str,
    agent: &str,
    tip: Option<gix::ObjectId>,
    remembered: Option<&board_cache::Chain>,
) -> Result<(ChainItems, Option<board::DamagedChain>), StoreError> {
    let tip = match (store.verified_window_at(refname, tip, roster, BOARD_WINDOW), tip) {
        (Ok(window), _) => return Ok((chain_items(window), None)),
        (Err(StoreError::MissingObject { .. }), Some(tip)) => tip,
        (Err(e), _) => return Err(e),
    };
    let (window, broke) = store.readable_window_at(refname, tip, roster, BOARD_WINDOW)?;
    let Some(at) = broke else { return Ok((chain_items(window), None)) };
    let newest_known = !window.is_empty();
    let items = match (newest_known, at.parent) {
        (true, _) => chain_items(window),
        (false, Some(parent)) => chain_items(store.readable_window_at(refname, parent, roster, BOARD_WINDOW)?.0),
        (false, None) => remembered.and_then(board_cache::Chain::items).unwrap_or_default(),
    };
    let damaged = board::DamagedChain {
        agent: agent.to_string(),
        refname: refname.to_string(),
        record: at.record.to_string(),
        missing: at.missing.to_string(),
        part: at.part,
        newest_known,
    };
    Ok((items, Some(damaged)))
}

/// What [`board_chains`] reads: each chain's items by agent, the damaged chains, and the read
/// cache to write.
type BoardChains = (Vec<(String, ChainItems)>, Vec<board::DamagedChain>, Option<board_cache::Pending>);

/// A verified window as the fold reads it.
fn chain_items(window: Vec<(crate::store::Entry, crate::store::record::Verdict)>) -> ChainItems {
    window
        .into_iter()
        .map(|(e, v)| (e.commit.to_string(), board::item(&e.record.map_err(|err| err.to_string()), &v)))
        .collect()
}

/// The most moved or new focus chains a board read reads one by one beside its read cache; more
/// go through the store's window cache, which reads every chain's cached window.
pub const REREAD_ALONE: usize = 64;

/// Why a publication was refused before anything was written.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The payload breaks a board rule: the board would refuse the record, so it is not written.
    #[error("{rejection}")]
    Rejected {
        /// The agent publishing.
        agent: String,
        /// The focus chain it would have been appended to.
        refname: String,
        /// The frame the focus is on.
        frame: String,
        /// The rule it breaks (the refused target, count or lease inside).
        rejection: Rejection,
    },
    /// A store failure.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Appends a focus record for `agent`, after checking it as the board will.
pub fn publish_focus(
    store: &Store,
    agent: &str,
    key: &AgentKey,
    payload: &FocusPayload,
    frame: &Frame,
    board: &Board,
) -> Result<Appended, PublishError> {
    let rejected = |rejection| PublishError::Rejected {
        agent: agent.to_string(),
        refname: focus_ref(agent),
        frame: payload.frame.clone(),
        rejection,
    };
    let ids: BTreeSet<&str> = frame.snapshot.targets.iter().map(|t| t.id.as_str()).collect();
    let in_frame = |t: &str| ids.contains(t);
    board::check_focus(payload, payload.published_at, Some(&in_frame)).map_err(rejected)?;
    board::admits(board, agent).map_err(rejected)?;
    let value = serde_json::to_value(payload).map_err(|e| StoreError::Encode { what: "a focus".into(), source: e })?;
    let appended = store.append(&focus_ref(agent), agent, key, FOCUS_KIND, &[], |_| Ok(Some(value.clone())))?;
    appended.ok_or_else(|| PublishError::Store(StoreError::TooManyRetries { refname: focus_ref(agent), attempts: 0 }))
}

/// Appends a release record for `agent`.
pub fn release_focus(store: &Store, agent: &str, key: &AgentKey, now: u64) -> Result<Option<Appended>, StoreError> {
    let value = serde_json::to_value(ReleasePayload { published_at: now }).unwrap_or_default();
    store.append(&focus_ref(agent), agent, key, RELEASE_KIND, &[], |_| Ok(Some(value.clone())))
}

/// Releases some of a live focus's targets: appends a focus holding only `kept`, on the same
/// frame, until the same time as before (a partial release never extends a lease). It is a
/// claim record ([`FocusPayload::claims`]), so `kept` need not be listed by a newer snapshot; it
/// names the run the focus named.
pub fn keep_only(
    store: &Store,
    agent: &str,
    key: &AgentKey,
    entry: &board::BoardEntry,
    kept: Vec<String>,
    now: u64,
) -> Result<Option<Appended>, StoreError> {
    let payload = FocusPayload {
        frame: entry.focus.frame.clone(),
        targets: kept,
        ttl_secs: entry.expires_at.saturating_sub(now).max(1),
        published_at: now,
        claims: true,
        run: entry.run.clone(),
    };
    append_focus(store, agent, key, &payload)
}

/// Appends `payload` to `agent`'s focus chain as is (the caller checked it).
pub fn append_focus(
    store: &Store,
    agent: &str,
    key: &AgentKey,
    payload: &FocusPayload,
) -> Result<Option<Appended>, StoreError> {
    let value = serde_json::to_value(payload).map_err(|e| StoreError::Encode { what: "a focus".into(), source: e })?;
    store.append(&focus_ref(agent), agent, key, FOCUS_KIND, &[], |_| Ok(Some(value.clone())))
}

/// How long an ended session's focus chain is kept by default: a week.
pub const DEFAULT_SESSION_RETENTION_SECS: u64 = 7 * 24 * 60 * 60;

/// Why a prune failed.
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    /// The board could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `git update-ref -d` could not run or refused.
    #[error("cannot delete {refname}")]
    Delete {
        /// The ref.
        refname: String,
        /// What git said.
        #[source]
        source: crate::git::GitError,
    },
}

/// Deletes the focus chains of session agents (`<principal>.<host>-<8 hex>`, not on the roster
/// themselves) whose session ended — released, or expired — at least `retention` seconds before
/// `now`, so that a year of sessions does not grow `refs/mas/` without bound. A chain that moved
/// since it was read is left (the delete is a compare-and-swap). Returns the deleted refs. Records
/// a session left in a run's chains or a landing's trailers stay reachable from those.
///
/// A SIGKILL leaves some chains deleted and the rest as they were; each deletion is whole.
pub fn prune_sessions(
    store: &Store,
    roster: &Roster,
    now: u64,
    retention: u64,
    runs: &dyn RunLedger,
) -> Result<Vec<String>, PruneError> {
    let board = load_board(store, roster, now, None, runs)?;
    let workdir = store.workdir().map(Path::to_path_buf).unwrap_or_else(|_| store.common_dir().to_path_buf());
    let mut deleted = Vec::new();
    for entry in &board.entries {
        let agent = &entry.focus.agent;
        let is_session = crate::identity::principal_of(agent).is_some() && roster.entries().all(|e| e.name != *agent);
        let ended = matches!(entry.liveness, board::Liveness::Released | board::Liveness::Expired);
        if !is_session || !ended || entry.expires_at.saturating_add(retention) > now {
            continue;
        }
        let refname = focus_ref(agent);
        let Some(tip) = store.tip(&refname)? else { continue };
        match crate::git::run(&workdir, &["update-ref", "-d", &refname, &tip.to_string()]) {
            Ok(_) => deleted.push(refname),
            // Refused because the chain moved since it was read: it is left.
            Err(crate::git::GitError::Failed { .. }) if store.tip(&refname)? != Some(tip) => {}
            Err(source) => return Err(PruneError::Delete { refname, source }),
        }
    }
    Ok(deleted)
}

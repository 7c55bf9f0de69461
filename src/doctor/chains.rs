//! Damaged focus chains, found and repaired by `git mas doctor`.
//!
//! A focus chain that lost an object ([`crate::store::damage`]) is read by the board down to
//! where it breaks ([`crate::attention::damage`] says what the gate refuses meanwhile). `doctor`
//! lists each one — its ref, the record that cannot be read, the missing object, the last whole
//! record — and `--fix` repairs it by cutting it back to its last whole record:
//!
//! - **The owner's key is on this machine** (the roster entry that signs for the chain's agent: a
//!   session agent's principal): one new record, signed by that key, is written on top of the last
//!   whole record (a new root when no record is whole), with a sequence number above every one
//!   that could be read. It carries the chain's newest state that verifies, re-signed as it was
//!   (same kind, same payload: a lease is never extended), or a release when no such record can
//!   be read. The owner's claims that could be read survive the repair; what the lost record held
//!   is claimed again by the owner's next edit.
//! - **Otherwise** nobody here may sign for the owner, and an unsigned record would be parked, not
//!   folded. The chain is ended by deleting its ref (compare-and-swap on the damaged tip, `git
//!   update-ref -d`): every reader folds a missing focus chain as an agent that holds nothing, and
//!   the owner's next claim starts a new chain.
//!
//! Only focus chains (`refs/mas/focus/*`) are examined: they are what every gate call reads.
//!
//! **What a SIGKILL leaves.** A repair writes its record's blob, tree and commit first (unreferenced
//! objects until the ref moves; `git gc` removes them) and then moves the ref in one rename under
//! its lock; a deletion is one `git update-ref -d`. Killed before the rename, the ref is still at
//! the damaged tip (the next `doctor` finds the same damage and repairs it); after, the chain is
//! repaired. Killed while holding the ref's lock, the lock stays: `doctor` lists it as stale after
//! three seconds and `--fix` removes it before repairing chains. Each chain is repaired whole or
//! not at all, one after the other. A deletion whose `git update-ref -d` was killed says so (git
//! says nothing then) and leaves the chain damaged at its tip. `tests/cli/chain_damage_crash.rs`
//! kills `--fix` at each of these points (the objects' renames, the ref's lock and rename, the
//! child git) and checks the next `--fix` repairs the chain with the owner's claims kept.

use super::DoctorError;
use crate::attention::board::{RELEASE_KIND, ReleasePayload};
use crate::attention::focus_store::FOCUS_PREFIX;
use crate::git::GitError;
use crate::identity::{AgentKey, Roster};
use crate::store::damage::{Damage, Part};
use crate::store::record::Record;
use crate::store::{CasOutcome, Store, owner_of};
use serde::{Deserialize, Serialize};

/// A damaged focus chain, as `doctor` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DamagedChain {
    /// The chain's ref.
    pub refname: String,
    /// Where the ref points.
    pub tip: String,
    /// The newest record that cannot be read.
    pub record: String,
    /// The missing object.
    pub missing: String,
    /// Which object of that record it is.
    pub part: Part,
    /// The newest record readable together with everything below it (`None`: none is).
    pub last_whole: Option<String>,
    /// How `--fix` repairs it here: `re-sign` (the owner's key is on this machine) or `end`.
    pub repair: Repair,
}

/// How a damaged chain is repaired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Repair {
    /// Cut back to the last whole record with one new record signed by the owner's key.
    ReSign,
    /// Ended: the ref is deleted (the owner's key is not on this machine).
    End,
}

/// What `--fix` did to one damaged chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainRepair {
    /// The chain's ref.
    pub refname: String,
    /// How.
    pub repair: Repair,
    /// The damaged tip it was moved from.
    pub from: String,
    /// The new record's commit (`None`: the ref was deleted, or the repair failed).
    pub to: Option<String>,
    /// Why it failed, if it did.
    pub error: Option<String>,
}

/// The signing key of `agent`'s roster entry, when it is on this machine and is the roster's.
fn owner_key(roster: &Roster, agent: &str) -> Option<AgentKey> {
    let entry = roster.signer(agent)?;
    AgentKey::load(&entry.name).ok().filter(|k| k.did() == entry.did)
}

/// Every damaged focus chain, with how `--fix` would repair it here.
pub fn examine(store: &Store) -> Result<Vec<DamagedChain>, DoctorError> {
    let roster = store.roster()?;
    let mut out = Vec::new();
    for info in store.list(FOCUS_PREFIX)? {
        let Some(damage) = store.chain_damage(&info.name)? else { continue };
        let agent = owner_of(&info.name).unwrap_or_default();
        let repair = if owner_key(&roster, agent).is_some() { Repair::ReSign } else { Repair::End };
        out.push(DamagedChain {
            refname: damage.refname.clone(),
            tip: damage.tip.to_string(),
            record: damage.at.record.to_string(),
            missing: damage.at.missing.to_string(),
            part: damage.at.part,
            last_whole: damage.last_whole.map(|c| c.to_string()),
            repair,
        });
    }
    Ok(out)
}

/// The record a re-signing repair writes: the newest readable record of the chain's agent that
/// verifies under `did`, re-signed as it was, else a release published at `now` — numbered above
/// every record read.
pub fn repair_record(damage: &Damage, agent: &str, did: &str, now: u64) -> (String, serde_json::Value, u64) {
    let seq = damage.max_seq.saturating_add(1);
    match damage.newest.as_ref().and_then(|e| e.record.as_ref().ok()) {
        Some(r) if r.agent == agent && r.signature_valid(did) => (r.kind.clone(), r.payload.clone(), seq),
        _ => {
            let release = serde_json::to_value(ReleasePayload { published_at: now }).unwrap_or_default();
            (RELEASE_KIND.to_string(), release, seq)
        }
    }
}

/// Repairs every chain of `found` that is still damaged at the same tip (a chain repaired or
/// moved since is left as it is).
pub fn repair(store: &Store, found: &[DamagedChain], now: u64) -> Result<Vec<ChainRepair>, DoctorError> {
    let roster = store.roster()?;
    let mut out = Vec::new();
    for chain in found {
        let Some(damage) = store.chain_damage(&chain.refname)? else { continue };
        if damage.tip != chain.tip.as_str() {
            continue;
        }
        let agent = owner_of(&chain.refname).unwrap_or_default();
        let from = damage.tip.to_string();
        let result = match owner_key(&roster, agent) {
            Some(key) => {
                let (kind, payload, seq) = repair_record(&damage, agent, &key.did(), now);
                let record = Record::new(&kind, agent, seq, payload).sign(&key);
                store.cut_back(&chain.refname, damage.tip, damage.last_whole, &record).map(|(commit, outcome)| {
                    (Repair::ReSign, Some(commit.to_string()), (outcome != CasOutcome::Updated).then(moved))
                })
            }
            None => Ok((Repair::End, None, delete(store, &chain.refname, &from).err())),
        };
        out.push(match result {
            Ok((repair, to, error)) => {
                ChainRepair { refname: chain.refname.clone(), repair, from, to: to.filter(|_| error.is_none()), error }
            }
            Err(e) => ChainRepair {
                refname: chain.refname.clone(),
                repair: chain.repair,
                from,
                to: None,
                error: Some(e.to_string()),
            },
        });
    }
    Ok(out)
}

fn moved() -> String {
    "the chain moved while it was being repaired; run `git mas doctor` again".to_string()
}

/// Deletes `refname` if it still points at `tip`.
fn delete(store: &Store, refname: &str, tip: &str) -> Result<(), String> {
    let dir = store.workdir().map(std::path::Path::to_path_buf).unwrap_or_else(|_| store.common_dir().to_path_buf());
    crate::git::run(&dir, &["update-ref", "-d", refname, tip]).map(drop).map_err(|e| failure(&e))
}

/// Why `git update-ref -d` failed, as the report says it: what git said, else how it ended (a git
/// killed by a signal says nothing).
fn failure(e: &GitError) -> String {
    match e {
        GitError::Failed { status, stderr, .. } if stderr.is_empty() => {
            format!("git update-ref -d ended without a word ({status}); run `git mas doctor --fix` again")
        }
        GitError::Failed { stderr, .. } => stderr.clone(),
        GitError::Spawn { .. } => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::GitError;

    #[test]
    fn a_failed_deletion_always_says_why() {
        let failed = |status: &str, stderr: &str| GitError::Failed {
            args: "update-ref -d refs/mas/x".into(),
            status: status.into(),
            code: None,
            stderr: stderr.into(),
        };
        let killed = super::failure(&failed("signal: 9 (SIGKILL)", ""));
        assert!(killed.contains("signal: 9") && killed.contains("git mas doctor --fix"), "{killed}");
        assert_eq!(super::failure(&failed("exit status: 1", "error: cannot lock ref")), "error: cannot lock ref");
        let spawn = GitError::Spawn { args: "update-ref".into(), source: std::io::ErrorKind::NotFound.into() };
        assert!(super::failure(&spawn).starts_with("cannot run git update-ref"), "{}", super::failure(&spawn));
    }
}

//! Recording a run in refs, and reading it back.
//!
//! Layout under `refs/mas/runs/<run>/`:
//!
//! - `meta` — a shared chain whose first record (kind `run`) is the run definition ([`RunMeta`]:
//!   goal, seeded class, peers and their specs, the driving agent, limits). It is created with
//!   "must not exist", so a run id names one run.
//! - `events/<driver>` — the driving agent's own chain: one record per recorded [`RunEvent`], in
//!   order — `hop` (prompt digest, reply, the semantic events and their outcomes), `converge-start`
//!   (the engine and its constants, the rules), `halt`, and `report` (the report as the run ended).
//!
//! Every record is signed by the driver's key, so reading a run back verifies it against the
//! roster like any chain; a record that does not verify is refused, never rendered.
//!
//! Run ids are `<UTC time>-<8 hex digits>` (`20260101T120000Z-1a2b3c4d`): ref-safe, sortable by
//! time, unique by their random part.

use super::{Report, RunEvent, RunMeta};
use crate::identity::{AgentKey, Roster};
use crate::store::record::Verdict;
use crate::store::{REF_PREFIX, Store, StoreError};
use thiserror::Error;

/// The record kind of a run definition.
pub const META_KIND: &str = "run";

/// Where runs live.
pub fn runs_prefix() -> String {
    format!("{REF_PREFIX}runs/")
}

/// The run definition's chain.
pub fn meta_ref(run: &str) -> String {
    format!("{REF_PREFIX}runs/{run}/meta")
}

/// An agent's event chain in a run.
pub fn events_ref(run: &str, agent: &str) -> String {
    format!("{REF_PREFIX}runs/{run}/events/{agent}")
}

/// A new run id for a run started at `now` (seconds since the epoch).
pub fn new_run_id(now: std::time::SystemTime) -> String {
    let time = humantime::format_rfc3339_seconds(now).to_string().replace(['-', ':'], "");
    let mut random = [0u8; 4];
    let _ = getrandom::fill(&mut random);
    format!("{time}-{}", crate::identity::key::hex(&random))
}

/// Why a run could not be recorded or read.
#[derive(Debug, Error)]
pub enum RecordError {
    /// Not a usable run id.
    #[error("{run:?} is not a run id (letters, digits, '.', '_' and '-'; no '/')")]
    BadRunId {
        /// The id as given.
        run: String,
    },
    /// A run with this id exists.
    #[error("run {run} already exists")]
    Exists {
        /// The id.
        run: String,
    },
    /// No run with this id.
    #[error("no run {run} in this repository")]
    NotFound {
        /// The id.
        run: String,
    },
    /// A record did not verify.
    #[error("{refname}: record {commit} is {verdict}; a run is rendered only from verified records")]
    Unverified {
        /// The chain.
        refname: String,
        /// The record's commit.
        commit: String,
        /// The verdict's label.
        verdict: String,
    },
    /// A verified record that is not what a run holds.
    #[error("{refname}: record {commit} is not a run record: {why}")]
    Malformed {
        /// The chain.
        refname: String,
        /// The record's commit.
        commit: String,
        /// Why.
        why: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A value could not be serialized.
    #[error("cannot serialize a run record: {0}")]
    Serialize(#[from] serde_json::Error),
}

/// Checks a run id: one ref-safe path component.
pub fn validate_run_id(run: &str) -> Result<(), RecordError> {
    let bad = || RecordError::BadRunId { run: run.to_owned() };
    let ok_chars = run.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if run.is_empty() || run.len() > 128 || !ok_chars || run.starts_with(['.', '-']) || run.contains("..") {
        return Err(bad());
    }
    crate::store::validate_ref(&meta_ref(run)).map_err(|_| bad())
}

/// Appends a run's events to the driver's chain as they happen.
pub struct RunRecorder<'s> {
    store: &'s Store,
    agent: String,
    key: &'s AgentKey,
    events_ref: String,
    recorded: usize,
}

impl<'s> RunRecorder<'s> {
    /// Records the run definition (the run id must be new) and returns a recorder for its events.
    pub fn start(store: &'s Store, key: &'s AgentKey, meta: &RunMeta) -> Result<RunRecorder<'s>, RecordError> {
        validate_run_id(&meta.run)?;
        let payload = serde_json::to_value(meta)?;
        let meta_ref = meta_ref(&meta.run);
        let appended = store.append(&meta_ref, &meta.driver, key, META_KIND, &[], |tip| {
            Ok(if tip.is_some() { None } else { Some(payload.clone()) })
        })?;
        if appended.is_none() {
            return Err(RecordError::Exists { run: meta.run.clone() });
        }
        Ok(RunRecorder {
            store,
            agent: meta.driver.clone(),
            key,
            events_ref: events_ref(&meta.run, &meta.driver),
            recorded: 0,
        })
    }

    /// Records `event` when it is one that is stored (derived events are not).
    pub fn record(&mut self, event: &RunEvent) -> Result<(), RecordError> {
        let Some(kind) = event.record_kind() else { return Ok(()) };
        let payload = serde_json::to_value(event)?;
        self.store.append(&self.events_ref, &self.agent, self.key, kind, &[], |_| Ok(Some(payload.clone())))?;
        self.recorded += 1;
        Ok(())
    }

    /// The chain the events go to.
    pub fn events_ref(&self) -> &str {
        &self.events_ref
    }

    /// How many records were appended.
    pub fn recorded(&self) -> usize {
        self.recorded
    }
}

/// A run read back from refs.
#[derive(Debug, Clone)]
pub struct RecordedRun {
    /// The run definition.
    pub meta: RunMeta,
    /// The recorded events, in order.
    pub events: Vec<RunEvent>,
    /// The report recorded when the run ended, if it did.
    pub stored_report: Option<Report>,
}

fn verified_payloads(
    store: &Store,
    roster: &Roster,
    refname: &str,
) -> Result<Vec<(String, String, serde_json::Value)>, RecordError> {
    let mut out = Vec::new();
    for (entry, verdict) in store.verified_chain(refname, roster)? {
        let commit = entry.commit.to_string();
        let record = match (entry.record, &verdict) {
            (Ok(record), Verdict::Verified) => record,
            _ => {
                return Err(RecordError::Unverified {
                    refname: refname.to_owned(),
                    commit,
                    verdict: verdict.label().to_owned(),
                });
            }
        };
        out.push((commit, record.kind, record.payload));
    }
    Ok(out)
}

/// Whether `run` is a converge run's id as [`new_run_id`] makes them (`<UTC time>-<8 hex>`,
/// upper-case `T` and `Z` inside): development runs share `refs/mas/runs/` but their ids are
/// lower-case names, so no id is both.
pub fn is_converge_run_id(run: &str) -> bool {
    let Some((time, hex)) = run.split_once('-') else { return false };
    let b = time.as_bytes();
    b.len() == 16
        && b[8] == b'T'
        && b[15] == b'Z'
        && b[..8].iter().chain(&b[9..15]).all(u8::is_ascii_digit)
        && hex.len() == 8
        && hex.bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
}

/// A converge run read only as far as status needs: its definition (the meta chain's first
/// record) and the kind of the newest record its driver appended (`report` once it ended).
pub fn progress(store: &Store, roster: &Roster, run: &str) -> Result<(RunMeta, Option<String>), RecordError> {
    validate_run_id(run)?;
    let meta_ref = meta_ref(run);
    let Some((commit, kind, payload)) = verified_payloads(store, roster, &meta_ref)?.into_iter().next() else {
        return Err(RecordError::NotFound { run: run.to_owned() });
    };
    let malformed = |why: String| RecordError::Malformed { refname: meta_ref.clone(), commit: commit.clone(), why };
    if kind != META_KIND {
        return Err(malformed(format!("its kind is {kind:?}, not {META_KIND:?}")));
    }
    let meta: RunMeta = serde_json::from_value(payload).map_err(|e| malformed(e.to_string()))?;
    let events_ref = events_ref(run, &meta.driver);
    let last = match store.verified_window(&events_ref, roster, 1)?.pop() {
        Some((entry, Verdict::Verified)) => entry.record.ok().map(|r| r.kind),
        Some((entry, verdict)) => {
            return Err(RecordError::Unverified {
                refname: events_ref,
                commit: entry.commit.to_string(),
                verdict: verdict.label().to_owned(),
            });
        }
        None => None,
    };
    Ok((meta, last))
}

/// Reads run `run` back: its definition and the driver's verified events.
pub fn load_run(store: &Store, roster: &Roster, run: &str) -> Result<RecordedRun, RecordError> {
    validate_run_id(run)?;
    let meta_ref = meta_ref(run);
    let metas = verified_payloads(store, roster, &meta_ref)?;
    let Some((commit, kind, payload)) = metas.into_iter().next() else {
        return Err(RecordError::NotFound { run: run.to_owned() });
    };
    let malformed = |refname: &str, commit: &str, why: String| RecordError::Malformed {
        refname: refname.to_owned(),
        commit: commit.to_owned(),
        why,
    };
    if kind != META_KIND {
        return Err(malformed(&meta_ref, &commit, format!("its kind is {kind:?}, not {META_KIND:?}")));
    }
    let meta: RunMeta = serde_json::from_value(payload).map_err(|e| malformed(&meta_ref, &commit, e.to_string()))?;
    if meta.run != run {
        return Err(malformed(&meta_ref, &commit, format!("it defines run {:?}", meta.run)));
    }
    let events_ref = events_ref(run, &meta.driver);
    let mut events = Vec::new();
    for (commit, kind, payload) in verified_payloads(store, roster, &events_ref)? {
        let event: RunEvent =
            serde_json::from_value(payload).map_err(|e| malformed(&events_ref, &commit, e.to_string()))?;
        if event.record_kind() != Some(kind.as_str()) {
            return Err(malformed(&events_ref, &commit, format!("its kind {kind:?} does not match its event")));
        }
        events.push(event);
    }
    let stored_report = events.iter().rev().find_map(|e| match e {
        RunEvent::Report { report } => Some((**report).clone()),
        _ => None,
    });
    Ok(RecordedRun { meta, events, stored_report })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converge_run_ids_are_told_from_development_run_ids() {
        for secs in [0, 1_767_225_600, 4_102_444_799] {
            let id = new_run_id(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs));
            assert!(is_converge_run_id(&id), "{id}");
            assert!(validate_run_id(&id).is_ok(), "{id}");
            assert!(crate::devrun::validate_run_id(&id).is_err(), "a development run cannot be named {id}");
        }
        for id in [
            "r1",
            "fix-tax",
            "20261202t102900z-1efeaeaa",
            "20261202T102900Z-1EFEAEAA",
            "20261202T102900Z-1efeaea",
            "20261202T1029000Z-1efeaeaa",
            "2026120XT102900Z-1efeaeaa",
            "20261202T102900Z",
        ] {
            assert!(!is_converge_run_id(id), "{id}");
        }
    }
}

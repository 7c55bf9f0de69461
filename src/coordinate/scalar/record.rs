//! Recording a run in refs, and reading it back.
//!
//! Layout under `refs/mas/runs/<run>/`:
//!
//! - `meta` — a shared chain whose first record (kind [`RUN_KIND`], shared with development runs)
//!   is the run definition ([`ConvergeDef`]: goal, seeded class, peers and their specs, the driving
//!   agent, limits), tagged [`RunType::Converge`] ([`crate::devrun::definition`]: the record, not
//!   the run id, says which type of run it defines, and a definition written before the tag is read
//!   by the rule readers applied then). It is created with "must not exist", so a run id names one
//!   run.
//! - `events/<driver>` — the driving agent's own chain: one record per recorded [`RunEvent`], in
//!   order — `hop` (prompt digest, reply, the semantic events and their outcomes), `converge-start`
//!   (the engine and its constants, the rules), `halt`, and `report` (the report as the run ended).
//!
//! Every record is signed by the driver's key, so reading a run back verifies it against the
//! roster like any chain; a record that does not verify is refused, never rendered.
//!
//! Run ids are `<UTC time>-<8 hex digits>` (`20260101T120000Z-1a2b3c4d`): ref-safe, sortable by
//! time, unique by their random part.

use super::{ConvergeDef, Report, RunEvent};
use crate::devrun::{RUN_KIND, RunType};
use crate::identity::{AgentKey, Roster};
use crate::store::record::Verdict;
use crate::store::{REF_PREFIX, Store, StoreError};
use thiserror::Error;

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
    pub fn start(store: &'s Store, key: &'s AgentKey, meta: &ConvergeDef) -> Result<RunRecorder<'s>, RecordError> {
        validate_run_id(&meta.run)?;
        let payload = RunType::Converge.tag(serde_json::to_value(meta)?);
        let meta_ref = meta_ref(&meta.run);
        let appended = store.append(&meta_ref, &meta.driver, key, RUN_KIND, &[], |tip| {
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
    pub def: ConvergeDef,
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

/// The definition of converge run `run`: the first record of its meta chain, verified, of kind
/// [`RUN_KIND`], naming [`RunType::Converge`] and this run (every record of the chain must verify).
pub fn definition(store: &Store, roster: &Roster, run: &str) -> Result<ConvergeDef, RecordError> {
    validate_run_id(run)?;
    let meta_ref = meta_ref(run);
    let Some((commit, kind, payload)) = verified_payloads(store, roster, &meta_ref)?.into_iter().next() else {
        return Err(RecordError::NotFound { run: run.to_owned() });
    };
    let malformed = |why: String| RecordError::Malformed { refname: meta_ref.clone(), commit: commit.clone(), why };
    if kind != RUN_KIND {
        return Err(malformed(format!("its kind is {kind:?}, not {RUN_KIND:?}")));
    }
    match RunType::of_definition(&payload).map_err(&malformed)? {
        RunType::Converge => {}
        other => return Err(malformed(format!("it defines a {} run, not a converge run", other.name()))),
    }
    let def: ConvergeDef = serde_json::from_value(payload).map_err(|e| malformed(e.to_string()))?;
    if def.run != run {
        return Err(malformed(format!("it defines run {:?}", def.run)));
    }
    Ok(def)
}

/// A converge run read only as far as status needs: its definition ([`definition`]) and the kind
/// of the newest record its driver appended (`report` once it ended).
pub fn progress(store: &Store, roster: &Roster, run: &str) -> Result<(ConvergeDef, Option<String>), RecordError> {
    let def = definition(store, roster, run)?;
    let events_ref = events_ref(run, &def.driver);
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
    Ok((def, last))
}

/// Reads run `run` back: its definition and the driver's verified events.
pub fn load_run(store: &Store, roster: &Roster, run: &str) -> Result<RecordedRun, RecordError> {
    let def = definition(store, roster, run)?;
    let events_ref = events_ref(run, &def.driver);
    let malformed = |commit: &str, why: String| RecordError::Malformed {
        refname: events_ref.clone(),
        commit: commit.to_owned(),
        why,
    };
    let mut events = Vec::new();
    for (commit, kind, payload) in verified_payloads(store, roster, &events_ref)? {
        let event: RunEvent = serde_json::from_value(payload).map_err(|e| malformed(&commit, e.to_string()))?;
        if event.record_kind() != Some(kind.as_str()) {
            return Err(malformed(&commit, format!("its kind {kind:?} does not match its event")));
        }
        events.push(event);
    }
    let stored_report = events.iter().rev().find_map(|e| match e {
        RunEvent::Report { report } => Some((**report).clone()),
        _ => None,
    });
    Ok(RecordedRun { def, events, stored_report })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converge_run_ids_are_never_development_run_ids() {
        for secs in [0, 1_767_225_600, 4_102_444_799] {
            let id = new_run_id(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs));
            assert!(validate_run_id(&id).is_ok(), "{id}");
            assert!(crate::devrun::validate_run_id(&id).is_err(), "a development run cannot be named {id}");
        }
    }

    #[test]
    fn an_old_converge_definition_reads_as_before() {
        use crate::devrun::definition::tests::{OLD_CONVERGE, OLD_CONVERGE_ID, put, scratch};
        let s = scratch();
        put(&s.store, &meta_ref(OLD_CONVERGE_ID), OLD_CONVERGE);
        let want = ConvergeDef {
            run: OLD_CONVERGE_ID.into(),
            goal: "agree on shared scores".into(),
            pattern: crate::runtime::PatternKind::Preference,
            peers: crate::peers::parse_agents(&["builtin:reference", "builtin:greedy"]).unwrap(),
            driver: "alice".into(),
            limits: super::super::Limits::default(),
            split: Vec::new(),
        };
        let recorded = load_run(&s.store, &s.roster, OLD_CONVERGE_ID).unwrap();
        assert_eq!((recorded.def, recorded.events.len()), (want.clone(), 0));
        assert_eq!(progress(&s.store, &s.roster, OLD_CONVERGE_ID).unwrap(), (want, None));
    }

    #[test]
    fn a_new_converge_definition_is_tagged_signed_and_reads() {
        use crate::devrun::definition::tests::{first, scratch};
        use crate::devrun::{RUN_TYPE_FIELD, definition};
        let s = scratch();
        let def = ConvergeDef {
            run: new_run_id(std::time::SystemTime::now()),
            goal: "agree".into(),
            pattern: crate::runtime::PatternKind::Cascade,
            peers: crate::peers::parse_agents(&["builtin:reference"]).unwrap(),
            driver: "alice".into(),
            limits: super::super::Limits::default(),
            split: vec!["src/lib.rs".into()],
        };
        RunRecorder::start(&s.store, &s.key, &def).unwrap();
        let (verdict, mut payload) = first(&s, &meta_ref(&def.run));
        assert_eq!(verdict, Verdict::Verified);
        let tag = payload.as_object_mut().unwrap().remove(RUN_TYPE_FIELD);
        assert_eq!(tag, Some(serde_json::json!("converge")));
        assert_eq!(payload, serde_json::to_value(&def).unwrap(), "beside the tag, the definition's own fields");
        assert_eq!(load_run(&s.store, &s.roster, &def.run).unwrap().def, def);
        assert_eq!(definition::run_type(&s.store, &def.run), Some(RunType::Converge));
    }

    #[test]
    fn a_development_definition_is_no_converge_run() {
        use crate::devrun::definition::tests::{OLD_DEVELOPMENT, put, scratch};
        let s = scratch();
        put(&s.store, &meta_ref("r1"), OLD_DEVELOPMENT);
        let new = crate::devrun::NewRun { id: Some("r2".into()), goal: "g".into(), ..Default::default() };
        crate::devrun::start(&s.store, &new, "alice", &s.key).unwrap();
        for run in ["r1", "r2"] {
            let err = load_run(&s.store, &s.roster, run).unwrap_err();
            assert!(matches!(&err, RecordError::Malformed { .. }), "{err}");
            assert!(err.to_string().contains("it defines a development run, not a converge run"), "{err}");
        }
    }
}

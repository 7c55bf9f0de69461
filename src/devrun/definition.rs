//! A run's definition record, and the type of run it names.
//!
//! Every run lives under `refs/mas/runs/<run>/` ([`super::RUNS_PREFIX`]), and the first record of
//! its `meta` chain, of kind [`RUN_KIND`], is its definition. Two types of run write one:
//!
//! - a **development run** (`git mas run start`, or `git mas coordinate` on code): the definition
//!   is a [`RunDef`](super::RunDef); the run as its whole meta chain tells it (phase, blocked landings, problems)
//!   is a [`RunMeta`](super::RunMeta), folded by [`super::load_meta`];
//! - a **converge run** (`git mas converge`, or `git mas coordinate` on a scalar class, and the
//!   ASSEMBLY before an aggregate development run): the definition is a `ConvergeDef`
//!   (`coordinate::scalar`), read back by `coordinate::scalar::record`.
//!
//! Decisions:
//!
//! - **The record says which type of run it defines.** Its payload holds [`RUN_TYPE_FIELD`]
//!   (`"run_type": "development"` or `"converge"`) beside the definition's own fields, written by
//!   [`RunType::tag`] and read by [`RunType::of_definition`]. No reader tells the two apart by the
//!   run id's letters, and each reader refuses a definition of the other type by this field.
//! - **One record kind, one field**, rather than a second record kind: a version written before
//!   the field ignores a field it does not know (neither definition denies unknown fields), so it
//!   still reads every new record as it read its own. A second kind would have made the new
//!   converge runs unreadable to those versions.
//! - **The field is the record's, not the definition's.** [`RunDef`](super::RunDef) and `ConvergeDef` keep their
//!   fields, so what `git mas run show --json` prints is unchanged; the two cannot share one
//!   tagged enum because `coordinate` sits above `devrun` (the layering), so the type and its rule
//!   live here, with the layout of `refs/mas/runs/` they belong to.
//! - **Two names for two roles.** `ConvergeDef` is a definition, like [`RunDef`](super::RunDef); [`RunMeta`](super::RunMeta) is a
//!   development run read whole. A converge run has no fold of its meta chain: its events are its
//!   driver's chain.
//!
//! Migration of the stored format (nothing is rewritten in place):
//!
//! - **New definitions are written tagged**: [`super::start`] and the converge recorder call
//!   [`RunType::tag`]. The tag is part of the signed payload, so it changes the signed bytes of new
//!   records only.
//! - **Old definitions, without the field, are read by the rule readers applied before it**
//!   ([`RunType::of_untagged`]): a development definition always records `"class":
//!   "development"`, a converge definition has no `class` field at all (`git mas report` told them
//!   apart so). For every record those versions wrote this agrees with the other old rule, the run
//!   id's letters (converge ids are `<UTC time>-<hex>` with an upper-case `T` and `Z`, which a
//!   development id cannot hold), so a run is of the same type to old and new readers.
//! - **Signatures are untouched**: a record is verified over its payload as stored, so an old
//!   record verifies exactly as before, and a new one verifies under old versions too.

use super::{RUN_KIND, RUNS_PREFIX, RunError, meta_ref};
use crate::store::Store;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;

/// The field of a definition's payload that names the type of run it defines.
pub const RUN_TYPE_FIELD: &str = "run_type";

/// Which type of run a definition record defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunType {
    /// A development run: a [`RunDef`](super::RunDef), its meta chain folded into a [`RunMeta`](super::RunMeta).
    Development,
    /// A converge run driven over peers: `coordinate::scalar::ConvergeDef`.
    Converge,
}

impl RunType {
    /// `development` or `converge`, as the field holds it.
    pub fn name(self) -> &'static str {
        match self {
            RunType::Development => "development",
            RunType::Converge => "converge",
        }
    }

    /// A definition's payload as it is stored: `definition` (a JSON object) with its type.
    pub fn tag(self, definition: Value) -> Value {
        match definition {
            Value::Object(mut map) => {
                map.insert(RUN_TYPE_FIELD.into(), Value::from(self.name()));
                Value::Object(map)
            }
            // Every definition serializes to an object; anything else is stored as it is and
            // read by the rule for untagged records.
            other => other,
        }
    }

    /// The type a stored definition names: its [`RUN_TYPE_FIELD`], or, for a definition written
    /// before the field existed, [`RunType::of_untagged`]. An error for a value this build does
    /// not know.
    pub fn of_definition(payload: &Value) -> Result<RunType, String> {
        match payload.get(RUN_TYPE_FIELD) {
            None => Ok(RunType::of_untagged(payload)),
            Some(Value::String(s)) if s == "development" => Ok(RunType::Development),
            Some(Value::String(s)) if s == "converge" => Ok(RunType::Converge),
            Some(other) => Err(format!("its {RUN_TYPE_FIELD} {other} is not a type of run this build knows")),
        }
    }

    /// The rule for a definition without the field: a development run when it records the class
    /// `development`, a converge run otherwise (see the module docs).
    pub fn of_untagged(payload: &Value) -> RunType {
        match payload.get("class").and_then(Value::as_str) {
            Some("development") => RunType::Development,
            _ => RunType::Converge,
        }
    }
}

/// The type of run `id`, as the first record of its meta chain names it; `None` when there is no
/// such run or its definition cannot be read. The record is read, not verified: whoever loads the
/// run verifies it.
pub fn run_type(store: &Store, id: &str) -> Option<RunType> {
    let chain = store.walk(&meta_ref(id), usize::MAX).ok()?;
    match chain.last().map(|entry| &entry.record) {
        Some(Ok(r)) if r.kind == RUN_KIND => RunType::of_definition(&r.payload).ok(),
        _ => None,
    }
}

/// Every run id in the repository, sorted.
pub fn list_ids(store: &Store) -> Result<Vec<String>, RunError> {
    let mut ids = BTreeSet::new();
    for info in store.list(RUNS_PREFIX)? {
        let Some(rest) = info.name.strip_prefix(RUNS_PREFIX) else { continue };
        if let Some(id) = rest.strip_suffix("/meta")
            && !id.contains('/')
        {
            ids.insert(id.to_string());
        }
    }
    Ok(ids.into_iter().collect())
}

/// The run ids of one type, sorted; a run whose type cannot be read is counted a development run
/// (loading it says why it cannot be read).
pub fn list_of(store: &Store, wanted: RunType) -> Result<Vec<String>, RunError> {
    let mut ids = list_ids(store)?;
    ids.retain(|id| run_type(store, id).unwrap_or(RunType::Development) == wanted);
    Ok(ids)
}

#[cfg(test)]
#[path = "definition_tests.rs"]
pub(crate) mod tests;

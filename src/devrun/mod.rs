//! Development runs: the definition, its life cycle, and where everything of a run lives.
//!
//! A run is one goal pursued by a roster of agents. Everything about it lives under
//! `refs/mas/runs/<run>/`:
//!
//! ```text
//! meta                the run's shared chain: its definition (seq 1), then abort, blocked-landing
//!                     and landing records, appended by compare-and-swap
//! events/<agent>      that agent's proposals and endorsements (see [`events`])
//! proposals/<agent>   that agent's proposed artifact: a commit whose parent is the run's base
//! landed              the landing record's commit, created with "must not exist" once the
//!                     integration branch holds the landing commit (see `ops::land`)
//! report              the convergence report, appended when the run ends or a landing is blocked
//! ```
//!
//! Decisions encoded here:
//!
//! - **The definition is a signed record**, the first of the meta chain, created with "must not
//!   exist": two `run start` with one id cannot both succeed. Its base is the integration branch's
//!   tip at that moment; its quorum is capped at the roster's size (the requested value is kept
//!   beside it, so the cap is visible). Its record names the type of run it defines, development
//!   or converge, which share `refs/mas/runs/` ([`definition`]: the record, its migration).
//! - **The life cycle is the meta chain, read against the integration branch.** A run is open
//!   until its chain holds an abort or a landing record whose commit the integration branch really
//!   holds. A landing record is an *intent* appended before the branch moves (a crash cannot split
//!   a multi-ref update that does not exist; see `ops::land` for each step): the fold in
//!   [`load_meta`] calls it [`Phase::Landed`] when its commit is reachable from the branch,
//!   [`Phase::Landing`] (pending: any git-mas command that reads the run completes it) when the
//!   branch is still at the record's `previous`, and *void* otherwise — the branch moved elsewhere
//!   before the intent was carried out, so nothing landed: the record is listed as a problem and
//!   the run is open again. Only the last intent can be pending; an earlier one was void when the
//!   next was appended. Both the abort and the landing append with a compare-and-swap that
//!   re-reads the chain, so an abort racing a landing either comes first (and the landing sees it)
//!   or sees the intent and is refused.
//! - **Time is recorded, never trusted for ordering of git state**: `created_at_ms` feeds the
//!   budget, and event time stamps only order events from different chains deterministically.

pub mod artifact;
pub mod cover;
pub mod definition;
pub mod events;
pub mod imports;
pub mod ledger;
pub mod rules;
pub mod settle;
pub mod slices;
pub mod view;

pub use definition::{RUN_TYPE_FIELD, RunType, list_ids};

use crate::identity::{AgentKey, Roster};
use crate::runtime::PatternKind;
use crate::store::record::{Record, Verdict};
use crate::store::{Append, CasOutcome, Store, StoreError};
use gix::ObjectId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use thiserror::Error;

/// Where every run lives.
pub const RUNS_PREFIX: &str = "refs/mas/runs/";

/// Record kind of a run definition, of either type ([`definition`]).
pub const RUN_KIND: &str = "run";
/// Record kind of an abort.
pub const ABORT_KIND: &str = "run-abort";
/// Record kind of a landing that was blocked.
pub const BLOCKED_KIND: &str = "land-blocked";
/// Record kind of the landing.
pub const LANDING_KIND: &str = "landing";
/// Record kind of a stored convergence report.
pub const REPORT_KIND: &str = "report";

/// The run's shared chain.
pub fn meta_ref(run: &str) -> String {
    format!("{RUNS_PREFIX}{run}/meta")
}

/// The prefix of the run's event chains.
pub fn events_prefix(run: &str) -> String {
    format!("{RUNS_PREFIX}{run}/events/")
}

/// An agent's event chain in the run.
pub fn events_ref(run: &str, agent: &str) -> String {
    format!("{RUNS_PREFIX}{run}/events/{agent}")
}

/// The prefix of the run's proposal refs.
pub fn proposals_prefix(run: &str) -> String {
    format!("{RUNS_PREFIX}{run}/proposals/")
}

/// An agent's proposal in the run.
pub fn proposal_ref(run: &str, agent: &str) -> String {
    format!("{RUNS_PREFIX}{run}/proposals/{agent}")
}

/// The run's landing.
pub fn landed_ref(run: &str) -> String {
    format!("{RUNS_PREFIX}{run}/landed")
}

/// The run's report chain.
pub fn report_ref(run: &str) -> String {
    format!("{RUNS_PREFIX}{run}/report")
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Errors of run operations.
#[derive(Debug, Error)]
pub enum RunError {
    /// The run id is not usable in a ref name.
    #[error("run id {id:?} is not valid: {why}")]
    BadId {
        /// The id as given.
        id: String,
        /// What is wrong.
        why: String,
    },
    /// No run with this id.
    #[error("no run {id:?} in this repository")]
    NoSuchRun {
        /// The id.
        id: String,
    },
    /// A run with this id exists already.
    #[error("a run {id:?} already exists")]
    Exists {
        /// The id.
        id: String,
    },
    /// The run's definition cannot be read or does not verify.
    #[error("run {id:?} has no readable, verified definition: {why}")]
    Unreadable {
        /// The id.
        id: String,
        /// Why.
        why: String,
    },
    /// A setting given to a run operation (a new run's settings, an abort's reason) is empty or
    /// out of range.
    #[error("{setting}")]
    BadSetting {
        /// Which setting, and what is wrong with it.
        setting: SettingError,
    },
    /// No run was named and none can be chosen: the repository has no run.
    #[error(
        "no run named, no `mas.run` in git config, and no run in this repository: start one with `git mas run start --goal …`"
    )]
    NoRun,
    /// No run was named and several are open.
    #[error("{} runs are open ({}); name one", open.len(), open.join(", "))]
    Ambiguous {
        /// The open runs' ids.
        open: Vec<String>,
    },
    /// The integration branch does not exist.
    #[error("the integration branch {branch:?} does not exist: a run starts from its tip")]
    NoBranch {
        /// The branch.
        branch: String,
    },
    /// The run was already aborted.
    #[error("run {id:?} was aborted: {reason}")]
    Aborted {
        /// The id.
        id: String,
        /// The recorded reason.
        reason: String,
    },
    /// The run already landed.
    #[error("run {id:?} already landed as {commit} (by {by})")]
    Landed {
        /// The id.
        id: String,
        /// The commit on the integration branch.
        commit: String,
        /// Who landed it.
        by: String,
    },
    /// A store failure.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What is wrong with a setting given to a run operation (see [`RunError::BadSetting`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SettingError {
    /// The goal is empty.
    #[error("the goal is empty; say what the team is to achieve with --goal")]
    EmptyGoal,
    /// A name on the run's roster is not a valid agent name.
    #[error("--roster: {source}")]
    RosterName {
        /// Why the name is invalid.
        source: crate::identity::NameError,
    },
    /// A name on the run's roster is not on the repository's roster.
    #[error("--roster names '{name}', who is not on the repository's roster (.mas/roster)")]
    NotOnRoster {
        /// The name.
        name: String,
    },
    /// The run would have no members.
    #[error("the run's roster is empty: add agents with `git mas agent new` and commit .mas/roster")]
    EmptyRoster,
    /// A quorum of zero.
    #[error("--quorum must be at least 1")]
    ZeroQuorum,
    /// A round limit of zero.
    #[error("--max-rounds must be at least 1")]
    ZeroMaxRounds,
    /// A time budget of zero.
    #[error("--budget must be longer than zero")]
    ZeroBudget,
    /// A check command that is empty or blank.
    #[error("--check is empty")]
    EmptyCheck,
    /// An abort without a reason.
    #[error("the reason is empty; say why the run stops with --reason")]
    EmptyReason,
    /// An aggregate plan whose slices are not exactly the run's members.
    #[error("the plan's slices are for {} but the run's roster is {}", slices.join(", "), roster.join(", "))]
    SlicesRoster {
        /// The slices' agents.
        slices: Vec<String>,
        /// The run's members.
        roster: Vec<String>,
    },
    /// An aggregate plan that the coordination rule refuses.
    #[error("the plan is refused: {source}")]
    Slices {
        /// Why.
        source: slices::SliceError,
    },
}

impl From<SettingError> for RunError {
    fn from(setting: SettingError) -> Self {
        RunError::BadSetting { setting }
    }
}

fn encode<T: Serialize>(value: &T, what: &str) -> Result<serde_json::Value, StoreError> {
    serde_json::to_value(value).map_err(|e| StoreError::Encode { what: what.to_string(), source: e })
}

/// Checks a run id: the same shape as an agent name (`[a-z0-9][a-z0-9._-]{0,62}`, no `..`, no
/// `.lock` suffix), so that it is one safe ref component.
pub fn validate_run_id(id: &str) -> Result<(), RunError> {
    crate::identity::validate_name(id)
        .map_err(|e| RunError::BadId { id: id.into(), why: e.to_string().replacen("agent name", "the id", 1) })
}

/// A fresh run id: eight random hex digits.
pub fn new_run_id() -> String {
    let mut bytes = [0u8; 4];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness: fall back to the clock, still unique enough for one repository; a
        // collision is refused by the compare-and-swap, never overwritten.
        bytes = (now_ms() as u32).to_be_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A run's definition: the first record of its meta chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunDef {
    /// The run id.
    pub id: String,
    /// What the team is to achieve.
    pub goal: String,
    /// The class (always development for runs started here).
    pub class: PatternKind,
    /// The agents taking part, sorted.
    pub roster: Vec<String>,
    /// Valid endorsements a proposal needs, capped at the roster's size.
    pub quorum: u32,
    /// The quorum as requested, when the cap changed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_quorum: Option<u32>,
    /// The integration branch's short name.
    pub branch: String,
    /// The integration branch's tip when the run started: every proposal's parent.
    pub base: String,
    /// The most proposals of changed content one agent may make (`None`: no limit).
    pub max_rounds: Option<u64>,
    /// The run's wall-clock budget in milliseconds from `created_at_ms` (`None`: none).
    pub budget_ms: Option<u64>,
    /// The team's check command, run by `endorse` (and on a merged tree by `land`).
    pub check: Option<String>,
    /// When the run started, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// The agent that started it.
    pub started_by: String,
    /// An aggregate run's plan: the goal split into slices, merged in this order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slices: Option<slices::SlicePlan>,
    /// How long each check of the run may take before it is killed and fails, in milliseconds
    /// (`None`, as in runs recorded before it existed: [`DEFAULT_CHECK_TIMEOUT`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_timeout_ms: Option<u64>,
}

/// How long a check may run unless its run or its command line says otherwise: 5 minutes.
///
/// Decision: half the default hop timeout (`git mas coordinate --hop-timeout`, 10 minutes). An
/// endorsement runs the check on the proposal and, when it fails with a test report, on the base
/// too, inside one agent's hop; a hung test killed at 5 minutes is recorded as a failed
/// endorsement that says so, where one left to the hop's end would be lost with the killed agent.
pub const DEFAULT_CHECK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5 * 60);

impl RunDef {
    /// How long each of the run's checks may take ([`RunDef::check_timeout_ms`]).
    pub fn check_timeout(&self) -> std::time::Duration {
        self.check_timeout_ms.map_or(DEFAULT_CHECK_TIMEOUT, std::time::Duration::from_millis)
    }

    /// The base commit.
    pub fn base_id(&self) -> Result<ObjectId, RunError> {
        ObjectId::from_hex(self.base.as_bytes()).map_err(|_| RunError::Unreadable {
            id: self.id.clone(),
            why: format!("base {:?} is not an id", self.base),
        })
    }

    /// Whether `agent` takes part.
    pub fn has(&self, agent: &str) -> bool {
        self.roster.iter().any(|a| a == agent)
    }
}

/// What `run start` is asked for.
#[derive(Debug, Clone, Default)]
pub struct NewRun {
    /// The id, or `None` for a fresh random one.
    pub id: Option<String>,
    /// The goal.
    pub goal: String,
    /// The roster, or `None` for every agent on the repository's roster.
    pub roster: Option<Vec<String>>,
    /// The quorum, or `None` for a strict majority of the roster.
    pub quorum: Option<u32>,
    /// See [`RunDef::max_rounds`].
    pub max_rounds: Option<u64>,
    /// See [`RunDef::budget_ms`].
    pub budget_ms: Option<u64>,
    /// See [`RunDef::check`].
    pub check: Option<String>,
    /// See [`RunDef::slices`]: every slice's agent must be in the run's roster.
    pub slices: Option<slices::SlicePlan>,
    /// See [`RunDef::check_timeout_ms`] (0 is taken as not given).
    pub check_timeout_ms: Option<u64>,
}

/// The quorum of a run of `size` agents asked for `requested`: the request capped at the size
/// (with the request kept when it was capped), else a strict majority.
pub fn quorum_for(size: u32, requested: Option<u32>) -> (u32, Option<u32>) {
    match requested {
        Some(q) if q > size => (size, Some(q)),
        Some(q) => (q, None),
        None => (size / 2 + 1, None),
    }
}

/// Builds the definition of a new run (pure): checks the settings, caps the quorum.
pub fn define(
    new: &NewRun,
    id: &str,
    roster: &Roster,
    branch: &str,
    base: ObjectId,
    by: &str,
    now_ms: u64,
) -> Result<RunDef, RunError> {
    validate_run_id(id)?;
    let goal = new.goal.trim();
    if goal.is_empty() {
        return Err(SettingError::EmptyGoal.into());
    }
    let members: Vec<String> = match &new.roster {
        Some(list) => {
            let mut set = BTreeSet::new();
            for name in list {
                let name = name.trim();
                if name.is_empty() {
                    continue;
                }
                crate::identity::validate_name(name)
                    .map_err(|source| RunError::from(SettingError::RosterName { source }))?;
                if roster.get(name).is_none() {
                    return Err(SettingError::NotOnRoster { name: name.to_string() }.into());
                }
                set.insert(name.to_string());
            }
            set.into_iter().collect()
        }
        None => roster.entries().map(|e| e.name.clone()).collect(),
    };
    if members.is_empty() {
        return Err(SettingError::EmptyRoster.into());
    }
    let size = u32::try_from(members.len()).unwrap_or(u32::MAX);
    if new.quorum == Some(0) {
        return Err(SettingError::ZeroQuorum.into());
    }
    let (quorum, requested_quorum) = quorum_for(size, new.quorum);
    if new.max_rounds == Some(0) {
        return Err(SettingError::ZeroMaxRounds.into());
    }
    if new.budget_ms == Some(0) {
        return Err(SettingError::ZeroBudget.into());
    }
    let check = match new.check.as_deref().map(str::trim) {
        Some("") => return Err(SettingError::EmptyCheck.into()),
        other => other.map(str::to_string),
    };
    let slices = checked_slices(new.slices.as_ref(), &members)?;
    Ok(RunDef {
        id: id.into(),
        goal: goal.into(),
        class: PatternKind::Development,
        roster: members,
        quorum,
        requested_quorum,
        branch: branch.into(),
        base: base.to_string(),
        max_rounds: new.max_rounds,
        budget_ms: new.budget_ms,
        check,
        created_at_ms: now_ms,
        started_by: by.into(),
        slices,
        check_timeout_ms: new.check_timeout_ms.filter(|ms| *ms > 0),
    })
}

/// The plan of a new run, when it has one: every member of the run in it once, with a slice or
/// reviewing, no one else, every pair of slices Parallel under the rule.
fn checked_slices(plan: Option<&slices::SlicePlan>, members: &[String]) -> Result<Option<slices::SlicePlan>, RunError> {
    let Some(plan) = plan else { return Ok(None) };
    let mut agents = plan.members();
    agents.sort();
    if agents != members {
        return Err(SettingError::SlicesRoster { slices: plan.agents(), roster: members.to_vec() }.into());
    }
    slices::check_plan(plan).map_err(|source| SettingError::Slices { source })?;
    Ok(Some(plan.clone()))
}

/// Starts a run: records its definition as the first record of a new meta chain.
pub fn start(store: &Store, new: &NewRun, agent: &str, key: &AgentKey) -> Result<RunDef, RunError> {
    let roster = store.roster()?;
    let branch = store.integration_branch();
    let base =
        store.tip(&format!("refs/heads/{branch}"))?.ok_or_else(|| RunError::NoBranch { branch: branch.clone() })?;
    let id = match &new.id {
        Some(id) => id.clone(),
        None => new_run_id(),
    };
    let def = define(new, &id, &roster, &branch, base, agent, now_ms())?;
    let refname = meta_ref(&id);
    if store.tip(&refname)?.is_some() {
        return Err(RunError::Exists { id });
    }
    let payload = RunType::Development.tag(encode(&def, "a run definition")?);
    let record = Record::new(RUN_KIND, agent, 1, payload).sign(key);
    let commit = store.write_record_commit(&record, &[], None)?;
    match store.cas(&refname, None, commit, &format!("git-mas: run {id} started by {agent}"))? {
        CasOutcome::Updated => Ok(def),
        CasOutcome::LostRace { .. } => Err(RunError::Exists { id }),
    }
}

/// An abort record's payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbortPayload {
    /// Why the run was stopped.
    pub reason: String,
    /// Whether the reason is a blocking risk (the report then says blocked / risk_blocked).
    #[serde(default)]
    pub risk: bool,
    /// The rounds the driver held before it stopped the run (absent: not driven, or recorded
    /// before it was kept). The report counts them: a run whose agents never proposed still held
    /// its rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u64>,
    /// The driver's halt, when a driver stopped the run (`max-rounds-reached`, `budget-exhausted`,
    /// `unreadable-reply`, …): the report names the ending by it (`convergence::Ending`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halt: Option<String>,
    /// When.
    pub at_ms: u64,
}

/// A blocked landing's payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockedPayload {
    /// The integration branch's tip the landing was computed against.
    pub main: String,
    /// The proposals it tried to land: (agent, tree id), in merge order.
    pub members: Vec<(String, String)>,
    /// Whether it was an aggregate landing.
    pub aggregate: bool,
    /// What blocked it.
    pub conflicts: Vec<crate::convergence::RecordedConflict>,
    /// When.
    pub at_ms: u64,
}

/// The landing record's payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LandingPayload {
    /// The commit written to the integration branch.
    pub commit: String,
    /// The branch's tip it was written on.
    pub previous: String,
    /// Its tree.
    pub tree: String,
    /// The landed proposals: (agent, tree id), in merge order.
    pub winners: Vec<(String, String)>,
    /// Each winner's valid endorsers.
    pub endorsers: Vec<(String, Vec<String>)>,
    /// Whether it was an aggregate landing.
    pub aggregate: bool,
    /// Whether a check ran on the landed tree itself (a merge), and its exit status.
    pub merged_check: Option<CheckSummary>,
    /// How many tests still fail on the landed tree, when a check's report said (0: it passed):
    /// more than 0 is a partial landing — it improved on main without passing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub still_failing: Option<u64>,
    /// The termination reason written in the commit's trailer.
    pub termination: String,
    /// The current frame's hash at landing, if there was one.
    pub frame: Option<String>,
    /// When.
    pub at_ms: u64,
}

/// A check's result in brief, as landing records keep it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckSummary {
    /// The command.
    pub command: String,
    /// Its exit status (`None`: killed or timed out).
    pub exit_status: Option<i32>,
    /// Wall time.
    pub duration_ms: u64,
    /// `sha256:<hex>` of its output.
    pub output_digest: String,
}

impl CheckSummary {
    /// Whether the check passed.
    pub fn passed(&self) -> bool {
        self.exit_status == Some(0)
    }
}

/// Where a run stands, as its meta chain says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Phase {
    /// Neither aborted nor landed.
    Open,
    /// Aborted.
    Aborted {
        /// Who.
        by: String,
        /// The record.
        abort: AbortPayload,
    },
    /// A landing intent is recorded and the integration branch is still at its `previous`: the
    /// landing is under way (or its process died); `ops::land::commit::recover` completes it.
    Landing {
        /// Who.
        by: String,
        /// The landing record's commit.
        record: String,
        /// The record.
        landing: Box<LandingPayload>,
    },
    /// Landed: the integration branch holds the landing commit.
    Landed {
        /// Who.
        by: String,
        /// The landing record's commit.
        record: String,
        /// The record.
        landing: Box<LandingPayload>,
    },
}

impl Phase {
    /// `open`, `aborted` or `landed`.
    pub fn name(&self) -> &'static str {
        match self {
            Phase::Open => "open",
            Phase::Aborted { .. } => "aborted",
            Phase::Landing { .. } => "landing",
            Phase::Landed { .. } => "landed",
        }
    }
}

/// A record that did not count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// The ref.
    #[serde(rename = "ref")]
    pub refname: String,
    /// The record's commit.
    pub commit: String,
    /// The verdict label (`SPOOF`, …) or what was wrong.
    pub problem: String,
}

/// A run as its meta chain describes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunMeta {
    /// The definition.
    pub def: RunDef,
    /// Open, aborted or landed.
    pub phase: Phase,
    /// Blocked landings, oldest first: (who, record).
    pub blocked: Vec<(String, BlockedPayload)>,
    /// The meta chain's tip.
    pub tip: String,
    /// Records that did not count.
    pub problems: Vec<Problem>,
    /// Void landing intents (record commits, oldest first): each is also among the problems.
    #[serde(skip)]
    pub void_intents: Vec<String>,
}

impl RunMeta {
    /// The meta chain's tip as an id.
    pub fn tip_id(&self) -> Option<ObjectId> {
        ObjectId::from_hex(self.tip.as_bytes()).ok()
    }

    /// An error when the run has ended (aborted or landed).
    pub fn ensure_open(&self) -> Result<(), RunError> {
        match &self.phase {
            Phase::Open => Ok(()),
            Phase::Aborted { abort, .. } => {
                Err(RunError::Aborted { id: self.def.id.clone(), reason: abort.reason.clone() })
            }
            // A pending landing is refused like a landed one: every command that reads the run
            // completes it first (`ops::land::commit::recover`), so what is refused has landed.
            Phase::Landing { by, landing, .. } | Phase::Landed { by, landing, .. } => {
                Err(RunError::Landed { id: self.def.id.clone(), commit: landing.commit.clone(), by: by.clone() })
            }
        }
    }

    /// The landing record, pending or landed: (who, record commit, payload).
    pub fn landing(&self) -> Option<(&str, &str, &LandingPayload)> {
        match &self.phase {
            Phase::Landing { by, record, landing } | Phase::Landed { by, record, landing } => {
                Some((by, record, landing))
            }
            _ => None,
        }
    }
}

/// Whether `commit` is reachable from `tip` (`git merge-base --is-ancestor`, all parents).
pub fn reachable(store: &Store, commit: ObjectId, tip: ObjectId) -> Result<bool, StoreError> {
    if commit == tip {
        return Ok(true);
    }
    // Usually the landing is a few first parents below the tip: look there before asking git.
    let mut next = store.repo().find_commit(tip).ok();
    for _ in 0..32 {
        let Some(c) = next else { break };
        let Some(parent) = c.parent_ids().next().map(|p| p.detach()) else { break };
        if parent == commit {
            return Ok(true);
        }
        next = store.repo().find_commit(parent).ok();
    }
    let args = ["merge-base", "--is-ancestor", &commit.to_string(), &tip.to_string()];
    match crate::git::run_allowing(store.common_dir(), &args, &[1]) {
        Ok((code, _)) => Ok(code == 0),
        Err(e) => Err(StoreError::Git { context: format!("asking whether {tip} holds {commit}"), source: Box::new(e) }),
    }
}

/// Where a landing record stands against the integration branch's tip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IntentState {
    /// The branch holds the landing commit.
    Landed,
    /// The branch is still at the record's `previous`: the landing can be completed.
    Pending,
    /// The branch moved elsewhere: nothing landed, the intent is void.
    Void,
}

/// Judges a landing record against the integration branch's tip (`None`: the branch is gone).
pub fn intent_state(store: &Store, landing: &LandingPayload, tip: Option<ObjectId>) -> Result<IntentState, StoreError> {
    let (Ok(commit), Ok(previous)) =
        (ObjectId::from_hex(landing.commit.as_bytes()), ObjectId::from_hex(landing.previous.as_bytes()))
    else {
        return Ok(IntentState::Void);
    };
    let Some(tip) = tip else { return Ok(IntentState::Void) };
    if tip == previous {
        return Ok(IntentState::Pending);
    }
    if store.repo().find_commit(commit).is_err() {
        return Ok(IntentState::Void);
    }
    Ok(if reachable(store, commit, tip)? { IntentState::Landed } else { IntentState::Void })
}

/// Reads a run's meta chain, verified against `roster`.
pub fn load_meta(store: &Store, roster: &Roster, id: &str) -> Result<RunMeta, RunError> {
    validate_run_id(id)?;
    let refname = meta_ref(id);
    let Some(tip) = store.tip(&refname)? else {
        return Err(RunError::NoSuchRun { id: id.into() });
    };
    let chain = store.verified_chain(&refname, roster)?;
    let mut fold = MetaFold::new(store, id, refname);
    for (entry, verdict) in chain {
        match (&entry.record, &verdict) {
            (Ok(record), Verdict::Verified) => fold.record(entry.commit, record)?,
            (_, v) => fold.unverified(entry.commit, v),
        }
    }
    fold.judge_last_intent()?;
    fold.finish(tip)
}

/// The fold of a run's meta chain, oldest record first (see the module docs).
struct MetaFold<'a> {
    store: &'a Store,
    id: &'a str,
    refname: String,
    def: Option<RunDef>,
    phase: Phase,
    blocked: Vec<(String, BlockedPayload)>,
    problems: Vec<Problem>,
    /// Void landing intents (record commits, oldest first).
    void_intents: Vec<String>,
    /// Why the chain defines no run, when its first records say so.
    first_problem: Option<String>,
    /// The latest landing intent not yet judged: (who, record commit, payload).
    intent: Option<(String, String, LandingPayload)>,
    /// The integration branch's tip, read once when first needed.
    main_tip: Option<Option<ObjectId>>,
}

impl<'a> MetaFold<'a> {
    fn new(store: &'a Store, id: &'a str, refname: String) -> Self {
        MetaFold {
            store,
            id,
            refname,
            def: None,
            phase: Phase::Open,
            blocked: Vec::new(),
            problems: Vec::new(),
            void_intents: Vec::new(),
            first_problem: None,
            intent: None,
            main_tip: None,
        }
    }

    fn problem(&mut self, commit: String, problem: String) {
        self.problems.push(Problem { refname: self.refname.clone(), commit, problem });
    }

    /// A record that does not verify counts for nothing; as the first record, it is why the
    /// chain defines no run.
    fn unverified(&mut self, commit: ObjectId, verdict: &Verdict) {
        if self.def.is_none() && self.first_problem.is_none() {
            self.first_problem = Some(format!("its first record is {}", verdict.label()));
        }
        self.problem(commit.to_string(), verdict.label().to_string());
    }

    /// Folds one verified record.
    fn record(&mut self, commit: ObjectId, record: &Record) -> Result<(), RunError> {
        let payload = record.payload.clone();
        let problem = |fold: &mut Self, what: String| fold.problem(commit.to_string(), what);
        let Some(branch) = self.def.as_ref().map(|d| d.branch.clone()) else {
            match record.kind.as_str() {
                RUN_KIND => self.definition(commit, payload),
                kind => problem(self, format!("a {kind} record before the run's definition")),
            }
            return Ok(());
        };
        match record.kind.as_str() {
            RUN_KIND => problem(self, "a second definition (ignored)".into()),
            ABORT_KIND => match serde_json::from_value::<AbortPayload>(payload) {
                Ok(a) if self.phase == Phase::Open => {
                    // An abort is appended only while no landing is pending: an intent before it
                    // was void.
                    self.void_intent("a void landing intent: the integration branch moved before it landed");
                    self.phase = Phase::Aborted { by: record.agent.clone(), abort: a }
                }
                Ok(_) => problem(self, format!("an abort after the run {} (ignored)", self.phase.name())),
                Err(e) => problem(self, format!("unreadable abort: {e}")),
            },
            LANDING_KIND => match serde_json::from_value::<LandingPayload>(payload) {
                Ok(l) if self.phase == Phase::Open => self.landing(commit, &record.agent, l, &branch)?,
                Ok(_) => problem(self, format!("a landing after the run {} (ignored)", self.phase.name())),
                Err(e) => problem(self, format!("unreadable landing: {e}")),
            },
            BLOCKED_KIND => match serde_json::from_value::<BlockedPayload>(payload) {
                Ok(b) => self.blocked.push((record.agent.clone(), b)),
                Err(e) => problem(self, format!("unreadable blocked landing: {e}")),
            },
            other => problem(self, format!("unknown record kind {other:?} (ignored)")),
        }
        Ok(())
    }

    /// The first verified run record: the definition, when it defines this run.
    fn definition(&mut self, commit: ObjectId, payload: serde_json::Value) {
        let not_ours = match RunType::of_definition(&payload) {
            Ok(RunType::Development) => None,
            Ok(other) => Some(format!("it defines a {} run, not a development run", other.name())),
            Err(why) => Some(why),
        };
        if let Some(why) = not_ours {
            self.first_problem.get_or_insert(why.clone());
            return self.problem(commit.to_string(), why);
        }
        match serde_json::from_value::<RunDef>(payload) {
            Ok(d) if d.id == self.id => self.def = Some(d),
            Ok(d) => {
                self.first_problem.get_or_insert(format!("it defines run {:?}", d.id));
                self.problem(commit.to_string(), format!("defines another run ({:?})", d.id));
            }
            Err(e) => {
                self.first_problem.get_or_insert(format!("the definition does not parse: {e}"));
                self.problem(commit.to_string(), format!("unreadable definition: {e}"));
            }
        }
    }

    /// A landing record while the run is open: landed when the branch holds its commit, else the
    /// intent to judge (an earlier intent was void).
    fn landing(&mut self, commit: ObjectId, by: &str, landing: LandingPayload, branch: &str) -> Result<(), RunError> {
        let tip = self.main_tip(branch)?;
        // The landed ref is created only once the branch held the commit: when it names this
        // record, the landing completed (and no branch walk is needed).
        let on_main = self.store.tip(&landed_ref(self.id))? == Some(commit)
            || intent_state(self.store, &landing, tip)? == IntentState::Landed;
        self.void_intent(
            "a void landing intent: the integration branch moved before it landed; a later landing superseded it",
        );
        if on_main {
            self.phase = Phase::Landed { by: by.to_string(), record: commit.to_string(), landing: Box::new(landing) }
        } else {
            self.intent = Some((by.to_string(), commit.to_string(), landing));
        }
        Ok(())
    }

    /// The integration branch's tip, read on first use.
    fn main_tip(&mut self, branch: &str) -> Result<Option<ObjectId>, RunError> {
        Ok(match self.main_tip {
            Some(t) => t,
            None => *self.main_tip.insert(self.store.tip(&format!("refs/heads/{branch}"))?),
        })
    }

    /// A pending intent superseded by a later record was void: listed as a problem.
    fn void_intent(&mut self, why: &str) {
        if let Some((_, void, _)) = self.intent.take() {
            self.void_intents.push(void.clone());
            self.problem(void, why.into());
        }
    }

    /// The last intent: pending, landed or void against the branch's tip.
    fn judge_last_intent(&mut self) -> Result<(), RunError> {
        let Some((by, record, landing)) = self.intent.take() else { return Ok(()) };
        let tip = match self.main_tip {
            Some(t) => t,
            None => {
                self.store.tip(&format!("refs/heads/{}", self.def.as_ref().map_or("main", |d| d.branch.as_str())))?
            }
        };
        match intent_state(self.store, &landing, tip)? {
            IntentState::Pending => self.phase = Phase::Landing { by, record, landing: Box::new(landing) },
            IntentState::Landed => self.phase = Phase::Landed { by, record, landing: Box::new(landing) },
            IntentState::Void => {
                self.void_intents.push(record.clone());
                self.problem(
                    record,
                    format!(
                        "a void landing intent: the integration branch moved from {} before {} landed; the run is open",
                        landing.previous, landing.commit
                    ),
                )
            }
        }
        Ok(())
    }

    fn finish(self, tip: ObjectId) -> Result<RunMeta, RunError> {
        let Some(def) = self.def else {
            return Err(RunError::Unreadable {
                id: self.id.into(),
                why: self.first_problem.unwrap_or_else(|| "the chain holds no run definition".into()),
            });
        };
        Ok(RunMeta {
            def,
            phase: self.phase,
            blocked: self.blocked,
            tip: tip.to_string(),
            problems: self.problems,
            void_intents: self.void_intents,
        })
    }
}

/// Which run a command means: the one named, else `mas.run` from git config (set per worktree by
/// `git mas worktree add`), else the only open run, else — when no run is open — the most recently
/// started one (so that `report` and `show` find a run that just ended).
pub fn resolve(store: &Store, roster: &Roster, given: Option<&str>) -> Result<RunMeta, RunError> {
    if let Some(id) = given {
        return load_meta(store, roster, id);
    }
    if let Some(id) = store.config_string("mas.run").filter(|s| !s.is_empty()) {
        return load_meta(store, roster, &id);
    }
    let mut open = Vec::new();
    let mut latest: Option<RunMeta> = None;
    for id in list_ids(store)? {
        let Ok(meta) = load_meta(store, roster, &id) else { continue };
        if meta.phase == Phase::Open {
            open.push(meta);
        } else if latest.as_ref().is_none_or(|l| meta.def.created_at_ms > l.def.created_at_ms) {
            latest = Some(meta);
        }
    }
    match (open.len(), latest) {
        (1, _) => Ok(open.remove(0)),
        (0, Some(meta)) => Ok(meta),
        (0, None) => Err(RunError::NoRun),
        _ => Err(RunError::Ambiguous { open: open.iter().map(|m| m.def.id.clone()).collect() }),
    }
}

/// Why a run is stopped, as an abort records it.
#[derive(Debug, Clone, Copy)]
pub struct Stop<'a> {
    /// The reason.
    pub reason: &'a str,
    /// Whether it is a blocking risk.
    pub risk: bool,
    /// The rounds a driver held ([`AbortPayload::rounds`]).
    pub rounds: Option<u64>,
    /// The driver's halt ([`AbortPayload::halt`]).
    pub halt: Option<&'a str>,
}

/// Appends an abort record, refusing when the run already ended.
pub fn abort(
    store: &Store,
    roster: &Roster,
    id: &str,
    stop: Stop<'_>,
    agent: &str,
    key: &AgentKey,
) -> Result<AbortPayload, RunError> {
    let Stop { reason, risk, rounds, halt } = stop;
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(SettingError::EmptyReason.into());
    }
    let payload = AbortPayload { reason: reason.into(), risk, rounds, halt: halt.map(str::to_owned), at_ms: now_ms() };
    let value = encode(&payload, "an abort")?;
    store.append_with(&meta_ref(id), agent, key, ABORT_KIND, &[], |_tip| -> Result<Option<Append>, RunError> {
        // Re-read on every attempt: a landing or abort may just have been appended.
        load_meta(store, roster, id)?.ensure_open()?;
        Ok(Some(Append { payload: value.clone(), also: Vec::new() }))
    })?;
    Ok(payload)
}

/// Appends a blocked-landing record.
pub fn record_blocked(
    store: &Store,
    id: &str,
    blocked: &BlockedPayload,
    agent: &str,
    key: &AgentKey,
) -> Result<(), RunError> {
    let value = encode(blocked, "a blocked landing")?;
    store.append(&meta_ref(id), agent, key, BLOCKED_KIND, &[], |_| Ok(Some(value.clone())))?;
    Ok(())
}

/// Appends a report to the run's report chain.
pub fn store_report(
    store: &Store,
    id: &str,
    report: &serde_json::Value,
    agent: &str,
    key: &AgentKey,
) -> Result<ObjectId, RunError> {
    let appended = store.append(&report_ref(id), agent, key, REPORT_KIND, &[], |_| Ok(Some(report.clone())))?;
    appended
        .map(|a| a.commit)
        .ok_or_else(|| RunError::Store(StoreError::TooManyRetries { refname: report_ref(id), attempts: 0 }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::Roster;

    fn roster(names: &[&str]) -> Roster {
        let did = crate::identity::AgentKey::from_seed([7; 32]).did();
        Roster::merge(names.iter().map(|n| (n.to_string(), did.clone())).collect(), vec![], "main")
    }

    fn new_run() -> NewRun {
        NewRun { goal: "fix tax".into(), ..NewRun::default() }
    }

    #[test]
    fn quorum_defaults_to_a_majority_and_is_capped_at_the_roster() {
        let r = roster(&["a", "b", "c"]);
        let base = ObjectId::null(gix::hash::Kind::Sha1);
        let def = define(&new_run(), "r1", &r, "main", base, "a", 5).unwrap();
        assert_eq!((def.quorum, def.requested_quorum), (2, None));
        assert_eq!(def.roster, ["a", "b", "c"]);
        let capped = define(&NewRun { quorum: Some(9), ..new_run() }, "r1", &r, "main", base, "a", 5).unwrap();
        assert_eq!((capped.quorum, capped.requested_quorum), (3, Some(9)));
        let sub = NewRun { roster: Some(vec!["c".into(), "a".into(), "a".into()]), ..new_run() };
        let def = define(&sub, "r1", &r, "main", base, "a", 5).unwrap();
        assert_eq!(def.roster, ["a", "c"]);
        assert_eq!(def.quorum, 2);
    }

    #[test]
    fn bad_settings_are_named() {
        let r = roster(&["a", "b"]);
        let base = ObjectId::null(gix::hash::Kind::Sha1);
        let cases: Vec<(NewRun, &str, &str)> = vec![
            (NewRun { goal: "  ".into(), ..new_run() }, "r1", "goal is empty"),
            (NewRun { quorum: Some(0), ..new_run() }, "r1", "--quorum"),
            (NewRun { max_rounds: Some(0), ..new_run() }, "r1", "--max-rounds"),
            (NewRun { budget_ms: Some(0), ..new_run() }, "r1", "--budget"),
            (NewRun { check: Some(" ".into()), ..new_run() }, "r1", "--check"),
            (NewRun { roster: Some(vec!["zed".into()]), ..new_run() }, "r1", "'zed'"),
            (NewRun { roster: Some(vec!["Bad".into()]), ..new_run() }, "r1", "--roster"),
            (new_run(), "Bad/id", "run id"),
            (new_run(), "a..b", "run id"),
        ];
        for (new, id, want) in cases {
            let err = define(&new, id, &r, "main", base, "a", 0).unwrap_err().to_string();
            assert!(err.contains(want), "{err} lacks {want}");
        }
        let empty = Roster::default();
        assert!(
            define(&new_run(), "r1", &empty, "main", base, "a", 0).unwrap_err().to_string().contains("roster is empty")
        );
    }

    #[test]
    fn fresh_ids_are_valid() {
        for _ in 0..20 {
            let id = new_run_id();
            assert_eq!(id.len(), 8);
            validate_run_id(&id).unwrap();
        }
    }
}

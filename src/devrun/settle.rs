//! Completing a proposal after a crash: the proposal ref follows the agent's proposal events.
//!
//! A proposal moves two refs one at a time, the event first (the step table is in
//! `pool::proposal`'s docs); a process killed between them leaves an event naming a commit the
//! proposal ref does not hold. Every read of the run ([`super::view::load`]), `propose` and
//! `endorse` finish that step here, so the ref never lags behind what the tally counts.

use super::events::{self, RunEvents};
use super::{RunDef, RunError};
use crate::engines::DevelopmentEngine;
use crate::runtime::MasRuntime;
use crate::store::{CasOutcome, Store};
use gix::ObjectId;
use serde::{Deserialize, Serialize};

/// A proposal ref moved to what its agent's latest accepted proposal event names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settled {
    /// The agent.
    pub agent: String,
    /// The proposal ref.
    pub refname: String,
    /// Where it pointed before (`None`: it did not exist).
    pub from: Option<String>,
    /// The proposal commit it points at now.
    pub to: String,
}

/// Points each proposal ref of the run (only `agent`'s, when given) at the commit of that agent's
/// latest accepted proposal event, when it does not already: step 2 of a proposal, re-done after a
/// crash. Only a ref that lags behind its events is moved — absent, or at a commit an earlier
/// proposal event of the agent names — never one written outside `git mas propose`; and only to
/// a commit that exists, holds the event's tree and rests on the run's base. Anything else is left
/// alone (the run's view reports it as a dependency issue).
pub fn settle(
    store: &Store,
    def: &RunDef,
    loaded: &RunEvents,
    runtime: &MasRuntime<DevelopmentEngine>,
    agent: Option<&str>,
) -> Result<Vec<Settled>, RunError> {
    let base = def.base_id()?;
    let mut out = Vec::new();
    for name in def.roster.iter().filter(|n| agent.is_none_or(|a| a == n.as_str())) {
        let Some(stamped) = events::accepted_proposal(runtime, loaded, name) else { continue };
        let crate::runtime::SemanticPayload::ExternalBytes { digest, .. } = &stamped.record.event.payload else {
            continue;
        };
        let Ok(commit) = ObjectId::from_hex(stamped.record.commit.as_bytes()) else { continue };
        let refname = super::proposal_ref(&def.id, name);
        let earlier: Vec<&str> = loaded
            .events
            .iter()
            .filter(|e| e.agent == *name && e.kind == events::PROPOSAL_KIND)
            .map(|e| e.record.commit.as_str())
            .collect();
        for _ in 0..8 {
            let current = store.tip(&refname)?;
            if current == Some(commit) {
                break;
            }
            if let Some(c) = current
                && !earlier.contains(&c.to_string().as_str())
            {
                break;
            }
            let Ok(c) = store.repo().find_commit(commit) else { break };
            let parents: Vec<ObjectId> = c.parent_ids().map(|p| p.detach()).collect();
            let tree = c.tree_id().map(|t| t.detach().to_string()).unwrap_or_default();
            if parents != [base] || tree != *digest {
                break;
            }
            match store.cas(&refname, current, commit, &format!("git-mas: proposal by {name}"))? {
                CasOutcome::Updated => {
                    out.push(Settled {
                        agent: name.clone(),
                        refname: refname.clone(),
                        from: current.map(|c| c.to_string()),
                        to: commit.to_string(),
                    });
                    break;
                }
                CasOutcome::LostRace { .. } => continue,
            }
        }
    }
    Ok(out)
}

/// [`settle`] for a run named by id, reading its events: what `git mas doctor` calls.
pub fn settle_run(store: &Store, run: &str) -> Result<Vec<Settled>, RunError> {
    let roster = store.roster()?;
    let meta = super::load_meta(store, &roster, run)?;
    let loaded = events::load(store, &roster, run)?;
    let runtime = events::replay(&meta.def, events::self_endorse_allowed(store), &loaded)
        .map_err(|e| RunError::Unreadable { id: run.into(), why: e.to_string() })?;
    settle(store, &meta.def, &loaded, &runtime, None)
}

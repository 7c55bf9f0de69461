//! An aggregate run's slices held as its agents' lanes while it works ([`crate::attention::lanes`]).

use super::DevError;
use crate::attention::focus_store::now_secs;
use crate::devrun::slices::SlicePlan;
use crate::identity::AgentKey;
use crate::store::Store;
use std::time::Duration;

/// An aggregate run's slices, held as lanes (`refs/mas/lanes/<agent>`, each signed by its agent)
/// for the run's budget and a minute more: the slices are the run's, so a session of this clone
/// or of any clone the remote carries them to is refused their files, as a `git mas claim` lane
/// would refuse it, and `status` shows who holds them. A slice that overlaps the live lane or
/// claim of anyone outside the run (its agents and its driver are one team, kept apart by the
/// plan) refuses the run before it starts, naming the holder; the lanes taken before it are
/// released. A driver killed mid-run leaves the lanes to lapse at their time to live.
pub(super) fn hold_slices(
    store: &Store,
    plan: &SlicePlan,
    driver: &str,
    names: &[String],
    budget: Duration,
) -> Result<Vec<HeldSlice>, DevError> {
    use crate::attention::lanes::{self, Taken};
    let mut team: Vec<String> = names.to_vec();
    team.push(driver.to_owned());
    let ttl = budget.as_secs().saturating_add(60).min(lanes::MAX_LANE_TTL_SECS);
    let ledger = crate::devrun::ledger::Ledger::new(store);
    let mut held: Vec<HeldSlice> = Vec::new();
    for slice in plan.slices.iter().filter(|s| !s.targets.is_empty()) {
        let globs: Vec<String> = slice.targets.iter().map(|t| globset::escape(t)).collect();
        let taken = match AgentKey::load(&slice.agent) {
            Ok(key) => lanes::take(store, &slice.agent, &key, &team, &globs, ttl, now_secs(), &ledger)
                .map(|taken| (key, taken))
                .map_err(DevError::from),
            Err(source) => Err(DevError::Key { agent: slice.agent.clone(), source }),
        };
        match taken {
            Ok((key, Taken::Held(_))) => held.push(HeldSlice { agent: slice.agent.clone(), key, globs }),
            Ok((_, Taken::Overlapping(found))) => {
                release_slices(store, &held);
                let o = found.into_iter().next().expect("an overlap is named");
                return Err(DevError::SliceHeld {
                    agent: slice.agent.clone(),
                    holder: o.holder,
                    what: o.what.trim_start_matches("its ").to_owned(),
                    example: o.example,
                });
            }
            Err(e) => {
                release_slices(store, &held);
                return Err(e);
            }
        }
    }
    Ok(held)
}

/// A slice held as its agent's lane.
pub(super) struct HeldSlice {
    agent: String,
    key: AgentKey,
    globs: Vec<String>,
}

/// Releases the slices' lanes at the run's end (only the slices': a lane the agent held before
/// the run stays); one that cannot be released lapses at its time to live.
pub(super) fn release_slices(store: &Store, held: &[HeldSlice]) {
    for h in held {
        let _ = crate::attention::lanes::release(store, &h.agent, &h.key, Some(&h.globs), now_secs());
    }
}

//! The aggregate rounds of [`super::develop`] (seed 001 §7, complementary aggregation): every
//! agent works its own slice of the run's plan; after each round the **wait-all barrier** looks at
//! every slice — at quorum, abstained, judged against (a failed check or a rejection), waiting for
//! endorsements, or missing — and the merged whole lands only when every slice is at quorum or
//! abstained.
//!
//! A slice is a part: the engine endorses it when its check breaks nothing the base passed
//! (`sound`), whatever it fixes alone, and an agent whose slice needs no change abstains (`git mas
//! propose --abstain`: a proposal of the base's tree, [`crate::devrun::view::RunView::abstained`]),
//! which nobody is asked to endorse and nothing waits for. Every slice abstained: the run ends
//! `nothing-to-land`.
//!
//! The whole is tested before it lands ([`crate::ops::land::commit`]): the merged tree's check
//! passes, or its report shows it improving on main. A whole that improves without passing is
//! **held** while rounds are left and it changed since it was last held: the slices that fixed
//! nothing on their own (or abstained) are told which tests still fail and get the next propose
//! hop; the same whole again, or the last round, lands it — a partial landing, which the halt
//! line, the report and the exit code (10) say.
//!
//! What stops a landing is handed back to the agents concerned, never the end of the run: a slice
//! judged against goes back to its agent with why; an aggregate landing blocked by two slices
//! changing the same lines (`artifact_mismatch`, with the paths and both agents) or by a merged
//! tree whose check breaks tests (`test_failure` of the aggregate, naming the slices whose
//! combination broke it) is recorded in the run (the blocked landing record, so the report lists
//! it) and named in the next round's propose hop of every agent it implicates (what conflicted,
//! with whom). Two slices' proposals that cannot land together are named to both earlier, while
//! the barrier still waits for another slice: a three-way merge of each pair on the run's base,
//! as `git mas propose` does for its proposer ([`crate::ops::propose::clashes`]), so they are
//! resolved before the landing would stop on them. An agent whose slice is at quorum or abstained and that has nothing to resolve sits
//! the next propose hop out; an agent with no slice (the plan has fewer concerned groups than
//! agents) never proposes: it reviews, in endorse hops only. Only when the rounds or the budget run out does the run end
//! unlanded: blocked, when the last landing was. With `--partial`, the slices at quorum land as
//! soon as the barrier holds (or when the rounds end) without the others, and the report names
//! the missing ones (never `quality_reached`).

use super::{BarrierSlice, DevError, DevEvent, DevHalt, Driver, End, Landing};
use crate::convergence::{RecordedConflict, SliceStatus};
use crate::devrun::slices::SlicePlan;
use crate::devrun::view::RunView;
use std::collections::BTreeSet;

/// Where each slice of `plan` stands in `view`'s tally, in the plan's order: an abstention
/// (the slice needs no change) is in, with its reason.
pub fn barrier(plan: &SlicePlan, view: &RunView) -> Vec<BarrierSlice> {
    let tally = &view.tally;
    plan.slices
        .iter()
        .map(|s| {
            let Some(p) = tally.proposal(&s.agent) else {
                return BarrierSlice { agent: s.agent.clone(), status: SliceStatus::Missing, detail: None };
            };
            if let Some(why) = view.abstention(&s.agent) {
                return BarrierSlice { agent: s.agent.clone(), status: SliceStatus::Abstained, detail: Some(why) };
            }
            let against: Vec<String> = p
                .failures()
                .map(|v| format!("{}'s check failed", v.endorser))
                .chain(p.rejections().map(|v| format!("{} rejected it", v.endorser)))
                .collect();
            let (status, detail) = if p.at_quorum {
                (SliceStatus::AtQuorum, None)
            } else if !against.is_empty() {
                (SliceStatus::JudgedAgainst, Some(against.join("; ")))
            } else {
                (SliceStatus::Waiting, Some(format!("{}/{} endorsements", p.endorsers.len(), tally.quorum)))
            };
            BarrierSlice { agent: s.agent.clone(), status, detail }
        })
        .collect()
}

/// Whether the wait-all barrier holds: every slice is in, at quorum, abstained or judged
/// against.
pub fn barrier_holds(slices: &[BarrierSlice]) -> bool {
    slices
        .iter()
        .all(|s| matches!(s.status, SliceStatus::AtQuorum | SliceStatus::JudgedAgainst | SliceStatus::Abstained))
}

/// Whether every slice is ready to land: at quorum, or abstained.
fn ready(s: &BarrierSlice) -> bool {
    matches!(s.status, SliceStatus::AtQuorum | SliceStatus::Abstained)
}

/// What `party` is told of `conflict` in its next propose hop.
pub fn conflict_note(conflict: &RecordedConflict, party: &str) -> String {
    let others: Vec<&str> = conflict.parties.iter().map(String::as_str).filter(|p| *p != party).collect();
    let with = if others.is_empty() { String::new() } else { format!(" with {}", others.join(", ")) };
    let paths = if conflict.paths.is_empty() { String::new() } else { format!(" in {}", conflict.paths.join(", ")) };
    format!(
        "{}{with}{paths}: {}; change your slice so that the slices merge and pass the check, then propose again",
        conflict.kind.name(),
        conflict.detail
    )
}

impl Driver<'_> {
    /// The agents whose slice is at quorum with nothing left to resolve: they sit the next
    /// propose hop out. Empty for a best-of-N run.
    pub(super) fn settled_slices(&self) -> Result<BTreeSet<String>, DevError> {
        if self.setup.aggregate.is_none() {
            return Ok(BTreeSet::new());
        }
        let view = self.view()?;
        let abstained = view.tally.proposals.iter().map(|p| &p.agent).filter(|a| view.abstained(a));
        Ok(view.tally.at_quorum.iter().chain(abstained).filter(|a| !self.notes.contains_key(*a)).cloned().collect())
    }

    /// The barrier after a round, and the aggregate landing when it holds (or, with
    /// `--partial`, in the last round): `Some` when the run ends.
    pub(super) async fn aggregate_step(&mut self, round: u64, view: &RunView) -> Result<Option<End>, DevError> {
        let Some(aggregate) = self.setup.aggregate.as_ref() else { return Ok(None) };
        let partial = aggregate.partial;
        let slices = barrier(&aggregate.plan, view);
        let holds = barrier_holds(&slices);
        self.emit(DevEvent::Barrier { round, holds, slices: slices.clone() })?;
        self.notes.clear();
        for s in slices.iter().filter(|s| s.status == SliceStatus::JudgedAgainst) {
            let why = s.detail.clone().unwrap_or_default();
            self.notes
                .entry(s.agent.clone())
                .or_default()
                .push(format!("your slice's proposal was judged against ({why}): fix it and propose again"));
        }
        self.slice_denials(round)?;
        let complete = slices.iter().all(ready);
        let last = round >= self.setup.max_rounds || self.budget.next_timeout().is_none();
        let any = slices.iter().any(|s| s.status == SliceStatus::AtQuorum);
        if complete && !any {
            let detail = format!(
                "every slice's agent abstained ({}): nothing the goal concerns needed a change",
                slices.iter().map(|s| s.agent.as_str()).collect::<Vec<_>>().join(", ")
            );
            return Ok(End::halt(DevHalt::NothingToLand, None, detail));
        }
        // With --partial the slices at quorum land once the barrier holds, or when the rounds end.
        let partial_now = partial && any && !complete && (holds || last);
        if !complete && !partial_now {
            let open: Vec<String> = slices
                .iter()
                .filter(|s| !ready(s))
                .map(|s| format!("{} ({})", s.agent, s.detail.as_deref().unwrap_or("no proposal")))
                .collect();
            let why = if holds {
                "every slice is judged, but nothing lands until every slice is at quorum"
            } else {
                "the barrier waits"
            };
            self.clash_notes(view);
            self.emit(DevEvent::NotLandable { round, detail: format!("{why}: {}", open.join(", ")) })?;
            return Ok(None);
        }
        // A whole that still fails tests is held while rounds are left and something may change:
        // its agents get another round, and the same whole again lands as it is.
        let hold = !last && self.held.as_ref() != Some(&view.candidates(true));
        match self.land(round, (partial_now, hold))? {
            Landing::Landed(commit, winners) => Ok(Some(End::landed(commit, winners))),
            Landing::NotYet => Ok(None),
            Landing::Held(plan) => {
                self.hold(round, view, &plan)?;
                Ok(None)
            }
            Landing::Blocked(conflicts, detail) => {
                self.blocked = Some(detail);
                for conflict in conflicts {
                    for party in conflict.parties.iter().filter(|p| self.names.contains(p)) {
                        self.notes.entry(party.clone()).or_default().push(conflict_note(&conflict, party));
                    }
                    self.emit(DevEvent::Conflict { round, conflict })?;
                }
                Ok(None)
            }
        }
    }

    /// While the barrier waits: each slice whose proposal cannot land together with another
    /// slice's (a three-way merge on the run's base leaves files in conflict,
    /// [`crate::ops::propose::clashes`]) is told so, with the files and the other agent, in its
    /// next propose hop — before the landing would stop on them. A clash that cannot be checked
    /// is left to the landing.
    fn clash_notes(&mut self, view: &RunView) {
        let def = &view.meta.def;
        for p in view.tally.proposals.iter().filter(|p| !view.abstained(&p.agent)) {
            let Ok(tree) = gix::ObjectId::from_hex(p.tree.as_bytes()) else { continue };
            let Ok(clashes) = crate::ops::propose::clashes(self.store, def, &p.agent, tree) else { continue };
            for c in clashes {
                let crate::ops::propose::Against::Proposal { agent: other, .. } = &c.against else { continue };
                self.notes.entry(p.agent.clone()).or_default().push(format!(
                    "your slice's proposal and {other}'s change {} differently: the two cannot land together; \
                     leave them to one of you (agree with {other} which), then propose again",
                    c.paths.join(", ")
                ));
            }
        }
    }

    /// Holds back a whole that improves on main while tests still fail on it: every slice whose
    /// proposal fixes nothing on its own (or that abstained) is told which tests still fail, and
    /// gets the next round's propose hop.
    fn hold(&mut self, round: u64, view: &RunView, plan: &crate::ops::land::commit::LandPlan) -> Result<(), DevError> {
        let Some(aggregate) = self.setup.aggregate.as_ref() else { return Ok(()) };
        let n = plan.still_failing.unwrap_or_default();
        let tests = if plan.failing.is_empty() { String::new() } else { format!(": {}", plan.failing.join(", ")) };
        let asked: Vec<String> = aggregate
            .plan
            .slices
            .iter()
            .map(|s| s.agent.clone())
            .filter(|a| view.abstained(a) || view.tally.proposal(a).is_none_or(|p| crate::devrun::view::fixes(p) == 0))
            .collect();
        for agent in &asked {
            self.notes.entry(agent.clone()).or_default().push(format!(
                "the merged whole of the slices improves on main but {n} test(s) still fail on it{tests}; \
                 if one of them is your slice's to fix, fix it and propose again, else propose the same again"
            ));
        }
        self.held = Some(plan.members.clone());
        let who = if asked.is_empty() { "every slice gets".to_string() } else { format!("{} get", asked.join(", ")) };
        let detail = format!(
            "the merged whole of {} improves on main, but {n} test(s) still fail on it{tests}: {who} another round before it lands",
            plan.members.iter().map(|(a, _)| a.as_str()).collect::<Vec<_>>().join(", ")
        );
        self.emit(DevEvent::NotLandable { round, detail })
    }

    /// The gate's denials of this run's agents since the last round, of files in another agent's
    /// slice (`git mas gate` in a run's worktree records them): each is handed to both agents in
    /// the next round's hop, and told.
    fn slice_denials(&mut self, round: u64) -> Result<(), DevError> {
        let Some(aggregate) = self.setup.aggregate.as_ref() else { return Ok(()) };
        let from = self.denials_seen.0;
        let mut found = Vec::new();
        for d in crate::attention::denials::read(self.store.common_dir()) {
            let key = (d.at, d.agent.clone(), d.file.clone());
            if d.at < from
                || !self.names.contains(&d.agent)
                || aggregate.plan.owner_of(&d.file) != Some(d.holder.as_str())
                || self.denials_seen.1.contains(&key)
                || found.iter().any(|(_, a, _, f): &(u64, String, String, String)| *a == d.agent && *f == d.file)
            {
                continue;
            }
            self.denials_seen.1.insert(key);
            found.push((d.at, d.agent, d.holder, d.file));
        }
        for (_, agent, holder, file) in found {
            self.notes.entry(agent.clone()).or_default().push(format!(
                "the gate denied your edit of {file}: it is in {holder}'s slice, and {holder} is told what you need; \
                 change only your slice's files and say in your reply what {file} must do for it"
            ));
            self.notes.entry(holder.clone()).or_default().push(format!(
                "{agent} needed {file}, which is in your slice (the gate denied {agent} the edit): make the change \
                 {agent}'s slice needs there, then propose again"
            ));
            self.emit(DevEvent::SliceDenied { round, agent, holder, file })?;
        }
        Ok(())
    }

    /// How an aggregate run ends when its rounds run out unlanded: blocked when its last landing
    /// was, else without a landable whole (naming the slices that are not in).
    pub(super) fn aggregate_rounds_out(&self, rounds: u64) -> Option<End> {
        let aggregate = self.setup.aggregate.as_ref()?;
        if let Some(detail) = &self.blocked {
            let detail = format!("{rounds} round(s) passed and the last aggregate landing was blocked: {detail}");
            return End::halt(DevHalt::LandBlocked, None, detail);
        }
        let view = self.view().ok()?;
        let open: Vec<String> =
            barrier(&aggregate.plan, &view).into_iter().filter(|s| !ready(s)).map(|s| s.agent).collect();
        let detail = format!("{rounds} round(s) passed without every slice at quorum (not in: {})", open.join(", "));
        End::halt(DevHalt::MaxRoundsReached, None, detail)
    }
}

impl Driver<'_> {
    /// Whether `agent` reviews in this aggregate run: it has no slice (fewer concerned groups
    /// than agents), so it gets no propose hop, only endorse hops.
    pub(super) fn reviews(&self, agent: &str) -> bool {
        self.setup.aggregate.as_ref().is_some_and(|g| g.plan.reviews(agent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convergence::ConflictType;

    #[test]
    fn a_conflict_note_names_the_others_and_the_paths() {
        let conflict = RecordedConflict {
            kind: ConflictType::ArtifactMismatch,
            proposals: vec!["alice".into(), "bob".into()],
            parties: vec!["alice".into(), "bob".into()],
            paths: vec!["src/money.rs".into()],
            detail: "both change lines 3-5".into(),
        };
        let note = conflict_note(&conflict, "alice");
        assert!(note.starts_with("artifact_mismatch with bob in src/money.rs: both change lines 3-5;"), "{note}");
        assert!(conflict_note(&conflict, "bob").starts_with("artifact_mismatch with alice in"));
    }
}

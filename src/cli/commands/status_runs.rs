//! `git mas status`'s runs in progress: each run's tally, slices and barrier, what keeps it from
//! landing, and which proposals cannot land together (each one's [`propose::clashes`]: the
//! files it and another proposal, or the moved branch, change differently).

use crate::cli::commands::propose::clash_out;
use crate::cli::commands::tally::TallyArgs;
use crate::cli::context::Context;
use crate::cli::json::PhaseName;
use crate::cli::json::propose::ClashOut;
use crate::cli::json::status::{StatusOut, StatusProposal, StatusRun, StatusSlice};
use crate::cli::output::JsonFlag;
use git_mas::ops::propose;
use std::fmt::Write as _;

/// A run in progress with its tally (when it can be read).
pub(super) fn run_detail(ctx: &Context, listed: crate::cli::json::run::Listed) -> StatusRun {
    let mut run = StatusRun {
        id: listed.id,
        phase: listed.phase,
        ending: listed.ending,
        goal: listed.goal,
        problem: listed.problem,
        class: None,
        slices: Vec::new(),
        reviewers: Vec::new(),
        barrier_holds: None,
        quorum: 0,
        requested_quorum: None,
        rounds: 0,
        max_rounds: None,
        proposals: Vec::new(),
        leader: None,
        conflicts: 0,
        blocks_landing: None,
    };
    if run.phase == PhaseName::Unreadable {
        return run;
    }
    let args = TallyArgs { run: Some(run.id.clone()), output: JsonFlag::default() };
    let (tally, plan, requested_quorum, def) = match crate::cli::commands::tally::tally(ctx, &args) {
        Ok(done) => {
            let t = &done.value;
            let plan = t.view.meta.def.slices.as_ref().map(|plan| {
                let barrier = git_mas::coordinate::develop::barrier(plan, &t.view);
                let holds = git_mas::coordinate::develop::barrier_holds(&barrier);
                let slices: Vec<StatusSlice> = plan
                    .slices
                    .iter()
                    .zip(barrier)
                    .map(|(slice, b)| StatusSlice {
                        agent: slice.agent.clone(),
                        files: slice.targets.len(),
                        status: b.status.name().to_string(),
                        detail: b.detail,
                    })
                    .collect();
                let reviewers: Vec<String> = plan.reviewers.iter().map(|r| r.agent.clone()).collect();
                (slices, reviewers, holds)
            });
            (t.out(), plan, t.view.meta.def.requested_quorum, Some(t.view.meta.def.clone()))
        }
        Err(e) => {
            run.problem = Some(e.message());
            return run;
        }
    };
    run.class = Some(if plan.is_some() { "aggregate" } else { "best_of_n" }.to_string());
    if let Some((slices, reviewers, holds)) = plan {
        run.barrier_holds = Some(holds);
        run.slices = slices;
        run.reviewers = reviewers;
    }
    run.quorum = tally.quorum;
    run.requested_quorum = requested_quorum;
    run.rounds = tally.rounds;
    run.max_rounds = tally.max_rounds;
    run.leader = tally.leader.clone();
    run.conflicts = tally.conflicts.len();
    run.proposals = tally
        .proposals
        .iter()
        .map(|p| {
            let (checks_passed, checks_run) = p.checks();
            StatusProposal {
                agent: p.agent.clone(),
                endorsers: p.endorsers.clone(),
                checks_passed,
                checks_run,
                at_quorum: p.at_quorum,
                clashes: def.as_ref().map(|def| clashes(ctx, def, &p.agent, &p.tree)).unwrap_or_default(),
            }
        })
        .collect();
    run.blocks_landing = blocks_landing(&run, tally.quorum_reached);
    run
}

/// What `agent`'s proposal of `tree` cannot land together with ([`propose::clashes`]); nothing
/// when that cannot be worked out (status reports what it can read).
fn clashes(ctx: &Context, def: &git_mas::devrun::RunDef, agent: &str, tree: &str) -> Vec<ClashOut> {
    let (Ok(store), Ok(tree)) = (ctx.store(), gix::ObjectId::from_hex(tree.as_bytes())) else { return Vec::new() };
    propose::clashes(store, def, agent, tree).map(|c| c.iter().map(clash_out).collect()).unwrap_or_default()
}

/// Why `run` cannot land yet, if it cannot: a barrier waiting on slices, no proposal, or none at
/// quorum.
fn blocks_landing(run: &StatusRun, quorum_reached: bool) -> Option<String> {
    let waiting: Vec<String> = run
        .slices
        .iter()
        .filter(|s| !matches!(s.status.as_str(), "at_quorum" | "judged_against" | "landed"))
        .map(|s| match &s.detail {
            Some(d) => format!("{} ({}, {d})", s.agent, s.status),
            None => format!("{} ({})", s.agent, s.status),
        })
        .collect();
    if run.phase == PhaseName::Landing {
        None
    } else if run.barrier_holds == Some(false) {
        Some(format!("the barrier waits for {}", waiting.join(", ")))
    } else if run.proposals.is_empty() {
        Some("no proposal yet".into())
    } else if !quorum_reached {
        let best = run.proposals.iter().map(|p| p.endorsers.len()).max().unwrap_or(0);
        Some(format!("no proposal at quorum ({best} of {} valid endorsements at most)", run.quorum))
    } else {
        None
    }
}

/// The runs in progress: round, quorum, proposals, slices and whether each can land.
pub(super) fn human_runs(o: &mut String, s: &StatusOut) {
    if !s.runs.is_empty() {
        let _ = writeln!(o, "runs       {} in progress", s.runs.len());
        for r in &s.runs {
            let what = r.goal.as_deref().or(r.problem.as_deref()).unwrap_or_default();
            let class = r.class.as_deref().map(|c| format!(", {}", c.replace('_', "-"))).unwrap_or_default();
            let state = match (r.phase, r.ending) {
                (PhaseName::Open, Some(ending)) => ending.to_string(),
                _ => r.phase.to_string(),
            };
            let _ = writeln!(o, "  {} ({state}{class}): {what}", r.id);
            if r.phase == PhaseName::Unreadable {
                continue;
            }
            let limit = r.max_rounds.map(|m| format!(" of {m}")).unwrap_or_default();
            let _ = writeln!(
                o,
                "    round {}{limit}, quorum {}, {} proposal{}{}",
                r.rounds,
                crate::cli::render::quorum(r.quorum, r.requested_quorum),
                r.proposals.len(),
                if r.proposals.len() == 1 { "" } else { "s" },
                if r.conflicts > 0 { format!(", {} conflicts", r.conflicts) } else { String::new() }
            );
            for p in &r.proposals {
                let _ = writeln!(
                    o,
                    "    {}: {} endorsement{}{}, checks {}/{}{}",
                    p.agent,
                    p.endorsers.len(),
                    if p.endorsers.len() == 1 { "" } else { "s" },
                    if p.endorsers.is_empty() { String::new() } else { format!(" ({})", p.endorsers.join(", ")) },
                    p.checks_passed,
                    p.checks_run,
                    if p.at_quorum { ", at quorum" } else { "" }
                );
                for c in &p.clashes {
                    let with =
                        if c.kind == "branch" { format!("{} (moved since the base)", c.with) } else { c.with.clone() };
                    let _ = writeln!(o, "      cannot land together with {with}: both change {}", c.paths.join(", "));
                }
            }
            if let Some(holds) = r.barrier_holds {
                let slices: Vec<String> = r
                    .slices
                    .iter()
                    .map(|sl| {
                        format!(
                            "{} {} ({} file{})",
                            sl.agent,
                            sl.status.replace('_', " "),
                            sl.files,
                            if sl.files == 1 { "" } else { "s" }
                        )
                    })
                    .collect();
                let _ =
                    writeln!(o, "    slices: {}; barrier {}", slices.join(", "), if holds { "holds" } else { "waits" });
                if !r.reviewers.is_empty() {
                    let _ = writeln!(o, "    reviewers (no slice, endorse the slices): {}", r.reviewers.join(", "));
                }
            }
            match &r.blocks_landing {
                Some(why) => {
                    let _ = writeln!(o, "    not landing: {why}");
                }
                None => {
                    let _ = writeln!(o, "    can land: `git mas land {}`", r.id);
                }
            }
        }
    }
}

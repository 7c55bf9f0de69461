//! `git mas tally [RUN]`: replay a run's events through the development engine and show where it
//! stands.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::json::tally::TallyOut;
use crate::cli::output::JsonFlag;
use crate::cli::render::{self, describe_phase, short};
use crate::cli::runs::load_view;
use crate::cli::{Done, Outcome};
use git_mas::convergence::ConvergenceReport;
use git_mas::devrun::view::RunView;
use git_mas::devrun::{Problem, now_ms};
use git_mas::engines::development::{Judgement, ProposalTally};
use std::fmt::Write as _;

/// Replay a run's recorded events and show proposals, valid endorsements, quorum, the leader and
/// the conflicts.
///
/// Every record is verified against the roster first; records that do not verify, and events the
/// engine refuses (self-endorsement, a round past --max-rounds, …), are listed and never counted.
/// A valid endorsement is an endorser's latest verdict on a proposal's current content that
/// passed its check (or accepted it by review). The leader has the most valid endorsements; ties
/// go to the lexicographically smallest agent id.
///
/// With --json: {run, phase, quorum, rounds, max_rounds, proposals, leader, at_quorum,
/// quorum_reached, conflicts, refused, problems, counters}.
#[derive(Debug, clap::Args)]
pub struct TallyArgs {
    /// The run (default: `mas.run`, else the only open run, else the latest).
    pub run: Option<String>,
    #[command(flatten)]
    pub output: JsonFlag,
}

fn verdict_text(v: &Judgement) -> String {
    match v {
        Judgement::Passed { .. } => "passed".into(),
        Judgement::Failed { exit_status, delta, .. } => match delta.as_ref().and_then(|d| d.shortfall()) {
            Some(why) => format!("{} — {why}", render::failed(*exit_status)),
            None => render::failed(*exit_status),
        },
        Judgement::Improved { delta, .. } => {
            format!("improved (fixes {} test(s), breaks none; {} still fail)", delta.fixed.len(), delta.still_failing)
        }
        Judgement::Sound { delta, .. } => format!(
            "sound (a part: breaks none, fixes {} test(s) alone; {} still fail)",
            delta.fixed.len(),
            delta.still_failing
        ),
        Judgement::Accepted { .. } => "accepted (review)".into(),
        Judgement::Rejected { reason } => format!("REJECTED: {reason}"),
    }
}

/// A run replayed: its view and its convergence report, from which `tally` prints.
#[derive(Debug)]
pub struct Tally {
    /// The run, replayed.
    pub view: RunView,
    /// Its convergence report now.
    pub report: ConvergenceReport,
}

impl Tally {
    /// What `--json` prints.
    pub fn out(&self) -> TallyOut {
        let (view, report) = (&self.view, &self.report);
        let t = &view.tally;
        TallyOut {
            run: view.meta.def.id.clone(),
            phase: crate::cli::render::phase_name(&view.meta.phase),
            quorum: t.quorum,
            rounds: t.rounds,
            max_rounds: t.max_rounds,
            proposals: t.proposals.clone(),
            leader: t.leader.clone(),
            at_quorum: t.at_quorum.clone(),
            quorum_reached: t.quorum_reached(),
            conflicts: report.conflicts.clone(),
            refused: view.refused.clone(),
            problems: view.problems().cloned().collect(),
            counters: view.runtime.counters(),
        }
    }
}

/// Runs `tally`.
pub fn run(ctx: &mut Context, args: TallyArgs) -> Result<Outcome, CliError> {
    let done = tally(ctx, &args)?;
    let Tally { view, report } = &done.value;
    if args.output.json {
        ctx.ui().json(&done.value.out())?;
    } else {
        ctx.ui().out(&human(view, report))?;
    }
    let outcome = done.outcome;
    exit_without_freeing(done);
    Ok(outcome)
}

/// Replays the run's events.
pub fn tally(ctx: &Context, args: &TallyArgs) -> Result<Done<Tally>, CliError> {
    let view = load_view(ctx, args.run.as_deref())?;
    let report = view.report(now_ms());
    Ok(Done::ok(Tally { view, report }))
}

fn human(view: &RunView, report: &ConvergenceReport) -> String {
    let t = &view.tally;
    let def = &view.meta.def;
    let mut o = String::new();
    let _ = writeln!(o, "run {} — {}: {}", def.id, describe_phase(&view.meta.phase), def.goal);
    let _ = writeln!(
        o,
        "quorum {} of {} ({}); round {}{}",
        t.quorum,
        def.roster.len(),
        def.roster.join(", "),
        t.rounds,
        t.max_rounds.map(|m| format!(" of {m}")).unwrap_or_default()
    );
    if t.proposals.is_empty() {
        let _ = writeln!(o, "no proposals yet");
    }
    for p in &t.proposals {
        match view.abstention(&p.agent) {
            Some(why) => {
                let _ =
                    writeln!(o, "\n{}  abstained (the base unchanged): {}", p.agent, why.lines().next().unwrap_or(""));
            }
            None => proposal(&mut o, p, t.quorum),
        }
    }
    match &t.leader {
        Some(l) => {
            let _ = writeln!(
                o,
                "\nleader: {l}{}",
                if t.quorum_reached() { " (quorum reached: `git mas land`)" } else { " (no quorum yet)" }
            );
        }
        None => {
            let _ = writeln!(o, "\nleader: none (no valid endorsement yet)");
        }
    }
    not_counted(&mut o, view, report);
    o
}

fn proposal(o: &mut String, p: &ProposalTally, quorum: u32) {
    let _ = writeln!(
        o,
        "\n{}  tree {}  round {}  {}/{} valid endorsements{}",
        p.agent,
        short(&p.tree),
        p.rounds,
        p.endorsers.len(),
        quorum,
        if p.at_quorum { "  QUORUM" } else { "" }
    );
    for v in &p.verdicts {
        let counted = p.endorsers.contains(&v.endorser);
        let _ = writeln!(
            o,
            "  {:<12} {}{}",
            v.endorser,
            verdict_text(&v.judgement),
            if v.own && !counted { " (own proposal: not counted)" } else { "" }
        );
    }
}

/// The conflicts, and the events and records that were not counted.
fn not_counted(o: &mut String, view: &RunView, report: &ConvergenceReport) {
    if !report.conflicts.is_empty() {
        let _ = writeln!(o, "\nconflicts:");
        for c in &report.conflicts {
            let resolved = if c.resolved { "resolved: " } else { "" };
            let _ = writeln!(o, "  {:<24} {} — {resolved}{}", c.kind.name(), c.detail, c.resolution);
        }
    }
    if !view.refused.is_empty() {
        let _ = writeln!(o, "\nevents not counted:");
        for r in &view.refused {
            let _ = writeln!(o, "  {} {}: {}", r.agent, short(&r.record), r.reason);
        }
    }
    let problems: Vec<&Problem> = view.problems().collect();
    if !problems.is_empty() {
        let _ = writeln!(o, "\nrecords not counted:");
        for p in problems {
            let _ = writeln!(o, "  {} {}: {}", p.refname, short(&p.commit), p.problem);
        }
    }
}

/// The process ends right after a tally: freeing the replayed run (thousands of events, their
/// history and the engine's maps) allocation by allocation measured about a fifth of a warm tally
/// of 6,400 events (`BENCHMARKS.md`), so it is left to the operating system.
fn exit_without_freeing<T>(value: T) {
    std::mem::forget(value);
}

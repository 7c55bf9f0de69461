//! `git mas tally [RUN]`: replay a run's events through the development engine and show where it
//! stands.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::output::{print_json, print_text};
use crate::cli::render::{describe_phase, short};
use crate::cli::runs::load_view;
use git_mas::convergence::Conflict;
use git_mas::engines::development::{Judgement, ProposalTally};
use git_mas::run::view::RefusedEvent;
use git_mas::run::{Problem, now_ms};
use git_mas::runtime::RuntimeCounters;
use std::fmt::Write as _;
use std::process::ExitCode;

/// Replay a run's recorded events and show proposals, valid endorsements, quorum, the leader and
/// the conflicts.
///
/// Every record is verified against the roster first; records that do not verify, and events the
/// engine refuses (self-endorsement, a round past --max-rounds, …), are listed and never counted.
/// A valid endorsement is an endorser's latest verdict on a proposal's current content that
/// passed its check (or accepted it by review). The leader has the most valid endorsements; ties
/// go to the lexicographically smallest agent id.
#[derive(Debug, clap::Args)]
pub struct TallyArgs {
    /// The run (default: `mas.run`, else the only open run, else the latest).
    pub run: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct TallyOut<'a> {
    run: &'a str,
    phase: &'static str,
    quorum: u32,
    rounds: u64,
    max_rounds: Option<u64>,
    proposals: &'a [ProposalTally],
    leader: Option<&'a str>,
    at_quorum: &'a [String],
    quorum_reached: bool,
    conflicts: Vec<Conflict>,
    refused: &'a [RefusedEvent],
    problems: Vec<&'a Problem>,
    counters: RuntimeCounters,
}

fn verdict_text(v: &Judgement) -> String {
    match v {
        Judgement::Passed { .. } => "passed".into(),
        Judgement::Failed { exit_status: Some(code), .. } => format!("FAILED (exit {code})"),
        Judgement::Failed { exit_status: None, .. } => "FAILED (killed)".into(),
        Judgement::Accepted { .. } => "accepted (review)".into(),
        Judgement::Rejected { reason } => format!("REJECTED: {reason}"),
    }
}

/// Runs `tally`.
pub fn run(ctx: &mut Context, args: TallyArgs) -> Result<ExitCode, CliError> {
    let view = load_view(ctx, args.run.as_deref())?;
    let report = view.report(now_ms());
    let t = &view.tally;
    let def = &view.meta.def;
    if args.json {
        print_json(&TallyOut {
            run: &def.id,
            phase: view.meta.phase.name(),
            quorum: t.quorum,
            rounds: t.rounds,
            max_rounds: t.max_rounds,
            proposals: &t.proposals,
            leader: t.leader.as_deref(),
            at_quorum: &t.at_quorum,
            quorum_reached: t.quorum_reached(),
            conflicts: report.conflicts,
            refused: &view.refused,
            problems: view.problems().collect(),
            counters: view.runtime.counters(),
        })?;
        exit_without_freeing(view);
        return Ok(ExitCode::SUCCESS);
    }
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
        let _ = writeln!(
            o,
            "\n{}  tree {}  round {}  {}/{} valid endorsements{}",
            p.agent,
            short(&p.tree),
            p.rounds,
            p.endorsers.len(),
            t.quorum,
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
    if !report.conflicts.is_empty() {
        let _ = writeln!(o, "\nconflicts:");
        for c in &report.conflicts {
            let _ = writeln!(
                o,
                "  {:<24} {} — {}{}",
                c.kind.name(),
                c.detail,
                if c.resolved { "resolved: " } else { "" },
                c.resolution
            );
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
    print_text(&o)?;
    exit_without_freeing((view, report));
    Ok(ExitCode::SUCCESS)
}

/// The process ends right after a tally: freeing the replayed run (thousands of events, their
/// history and the engine's maps) allocation by allocation measured about a fifth of a warm tally
/// of 6,400 events (`BENCHMARKS.md`), so it is left to the operating system.
fn exit_without_freeing<T>(value: T) {
    std::mem::forget(value);
}

//! Rendering shared by several commands: short ids, a run's phase, a landing recovery, a target
//! table. Pure: values in, text out.

use crate::cli::json::PhaseName;
use git_mas::attention::snapshot::Target;
use git_mas::devrun::Phase;
use std::fmt::Write as _;

/// The first 12 characters of an object id or a hash.
pub fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// What a recovery did, in words (`None`: nothing worth saying).
pub fn describe_recovery(r: &git_mas::ops::land::commit::Recovery) -> Option<String> {
    use git_mas::ops::land::commit::RecoveryState;
    let mut lines = Vec::new();
    for step in &r.done {
        lines.push(describe_step(step));
    }
    for s in &r.stuck {
        match &s.path {
            Some(p) => lines.push(format!("could not update the checkout at {}: {}", p.display(), s.why)),
            None => lines.push(format!("could not complete {}: {}", s.what, s.why)),
        }
    }
    let head = match r.state {
        RecoveryState::Completed => "completed the interrupted landing of run",
        RecoveryState::Incomplete => "the landing of run",
        RecoveryState::Void => "the landing intent of run",
        RecoveryState::NoLanding | RecoveryState::Complete => return None,
    };
    let tail = match r.state {
        RecoveryState::Incomplete => " is not complete",
        RecoveryState::Void => " is void: the integration branch moved before it landed; the run is open",
        _ => "",
    };
    let mut text = format!("{head} {}{tail}", r.run);
    for l in lines {
        text.push_str("\n  ");
        text.push_str(&l);
    }
    Some(text)
}

/// One step of a landing's recovery, in words.
pub fn describe_step(step: &git_mas::ops::land::commit::Step) -> String {
    use git_mas::ops::land::commit::Step;
    match step {
        Step::MovedBranch { branch, from, to } => format!("moved {branch} from {} to {}", short(from), short(to)),
        Step::CreatedLanded { refname, record } => format!("created {refname} at {}", short(record)),
        Step::UpdatedCheckout { path } => format!("updated the checkout at {}", path.display()),
        Step::RemovedIndexLock { path } => {
            format!("removed {}, which a killed git left (no process held it)", path.display())
        }
        Step::KeptAside { path, kept } => {
            format!(
                "{} held changes made after the landing was interrupted: kept at {}",
                path.display(),
                kept.display()
            )
        }
    }
}

/// A run's phase in words.
pub fn describe_phase(phase: &Phase) -> String {
    match phase {
        Phase::Open => "open".into(),
        Phase::Aborted { by, abort } => {
            use git_mas::convergence::Ending;
            match Ending::of_abort(abort.halt.as_deref(), abort.risk) {
                Ending::Aborted => format!("aborted by {by}: {}", abort.reason),
                Ending::AbortedAsRisk => format!("aborted-as-risk by {by}: {}", abort.reason),
                ending => format!("{ending} (aborted by {by}): {}", abort.reason),
            }
        }
        Phase::Landed { by, landing, .. } => format!("landed by {by} as {}", short(&landing.commit)),
        Phase::Landing { by, landing, .. } => {
            format!("landing by {by} as {} (not complete: `git mas land` completes it)", short(&landing.commit))
        }
    }
}

/// Targets (the top of a snapshot) as a table.
pub fn targets(top: &[Target]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<5} {:<8} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}  target",
        "rank", "saliency", "task", "errors", "warns", "refs", "recent", "editor"
    );
    for (i, t) in top.iter().enumerate() {
        let s = &t.signals;
        let _ = writeln!(
            o,
            "{:<5} {:<8.4} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.4}  {}",
            i + 1,
            t.saliency,
            s.task,
            s.errors,
            s.warnings,
            s.centrality,
            s.recency,
            s.editor,
            t.id
        );
    }
    o
}

/// A failed check in words: its exit status, or that it was killed (a timeout or a signal, or
/// a status 128 + N: see [`git_mas::runtime::exit`]).
pub fn failed(exit_status: Option<i32>) -> String {
    let words = git_mas::runtime::exit::exit_words(exit_status);
    match words.strip_prefix("killed ") {
        Some(how) => format!("FAILED — killed {how}"),
        None => format!("FAILED ({words})"),
    }
}

/// A run's quorum as asked: `3`, or, when the roster's size capped it, `5 (capped at 3, the
/// roster's size: never more endorsements than agents)` — never the cap alone, which would say the
/// team was asked for fewer than it was.
pub fn quorum(quorum: u32, requested: Option<u32>) -> String {
    match requested {
        Some(asked) if asked != quorum => {
            format!("{asked} (capped at {quorum}, the roster's size: never more endorsements than agents)")
        }
        _ => quorum.to_string(),
    }
}

/// A run's phase as `--json` names it.
pub fn phase_name(phase: &Phase) -> PhaseName {
    match phase {
        Phase::Open => PhaseName::Open,
        Phase::Aborted { .. } => PhaseName::Aborted,
        Phase::Landing { .. } => PhaseName::Landing,
        Phase::Landed { .. } => PhaseName::Landed,
    }
}

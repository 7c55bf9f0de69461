//! Reports for people: a converge run's report and a development run's convergence summary.
//! Pure: values in, text out.

use git_mas::convergence::{self, ConvergenceReport};
use git_mas::coordinate::scalar::Report;
use std::fmt::Write as _;

/// A converge run's report for people (`bold` paints a heading).
pub fn converge_report(report: &Report, bold: &dyn Fn(&str) -> String) -> String {
    let mut o = String::new();
    let class = match (report.class, &report.class_token) {
        (Some(c), Some(token)) if token != c.name() => format!("{c} (CLASS {token})"),
        (Some(c), _) => c.to_string(),
        (None, _) => "none inferred".to_owned(),
    };
    let halt = report.halt.map_or("none (the run did not finish)", |h| h.code());
    let _ = writeln!(o, "{} {} · class {class} · halt {}", bold("run"), report.run, bold(halt));
    let _ = writeln!(o, "  {}", report.halt_detail);
    let _ = writeln!(o, "  goal: {}", report.goal);

    let _ = writeln!(o, "\n{}", bold("derivation (each peer's UPDATE rule against the class's reference rule)"));
    let width = report.peers.iter().map(|p| p.name.len()).max().unwrap_or(4).max(4);
    for d in &report.derivation {
        let verdict = match &d.verdict {
            Some(git_mas::assembly::Verdict::Differs { worst_gap, .. }) => {
                format!("differs (worst gap {})", num(*worst_gap))
            }
            Some(git_mas::assembly::Verdict::Invalid { reason }) => format!("invalid: {reason}"),
            Some(v) => v.label().to_owned(),
            None => "not scored".to_owned(),
        };
        let rule = d.rule.as_deref().unwrap_or("(no UPDATE line)");
        let _ = writeln!(o, "  {:<width$}  {:<20}  {verdict}", d.peer, d.spec);
        let _ = writeln!(o, "  {:<width$}  UPDATE {rule}", "");
        if let Some(failure) = &d.failure {
            let _ = writeln!(o, "  {:<width$}  call failed: {failure}", "");
        }
    }
    execution(&mut o, report, width, bold);
    trajectory(&mut o, report, bold);
    if let Some(opt_) = &report.optimum {
        let list = |v: &[f64]| v.iter().map(|x| num(*x)).collect::<Vec<_>>().join(", ");
        let _ =
            writeln!(o, "‖z − z*‖₂ = {}; z = [{}]; z* = [{}]", num(opt_.distance), list(&opt_.z), list(&opt_.z_star));
    }
    let _ = writeln!(
        o,
        "\nrecorded in {} and {} ({} hops); `git mas report {}` renders it again",
        report.refs.meta, report.refs.events, report.hops, report.run
    );
    o
}

/// Each announcement against the peer's own rule and the reference.
fn execution(o: &mut String, report: &Report, width: usize, bold: &dyn Fn(&str) -> String) {
    if !report.execution.is_empty() && report.metric.is_some() {
        let _ = writeln!(
            o,
            "\n{}",
            bold("execution (each announcement against the peer's own rule, and against the reference)")
        );
        let _ = writeln!(
            o,
            "  {:<width$}  {:>9}  {:>14}  {:>14}  faithful",
            "peer", "announced", "max own gap", "max ref gap"
        );
        for e in &report.execution {
            let _ = writeln!(
                o,
                "  {:<width$}  {:>9}  {:>14}  {:>14}  {}",
                e.peer,
                e.announcements,
                opt(e.max_own_gap),
                opt(e.max_reference_gap),
                if e.faithful { "yes" } else { "no" }
            );
        }
    }
}

/// The metric and each peer's announced values per epoch.
fn trajectory(o: &mut String, report: &Report, bold: &dyn Fn(&str) -> String) {
    if let Some(metric) = &report.metric {
        let _ = writeln!(o, "\n{}", bold(&format!("trajectory ({} per epoch, values announced)", metric.name)));
        let names: Vec<&str> = report.peers.iter().map(|p| p.name.as_str()).collect();
        let mut header = format!("  {:>5}  {:>12}", "epoch", metric.name);
        for name in &names {
            header.push_str(&format!("  {name:>12}"));
        }
        let _ = writeln!(o, "{header}");
        let _ = writeln!(o, "  {:>5}  {:>12}", "start", num(metric.initial));
        let points = &report.trajectory;
        let shown: Vec<usize> = if points.len() > 14 {
            (0..6).chain(points.len() - 6..points.len()).collect()
        } else {
            (0..points.len()).collect()
        };
        let mut last = None;
        for i in shown {
            if last.is_some_and(|l: usize| i > l + 1) {
                let _ = writeln!(o, "  {:>5}", "…");
            }
            last = Some(i);
            let p = &points[i];
            let mut line = format!("  {:>5}  {:>12}", p.epoch, opt(p.metric));
            for name in &names {
                line.push_str(&format!("  {:>12}", opt(p.values.get(*name).copied())));
            }
            let _ = writeln!(o, "{line}");
        }
        let direction = match metric.direction {
            git_mas::engines::MetricDirection::LowerIsBetter => "lower is better",
            git_mas::engines::MetricDirection::HigherIsBetter => "higher is better",
        };
        let _ = writeln!(
            o,
            "\nfinal {} {} ({direction}; start {}, best {}) after {} epochs",
            metric.name,
            bold(&num(metric.final_value)),
            num(metric.initial),
            opt(metric.best),
            report.epochs
        );
    }
}

/// A number for people: plain when moderate, scientific when tiny or huge.
fn num(x: f64) -> String {
    if x == 0.0 {
        return "0".to_owned();
    }
    if !x.is_finite() {
        return x.to_string();
    }
    let a = x.abs();
    if (1e-3..1e6).contains(&a) {
        let s = format!("{x:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_owned()
    } else {
        format!("{x:.3e}")
    }
}

fn opt(x: Option<f64>) -> String {
    x.map_or("-".to_owned(), num)
}

fn ms(ms: u64) -> String {
    humantime::format_duration(std::time::Duration::from_millis(ms / 100 * 100)).to_string()
}

/// An aggregate run's slices, one line each: the agent, where it stands, its endorsers, its top
/// target.
fn slice_lines(r: &ConvergenceReport, o: &mut String) {
    if r.slices.is_empty() {
        return;
    }
    let _ = writeln!(o, "slices:");
    for s in &r.slices {
        let endorsed =
            if s.endorsers.is_empty() { String::new() } else { format!(", endorsed by {}", s.endorsers.join(", ")) };
        let conflicted = if s.conflicted { ", in a conflict" } else { "" };
        let top = s.targets.first().map(String::as_str).unwrap_or("-");
        let more = s.targets.len().saturating_sub(1);
        let more = if more > 0 { format!(" (+{more})") } else { String::new() };
        let _ = writeln!(o, "  {:<12} {:<15} {top}{more}{endorsed}{conflicted}", s.agent, s.status.name());
    }
    for r in &r.reviewers {
        let endorsed = if r.endorsed.is_empty() {
            "endorsed none".to_owned()
        } else {
            format!("endorsed {}", r.endorsed.join(", "))
        };
        let _ = writeln!(o, "  {:<12} {:<15} {endorsed} ({})", r.agent, "reviewer", r.why);
    }
}

/// What each proposal changed against the base, one line each (in an aggregate run with what
/// lies outside its slice), then the gate's slice refusals.
fn change_lines(r: &ConvergenceReport, o: &mut String) {
    if !r.changes.is_empty() {
        let _ = writeln!(o, "changed:");
    }
    for c in &r.changes {
        let paths = if c.paths.is_empty() { "nothing".to_owned() } else { c.paths.join(", ") };
        let _ = writeln!(o, "  {:<12} {paths}", c.agent);
        if c.outside_slice.is_empty() {
            continue;
        }
        let outside: Vec<String> = c
            .outside_slice
            .iter()
            .map(|x| match &x.slice_of {
                Some(owner) => format!("{} ({owner}'s slice)", x.path),
                None => format!("{} (no slice)", x.path),
            })
            .collect();
        let what = if c.slice_untouched { "changed only files outside its slice" } else { "outside its slice" };
        let _ = writeln!(o, "  {:<12} {what}: {}", "", outside.join(", "));
    }
    if !r.slice_refusals.is_empty() {
        let _ = writeln!(o, "slice refusals:");
    }
    for f in &r.slice_refusals {
        let times = if f.times == 1 { "once".to_owned() } else { format!("{} times", f.times) };
        let _ =
            writeln!(o, "  the gate refused {} an edit of {}, in {}'s slice ({times})", f.agent, f.file, f.slice_of);
    }
}

/// How a report's run ended, in one name ([`convergence::Ending`]), with the seed's status and
/// reason: `max-rounds-reached (failed, max_rounds_reached)`; a report stored before the ending
/// was kept shows its status and reason alone.
pub fn headline(r: &ConvergenceReport) -> String {
    let seed = match r.termination_reason {
        Some(t) => format!("{}, {}", r.status.name(), t.name()),
        None => r.status.name().to_owned(),
    };
    match r.ending {
        Some(ending) => format!("{ending} ({seed})"),
        None => seed,
    }
}

/// A person's summary of a report.
pub fn dev_summary(r: &ConvergenceReport) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "run {}: {}", r.run, headline(r));
    if !r.winners.is_empty() {
        let label = if r.status == convergence::Status::Converged { "landed" } else { "leading" };
        let _ = writeln!(o, "{label}:      {}", r.winners.join(", "));
    }
    slice_lines(r, &mut o);
    change_lines(r, &mut o);
    if let Some(n) = r.still_failing {
        let _ =
            writeln!(o, "partial:     {n} test(s) still fail on what landed (it fixed failing tests and broke none)");
    }
    if let Some(passed) = r.merged_check_passed {
        let _ = writeln!(
            o,
            "merged:      the check {} on the merged tree that landed",
            if passed { "passed" } else { "failed" }
        );
    }
    let _ = match r.consensus_score {
        Some(score) => writeln!(
            o,
            "consensus:   {score:.1} ({} of {} proposals in no conflict)",
            r.proposals - r.implicated,
            r.proposals
        ),
        None => writeln!(o, "consensus:   unknown (no proposals)"),
    };
    let q = &r.quality_state;
    let _ = match (q.pass_rate, q.reached) {
        (Some(rate), Some(reached)) => writeln!(
            o,
            "quality:     {}/{} checks passed ({:.0}%, threshold {:.0}%) on {} — {}",
            q.passed,
            q.total,
            rate * 100.0,
            q.threshold * 100.0,
            q.basis,
            if reached { "reached" } else { "not reached" }
        ),
        _ => writeln!(o, "quality:     unknown — no check ran ({})", q.basis),
    };
    let b = &r.budget_state;
    let _ = match (b.limit_ms, b.exhausted) {
        (Some(limit), Some(out)) => {
            writeln!(o, "budget:      {} of {}{}", ms(b.used_ms), ms(limit), if out { " — exhausted" } else { "" })
        }
        _ => writeln!(o, "budget:      none set ({} used)", ms(b.used_ms)),
    };
    let rounds = &r.rounds_state;
    let _ = match rounds.max {
        Some(max) => writeln!(
            o,
            "rounds:      {} of {max}{}",
            rounds.used,
            if rounds.reached == Some(true) { " — limit reached" } else { "" }
        ),
        None => writeln!(o, "rounds:      {} (no limit)", rounds.used),
    };
    if r.conflicts.is_empty() {
        let _ = writeln!(o, "conflicts:   none");
    } else {
        let _ = writeln!(o, "conflicts:");
        for c in &r.conflicts {
            let _ = writeln!(
                o,
                "  [{}] {}: {}\n      {}",
                if c.resolved { "resolved" } else { "open" },
                c.kind.name(),
                c.detail,
                c.resolution
            );
        }
    }
    for risk in &r.unresolved_risks {
        let _ = writeln!(o, "risk:        {risk}");
    }
    o
}

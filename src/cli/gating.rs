//! The gate as the commands that run it need it (`gate`, `hook`, `check`): the mode read from
//! git config, the gate's inputs resolved from the command line or the index, a verdict rendered
//! for people with its exit code, and a replayed range.

use super::context::Context;
use super::error::CliError;
use super::exit;
use git_mas::attention::edit_hook::{self, Answer, Payload};
use git_mas::attention::focus_store::now_secs;
use git_mas::attention::gate::{Touched, Verdict};
use git_mas::attention::gate_io::{self, GateOutcome, Ungathered};
use git_mas::attention::hooks::{Mode, mode_of};
use git_mas::attention::replay::{self, CheckReport, CheckStatus, NO_RECEIPT, ReplayError};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

/// Reads `mas.gate`; an unknown value enforces (fail closed), with a warning.
pub fn mode(ctx: &Context) -> Result<Mode, CliError> {
    let setting = mode_of(ctx.store()?.config_string("mas.gate").as_deref());
    if let Some(other) = &setting.unknown {
        ctx.warn(&format!("unknown mas.gate value {other:?}; enforcing"));
    }
    Ok(setting.mode)
}

/// Runs the gate on the staged change (or `paths`) and returns the caller and the outcome, or why
/// the outcome could not be gathered (the verdict then fails closed: [`gate_io::verdict_of`]).
pub fn evaluate(ctx: &Context, paths: &[PathBuf]) -> Result<(String, Result<GateOutcome, Ungathered>), CliError> {
    let caller = match ctx.caller_name() {
        Ok((name, _)) => name,
        Err(_) => return Ok((String::new(), Err(Ungathered::no_identity("change")))),
    };
    let cwd = ctx.cwd()?;
    let store = ctx.store()?;
    let workdir = store.workdir()?.to_path_buf();
    let (paths, diff_args): (Vec<String>, Vec<&str>) = if paths.is_empty() {
        // In-process (index against HEAD through the cache-tree); git answers what that leaves open.
        let staged = git_mas::attention::staged::staged_paths(store.repo())
            .map_or_else(|| git_mas::attention::touched::staged_paths(&workdir), Ok);
        match staged {
            Ok(p) => (p, vec!["diff", "--cached"]),
            Err(e) => return Ok((caller, Err(Ungathered::other(e)))),
        }
    } else {
        (repo_relative(paths, &cwd, &workdir)?, vec![])
    };
    let outcome = gate_io::evaluate(store, &workdir, &caller, paths, &diff_args, now_secs()).map_err(Ungathered::from);
    Ok((caller, outcome))
}

/// The gate's answer to an edit a host's hook payload describes: a tool writing nothing, a
/// repository without a roster and `mas.gate=off` allow at once; files outside the repository are
/// not gated (allowed with a note); the rest is the commit gate's decision on the files the call
/// writes, with the changed lines where the payload says which.
pub fn edit_answer(ctx: &Context, payload: &Payload) -> Result<Answer, CliError> {
    if payload.writes.is_empty() {
        return Ok(Answer::Allow { note: None });
    }
    let store = ctx.store()?;
    if store.roster()?.entries().next().is_none() {
        return Ok(Answer::Allow { note: None });
    }
    let mode = mode(ctx)?;
    if mode == Mode::Off {
        return Ok(Answer::Allow { note: None });
    }
    let workdir = store.workdir()?.to_path_buf();
    let root = std::fs::canonicalize(&workdir).unwrap_or(workdir.clone());
    let cwd = ctx.cwd()?;
    let base = payload.cwd.as_deref().map_or(cwd.clone(), |c| cwd.join(c));
    let mut touched: Vec<Touched> = Vec::new();
    let mut notes = Vec::new();
    for w in &payload.writes {
        let Some(rel) = in_repo(&base.join(&w.path), &root) else {
            notes.push(format!("{} is outside the repository, so it is not gated", w.path));
            continue;
        };
        let current = std::fs::read_to_string(root.join(&rel)).ok();
        let lines = edit_hook::changed_lines(&w.change, current.as_deref());
        match touched.iter_mut().find(|t| t.path == rel) {
            Some(t) => {
                t.lines = t.lines.take().zip(lines).map(|(mut a, b)| {
                    a.extend(b);
                    a
                })
            }
            None => touched.push(Touched { path: rel, lines }),
        }
    }
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    if touched.is_empty() {
        return Ok(Answer::Allow { note });
    }
    let verdict = match ctx.caller_name() {
        Ok((caller, _)) => {
            let outcome = gate_io::evaluate_touched(store, &caller, touched, now_secs()).map_err(Ungathered::from);
            gate_io::verdict_of(&outcome)
        }
        Err(_) => gate_io::verdict_of(&Err(Ungathered::no_identity("edit"))),
    };
    Ok(match (edit_hook::answer(&verdict, mode), note) {
        (Answer::Allow { note: a }, Some(b)) => {
            Answer::Allow { note: Some(a.map_or(b.clone(), |a| format!("{a}; {b}"))) }
        }
        (answer, _) => answer,
    })
}

/// `abs` relative to the working tree `root` (canonical), through symlinks: the nearest existing
/// ancestor is canonicalized and the rest appended. `None` outside the tree (or the top itself).
fn in_repo(abs: &Path, root: &Path) -> Option<String> {
    let mut lexical = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let mut rest = Vec::new();
    let mut at = lexical.as_path();
    let real = loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            break rest.iter().rev().fold(real, |p: PathBuf, c| p.join(c));
        }
        rest.push(at.file_name()?.to_os_string());
        at = at.parent()?;
    };
    let rel = real.strip_prefix(root).ok()?;
    let rel = rel.to_string_lossy().replace('\\', "/");
    (!rel.is_empty()).then_some(rel)
}

/// `paths` (relative to `cwd` or absolute) relative to the top of the working tree.
fn repo_relative(paths: &[PathBuf], cwd: &Path, workdir: &Path) -> Result<Vec<String>, CliError> {
    let root = std::fs::canonicalize(workdir).unwrap_or(workdir.to_path_buf());
    let mut rel = Vec::new();
    for p in paths {
        let abs = normalize(&if p.is_absolute() { p.clone() } else { cwd.join(p) });
        match abs.strip_prefix(&root).or_else(|_| abs.strip_prefix(workdir)) {
            Ok(r) => rel.push(r.to_string_lossy().replace('\\', "/")),
            Err(_) => return Err(CliError::user(format!("{} is outside the repository", p.display()))),
        }
    }
    Ok(rel)
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    std::fs::canonicalize(&out).unwrap_or(out)
}

/// The exit status a verdict gives.
pub fn exit_code(verdict: &Verdict) -> u8 {
    match verdict {
        Verdict::Allow { .. } => exit::OK,
        Verdict::Block { .. } => exit::BLOCKED,
        Verdict::FailClosed { .. } => exit::FAIL_CLOSED,
    }
}

/// Prints a verdict for people (stderr) and returns its exit code.
pub fn report(ctx: &Context, caller: &str, verdict: &Verdict) -> u8 {
    let mut o = String::new();
    match verdict {
        Verdict::Allow { frame, notes } => {
            let _ = writeln!(o, "git mas gate: allowed for {caller} on frame {}", &frame[..frame.len().min(12)]);
            for n in notes {
                let _ = writeln!(o, "  note: {n}");
            }
        }
        Verdict::Block { blocks } => {
            for b in blocks {
                let blocked = ctx.paint("git mas gate: blocked:", "1;31");
                let _ = writeln!(o, "{blocked} {} is held by {} ({})", b.target, b.holder, b.why);
                let _ = writeln!(o, "  {} {}", ctx.paint("remedy:", "1;36"), b.remedy);
            }
        }
        Verdict::FailClosed { reason, remedy } => {
            let _ = writeln!(o, "{} {reason}", ctx.paint("git mas gate: refused (failing closed):", "1;31"));
            let _ = writeln!(o, "  {} {remedy}", ctx.paint("remedy:", "1;36"));
        }
    }
    ctx.ui().err_text(&o);
    exit_code(verdict)
}

/// Replays the gate over `range` ([`replay::replay`]).
pub fn replay(ctx: &Context, range: &[String], require_receipts: bool) -> Result<CheckReport, CliError> {
    replay::replay(ctx.store()?, range, require_receipts).map_err(|e| match e {
        ReplayError::Store(s) => CliError::from(s),
        e @ ReplayError::Range { .. } => CliError::user(e.to_string()),
        e @ (ReplayError::Spawn { .. } | ReplayError::Commit { .. } | ReplayError::Touched(_)) => {
            CliError::internal(e.to_string())
        }
    })
}

/// Prints the listed commits for people: each on stdout, its verdict on stderr.
pub fn print_listed(ctx: &Context, report: &CheckReport) -> Result<(), CliError> {
    for c in report.listed() {
        ctx.ui().line(&format!("{} {:<10} {}", &c.commit[..12], c.status.as_str(), c.subject))?;
        if c.status != CheckStatus::NoReceipt {
            self::report(ctx, c.agent.as_deref().unwrap_or(NO_RECEIPT), &c.verdict);
        }
    }
    Ok(())
}

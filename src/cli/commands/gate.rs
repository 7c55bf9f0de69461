//! `git mas gate`: may the calling agent commit this change?

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::exit;
use crate::cli::output::print_json;
use git_mas::attention::focus_store::now_secs;
use git_mas::attention::gate::Verdict;
use git_mas::attention::gate_io::{self, GateOutcome};
use std::path::PathBuf;
use std::process::ExitCode;

/// Decide whether the calling agent may commit a change, against every other live focus.
///
/// Blocks (exit 6) when another agent holds a target the change touches — as the Serialize holder
/// of a top target you share, or as its own top target — naming the holder, the target and what to
/// do. Fails closed (exit 7) when you have no live focus, when your focus is on an old frame, when
/// another agent's focus on an old frame names a touched target, and when the board cannot be read.
/// Allows (exit 0) otherwise. A held symbol (path#symbol) protects only its lines.
///
/// `git config mas.gate off|warn|enforce` decides what the hooks do with the verdict (default off:
/// the gate is opt-in per repository; `git mas hooks install` turns it to enforce). This command
/// always reports the verdict.
#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// Check the staged changes (the default).
    #[arg(long, conflicts_with = "paths")]
    pub staged: bool,
    /// Check these paths instead (whole files).
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The gate's mode from `mas.gate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The hooks do nothing.
    Off,
    /// The hooks report but never stop a commit.
    Warn,
    /// The hooks stop blocked and failed-closed commits.
    Enforce,
}

/// Reads `mas.gate`; an unknown value is treated as enforce (fail closed) with a warning.
pub fn mode(ctx: &mut Context) -> Result<Mode, CliError> {
    let value = ctx.store()?.config_string("mas.gate").unwrap_or_default();
    Ok(match value.trim().to_ascii_lowercase().as_str() {
        "" | "off" | "false" => Mode::Off,
        "warn" => Mode::Warn,
        "enforce" | "on" | "true" => Mode::Enforce,
        other => {
            ctx.warn(&format!("unknown mas.gate value {other:?}; enforcing"));
            Mode::Enforce
        }
    })
}

/// Runs the gate on the staged change (or `paths`) and returns the outcome, or a fail-closed
/// verdict when something could not be read.
pub fn evaluate(ctx: &mut Context, paths: &[PathBuf]) -> Result<(String, Result<GateOutcome, String>), CliError> {
    let caller = match ctx.caller_name() {
        Ok((name, _)) => name,
        Err(_) => {
            return Ok((String::new(), Err("no agent identity: the gate cannot tell whose change this is".into())));
        }
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
            Err(e) => return Ok((caller, Err(e.to_string()))),
        }
    } else {
        let root = std::fs::canonicalize(&workdir).unwrap_or(workdir.clone());
        let mut rel = Vec::new();
        for p in paths {
            let abs = if p.is_absolute() { p.clone() } else { cwd.join(p) };
            let abs = normalize(&abs);
            match abs.strip_prefix(&root).or_else(|_| abs.strip_prefix(&workdir)) {
                Ok(r) => rel.push(r.to_string_lossy().replace('\\', "/")),
                Err(_) => return Err(CliError::user(format!("{} is outside the repository", p.display()))),
            }
        }
        (rel, vec![])
    };
    let outcome = gate_io::evaluate(store, &workdir, &caller, paths, &diff_args, now_secs()).map_err(|e| e.to_string());
    Ok((caller, outcome))
}

fn normalize(p: &std::path::Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    std::fs::canonicalize(&out).unwrap_or(out)
}

/// Prints a verdict for people (stderr) and returns its exit code.
pub fn report(ctx: &Context, caller: &str, verdict: &Verdict) -> u8 {
    match verdict {
        Verdict::Allow { frame, notes } => {
            ctx.status(&format!("git mas gate: allowed for {caller} on frame {}", &frame[..frame.len().min(12)]));
            for n in notes {
                ctx.status(&format!("  note: {n}"));
            }
            exit::OK
        }
        Verdict::Block { blocks } => {
            for b in blocks {
                eprintln!(
                    "{} {} is held by {} ({})",
                    ctx.paint("git mas gate: blocked:", "1;31"),
                    b.target,
                    b.holder,
                    b.why
                );
                eprintln!("  {} {}", ctx.paint("remedy:", "1;36"), b.remedy);
            }
            exit::BLOCKED
        }
        Verdict::FailClosed { reason, remedy } => {
            eprintln!("{} {reason}", ctx.paint("git mas gate: refused (failing closed):", "1;31"));
            eprintln!("  {} {remedy}", ctx.paint("remedy:", "1;36"));
            exit::FAIL_CLOSED
        }
    }
}

/// Turns a gathering failure into a fail-closed verdict.
pub fn verdict_of(outcome: &Result<GateOutcome, String>) -> Verdict {
    match outcome {
        Ok(o) => o.verdict.clone(),
        Err(reason) => Verdict::FailClosed {
            reason: reason.clone(),
            remedy: "fix the problem above (identity: --agent, GIT_MAS_AGENT or `git config mas.agent`), then retry"
                .into(),
        },
    }
}

/// Runs `gate`.
pub fn run(ctx: &mut Context, args: GateArgs) -> Result<ExitCode, CliError> {
    let _ = args.staged;
    let (caller, outcome) = evaluate(ctx, &args.paths)?;
    let verdict = verdict_of(&outcome);
    if mode(ctx)? == Mode::Off && !args.json {
        ctx.status("note: mas.gate is off here, so the hooks ignore this verdict");
    }
    let code = report(ctx, &caller, &verdict);
    if args.json {
        let touched: Vec<_> = outcome
            .as_ref()
            .map(|o| o.touched.iter().map(|t| serde_json::json!({"path": t.path, "lines": t.lines})).collect())
            .unwrap_or_default();
        print_json(&serde_json::json!({"agent": caller, "verdict": verdict, "touched": touched}))?;
    }
    Ok(ExitCode::from(code))
}

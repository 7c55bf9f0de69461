//! `git mas converge`: ASSEMBLY then CONVERGE with a team of peers, recorded under
//! `refs/mas/runs/<run>/`.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::output::JsonFlag;
use crate::cli::reports::converge_report;
use crate::cli::team::{MAX_GOAL_BYTES, check_writable, execute, millis, write_file};
use git_mas::coordinate::scalar::record::new_run_id;
use git_mas::coordinate::scalar::{self, ConvergeDef, Limits, default_goal, plot};
use git_mas::peers::parse_agents;
use git_mas::runtime::PatternKind;
use std::path::PathBuf;

/// Run ASSEMBLY, then CONVERGE, with a team of peers, and record the run.
///
/// ASSEMBLY always runs first: each peer, in ring order, is asked once to model the problem and end
/// its reply with `CLASS <name>` and `UPDATE <rule>`. The class is inferred from what the peers
/// wrote (a CLASS line wins; --pattern only seeds it) and each rule is scored against the class's
/// reference rule. CONVERGE starts only on preference, cascade or resource with a usable rule from
/// every peer: each epoch, every peer is shown its own rule and its named quantities (never a
/// suggested value) and replies `ANNOUNCE value=<number> agent=<name> epoch=<k>` and
/// `VOTE CONTINUE|STOP`; the engine applies what was announced when the epoch is full. A reply
/// that cannot be used is asked once more with the reason, then the run halts.
///
/// Halts: majority-stop, plateau, no-solution, paper-horizon and unmapped (ASSEMBLY named a class
/// git-mas has no engine for: a modelling outcome) exit 0; missing-update-rule,
/// unreadable-announcement and budget-exhausted exit 8.
///
/// Peers (--agents, comma-separated or repeated, in ring order): `cmd:<command line>` runs the
/// command with `sh -c` for every hop, the prompt on its stdin, the reply read from its stdout;
/// `builtin:reference`, `builtin:greedy` and `builtin:faulty` are git-mas's own peers; a
/// coding-agent preset (claude-code, codex, copilot, gemini, cursor, goose, opencode) runs its command
/// template (see `git mas coordinate --help`). `NAME=<spec>`
/// names a peer (default `<kind>-<position>`). A comma splits the list only where another spec
/// starts, so command lines may contain commas.
///
/// The run is recorded under refs/mas/runs/<run>/ (its definition in `meta`, every hop, the halt
/// and the report in `events/<you>`), signed with your key: `git mas report <run>` renders it
/// again, and `git mas log <you>` lists it. Needs an agent identity.
///
/// With --json: one JSON line per event (`hop`, `epoch`, `halt`, …), the last one the report.
#[derive(Debug, clap::Args)]
pub struct ConvergeArgs {
    /// The class to seed ASSEMBLY with: preference, cascade, resource, or unmapped (the peers name it).
    #[arg(long, value_name = "CLASS", value_parser = parse_pattern)]
    pub pattern: PatternKind,
    /// The peers, in ring order: cmd:<command line>, builtin:reference|greedy|faulty, optionally NAME=<spec>.
    #[arg(long, required = true, value_name = "SPEC,…")]
    pub agents: Vec<String>,
    /// The team's goal (default: the seeded class's problem in words, without its answer).
    #[arg(long, value_name = "TEXT")]
    pub goal: Option<String>,
    /// The most CONVERGE epochs (the class's own horizon may be shorter).
    #[arg(long, value_name = "N", default_value_t = scalar::DEFAULT_MAX_ROUNDS,
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub max_rounds: u64,
    /// How long a peer has for one hop (e.g. 30s, 2m); a peer still running then is killed.
    #[arg(long, value_name = "DURATION", default_value = "2m")]
    pub hop_timeout: humantime::Duration,
    /// How long the whole run has; when it runs out the run halts budget-exhausted.
    #[arg(long, value_name = "DURATION", default_value = "30m")]
    pub budget: humantime::Duration,
    /// Also write the report, as JSON, to FILE.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Draw the metric and each peer's announced values per epoch as an SVG in FILE.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub output: JsonFlag,
}

fn parse_pattern(value: &str) -> Result<PatternKind, String> {
    match PatternKind::parse_flag(value) {
        Ok(PatternKind::Development) => {
            Err("development converges on code artifacts, not announced values; expected one of: preference, cascade, \
             resource, unmapped"
                .to_owned())
        }
        Ok(pattern) => Ok(pattern),
        Err(_) => Err(format!("unknown pattern {value:?}; expected one of: preference, cascade, resource, unmapped")),
    }
}

/// Runs `converge`.
pub fn run(ctx: &mut Context, args: ConvergeArgs) -> Result<Outcome, CliError> {
    let peers = parse_agents(&args.agents).map_err(|e| {
        CliError::with_message(Kind::Usage, "--agents is not a list of peer specs", e)
            .hinted("peers are cmd:<command line> or builtin:reference|greedy|faulty, e.g. --agents builtin:reference,builtin:faulty")
    })?;
    let goal = args.goal.clone().unwrap_or_else(|| default_goal(args.pattern).to_owned());
    if goal.trim().is_empty() || goal.len() > MAX_GOAL_BYTES {
        return Err(CliError::usage(format!("--goal must be between 1 and {MAX_GOAL_BYTES} bytes")));
    }
    if let Some(path) = &args.report {
        check_writable(path, "--report")?;
    }
    if let Some(path) = &args.plot {
        check_writable(path, "--plot")?;
    }
    let limits = Limits {
        max_rounds: args.max_rounds,
        hop_timeout_ms: millis(*args.hop_timeout)?,
        budget_ms: millis(*args.budget)?,
    };
    let caller = ctx.caller()?;
    let meta = ConvergeDef {
        run: new_run_id(std::time::SystemTime::now()),
        goal,
        pattern: args.pattern,
        peers,
        driver: caller.name.clone(),
        limits,
        split: Vec::new(),
    };
    let (report, _) = execute(ctx, &meta, args.output.json)?;

    if let Some(path) = &args.report {
        let json = serde_json::to_vec_pretty(&report).map_err(|e| CliError::new(Kind::Internal, e))?;
        write_file(path, &json, "--report")?;
    }
    if let Some(path) = &args.plot {
        let svg = plot::render_svg(&report).map_err(|e| CliError::new(Kind::Internal, e))?;
        write_file(path, svg.as_bytes(), "--plot")?;
    }
    if !args.output.json {
        ctx.ui().out(&converge_report(&report, &|s| ctx.paint(s, "1")))?;
    }
    Ok(if report.incomplete() { Outcome::RunIncomplete } else { Outcome::Ok })
}

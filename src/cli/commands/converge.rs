//! `git mas converge`: ASSEMBLY then CONVERGE with a team of peers, recorded under
//! `refs/mas/runs/<run>/`.

use crate::cli::commands::report::{print_report, record_error, write_file};
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::exit;
use crate::cli::output::print_json;
use git_mas::converge_driver::record::{RunRecorder, new_run_id};
use git_mas::converge_driver::{self, Limits, RunEvent, RunMeta, SinkError, default_goal, plot};
use git_mas::peers::{PeerEntry, ProcessPeer, kill_live_peers, parse_agents};
use git_mas::runtime::PatternKind;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The longest goal accepted, in bytes.
pub(crate) const MAX_GOAL_BYTES: usize = 4096;

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
/// coding-agent preset (claude-code, codex, goose, opencode, cursor, copilot) runs its command
/// template (see `git mas coordinate --help`). `NAME=<spec>`
/// names a peer (default `<kind>-<position>`). A comma splits the list only where another spec
/// starts, so command lines may contain commas.
///
/// The run is recorded under refs/mas/runs/<run>/ (its definition in `meta`, every hop, the halt
/// and the report in `events/<you>`), signed with your key: `git mas report <run>` renders it
/// again, and `git mas log <you>` lists it. Needs an agent identity.
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
    #[arg(long, value_name = "N", default_value_t = converge_driver::DEFAULT_MAX_ROUNDS,
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
    /// Stream JSON lines (one per hop, epoch and halt), ending with the report.
    #[arg(long)]
    pub json: bool,
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

pub(crate) fn millis(d: std::time::Duration) -> Result<u64, CliError> {
    let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    if ms == 0 {
        return Err(CliError::usage("a duration must be at least 1ms"));
    }
    Ok(ms)
}

pub(crate) fn check_writable(path: &Path, flag: &str) -> Result<(), CliError> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(CliError::user(format!("{flag} {}: {} is not a directory", path.display(), parent.display())));
    }
    if path.is_dir() {
        return Err(CliError::user(format!("{flag} {} is a directory", path.display())));
    }
    Ok(())
}

fn progress(ctx: &Context, event: &RunEvent) {
    match event {
        RunEvent::Hop(hop) => {
            if let Some(failure) = &hop.failure {
                ctx.warn(&format!("{} (attempt {}): {failure}", hop.peer, hop.attempt));
            }
        }
        RunEvent::Epoch(epoch) => {
            let metric = epoch.metric.map_or("-".to_owned(), |m| format!("{m:.6e}"));
            ctx.status(&format!("epoch {:>3}  metric {metric}", epoch.epoch));
        }
        RunEvent::Halt(halt) => ctx.status(&format!("halt {}: {}", halt.halt, halt.detail)),
        _ => {}
    }
}

/// Installs the Ctrl-C handler once per process: every live peer process group is killed, and
/// the command exits 130. Every ref write is one compare-and-swap transaction, so an interrupted
/// run leaves `refs/mas` as of its last completed write.
pub(crate) fn install_interrupt_handler() -> Result<(), CliError> {
    static INSTALLED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            ctrlc::set_handler(|| {
                kill_live_peers();
                std::process::exit(130);
            })
            .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| CliError::internal(format!("cannot install the Ctrl-C handler: {e}")))
}

/// A team of process peers for `peers`, each hop run in `dir`; presets take their command line
/// from git config when it overrides theirs, else their template for a run whose check is
/// `check` (see `git_mas::peers::preset`).
pub(crate) fn team(
    ctx: &Context,
    peers: Vec<PeerEntry>,
    dir: &Path,
    check: Option<&str>,
) -> Result<Vec<ProcessPeer>, CliError> {
    let store = ctx.store()?;
    let exe = std::env::current_exe()
        .map_err(|e| CliError::internal(format!("cannot find the running git-mas executable: {e}")))?;
    Ok(peers
        .into_iter()
        .map(|p| ProcessPeer::configured(p, &exe, Some(dir.to_path_buf()), check, |key| store.config_string(key)).0)
        .collect())
}

/// The single-threaded async runtime a driver runs its peers' processes on.
pub(crate) fn async_runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::internal(format!("cannot start the async runtime: {e}")))
}

/// `--json` output of a driver: one JSON line per event; a closed stdout stops the printing, not
/// the run.
pub(crate) struct JsonLines {
    open: bool,
}

impl JsonLines {
    pub(crate) fn new() -> JsonLines {
        JsonLines { open: true }
    }

    pub(crate) fn print<T: serde::Serialize>(&mut self, event: &T) -> Result<(), SinkError> {
        if self.open {
            match print_json(event) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => self.open = false,
                Err(e) => return Err(Box::new(e)),
            }
        }
        Ok(())
    }
}

/// An error and its sources, joined with `: `.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        message.push_str(&format!(": {s}"));
        source = s.source();
    }
    message
}

/// Records and drives one ASSEMBLY → CONVERGE run, streaming its events (`--json`) or its
/// progress, and returns the report. `git mas coordinate` runs scalar classes through here too.
pub(crate) fn execute(
    ctx: &mut Context,
    meta: &RunMeta,
    json: bool,
) -> Result<git_mas::converge_driver::Report, CliError> {
    let caller = ctx.caller()?;
    let dir = ctx.cwd()?;
    let mut team = team(ctx, meta.peers.clone(), &dir, None)?;
    let store = ctx.store()?;
    let mut recorder = RunRecorder::start(store, &caller.key, meta).map_err(record_error)?;
    ctx.status(&format!("run {}: recording under refs/mas/runs/{}/", meta.run, meta.run));
    install_interrupt_handler()?;
    let runtime = async_runtime()?;

    let ctx_ref = &*ctx;
    let show_progress = !json && std::io::stderr().is_terminal();
    let mut lines = JsonLines::new();
    let mut sink = |event: &RunEvent| -> Result<(), SinkError> {
        recorder.record(event)?;
        if json {
            lines.print(event)?;
        } else if show_progress {
            progress(ctx_ref, event);
        }
        Ok(())
    };
    let result = runtime.block_on(converge_driver::run(meta, &mut team, &mut sink));
    result.map_err(|e| {
        CliError::internal(error_chain(&e)).hinted(format!(
            "what was recorded so far is under refs/mas/runs/{}/ (`git mas report {}`)",
            meta.run, meta.run
        ))
    })
}

/// Runs `converge`.
pub fn run(ctx: &mut Context, args: ConvergeArgs) -> Result<ExitCode, CliError> {
    let peers = parse_agents(&args.agents).map_err(|e| {
        CliError::usage(format!("--agents: {e}"))
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
    let meta = RunMeta {
        run: new_run_id(std::time::SystemTime::now()),
        goal,
        pattern: args.pattern,
        peers,
        driver: caller.name.clone(),
        limits,
    };
    let report = execute(ctx, &meta, args.json)?;

    if let Some(path) = &args.report {
        let json = serde_json::to_vec_pretty(&report).map_err(|e| CliError::internal(e.to_string()))?;
        write_file(path, &json, "--report")?;
    }
    if let Some(path) = &args.plot {
        let svg = plot::render_svg(&report).map_err(|e| CliError::internal(e.to_string()))?;
        write_file(path, svg.as_bytes(), "--plot")?;
    }
    if !args.json {
        print_report(ctx, &report)?;
    }
    Ok(ExitCode::from(if report.incomplete() { exit::RUN_INCOMPLETE } else { exit::OK }))
}

//! Command-line front end. Each subcommand lives in `commands/<name>.rs` with its own clap-derive
//! `Args` (whose doc comments are the help text) and a `run` function; [`dispatch`] is the one place
//! that maps subcommands to them.

pub mod commands;
pub mod context;
pub mod error;
pub mod focus_board;
pub mod gating;
pub mod inputs;
pub mod json;
mod json_output;
pub mod mcp_stdio;
pub mod output;
pub mod render;
pub mod reports;
pub mod runs;
pub mod team;

use clap::{CommandFactory, Parser, Subcommand};
use context::Context;
use error::CliError;
use std::process::ExitCode;

/// Exit codes that scripts can rely on.
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// The command was refused or failed because of its input or the repository's state; nothing
    /// was changed.
    pub const USER: u8 = 1;
    /// The command line itself was wrong.
    pub const USAGE: u8 = 2;
    /// An internal or git failure.
    pub const INTERNAL: u8 = 3;
    /// Something read did not verify: a record (parked, spoofed, replayed, unknown, malformed) or a
    /// frame that does not reproduce from its stored inputs.
    pub const UNVERIFIED: u8 = 4;
    /// `sync` finished, but some refs were rejected or have diverged and were left as they were.
    pub const SYNC_INCOMPLETE: u8 = 5;
    /// The gate blocks: another agent holds a target the change touches.
    pub const BLOCKED: u8 = 6;
    /// The gate fails closed: it cannot decide safely (no focus, an old frame, an unreadable board).
    pub const FAIL_CLOSED: u8 = 7;
    /// A converge run halted without a result of the protocol: a peer gave no usable rule
    /// (missing-update-rule) or no readable announcement (unreadable-announcement), or the time
    /// budget ran out (budget-exhausted).
    pub const RUN_INCOMPLETE: u8 = 8;
    /// A check failed: `endorse` recorded a failed endorsement (a test failure).
    pub const CHECK_FAILED: u8 = 9;
    /// Standard output was closed before everything was written (`git mas log | head -1`): the
    /// command stopped quietly there. As git does: 128 + SIGPIPE.
    pub const BROKEN_PIPE: u8 = 141;
}

const AFTER_HELP: &str = "\
Exit status:
  0  success
  1  refused or failed because of the input or the repository's state; nothing was changed
     (`doctor`: stale files or interrupted operations remain)
  2  usage error
  3  internal or git failure
  4  something read did not verify: a record (`git mas log`, `git mas report`) or a frame
     (`snapshot --verify`)
  5  sync left some refs rejected or diverged
  6  blocked: the gate refuses the change (another agent holds a target it touches), or
     `land` is blocked by a merge conflict or a failing check of the merged tree
  7  the gate fails closed (no live focus on the current frame, unreadable board)
  8  a converge run halted without a result: missing-update-rule, unreadable-announcement or
     budget-exhausted; or `coordinate` ended without a landing
  9  a check failed: `endorse` recorded a failed endorsement
141 standard output was closed early (`git mas log | head -1`); nothing more is printed

The caller is --agent, else $GIT_MAS_AGENT, else `git config mas.agent`.
Private keys live in $GIT_MAS_KEY_DIR, else $XDG_CONFIG_HOME/git-mas/keys, else ~/.config/git-mas/keys.";

/// Coordinate a team of coding agents on one git repository.
///
/// All coordination state is signed records in git refs under refs/mas/: nothing is written to
/// your working tree or to main until the team lands its work.
#[derive(Debug, Parser)]
#[command(name = "git-mas", bin_name = "git mas", version, after_help = AFTER_HELP, propagate_version = true)]
pub struct Cli {
    /// Run as if started in <PATH>.
    #[arg(short = 'C', global = true, value_name = "PATH")]
    pub directory: Option<std::path::PathBuf>,
    /// Act as this agent (else $GIT_MAS_AGENT, else `git config mas.agent`).
    #[arg(long, global = true, env = "GIT_MAS_AGENT", value_name = "NAME")]
    pub agent: Option<String>,
    /// When to color output.
    #[arg(long, global = true, value_enum, default_value_t = output::ColorChoice::Auto)]
    pub color: output::ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    Init(commands::init::InitArgs),
    #[command(subcommand)]
    Agent(commands::agent::AgentCommand),
    Whoami(commands::whoami::WhoamiArgs),
    #[command(subcommand)]
    Record(commands::record::RecordCommand),
    Log(commands::log::LogArgs),
    Sync(commands::sync::SyncArgs),
    Snapshot(commands::snapshot::SnapshotArgs),
    Frame(commands::frame::FrameArgs),
    Watch(commands::watch::WatchArgs),
    #[command(subcommand)]
    Focus(commands::focus::FocusCommand),
    Align(commands::align::AlignArgs),
    Decide(commands::align::DecideArgs),
    Gate(commands::gate::GateArgs),
    #[command(subcommand)]
    Hooks(commands::hooks::HooksCommand),
    Hook(commands::hook::HookArgs),
    Check(commands::check::CheckArgs),
    Converge(commands::converge::ConvergeArgs),
    Coordinate(commands::coordinate::CoordinateArgs),
    Mcp(commands::mcp::McpArgs),
    #[command(hide = true)]
    Peer(commands::peer::PeerArgs),
    #[command(subcommand)]
    Run(commands::run::RunCommand),
    #[command(subcommand)]
    Worktree(commands::worktree::WorktreeCommand),
    Propose(commands::propose::ProposeArgs),
    Endorse(commands::endorse::EndorseArgs),
    Tally(commands::tally::TallyArgs),
    Land(commands::land::LandArgs),
    Report(commands::dev_report::ReportArgs),
    #[command(subcommand)]
    Skills(commands::skills::SkillsCommand),
    Demo(commands::demo::DemoArgs),
    #[command(subcommand)]
    Bench(commands::bench::BenchCommand),
    Doctor(commands::doctor::DoctorArgs),
    Completions(commands::completions::CompletionsArgs),
    InstallMan(commands::install_man::InstallManArgs),
}

impl Cli {
    /// Parses a command line given as words (the first is the program's name); a mistake is a
    /// usage error carrying clap's message.
    pub(crate) fn try_parse_from_words(words: &[String]) -> Result<Cli, CliError> {
        Cli::try_parse_from(words).map_err(|e| {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid arguments").trim_start_matches("error: ").to_string();
            CliError::usage(first)
        })
    }
}

/// The clap command tree (for completions and man pages).
pub fn command() -> clap::Command {
    Cli::command()
}

/// Runs one parsed command (the process's own, or a tool call of `git mas mcp`).
pub(crate) fn dispatch(ctx: &mut Context, command: Command) -> Result<ExitCode, CliError> {
    match command {
        Command::Init(args) => commands::init::run(ctx, args),
        Command::Agent(cmd) => commands::agent::run(ctx, cmd),
        Command::Whoami(args) => commands::whoami::run(ctx, args),
        Command::Record(cmd) => commands::record::run(ctx, cmd),
        Command::Log(args) => commands::log::run(ctx, args),
        Command::Sync(args) => commands::sync::run(ctx, args),
        Command::Snapshot(args) => commands::snapshot::run(ctx, args),
        Command::Frame(args) => commands::frame::run(ctx, args),
        Command::Watch(args) => commands::watch::run(ctx, args),
        Command::Focus(cmd) => commands::focus::run(ctx, cmd),
        Command::Align(args) => commands::align::align(ctx, args),
        Command::Decide(args) => commands::align::decide(ctx, args),
        Command::Gate(args) => commands::gate::run(ctx, args),
        Command::Hooks(cmd) => commands::hooks::run(ctx, cmd),
        Command::Hook(args) => commands::hook::run(ctx, args),
        Command::Check(args) => commands::check::run(ctx, args),
        Command::Converge(args) => commands::converge::run(ctx, args),
        Command::Coordinate(args) => commands::coordinate::run(ctx, args),
        Command::Mcp(args) => commands::mcp::run(ctx, args),
        Command::Peer(args) => commands::peer::run(ctx, args),
        Command::Run(cmd) => commands::run::run(ctx, cmd),
        Command::Worktree(cmd) => {
            sweep_temp_indexes(ctx);
            commands::worktree::run(ctx, cmd)
        }
        Command::Propose(args) => {
            sweep_temp_indexes(ctx);
            commands::propose::run(ctx, args)
        }
        Command::Endorse(args) => commands::endorse::run(ctx, args),
        Command::Tally(args) => commands::tally::run(ctx, args),
        Command::Land(args) => commands::land::run(ctx, args),
        Command::Report(args) => report_any(ctx, args),
        Command::Skills(cmd) => commands::skills::run(ctx, cmd),
        Command::Demo(args) => commands::demo::run(ctx, args),
        Command::Bench(cmd) => commands::bench::run(ctx, cmd),
        Command::Doctor(args) => commands::doctor::run(ctx, args),
        Command::Completions(args) => commands::completions::run(ctx, args),
        Command::InstallMan(args) => commands::install_man::run(ctx, args),
    }
}

/// Before a command that builds a proposal's tree in a temporary index (`propose`, and `worktree`
/// which compares a worktree with its proposal), the temporary indexes that killed processes left
/// in any worktree's git dir are removed (`git_mas::doctor`: only those whose process is gone, or
/// old ones without a process id). Best effort: a repository that cannot be opened is the
/// command's own error to report.
fn sweep_temp_indexes(ctx: &Context) {
    if let Ok(store) = ctx.store() {
        let _ = git_mas::doctor::sweep_repository(store, std::time::SystemTime::now());
    }
}

/// `git mas report`: a development run's convergence report, or a converge run's report, by the
/// class its definition records.
fn report_any(ctx: &mut Context, args: commands::dev_report::ReportArgs) -> Result<ExitCode, CliError> {
    if let Some(run) = &args.run
        && ctx.store().is_ok_and(|store| git_mas::run::is_converge_run(store, run))
    {
        if args.events {
            return Err(CliError::usage("--events applies to development runs; this is a converge run"));
        }
        return commands::report::run(ctx, commands::report::ReportArgs { run: run.clone(), output: args.output });
    }
    commands::dev_report::run(ctx, args)
}

/// Entry point: parse, dispatch, report.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { exit::USAGE } else { exit::OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let mut ctx = Context::new(cli.directory, cli.agent, cli.color);
    match dispatch(&mut ctx, cli.command) {
        Ok(code) => code,
        Err(err) => {
            if err.is_broken_pipe() {
                return ExitCode::from(exit::BROKEN_PIPE);
            }
            err.print(&ctx);
            ExitCode::from(err.exit_code())
        }
    }
}

//! Command-line front end. Each subcommand lives in `commands/<name>.rs` with its own clap-derive
//! `Args` (whose doc comments are the help text) and a `run` function; [`dispatch`] is the one place
//! that maps subcommands to them.

pub mod commands;
pub mod context;
pub mod error;
pub mod focus_board;
pub mod gating;
pub mod hook_host;
pub mod html_report;
pub mod inputs;
pub mod json;
mod json_output;
pub mod mcp_stdio;
pub mod outcome;
pub mod output;
pub mod preflight;
pub mod render;
pub mod reports;
pub mod runs;
pub mod team;

use clap::{CommandFactory, Parser, Subcommand};
use context::Context;
use error::CliError;
pub use outcome::Outcome;
use std::process::ExitCode;

/// What a command's typed function returns: the value its renderer prints (and the MCP server
/// returns), and the outcome the command ends with.
#[derive(Debug)]
pub struct Done<T> {
    /// The command's output.
    pub value: T,
    /// How it ends (its exit code).
    pub outcome: Outcome,
}

impl<T> Done<T> {
    /// A value and a successful outcome.
    pub fn ok(value: T) -> Done<T> {
        Done { value, outcome: Outcome::Ok }
    }

    /// A value and the outcome it ends with.
    pub fn ended(value: T, outcome: Outcome) -> Done<T> {
        Done { value, outcome }
    }
}

/// `--help`'s closing text: the exit status of every [`Outcome`], then where the caller and the
/// keys come from.
fn after_help() -> String {
    let mut text = String::from("Exit status:\n");
    for o in Outcome::ALL {
        let mut line = format!("{:<3}", o.code());
        let mut width = line.len();
        for word in o.meaning().split(' ') {
            if width + 1 + word.len() > 100 {
                line.push_str("\n    ");
                width = 4;
            } else {
                line.push(' ');
                width += 1;
            }
            line.push_str(word);
            width += word.len();
        }
        text.push_str("  ");
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str(
        "\nThe caller is --agent, else $GIT_MAS_AGENT, else `git config mas.agent`.\n\
         Private keys live in $GIT_MAS_KEY_DIR, else $XDG_CONFIG_HOME/git-mas/keys, else ~/.config/git-mas/keys.",
    );
    text
}

/// Coordinate a team of coding agents on one git repository.
///
/// All coordination state is signed records in git refs under refs/mas/: nothing is written to
/// your working tree or to main until the team lands its work.
#[derive(Debug, Parser)]
#[command(name = "git-mas", bin_name = "git mas", version, after_help = after_help(), propagate_version = true)]
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
    Status(commands::status::StatusArgs),
    #[command(subcommand)]
    Record(commands::record::RecordCommand),
    Log(commands::log::LogArgs),
    Sync(commands::sync::SyncArgs),
    Claim(commands::claim::ClaimArgs),
    Release(commands::claim::ReleaseArgs),
    Exchange(commands::exchange::ExchangeArgs),
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
    Report(commands::report::ReportArgs),
    #[command(subcommand)]
    Skills(commands::skills::SkillsCommand),
    Demo(commands::demo::DemoArgs),
    #[command(subcommand)]
    Bench(commands::bench::BenchCommand),
    Doctor(commands::doctor::DoctorArgs),
    Completions(commands::completions::CompletionsArgs),
    InstallMan(commands::install_man::InstallManArgs),
}

/// The clap command tree (for completions and man pages).
pub fn command() -> clap::Command {
    Cli::command()
}

/// Runs one parsed command.
pub(crate) fn dispatch(ctx: &mut Context, command: Command) -> Result<Outcome, CliError> {
    match command {
        Command::Init(args) => commands::init::run(ctx, args),
        Command::Agent(cmd) => commands::agent::run(ctx, cmd),
        Command::Whoami(args) => commands::whoami::run(ctx, args),
        Command::Status(args) => commands::status::run(ctx, args),
        Command::Record(cmd) => commands::record::run(ctx, cmd),
        Command::Log(args) => commands::log::run(ctx, args),
        Command::Sync(args) => commands::sync::run(ctx, args),
        Command::Claim(args) => commands::claim::claim(ctx, args),
        Command::Release(args) => commands::claim::release(ctx, args),
        Command::Exchange(args) => commands::exchange::run(ctx, args),
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
        Command::Propose(args) => commands::propose::run(ctx, args),
        Command::Endorse(args) => commands::endorse::run(ctx, args),
        Command::Tally(args) => commands::tally::run(ctx, args),
        Command::Land(args) => commands::land::run(ctx, args),
        Command::Report(args) => commands::report::run(ctx, args),
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
pub(crate) fn sweep_temp_indexes(ctx: &Context) {
    if let Ok(store) = ctx.store() {
        let _ = git_mas::doctor::sweep_repository(store, std::time::SystemTime::now());
    }
}

/// Entry point: parse, dispatch, report.
/// The hosts' hook calls, parsed by hand: `git mas gate --host H` (or `--host=H`), alone or with
/// `--post-tool` or `--session-end`, the caller from `GIT_MAS_AGENT` as the full parser takes it.
/// These run on every tool call of every session, and building clap's command tree to parse them
/// was a tenth of such a call (BENCHMARKS.md, "Team mode"). Any other shape — another option, a
/// help or version request, an unknown host, a `GIT_MAS_AGENT` that is not Unicode — goes to
/// [`Cli`], so every message printed is the full parser's; a unit test compares the two.
fn parse_hook(args: &[std::ffi::OsString]) -> Option<Cli> {
    let words: Vec<&str> = args.iter().skip(1).map(|a| a.to_str()).collect::<Option<_>>()?;
    let ["gate", flags @ ..] = words.as_slice() else { return None };
    let (host, event) = hook_host::parse_flags(flags)?;
    let agent = match std::env::var_os("GIT_MAS_AGENT") {
        None => None,
        Some(a) => Some(a.into_string().ok()?),
    };
    Some(Cli {
        directory: None,
        agent,
        color: output::ColorChoice::Auto,
        command: Command::Gate(commands::gate::GateArgs {
            staged: false,
            paths: Vec::new(),
            host: Some(host),
            post_tool: event == hook_host::HookEvent::PostTool,
            session_end: event == hook_host::HookEvent::SessionEnd,
            output: output::JsonFlag { json: false },
        }),
    })
}

/// The command line, parsed: a hook call's by [`parse_hook`], any other by [`Cli`].
fn parse(args: Vec<std::ffi::OsString>) -> Result<Cli, clap::Error> {
    match parse_hook(&args) {
        Some(cli) => Ok(cli),
        None => Cli::try_parse_from(args),
    }
}

pub fn main() -> ExitCode {
    let cli = match parse(std::env::args_os().collect()) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { Outcome::Usage } else { Outcome::Ok }.code();
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let mut ctx = Context::new(cli.directory, cli.agent, cli.color);
    match dispatch(&mut ctx, cli.command) {
        Ok(outcome) => ExitCode::from(outcome.code()),
        Err(err) => {
            if err.is_broken_pipe() {
                return ExitCode::from(Outcome::BrokenPipe.code());
            }
            err.print(&ctx);
            ExitCode::from(err.exit_code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_call_is_parsed_as_the_full_parser_parses_it() {
        let os = |line: &str| line.split(' ').map(std::ffi::OsString::from).collect::<Vec<_>>();
        let full = |line: &str| Cli::try_parse_from(os(line)).map(|c| format!("{c:?}")).map_err(|e| e.to_string());
        // The shapes the hosts' hooks are installed with: parsed by hand, as clap parses them.
        for line in [
            "git-mas gate --host claude-code",
            "git-mas gate --host codex --post-tool",
            "git-mas gate --host gemini --session-end",
            "git-mas gate --host=copilot",
            "git-mas gate --host=opencode --post-tool",
        ] {
            let fast = parse_hook(&os(line));
            assert!(fast.is_some(), "{line}");
            assert_eq!(fast.map(|c| format!("{c:?}")).ok_or_else(String::new), full(line), "{line}");
        }
        // Any other shape goes to clap.
        for line in [
            "git-mas -C /tmp/x --agent bob gate --host copilot",
            "git-mas gate --host opencode --agent bob --color never",
            "git-mas gate --host claude-code --json",
            "git-mas gate --post-tool --host claude-code",
            "git-mas gate --staged --json",
            "git-mas gate --paths a b",
        ] {
            assert!(parse_hook(&os(line)).is_none(), "{line}");
            assert_eq!(parse(os(line)).map(|c| format!("{c:?}")).map_err(|e| e.to_string()), full(line), "{line}");
        }
        // Help, versions, errors and other commands: the full parser's own answer.
        for line in [
            "git-mas gate --help",
            "git-mas gate -h",
            "git-mas --version",
            "git-mas gate --host nosuch",
            "git-mas gate --host=nosuch",
            "git-mas gate --host",
            "git-mas gate --host claude-code --post-tool --help",
            "git-mas gate --post-tool",
            "git-mas gate --host claude-code --post-tool --session-end",
            "git-mas focus list",
            "git-mas record append --kind gate",
        ] {
            let got = parse(os(line)).map(|c| format!("{c:?}")).map_err(|e| (e.kind(), e.to_string()));
            let want = Cli::try_parse_from(os(line)).map(|c| format!("{c:?}")).map_err(|e| (e.kind(), e.to_string()));
            assert_eq!(got, want, "{line}");
        }
    }

    #[test]
    fn the_docs_give_every_outcome_as_help_does() {
        let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/README.md")).unwrap();
        let table = docs.split("## Exit codes").nth(1).expect("docs/README.md has an exit codes section");
        let rows: Vec<&str> =
            table.lines().skip_while(|l| !l.starts_with("| code")).skip(2).take_while(|l| l.starts_with('|')).collect();
        let want: Vec<String> =
            Outcome::ALL.iter().map(|o| format!("| {} | {} |", o.code(), o.meaning().replace('|', "\\|"))).collect();
        assert_eq!(rows, want);
        let help = after_help();
        for o in Outcome::ALL {
            let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(flat.contains(&format!("{} {}", o.code(), o.meaning())), "{o:?} is not in --help:\n{help}");
        }
        assert!(help.lines().all(|l| l.len() <= 110), "{help}");
    }

    #[test]
    fn every_outcome_has_one_code_and_one_name() {
        let codes: std::collections::BTreeSet<u8> = Outcome::ALL.iter().map(|o| o.code()).collect();
        let names: std::collections::BTreeSet<&str> = Outcome::ALL.iter().map(|o| o.name()).collect();
        assert_eq!((codes.len(), names.len()), (Outcome::ALL.len(), Outcome::ALL.len()));
        for o in Outcome::ALL {
            assert_eq!(Outcome::of_host_reply(o.code()), o);
        }
        assert_eq!(Outcome::of_host_reply(200), Outcome::Internal);
    }
}

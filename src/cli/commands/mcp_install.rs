//! `git mas mcp install|uninstall|status --host`: register `git mas mcp` in a coding-agent
//! host's MCP configuration, take it out, or show it. What goes where, and how the user's file
//! keeps its bytes, is [`git_mas::hosts::mcp`]'s; this resolves the scope and the agent,
//! makes the library call per host and renders the result.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::json::mcp_install::{McpHostOut, McpInstallOut};
use crate::cli::output::JsonFlag;
use git_mas::hosts::Host;
use git_mas::hosts::mcp::{self, HostMcpError};
use git_mas::hosts::plan::{Action, FileState};
use git_mas::hosts::{ProcessEnv, Scope};
use std::fmt::Write as _;

/// Register the MCP server with a coding-agent host, remove it, or show it.
#[derive(Debug, clap::Subcommand)]
pub enum McpCommand {
    /// Register `git mas mcp` in the host's MCP configuration (idempotent; keeps every byte of
    /// yours).
    #[command(after_long_help = HELP)]
    Install(McpInstallArgs),
    /// Remove exactly the git-mas server from the host's MCP configuration.
    #[command(after_long_help = HELP)]
    Uninstall(McpInstallArgs),
    /// Show whether the host's MCP configuration has the git-mas server.
    #[command(after_long_help = HELP)]
    Status(McpInstallArgs),
}

const HELP: &str = "\
The files: claude-code .mcp.json (--global: ~/.claude.json, or $CLAUDE_CONFIG_DIR/.claude.json),
codex .codex/config.toml [mcp_servers.git-mas] ($CODEX_HOME/config.toml or ~/.codex/config.toml),
cursor .cursor/mcp.json (~/.cursor/mcp.json), gemini .gemini/settings.json (~/.gemini),
copilot .copilot/mcp-config.json, loaded with --additional-mcp-config ($COPILOT_HOME or
~/.copilot/mcp-config.json), opencode opencode.json `mcp` ($XDG_CONFIG_HOME/opencode or
~/.config/opencode). Goose keeps its extensions in YAML that git-mas does not edit: its manual step
is printed instead. The server is registered as `git mas mcp`, with `--agent NAME` when --agent
(or $GIT_MAS_AGENT) names one. A file that does not parse is refused and left as it was.

With --json: {scope: project | global, agent, hosts: [{host, argv, path, state: installed |
not_installed | other | invalid | null, changed, notes}]}.";

/// Options of `mcp install|uninstall|status`.
#[derive(Debug, clap::Args)]
pub struct McpInstallArgs {
    /// The host (repeatable): claude-code, codex, copilot, gemini, cursor, goose, opencode, or all.
    #[arg(long = "host", value_name = "HOST", required = true, value_parser = parse_host)]
    pub hosts: Vec<Option<Host>>,
    /// The user's configuration, for every project, instead of this working tree's.
    #[arg(long)]
    pub global: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// A `--host` value: `Some(host)`, or `None` for all.
fn parse_host(name: &str) -> Result<Option<Host>, String> {
    if name == "all" {
        return Ok(None);
    }
    Host::from_name(name).map(Some).ok_or_else(|| {
        let names: Vec<&str> = Host::ALL.iter().map(|h| h.name()).collect();
        format!("unknown host {name:?}; expected one of {}, or all", names.join(", "))
    })
}

/// Runs `mcp install|uninstall|status`.
pub fn run(ctx: &mut Context, cmd: McpCommand) -> Result<Outcome, CliError> {
    let (args, action) = match cmd {
        McpCommand::Install(a) => (a, Action::Install),
        McpCommand::Uninstall(a) => (a, Action::Uninstall),
        McpCommand::Status(a) => (a, Action::Status),
    };
    let scope = if args.global { Scope::Global } else { Scope::Project(ctx.store()?.workdir()?.to_path_buf()) };
    // Only a name given by --agent or $GIT_MAS_AGENT is registered; mas.agent is read by the
    // server itself.
    let agent = match ctx.caller_name() {
        Ok((name, crate::cli::context::IdentitySource::FlagOrEnv)) => Some(name),
        _ => None,
    };
    let all = args.hosts.contains(&None);
    let chosen: Vec<Host> = Host::ALL.into_iter().filter(|h| all || args.hosts.contains(&Some(*h))).collect();
    let mut hosts = Vec::new();
    for host in chosen {
        let argv = mcp::server_argv(agent.as_deref());
        let out = match mcp::apply(action, host, &scope, &ProcessEnv, agent.as_deref()) {
            Ok(r) => {
                let installed = r.state == FileState::Installed;
                let notes = if installed { mcp::notes(host, &scope) } else { Vec::new() };
                McpHostOut {
                    host: host.name().into(),
                    argv,
                    path: Some(r.path),
                    state: Some(r.state),
                    changed: r.changed,
                    notes,
                }
            }
            // `--host all` goes on past the one host git-mas cannot edit, saying its manual step.
            Err(HostMcpError::Unsupported { reason, .. }) if all => McpHostOut {
                host: host.name().into(),
                argv,
                path: None,
                state: None,
                changed: false,
                notes: vec![reason],
            },
            Err(e) => return Err(CliError::from(e)),
        };
        hosts.push(out);
    }
    if !args.output.json {
        for (h, n) in hosts.iter().flat_map(|h| h.notes.iter().map(move |n| (h, n))) {
            ctx.ui().hint(&format!("{}: {n}", h.host));
        }
    }
    let scope = if args.global { crate::cli::json::Scope::Global } else { crate::cli::json::Scope::Project };
    ctx.ui().emit(args.output, &McpInstallOut { scope, agent, hosts }, |o| {
        let mut text = String::new();
        for h in &o.hosts {
            let state = h.state.map(|s| s.label()).unwrap_or("manual");
            let path = h.path.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
            let _ = writeln!(text, "{:<12} {:<14} {path}", h.host, state);
        }
        text
    })?;
    Ok(Outcome::Ok)
}

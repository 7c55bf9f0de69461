//! `git mas hooks install|uninstall|status`: manage the git hooks that run the gate.
//!
//! The hooks live where git looks for them: `core.hooksPath` when set (relative to the top of the
//! working tree), else the common git dir's `hooks/` (shared by every linked worktree). What goes
//! into them is [`git_mas::attention::git_hooks`]'s: only a marked block is ever written or removed.
//!
//! With `--host`, the same three verbs manage a coding-agent host's edit hook (the file the host
//! reads its pre-tool hooks from) instead; what goes where is
//! [`git_mas::hosts::hooks`]'s, which also writes the files.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::json::hooks::{HookOut, HooksOut, HostHookFileOut, HostHookOut, HostHooksOut};
use crate::cli::output::JsonFlag;
use git_mas::attention::git_hooks::{self, HOOK_NAMES, hook_state};
use git_mas::hosts::Host;
use git_mas::hosts::hooks;
use git_mas::hosts::plan::{self, FileState};
use git_mas::hosts::trust;
use git_mas::hosts::{ProcessEnv, Scope};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Install, remove or inspect the git-mas hooks (pre-commit, commit-msg, pre-push), or with
/// --host a coding-agent host's edit hook.
#[derive(Debug, clap::Subcommand)]
pub enum HooksCommand {
    /// Install the hooks (idempotent; keeps your own hook content). Sets `mas.gate=enforce` when
    /// mas.gate is unset. With --host, the host's edit hook instead (in the project, it sets
    /// mas.gate=enforce too; with --global, the hook acts in each repository whose mas.gate is warn
    /// or enforce).
    #[command(after_long_help = HOST_HELP)]
    Install(HooksArgs),
    /// Remove the git-mas block from each hook (your own content stays). With --host, the host's
    /// edit hook.
    #[command(after_long_help = HOST_HELP)]
    Uninstall(HooksArgs),
    /// Show where the hooks are and whether each is installed. With --host, the host's edit hook.
    #[command(after_long_help = HOST_HELP)]
    Status(HooksArgs),
}

/// What `--host` manages, and the `--json` shapes (shown after the options in `--help`).
const HOST_HELP: &str = "\
With --host, the host's hook entries instead of the git hooks: `git-mas-hook --host HOST` before
each tool that writes a file, `git-mas-hook --host HOST --post-tool` after every tool (the shell's
too) and `git-mas-hook --host HOST --session-end` when a session ends (opencode has no such event),
in the file the host reads. git-mas-hook is the hook's own binary, installed beside git-mas: it
answers as `git mas gate --host HOST` does, without starting git first; entries an earlier
release wrote (`git mas gate --host HOST`) are ours too, and install replaces them. The files:
claude-code .claude/settings.json (--global:
$CLAUDE_CONFIG_DIR or ~/.claude), codex .codex/hooks.json ($CODEX_HOME or ~/.codex), copilot
.github/hooks/git-mas.json ($COPILOT_HOME/hooks or ~/.copilot/hooks), gemini .gemini/settings.json
($GEMINI_CLI_HOME/.gemini or ~/.gemini), cursor .cursor/hooks.json (~/.cursor), goose .agents/plugins/git-mas/
(~/.agents/plugins/git-mas/), opencode .opencode/plugins/git-mas.js
($XDG_CONFIG_HOME/opencode/plugins or ~/.config/opencode/plugins). A settings file shared with you
keeps every byte of yours: install adds our entries (found again by their command), uninstall takes
exactly them away; a second install changes nothing. A file that is not valid JSON, or a file of
git-mas's name with other content, is refused and left as it was. Codex runs a hook only in a
project it trusts and only once the hook itself is trusted, copilot (in prompt mode) and gemini
only in a folder they trust: status reads their trust files and says \"installed, not loaded:
REASON\" with the remedy; install --host codex --trust writes codex's trust into its config.toml,
install --host gemini --trust the folder's into ~/.gemini/trustedFolders.json.

With --json: {dir, hooks: [{hook, path, state: installed | \"other hook (git-mas not installed)\" |
absent}]}; with --host: {scope: project | global, hosts: [{host, command, files: [{path, state:
installed | not_installed | other | invalid, changed}], notes, effect: null | {loaded, reason,
remedy}}]}.";

/// Options shared by the hooks subcommands (see [`HOST_HELP`]).
#[derive(Debug, clap::Args)]
pub struct HooksArgs {
    /// A coding-agent host whose edit hook to manage instead of the git hooks (repeatable):
    /// claude-code, codex, copilot, gemini, cursor, goose, opencode, or all.
    #[arg(long = "host", value_name = "HOST", value_parser = parse_hosts)]
    pub hosts: Vec<HostChoice>,
    /// With --host: the user's configuration, for every project, instead of this working tree's.
    #[arg(long, requires = "hosts")]
    pub global: bool,
    /// With install --host codex: also trust the project and each of the hook's entries (pre-tool,
    /// post-tool, session end) in codex's own configuration ($CODEX_HOME/config.toml or
    /// ~/.codex/config.toml, a file of yours for every project; every other byte of it is kept),
    /// without which codex ignores them. With --host gemini: trust
    /// the project's folder in ~/.gemini/trustedFolders.json (gemini then loads all of its
    /// .gemini/settings.json), without which gemini ignores the hook.
    #[arg(long, requires = "hosts")]
    pub trust: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// A `--host` value: one host, or all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostChoice {
    /// One host.
    One(Host),
    /// Every host.
    All,
}

pub(crate) fn parse_hosts(name: &str) -> Result<HostChoice, String> {
    if name == "all" {
        return Ok(HostChoice::All);
    }
    Host::from_name(name).map(HostChoice::One).ok_or_else(|| {
        let names: Vec<&str> = Host::ALL.iter().map(|h| h.name()).collect();
        format!("unknown host {name:?}; expected one of {}, or all", names.join(", "))
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Install,
    Uninstall,
    Status,
}

/// Runs a `hooks` subcommand.
pub fn run(ctx: &mut Context, cmd: HooksCommand) -> Result<Outcome, CliError> {
    let dir = match &cmd {
        HooksCommand::Install(a) | HooksCommand::Uninstall(a) | HooksCommand::Status(a) if !a.hosts.is_empty() => {
            PathBuf::new()
        }
        _ => ctx.store()?.hooks_dir()?,
    };
    let (args, action) = match cmd {
        HooksCommand::Install(a) => (a, Action::Install),
        HooksCommand::Uninstall(a) => (a, Action::Uninstall),
        HooksCommand::Status(a) => (a, Action::Status),
    };
    if !args.hosts.is_empty() {
        return run_hosts(ctx, &args, action);
    }
    match action {
        Action::Install => drop(git_hooks::install(&dir).map_err(|e| CliError::new(Kind::User, e))?),
        Action::Uninstall => git_hooks::uninstall(&dir).map_err(|e| CliError::new(Kind::User, e))?,
        Action::Status => {}
    }
    let mut hooks = Vec::new();
    for name in HOOK_NAMES {
        let path = dir.join(name);
        let state = hook_state(std::fs::read_to_string(&path).ok().as_deref());
        hooks.push(HookOut { hook: name.to_string(), path, state });
    }
    if action == Action::Install {
        enforce_when_unset(ctx)?;
    }
    ctx.ui().emit(args.output, &HooksOut { dir, hooks }, |o| {
        let mut text = String::new();
        for h in &o.hooks {
            let _ = writeln!(text, "{:<11} {}  {}", h.hook, h.state.label(), h.path.display());
        }
        text
    })?;
    Ok(Outcome::Ok)
}

/// Sets `mas.gate=enforce` in the repository when mas.gate is unset: hooks that are installed
/// but find the gate off would let everything through without a word. When git cannot set it,
/// the install goes on and says so (the hooks are worth having; the remedy is one command).
fn enforce_when_unset(ctx: &Context) -> Result<(), CliError> {
    if ctx.store()?.config_string("mas.gate").is_some() {
        return Ok(());
    }
    let workdir = ctx.store()?.workdir()?.to_path_buf();
    match git_mas::git::run(&workdir, &["config", "mas.gate", "enforce"]) {
        Ok(_) => ctx.status("set mas.gate=enforce (git config mas.gate warn|off to soften)"),
        Err(e) => ctx
            .warn(&format!("mas.gate is unset, so the gate is off: {e}; `git config mas.gate enforce` switches it on")),
    }
    Ok(())
}

/// The hosts named, each once, in `--host all`'s order.
fn chosen(hosts: &[HostChoice]) -> Vec<Host> {
    Host::ALL.into_iter().filter(|h| hosts.iter().any(|c| *c == HostChoice::All || *c == HostChoice::One(*h))).collect()
}

/// `hooks … --host`: each host's edit-hook configuration. Every host is planned and written in
/// turn; the first refusal stops the command (the hosts before it are done, said on stderr).
fn run_hosts(ctx: &mut Context, args: &HooksArgs, action: Action) -> Result<Outcome, CliError> {
    let scope = if args.global { Scope::Global } else { Scope::Project(ctx.store()?.workdir()?.to_path_buf()) };
    let lib_action = match action {
        Action::Install => plan::Action::Install,
        Action::Uninstall => plan::Action::Uninstall,
        Action::Status => plan::Action::Status,
    };
    if action == Action::Install && !args.global {
        enforce_when_unset(ctx)?;
    }
    if args.trust && action != Action::Install {
        return Err(CliError::usage("--trust goes with `hooks install --host`"));
    }
    let mut hosts = Vec::new();
    for host in chosen(&args.hosts) {
        let reports = hooks::apply(lib_action, host, &scope, &ProcessEnv).map_err(CliError::from)?;
        let files: Vec<HostHookFileOut> =
            reports.into_iter().map(|r| HostHookFileOut { path: r.path, state: r.state, changed: r.changed }).collect();
        // What the host needs besides the file, said while the hook is there.
        let installed = files.iter().all(|f| f.state == FileState::Installed);
        let notes = if installed { hooks::notes(host, &scope) } else { Vec::new() };
        if installed
            && args.trust
            && let Some(written) = trust::trust(host, &scope, &ProcessEnv).map_err(CliError::from)?
        {
            let what = if host == Host::Gemini { "the folder" } else { "the project and the hooks" };
            ctx.status(&format!("{}: trusted {what} in {}", host.name(), written.display()));
        }
        let effect = if installed { trust::effect(host, &scope, &ProcessEnv).map_err(CliError::from)? } else { None };
        hosts.push(HostHookOut {
            host: host.name().to_string(),
            command: hooks::gate_command(host),
            files,
            notes,
            effect,
        });
    }
    if action != Action::Uninstall && !hosts.is_empty() {
        warn_unless_hook_program(ctx);
    }
    if !args.output.json {
        // A host whose trust files say it loads the hook needs no word on how to trust it.
        let loaded = |h: &HostHookOut| h.effect.as_ref().is_some_and(|e| e.loaded);
        for note in hosts.iter().filter(|h| !loaded(h)).flat_map(|h| h.notes.iter().map(move |n| (h, n))) {
            ctx.ui().hint(&format!("{}: {}", note.0.host, note.1));
        }
        for h in &hosts {
            if let Some(e) = h.effect.as_ref().filter(|e| !e.loaded) {
                let remedy = e.remedy.as_deref().unwrap_or_default();
                ctx.ui().hint(&format!("{}: the hook is installed but {}; {remedy}", h.host, e.reason));
            }
        }
    }
    let scope = if args.global { crate::cli::json::Scope::Global } else { crate::cli::json::Scope::Project };
    ctx.ui().emit(args.output, &HostHooksOut { scope, hosts }, |o| {
        let mut text = String::new();
        for h in &o.hosts {
            for f in &h.files {
                let state = match &h.effect {
                    Some(e) if f.state == FileState::Installed && !e.loaded => {
                        format!("installed, not loaded: {}", e.reason)
                    }
                    Some(e) if f.state == FileState::Installed => format!("installed, loaded: {}", e.reason),
                    _ => f.state.label().to_string(),
                };
                let _ = writeln!(text, "{:<12} {:<14} {}", h.host, state, f.path.display());
            }
        }
        text
    })?;
    Ok(Outcome::Ok)
}

/// Warns when [`hooks::HOOK_PROGRAM`] is not on `PATH`: every host entry runs it, and most hosts
/// let a tool call through when its hook cannot start (`hooks install|status --host`, `init --team`).
pub(crate) fn warn_unless_hook_program(ctx: &Context) {
    if hooks::hook_program(&ProcessEnv).is_none() {
        ctx.warn(&format!(
            "{} is not on PATH, and every entry runs it: most hosts let a tool call through when its hook \
             cannot start (Claude Code refuses it). Install it beside git-mas (`cargo install --locked \
             --path .` installs both) or put its folder on PATH",
            hooks::HOOK_PROGRAM
        ));
    }
}

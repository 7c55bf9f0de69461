//! `git mas hooks install|uninstall|status`: manage the git hooks that run the gate.
//!
//! The hooks live where git looks for them: `core.hooksPath` when set (relative to the top of the
//! working tree), else the common git dir's `hooks/` (shared by every linked worktree). What goes
//! into them is [`git_mas::attention::hooks`]'s: only a marked block is ever written or removed.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::json::hooks::{HookOut, HooksOut};
use crate::cli::output::JsonFlag;
use git_mas::attention::hooks::{HOOK_NAMES, Uninstall, hook_state, installed, uninstalled};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Install, remove or inspect the git-mas hooks (pre-commit, commit-msg, pre-push).
#[derive(Debug, clap::Subcommand)]
pub enum HooksCommand {
    /// Install the hooks (idempotent; keeps your own hook content). Sets `mas.gate=enforce` when
    /// mas.gate is unset.
    Install(HooksArgs),
    /// Remove the git-mas block from each hook (your own content stays).
    Uninstall(HooksArgs),
    /// Show where the hooks are and whether each is installed.
    Status(HooksArgs),
}

/// Options shared by the hooks subcommands.
///
/// With --json: {dir, hooks: [{hook, path, state: installed | "other hook (git-mas not installed)"
/// | absent}]}.
#[derive(Debug, clap::Args)]
pub struct HooksArgs {
    #[command(flatten)]
    pub output: JsonFlag,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Install,
    Uninstall,
    Status,
}

fn hooks_dir(ctx: &Context) -> Result<PathBuf, CliError> {
    let store = ctx.store()?;
    match store.config_string("core.hooksPath").filter(|s| !s.is_empty()) {
        Some(p) => {
            let p = PathBuf::from(shellexpand_home(&p));
            Ok(if p.is_relative() { store.workdir()?.join(p) } else { p })
        }
        None => Ok(store.common_dir().join("hooks")),
    }
}

fn shellexpand_home(p: &str) -> String {
    match (p.strip_prefix("~/"), std::env::var("HOME")) {
        (Some(rest), Ok(home)) => format!("{home}/{rest}"),
        _ => p.to_string(),
    }
}

fn make_executable(path: &Path) -> Result<(), CliError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map(|m| m.permissions().mode()).unwrap_or(0o644) | 0o111;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| CliError::user(format!("cannot make {} executable: {e}", path.display())))?;
    }
    Ok(())
}

/// Applies `action` to the hook file at `path`.
fn apply(action: Action, dir: &Path, path: &Path, name: &str) -> Result<(), CliError> {
    let current = std::fs::read_to_string(path).ok();
    let write = |text: &str| {
        std::fs::write(path, text).map_err(|e| CliError::user(format!("cannot write {}: {e}", path.display())))
    };
    match action {
        Action::Install => {
            std::fs::create_dir_all(dir)
                .map_err(|e| CliError::user(format!("cannot create {}: {e}", dir.display())))?;
            let text = installed(current.as_deref(), name);
            if current.as_deref() != Some(text.as_str()) {
                write(&text)?;
            }
            make_executable(path)
        }
        Action::Uninstall => match uninstalled(current.as_deref()) {
            Uninstall::Keep => Ok(()),
            Uninstall::Write(rest) => write(&rest),
            Uninstall::Remove => {
                std::fs::remove_file(path).map_err(|e| CliError::user(format!("cannot remove {}: {e}", path.display())))
            }
        },
        Action::Status => Ok(()),
    }
}

/// Runs a `hooks` subcommand.
pub fn run(ctx: &mut Context, cmd: HooksCommand) -> Result<ExitCode, CliError> {
    let dir = hooks_dir(ctx)?;
    let (args, action) = match cmd {
        HooksCommand::Install(a) => (a, Action::Install),
        HooksCommand::Uninstall(a) => (a, Action::Uninstall),
        HooksCommand::Status(a) => (a, Action::Status),
    };
    let mut hooks = Vec::new();
    for name in HOOK_NAMES {
        let path = dir.join(name);
        apply(action, &dir, &path, name)?;
        let state = hook_state(std::fs::read_to_string(&path).ok().as_deref());
        hooks.push(HookOut { hook: name.to_string(), path, state });
    }
    if action == Action::Install && ctx.store()?.config_string("mas.gate").is_none() {
        let workdir = ctx.store()?.workdir()?.to_path_buf();
        let ok =
            std::process::Command::new("git").current_dir(workdir).args(["config", "mas.gate", "enforce"]).status();
        if ok.is_ok_and(|s| s.success()) {
            ctx.status("set mas.gate=enforce (git config mas.gate warn|off to soften)");
        }
    }
    ctx.ui().emit(args.output, &HooksOut { dir, hooks }, |o| {
        let mut text = String::new();
        for h in &o.hooks {
            let _ = writeln!(text, "{:<11} {}  {}", h.hook, h.state.label(), h.path.display());
        }
        text
    })?;
    Ok(ExitCode::SUCCESS)
}

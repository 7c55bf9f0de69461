//! `git mas hooks install|uninstall|status`: manage the git hooks that run the gate.
//!
//! The hooks live where git looks for them: `core.hooksPath` when set (relative to the top of the
//! working tree), else the common git dir's `hooks/` (shared by every linked worktree). Only a
//! marked block is ever written or removed, so the user's own hook content survives both install
//! and uninstall; installing twice gives the same files.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::output::print_json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const HOOKS: [&str; 3] = ["pre-commit", "commit-msg", "pre-push"];
const BEGIN: &str = "# >>> git-mas >>> (managed by `git mas hooks`; edit outside this block)";
const END: &str = "# <<< git-mas <<<";

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
#[derive(Debug, clap::Args)]
pub struct HooksArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

fn hooks_dir(ctx: &mut Context) -> Result<PathBuf, CliError> {
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

/// The managed block: `git-mas` straight from PATH when it is there (a commit then starts one
/// process per hook instead of two: git's dispatcher costs a process start), else through `git mas`,
/// which also finds `git-mas` in git's exec-path.
fn block(name: &str) -> String {
    format!(
        "{BEGIN}\nif command -v git-mas >/dev/null 2>&1; then git-mas hook {name} \"$@\" || exit $?; \
         else git mas hook {name} \"$@\" || exit $?; fi\n{END}\n"
    )
}

/// Removes our block from hook text.
fn strip(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("# >>> git-mas >>>") {
            inside = true;
            continue;
        }
        if inside {
            if line.starts_with(END) {
                inside = false;
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The hook text with our block (replacing an old one).
fn installed(text: Option<&str>, name: &str) -> String {
    let base = match text {
        Some(t) => strip(t),
        None => "#!/bin/sh\n".to_string(),
    };
    let mut base = if base.trim().is_empty() { "#!/bin/sh\n".to_string() } else { base };
    if !base.ends_with('\n') {
        base.push('\n');
    }
    base + &block(name)
}

fn state(path: &Path) -> &'static str {
    match std::fs::read_to_string(path) {
        Ok(t) if t.contains(BEGIN) => "installed",
        Ok(_) => "other hook (git-mas not installed)",
        Err(_) => "absent",
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

/// Runs a `hooks` subcommand.
pub fn run(ctx: &mut Context, cmd: HooksCommand) -> Result<ExitCode, CliError> {
    let dir = hooks_dir(ctx)?;
    let (args, action) = match cmd {
        HooksCommand::Install(a) => (a, "install"),
        HooksCommand::Uninstall(a) => (a, "uninstall"),
        HooksCommand::Status(a) => (a, "status"),
    };
    let mut report = Vec::new();
    for name in HOOKS {
        let path = dir.join(name);
        let current = std::fs::read_to_string(&path).ok();
        match action {
            "install" => {
                std::fs::create_dir_all(&dir)
                    .map_err(|e| CliError::user(format!("cannot create {}: {e}", dir.display())))?;
                let text = installed(current.as_deref(), name);
                if current.as_deref() != Some(text.as_str()) {
                    std::fs::write(&path, &text)
                        .map_err(|e| CliError::user(format!("cannot write {}: {e}", path.display())))?;
                }
                make_executable(&path)?;
            }
            "uninstall" => {
                if let Some(t) = current {
                    let rest = strip(&t);
                    let only_shebang = rest.lines().all(|l| l.trim().is_empty() || l.starts_with("#!"));
                    if only_shebang {
                        std::fs::remove_file(&path)
                            .map_err(|e| CliError::user(format!("cannot remove {}: {e}", path.display())))?;
                    } else if rest != t {
                        std::fs::write(&path, rest)
                            .map_err(|e| CliError::user(format!("cannot write {}: {e}", path.display())))?;
                    }
                }
            }
            _ => {}
        }
        report.push(serde_json::json!({"hook": name, "path": path, "state": state(&path)}));
    }
    if action == "install" && ctx.store()?.config_string("mas.gate").is_none() {
        let workdir = ctx.store()?.workdir()?.to_path_buf();
        let ok =
            std::process::Command::new("git").current_dir(workdir).args(["config", "mas.gate", "enforce"]).status();
        if ok.is_ok_and(|s| s.success()) {
            ctx.status("set mas.gate=enforce (git config mas.gate warn|off to soften)");
        }
    }
    if args.json {
        print_json(&serde_json::json!({"dir": dir, "hooks": report}))?;
    } else {
        for r in &report {
            println!(
                "{:<11} {}  {}",
                r["hook"].as_str().unwrap_or(""),
                r["state"].as_str().unwrap_or(""),
                r["path"].as_str().unwrap_or("")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_is_idempotent_and_keeps_user_content() {
        let user = "#!/bin/sh\necho mine\n";
        let once = installed(Some(user), "pre-commit");
        assert!(once.starts_with(user) && once.contains("git mas hook pre-commit"));
        assert_eq!(installed(Some(&once), "pre-commit"), once);
        assert_eq!(strip(&once), user);
        assert_eq!(installed(None, "commit-msg"), format!("#!/bin/sh\n{}", block("commit-msg")));
    }
}

//! An agent's worktree: what `git mas coordinate` installs there for the agent's host (the edit
//! hook, the MCP server registered as the agent, the gate's mode) and how those files are kept
//! out of what the agent proposes.
//!
//! The decisions:
//!
//! - A proposal is the worktree's tree as `git add -A` sees it, so the installed files are
//!   ignored there and only there. `info/exclude` cannot do it (git reads it from the common git
//!   dir, shared by every worktree), so the worktree gets an excludes file in its own git dir
//!   (`mas-exclude`), made its `core.excludesFile` through its per-worktree config (agent
//!   worktrees have `extensions.worktreeConfig`). The file starts with the excludes file git read
//!   before, so the user's global ignores stay in force, and each installer adds to it, keeping
//!   what another put there. A file the repository tracks (a team's committed
//!   `.claude/settings.json`) is marked `--skip-worktree` in the worktree's own index instead,
//!   which `git add -A` leaves as it is: the proposal keeps the committed version.
//! - Nothing is written into the main checkout or the user's own configuration. What a host
//!   needs beyond the worktree's files to run the hook unattended comes on the agent's command
//!   line ([`super::hooks::session_args`], [`super::hooks::session_prefix`]).
//! - OpenCode's plugin goes into the worktree's git dir ([`OPENCODE_WORKTREE_PLUGIN`]), outside
//!   the working tree: opencode npm-installs its plugin API into every config folder it loads (a
//!   project's `.opencode/` among them) before it loads any plugin, which needs the network and
//!   writes into the worktree. Named through `OPENCODE_CONFIG_CONTENT`, the plugin loads with no
//!   project config folder. What that install writes into a repository's own `.opencode/`
//!   ([`host_artifacts`]) is kept out of proposals like the files installed.
//! - An edit hook that finds the gate off lets every edit through, so a worktree where no one
//!   chose a mode gets `mas.gate=enforce` in its own config ([`enforce_gate`]).
//!
//! What a crash leaves: each file is written atomically (as everywhere in [`super::files`]); a
//! crash between the files leaves some installed and some not, and the next install completes
//! them. A temporary a crashed write left beside a file is excluded like the file.

use super::files::{HostHookError, read, write_atomic};
use super::hooks::{self, FileKind, HookFile, OPENCODE_WORKTREE_PLUGIN};
use super::mcp::{self, HostMcpError};
use super::plan::{Action, FileReport, FileState, Plan};
use super::{Env, Host, ProcessEnv, Scope};
use std::path::{Path, PathBuf};

/// The first line of what this module adds to a worktree's excludes file.
pub const EXCLUDE_MARKER: &str = "# git-mas: the edit hook's files, kept out of this agent's proposals";

/// Installs `host`'s edit hook in an agent's worktree (project scope) and keeps its files out of
/// what the agent proposes (module docs). OpenCode's plugin goes into the worktree's git dir.
pub fn install_hook(host: Host, worktree: &Path) -> Result<Vec<FileReport>, HostHookError> {
    let git_dir = git_dir(worktree)?;
    let mut patterns = Vec::new();
    let reports = if host == Host::OpenCode {
        // Outside the working tree: nothing of ours to keep out of a proposal.
        let file = HookFile {
            base: git_dir.clone(),
            rel: PathBuf::from(OPENCODE_WORKTREE_PLUGIN),
            kind: FileKind::Own(hooks::own_content(host)),
        };
        let current = read(&file.path())?;
        let plan = hooks::plan_install(host, &file, current.as_deref())?;
        if let Plan::Write(text) = &plan {
            write_atomic(&file.path(), text)?;
        }
        vec![FileReport { path: file.path(), state: FileState::Installed, changed: plan != Plan::Keep }]
    } else {
        let scope = Scope::Project(worktree.to_path_buf());
        let reports = hooks::apply(Action::Install, host, &scope, &ProcessEnv)?;
        for file in &hooks::hook_files(host, &scope, &ProcessEnv).unwrap_or_default() {
            keep_out(worktree, &file.rel, &mut patterns)?;
        }
        reports
    };
    for rel in host_artifacts(host) {
        if run_git(worktree, &["ls-files", "--", rel])?.trim().is_empty() {
            patterns.push(format!("/{rel}"));
        }
    }
    if !patterns.is_empty() {
        exclude(worktree, &git_dir, &patterns)?;
    }
    Ok(reports)
}

/// Registers the git-mas MCP server, as `agent`, in an agent's worktree (project scope) and keeps
/// the file out of what the agent proposes, as [`install_hook`] does for the edit hook.
pub fn install_mcp(host: Host, worktree: &Path, agent: &str) -> Result<FileReport, HostMcpError> {
    let scope = Scope::Project(worktree.to_path_buf());
    let report = mcp::apply(Action::Install, host, &scope, &ProcessEnv, Some(agent))?;
    let git_dir = git_dir(worktree)?;
    let (_, rel) = mcp::config_file(host, &scope, &ProcessEnv)?;
    let mut patterns = Vec::new();
    keep_out(worktree, &rel, &mut patterns)?;
    add_excludes(worktree, &git_dir, &patterns)?;
    Ok(report)
}

/// Turns the gate on in an agent's worktree when `mas.gate` is unset there: an edit hook that
/// finds the gate off lets every edit through, so a coordinated team installed with hooks but no
/// mode would be gated in name only. Sets `mas.gate=enforce` in the worktree's own config (the
/// main checkout and the other worktrees keep theirs); a mode anyone chose, at any level, stays.
/// Returns whether it set the mode.
pub fn enforce_gate(worktree: &Path) -> Result<bool, HostHookError> {
    if !run_git(worktree, &["config", "mas.gate"])?.trim().is_empty() {
        return Ok(false);
    }
    run_git(worktree, &["config", "--worktree", "mas.gate", "enforce"])?;
    Ok(true)
}

/// What a host itself writes beside our files because they are there, kept out of an agent's
/// proposals like them (each only while the repository tracks nothing there). OpenCode installs
/// `@opencode-ai/plugin` with npm into every config folder it loads (the project's `.opencode/`
/// among them) before it loads any plugin, writing these.
pub fn host_artifacts(host: Host) -> &'static [&'static str] {
    match host {
        Host::OpenCode => &[
            ".opencode/package.json",
            ".opencode/package-lock.json",
            ".opencode/bun.lock",
            ".opencode/node_modules/",
            ".opencode/.gitignore",
        ],
        _ => &[],
    }
}

/// The worktree's own git dir (a linked worktree's, not the common one).
fn git_dir(worktree: &Path) -> Result<PathBuf, HostHookError> {
    Ok(PathBuf::from(run_git(worktree, &["rev-parse", "--absolute-git-dir"])?.trim()))
}

/// Keeps the file `rel` (relative to the top of the worktree) out of proposals: a file the
/// repository tracks is marked `--skip-worktree`; an untracked one is added to `patterns`, as is
/// the temporary a crashed write may leave beside it.
fn keep_out(worktree: &Path, rel: &Path, patterns: &mut Vec<String>) -> Result<(), HostHookError> {
    let rel = rel.to_string_lossy().replace('\\', "/");
    let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel.as_str()));
    let dir = if dir.is_empty() { String::new() } else { format!("{dir}/") };
    patterns.push(format!("/{dir}.{name}{}*", crate::fsx::TEMP_INFIX));
    if run_git(worktree, &["ls-files", "--", &rel])?.trim().is_empty() {
        patterns.push(format!("/{rel}"));
    } else {
        run_git(worktree, &["update-index", "--skip-worktree", "--", &rel])?;
    }
    Ok(())
}

/// Makes `<git_dir>/mas-exclude` (the excludes file git used before, then `patterns`) the
/// worktree's own `core.excludesFile`.
fn exclude(worktree: &Path, git_dir: &Path, patterns: &[String]) -> Result<(), HostHookError> {
    let git = |args: &[&str]| run_git(worktree, args);
    let ours = git_dir.join("mas-exclude");
    let previous = git(&["config", "core.excludesFile"]).unwrap_or_default();
    let previous = previous.trim();
    let before = if Path::new(previous) == ours {
        let text = read(&ours)?.unwrap_or_default();
        text.split(EXCLUDE_MARKER).next().unwrap_or_default().to_string()
    } else {
        default_excludes(previous).and_then(|p| std::fs::read_to_string(p).ok()).unwrap_or_default()
    };
    let mut text = before;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(EXCLUDE_MARKER);
    text.push('\n');
    for p in patterns {
        text.push_str(p);
        text.push('\n');
    }
    write_atomic(&ours, &text)?;
    git(&["config", "--worktree", "core.excludesFile", &ours.to_string_lossy()])?;
    Ok(())
}

/// Adds `patterns` to what [`exclude`] keeps out of the worktree's proposals, keeping the
/// patterns already there (another installer's).
fn add_excludes(worktree: &Path, git_dir: &Path, patterns: &[String]) -> Result<(), HostHookError> {
    let ours = git_dir.join("mas-exclude");
    let configured = run_git(worktree, &["config", "core.excludesFile"]).unwrap_or_default();
    let mut all: Vec<String> = Vec::new();
    if Path::new(configured.trim()) == ours {
        let text = read(&ours)?.unwrap_or_default();
        if let Some((_, listed)) = text.split_once(EXCLUDE_MARKER) {
            all.extend(listed.lines().filter(|l| !l.is_empty()).map(String::from));
        }
    }
    for p in patterns {
        if !all.contains(p) {
            all.push(p.clone());
        }
    }
    exclude(worktree, git_dir, &all)
}

/// The excludes file git reads when `core.excludesFile` is `configured` (empty: unset).
fn default_excludes(configured: &str) -> Option<PathBuf> {
    if !configured.is_empty() {
        return Some(match (configured.strip_prefix("~/"), ProcessEnv.var("HOME")) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => PathBuf::from(configured),
        });
    }
    match ProcessEnv.var("XDG_CONFIG_HOME") {
        Some(x) => Some(x.join("git/ignore")),
        None => ProcessEnv.var("HOME").map(|h| h.join(".config/git/ignore")),
    }
}

/// Runs git in `worktree` and returns its stdout; `git config KEY` of an unset key gives "".
fn run_git(worktree: &Path, args: &[&str]) -> Result<String, HostHookError> {
    // `git config KEY` exits 1 when the key is unset: not a failure here.
    let answers: &[i32] = if args.first() == Some(&"config") { &[1] } else { &[] };
    let out = crate::git::Git::new(worktree)
        .answers(answers)
        .run(args)
        // This file's errors are values (compared and cloned, as the plans holding them are), so
        // git's failure is kept as its words.
        .map_err(|e| HostHookError::Git {
            worktree: worktree.to_path_buf(),
            command: args.join(" "),
            reason: e.reason(),
        })?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

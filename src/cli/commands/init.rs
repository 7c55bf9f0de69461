//! `git mas init`: create `.mas/roster` when missing; with `--team`, set up team mode in one call
//! (and `--team --undo` take it back). What the setup does, and what a crash leaves, is
//! [`git_mas::ops::setup`]'s; this parses the flags, makes the one library call and renders it.

use crate::cli::commands::hooks::{HostChoice, parse_hosts};
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::json::agent::InitOut;
use crate::cli::output::JsonFlag;
use crate::cli::{Done, Outcome};
use git_mas::hosts::{Host, ProcessEnv};
use git_mas::identity::{ROSTER_HEADER, ROSTER_PATH};
use git_mas::ops::setup::{
    self, ConfigChange, ConfigRestored, FileChange, FileRestored, Hosts, Options, TeamSetup, TeamUndo,
};
use std::fmt::Write as _;
use std::path::Path;

/// Prepare this repository for git-mas: create an empty roster (.mas/roster) if there is none; with
/// --team, set up team mode.
///
/// Without --team, writes nothing to git and no refs; the roster is a file you review and commit
/// like code.
///
/// With --team, everything team mode needs, in one call, planned before anything is written (a
/// file it cannot change safely refuses the whole setup): this machine's roster member (the
/// roster entry whose key this machine holds; else a new key and entry named --name, else `git
/// config mas.agent`, else $USER), `git config mas.agent` naming it (when unset), the git hooks,
/// for each host (--host, else every host detected here: its program on PATH or its folder in
/// the project) its hook entries (pre-tool, post-tool, session-end), its MCP registration and
/// the skills (for codex also its trust of the project and of those hooks, in your
/// ~/.codex/config.toml: codex skips an untrusted hook without a word), `git config mas.gate
/// enforce` and `mas.team true`, and a frame when none is published. It prints each file (created, updated or unchanged), each key and the frame, then
/// the commit that shares the setup with the team; it works in this checkout before that
/// commit. Run again, it changes nothing.
///
/// With --team --undo, every file the setup wrote gets its bytes before back (the files it
/// created, and the empty folders it made, are removed), each key its value before (unset when it
/// was), and the git hooks it installed go (a hook you had is restored). A file or key changed
/// since the setup is refused, named, and nothing is undone, unless --force (codex's config.toml,
/// which codex writes too, gets only the setup's trust entries back, the rest kept). The private
/// key the setup created stays (a key is not a repository file, and records signed with it stay
/// in history), and so does the frame (refs/mas is history).
#[derive(Debug, clap::Args)]
#[command(after_long_help = TEAM_HELP)]
pub struct InitArgs {
    /// Set up team mode (see above).
    #[arg(long)]
    pub team: bool,
    /// The name of this machine's roster member when one is created (default: `git config
    /// mas.agent`, else $USER made a valid agent name).
    #[arg(long, value_name = "NAME", requires = "team", conflicts_with = "undo")]
    pub name: Option<String>,
    /// A host to set up (repeatable): claude-code, codex, copilot, gemini, cursor, goose, opencode,
    /// or all. Default: every host detected here.
    #[arg(long = "host", value_name = "HOST", value_parser = parse_hosts, requires = "team", conflicts_with = "undo")]
    pub hosts: Vec<HostChoice>,
    /// Undo the team setup of this repository.
    #[arg(long, requires = "team")]
    pub undo: bool,
    /// With --undo: also restore the files and keys changed since the setup (the bytes before the
    /// setup win; the changes made since are lost).
    #[arg(long, requires = "undo")]
    pub force: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// The record, the exit codes and the `--json` shapes (shown after the options in `--help`).
const TEAM_HELP: &str = "\
The setup records what it changes in <common git dir>/mas-setup/ (manifest.json, and the bytes
each file had before in blobs/), each record flushed to disk before the change it names, so that
--undo can give everything back after a crash at any instant; a second setup keeps the state
before the first. Exit status: 0 done; 1 refused, nothing written (a file that does not parse, a
skills folder holding other files, a name on the roster whose key is not here, no team setup to
undo, a file or key changed since the setup).

With --json: {roster, created}; with --team: {top, member: {name, did, source: roster | flag |
config | user, added, key_path, key_created}, hosts: [{host, chosen: named | detected, detected:
[{by: program, program, path} | {by: marker, marker}], notes}], files: [{path, parts: [roster |
git_hook | hook | mcp | skill], hosts, change: created | updated | unchanged}], config: [{key, value,
previous, change: set | unchanged | kept}], frame: {published, hash, commit}, manifest, commit:
null | {paths, command, needs_roster_signature}, notes}; with --team --undo: {top, files: [{path, part,
change: restored | removed | unchanged, forced}], dirs: [{path, removed}], config: [{key, value,
change: restored | unset | unchanged, forced}], keys_kept, manifest}.";

/// Runs `init`.
pub fn run(ctx: &mut Context, args: InitArgs) -> Result<Outcome, CliError> {
    if args.team && args.undo {
        let done = team_undo(ctx, &args)?;
        render_undo(ctx, args.output, &done.value)?;
        return Ok(done.outcome);
    }
    if args.team {
        let done = team_setup(ctx, &args)?;
        render_setup(ctx, args.output, &done.value)?;
        super::hooks::warn_unless_hook_program(ctx);
        return Ok(done.outcome);
    }
    let store = ctx.store()?;
    let workdir = store.workdir()?.to_path_buf();
    let path = workdir.join(ROSTER_PATH);
    let created = if path.exists() {
        // Validate it, so a broken roster is found now rather than at the first verification.
        store.roster()?;
        false
    } else {
        let dir = path.parent().expect("roster path has a parent");
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::with_message(Kind::Internal, format!("cannot create {}", dir.display()), e))?;
        std::fs::write(&path, ROSTER_HEADER)
            .map_err(|e| CliError::with_message(Kind::Internal, format!("cannot write {}", path.display()), e))?;
        true
    };
    let out = InitOut { roster: ROSTER_PATH.into(), created };
    ctx.ui().emit(args.output, &out, |o| {
        if o.created {
            format!("created {}\n", o.roster)
        } else {
            format!("{} already exists; nothing to do\n", o.roster)
        }
    })?;
    ctx.status("next steps:\n  git mas init --team            set up team mode here (this machine's member, hooks, hosts)\n  git mas agent new <name>      create an agent's key and add it to the roster\n  git add .mas/roster && git commit -m 'Add agents'\n  git config mas.agent <name>   (or --agent / GIT_MAS_AGENT) to act as that agent");
    Ok(Outcome::Ok)
}

/// Sets up team mode in this repository.
pub fn team_setup(ctx: &Context, args: &InitArgs) -> Result<Done<TeamSetup>, CliError> {
    let hosts = if args.hosts.is_empty() {
        Hosts::Detect
    } else {
        let all = args.hosts.contains(&HostChoice::All);
        Hosts::Named(Host::ALL.into_iter().filter(|h| all || args.hosts.contains(&HostChoice::One(*h))).collect())
    };
    let options = Options { name: args.name.clone(), hosts };
    Ok(Done::ok(setup::setup(ctx.store()?, &options, &ProcessEnv)?))
}

/// Undoes the team setup of this repository.
pub fn team_undo(ctx: &Context, args: &InitArgs) -> Result<Done<TeamUndo>, CliError> {
    Ok(Done::ok(setup::undo(ctx.store()?, args.force)?))
}

/// `path` from the top of the working tree when it is inside it.
fn shown(top: &Path, path: &Path) -> String {
    path.strip_prefix(top).map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
}

fn render_setup(ctx: &Context, output: JsonFlag, s: &TeamSetup) -> Result<(), CliError> {
    ctx.ui().emit(output, s, |s| {
        let mut o = String::new();
        let m = &s.member;
        let how = match (m.added, m.key_created) {
            (true, true) => format!("added to {ROSTER_PATH}, new key {}", m.key_path.display()),
            (true, false) => format!("added to {ROSTER_PATH}, key {}", m.key_path.display()),
            (false, _) => format!("on the roster, key {}", m.key_path.display()),
        };
        let _ = writeln!(o, "{:<10} {} ({how})", "member", m.name);
        for h in &s.hosts {
            let why = match h.chosen {
                setup::Chosen::Named => "named".to_string(),
                setup::Chosen::Detected => {
                    let reasons: Vec<String> = h.detected.iter().map(ToString::to_string).collect();
                    format!("detected: {}", reasons.join(", "))
                }
            };
            let _ = writeln!(o, "{:<10} {} ({why})", "host", h.host);
        }
        for f in &s.files {
            let change = match f.change {
                FileChange::Created => "created",
                FileChange::Updated => "updated",
                FileChange::Unchanged => "unchanged",
            };
            let parts: Vec<&str> = f.parts.iter().map(|p| p.label()).collect();
            let hosts: Vec<&str> = f.hosts.iter().map(|h| h.name()).collect();
            let what =
                if hosts.is_empty() { parts.join(", ") } else { format!("{}: {}", parts.join(", "), hosts.join(", ")) };
            let _ = writeln!(o, "{change:<10} {}  ({what})", shown(&s.top, &f.path));
        }
        for c in &s.config {
            let (change, was) = match c.change {
                ConfigChange::Set => ("set", format!(" (was {})", c.previous.as_deref().unwrap_or("unset"))),
                ConfigChange::Unchanged => ("unchanged", String::new()),
                ConfigChange::Kept => ("kept", String::new()),
            };
            let _ = writeln!(o, "{change:<10} config {}={}{was}", c.key, c.value);
        }
        let frame = if s.frame.published { "published" } else { "unchanged" };
        let _ = writeln!(o, "{frame:<10} frame {}", s.frame.hash);
        o
    })?;
    if output.json {
        return Ok(());
    }
    for h in &s.hosts {
        for n in &h.notes {
            ctx.ui().hint(&format!("{}: {n}", h.host));
        }
    }
    for n in &s.notes {
        ctx.ui().hint(n);
    }
    if !s.changed() {
        ctx.status("team mode was set up already: nothing changed");
    }
    match &s.commit {
        Some(c) => {
            ctx.status(&format!("next, share it with the team:\n  {}", c.command));
            if c.needs_roster_signature {
                ctx.ui().hint(&format!(
                    "{ROSTER_PATH} gains {}: the commit needs the signature of an agent on the committed roster \
                     (`git commit --trailer \"$(git mas --agent NAME agent sign-roster)\"`), or `git mas check` \
                     lists it as roster-unsigned",
                    s.member.name
                ));
            }
        }
        None => ctx.status("everything it wrote in the working tree is committed"),
    }
    ctx.status(&format!(
        "sessions started here now act for {}; `git mas init --team --undo` undoes the setup",
        s.member.name
    ));
    Ok(())
}

fn render_undo(ctx: &Context, output: JsonFlag, u: &TeamUndo) -> Result<(), CliError> {
    let top = &u.top;
    ctx.ui().emit(output, u, |u| {
        let mut o = String::new();
        for f in &u.files {
            let change = match f.change {
                FileRestored::Restored => "restored",
                FileRestored::Removed => "removed",
                FileRestored::Unchanged => "unchanged",
            };
            let forced = if f.forced { "  (changed since the setup; forced)" } else { "" };
            let _ = writeln!(o, "{change:<10} {}{forced}", shown(top, &f.path));
        }
        for d in u.dirs.iter().filter(|d| d.removed) {
            let _ = writeln!(o, "{:<10} {}/", "removed", shown(top, &d.path));
        }
        for c in &u.config {
            let change = match c.change {
                ConfigRestored::Restored => "restored",
                ConfigRestored::Unset => "unset",
                ConfigRestored::Unchanged => "unchanged",
            };
            let value = c.value.as_deref().map(|v| format!("={v}")).unwrap_or_default();
            let _ = writeln!(o, "{change:<10} config {}{value}", c.key);
        }
        o
    })?;
    if output.json {
        return Ok(());
    }
    for d in u.dirs.iter().filter(|d| !d.removed && d.path.exists()) {
        ctx.status(&format!("kept {}/: something else is in it", shown(top, &d.path)));
    }
    for k in &u.keys_kept {
        ctx.status(&format!(
            "kept the private key {} (not a repository file; records signed with it stay in history)",
            k.display()
        ));
    }
    ctx.status("kept the frame (refs/mas is history); the team setup is undone");
    Ok(())
}

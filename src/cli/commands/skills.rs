//! `git mas skills`: list the Agent Skills this binary ships and install them where a coding-agent
//! host reads them (see [`git_mas::hosts::skills`] for the host table and the install rules).

use crate::cli::Outcome as Exit;
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::json::Scope;
use crate::cli::json::skills::{SkillRow, SkillsList, SkillsPlaced};
use crate::cli::output::JsonFlag;
use git_mas::hosts::Host;
use git_mas::hosts::ProcessEnv;
use git_mas::hosts::skills::{self, Action, Outcome};
use std::path::PathBuf;

const HOSTS_HELP: &str = "\
Where each host reads skills (project paths are relative to the repository's top level):

  host          project (default)     global (--global)
  claude-code   .claude/skills/       ~/.claude/skills/
  cursor        .cursor/skills/       ~/.cursor/skills/
  copilot       .agents/skills/       ~/.copilot/skills/
  goose         .agents/skills/       $XDG_CONFIG_HOME/goose/skills/ (default ~/.config)
  opencode      .agents/skills/       $XDG_CONFIG_HOME/opencode/skills/ (default ~/.config)
  codex         .agents/skills/       $CODEX_HOME/skills/ (default ~/.codex)

--host all installs for every host at once, as one plan: nothing is written if any folder
conflicts, and .agents/skills (shared by codex, opencode, copilot and goose) is written once.
Any other host: --dir <its skills directory>. Folder names are kept (assembly, converge, git-mas):
a host finds a skill by its folder name. Hops never paste a skill's text into a prompt; they name
the phase, and the host loads the skill.";

/// List the Agent Skills git-mas ships, and install them into a coding agent's skills directory.
///
/// Three skills: `assembly` (the joint-modeling phase), `converge` (the joint-solving phase) and
/// `git-mas` (the working loop: frame, focus, gate, propose, endorse).
#[derive(Debug, clap::Subcommand)]
#[command(after_help = HOSTS_HELP)]
pub enum SkillsCommand {
    /// List the bundled skills with their descriptions.
    List(ListArgs),
    /// Copy the bundled skills into a host's skills directory.
    ///
    /// Each skill's folder is copied whole under its own name. A folder that already holds exactly
    /// these files is left as it is; one that holds something else is a conflict, and then nothing
    /// at all is written (exit 1) unless --force overwrites the shipped files. Files git-mas does not
    /// ship are never touched.
    #[command(after_help = HOSTS_HELP)]
    Install(PlaceArgs),
    /// Remove the bundled skills' folders from a host's skills directory.
    ///
    /// A folder is removed only when it holds exactly the files git-mas ships; a folder with local
    /// edits or extra files is a conflict, and then nothing is removed (exit 1) unless --force.
    #[command(after_help = HOSTS_HELP)]
    Uninstall(PlaceArgs),
}

/// Arguments of `skills list`. With --json: {skills: [{name, description, files}]}.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Where to install or uninstall. With --json: {host, scope: project|global|dir, dir, dirs, dry_run,
/// skills: [{skill, path, action: created|replaced|unchanged|removed|absent}]}.
#[derive(Debug, clap::Args)]
pub struct PlaceArgs {
    /// The host whose skills directory to use, or `all`: every host's, as one plan (a directory
    /// several hosts share, such as `.agents/skills`, written once).
    #[arg(long, value_name = "HOST", default_value = "claude-code", value_parser = host_names())]
    pub host: String,
    /// Use the host's user-wide directory instead of the repository's.
    #[arg(long)]
    pub global: bool,
    /// Use this skills directory instead of a host's.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["host", "global"])]
    pub dir: Option<PathBuf>,
    /// Overwrite (install) or remove (uninstall) folders whose content differs from what git-mas ships.
    #[arg(long)]
    pub force: bool,
    /// Show what would be done, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

fn host_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(Host::ALL.map(Host::name).into_iter().chain(["all"]))
}

/// Runs `skills`.
pub fn run(ctx: &mut Context, cmd: SkillsCommand) -> Result<Exit, CliError> {
    match cmd {
        SkillsCommand::List(args) => list(ctx, args),
        SkillsCommand::Install(args) => place(ctx, args, true),
        SkillsCommand::Uninstall(args) => place(ctx, args, false),
    }
}

fn list(ctx: &Context, args: ListArgs) -> Result<Exit, CliError> {
    let skills = SkillsList {
        skills: skills::bundled()
            .iter()
            .map(|s| SkillRow {
                name: s.name.to_string(),
                description: s.description.to_string(),
                files: s.files.iter().map(|(p, _)| p.to_string()).collect(),
            })
            .collect(),
    };
    ctx.ui().emit(args.output, &skills, |list| {
        list.skills.iter().map(|s| format!("{}\n  {}\n", s.name, s.description)).collect()
    })?;
    Ok(Exit::Ok)
}

fn place(ctx: &mut Context, args: PlaceArgs, install: bool) -> Result<Exit, CliError> {
    let hosts: Vec<Host> = if args.host == "all" {
        Host::ALL.to_vec()
    } else {
        vec![Host::from_name(&args.host).ok_or_else(|| CliError::usage(format!("unknown host {}", args.host)))?]
    };
    let (roots, scope) = match (&args.dir, args.global) {
        (Some(dir), _) => (vec![absolute(ctx, dir)?], Scope::Dir),
        (None, true) => {
            let env = ProcessEnv;
            (hosts.iter().map(|h| h.skills_global_dir(&env)).collect::<Result<Vec<_>, _>>()?, Scope::Global)
        }
        (None, false) => {
            let store = ctx.store().map_err(|e| {
                e.hinted("a project install goes into the repository; outside one, use --global or --dir DIR")
            })?;
            let top = store.workdir().map_err(|e| CliError::new(Kind::User, e))?;
            (hosts.iter().map(|h| top.join(h.skills_project_dir())).collect(), Scope::Project)
        }
    };
    let mut roots_once: Vec<PathBuf> = Vec::new();
    for r in roots {
        if !roots_once.contains(&r) {
            roots_once.push(r);
        }
    }
    let bundled = skills::bundled();
    let outcomes = if install {
        skills::install_all(&bundled, &roots_once, args.force, args.dry_run)
    } else {
        skills::uninstall_all(&bundled, &roots_once, args.force, args.dry_run)
    }?;
    let host_name = if args.host == "all" { "all" } else { hosts[0].name() };
    if args.output.json {
        ctx.ui().json(&SkillsPlaced {
            host: (scope != Scope::Dir).then(|| host_name.to_string()),
            scope,
            dir: (roots_once.len() == 1).then(|| roots_once[0].clone()),
            dirs: roots_once,
            dry_run: args.dry_run,
            skills: outcomes,
        })?;
        return Ok(Exit::Ok);
    }
    let out: String =
        outcomes.iter().map(|o| format!("{:<10} {}\n", label(o, args.dry_run), o.path.display())).collect();
    ctx.ui().out(&out)?;
    if args.dry_run {
        ctx.status("dry run: nothing was changed");
    } else if install && scope == Scope::Project {
        let mut dirs: Vec<&str> = Vec::new();
        for d in hosts.iter().map(|h| h.skills_project_dir()) {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        ctx.status(&format!(
            "installed for {host_name} in this repository; commit {} to share the skills with the team",
            dirs.join(", ")
        ));
    }
    Ok(Exit::Ok)
}

fn label(o: &Outcome, dry_run: bool) -> &'static str {
    match (o.action, dry_run) {
        (Action::Created, false) => "created",
        (Action::Created, true) => "would create",
        (Action::Replaced, false) => "replaced",
        (Action::Replaced, true) => "would replace",
        (Action::Unchanged, _) => "unchanged",
        (Action::Removed, false) => "removed",
        (Action::Removed, true) => "would remove",
        (Action::Absent, _) => "absent",
    }
}

fn absolute(ctx: &Context, dir: &std::path::Path) -> Result<PathBuf, CliError> {
    Ok(if dir.is_absolute() { dir.to_owned() } else { ctx.cwd()?.join(dir) })
}

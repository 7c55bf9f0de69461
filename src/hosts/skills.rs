//! The Agent Skills git-mas ships (`skills/assembly`, `skills/converge`, `skills/git-mas`), embedded
//! in the binary, and where each coding-agent host reads them.
//!
//! Installing copies each skill's folder, under its own name, into the host's skills directory;
//! nothing is ever pasted into a prompt (a hop names the phase, the host loads the skill). The
//! install is planned in full before anything is written: a folder that already holds different
//! content is a conflict, and with one conflict nothing is written unless the caller forces it. A
//! new folder appears whole (written beside its destination, then renamed into place); forcing
//! over an existing folder replaces the shipped files one by one, each by rename, and leaves files
//! git-mas does not ship alone.
//!
//! | host | project (default) | global (`--global`) |
//! |---|---|---|
//! | `claude-code` | `.claude/skills/` | `~/.claude/skills/` |
//! | `cursor` | `.cursor/skills/` | `~/.cursor/skills/` |
//! | `copilot` | `.agents/skills/` | `~/.copilot/skills/` |
//! | `gemini` | `.agents/skills/` | `~/.gemini/skills/` (`$GEMINI_CLI_HOME/.gemini/skills/` when set) |
//! | `goose` | `.agents/skills/` | `$XDG_CONFIG_HOME/goose/skills/` (default `~/.config`) |
//! | `opencode` | `.agents/skills/` | `$XDG_CONFIG_HOME/opencode/skills/` (default `~/.config`) |
//! | `codex` | `.agents/skills/` | `$CODEX_HOME/skills/` (default `~/.codex`) |
//!
//! Project paths are relative to the repository's top level. Decision: **a project install goes
//! where the host reads by default**, and for every host but claude-code and cursor that is the
//! portable `.agents/skills` (codex, opencode, copilot and gemini were seen reading it in the
//! requests the real CLIs send their model; goose's source reads it), so one project install
//! serves them all. Gemini CLI 0.61.0 reads `.gemini/skills` and `.agents/skills` in a project
//! (when its folder is trusted, or run with `--skip-trust`), `~/.gemini/skills` and
//! `~/.agents/skills` for the user (`SkillManager.discoverSkills` in its bundle); it lists each
//! skill's name and description in the system prompt and offers them by name as the `enum` of
//! its `activate_skill` tool (`cargo test --test cli hosts::gemini`).
//! claude-code reads `.claude/skills` and not `.agents/skills`. The global column is the design's
//! host table (Claude Code, Copilot, Goose and OpenCode as listed there; Cursor's and Codex's user
//! directories as those hosts document them).

use super::{Env, Host};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use thiserror::Error;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/skill_files.rs"));
}

/// One bundled skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// The folder name, equal to the front matter's `name`.
    pub name: &'static str,
    /// The front matter's `description`.
    pub description: String,
    /// The folder's files: (path relative to the folder, contents), sorted by path.
    pub files: Vec<(&'static str, &'static [u8])>,
}

/// The skills compiled into this binary, sorted by name. A top-level file of `skills/` (its
/// README) belongs to no skill.
pub fn bundled() -> Vec<Skill> {
    let mut by_name: BTreeMap<&'static str, Vec<(&'static str, &'static [u8])>> = BTreeMap::new();
    for (path, bytes) in embedded::SKILL_FILES {
        if let Some((folder, rest)) = path.split_once('/') {
            by_name.entry(folder).or_default().push((rest, bytes));
        }
    }
    by_name
        .into_iter()
        .filter(|(_, files)| files.iter().any(|(p, _)| *p == "SKILL.md"))
        .map(|(name, files)| {
            let text = files.iter().find(|(p, _)| *p == "SKILL.md").map(|(_, b)| String::from_utf8_lossy(b));
            let description = text.as_deref().and_then(|t| front_matter_value(t, "description")).unwrap_or_default();
            Skill { name, description, files }
        })
        .collect()
}

/// A `key: value` line of a SKILL.md front matter.
fn front_matter_value(text: &str, key: &str) -> Option<String> {
    let rest = text.strip_prefix("---\n")?;
    let (yaml, _) = rest.split_once("\n---")?;
    yaml.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_owned())
    })
}

impl Host {
    /// The project skills directory, relative to the repository's top level.
    pub fn skills_project_dir(self) -> &'static str {
        self.facts().skills.project_dir
    }

    /// The user-wide skills directory under the given environment.
    pub fn skills_global_dir(self, env: &dyn Env) -> Result<PathBuf, SkillsError> {
        self.facts().skills.user_dir.resolve(env).ok_or(SkillsError::NoHome)
    }
}

/// Why skills could not be installed or removed.
#[derive(Debug, Error)]
pub enum SkillsError {
    /// A global destination needs `$HOME`.
    #[error("HOME is not set, so the host's user-wide skills directory is unknown")]
    NoHome,
    /// Some destinations hold other content.
    #[error("{} already hold{} different content: {}", count(.0.len()), if .0.len() == 1 { "s" } else { "" }, describe(.0))]
    Conflicts(Vec<Conflict>),
    /// A file system operation failed.
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

fn count(n: usize) -> String {
    if n == 1 { "one skill folder".into() } else { format!("{n} skill folders") }
}

fn describe(conflicts: &[Conflict]) -> String {
    conflicts
        .iter()
        .map(|c| {
            let mut what = Vec::new();
            if !c.differing.is_empty() {
                what.push(format!("differs in {}", c.differing.join(", ")));
            }
            if !c.extra.is_empty() {
                what.push(format!("also holds {}", c.extra.join(", ")));
            }
            if c.not_a_directory {
                what.push("is not a directory".into());
            }
            format!("{} ({})", c.path.display(), what.join("; "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A destination folder whose content is not what git-mas ships.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The skill.
    pub skill: String,
    /// The folder.
    pub path: PathBuf,
    /// Shipped files whose content there differs (or that are missing).
    pub differing: Vec<String>,
    /// Files there that git-mas does not ship (only a conflict when removing).
    pub extra: Vec<String>,
    /// The destination exists but is not a directory.
    pub not_a_directory: bool,
}

/// What happens (or happened) to one skill folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The folder did not exist and is created.
    Created,
    /// The folder held other content and is overwritten (forced).
    Replaced,
    /// The folder already holds exactly the shipped files.
    Unchanged,
    /// The folder is removed.
    Removed,
    /// There is nothing to remove.
    Absent,
}

/// One skill folder's outcome.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// The skill.
    pub skill: String,
    /// Its folder.
    pub path: PathBuf,
    /// What happens to it.
    pub action: Action,
}

/// How a destination folder compares with a skill.
struct Comparison {
    exists: bool,
    not_a_directory: bool,
    differing: Vec<String>,
    extra: Vec<String>,
}

fn compare(skill: &Skill, dir: &Path) -> Result<Comparison, SkillsError> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Comparison { exists: false, not_a_directory: false, differing: Vec::new(), extra: Vec::new() });
        }
        Err(source) => return Err(SkillsError::Io { action: "inspect", path: dir.to_owned(), source }),
    };
    if !meta.is_dir() {
        return Ok(Comparison { exists: true, not_a_directory: true, differing: Vec::new(), extra: Vec::new() });
    }
    let mut differing = Vec::new();
    for (rel, bytes) in &skill.files {
        match std::fs::read(dir.join(rel)) {
            Ok(have) if have == *bytes => {}
            Ok(_) => differing.push((*rel).to_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => differing.push((*rel).to_owned()),
            Err(source) => return Err(SkillsError::Io { action: "read", path: dir.join(rel), source }),
        }
    }
    let mut present = Vec::new();
    list_files(dir, dir, &mut present)?;
    let shipped: Vec<&str> = skill.files.iter().map(|(p, _)| *p).collect();
    let extra = present.into_iter().filter(|p| !shipped.contains(&p.as_str())).collect();
    Ok(Comparison { exists: true, not_a_directory: false, differing, extra })
}

fn list_files(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), SkillsError> {
    let entries =
        std::fs::read_dir(dir).map_err(|source| SkillsError::Io { action: "list", path: dir.into(), source })?;
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        if path.is_dir() {
            list_files(root, &path, out)?;
        } else if let Ok(rel) = path.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(())
}

/// Plans (and, unless `dry_run`, carries out) copying `skills` into `root/<name>/`.
///
/// Nothing is written when any folder conflicts and `force` is false. Extra files in an existing
/// folder are not a conflict when installing: they stay.
pub fn install(skills: &[Skill], root: &Path, force: bool, dry_run: bool) -> Result<Vec<Outcome>, SkillsError> {
    install_all(skills, std::slice::from_ref(&root.to_path_buf()), force, dry_run)
}

/// [`install`] into every one of `roots` as **one plan**: every folder in every root is compared
/// first, and with one conflict (unless `force`) nothing is written anywhere. A root listed twice
/// is planned once.
pub fn install_all(
    skills: &[Skill],
    roots: &[PathBuf],
    force: bool,
    dry_run: bool,
) -> Result<Vec<Outcome>, SkillsError> {
    let mut plan = Vec::new();
    let mut conflicts = Vec::new();
    for root in dedup(roots) {
        for skill in skills {
            let dir = root.join(skill.name);
            let c = compare(skill, &dir)?;
            let action = if !c.exists {
                Action::Created
            } else if !c.not_a_directory && c.differing.is_empty() {
                Action::Unchanged
            } else {
                conflicts.push(Conflict {
                    skill: skill.name.into(),
                    path: dir.clone(),
                    differing: c.differing,
                    extra: Vec::new(),
                    not_a_directory: c.not_a_directory,
                });
                Action::Replaced
            };
            plan.push((skill, root, Outcome { skill: skill.name.into(), path: dir, action }));
        }
    }
    if !conflicts.is_empty() && !force {
        return Err(SkillsError::Conflicts(conflicts));
    }
    if !dry_run {
        for (skill, root, outcome) in &plan {
            match outcome.action {
                Action::Created => write_new(skill, root, &outcome.path)?,
                Action::Replaced => replace(skill, &outcome.path)?,
                _ => {}
            }
        }
    }
    Ok(plan.into_iter().map(|(_, _, o)| o).collect())
}

/// `roots` without repeats, in their first order.
fn dedup(roots: &[PathBuf]) -> Vec<&PathBuf> {
    let mut out: Vec<&PathBuf> = Vec::new();
    for r in roots {
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// Plans (and, unless `dry_run`, carries out) removing `root/<name>/` for each skill.
///
/// A folder is removed only when it holds exactly the shipped files (nothing of the user's is
/// lost), unless `force`.
pub fn uninstall(skills: &[Skill], root: &Path, force: bool, dry_run: bool) -> Result<Vec<Outcome>, SkillsError> {
    uninstall_all(skills, std::slice::from_ref(&root.to_path_buf()), force, dry_run)
}

/// [`uninstall`] from every one of `roots` as one plan (see [`install_all`]).
pub fn uninstall_all(
    skills: &[Skill],
    roots: &[PathBuf],
    force: bool,
    dry_run: bool,
) -> Result<Vec<Outcome>, SkillsError> {
    let mut plan = Vec::new();
    let mut conflicts = Vec::new();
    for root in dedup(roots) {
        for skill in skills {
            let dir = root.join(skill.name);
            let c = compare(skill, &dir)?;
            let action = if c.exists { Action::Removed } else { Action::Absent };
            if c.exists && (c.not_a_directory || !c.differing.is_empty() || !c.extra.is_empty()) {
                conflicts.push(Conflict {
                    skill: skill.name.into(),
                    path: dir.clone(),
                    differing: c.differing,
                    extra: c.extra,
                    not_a_directory: c.not_a_directory,
                });
            }
            plan.push(Outcome { skill: skill.name.into(), path: dir, action });
        }
    }
    if !conflicts.is_empty() && !force {
        return Err(SkillsError::Conflicts(conflicts));
    }
    if !dry_run {
        for outcome in plan.iter().filter(|o| o.action == Action::Removed) {
            let path = &outcome.path;
            let result = if path.is_dir() { std::fs::remove_dir_all(path) } else { std::fs::remove_file(path) };
            result.map_err(|source| SkillsError::Io { action: "remove", path: path.clone(), source })?;
        }
    }
    Ok(plan)
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> SkillsError + 'a {
    move |source| SkillsError::Io { action, path: path.to_owned(), source }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), SkillsError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io("create", parent))?;
    }
    let mut f = std::fs::File::create(path).map_err(io("write", path))?;
    f.write_all(bytes).map_err(io("write", path))?;
    f.sync_all().map_err(io("write", path))
}

/// Writes the folder beside its destination, then renames it into place.
fn write_new(skill: &Skill, root: &Path, dir: &Path) -> Result<(), SkillsError> {
    std::fs::create_dir_all(root).map_err(io("create", root))?;
    let staging = root.join(format!(".{}.git-mas-{}", skill.name, std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let result = (|| {
        for (rel, bytes) in &skill.files {
            write_file(&staging.join(rel), bytes)?;
        }
        // A whole folder renamed into place (a new skill appears complete or not at all), not one
        // file's bytes: not `fsx::write_atomic`.
        std::fs::rename(&staging, dir).map_err(io("create", dir))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
}

/// Overwrites the shipped files of an existing folder, each written beside itself and renamed.
fn replace(skill: &Skill, dir: &Path) -> Result<(), SkillsError> {
    if std::fs::symlink_metadata(dir).is_ok_and(|m| !m.is_dir()) {
        std::fs::remove_file(dir).map_err(io("replace", dir))?;
    }
    for (rel, bytes) in &skill.files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io("create", parent))?;
        }
        crate::fsx::write_atomic(&path, bytes, None).map_err(io("replace", &path))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_skills_are_bundled_with_their_descriptions() {
        let skills = bundled();
        let names: Vec<&str> = skills.iter().map(|s| s.name).collect();
        assert_eq!(names, ["assembly", "converge", "git-mas"]);
        for s in &skills {
            assert!(s.files.iter().any(|(p, _)| *p == "SKILL.md"), "{}", s.name);
            assert!(!s.description.is_empty(), "{} has a description", s.name);
        }
    }

    #[test]
    fn host_names_round_trip_and_global_dirs_follow_the_environment() {
        for h in Host::ALL {
            assert_eq!(Host::from_name(h.name()), Some(h));
        }
        assert_eq!(Host::from_name("vim"), None);
        struct Vars(&'static [(&'static str, &'static str)]);
        impl Env for Vars {
            fn var(&self, name: &str) -> Option<PathBuf> {
                self.0.iter().find(|(k, _)| *k == name).map(|(_, v)| PathBuf::from(v))
            }
        }
        let env = Vars(&[("HOME", "/h")]);
        assert_eq!(Host::Goose.skills_global_dir(&env).unwrap(), Path::new("/h/.config/goose/skills"));
        assert_eq!(Host::Codex.skills_global_dir(&env).unwrap(), Path::new("/h/.codex/skills"));
        let env = Vars(&[("XDG_CONFIG_HOME", "/x"), ("CODEX_HOME", "/c"), ("GEMINI_CLI_HOME", "/g")]);
        assert_eq!(Host::Gemini.skills_global_dir(&env).unwrap(), Path::new("/g/.gemini/skills"));
        assert_eq!(Host::OpenCode.skills_global_dir(&env).unwrap(), Path::new("/x/opencode/skills"));
        assert_eq!(Host::Codex.skills_global_dir(&env).unwrap(), Path::new("/c/skills"));
        assert!(matches!(Host::ClaudeCode.skills_global_dir(&env), Err(SkillsError::NoHome)));
    }

    #[test]
    fn install_is_idempotent_refuses_to_overwrite_and_uninstall_keeps_foreign_files() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("skills");
        let skills = bundled();
        let first = install(&skills, &root, false, false).unwrap();
        assert!(first.iter().all(|o| o.action == Action::Created));
        for s in &skills {
            for (rel, bytes) in &s.files {
                assert_eq!(std::fs::read(root.join(s.name).join(rel)).unwrap(), *bytes);
            }
        }
        let again = install(&skills, &root, false, false).unwrap();
        assert!(again.iter().all(|o| o.action == Action::Unchanged));

        // A local edit is a conflict: nothing is written, not even the untouched folders.
        let edited = root.join("converge/SKILL.md");
        std::fs::write(&edited, "mine").unwrap();
        std::fs::remove_dir_all(root.join("assembly")).unwrap();
        let err = install(&skills, &root, false, false).unwrap_err();
        assert!(matches!(&err, SkillsError::Conflicts(c) if c.len() == 1 && c[0].differing == ["SKILL.md"]), "{err}");
        assert!(!root.join("assembly").exists(), "nothing was written");
        assert_eq!(std::fs::read_to_string(&edited).unwrap(), "mine");
        // A dry run with --force reports and writes nothing.
        let dry = install(&skills, &root, true, true).unwrap();
        assert_eq!(
            dry.iter().map(|o| o.action).collect::<Vec<_>>(),
            [Action::Created, Action::Replaced, Action::Unchanged]
        );
        assert_eq!(std::fs::read_to_string(&edited).unwrap(), "mine");
        install(&skills, &root, true, false).unwrap();
        assert_ne!(std::fs::read_to_string(&edited).unwrap(), "mine");

        // A foreign file in a folder blocks its removal; the others go.
        std::fs::write(root.join("git-mas/notes.md"), "keep me").unwrap();
        let err = uninstall(&skills, &root, false, false).unwrap_err();
        assert!(matches!(&err, SkillsError::Conflicts(c) if c[0].extra == ["notes.md"]), "{err}");
        assert!(root.join("assembly").exists(), "nothing was removed");
        std::fs::remove_file(root.join("git-mas/notes.md")).unwrap();
        let removed = uninstall(&skills, &root, false, false).unwrap();
        assert!(removed.iter().all(|o| o.action == Action::Removed));
        assert!(skills.iter().all(|s| !root.join(s.name).exists()));
        let absent = uninstall(&skills, &root, false, false).unwrap();
        assert!(absent.iter().all(|o| o.action == Action::Absent));
        // No staging folders are left behind.
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    }
}

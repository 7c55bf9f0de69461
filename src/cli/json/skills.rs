//! `git mas skills list|install|uninstall --json`.

use git_mas::hosts::skills::Outcome;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `skills list --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkillsList {
    /// The bundled skills.
    pub skills: Vec<SkillRow>,
}

/// One bundled skill.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkillRow {
    /// Its name (the folder's).
    pub name: String,
    /// Its description (from SKILL.md).
    pub description: String,
    /// Its files, relative to its folder.
    pub files: Vec<String>,
}

/// `skills install|uninstall --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkillsPlaced {
    /// The host (`all` for every host; absent with --dir).
    pub host: Option<String>,
    /// `project`, `global` or `dir`.
    pub scope: super::Scope,
    /// The skills directory, when there is one.
    pub dir: Option<PathBuf>,
    /// Every skills directory written (several for `--host all`).
    pub dirs: Vec<PathBuf>,
    /// Whether nothing was changed (--dry-run).
    pub dry_run: bool,
    /// What happened to each skill folder.
    pub skills: Vec<Outcome>,
}

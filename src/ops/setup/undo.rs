//! The undo of a team setup: every file, folder and configuration key the [`super::journal`]
//! names is given back what it had before the first setup, after checking that none was changed
//! since (see the module docs of [`super`] for what a kill leaves).

use super::journal::{self, ConfigEntry, FileEntry, Journal, Part};
use super::{Changed, SetupError, git, local_config, record_dir, top_of};
use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What undo did to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileRestored {
    /// Its bytes before the setup are back.
    Restored,
    /// The setup created it; it is gone.
    Removed,
    /// It was as before already (an undo or a setup killed midway).
    Unchanged,
}

/// One file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoneFile {
    /// The file.
    pub path: PathBuf,
    /// What it was to the setup.
    pub part: Part,
    /// What undo did.
    pub change: FileRestored,
    /// Whether it had been changed since the setup (undone only because of `force`).
    pub forced: bool,
}

/// One folder the setup created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoneDir {
    /// The folder.
    pub path: PathBuf,
    /// Whether undo removed it (it is kept when something else is in it, and was gone already
    /// when neither).
    pub removed: bool,
}

/// What undo did to a configuration key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfigRestored {
    /// Its value before is back.
    Restored,
    /// It was unset before; it is unset.
    Unset,
    /// It had its value before already.
    Unchanged,
}

/// One configuration key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoneConfig {
    /// The key.
    pub key: String,
    /// Its value now (`None`: unset).
    pub value: Option<String>,
    /// What undo did.
    pub change: ConfigRestored,
    /// Whether it had been changed since the setup.
    pub forced: bool,
}

/// What [`undo`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamUndo {
    /// The top of the working tree.
    pub top: PathBuf,
    /// Every file the setup wrote.
    pub files: Vec<UndoneFile>,
    /// Every folder it created, innermost first.
    pub dirs: Vec<UndoneDir>,
    /// Every configuration key it set.
    pub config: Vec<UndoneConfig>,
    /// The private keys it created, left where they are (a key is not a repository file).
    pub keys_kept: Vec<PathBuf>,
    /// The record that was read and removed.
    pub manifest: PathBuf,
}

/// Whether `path` is a codex project hooks file (`<top>/.codex/hooks.json`).
fn is_codex_hooks(path: &Path) -> bool {
    path.parent().is_some_and(|dir| crate::hosts::trust::codex_project_hooks(dir.parent().unwrap_or(dir)) == path)
}

/// What to do with one file.
enum Step {
    Keep,
    Write(Vec<u8>, u32),
    Remove,
}

/// Undoes the team setup of the repository of `store` (see the module docs of [`super`]). Refused
/// with nothing changed when there is no record ([`SetupError::NoManifest`]), or when a file or key
/// was changed since the setup ([`SetupError::Changed`]) and `force` is false; with `force`, the
/// state before the setup wins.
pub fn undo(store: &Store, force: bool) -> Result<TeamUndo, SetupError> {
    let path = record_dir(store).join(journal::MANIFEST);
    if !path.is_file() {
        return Err(SetupError::NoManifest { path });
    }
    let journal = Journal::open(store.common_dir())?;
    if !journal.exists {
        return Err(SetupError::NoManifest { path });
    }
    let top = top_of(store)?;
    let manifest = journal.manifest.clone();
    let mut changed = Vec::new();
    let mut steps = Vec::new();
    for entry in &manifest.files {
        let current = journal::read(&entry.path)?;
        let hash = current.as_ref().map(|(b, _)| journal::sha256(b));
        let as_before = match (&entry.before, &current, &hash) {
            (None, None, _) => true,
            (Some(before), Some((_, mode)), Some(h)) => *h == before.sha256 && *mode == before.mode,
            _ => false,
        };
        let as_setup_left = hash.as_deref() == Some(entry.after.as_str())
            // Killed between its write and its mode: the bytes are back, the mode is not.
            || entry.before.as_ref().is_some_and(|b| hash.as_deref() == Some(b.sha256.as_str()));
        let forced = !as_before && !as_setup_left;
        // Codex's own file, which codex writes too: changed since, only our entries are taken
        // back, the rest kept as it is now.
        if forced
            && entry.part == Part::Trust
            && let Some((bytes, mode)) = &current
        {
            let back = trust_taken_back(&journal, entry, bytes, &top)?;
            steps.push((entry, Step::Write(back.into_bytes(), *mode), false));
            continue;
        }
        if forced {
            let shown = entry.path.strip_prefix(&top).unwrap_or(&entry.path);
            changed.push(Changed { what: shown.display().to_string() });
        }
        let step = match &entry.before {
            _ if as_before => Step::Keep,
            None => Step::Remove,
            // Read now, so that a missing blob refuses before anything is changed.
            Some(before) => Step::Write(journal.blob(before)?, before.mode),
        };
        steps.push((entry, step, forced));
    }
    let mut config_steps = Vec::new();
    for entry in &manifest.config {
        let current = local_config(&top, &entry.key)?;
        let as_before = current == entry.before;
        let forced = !as_before && current.as_deref() != Some(entry.after.as_str());
        if forced {
            changed.push(Changed { what: format!("config {}", entry.key) });
        }
        config_steps.push((entry, as_before, forced));
    }
    if !changed.is_empty() && !force {
        return Err(SetupError::Changed { changed });
    }

    // Checked: from here on each step is made, the last setup's first.
    let mut files = Vec::new();
    for (entry, step, forced) in steps.into_iter().rev() {
        journal::sweep_beside(&entry.path);
        let change = restore_file(entry, step, &top)?;
        files.push(UndoneFile { path: entry.path.clone(), part: entry.part, change, forced });
    }
    files.reverse();
    let mut dirs = Vec::new();
    for dir in manifest.dirs.iter().rev() {
        let removed = std::fs::remove_dir(dir).is_ok();
        if removed && let Some(parent) = dir.parent() {
            journal::sync_dir(parent);
        }
        dirs.push(UndoneDir { path: dir.clone(), removed });
    }
    let mut config = Vec::new();
    for (entry, as_before, forced) in config_steps.into_iter().rev() {
        let change = restore_config(&top, entry, as_before)?;
        config.push(UndoneConfig { key: entry.key.clone(), value: entry.before.clone(), change, forced });
    }
    config.reverse();
    let manifest_path = journal.manifest_path();
    let keys_kept = manifest.keys.iter().map(|k| k.path.clone()).filter(|p| p.exists()).collect();
    journal.remove()?;
    Ok(TeamUndo { top, files, dirs, config, keys_kept, manifest: manifest_path })
}

/// Codex's trust file as it is now with only the setup's entries taken back (codex writes that file
/// too: what it added since is kept).
fn trust_taken_back(journal: &Journal, entry: &FileEntry, bytes: &[u8], top: &Path) -> Result<String, SetupError> {
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).map_err(|_| SetupError::NotText { path: entry.path.clone() });
    let before = entry.before.as_ref().map(|b| journal.blob(b)).transpose()?;
    let before = before.as_deref().map(text).transpose()?;
    // The project as the setup named it (undo may run in another worktree).
    let hooks_file = journal
        .manifest
        .files
        .iter()
        .filter(|f| f.part == Part::Hook)
        .map(|f| &f.path)
        .find(|p| is_codex_hooks(p))
        .cloned()
        .unwrap_or_else(|| crate::hosts::trust::codex_project_hooks(top));
    let project = hooks_file.parent().and_then(Path::parent).unwrap_or(top).to_path_buf();
    Ok(crate::hosts::trust::codex_trust_taken_back(
        &text(bytes)?,
        before.as_deref(),
        &entry.path,
        &project,
        &hooks_file,
    )?)
}

/// Puts one configuration key back as it was before the setup (unset when it was not set).
fn restore_config(top: &Path, entry: &ConfigEntry, as_before: bool) -> Result<ConfigRestored, SetupError> {
    Ok(match (&entry.before, as_before) {
        (_, true) => ConfigRestored::Unchanged,
        (None, false) => {
            git(top, &["config", "--local", "--unset-all", &entry.key])?;
            ConfigRestored::Unset
        }
        (Some(value), false) => {
            git(top, &["config", "--local", &entry.key, value])?;
            ConfigRestored::Restored
        }
    })
}

/// Makes one file's step: leaves it, writes its bytes back, or removes it.
fn restore_file(entry: &FileEntry, step: Step, top: &Path) -> Result<FileRestored, SetupError> {
    Ok(match step {
        Step::Keep => FileRestored::Unchanged,
        Step::Write(bytes, mode) => {
            journal::write_atomic(&entry.path, &bytes, mode)?;
            FileRestored::Restored
        }
        Step::Remove => {
            match std::fs::remove_file(&entry.path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(journal::io("remove", &entry.path, e)),
            }
            journal::sync_dir(entry.path.parent().unwrap_or(top));
            FileRestored::Removed
        }
    })
}

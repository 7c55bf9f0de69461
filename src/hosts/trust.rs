//! Whether a host will actually run the edit hook `hooks install --host` wrote: several hosts
//! load a project's hooks only in a folder the user trusts, and Codex runs a hook only once that
//! exact hook is trusted. An installed file the host ignores protects nothing, so `hooks status`
//! reads the host's own trust files and says what it finds ([`Effect`]), and `hooks install
//! --trust` writes Codex's and Gemini's trust itself (the hosts whose trust is a plain file entry
//! we can compute; for the others the remedy says what to do).
//!
//! What each host's files say (measured with the real CLIs 2026-12-01, see [`super::hooks`]'s
//! module docs):
//!
//! - Codex 0.171.0: the project must be trusted in the user's `config.toml` (`$CODEX_HOME`, else
//!   `~/.codex`) as `[projects."<abs project root>"] trust_level = "trusted"`, and each hook must be
//!   trusted as `[hooks.state."<abs path of hooks.json>:pre_tool_use:<group>:<handler>"]
//!   trusted_hash = "sha256:…"`, the hash of a normalized identity of the hook (its event, its
//!   group's matcher and the one handler with the defaults filled in, serialized as JSON with
//!   sorted keys; `codex-rs/hooks/src/engine/discovery.rs` `command_hook_hash`,
//!   `codex-rs/config/src/fingerprint.rs` `version_for_toml`). A different hash is a hook changed
//!   since it was trusted, and codex skips it without a word. `enabled = false` there disables it.
//!   Each handler is trusted on its own, under its event's name (`pre_tool_use`, `post_tool_use`,
//!   `session_end`): with the pre-tool entry alone trusted, codex 0.171.0 ran it and skipped the
//!   post-tool and session-end entries, so a team-mode session's claims outlived it. Its
//!   app-server's `hooks/list` gave each entry's key and `currentHash`; a `SessionEnd` hook's
//!   timeout is clamped to 3 s, and the clamped value is what is hashed.
//! - Copilot CLI 1.0.102: `trusted_folders` in `$COPILOT_HOME/config.json` (else
//!   `~/.copilot/config.json`), a list of absolute folders; a folder trusts what is under it.
//! - Gemini CLI 0.61.0: `~/.gemini/trustedFolders.json` (`$GEMINI_CLI_TRUSTED_FOLDERS_PATH` when
//!   set; `$GEMINI_CLI_HOME/.gemini/` for `~/.gemini/`), an object from absolute path to
//!   `TRUST_FOLDER` (that folder and below), `TRUST_PARENT` (its parent and below) or
//!   `DO_NOT_TRUST`; `GEMINI_CLI_TRUST_WORKSPACE=true` trusts the workspace for that process.
//!   Untrusted, gemini reads none of the project's `.gemini/settings.json` (hooks, MCP servers)
//!   and, headless, refuses to run (exit 55); `--skip-trust` makes it run without reading them.
//!   `hooks install --host gemini --trust` writes `"<project>": "TRUST_FOLDER"` there; then a
//!   plain headless `gemini` in the project was refused the held file (`cargo test --test cli
//!   hosts::gemini`).
//!
//! Everything here is read from files; a host may still refuse for a reason its files do not show
//! (a managed policy, a flag on its command line), which is why the state says "as far as its
//! files tell".

use super::files::{HostHookError, read, write_atomic};
use super::{Env, Host, Scope};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What the host's own files say about the installed hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Effect {
    /// Whether the host will load and run the hook, as far as its files tell.
    pub loaded: bool,
    /// Why (or why not), e.g. "project not trusted by codex".
    pub reason: String,
    /// What to do when it is not loaded.
    pub remedy: Option<String>,
}

impl Effect {
    fn loaded(reason: impl Into<String>) -> Self {
        Effect { loaded: true, reason: reason.into(), remedy: None }
    }

    fn not_loaded(reason: impl Into<String>, remedy: impl Into<String>) -> Self {
        Effect { loaded: false, reason: reason.into(), remedy: Some(remedy.into()) }
    }
}

/// Codex's user configuration file.
pub fn codex_config(env: &dyn Env) -> Option<PathBuf> {
    let dir = env.var("CODEX_HOME").or_else(|| env.var("HOME").map(|h| h.join(".codex")))?;
    Some(dir.join("config.toml"))
}

/// One handler of ours in a codex hooks file, as codex names and hashes it for its trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexHook {
    /// Codex's name of its event (`pre_tool_use`, `post_tool_use`, `session_end`).
    pub event: &'static str,
    /// The group's index in the event's list.
    pub group: usize,
    /// The handler's index in the group.
    pub handler: usize,
    /// The hash codex computes for it ([`codex_hook_hash`]).
    pub hash: String,
}

impl CodexHook {
    /// The key codex files the hook's trust under in `hooks_file` (absolute).
    pub fn key(&self, hooks_file: &Path) -> String {
        codex_hook_key(hooks_file, self.event, self.group, self.handler)
    }
}

/// The key codex files a hook's trust under: the hooks file's absolute path, codex's name of the
/// event, the group's index in the event's list and the handler's in the group.
pub fn codex_hook_key(hooks_file: &Path, event: &str, group: usize, handler: usize) -> String {
    format!("{}:{event}:{group}:{handler}", hooks_file.display())
}

/// Codex's name of each event our entries go under, as its trust keys and hashes spell it (its
/// 0.171.0 binary names them so).
const CODEX_EVENTS: [(&str, &str); 3] =
    [("PreToolUse", "pre_tool_use"), ("PostToolUse", "post_tool_use"), ("SessionEnd", "session_end")];

/// Every handler of ours in a codex hooks file (`hooks.<Event>[group].hooks[handler]`), pre-tool
/// first, each with the hash codex computes for it; none when the file holds no handler of ours.
pub fn codex_our_hooks(text: &str) -> Vec<CodexHook> {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else { return Vec::new() };
    let mut found = Vec::new();
    for (name, event) in CODEX_EVENTS {
        let groups = doc.get("hooks").and_then(|h| h.get(name)).and_then(|g| g.as_array());
        for (g, group) in groups.into_iter().flatten().enumerate() {
            let Some(handlers) = group.get("hooks").and_then(|h| h.as_array()) else { continue };
            for (h, handler) in handlers.iter().enumerate() {
                let ours = handler.get("command").and_then(|c| c.as_str()).is_some_and(super::hooks::is_our_command);
                if ours {
                    let matcher = group.get("matcher").and_then(|m| m.as_str());
                    let hash = codex_hook_hash(event, matcher, handler);
                    found.push(CodexHook { event, group: g, handler: h, hash });
                }
            }
        }
    }
    found
}

/// The longest codex 0.171.0 gives a `SessionEnd` hook, in seconds: a longer timeout is clamped
/// to it ("clamping SessionEnd hook timeout to 3s", its `hooks/list` warns), and the clamped
/// value is what it hashes.
pub const CODEX_SESSION_END_MAX_SECS: u64 = 3;

/// Codex's trust hash of one command handler under `matcher` for `event` (codex's name of it):
/// SHA-256 of the compact JSON, keys sorted, of `{event_name, matcher, hooks: [handler]}` with
/// the handler normalized as codex does (timeout defaulted to 600 s and at least 1, at most
/// [`CODEX_SESSION_END_MAX_SECS`] for `session_end`, `async` false unless set, `statusMessage`
/// only when set, no Windows command).
pub fn codex_hook_hash(event: &str, matcher: Option<&str>, handler: &serde_json::Value) -> String {
    use serde_json::Value;
    use sha2::Digest as _;
    let command = handler.get("command").and_then(Value::as_str).unwrap_or_default();
    let mut timeout =
        handler.get("timeout").or_else(|| handler.get("timeoutSec")).and_then(Value::as_u64).unwrap_or(600).max(1);
    if event == "session_end" {
        timeout = timeout.min(CODEX_SESSION_END_MAX_SECS);
    }
    let mut normalized: BTreeMap<&str, Value> = BTreeMap::new();
    normalized.insert("type", "command".into());
    normalized.insert("command", command.into());
    normalized.insert("timeout", timeout.into());
    normalized.insert("async", handler.get("async").and_then(Value::as_bool).unwrap_or(false).into());
    if let Some(m) = handler.get("statusMessage").and_then(Value::as_str) {
        normalized.insert("statusMessage", m.into());
    }
    let mut identity: BTreeMap<&str, Value> = BTreeMap::new();
    identity.insert("event_name", event.into());
    identity.insert("hooks", Value::Array(vec![serde_json::to_value(&normalized).unwrap_or_default()]));
    if let Some(m) = matcher {
        identity.insert("matcher", m.into());
    }
    // A BTreeMap serializes its keys sorted, whatever serde_json's map type is.
    let text = serde_json::to_string(&identity).unwrap_or_default();
    let digest = sha2::Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// What codex's `config` (its text, `None`: no file) says about our hooks, each `(key, hash)`
/// in `hooks`, in the project `project` (`None`: the user-wide hooks file, which needs no
/// project trust): loaded only when every one of them is trusted (an untrusted one is skipped
/// without a word, so a post-tool or session-end hook left untrusted is a shell write kept or a
/// claim that outlives its session). `trust_command` is the command that trusts them all.
pub fn codex_effect(
    config: Option<&str>,
    config_path: &Path,
    project: Option<&Path>,
    hooks: &[(String, String)],
    trust_command: &str,
) -> Effect {
    let doc = config.and_then(|c| c.parse::<toml_edit::DocumentMut>().ok());
    let get = |path: &[&str]| -> Option<toml_edit::Item> {
        let mut item = doc.as_ref()?.as_item().clone();
        for p in path {
            item = item.get(p)?.clone();
        }
        Some(item)
    };
    let remedy = |what: &str| {
        format!(
            "run `{trust_command}` (it writes {what} to {}), or trust it in codex (start `codex` here, accept the \
             project, then open /hooks and trust the git mas hooks)",
            config_path.display()
        )
    };
    if let Some(project) = project {
        let root = project.display().to_string();
        let level = get(&["projects", &root, "trust_level"]);
        if level.as_ref().and_then(|l| l.as_str()) != Some("trusted") {
            return Effect::not_loaded(
                "project not trusted by codex",
                remedy(&format!("[projects.\"{root}\"] trust_level = \"trusted\" and the hooks' trusted_hash")),
            );
        }
    }
    for (key, hash) in hooks {
        let state = |field: &str| get(&["hooks", "state", key, field]);
        if state("enabled").and_then(|e| e.as_bool()) == Some(false) {
            return Effect::not_loaded(
                "hook disabled in codex",
                format!("enable it in codex's /hooks, or remove enabled = false under [hooks.state.\"{key}\"]"),
            );
        }
        match state("trusted_hash").as_ref().and_then(|h| h.as_str()) {
            Some(h) if h == hash => {}
            Some(_) => {
                return Effect::not_loaded(
                    "hook changed since codex trusted it",
                    remedy(&format!("the hook's new trusted_hash under [hooks.state.\"{key}\"]")),
                );
            }
            None => {
                return Effect::not_loaded(
                    "hook not trusted by codex",
                    remedy(&format!("trusted_hash = \"{hash}\" under [hooks.state.\"{key}\"]")),
                );
            }
        }
    }
    Effect::loaded("project and hooks trusted by codex")
}

/// Codex's `config` with the project (when given) and each of our hooks, `(key, hash)` in
/// `hooks`, trusted, every other byte kept; `None` when it already says so.
pub fn codex_trusted(
    config: Option<&str>,
    config_path: &Path,
    project: Option<&Path>,
    hooks: &[(String, String)],
) -> Result<Option<String>, HostHookError> {
    use toml_edit::{DocumentMut, Item, Table, value};
    let mut doc = match config {
        Some(text) => text.parse::<DocumentMut>().map_err(|e| HostHookError::Invalid {
            path: config_path.to_path_buf(),
            syntax: "TOML",
            reason: e.to_string(),
        })?,
        None => DocumentMut::new(),
    };
    let shape = |what: &str| HostHookError::Shape { path: config_path.to_path_buf(), what: what.into() };
    // A table under `parent` (made implicit, so only its sub-tables show as headers).
    fn table<'t>(parent: &'t mut toml_edit::Table, name: &str, implicit: bool) -> Option<&'t mut Table> {
        let item = parent.entry(name).or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(implicit);
            Item::Table(t)
        });
        item.as_table_mut()
    }
    let before = doc.to_string();
    if let Some(project) = project {
        let projects = table(doc.as_table_mut(), "projects", true).ok_or_else(|| shape("projects is not a table"))?;
        let entry = table(projects, &project.display().to_string(), false)
            .ok_or_else(|| shape("a projects entry is not a table"))?;
        if entry.get("trust_level").and_then(|l| l.as_str()) != Some("trusted") {
            entry.insert("trust_level", value("trusted"));
        }
    }
    let section = table(doc.as_table_mut(), "hooks", true).ok_or_else(|| shape("hooks is not a table"))?;
    let state = table(section, "state", true).ok_or_else(|| shape("hooks.state is not a table"))?;
    for (key, hash) in hooks {
        let entry = table(state, key, false).ok_or_else(|| shape("a hooks.state entry is not a table"))?;
        if entry.get("trusted_hash").and_then(|h| h.as_str()) != Some(hash.as_str()) {
            entry.insert("trusted_hash", value(hash.as_str()));
        }
    }
    let after = doc.to_string();
    Ok((after != before).then_some(after))
}

/// The codex hooks file of the project at `top` (absolute; `top` as given).
pub fn codex_project_hooks(top: &Path) -> PathBuf {
    let facts = Host::Codex.facts().hooks;
    top.join(facts.project_dir).join(facts.file)
}

/// Codex's `config` with the project at `top` and each handler of ours in its hooks file (whose
/// text is `hooks_text`, at `hooks_file`) trusted, as [`codex_trusted`]; `None` when it says so
/// already or the hooks file holds none of ours.
pub fn codex_project_trusted(
    config: Option<&str>,
    config_path: &Path,
    top: &Path,
    hooks_file: &Path,
    hooks_text: &str,
) -> Result<Option<String>, HostHookError> {
    let hooks: Vec<(String, String)> =
        codex_our_hooks(hooks_text).into_iter().map(|h| (h.key(hooks_file), h.hash)).collect();
    if hooks.is_empty() {
        return Ok(None);
    }
    codex_trusted(config, config_path, Some(top), &hooks)
}

/// Codex's `config` (`current`, changed since the trust was written) with that trust taken back:
/// the project's entry `projects."<top>"` and every `hooks.state` entry of `hooks_file` as they
/// were in `before` (removed when `before` has none), every other byte as it is now. What an undo
/// of the team setup writes when codex (or the user) changed the file after the setup.
pub fn codex_trust_taken_back(
    current: &str,
    before: Option<&str>,
    config_path: &Path,
    top: &Path,
    hooks_file: &Path,
) -> Result<String, HostHookError> {
    use toml_edit::DocumentMut;
    let parse = |text: &str| {
        text.parse::<DocumentMut>().map_err(|e| HostHookError::Invalid {
            path: config_path.to_path_buf(),
            syntax: "TOML",
            reason: e.to_string(),
        })
    };
    let mut doc = parse(current)?;
    let before = before.map(parse).transpose()?;
    let project = top.display().to_string();
    let prefix = format!("{}:", hooks_file.display());
    let old = |section: &str, sub: Option<&str>, key: &str| -> Option<toml_edit::Item> {
        let mut table = before.as_ref()?.get(section)?.as_table()?;
        if let Some(sub) = sub {
            table = table.get(sub)?.as_table()?;
        }
        table.get(key).cloned()
    };
    if let Some(projects) = doc.get_mut("projects").and_then(|p| p.as_table_mut()) {
        match old("projects", None, &project) {
            Some(item) => {
                projects.insert(&project, item);
            }
            None => {
                projects.remove(&project);
            }
        }
    }
    let state = doc.get_mut("hooks").and_then(|h| h.as_table_mut()).and_then(|h| h.get_mut("state"));
    if let Some(state) = state.and_then(|s| s.as_table_mut()) {
        let ours: Vec<String> = state.iter().map(|(k, _)| k.to_string()).filter(|k| k.starts_with(&prefix)).collect();
        for key in ours {
            match old("hooks", Some("state"), &key) {
                Some(item) => {
                    state.insert(&key, item);
                }
                None => {
                    state.remove(&key);
                }
            }
        }
    }
    // Tables left empty by the removal, when they were not there before.
    for (section, sub) in [("hooks", Some("state")), ("hooks", None), ("projects", None)] {
        let had = before.as_ref().is_some_and(|b| match sub {
            Some(sub) => b.get(section).and_then(|t| t.as_table()).is_some_and(|t| t.contains_key(sub)),
            None => b.contains_key(section),
        });
        if had {
            continue;
        }
        match sub {
            Some(sub) => {
                if let Some(t) = doc.get_mut(section).and_then(|t| t.as_table_mut())
                    && t.get(sub).and_then(|s| s.as_table()).is_some_and(|s| s.is_empty())
                {
                    t.remove(sub);
                }
            }
            None => {
                if doc.get(section).and_then(|t| t.as_table()).is_some_and(|t| t.is_empty()) {
                    doc.remove(section);
                }
            }
        }
    }
    Ok(doc.to_string())
}

/// Whether `dir` is `folder` or under it.
fn under(dir: &Path, folder: &Path) -> bool {
    dir.starts_with(folder)
}

/// What copilot's `config` (`config.json`) says about loading `dir`'s hooks.
pub fn copilot_effect(config: Option<&str>, config_path: &Path, dir: &Path) -> Effect {
    let folders: Vec<PathBuf> = config
        .and_then(|c| jsonc_parser::parse_to_serde_value::<serde_json::Value>(c, &Default::default()).ok())
        .and_then(|v| v.get("trusted_folders").and_then(|f| f.as_array()).cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|f| f.as_str().map(PathBuf::from))
        .collect();
    if folders.iter().any(|f| under(dir, f)) {
        return Effect::loaded("folder trusted by copilot");
    }
    Effect::not_loaded(
        "folder not trusted by copilot",
        format!(
            "add \"{}\" to trusted_folders in {} (copilot offers it when started here interactively), or run \
             copilot with --trust-folder",
            dir.display(),
            config_path.display()
        ),
    )
}

/// What gemini's `trustedFolders.json` says about loading `dir`'s hooks; `env_trusts`:
/// `GEMINI_CLI_TRUST_WORKSPACE=true` in this environment; `command`: what writes the trust.
pub fn gemini_effect(
    folders: Option<&str>,
    folders_path: &Path,
    dir: &Path,
    env_trusts: bool,
    command: &str,
) -> Effect {
    if env_trusts {
        return Effect::loaded("workspace trusted by GEMINI_CLI_TRUST_WORKSPACE=true in this environment");
    }
    let map = folders
        .and_then(|c| jsonc_parser::parse_to_serde_value::<serde_json::Value>(c, &Default::default()).ok())
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default();
    // The most specific rule wins.
    let mut best: Option<(usize, bool)> = None;
    for (path, level) in &map {
        let path = Path::new(path);
        let (scope, trusted) = match level.as_str() {
            Some("TRUST_FOLDER") => (path, true),
            Some("TRUST_PARENT") => (path.parent().unwrap_or(path), true),
            Some("DO_NOT_TRUST") => (path, false),
            _ => continue,
        };
        let depth = scope.components().count();
        if under(dir, scope) && best.is_none_or(|(d, _)| depth >= d) {
            best = Some((depth, trusted));
        }
    }
    if best.is_some_and(|(_, trusted)| trusted) {
        return Effect::loaded("folder trusted by gemini");
    }
    Effect::not_loaded(
        "folder not trusted by gemini",
        format!(
            "run `{command}` (it adds \"{}\": \"TRUST_FOLDER\" to {}; gemini asks when started here \
             interactively), or run gemini with GEMINI_CLI_TRUST_WORKSPACE=true",
            dir.display(),
            folders_path.display()
        ),
    )
}

/// Gemini's trusted-folders file: `$GEMINI_CLI_TRUSTED_FOLDERS_PATH`, else `trustedFolders.json`
/// in its user folder (`~/.gemini`, `$GEMINI_CLI_HOME/.gemini` when set).
pub fn gemini_folders(env: &dyn Env) -> Option<PathBuf> {
    if let Some(path) = env.var("GEMINI_CLI_TRUSTED_FOLDERS_PATH") {
        return Some(path);
    }
    Host::Gemini.facts().hooks.user_dir.resolve(env).map(|dir| dir.join("trustedFolders.json"))
}

/// Gemini's `trustedFolders.json` (`folders`, at `path`; `None`: absent) with `dir` trusted as
/// `TRUST_FOLDER`, the rest of its bytes as they were: `None` when it trusts `dir` already. An
/// entry of `dir`'s own (`DO_NOT_TRUST`, say) gets the new level; a file gemini would not read is
/// refused.
pub fn gemini_trusted(folders: Option<&str>, path: &Path, dir: &Path) -> Result<Option<String>, HostHookError> {
    if gemini_effect(folders, path, dir, false, "").loaded {
        return Ok(None);
    }
    let key = dir.display().to_string();
    let level = serde_json::Value::from("TRUST_FOLDER");
    let Some(text) = folders.filter(|t| !t.trim().is_empty()) else {
        let mut top = serde_json::Map::new();
        top.insert(key, level);
        return Ok(Some(super::edit::pretty(&serde_json::Value::Object(top))));
    };
    let top = super::edit::parse_object(path, text, true)?;
    let mut out = text.to_string();
    match top.properties.iter().find(|p| p.name.as_str() == key) {
        Some(own) => {
            use jsonc_parser::common::Ranged;
            let range = own.value.range();
            out.replace_range(range.start..range.end, &level.to_string());
        }
        None => {
            let last = top.properties.last().map(|p| p.range);
            out = super::edit::append(text, top.range, last, Some(&key), &level);
        }
    }
    Ok(Some(out))
}

/// The project root as hosts key it: the working tree's top, with symlinks resolved.
fn root_of(scope: &Scope) -> Option<PathBuf> {
    match scope {
        Scope::Project(top) => Some(std::fs::canonicalize(top).unwrap_or_else(|_| top.clone())),
        Scope::Global => None,
    }
}

/// The command that trusts `host`'s hook in `scope`.
fn trust_command(host: Host, scope: &Scope) -> String {
    let global = if matches!(scope, Scope::Global) { " --global" } else { "" };
    format!("git mas hooks install --host {}{global} --trust", host.name())
}

/// What `host`'s files say about its installed hook in `scope`; `None` for a host with no trust
/// gate we know of, or where its files do not decide (codex's project hooks in a linked worktree
/// are read from the main checkout: `hooks::notes` says so).
pub fn effect(host: Host, scope: &Scope, env: &dyn Env) -> Result<Option<Effect>, HostHookError> {
    let linked = matches!(scope, Scope::Project(top) if top.join(".git").is_file());
    let home = env.var("HOME");
    match host {
        Host::Codex if !linked => {
            let hooks = codex_hooks(scope, env)?;
            if hooks.is_empty() {
                return Ok(None);
            }
            let Some(config_path) = codex_config(env) else { return Ok(None) };
            let config = read(&config_path)?;
            let project = root_of(scope);
            let command = trust_command(host, scope);
            Ok(Some(codex_effect(config.as_deref(), &config_path, project.as_deref(), &hooks, &command)))
        }
        Host::Copilot => {
            let Some(dir) = root_of(scope) else { return Ok(None) };
            let Some(base) = env.var("COPILOT_HOME").or_else(|| home.map(|h| h.join(".copilot"))) else {
                return Ok(None);
            };
            let path = base.join("config.json");
            Ok(Some(copilot_effect(read(&path)?.as_deref(), &path, &dir)))
        }
        Host::Gemini => {
            let Some(dir) = root_of(scope) else { return Ok(None) };
            let Some(path) = gemini_folders(env) else { return Ok(None) };
            let env_trusts = env.var("GEMINI_CLI_TRUST_WORKSPACE").is_some_and(|v| v.as_os_str() == "true");
            let command = trust_command(host, scope);
            Ok(Some(gemini_effect(read(&path)?.as_deref(), &path, &dir, env_trusts, &command)))
        }
        _ => Ok(None),
    }
}

/// Each handler of ours in the codex hooks file of `scope` as `(key, hash)` (the file's path
/// absolute, symlinks resolved); none when it holds no handler of ours.
fn codex_hooks(scope: &Scope, env: &dyn Env) -> Result<Vec<(String, String)>, HostHookError> {
    let files =
        super::hooks::hook_files(Host::Codex, scope, env).ok_or(HostHookError::NoHome { host: Host::Codex.name() })?;
    let Some(file) = files.first() else { return Ok(Vec::new()) };
    let path = file.path();
    let Some(text) = read(&path)? else { return Ok(Vec::new()) };
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    Ok(codex_our_hooks(&text).into_iter().map(|h| (h.key(&path), h.hash)).collect())
}

/// Makes `host`'s installed hook in `scope` effective where that is a file we can write: codex's
/// trust of the project and of each of our hooks in its `config.toml`; gemini's trust of the
/// project's folder in its `trustedFolders.json` (gemini trusts folders, not hooks: the whole
/// folder's `.gemini/` settings, other hooks and MCP servers among them, load from then on).
/// Returns the file written (`None`: nothing to write, or a host whose trust we do not write).
pub fn trust(host: Host, scope: &Scope, env: &dyn Env) -> Result<Option<PathBuf>, HostHookError> {
    if host == Host::Gemini {
        let Some(dir) = root_of(scope) else { return Ok(None) };
        let path = gemini_folders(env).ok_or(HostHookError::NoHome { host: host.name() })?;
        return match gemini_trusted(read(&path)?.as_deref(), &path, &dir)? {
            Some(text) => {
                write_atomic(&path, &text)?;
                Ok(Some(path))
            }
            None => Ok(None),
        };
    }
    if host != Host::Codex || matches!(scope, Scope::Project(top) if top.join(".git").is_file()) {
        return Ok(None);
    }
    let hooks = codex_hooks(scope, env)?;
    if hooks.is_empty() {
        return Ok(None);
    }
    let config_path = codex_config(env).ok_or(HostHookError::NoHome { host: host.name() })?;
    let config = read(&config_path)?;
    let project = root_of(scope);
    match codex_trusted(config.as_deref(), &config_path, project.as_deref(), &hooks)? {
        Some(text) => {
            write_atomic(&config_path, &text)?;
            Ok(Some(config_path))
        }
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KEY: &str = "/r/.codex/hooks.json:pre_tool_use:0:0";

    #[test]
    fn the_codex_trust_written_for_a_project_is_taken_back_leaving_later_changes() {
        let hooks_text = r#"{"hooks": {"PreToolUse": [{"matcher": "apply_patch", "hooks": [{"type": "command", "command": "git mas gate --host codex", "timeout": 10}]}]}}"#;
        let (top, file, config) = (Path::new("/r"), Path::new("/r/.codex/hooks.json"), Path::new("/h/config.toml"));
        assert_eq!(codex_project_hooks(top), file);
        let before = "model = \"o3\"\n\n[projects.\"/other\"]\ntrust_level = \"trusted\"\n";
        let trusted = codex_project_trusted(Some(before), config, top, file, hooks_text).unwrap().unwrap();
        assert!(trusted.contains("[projects.\"/r\"]") && trusted.contains(KEY), "{trusted}");
        assert_eq!(codex_project_trusted(Some(&trusted), config, top, file, hooks_text).unwrap(), None);
        // Codex changed the file since: our entries go, its change and the rest stay.
        let later = format!("{trusted}\n[projects.\"/third\"]\ntrust_level = \"trusted\"\n");
        let back = codex_trust_taken_back(&later, Some(before), config, top, file).unwrap();
        assert!(!back.contains("\"/r\"") && !back.contains(KEY) && !back.contains("[hooks"), "{back}");
        assert!(back.starts_with(before) && back.contains("[projects.\"/third\"]"), "{back}");
        // A project trusted before keeps its entry; a file created by the trust loses every table.
        let was = "[projects.\"/r\"]\ntrust_level = \"untrusted\"\n";
        let written = codex_project_trusted(Some(was), config, top, file, hooks_text).unwrap().unwrap();
        let back = codex_trust_taken_back(&format!("{written}x = 1\n"), Some(was), config, top, file).unwrap();
        assert!(back.contains("trust_level = \"untrusted\"") && !back.contains(KEY), "{back}");
        let created = codex_project_trusted(None, config, top, file, hooks_text).unwrap().unwrap();
        let back = codex_trust_taken_back(&format!("x = 1\n{created}"), None, config, top, file).unwrap();
        assert_eq!(back.trim(), "x = 1");
        // No handler of ours: nothing to trust.
        assert_eq!(codex_project_trusted(None, config, top, file, "{}").unwrap(), None);
    }

    fn our_handler() -> serde_json::Value {
        json!({"type": "command", "command": "git mas gate --host codex", "timeout": 10})
    }

    #[test]
    fn the_codex_hash_is_of_the_normalized_identity_with_sorted_keys() {
        let hash = codex_hook_hash("pre_tool_use", Some("apply_patch"), &our_handler());
        let identity = r#"{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"git mas gate --host codex","timeout":10,"type":"command"}],"matcher":"apply_patch"}"#;
        use sha2::Digest as _;
        let want: String = sha2::Sha256::digest(identity.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hash, format!("sha256:{want}"));
        // Defaults are filled in, so an explicit default hashes the same.
        let explicit =
            json!({"type": "command", "command": "git mas gate --host codex", "timeout": 10, "async": false});
        assert_eq!(codex_hook_hash("pre_tool_use", Some("apply_patch"), &explicit), hash);
        assert_ne!(codex_hook_hash("pre_tool_use", Some("apply_patch|Bash"), &our_handler()), hash);
        assert_ne!(codex_hook_hash("post_tool_use", Some("apply_patch"), &our_handler()), hash);
    }

    /// The `currentHash` codex 0.171.0's app-server (`hooks/list`) gave for each entry
    /// `hooks install --host codex` writes, and the hash computed here for it.
    #[test]
    fn the_codex_hashes_of_our_entries_are_the_ones_codex_computes() {
        let text = r#"{"hooks": {
            "PreToolUse": [{"matcher": "apply_patch|Bash|mcp__.*", "hooks": [{"type": "command", "command": "git mas gate --host codex", "timeout": 10}]}],
            "PostToolUse": [{"matcher": ".*", "hooks": [{"type": "command", "command": "git mas gate --host codex --post-tool", "timeout": 10}]}],
            "SessionEnd": [{"hooks": [{"type": "command", "command": "git mas gate --host codex --session-end", "timeout": 10}]}]
        }}"#;
        let measured = [
            ("pre_tool_use", "sha256:e57d30dc814473411df6f1a9bebbfd923ca7b72509d93d799ce612cc8ccee0ee"),
            ("post_tool_use", "sha256:b0eac15ddcefb90eff750ddf7d644018624b4f03ad400749f56366aa4def4296"),
            // Hashed with the timeout clamped to 3 s.
            ("session_end", "sha256:95d34b7988861806fc1e502259f8ed9a72dfa9fe176d21a6f50b4264270a95df"),
        ];
        let found = codex_our_hooks(text);
        let got: Vec<(&str, &str)> = found.iter().map(|h| (h.event, h.hash.as_str())).collect();
        assert_eq!(got, measured);
        let file = Path::new("/r/.codex/hooks.json");
        assert_eq!(found[2].key(file), "/r/.codex/hooks.json:session_end:0:0");
    }

    #[test]
    fn our_codex_hooks_are_found_with_their_positions() {
        let text = r#"{"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "mine"}]},
            {"matcher": "apply_patch", "hooks": [{"type": "command", "command": "git mas gate --host codex", "timeout": 10}]}
        ], "PostToolUse": [
            {"matcher": ".*", "hooks": [{"type": "command", "command": "mine"}, {"type": "command", "command": "git mas gate --host codex --post-tool", "timeout": 10}]}
        ], "Stop": [
            {"hooks": [{"type": "command", "command": "git mas gate --host codex --session-end"}]}
        ]}}"#;
        let found = codex_our_hooks(text);
        let at: Vec<(&str, usize, usize)> = found.iter().map(|h| (h.event, h.group, h.handler)).collect();
        // Not under an event our entries never go under.
        assert_eq!(at, [("pre_tool_use", 1, 0), ("post_tool_use", 0, 1)]);
        assert_eq!(found[0].hash, codex_hook_hash("pre_tool_use", Some("apply_patch"), &our_handler()));
        assert_eq!(found[0].key(Path::new("/r/.codex/hooks.json")), "/r/.codex/hooks.json:pre_tool_use:1:0");
        assert!(codex_our_hooks(r#"{"hooks": {}}"#).is_empty());
        assert!(codex_our_hooks("not json").is_empty());
    }

    #[test]
    fn codex_effect_table() {
        let hash = "sha256:aa";
        let post = "/r/.codex/hooks.json:post_tool_use:0:0";
        let hooks = [(KEY.to_string(), hash.to_string()), (post.to_string(), "sha256:cc".to_string())];
        let path = Path::new("/home/u/.codex/config.toml");
        let project = Some(Path::new("/r"));
        let trusted_project = "[projects.\"/r\"]\ntrust_level = \"trusted\"\n";
        let hook = |k: &str, h: &str| format!("[hooks.state.\"{k}\"]\ntrusted_hash = \"{h}\"\n");
        let both = format!("{}{}", hook(KEY, hash), hook(post, "sha256:cc"));
        let cases: Vec<(Option<String>, Option<&Path>, bool, &str)> = vec![
            (None, project, false, "project not trusted by codex"),
            (Some("model = \"x\"\n".into()), project, false, "project not trusted by codex"),
            (
                Some("[projects.\"/r\"]\ntrust_level = \"untrusted\"\n".into()),
                project,
                false,
                "project not trusted by codex",
            ),
            (Some(trusted_project.into()), project, false, "hook not trusted by codex"),
            (
                Some(format!("{trusted_project}{}", hook(KEY, "sha256:bb"))),
                project,
                false,
                "hook changed since codex trusted it",
            ),
            (
                Some(format!("{trusted_project}{}enabled = false\n", hook(KEY, hash))),
                project,
                false,
                "hook disabled in codex",
            ),
            // The pre-tool entry trusted and the post-tool one not: codex skips it silently.
            (Some(format!("{trusted_project}{}", hook(KEY, hash))), project, false, "hook not trusted by codex"),
            (Some(format!("{trusted_project}{both}")), project, true, "project and hooks trusted by codex"),
            // The user-wide hooks file needs no project trust.
            (Some(both.clone()), None, true, "project and hooks trusted by codex"),
        ];
        for (config, project, loaded, reason) in cases {
            let e =
                codex_effect(config.as_deref(), path, project, &hooks, "git mas hooks install --host codex --trust");
            assert_eq!((e.loaded, e.reason.as_str()), (loaded, reason), "{config:?}");
            assert_eq!(e.remedy.is_some(), !loaded);
            if let Some(remedy) = e.remedy.filter(|_| reason.contains("trusted")) {
                assert!(remedy.contains("--trust") && remedy.contains("/home/u/.codex/config.toml"), "{remedy}");
            }
        }
    }

    #[test]
    fn trusting_codex_keeps_every_other_byte_and_is_idempotent() {
        let path = Path::new("/c/config.toml");
        let project = Some(Path::new("/r"));
        let post = "/r/.codex/hooks.json:post_tool_use:0:0";
        let hooks = |pre: &str| vec![(KEY.to_string(), pre.to_string()), (post.to_string(), "sha256:cc".to_string())];
        let user = "# my settings\nmodel = \"gpt-5.5\"  # pinned\n\n[model_providers.mock]\nname = \"mock\"\n";
        let text = codex_trusted(Some(user), path, project, &hooks("sha256:aa")).unwrap().unwrap();
        assert!(text.starts_with(user), "{text}");
        assert!(text.contains("[projects.\"/r\"]\ntrust_level = \"trusted\"\n"), "{text}");
        assert!(text.contains(&format!("[hooks.state.\"{KEY}\"]\ntrusted_hash = \"sha256:aa\"\n")), "{text}");
        assert!(text.contains(&format!("[hooks.state.\"{post}\"]\ntrusted_hash = \"sha256:cc\"\n")), "{text}");
        assert!(!text.contains("[projects]\n") && !text.contains("[hooks]\n"), "{text}");
        let e = codex_effect(Some(&text), path, project, &hooks("sha256:aa"), "t");
        assert!(e.loaded, "{e:?}");
        assert_eq!(codex_trusted(Some(&text), path, project, &hooks("sha256:aa")).unwrap(), None, "nothing more");
        // A changed hook: only its hash moves.
        let again = codex_trusted(Some(&text), path, project, &hooks("sha256:bb")).unwrap().unwrap();
        assert_eq!(again, text.replace("sha256:aa", "sha256:bb"));
        // A config that trusted the pre-tool entry alone (an earlier release's) gets the others.
        let pre_only = codex_trusted(Some(user), path, project, &hooks("sha256:aa")[..1]).unwrap().unwrap();
        let upgraded = codex_trusted(Some(&pre_only), path, project, &hooks("sha256:aa")).unwrap().unwrap();
        assert_eq!(upgraded, text);
        assert!(codex_trusted(Some("projects = 3\n"), path, project, &hooks("h")).is_err());
        assert!(codex_trusted(Some("not toml ["), path, project, &hooks("h")).is_err());
    }

    #[test]
    fn copilot_and_gemini_trust_tables() {
        let dir = Path::new("/work/r");
        let cp = Path::new("/h/.copilot/config.json");
        for (config, loaded) in [
            (None, false),
            (Some(r#"{"trusted_folders": ["/other"]}"#), false),
            (Some(r#"{"trusted_folders": ["/work/r"]}"#), true),
            (Some("// c\n{\"trusted_folders\": [\"/work\"]}"), true),
            (Some(r#"{"trusted_folders": ["/work/r2"]}"#), false),
        ] {
            let e = copilot_effect(config, cp, dir);
            assert_eq!(e.loaded, loaded, "{config:?}");
            if !loaded {
                assert!(e.remedy.unwrap().contains("\"/work/r\" to trusted_folders in /h/.copilot/config.json"));
            }
        }
        let gp = Path::new("/h/.gemini/trustedFolders.json");
        for (folders, env, loaded) in [
            (None, false, false),
            (None, true, true),
            (Some(r#"{"/work/r": "TRUST_FOLDER"}"#), false, true),
            (Some(r#"{"/work/x": "TRUST_PARENT"}"#), false, true),
            (Some(r#"{"/work": "TRUST_FOLDER", "/work/r": "DO_NOT_TRUST"}"#), false, false),
            (Some(r#"{"/work/r/sub": "TRUST_FOLDER"}"#), false, false),
        ] {
            let e = gemini_effect(folders, gp, dir, env, "git mas hooks install --host gemini --trust");
            assert_eq!(e.loaded, loaded, "{folders:?} {env}");
            if !loaded {
                let remedy = e.remedy.unwrap();
                assert!(remedy.contains("`git mas hooks install --host gemini --trust`"), "{remedy}");
                assert!(remedy.contains("\"/work/r\": \"TRUST_FOLDER\" to /h/.gemini/trustedFolders.json"), "{remedy}");
            }
        }
    }

    #[test]
    fn gemini_trust_is_merged_into_its_folders_file() {
        let gp = Path::new("/h/.gemini/trustedFolders.json");
        let dir = Path::new("/work/r");
        let trusted = |before: Option<&str>| gemini_trusted(before, gp, dir).unwrap();
        // Written where there was none, as gemini writes it.
        assert_eq!(trusted(None).unwrap(), "{\n  \"/work/r\": \"TRUST_FOLDER\"\n}\n");
        assert_eq!(trusted(Some("")).unwrap(), "{\n  \"/work/r\": \"TRUST_FOLDER\"\n}\n");
        // Added after the user's entries, their bytes (and comments) kept.
        let mine = "{\n  // mine\n  \"/other\": \"DO_NOT_TRUST\"\n}\n";
        assert_eq!(
            trusted(Some(mine)).unwrap(),
            "{\n  // mine\n  \"/other\": \"DO_NOT_TRUST\",\n  \"/work/r\": \"TRUST_FOLDER\"\n}\n"
        );
        assert_eq!(trusted(Some("{}")).unwrap(), "{\"/work/r\": \"TRUST_FOLDER\"}");
        // The folder's own entry gets the new level.
        let distrusted = "{\"/work/r\": \"DO_NOT_TRUST\", \"/x\": \"TRUST_FOLDER\"}";
        assert_eq!(trusted(Some(distrusted)).unwrap(), "{\"/work/r\": \"TRUST_FOLDER\", \"/x\": \"TRUST_FOLDER\"}");
        // Trusted already (itself or a folder above it): nothing to write.
        assert_eq!(trusted(Some("{\"/work/r\": \"TRUST_FOLDER\"}")), None);
        assert_eq!(trusted(Some("{\"/work\": \"TRUST_FOLDER\"}")), None);
        // A file gemini would not read is left alone.
        assert!(gemini_trusted(Some("[1]"), gp, dir).is_err());
        assert!(gemini_trusted(Some("{\"a\": "), gp, dir).is_err());
        // The result reads back as trusted.
        let text = trusted(Some(mine)).unwrap();
        assert!(gemini_effect(Some(&text), gp, dir, false, "").loaded);
    }
}

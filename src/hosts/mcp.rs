//! Where each coding-agent host reads its MCP servers, and how `git mas mcp install --host` puts
//! `git mas mcp` there and takes it out again without disturbing anything else.
//!
//! The file is usually the user's too (their other servers, their settings), so the server is
//! merged in the way [`super::hooks`] merges the edit hook: JSON through the byte ranges of
//! a parsed tree, TOML through `toml_edit`'s format-preserving document. The bytes around our
//! entry are never re-serialized: install then uninstall gives back the original bytes, and a
//! second install changes nothing. Our entry is the server named [`SERVER_NAME`]; a different
//! entry under that name (another `--agent`, an older command) is replaced by install. A file
//! that does not parse as the host reads it is refused and left as it was. Writes are
//! temporary-file-and-rename ([`super::files`]), so a crash leaves the file as it was or as
//! it is meant to be.
//!
//! The registrations, as the hosts' documentation gives them (checked 2026-12):
//!
//! - Claude Code (code.claude.com/docs/en/mcp): the project's `.mcp.json`, the user's in
//!   `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`), `mcpServers.<name>: {command, args}`.
//!   Claude asks before it starts a project's `.mcp.json` server; a non-interactive session
//!   names the file with `--mcp-config` ([`session_args`]).
//! - Codex (developers.openai.com/codex/mcp): `[mcp_servers.<name>]` with `command`, `args` in
//!   `.codex/config.toml` (read only in a project trusted in the user's config) or
//!   `$CODEX_HOME/config.toml` (`~/.codex/config.toml`). An agent's session carries it in a `-c`
//!   layer instead ([`session_args`]), so that neither the user's config nor the main checkout is
//!   written. What codex 0.171.0 does with it (run offline against the scripted model:
//!   `cargo test --test cli hosts::mcp`): `codex exec` starts the server in its working directory
//!   and lists its tools, but a model whose catalog entry supports search (gpt-5.5) is never
//!   sent them in the request's `tools`: it gets them only from the `tool_search` tool, as the
//!   namespace `mcp__git_mas` (the name's `-` made `_`) of bare tool names, and calls one as a
//!   `function_call` with that `namespace` (the `tool_search_always_defer_mcp_tools` feature is
//!   fixed on: `codex features list` shows it removed); a model codex does not know is sent the
//!   same namespace in `tools`. The server's environment is cleared but for HOME, PATH, LANG,
//!   SHELL, TERM and a few others, so `env_vars` names the variables git-mas and git read. A
//!   tool not marked read-only needs approval, and `codex exec` (approval `never`) answers "MCP
//!   tool call requires approval, but approval policy is never" unless the server's
//!   `default_tools_approval_mode` is `approve`. `required = true` makes a server that fails to
//!   start fail the session instead of leaving the model without its tools.
//! - Cursor (cursor.com/docs/context/mcp): `.cursor/mcp.json`, `~/.cursor/mcp.json`, `mcpServers`.
//! - Gemini CLI (google-gemini/gemini-cli docs/tools/mcp-server.md): `mcpServers` in
//!   `.gemini/settings.json` or `~/.gemini/settings.json` (`$GEMINI_CLI_HOME/.gemini` when set;
//!   comments allowed), `{command, args, env}`. What gemini 0.61.0 does with it (run offline
//!   against the scripted model: `cargo test --test cli hosts::gemini`): it reads a project's
//!   settings, and starts a stdio server, only in a trusted folder (an agent's session is trusted
//!   with `GEMINI_CLI_TRUST_WORKSPACE=true`, [`session_prefix`]; `--skip-trust` runs gemini but
//!   leaves the project's settings unread). It offers the tools as `mcp_git-mas_<tool>` and adds
//!   a boolean `wait_for_previous` to every tool's schema, which it passes on to the server
//!   with the call when the model sets it. It starts the server with its own environment minus
//!   every variable whose name matches `/TOKEN|SECRET|PASSWORD|PASSWD|KEY|AUTH|CREDENTIAL|CREDS|
//!   PRIVATE|CERT/i` (`packages/core/src/services/environmentSanitization.ts`), so
//!   `GIT_MAS_KEY_DIR` never arrives and the server, looking for keys in the default directory,
//!   answers "no private key". The entry's own `env` is passed as written, and gemini expands
//!   `${VAR}` and `${VAR:-default}` in every string of a settings file from its unfiltered
//!   environment when it loads the file, so our entry carries `"env": {"GIT_MAS_KEY_DIR":
//!   "${GIT_MAS_KEY_DIR:-}"}`: the server gets the session's key directory, or an empty value
//!   (read as unset) when the session has none. A literal path would pin one machine's keys in
//!   the file, and a new flag or variable would be one more thing for every other host to pass.
//! - Copilot CLI (docs.github.com, "Use Copilot CLI"): the user's `$COPILOT_HOME/mcp-config.json`
//!   (`~/.copilot/mcp-config.json`), `mcpServers.<name>: {type: "local", command, args, tools}`;
//!   for a project, the same shape in `.copilot/mcp-config.json`, which copilot loads when named
//!   by `--additional-mcp-config @FILE` ([`session_args`]).
//! - OpenCode (opencode.ai/docs/mcp-servers): `mcp.<name>: {type: "local", command: [...],
//!   enabled}` in the project's `opencode.json` or `$XDG_CONFIG_HOME/opencode/opencode.json`
//!   (`~/.config/opencode/opencode.json`); JSON with comments.
//! - Goose keeps its extensions in the user's YAML `~/.config/goose/config.yaml` and has no
//!   project scope. No Rust YAML crate edits a document in place keeping its bytes, and
//!   re-serializing the user's whole configuration is what this module never does, so goose is
//!   refused with the manual step ([`HostMcpError::Unsupported`]).
//!
//! An empty container is indistinguishable from one install created: uninstall removes an
//! `mcpServers` object that only our entry kept non-empty, and a file exactly as install creates
//! it where there was none.

use super::edit::{self, prop, value_of};
use super::files::HostHookError;
use super::plan::{Action, FileReport, FileState, Plan, Removal, carry_out};
use super::{Env, Host, McpEntry, McpFacts, McpFormat, Scope};
use jsonc_parser::ast;
use std::path::{Path, PathBuf};

/// The name the server is registered under.
pub const SERVER_NAME: &str = "git-mas";

/// The variable that names the directory of the agents' private keys
/// ([`crate::identity::key::key_dir`]).
pub const KEY_DIR_VAR: &str = "GIT_MAS_KEY_DIR";

/// The manual step for goose, the one host this module does not edit.
pub const GOOSE_MANUAL: &str = "run `goose configure`, choose Add Extension > Command-line Extension, \
     name it git-mas with the command `git mas mcp` (or add it under `extensions:` in \
     ~/.config/goose/config.yaml)";

/// Why a host's MCP registration cannot be changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostMcpError {
    /// The host's configuration cannot be edited in place.
    #[error("{host}'s MCP servers cannot be registered by git-mas: {reason}")]
    Unsupported {
        /// The host.
        host: &'static str,
        /// Why, and the manual step.
        reason: String,
    },
    /// Reading, parsing or writing the file failed.
    #[error(transparent)]
    File(#[from] HostHookError),
}

/// The command line the host starts: `git mas mcp`, with `--agent NAME` when given.
pub fn server_argv(agent: Option<&str>) -> Vec<String> {
    let mut argv: Vec<String> = ["git", "mas", "mcp"].map(String::from).to_vec();
    if let Some(name) = agent {
        argv.extend(["--agent".to_string(), name.to_string()]);
    }
    argv
}

/// The host's MCP facts, or why git-mas cannot register a server there.
fn facts(host: Host) -> Result<McpFacts, HostMcpError> {
    host.facts().mcp.ok_or_else(|| HostMcpError::Unsupported { host: host.name(), reason: GOOSE_MANUAL.to_string() })
}

fn format(host: Host) -> McpFormat {
    host.facts().mcp.map_or(McpFormat::Json { key: "mcpServers", comments: false }, |m| m.format)
}

/// The file `host` reads its MCP servers from in `scope` (`base` is never removed).
pub fn config_file(host: Host, scope: &Scope, env: &dyn Env) -> Result<(PathBuf, PathBuf), HostMcpError> {
    let facts = facts(host)?;
    if let Scope::Project(top) = scope {
        return Ok((top.clone(), PathBuf::from(facts.project_file)));
    }
    let base = facts.user_dir.resolve(env).ok_or(HostMcpError::File(HostHookError::NoHome { host: host.name() }))?;
    Ok((base, PathBuf::from(facts.user_file)))
}

/// Our entry, as the host's JSON reads it.
pub fn entry_value(host: Host, agent: Option<&str>) -> serde_json::Value {
    use serde_json::json;
    let argv = server_argv(agent);
    let (command, args) = (argv[0].clone(), argv[1..].to_vec());
    match host.facts().mcp.map_or(McpEntry::CommandArgs, |m| m.entry) {
        McpEntry::LocalArgv => json!({"type": "local", "command": argv, "enabled": true}),
        McpEntry::LocalWithTools => json!({"type": "local", "command": command, "args": args, "tools": ["*"]}),
        McpEntry::CommandArgs => json!({"command": command, "args": args}),
        McpEntry::CommandArgsKeyDir => {
            json!({"command": command, "args": args, "env": {KEY_DIR_VAR: format!("${{{KEY_DIR_VAR}:-}}")}})
        }
    }
}

/// The file's state, from its current content (`None`: absent).
pub fn file_state(host: Host, path: &Path, current: Option<&str>, agent: Option<&str>) -> FileState {
    let Some(text) = current else { return FileState::NotInstalled };
    match ours(host, path, text) {
        Err(_) => FileState::Invalid,
        Ok(None) => FileState::NotInstalled,
        Ok(Some(v)) if v == entry_value(host, agent) => FileState::Installed,
        // Asked with no agent, an entry for any one agent is installed.
        Ok(Some(v)) if agent.is_none() && registered_agent(&v).is_some_and(|a| v == entry_value(host, Some(&a))) => {
            FileState::Installed
        }
        Ok(Some(_)) => FileState::Other,
    }
}

/// The agent an entry's command line names (`--agent NAME`), if any.
fn registered_agent(entry: &serde_json::Value) -> Option<String> {
    let words: Vec<&str> = ["command", "args"]
        .iter()
        .filter_map(|k| entry.get(k))
        .flat_map(|v| match v {
            serde_json::Value::Array(a) => a.iter().filter_map(|w| w.as_str()).collect::<Vec<_>>(),
            v => v.as_str().into_iter().collect(),
        })
        .collect();
    let at = words.iter().position(|w| *w == "--agent")?;
    words.get(at + 1).map(|w| w.to_string())
}

/// What install does to the file.
pub fn plan_install(host: Host, path: &Path, current: Option<&str>, agent: Option<&str>) -> Result<Plan, HostMcpError> {
    let Some(text) = current else { return Ok(Plan::Write(new_file(host, agent))) };
    if file_state(host, path, Some(text), agent) == FileState::Installed {
        return Ok(Plan::Keep);
    }
    let base = match remove(host, path, text, agent)? {
        Removal::Unchanged => text.to_string(),
        Removal::Created => return Ok(Plan::Write(new_file(host, agent))),
        Removal::Changed(t) => t,
    };
    let out = match format(host) {
        McpFormat::CodexToml => toml_insert(path, &base, agent)?,
        McpFormat::Json { key, comments } => json_insert(path, &base, key, comments, &entry_value(host, agent))?,
    };
    Ok(Plan::Write(out))
}

/// What uninstall does to the file.
pub fn plan_uninstall(
    host: Host,
    path: &Path,
    current: Option<&str>,
    agent: Option<&str>,
) -> Result<Plan, HostMcpError> {
    let Some(text) = current else { return Ok(Plan::Keep) };
    Ok(remove(host, path, text, agent)?.into_plan())
}

/// The file install creates where there is none.
pub fn new_file(host: Host, agent: Option<&str>) -> String {
    match format(host) {
        McpFormat::CodexToml => toml_insert(Path::new(""), "", agent).expect("an empty document takes a table"),
        McpFormat::Json { key, .. } => {
            let mut servers = serde_json::Map::new();
            servers.insert(SERVER_NAME.to_string(), entry_value(host, agent));
            let mut top = serde_json::Map::new();
            top.insert(key.to_string(), serde_json::Value::Object(servers));
            edit::pretty(&serde_json::Value::Object(top))
        }
    }
}

/// Our entry's value in the file, if any.
fn ours(host: Host, path: &Path, text: &str) -> Result<Option<serde_json::Value>, HostMcpError> {
    match format(host) {
        McpFormat::CodexToml => {
            let doc = toml_parse(path, text)?;
            let Some(servers) = doc.get("mcp_servers") else { return Ok(None) };
            let Some(entry) = servers.get(SERVER_NAME) else { return Ok(None) };
            let command = entry.get("command").and_then(|c| c.as_str()).map(String::from);
            let args: Option<Vec<String>> = entry
                .get("args")
                .and_then(|a| a.as_array())
                .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect());
            Ok(Some(serde_json::json!({"command": command, "args": args})))
        }
        McpFormat::Json { key, comments } => {
            let top = edit::parse_object(path, text, comments)?;
            let Some((_, servers)) = json_object(&top, key, path)? else { return Ok(None) };
            Ok(prop(servers, SERVER_NAME).and_then(|p| value_of(text, &p.value, comments)))
        }
    }
}

fn remove(host: Host, path: &Path, text: &str, _agent: Option<&str>) -> Result<Removal, HostMcpError> {
    let out = match format(host) {
        McpFormat::CodexToml => toml_remove(path, text)?,
        McpFormat::Json { key, comments } => json_remove(path, text, key, comments)?,
    };
    Ok(match out {
        None => Removal::Unchanged,
        Some(_) if is_created(host, text) => Removal::Created,
        Some(t) => Removal::Changed(t),
    })
}

/// Whether `text` is byte for byte a file install creates where there was none (with whichever
/// agent its entry names).
fn is_created(host: Host, text: &str) -> bool {
    match format(host) {
        McpFormat::CodexToml => {
            toml_remove(Path::new(""), text).ok().flatten().is_some_and(|rest| rest.trim().is_empty())
        }
        McpFormat::Json { key, comments } => {
            let Ok(value) = jsonc_parser::parse_to_serde_value::<serde_json::Value>(text, &edit::options(comments))
            else {
                return false;
            };
            let only_ours = value.as_object().is_some_and(|top| {
                top.len() == 1
                    && top
                        .get(key)
                        .and_then(|s| s.as_object())
                        .is_some_and(|s| s.len() == 1 && s.contains_key(SERVER_NAME))
            });
            only_ours && edit::pretty(&value) == text
        }
    }
}

// --- JSON -------------------------------------------------------------------------------------

/// The property `key` of `top` and its object value, when there is one.
#[allow(clippy::type_complexity)]
fn json_object<'o, 'a>(
    top: &'o ast::Object<'a>,
    key: &str,
    path: &Path,
) -> Result<Option<(&'o ast::ObjectProp<'a>, &'o ast::Object<'a>)>, HostHookError> {
    let Some(p) = prop(top, key) else { return Ok(None) };
    match &p.value {
        ast::Value::Object(o) => Ok(Some((p, o))),
        _ => Err(HostHookError::Shape { path: path.to_path_buf(), what: format!("\"{key}\" is not an object") }),
    }
}

/// `text` with the property at `index` of `object` cut out, with the separator install put
/// before it.
fn cut_prop(text: &str, object: &ast::Object, index: usize) -> String {
    edit::cut(text, object.range, &edit::prop_ranges(object), index)
}

fn json_remove(path: &Path, text: &str, key: &str, comments: bool) -> Result<Option<String>, HostHookError> {
    let top = edit::parse_object(path, text, comments)?;
    let Some((outer, servers)) = json_object(&top, key, path)? else { return Ok(None) };
    let Some(i) = servers.properties.iter().position(|p| p.name.as_str() == SERVER_NAME) else { return Ok(None) };
    if servers.properties.len() > 1 {
        return Ok(Some(cut_prop(text, servers, i)));
    }
    let at = top.properties.iter().position(|p| p.range == outer.range).expect("the property is the top's");
    Ok(Some(cut_prop(text, &top, at)))
}

/// `text` with `"<key>": {"git-mas": entry}` merged in, laid out like the lines around it.
fn json_insert(
    path: &Path,
    text: &str,
    key: &str,
    comments: bool,
    entry: &serde_json::Value,
) -> Result<String, HostHookError> {
    let top = edit::parse_object(path, text, comments)?;
    let (container, last, name, value) = match json_object(&top, key, path)? {
        Some((_, servers)) => (servers.range, servers.properties.last().map(|p| p.range), SERVER_NAME, entry.clone()),
        None => {
            let mut inner = serde_json::Map::new();
            inner.insert(SERVER_NAME.to_string(), entry.clone());
            (top.range, top.properties.last().map(|p| p.range), key, serde_json::Value::Object(inner))
        }
    };
    Ok(edit::append(text, container, last, Some(name), &value))
}

// --- TOML -------------------------------------------------------------------------------------

fn toml_parse(path: &Path, text: &str) -> Result<toml_edit::DocumentMut, HostHookError> {
    edit::parse_toml(path, text)
}

fn toml_shape(path: &Path) -> HostHookError {
    HostHookError::Shape { path: path.to_path_buf(), what: "\"mcp_servers\" is not a table".into() }
}

fn toml_insert(path: &Path, text: &str, agent: Option<&str>) -> Result<String, HostHookError> {
    let mut doc = toml_parse(path, text)?;
    let argv = server_argv(agent);
    let mut entry = toml_edit::Table::new();
    entry.insert("command", toml_edit::value(argv[0].as_str()));
    let mut args = toml_edit::Array::new();
    for a in &argv[1..] {
        args.push(a.as_str());
    }
    entry.insert("args", toml_edit::value(args));
    if !doc.contains_key("mcp_servers") {
        let mut servers = toml_edit::Table::new();
        servers.set_implicit(true);
        doc.insert("mcp_servers", toml_edit::Item::Table(servers));
    }
    let servers = doc.get_mut("mcp_servers").and_then(|s| s.as_table_mut()).ok_or_else(|| toml_shape(path))?;
    servers.insert(SERVER_NAME, toml_edit::Item::Table(entry));
    let mut out = doc.to_string();
    // A table appended after the user's last line starts on a line of its own, after a blank one.
    if let Some(i) = out.find("[mcp_servers.git-mas]")
        && i > 0
        && !text.is_empty()
        && !out[..i].ends_with("\n\n")
    {
        let pad = if out[..i].ends_with('\n') { "\n" } else { "\n\n" };
        out.insert_str(i, pad);
    }
    Ok(out)
}

fn toml_remove(path: &Path, text: &str) -> Result<Option<String>, HostHookError> {
    let mut doc = toml_parse(path, text)?;
    let Some(servers) = doc.get_mut("mcp_servers") else { return Ok(None) };
    let servers = servers.as_table_like_mut().ok_or_else(|| toml_shape(path))?;
    if servers.remove(SERVER_NAME).is_none() {
        return Ok(None);
    }
    let empty_implicit =
        servers.is_empty() && doc.get("mcp_servers").and_then(|s| s.as_table()).is_some_and(|t| t.is_implicit());
    if empty_implicit {
        doc.remove("mcp_servers");
    }
    let mut out = doc.to_string();
    // Undo the blank line install put before the table.
    if !text.ends_with("\n\n") && out.ends_with("\n\n") {
        out.pop();
    }
    Ok(Some(out))
}

// --- What the host needs beyond the file --------------------------------------------------------

/// Arguments an agent's non-interactive session needs so that its host starts the server
/// registered in its worktree (`agent`: the name registered): claude, the project's `.mcp.json`
/// named with `--mcp-config` (a session started so does not ask to approve it); codex, the
/// server in a `-c` layer (codex reads a project's `.codex/config.toml` only in a trusted
/// project) with the environment it needs, its tools approved and its start required (module
/// docs); copilot, the project file named with `--additional-mcp-config`. Other hosts read
/// the project file by themselves.
pub fn session_args(host: Host, agent: Option<&str>) -> Vec<String> {
    let argv = server_argv(agent);
    let quote = |s: &str| serde_json::Value::from(s).to_string();
    match host {
        Host::ClaudeCode => vec!["--mcp-config".into(), ".mcp.json".into()],
        Host::Codex => {
            // Codex starts a server with only a few variables of its own environment (HOME, PATH,
            // LANG, …); these are the others git-mas and git read.
            const FORWARDED: [&str; 11] = [
                "GIT_MAS_AGENT",
                "GIT_MAS_KEY_DIR",
                "XDG_CONFIG_HOME",
                "GIT_CONFIG_GLOBAL",
                "GIT_CONFIG_NOSYSTEM",
                "GIT_AUTHOR_NAME",
                "GIT_AUTHOR_EMAIL",
                "GIT_AUTHOR_DATE",
                "GIT_COMMITTER_NAME",
                "GIT_COMMITTER_EMAIL",
                "GIT_COMMITTER_DATE",
            ];
            let list = |words: &[&str]| format!("[{}]", words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(","));
            let args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
            let table = format!(
                "{{command={},args={},env_vars={},default_tools_approval_mode=\"approve\",required=true}}",
                quote(&argv[0]),
                list(&args),
                list(&FORWARDED)
            );
            vec!["-c".into(), format!("mcp_servers.{SERVER_NAME}={table}")]
        }
        Host::Copilot => vec!["--additional-mcp-config".into(), "@.copilot/mcp-config.json".into()],
        _ => Vec::new(),
    }
}

/// What goes before a host's command line (environment assignments, `sh` syntax) so that an
/// agent's session starts the server registered in its worktree: for gemini,
/// `GEMINI_CLI_TRUST_WORKSPACE=true`, without which it reads no project settings (module docs).
pub fn session_prefix(host: Host) -> Option<&'static str> {
    host.facts().preset.trust_env
}

/// What a host needs, besides the file, before it starts the server (said on install and status).
pub fn notes(host: Host, scope: &Scope) -> Vec<String> {
    match (host, scope) {
        (Host::ClaudeCode, Scope::Project(_)) => vec![
            "Claude Code asks before it starts a project's .mcp.json server: approve git-mas in /mcp, or run \
             claude with --mcp-config .mcp.json (coordinate's claude-code agents get it)"
                .to_string(),
        ],
        (Host::Codex, scope) => {
            let mut notes = Vec::new();
            if let Scope::Project(_) = scope {
                notes.push(
                    "Codex reads a project's .codex/config.toml only in a trusted project: trust it, or register \
                     the server globally (--global)"
                        .to_string(),
                );
            }
            notes.push(
                "codex exec refuses the tools that write (propose, endorse, focus_publish, ...) unless they are \
                 approved: for unattended sessions set default_tools_approval_mode = \"approve\" under \
                 [mcp_servers.git-mas]"
                    .to_string(),
            );
            notes
        }
        (Host::Copilot, Scope::Project(_)) => vec![
            "Copilot loads a project's MCP file when named: run copilot with --additional-mcp-config \
             @.copilot/mcp-config.json (coordinate's copilot agents get it)"
                .to_string(),
        ],
        (Host::Gemini, Scope::Project(_)) => vec![
            "Gemini CLI reads a project's .gemini/settings.json, and starts its servers, only in a folder it \
             trusts: trust it (`git mas hooks install --host gemini --trust` writes ~/.gemini/trustedFolders.json), \
             or run gemini with GEMINI_CLI_TRUST_WORKSPACE=true (coordinate's gemini agents get it)"
                .to_string(),
        ],
        _ => Vec::new(),
    }
}

/// Applies `action` to `host`'s MCP registration in `scope`, registering `git mas mcp` (with
/// `--agent NAME` when `agent` is given). A refusal leaves the file as it was.
pub fn apply(
    action: Action,
    host: Host,
    scope: &Scope,
    env: &dyn Env,
    agent: Option<&str>,
) -> Result<FileReport, HostMcpError> {
    let (base, rel) = config_file(host, scope, env)?;
    let path = base.join(&rel);
    let current = super::files::read(&path)?;
    let plan = match action {
        Action::Install => plan_install(host, &path, current.as_deref(), agent)?,
        Action::Uninstall => plan_uninstall(host, &path, current.as_deref(), agent)?,
        Action::Status => Plan::Keep,
    };
    let after = carry_out(&base, &path, current, &plan)?;
    let state = file_state(host, &path, after.as_deref(), agent);
    Ok(FileReport { path, state, changed: plan != Plan::Keep })
}

#[cfg(test)]
#[path = "mcp_tests.rs"]
mod tests;

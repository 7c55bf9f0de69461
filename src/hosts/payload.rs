//! The gate before an edit: what a coding-agent host's pre-tool hook payload would write, and the
//! answer in that host's own format.
//!
//! Hosts call a hook before a tool runs and let it refuse the call; an agent then learns that a
//! file is held before it spends work on it, not at `git commit`. Each host has its own payload
//! and its own way to say "deny", so both are here, pure: [`parse`] turns a payload into the
//! files the call would write (with the changed lines where the payload says which), and
//! the `reply` module turns the gate's answer into the bytes the host reads. Deciding is the commit gate's
//! business.
//!
//! Several hosts let a hook that crashes fail open, so a payload that cannot be read is an error
//! value the caller answers with a deny, never a panic.
//!
//! OpenCode has no hook process of its own: its plugin (`tool.execute.before`) passes
//! `{"tool": <tool name>, "args": <the tool's arguments>, "cwd": <the project directory>,
//! "sessionID": <opencode's session id, when it gave one>}` on stdin and reads one JSON line
//! back: `{"decision":"allow"}`, `{"decision":"allow","message":…}` (let through, show the
//! message) or `{"decision":"deny","reason":…}` (the plugin throws with the reason). The plugin
//! asks about `edit`, `write`, `patch`, `multiedit` and `apply_patch`;
//! opencode 1.18.33 advertises `edit` (`filePath`, `oldString`), `write` (`filePath`) and
//! `apply_patch` (`patchText`, codex's patch format) to its model; `multiedit` and `patch` are
//! earlier releases' shapes. An asked-about call whose arguments do not have the shape read here
//! is an error, so the plugin refuses it (fail closed) rather than letting an unchecked write by.
//!
//! The tools each host writes with, and which arguments name their files, are the host table's
//! ([`super::PayloadFacts`]'s `write_tools`). A tool the table does not know is not assumed harmless: when its arguments carry a path
//! (`file_path`, `path`, `filePath`, `paths`, … at the top level: [`PATH_KEYS`]), it is taken as a
//! whole-file write of each (fail closed), unless the host's own documentation lists it as
//! read-only ([`read_only`]: `Read`, `read_file`, `view`, …) or its name says it only reads (an
//! MCP tool whose last name part starts with `read`, `list`, `get`, `search`, …), and git-mas's own
//! MCP tools never write a file. So goose's `developer__text_editor` (`write`, `str_replace`,
//! `insert`, `undo_edit`), a lower-case `write` from a host that names it `Write`, or another
//! MCP server's `write_file` are gated like the tools the table knows.
//!
//! A path git could not store (a NUL byte in it) is refused as an unreadable payload.
//!
//! Every payload names the host's session under the host's own field
//! ([`super::PayloadFacts::session_field`]: `session_id`, `sessionId`, `sessionID` or
//! `conversation_id`), read as [`Payload::session`]: a string, or none (any other JSON value
//! counts as none, as a missing one does). A payload without it is still read.
//!
//! ## The deadline
//!
//! A hook that never answers is worse than one that says no: every host below gives its hook a
//! timeout and then lets the tool call through. So the hook answers within [`DEADLINE`] whatever
//! happens (a payload that never ends, a board that cannot be read in time): when it passes, the
//! answer is a deny naming why. The hosts' timeouts, as git-mas installs them (the hosts' own
//! defaults in brackets):
//!
//! | host | timeout | on a timeout |
//! |---|---|---|
//! | claude-code | 10 s (`timeout`; default 60 s) | the call goes ahead |
//! | codex | 10 s (`timeout`; default 600 s) | the call goes ahead |
//! | copilot | 10 s (`timeoutSec`; default 30 s) | the call goes ahead |
//! | gemini | 10,000 ms (`timeout`; default 60,000 ms) | the call goes ahead |
//! | cursor | the host's default | refused (`failClosed`) |
//! | goose | 10 s (`timeout`) | refused (`on_failure: block`) |
//! | opencode | 10,000 ms (the plugin's `spawnSync` timeout) | refused (the plugin throws) |
//!
//! The shortest is 10 s; the deadline is 6 s, leaving 4 s for the host to start the process and
//! read the answer on a loaded machine (a gate normally answers in tens of milliseconds).

use super::{Host, PayloadShape, WriteArgs};
use serde::Deserialize;
use serde_json::Value;

/// The largest payload read (a tool call carries the file's new content, so it may be big).
pub const MAX_PAYLOAD: u64 = 16 << 20;

/// How long a hook may take from its start to its answer; past it the answer is a deny (see the
/// module docs for the hosts' timeouts it stays under).
pub const DEADLINE: std::time::Duration = std::time::Duration::from_secs(6);

/// The argument names (compared lower-case, without `_` and `-`) that say which file an unknown
/// tool call touches: a string, or a list of strings.
pub const PATH_KEYS: [&str; 14] = [
    "path",
    "filepath",
    "filename",
    "file",
    "notebookpath",
    "absolutepath",
    "targetfile",
    "target",
    "destination",
    "dest",
    "newpath",
    "paths",
    "filepaths",
    "files",
];

/// What a tool call changes in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The whole file (written, created, deleted, or lines not given).
    WholeFile,
    /// The places where these texts stand in the current file (an edit's `old_string`s).
    Replace(Vec<String>),
    /// Patch hunks, each as its old-side lines (context and removed lines, in order).
    Hunks(Vec<Vec<String>>),
}

/// One file a tool call would write, as the payload names it (not yet repo-relative).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWrite {
    /// The path as given (absolute, or relative to the payload's directory).
    pub path: String,
    /// What changes in it.
    pub change: Change,
}

/// A payload read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    /// The tool's name.
    pub tool: String,
    /// The directory the host ran in, when the payload says.
    pub cwd: Option<String>,
    /// The host's id of the session that made the call, when the payload carries one as a string
    /// (under the host's [`super::PayloadFacts::session_field`]).
    pub session: Option<String>,
    /// The files the call would write; empty for a tool that writes nothing.
    pub writes: Vec<FileWrite>,
    /// The command line of a shell tool's call (its `command` argument; a list of words is
    /// joined with spaces), when the arguments carry one.
    pub command: Option<String>,
}

/// Why a payload could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// Larger than [`MAX_PAYLOAD`].
    #[error("the hook payload is larger than {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// Not a JSON object.
    #[error("the hook payload is not a JSON object: {reason}")]
    NotJson {
        /// Why.
        reason: String,
    },
    /// No tool name where the host puts it.
    #[error("the hook payload names no tool (expected the string field {field})")]
    NoTool {
        /// The field looked for.
        field: &'static str,
    },
    /// A writing tool's arguments lack what says which file it writes.
    #[error("the {tool} call's arguments have no {field}")]
    Missing {
        /// The tool.
        tool: String,
        /// The field.
        field: String,
    },
    /// A patch names no file, or a file marker without a path.
    #[error("the {tool} patch names no file to write")]
    Patch {
        /// The tool.
        tool: String,
    },
    /// A path no file in a git repository can have.
    #[error("the {tool} call names a path git could not store ({why}): {path:?}")]
    Unstorable {
        /// The tool.
        tool: String,
        /// The path as given.
        path: String,
        /// What is wrong with it.
        why: &'static str,
    },
}

fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A string field; any other JSON value (a number, an object) counts as absent.
fn text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

/// The envelope Claude Code, Codex and Gemini CLI send (and, with a field more each, Cursor and
/// Goose): `{tool_name, tool_input, cwd, …}`.
#[derive(Debug, Deserialize)]
struct ToolInputPayload {
    #[serde(default, deserialize_with = "text")]
    tool_name: Option<String>,
    #[serde(default)]
    tool_input: Option<Value>,
    #[serde(default, deserialize_with = "text")]
    cwd: Option<String>,
    /// Goose names the directory so.
    #[serde(default, deserialize_with = "text")]
    working_dir: Option<String>,
    /// Cursor names its workspace's folders.
    #[serde(default)]
    workspace_roots: Option<Value>,
}

/// Copilot CLI's envelope: `{toolName, toolArgs (a JSON string), cwd}` (the snake-case names
/// as well, as some releases send them).
#[derive(Debug, Deserialize)]
struct CopilotPayload {
    #[serde(default, rename = "toolName", deserialize_with = "text")]
    tool_name_camel: Option<String>,
    #[serde(default, deserialize_with = "text")]
    tool_name: Option<String>,
    #[serde(default, rename = "toolArgs")]
    tool_args_camel: Option<Value>,
    #[serde(default)]
    tool_args: Option<Value>,
    #[serde(default, deserialize_with = "text")]
    cwd: Option<String>,
}

/// What git-mas's OpenCode plugin sends: `{tool, args, cwd, sessionID}`.
#[derive(Debug, Deserialize)]
struct OpenCodePayload {
    #[serde(default, deserialize_with = "text")]
    tool: Option<String>,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default, deserialize_with = "text")]
    cwd: Option<String>,
}

/// A host's envelope, read: the tool, its arguments, the directory and the session, with the
/// names the host gives the first two (for errors).
struct Envelope {
    tool: Option<String>,
    tool_field: &'static str,
    args: Option<Value>,
    args_field: &'static str,
    cwd: Option<String>,
    session: Option<String>,
}

/// The envelope of `host`'s payload (its shape and session field in [`super::TABLE`]).
fn envelope(host: Host, v: Value) -> Result<Envelope, PayloadError> {
    let not_json = |e: serde_json::Error| PayloadError::NotJson { reason: e.to_string() };
    let facts = host.facts().payload;
    let session = str_at(&v, facts.session_field).map(String::from);
    Ok(match facts.shape {
        PayloadShape::ToolInput => {
            let p: ToolInputPayload = serde_json::from_value(v).map_err(not_json)?;
            let first_root = || match &p.workspace_roots {
                Some(Value::Array(roots)) => roots.first().and_then(Value::as_str).map(String::from),
                _ => None,
            };
            let cwd = match host {
                Host::Goose => p.working_dir.clone().or(p.cwd.clone()),
                Host::Cursor => p.cwd.clone().or_else(first_root),
                _ => p.cwd.clone(),
            };
            Envelope {
                tool: p.tool_name,
                tool_field: "tool_name",
                args: p.tool_input,
                args_field: "tool_input",
                cwd,
                session,
            }
        }
        PayloadShape::Copilot => {
            let p: CopilotPayload = serde_json::from_value(v).map_err(not_json)?;
            Envelope {
                tool: p.tool_name_camel.or(p.tool_name),
                tool_field: "toolName",
                args: p.tool_args_camel.or(p.tool_args),
                args_field: "toolArgs",
                cwd: p.cwd,
                session,
            }
        }
        PayloadShape::OpenCode => {
            let p: OpenCodePayload = serde_json::from_value(v).map_err(not_json)?;
            Envelope { tool: p.tool, tool_field: "tool", args: p.args, args_field: "args", cwd: p.cwd, session }
        }
    })
}

/// A payload's JSON object, refused when larger than [`MAX_PAYLOAD`] or not an object.
fn object(bytes: &[u8]) -> Result<Value, PayloadError> {
    if bytes.len() as u64 > MAX_PAYLOAD {
        return Err(PayloadError::TooLarge { limit: MAX_PAYLOAD });
    }
    let v: Value = serde_json::from_slice(bytes).map_err(|e| PayloadError::NotJson { reason: e.to_string() })?;
    if !v.is_object() {
        return Err(PayloadError::NotJson { reason: "not an object".into() });
    }
    Ok(v)
}

/// What a session event (a session's end) carries: the session and where it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionEvent {
    /// The host's id of the session, when the payload carries one.
    pub session: Option<String>,
    /// The directory the host ran in, when the payload says.
    pub cwd: Option<String>,
}

/// Reads `host`'s payload of a session event, which names no tool.
pub fn parse_session_event(host: Host, bytes: &[u8]) -> Result<SessionEvent, PayloadError> {
    let envelope = envelope(host, object(bytes)?)?;
    Ok(SessionEvent { session: envelope.session, cwd: envelope.cwd })
}

/// The tool's result in `host`'s post-tool payload, where a hook may hand the host a replaced one
/// (Copilot CLI's `toolResult`, `{resultType, textResultForLlm}`, whose `modifiedResult` answer
/// takes its place in the post-tool answer); `None` for the other hosts, and for a payload
/// that carries none.
pub fn post_tool_result(host: Host, bytes: &[u8]) -> Option<Value> {
    if host != Host::Copilot || bytes.len() as u64 > MAX_PAYLOAD {
        return None;
    }
    let v: Value = serde_json::from_slice(bytes).ok()?;
    v.get("toolResult").filter(|r| r.is_object()).cloned()
}

/// The `hook_event_name` a payload carries (Claude Code's and Codex's `PostToolUse` or
/// `PostToolUseFailure`, which an answer must name back); `None` when it has none.
pub fn hook_event_name(bytes: &[u8]) -> Option<String> {
    if bytes.len() as u64 > MAX_PAYLOAD {
        return None;
    }
    let v: Value = serde_json::from_slice(bytes).ok()?;
    v.get("hook_event_name").and_then(Value::as_str).filter(|e| e.len() <= 64).map(str::to_string)
}

/// Reads `host`'s hook payload.
pub fn parse(host: Host, bytes: &[u8]) -> Result<Payload, PayloadError> {
    let envelope = envelope(host, object(bytes)?)?;
    let tool = envelope.tool.clone().ok_or(PayloadError::NoTool { field: envelope.tool_field })?;
    let writes = writes(host, &tool, &envelope)?;
    if let Some(w) = writes.iter().find(|w| w.path.contains('\0')) {
        return Err(PayloadError::Unstorable { tool, path: w.path.clone(), why: "a NUL byte" });
    }
    let command = if host.facts().payload.shell_tools.contains(&tool.as_str()) {
        args(&tool, &envelope).ok().and_then(|a| match a.get("command") {
            Some(Value::String(c)) => Some(c.clone()),
            Some(Value::Array(words)) => Some(words.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" ")),
            _ => None,
        })
    } else {
        None
    };
    Ok(Payload { tool, cwd: envelope.cwd, session: envelope.session, writes, command })
}

/// The tool's arguments object.
fn args(tool: &str, envelope: &Envelope) -> Result<Value, PayloadError> {
    let field = envelope.args_field;
    let missing = |field: &str| PayloadError::Missing { tool: tool.to_string(), field: field.to_string() };
    match &envelope.args {
        // Copilot CLI passes its arguments as a JSON string.
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(inner @ Value::Object(_)) => Ok(inner),
            _ => Err(missing(&format!("{field} object (a string that is not a JSON object)"))),
        },
        Some(obj @ Value::Object(_)) => Ok(obj.clone()),
        _ => Err(missing(field)),
    }
}

/// The first string among `keys` in `args`.
fn path_in(tool: &str, args: &Value, keys: &[&str]) -> Result<String, PayloadError> {
    keys.iter()
        .find_map(|k| str_at(args, k).filter(|s| !s.is_empty()))
        .map(String::from)
        .ok_or_else(|| PayloadError::Missing { tool: tool.to_string(), field: keys.join(" or ") })
}

/// A replacement of `old` (when it is a non-empty string), else the whole file.
fn replace(args: &Value, keys: &[&str]) -> Change {
    match keys.iter().find_map(|k| str_at(args, k)).filter(|s| !s.is_empty()) {
        Some(old) => Change::Replace(vec![old.to_string()]),
        None => Change::WholeFile,
    }
}

/// The files `tool`'s call writes: a writing tool of the host's ([`super::PayloadFacts`]'s
/// `write_tools`) where its arguments say; nothing for a tool that only reads ([`read_only`]);
/// else every path its arguments name ([`unknown_writes`]).
fn writes(host: Host, tool: &str, v: &Envelope) -> Result<Vec<FileWrite>, PayloadError> {
    let Some((_, how)) = host.facts().payload.write_tools.iter().find(|(name, _)| *name == tool) else {
        return Ok(if read_only(host, tool) { Vec::new() } else { unknown_writes(tool, v) });
    };
    let a = args(tool, v)?;
    let one = |path: String, change: Change| Ok(vec![FileWrite { path, change }]);
    match *how {
        WriteArgs::Whole { path } => one(path_in(tool, &a, path)?, Change::WholeFile),
        WriteArgs::Replace { path, old } => one(path_in(tool, &a, path)?, replace(&a, old)),
        WriteArgs::Edits { path, old } => {
            let path = path_in(tool, &a, path)?;
            let olds: Option<Vec<String>> = a.get("edits").and_then(Value::as_array).map(|edits| {
                edits.iter().filter_map(|e| str_at(e, old)).filter(|s| !s.is_empty()).map(String::from).collect()
            });
            match olds {
                Some(o) if !o.is_empty() => one(path, Change::Replace(o)),
                _ => one(path, Change::WholeFile),
            }
        }
        WriteArgs::EditsPerFile { path, old, edit_path } => edits_per_file(tool, &a, path, old, edit_path),
        WriteArgs::Patch { patch } => patch_writes(tool, &path_in(tool, &a, patch)?),
        WriteArgs::Editor { path, old } => match str_at(&a, "command") {
            Some("view") => Ok(Vec::new()),
            Some("str_replace") => one(path_in(tool, &a, path)?, replace(&a, old)),
            _ => one(path_in(tool, &a, path)?, Change::WholeFile),
        },
    }
}

/// The tools each host documents as only reading (their path arguments name what they read), and
/// git-mas's own MCP tools, which write `refs/mas`, never a file. Any other tool's name that says
/// it only reads (its last part, after an MCP server's prefix, starts with a reading verb) counts
/// too.
pub fn read_only(host: Host, tool: &str) -> bool {
    let documented = host.facts().payload.read_only_tools;
    if documented.contains(&tool) {
        return true;
    }
    let lower = tool.to_ascii_lowercase();
    if lower.contains("git-mas") || lower.contains("git_mas") {
        return true;
    }
    let last = lower.rsplit("__").next().unwrap_or(&lower);
    const READING: [&str; 10] = ["read", "list", "get", "search", "find", "grep", "glob", "view", "show", "stat"];
    READING
        .iter()
        .any(|verb| last.strip_prefix(verb).is_some_and(|rest| rest.is_empty() || rest.starts_with(['_', '-'])))
}

/// An unknown tool's writes: every path its arguments name at the top level ([`PATH_KEYS`]),
/// each as a whole-file write. Arguments that are not an object name nothing.
fn unknown_writes(tool: &str, v: &Envelope) -> Vec<FileWrite> {
    let Ok(a) = args(tool, v) else { return Vec::new() };
    let Some(map) = a.as_object() else { return Vec::new() };
    let mut out: Vec<FileWrite> = Vec::new();
    let mut push = |p: &str| {
        if !p.is_empty() && !out.iter().any(|w| w.path == p) {
            out.push(FileWrite { path: p.to_string(), change: Change::WholeFile });
        }
    };
    for (key, value) in map {
        let key: String = key.chars().filter(|c| !matches!(c, '_' | '-')).collect::<String>().to_ascii_lowercase();
        if !PATH_KEYS.contains(&key.as_str()) {
            continue;
        }
        match value {
            Value::String(p) => push(p),
            Value::Array(items) => items.iter().filter_map(Value::as_str).for_each(&mut push),
            _ => {}
        }
    }
    out
}

/// [`WriteArgs::EditsPerFile`] (OpenCode's `multiedit`: `{filePath, edits: [{filePath?,
/// oldString, newString}]}`), each edit in its own file when it names one. An edit without an
/// `old` string (or an `edits` that is not a list of objects) is an arguments shape the gate does
/// not know, so the call is refused.
fn edits_per_file(
    tool: &str,
    a: &Value,
    path: &[&str],
    old: &str,
    edit_path: &str,
) -> Result<Vec<FileWrite>, PayloadError> {
    let missing = |field: &str| PayloadError::Missing { tool: tool.to_string(), field: field.to_string() };
    let path = path_in(tool, a, path)?;
    let edits = a.get("edits").and_then(Value::as_array).ok_or_else(|| missing("edits list"))?;
    let mut out: Vec<FileWrite> = Vec::new();
    for edit in edits {
        let text = str_at(edit, old).ok_or_else(|| missing(&format!("edits[].{old}")))?;
        let file = str_at(edit, edit_path).filter(|p| !p.is_empty()).unwrap_or(&path).to_string();
        let change = if text.is_empty() { Change::WholeFile } else { Change::Replace(vec![text.to_string()]) };
        match out.iter_mut().find(|w| w.path == file) {
            Some(w) => w.change = merge(std::mem::replace(&mut w.change, Change::WholeFile), change),
            None => out.push(FileWrite { path: file, change }),
        }
    }
    if out.is_empty() {
        return Err(missing("edits (an empty list)"));
    }
    Ok(out)
}

/// Two changes of one file as one: replacements add up, anything else is the whole file.
fn merge(a: Change, b: Change) -> Change {
    match (a, b) {
        (Change::Replace(mut x), Change::Replace(y)) => {
            x.extend(y);
            Change::Replace(x)
        }
        _ => Change::WholeFile,
    }
}

/// Every file an `apply_patch` patch writes: `*** Add File:`, `*** Update File:` (with its
/// hunks), `*** Delete File:` and `*** Move to:` (a move writes both paths).
pub fn patch_writes(tool: &str, patch: &str) -> Result<Vec<FileWrite>, PayloadError> {
    let mut out: Vec<FileWrite> = Vec::new();
    let mut hunks: Option<Vec<Vec<String>>> = None;
    let flush = |out: &mut Vec<FileWrite>, hunks: &mut Option<Vec<Vec<String>>>| {
        if let (Some(h), Some(last)) = (hunks.take(), out.last_mut()) {
            let h: Vec<Vec<String>> = h.into_iter().filter(|b| !b.is_empty()).collect();
            last.change = if h.is_empty() { Change::WholeFile } else { Change::Hunks(h) };
        }
    };
    for line in patch.lines() {
        let marker = |m: &str| line.strip_prefix(m).map(|p| p.trim().to_string());
        if let Some(p) = marker("*** Update File:") {
            flush(&mut out, &mut hunks);
            out.push(FileWrite { path: p, change: Change::WholeFile });
            hunks = Some(vec![Vec::new()]);
        } else if let Some(p) = marker("*** Add File:").or_else(|| marker("*** Delete File:")) {
            flush(&mut out, &mut hunks);
            out.push(FileWrite { path: p, change: Change::WholeFile });
        } else if let Some(p) = marker("*** Move to:") {
            // The source is rewritten whole (it goes away); the destination is new.
            if let Some(last) = out.last_mut() {
                last.change = Change::WholeFile;
            }
            hunks = None;
            out.push(FileWrite { path: p, change: Change::WholeFile });
        } else if let Some(h) = hunks.as_mut() {
            if line.starts_with("@@") {
                h.push(Vec::new());
            } else if let Some(old) = line.strip_prefix(' ').or_else(|| line.strip_prefix('-')) {
                if let Some(b) = h.last_mut() {
                    b.push(old.to_string());
                }
            } else if line.is_empty()
                && let Some(b) = h.last_mut()
            {
                b.push(String::new());
            }
        }
    }
    flush(&mut out, &mut hunks);
    if out.is_empty() || out.iter().any(|w| w.path.is_empty()) {
        return Err(PayloadError::Patch { tool: tool.to_string() });
    }
    Ok(out)
}

/// The lines (1-based, inclusive) a change touches in `current` (the file as it is now), or
/// `None` when they cannot be told (whole file, no such file, text not found exactly once).
pub fn changed_lines(change: &Change, current: Option<&str>) -> Option<Vec<[u32; 2]>> {
    let current = current?;
    match change {
        Change::WholeFile => None,
        Change::Replace(olds) => olds.iter().map(|old| unique_span(current, old)).collect(),
        Change::Hunks(hunks) => {
            let lines: Vec<&str> = current.lines().collect();
            hunks.iter().map(|h| block_span(&lines, h)).collect()
        }
    }
}

/// The line span of `needle` when it occurs exactly once in `text`.
fn unique_span(text: &str, needle: &str) -> Option<[u32; 2]> {
    let at = text.find(needle)?;
    if text[at + 1..].contains(needle) {
        return None;
    }
    let first = text[..at].matches('\n').count() as u32 + 1;
    let body = needle.strip_suffix('\n').unwrap_or(needle);
    Some([first, first + body.matches('\n').count() as u32])
}

/// The line span of the block `old` (consecutive lines, trailing space ignored) when it occurs
/// exactly once in `lines`.
fn block_span(lines: &[&str], old: &[String]) -> Option<[u32; 2]> {
    if old.is_empty() || old.len() > lines.len() {
        return None;
    }
    let same = |a: &str, b: &str| a.trim_end() == b.trim_end();
    let mut found = (0..=lines.len() - old.len()).filter(|&i| old.iter().zip(&lines[i..]).all(|(o, l)| same(o, l)));
    let start = found.next()?;
    if found.next().is_some() {
        return None;
    }
    Some([start as u32 + 1, (start + old.len()) as u32])
}

#[cfg(test)]
#[path = "payload_tests.rs"]
mod tests;

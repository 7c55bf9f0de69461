//! The edit hook in a host's own configuration: which files `git mas hooks install --host`
//! writes, what goes in them, and how uninstall takes exactly that out again.
//!
//! Each file is planned from its current text before any is written ([`apply`]; the vocabulary
//! is [`super::plan`]'s), so a refusal leaves every file as it was. Where the files are, which
//! events a host has and which tools it routes are the host table's ([`super::HookFacts`]); what
//! the real hosts were seen to do is in `docs/hosts.md`.
//!
//! The decisions:
//!
//! - A host's settings file is usually the user's too (their model, permissions, hooks), so our
//!   entries are merged in through the byte ranges of a parsed tree ([`super::edit`]): the bytes
//!   around them are never re-serialized, install then uninstall gives back the user's bytes, and
//!   a second install changes nothing. An entry is ours by its command ([`GATE_COMMAND_PREFIX`]),
//!   never by its position. A file that does not parse as the host reads it (JSON, or JSON with
//!   comments where the host accepts them) is refused and left as it was.
//! - Where a host reads a folder of hook files or a plugin (copilot, goose, opencode), the file is
//!   entirely ours ([`FileKind::Own`]): created on install, removed on uninstall, and a file of
//!   that name with other bytes is refused, untouched. What earlier releases wrote there is
//!   recognised byte for byte and upgraded.
//! - Each file carries one entry per [`Stage`] the host has an event for: the gate before a tool
//!   that may write (the edit gate, routed by the host's matcher, the shell included so that team
//!   mode can keep what other sessions hold), `--post-tool` after every tool (what a tool changed
//!   behind the edit gate's back is found there; registered under the failure event too where a
//!   host has one, as a failed shell call can still have written), and `--session-end` when a
//!   session ends (its claims are released). They are added in that order and taken out in the
//!   reverse one, so each cut undoes the last insertion left. Only the pre-tool entry refuses
//!   when the hook fails (cursor's `failClosed`, goose's `on_failure`): afterwards there is
//!   nothing left to refuse. A session-end entry has no matcher (gemini compares it with the
//!   reason as a plain string).
//! - OpenCode runs no hook command: its hook is a plugin module ([`super::opencode`]).
//! - A host may need more than the file before the hook runs: trust (codex, copilot, gemini) or,
//!   in an agent's linked worktree, words on its command line. [`notes`] says so on install and
//!   status; [`session_args`] and [`session_prefix`] are those words, which trust the hook for
//!   that one session and save nothing in the user's configuration.
//! - An empty container is indistinguishable from one install created: uninstall removes a
//!   `hooks.<event>` list or a `hooks` object that only our entry kept non-empty. A shared file
//!   is removed only when it is byte for byte the file install creates where there was none.
//!
//! What a crash leaves: every write is a temporary file renamed over the target
//! ([`super::files`]; through a symbolic link to its final target, so the link stays a link), so
//! each file is as it was or as it is meant to be, with perhaps a temporary beside it that no host
//! reads and `git mas doctor --fix` removes. Files and then empty folders are removed one at a
//! time; a crash between leaves empty folders, which the next uninstall removes.

use super::edit::{self, prop};
use super::files::{HostHookError, read};
use super::opencode::{self, OpenCodeRelease};
use super::plan::{Action, FileReport, FileState, Plan, Removal, carry_out};
use super::{Env, HookLayout, Host, Scope};
use jsonc_parser::ast;
use jsonc_parser::common::{Range, Ranged};
use std::path::{Path, PathBuf};

/// The program every entry we configure runs: the hook's own binary (`git-mas-hook`, installed
/// beside `git-mas`), called by name so that a project's committed settings hold on every
/// machine. It answers as `git mas gate --host` does, without a `git` process started first
/// and in a binary that links only the hook's path (BENCHMARKS.md, "The hook's own binary").
pub const HOOK_PROGRAM: &str = "git-mas-hook";
/// The start of every command we configure; an entry whose command starts so is ours
/// ([`is_our_command`]).
pub const GATE_COMMAND_PREFIX: &str = "git-mas-hook --host";
/// The start of the commands earlier releases configured, through git's dispatcher: an entry so
/// is ours too, replaced by install and removed by uninstall.
pub const EARLIER_COMMAND_PREFIX: &str = "git mas gate --host";

/// Where [`HOOK_PROGRAM`] is on `env`'s `PATH`: the first executable file of that name, the one a
/// host would start. `None` when it is not there, and every host would then fail to start the
/// hook (most let the tool call through).
pub fn hook_program(env: &dyn Env) -> Option<PathBuf> {
    super::detection::on_path(HOOK_PROGRAM, env)
}

/// Whether a hook's command is one we configure, this release's or an earlier one's.
pub fn is_our_command(command: &str) -> bool {
    let command = command.trim_start();
    command.starts_with(GATE_COMMAND_PREFIX) || command.starts_with(EARLIER_COMMAND_PREFIX)
}
/// How long a host waits for the gate, in seconds.
pub const TIMEOUT_SECS: u64 = 10;

/// The flag of the gate command a post-tool entry runs.
pub const POST_TOOL_FLAG: &str = "--post-tool";
/// The flag of the gate command a session-end entry runs.
pub const SESSION_END_FLAG: &str = "--session-end";
/// A post-tool entry's matcher: every tool, the shell's too (a regular expression in every host
/// that has matchers).
pub const ANY_TOOL: &str = ".*";

/// The command a host runs before a tool.
pub fn gate_command(host: Host) -> String {
    format!("{GATE_COMMAND_PREFIX} {}", host.name())
}

/// The moments of a session our entries run the gate at, each under the host's event for it
/// ([`super::HookFacts`]'s `event`, `post_tool_event`, `session_end_event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Before a tool runs: may it write the files it names? Only the writing tools are routed,
    /// and a hook that fails refuses where the host can say so.
    PreTool,
    /// After a tool ran, every tool (the shell's too): what did it change?
    PostTool,
    /// After a tool call that failed, where the host runs another event for it than for a call
    /// that succeeded (Claude Code's `PostToolUseFailure` for a shell command that exited
    /// non-zero): the same check as [`Stage::PostTool`], whose event never sees such a call.
    PostToolFailure,
    /// The session ended, whatever the reason: no matcher (gemini compares a `SessionEnd`
    /// matcher with the reason as a plain string, so `.*` never matched).
    SessionEnd,
}

impl Stage {
    /// Every stage, in the order install adds their entries.
    pub const ALL: [Stage; 4] = [Stage::PreTool, Stage::PostTool, Stage::PostToolFailure, Stage::SessionEnd];

    /// The host's event for this stage; `None` where the host has none.
    pub fn event(self, host: Host) -> Option<&'static str> {
        let facts = host.facts().hooks;
        match self {
            Stage::PreTool => Some(facts.event),
            Stage::PostTool => facts.post_tool_event,
            Stage::PostToolFailure => facts.post_tool_failure_event,
            Stage::SessionEnd => facts.session_end_event,
        }
    }

    /// The command the host runs at this stage.
    pub fn command(self, host: Host) -> String {
        match self {
            Stage::PreTool => gate_command(host),
            Stage::PostTool | Stage::PostToolFailure => format!("{} {POST_TOOL_FLAG}", gate_command(host)),
            Stage::SessionEnd => format!("{} {SESSION_END_FLAG}", gate_command(host)),
        }
    }
}

/// The stages `host` has an event for, each with its event, in install order.
pub fn stages(host: Host) -> Vec<(Stage, &'static str)> {
    Stage::ALL.into_iter().filter_map(|s| s.event(host).map(|e| (s, e))).collect()
}

/// What a file is to us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileKind {
    /// A settings file shared with the user: our entry is merged into it.
    Merged,
    /// A file entirely ours, with exactly these bytes.
    Own(String),
}

/// One file of a host's hook configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookFile {
    /// The directory the configuration lives under (never removed).
    pub base: PathBuf,
    /// The file, relative to `base`.
    pub rel: PathBuf,
    /// Shared or ours.
    pub kind: FileKind,
}

impl HookFile {
    /// The file's full path.
    pub fn path(&self) -> PathBuf {
        self.base.join(&self.rel)
    }
}

/// The files of `host`'s hook configuration in `scope`; `None` for the global scope when
/// neither `HOME` nor the host's override is set.
pub fn hook_files(host: Host, scope: &Scope, env: &dyn Env) -> Option<Vec<HookFile>> {
    let facts = host.facts().hooks;
    let base = match scope {
        Scope::Project(top) => top.join(facts.project_dir),
        Scope::Global => facts.user_dir.resolve(env)?,
    };
    let file = |rel: &str, kind: FileKind| HookFile { base: base.clone(), rel: PathBuf::from(rel), kind };
    let files = match facts.layout {
        HookLayout::Plugin => vec![
            file(GOOSE_MANIFEST, FileKind::Own(goose_manifest())),
            file(facts.file, FileKind::Own(own_content(host))),
        ],
        HookLayout::OwnFile | HookLayout::Module => vec![file(facts.file, FileKind::Own(own_content(host)))],
        HookLayout::Merged => vec![file(facts.file, FileKind::Merged)],
    };
    // In the project, the host's folder (e.g. `.claude`) is removed too when it ends up empty;
    // so the base is the top of the tree and the folder is part of the relative path.
    Some(match scope {
        Scope::Project(top) => files
            .into_iter()
            .map(|f| HookFile { base: top.clone(), rel: Path::new(facts.project_dir).join(&f.rel), kind: f.kind })
            .collect(),
        Scope::Global => files,
    })
}

/// The paths of the files [`hook_files`] names, without making our files' content: the edit gate
/// asks for them on every call (making the content of every host's files took 0.2 ms of each).
pub fn hook_paths(host: Host, scope: &Scope, env: &dyn Env) -> Option<Vec<PathBuf>> {
    let facts = host.facts().hooks;
    let base = match scope {
        Scope::Project(top) => top.join(facts.project_dir),
        Scope::Global => facts.user_dir.resolve(env)?,
    };
    let rels = match facts.layout {
        HookLayout::Plugin => vec![GOOSE_MANIFEST, facts.file],
        HookLayout::OwnFile | HookLayout::Module | HookLayout::Merged => vec![facts.file],
    };
    Some(rels.into_iter().map(|rel| base.join(rel)).collect())
}

/// A goose plugin's manifest, beside its hooks file.
const GOOSE_MANIFEST: &str = "plugins/git-mas/plugin.json";

/// A file's state, from its current content (`None`: absent).
pub fn file_state(host: Host, file: &HookFile, current: Option<&str>) -> FileState {
    match (&file.kind, current) {
        (_, None) => FileState::NotInstalled,
        (FileKind::Own(ours), Some(text)) => {
            if text == ours {
                FileState::Installed
            } else {
                FileState::Other
            }
        }
        (FileKind::Merged, Some(text)) => {
            let (mut any, mut exact) = (false, true);
            for (stage, event) in stages(host) {
                let Ok(found) = ours_in(host, &file.path(), text, event) else { return FileState::Invalid };
                any |= !found.is_empty();
                exact &= found.len() == 1 && found[0] == entry_value(host, stage);
            }
            match (any, exact) {
                (false, _) => FileState::NotInstalled,
                (true, true) => FileState::Installed,
                (true, false) => FileState::Other,
            }
        }
    }
}

/// What install does to a file.
pub fn plan_install(host: Host, file: &HookFile, current: Option<&str>) -> Result<Plan, HostHookError> {
    let path = file.path();
    match (&file.kind, current) {
        (FileKind::Own(ours), None) => Ok(Plan::Write(ours.clone())),
        (FileKind::Own(ours), Some(text)) if text == ours => Ok(Plan::Keep),
        // An earlier release's file of ours, byte for byte: replaced.
        (FileKind::Own(ours), Some(text)) if earlier_releases(host, ours).iter().any(|e| e == text) => {
            Ok(Plan::Write(ours.clone()))
        }
        (FileKind::Own(_), Some(_)) => Err(HostHookError::NotOurs { path }),
        (FileKind::Merged, None) => Ok(Plan::Write(new_file(host))),
        (FileKind::Merged, Some(text)) => {
            if file_state(host, file, Some(text)) == FileState::Installed {
                return Ok(Plan::Keep);
            }
            // A stale entry of ours (another matcher, an old timeout, an earlier release's file
            // without the post-tool and session-end entries) goes before ours are added.
            let mut text = match remove_ours(host, &path, text)? {
                Removal::Unchanged => text.to_string(),
                Removal::Created => return Ok(Plan::Write(new_file(host))),
                Removal::Changed(t) => t,
            };
            for (stage, event) in stages(host) {
                text = insert_entry(host, &path, &text, stage, event)?;
            }
            Ok(Plan::Write(text))
        }
    }
}

/// The bytes earlier releases wrote for a file of ours whose bytes are now `ours`: such a file is
/// replaced on install and removed on uninstall like the current one (any other content is
/// someone's, refused). Before the post-tool and session-end entries, the file held the pre-tool
/// entry alone; before the matchers routed every writing tool, goose's matcher was
/// `^developer__(write|edit)$`. The OpenCode plugin's releases are [`OpenCodeRelease::EARLIER`].
/// All of these ran the gate as [`EARLIER_COMMAND_PREFIX`], and so did the release before the
/// hook's own binary, whose file was the current one but for its command.
fn earlier_releases(host: Host, ours: &str) -> Vec<String> {
    // Goose's plugin manifest has not changed.
    if ours != own_content(host) {
        return Vec::new();
    }
    let through_git = |text: &str| text.replace(GATE_COMMAND_PREFIX, EARLIER_COMMAND_PREFIX);
    let mut earlier: Vec<String> = earlier_shapes(host).iter().map(|t| through_git(t)).collect();
    earlier.push(through_git(ours));
    earlier
}

/// The earlier shapes of a file of ours, oldest first, written here with this release's command.
fn earlier_shapes(host: Host) -> Vec<String> {
    let pre_only = || edit::pretty(&skeleton_of(host, &[(Stage::PreTool, event_name(host))]));
    match host {
        Host::Copilot => vec![pre_only()],
        Host::Goose => {
            let pre_only = pre_only();
            let narrow = pre_only.replace(&format!("\"{}\"", matcher(host)), "\"^developer__(write|edit)$\"");
            vec![pre_only, narrow]
        }
        Host::OpenCode => OpenCodeRelease::EARLIER.iter().map(|r| opencode_plugin(host, r)).collect(),
        _ => Vec::new(),
    }
}

/// What uninstall does to a file.
pub fn plan_uninstall(host: Host, file: &HookFile, current: Option<&str>) -> Result<Plan, HostHookError> {
    let path = file.path();
    match (&file.kind, current) {
        (_, None) => Ok(Plan::Keep),
        (FileKind::Own(ours), Some(text)) if text == ours || earlier_releases(host, ours).iter().any(|e| e == text) => {
            Ok(Plan::Remove)
        }
        (FileKind::Own(_), Some(_)) => Err(HostHookError::NotOurs { path }),
        (FileKind::Merged, Some(text)) => Ok(remove_ours(host, &path, text)?.into_plan()),
    }
}

/// Whether the host reads comments in this file.
fn comments_allowed(host: Host) -> bool {
    host.facts().hooks.comments
}

/// The file's top-level object, with the byte range of every node.
fn parse<'a>(host: Host, path: &Path, text: &'a str) -> Result<ast::Object<'a>, HostHookError> {
    edit::parse_object(path, text, comments_allowed(host))
}

/// The event a host's entry goes under.
fn event_name(host: Host) -> &'static str {
    host.facts().hooks.event
}

fn shape(path: &Path, what: String) -> HostHookError {
    HostHookError::Shape { path: path.to_path_buf(), what }
}

/// `hooks` and `hooks.<event>`, as far as they exist.
fn event_list<'o, 'a>(
    top: &'o ast::Object<'a>,
    path: &Path,
    event: &str,
) -> Result<(Option<&'o ast::Object<'a>>, Option<&'o ast::Array<'a>>), HostHookError> {
    let Some(hooks) = prop(top, "hooks") else { return Ok((None, None)) };
    let ast::Value::Object(hooks) = &hooks.value else { return Err(shape(path, "\"hooks\" is not an object".into())) };
    match prop(hooks, event).map(|p| &p.value) {
        None => Ok((Some(hooks), None)),
        Some(ast::Value::Array(list)) => Ok((Some(hooks), Some(list))),
        Some(_) => Err(shape(path, format!("\"hooks.{event}\" is not a list"))),
    }
}

fn value_of(host: Host, text: &str, node: &impl Ranged) -> Option<serde_json::Value> {
    edit::value_of(text, node, comments_allowed(host))
}

/// Whether a hook object's command is ours.
fn is_ours(hook: &serde_json::Value) -> bool {
    ["command", "bash"].iter().any(|k| hook.get(k).and_then(|c| c.as_str()).is_some_and(is_our_command))
}

/// Whether the host's list holds groups (`{matcher, hooks: [...]}`) or flat entries (Cursor).
fn grouped(host: Host) -> bool {
    host != Host::Cursor
}

/// The entries of ours under `event` in the file: for grouped hosts, each group holding a hook of
/// ours.
fn ours_in(host: Host, path: &Path, text: &str, event: &str) -> Result<Vec<serde_json::Value>, HostHookError> {
    let top = parse(host, path, text)?;
    let (_, Some(list)) = event_list(&top, path, event)? else { return Ok(Vec::new()) };
    Ok(list
        .elements
        .iter()
        .filter_map(|e| value_of(host, text, e))
        .filter(|v| match grouped(host) {
            true => v.get("hooks").and_then(|h| h.as_array()).is_some_and(|hs| hs.iter().any(is_ours)),
            false => is_ours(v),
        })
        .collect())
}

/// A child of a container, by byte range, and its siblings' ranges (itself included).
struct Spot {
    container: Range,
    siblings: Vec<Range>,
    index: usize,
}

/// The first hook of ours under `event`, as the outermost node that only it keeps non-empty (its
/// group, the event's list, `hooks`).
fn first_ours(host: Host, path: &Path, text: &str, event: &str) -> Result<Option<Spot>, HostHookError> {
    let top = parse(host, path, text)?;
    let (Some(hooks), Some(list)) = event_list(&top, path, event)? else { return Ok(None) };
    let mut found = None;
    for (gi, group) in list.elements.iter().enumerate() {
        if !grouped(host) {
            if value_of(host, text, group).is_some_and(|v| is_ours(&v)) {
                found = Some((gi, None));
                break;
            }
            continue;
        }
        let ast::Value::Object(g) = group else { continue };
        let Some(ast::Value::Array(inner)) = prop(g, "hooks").map(|p| &p.value) else { continue };
        if let Some(hi) = inner.elements.iter().position(|h| value_of(host, text, h).is_some_and(|v| is_ours(&v))) {
            found = Some((gi, Some((inner, hi))));
            break;
        }
    }
    let Some((gi, inner)) = found else { return Ok(None) };
    let ranges = |v: &[ast::Value]| v.iter().map(|e| e.range()).collect::<Vec<_>>();
    let props = |o: &ast::Object| o.properties.iter().map(|p| p.range).collect::<Vec<_>>();
    if let Some((inner, hi)) = inner
        && inner.elements.len() > 1
    {
        return Ok(Some(Spot { container: inner.range, siblings: ranges(&inner.elements), index: hi }));
    }
    if list.elements.len() > 1 {
        return Ok(Some(Spot { container: list.range, siblings: ranges(&list.elements), index: gi }));
    }
    let at_event = hooks.properties.iter().position(|p| p.name.as_str() == event).expect("found above");
    if hooks.properties.len() > 1 {
        return Ok(Some(Spot { container: hooks.range, siblings: props(hooks), index: at_event }));
    }
    let at = top.properties.iter().position(|p| p.name.as_str() == "hooks").expect("found above");
    Ok(Some(Spot { container: top.range, siblings: props(&top), index: at }))
}

/// The file without any hook of ours. Each removal takes back exactly what an insertion
/// ([`insert_entry`]) adds: the separator before the node, or for a sole child everything
/// between the opening bracket and its end. The events are taken in the reverse of install's
/// order, so that each cut undoes the last insertion left.
fn remove_ours(host: Host, path: &Path, text: &str) -> Result<Removal, HostHookError> {
    if text == new_file(host) {
        return Ok(Removal::Created);
    }
    let mut text = text.to_string();
    let mut removed = false;
    for (_, event) in stages(host).into_iter().rev() {
        while let Some(spot) = first_ours(host, path, &text, event)? {
            text = edit::cut(&text, spot.container, &spot.siblings, spot.index);
            removed = true;
        }
    }
    Ok(if removed { Removal::Changed(text) } else { Removal::Unchanged })
}

/// `text` with our entry for `stage` added at the end of `hooks.<event>`, creating what is missing.
fn insert_entry(host: Host, path: &Path, text: &str, stage: Stage, event: &str) -> Result<String, HostHookError> {
    let top = parse(host, path, text)?;
    let entry = entry_value(host, stage);
    let (container, last, value) = match event_list(&top, path, event)? {
        (_, Some(list)) => (list.range, list.elements.last().map(|e| e.range()), (None, entry)),
        (Some(hooks), None) => {
            (hooks.range, hooks.properties.last().map(|p| p.range), (Some(event), serde_json::json!([entry])))
        }
        (None, None) => {
            let mut inner = serde_json::Map::new();
            inner.insert(event.to_string(), serde_json::json!([entry]));
            (top.range, top.properties.last().map(|p| p.range), (Some("hooks"), serde_json::Value::Object(inner)))
        }
    };
    Ok(edit::append(text, container, last, value.0, &value.1))
}

/// Our entry for `stage` in `hooks.<event>`. Only the pre-tool entry refuses when the hook
/// fails (cursor's `failClosed`, goose's `on_failure: "block"`): after a tool, or at the end of a
/// session, there is nothing left to refuse.
fn entry_value(host: Host, stage: Stage) -> serde_json::Value {
    use serde_json::json;
    let command = stage.command(host);
    let hook = |extra: serde_json::Value| {
        let mut h = json!({"type": "command", "command": command, "timeout": TIMEOUT_SECS});
        if let (Some(h), serde_json::Value::Object(extra)) = (h.as_object_mut(), extra) {
            h.extend(extra);
        }
        h
    };
    let matcher = match stage {
        Stage::PreTool => Some(matcher(host)),
        Stage::PostTool | Stage::PostToolFailure => Some(ANY_TOOL),
        Stage::SessionEnd => None,
    };
    let group = |hook: serde_json::Value| match matcher {
        Some(m) => json!({"matcher": m, "hooks": [hook]}),
        None => json!({"hooks": [hook]}),
    };
    let guard = stage == Stage::PreTool;
    match host {
        // Cursor's flat entry: no matcher after a tool or at the end, which is every one.
        Host::Cursor if guard => json!({"command": command, "matcher": matcher, "failClosed": true}),
        Host::Cursor => json!({"command": command}),
        Host::Copilot => json!({"type": "command", "bash": command, "timeoutSec": TIMEOUT_SECS}),
        Host::Gemini => {
            let name = match stage {
                Stage::PreTool => "git-mas-gate",
                Stage::PostTool => "git-mas-post-tool",
                Stage::PostToolFailure => "git-mas-post-tool-failure",
                Stage::SessionEnd => "git-mas-session-end",
            };
            group(hook(json!({"name": name, "timeout": TIMEOUT_SECS * 1000})))
        }
        Host::Goose if guard => group(hook(json!({"on_failure": "block"}))),
        // Claude Code lets a tool call through when its command hook fails (an exit code other
        // than 0 or 2: 127 when `git-mas-hook` is not on PATH, a crash) unless the hook says
        // `onFailure: "block"`, which counts the failure as a refusal (exit 2). Seen in the
        // pinned 2.1.332 (tests/cli/hosts/edit_gate.rs).
        Host::ClaudeCode if guard => group(hook(json!({"onFailure": "block"}))),
        Host::Goose | Host::Codex | Host::ClaudeCode | Host::OpenCode => group(hook(json!({}))),
    }
}

/// The tools a host's hook entry routes to the gate: every tool of the host that can write a
/// file, and its shell tool (in team mode the files other sessions hold are kept before a shell
/// call, so that the post-tool entry can put back what the call changed in them; without the
/// pre-tool call nothing is kept and a shell write to a held file stays, as Claude Code 2.1.332
/// showed before `Bash` was routed). Where the host's own tools are listed, every MCP tool is
/// routed too (another server's `write_file` writes files as well; the gate lets a tool that
/// names no path, or only reads, through at once). Gemini CLI and Goose get every tool (`.*`):
/// their MCP tools' names carry no fixed prefix, and a tool that writes nothing is answered
/// before the repository is opened. Copilot's entry has no matcher (every tool comes), OpenCode's
/// plugin sends every tool but the ones it documents as only reading.
pub fn matcher(host: Host) -> &'static str {
    host.facts().hooks.matcher
}

/// The whole file for a host configured by a file of its own, or a new merged file.
fn skeleton(host: Host) -> serde_json::Value {
    skeleton_of(host, &stages(host))
}

/// [`skeleton`] with the entries of `stages` only.
fn skeleton_of(host: Host, stages: &[(Stage, &str)]) -> serde_json::Value {
    use serde_json::json;
    let mut hooks = serde_json::Map::new();
    for (stage, event) in stages {
        hooks.insert(event.to_string(), json!([entry_value(host, *stage)]));
    }
    match host {
        Host::Cursor | Host::Copilot => json!({"version": 1, "hooks": hooks}),
        _ => json!({"hooks": hooks}),
    }
}

fn new_file(host: Host) -> String {
    edit::pretty(&skeleton(host))
}

/// The bytes of a file that is entirely ours.
pub(crate) fn own_content(host: Host) -> String {
    match host {
        Host::OpenCode => opencode_plugin(host, &OpenCodeRelease::CURRENT),
        _ => edit::pretty(&skeleton(host)),
    }
}

/// The OpenCode plugin as `release` wrote it, running `host`'s gate commands.
fn opencode_plugin(host: Host, release: &OpenCodeRelease) -> String {
    let (pre_tool, post_tool, session_end) =
        (Stage::PreTool.command(host), Stage::PostTool.command(host), Stage::SessionEnd.command(host));
    opencode::render(
        release,
        opencode::Commands { pre_tool: &pre_tool, post_tool: &post_tool, session_end: &session_end },
    )
}

fn goose_manifest() -> String {
    edit::pretty(&serde_json::json!({
        "name": "git-mas",
        "version": "1.0.0",
        "description": "Refuses an edit of a file another agent holds (git mas gate --host goose)"
    }))
}

/// The words a host's command line needs so that an unattended session (an agent's) runs the hook
/// installed in its worktree, without any change to the user's own configuration: for codex, the
/// hook itself as an inline `[hooks]` table of the session's `-c` layer (in a linked worktree it
/// reads a project's hooks from the main checkout's `.codex/`, and only once trusted) and `--dangerously-bypass-hook-trust`, which trusts it
/// for this invocation only; for copilot, `--trust-folder` (the working directory's
/// configuration, `.github/hooks/` among it, trusted for this session only). Other hosts need
/// nothing.
pub fn session_args(host: Host) -> Vec<String> {
    match host {
        Host::Codex => vec![
            "--dangerously-bypass-hook-trust".into(),
            "-c".into(),
            format!("hooks.PreToolUse={}", codex_inline_hooks(&gate_command(host), matcher(host))),
        ],
        Host::Copilot => vec!["--trust-folder".into()],
        _ => Vec::new(),
    }
}

/// What goes before a host's command line (environment assignments, `sh` syntax) so that an
/// agent's session loads the hook installed in its worktree: for opencode,
/// `OPENCODE_CONFIG_CONTENT` (a config layer of its own) naming the plugin in the worktree's git
/// dir ([`OPENCODE_WORKTREE_PLUGIN`]) by a `file://` URL (the git dir is found when the line
/// runs, in the worktree); for a host that reads a project's settings only in a folder it trusts,
/// its [`super::PresetFacts`]'s `trust_env` (gemini's `GEMINI_CLI_TRUST_WORKSPACE=true`).
pub fn session_prefix(host: Host) -> Option<String> {
    match host {
        Host::OpenCode => Some(format!(
            r#"OPENCODE_CONFIG_CONTENT="{{\"plugin\":[\"file://$(git rev-parse --absolute-git-dir)/{OPENCODE_WORKTREE_PLUGIN}\"]}}""#
        )),
        _ => host.facts().preset.trust_env.map(String::from),
    }
}

/// Codex's `hooks.PreToolUse` list as a TOML value: one matcher group running `command`.
pub fn codex_inline_hooks(command: &str, matcher: &str) -> String {
    let quote = |s: &str| serde_json::Value::from(s).to_string();
    format!(
        "[{{matcher={},hooks=[{{type=\"command\",command={},timeout={TIMEOUT_SECS}}}]}}]",
        quote(matcher),
        quote(command)
    )
}

/// What a host needs, besides the file, before its hook runs (said on install and status).
/// A project scope whose `.git` is a file is a linked worktree.
pub fn notes(host: Host, scope: &Scope) -> Vec<String> {
    let linked = matches!(scope, Scope::Project(top) if top.join(".git").is_file());
    let args = || session_args(host).iter().map(|a| shell_word(a)).collect::<Vec<_>>().join(" ");
    match (host, scope) {
        (Host::Codex, Scope::Project(_)) if linked => vec![
            "In a linked worktree codex reads a project's hooks from the main checkout's .codex/, not \
             this one: run codex here with the hook on its command line (coordinate's codex agents get it): \
             `codex exec "
                .to_string()
                + &args()
                + "`",
        ],
        (Host::Codex, _) => {
            let mut n = vec![
                "Codex runs a new or changed hook only once it is trusted: `git mas hooks install --host codex \
                 --trust` writes that trust into codex's config.toml, or open /hooks in codex and trust it"
                    .to_string(),
            ];
            if matches!(scope, Scope::Project(_)) {
                n.push("Codex loads a project's hooks only when the project's .codex layer is trusted".into());
            }
            n
        }
        (Host::Copilot, Scope::Project(_)) => vec![
            "In prompt mode (-p, -s) copilot loads .github/hooks/ only in a folder it trusts: trust this one \
             (trusted_folders in ~/.copilot/config.json) or run copilot with --trust-folder (coordinate's \
             copilot agents get it)"
                .to_string(),
        ],
        (Host::Gemini, scope) => {
            let mut notes = Vec::new();
            if let Scope::Project(_) = scope {
                notes.push(
                    "Gemini CLI reads a project's .gemini/settings.json only in a folder it trusts: trust this one \
                     (git mas hooks install --host gemini --trust writes ~/.gemini/trustedFolders.json) or run \
                     gemini with GEMINI_CLI_TRUST_WORKSPACE=true (coordinate's gemini agents get it); --skip-trust \
                     does not load the hook"
                        .to_string(),
                );
            }
            notes.push(
                "Gemini CLI runs hooks while hooksConfig.enabled is true (the default in 0.61.0); releases that \
                 shipped hooks as experimental also need tools.enableHooks: true in settings.json"
                    .to_string(),
            );
            notes
        }
        _ => Vec::new(),
    }
}

/// `text` as one `sh` word: as it is when it needs no quoting, else single-quoted.
pub fn shell_word(text: &str) -> String {
    let plain = !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_=./:,@%+".contains(c));
    if plain { text.to_string() } else { format!("'{}'", text.replace('\'', "'\\''")) }
}

/// Applies `action` to `host`'s configuration in `scope`. Every file is planned before any is
/// written, so a refusal (invalid JSON, a file not ours) leaves every file as it was.
pub fn apply(action: Action, host: Host, scope: &Scope, env: &dyn Env) -> Result<Vec<FileReport>, HostHookError> {
    let files = hook_files(host, scope, env).ok_or(HostHookError::NoHome { host: host.name() })?;
    let mut plans = Vec::new();
    for file in &files {
        let current = read(&file.path())?;
        let plan = match action {
            Action::Install => plan_install(host, file, current.as_deref())?,
            Action::Uninstall => plan_uninstall(host, file, current.as_deref())?,
            Action::Status => Plan::Keep,
        };
        plans.push((file, current, plan));
    }
    let mut reports = Vec::new();
    for (file, current, plan) in plans {
        let path = file.path();
        let after = carry_out(&file.base, &path, current, &plan)?;
        let state = file_state(host, file, after.as_deref());
        reports.push(FileReport { path, state, changed: plan != Plan::Keep });
    }
    Ok(reports)
}

/// The OpenCode plugin's name in an agent's worktree: in the worktree's own git dir, outside the
/// working tree, where opencode installs nothing beside it.
pub const OPENCODE_WORKTREE_PLUGIN: &str = "mas-opencode-gate.js";

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;

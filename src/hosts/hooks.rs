//! Where each coding-agent host reads its edit hook, and how `git mas gate --host` gets into
//! that configuration and out of it again without disturbing anything else there.
//!
//! A host's settings file is usually the user's too: it holds their model, permissions and
//! hooks. So our entry is merged into it through a format-preserving syntax tree
//! (`jsonc_parser::cst`): the bytes around our entry are never re-serialized, an install
//! followed by an uninstall gives back the original bytes, and a second install changes nothing.
//! Our entry is recognised by its command ([`GATE_COMMAND_PREFIX`]), never by its position.
//! Where a host reads a folder of hook files, the file is entirely ours ([`FileKind::Own`]): it
//! is created on install, removed on uninstall, and a file of that name with other content is
//! refused, untouched. An existing file that does not parse as the host reads it (JSON; JSON
//! with comments where the host accepts them) is refused and left as it was.
//!
//! Each file carries up to three entries of ours, one per [`Stage`] the host has an event for:
//! `git mas gate --host H` before a tool that writes (the edit gate), `… --post-tool` after every
//! tool, the shell's too (what a tool changed behind the edit gate's back is found there), and
//! `… --session-end` when a session ends (its claims are released). They are added in that order
//! and taken out in the reverse one, so uninstall still gives back the user's bytes; a file an
//! earlier release wrote with the pre-tool entry alone is upgraded by install and cleared by
//! uninstall. OpenCode's plugin runs the post-tool gate from `tool.execute.after`; OpenCode has
//! no session-end event, so the plugin sends the session-end gate, for each session it served,
//! when the opencode process exits.
//!
//! The formats, as the hosts' documentation gives them (checked 2026-12):
//!
//! - Claude Code (code.claude.com/docs/en/hooks): `.claude/settings.json`, global
//!   `$CLAUDE_CONFIG_DIR/settings.json` or `~/.claude/settings.json`; `hooks.PreToolUse` is a
//!   list of `{matcher, hooks: [{type: "command", command, timeout (seconds)}]}`. Strict JSON.
//! - Codex (developers.openai.com/codex/hooks): `.codex/hooks.json`, global
//!   `$CODEX_HOME/hooks.json` or `~/.codex/hooks.json`, Claude's shape; the edit tool is
//!   `apply_patch`. Codex runs a new or changed hook only once it is trusted (`/hooks` in the
//!   TUI, or `hooks install --trust`, which writes the same entry), and loads project hooks only
//!   when the project is trusted (measured below). Strict JSON.
//! - Copilot CLI (docs.github.com/en/copilot/reference/hooks-reference): every `*.json` in
//!   `.github/hooks/`, so ours is `.github/hooks/git-mas.json`, and in the user-level hooks
//!   directory, `$COPILOT_HOME/hooks/` or `~/.copilot/hooks/`;
//!   `{version: 1, hooks: {preToolUse: [{type: "command", bash, timeoutSec}]}}`, no matcher
//!   (the gate answers a tool that writes nothing at once). Copilot also reads the hooks of a
//!   repository's `.claude/settings.json`; the Claude Code entry then sees Copilot's tool names,
//!   which write nothing for it, so it allows and our Copilot entry decides.
//! - Gemini CLI (google-gemini/gemini-cli docs/hooks/reference.md): `hooks.BeforeTool` in
//!   `.gemini/settings.json` or `~/.gemini/settings.json`, Claude's shape with a regular
//!   expression as matcher and the timeout in milliseconds (a `10` there is 10 ms: an
//!   installer's fix, ArmisSecurity/armis-cli#204, says so); the settings file may hold comments.
//!   `$GEMINI_CLI_HOME/.gemini` replaces `~/.gemini` when that variable is set (its source's
//!   `homedir()`).
//! - Cursor (third-party integrations of cursor.com/docs/hooks; the primary page was not
//!   readable): `.cursor/hooks.json` or `~/.cursor/hooks.json`, `{version: 1, hooks:
//!   {preToolUse: [{command, matcher, failClosed}]}}`; `failClosed: true` makes a crashed hook
//!   refuse. Strict JSON.
//! - Goose (block/goose documentation/docs/guides/context-engineering/hooks.md): a plugin
//!   folder, `.agents/plugins/git-mas/` or `~/.agents/plugins/git-mas/`, with `plugin.json` and
//!   `hooks/hooks.json` (Claude's shape; the matcher is an unanchored regular expression, the
//!   timeout in seconds; `on_failure: "block"` refuses when the hook gives no decision). Both
//!   files are ours.
//! - OpenCode (opencode.ai/docs/plugins): every file in `.opencode/plugins/` or
//!   `$XDG_CONFIG_HOME/opencode/plugins/` (`~/.config/opencode/plugins/`) is a plugin module; ours,
//!   `git-mas.js`, hooks `tool.execute.before`, runs the gate with `{tool, args, cwd, sessionID}`
//!   on stdin and throws on a deny or on any failure of the gate (protocol in [`super::payload`]);
//!   its `tool.execute.after` sends the post-tool gate the same fields and adds what it answers to
//!   the tool's output.
//!
//! Each host's session id field and its post-tool and session-end events ([`super::HookFacts`]'s
//! `post_tool_event`, `session_end_event`; [`super::PayloadFacts`]'s `session_field`). For the
//! five real CLIs, measured 2026-12-02 by running `cargo test --test cli hosts::edit_gate` with
//! `GIT_MAS_HOSTS_CAPTURE=DIR`, which also hooks the table's two events to a command that saves
//! its stdin: each event fired with the session's id under the same field as the pre-tool call
//! (`tests/fixtures/hook-payloads/<host>/post-tool-*.json`, `session-end.json`).
//!
//! | host | session id | post-tool | session end | checked |
//! |---|---|---|---|---|
//! | claude-code | `session_id` | `PostToolUse`; `PostToolUseFailure` for a call that failed | `SessionEnd` (`reason: "other"` at the end of `-p`) | 2.1.332 |
//! | codex | `session_id` | `PostToolUse` | `SessionEnd` (`reason: "other"` at the end of `exec`) | 0.171.0 |
//! | copilot | `sessionId` | `postToolUse` | `sessionEnd` (`reason: "complete"`) | 1.0.102 |
//! | gemini | `session_id` | `AfterTool` | `SessionEnd` (`reason: "exit"`) | 0.61.0 |
//! | opencode | `sessionID` | `tool.execute.after` | none (the plugin: when opencode exits) | 1.18.33 |
//! | cursor | `conversation_id` | `postToolUse`; `postToolUseFailure` | `sessionEnd` | its documentation, 2026-12-02 |
//! | goose | `session_id` | `PostToolUse`; `PostToolUseFailure` | `SessionEnd` | its documentation, 2026-12-02 |
//!
//! - Claude Code runs `PostToolUseFailure`, not `PostToolUse`, after a tool call that failed — a
//!   shell command that exited non-zero (2.1.332, measured 2026-12-05: `rm f; exit 1` was never
//!   checked, and the holder's file stayed deleted). So the post-tool check is registered under
//!   both ([`Stage::PostToolFailure`]), and its answer to the failure event names that event
//!   (`hookSpecificOutput.additionalContext`, which Claude Code hands the model with the failed
//!   call). Cursor and goose document the same split and get the same entry. Codex 0.171.0, copilot
//!   1.0.102, gemini 0.61.0 and opencode 1.18.33 run their post-tool event for a shell command
//!   whatever its exit code: the team-mode host tests' failing calls (`chmod 000 f; exit 1`, then
//!   `rm -f f; exit 1` as the last call) were put back there, 2026-12-05.
//!
//! - Gemini compares a `SessionEnd` entry's matcher with the reason as a plain string (not a
//!   regular expression): an entry with the matcher `.*` never ran; one without a matcher did.
//! - OpenCode passes `tool.execute.before` the input `{tool, sessionID, callID}` and the output
//!   `{args}`, and `tool.execute.after` the input `{tool, sessionID, callID, args}` (its 1.18.33
//!   binary, and what a plugin saved in the capture run). It has no session-end hook: a plugin's
//!   `event` hook sees bus events such as `session.idle` and `session.deleted`, but a session
//!   that is idle may go on and one that ends is not deleted. What does end is the process: a
//!   plugin's `process.on("exit")` handler ran as `opencode run` ended (after `session.idle`),
//!   and a `spawnSync` in it ran to its end; so the plugin keeps the sessions that asked the gate
//!   and ends each there.
//! - Cursor's documentation (cursor.com/docs/hooks.md) lists `sessionStart`/`sessionEnd` and
//!   `preToolUse`/`postToolUse`/`postToolUseFailure` for its agent, and `conversation_id` among
//!   every event's fields; goose's (block/goose
//!   documentation/docs/guides/context-engineering/hooks.md) lists `SessionStart`, `SessionEnd`,
//!   `PreToolUse`, `PostToolUse` and `PostToolUseFailure`, with `session_id` in every payload.
//!
//! What team mode needs of the hosts, measured 2026-12-02 with two real sessions at once
//! (`cargo test --test cli hosts::team_mode`: one host twice, two hosts side by side, two linked
//! worktrees), and what was changed for it:
//!
//! - The shell must reach the pre-tool gate: before a shell call the files other sessions hold
//!   are kept, and the post-tool gate puts back only what was kept. Claude Code's `Bash`, codex's
//!   shell (named `Bash` in its hook payloads) and OpenCode's `bash` were not routed (claude's
//!   matcher named the edit tools only; the plugin counted `bash` as reading), so a session's
//!   `echo x > f` over another's file stayed. They are routed now ([`matcher`]).
//! - Codex runs only trusted hooks, each handler on its own: with the pre-tool entry alone
//!   trusted, its `PostToolUse` and `SessionEnd` entries were skipped without a word (a claim
//!   outlived its session). `hooks install --host codex --trust` trusts all three
//!   ([`super::trust`]); codex gives a `SessionEnd` hook at most 3 s.
//! - Where the post-tool answer reaches the model: claude-code as a text of its own after the
//!   call ("PostToolUse:Bash hook blocking error from command: …"), codex in the call's output
//!   and a developer message, gemini in the call's result (`<hook_context>`), copilot as the
//!   call's result when the hook answers a `modifiedResult` (1.0.102 hands the model that text;
//!   it shows no `additionalContext`), opencode in the call's output through the plugin. So
//!   each of the five is told at once ([`super::reply::post_tool`]), and no later call of the
//!   session is refused to tell it.
//! - Every host's session-end hook ran as its non-interactive session ended (`-p`, `exec`, `-s`,
//!   headless gemini) and released the session's claims before the next session's edit.
//! - In a linked worktree added after the setup was committed, each host ran the hooks it
//!   reads there (codex the main checkout's trusted `.codex/hooks.json`, in the worktree), and
//!   sessions in the two worktrees kept off each other's files.
//! - Two `opencode run` started at one instant with one data folder: one of them failed at once
//!   ("database is locked"); started a moment apart, both ran.
//!
//! What the real hosts need beyond the file, in an agent's linked worktree (run offline against
//! the scripted model server: `cargo test --test cli hosts::edit_gate`; decisions in
//! [`session_args`] and [`host_artifacts`]):
//!
//! - codex 0.171.0 reads a linked worktree's project hooks from the *main checkout's*
//!   `.codex/hooks.json`, only in a project trusted in `$CODEX_HOME/config.toml`, and runs a hook
//!   only once trusted. So the hook in the worktree alone never fires (the edit-gate session,
//!   run with the plain preset line after `hooks install --host codex`, edits the held file).
//!   Decision: nothing is written into the user's main checkout or config; the agent's command
//!   line carries the hook as an inline `[hooks]` table in its `-c` layer (codex reads hooks from
//!   every config layer, `-c` included) with `--dangerously-bypass-hook-trust` for that one
//!   invocation, and with that the session is refused the held file with no project trust at all.
//!   The project's `.codex/hooks.json` is still installed (the main checkout, and a user's
//!   interactive `codex` after `/hooks`, read it).
//! - copilot 1.0.102 in prompt mode loads `.github/hooks/` only in a trusted folder; without
//!   trust the hook never runs. `--trust-folder` trusts the working directory's configuration for
//!   that one session, saving nothing; with it the session is refused the held file.
//! - opencode 1.18.33 runs `npm install @opencode-ai/plugin` in every config folder it loads, the
//!   project's `.opencode/` among them, and waits for it before loading any plugin (network; 35 s
//!   where there is one), writing `package.json`, `package-lock.json`, `node_modules/` and
//!   `.gitignore` there. It does so for any `.opencode/` folder. Decision: in an agent's worktree
//!   the plugin is not put in `.opencode/plugins/` but in the worktree's own git dir
//!   ([`OPENCODE_WORKTREE_PLUGIN`]), outside the working tree, and the agent's command line names
//!   it through `OPENCODE_CONFIG_CONTENT` (`{"plugin": ["file://…"]}`, a config layer opencode
//!   reads from that variable; [`session_prefix`]): opencode then finds no project config folder,
//!   installs nothing there, and the session is refused the held file. (A user's
//!   `OPENCODE_CONFIG_CONTENT` of their own is replaced in that session.) Should the repository
//!   have a `.opencode/` of its own, what the npm install writes there ([`host_artifacts`]) is
//!   kept out of the agent's proposals. `hooks install --host opencode` (a user's project) still
//!   writes `.opencode/plugins/git-mas.js`, which opencode loads by itself; the plugin imports
//!   nothing, so a folder whose `package.json` and `node_modules/` already exist needs no
//!   network.
//! - claude-code 2.1.332 reads the worktree's `.claude/settings.json` and needs nothing more.
//! - gemini 0.61.0 reads a project's `.gemini/settings.json` (hooks and MCP servers) only in a
//!   folder it trusts: `~/.gemini/trustedFolders.json`, or `GEMINI_CLI_TRUST_WORKSPACE=true` in
//!   its environment. Untrusted, headless gemini does not run at all ("Gemini CLI is not running
//!   in a trusted directory", exit 55); with `--skip-trust` (which the preset carries, so that an
//!   agent's fresh worktree runs) it runs, but the settings were read before the flag took effect,
//!   so the hook never fires and its `write_file` wrote the file bob held. Decision: an agent's
//!   session gets `GEMINI_CLI_TRUST_WORKSPACE=true` before its line ([`session_prefix`]), which
//!   trusts the worktree for that process and saves nothing; with it the session is refused the
//!   held file (`write_file` and `replace` answered "Tool execution blocked: git mas gate: … is
//!   held by bob", which gemini hands its model as the tool's error). Its payload is
//!   `{session_id, transcript_path, cwd, hook_event_name: "BeforeTool", timestamp, tool_name,
//!   tool_input}` with an absolute `tool_input.file_path` (`tests/fixtures/hook-payloads/gemini/`).
//!
//! Measured 2026-12-01 in a main checkout (`cargo test --test cli hosts::trust`), codex 0.171.0
//! with a plain `codex exec --sandbox danger-full-access --ephemeral --color never -`:
//!
//! - With `.codex/hooks.json` installed and nothing else, codex printed "Untrusted project-local
//!   configuration is disabled", never ran the hook, and its `apply_patch` wrote the file bob held;
//!   `--dangerously-bypass-hook-trust` did not make the untrusted project's hooks load.
//! - Its app-server's `hooks/list` names our handler `<abs path of .codex/hooks.json>:pre_tool_use:0:0`
//!   with `currentHash` `sha256:…` and `trustStatus`; trust is kept in the user's `config.toml` as
//!   `[hooks.state."<that key>"] trusted_hash = "<currentHash>"`, and the project's as
//!   `[projects."<abs repo>"] trust_level = "trusted"`. The hash is SHA-256 over the handler's
//!   normalized identity (`super::trust::codex_hook_hash`); ours matched `currentHash`
//!   exactly and `hooks/list` then said `trusted`.
//! - With both entries written by `hooks install --host codex --trust`, the same plain session was
//!   refused the held file (the refusal naming bob reached the model; the file byte-identical).
//!
//! So `hooks status --host` reports each host's effective state from its trust files
//! ([`super::trust`]) rather than "installed" alone.
//!
//! What a crash leaves: every write goes to a temporary file in the same directory
//! (`.<name>.mas-tmp.<pid>.<counter>`, [`crate::fsx::write_atomic`]), flushed, then renamed over the target, so at any
//! instant the file is either as it was or as it is meant to be; a crash before the rename leaves
//! that temporary file beside it. No host reads it and the next install writes its own; in an
//! agent's worktree it is ignored like the file itself; `git mas doctor` lists it (in the
//! repository's worktrees and beside every host's user-wide files) and `doctor --fix` removes it
//! once the process its name carries is gone.
//! Removing files then empty directories is done one at a time; a crash between leaves empty
//! directories, which the next uninstall removes.
//!
//! Symbolic links: a settings file is often a link into a dotfile manager's folder. A write goes
//! through the link to its final target ([`super::files::write_target`]: a chain is followed to
//! its end, up to [`super::files::MAX_SYMLINKS`]), with the temporary file beside that target and
//! renamed over it, so the link stays a link and the target's folder is where a crash leaves the temporary file. A dangling
//! link is written through too (its target is created, as `echo >link` would; git's own lock files
//! resolve links the same way), but no folder is created for it: a target whose folder is missing
//! is refused. Uninstall removes the target, never the link, so a link that dangled before install
//! dangles again after uninstall.
//!
//! An empty container is indistinguishable from one install created: uninstall removes a
//! `hooks.<event>` list or a `hooks` object that only our entry kept non-empty, so a user's own
//! empty `"PreToolUse": []` beside our entry goes with it. A shared file is removed only when it
//! is byte for byte the file install creates where there was none.

use super::edit::{self, prop};
use super::files::{HostHookError, read, remove_file, write_atomic};
use super::{Env, HookLayout, Host, ProcessEnv, Scope};
use jsonc_parser::ast;
use jsonc_parser::common::{Range, Ranged};
use std::path::{Path, PathBuf};

/// The start of every command we configure; an entry whose command starts so is ours.
pub const GATE_COMMAND_PREFIX: &str = "git mas gate --host";
/// How long a host waits for the gate, in seconds.
pub const TIMEOUT_SECS: u64 = 10;

/// The flag of the gate command a post-tool entry runs.
pub const POST_TOOL_FLAG: &str = "--post-tool";
/// The flag of the gate command a session-end entry runs.
pub const SESSION_END_FLAG: &str = "--session-end";
/// A post-tool entry's matcher: every tool, the shell's too (a regular expression in every host
/// that has matchers; the capture runs of the module docs fired with it).
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

/// A goose plugin's manifest, beside its hooks file.
const GOOSE_MANIFEST: &str = "plugins/git-mas/plugin.json";

/// What to do with a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Leave it as it is.
    Keep,
    /// Write these bytes.
    Write(String),
    /// Remove it.
    Remove,
}

/// A hook file's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileState {
    /// Our entry is there, exactly as install writes it.
    Installed,
    /// No entry of ours (or no file).
    NotInstalled,
    /// An entry of ours that differs from what install writes, or a file of ours' name with
    /// other content.
    Other,
    /// The file does not parse as the host reads it.
    Invalid,
}

impl FileState {
    /// How `status` shows it.
    pub fn label(self) -> &'static str {
        match self {
            FileState::Installed => "installed",
            FileState::NotInstalled => "not installed",
            FileState::Other => "other (modified, or not git-mas's)",
            FileState::Invalid => "invalid",
        }
    }
}

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
fn earlier_releases(host: Host, ours: &str) -> Vec<String> {
    // Goose's plugin manifest has not changed.
    if ours != own_content(host) {
        return Vec::new();
    }
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

/// What taking our entry out of a shared file gives.
pub(crate) enum Removal {
    /// There was no entry of ours.
    Unchanged,
    /// The file is exactly the one install creates: remove it.
    Created,
    /// The file's text without our entry.
    Changed(String),
}

impl Removal {
    /// What uninstall does to the file.
    pub(crate) fn into_plan(self) -> Plan {
        match self {
            Removal::Unchanged => Plan::Keep,
            Removal::Created => Plan::Remove,
            Removal::Changed(t) => Plan::Write(t),
        }
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
    ["command", "bash"]
        .iter()
        .any(|k| hook.get(k).and_then(|c| c.as_str()).is_some_and(|c| c.trim_start().starts_with(GATE_COMMAND_PREFIX)))
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
fn own_content(host: Host) -> String {
    match host {
        Host::OpenCode => opencode_plugin(host, &OpenCodeRelease::CURRENT),
        _ => edit::pretty(&skeleton(host)),
    }
}

fn goose_manifest() -> String {
    edit::pretty(&serde_json::json!({
        "name": "git-mas",
        "version": "1.0.0",
        "description": "Refuses an edit of a file another agent holds (git mas gate --host goose)"
    }))
}

/// What one release of the OpenCode plugin did: the plugin is rendered from these
/// ([`opencode_plugin`]), the current one and every earlier one, so that a file an earlier
/// release wrote is recognised byte for byte (`tests/fixtures/opencode-plugin/` holds what each
/// wrote).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OpenCodeRelease {
    /// The tools it asked the gate about.
    routing: OpenCodeRouting,
    /// It sent the session's id (`input.sessionID`).
    session_id: bool,
    /// It ran the post-tool gate from `tool.execute.after`.
    post_tool: bool,
    /// It ended the sessions it served when opencode exits.
    session_end: bool,
}

/// Which tools an OpenCode plugin release asked the gate about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpenCodeRouting {
    /// Its five edit tools only.
    EditTools,
    /// Every tool but the reading ones and the shell.
    AllButReadingAndShell,
    /// Every tool but the reading ones.
    AllButReading,
}

impl OpenCodeRelease {
    /// What `hooks install --host opencode` writes.
    pub(crate) const CURRENT: OpenCodeRelease = OpenCodeRelease {
        routing: OpenCodeRouting::AllButReading,
        session_id: true,
        post_tool: true,
        session_end: true,
    };

    /// What the releases before wrote, oldest first: the five edit tools; every tool but the
    /// reading ones and the shell; the session's id sent; the post-tool gate run.
    pub(crate) const EARLIER: [OpenCodeRelease; 4] = [
        OpenCodeRelease {
            routing: OpenCodeRouting::EditTools,
            session_id: false,
            post_tool: false,
            session_end: false,
        },
        OpenCodeRelease {
            routing: OpenCodeRouting::AllButReadingAndShell,
            session_id: false,
            post_tool: false,
            session_end: false,
        },
        OpenCodeRelease {
            routing: OpenCodeRouting::AllButReadingAndShell,
            session_id: true,
            post_tool: false,
            session_end: false,
        },
        OpenCodeRelease {
            routing: OpenCodeRouting::AllButReadingAndShell,
            session_id: true,
            post_tool: true,
            session_end: false,
        },
    ];
}

/// The OpenCode plugin as `release` wrote it: node and bun builtins only.
fn opencode_plugin(host: Host, release: &OpenCodeRelease) -> String {
    let (routing, guard) = match release.routing {
        OpenCodeRouting::EditTools => (
            "const EDIT_TOOLS = new Set([\"edit\", \"write\", \"patch\", \"multiedit\", \"apply_patch\"]);\n",
            "if (!EDIT_TOOLS.has(input.tool)) return;",
        ),
        OpenCodeRouting::AllButReadingAndShell => (
            "// Every tool but those that only read goes to the gate: an unknown tool naming a path is a write.\n\
             const READ_ONLY = new Set([\"read\", \"glob\", \"grep\", \"list\", \"webfetch\", \"bash\", \"todoread\", \
             \"todowrite\", \"task\"]);\n",
            "if (READ_ONLY.has(input.tool)) return;",
        ),
        OpenCodeRouting::AllButReading => (OPENCODE_READ_ONLY, "if (READ_ONLY.has(input.tool)) return;"),
    };
    let (note, payload) = match release.session_id {
        true => (r#"{"tool","args","cwd","sessionID"}"#, OPENCODE_PAYLOAD),
        false => (
            r#"{"tool","args","cwd"}"#,
            "const payload = JSON.stringify({ tool: input.tool, args: (output && output.args) || {}, cwd });",
        ),
    };
    let (session_end, record) = match release.session_end {
        true => (
            OPENCODE_SESSION_END.replace("@END_COMMAND@", &Stage::SessionEnd.command(host)),
            "if (input.sessionID) SESSIONS.set(input.sessionID, cwd);\n    ",
        ),
        false => (String::new(), ""),
    };
    let after = match release.post_tool {
        true => OPENCODE_AFTER.replace("@POST_COMMAND@", &Stage::PostTool.command(host)),
        false => String::new(),
    };
    OPENCODE_PLUGIN
        .replace("@ROUTING@", routing)
        .replace("@SESSION_END@", &session_end)
        .replace("@GUARD@", guard)
        .replace("@RECORD@", record)
        .replace("@AFTER@", &after)
        .replace("@PAYLOAD_NOTE@", note)
        .replace("@PAYLOAD@", payload)
        .replace("@COMMAND@", &gate_command(host))
}

/// The tools the OpenCode plugin does not ask the gate about: those its documentation lists as
/// only reading. The shell (`bash`) is asked about: in team mode the files other sessions hold
/// are kept before a shell call, so that what it changes in them can be put back after it.
const OPENCODE_READ_ONLY: &str = include_str!("opencode/read_only.js");

/// The plugin's payload: the tool, its arguments, the directory and the session's id
/// (`input.sessionID`, which opencode 1.18.33 passes to `tool.execute.before` with `tool` and
/// `callID`; left out when absent).
const OPENCODE_PAYLOAD: &str = concat!(
    "const payload = JSON.stringify({ tool: input.tool, args: (output && output.args) || {}, cwd, ",
    "sessionID: input.sessionID });"
);

/// The plugin's session end. OpenCode has no session-end event (a plugin's `event` hook sees
/// `session.idle`, after which a session may go on). So the plugin keeps the sessions it asked
/// the gate about, each with its directory, and when the opencode process exits (node's
/// `process.on("exit")`, which opencode 1.18.33's Bun fires as `opencode run` ends, and in
/// which `spawnSync` runs to its end) sends `--session-end` each one's id. A process that is
/// killed releases nothing: its claims lapse after their time to live, as any host's do.
const OPENCODE_SESSION_END: &str = include_str!("opencode/session_end.js");

/// The OpenCode plugin's template ([`opencode_plugin`]), kept as JavaScript in
/// `src/hosts/opencode/` so that it reads (and diffs) as the code it is. Its `@NAME@` placeholders
/// are filled by [`opencode_plugin`]; the bytes each release wrote must stay as they were (an
/// installed plugin is recognised by them), and every rendered release is checked by `node
/// --check` in the tests.
const OPENCODE_PLUGIN: &str = include_str!("opencode/plugin.js");

/// The plugin's `tool.execute.after` hook (in [`OPENCODE_PLUGIN`]): the post-tool gate, sent the
/// fields the pre-tool one is (opencode passes the tool's arguments in `input.args` here). The
/// tool has run, so nothing is thrown: what the gate says (or that it failed) is added to the
/// tool's output, which the model reads.
const OPENCODE_AFTER: &str = include_str!("opencode/after.js");

/// The words a host's command line needs so that an unattended session (an agent's) runs the hook
/// installed in its worktree, without any change to the user's own configuration: for codex, the
/// hook itself as an inline `[hooks]` table of the session's `-c` layer (its project layer is the
/// main checkout's, see the module docs) and `--dangerously-bypass-hook-trust`, which trusts it
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
/// agent's session loads the hook [`install_in_worktree`] put in its worktree: for opencode,
/// `OPENCODE_CONFIG_CONTENT` (a config layer of its own) naming the plugin in the worktree's git
/// dir by a `file://` URL (the git dir is found when the line runs, in the worktree); for gemini,
/// `GEMINI_CLI_TRUST_WORKSPACE=true` (it reads the worktree's settings only in a trusted folder).
pub fn session_prefix(host: Host) -> Option<String> {
    match host {
        Host::OpenCode => Some(format!(
            r#"OPENCODE_CONFIG_CONTENT="{{\"plugin\":[\"file://$(git rev-parse --absolute-git-dir)/{OPENCODE_WORKTREE_PLUGIN}\"]}}""#
        )),
        Host::Gemini => Some(super::mcp::GEMINI_TRUST_WORKSPACE.to_string()),
        _ => None,
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

/// What `hooks install|uninstall|status --host` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Add our entry (or file).
    Install,
    /// Remove it.
    Uninstall,
    /// Only look.
    Status,
}

/// One file after an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    /// The file.
    pub path: PathBuf,
    /// Its state now.
    pub state: FileState,
    /// Whether the action wrote or removed it.
    pub changed: bool,
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
        let after = match &plan {
            Plan::Keep => current,
            Plan::Write(text) => {
                write_atomic(&path, text)?;
                Some(text.clone())
            }
            Plan::Remove => {
                remove_file(&file.base, &path)?;
                None
            }
        };
        let state = file_state(host, file, after.as_deref());
        reports.push(FileReport { path, state, changed: plan != Plan::Keep });
    }
    Ok(reports)
}

/// The first line of what [`install_in_worktree`] adds to a worktree's excludes file.
pub const EXCLUDE_MARKER: &str = "# git-mas: the edit hook's files, kept out of this agent's proposals";

/// Installs `host`'s edit hook in an agent's worktree (project scope) and keeps its files out of
/// what the agent proposes.
///
/// A proposal is the worktree's tree as `git add -A` sees it, so the files must be ignored there
/// and only there. `info/exclude` cannot do it: git reads it from the common git dir, shared by
/// every worktree of the repository. So an untracked hook file is listed in an excludes file of
/// the worktree's own git dir (`mas-exclude`), made the worktree's `core.excludesFile` through
/// its per-worktree config (agent worktrees have `extensions.worktreeConfig`); the file starts
/// with the excludes file git used before (the user's global ignores stay in force). A hook file
/// the repository tracks (a team's committed `.claude/settings.json`) is marked
/// `--skip-worktree` in the worktree's own index, which `git add -A` leaves as it is, so the
/// proposal keeps the committed version. OpenCode's plugin goes into the worktree's git dir
/// instead ([`OPENCODE_WORKTREE_PLUGIN`], see the module docs), out of the working tree.
pub fn install_in_worktree(host: Host, worktree: &Path) -> Result<Vec<FileReport>, HostHookError> {
    let git = |args: &[&str]| run_git(worktree, args);
    let git_dir = PathBuf::from(git(&["rev-parse", "--absolute-git-dir"])?.trim());
    let mut patterns = Vec::new();
    let reports = if host == Host::OpenCode {
        // Outside the working tree: nothing of ours to keep out of a proposal.
        let file = HookFile {
            base: git_dir.clone(),
            rel: PathBuf::from(OPENCODE_WORKTREE_PLUGIN),
            kind: FileKind::Own(own_content(host)),
        };
        let current = read(&file.path())?;
        let plan = plan_install(host, &file, current.as_deref())?;
        if let Plan::Write(text) = &plan {
            write_atomic(&file.path(), text)?;
        }
        vec![FileReport { path: file.path(), state: FileState::Installed, changed: plan != Plan::Keep }]
    } else {
        let scope = Scope::Project(worktree.to_path_buf());
        let reports = apply(Action::Install, host, &scope, &ProcessEnv)?;
        for file in &hook_files(host, &scope, &ProcessEnv).unwrap_or_default() {
            let rel = file.rel.to_string_lossy().replace('\\', "/");
            // A temporary file a crashed write left beside it stays out of proposals too.
            let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel.as_str()));
            let dir = if dir.is_empty() { String::new() } else { format!("{dir}/") };
            patterns.push(format!("/{dir}.{name}.git-mas-*.tmp"));
            if git(&["ls-files", "--", &rel])?.trim().is_empty() {
                patterns.push(format!("/{rel}"));
            } else {
                git(&["update-index", "--skip-worktree", "--", &rel])?;
            }
        }
        reports
    };
    for rel in host_artifacts(host) {
        if git(&["ls-files", "--", rel])?.trim().is_empty() {
            patterns.push(format!("/{rel}"));
        }
    }
    if !patterns.is_empty() {
        exclude_in_worktree(worktree, &git_dir, &patterns)?;
    }
    Ok(reports)
}

/// Makes `<git_dir>/mas-exclude` (the excludes file git used before, then `patterns`) the
/// worktree's own `core.excludesFile`.
pub(crate) fn exclude_in_worktree(worktree: &Path, git_dir: &Path, patterns: &[String]) -> Result<(), HostHookError> {
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

/// Adds `patterns` to what [`exclude_in_worktree`] keeps out of the worktree's proposals,
/// keeping the patterns already there (another installer's).
pub(crate) fn add_excludes_in_worktree(
    worktree: &Path,
    git_dir: &Path,
    patterns: &[String],
) -> Result<(), HostHookError> {
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
    exclude_in_worktree(worktree, git_dir, &all)
}

/// The OpenCode plugin [`install_in_worktree`] writes, in the worktree's own git dir.
pub const OPENCODE_WORKTREE_PLUGIN: &str = "mas-opencode-gate.js";

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

/// Turns the gate on in an agent's worktree when `mas.gate` is unset there: an edit hook that
/// finds the gate off lets every edit through, so a coordinated team installed with hooks but no
/// mode would be gated in name only. Sets `mas.gate=enforce` in the worktree's own config (the
/// main checkout and the other worktrees keep theirs); a mode anyone chose, at any level, stays.
/// Returns whether it set the mode.
pub fn enforce_in_worktree(worktree: &Path) -> Result<bool, HostHookError> {
    if !run_git(worktree, &["config", "mas.gate"])?.trim().is_empty() {
        return Ok(false);
    }
    run_git(worktree, &["config", "--worktree", "mas.gate", "enforce"])?;
    Ok(true)
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

pub(crate) fn run_git(worktree: &Path, args: &[&str]) -> Result<String, HostHookError> {
    let fail =
        |reason: String| HostHookError::Git { worktree: worktree.to_path_buf(), command: args.join(" "), reason };
    let out = crate::git::command(worktree).args(args).output().map_err(|e| fail(e.to_string()))?;
    // `git config KEY` exits 1 when the key is unset: not a failure here.
    let unset = args.first() == Some(&"config") && out.status.code() == Some(1);
    if !(out.status.success() || unset) {
        return Err(fail(String::from_utf8_lossy(&out.stderr).trim().to_string()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;

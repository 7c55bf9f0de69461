//! The coding-agent hosts git-mas works inside: Claude Code, Codex, Copilot CLI, Gemini CLI,
//! Cursor, Goose and OpenCode.
//!
//! A host is another program with its own files and conventions; everything git-mas knows about
//! one is here. [`Host`] names them, and the submodules do one job each for every host:
//!
//! | module | what it does for a host |
//! |---|---|
//! | [`hooks`] | installs and removes the edit hook in the host's settings |
//! | [`opencode`] | renders the OpenCode plugin that is its edit hook |
//! | [`worktree`] | installs the hook and the MCP server in an agent's worktree, out of its proposals |
//! | [`payload`] | reads what the host's pre-tool hook sends on stdin |
//! | [`reply`] | answers the hook in the host's own format |
//! | [`mcp`] | registers `git mas mcp` in the host's MCP configuration |
//! | [`plan`] | what an installer does to a file, planned before anything is written |
//! | [`files`] | reads, writes (atomically, through a symbolic link) and removes the hosts' files |
//! | [`edit`] | edits the hosts' JSON(C) and TOML files without disturbing the user's bytes |
//! | [`trust`] | whether the host will load what was installed (its trust files) |
//! | [`skills`] | installs the Agent Skills where the host reads them |
//! | [`preset`] | the command line `git mas coordinate` starts the host with |
//!
//! [`detect`] tells whether a host is used in a project (its program on `PATH`, a folder or
//! file of its own), for `git mas init --team`.

mod detection;
pub mod edit;
pub mod files;
pub mod help;
pub mod hooks;
pub mod mcp;
pub mod opencode;
pub mod payload;
pub mod plan;
pub mod preset;
pub mod reply;
pub mod skills;
pub mod trust;
pub mod worktree;

pub use detection::{Detection, detect};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

/// A coding-agent host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Host {
    /// Anthropic's Claude Code (`claude`).
    ClaudeCode,
    /// OpenAI's Codex CLI (`codex`).
    Codex,
    /// GitHub Copilot CLI (`copilot`).
    Copilot,
    /// Google's Gemini CLI (`gemini`).
    Gemini,
    /// Cursor's agent CLI (`cursor-agent`).
    Cursor,
    /// Block's Goose (`goose`).
    Goose,
    /// OpenCode (`opencode`).
    #[serde(rename = "opencode")]
    OpenCode,
}

impl Host {
    /// Every host, in the order the help lists them.
    pub const ALL: [Host; 7] =
        [Host::ClaudeCode, Host::Codex, Host::Copilot, Host::Gemini, Host::Cursor, Host::Goose, Host::OpenCode];

    /// The host's row of [`TABLE`].
    pub fn facts(self) -> &'static Facts {
        &TABLE[self as usize]
    }

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        self.facts().name
    }

    /// The short name its sessions' agents carry ([`Facts::session_name`]).
    pub fn session_name(self) -> &'static str {
        self.facts().session_name
    }

    /// The host a command-line name names (exact, lower-case).
    pub fn from_name(name: &str) -> Option<Host> {
        Host::ALL.into_iter().find(|h| h.name() == name)
    }
}

/// Which configuration: the project's, or the user's own for every project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The top of a working tree.
    Project(PathBuf),
    /// The user's home (with the hosts' own directory overrides).
    Global,
}

/// The environment the user-wide locations depend on: `HOME` and the hosts' overrides.
pub trait Env {
    /// The variable's value, when set and not empty.
    fn var(&self, name: &str) -> Option<PathBuf>;
}

/// The process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<PathBuf> {
        std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
    }
}

/// A user-wide directory: under `$var` when the host has such a variable and it is set, else
/// under `$HOME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserDir {
    /// The variable that moves it.
    pub var: Option<&'static str>,
    /// The directory, relative to `$var`.
    pub under_var: &'static str,
    /// The directory, relative to `$HOME`.
    pub under_home: &'static str,
}

impl UserDir {
    const fn home(under_home: &'static str) -> UserDir {
        UserDir { var: None, under_var: "", under_home }
    }

    const fn moved(var: &'static str, under_var: &'static str, under_home: &'static str) -> UserDir {
        UserDir { var: Some(var), under_var, under_home }
    }

    /// The directory under `env`; `None` when neither the variable nor `HOME` is set.
    pub fn resolve(&self, env: &dyn Env) -> Option<PathBuf> {
        if let Some(dir) = self.var.and_then(|v| env.var(v)) {
            return Some(join(dir, self.under_var));
        }
        env.var("HOME").map(|home| join(home, self.under_home))
    }
}

fn join(dir: PathBuf, rel: &str) -> PathBuf {
    if rel.is_empty() { dir } else { dir.join(rel) }
}

/// How a host's edit-hook configuration is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookLayout {
    /// A settings file shared with the user; our entry is merged into it.
    Merged,
    /// A hooks file of our own in a folder of hook files the host reads.
    OwnFile,
    /// A plugin folder of our own: a manifest and a hooks file (goose).
    Plugin,
    /// A JavaScript plugin module of our own that runs the gate (opencode).
    Module,
}

/// Where and how a host reads its edit hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookFacts {
    /// The host's folder in a project (removed again when an uninstall leaves it empty).
    pub project_dir: &'static str,
    /// The host's user-wide folder.
    pub user_dir: UserDir,
    /// The hook file, relative to either folder.
    pub file: &'static str,
    /// Shared or ours.
    pub layout: HookLayout,
    /// The pre-tool event our entry goes under.
    pub event: &'static str,
    /// The event after a tool call has run; `None` where the host has none.
    pub post_tool_event: Option<&'static str>,
    /// The event after a tool call that failed, where the host has one of its own (its
    /// `post_tool_event` then never sees a failed call); `None` where the post-tool event sees
    /// every call.
    pub post_tool_failure_event: Option<&'static str>,
    /// The event when a session ends; `None` where the host has none.
    pub session_end_event: Option<&'static str>,
    /// The tools the pre-tool entry routes to the gate (a regular expression; see
    /// [`hooks::matcher`]): every tool that writes a file, and the shell tools, before which team
    /// mode keeps the files other sessions hold.
    pub matcher: &'static str,
    /// Whether the host reads comments in the file.
    pub comments: bool,
}

/// The envelope a host's pre-tool hook sends on stdin (each a typed payload in [`payload`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadShape {
    /// `{tool_name, tool_input, cwd}` (Cursor adds `workspace_roots`, Goose `working_dir`).
    ToolInput,
    /// `{toolName, toolArgs, cwd}`, the arguments as a JSON string.
    Copilot,
    /// `{tool, args, cwd, sessionID}`, from git-mas's own OpenCode plugin.
    OpenCode,
}

/// What a host's pre-tool hook is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayloadFacts {
    /// Its envelope.
    pub shape: PayloadShape,
    /// The top-level string field naming the host's session (read as [`payload::Payload::session`]).
    pub session_field: &'static str,
    /// The host's tools its documentation lists as only reading (their path arguments name what
    /// they read); see [`payload::read_only`].
    pub read_only_tools: &'static [&'static str],
    /// Its tools that run a shell command (which may write any file): in team mode the files
    /// other agents hold are kept before such a call and checked after it
    /// (git-mas's shell guard).
    pub shell_tools: &'static [&'static str],
    /// The environment variable the host sets in its shell tool's processes to its session id
    /// (the hook payload's), so that a `git mas` command a session's shell runs is that
    /// session's agent; `None` where the host sets none that was seen.
    pub session_env: Option<&'static str>,
    /// The host's tools that write files, each with where its arguments say which and what
    /// changes ([`payload::parse`]); a tool not listed is read by its name and argument names.
    pub write_tools: &'static [(&'static str, WriteArgs)],
}

/// Where a writing tool's arguments name its file and what changes in it. Each list of argument
/// names is tried in order; the first that is a string is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteArgs {
    /// The whole file named by `path`.
    Whole {
        /// The file's argument.
        path: &'static [&'static str],
    },
    /// The file named by `path`, where the text under `old` stands (the whole file when that is
    /// missing or empty).
    Replace {
        /// The file's argument.
        path: &'static [&'static str],
        /// The replaced text's argument.
        old: &'static [&'static str],
    },
    /// The file named by `path`, where each `edits[].<old>` stands (the whole file when none is
    /// given).
    Edits {
        /// The file's argument.
        path: &'static [&'static str],
        /// The replaced text's field in each edit.
        old: &'static str,
    },
    /// As [`WriteArgs::Edits`], each edit in the file its own `<edit_path>` names when it names
    /// one, and refused when an edit has no `<old>` or there is none.
    EditsPerFile {
        /// The file's argument.
        path: &'static [&'static str],
        /// The replaced text's field in each edit (required).
        old: &'static str,
        /// An edit's own file.
        edit_path: &'static str,
    },
    /// Every file of the patch (codex's `apply_patch` format) under `patch`.
    Patch {
        /// The patch's argument.
        patch: &'static [&'static str],
    },
    /// An editor whose `command` argument says what it does: `view` writes nothing,
    /// `str_replace` replaces the text under `old`, any other rewrites the file named by `path`.
    Editor {
        /// The file's argument.
        path: &'static [&'static str],
        /// The replaced text's argument.
        old: &'static [&'static str],
    },
}

/// How a host reads its hook's answer on stdout (written by [`reply::reply`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerFormat {
    /// `{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision, …}}`; an allow is
    /// silence.
    HookSpecificOutput,
    /// `{permissionDecision, permissionDecisionReason}`; an allow is silence.
    PermissionDecision,
    /// `{decision: "allow"|"deny", reason}`, a warning's text under `message`.
    Decision {
        /// The field a warning's text goes in.
        message: &'static str,
    },
    /// `{permission: "allow"|"deny", user_message, agent_message}`.
    Permission,
    /// `{decision: "block", reason}`; an allow (or a warning) is silence.
    Block,
}

/// How a host's MCP file holds a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpFormat {
    /// `<key>.git-mas` in a JSON object; `comments`: the host reads JSON with comments.
    Json {
        /// The object the servers are kept in.
        key: &'static str,
        /// Whether the host reads comments in the file.
        comments: bool,
    },
    /// `[mcp_servers.git-mas]` in TOML.
    CodexToml,
}

/// The shape of our server entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpEntry {
    /// `{command, args}`.
    CommandArgs,
    /// `{command, args, env: {GIT_MAS_KEY_DIR: "${GIT_MAS_KEY_DIR:-}"}}`: for a host that drops
    /// every variable whose name holds `KEY` from a server's environment but expands `${VAR:-}`
    /// in its settings file from its own (gemini; see [`mcp`]).
    CommandArgsKeyDir,
    /// `{type: "local", command, args, tools: ["*"]}`.
    LocalWithTools,
    /// `{type: "local", command: [argv…], enabled: true}`.
    LocalArgv,
}

/// Where and how a host registers MCP servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpFacts {
    /// The project's file, relative to the top of the tree.
    pub project_file: &'static str,
    /// The user-wide file's folder.
    pub user_dir: UserDir,
    /// The user-wide file, in that folder.
    pub user_file: &'static str,
    /// How the file holds servers.
    pub format: McpFormat,
    /// The shape of our entry.
    pub entry: McpEntry,
}

/// Where a host reads Agent Skills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkillsFacts {
    /// The project's skills folder, relative to the top of the tree.
    pub project_dir: &'static str,
    /// The user-wide skills folder.
    pub user_dir: UserDir,
}

/// How `git mas coordinate` starts the host for one hop (prompt on stdin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PresetFacts {
    /// The default command line.
    pub command: &'static str,
    /// Where a session's extra words go: after this prefix of the line (codex's options follow
    /// `codex exec`), else at the end.
    pub words_after: Option<&'static str>,
    /// The environment assignment (`sh` syntax, before the line) that makes the host trust the
    /// working directory for that one process, where it reads a project's settings (hooks, MCP
    /// servers) only in a folder it trusts and an agent's fresh worktree is trusted by no one.
    pub trust_env: Option<&'static str>,
}

/// How `git mas init --team` tells that a host is used here ([`detect`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DetectFacts {
    /// The host's program, looked for on `PATH`.
    pub program: &'static str,
    /// Files or folders at the top of a project that only this host reads (a folder shared by
    /// several hosts, such as `.agents/`, or `.github/` for its workflows, says nothing).
    pub markers: &'static [&'static str],
}

/// What the facts of a row were checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verification {
    /// The real CLI, at this version, run offline in the host tests (`tests/cli/hosts/`).
    Real {
        /// The npm package.
        package: &'static str,
        /// Its version, as `tests/hosts/install.sh` pins it.
        version: &'static str,
    },
    /// The host's documentation only.
    Documented {
        /// Where.
        source: &'static str,
        /// When it was read.
        checked: &'static str,
    },
}

impl Verification {
    /// Whether the real CLI was run.
    pub fn is_real(self) -> bool {
        matches!(self, Verification::Real { .. })
    }
}

/// Everything git-mas knows about one host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// The host.
    pub host: Host,
    /// Its name on the command line.
    pub name: &'static str,
    /// The short name its sessions' agents carry (`alice.claude-3f2a9c1b`).
    pub session_name: &'static str,
    /// The product's name.
    pub product: &'static str,
    /// Its edit hook.
    pub hooks: HookFacts,
    /// What its hook is sent.
    pub payload: PayloadFacts,
    /// How its hook answers.
    pub answer: AnswerFormat,
    /// Its MCP registration; `None` where git-mas cannot write it (see [`mcp`]).
    pub mcp: Option<McpFacts>,
    /// Its skills folders.
    pub skills: SkillsFacts,
    /// Its coordinate preset.
    pub preset: PresetFacts,
    /// How it is detected in a project.
    pub detect: DetectFacts,
    /// What the row was checked against.
    pub verified: Verification,
}

/// The argument naming the file in OpenCode's tools (`filePath`; the others as some releases
/// sent them).
const OPENCODE_PATH: &[&str] = &["filePath", "file_path", "path"];

/// The hosts, one row each, in [`Host::ALL`]'s order. The module docs of [`hooks`], [`mcp`],
/// [`skills`] and [`preset`] say where each fact comes from and what the real CLIs did.
pub const TABLE: [Facts; 7] = [
    Facts {
        host: Host::ClaudeCode,
        name: "claude-code",
        session_name: "claude",
        product: "Claude Code",
        hooks: HookFacts {
            project_dir: ".claude",
            user_dir: UserDir::moved("CLAUDE_CONFIG_DIR", "", ".claude"),
            file: "settings.json",
            layout: HookLayout::Merged,
            event: "PreToolUse",
            post_tool_event: Some("PostToolUse"),
            post_tool_failure_event: Some("PostToolUseFailure"),
            session_end_event: Some("SessionEnd"),
            matcher: "Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*",
            comments: false,
        },
        payload: PayloadFacts {
            shape: PayloadShape::ToolInput,
            session_field: "session_id",
            shell_tools: &["Bash"],
            session_env: Some("CLAUDE_CODE_SESSION_ID"),
            read_only_tools: &[
                "Read",
                "Glob",
                "Grep",
                "LS",
                "NotebookRead",
                "WebFetch",
                "WebSearch",
                "Task",
                "TodoWrite",
                "Bash",
            ],
            write_tools: &[
                ("Write", WriteArgs::Whole { path: &["file_path"] }),
                ("Edit", WriteArgs::Replace { path: &["file_path", "path"], old: &["old_string"] }),
                ("MultiEdit", WriteArgs::Edits { path: &["file_path"], old: "old_string" }),
                ("NotebookEdit", WriteArgs::Whole { path: &["notebook_path"] }),
            ],
        },
        answer: AnswerFormat::HookSpecificOutput,
        mcp: Some(McpFacts {
            project_file: ".mcp.json",
            user_dir: UserDir::moved("CLAUDE_CONFIG_DIR", "", ""),
            user_file: ".claude.json",
            format: McpFormat::Json { key: "mcpServers", comments: false },
            entry: McpEntry::CommandArgs,
        }),
        skills: SkillsFacts { project_dir: ".claude/skills", user_dir: UserDir::home(".claude/skills") },
        preset: PresetFacts {
            command: "claude -p --permission-mode acceptEdits --allowedTools 'Bash(git:*)'",
            words_after: None,
            trust_env: None,
        },
        detect: DetectFacts { program: "claude", markers: &[".claude", "CLAUDE.md"] },
        verified: Verification::Real { package: "@anthropic-ai/claude-code", version: "2.1.332" },
    },
    Facts {
        host: Host::Codex,
        name: "codex",
        session_name: "codex",
        product: "Codex CLI",
        hooks: HookFacts {
            project_dir: ".codex",
            user_dir: UserDir::moved("CODEX_HOME", "", ".codex"),
            file: "hooks.json",
            layout: HookLayout::Merged,
            event: "PreToolUse",
            post_tool_event: Some("PostToolUse"),
            post_tool_failure_event: None,
            session_end_event: Some("SessionEnd"),
            matcher: "apply_patch|Bash|mcp__.*",
            comments: false,
        },
        payload: PayloadFacts {
            shape: PayloadShape::ToolInput,
            session_field: "session_id",
            shell_tools: &["Bash", "shell", "exec_command", "local_shell"],
            session_env: None,
            read_only_tools: &[
                "shell",
                "exec",
                "exec_command",
                "Bash",
                "read_file",
                "list_dir",
                "grep_files",
                "view_image",
            ],
            write_tools: &[("apply_patch", WriteArgs::Patch { patch: &["command", "patch", "input"] })],
        },
        answer: AnswerFormat::HookSpecificOutput,
        mcp: Some(McpFacts {
            project_file: ".codex/config.toml",
            user_dir: UserDir::moved("CODEX_HOME", "", ".codex"),
            user_file: "config.toml",
            format: McpFormat::CodexToml,
            entry: McpEntry::CommandArgs,
        }),
        skills: SkillsFacts {
            project_dir: ".agents/skills",
            user_dir: UserDir::moved("CODEX_HOME", "skills", ".codex/skills"),
        },
        preset: PresetFacts {
            command: "codex exec --sandbox danger-full-access --ephemeral --color never -",
            words_after: Some("codex exec"),
            trust_env: None,
        },
        detect: DetectFacts { program: "codex", markers: &[".codex"] },
        verified: Verification::Real { package: "@openai/codex", version: "0.171.0" },
    },
    Facts {
        host: Host::Copilot,
        name: "copilot",
        session_name: "copilot",
        product: "GitHub Copilot CLI",
        hooks: HookFacts {
            project_dir: ".github",
            user_dir: UserDir::moved("COPILOT_HOME", "", ".copilot"),
            file: "hooks/git-mas.json",
            layout: HookLayout::OwnFile,
            event: "preToolUse",
            post_tool_event: Some("postToolUse"),
            post_tool_failure_event: None,
            session_end_event: Some("sessionEnd"),
            matcher: ".*",
            comments: false,
        },
        payload: PayloadFacts {
            shape: PayloadShape::Copilot,
            session_field: "sessionId",
            shell_tools: &["bash", "shell", "write_bash"],
            session_env: None,
            read_only_tools: &["view", "glob", "grep", "bash", "shell", "read_bash", "web_fetch"],
            write_tools: &[
                ("create", WriteArgs::Whole { path: &["path", "file_path"] }),
                ("edit", WriteArgs::Replace { path: &["path", "file_path"], old: &["old_str", "old_string"] }),
            ],
        },
        answer: AnswerFormat::PermissionDecision,
        mcp: Some(McpFacts {
            project_file: ".copilot/mcp-config.json",
            user_dir: UserDir::moved("COPILOT_HOME", "", ".copilot"),
            user_file: "mcp-config.json",
            format: McpFormat::Json { key: "mcpServers", comments: false },
            entry: McpEntry::LocalWithTools,
        }),
        skills: SkillsFacts { project_dir: ".agents/skills", user_dir: UserDir::home(".copilot/skills") },
        preset: PresetFacts {
            command: "copilot -s --allow-all-tools --no-ask-user",
            words_after: None,
            trust_env: None,
        },
        detect: DetectFacts {
            program: "copilot",
            markers: &[".copilot", ".github/copilot-instructions.md", ".github/hooks"],
        },
        verified: Verification::Real { package: "@github/copilot", version: "1.0.102" },
    },
    Facts {
        host: Host::Gemini,
        name: "gemini",
        session_name: "gemini",
        product: "Gemini CLI",
        hooks: HookFacts {
            project_dir: ".gemini",
            user_dir: UserDir::moved("GEMINI_CLI_HOME", ".gemini", ".gemini"),
            file: "settings.json",
            layout: HookLayout::Merged,
            event: "BeforeTool",
            post_tool_event: Some("AfterTool"),
            post_tool_failure_event: None,
            session_end_event: Some("SessionEnd"),
            matcher: ".*",
            comments: true,
        },
        payload: PayloadFacts {
            shape: PayloadShape::ToolInput,
            session_field: "session_id",
            shell_tools: &["run_shell_command"],
            session_env: None,
            read_only_tools: &[
                "read_file",
                "read_many_files",
                "list_directory",
                "glob",
                "search_file_content",
                "grep",
                "google_web_search",
                "web_fetch",
                "run_shell_command",
            ],
            write_tools: &[
                ("write_file", WriteArgs::Whole { path: &["file_path"] }),
                ("replace", WriteArgs::Replace { path: &["file_path", "path"], old: &["old_string"] }),
            ],
        },
        answer: AnswerFormat::Decision { message: "systemMessage" },
        mcp: Some(McpFacts {
            project_file: ".gemini/settings.json",
            user_dir: UserDir::moved("GEMINI_CLI_HOME", ".gemini", ".gemini"),
            user_file: "settings.json",
            format: McpFormat::Json { key: "mcpServers", comments: true },
            entry: McpEntry::CommandArgsKeyDir,
        }),
        skills: SkillsFacts {
            project_dir: ".agents/skills",
            user_dir: UserDir::moved("GEMINI_CLI_HOME", ".gemini/skills", ".gemini/skills"),
        },
        preset: PresetFacts {
            command: "gemini --approval-mode yolo --skip-trust",
            words_after: None,
            // `--skip-trust` runs gemini in an untrusted folder, but after the settings were read.
            trust_env: Some("GEMINI_CLI_TRUST_WORKSPACE=true"),
        },
        detect: DetectFacts { program: "gemini", markers: &[".gemini", "GEMINI.md"] },
        verified: Verification::Real { package: "@google/gemini-cli", version: "0.61.0" },
    },
    Facts {
        host: Host::Cursor,
        name: "cursor",
        session_name: "cursor",
        product: "Cursor",
        hooks: HookFacts {
            project_dir: ".cursor",
            user_dir: UserDir::home(".cursor"),
            file: "hooks.json",
            layout: HookLayout::Merged,
            event: "preToolUse",
            post_tool_event: Some("postToolUse"),
            post_tool_failure_event: Some("postToolUseFailure"),
            session_end_event: Some("sessionEnd"),
            matcher: "Write|StrReplace|Edit|Delete|TabWrite|Shell|MCP:.*",
            comments: false,
        },
        payload: PayloadFacts {
            shape: PayloadShape::ToolInput,
            session_field: "conversation_id",
            shell_tools: &["Shell"],
            session_env: None,
            read_only_tools: &[
                "Read",
                "Glob",
                "Grep",
                "LS",
                "NotebookRead",
                "WebFetch",
                "WebSearch",
                "Task",
                "TodoWrite",
                "Bash",
            ],
            write_tools: &[
                ("Write", WriteArgs::Whole { path: &["file_path"] }),
                ("StrReplace", WriteArgs::Replace { path: &["file_path", "path"], old: &["old_string"] }),
                ("Edit", WriteArgs::Replace { path: &["file_path", "path"], old: &["old_string"] }),
            ],
        },
        answer: AnswerFormat::Permission,
        mcp: Some(McpFacts {
            project_file: ".cursor/mcp.json",
            user_dir: UserDir::home(".cursor"),
            user_file: "mcp.json",
            format: McpFormat::Json { key: "mcpServers", comments: false },
            entry: McpEntry::CommandArgs,
        }),
        skills: SkillsFacts { project_dir: ".cursor/skills", user_dir: UserDir::home(".cursor/skills") },
        preset: PresetFacts {
            command: "cursor-agent -p --force --output-format text",
            words_after: None,
            trust_env: None,
        },
        detect: DetectFacts { program: "cursor-agent", markers: &[".cursor", ".cursorrules"] },
        verified: Verification::Documented {
            source: "cursor.com/docs (hooks, context/mcp, skills)",
            checked: "2026-12",
        },
    },
    Facts {
        host: Host::Goose,
        name: "goose",
        session_name: "goose",
        product: "Goose",
        hooks: HookFacts {
            project_dir: ".agents",
            user_dir: UserDir::home(".agents"),
            file: "plugins/git-mas/hooks/hooks.json",
            layout: HookLayout::Plugin,
            event: "PreToolUse",
            post_tool_event: Some("PostToolUse"),
            post_tool_failure_event: Some("PostToolUseFailure"),
            session_end_event: Some("SessionEnd"),
            matcher: ".*",
            comments: false,
        },
        payload: PayloadFacts {
            shape: PayloadShape::ToolInput,
            session_field: "session_id",
            shell_tools: &["developer__shell"],
            session_env: None,
            read_only_tools: &["developer__shell", "developer__analyze", "developer__list_windows"],
            write_tools: &[
                ("developer__write", WriteArgs::Whole { path: &["path"] }),
                ("developer__edit", WriteArgs::Replace { path: &["path"], old: &["before"] }),
                ("developer__text_editor", WriteArgs::Editor { path: &["path"], old: &["old_str"] }),
            ],
        },
        answer: AnswerFormat::Block,
        mcp: None,
        skills: SkillsFacts {
            project_dir: ".agents/skills",
            user_dir: UserDir::moved("XDG_CONFIG_HOME", "goose/skills", ".config/goose/skills"),
        },
        preset: PresetFacts { command: "goose run --no-session --instructions -", words_after: None, trust_env: None },
        detect: DetectFacts { program: "goose", markers: &[".goosehints"] },
        verified: Verification::Documented { source: "block/goose documentation (hooks, skills)", checked: "2026-12" },
    },
    Facts {
        host: Host::OpenCode,
        name: "opencode",
        session_name: "opencode",
        product: "OpenCode",
        hooks: HookFacts {
            project_dir: ".opencode",
            user_dir: UserDir::moved("XDG_CONFIG_HOME", "opencode", ".config/opencode"),
            file: "plugins/git-mas.js",
            layout: HookLayout::Module,
            event: "tool.execute.before",
            post_tool_event: Some("tool.execute.after"),
            post_tool_failure_event: None,
            session_end_event: None,
            matcher: "Write|Edit|MultiEdit|NotebookEdit|mcp__.*",
            comments: false,
        },
        payload: PayloadFacts {
            shape: PayloadShape::OpenCode,
            session_field: "sessionID",
            shell_tools: &["bash"],
            session_env: None,
            read_only_tools: &["read", "glob", "grep", "list", "webfetch", "bash", "todoread", "todowrite"],
            write_tools: &[
                ("write", WriteArgs::Whole { path: OPENCODE_PATH }),
                ("edit", WriteArgs::Replace { path: OPENCODE_PATH, old: &["oldString", "old_string"] }),
                ("multiedit", WriteArgs::EditsPerFile { path: OPENCODE_PATH, old: "oldString", edit_path: "filePath" }),
                ("apply_patch", WriteArgs::Patch { patch: &["patchText", "patch_text", "patch"] }),
                ("patch", WriteArgs::Patch { patch: &["patchText", "patch_text", "patch"] }),
            ],
        },
        answer: AnswerFormat::Decision { message: "message" },
        mcp: Some(McpFacts {
            project_file: "opencode.json",
            user_dir: UserDir::moved("XDG_CONFIG_HOME", "opencode", ".config/opencode"),
            user_file: "opencode.json",
            format: McpFormat::Json { key: "mcp", comments: true },
            entry: McpEntry::LocalArgv,
        }),
        skills: SkillsFacts {
            project_dir: ".agents/skills",
            user_dir: UserDir::moved("XDG_CONFIG_HOME", "opencode/skills", ".config/opencode/skills"),
        },
        preset: PresetFacts { command: "opencode run --auto", words_after: None, trust_env: None },
        detect: DetectFacts { program: "opencode", markers: &[".opencode", "opencode.json"] },
        verified: Verification::Real { package: "opencode-ai", version: "1.18.33" },
    },
];

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

#[cfg(test)]
mod tests;

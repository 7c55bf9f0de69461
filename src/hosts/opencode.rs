//! The OpenCode plugin git-mas writes: OpenCode runs no hook command of its own, so the edit
//! hook is a JavaScript plugin module (`.opencode/plugins/git-mas.js`) that runs the gate.
//!
//! The plugin is rendered from the templates in `src/hosts/opencode/`, kept as JavaScript so
//! that they read (and diff) as the code they are. Every release's bytes are rendered from a
//! `OpenCodeRelease`, so that a file an earlier release wrote is still recognised byte for byte
//! (replaced on install, removed on uninstall); a file of that name with other bytes is the
//! user's. The commands it runs are given by the hook installer, which owns them.
//!
//! What the plugin does: `tool.execute.before` sends `{tool, args, cwd, sessionID}` to the gate on
//! stdin for every tool but those OpenCode documents as only reading, and throws on a deny or on
//! any failure of the gate (fail closed); `tool.execute.after` sends the post-tool gate the same
//! fields and adds its answer to the tool's output. OpenCode has no session-end event, so the
//! plugin keeps the sessions it served and ends each when the opencode process exits.

/// What one release of the OpenCode plugin did: the plugin is rendered from these
/// ([`render`]), the current one and every earlier one, so that a file an earlier
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

/// The commands the OpenCode plugin runs: the gate before a tool, after it, and at a session's
/// end.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Commands<'a> {
    /// Before a tool runs.
    pub(crate) pre_tool: &'a str,
    /// After a tool ran.
    pub(crate) post_tool: &'a str,
    /// When opencode exits, for each session the plugin served.
    pub(crate) session_end: &'a str,
}

/// The OpenCode plugin as `release` wrote it, running `commands`: node and bun builtins only.
pub(crate) fn render(release: &OpenCodeRelease, commands: Commands) -> String {
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
            OPENCODE_SESSION_END.replace("@END_COMMAND@", commands.session_end),
            "if (input.sessionID) SESSIONS.set(input.sessionID, cwd);\n    ",
        ),
        false => (String::new(), ""),
    };
    let after = match release.post_tool {
        true => OPENCODE_AFTER.replace("@POST_COMMAND@", commands.post_tool),
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
        .replace("@COMMAND@", commands.pre_tool)
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

/// The OpenCode plugin's template ([`render`]), kept as JavaScript in
/// `src/hosts/opencode/` so that it reads (and diffs) as the code it is. Its `@NAME@` placeholders
/// are filled by [`render`]; the bytes each release wrote must stay as they were (an
/// installed plugin is recognised by them), and every rendered release is checked by `node
/// --check` in the tests.
const OPENCODE_PLUGIN: &str = include_str!("opencode/plugin.js");

/// The plugin's `tool.execute.after` hook (in [`OPENCODE_PLUGIN`]): the post-tool gate, sent the
/// fields the pre-tool one is (opencode passes the tool's arguments in `input.args` here). The
/// tool has run, so nothing is thrown: what the gate says (or that it failed) is added to the
/// tool's output, which the model reads.
const OPENCODE_AFTER: &str = include_str!("opencode/after.js");

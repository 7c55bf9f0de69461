//! `git mas mcp`: a stdio MCP server that gives a coding-agent host git-mas as tools, acting as
//! one agent.
//!
//! Why a server: hosts speak the Model Context Protocol natively, and a sandboxed host (Codex's
//! `workspace-write` makes `.git` read-only) cannot run `git mas propose` or `focus publish` from
//! its shell at all. The host starts this server itself, outside the tool sandbox.
//!
//! One implementation: a tool call calls the typed function of the command it names
//! (`focus publish`, `gate`, `endorse`...) in this process, with that command's own arguments
//! struct built from the call's typed arguments, and returns the value it gives: the very struct
//! the command's `--json` prints, serialized, never a command line parsed again or output read
//! back. What the command says on stderr (its warnings) is kept by a [`Ui::collecting`] Ui and
//! becomes the result's notes; its [`CliError`] becomes a tool error carrying the message, the
//! hints and the exit code with its meaning. A command that ran and reported an outcome with its
//! own exit code (the gate's block and fail-closed, a failed check) answered: that is a result,
//! `outcome` naming it, not a tool error — an agent acts on a block's holder and remedy, while a
//! host may treat a tool error as the tool failing. The directory and the agent come from the
//! server, never from a call.
//!
//! A call may carry arguments a tool does not take: a host adds its own (the Gemini CLI adds
//! `wait_for_previous` to every call). They are ignored, and each is named in the result's notes;
//! none can change the agent or the directory (an `agent` argument is ignored like any other).
//! The tools' input schemas therefore do not forbid other properties.
//!
//! Identity is fixed when the server starts: `--agent`, else `GIT_MAS_AGENT`, else
//! `git config mas.agent`. No tool takes an argument that could make it act as someone else, and
//! every call checks that name against the roster and this machine's key first (a roster or key
//! fixed after the start is picked up; a different name never is). Started without a name, the
//! server still answers `initialize` and `tools/list`, and every call is refused with the fix.
//!
//! The protocol alone is on stdout ([`rmcp::transport::stdio`], the one writer of the process's
//! stdout outside the output layer, framed by [`crate::cli::mcp_stdio`] so that every line the
//! service cannot decode is answered too); logs go to stderr. Tool calls run one at a time, each
//! on a blocking thread, so a check that `endorse` runs does not stall the protocol.
//!
//! **The resident cache.** Every call opens the store afresh (repository handle, config, refs:
//! nothing of git's is kept stale, a `gc` or a config change included) and hands it what the
//! previous call's store learned ([`Memory`]): the signature cache, the parsed roster keyed by its
//! exact bytes, and the verified windows of the focus and frame chains keyed by each ref's exact
//! tip under the roster's digest. The keys are re-read on every call, so a focus published or
//! released, a roster or a frame changed by another process is seen by the next call, while a warm
//! `gate` with nothing changed reads no chain and checks no signature (and reads no cache file).
//! A stale entry cannot change a decision: it is used only under exactly the key it was made for,
//! and what it holds is a pure function of that key. The board is folded at read time on every
//! call, so a lease lapses on time with no ref moving. Memory is kept only in this process.
//!
//! What a crash leaves: the server keeps nothing but that memory, lost with the process, and
//! writes nothing itself. Every write is a library call of the command named (appending a signed
//! record, `propose`'s commit, `sync`'s fast-forwards), whose crash behaviour is that command's
//! (DESIGN.md, "What a crash may leave"): a SIGKILL at any instant leaves at most what killing that
//! command would, and re-running the call recovers the same way.

use crate::cli::commands::{align, endorse, focus, frame, gate, propose, report, run, sync, tally, whoami};
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::gating;
use crate::cli::json::mcp::{ToolOut, ToolRefusalOut};
use crate::cli::mcp_stdio;
use crate::cli::output::{JsonFlag, Ui};
use crate::cli::{Done, Outcome};
use git_mas::store::Memory;
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Serve git-mas's tools over MCP on stdin/stdout, acting as one agent.
///
/// A coding-agent host starts it (`.mcp.json`: {"command": "git", "args": ["mas", "mcp"]}) in the
/// agent's worktree. The agent is --agent, else $GIT_MAS_AGENT, else `git config mas.agent`, fixed
/// for the server's life and checked against the roster and this machine's key on every call.
///
/// Tools: whoami, frame, focus_publish, focus_release, focus_status, board, align, decide, gate,
/// run_list, run_show, propose, endorse, tally, report, sync. Each runs the command it names, as
/// that agent: its structured result is {tool, agent, exit_code, outcome, result, notes}, `result`
/// being the command's --json output. Arguments a tool does not take are ignored and named in
/// `notes`; none can make the server act as another agent or elsewhere. A refusal is a tool error (isError) whose structured result
/// is {tool, agent, exit_code, outcome, error, causes, hints, notes}. `outcome` names the exit code
/// (ok, refused, usage, internal, unverified, sync-incomplete, blocked, fail-closed,
/// run-incomplete, check-failed). A verdict is not a refusal: gate's block and fail_closed (exit
/// 6 and 7) are results, not tool errors, with the verdict, its holder and remedy, in `result`. focus_publish, focus_release, propose, endorse and sync write
/// (endorse runs the run's own check, never a command the call names; sync takes a configured
/// remote's name, never a URL); the others are marked read-only.
///
/// Stdout carries only the protocol; logs go to stderr. Exits 0 when the host closes stdin.
///
/// `git mas mcp install|uninstall|status --host HOST` registers this server with a host instead.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct McpArgs {
    /// Register the server with a host (install, uninstall, status) instead of serving.
    #[command(subcommand)]
    pub command: Option<crate::cli::commands::mcp_install::McpCommand>,
}

/// Runs the server until the host closes its stdin (or, with a subcommand, that subcommand).
pub fn run(ctx: &mut Context, args: McpArgs) -> Result<Outcome, CliError> {
    if let Some(cmd) = args.command {
        return crate::cli::commands::mcp_install::run(ctx, cmd);
    }
    let dir = ctx.cwd()?;
    let agent = match ctx.caller_name() {
        Ok((name, _)) => {
            if let Err(e) = ctx.caller() {
                ctx.warn(&format!("git mas mcp: {}; every tool call is refused until that is fixed", e.message()));
            }
            ctx.status(&format!("git mas mcp: serving as {name} in {}", dir.display()));
            Ok(name)
        }
        Err(e) => {
            ctx.warn(&format!("git mas mcp: {}; tools/list works, every tool call is refused", e.message()));
            Err(Refusal::from_error(&e))
        }
    };
    let server = Server { dir, agent, resident: Arc::new(Mutex::new(None)), tool_router: Server::tool_router() };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::with_message(Kind::Internal, "cannot start the async runtime", e))?;
    let served = runtime.block_on(serve(server));
    // A read of stdin may still be blocked in a thread of the runtime (the service can end on a
    // closed stdout): nothing waits for it.
    runtime.shutdown_background();
    served?;
    Ok(Outcome::Ok)
}

// The process's stdout belongs to the protocol here: the transport is its only writer (a tool
// call's command has a collecting Ui, which has no stdout), which is why clippy.toml allows it
// nowhere else.
#[allow(clippy::disallowed_methods)]
async fn serve(server: Server) -> Result<(), CliError> {
    let (stdin, stdout) = rmcp::transport::stdio();
    let (ends, copied) = mcp_stdio::framed(stdin, stdout);
    let service = server
        .serve(ends)
        .await
        .map_err(|e| CliError::with_message(Kind::Internal, "the MCP session could not start", e))?;
    let ended = service.waiting().await;
    copied.await;
    ended.map_err(|e| CliError::with_message(Kind::Internal, "the MCP session failed", e))?;
    Ok(())
}

/// A refusal as a tool error's fields: the CLI's message, causes, hints and exit code.
#[derive(Debug, Clone)]
struct Refusal {
    message: String,
    causes: Vec<String>,
    hints: Vec<String>,
    outcome: Outcome,
}

impl Refusal {
    fn from_error(e: &CliError) -> Refusal {
        Refusal { message: e.message(), causes: e.causes(), hints: e.hints().to_vec(), outcome: e.outcome() }
    }
}

/// The server: where it runs and as whom, fixed at start.
#[derive(Clone)]
struct Server {
    dir: PathBuf,
    /// The agent's name, or why there is none (every call is refused with it).
    agent: Result<String, Refusal>,
    /// What the last call's store learned, handed to the next (see "The resident cache" above);
    /// its lock makes tool calls run one at a time.
    resident: Arc<Mutex<Option<Memory>>>,
    tool_router: ToolRouter<Server>,
}

/// What a tool call's command gave: its `--json` output, its outcome, the summary's words, and
/// notes of the tool's own.
struct Answer {
    result: Value,
    outcome: Outcome,
    summary: String,
    notes: Vec<String>,
}

/// A command's typed output as a tool's result.
trait ToolResult {
    /// What the command's `--json` prints (the result's `result`).
    fn json(&self) -> Result<Value, serde_json::Error>;

    /// What it says in a few words, after `TOOL: OUTCOME: ` (empty: nothing more).
    fn summary(&self) -> String {
        String::new()
    }
}

/// Outputs that are the command's `--json` shape themselves and need no summary.
macro_rules! plain_results {
    ($($t:ty),* $(,)?) => {$(
        impl ToolResult for $t {
            fn json(&self) -> Result<Value, serde_json::Error> {
                serde_json::to_value(self)
            }
        }
    )*};
}

plain_results!(
    crate::cli::json::focus::FocusReleaseOut,
    git_mas::attention::rule::Alignment,
    git_mas::attention::rule::Decision,
    Vec<crate::cli::json::run::Listed>,
    git_mas::devrun::RunMeta,
    git_mas::sync::SyncReport,
);

impl ToolResult for crate::cli::json::agent::WhoamiOut {
    fn json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self)
    }
    fn summary(&self) -> String {
        format!("{} ({}), can sign: {}", self.name, self.did.as_deref().unwrap_or("not on the roster"), self.can_sign)
    }
}

impl ToolResult for frame::Shown {
    fn json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(&self.out)
    }
    fn summary(&self) -> String {
        let top: Vec<&str> = self.out.top.iter().map(|t| t.id.as_str()).collect();
        format!("frame {} by {}; top: {}", self.out.hash, self.out.publisher, top.join(", "))
    }
}

impl ToolResult for crate::cli::json::focus::FocusPublishOut {
    fn json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self)
    }
    fn summary(&self) -> String {
        format!("{} holds {} on frame {} (seq {})", self.agent, self.targets.join(", "), self.frame, self.seq)
    }
}

impl ToolResult for crate::cli::json::focus::FocusStatusOut {
    fn json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self)
    }
    fn summary(&self) -> String {
        format!("{}: {}", self.agent, self.state.as_str())
    }
}

impl ToolResult for crate::cli::json::focus::FocusListOut {
    fn json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self)
    }
    fn summary(&self) -> String {
        format!("{} foci on the board", self.board.entries.len())
    }
}

impl ToolResult for gate::Gated {
    fn json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(&self.out)
    }
    /// The verdict after its outcome (`blocked`, `fail-closed`), which is not repeated.
    fn summary(&self) -> String {
        use git_mas::attention::gate::Verdict;
        match &self.out.verdict {
            Verdict::Allow { .. } => "allow".into(),
            Verdict::Block { blocks } => blocks
                .iter()
                .map(|b| format!("{} holds {} ({})", b.holder, b.target, b.remedy))
                .collect::<Vec<_>>()
                .join("; "),
            Verdict::FailClosed { reason, remedy } => format!("{reason} ({remedy})"),
        }
    }
}

impl ToolResult for propose::Proposed {
    fn json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(&self.out)
    }
    fn summary(&self) -> String {
        propose::summary(&self.out)
    }
}

impl ToolResult for endorse::Endorsement {
    fn json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(&self.out)
    }
    fn summary(&self) -> String {
        format!("{} on {}'s proposal in run {}", self.out.verdict, self.out.proposer, self.out.run)
    }
}

impl ToolResult for tally::Tally {
    fn json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self.out())
    }
}

impl ToolResult for report::RunReport {
    fn json(&self) -> Result<Value, serde_json::Error> {
        match self {
            report::RunReport::Development(report) => serde_json::to_value(report),
            report::RunReport::Converge(report) => serde_json::to_value(report),
        }
    }
}

/// A typed function's output as the tool's answer.
fn answer<T: ToolResult>(done: Done<T>) -> Result<Answer, CliError> {
    let result = done
        .value
        .json()
        .map_err(|e| CliError::with_message(Kind::Internal, format!("cannot encode the result as JSON: {e}"), e))?;
    Ok(Answer { result, outcome: done.outcome, summary: done.value.summary(), notes: Vec::new() })
}

/// What running one tool call gave.
struct Ran {
    result: Result<Answer, Refusal>,
    notes: Vec<String>,
}

/// Runs `work` as `agent` in `dir`, what it says on stderr kept as notes. Never panics out: a
/// panic is an internal refusal.
/// `memory` is what the previous call's store learned; it holds what this call's store learned
/// afterwards (nothing after a panic).
fn execute(
    dir: PathBuf,
    agent: String,
    check_caller: bool,
    memory: &mut Option<Memory>,
    work: impl FnOnce(&Context) -> Result<Answer, CliError>,
) -> Ran {
    let (ui, said) = Ui::collecting();
    let given = memory.take();
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let ctx = Context::with_ui(dir, agent, ui, given);
        let result = (|| {
            if check_caller {
                ctx.caller()?;
            }
            work(&ctx)
        })();
        *memory = ctx.into_memory();
        result
    }));
    let result = match run {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) => Err(Refusal::from_error(&e)),
        Err(_) => Err(Refusal::from_error(&CliError::internal("the command panicked"))),
    };
    Ran { result, notes: said.lines() }
}

/// The notes naming the arguments a call gave that its tool does not take.
fn ignored(unknown: &BTreeMap<String, Value>) -> Vec<String> {
    unknown
        .keys()
        .map(|name| match name.as_str() {
            "agent" => "ignored unknown argument `agent`: the server acts only as the agent it was started as".into(),
            _ => format!("ignored unknown argument `{name}`"),
        })
        .collect()
}

impl Server {
    /// Runs one tool call's work on a blocking thread, one call at a time; `ignored` are notes
    /// on the call's own arguments, put first.
    async fn call(
        &self,
        tool: &'static str,
        ignored: Vec<String>,
        work: impl FnOnce(&Context) -> Result<Answer, CliError> + Send + 'static,
    ) -> Result<CallToolResult, ErrorData> {
        let agent = match &self.agent {
            Ok(name) => name.clone(),
            Err(refusal) => {
                let mut refusal = refusal.clone();
                refusal.hints.push("then restart the MCP server (the host restarts it with the session)".into());
                return Ok(tool_result(tool, None, Ran { result: Err(refusal), notes: ignored }));
            }
        };
        let (dir, resident, name) = (self.dir.clone(), self.resident.clone(), agent.clone());
        let check_caller = tool != "whoami";
        let mut ran = tokio::task::spawn_blocking(move || {
            let mut memory = resident.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            execute(dir, name, check_caller, &mut memory, work)
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the tool call did not finish: {e}"), None))?;
        ran.notes.splice(0..0, ignored);
        Ok(tool_result(tool, Some(&agent), ran))
    }
}

/// The tool's result: structured content ([`ToolOut`] or [`ToolRefusalOut`]), a one-line summary
/// and the structured content as JSON text.
fn tool_result(tool: &str, agent: Option<&str>, ran: Ran) -> CallToolResult {
    let (structured, summary, is_error) = match ran.result {
        Ok(answer) => {
            let code = answer.outcome.code();
            let head = format!("{tool}: {}", answer.outcome.name());
            let summary = if answer.summary.is_empty() { head } else { format!("{head}: {}", answer.summary) };
            let mut notes = ran.notes;
            notes.extend(answer.notes);
            let out = ToolOut {
                tool: tool.into(),
                agent: agent.unwrap_or_default().into(),
                exit_code: code,
                outcome: answer.outcome.name().into(),
                result: answer.result,
                notes,
            };
            (serde_json::to_value(out), summary, false)
        }
        Err(r) => {
            let mut summary = format!("{tool} refused ({}): {}", r.outcome.name(), r.message);
            for hint in &r.hints {
                summary.push_str(&format!("\nHint: {hint}"));
            }
            let out = ToolRefusalOut {
                tool: tool.into(),
                agent: agent.map(String::from),
                exit_code: r.outcome.code(),
                outcome: r.outcome.name().into(),
                error: r.message,
                causes: r.causes,
                hints: r.hints,
                notes: ran.notes,
            };
            (serde_json::to_value(out), summary, true)
        }
    };
    let structured = structured.unwrap_or_else(|e| Value::String(format!("the result could not be encoded: {e}")));
    let text = structured.to_string();
    let mut result =
        if is_error { CallToolResult::structured_error(structured) } else { CallToolResult::structured(structured) };
    result.content = vec![ContentBlock::text(summary), ContentBlock::text(text)];
    result
}

/// Makes a tool's input schema portable: an optional argument is written with its one type
/// (`{"type": "string"}`), not as the union `["string", "null"]` schemars gives an `Option`.
///
/// Why: a type union is legal JSON Schema, but a client that maps tool schemas onto a one-type
/// dialect (the OpenAPI subset of Gemini's function declarations, for one) may reject the tool
/// or drop the constraint; the MCP Inspector's `--strict` flags every union (rule `type-union`).
/// Nothing is lost: an optional argument is asked for by leaving it out (none is required), and
/// `null` is still accepted and means the same as absent.
fn portable(schema: &mut schemars::Schema) {
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|t| t != "null");
        if let [one] = types.as_slice() {
            let one = one.clone();
            schema.insert("type".into(), one);
        }
    }
    schemars::transform::transform_subschemas(&mut portable, schema);
}

/// No arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars", transform = portable)]
struct NoArgs {
    /// Arguments the tool does not take: ignored, and named in the result's notes.
    #[serde(flatten)]
    #[schemars(skip)]
    unknown: BTreeMap<String, Value>,
}

/// `frame`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars", transform = portable)]
struct FrameParams {
    /// How many top targets to list (default 10).
    limit: Option<u32>,
    #[serde(flatten)]
    #[schemars(skip)]
    unknown: BTreeMap<String, Value>,
}

/// `focus_publish`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars", transform = portable)]
struct PublishParams {
    /// Target ids (`src/lib.rs`, `src/a.rs#Item`) or globs over them, from the current frame.
    #[serde(default)]
    targets: Vec<String>,
    /// Add the frame's K highest targets.
    top: Option<u32>,
    /// How long the focus holds (e.g. 90s, 30m, 2h; at most 24h; default 30m).
    ttl: Option<String>,
    #[serde(flatten)]
    #[schemars(skip)]
    unknown: BTreeMap<String, Value>,
}

/// `align`'s and `decide`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars", transform = portable)]
struct PairParams {
    /// The other agent.
    other: String,
    /// The first agent (default: this server's agent).
    first: Option<String>,
    #[serde(flatten)]
    #[schemars(skip)]
    unknown: BTreeMap<String, Value>,
}

/// `gate`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars", transform = portable)]
struct GateParams {
    /// Repository-relative paths about to be changed (whole files); empty: the staged changes.
    #[serde(default)]
    paths: Vec<String>,
    #[serde(flatten)]
    #[schemars(skip)]
    unknown: BTreeMap<String, Value>,
}

/// A run's id, optional.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars", transform = portable)]
struct RunParams {
    /// The run (default: `mas.run`, else the only open run, else the latest).
    run: Option<String>,
    #[serde(flatten)]
    #[schemars(skip)]
    unknown: BTreeMap<String, Value>,
}

/// `propose`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars", transform = portable)]
struct ProposeParams {
    /// The proposal's message (default: names the agent and the run's goal).
    message: Option<String>,
    /// The run (default: `mas.run`, else the only open run).
    run: Option<String>,
    /// Abstain: this agent's slice of an aggregate run needs no change, and `message` says why
    /// (the worktree must hold the run's base unchanged).
    #[serde(default)]
    abstain: bool,
    #[serde(flatten)]
    #[schemars(skip)]
    unknown: BTreeMap<String, Value>,
}

/// `endorse`'s arguments. The check is always the run's own: a tool call cannot name a command
/// to run outside the host's sandbox.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars", transform = portable)]
struct EndorseParams {
    /// Whose proposal.
    proposer: String,
    /// The run (default: `mas.run`, else the only open run).
    run: Option<String>,
    /// Reject the proposal (a review disagreement); needs `reason`.
    #[serde(default)]
    reject: bool,
    /// Why (required with `reject`; a note with `no_check`).
    reason: Option<String>,
    /// Endorse by review alone, without running the check.
    #[serde(default)]
    no_check: bool,
    /// Kill the check after this long and record it as failed (e.g. 10m; default: the run's check
    /// timeout, else 5m).
    timeout: Option<String>,
    #[serde(flatten)]
    #[schemars(skip)]
    unknown: BTreeMap<String, Value>,
}

/// `sync`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars", transform = portable)]
struct SyncParams {
    /// A configured remote's name (default: `git config mas.remote`, else origin). URLs are not
    /// accepted here.
    remote: Option<String>,
    #[serde(flatten)]
    #[schemars(skip)]
    unknown: BTreeMap<String, Value>,
}

/// Whether `name` can only be a configured remote's name, not a URL or a path.
fn is_remote_name(name: &str) -> bool {
    git_mas::sync::remote_problem(name).is_none()
        && !name.is_empty()
        && !name.starts_with(['-', '.'])
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A duration argument (`ttl`, `timeout`) as its command reads it; a bad one is a usage error.
fn duration(
    name: &str,
    value: &str,
    parse: impl Fn(&str) -> Result<humantime::Duration, String>,
) -> Result<humantime::Duration, CliError> {
    parse(value).map_err(|e| CliError::usage(format!("invalid value {value:?} for `{name}`: {e}")))
}

/// No `--json` flag: a typed function returns its value whatever the flag says.
const NO_FLAG: JsonFlag = JsonFlag { json: false };

#[tool_router(router = tool_router)]
impl Server {
    #[tool(
        description = "The agent this server acts as, its did:key on the roster, and whether it can sign.",
        annotations(read_only_hint = true)
    )]
    async fn whoami(&self, Parameters(p): Parameters<NoArgs>) -> Result<CallToolResult, ErrorData> {
        self.call("whoami", ignored(&p.unknown), |ctx| {
            let done = whoami::whoami(ctx, &whoami::WhoamiArgs { output: NO_FLAG })?;
            match done.value.refused {
                Some(e) => Err(e),
                None => answer(Done::ended(done.value.out, done.outcome)),
            }
        })
        .await
    }

    #[tool(
        description = "The current frame: its hash, publisher and top targets with each signal's contribution.",
        annotations(read_only_hint = true)
    )]
    async fn frame(&self, Parameters(p): Parameters<FrameParams>) -> Result<CallToolResult, ErrorData> {
        let top = p.limit.map_or(frame::DEFAULT_TOP, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let args = frame::FrameArgs { top, output: NO_FLAG };
        self.call("frame", ignored(&p.unknown), move |ctx| answer(frame::frame(ctx, &args)?)).await
    }

    #[tool(
        description = "Publish this agent's focus: up to 8 targets (ids, globs or the top K) of the current frame, for a TTL.",
        annotations(read_only_hint = false)
    )]
    async fn focus_publish(&self, Parameters(p): Parameters<PublishParams>) -> Result<CallToolResult, ErrorData> {
        self.call("focus_publish", ignored(&p.unknown), move |ctx| {
            let ttl = p.ttl.as_deref().unwrap_or(focus::DEFAULT_TTL);
            let args = focus::PublishArgs {
                targets: p.targets,
                top: p.top.map(|k| usize::try_from(k).unwrap_or(usize::MAX)),
                ttl: duration("ttl", ttl, focus::parse_ttl)?,
                output: NO_FLAG,
            };
            answer(focus::focus_publish(ctx, &args)?)
        })
        .await
    }

    #[tool(description = "Release this agent's focus.", annotations(read_only_hint = false))]
    async fn focus_release(&self, Parameters(p): Parameters<NoArgs>) -> Result<CallToolResult, ErrorData> {
        self.call("focus_release", ignored(&p.unknown), |ctx| {
            answer(focus::focus_release(
                ctx,
                &focus::ReleaseArgs { targets: Vec::new(), force: false, output: NO_FLAG },
            )?)
        })
        .await
    }

    #[tool(
        description = "This agent's focus: live, expired, released or none, and on which frame.",
        annotations(read_only_hint = true)
    )]
    async fn focus_status(&self, Parameters(p): Parameters<NoArgs>) -> Result<CallToolResult, ErrorData> {
        self.call("focus_status", ignored(&p.unknown), |ctx| {
            answer(focus::focus_status(ctx, &focus::StatusArgs { output: NO_FLAG })?)
        })
        .await
    }

    #[tool(
        description = "The verified board: every live, expired and released focus, and rejected records.",
        annotations(read_only_hint = true)
    )]
    async fn board(&self, Parameters(p): Parameters<NoArgs>) -> Result<CallToolResult, ErrorData> {
        self.call("board", ignored(&p.unknown), |ctx| {
            answer(focus::focus_list(ctx, &focus::ListArgs { output: NO_FLAG })?)
        })
        .await
    }

    #[tool(
        description = "Alignment of two agents' foci: Jaccard overlap and whether the top target is shared.",
        annotations(read_only_hint = true)
    )]
    async fn align(&self, Parameters(p): Parameters<PairParams>) -> Result<CallToolResult, ErrorData> {
        let notes = ignored(&p.unknown);
        let (a, b) = self.pair(p);
        let args = align::AlignArgs { a, b, output: NO_FLAG };
        self.call("align", notes, move |ctx| answer(align::alignment(ctx, &args)?)).await
    }

    #[tool(
        description = "The coordination rule for two agents' foci: parallel, serialize (with the holder) or reject.",
        annotations(read_only_hint = true)
    )]
    async fn decide(&self, Parameters(p): Parameters<PairParams>) -> Result<CallToolResult, ErrorData> {
        let notes = ignored(&p.unknown);
        let (a, b) = self.pair(p);
        let args = align::DecideArgs { a, b, output: NO_FLAG };
        self.call("decide", notes, move |ctx| answer(align::decision(ctx, &args)?)).await
    }

    #[tool(
        description = "May this agent change these paths? The verdict is the result, never a tool error: allow, block (holder, target, remedy; outcome blocked) or fail_closed (reason, remedy; outcome fail-closed).",
        annotations(read_only_hint = true)
    )]
    async fn gate(&self, Parameters(p): Parameters<GateParams>) -> Result<CallToolResult, ErrorData> {
        let args = gate::GateArgs {
            staged: p.paths.is_empty(),
            paths: p.paths.into_iter().map(PathBuf::from).collect(),
            host: None,
            post_tool: false,
            session_end: false,
            output: NO_FLAG,
        };
        self.call("gate", ignored(&p.unknown), move |ctx| {
            let done = gate::gate(ctx, &args)?;
            // The verdict in words, as the command says it on stderr.
            let said = gating::verdict_text(ctx, &done.value.out.agent, &done.value.out.verdict);
            let mut answer = answer(done)?;
            answer.notes.extend(said.lines().filter(|l| !l.trim().is_empty()).map(String::from));
            Ok(answer)
        })
        .await
    }

    #[tool(description = "The runs: id, phase, goal.", annotations(read_only_hint = true))]
    async fn run_list(&self, Parameters(p): Parameters<NoArgs>) -> Result<CallToolResult, ErrorData> {
        self.call("run_list", ignored(&p.unknown), |ctx| {
            answer(run::run_list(ctx, &run::ListArgs { output: NO_FLAG })?)
        })
        .await
    }

    #[tool(description = "One run: its definition, phase, tip and problems.", annotations(read_only_hint = true))]
    async fn run_show(&self, Parameters(p): Parameters<RunParams>) -> Result<CallToolResult, ErrorData> {
        let args = run::ShowArgs { run: p.run, output: NO_FLAG };
        self.call("run_show", ignored(&p.unknown), move |ctx| answer(run::run_show(ctx, &args)?)).await
    }

    #[tool(
        description = "Propose this agent's worktree as its proposal in the run, with a message.",
        annotations(read_only_hint = false)
    )]
    async fn propose(&self, Parameters(p): Parameters<ProposeParams>) -> Result<CallToolResult, ErrorData> {
        let args = propose::ProposeArgs { message: p.message, run: p.run, abstain: p.abstain, output: NO_FLAG };
        self.call("propose", ignored(&p.unknown), move |ctx| answer(propose::propose(ctx, &args)?)).await
    }

    #[tool(
        description = "Endorse an agent's proposal by running the run's check on it, or reject it with a reason.",
        annotations(read_only_hint = false)
    )]
    async fn endorse(&self, Parameters(p): Parameters<EndorseParams>) -> Result<CallToolResult, ErrorData> {
        self.call("endorse", ignored(&p.unknown), move |ctx| {
            let timeout = match p.timeout.as_deref() {
                Some(t) => Some(duration("timeout", t, |t| t.parse().map_err(|e| format!("{e}")))?),
                None => None,
            };
            let args = endorse::EndorseArgs {
                agent: p.proposer,
                run: p.run,
                check: None,
                reject: p.reject,
                reason: p.reason,
                no_check: p.no_check,
                timeout,
                output: NO_FLAG,
            };
            answer(endorse::endorse(ctx, &args)?)
        })
        .await
    }

    #[tool(
        description = "Tally a run: proposals, valid endorsements, quorum, leader, conflicts.",
        annotations(read_only_hint = true)
    )]
    async fn tally(&self, Parameters(p): Parameters<RunParams>) -> Result<CallToolResult, ErrorData> {
        let args = tally::TallyArgs { run: p.run, output: NO_FLAG };
        self.call("tally", ignored(&p.unknown), move |ctx| answer(tally::tally(ctx, &args)?)).await
    }

    #[tool(
        description = "A run's convergence report: status, termination reason, conflicts, consensus score.",
        annotations(read_only_hint = true)
    )]
    async fn report(&self, Parameters(p): Parameters<RunParams>) -> Result<CallToolResult, ErrorData> {
        let args = report::ReportArgs { run: p.run, output: NO_FLAG, events: false, html: None };
        self.call("report", ignored(&p.unknown), move |ctx| answer(report::report(ctx, &args)?)).await
    }

    #[tool(
        description = "Exchange coordination records (refs/mas/*) with a configured remote, fast-forward only.",
        annotations(read_only_hint = false)
    )]
    async fn sync(&self, Parameters(p): Parameters<SyncParams>) -> Result<CallToolResult, ErrorData> {
        let notes = ignored(&p.unknown);
        if let Some(remote) = p.remote.as_deref().filter(|r| !is_remote_name(r)) {
            let e = CliError::usage(format!("{remote:?} is not a remote's name"))
                .hinted("name a remote configured in this repository (`git remote`), or leave it out for the default");
            let agent = self.agent.as_ref().ok().map(String::as_str);
            return Ok(tool_result("sync", agent, Ran { result: Err(Refusal::from_error(&e)), notes }));
        }
        let args = sync::SyncArgs { remote: p.remote, output: NO_FLAG };
        self.call("sync", notes, move |ctx| answer(sync::sync(ctx, &args)?)).await
    }
}

impl Server {
    /// `align`/`decide`'s two agents: `first` (default: this agent) and `other`.
    fn pair(&self, p: PairParams) -> (String, String) {
        let first = p.first.or_else(|| self.agent.as_ref().ok().cloned()).unwrap_or_default();
        (first, p.other)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let who = match &self.agent {
            Ok(name) => format!("acting as agent {name}"),
            Err(r) => format!("without an identity ({}): every tool call is refused until it is fixed", r.message),
        };
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("git-mas", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "git-mas coordination tools, {who}. Publish a focus before editing, call gate before changing \
                 files, propose your worktree when done, endorse the others' proposals. Use these tools when \
                 the shell cannot write to .git."
            ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exit_code_has_its_outcome_name() {
        let table = [
            (Outcome::Ok, 0, "ok"),
            (Outcome::Refused, 1, "refused"),
            (Outcome::Usage, 2, "usage"),
            (Outcome::Internal, 3, "internal"),
            (Outcome::Unverified, 4, "unverified"),
            (Outcome::SyncIncomplete, 5, "sync-incomplete"),
            (Outcome::Blocked, 6, "blocked"),
            (Outcome::FailClosed, 7, "fail-closed"),
            (Outcome::RunIncomplete, 8, "run-incomplete"),
            (Outcome::CheckFailed, 9, "check-failed"),
            (Outcome::Partial, 10, "partial"),
        ];
        for (outcome, code, name) in table {
            assert_eq!((outcome.code(), outcome.name()), (code, name));
        }
    }

    #[test]
    fn only_plain_names_pass_as_remotes() {
        for (name, ok) in
            [("origin", true), ("up-stream_2", true), ("../x", false), ("git@h:r", false), ("-u", false), ("", false)]
        {
            assert_eq!(is_remote_name(name), ok, "{name}");
        }
    }
}

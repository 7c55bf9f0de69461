//! `git mas coordinate`: a team of agents through ASSEMBLY and CONVERGE, for every class.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::json::coordinate::{ContinueOut, FramePlanOut, PreflightOut};
use crate::cli::output::JsonFlag;
use crate::cli::preflight::{self, GoalFrame};
use crate::cli::reports::{converge_report, dev_summary};
use crate::cli::team::{
    JsonLines, MAX_GOAL_BYTES, async_runtime, check_writable, execute, install_interrupt_handler, millis, team,
    write_file,
};
use git_mas::attention::frame::{self, Published};
use git_mas::coordinate::TeamWiring;
use git_mas::coordinate::develop::{Aggregate, DevEvent, DevHalt, DevSetup, SinkError, develop};
use git_mas::coordinate::scalar::record::new_run_id;
use git_mas::coordinate::scalar::{ConvergeDef, DEFAULT_MAX_ROUNDS, Limits};
use git_mas::coordinate::{DEFAULT_DEVELOPMENT_ROUNDS, Route, route};
use git_mas::devrun::slices::{self, PlanChoice, SlicePlan, SliceSource};
use git_mas::engines::ConvergeHalt;
use git_mas::hosts::hooks;
use git_mas::hosts::worktree;
use git_mas::peers::{PeerEntry, parse_agents};
use git_mas::pool::check::check_command;
use git_mas::runtime::PatternKind;
use std::path::PathBuf;

/// Drive a team of agents through ASSEMBLY and CONVERGE on this repository.
///
/// Before the first hop a preflight checks everything the run needs and refuses (exit 1, nothing
/// started) naming each missing piece with the command that fixes it: an identity for the driver;
/// every agent on the roster with its key here (development); every agent's program there — a
/// cmd: line's first program on PATH, a preset's CLI on PATH and answering `--version`; a check
/// command and a quorum the agents can reach without self-endorsement (development: with two
/// agents the default majority, 2, never holds — say --quorum 1); a checkout of the integration
/// branch that a landing can update; the goal's frame. When all that holds, the check runs once
/// on main (development, within --check-timeout; the result is kept under <git common dir>/
/// mas/check-cache, and the first endorsement that compares a proposal with the base reuses it)
/// and is refused when its command is not there (exit 127 or 126: the shell's own words are
/// shown), when it does not finish in time, or when cargo stopped at its first failing test
/// binary (the suites after it never ran, so no endorsement could judge them: add
/// --no-fail-fast). --dry-run prints the preflight and the plan (an aggregate run's slices) and
/// starts nothing, exit 0 when the run could start.
///
/// --pattern development (the default) converges on code: the driver starts a run (`git mas run
/// start`), publishes the goal's frame (the working tree, with the goal as the task and the
/// configured inputs: `mas.scip`, `mas.diagnostics`, `mas.editorFile`) when no frame is published
/// (a published frame is kept: another would leave every focus on it stale), creates one
/// worktree per agent, and each round
/// hops to every agent in ring order — phase=CONVERGE, the goal, its worktree and what to run
/// (focus, gate, edit, `git mas propose`) — then again for endorsements (`git mas endorse`, which
/// runs the team's check: --check, else `git config mas.check`). After each hop it looks for the
/// agent's record in refs/mas (a missing one fails the hop at once; --wait to wait for it); then it tallies and, when the leader has its quorum, lands
/// it on main exactly once and ends with the convergence report (stored under
/// refs/mas/runs/<run>/report). Agents do their own work under their own identity: every peer's
/// name must be an agent on the committed roster with its key here (`alice=claude-code`). The
/// driver never writes a proposal or an endorsement. With --assembly the team models the problem
/// first.
///
/// --aggregate makes the run complementary instead of best-of-N: the goal is split into slices
/// covering what the goal concerns — the files it names, the files with error diagnostics, the
/// files the check names when the preflight runs it once on main (its failing tests, the paths in
/// its output), each with its neighbours (the modules its import statements name, followed
/// through re-export hubs such as an __init__.py or a lib.rs of `pub use` to the module that
/// defines the name; with a SCIP index, the files it uses or that use it) in one slice. With
/// fewer groups than agents the agents left over have no slice: they review (endorse hops only).
/// With nothing to go on the frame's files are dealt out in turn, highest saliency first, and the
/// plan says so. Never .mas/, a lock file, a manifest, README or .gitignore as filler; no file in
/// two slices, so the rule says Parallel for every pair; a slice may hold more files than a focus. The
/// plan says why each file is where it is; it is recorded, signed, in the run's definition and
/// shown before the first hop; each propose hop names the agent's slice (`slice=`, `subgoal=`),
/// and the agent publishes its focus from its first files.
/// With --assembly the agents may propose the split themselves (`SLICE <agent> <file>…` lines,
/// `REVIEW <agent> [why]` for an agent without a slice; a split with a shared top target or a file the frame lacks is refused by name, and the frame's
/// split is used). After each round a wait-all barrier looks at every slice: the merged whole
/// (slices merged in plan order onto the base, three-way onto main when main moved, the check run
/// on the merged tree) lands once, as one commit naming every agent and each slice's endorsers,
/// only when every slice is at quorum. A slice judged against, two slices changing the same lines
/// (artifact_mismatch) or a merged tree failing the check (test_failure) is recorded and handed to
/// the agents concerned in the next round's hop (`conflict=`); only when the rounds run out does
/// the run end unlanded. --partial lands the slices at quorum once the barrier holds without the
/// others (the report names the slices left out, never quality_reached).
///
/// --pattern preference|cascade|resource|unmapped runs ASSEMBLY first (each peer ends with
/// `CLASS <name>` and `UPDATE <rule>`), then CONVERGE on the class the team named, exactly as
/// `git mas converge` does (same report). A class git-mas has no engine for stops the run after
/// ASSEMBLY with the class named: a modelling outcome, exit 0. `development` named in ASSEMBLY
/// continues with the development CONVERGE.
///
/// Agents (--agents, comma-separated or repeated, in ring order; `NAME=<spec>` names one):
///   cmd:<command line>   run with `sh -c` for every hop: the prompt on stdin, the reply on stdout
///   builtin:reference|greedy|faulty   git-mas's own scripted peers
///   claude-code   claude -p --permission-mode acceptEdits --allowedTools 'Bash(git:*)'
///                 (plus 'Bash(<check>:*)': the agent may run the team's check)
///   codex         codex exec --sandbox danger-full-access --ephemeral --color never -
///   copilot       copilot -s --allow-all-tools --no-ask-user
///   gemini        gemini --approval-mode yolo --skip-trust
///   cursor        cursor-agent -p --force --output-format text   (unverified)
///   goose         goose run --no-session --instructions -   (unverified)
///   opencode      opencode run --auto
/// Every preset reads the hop's prompt on stdin. claude-code, codex, copilot, gemini and opencode
/// are verified against their real CLIs; cursor and goose follow their vendors' docs, unverified.
/// A preset's command line is overridden by `git config mas.agent.<name>.command` (that peer) or
/// `git config mas.agent.<preset>.command` (every peer of the preset). Hops carry GIT_MAS_AGENT,
/// GIT_MAS_RUN, GIT_MAS_PHASE, GIT_MAS_TASK and GIT_MAS_WORKTREE in their environment; a hop names
/// the phase and never pastes a skill (install them with `git mas skills install`).
///
/// In development, each preset agent's worktree gets its host's edit hook (`git mas hooks install
/// --host <preset>` there) before the first hop, so an edit of a file another agent holds is
/// refused before it is written; the hook's files are kept out of the agent's proposals (they
/// are ignored in that worktree alone). --no-edit-gate leaves the worktrees without it. Each
/// preset agent's worktree also gets the MCP server registered as that agent (`git mas mcp
/// install --host <preset> --agent <name>` there; not goose), kept out of its proposals the same
/// way, for a host whose shell cannot write to .git; --no-mcp leaves it out. Hosts do not all
/// load a project's registration unattended, so the default command lines of those agents
/// start it: claude-code gets `mcp__git-mas` among its allowed tools and `--mcp-config
/// .mcp.json` (a project .mcp.json is otherwise started only once approved), codex the server
/// as one `-c mcp_servers.git-mas={…}` table, with the environment git-mas reads passed through
/// and its tools approved (codex clears a server's environment, and `codex exec` refuses a tool
/// that writes without approval), copilot `--additional-mcp-config @.copilot/mcp-config.json`. Two hosts
/// do not load a linked worktree's hook by themselves, so their gated agents' default command
/// lines say so: codex (which reads project hooks from the main checkout, and runs a hook only
/// once it is trusted) gets `--dangerously-bypass-hook-trust -c 'hooks.PreToolUse=[<the gate>]'`
/// after `codex exec` (the bypass, for that invocation, also runs any other hook codex loads: the
/// user's own, and a project's only in a project the user trusts); copilot (which loads
/// .github/hooks/ only in a trusted folder) gets --trust-folder; opencode's plugin is put in the
/// worktree's git dir (a `.opencode/` folder would make opencode npm-install into it first) and
/// named by an OPENCODE_CONFIG_CONTENT assignment before `opencode run`. A command line from git
/// config is run as written: add those there to gate such an agent.
///
/// After a landed run the agents' worktrees are removed (a worktree holding changes its agent
/// never proposed stays, with a warning); --keep-worktrees keeps them all. An unlanded run keeps
/// them for inspection.
///
/// Every reply ends with `NEXT <agent>` or `DONE`. A failed call (an error exit, a timeout: the
/// process group is killed) or an unreadable reply is asked once more with the reason; a second
/// failure halts the run with that reason. Ctrl-C kills every agent process; refs/mas stays as of
/// its last completed write (each is one transaction).
///
/// Exit status: 0 landed (development), or a scalar run with a result, or an unmapped class, or
/// --dry-run with nothing missing; 1 the preflight found something missing; 6 the landing is
/// blocked; 8 the run ended without a result (no landable quorum in
/// --max-rounds, an unreadable reply, the budget, a missing rule, every slice abstained); 10
/// landed, but tests still fail on main (partial: what landed fixed failing tests and broke
/// none, without passing the check).
///
/// With --json: the preflight first ({event: preflight, ok, items: [{check, ok, detail, fix}],
/// frame, plan, dry_run}), then one JSON line per event (development: run-started, plan, worktree, hop, recorded,
/// missing, tally, barrier, conflict, not-landable, landed, halt, report; the scalar classes as
/// `git mas converge --json`), and {event: continue, class, assembly_run} when ASSEMBLY hands
/// over to development.
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct CoordinateArgs {
    /// The team's goal.
    #[arg(long, value_name = "TEXT")]
    pub goal: String,
    /// The agents, in ring order: cmd:<command line>, builtin:<kind>, or a preset; NAME=<spec> names one.
    #[arg(long, required = true, value_name = "SPEC,…")]
    pub agents: Vec<String>,
    /// The class: development (default), preference, cascade, resource, or unmapped (ASSEMBLY decides).
    #[arg(long, value_name = "CLASS", default_value = "development", value_parser = parse_pattern)]
    pub pattern: PatternKind,
    /// Run ASSEMBLY before development too (it always runs before the other classes).
    #[arg(long)]
    pub assembly: bool,
    /// Valid endorsements a proposal needs to land (development; default: a strict majority).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub quorum: Option<u32>,
    /// The CONVERGE cap: rounds of proposals and endorsements (development, default 3) or epochs
    /// (scalar classes, default 60; the class's own horizon may be shorter).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub max_rounds: Option<u64>,
    /// The team's check command for endorsements (development; default: `git config mas.check`).
    #[arg(long, value_name = "CMD")]
    pub check: Option<String>,
    /// How long an agent has for one hop; an agent still running then is killed.
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub hop_timeout: humantime::Duration,
    /// How long each check may take before it is killed and fails (development): the preflight's
    /// run on main, every endorsement's (on the proposal and on the base), the landing's check of
    /// the merged tree. Recorded in the run. The default, 5m, is half the default hop timeout: an
    /// endorsement may run the check twice in one hop.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = positive_duration)]
    pub check_timeout: humantime::Duration,
    /// How long the whole run has; when it runs out the run halts budget-exhausted.
    #[arg(long, value_name = "DURATION", default_value = "2h")]
    pub budget: humantime::Duration,
    /// How long to look for an agent's records in refs/mas after its reply (development). The
    /// agent's process and everything it started are gone when its hop ends, so by default (0s)
    /// a missing record fails the hop at once; give a duration only for an agent that leaves its
    /// work to a process outside its own group.
    #[arg(long, value_name = "DURATION", default_value = "0s")]
    pub wait: humantime::Duration,
    /// Also write the final report, as JSON, to FILE.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Do not install the host's edit hook in each preset agent's worktree (development).
    #[arg(long)]
    pub no_edit_gate: bool,
    /// Do not register the MCP server (`git mas mcp --agent <name>`) in each preset agent's
    /// worktree (development).
    #[arg(long)]
    pub no_mcp: bool,
    /// Complementary work (development): split the goal by the current frame into one slice per
    /// agent, no two with one top target; each agent works its slice; the merged whole lands once
    /// every slice is at quorum.
    #[arg(long)]
    pub aggregate: bool,
    /// With --aggregate: land the slices at quorum without the others once every slice is judged
    /// (or when the rounds end), instead of nothing; the report names the slices left out.
    #[arg(long, requires = "aggregate")]
    pub partial: bool,
    /// Keep the agents' worktrees after a landed run (they are removed, unless one holds changes
    /// its agent never proposed; an unlanded run always keeps them for inspection).
    #[arg(long)]
    pub keep_worktrees: bool,
    /// Print the preflight and the plan, and start nothing (exit 0 when the run could start, 1
    /// when something is missing).
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// A duration above zero (a check given no time at all could never pass).
pub(crate) fn positive_duration(value: &str) -> Result<humantime::Duration, String> {
    match value.parse::<humantime::Duration>() {
        Ok(d) if d.is_zero() => Err("must be more than 0s".to_string()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_pattern(value: &str) -> Result<PatternKind, String> {
    PatternKind::parse_flag(value).map_err(|_| {
        format!("unknown pattern {value:?}; expected one of: development, preference, cascade, resource, unmapped")
    })
}

/// Publishes the goal's frame (the working tree with the goal as its task, and the configured
/// inputs) unless it is the published one already; returns its hash.
fn publish_goal_frame(ctx: &Context, frame: &GoalFrame) -> Result<String, CliError> {
    let Some((view, files)) = frame.publish.as_ref().filter(|_| !frame.current) else {
        ctx.status(&format!("frame {} is current", frame.hash));
        return Ok(frame.hash.clone());
    };
    let caller = ctx.caller()?;
    let store = ctx.store()?;
    match frame::publish(store, &caller.name, &caller.key, &frame.snapshot, view, files)? {
        Published::New { .. } => {
            ctx.status(&format!("published frame {} from the goal and the configured inputs", frame.hash))
        }
        Published::Unchanged { .. } => ctx.status(&format!("frame {} is current", frame.hash)),
    }
    Ok(frame.hash.clone())
}

fn narrate(ctx: &Context, event: &DevEvent) {
    match event {
        DevEvent::RunStarted { run, roster, quorum, requested_quorum, check, .. } => ctx.status(&format!(
            "started run {run}: roster {}, quorum {}{}",
            roster.join(", "),
            crate::cli::render::quorum(*quorum, *requested_quorum),
            check.as_deref().map(|c| format!(", check `{c}`")).unwrap_or_default()
        )),
        DevEvent::Worktree { agent, path } => ctx.status(&format!("  {agent} works in {}", path.display())),
        DevEvent::Hop(h) => match &h.failure {
            Some(f) => ctx.warn(&format!("{} ({} hop, attempt {}): {f}", h.peer, h.task.name(), h.attempt)),
            None => {
                let said = h.reply.as_deref().and_then(|r| r.lines().map(str::trim).find(|l| !l.is_empty()));
                let said: String = said.unwrap_or("").chars().take(90).collect();
                ctx.status(&format!("round {} · {} hop → {}: {said}", h.round, h.task.name(), h.peer))
            }
        },
        DevEvent::Recorded { agent, kind, proposer } => ctx.status(&match proposer {
            Some(p) => format!("  recorded: {agent}'s {kind} of {p}'s proposal"),
            None => format!("  recorded: {agent}'s {kind}"),
        }),
        DevEvent::Missing { detail, .. } => ctx.warn(detail),
        DevEvent::Tally { round, quorum, requested_quorum, leader, quorum_reached, proposals } => {
            let mut line = format!(
                "tally after round {round} (quorum {}):",
                crate::cli::render::quorum(*quorum, *requested_quorum)
            );
            for p in proposals {
                line.push_str(&format!(
                    "\n  {:<12} {} valid endorsement(s){}{}",
                    p.agent,
                    p.endorsers.len(),
                    if p.endorsers.is_empty() { String::new() } else { format!(" ({})", p.endorsers.join(", ")) },
                    if p.failed.is_empty() {
                        String::new()
                    } else {
                        format!(", check failed for {}", p.failed.join(", "))
                    }
                ));
            }
            line.push_str(&format!(
                "\n  leader: {}{}",
                leader.as_deref().unwrap_or("none"),
                if *quorum_reached { " — quorum reached" } else { "" }
            ));
            ctx.status(&line);
        }
        DevEvent::NotLandable { detail, .. } => ctx.warn(&format!("not landable yet: {detail}")),
        DevEvent::SliceDenied { agent, holder, file, .. } => ctx.warn(&format!(
            "the gate denied {agent} an edit of {file}, in {holder}'s slice (handed to them both for the next round)"
        )),
        DevEvent::Landed { commit, winners, termination } => {
            ctx.status(&format!("landed {} on main as {commit} ({termination})", winners.join(", ")))
        }
        DevEvent::Halt { halt, detail, .. } => ctx.status(&format!("halt {}: {detail}", halt.code())),
        DevEvent::Report { .. } => {}
        DevEvent::Plan { .. } | DevEvent::Barrier { .. } | DevEvent::Conflict { .. } => narrate_aggregate(ctx, event),
    }
}

/// The aggregate run's own events: the plan (before the first hop), the barrier, the conflicts.
fn narrate_aggregate(ctx: &Context, event: &DevEvent) {
    match event {
        DevEvent::Plan { plan } => {
            let text = format!("plan: {} slices from frame {} ({}):", plan.slices.len(), plan.frame, plan_source(plan));
            ctx.status(&format!("{text}{}", plan_lines(plan)));
        }
        DevEvent::Barrier { round, holds, slices } => {
            let mut text =
                format!("barrier after round {round}: {}", if *holds { "every slice is judged" } else { "waiting" });
            for s in slices {
                let detail = s.detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default();
                text.push_str(&format!("\n  {:<12} {}{detail}", s.agent, s.status.name()));
            }
            ctx.status(&text);
        }
        DevEvent::Conflict { conflict, .. } => ctx.warn(&format!(
            "conflict {} between {}: {} (handed to them for the next round)",
            conflict.kind.name(),
            conflict.parties.join(", "),
            conflict.detail
        )),
        _ => {}
    }
}

fn plan_source(plan: &SlicePlan) -> &'static str {
    match plan.source {
        SliceSource::Frame => "nothing says what the goal concerns: dealt from the frame's ranking",
        SliceSource::Concerns => "covering what the goal concerns",
        SliceSource::Agents => "proposed by the agents",
    }
}

/// Each slice of `plan` on a line, and under it why each of its files is there; then each
/// agent with no slice, and why it reviews.
fn plan_lines(plan: &SlicePlan) -> String {
    let mut text = String::new();
    for s in &plan.slices {
        text.push_str(&format!("\n  {:<12} {}", s.agent, s.targets.join(", ")));
        for t in &s.targets {
            if let Some(why) = s.why.get(t) {
                text.push_str(&format!("\n  {:<12}   {t}: {why}", ""));
            }
        }
    }
    for r in &plan.reviewers {
        text.push_str(&format!("\n  {:<12} (reviews: {})", r.agent, r.why));
    }
    text
}

/// The most files an ASSEMBLY is offered to split.
const MAX_SPLIT_FILES: usize = 32;

/// The goal frame's files an ASSEMBLY before an aggregate run may split, highest first (the
/// frame published first).
fn split_files(ctx: &Context, frame: &GoalFrame) -> Result<Vec<String>, CliError> {
    publish_goal_frame(ctx, frame)?;
    let mut files = slices::frame_files(&frame.snapshot);
    files.truncate(MAX_SPLIT_FILES);
    Ok(files)
}

/// An aggregate run's plan ([`slices::choose_plan`]), saying where it came from when it is not
/// the agents'.
fn aggregate_plan(
    ctx: &Context,
    args: &CoordinateArgs,
    peers: &[PeerEntry],
    assembly: Option<&[String]>,
    frame: &GoalFrame,
) -> Result<Option<Aggregate>, CliError> {
    if !args.aggregate {
        return Ok(None);
    }
    let agents: Vec<String> = peers.iter().map(|p| p.name.clone()).collect();
    let (plan, choice) =
        slices::choose_plan(&args.goal, &agents, &frame.snapshot, &frame.hash, assembly, frame.coverage.as_ref())?;
    match choice {
        PlanChoice::Unsaid => {
            ctx.status("ASSEMBLY proposed no split (no SLICE lines): the plan is dealt from the frame")
        }
        PlanChoice::Refused(refused) => {
            ctx.warn(&format!("the agents' split is refused: {refused}; the plan is dealt from the frame instead"))
        }
        PlanChoice::Agents | PlanChoice::Frame => {}
    }
    let listed: std::collections::BTreeSet<&str> = frame.snapshot.targets.iter().map(|t| t.id.as_str()).collect();
    let listed = plan.slices.iter().flat_map(|s| &s.targets).filter(|t| listed.contains(t.as_str())).cloned().collect();
    Ok(Some(Aggregate { plan, partial: args.partial, listed }))
}

/// Installs the edit hook (`gated`) and registers the MCP server (`served`) in `agent`'s new
/// worktree, each when that agent is named there.
fn prepare_worktree(
    ctx: &Context,
    wired: &TeamWiring,
    agent: &str,
    path: &std::path::Path,
    json: bool,
) -> Result<(), SinkError> {
    if let Some(host) = wired.gated(agent) {
        worktree::install_hook(host, path)?;
        let enforced = worktree::enforce_gate(path)?;
        if !json {
            let mode = if enforced { ", mas.gate=enforce in its worktree" } else { "" };
            ctx.status(&format!("  {agent}'s edits are gated ({} hook installed{mode})", host.name()));
            for note in hooks::notes(host, &git_mas::hosts::Scope::Project(path.to_path_buf())) {
                ctx.ui().hint(&format!("{agent}: {note}"));
            }
        }
    }
    // After the edit hook: both keep their files out of proposals in the same excludes file.
    if let Some(host) = wired.served(agent) {
        let report = worktree::install_mcp(host, path, agent)?;
        if !json {
            ctx.status(&format!("  {agent}'s {} has the git-mas MCP server ({})", host.name(), report.path.display()));
        }
    }
    Ok(())
}

/// A development run; `assembly`: the replies of the ASSEMBLY before it (the last with `SLICE`
/// lines proposes an aggregate run's split).
fn development(
    ctx: &mut Context,
    args: &CoordinateArgs,
    peers: Vec<PeerEntry>,
    assembly: Option<&[String]>,
    goal_frame: Option<GoalFrame>,
) -> Result<Outcome, CliError> {
    // After an ASSEMBLY that named development, what development needs is checked now.
    let goal_frame = match goal_frame {
        Some(f) => f,
        None => {
            preflight(ctx, args, &peers, true)?.ok_or_else(|| CliError::internal("no frame after the preflight"))?
        }
    };
    let caller = ctx.caller()?;
    let frame = Some(publish_goal_frame(ctx, &goal_frame)?);
    let aggregate = aggregate_plan(ctx, args, &peers, assembly, &goal_frame)?;
    let setup = DevSetup {
        goal: args.goal.clone(),
        quorum: args.quorum,
        max_rounds: args.max_rounds.unwrap_or(DEFAULT_DEVELOPMENT_ROUNDS),
        check: args.check.clone(),
        hop_timeout: *args.hop_timeout,
        check_timeout: *args.check_timeout,
        budget: *args.budget,
        wait: *args.wait,
        frame,
        aggregate,
    };
    let dir = ctx.cwd()?;
    let wired = TeamWiring::of(&peers, !args.no_edit_gate, !args.no_mcp);
    // The check the run will record (`--check`, else `mas.check`): claude-code may run it.
    let check = ctx.store().ok().and_then(|s| check_command(s, args.check.as_deref(), None));
    let agent_names: Vec<String> = peers.iter().map(|p| p.name.clone()).collect();
    let mut team = team(ctx, peers, &dir, check.as_deref(), &|name| wired.wiring(name))?;
    install_interrupt_handler()?;
    let runtime = async_runtime()?;
    let ctx_ref = &*ctx;
    let json = args.output.json;
    let mut lines = JsonLines::new();
    let mut sink = |event: &DevEvent| -> Result<(), SinkError> {
        if let DevEvent::Worktree { agent, path } = event {
            prepare_worktree(ctx_ref, &wired, agent, path, json)?;
        }
        if json {
            lines.print(ctx_ref.ui(), event)?;
        } else {
            narrate(ctx_ref, event);
        }
        Ok(())
    };
    let store = ctx.store()?;
    let outcome =
        runtime.block_on(develop(store, &caller.name, &caller.key, &setup, &mut team, &mut sink)).map_err(|e| {
            CliError::from(e).hinted("`git mas run list` shows the run, `git mas report <run>` where it stands")
        })?;
    if let Some(path) = &args.report {
        let bytes = serde_json::to_vec_pretty(&outcome.report).map_err(|e| CliError::new(Kind::Internal, e))?;
        write_file(path, &bytes, "--report")?;
    }
    let kept = if outcome.halt == DevHalt::Landed && !args.keep_worktrees {
        remove_worktrees(ctx, &outcome.run, &agent_names)
    } else {
        agent_names.clone()
    };
    if !json {
        ctx.ui().out(&dev_summary(&outcome.report))?;
        let worktrees = if kept.is_empty() {
            "the agents' worktrees are removed (--keep-worktrees keeps them)".to_string()
        } else {
            format!(
                "{} worktree(s) stay for inspection ({}: `git mas worktree remove <agent> --run {}`)",
                kept.len(),
                kept.join(", "),
                outcome.run
            )
        };
        ctx.status(&format!(
            "report stored under refs/mas/runs/{}/report (`git mas report {}`); {worktrees}",
            outcome.run, outcome.run
        ));
    }
    Ok(match outcome.halt {
        DevHalt::Landed if outcome.report.still_failing.is_some() => Outcome::Partial,
        DevHalt::Landed => Outcome::Ok,
        DevHalt::LandBlocked => Outcome::Blocked,
        _ => Outcome::RunIncomplete,
    })
}

/// Runs `coordinate`.
pub fn run(ctx: &mut Context, args: CoordinateArgs) -> Result<Outcome, CliError> {
    let peers = parse_agents(&args.agents).map_err(|e| {
        CliError::with_message(Kind::Usage, "--agents is not a list of peer specs", e).hinted(
            "agents are cmd:<command line>, builtin:reference|greedy|faulty, or a preset (claude-code, codex, copilot, gemini, cursor, goose, opencode), optionally NAME=<spec>",
        )
    })?;
    if args.goal.trim().is_empty() || args.goal.len() > MAX_GOAL_BYTES {
        return Err(CliError::usage(format!("--goal must be between 1 and {MAX_GOAL_BYTES} bytes")));
    }
    if let Some(path) = &args.report {
        check_writable(path, "--report")?;
    }
    let develops = args.pattern == PatternKind::Development || args.aggregate;
    if args.dry_run {
        return dry_run(ctx, &args, &peers, develops);
    }
    let goal_frame = preflight(ctx, &args, &peers, develops)?;
    if route(args.pattern, args.assembly) == Route::Development {
        return development(ctx, &args, peers, None, goal_frame);
    }
    let caller = ctx.caller()?;
    let split = match (&goal_frame, args.aggregate) {
        (Some(f), true) => split_files(ctx, f)?,
        _ => Vec::new(),
    };
    let meta = ConvergeDef {
        run: new_run_id(std::time::SystemTime::now()),
        goal: args.goal.clone(),
        pattern: args.pattern,
        peers: peers.clone(),
        driver: caller.name.clone(),
        limits: Limits {
            max_rounds: args.max_rounds.unwrap_or(DEFAULT_MAX_ROUNDS),
            hop_timeout_ms: millis(*args.hop_timeout)?,
            budget_ms: millis(*args.budget)?,
        },
        split,
    };
    let (report, replies) = execute(ctx, &meta, args.output.json)?;
    if report.halt == Some(ConvergeHalt::Unmapped) && report.class == Some(PatternKind::Development) {
        if args.output.json {
            let event = ContinueOut {
                event: crate::cli::json::ContinueEvent::Continue,
                class: git_mas::runtime::PatternKind::Development,
                assembly_run: report.run,
            };
            ctx.ui().json(&event)?;
        } else {
            ctx.status(&format!(
                "ASSEMBLY (run {}) named class development: CONVERGE continues on code artifacts",
                report.run
            ));
        }
        return development(ctx, &args, peers, Some(&replies), goal_frame);
    }
    if let Some(path) = &args.report {
        let bytes = serde_json::to_vec_pretty(&report).map_err(|e| CliError::new(Kind::Internal, e))?;
        write_file(path, &bytes, "--report")?;
    }
    if args.quorum.is_some() || args.check.is_some() {
        ctx.warn("--quorum and --check apply to development runs; this run did not converge on code");
    }
    if !args.output.json {
        ctx.ui().out(&converge_report(&report, &|s| ctx.paint(s, "1")))?;
        if report.halt == Some(ConvergeHalt::Unmapped) {
            ctx.status(&format!(
                "the team modelled the problem as class {}: git-mas has no engine for it, so CONVERGE did not start",
                report.class_token.as_deref().or(report.class.map(|c| c.name())).unwrap_or("(none named)")
            ));
        }
    }
    Ok(if report.incomplete() { Outcome::RunIncomplete } else { Outcome::Ok })
}

/// The preflight before the first hop: prints it (`--json`: its one line) and refuses with every
/// missing piece named; the goal's frame when `development`.
fn preflight(
    ctx: &Context,
    args: &CoordinateArgs,
    peers: &[PeerEntry],
    development: bool,
) -> Result<Option<GoalFrame>, CliError> {
    let gathered = gather(ctx, args, peers, development);
    show_preflight(ctx, args, &gathered, None)?;
    if !gathered.preflight.passed() {
        return Err(refused(&gathered));
    }
    Ok(gathered.frame)
}

/// The refusal after a preflight that found something missing.
fn refused(gathered: &preflight::Gathered) -> CliError {
    let missing: Vec<&str> = gathered.preflight.missing().map(|i| i.check).collect();
    CliError::user(format!(
        "the preflight found {} missing piece(s) ({}): no run was started, no agent was asked",
        missing.len(),
        missing.join(", ")
    ))
    .hinted("each MISSING line above names the command that fixes it; `git mas coordinate --dry-run …` checks again")
}

/// Prints the preflight: in full when something is missing or with --dry-run, else one line.
fn show_preflight(
    ctx: &Context,
    args: &CoordinateArgs,
    gathered: &preflight::Gathered,
    plan: Option<&SlicePlan>,
) -> Result<(), CliError> {
    let p = &gathered.preflight;
    if args.output.json {
        let out = PreflightOut {
            event: crate::cli::json::PreflightEvent::Preflight,
            ok: p.passed(),
            items: p.items.clone(),
            frame: gathered.frame.as_ref().map(|f| FramePlanOut {
                hash: f.hash.clone(),
                current: f.current,
                files: f.snapshot.targets.len(),
            }),
            plan: plan.cloned(),
            dry_run: args.dry_run,
        };
        ctx.ui().json(&out)?;
        return Ok(());
    }
    if p.passed() && !args.dry_run {
        let checks: Vec<&str> =
            p.items.iter().map(|i| i.check).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
        ctx.status(&format!("preflight: {} check(s) hold ({})", p.items.len(), checks.join(", ")));
        return Ok(());
    }
    let head = if p.passed() {
        "preflight: everything the run needs is here".to_string()
    } else {
        format!("preflight: {} missing piece(s)", p.missing().count())
    };
    let text = format!("{head}\n{}", p.render().trim_end());
    if args.dry_run {
        ctx.ui().out(&format!("{text}\n"))?
    } else {
        ctx.status(&text)
    }
    Ok(())
}

/// The preflight of this command line (the rules: [`preflight::gather`]).
fn gather(ctx: &Context, args: &CoordinateArgs, peers: &[PeerEntry], development: bool) -> preflight::Gathered {
    let ask = preflight::Ask {
        goal: &args.goal,
        peers,
        development,
        check: args.check.as_deref(),
        quorum: args.quorum,
        aggregate: args.aggregate,
        check_timeout: *args.check_timeout,
    };
    preflight::gather(ctx, &ask)
}

/// `--dry-run`: the preflight and the plan; nothing started, nothing written.
fn dry_run(ctx: &Context, args: &CoordinateArgs, peers: &[PeerEntry], development: bool) -> Result<Outcome, CliError> {
    let gathered = gather(ctx, args, peers, development);
    // The plan rests on what the preflight found (the check's run on the base above all): none
    // is shown while a piece is missing.
    let plan = match (&gathered.frame, args.aggregate && !args.assembly && gathered.preflight.passed()) {
        (Some(f), true) => {
            let agents: Vec<String> = peers.iter().map(|p| p.name.clone()).collect();
            Some(slices::choose_plan(&args.goal, &agents, &f.snapshot, &f.hash, None, f.coverage.as_ref())?.0)
        }
        _ => None,
    };
    show_preflight(ctx, args, &gathered, plan.as_ref())?;
    if !args.output.json {
        let route = match route(args.pattern, args.assembly) {
            Route::Development if args.aggregate => {
                "development, aggregate: one slice per group of files the goal concerns, the merged whole lands once"
            }
            Route::Development => "development, best-of-N: the proposal at quorum lands",
            Route::AssemblyFirst => "ASSEMBLY first, then CONVERGE on the class the team names",
        };
        let mut text = format!(
            "plan: {route}; agents {} in ring order",
            peers.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
        );
        if let Some(plan) = &plan {
            text.push_str(&format!("\nslices ({}):{}", plan_source(plan), plan_lines(plan)));
        }
        if args.aggregate && args.assembly {
            text.push_str("\n  (the agents propose the split in ASSEMBLY; the frame's deal is the fallback)");
        }
        ctx.ui().out(&format!("{text}\nnothing was started (--dry-run)\n"))?;
    }
    Ok(if gathered.preflight.passed() { Outcome::Ok } else { Outcome::Refused })
}

/// Removes the worktrees of a landed run's agents, each unless it holds changes its agent never
/// proposed (those are kept, with a warning); the agents whose worktree is kept.
fn remove_worktrees(ctx: &Context, run: &str, agents: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let Ok(store) = ctx.store() else { return agents.to_vec() };
    let Ok(meta) = git_mas::devrun::load_meta(store, &store.roster().unwrap_or_default(), run) else {
        return agents.to_vec();
    };
    for agent in agents {
        let found = match git_mas::pool::worktree::find(store.common_dir(), run, agent) {
            Ok(Some(w)) => w,
            Ok(None) => continue,
            Err(_) => {
                kept.push(agent.clone());
                continue;
            }
        };
        match git_mas::pool::worktree::unproposed(store, &meta, &found) {
            Ok(None) => {
                if let Err(e) = git_mas::pool::worktree::remove(store, &found) {
                    ctx.warn(&format!("{agent}'s worktree {} stays: {e}", found.path.display()));
                    kept.push(agent.clone());
                }
            }
            Ok(Some(lost)) => {
                ctx.warn(&format!(
                    "{agent}'s worktree {} stays: it holds {} path(s) not in {}",
                    found.path.display(),
                    lost.paths.len(),
                    lost.against
                ));
                kept.push(agent.clone());
            }
            Err(e) => {
                ctx.warn(&format!("{agent}'s worktree {} stays: {e}", found.path.display()));
                kept.push(agent.clone());
            }
        }
    }
    kept
}

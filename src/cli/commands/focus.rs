//! `git mas focus publish|list|show|release|status`: the focus board.

use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::focus_board::frame_and_board;
use crate::cli::json::focus::{FocusListOut, FocusPruneOut, FocusPublishOut, FocusReleaseOut, FocusStatusOut};
use crate::cli::output::JsonFlag;
use crate::cli::{Done, Outcome};
use git_mas::attention::board::{BoardEntry, FocusPayload, FocusState, Liveness, OnFrame, focus_state, on_frame};
use git_mas::attention::claims;
use git_mas::attention::focus_store;
use git_mas::attention::frame::FrameError;
use git_mas::attention::select::select_targets;
use std::fmt::Write as _;

/// Publish, inspect and release foci: what each agent is working on, chosen from the current frame.
#[derive(Debug, clap::Subcommand)]
pub enum FocusCommand {
    Publish(PublishArgs),
    List(ListArgs),
    Show(ShowArgs),
    Release(ReleaseArgs),
    Status(StatusArgs),
    Prune(PruneArgs),
}

/// Publish your focus: up to 8 targets from the current frame's snapshot.
///
/// Targets are exact ids (`src/lib.rs`, `src/ledger/mod.rs#Ledger.reserve`) or globs over ids
/// (`src/pricing/*`, `**/*#Ledger.*`); --top K adds the snapshot's K highest targets. Whatever order
/// you give, the focus lists them in the snapshot's order (highest saliency first): the first is
/// your top target. The focus lapses after --ttl (default 30m) unless you publish again.
///
/// With --json: {agent, commit, expires_at, frame, seq, targets, ttl_secs}.
#[derive(Debug, clap::Args)]
pub struct PublishArgs {
    /// Target ids or globs.
    #[arg(long, num_args = 1.., value_name = "ID|GLOB")]
    pub targets: Vec<String>,
    /// Add the snapshot's K highest targets.
    #[arg(long, value_name = "K")]
    pub top: Option<usize>,
    /// How long the focus holds (e.g. 90s, 30m, 2h; at most 24h; must be positive).
    // Hyphen values are accepted so that `--ttl -5m` reaches the parser and is refused as a
    // negative TTL rather than read as an unknown flag `-5`.
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_TTL, allow_hyphen_values = true, value_parser = parse_ttl)]
    pub ttl: humantime::Duration,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// How long a focus holds unless told.
pub const DEFAULT_TTL: &str = "30m";

/// Parses `--ttl`: a humantime duration greater than zero (the 24 h cap is the board's rule,
/// checked where the lease is validated).
pub fn parse_ttl(text: &str) -> Result<humantime::Duration, String> {
    let positive = "a TTL must be positive: give a duration such as 90s, 30m or 2h";
    if let Some(rest) = text.trim().strip_prefix('-') {
        return Err(format!("{positive} (got -{rest})"));
    }
    let ttl: humantime::Duration =
        text.parse().map_err(|e| format!("{text:?} is not a duration ({e}); e.g. 90s, 30m, 2h"))?;
    if ttl.as_secs() == 0 {
        return Err(format!("{positive} (got {text})"));
    }
    Ok(ttl)
}

/// List the board: every agent's focus, whether it is live, and which records were rejected.
///
/// With --json: {board: {entries: [{focus, liveness, expires_at, commit}], rejected: [{agent,
/// commit, reason, …}]}, frame}.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Show one agent's focus (default: yours).
///
/// With --json: its board entry {focus: {agent, frame, seq, targets}, liveness, expires_at, commit}.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The agent.
    pub agent: Option<String>,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Release your focus: it holds nothing from now on. With --targets, release only those targets
/// (a file path releases every target in that file) and keep holding the rest, until the same
/// time as before.
///
/// In team mode a session's shell acts as that session: a plain `focus release` there frees the
/// session's own claims. Another live session's claims (`--agent alice.claude-3f2a9c1b`) are
/// its uncommitted work's only protection: releasing them is refused from inside any host
/// session's shell, and elsewhere needs --force (for a session that is gone); the holder is told
/// at its next call.
///
/// With --json: {agent, released, seq, kept: [the targets still held]}.
#[derive(Debug, clap::Args)]
pub struct ReleaseArgs {
    /// Release only these targets or files.
    #[arg(long, num_args = 1.., value_name = "TARGET")]
    pub targets: Vec<String>,
    /// Release another live session's claims (not from a session's own shell).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Is your focus live and on the current frame? Exits 0 when it is, 7 when it is not (no focus,
/// released, expired, or on an old frame: the gate would fail closed).
///
/// With --json: {agent, focus (its board entry or null), frame, state: none | released | expired |
/// old-frame | live}.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Delete the focus chains of session agents (`alice.claude-3f2a9c1b`: team mode's sessions,
/// not on the roster themselves) whose session ended — released or expired — longer ago than
/// --older-than. Team mode's session-end hook runs this with `mas.sessionRetention` (default 7d).
/// A session's records in a run's chains or a landing's trailers stay.
///
/// With --json: {deleted: [refs]}.
#[derive(Debug, clap::Args)]
pub struct PruneArgs {
    /// How long ago the session must have ended (default: `mas.sessionRetention`, else 7d).
    #[arg(long, value_name = "DURATION")]
    pub older_than: Option<humantime::Duration>,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs a `focus` subcommand.
pub fn run(ctx: &mut Context, cmd: FocusCommand) -> Result<Outcome, CliError> {
    match cmd {
        FocusCommand::Publish(a) => publish(ctx, a),
        FocusCommand::List(a) => list(ctx, a),
        FocusCommand::Show(a) => show(ctx, a),
        FocusCommand::Release(a) => release(ctx, a),
        FocusCommand::Status(a) => status(ctx, a),
        FocusCommand::Prune(a) => prune(ctx, a),
    }
}

fn publish(ctx: &mut Context, args: PublishArgs) -> Result<Outcome, CliError> {
    let done = focus_publish(ctx, &args)?;
    ctx.ui().emit(args.output, &done.value, |o| {
        let mut text = format!("{} #{} on frame {}\n", o.agent, o.seq, &o.frame[..12]);
        for (i, t) in o.targets.iter().enumerate() {
            let _ = writeln!(text, "  {}{t}", if i == 0 { "top  " } else { "     " });
        }
        text
    })?;
    if !args.output.json {
        ctx.status(&format!(
            "holds for {}; publish again to renew",
            humantime::format_duration(std::time::Duration::from_secs(done.value.ttl_secs))
        ));
    }
    Ok(done.outcome)
}

/// Publishes the caller's focus on the current frame.
pub fn focus_publish(ctx: &Context, args: &PublishArgs) -> Result<Done<FocusPublishOut>, CliError> {
    let caller = ctx.caller()?;
    if args.targets.is_empty() && args.top.is_none() {
        return Err(CliError::usage("name targets with --targets, or take the top ones with --top K"));
    }
    let (frame, board) = frame_and_board(ctx)?;
    let frame = frame.ok_or_else(|| CliError::from(FrameError::NoFrame))?;
    let ids: Vec<&str> = frame.snapshot.targets.iter().map(|t| t.id.as_str()).collect();
    let targets = select_targets(&ids, &args.targets, args.top)?;
    let ttl_secs = args.ttl.as_secs();
    let payload = FocusPayload {
        frame: frame.hash.clone(),
        targets,
        ttl_secs,
        published_at: focus_store::now_secs(),
        claims: false,
        run: focus_store::worktree_run(ctx.store()?),
    };
    let store = ctx.store()?;
    let appended = focus_store::publish_focus(store, &caller.name, &caller.key, &payload, &frame, &board)?;
    Ok(Done::ok(FocusPublishOut {
        agent: caller.name,
        commit: appended.commit.to_string(),
        expires_at: payload.published_at + ttl_secs,
        frame: payload.frame,
        seq: appended.seq,
        targets: payload.targets,
        ttl_secs,
    }))
}

fn describe(e: &BoardEntry, current: Option<&str>, now: u64) -> String {
    let on = match on_frame(&e.focus.frame, current) {
        OnFrame::Current => "current frame".to_string(),
        OnFrame::NoFrame => "no frame".to_string(),
        OnFrame::Old(frame) => format!("OLD frame {}", &frame[..frame.len().min(12)]),
    };
    match e.liveness {
        Liveness::Live => format!(
            "live, {} left, {on}",
            humantime::format_duration(std::time::Duration::from_secs(e.expires_at.saturating_sub(now)))
        ),
        Liveness::Expired => format!("expired, {on}"),
        Liveness::Released => match &e.ended_with {
            Some(end) => format!("released: run {} {}", end.run, end.outcome.as_str()),
            None => "released".to_string(),
        },
    }
}

fn list(ctx: &mut Context, args: ListArgs) -> Result<Outcome, CliError> {
    let done = focus_list(ctx, &args)?;
    if !args.output.json && done.value.board.entries.is_empty() {
        ctx.status("no foci published");
    }
    let now = focus_store::now_secs();
    ctx.ui().emit(args.output, &done.value, |o| {
        let mut text = String::new();
        for e in &o.board.entries {
            let _ = writeln!(
                text,
                "{:<16} {:<40} {}",
                e.focus.agent,
                describe(e, o.frame.as_deref(), now),
                e.focus.targets.join(" ")
            );
        }
        for r in &o.board.rejected {
            let (reason, commit) = (r.rejection.reason().to_uppercase(), &r.commit[..r.commit.len().min(12)]);
            let _ = writeln!(text, "{:<16} REJECTED {reason} ({commit})", r.agent);
        }
        text
    })?;
    Ok(done.outcome)
}

/// The verified board on the current frame.
pub fn focus_list(ctx: &Context, _args: &ListArgs) -> Result<Done<FocusListOut>, CliError> {
    let (frame, board) = frame_and_board(ctx)?;
    Ok(Done::ok(FocusListOut { frame: frame.map(|f| f.hash), board }))
}

fn show(ctx: &mut Context, args: ShowArgs) -> Result<Outcome, CliError> {
    let agent = match args.agent {
        Some(a) => a,
        None => ctx.caller_name()?.0,
    };
    let (frame, board) = frame_and_board(ctx)?;
    let entry = board.entry(&agent).ok_or_else(|| CliError::user(format!("{agent} has published no focus")))?;
    let current = frame.as_ref().map(|f| f.hash.as_str());
    ctx.ui().emit(args.output, entry, |e| {
        let mut text = format!("{agent}: {}\n", describe(e, current, focus_store::now_secs()));
        for t in &e.focus.targets {
            let _ = writeln!(text, "  {t}");
        }
        text
    })?;
    Ok(Outcome::Ok)
}

fn release(ctx: &mut Context, args: ReleaseArgs) -> Result<Outcome, CliError> {
    let done = focus_release(ctx, &args)?;
    ctx.ui().emit(args.output, &done.value, |o| format!("{} released its focus\n", o.agent))?;
    Ok(done.outcome)
}

/// Releases the caller's focus.
pub fn focus_release(ctx: &Context, args: &ReleaseArgs) -> Result<Done<FocusReleaseOut>, CliError> {
    let caller = ctx.caller()?;
    let store = ctx.store()?;
    let now = focus_store::now_secs();
    let told = another_sessions(ctx, &caller.name, args.force, now)?;
    if !args.targets.is_empty() {
        let roster = store.roster()?;
        let board = focus_store::load_board(store, &roster, now, None, &git_mas::devrun::ledger::Ledger::new(store))?;
        let live = board.entry(&caller.name).filter(|e| e.liveness == Liveness::Live);
        let named = |t: &str| args.targets.iter().any(|n| n == t || n == claims::file_of(t));
        if let Some(e) = live.filter(|e| e.focus.targets.iter().any(|t| !named(t))) {
            let kept: Vec<String> = e.focus.targets.iter().filter(|t| !named(t)).cloned().collect();
            let appended = focus_store::keep_only(store, &caller.name, &caller.key, e, kept.clone(), now)?
                .ok_or_else(|| CliError::internal("the release wrote nothing"))?;
            if let Some(text) = &told {
                let _ = git_mas::attention::shell_guard::save_notice(store, &caller.name, text);
            }
            return Ok(Done::ok(FocusReleaseOut { agent: caller.name, released: true, seq: appended.seq, kept }));
        }
    }
    let appended = focus_store::release_focus(store, &caller.name, &caller.key, now)?
        .ok_or_else(|| CliError::internal("the release wrote nothing"))?;
    if let Some(text) = told {
        let _ = git_mas::attention::shell_guard::save_notice(store, &caller.name, &text);
    }
    Ok(Done::ok(FocusReleaseOut { agent: caller.name, released: true, seq: appended.seq, kept: Vec::new() }))
}

/// Whether releasing `agent`'s claims is another live session's release, and so refused: from
/// inside a host session's shell always, elsewhere without `force`. With `force`, the text the
/// holder is told at its next call.
fn another_sessions(ctx: &Context, agent: &str, force: bool, now: u64) -> Result<Option<String>, CliError> {
    let store = ctx.store()?;
    if git_mas::identity::principal_of(agent).is_none() {
        return Ok(None);
    }
    let me = ctx.session_caller()?;
    if me.as_deref() == Some(agent) {
        return Ok(None);
    }
    let roster = store.roster()?;
    let board = focus_store::load_board(store, &roster, now, None, &git_mas::devrun::ledger::Ledger::new(store))?;
    let Some(entry) = board.entry(agent).filter(|e| e.liveness == Liveness::Live) else { return Ok(None) };
    let held = entry.focus.targets.iter().map(|t| claims::file_of(t).to_string()).collect::<Vec<_>>().join(", ");
    match me {
        Some(me) => Err(CliError::user(format!(
            "{me} cannot release the claims of {agent}, another live session ({held}): they keep its uncommitted \
             work from being overwritten"
        ))
        .hinted(format!(
            "ask {agent} through the team's channel, or pick other work; its claims lapse on their own when it \
             stops editing, and end with its session"
        ))),
        None if !force => Err(CliError::user(format!(
            "{agent} is a live session holding {held}: releasing its claims lets others overwrite its uncommitted work"
        ))
        .hinted("if that session is gone, release them with --force (it is told at its next call)")),
        None => Ok(Some(format!(
            "git mas: your claims on {held} were released by `git mas focus release --force` outside your session; \
             edit them again to claim them, if no one else has."
        ))),
    }
}

fn status(ctx: &mut Context, args: StatusArgs) -> Result<Outcome, CliError> {
    let done = focus_status(ctx, &args)?;
    ctx.ui().emit(args.output, &done.value, |o| {
        let hint = match o.state {
            FocusState::Live => "",
            FocusState::OldFrame => " — a new frame was published; republish with `git mas focus publish`",
            FocusState::None | FocusState::Released | FocusState::Expired => {
                " — publish one with `git mas focus publish`"
            }
        };
        format!("{}: {}{hint}\n", o.agent, o.state.as_str())
    })?;
    Ok(done.outcome)
}

/// The caller's focus: live on the current frame (ok), or not (fail-closed, as the gate would).
pub fn focus_status(ctx: &Context, _args: &StatusArgs) -> Result<Done<FocusStatusOut>, CliError> {
    let (agent, _) = ctx.caller_name()?;
    let (frame, board) = frame_and_board(ctx)?;
    let current = frame.map(|f| f.hash);
    let state = focus_state(board.entry(&agent), current.as_deref());
    let out = FocusStatusOut { focus: board.entry(&agent).cloned(), agent, frame: current, state };
    Ok(Done::ended(out, if state == FocusState::Live { Outcome::Ok } else { Outcome::FailClosed }))
}

fn prune(ctx: &mut Context, args: PruneArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let retention = match args.older_than {
        Some(d) => d.as_secs(),
        // Its one failure, a `mas.sessionRetention` that is not a duration, has no source: the
        // typed error says exactly what its text said.
        None => git_mas::attention::team::retention(store).map_err(|e| CliError::new(Kind::User, e))?,
    };
    let roster = store.roster()?;
    let deleted = focus_store::prune_sessions(
        store,
        &roster,
        focus_store::now_secs(),
        retention,
        &git_mas::devrun::ledger::Ledger::new(store),
    )
    .map_err(|e| match e {
        // The board's own failure, with the kind and hints every command gives a store error.
        focus_store::PruneError::Store(e) => CliError::from(e),
        e => CliError::new(Kind::User, e),
    })?;
    let out = FocusPruneOut { deleted };
    ctx.ui().emit(args.output, &out, |o| {
        if o.deleted.is_empty() {
            "no ended session to prune\n".to_string()
        } else {
            o.deleted.iter().map(|r| format!("deleted {r}\n")).collect()
        }
    })?;
    Ok(Outcome::Ok)
}

//! `git mas focus publish|list|show|release|status`: the focus board.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::exit;
use crate::cli::inputs::frame_error;
use crate::cli::output::print_json;
use git_mas::attention::board::{Board, BoardEntry, FocusPayload, Liveness};
use git_mas::attention::focus_store;
use git_mas::attention::frame::{self, Frame, FrameError};
use std::process::ExitCode;

/// Publish, inspect and release foci: what each agent is working on, chosen from the current frame.
#[derive(Debug, clap::Subcommand)]
pub enum FocusCommand {
    Publish(PublishArgs),
    List(ListArgs),
    Show(ShowArgs),
    Release(ReleaseArgs),
    Status(StatusArgs),
}

/// Publish your focus: up to 8 targets from the current frame's snapshot.
///
/// Targets are exact ids (`src/lib.rs`, `src/ledger/mod.rs#Ledger.reserve`) or globs over ids
/// (`src/pricing/*`, `**#Ledger.*`); --top K adds the snapshot's K highest targets. Whatever order
/// you give, the focus lists them in the snapshot's order (highest saliency first): the first is
/// your top target. The focus lapses after --ttl (default 30m) unless you publish again.
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
    #[arg(long, value_name = "DURATION", default_value = "30m", allow_hyphen_values = true, value_parser = parse_ttl)]
    pub ttl: humantime::Duration,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Parses `--ttl`: a humantime duration greater than zero (the 24 h cap is the board's rule,
/// checked where the lease is validated).
fn parse_ttl(text: &str) -> Result<humantime::Duration, String> {
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
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Show one agent's focus (default: yours).
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The agent.
    pub agent: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Release your focus: it holds nothing from now on.
#[derive(Debug, clap::Args)]
pub struct ReleaseArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Is your focus live and on the current frame? Exits 0 when it is, 7 when it is not (no focus,
/// released, expired, or on an old frame: the gate would fail closed).
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs a `focus` subcommand.
pub fn run(ctx: &mut Context, cmd: FocusCommand) -> Result<ExitCode, CliError> {
    match cmd {
        FocusCommand::Publish(a) => publish(ctx, a),
        FocusCommand::List(a) => list(ctx, a),
        FocusCommand::Show(a) => show(ctx, a),
        FocusCommand::Release(a) => release(ctx, a),
        FocusCommand::Status(a) => status(ctx, a),
    }
}

/// The current frame and the board, as every focus command needs them.
pub(crate) fn frame_and_board(ctx: &mut Context) -> Result<(Option<Frame>, Board), CliError> {
    let store = ctx.store()?;
    let roster = store.roster()?;
    let frame = frame::current_frame(store).map_err(frame_error)?;
    let board = focus_store::load_board(store, &roster, focus_store::now_secs(), frame.as_ref())?;
    ctx.warn_all(&roster.warnings);
    Ok((frame, board))
}

fn select_targets(frame: &Frame, patterns: &[String], top: Option<usize>) -> Result<Vec<String>, CliError> {
    let ids: Vec<&str> = frame.snapshot.targets.iter().map(|t| t.id.as_str()).collect();
    let mut chosen = std::collections::BTreeSet::new();
    for p in patterns {
        if ids.contains(&p.as_str()) {
            chosen.insert(p.clone());
            continue;
        }
        if !git_mas::attention::board::target_path_ok(p) && !p.contains('*') {
            return Err(CliError::user(format!("target {p:?} escapes the repository")));
        }
        let glob = globset::GlobBuilder::new(p)
            .literal_separator(true)
            .build()
            .map_err(|e| CliError::usage(format!("{p:?} is neither a target nor a valid glob: {e}")))?
            .compile_matcher();
        let matched: Vec<&str> = ids.iter().copied().filter(|id| glob.is_match(id)).collect();
        if matched.is_empty() {
            return Err(CliError::user(format!("target {p:?} is not in the current frame's snapshot"))
                .hinted("list the frame's targets with `git mas frame --top 50`"));
        }
        chosen.extend(matched.into_iter().map(String::from));
    }
    if let Some(k) = top {
        chosen.extend(ids.iter().take(k).map(|s| s.to_string()));
    }
    // The snapshot's order, whatever order they were given in.
    Ok(ids.iter().filter(|id| chosen.contains(**id)).map(|s| s.to_string()).collect())
}

fn publish(ctx: &mut Context, args: PublishArgs) -> Result<ExitCode, CliError> {
    let caller = ctx.caller()?;
    if args.targets.is_empty() && args.top.is_none() {
        return Err(CliError::usage("name targets with --targets, or take the top ones with --top K"));
    }
    let (frame, board) = frame_and_board(ctx)?;
    let frame = frame.ok_or_else(|| frame_error(FrameError::NoFrame))?;
    let targets = select_targets(&frame, &args.targets, args.top)?;
    let ttl_secs = args.ttl.as_secs();
    let payload = FocusPayload { frame: frame.hash.clone(), targets, ttl_secs, published_at: focus_store::now_secs() };
    let store = ctx.store()?;
    let appended = focus_store::publish_focus(store, &caller.name, &caller.key, &payload, &frame, &board)?;
    if args.json {
        print_json(&serde_json::json!({
            "agent": caller.name, "frame": payload.frame, "seq": appended.seq, "targets": payload.targets,
            "ttl_secs": ttl_secs, "expires_at": payload.published_at + ttl_secs, "commit": appended.commit.to_string(),
        }))?;
    } else {
        println!("{} #{} on frame {}", caller.name, appended.seq, &payload.frame[..12]);
        for (i, t) in payload.targets.iter().enumerate() {
            println!("  {}{t}", if i == 0 { "top  " } else { "     " });
        }
        ctx.status(&format!(
            "holds for {}; publish again to renew",
            humantime::format_duration(std::time::Duration::from_secs(ttl_secs))
        ));
    }
    Ok(ExitCode::SUCCESS)
}

fn describe(e: &BoardEntry, current: Option<&str>, now: u64) -> String {
    let on = match current {
        Some(h) if h == e.focus.frame => "current frame".to_string(),
        _ if e.focus.frame.is_empty() => "no frame".to_string(),
        _ => format!("OLD frame {}", &e.focus.frame[..e.focus.frame.len().min(12)]),
    };
    match e.liveness {
        Liveness::Live => format!(
            "live, {} left, {on}",
            humantime::format_duration(std::time::Duration::from_secs(e.expires_at.saturating_sub(now)))
        ),
        Liveness::Expired => format!("expired, {on}"),
        Liveness::Released => "released".to_string(),
    }
}

fn list(ctx: &mut Context, args: ListArgs) -> Result<ExitCode, CliError> {
    let (frame, board) = frame_and_board(ctx)?;
    if args.json {
        print_json(&serde_json::json!({"frame": frame.as_ref().map(|f| f.hash.clone()), "board": board}))?;
        return Ok(ExitCode::SUCCESS);
    }
    let now = focus_store::now_secs();
    let current = frame.as_ref().map(|f| f.hash.as_str());
    if board.entries.is_empty() {
        ctx.status("no foci published");
    }
    for e in &board.entries {
        println!("{:<16} {:<40} {}", e.focus.agent, describe(e, current, now), e.focus.targets.join(" "));
    }
    for r in &board.rejected {
        let reason = serde_json::to_value(&r.rejection)
            .ok()
            .and_then(|v| v["reason"].as_str().map(String::from))
            .unwrap_or_default();
        println!("{:<16} REJECTED {} ({})", r.agent, reason.to_uppercase(), &r.commit[..r.commit.len().min(12)]);
    }
    Ok(ExitCode::SUCCESS)
}

fn show(ctx: &mut Context, args: ShowArgs) -> Result<ExitCode, CliError> {
    let agent = match args.agent {
        Some(a) => a,
        None => ctx.caller_name()?.0,
    };
    let (frame, board) = frame_and_board(ctx)?;
    let entry = board.entry(&agent).ok_or_else(|| CliError::user(format!("{agent} has published no focus")))?;
    if args.json {
        print_json(entry)?;
    } else {
        println!("{agent}: {}", describe(entry, frame.as_ref().map(|f| f.hash.as_str()), focus_store::now_secs()));
        for t in &entry.focus.targets {
            println!("  {t}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn release(ctx: &mut Context, args: ReleaseArgs) -> Result<ExitCode, CliError> {
    let caller = ctx.caller()?;
    let store = ctx.store()?;
    let appended = focus_store::release_focus(store, &caller.name, &caller.key, focus_store::now_secs())?
        .ok_or_else(|| CliError::internal("the release wrote nothing"))?;
    if args.json {
        print_json(&serde_json::json!({"agent": caller.name, "released": true, "seq": appended.seq}))?;
    } else {
        println!("{} released its focus", caller.name);
    }
    Ok(ExitCode::SUCCESS)
}

fn status(ctx: &mut Context, args: StatusArgs) -> Result<ExitCode, CliError> {
    let (agent, _) = ctx.caller_name()?;
    let (frame, board) = frame_and_board(ctx)?;
    let current = frame.as_ref().map(|f| f.hash.clone());
    let entry = board.entry(&agent);
    let state = match entry {
        None => "none",
        Some(e) if e.liveness == Liveness::Released => "released",
        Some(e) if e.liveness == Liveness::Expired => "expired",
        Some(e) if Some(&e.focus.frame) != current.as_ref() => "old-frame",
        Some(_) => "live",
    };
    if args.json {
        print_json(&serde_json::json!({"agent": agent, "state": state, "frame": current, "focus": entry}))?;
    } else {
        let hint = match state {
            "live" => "",
            "old-frame" => " — a new frame was published; republish with `git mas focus publish`",
            _ => " — publish one with `git mas focus publish`",
        };
        println!("{agent}: {state}{hint}");
    }
    Ok(ExitCode::from(if state == "live" { exit::OK } else { exit::FAIL_CLOSED }))
}

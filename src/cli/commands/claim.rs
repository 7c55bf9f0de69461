//! `git mas claim <glob>…` and `git mas release [<glob>…]`: lanes, leases on path globs taken
//! before any edit (`git_mas::attention::lanes`).

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::json::claim::{LaneOut, LanesOut, OverlapOut};
use crate::cli::output::JsonFlag;
use git_mas::attention::focus_store::now_secs;
use git_mas::attention::lanes::{self, Taken};

/// Take a lane: a lease on a glob of paths, before any edit, refused where another holds it.
///
/// A lane is for a session (run from its shell), a person (from a terminal, as `mas.agent`) or an
/// agent about to be launched (`--agent <name>`). While it lives, every other session's edit of a
/// path inside it is refused by the hooks, naming the lane and its holder, and the holder's own
/// edits inside it need no claim. Globs are git-style, relative to the top of the repository:
/// `*` stays within one folder, `**` crosses folders (quote them from the shell).
///
/// Refused (exit 6, nothing written) when a glob overlaps another agent's live lane or live claim
/// anywhere this clone knows of — and with a remote, the exchange carries every clone's claims
/// and lanes here within seconds. Two globs overlap when a tracked file, a claimed file or the
/// other glob's own text matches both. Taking lanes again renews the ones held.
///
/// With --json: {agent, lanes: [{glob, expires_at}], overlaps: [{glob, holder, what, example}]}.
#[derive(Debug, clap::Args)]
pub struct ClaimArgs {
    /// The globs, such as 'src/parser/**'.
    #[arg(required = true, value_name = "GLOB")]
    pub globs: Vec<String>,
    /// How long the lane lives (such as 4h, 90m; at most 7d).
    #[arg(long, default_value = "4h", value_parser = parse_ttl)]
    pub ttl: u64,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Release lanes taken with `git mas claim`: the globs named, or every one with --all.
///
/// With --json: {agent, lanes: [{glob, expires_at}] (those still held), overlaps: []}.
#[derive(Debug, clap::Args)]
pub struct ReleaseArgs {
    /// The globs to release, as they were claimed.
    #[arg(value_name = "GLOB", required_unless_present = "all")]
    pub globs: Vec<String>,
    /// Release every lane the caller holds.
    #[arg(long, conflicts_with = "globs")]
    pub all: bool,
    #[command(flatten)]
    pub output: JsonFlag,
}

fn parse_ttl(text: &str) -> Result<u64, String> {
    let secs =
        humantime::parse_duration(text).map_err(|e| format!("{text:?} is not a duration (such as 4h): {e}"))?.as_secs();
    if secs == 0 || secs > lanes::MAX_LANE_TTL_SECS {
        return Err(format!("{text:?} is outside 1s..7d"));
    }
    Ok(secs)
}

fn lanes_out(held: Vec<(String, u64)>) -> Vec<LaneOut> {
    held.into_iter().map(|(glob, expires_at)| LaneOut { glob, expires_at }).collect()
}

/// Runs `claim`.
pub fn claim(ctx: &mut Context, args: ClaimArgs) -> Result<Outcome, CliError> {
    for g in &args.globs {
        if let Some(why) = lanes::bad_glob(g) {
            return Err(CliError::usage(format!("{g:?} is not a lane: {why}")));
        }
    }
    let caller = ctx.caller()?;
    let store = ctx.store()?;
    if !git_mas::attention::team::enabled(store) {
        ctx.warn("team mode is off here (`git mas init --team`): the lane is recorded, but only team mode's hooks and commit gate keep others out of it");
    }
    let runs = git_mas::devrun::ledger::Ledger::new(store);
    let taken = lanes::take(store, &caller.name, &caller.key, &[], &args.globs, args.ttl, now_secs(), &runs)
        .map_err(git_mas::attention::team_gate::TeamGateError::from)?;
    let (out, outcome) = match taken {
        Taken::Held(held) => {
            (LanesOut { agent: caller.name.clone(), lanes: lanes_out(held), overlaps: Vec::new() }, Outcome::Ok)
        }
        Taken::Overlapping(found) => {
            let overlaps = found
                .into_iter()
                .map(|o| OverlapOut { glob: o.glob, holder: o.holder, what: o.what, example: o.example })
                .collect();
            (LanesOut { agent: caller.name.clone(), lanes: Vec::new(), overlaps }, Outcome::Blocked)
        }
    };
    if args.output.json {
        ctx.ui().json(&out)?;
    } else if outcome == Outcome::Ok {
        for l in &out.lanes {
            ctx.ui().out(&format!("{}: lane {} until {}\n", out.agent, l.glob, l.expires_at))?;
        }
    } else {
        for o in &out.overlaps {
            ctx.warn(&format!("{} overlaps {}: {} (both hold {})", o.glob, o.holder, o.what, o.example));
        }
        ctx.ui().hint("nothing was taken: narrow the glob, or ask the holder to release (`git mas release <glob>`)");
    }
    Ok(outcome)
}

/// Runs `release`.
pub fn release(ctx: &mut Context, args: ReleaseArgs) -> Result<Outcome, CliError> {
    let caller = ctx.caller()?;
    let store = ctx.store()?;
    let globs = (!args.all).then_some(args.globs.as_slice());
    let kept = lanes::release(store, &caller.name, &caller.key, globs, now_secs())?;
    let out = LanesOut { agent: caller.name.clone(), lanes: lanes_out(kept), overlaps: Vec::new() };
    if args.output.json {
        ctx.ui().json(&out)?;
    } else {
        ctx.status(&format!("{}: {} lane(s) still held", out.agent, out.lanes.len()));
    }
    Ok(Outcome::Ok)
}

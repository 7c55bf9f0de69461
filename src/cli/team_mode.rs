//! Team mode as the hooks meet it: who a hook call is (a session agent unless an identity is
//! pinned), and the answer to its edit ([`git_mas::attention::team`]).

use super::context::{Context, IdentitySource};
use super::error::CliError;
use super::inputs::{InputArgs, read_inputs};
use git_mas::attention::edit_gate;
use git_mas::attention::focus_store::now_secs;
use git_mas::attention::frame;
use git_mas::attention::gate::{Touched, Verdict};
use git_mas::attention::gate_io::FileId;
use git_mas::attention::git_hooks::Mode;
use git_mas::attention::team::{self, TeamEdit, TeamError};
use git_mas::hosts::Host;
use git_mas::hosts::reply::Answer;
use git_mas::identity::{AgentKey, session_agent};

/// Who a hook call of `host` is, in team mode. An identity pinned for one session wins: `--agent`
/// or `GIT_MAS_AGENT`, or `mas.agent` in this worktree's own config (a worktree dedicated to one
/// agent, as `coordinate` and `worktree add` set it). Otherwise a call that carries a session id
/// is that session's agent, `<principal>.<host>-<8 hex>` ([`session_agent`]); one without is the
/// principal itself.
pub fn edit_caller(ctx: &Context, host: Host, session: Option<&str>) -> Result<String, CliError> {
    if let Ok((name, IdentitySource::FlagOrEnv)) = ctx.caller_name() {
        return Ok(name);
    }
    let store = ctx.store()?;
    if let Some(name) = store.worktree_config_string("mas.agent").filter(|n| !n.is_empty()) {
        git_mas::identity::validate_name(&name)?;
        return Ok(name);
    }
    let principal = principal(ctx)?;
    match session.filter(|s| !s.is_empty()) {
        Some(id) => Ok(session_agent(&principal, host.session_name(), id)?),
        None => Ok(principal),
    }
}

/// The principal whose key signs for this machine's sessions: `mas.agent` from the shared
/// config, else the first roster entry (by name) whose private key this machine holds.
pub fn principal(ctx: &Context) -> Result<String, CliError> {
    let store = ctx.store()?;
    if let Some(name) = store.config_string("mas.agent").filter(|n| !n.is_empty()) {
        git_mas::identity::validate_name(&name)?;
        return Ok(name);
    }
    let roster = store.roster()?;
    roster
        .entries()
        .find(|e| AgentKey::load(&e.name).is_ok_and(|k| k.did() == e.did))
        .map(|e| e.name.clone())
        .ok_or_else(|| {
            CliError::user("no roster member's key is on this machine, so no session can sign its claims")
                .hinted("run `git mas init --team` here (it creates this machine's member), then retry")
        })
}

/// The answer to `caller`'s edit of `touched` in team mode.
pub fn edit_answer(ctx: &Context, caller: &str, touched: Vec<Touched>, linked: &[FileId], mode: Mode) -> Answer {
    match decide(ctx, caller, touched, linked) {
        Ok(edit) => answer(caller, edit, mode),
        Err(e) => edit_gate::answer(
            &Verdict::FailClosed { reason: e.render(false).trim_end().to_string(), remedy: "retry the edit".into() },
            mode,
        ),
    }
}

fn decide(ctx: &Context, caller: &str, touched: Vec<Touched>, linked: &[FileId]) -> Result<TeamEdit, CliError> {
    let store = ctx.store()?;
    let lease = team::lease(store).map_err(team_error)?;
    let mut key = || -> Result<AgentKey, TeamError> {
        let c = ctx.caller_as(caller.to_string()).map_err(|e| TeamError::Caller(e.render(false).trim_end().into()))?;
        Ok(c.key)
    };
    let mut publish_frame = |key: &AgentKey| -> Result<(), TeamError> {
        let files = read_inputs(store, &InputArgs::default())
            .map_err(|e| TeamError::Caller(e.render(false).trim_end().into()))?;
        let (snapshot, view) = frame::snapshot_now(store, &files)?;
        frame::publish(store, caller, key, &snapshot, &view, &files)?;
        Ok(())
    };
    team::edit(store, caller, touched, linked, lease, now_secs(), &mut key, &mut publish_frame).map_err(team_error)
}

fn team_error(e: TeamError) -> CliError {
    CliError::user(e.to_string())
}

/// The host's answer for a team-mode decision.
fn answer(caller: &str, edit: TeamEdit, mode: Mode) -> Answer {
    match edit {
        TeamEdit::Allowed { claimed, dropped, published_frame, lapsed, frame, .. } => {
            let mut notes = Vec::new();
            if published_frame {
                notes.push(format!("published frame {}", &frame[..frame.len().min(12)]));
            }
            if !lapsed.is_empty() {
                notes.push(format!("{caller}'s claim on {} had expired; claimed again", lapsed.join(", ")));
            }
            if !claimed.is_empty() {
                notes.push(format!("{caller} claims {}", claimed.join(", ")));
            }
            if !dropped.is_empty() {
                notes.push(format!("{caller} no longer claims {} (gone from the working tree)", dropped.join(", ")));
            }
            Answer::Allow { note: (!notes.is_empty()).then(|| notes.join("; ")) }
        }
        TeamEdit::Blocked { blocks, lapsed } => match edit_gate::answer(&Verdict::Block { blocks }, mode) {
            Answer::Deny { reason } if !lapsed.is_empty() => Answer::Deny {
                reason: format!(
                    "{caller}'s claim on {} expired (no edit within its time to live), and another agent claimed it \
                     since.\n{reason}",
                    lapsed.join(", ")
                ),
            },
            other => other,
        },
        TeamEdit::OverCap { held, wanted } => refuse(
            mode,
            format!(
                "git mas gate: {caller} already claims {} files ({}), the most one agent holds; this edit would \
                 claim {} too. Remedy: finish with some of them and release those: `git mas --agent {caller} focus \
                 release --targets {}` (or commit and end the session), then retry.",
                held.len(),
                held.join(", "),
                wanted.join(", "),
                held.first().map(String::as_str).unwrap_or("PATH"),
            ),
        ),
        TeamEdit::Flood => refuse(
            mode,
            format!(
                "git mas gate: the board already holds {} live agents, so {caller} cannot claim a file. Remedy: wait \
                 until a session ends or its claims lapse, then retry.",
                git_mas::attention::rule::MAX_BOARD_AGENTS
            ),
        ),
    }
}

fn refuse(mode: Mode, text: String) -> Answer {
    match mode {
        Mode::Off => Answer::Allow { note: None },
        Mode::Warn => Answer::Warn { message: format!("{text}\n(mas.gate is warn: the edit goes ahead)") },
        Mode::Enforce => Answer::Deny { reason: text },
    }
}

//! Team mode at the hooks: the answer to a session's edit and shell call, its post-tool and
//! session-end hooks, and the commit gate's verdict by team mode's rule. The claims themselves are
//! [`team`]'s; this module turns its decisions into the answers the hosts get, keeps the files other
//! sessions hold across a shell call ([`shell_guard`], [`held_guard`]), and tells each agent what
//! was done to the files it holds.
//!
//! A failure inside a decision never ends the hook: it is a refusal that fails closed, naming the
//! failure and its remedy (a stale lock's is `git mas doctor --fix`), in the gate's mode
//! ([`edit_gate::under`]).

use super::board::{Board, Liveness};
use super::caller::{self, Ask, CallerError};
use super::denials::{self, Denial};
use super::edit_gate;
use super::focus_store::{self, now_secs};
use super::frame;
use super::gate::{Block, Touched, Verdict};
use super::gate_io::{FileId, symbol_files};
use super::git_hooks::Mode;
use super::held_guard::{self, Moment};
use super::run_end::RunLedger;
use super::team::{self, TeamEdit, TeamError};
use super::{ancestry, claims, lost, shell_git, shell_guard, touched};
use crate::hosts::payload::{self, Payload, PayloadError};
use crate::hosts::reply::{self, Answer, Reply};
use crate::hosts::{Env, Host};
use crate::store::{Store, StoreError};
use std::collections::BTreeMap;
use std::path::Path;

/// Why a team-mode hook could not do its work.
#[derive(Debug, thiserror::Error)]
pub enum TeamGateError {
    /// The caller could not be named or given its key.
    #[error(transparent)]
    Caller(#[from] CallerError),
    /// Team mode could not decide.
    #[error(transparent)]
    Team(#[from] TeamError),
    /// The board or the roster could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The hook's payload could not be read.
    #[error(transparent)]
    Payload(#[from] PayloadError),
    /// The files other sessions hold could not be checked.
    #[error("checking the files other sessions hold failed")]
    Guard(#[source] std::io::Error),
    /// The session's processes could not be recorded.
    #[error("cannot record the session's processes: {0}")]
    Record(#[source] std::io::Error),
    /// The files other agents hold could not be kept before a shell call.
    #[error("cannot keep the files other agents hold: {0}")]
    Keep(#[source] std::io::Error),
    /// A notice for an agent could not be kept.
    #[error("cannot keep the notice for {agent}: {source}")]
    Notice {
        /// Whose notice.
        agent: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl TeamGateError {
    /// What the user can do about it, when there is something specific to say.
    pub fn remedy(&self) -> Option<String> {
        match self {
            TeamGateError::Caller(e) => e.remedy(),
            TeamGateError::Team(e) => e.remedy(),
            TeamGateError::Store(e) => e.remedy(),
            _ => None,
        }
    }
}

/// An error as a refusal says it: its message, then its causes not already in it (as the binary
/// prints an error, without the `Error:` heading).
pub fn said(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut shown = text.clone();
    let mut causes = Vec::new();
    let mut source = e.source();
    while let Some(cause) = source {
        let t = cause.to_string();
        if !shown.contains(&t) {
            causes.push(t.clone());
        }
        shown = t;
        source = cause.source();
    }
    match causes.as_slice() {
        [] => {}
        [one] => text.push_str(&format!("\nCaused by: {one}")),
        many => {
            text.push_str("\nCaused by:");
            for (i, c) in many.iter().enumerate() {
                text.push_str(&format!("\n{}: {c}", i + 1));
            }
        }
    }
    text
}

/// The answer to `caller`'s edit of `touched` (and `linked`, hard links to held files) in team
/// mode, with what the caller was not told yet about its earlier shell call (`settle`).
pub fn edit(
    store: &Store,
    caller: &str,
    touched: Vec<Touched>,
    linked: &[FileId],
    mode: Mode,
    runs: &dyn RunLedger,
) -> Answer {
    let (told, board) = settle(store, caller, runs);
    with_told(edit_now(store, caller, touched, linked, mode, board, runs), told)
}

fn edit_now(
    store: &Store,
    caller: &str,
    touched: Vec<Touched>,
    linked: &[FileId],
    mode: Mode,
    board: Option<Board>,
    runs: &dyn RunLedger,
) -> Answer {
    let paths: Vec<String> = touched.iter().map(|t| t.path.clone()).collect();
    let decided =
        team::lease(store).and_then(|lease| team::edit(store, caller, touched, linked, lease, now_secs(), board, runs));
    match decided {
        Ok(TeamEdit::Blocked { blocks, lapsed, mine }) => {
            let deadlock = note_denials(store, caller, &blocks, &mine);
            match answer(caller, TeamEdit::Blocked { blocks, lapsed, mine }, mode) {
                Answer::Deny { reason } if deadlock.is_some() => {
                    Answer::Deny { reason: format!("{reason}\n{}", deadlock.unwrap_or_default()) }
                }
                other => other,
            }
        }
        Ok(edit) => {
            if matches!(edit, TeamEdit::Allowed { .. }) {
                // The caller's own edit is not a shell call's change to undo.
                let _ = shell_guard::holder_edited(store, &paths);
                // A session's claims live with its host process ([`ancestry::gone`]).
                if crate::identity::principal_of(caller).is_some() {
                    let _ = ancestry::record_host(store, caller);
                }
            }
            answer(caller, edit, mode)
        }
        Err(e) => {
            // The error's own remedy when it has one (a stale lock: `git mas doctor --fix`), which
            // retrying alone would not cure.
            let remedy = e.remedy().unwrap_or_else(|| "retry the edit".into());
            edit_gate::answer(&Verdict::FailClosed { reason: said(&e), remedy }, mode)
        }
    }
}

/// Appends `caller`'s refusals to the denial log (`git mas status` reads who waits on whom), and
/// says so when a holder is itself waiting on a file the caller holds: a deadlock, which neither
/// ends by waiting.
fn note_denials(store: &Store, caller: &str, blocks: &[Block], mine: &[String]) -> Option<String> {
    let now = now_secs();
    let refused: Vec<Denial> = blocks
        .iter()
        .map(|b| Denial {
            at: now,
            agent: caller.to_string(),
            holder: b.holder.clone(),
            file: claims::file_of(&b.target).to_string(),
        })
        .collect();
    let log = if mine.is_empty() {
        Vec::new()
    } else {
        let holders: Vec<&str> = refused.iter().map(|r| r.holder.as_str()).collect();
        denials::refusals_of(store.common_dir(), &holders, caller)
    };
    // A failed write of the log changes no answer.
    let _ = denials::record(store.common_dir(), &refused);
    let recent = |d: &&Denial| d.at.saturating_add(denials::WAITING_WINDOW_SECS) >= now;
    let (holder, theirs, wanted) = refused.iter().find_map(|r| {
        let d = log
            .iter()
            .filter(recent)
            .rev()
            .find(|d| d.agent == r.holder && d.holder == caller && mine.contains(&d.file))?;
        Some((r.holder.clone(), d.file.clone(), r.file.clone()))
    })?;
    Some(format!(
        "Deadlock: {holder} is waiting on {theirs}, which {caller} holds, while {caller} waits on {wanted}: neither \
         gets on by waiting. One of you releases: `git mas --agent {caller} focus release --targets {theirs}` (or \
         {holder} releases {wanted})."
    ))
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
        TeamEdit::Blocked { blocks, lapsed, .. } => match edit_gate::answer(&Verdict::Block { blocks }, mode) {
            Answer::Deny { reason } if !lapsed.is_empty() => Answer::Deny {
                reason: format!(
                    "{caller}'s claim on {} expired (no edit within its time to live), and another agent claimed it \
                     since.\n{reason}",
                    lapsed.join(", ")
                ),
            },
            other => other,
        },
        TeamEdit::OverCap { held, wanted } => edit_gate::under(
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
        TeamEdit::Flood(rejection) => edit_gate::under(
            mode,
            format!(
                "git mas gate: {rejection}, so {caller} cannot claim a file. Remedy: end sessions you no longer \
                 use (`git mas focus list` shows who holds what; each releases with `git mas focus release`), or \
                 wait until their claims lapse, then retry."
            ),
        ),
    }
}

/// Checks `caller`'s earlier shell call whose post-tool check has not run (a host without a
/// post-tool hook, or one that did not fire) and returns what a check found that the agent was
/// not told yet. The call now asked is not refused for it: what was changed is put back already,
/// and the message goes with the call's answer ([`with_told`]).
///
/// Also the live board the guard was given, read in this call: the rest of the call decides on
/// it rather than listing every focus ref again (with 10,000 sessions on the board, the listing is
/// most of a call). `None` when it could not be read; the caller reads it then.
fn settle(store: &Store, caller: &str, runs: &dyn RunLedger) -> (Vec<String>, Option<Board>) {
    let mut told = shell_guard::take_notice(store, caller).into_iter().collect::<Vec<_>>();
    let Ok(here) = store.workdir() else { return (told, None) };
    match guarded(store, here, caller, Moment::Before, runs) {
        Ok((mut more, board)) => {
            told.append(&mut more);
            told.extend(keep_lost(store, here, caller, &board));
            (told, Some(board))
        }
        Err(e) => {
            told.push(format!("git mas gate: {}", said(&e)));
            (told, None)
        }
    }
}

/// What `caller` is told about the files it lost to a claim made on another clone ([`lost`]):
/// its changes to each are kept, once, and it is told so at this call.
fn keep_lost(store: &Store, here: &Path, caller: &str, board: &Board) -> Vec<String> {
    lost::lost(board, caller)
        .iter()
        .filter_map(|l| match lost::keep(store, here, caller, l) {
            Ok(kept) => kept.as_ref().map(lost::describe),
            Err(e) => Some(format!(
                "git mas gate: {} is {}'s (claimed on another clone at the same time as yours); your changes to it \
                 could not be kept as a commit ({}), but your working copy is as you left it",
                l.file,
                l.holder,
                said(&e)
            )),
        })
        .collect()
}

/// The held files' guard at `moment` of `caller`'s call ([`held_guard::step`]), with the pending
/// shell check run inside it: what the caller is told (the holders are told at their next call).
fn guarded(
    store: &Store,
    here: &Path,
    caller: &str,
    moment: Moment,
    runs: &dyn RunLedger,
) -> Result<(Vec<String>, Board), TeamGateError> {
    let pending = shell_guard::pending(store, caller);
    let board = live_board(store, caller, runs)?;
    let check = || shell_guard::check(store, here, caller);
    let check: Option<held_guard::Check<'_>> = pending.then_some(&check);
    let (restored, noticed) =
        held_guard::step(store, here, Some(caller), moment, &board, check).map_err(TeamGateError::Guard)?;
    let mut told = Vec::new();
    if !restored.is_empty() {
        tell_holders(store, caller, &restored);
        told.push(shell_guard::describe(&restored));
    }
    if !noticed.is_empty() {
        held_guard::tell_holders(store, Some(caller), &noticed);
        told.push(held_guard::describe(&noticed));
    }
    Ok((told, board))
}

/// The live board as `caller`'s hook call reads it (a run's claims ended with the run).
fn live_board(store: &Store, caller: &str, runs: &dyn RunLedger) -> Result<Board, StoreError> {
    let roster = store.roster()?;
    focus_store::load_live_board(store, &roster, now_secs(), None, Some(caller), runs)
}

/// Tells each holder of a file `caller`'s shell call committed (the commit gate skipped), at the
/// holder's next call.
fn tell_holders(store: &Store, caller: &str, restored: &[shell_guard::Restored]) {
    for r in restored {
        if let shell_guard::RestoreAction::Committed(commit) = &r.action {
            let text = format!(
                "git mas gate: {caller} committed {path}, which you hold, in {commit}, without the commit gate; your \
                 working copy of {path} is as you left it. See `git show {commit} -- {path}`.",
                path = r.path
            );
            let _ = shell_guard::save_notice(store, &r.holder, &text);
        }
    }
}

/// `answer` with what [`settle`] found told too: a call that would run still runs (the agent is
/// shown the message beside it), a refused one carries it before its reason.
fn with_told(answer: Answer, told: Vec<String>) -> Answer {
    if told.is_empty() {
        return answer;
    }
    let told = told.join("\n");
    match answer {
        Answer::Allow { .. } => Answer::Warn { message: told },
        Answer::Warn { message } => Answer::Warn { message: format!("{told}\n{message}") },
        Answer::Deny { reason } => Answer::Deny { reason: format!("{told}\n{reason}") },
    }
}

/// The pre-tool answer to a shell call of `caller` in team mode: the files other agents hold are
/// kept, to be compared when the call ends ([`post_tool`]); a command running a git command that
/// takes their uncommitted work is refused (`git_refusal`).
pub fn shell_call(store: &Store, caller: &str, mode: Mode, payload: &Payload, runs: &dyn RunLedger) -> Answer {
    let (told, board) = settle(store, caller, runs);
    let kept = (|| -> Result<Option<String>, TeamGateError> {
        let board = match board {
            Some(board) => board,
            None => live_board(store, caller, runs)?,
        };
        if let Some(command) = &payload.command
            && let Some(refused) = git_refusal(store, caller, &board, command, payload.cwd.as_deref())
        {
            return Ok(Some(refused));
        }
        // A `git commit` this call runs is this session's (the commit gate finds it so).
        ancestry::record(store, caller).map_err(TeamGateError::Record)?;
        shell_guard::keep(store, caller, &board).map_err(TeamGateError::Keep)?;
        Ok(None)
    })();
    let answer = match kept {
        Ok(Some(refused)) => edit_gate::under(mode, refused),
        Ok(None) => Answer::Allow { note: None },
        Err(e) => edit_gate::answer(
            &Verdict::FailClosed {
                reason: format!("{e} (so a change by this shell command could not be undone)"),
                remedy: "retry the call".into(),
            },
            mode,
        ),
    };
    with_told(answer, told)
}

/// The refusal of a shell command that runs a git command taking the uncommitted work of files
/// other live agents hold ([`shell_git`]), naming them, their holders and the safe form.
fn git_refusal(store: &Store, caller: &str, board: &Board, command: &str, cwd: Option<&str>) -> Option<String> {
    let mut holders: BTreeMap<String, String> = BTreeMap::new();
    for e in board.entries.iter().filter(|e| e.liveness == Liveness::Live && e.focus.agent != caller) {
        for t in &e.focus.targets {
            holders.entry(claims::file_of(t).to_string()).or_insert_with(|| e.focus.agent.clone());
        }
    }
    let held: Vec<String> = holders.keys().cloned().collect();
    let rel = cwd
        .and_then(|c| std::fs::canonicalize(c).ok())
        .and_then(|c| {
            let roots = store.worktree_roots();
            roots.iter().find_map(|r| c.strip_prefix(r).ok().map(|p| p.to_string_lossy().into_owned()))
        })
        .unwrap_or_default();
    let found = shell_git::refusals(command, &rel, &held);
    let first = found.first()?;
    let named: Vec<String> =
        first.files.iter().map(|f| format!("{f} ({})", holders.get(f).map(String::as_str).unwrap_or("?"))).collect();
    Some(format!(
        "git mas gate: this shell command was not run: `{}` would take the uncommitted work of files other \
         sessions hold: {}. Remedy: limit it to your own files: {}; leave the others' files to them (`git mas \
         status` shows who holds what).",
        first.command,
        named.join(", "),
        first.safe
    ))
}

/// A session event of `host` (its payload in `bytes`) as the hook process meets it.
#[derive(Clone, Copy)]
pub struct Event<'a> {
    /// The host.
    pub host: Host,
    /// The payload's bytes.
    pub bytes: &'a [u8],
    /// The identity pinned for the hook process (`--agent`, `GIT_MAS_AGENT`).
    pub pinned: Option<&'a str>,
}

/// The post-tool hook: compares the files kept before the caller's shell call, puts back what it
/// changed, and tells the agent — in the post-tool answer where the host shows it to the agent
/// ([`reply::post_tool`]), else at its next pre-tool call. `None` outside team mode and when there
/// is nothing to tell.
pub fn post_tool(
    store: &Store,
    event: &Event<'_>,
    env: &dyn Env,
    runs: &dyn RunLedger,
) -> Result<Option<Reply>, TeamGateError> {
    let Some(caller) = event_caller(store, event, env)? else { return Ok(None) };
    let (told, _) = guarded(store, store.workdir()?, &caller, Moment::After, runs)?;
    if told.is_empty() {
        return Ok(None);
    }
    let message = told.join("\n");
    let name = payload::hook_event_name(event.bytes);
    let result = payload::post_tool_result(event.host, event.bytes);
    match reply::post_tool(event.host, &message, result.as_ref(), name.as_deref()) {
        Some(reply) => Ok(Some(reply)),
        None => {
            shell_guard::save_notice(store, &caller, &message)
                .map_err(|source| TeamGateError::Notice { agent: caller.clone(), source })?;
            Ok(Some(Reply { stdout: Vec::new(), stderr: format!("{message}\n"), code: 0 }))
        }
    }
}

/// What a session's end did.
#[derive(Debug, Default)]
pub struct Ended {
    /// The files it held, released now.
    pub held: Vec<String>,
    /// What went wrong on the side (for the person running the hook).
    pub warnings: Vec<String>,
}

/// The session-end hook: the session's claims are released at once and its pending shell checks
/// forgotten; what its last shell call changed is put back first. Nothing outside team mode.
pub fn session_end(
    store: &Store,
    event: &Event<'_>,
    env: &dyn Env,
    runs: &dyn RunLedger,
) -> Result<Ended, TeamGateError> {
    let Some(caller) = event_caller(store, event, env)? else { return Ok(Ended::default()) };
    let (key, _) = caller::signing_key(store, &caller)?;
    let mut warnings = Vec::new();
    let checked = !shell_guard::pending(store, &caller)
        || match shell_guard::check(store, store.workdir()?, &caller) {
            Ok(restored) => {
                if !restored.is_empty() {
                    tell_holders(store, &caller, &restored);
                    warnings.push(shell_guard::describe(&restored));
                }
                true
            }
            Err(e) => {
                // The kept state stays for the next check (`git mas doctor` names it).
                warnings.push(format!("checking the files the session's last shell command changed failed: {e}"));
                false
            }
        };
    if checked {
        shell_guard::forget(store, &caller);
    }
    ancestry::forget(store, &caller);
    ancestry::forget_host(store, &caller);
    let now = now_secs();
    let held = team::end(store, &caller, &key, now, runs)?;
    // Sessions that ended long ago leave no refs behind.
    let retention = team::retention(store)?;
    let roster = store.roster()?;
    if let Err(e) = focus_store::prune_sessions(store, &roster, now, retention, runs) {
        warnings.push(format!("pruning the chains of ended sessions failed: {e}"));
    }
    Ok(Ended { held, warnings })
}

/// The caller of a session event in a team-mode repository; `None` outside one.
fn event_caller(store: &Store, event: &Event<'_>, env: &dyn Env) -> Result<Option<String>, TeamGateError> {
    let parsed = payload::parse_session_event(event.host, event.bytes)?;
    if !team::enabled(store) {
        return Ok(None);
    }
    let ask = Ask { pinned: event.pinned, session: parsed.session.as_deref().map(|s| (event.host, s)) };
    Ok(Some(caller::resolve(store, &ask, env)?.name))
}

/// The commit gate in team mode: team mode's verdict on the staged change, or on `named` files
/// (whole, relative to the top of the working tree) when given ([`claims::commit_verdict`]), for
/// `committer` ([`caller::committer`]), with what it touches. An unreadable board or change fails
/// closed.
pub fn commit_verdict(
    store: &Store,
    committer: Option<&str>,
    named: &[String],
    runs: &dyn RunLedger,
) -> (Verdict, Vec<Touched>) {
    let now = now_secs();
    let mut seen = Vec::new();
    let gathered = (|| -> Result<Verdict, String> {
        let workdir = store.workdir().map_err(|e| e.to_string())?.to_path_buf();
        let (paths, diff_args): (Vec<String>, &[&str]) = if named.is_empty() {
            (super::gate_io::staged(store, &workdir).map_err(|e| e.reason)?, &["diff", "--cached"])
        } else {
            (named.to_vec(), &[])
        };
        let roster = store.roster().map_err(|e| e.to_string())?;
        let head = frame::current_frame_hash(store).map_err(|e| e.to_string())?;
        let board =
            focus_store::load_live_board(store, &roster, now, None, committer, runs).map_err(|e| e.to_string())?;
        let symbols = symbol_files(&board);
        let touched = touched::touched(&workdir, paths, &symbols, diff_args);
        let ranges: BTreeMap<String, [u32; 2]> = match &head {
            Some((commit, _)) if touched.iter().any(|t| symbols.contains(&t.path)) => frame::read_frame(store, *commit)
                .map_err(|e| e.to_string())?
                .snapshot
                .targets
                .iter()
                .filter_map(|t| Some((t.id.clone(), t.lines?)))
                .collect(),
            _ => BTreeMap::new(),
        };
        let hash = head.map(|(_, h)| h).unwrap_or_default();
        let mut verdict =
            claims::commit_verdict(committer, &board, &hash, &touched, &|id| ranges.get(id).copied(), now);
        // A file inside another agent's live lane is refused as a held one is.
        let lanes = super::lanes::live(store, now).map_err(|e| e.to_string())?;
        let in_lanes: Vec<Block> = touched
            .iter()
            .filter_map(|t| super::lanes::holder_of(&lanes, committer.unwrap_or_default(), &t.path).map(|l| (t, l)))
            .map(|(t, l)| Block {
                holder: l.agent.clone(),
                target: t.path.clone(),
                why: format!("it is inside {}'s lane {}", l.agent, l.glob),
                remedy: format!(
                    "take it out of this commit: `git restore --staged -- {}` (your working tree keeps the change), \
                     then commit again; or ask {} to release the lane",
                    crate::hosts::hooks::shell_word(&t.path),
                    l.agent
                ),
            })
            .collect();
        if !in_lanes.is_empty() {
            let mut blocks = match verdict {
                Verdict::Block { blocks } => blocks,
                _ => Vec::new(),
            };
            blocks.extend(in_lanes);
            verdict = Verdict::Block { blocks };
        }
        seen = touched;
        Ok(verdict)
    })();
    let verdict = gathered.unwrap_or_else(|reason| Verdict::FailClosed {
        reason: format!("the focus board or the change cannot be read: {reason}"),
        remedy: "retry".into(),
    });
    (verdict, seen)
}

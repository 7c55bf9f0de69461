//! Team mode as the hooks meet it: who a hook call is (a session agent unless an identity is
//! pinned), and the answer to its edit ([`git_mas::attention::team`]).

use super::context::Context;
use super::error::{CliError, Kind};
use super::inputs::{InputArgs, read_inputs};
use git_mas::attention::edit_gate;
use git_mas::attention::focus_store;
use git_mas::attention::focus_store::now_secs;
use git_mas::attention::frame;
use git_mas::attention::gate::{Touched, Verdict};
use git_mas::attention::gate_io::FileId;
use git_mas::attention::gate_io::symbol_files;
use git_mas::attention::git_hooks::Mode;
use git_mas::attention::held_guard::{self, Moment};
use git_mas::attention::shell_git;
use git_mas::attention::shell_guard;
use git_mas::attention::team::{self, TeamEdit, TeamError};
use git_mas::attention::{ancestry, claims, touched};
use git_mas::hosts::Host;
use git_mas::hosts::payload;
use git_mas::hosts::reply::{self, Answer, Reply};
use git_mas::identity::{AgentKey, session_agent};
use git_mas::store::Store;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Who a hook call of `host` is, in team mode. An identity pinned for one session wins: `--agent`
/// or `GIT_MAS_AGENT`, or `mas.agent` in this worktree's own config (a worktree dedicated to one
/// agent, as `coordinate` and `worktree add` set it). Otherwise a call that carries a session id
/// is that session's agent, `<principal>.<host>-<8 hex>` ([`session_agent`]); one without is the
/// principal itself.
pub fn edit_caller(ctx: &Context, host: Host, session: Option<&str>) -> Result<String, CliError> {
    if let Some(name) = pinned(ctx)? {
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
    let told = settle(ctx, caller);
    with_told(edit_answer_now(ctx, caller, touched, linked, mode), told)
}

fn edit_answer_now(ctx: &Context, caller: &str, touched: Vec<Touched>, linked: &[FileId], mode: Mode) -> Answer {
    let paths: Vec<String> = touched.iter().map(|t| t.path.clone()).collect();
    match decide(ctx, caller, touched, linked) {
        Ok(TeamEdit::Blocked { blocks, lapsed, mine }) => {
            let deadlock = ctx.store().ok().and_then(|store| note_denials(store, caller, &blocks, &mine));
            match answer(caller, TeamEdit::Blocked { blocks, lapsed, mine }, mode) {
                Answer::Deny { reason } if deadlock.is_some() => {
                    Answer::Deny { reason: format!("{reason}\n{}", deadlock.unwrap_or_default()) }
                }
                other => other,
            }
        }
        Ok(edit) => {
            if matches!(edit, TeamEdit::Allowed { .. })
                && let Ok(store) = ctx.store()
            {
                // The caller's own edit is not a shell call's change to undo.
                let _ = shell_guard::holder_edited(store, &paths);
                // A session's claims live with its host process ([`ancestry::gone`]).
                if git_mas::identity::principal_of(caller).is_some() {
                    let _ = ancestry::record_host(store, caller);
                }
            }
            answer(caller, edit, mode)
        }
        Err(e) => {
            // The error's own remedy when it has one (a stale lock: `git mas doctor --fix`), which
            // retrying alone would not cure.
            let remedy = e.hints().first().cloned().unwrap_or_else(|| "retry the edit".into());
            let mut bare = e;
            bare.clear_hints();
            let reason = bare.render(false);
            let reason = reason.trim_end().trim_start_matches("Error: ").to_string();
            edit_gate::answer(&Verdict::FailClosed { reason, remedy }, mode)
        }
    }
}

fn decide(ctx: &Context, caller: &str, touched: Vec<Touched>, linked: &[FileId]) -> Result<TeamEdit, CliError> {
    let store = ctx.store()?;
    let lease = team::lease(store).map_err(team_error)?;
    let mut key = || -> Result<AgentKey, TeamError> {
        let c = ctx.caller_as(caller.to_string()).map_err(CallerFailed::boxed)?;
        Ok(c.key)
    };
    let mut publish_frame = |key: &AgentKey| -> Result<bool, TeamError> {
        let files = read_inputs(store, &InputArgs::default()).map_err(CallerFailed::boxed)?;
        let (snapshot, view) = frame::snapshot_now(store, &files)?;
        let published = frame::publish(store, caller, key, &snapshot, &view, &files)?;
        Ok(matches!(published, frame::Published::New { .. }))
    };
    team::edit(
        store,
        caller,
        touched,
        linked,
        lease,
        now_secs(),
        &mut key,
        &mut publish_frame,
        &git_mas::devrun::ledger::Ledger::new(store),
    )
    .map_err(team_error)
}

/// Appends `caller`'s refusals to the denial log (`git mas status` reads who waits on whom), and
/// says so when a holder is itself waiting on a file the caller holds: a deadlock, which neither
/// ends by waiting.
fn note_denials(
    store: &git_mas::store::Store,
    caller: &str,
    blocks: &[git_mas::attention::gate::Block],
    mine: &[String],
) -> Option<String> {
    use git_mas::attention::denials::{self, Denial};
    let now = now_secs();
    let refused: Vec<Denial> = blocks
        .iter()
        .map(|b| Denial {
            at: now,
            agent: caller.to_string(),
            holder: b.holder.clone(),
            file: git_mas::attention::claims::file_of(&b.target).to_string(),
        })
        .collect();
    let log = if mine.is_empty() { Vec::new() } else { denials::read(store.common_dir()) };
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

/// The error with the hints of its kind (a stale ref lock names `git mas doctor --fix`).
fn team_error(e: TeamError) -> CliError {
    match e {
        TeamError::Store(e) => CliError::from(e),
        TeamError::Frame(e) => CliError::from(e),
        TeamError::Caller(e) => match e.downcast::<CallerFailed>() {
            Ok(failed) => CliError::new(Kind::User, *failed),
            Err(other) => CliError::new(Kind::User, other),
        },
        e => CliError::new(Kind::User, e),
    }
}

/// This command's own failure inside a team-mode decision ([`TeamError::Caller`]), kept whole to
/// the edge, where it is said as it always was: its full rendering, hints included, as one message.
#[derive(Debug)]
struct CallerFailed(CliError);

impl CallerFailed {
    fn boxed(e: CliError) -> TeamError {
        TeamError::Caller(Box::new(CallerFailed(e)))
    }
}

impl std::fmt::Display for CallerFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.render(false).trim_end())
    }
}

impl std::error::Error for CallerFailed {}

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
        TeamEdit::Flood(rejection) => refuse(
            mode,
            format!(
                "git mas gate: {rejection}, so {caller} cannot claim a file. Remedy: end sessions you no longer \
                 use (`git mas focus list` shows who holds what; each releases with `git mas focus release`), or \
                 wait until their claims lapse, then retry."
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

/// Checks `caller`'s earlier shell call whose post-tool check has not run (a host without a
/// post-tool hook, or one that did not fire) and returns what a check found that the agent was
/// not told yet. The call now asked is not refused for it: what was changed is put back already,
/// and the message goes with the call's answer ([`with_told`]).
fn settle(ctx: &Context, caller: &str) -> Vec<String> {
    let Ok(store) = ctx.store() else { return Vec::new() };
    let mut told = shell_guard::take_notice(store, caller).into_iter().collect::<Vec<_>>();
    let Ok(here) = store.workdir() else { return told };
    match guarded(store, here, caller, Moment::Before) {
        Ok(mut more) => told.append(&mut more),
        Err(e) => told.push(format!("git mas gate: {}", e.render(false).trim_end().trim_start_matches("Error: "))),
    }
    told
}

/// The held files' guard at `moment` of `caller`'s call ([`held_guard::step`]), with the pending
/// shell check run inside it: what the caller is told (the holders are told at their next call).
fn guarded(store: &Store, here: &std::path::Path, caller: &str, moment: Moment) -> Result<Vec<String>, CliError> {
    let pending = shell_guard::pending(store, caller);
    let board = live_board(store, caller)?;
    let check = || if pending { shell_guard::check(store, here, caller) } else { Ok(Vec::new()) };
    let (restored, noticed) = held_guard::step(store, here, Some(caller), moment, &board, check)
        .map_err(|e| CliError::with_message(Kind::User, "checking the files other sessions hold failed", e))?;
    let mut told = Vec::new();
    if !restored.is_empty() {
        tell_holders(store, caller, &restored);
        told.push(shell_guard::describe(&restored));
    }
    if !noticed.is_empty() {
        held_guard::tell_holders(store, Some(caller), &noticed);
        told.push(held_guard::describe(&noticed));
    }
    Ok(told)
}

/// The live board as `caller`'s hook call reads it (a run's claims ended with the run).
fn live_board(store: &Store, caller: &str) -> Result<git_mas::attention::board::Board, CliError> {
    let roster = store.roster()?;
    let runs = git_mas::devrun::ledger::Ledger::new(store);
    Ok(focus_store::load_live_board(store, &roster, now_secs(), None, Some(caller), &runs)?)
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
/// kept, to be compared when the call ends ([`post_tool`]).
pub fn shell_call(ctx: &Context, caller: &str, mode: Mode, payload: &payload::Payload) -> Answer {
    let told = settle(ctx, caller);
    let mut refused = None;
    let kept = (|| -> Result<usize, CliError> {
        let store = ctx.store()?;
        let board = live_board(store, caller)?;
        if let Some(command) = &payload.command {
            refused = git_refusal(store, caller, &board, command, payload.cwd.as_deref());
            if refused.is_some() {
                return Ok(0);
            }
        }
        // A `git commit` this call runs is this session's (the commit gate finds it so).
        ancestry::record(store, caller).map_err(|e| {
            CliError::with_message(Kind::User, format!("cannot record the session's processes: {e}"), e)
        })?;
        shell_guard::keep(store, caller, &board)
            .map_err(|e| CliError::with_message(Kind::User, format!("cannot keep the files other agents hold: {e}"), e))
    })();
    let answer = match kept {
        Ok(_) if refused.is_some() => refuse(mode, refused.unwrap_or_default()),
        Ok(_) => Answer::Allow { note: None },
        Err(e) => edit_gate::answer(
            &Verdict::FailClosed {
                reason: format!("{} (so a change by this shell command could not be undone)", e.message()),
                remedy: "retry the call".into(),
            },
            mode,
        ),
    };
    with_told(answer, told)
}

/// The refusal of a shell command that runs a git command taking the uncommitted work of files
/// other live agents hold ([`shell_git`]), naming them, their holders and the safe form.
fn git_refusal(
    store: &Store,
    caller: &str,
    board: &git_mas::attention::board::Board,
    command: &str,
    cwd: Option<&str>,
) -> Option<String> {
    use git_mas::attention::board::Liveness;
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

/// The post-tool hook of `host` (its payload in `bytes`): compares the files kept before the
/// caller's shell call, puts back what it changed, and tells the agent — in the post-tool answer
/// where the host shows it to the agent ([`reply::post_tool`]), else at its next pre-tool call.
pub fn post_tool(ctx: &Context, host: Host, bytes: &[u8]) -> Result<Option<Reply>, CliError> {
    let Some((caller, store)) = event_caller(ctx, host, bytes)? else { return Ok(None) };
    let told = guarded(store, store.workdir()?, &caller, Moment::After)?;
    if told.is_empty() {
        return Ok(None);
    }
    let message = told.join("\n");
    let event = payload::hook_event_name(bytes);
    match reply::post_tool(host, &message, payload::post_tool_result(host, bytes).as_ref(), event.as_deref()) {
        Some(reply) => Ok(Some(reply)),
        None => {
            shell_guard::save_notice(store, &caller, &message).map_err(|e| {
                CliError::with_message(Kind::User, format!("cannot keep the notice for {caller}: {e}"), e)
            })?;
            Ok(Some(Reply { stdout: Vec::new(), stderr: format!("{message}\n"), code: 0 }))
        }
    }
}

/// The session-end hook of `host`: the session's claims are released at once and its pending
/// shell checks forgotten. Returns the files it held.
pub fn session_end(ctx: &Context, host: Host, bytes: &[u8]) -> Result<Vec<String>, CliError> {
    let Some((caller, store)) = event_caller(ctx, host, bytes)? else { return Ok(Vec::new()) };
    let key = ctx.caller_as(caller.clone())?.key;
    // What the session's last shell call changed is put back before its claims go.
    let checked = !shell_guard::pending(store, &caller)
        || match shell_guard::check(store, store.workdir()?, &caller) {
            Ok(restored) => {
                if !restored.is_empty() {
                    tell_holders(store, &caller, &restored);
                    ctx.warn(&shell_guard::describe(&restored));
                }
                true
            }
            Err(e) => {
                // The kept state stays for the next check (`git mas doctor` names it).
                ctx.warn(&format!("checking the files the session's last shell command changed failed: {e}"));
                false
            }
        };
    if checked {
        shell_guard::forget(store, &caller);
    }
    ancestry::forget(store, &caller);
    ancestry::forget_host(store, &caller);
    let now = now_secs();
    let held =
        team::end(store, &caller, &key, now, &git_mas::devrun::ledger::Ledger::new(store)).map_err(team_error)?;
    // Sessions that ended long ago leave no refs behind.
    let retention = team::retention(store).map_err(team_error)?;
    let roster = store.roster()?;
    if let Err(e) =
        focus_store::prune_sessions(store, &roster, now, retention, &git_mas::devrun::ledger::Ledger::new(store))
    {
        ctx.warn(&format!("pruning the chains of ended sessions failed: {e}"));
    }
    Ok(held)
}

/// The caller of a session event in a team-mode repository; `None` outside one.
fn event_caller<'a>(ctx: &'a Context, host: Host, bytes: &[u8]) -> Result<Option<(String, &'a Store)>, CliError> {
    let event = payload::parse_session_event(host, bytes).map_err(|e| CliError::new(Kind::User, e))?;
    let Ok(store) = ctx.store() else { return Ok(None) };
    if !team::enabled(store) {
        return Ok(None);
    }
    let caller = edit_caller(ctx, host, event.session.as_deref())?;
    Ok(Some((caller, store)))
}

/// Who a commit in team mode is: an identity pinned for the session (`--agent`, `GIT_MAS_AGENT`,
/// this worktree's own `mas.agent`), else the session whose shell ran `git commit`
/// ([`ancestry::find`]); `None` when neither says.
pub fn commit_caller(ctx: &Context) -> Result<Option<String>, CliError> {
    match pinned(ctx)? {
        Some(name) => Ok(Some(name)),
        None => Ok(ancestry::find(ctx.store()?)),
    }
}

/// The identity pinned for one session: `--agent` or `GIT_MAS_AGENT`, else `mas.agent` in this
/// worktree's own config (a worktree dedicated to one agent).
fn pinned(ctx: &Context) -> Result<Option<String>, CliError> {
    let name = match ctx.pinned_agent() {
        Some(name) => name.to_string(),
        None => match ctx.store()?.worktree_config_string("mas.agent").filter(|n| !n.is_empty()) {
            Some(name) => name,
            None => return Ok(None),
        },
    };
    git_mas::identity::validate_name(&name)?;
    Ok(Some(name))
}

/// The commit gate in team mode: the caller ([`commit_caller`]) and team mode's verdict on the
/// staged change, or on `paths` (whole files) when given ([`claims::commit_verdict`]), with what
/// it touches. An unreadable board or change fails closed.
pub fn commit_gate(ctx: &Context, paths: &[PathBuf]) -> Result<(Option<String>, Verdict, Vec<Touched>), CliError> {
    let store = ctx.store()?;
    let caller = commit_caller(ctx)?;
    let workdir = store.workdir()?.to_path_buf();
    let named = super::gating::repo_relative(paths, &ctx.cwd()?, &workdir)?;
    let now = now_secs();
    let mut seen = Vec::new();
    let gathered = (|| -> Result<Verdict, String> {
        let (paths, diff_args): (Vec<String>, &[&str]) = if named.is_empty() {
            (super::gating::staged(store, &workdir).map_err(|e| e.reason)?, &["diff", "--cached"])
        } else {
            (named.clone(), &[])
        };
        let roster = store.roster().map_err(|e| e.to_string())?;
        let head = frame::current_frame_hash(store).map_err(|e| e.to_string())?;
        let board = focus_store::load_live_board(
            store,
            &roster,
            now,
            None,
            caller.as_deref(),
            &git_mas::devrun::ledger::Ledger::new(store),
        )
        .map_err(|e| e.to_string())?;
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
        let verdict =
            claims::commit_verdict(caller.as_deref(), &board, &hash, &touched, &|id| ranges.get(id).copied(), now);
        seen = touched;
        Ok(verdict)
    })();
    let verdict = gathered.unwrap_or_else(|reason| Verdict::FailClosed {
        reason: format!("the focus board or the change cannot be read: {reason}"),
        remedy: "retry".into(),
    });
    Ok((caller, verdict, seen))
}

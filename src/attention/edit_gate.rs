//! The gate before an edit: a host's hook payload in, the answer out, decided here in one call
//! ([`decide`]); the binary reads the payload and writes the answer in the host's format
//! ([`crate::hosts::payload`], [`crate::hosts::reply`]).
//!
//! The order of the decision:
//!
//! 1. A call that writes no file: allowed, but in team mode a shell call first keeps the files
//!    other agents hold ([`team_gate::shell_call`]).
//! 2. A repository without a roster, and `mas.gate=off`: allowed at once.
//! 3. A write to the gate's own ground ([`own_ground`]): refused (in warn mode let through with
//!    the message). A file outside the repository is not gated (allowed with a note) unless it is
//!    another name of a held file (a hard link).
//! 4. In an aggregate run's worktree, a file in another agent's slice is that agent's
//!    ([`slice_blocks`]), whatever the board.
//! 5. In team mode, team mode's rule ([`team_gate::edit`]); otherwise the commit gate's verdict on
//!    the files the call writes, with the changed lines where the payload says which.
//!
//! The caller is named once, by [`caller::resolve`] (the identity pinned for the process, else the
//! payload's session, …), and every refusal goes through one mode rule ([`under`]: the gate mode
//! as [`Mode::outcome`] applies it to the git hooks too).

use super::caller::{self, Ask, CallerError};
use super::denials::{self, Denial};
use super::focus_store::now_secs;
use super::gate::{Block, Touched, Verdict};
use super::gate_io::{self, FileId, Ungathered};
use super::git_hooks::{HookOutcome, Mode, mode_of};
use super::run_end::RunLedger;
use super::{own_ground, shared_identity, team, team_gate};
use crate::hosts::payload::{self, Payload};
use crate::hosts::reply::Answer;
use crate::hosts::{Env, Host};
use crate::store::{Store, StoreError};
use std::path::Path;

/// The gate's answer to one tool call, and what it warns about on the side (an unknown
/// `mas.gate` value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The answer, for the host.
    pub answer: Answer,
    /// Warnings for the person running the hook (stderr).
    pub warnings: Vec<String>,
}

/// A tool call as the hook sees it.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    /// The host that made it.
    pub host: Host,
    /// Its payload.
    pub payload: &'a Payload,
    /// The identity pinned for the hook process (`--agent`, `GIT_MAS_AGENT`).
    pub pinned: Option<&'a str>,
    /// The hook process's directory (the payload's `cwd` is taken relative to it).
    pub cwd: &'a Path,
}

/// Whether answering `payload` needs a repository: a call that writes files does (outside one the
/// hook refuses with why), one that writes none is allowed without.
pub fn needs_repository(payload: &Payload) -> bool {
    !payload.writes.is_empty()
}

/// The mode `mas.gate` sets; an unknown value enforces (fail closed), with a warning.
pub fn mode(store: &Store, warnings: &mut Vec<String>) -> Mode {
    let setting = mode_of(store.config_string("mas.gate").as_deref());
    if let Some(other) = &setting.unknown {
        warnings.push(format!("unknown mas.gate value {other:?}; enforcing"));
    }
    setting.mode
}

/// The gate's answer to `call` (see the module docs for the order). `runs` says which runs ended
/// and how an open run split its files; `env` is where the host put its session id.
pub fn decide(store: &Store, call: &Call<'_>, env: &dyn Env, runs: &dyn RunLedger) -> Result<Decision, StoreError> {
    let mut warnings = Vec::new();
    let answer = answer_call(store, call, env, runs, &mut warnings)?;
    Ok(Decision { answer, warnings })
}

fn answer_call(
    store: &Store,
    call: &Call<'_>,
    env: &dyn Env,
    runs: &dyn RunLedger,
    warnings: &mut Vec<String>,
) -> Result<Answer, StoreError> {
    let payload = call.payload;
    if payload.writes.is_empty() {
        return shell_answer(store, call, env, runs, warnings);
    }
    if store.roster()?.entries().next().is_none() {
        return Ok(allow());
    }
    let mode = mode(store, warnings);
    if mode == Mode::Off {
        return Ok(allow());
    }
    let written = written(store, call)?;
    if !written.refused.is_empty() {
        return Ok(under(mode, written.refused.join("\n")));
    }
    let note = (!written.notes.is_empty()).then(|| written.notes.join("; "));
    if written.touched.is_empty() && written.linked.is_empty() {
        return Ok(Answer::Allow { note });
    }
    let ask = Ask { pinned: call.pinned, session: payload.session.as_deref().map(|s| (call.host, s)) };
    let who = caller::resolve(store, &ask, env);
    if let Ok(who) = &who {
        let paths: Vec<String> = written.touched.iter().map(|t| t.path.clone()).collect();
        let blocks = slice_blocks(store, &who.name, &paths, runs);
        if !blocks.is_empty() {
            return Ok(with_note(answer(&Verdict::Block { blocks }, mode), note));
        }
    }
    let answer = match (who, team::enabled(store)) {
        (Ok(who), true) => {
            let answer = team_gate::edit(store, &who.name, written.touched, &written.linked, mode, runs);
            shared(store, &who.name, payload, answer)
        }
        (Err(e), true) => no_identity(&e, mode),
        (Ok(who), false) => {
            let outcome =
                gate_io::evaluate_touched(store, &who.name, written.touched, &written.linked, now_secs(), runs)
                    .map_err(Ungathered::from);
            shared(store, &who.name, payload, answer(&gate_io::verdict_of(&outcome), mode))
        }
        (Err(_), false) => answer(&gate_io::verdict_of(&Err(Ungathered::no_identity("edit"))), mode),
    };
    Ok(with_note(answer, note))
}

/// The files a call writes, as the gate sorts them.
#[derive(Default)]
struct Written {
    /// Files of the repository, with the lines that change where the payload says.
    touched: Vec<Touched>,
    /// Files that are another name of a file (hard links), wherever they are.
    linked: Vec<FileId>,
    /// Notes for the answer (a file outside the repository).
    notes: Vec<String>,
    /// Refusals: writes to the gate's own ground.
    refused: Vec<String>,
}

fn written(store: &Store, call: &Call<'_>) -> Result<Written, StoreError> {
    let root = own_ground::resolve(store.workdir()?);
    let base = call.payload.cwd.as_deref().map_or(call.cwd.to_path_buf(), |c| call.cwd.join(c));
    let git_dirs = [store.repo().git_dir().to_path_buf(), store.common_dir().to_path_buf()];
    let grounds = own_ground::Grounds::of_repository(&root, &git_dirs, &crate::hosts::ProcessEnv);
    let mut out = Written::default();
    for w in &call.payload.writes {
        let resolved = own_ground::resolve(&base.join(&w.path));
        if let Some(ground) = own_ground::ground_of(&resolved, &grounds, &own_ground::mentions_git_mas) {
            out.refused.push(format!(
                "git mas gate: {} is {}, the gate's own ground. Remedy: {}.",
                w.path, ground.what, ground.remedy
            ));
            continue;
        }
        let id = gate_io::linked_id(&resolved);
        out.linked.extend(id);
        let Some(rel) = resolved.strip_prefix(&root).ok().map(|r| r.to_string_lossy().replace('\\', "/")) else {
            if id.is_none() {
                out.notes.push(format!("{} is outside the repository, so it is not gated", w.path));
            }
            continue;
        };
        if rel.is_empty() {
            continue;
        }
        let current = regular_text(&resolved);
        add_touched(&mut out.touched, rel, payload::changed_lines(&w.change, current.as_deref()));
    }
    Ok(out)
}

/// The answer to a call that names no file it writes: allowed, but in team mode a shell call of
/// a session first keeps the files other agents hold ([`team_gate::shell_call`]).
fn shell_answer(
    store: &Store,
    call: &Call<'_>,
    env: &dyn Env,
    runs: &dyn RunLedger,
    warnings: &mut Vec<String>,
) -> Result<Answer, StoreError> {
    let payload = call.payload;
    if !call.host.facts().payload.shell_tools.contains(&payload.tool.as_str())
        || !team::enabled(store)
        || store.roster()?.entries().next().is_none()
    {
        return Ok(allow());
    }
    let mode = mode(store, warnings);
    if mode == Mode::Off {
        return Ok(allow());
    }
    let ask = Ask { pinned: call.pinned, session: payload.session.as_deref().map(|s| (call.host, s)) };
    Ok(match caller::resolve(store, &ask, env) {
        Ok(who) => team_gate::shell_call(store, &who.name, mode, payload, runs),
        Err(e) => no_identity(&e, mode),
    })
}

fn allow() -> Answer {
    Answer::Allow { note: None }
}

/// A team-mode refusal for a session that cannot be named.
fn no_identity(e: &CallerError, mode: Mode) -> Answer {
    answer(
        &Verdict::FailClosed {
            reason: format!("this session has no identity: {e}"),
            remedy: e.remedy().unwrap_or_else(|| "run `git mas init --team`, then retry".into()),
        },
        mode,
    )
}

/// Adds a written file to `touched`, or its lines to the file's already there (`None`, "unknown",
/// wins).
fn add_touched(touched: &mut Vec<Touched>, rel: String, lines: Option<Vec<[u32; 2]>>) {
    match touched.iter_mut().find(|t| t.path == rel) {
        Some(t) => {
            t.lines = t.lines.take().zip(lines).map(|(mut a, b)| {
                a.extend(b);
                a
            })
        }
        None => touched.push(Touched { path: rel, lines }),
    }
}

/// `answer`, with a warning the agent sees when other sessions or worktrees act as `caller` too
/// ([`shared_identity`]).
fn shared(store: &Store, caller: &str, payload: &Payload, answer: Answer) -> Answer {
    let worktree = store.workdir().map(|w| w.to_string_lossy().into_owned()).unwrap_or_default();
    let session = payload.session.as_deref().unwrap_or_default();
    let others = shared_identity::observe(store, caller, session, &worktree, now_secs());
    if others.is_empty() {
        return answer;
    }
    let warning = shared_identity::warning(caller, &others);
    match answer {
        Answer::Allow { .. } => Answer::Warn { message: warning },
        Answer::Warn { message } => Answer::Warn { message: format!("{message}\n{warning}") },
        Answer::Deny { reason } => Answer::Deny { reason: format!("{reason}\n{warning}") },
    }
}

/// `answer` with `note` added to an allow's note.
fn with_note(answer: Answer, note: Option<String>) -> Answer {
    match (answer, note) {
        (Answer::Allow { note: a }, Some(b)) => {
            Answer::Allow { note: Some(a.map_or(b.clone(), |a| format!("{a}; {b}"))) }
        }
        (answer, _) => answer,
    }
}

/// The text of the regular file at `path`, when it is one of at most [`payload::MAX_PAYLOAD`]
/// bytes: a FIFO, a device or a huge file is never read (the gate would wait or fill memory).
fn regular_text(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > payload::MAX_PAYLOAD {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// The files `caller` may not edit in its aggregate run's worktree: each of `paths` that is in
/// another agent's slice ([`RunLedger::others_slices`]), as a block naming that agent (recorded as
/// a denial, which the run's driver hands to both in the next round). Empty outside a run's
/// worktree (`mas.run` unset). A file in no slice is not blocked here: the board decides (in team
/// mode the edit claims it).
pub fn slice_blocks(store: &Store, caller: &str, paths: &[String], runs: &dyn RunLedger) -> Vec<Block> {
    let Some(run) = store.config_string("mas.run").filter(|r| !r.trim().is_empty()) else { return Vec::new() };
    let owned = runs.others_slices(&run, caller, paths);
    let now = now_secs();
    let denials: Vec<Denial> = owned
        .iter()
        .map(|(path, owner)| Denial { at: now, agent: caller.to_string(), holder: owner.clone(), file: path.clone() })
        .collect();
    // Best effort: the log changes no verdict.
    let _ = denials::record(store.common_dir(), &denials);
    owned
        .into_iter()
        .map(|(path, owner)| Block {
            remedy: format!(
                "leave {path} to {owner} and say in your reply what it needs: the driver hands the conflict to you both in the next round"
            ),
            why: format!("it is in {owner}'s slice of run {run}"),
            holder: owner,
            target: path,
        })
        .collect()
}

/// `verdict` with `blocks` (files in other agents' slices) added: any such block refuses.
pub fn with_slice_blocks(verdict: Verdict, blocks: Vec<Block>) -> Verdict {
    if blocks.is_empty() {
        return verdict;
    }
    match verdict {
        Verdict::Block { blocks: mut more } => {
            more.retain(|b| !blocks.iter().any(|s| s.target == b.target));
            Verdict::Block { blocks: [blocks, more].concat() }
        }
        _ => Verdict::Block { blocks },
    }
}

/// The text of a refusing verdict: every holder, target and remedy, or why the gate failed closed.
pub fn refusal(verdict: &Verdict) -> Option<String> {
    match verdict {
        Verdict::Allow { .. } => None,
        Verdict::Block { blocks } => Some(
            blocks
                .iter()
                .map(|b| {
                    format!("git mas gate: {} is held by {} ({}). Remedy: {}.", b.target, b.holder, b.why, b.remedy)
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        Verdict::FailClosed { reason, remedy } => {
            Some(format!("git mas gate refused (failing closed): {reason}. Remedy: {remedy}."))
        }
    }
}

/// The answer to a verdict in `mode`: an allow keeps its notes; a refusal goes by [`under`].
pub fn answer(verdict: &Verdict, mode: Mode) -> Answer {
    match refusal(verdict) {
        Some(text) => under(mode, text),
        None => {
            let note = match verdict {
                Verdict::Allow { notes, .. } if !notes.is_empty() => Some(notes.join("; ")),
                _ => None,
            };
            Answer::Allow { note }
        }
    }
}

/// A refusal's `text` as the answer in `mode`, by the rule the git hooks apply too
/// ([`Mode::outcome`]): off lets the edit through silently, warn lets it through with the text,
/// enforce refuses.
pub fn under(mode: Mode, text: String) -> Answer {
    match mode.outcome(true) {
        HookOutcome::Proceed => allow(),
        HookOutcome::ProceedDespite => {
            Answer::Warn { message: format!("{text}\n(mas.gate is warn: the edit goes ahead)") }
        }
        HookOutcome::Stop => Answer::Deny { reason: text },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::gate::Block;

    #[test]
    fn answer_table() {
        let allow = Verdict::Allow { frame: "F".into(), notes: vec![] };
        let block = Verdict::Block {
            blocks: vec![Block {
                holder: "alice".into(),
                target: "src/money.rs".into(),
                why: "its top target".into(),
                remedy: "wait".into(),
            }],
        };
        let fail = Verdict::FailClosed { reason: "bob has no live focus".into(), remedy: "publish one".into() };
        let label = |a: &Answer| match a {
            Answer::Allow { .. } => "allow",
            Answer::Warn { .. } => "warn",
            Answer::Deny { .. } => "deny",
        };
        let cases = [
            (&allow, Mode::Enforce, "allow"),
            (&allow, Mode::Warn, "allow"),
            (&block, Mode::Enforce, "deny"),
            (&block, Mode::Warn, "warn"),
            (&block, Mode::Off, "allow"),
            (&fail, Mode::Enforce, "deny"),
            (&fail, Mode::Warn, "warn"),
        ];
        for (v, mode, want) in cases {
            assert_eq!(label(&answer(v, mode)), want, "{v:?} {mode:?}");
        }
        let Answer::Deny { reason } = answer(&block, Mode::Enforce) else { panic!() };
        assert!(reason.contains("alice") && reason.contains("src/money.rs") && reason.contains("wait"), "{reason}");
        let Answer::Deny { reason } = answer(&fail, Mode::Enforce) else { panic!() };
        assert!(reason.contains("no live focus") && reason.contains("publish one"), "{reason}");
    }
}

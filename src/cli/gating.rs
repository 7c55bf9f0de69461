//! The gate as the commands that run it need it (`gate`, `hook`, `check`): the mode read from
//! git config, the gate's inputs resolved from the command line or the index, a verdict rendered
//! for people with its outcome, and a replayed range.

use super::Outcome;
use super::context::Context;
use super::error::CliError;
use super::team_mode;
use git_mas::attention::denials::Denial;
use git_mas::attention::edit_gate;
use git_mas::attention::focus_store::now_secs;
use git_mas::attention::gate::{Block, Touched, Verdict};
use git_mas::attention::gate_io::{self, FileId, GateOutcome, Ungathered};
use git_mas::attention::git_hooks::{Mode, mode_of};
use git_mas::attention::own_ground;
use git_mas::attention::replay::{self, CheckReport, CheckStatus, NO_RECEIPT};
use git_mas::attention::shared_identity;
use git_mas::attention::team;
use git_mas::hosts::payload::{self, Payload};
use git_mas::hosts::reply::Answer;
use git_mas::hosts::{Host, ProcessEnv};
use git_mas::identity::ROSTER_PATH;
use git_mas::identity::trail::{RosterTrail, TRAIL_TRAILER};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Reads `mas.gate`; an unknown value enforces (fail closed), with a warning.
pub fn mode(ctx: &Context) -> Result<Mode, CliError> {
    let setting = mode_of(ctx.store()?.config_string("mas.gate").as_deref());
    if let Some(other) = &setting.unknown {
        ctx.warn(&format!("unknown mas.gate value {other:?}; enforcing"));
    }
    Ok(setting.mode)
}

/// Runs the gate on the staged change (or `paths`) and returns the caller and the outcome, or why
/// the outcome could not be gathered (the verdict then fails closed: [`gate_io::verdict_of`]).
pub fn evaluate(ctx: &Context, paths: &[PathBuf]) -> Result<(String, Result<GateOutcome, Ungathered>), CliError> {
    let caller = match ctx.caller_name() {
        Ok((name, _)) => name,
        Err(_) => return Ok((String::new(), Err(Ungathered::no_identity("change")))),
    };
    let cwd = ctx.cwd()?;
    let store = ctx.store()?;
    let workdir = store.workdir()?.to_path_buf();
    let (paths, diff_args): (Vec<String>, Vec<&str>) = if paths.is_empty() {
        match staged(store, &workdir) {
            Ok(p) => (p, vec!["diff", "--cached"]),
            Err(e) => return Ok((caller, Err(e))),
        }
    } else {
        (repo_relative(paths, &cwd, &workdir)?, vec![])
    };
    let outcome = gate_io::evaluate(
        store,
        &workdir,
        &caller,
        paths,
        &diff_args,
        now_secs(),
        &git_mas::devrun::ledger::Ledger::new(store),
    )
    .map_err(Ungathered::from);
    Ok((caller, outcome))
}

/// The paths the index changes against HEAD: in-process (through the cache-tree), git answering
/// what that leaves open.
pub fn staged(store: &git_mas::store::Store, workdir: &Path) -> Result<Vec<String>, Ungathered> {
    git_mas::attention::staged::staged_paths(store.repo())
        .map_or_else(|| git_mas::attention::touched::staged_paths(workdir), Ok)
        .map_err(Ungathered::other)
}

/// The gate's answer to an edit a host's hook payload describes: a tool writing nothing, a
/// repository without a roster and `mas.gate=off` allow at once; a write to the gate's own ground
/// ([`own_ground`]) is refused (in `warn` mode, let through with the message); files outside the
/// repository are not gated (allowed with a note) unless they are another name of a held file
/// (a hard link); the rest is the commit gate's decision on the files the call writes, with the
/// changed lines where the payload says which.
pub fn edit_answer(ctx: &Context, host: Host, payload: &Payload) -> Result<Answer, CliError> {
    if payload.writes.is_empty() {
        return shell_answer(ctx, host, payload);
    }
    let store = ctx.store()?;
    if store.roster()?.entries().next().is_none() {
        return Ok(Answer::Allow { note: None });
    }
    let mode = mode(ctx)?;
    if mode == Mode::Off {
        return Ok(Answer::Allow { note: None });
    }
    let workdir = store.workdir()?.to_path_buf();
    let root = own_ground::resolve(&workdir);
    let cwd = ctx.cwd()?;
    let base = payload.cwd.as_deref().map_or(cwd.clone(), |c| cwd.join(c));
    let git_dirs = [store.repo().git_dir().to_path_buf(), store.common_dir().to_path_buf()];
    let grounds = own_ground::Grounds::of_repository(&root, &git_dirs, &ProcessEnv);
    let mut touched: Vec<Touched> = Vec::new();
    let mut linked = Vec::new();
    let mut notes = Vec::new();
    let mut refused = Vec::new();
    for w in &payload.writes {
        let resolved = own_ground::resolve(&base.join(&w.path));
        if let Some(ground) = own_ground::ground_of(&resolved, &grounds, &own_ground::mentions_git_mas) {
            refused.push(format!(
                "git mas gate: {} is {}, the gate's own ground. Remedy: {}.",
                w.path, ground.what, ground.remedy
            ));
            continue;
        }
        let id = gate_io::linked_id(&resolved);
        linked.extend(id);
        let Some(rel) = resolved.strip_prefix(&root).ok().map(|r| r.to_string_lossy().replace('\\', "/")) else {
            if id.is_none() {
                notes.push(format!("{} is outside the repository, so it is not gated", w.path));
            }
            continue;
        };
        if rel.is_empty() {
            continue;
        }
        let current = regular_text(&resolved);
        let lines = payload::changed_lines(&w.change, current.as_deref());
        add_touched(&mut touched, rel, lines);
    }
    if !refused.is_empty() {
        return Ok(own_ground_refused(&refused, mode));
    }
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    if touched.is_empty() && linked.is_empty() {
        return Ok(Answer::Allow { note });
    }
    // In an aggregate run's worktree, another agent's slice is that agent's, whatever the board.
    if let Ok((caller, _)) = ctx.caller_name() {
        let paths: Vec<String> = touched.iter().map(|t| t.path.clone()).collect();
        let blocks = slice_blocks(store, &caller, &paths);
        if !blocks.is_empty() {
            return Ok(with_note(edit_gate::answer(&Verdict::Block { blocks }, mode), note));
        }
    }
    if team::enabled(store) {
        let answer = match team_mode::edit_caller(ctx, host, payload.session.as_deref()) {
            Ok(caller) => {
                let answer = team_mode::edit_answer(ctx, &caller, touched, &linked, mode);
                shared(store, &caller, payload, answer)
            }
            Err(e) => no_identity(&e, mode),
        };
        return Ok(with_note(answer, note));
    }
    Ok(with_note(solo_answer(ctx, store, payload, touched, &linked, mode), note))
}

/// The commit gate's answer outside team mode, for the caller this command acts as.
fn solo_answer(
    ctx: &Context,
    store: &git_mas::store::Store,
    payload: &Payload,
    touched: Vec<Touched>,
    linked: &[FileId],
    mode: Mode,
) -> Answer {
    match ctx.caller_name() {
        Ok((caller, _)) => {
            let outcome = gate_io::evaluate_touched(
                store,
                &caller,
                touched,
                linked,
                now_secs(),
                &git_mas::devrun::ledger::Ledger::new(store),
            )
            .map_err(Ungathered::from);
            shared(store, &caller, payload, edit_gate::answer(&gate_io::verdict_of(&outcome), mode))
        }
        Err(_) => edit_gate::answer(&gate_io::verdict_of(&Err(Ungathered::no_identity("edit"))), mode),
    }
}

/// The answer to writes on the gate's own ground: refused, or let through with the message in
/// `warn` mode.
fn own_ground_refused(refused: &[String], mode: Mode) -> Answer {
    let text = refused.join("\n");
    match mode {
        Mode::Warn => Answer::Warn { message: format!("{text}\n(mas.gate is warn: the edit goes ahead)") },
        _ => Answer::Deny { reason: text },
    }
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
fn shared(store: &git_mas::store::Store, caller: &str, payload: &Payload, answer: Answer) -> Answer {
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

/// The answer to a call that names no file it writes: allowed, but in team mode a shell call of
/// a session first keeps the files other agents hold ([`team_mode::shell_call`]). Outside a
/// repository, or one not in team mode, nothing is kept.
fn shell_answer(ctx: &Context, host: Host, payload: &Payload) -> Result<Answer, CliError> {
    let allow = Ok(Answer::Allow { note: None });
    if !host.facts().payload.shell_tools.contains(&payload.tool.as_str()) {
        return allow;
    }
    let Ok(store) = ctx.store() else { return allow };
    if !team::enabled(store) || store.roster()?.entries().next().is_none() {
        return allow;
    }
    let mode = mode(ctx)?;
    if mode == Mode::Off {
        return allow;
    }
    Ok(match team_mode::edit_caller(ctx, host, payload.session.as_deref()) {
        Ok(caller) => team_mode::shell_call(ctx, &caller, mode, payload),
        Err(e) => no_identity(&e, mode),
    })
}

/// A team-mode refusal for a session that cannot be named.
fn no_identity(e: &CliError, mode: Mode) -> Answer {
    edit_gate::answer(
        &Verdict::FailClosed {
            reason: format!("this session has no identity: {}", e.message()),
            remedy: e.hints().first().map_or("run `git mas init --team`, then retry", String::as_str).to_string(),
        },
        mode,
    )
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
/// another agent's slice, as a block naming that agent (recorded as a denial, which the run's
/// driver hands to both in the next round). Empty outside a run's worktree (`mas.run` unset), for
/// a run that ended or has no plan, and for an agent the plan does not name. A file in no slice is not
/// blocked here: the board decides (in team mode the edit claims it).
pub fn slice_blocks(store: &git_mas::store::Store, caller: &str, paths: &[String]) -> Vec<Block> {
    let Some(run) = store.config_string("mas.run").filter(|r| !r.trim().is_empty()) else { return Vec::new() };
    let Ok(roster) = store.roster() else { return Vec::new() };
    let Ok(meta) = git_mas::devrun::load_meta(store, &roster, &run) else { return Vec::new() };
    if meta.ensure_open().is_err() {
        return Vec::new();
    }
    // A reviewer holds no slice: every slice's file is another agent's.
    let Some(plan) = meta.def.slices.as_ref().filter(|p| p.slice(caller).is_some() || p.reviews(caller)) else {
        return Vec::new();
    };
    let mut blocks = Vec::new();
    let mut denials = Vec::new();
    for path in paths {
        let Some(owner) = plan.owner_of(path).filter(|o| *o != caller) else { continue };
        blocks.push(Block {
            holder: owner.to_string(),
            target: path.clone(),
            why: format!("it is in {owner}'s slice of run {run}"),
            remedy: format!(
                "leave {path} to {owner} and say in your reply what it needs: the driver hands the conflict to you both in the next round"
            ),
        });
        denials.push(Denial {
            at: now_secs(),
            agent: caller.to_string(),
            holder: owner.to_string(),
            file: path.clone(),
        });
    }
    // Best effort: the log changes no verdict.
    let _ = git_mas::attention::denials::record(store.common_dir(), &denials);
    blocks
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

/// `paths` (relative to `cwd` or absolute) relative to the top of the working tree.
pub fn repo_relative(paths: &[PathBuf], cwd: &Path, workdir: &Path) -> Result<Vec<String>, CliError> {
    let root = std::fs::canonicalize(workdir).unwrap_or(workdir.to_path_buf());
    let mut rel = Vec::new();
    for p in paths {
        let abs = own_ground::resolve(&if p.is_absolute() { p.clone() } else { cwd.join(p) });
        match abs.strip_prefix(&root).or_else(|_| abs.strip_prefix(workdir)) {
            Ok(r) => rel.push(r.to_string_lossy().replace('\\', "/")),
            Err(_) => return Err(CliError::user(format!("{} is outside the repository", p.display()))),
        }
    }
    Ok(rel)
}

/// The outcome a verdict gives.
pub fn outcome(verdict: &Verdict) -> Outcome {
    match verdict {
        Verdict::Allow { .. } => Outcome::Ok,
        Verdict::Block { .. } => Outcome::Blocked,
        Verdict::FailClosed { .. } => Outcome::FailClosed,
    }
}

/// Prints a verdict for people (stderr) and returns its outcome.
pub fn report(ctx: &Context, caller: &str, verdict: &Verdict) -> Outcome {
    ctx.ui().err_text(&verdict_text(ctx, caller, verdict));
    outcome(verdict)
}

/// A verdict for people, as the gate says it on stderr.
pub fn verdict_text(ctx: &Context, caller: &str, verdict: &Verdict) -> String {
    let mut o = String::new();
    match verdict {
        Verdict::Allow { frame, notes } => {
            let whom = if caller.is_empty() { String::new() } else { format!(" for {caller}") };
            let _ = writeln!(o, "git mas gate: allowed{whom} on frame {}", &frame[..frame.len().min(12)]);
            for n in notes {
                let _ = writeln!(o, "  note: {n}");
            }
        }
        Verdict::Block { blocks } => {
            for b in blocks {
                let blocked = ctx.paint("git mas gate: blocked:", "1;31");
                let _ = writeln!(o, "{blocked} {} is held by {} ({})", b.target, b.holder, b.why);
                let _ = writeln!(o, "  {} {}", ctx.paint("remedy:", "1;36"), b.remedy);
            }
        }
        Verdict::FailClosed { reason, remedy } => {
            let _ = writeln!(o, "{} {reason}", ctx.paint("git mas gate: refused (failing closed):", "1;31"));
            let _ = writeln!(o, "  {} {remedy}", ctx.paint("remedy:", "1;36"));
        }
    }
    o
}

/// Replays the gate over `range` ([`replay::replay`]).
pub fn replay(ctx: &Context, range: &[String], require_receipts: bool) -> Result<CheckReport, CliError> {
    let store = ctx.store()?;
    Ok(replay::replay(store, range, require_receipts, &git_mas::devrun::ledger::Ledger::new(store))?)
}

/// Prints the listed commits for people: each on stdout, its verdict on stderr.
pub fn print_listed(ctx: &Context, report: &CheckReport) -> Result<(), CliError> {
    for c in report.listed() {
        ctx.ui().line(&format!("{} {:<10} {}", &c.commit[..12], c.status.as_str(), c.subject))?;
        if matches!(c.status, CheckStatus::Blocked | CheckStatus::Refused) {
            self::report(ctx, c.agent.as_deref().unwrap_or(NO_RECEIPT), &c.verdict);
        }
        if let Some(trail) = c.roster.as_ref().filter(|r| r.listed()) {
            roster_report(ctx, &c.commit, trail);
        }
    }
    Ok(())
}

/// Prints (stderr) why a commit's roster change has no valid trail, and how to sign it.
fn roster_report(ctx: &Context, commit: &str, trail: &RosterTrail) {
    let short = &commit[..commit.len().min(12)];
    let mut o = String::new();
    let head = ctx.paint("git mas check: roster-unsigned:", "1;31");
    let _ = writeln!(o, "{head} {short} changes {ROSTER_PATH} without a valid {TRAIL_TRAILER} trailer");
    for p in &trail.problems {
        let _ = writeln!(o, "  {p}");
    }
    let _ = writeln!(
        o,
        "  {} an agent on the roster before this commit signs it: `git mas --agent NAME agent sign-roster --commit \
         {short}` prints the trailer; add it to the commit's message (`git commit --amend --trailer \"<line>\"` for the \
         last commit, `git rebase -i` otherwise)",
        ctx.paint("remedy:", "1;36")
    );
    ctx.ui().err_text(&o);
}

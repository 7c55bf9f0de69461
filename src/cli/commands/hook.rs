//! `git mas hook <name>`: what the installed git hooks run.
//!
//! - `pre-commit`: runs the gate on the staged change; with `mas.gate=enforce` a block or a
//!   fail-closed verdict aborts the commit; when allowed, leaves a receipt for `commit-msg`.
//! - `commit-msg <file>`: appends `Mas-Agent:` and `Mas-Frame:` trailers when `pre-commit` allowed
//!   this very commit (the receipt is bound to HEAD and the index file's state); plain messages
//!   in-process ([`append_trailers`]), the rest through `git interpret-trailers`. When the staged
//!   tree changes `.mas/roster` (against HEAD's), it also appends the roster's signature trail
//!   ([`git_mas::identity::trail`]) signed by the caller — if the caller is on HEAD's roster with
//!   the key this machine holds, whatever `mas.gate` says (the trail is identity, not the gate);
//!   otherwise it warns that `git mas check` will list the commit. A message that already carries a
//!   `Mas-Roster-Signed` trailer (a person's `git commit --trailer`) is left as it is. `git commit
//!   --amend` of a roster change is measured against HEAD, the commit being amended: a trail from
//!   the first commit stays in the message, and `git mas check` names it `other-change` when the
//!   amend changed the roster again.
//!
//! What a crash leaves: the hook writes only the message file git gives it (whole, in one write,
//! or through `git interpret-trailers --in-place`) and removes the receipt; git aborts a commit
//! whose `commit-msg` hook failed, so a crash leaves no commit and at most a message file git
//! discards.
//! - `pre-push`: replays the gate over the commits being pushed, like `git mas check`.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::{CliError, Kind};
use crate::cli::gating;
use git_mas::attention::gate::Verdict;
use git_mas::attention::gate_io::{self, AGENT_TRAILER, FRAME_TRAILER, RULE_TRAILER};
use git_mas::attention::git_hooks::{HookOutcome, Mode, Receipt, push_ranges};
use git_mas::attention::team;
use git_mas::attention::trailers::{self, TrailerPlan};
use git_mas::identity::trail::{self, TRAIL_TRAILER, Trail};
use git_mas::identity::{AgentKey, ROSTER_PATH};
use std::path::PathBuf;

/// Run a git hook's logic (called by the shims that `git mas hooks install` writes).
#[derive(Debug, clap::Args)]
#[command(hide = true)]
pub struct HookArgs {
    /// The hook: pre-commit, commit-msg or pre-push.
    pub name: String,
    /// The arguments git passed to the hook.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

fn receipt_path(ctx: &Context) -> Result<PathBuf, CliError> {
    Ok(ctx.store()?.repo().git_dir().join("mas-receipt"))
}

/// What binds a receipt to one commit attempt: HEAD and the index file's length and mtime.
fn binding(ctx: &Context) -> Result<String, CliError> {
    let store = ctx.store()?;
    let head = store.repo().head_id().map(|id| id.to_string()).unwrap_or_default();
    let index = store.repo().index_path();
    let stamp =
        std::fs::metadata(&index).ok().map(|m| format!("{}:{:?}", m.len(), m.modified().ok())).unwrap_or_default();
    Ok(format!("{head} {stamp}"))
}

/// Runs `hook`.
pub fn run(ctx: &mut Context, args: HookArgs) -> Result<Outcome, CliError> {
    let mode = gating::mode(ctx)?;
    if mode == Mode::Off && args.name != "commit-msg" {
        return Ok(Outcome::Ok);
    }
    match args.name.as_str() {
        "pre-commit" => pre_commit(ctx, mode),
        "commit-msg" => commit_msg(ctx, mode, args.args.first().map(PathBuf::from)),
        "pre-push" => pre_push(ctx, mode, &args.args),
        other => Err(CliError::usage(format!("unknown hook {other:?}; expected pre-commit, commit-msg or pre-push"))),
    }
}

/// What a hook exits with: the gate's `outcome` unless the mode lets git go on anyway.
fn finish(ctx: &Context, mode: Mode, outcome: Outcome, what: &str) -> Outcome {
    match mode.outcome(outcome != Outcome::Ok) {
        HookOutcome::Proceed => Outcome::Ok,
        HookOutcome::Stop => outcome,
        HookOutcome::ProceedDespite => {
            ctx.warn(&format!("mas.gate is warn: {what} anyway"));
            Outcome::Ok
        }
    }
}

fn pre_commit(ctx: &mut Context, mode: Mode) -> Result<Outcome, CliError> {
    let receipt = receipt_path(ctx)?;
    let _ = std::fs::remove_file(&receipt);
    if team::enabled(ctx.store()?) {
        return team_pre_commit(ctx, mode, &receipt);
    }
    let (caller, outcome) = gating::evaluate(ctx, &[])?;
    let verdict = gate_io::verdict_of(&outcome);
    let code = gating::report(ctx, &caller, &verdict);
    if let Verdict::Allow { frame, .. } = &verdict {
        let text = Receipt { agent: caller, frame: frame.clone(), binding: binding(ctx)?, claims: false }.to_text();
        std::fs::write(&receipt, text)
            .map_err(|e| CliError::with_message(Kind::Internal, format!("cannot write {}", receipt.display()), e))?;
    }
    Ok(finish(ctx, mode, code, "committing"))
}

/// `pre-commit` in team mode: refused when the index holds a file another live agent holds
/// ([`gating::team_commit_gate`]); the receipt names the commit's session (else the principal) and
/// team mode's rule, so `git mas check` replays it by that rule.
fn team_pre_commit(ctx: &Context, mode: Mode, receipt: &std::path::Path) -> Result<Outcome, CliError> {
    let (caller, verdict, _) = gating::team_commit_gate(ctx, &[])?;
    let shown = caller.clone().unwrap_or_else(|| "this commit (its session is not known)".into());
    let code = gating::report(ctx, &shown, &verdict);
    if let Verdict::Allow { frame, .. } = &verdict
        && !frame.is_empty()
        && let Some(agent) =
            caller.or_else(|| git_mas::attention::caller::principal(ctx.store().ok()?).ok().map(|(name, _)| name))
    {
        let text = Receipt { agent, frame: frame.clone(), binding: binding(ctx)?, claims: true }.to_text();
        std::fs::write(receipt, text)
            .map_err(|e| CliError::with_message(Kind::Internal, format!("cannot write {}", receipt.display()), e))?;
    }
    Ok(finish(ctx, mode, code, "committing"))
}

/// The receipt's (agent, frame) when `pre-commit` allowed this very commit attempt.
fn receipt_for_this_attempt(ctx: &Context) -> Result<Option<Receipt>, CliError> {
    let receipt = receipt_path(ctx)?;
    let Ok(text) = std::fs::read_to_string(&receipt) else {
        return Ok(None);
    };
    let _ = std::fs::remove_file(&receipt);
    // A receipt left by another commit attempt adds nothing.
    Ok(Receipt::for_attempt(&text, &binding(ctx)?))
}

/// The roster trail's value for the staged change to `.mas/roster`, signed by the caller; `None`
/// when none is needed or the message already has one, or (with a warning) when the caller
/// cannot sign.
fn roster_trail(ctx: &Context, message: &str) -> Result<Option<String>, CliError> {
    let store = ctx.store()?;
    if !trail::required(store.config_string(trail::CONFIG_KEY).as_deref()) || !trail::trailers_of(message).is_empty() {
        return Ok(None);
    }
    let Some(change) = super::agent::staged_roster_change(ctx)? else {
        return Ok(None);
    };
    if !change.needs_trail() {
        return Ok(None);
    }
    let unsigned = |why: String| {
        ctx.warn(&format!(
            "this commit changes {ROSTER_PATH} but cannot be signed: {why}; `git mas check` will list it as \
             roster-unsigned until an agent on the roster signs it (`git mas --agent NAME agent sign-roster --commit \
             HEAD`, then `git commit --amend --trailer \"<line>\"`)"
        ));
        Ok(None)
    };
    let caller = match ctx.caller_name() {
        Ok((name, _)) => name,
        Err(_) => return unsigned("no agent identity (--agent, GIT_MAS_AGENT or mas.agent)".into()),
    };
    let trusted = change.before.as_ref().ok().and_then(|b| b.iter().find(|(n, _)| *n == caller)).map(|(_, d)| d);
    let Some(did) = trusted else {
        return unsigned(format!("'{caller}' is not on the roster as committed in HEAD"));
    };
    match AgentKey::load(&caller) {
        Ok(key) if key.did() == *did => {
            Ok(Some(Trail::sign(&caller, &key, change.old.as_deref(), change.new.as_deref()).value()))
        }
        Ok(_) => unsigned(format!("the key this machine holds for '{caller}' is not the one HEAD's roster lists")),
        Err(e) => unsigned(e.to_string()),
    }
}

fn commit_msg(ctx: &mut Context, mode: Mode, file: Option<PathBuf>) -> Result<Outcome, CliError> {
    let file = file.ok_or_else(|| CliError::usage("commit-msg needs the message file"))?;
    let receipt = if mode == Mode::Off { None } else { receipt_for_this_attempt(ctx)? };
    let message = std::fs::read_to_string(&file).unwrap_or_default();
    // Signing is a service, not a gate: a failure to sign warns and lets the commit go on
    // (`git mas check` still lists it).
    let roster = roster_trail(ctx, &message).unwrap_or_else(|e| {
        ctx.warn(&format!("cannot sign the change to {ROSTER_PATH}: {}", e.message()));
        None
    });
    let mut trailers: Vec<(&str, &str)> = Vec::new();
    if let Some(r) = &receipt {
        trailers.extend([(AGENT_TRAILER, r.agent.as_str()), (FRAME_TRAILER, r.frame.as_str())]);
        if r.claims {
            trailers.push((RULE_TRAILER, "claims"));
        }
    }
    if let Some(value) = &roster {
        trailers.push((TRAIL_TRAILER, value.as_str()));
    }
    // The plain messages agents write get their trailers here; git decides the rest.
    let store = ctx.store()?;
    let configured = {
        let config = store.repo().config_snapshot();
        let plumbing = config.plumbing();
        plumbing.sections_by_name("trailer").is_some_and(|mut s| s.next().is_some())
            || config.string("core.commentChar").is_some()
            || config.string("core.commentString").is_some()
    };
    let trailers = match trailers::plan(&message, &trailers, configured) {
        TrailerPlan::Nothing => return Ok(Outcome::Ok),
        TrailerPlan::Write(text) => {
            std::fs::write(&file, text)
                .map_err(|e| CliError::with_message(Kind::Internal, format!("cannot write {}", file.display()), e))?;
            return Ok(Outcome::Ok);
        }
        TrailerPlan::Git(trailers) => trailers,
    };
    let workdir = store.workdir()?.to_path_buf();
    let mut args: Vec<std::ffi::OsString> =
        ["interpret-trailers", "--in-place", "--if-exists", "replace"].map(Into::into).to_vec();
    for (key, value) in &trailers {
        args.extend(["--trailer".into(), format!("{key}: {value}").into()]);
    }
    args.push(file.clone().into());
    git_mas::git::Git::new(&workdir)
        .run(&args)
        .map_err(|e| CliError::with_message(Kind::Internal, "cannot add the commit's trailers", e))?;
    Ok(Outcome::Ok)
}

fn pre_push(ctx: &mut Context, mode: Mode, args: &[String]) -> Result<Outcome, CliError> {
    let remote = args.first().cloned().unwrap_or_else(|| "origin".into());
    let mut input = String::new();
    use std::io::Read;
    let _ = std::io::stdin().read_to_string(&mut input);
    let mut worst = Outcome::Ok;
    for range in push_ranges(&input, &remote) {
        let report = gating::replay(ctx, &range, false)?;
        gating::print_listed(ctx, &report)?;
        if !report.clean() {
            worst = Outcome::Blocked;
        }
    }
    Ok(finish(ctx, mode, worst, "pushing"))
}

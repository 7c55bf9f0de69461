//! Reading the run a command names: resolved, with its warnings printed, a half-finished landing
//! completed first; and a run's refusals ([`Refusal`]) as the user sees them, with what to do
//! instead.

use super::context::Context;
use super::error::CliError;
use super::render::{describe_recovery, short};
use git_mas::run::endorse::EndorseError;
use git_mas::run::events::self_endorse_allowed;
use git_mas::run::propose::ProposeError;
use git_mas::run::rules::Refusal;
use git_mas::run::view::{self, RunView};
use git_mas::run::{self, RunMeta};

/// The run a command means, with the roster's warnings printed.
pub fn resolve(ctx: &Context, given: Option<&str>) -> Result<RunMeta, CliError> {
    let store = ctx.store()?;
    let roster = store.roster()?;
    ctx.warn_all(&roster.warnings);
    let mut meta = run::resolve(store, &roster, given)?;
    // A landing that a crash left half-finished is completed before anything reads the run.
    if meta.landing().is_some() {
        match git_mas::pool::land::recover_meta(store, &meta) {
            Ok(r) => {
                if let Some(text) = describe_recovery(&r) {
                    ctx.status(&text);
                }
                if r.changed() || r.state == git_mas::pool::land::RecoveryState::Void {
                    meta = run::load_meta(store, &roster, &meta.def.id)?;
                }
            }
            Err(e) => ctx.warn(&format!("run {}'s landing could not be checked for completion: {e}", meta.def.id)),
        }
    }
    for p in &meta.problems {
        ctx.warn(&format!("{} {}: {}", p.refname, short(&p.commit), p.problem));
    }
    Ok(meta)
}

/// Loads a run whole, printing warnings about records that did not count.
pub fn load_view(ctx: &Context, run: Option<&str>) -> Result<RunView, CliError> {
    let meta = resolve(ctx, run)?;
    let store = ctx.store()?;
    let roster = store.roster()?;
    Ok(view::load(store, &roster, meta, self_endorse_allowed(store))?)
}

impl From<Refusal> for CliError {
    /// A refused proposal or endorsement: a user error with what to do instead, or a usage error
    /// when a flag's value is blank.
    fn from(e: Refusal) -> Self {
        let e = match e {
            Refusal::Ended(run) => return CliError::from(run),
            blank @ (Refusal::EmptyMessage | Refusal::EmptyReason) => return CliError::usage(blank.to_string()),
            other => other,
        };
        let hint = match &e {
            Refusal::Ended(_) | Refusal::EmptyMessage | Refusal::EmptyReason => None,
            Refusal::BudgetExhausted { .. } => {
                Some("land what has a quorum with `git mas land`, or stop the run with `git mas run abort`".to_string())
            }
            Refusal::RoundLimit { .. } => {
                Some("re-propose your current content, land what has a quorum, or abort the run".to_string())
            }
            Refusal::SelfEndorsement { .. } => Some(
                "ask another agent to endorse it, or allow it for this repository with `git config mas.allowSelfEndorse true`"
                    .to_string(),
            ),
            Refusal::EmptyCheck => Some("endorse by review alone with --no-check".to_string()),
            Refusal::NoCheck { .. } => {
                Some("pass --check CMD, set `git config mas.check CMD`, or endorse by review with --no-check".to_string())
            }
            Refusal::NoProposal { proposer, .. } => Some(format!("{proposer} proposes with `git mas propose` in its worktree")),
            Refusal::ProposalRefChanged { proposer, .. } => Some(format!("{proposer} re-proposes with `git mas propose`")),
            Refusal::CallerNotOnRoster { .. }
            | Refusal::NotOnRoster { .. } => None,
        };
        let err = if matches!(e, Refusal::EmptyCheck) {
            CliError::usage(e.to_string())
        } else {
            CliError::user(e.to_string())
        };
        match hint {
            Some(h) => err.hinted(h),
            None => err,
        }
    }
}

impl From<ProposeError> for CliError {
    fn from(e: ProposeError) -> Self {
        match e {
            ProposeError::Refused(r) => CliError::from(r),
            ProposeError::Run(r) => CliError::from(r),
            ProposeError::Pool(p) => CliError::from(p),
            replay @ ProposeError::Replay { .. } => CliError::internal(replay.to_string()),
        }
    }
}

impl From<EndorseError> for CliError {
    fn from(e: EndorseError) -> Self {
        match e {
            EndorseError::Refused(r) => CliError::from(r),
            EndorseError::Run(r) => CliError::from(r),
            EndorseError::Pool(p) => CliError::from(p),
            internal @ (EndorseError::Replay { .. }
            | EndorseError::NotATree { .. }
            | EndorseError::BadTreeId { .. }
            | EndorseError::Output { .. }
            | EndorseError::NotAVerdict) => CliError::internal(internal.to_string()),
        }
    }
}

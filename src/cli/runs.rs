//! Reading the run a command names: resolved, with its warnings printed, a half-finished landing
//! completed first; and a run's refusals ([`Refusal`]) as the user sees them, with what to do
//! instead.

use super::context::Context;
use super::error::CliError;
use super::render::{describe_recovery, short};
use git_mas::devrun::events::self_endorse_allowed;
use git_mas::devrun::view::{self, RunView};
use git_mas::devrun::{self, RunMeta};

/// The run a command means, with the roster's warnings printed.
pub fn resolve(ctx: &Context, given: Option<&str>) -> Result<RunMeta, CliError> {
    let store = ctx.store()?;
    let roster = store.roster()?;
    ctx.warn_all(&roster.warnings);
    let mut meta = devrun::resolve(store, &roster, given)?;
    // A landing that a crash left half-finished is completed before anything reads the run.
    if meta.landing().is_some() {
        match git_mas::ops::land::commit::recover_meta(store, &meta) {
            Ok(r) => {
                if let Some(text) = describe_recovery(&r) {
                    ctx.status(&text);
                }
                if r.changed() || r.state == git_mas::ops::land::commit::RecoveryState::Void {
                    meta = devrun::load_meta(store, &roster, &meta.def.id)?;
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

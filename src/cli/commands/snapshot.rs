//! `git mas snapshot`: compute, publish or verify the saliency snapshot whose hash is the frame.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::inputs::{InputArgs, read_inputs};
use crate::cli::json::snapshot::{PublishOut, SnapshotOut, VerifyOut};
use crate::cli::output::JsonFlag;
use crate::cli::render;
use git_mas::attention::frame::{self, FrameError, Published, Verification};
use git_mas::attention::snapshot::Snapshot;

/// Compute the saliency snapshot of this repository and its frame hash; publish or verify frames.
///
/// The snapshot ranks files and symbols by five signals (task naming, diagnostics, SCIP
/// centrality, recency, editor state); its SHA-256 is the frame every focus refers to. With
/// --publish it is recorded in refs/mas/frame (with every input, so anyone can re-derive it), but
/// only when the hash differs from the current frame. With --verify it recomputes a stored frame
/// from its stored inputs and exits 4, naming the first differing field, unless the hash
/// reproduces exactly.
///
/// With --json: {hash, publish (with --publish): {published: true, commit, previous} |
/// {published: false, reason: "unchanged"}, snapshot: the whole snapshot}; with --verify: {ok,
/// verification: {commit, recorded_hash, stored_snapshot_hash, recomputed_hash,
/// first_difference}}.
#[derive(Debug, clap::Args)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub inputs: InputArgs,
    /// Record the snapshot as the current frame (needs an agent identity).
    #[arg(long, conflicts_with = "verify")]
    pub publish: bool,
    /// Verify a stored frame (default: the current one) instead of computing a new snapshot.
    #[arg(long, value_name = "FRAME", num_args = 0..=1, default_missing_value = "refs/mas/frame")]
    pub verify: Option<String>,
    /// How many top targets to print (human output).
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs `snapshot`.
pub fn run(ctx: &mut Context, args: SnapshotArgs) -> Result<Outcome, CliError> {
    if let Some(rev) = &args.verify {
        return verify(ctx, rev, args.output);
    }
    let caller = if args.publish { Some(ctx.caller()?) } else { None };
    let store = ctx.store()?;
    let files = read_inputs(store, &args.inputs)?;
    let (snapshot, view) = frame::snapshot_now(store, &files)?;
    let hash = snapshot.frame_hash();
    let published = match &caller {
        Some(c) => Some(frame::publish(store, &c.name, &c.key, &snapshot, &view, &files)?),
        None => None,
    };
    if args.output.json {
        let publish = published.map(|p| match p {
            Published::New { commit, previous, .. } => {
                PublishOut::New { commit: commit.to_string(), previous, published: true }
            }
            Published::Unchanged { .. } => PublishOut::Unchanged { published: false, reason: "unchanged".into() },
        });
        let out = SnapshotOut { hash, publish, snapshot };
        ctx.ui().json(&out)?;
        exit_without_freeing(out, view, files);
        return Ok(Outcome::Ok);
    }
    ctx.ui().line(&hash)?;
    ctx.status(&summary(&snapshot));
    if args.top > 0 {
        ctx.ui().out(&render::targets(&snapshot.targets[..args.top.min(snapshot.targets.len())]))?;
    }
    match published {
        Some(Published::New { commit, .. }) => ctx.status(&format!("published frame {hash} as {commit}")),
        Some(Published::Unchanged { .. }) => ctx.status("the current frame already has this hash; nothing published"),
        None => {}
    }
    exit_without_freeing(snapshot, view, files);
    Ok(Outcome::Ok)
}

/// The status line after the hash: how many targets, which sources.
fn summary(snapshot: &Snapshot) -> String {
    format!(
        "{} targets{}; sources: centrality {}, diagnostics [{}], symbols [{}]",
        snapshot.targets.len(),
        if snapshot.truncated > 0 { format!(" ({} more cut at the bound)", snapshot.truncated) } else { String::new() },
        snapshot.sources.centrality.as_deref().unwrap_or("none"),
        snapshot.sources.diagnostics.join(", "),
        snapshot.sources.symbols.join(", "),
    )
}

/// The process ends right after a snapshot: freeing its tens of thousands of small allocations one
/// by one is work nobody needs (it measured several per cent of a snapshot), so they are left to
/// the operating system.
fn exit_without_freeing<A, B, C>(snapshot: A, view: B, files: C) {
    std::mem::forget(snapshot);
    std::mem::forget(view);
    std::mem::forget(files);
}

fn verify(ctx: &mut Context, rev: &str, output: JsonFlag) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let commit = store.resolve_commit(rev)?.ok_or_else(|| {
        if rev == frame::FRAME_REF {
            CliError::from(FrameError::NoFrame)
        } else {
            CliError::user(format!("{rev:?} names no commit"))
        }
    })?;
    let v = frame::verify(store, commit)?;
    let ok = v.ok();
    if output.json {
        ctx.ui().json(&VerifyOut { ok, verification: v })?;
    } else {
        report_verification(ctx, &v)?;
    }
    Ok(if ok { Outcome::Ok } else { Outcome::Unverified })
}

fn report_verification(ctx: &Context, v: &Verification) -> Result<(), CliError> {
    if v.ok() {
        ctx.ui().line(&v.recorded_hash)?;
        ctx.status(&format!("frame {} reproduces exactly from its stored inputs", v.commit));
    } else {
        ctx.ui().line(&v.recomputed_hash)?;
        ctx.warn(&format!(
            "frame {} does not reproduce: recorded {}, recomputed {}; first difference: {}",
            v.commit,
            v.recorded_hash,
            v.recomputed_hash,
            v.first_difference.as_deref().unwrap_or("?")
        ));
    }
    Ok(())
}

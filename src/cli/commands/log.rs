//! `git mas log`: chains and their records, each with its verification verdict.
//!
//! Not every ref under `refs/mas/` is a record chain. A proposal
//! (`refs/mas/runs/<run>/proposals/<agent>`) is an *artifact*: a commit of the agent's tree whose
//! parent is the run's base, so walking its first parents walks the integration branch's history,
//! whose commits hold no record. `log` therefore classifies each ref by the layout
//! (`devrun::artifact::ref_kind`) and lists artifacts as what they are (commit, parent, tree) without verifying
//! them; only chains are verified and counted towards exit 4. Every other ref under `refs/mas/`
//! (frame, focus, journal, run meta, events, report, landed — the landing record, the meta
//! chain's tip — and any shared chain `record append --ref` wrote) is a record chain.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::json::log::{ArtifactOut, LoggedChain, LoggedRecord};
use crate::cli::output::JsonFlag;
use git_mas::devrun::artifact::{RefKind, read_artifact, ref_kind};
use git_mas::identity::{Roster, validate_name};
use git_mas::store::record::Verdict;
use git_mas::store::{REF_PREFIX, Store, owner_of, validate_ref};
use std::fmt::Write as _;

/// Show record chains with each record's verification status.
///
/// With an agent name, shows every chain that agent owns (its journal, focus, run events…); with a
/// full ref under refs/mas/, that chain; with nothing, a summary of every chain. Each record is
/// VERIFIED, or AUTH_REQUIRED (unsigned, parked), SPOOF (signature is not the roster key's),
/// UNKNOWN_PARTICIPANT (agent not on the roster), REPLAY (sequence did not increase), MISPLACED
/// (another agent's record in this chain) or MALFORMED (not a readable record). Exits 4 when any
/// record shown did not verify.
///
/// A proposal ref (refs/mas/runs/<run>/proposals/<agent>) is not a chain but an artifact: a commit
/// of the agent's tree on the run's base. It is listed as ARTIFACT with its commit, parent and
/// tree, never verified, and never makes `log` exit 4 (its endorsements and the proposal event live
/// in the agent's events chain, which is verified). In --json, every entry has "kind": "chain" or
/// "artifact"; an artifact's entry carries "artifact": {"what", "commit", "parent", "tree"}.
///
/// With --json: [{ref, kind, artifact?, records: [{commit, seq, kind, agent, verdict: {status, …},
/// payload}], verified, problems, error}].
#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// An agent name, or a full ref under refs/mas/.
    pub target: Option<String>,
    /// Show at most N records per chain (newest).
    #[arg(short = 'n', long, value_name = "N")]
    pub max_count: Option<usize>,
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs `log`.
pub fn run(ctx: &mut Context, args: LogArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let roster = store.roster()?;
    let chains: Vec<LoggedChain> = refs(store, args.target.as_deref())?
        .into_iter()
        .map(|refname| match ref_kind(&refname) {
            RefKind::Artifact => artifact(store, refname),
            RefKind::Chain => chain(store, &roster, refname, args.max_count),
        })
        .collect();
    let ctx = &*ctx;
    ctx.warn_all(&roster.warnings);
    let problems: usize = chains.iter().map(|c| c.problems).sum();
    if args.output.json {
        ctx.ui().json(&chains)?;
    } else if chains.is_empty() {
        match &args.target {
            None => ctx.status("no chains under refs/mas/ yet"),
            Some(t) => ctx.status(&format!("no chains for {t}")),
        }
    } else if args.target.is_none() {
        ctx.ui().out(&summary(&chains))?;
    } else {
        ctx.ui().out(&records(ctx, &chains))?;
    }
    Ok(if problems > 0 { Outcome::Unverified } else { Outcome::Ok })
}

/// The refs `target` names: one ref, every chain an agent owns, or every ref under refs/mas/.
fn refs(store: &Store, target: Option<&str>) -> Result<Vec<String>, CliError> {
    Ok(match target {
        Some(t) if t.starts_with("refs/") => {
            validate_ref(t)?;
            vec![t.to_string()]
        }
        Some(agent) => {
            validate_name(agent)?;
            store.list(REF_PREFIX)?.into_iter().map(|r| r.name).filter(|name| owner_of(name) == Some(agent)).collect()
        }
        None => store.list(REF_PREFIX)?.into_iter().map(|r| r.name).collect(),
    })
}

/// A record chain, verified, with its newest `max_count` records.
fn chain(store: &Store, roster: &Roster, refname: String, max_count: Option<usize>) -> LoggedChain {
    let entries = match store.verified_chain(&refname, roster) {
        Ok(entries) => entries,
        Err(e) => {
            return LoggedChain {
                refname,
                kind: RefKind::Chain,
                artifact: None,
                records: Vec::new(),
                verified: 0,
                problems: 1,
                error: Some(e.to_string()),
            };
        }
    };
    let verified = entries.iter().filter(|(_, v)| v.is_verified()).count();
    let problems = entries.len() - verified;
    let skip = max_count.map_or(0, |n| entries.len().saturating_sub(n));
    let records = entries
        .into_iter()
        .skip(skip)
        .rev()
        .map(|(e, verdict)| {
            let r = e.record.as_ref().ok();
            LoggedRecord {
                commit: e.commit.to_string(),
                seq: r.map(|r| r.seq),
                kind: r.map(|r| r.kind.clone()),
                agent: r.map(|r| r.agent.clone()),
                verdict,
                payload: r.map(|r| r.payload.clone()),
            }
        })
        .collect();
    LoggedChain { refname, kind: RefKind::Chain, artifact: None, records, verified, problems, error: None }
}

/// An artifact ref: its commit, first parent and tree, without treating it as a record.
fn artifact(store: &Store, refname: String) -> LoggedChain {
    let (artifact, problems, error) = match read_artifact(store, &refname) {
        Ok(a) => (Some(ArtifactOut { what: a.what.into(), commit: a.commit, parent: a.parent, tree: a.tree }), 0, None),
        Err(e) => (None, 1, Some(e.to_string())),
    };
    LoggedChain { refname, kind: RefKind::Artifact, artifact, records: Vec::new(), verified: 0, problems, error }
}

/// One line a ref.
fn summary(chains: &[LoggedChain]) -> String {
    let mut o = String::new();
    for c in chains {
        let _ = match (&c.error, &c.artifact) {
            (Some(err), _) => writeln!(o, "{:<48} UNREADABLE: {err}", c.refname),
            (None, Some(a)) => writeln!(o, "{:<48} {}", c.refname, artifact_line(a)),
            (None, None) => {
                writeln!(o, "{:<48} {:>5} records  {:>5} problems", c.refname, c.verified + c.problems, c.problems)
            }
        };
    }
    o
}

/// Every ref with its records, one line a record.
fn records(ctx: &Context, chains: &[LoggedChain]) -> String {
    let mut o = String::new();
    for c in chains {
        let _ = writeln!(o, "{}", ctx.paint(&c.refname, "1"));
        if let Some(err) = &c.error {
            let _ = writeln!(o, "  UNREADABLE: {err}");
        }
        if let Some(a) = &c.artifact {
            let _ = writeln!(o, "  {}", artifact_line(a));
        }
        for r in &c.records {
            let label = r.verdict.label();
            let painted = if r.verdict.is_verified() { ctx.paint(label, "32") } else { ctx.paint(label, "31") };
            let seq = r.seq.map_or("?".to_string(), |s| s.to_string());
            let detail = match &r.verdict {
                Verdict::Replay { seq, last } => format!(" (seq {seq} after {last})"),
                Verdict::Misplaced { owner } => format!(" (chain belongs to {owner})"),
                Verdict::Malformed { reason } => format!(" ({reason})"),
                _ => String::new(),
            };
            let payload = r.payload.as_ref().map(|p| p.to_string()).unwrap_or_default();
            let _ = writeln!(
                o,
                "  {} #{seq:<4} {:<8} {:<12} {painted}{detail}  {payload}",
                &r.commit[..12],
                r.kind.as_deref().unwrap_or("?"),
                r.agent.as_deref().unwrap_or("?"),
            );
        }
    }
    o
}

fn artifact_line(a: &ArtifactOut) -> String {
    let short = |id: &Option<String>| id.as_deref().map_or("none".to_string(), |s| s[..s.len().min(12)].to_string());
    format!(
        "ARTIFACT ({}: commit {} on {}, tree {}; not a record chain)",
        a.what,
        &a.commit[..a.commit.len().min(12)],
        short(&a.parent),
        short(&a.tree)
    )
}

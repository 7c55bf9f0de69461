//! `git mas log`: chains and their records, each with its verification verdict.
//!
//! Not every ref under `refs/mas/` is a record chain. A proposal
//! (`refs/mas/runs/<run>/proposals/<agent>`) is an *artifact*: a commit of the agent's tree whose
//! parent is the run's base, so walking its first parents walks the integration branch's history,
//! whose commits hold no record. `log` therefore classifies each ref by the layout
//! ([`ref_kind`]) and lists artifacts as what they are (commit, parent, tree) without verifying
//! them; only chains are verified and counted towards exit 4. Every other ref under `refs/mas/`
//! (frame, focus, journal, run meta, events, report, landed — the landing record, the meta
//! chain's tip — and any shared chain `record append --ref` wrote) is a record chain.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::exit;
use crate::cli::output::print_json;
use git_mas::identity::validate_name;
use git_mas::run::RUNS_PREFIX;
use git_mas::store::record::Verdict;
use git_mas::store::{REF_PREFIX, Store, owner_of, validate_ref};
use std::process::ExitCode;

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
#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// An agent name, or a full ref under refs/mas/.
    pub target: Option<String>,
    /// Show at most N records per chain (newest).
    #[arg(short = 'n', long, value_name = "N")]
    pub max_count: Option<usize>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct LoggedRecord {
    commit: String,
    seq: Option<u64>,
    kind: Option<String>,
    agent: Option<String>,
    verdict: Verdict,
    payload: Option<serde_json::Value>,
}

/// What a ref under `refs/mas/` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum RefKind {
    /// An append-only chain of signed records.
    Chain,
    /// A commit that is not a record (its history is the project's, not a chain).
    Artifact,
}

/// Classifies a ref by the layout: proposals are artifacts, everything else is a record chain.
fn ref_kind(refname: &str) -> RefKind {
    let Some(rest) = refname.strip_prefix(RUNS_PREFIX) else { return RefKind::Chain };
    match rest.split('/').collect::<Vec<_>>().as_slice() {
        [run, "proposals", agent] if !run.is_empty() && !agent.is_empty() => RefKind::Artifact,
        _ => RefKind::Chain,
    }
}

#[derive(serde::Serialize)]
struct ArtifactInfo {
    /// What kind of artifact (today always "proposal").
    what: &'static str,
    commit: String,
    parent: Option<String>,
    tree: Option<String>,
}

#[derive(serde::Serialize)]
struct LoggedChain {
    #[serde(rename = "ref")]
    refname: String,
    kind: RefKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    artifact: Option<ArtifactInfo>,
    records: Vec<LoggedRecord>,
    verified: usize,
    problems: usize,
    error: Option<String>,
}

/// Runs `log`.
pub fn run(ctx: &mut Context, args: LogArgs) -> Result<ExitCode, CliError> {
    let store = ctx.store()?;
    let roster = store.roster()?;
    let refs: Vec<String> = match &args.target {
        Some(t) if t.starts_with("refs/") => {
            validate_ref(t)?;
            vec![t.clone()]
        }
        Some(agent) => {
            validate_name(agent)?;
            store
                .list(REF_PREFIX)?
                .into_iter()
                .map(|r| r.name)
                .filter(|name| owner_of(name) == Some(agent.as_str()))
                .collect()
        }
        None => store.list(REF_PREFIX)?.into_iter().map(|r| r.name).collect(),
    };
    let mut chains = Vec::new();
    for refname in refs {
        if ref_kind(&refname) == RefKind::Artifact {
            chains.push(artifact(store, refname));
            continue;
        }
        match store.verified_chain(&refname, &roster) {
            Ok(entries) => {
                let verified = entries.iter().filter(|(_, v)| v.is_verified()).count();
                let problems = entries.len() - verified;
                let skip = args.max_count.map_or(0, |n| entries.len().saturating_sub(n));
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
                chains.push(LoggedChain {
                    refname,
                    kind: RefKind::Chain,
                    artifact: None,
                    records,
                    verified,
                    problems,
                    error: None,
                });
            }
            Err(e) => chains.push(LoggedChain {
                refname,
                kind: RefKind::Chain,
                artifact: None,
                records: Vec::new(),
                verified: 0,
                problems: 1,
                error: Some(e.to_string()),
            }),
        }
    }
    let ctx = &*ctx;
    ctx.warn_all(&roster.warnings);
    let problems: usize = chains.iter().map(|c| c.problems).sum();
    if args.json {
        print_json(&chains)?;
    } else if args.target.is_none() {
        if chains.is_empty() {
            ctx.status("no chains under refs/mas/ yet");
        }
        for c in &chains {
            match (&c.error, &c.artifact) {
                (Some(err), _) => println!("{:<48} UNREADABLE: {err}", c.refname),
                (None, Some(a)) => println!("{:<48} {}", c.refname, artifact_line(a)),
                (None, None) => {
                    println!("{:<48} {:>5} records  {:>5} problems", c.refname, c.verified + c.problems, c.problems)
                }
            }
        }
    } else {
        if chains.is_empty() {
            ctx.status(&format!("no chains for {}", args.target.as_deref().unwrap_or("")));
        }
        for c in &chains {
            println!("{}", ctx.paint(&c.refname, "1"));
            if let Some(err) = &c.error {
                println!("  UNREADABLE: {err}");
            }
            if let Some(a) = &c.artifact {
                println!("  {}", artifact_line(a));
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
                println!(
                    "  {} #{seq:<4} {:<8} {:<12} {painted}{detail}  {payload}",
                    &r.commit[..12],
                    r.kind.as_deref().unwrap_or("?"),
                    r.agent.as_deref().unwrap_or("?"),
                );
            }
        }
    }
    Ok(ExitCode::from(if problems > 0 { exit::UNVERIFIED } else { exit::OK }))
}

/// Reads an artifact ref: its commit, first parent and tree, without treating it as a record.
fn artifact(store: &Store, refname: String) -> LoggedChain {
    let read = || -> Result<ArtifactInfo, String> {
        let tip = store.tip(&refname).map_err(|e| e.to_string())?.ok_or_else(|| "the ref vanished".to_string())?;
        let commit = store.repo().find_commit(tip).map_err(|e| format!("cannot read commit {tip}: {e}"))?;
        let parent = commit.parent_ids().next().map(|id| id.to_string());
        let tree = commit.tree_id().ok().map(|id| id.to_string());
        Ok(ArtifactInfo { what: "proposal", commit: tip.to_string(), parent, tree })
    };
    let (artifact, problems, error) = match read() {
        Ok(a) => (Some(a), 0, None),
        Err(e) => (None, 1, Some(e)),
    };
    LoggedChain { refname, kind: RefKind::Artifact, artifact, records: Vec::new(), verified: 0, problems, error }
}

fn artifact_line(a: &ArtifactInfo) -> String {
    let short = |id: &Option<String>| id.as_deref().map_or("none".to_string(), |s| s[..s.len().min(12)].to_string());
    format!(
        "ARTIFACT ({}: commit {} on {}, tree {}; not a record chain)",
        a.what,
        &a.commit[..a.commit.len().min(12)],
        short(&a.parent),
        short(&a.tree)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proposals_are_artifacts_and_everything_else_is_a_chain() {
        let table = [
            ("refs/mas/runs/r1/proposals/alice", RefKind::Artifact),
            ("refs/mas/runs/r1/events/alice", RefKind::Chain),
            ("refs/mas/runs/r1/meta", RefKind::Chain),
            ("refs/mas/runs/r1/landed", RefKind::Chain),
            ("refs/mas/runs/r1/report", RefKind::Chain),
            ("refs/mas/runs/proposals/x", RefKind::Chain),
            ("refs/mas/runs/r1/proposals/alice/extra", RefKind::Chain),
            ("refs/mas/frame", RefKind::Chain),
            ("refs/mas/focus/alice", RefKind::Chain),
            ("refs/mas/journal/alice", RefKind::Chain),
            ("refs/mas/shared/proposals/x", RefKind::Chain),
        ];
        for (name, kind) in table {
            assert_eq!(ref_kind(name), kind, "{name}");
        }
    }
}

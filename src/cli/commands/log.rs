//! `git mas log`: chains and their records, each with its verification verdict.

use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::exit;
use crate::cli::output::print_json;
use git_mas::identity::validate_name;
use git_mas::store::record::Verdict;
use git_mas::store::{REF_PREFIX, owner_of, validate_ref};
use std::process::ExitCode;

/// Show record chains with each record's verification status.
///
/// With an agent name, shows every chain that agent owns (its journal, focus, run events…); with a
/// full ref under refs/mas/, that chain; with nothing, a summary of every chain. Each record is
/// VERIFIED, or AUTH_REQUIRED (unsigned, parked), SPOOF (signature is not the roster key's),
/// UNKNOWN_PARTICIPANT (agent not on the roster), REPLAY (sequence did not increase), MISPLACED
/// (another agent's record in this chain) or MALFORMED (not a readable record). Exits 4 when any
/// record shown did not verify.
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

#[derive(serde::Serialize)]
struct LoggedChain {
    #[serde(rename = "ref")]
    refname: String,
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
                chains.push(LoggedChain { refname, records, verified, problems, error: None });
            }
            Err(e) => chains.push(LoggedChain {
                refname,
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
            match &c.error {
                Some(err) => println!("{:<48} UNREADABLE: {err}", c.refname),
                None => {
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

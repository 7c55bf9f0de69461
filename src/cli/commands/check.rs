//! `git mas check <range>`: replay the gate over commits, as CI does after the fact.
//!
//! A hook can be bypassed (`--no-verify`) or never installed; the board's history in `refs/mas`
//! cannot. For each commit the check rebuilds the board as it stood at the commit's time (records
//! published up to then, leases judged at that time), on the frame its receipt names — or, without
//! a receipt, the frame current at that time — and asks the same gate. A commit without a receipt is
//! judged as if its author held a valid focus, so only other agents' holds can flag it.
//!
//! `--records` adds what no gate sees: records in `refs/mas/` that do not verify (pushed with plain
//! git, without a key). Readers never apply them, but their presence means someone with push access
//! wrote outside the protocol, which CI should flag. It is opt-in because such a record stays in its
//! chain for good (chains are append-only and fast-forward only): failing every check by default
//! would let one push fail every later CI run.

use crate::cli::commands::gate::report;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::exit;
use crate::cli::output::print_json;
use git_mas::attention::board::{self, BoardEntry, ChainRecords, Liveness};
use git_mas::attention::focus_store::FOCUS_PREFIX;
use git_mas::attention::frame::{FRAME_REF, Frame, read_frame};
use git_mas::attention::gate::Verdict;
use git_mas::attention::gate_io::{decide_on, receipt_of, symbol_files};
use git_mas::attention::rule::Focus;
use git_mas::attention::touched;
use git_mas::sync::{Parked, parked_records};
use std::collections::BTreeMap;
use std::process::{Command, ExitCode};

/// Replay the gate for every commit in a range and list the commits it would have refused.
///
/// RANGE is anything `git rev-list` takes (`origin/main..HEAD`, `A..B`, a single commit's
/// ancestry). Each commit is judged against the board as it stood at the commit's time, on the
/// frame its receipt (Mas-Agent / Mas-Frame trailers) names. With --require-receipts, commits
/// without a valid receipt are listed too. Exits 6 when any commit is listed, 0 when the range is
/// clean.
///
/// With --records, also lists every record in refs/mas/ that does not verify (unsigned, unknown
/// agent, spoofed, replayed, misplaced, malformed), per ref with its verdict, and exits 6 when there
/// is any: such records are never applied, but someone who can push wrote them. RANGE may then be
/// left out. Proposal refs (artifacts, not record chains) are not read.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The revision range.
    #[arg(required_unless_present = "records", num_args = 1..)]
    pub range: Vec<String>,
    /// Also list records in refs/mas/ that do not verify.
    #[arg(long)]
    pub records: bool,
    /// Also list commits without a valid receipt.
    #[arg(long)]
    pub require_receipts: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// One commit's result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Checked {
    /// The commit.
    pub commit: String,
    /// Its subject line.
    pub subject: String,
    /// The agent its receipt names.
    pub agent: Option<String>,
    /// The frame it was judged on.
    pub frame: Option<String>,
    /// Whether it carries a valid receipt.
    pub receipt: bool,
    /// The replayed verdict.
    pub verdict: Verdict,
    /// `ok`, `blocked`, `refused` or `no-receipt`.
    pub status: String,
}

/// The whole range.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CheckReport {
    /// Commits, oldest first.
    pub commits: Vec<Checked>,
}

impl CheckReport {
    /// Whether no commit is listed.
    pub fn clean(&self) -> bool {
        self.commits.iter().all(|c| c.status == "ok")
    }
}

fn git_out(dir: &std::path::Path, args: &[String]) -> Result<String, CliError> {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .map_err(|e| CliError::internal(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(CliError::user(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn published_at(record: &Result<git_mas::store::record::Record, String>) -> u64 {
    record.as_ref().ok().and_then(|r| r.payload.get("published_at")?.as_u64()).unwrap_or(0)
}

/// Replays the gate over `range`.
pub fn check_range(ctx: &mut Context, range: &[String], require_receipts: bool) -> Result<CheckReport, CliError> {
    let store = ctx.store()?;
    let workdir = store.workdir()?.to_path_buf();
    let roster = store.roster()?;
    let mut args = vec!["rev-list".to_string(), "--reverse".to_string()];
    args.extend(range.iter().cloned());
    let commits: Vec<String> = git_out(&workdir, &args)?.lines().map(String::from).collect();

    // Frames, oldest first, with their record times.
    let mut frames: Vec<(i64, Frame)> = Vec::new();
    for entry in store.walk(FRAME_REF, usize::MAX)?.into_iter().rev() {
        let time = store.repo().find_commit(entry.commit).ok().and_then(|c| c.time().ok()).map_or(0, |t| t.seconds);
        if let Ok(f) = read_frame(store, entry.commit) {
            frames.push((time, f));
        }
    }
    let by_hash: BTreeMap<String, &Frame> = frames.iter().map(|(_, f)| (f.hash.clone(), f)).collect();
    // Every focus chain, verified once.
    let mut chains: Vec<(String, ChainRecords)> = Vec::new();
    for info in store.list(FOCUS_PREFIX)? {
        let Some(agent) = git_mas::store::owner_of(&info.name) else { continue };
        let records = store
            .verified_chain(&info.name, &roster)?
            .into_iter()
            .map(|(e, v)| (e.commit.to_string(), e.record.map_err(|err| err.to_string()), v))
            .collect();
        chains.push((agent.to_string(), records));
    }

    let mut out = Vec::new();
    for commit in commits {
        let id = gix::ObjectId::from_hex(commit.as_bytes()).map_err(|e| CliError::internal(e.to_string()))?;
        let c = store.repo().find_commit(id).map_err(|e| CliError::internal(e.to_string()))?;
        // The author time: when the change was committed and gated; a rebase keeps it.
        let time = c.author().ok().and_then(|a| a.time().ok()).map_or(0, |t| t.seconds);
        let message = c.message_raw().map(|m| String::from_utf8_lossy(m).into_owned()).unwrap_or_default();
        let subject = message.lines().next().unwrap_or("").to_string();
        let parent = c.parent_ids().next().map(|p| p.to_string());
        let receipt = receipt_of(&message);
        let receipt_valid =
            receipt.as_ref().is_some_and(|(agent, frame)| roster.get(agent).is_some() && by_hash.contains_key(frame));
        let frame: Option<&Frame> = match &receipt {
            Some((_, h)) if by_hash.contains_key(h) => by_hash.get(h).copied(),
            _ => frames.iter().rev().find(|(t, _)| *t <= time).map(|(_, f)| f),
        };
        let t = u64::try_from(time).unwrap_or(0);
        let past: Vec<(String, ChainRecords)> = chains
            .iter()
            .map(|(a, recs)| (a.clone(), recs.iter().filter(|r| published_at(&r.1) <= t).cloned().collect()))
            .collect();
        let ids: Option<(String, std::collections::BTreeSet<&str>)> =
            frame.map(|f| (f.hash.clone(), f.snapshot.targets.iter().map(|t| t.id.as_str()).collect()));
        let in_frame = |hash: &str, target: &str| -> Option<bool> {
            let (h, set) = ids.as_ref()?;
            (h == hash).then(|| target.is_empty() || set.contains(target))
        };
        let mut board = board::fold(&past, t, &in_frame);
        let caller = match &receipt {
            Some((agent, _)) => agent.clone(),
            None => {
                // No receipt: judge only other agents' holds.
                let synthetic = "(no receipt)".to_string();
                if let Some(f) = frame {
                    board.entries.push(BoardEntry {
                        focus: Focus { agent: synthetic.clone(), frame: f.hash.clone(), seq: 0, targets: Vec::new() },
                        liveness: Liveness::Live,
                        expires_at: u64::MAX,
                        commit: String::new(),
                    });
                }
                synthetic
            }
        };
        let paths = touched::commit_paths(&workdir, &commit).map_err(|e| CliError::internal(e.to_string()))?;
        let empty_tree = gix::ObjectId::empty_tree(store.repo().object_hash()).to_string();
        let base = parent.unwrap_or(empty_tree);
        let touched =
            touched::touched(&workdir, paths, &symbol_files(&board), &["diff", base.as_str(), commit.as_str()]);
        let verdict = decide_on(&caller, frame, &board, &touched);
        let status = match (&verdict, receipt_valid) {
            (Verdict::Block { .. }, _) => "blocked",
            (Verdict::FailClosed { .. }, _) => "refused",
            (_, false) if require_receipts => "no-receipt",
            _ => "ok",
        };
        out.push(Checked {
            commit,
            subject,
            agent: receipt.as_ref().map(|(a, _)| a.clone()),
            frame: frame.map(|f| f.hash.clone()),
            receipt: receipt_valid,
            verdict,
            status: status.to_string(),
        });
    }
    Ok(CheckReport { commits: out })
}

/// Prints the listed commits for people.
pub fn print_human(ctx: &Context, report_: &CheckReport) {
    for c in report_.commits.iter().filter(|c| c.status != "ok") {
        println!("{} {:<10} {}", &c.commit[..12], c.status, c.subject);
        if c.status != "no-receipt" {
            report(ctx, c.agent.as_deref().unwrap_or("(no receipt)"), &c.verdict);
        }
    }
}

/// What `check` prints with `--json`: the range's commits and, with `--records`, the records that
/// do not verify.
#[derive(Debug, serde::Serialize)]
struct CheckOutput<'a> {
    #[serde(flatten)]
    report: &'a CheckReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    unverified: Option<&'a [Parked]>,
}

/// Runs `check`.
pub fn run(ctx: &mut Context, args: CheckArgs) -> Result<ExitCode, CliError> {
    let report_ = if args.range.is_empty() {
        CheckReport { commits: Vec::new() }
    } else {
        check_range(ctx, &args.range, args.require_receipts)?
    };
    let unverified = if args.records {
        let store = ctx.store()?;
        Some(parked_records(store, &store.roster()?)?)
    } else {
        None
    };
    if args.json {
        print_json(&CheckOutput { report: &report_, unverified: unverified.as_deref() })?;
    } else {
        print_human(ctx, &report_);
        for p in unverified.iter().flatten() {
            let claims = p.agent.as_deref().map(|a| format!(" (claims {a})")).unwrap_or_default();
            println!("{} {:<19} {}{claims}", &p.commit[..12], p.verdict.label(), p.refname);
        }
        let listed = report_.commits.iter().filter(|c| c.status != "ok").count();
        if !args.range.is_empty() {
            ctx.status(&format!("{} commits checked, {listed} listed", report_.commits.len()));
        }
        if let Some(u) = &unverified {
            ctx.status(&format!("{} record(s) in refs/mas/ do not verify", u.len()));
        }
    }
    let clean = report_.clean() && unverified.as_ref().is_none_or(|u| u.is_empty());
    Ok(ExitCode::from(if clean { exit::OK } else { exit::BLOCKED }))
}

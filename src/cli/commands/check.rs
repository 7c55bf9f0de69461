//! `git mas check <range>`: replay the gate over commits, as CI does after the fact
//! ([`git_mas::attention::replay`] explains how each commit is judged).
//!
//! `--records` adds what no gate sees: records in `refs/mas/` that do not verify (pushed with plain
//! git, without a key). Readers never apply them, but their presence means someone with push access
//! wrote outside the protocol, which CI should flag. It is opt-in because such a record stays in its
//! chain for good (chains are append-only and fast-forward only): failing every check by default
//! would let one push fail every later CI run.

use crate::cli::Outcome;
use crate::cli::context::Context;
use crate::cli::error::CliError;
use crate::cli::gating;
use crate::cli::json::check::CheckOut;
use crate::cli::output::JsonFlag;
use git_mas::attention::damage;
use git_mas::attention::replay::CheckReport;
use git_mas::sync::{Parked, parked_records};
use std::fmt::Write as _;

/// Replay the gate for every commit in a range and list the commits it would have refused.
///
/// RANGE is anything `git rev-list` takes (`origin/main..HEAD`, `A..B`, a single commit's
/// ancestry). Each commit is judged against the board as it stood at the commit's time, on the
/// frame its receipt (Mas-Agent / Mas-Frame trailers) names. With --require-receipts, commits
/// without a valid receipt are listed too. Exits 6 when any commit is listed, 0 when the range is
/// clean.
///
/// A commit that changes .mas/roster is listed as roster-unsigned unless it carries a valid
/// `Mas-Roster-Signed: <agent> <old blob> <new blob> <signature>` trailer: <agent> on the roster
/// as it stood in the commit's first parent, its ed25519 signature over `git-mas roster v1 <old
/// blob> <new blob>` under that roster's key. Each invalid trailer is named: missing, malformed,
/// not-on-roster, self-added (the agent this change adds), self-rekeyed (signed with the key this
/// change gives), other-change (signed for other blobs: amended or rebased), wrong-key,
/// unreadable-roster. The first roster (the parent has none, or none with entries) needs no
/// trailer. The commit-msg hook signs for the committing agent; `git mas agent sign-roster`
/// prints the trailer by hand. `git config mas.rosterTrail off` turns this off.
///
/// With --records, also lists every record in refs/mas/ that does not verify (unsigned, unknown
/// agent, spoofed, replayed, misplaced, malformed), per ref with its verdict, and exits 6 when there
/// is any: such records are never applied, but someone who can push wrote them. RANGE may then be
/// left out. Proposal refs (artifacts, not record chains) are not read.
///
/// A focus chain that lost an object (`git gc --prune=now` beside a writer) does not fail the
/// check: it is named on stderr (in --json, `damaged_chains`), and each commit is judged on what
/// can be read of it — what it held at the commit's time is listed as held by it, naming the chain
/// and `git mas doctor --fix`; while a lost record may have been its newest, another agent's
/// commit may touch only the files its author held itself. Other commits pass.
///
/// With --json: {commits: [{commit, subject, agent, frame, receipt, verdict, status: ok | blocked
/// | refused | roster-unsigned | no-receipt, roster (when it changes .mas/roster): {old, new,
/// status: first-roster | signed | off | unsigned, signed_by, problems: [{problem, agent, ...}]}}],
/// unverified (with --records): [{ref, commit, verdict, agent, kind, seq, tip}], damaged_chains: [{agent,
/// refname, record, missing, part, newest_known}]}.
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
    #[command(flatten)]
    pub output: JsonFlag,
}

/// Runs `check`.
pub fn run(ctx: &mut Context, args: CheckArgs) -> Result<Outcome, CliError> {
    let report = if args.range.is_empty() {
        CheckReport::default()
    } else {
        gating::replay(ctx, &args.range, args.require_receipts)?
    };
    let unverified = if args.records {
        let store = ctx.store()?;
        Some(parked_records(store, &store.roster()?)?)
    } else {
        None
    };
    let clean = report.clean() && unverified.as_ref().is_none_or(|u| u.is_empty());
    if args.output.json {
        ctx.ui().json(&CheckOut { commits: report.commits, damaged_chains: report.damaged, unverified })?;
    } else {
        for d in &report.damaged {
            let head = ctx.paint("git mas check:", "1;31");
            ctx.status(&format!(
                "{head} {}'s {}; commits are judged on what can be read of it, and only what it may have held is \
                 listed; `git mas doctor --fix` repairs it",
                d.agent,
                damage::describe(d).trim_start_matches("its ")
            ));
        }
        gating::print_listed(ctx, &report)?;
        ctx.ui().out(&unverified_text(unverified.as_deref().unwrap_or_default()))?;
        if !args.range.is_empty() {
            let listed = report.listed().count();
            ctx.status(&format!("{} commits checked, {listed} listed", report.commits.len()));
        }
        if let Some(u) = &unverified {
            ctx.status(&format!("{} record(s) in refs/mas/ do not verify", u.len()));
        }
    }
    Ok(if clean { Outcome::Ok } else { Outcome::Blocked })
}

fn unverified_text(parked: &[Parked]) -> String {
    let mut o = String::new();
    for p in parked {
        let claims = p.agent.as_deref().map(|a| format!(" (claims {a})")).unwrap_or_default();
        let _ = writeln!(o, "{} {:<19} {}{claims}", &p.commit[..12], p.verdict.label(), p.refname);
    }
    o
}

//! Replaying the gate over commits after the fact, as CI does (`git mas check`, the `pre-push`
//! hook).
//!
//! A hook can be bypassed (`--no-verify`) or never installed; the board's history in `refs/mas`
//! cannot. For each commit the replay rebuilds the board as it stood at the commit's author time
//! (records published up to then, leases judged at that time), on the frame its receipt names —
//! or, without a receipt, the frame current at that time — and asks the same gate. A commit
//! without a receipt is judged as if its author held a valid focus, so only other agents' holds
//! can flag it.
//!
//! **A damaged focus chain** (one that lost an object, [`crate::store::damage`]) no longer fails
//! the whole replay. It is folded from every record of it that can be read, and each commit is
//! judged as the gate judges a damaged chain ([`super::damage`]): what the chain is known to hold
//! at the commit's time stays refused, the block naming the chain and `git mas doctor --fix`.
//! What it held cannot be known while a lost record may have been its newest — from the
//! publication of the readable record below the lost one (from the start when none can be read:
//! a lost commit hides everything below it) until that of the readable record above it (until
//! now when there is none) — and at such times a commit of another agent may touch only files
//! its author held itself then ([`newest_known_at`]); every other file is listed, naming the
//! chain. The damaged chain's own agent's commits are judged on the other agents' holds alone:
//! its own lost record cannot have held a file against itself. The damaged chains are listed in
//! the report, so the check names them even when no commit is listed.
//!
//! A commit that changes `.mas/roster` is also judged on its signature trail
//! ([`crate::identity::trail`]): without a valid one it is listed as `roster-unsigned` (unless the
//! gate already lists it as blocked or refused; its `roster` field says either way).

use super::board::{self, Board, BoardEntry, ChainRecords, DamagedChain, Liveness};
use super::claims;
use super::focus_store::FOCUS_PREFIX;
use super::frame::{FRAME_REF, Frame, read_frame};
use super::gate::Verdict;
use super::gate_io::{claims_rule, decide_on, receipt_of, symbol_files};
use super::rule::Focus;
use super::run_end::{self, RunLedger};
use super::touched::{self, TouchedError};
use crate::identity::Roster;
use crate::identity::trail::{self, RosterTrail};
use crate::store::{Store, StoreError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

/// The agent a commit without a receipt is judged as.
pub const NO_RECEIPT: &str = "(no receipt)";

/// Why a range could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// git could not be started.
    #[error("cannot run git: {detail}")]
    Spawn {
        /// Why.
        detail: String,
    },
    /// git refused the range (`git rev-list` failed).
    #[error("git {args} failed: {detail}")]
    Range {
        /// The arguments git was given.
        args: String,
        /// What git said.
        detail: String,
    },
    /// A listed commit could not be read.
    #[error("cannot read commit {commit}: {detail}")]
    Commit {
        /// The commit.
        commit: String,
        /// Why.
        detail: String,
    },
    /// A commit's change could not be read.
    #[error(transparent)]
    Touched(#[from] TouchedError),
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How a replayed commit is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckStatus {
    /// Not listed.
    Ok,
    /// Another agent held a target it touches.
    Blocked,
    /// The gate would have failed closed.
    Refused,
    /// Allowed, but without a valid receipt (listed only when receipts are required).
    NoReceipt,
    /// Changes `.mas/roster` without a valid `Mas-Roster-Signed` trail.
    RosterUnsigned,
}

impl CheckStatus {
    /// The status's name, as `--json` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Ok => "ok",
            CheckStatus::Blocked => "blocked",
            CheckStatus::Refused => "refused",
            CheckStatus::NoReceipt => "no-receipt",
            CheckStatus::RosterUnsigned => "roster-unsigned",
        }
    }

    /// The status of a commit the gate judged `verdict`, with a valid receipt or not, and with a
    /// roster change that lacks a valid trail (`roster_unsigned`) or not. The gate's verdict comes
    /// first, then the roster's trail, then the receipt.
    pub fn of(verdict: &Verdict, receipt_valid: bool, require_receipts: bool, roster_unsigned: bool) -> CheckStatus {
        match (verdict, receipt_valid) {
            (Verdict::Block { .. }, _) => CheckStatus::Blocked,
            (Verdict::FailClosed { .. }, _) => CheckStatus::Refused,
            _ if roster_unsigned => CheckStatus::RosterUnsigned,
            (_, false) if require_receipts => CheckStatus::NoReceipt,
            _ => CheckStatus::Ok,
        }
    }
}

/// One commit's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// How it is listed.
    pub status: CheckStatus,
    /// When it changes `.mas/roster`: the change and its signature trail's judgment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roster: Option<RosterTrail>,
}

/// The whole range.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    /// Commits, oldest first.
    pub commits: Vec<Checked>,
    /// The focus chains that lost an object, as found at their tips (`newest_known`: whether the
    /// tip's record can be read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub damaged: Vec<DamagedChain>,
}

impl CheckReport {
    /// Whether no commit is listed.
    pub fn clean(&self) -> bool {
        self.commits.iter().all(|c| c.status == CheckStatus::Ok)
    }

    /// The listed commits.
    pub fn listed(&self) -> impl Iterator<Item = &Checked> {
        self.commits.iter().filter(|c| c.status != CheckStatus::Ok)
    }
}

/// The frame a commit is judged on: the (newest) one its receipt names when that frame is known,
/// else the newest frame published at or before the commit's time. `frames` are (record time, hash),
/// oldest first; the answer is an index into them.
pub fn frame_for(frames: &[(i64, &str)], receipt_frame: Option<&str>, time: i64) -> Option<usize> {
    if let Some(i) = receipt_frame.and_then(|h| frames.iter().rposition(|(_, f)| *f == h)) {
        return Some(i);
    }
    frames.iter().rposition(|(t, _)| *t <= time)
}

/// When a record says it was published (0 when it cannot say).
fn published_at(r: &Result<crate::store::record::Record, String>) -> u64 {
    r.as_ref().ok().and_then(|r| r.payload.get("published_at")?.as_u64()).unwrap_or(0)
}

/// The focus chains cut at time `t`: only records published up to then.
pub fn chains_at(chains: &[(String, ChainRecords)], t: u64) -> Vec<(String, ChainRecords)> {
    chains
        .iter()
        .map(|(a, recs)| (a.clone(), recs.iter().filter(|r| published_at(&r.1) <= t).cloned().collect()))
        .collect()
}

/// A time span, in seconds: from (inclusive), until (exclusive; `None`: no end).
pub type Span = (u64, Option<u64>);

/// The times during which a damaged chain's lost records may each have been its newest: for a
/// chain whose readable records (oldest first) were published at `published`, and whose breaks
/// lie above `below` of them each, the span from the publication of the readable record just
/// below the break (0 when there is none) until that of the one just above it (`None` when there
/// is none: the lost record may still be the newest).
pub fn unknown_spans(published: &[u64], below: &[usize]) -> Vec<Span> {
    below
        .iter()
        .map(|&n| {
            let lo = n.checked_sub(1).and_then(|i| published.get(i)).copied().unwrap_or(0);
            (lo, published.get(n).copied())
        })
        .collect()
}

/// Whether what a damaged chain held at time `t` is known: `t` lies in none of its
/// [`unknown_spans`].
pub fn newest_known_at(spans: &[Span], t: u64) -> bool {
    !spans.iter().any(|&(lo, hi)| lo <= t && hi.is_none_or(|hi| t < hi))
}

/// A focus chain that lost an object, as the replay read it.
struct DamagedHistory {
    /// The chain, at its newest break.
    chain: DamagedChain,
    /// Its [`unknown_spans`].
    unknown: Vec<Span>,
}

/// Gives the board a live, empty focus for [`NO_RECEIPT`] on `frame`, so that a commit without a
/// receipt is judged on other agents' holds alone.
pub fn with_unreceipted(board: &mut Board, frame: &str) {
    board.entries.push(BoardEntry {
        focus: Focus { agent: NO_RECEIPT.to_string(), frame: frame.to_string(), seq: 0, targets: Vec::new() },
        liveness: Liveness::Live,
        expires_at: u64::MAX,
        published_at: 0,
        commit: String::new(),
        run: None,
        ended_with: None,
    });
}

/// What the replay reads once for the whole range.
struct History {
    /// Frames, oldest first, with their record times.
    frames: Vec<(i64, Frame)>,
    /// Every focus chain, verified once (a damaged one: every record of it that can be read).
    chains: Vec<(String, ChainRecords)>,
    /// The damaged focus chains.
    damaged: Vec<DamagedHistory>,
    roster: Roster,
    /// Whether roster changes need a trail (`mas.rosterTrail`).
    trail_required: bool,
}

fn git_out(dir: &Path, args: &[String]) -> Result<String, ReplayError> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match crate::git::run(dir, &args) {
        Ok(out) => Ok(String::from_utf8_lossy(&out).into_owned()),
        Err(e @ crate::git::GitError::Spawn { .. }) => Err(ReplayError::Spawn { detail: e.reason() }),
        Err(e) => Err(ReplayError::Range { args: e.args().to_string(), detail: e.reason() }),
    }
}

fn history(store: &Store) -> Result<History, ReplayError> {
    let roster = store.roster()?;
    let mut frames: Vec<(i64, Frame)> = Vec::new();
    for entry in store.walk(FRAME_REF, usize::MAX)?.into_iter().rev() {
        let time = store.repo().find_commit(entry.commit).ok().and_then(|c| c.time().ok()).map_or(0, |t| t.seconds);
        if let Ok(f) = read_frame(store, entry.commit) {
            frames.push((time, f));
        }
    }
    let mut chains: Vec<(String, ChainRecords)> = Vec::new();
    let mut damaged = Vec::new();
    for info in store.list(FOCUS_PREFIX)? {
        let Some(agent) = crate::store::owner_of(&info.name) else { continue };
        let (window, lost) = store.readable_chain(&info.name, &roster)?;
        let records: ChainRecords = window
            .into_iter()
            .map(|(e, v)| (e.commit.to_string(), e.record.map_err(|err| err.to_string()), v))
            .collect();
        if let Some(newest) = lost.first() {
            let published: Vec<u64> = records.iter().map(|r| published_at(&r.1)).collect();
            let below: Vec<usize> = lost.iter().map(|l| l.below).collect();
            damaged.push(DamagedHistory {
                chain: DamagedChain {
                    agent: agent.to_string(),
                    refname: info.name.clone(),
                    record: newest.at.record.to_string(),
                    missing: newest.at.missing.to_string(),
                    part: newest.at.part,
                    newest_known: newest.below < records.len(),
                },
                unknown: unknown_spans(&published, &below),
            });
        }
        chains.push((agent.to_string(), records));
    }
    let trail_required = trail::required(store.config_string(trail::CONFIG_KEY).as_deref());
    Ok(History { frames, chains, damaged, roster, trail_required })
}

/// Replays the gate over `range` (anything `git rev-list` takes), oldest commit first.
pub fn replay(
    store: &Store,
    range: &[String],
    require_receipts: bool,
    runs: &dyn RunLedger,
) -> Result<CheckReport, ReplayError> {
    let workdir = store.workdir()?.to_path_buf();
    let mut args = vec!["rev-list".to_string(), "--reverse".to_string()];
    args.extend(range.iter().cloned());
    let commits: Vec<String> = git_out(&workdir, &args)?.lines().map(String::from).collect();
    let history = history(store)?;
    let mut out = Vec::new();
    for commit in commits {
        out.push(judge(store, &workdir, &history, commit, require_receipts, runs)?);
    }
    Ok(CheckReport { commits: out, damaged: history.damaged.into_iter().map(|d| d.chain).collect() })
}

/// Replays the gate for one commit.
fn judge(
    store: &Store,
    workdir: &Path,
    h: &History,
    commit: String,
    require_receipts: bool,
    runs: &dyn RunLedger,
) -> Result<Checked, ReplayError> {
    let bad = |e: &dyn std::fmt::Display| ReplayError::Commit { commit: commit.clone(), detail: e.to_string() };
    let id = gix::ObjectId::from_hex(commit.as_bytes()).map_err(|e| bad(&e))?;
    let c = store.repo().find_commit(id).map_err(|e| bad(&e))?;
    // The author time: when the change was committed and gated; a rebase keeps it.
    let time = c.author().ok().and_then(|a| a.time().ok()).map_or(0, |t| t.seconds);
    let message = c.message_raw().map(|m| String::from_utf8_lossy(m).into_owned()).unwrap_or_default();
    let subject = message.lines().next().unwrap_or("").to_string();
    let empty_tree = gix::ObjectId::empty_tree(store.repo().object_hash()).to_string();
    let base = c.parent_ids().next().map_or(empty_tree, |p| p.to_string());
    let receipt = receipt_of(&message);
    let hashes: Vec<(i64, &str)> = h.frames.iter().map(|(t, f)| (*t, f.hash.as_str())).collect();
    let receipt_valid = receipt
        .as_ref()
        .is_some_and(|(agent, frame)| h.roster.signer(agent).is_some() && hashes.iter().any(|(_, f)| f == frame));
    let frame = frame_for(&hashes, receipt.as_ref().map(|(_, f)| f.as_str()), time).map(|i| &h.frames[i].1);
    let caller = receipt.as_ref().map_or(NO_RECEIPT, |(agent, _)| agent.as_str());
    let mut board = board_at(&h.chains, u64::try_from(time).unwrap_or(0), frame, receipt.is_none(), runs);
    board.damaged = damaged_at(&h.damaged, caller, u64::try_from(time).unwrap_or(0));
    let paths = touched::commit_paths(workdir, &commit)?;
    let touched = touched::touched(workdir, paths, &symbol_files(&board), &["diff", base.as_str(), commit.as_str()]);
    let verdict = if receipt_valid && claims_rule(&message) {
        let ranges: std::collections::BTreeMap<&str, [u32; 2]> = frame
            .map(|f| f.snapshot.targets.iter().filter_map(|t| Some((t.id.as_str(), t.lines?))).collect())
            .unwrap_or_default();
        let hash = frame.map_or("", |f| f.hash.as_str());
        let at = u64::try_from(time).unwrap_or(0);
        claims::commit_verdict(Some(caller), &board, hash, &touched, &|id| ranges.get(id).copied(), at)
    } else {
        decide_on(caller, frame, &board, &touched)
    };
    let roster = store
        .commit_roster_change(id)?
        .map(|change| trail::judge(&change, &trail::trailers_of(&message), h.trail_required));
    let status =
        CheckStatus::of(&verdict, receipt_valid, require_receipts, roster.as_ref().is_some_and(|r| r.listed()));
    Ok(Checked {
        agent: receipt.map(|(a, _)| a),
        frame: frame.map(|f| f.hash.clone()),
        commit,
        subject,
        receipt: receipt_valid,
        verdict,
        status,
        roster,
    })
}

/// The damaged chains as a commit of `caller` at time `t` is judged against them: every one but
/// `caller`'s own, known at `t` or not ([`newest_known_at`]).
fn damaged_at(damaged: &[DamagedHistory], caller: &str, t: u64) -> Vec<DamagedChain> {
    damaged
        .iter()
        .filter(|d| d.chain.agent != caller)
        .map(|d| DamagedChain { newest_known: newest_known_at(&d.unknown, t), ..d.chain.clone() })
        .collect()
}

/// The board as it stood at time `t`, on `frame` (a run's foci released once it ended by `t`,
/// as the live gate had them: [`super::run_end`]); with an empty live focus for [`NO_RECEIPT`]
/// when the commit has no receipt.
fn board_at(
    chains: &[(String, ChainRecords)],
    t: u64,
    frame: Option<&Frame>,
    unreceipted: bool,
    runs: &dyn RunLedger,
) -> Board {
    let ids: Option<(&str, BTreeSet<&str>)> =
        frame.map(|f| (f.hash.as_str(), f.snapshot.targets.iter().map(|t| t.id.as_str()).collect()));
    let in_frame = |hash: &str, target: &str| -> Option<bool> {
        let (h, set) = ids.as_ref()?;
        (*h == hash).then(|| target.is_empty() || set.contains(target))
    };
    let mut board = board::fold(&chains_at(chains, t), t, &in_frame);
    run_end::end_runs(&mut board, runs, t);
    if unreceipted && let Some(f) = frame {
        with_unreceipted(&mut board, &f.hash);
    }
    board
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::record::{Record, Verdict as RecordVerdict};

    #[test]
    fn status_table() {
        let allow = Verdict::Allow { frame: "F".into(), notes: vec![] };
        let block = Verdict::Block { blocks: vec![] };
        let fail = Verdict::FailClosed { reason: "r".into(), remedy: "m".into() };
        let cases = [
            (&allow, true, false, false, CheckStatus::Ok),
            (&allow, false, false, false, CheckStatus::Ok),
            (&allow, true, true, false, CheckStatus::Ok),
            (&allow, false, true, false, CheckStatus::NoReceipt),
            (&block, true, true, false, CheckStatus::Blocked),
            (&block, false, true, false, CheckStatus::Blocked),
            (&block, false, false, false, CheckStatus::Blocked),
            (&fail, true, false, false, CheckStatus::Refused),
            (&fail, false, true, false, CheckStatus::Refused),
            // An unsigned roster change is listed unless the gate already lists the commit.
            (&allow, true, false, true, CheckStatus::RosterUnsigned),
            (&allow, false, true, true, CheckStatus::RosterUnsigned),
            (&block, true, false, true, CheckStatus::Blocked),
            (&fail, true, false, true, CheckStatus::Refused),
        ];
        for (verdict, valid, require, unsigned, want) in cases {
            let got = CheckStatus::of(verdict, valid, require, unsigned);
            assert_eq!(got, want, "{verdict:?} {valid} {require} {unsigned}");
            assert_eq!(serde_json::to_value(got).unwrap(), want.as_str());
        }
    }

    #[test]
    fn frame_table() {
        let frames = [(100, "A"), (200, "B"), (300, "C"), (400, "A")];
        let cases: [(Option<&str>, i64, Option<usize>); 7] = [
            // The receipt's frame when it is known, whatever the time.
            (Some("A"), 250, Some(3)),
            (Some("C"), 50, Some(2)),
            // Else the newest at or before the commit's time.
            (Some("unknown"), 250, Some(1)),
            (None, 200, Some(1)),
            (None, 199, Some(0)),
            (None, 1000, Some(3)),
            (None, 99, None),
        ];
        for (receipt, time, want) in cases {
            assert_eq!(frame_for(&frames, receipt, time), want, "{receipt:?} {time}");
        }
        assert_eq!(frame_for(&[], Some("A"), 5), None);
    }

    #[test]
    fn chains_are_cut_at_the_commit_time() {
        let rec = |seq: u64, at: u64| {
            let payload = serde_json::json!({"frame": "F", "targets": ["a.rs"], "ttl_secs": 60, "published_at": at});
            (format!("c{seq}"), Ok(Record::new("focus", "alice", seq, payload)), RecordVerdict::Verified)
        };
        let unreadable = ("c9".to_string(), Err("not a record".to_string()), RecordVerdict::Spoof);
        let chains = vec![("alice".to_string(), vec![rec(1, 100), rec(2, 200), unreadable])];
        for (t, want) in [(50, vec!["c9"]), (100, vec!["c1", "c9"]), (250, vec!["c1", "c2", "c9"])] {
            let cut = chains_at(&chains, t);
            assert_eq!(cut[0].1.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), want, "t={t}");
        }
    }

    #[test]
    fn when_a_damaged_chains_state_is_unknown() {
        // (readable records' publication times, readable records below each break) → spans
        type Row = (&'static [u64], &'static [usize], Vec<Span>);
        let spans: [Row; 5] = [
            // The tip's record is lost: unknown from the record below it on.
            (&[100, 200], &[2], vec![(200, None)]),
            // A lost commit under the tip: nothing below is known, unknown until the tip's record.
            (&[300], &[0], vec![(0, Some(300))]),
            // A lost blob between two readable records.
            (&[100, 200, 300], &[1], vec![(100, Some(200))]),
            // Two adjacent lost records share their neighbours; a lost root starts at 0.
            (&[100], &[1, 1, 0], vec![(100, None), (100, None), (0, Some(100))]),
            // Nothing readable at all.
            (&[], &[0], vec![(0, None)]),
        ];
        for (published, below, want) in spans {
            assert_eq!(unknown_spans(published, below), want, "{published:?} {below:?}");
        }
        // (spans, t) → known
        let known: [(&[Span], u64, bool); 8] = [
            (&[], 5, true),
            (&[(200, None)], 199, true),
            (&[(200, None)], 200, false),
            (&[(200, None)], 10_000, false),
            (&[(0, Some(300))], 0, false),
            (&[(0, Some(300))], 299, false),
            (&[(0, Some(300))], 300, true),
            (&[(100, Some(200)), (300, None)], 250, true),
        ];
        for (spans, t, want) in known {
            assert_eq!(newest_known_at(spans, t), want, "{spans:?} at {t}");
        }
    }

    #[test]
    fn a_commit_is_not_held_off_by_its_own_agents_damaged_chain() {
        let chain = |agent: &str| DamagedChain {
            agent: agent.into(),
            refname: format!("refs/mas/focus/{agent}"),
            record: "r".into(),
            missing: "m".into(),
            part: crate::store::damage::Part::Commit,
            newest_known: true,
        };
        let damaged = vec![
            DamagedHistory { chain: chain("a"), unknown: vec![(0, Some(300))] },
            DamagedHistory { chain: chain("b"), unknown: vec![] },
        ];
        let got = |caller: &str, t: u64| -> Vec<(String, bool)> {
            damaged_at(&damaged, caller, t).into_iter().map(|d| (d.agent, d.newest_known)).collect()
        };
        assert_eq!(got("a", 10), [("b".to_string(), true)]);
        assert_eq!(got("c", 10), [("a".to_string(), false), ("b".to_string(), true)]);
        assert_eq!(got("c", 300), [("a".to_string(), true), ("b".to_string(), true)]);
    }

    #[test]
    fn an_unreceipted_commit_holds_nothing_but_is_live() {
        let mut board = Board::default();
        with_unreceipted(&mut board, "F");
        let e = board.entry(NO_RECEIPT).unwrap();
        assert_eq!((e.liveness, e.focus.frame.as_str(), e.focus.targets.len()), (Liveness::Live, "F", 0));
    }
}

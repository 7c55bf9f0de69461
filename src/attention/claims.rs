//! Team mode's rule: claims by editing, as pure functions of the board, the current frame and
//! what an edit touches.
//!
//! In team mode a session publishes no focus by hand: the files it writes are its focus. Every
//! file a live focus names is held — not only its top target — by claims and by foci chosen from
//! the frame alike. An edit is denied when another live agent holds a file it touches
//! ([`blocks`]); otherwise it is allowed and the files it touches join the editor's focus
//! ([`next_claims`]).
//!
//! Across frames, paths compare: another agent's focus on an older frame still holds its files,
//! and a symbol target (`path#symbol`) then holds its whole file, since its lines on the current
//! frame are unknown — refusing when unsure, never allowing. On the current frame a symbol holds
//! only its lines, as in the commit gate.
//!
//! Two live foci holding one file at once (two clones that claimed it offline and then synced, or
//! a hand-published focus) are settled by the coordination rule's Serialize: the smaller name
//! holds, the other is denied. On one machine that never arises from claims: claims are made
//! under one lock ([`crate::attention::team`]), so the second claimer sees the first.
//!
//! A focus holds at most [`MAX_FOCUS_TARGETS`] files. An edit that would claim a ninth is denied
//! with the list of claims held and the command that releases some ([`Next::OverCap`]): a claim
//! is never dropped to make room.

use super::board::{Board, BoardEntry, Liveness};
use super::gate::{Block, Touched, touches};
use super::rule::MAX_FOCUS_TARGETS;

/// The file a target names: the path of a `path#symbol`, else the target.
pub fn file_of(target: &str) -> &str {
    target.split_once('#').map_or(target, |(p, _)| p)
}

/// "14 min", "40 s": how long a claim has left, for people.
pub fn left(secs: u64) -> String {
    if secs >= 120 { format!("{} min", secs.div_ceil(60)) } else { format!("{secs} s") }
}

/// Why `caller`'s edit of `touched` may not proceed: one block per file another live agent holds,
/// and what the board's damaged chains refuse ([`super::damage`]). `lines_of` gives a symbol's line
/// range on `current_frame`; `now` is the reader's clock.
pub fn blocks(
    caller: &str,
    board: &Board,
    current_frame: &str,
    touched: &[Touched],
    lines_of: &dyn Fn(&str) -> Option<[u32; 2]>,
    now: u64,
) -> Vec<Block> {
    let mut out = held_blocks(caller, board, current_frame, touched, lines_of, now);
    super::damage::apply(caller, board, touched, &mut out);
    out
}

/// [`blocks`] without the damaged chains' refusals.
fn held_blocks(
    caller: &str,
    board: &Board,
    current_frame: &str,
    touched: &[Touched],
    lines_of: &dyn Fn(&str) -> Option<[u32; 2]>,
    now: u64,
) -> Vec<Block> {
    let mine = board.entry(caller).filter(|e| e.liveness == Liveness::Live);
    let mut out: Vec<Block> = Vec::new();
    for other in board.entries.iter().filter(|e| e.focus.agent != caller && e.liveness == Liveness::Live) {
        for target in &other.focus.targets {
            let file = file_of(target);
            let note = if other.focus.frame == current_frame {
                touches(target, lines_of, touched)
            } else {
                touched.iter().any(|t| t.path == file).then(|| {
                    if file == target.as_str() {
                        String::new()
                    } else {
                        format!("its claim is on an older frame, so {target} holds all of {file}")
                    }
                })
            };
            let Some(note) = note else { continue };
            // Both hold the file: Serialize, the smaller name holds.
            let both = mine.is_some_and(|m| m.focus.targets.iter().any(|t| file_of(t) == file));
            if both && caller < other.focus.agent.as_str() {
                continue;
            }
            if out.iter().any(|b| b.holder == other.focus.agent && file_of(&b.target) == file) {
                continue;
            }
            out.push(block(caller, other, target, &note, both, now));
        }
    }
    out
}

fn block(caller: &str, other: &BoardEntry, target: &str, note: &str, both: bool, now: u64) -> Block {
    let holder = &other.focus.agent;
    let remaining = left(other.expires_at.saturating_sub(now));
    let mut why = format!("its claim has {remaining} left, renewed by each of its edits");
    if both {
        why.push_str(&format!("; {caller} holds it too, and Serialize gives it to the smaller name, {holder}"));
    }
    if !note.is_empty() {
        why.push_str("; ");
        why.push_str(note);
    }
    Block {
        holder: holder.clone(),
        target: target.to_string(),
        why,
        remedy: format!(
            "leave {file} alone for now: pick other work, or ask {holder} through the team's channel; retry once its \
             session ends or its claim lapses",
            file = file_of(target)
        ),
    }
}

/// Team mode's verdict on a commit by `caller` (`None`: the commit's session is not known, so
/// every claim is another's) of `touched` on `frame`: blocked by every file another live agent
/// holds, with the command that takes it out of the commit; allowed otherwise — a commit is never
/// refused for want of a focus of its own.
pub fn commit_verdict(
    caller: Option<&str>,
    board: &Board,
    frame: &str,
    touched: &[Touched],
    lines_of: &dyn Fn(&str) -> Option<[u32; 2]>,
    now: u64,
) -> super::gate::Verdict {
    let caller = caller.unwrap_or_default();
    let mut blocks = held_blocks(caller, board, frame, touched, lines_of, now);
    for b in &mut blocks {
        b.remedy = format!(
            "take it out of this commit: `git restore --staged -- {}` (your working tree keeps the change), then commit \
             again; or wait until {} has finished",
            crate::hosts::hooks::shell_word(file_of(&b.target)),
            b.holder
        );
    }
    // After the remedies above, so that a damaged chain's blocks keep `git mas doctor --fix`.
    super::damage::apply(caller, board, touched, &mut blocks);
    if blocks.is_empty() {
        super::gate::Verdict::Allow { frame: frame.to_string(), notes: Vec::new() }
    } else {
        super::gate::Verdict::Block { blocks }
    }
}

/// What `caller`'s focus becomes after an allowed edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Nothing to write: every touched file is claimed already, on the current frame, renewed
    /// recently enough.
    Keep,
    /// Publish these targets (the rule's order) on the current frame.
    Publish {
        /// The targets.
        targets: Vec<String>,
        /// The files this edit claims anew.
        claimed: Vec<String>,
        /// Own claims dropped because their file no longer exists.
        dropped: Vec<String>,
    },
    /// The edit would hold more than [`MAX_FOCUS_TARGETS`] files.
    OverCap {
        /// What the caller holds now.
        held: Vec<String>,
        /// The files the edit would add.
        wanted: Vec<String>,
    },
}

/// How a claim is kept fresh: its TTL, and how long after a renewal an edit renews it again
/// (renewing on every edit would write a record per keystroke of an agent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// Time to live of a claim, seconds.
    pub ttl_secs: u64,
    /// An edit renews the claim when at least this long has passed since the last renewal.
    pub renew_after_secs: u64,
}

/// The focus `mine` (the caller's entry, if any) becomes after an allowed edit of `touched`
/// files: its live targets (on a move to a new frame, those whose file still `exists` or is
/// touched now), plus the touched files not yet held, ordered by `rank` (the frame's snapshot order; unlisted files after, by path).
pub fn next_claims(
    mine: Option<&BoardEntry>,
    current_frame: &str,
    touched: &[String],
    exists: &dyn Fn(&str) -> bool,
    rank: &dyn Fn(&str) -> Option<usize>,
    lease: Lease,
    now: u64,
) -> Next {
    let live = mine.filter(|e| e.liveness == Liveness::Live);
    let current: Vec<String> = live.map(|e| e.focus.targets.clone()).unwrap_or_default();
    // Moving to a new frame carries the claims whose file still exists; on one frame a claim stays
    // until released (a file claimed before its first write does not exist yet).
    let moving = live.is_some_and(|e| e.focus.frame != current_frame);
    let (carried, dropped): (Vec<String>, Vec<String>) =
        current.iter().cloned().partition(|t| !moving || exists(file_of(t)) || touched.iter().any(|p| p == file_of(t)));
    let claimed: Vec<String> = {
        let mut c: Vec<String> = touched.iter().filter(|p| !carried.contains(p)).cloned().collect();
        c.sort();
        c.dedup();
        c
    };
    let mut targets = carried.clone();
    targets.extend(claimed.iter().cloned());
    if targets.len() > MAX_FOCUS_TARGETS {
        return Next::OverCap { held: current, wanted: claimed };
    }
    targets.sort_by(|a, b| (rank(a).unwrap_or(usize::MAX), a).cmp(&(rank(b).unwrap_or(usize::MAX), b)));
    let fresh = live.is_some_and(|e| {
        e.focus.frame == current_frame
            && e.expires_at.saturating_sub(now) > lease.ttl_secs.saturating_sub(lease.renew_after_secs)
    });
    if claimed.is_empty() && dropped.is_empty() && fresh && targets == current {
        return Next::Keep;
    }
    Next::Publish { targets, claimed, dropped }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::rule::Focus;

    fn entry(agent: &str, frame: &str, targets: &[&str], expires_at: u64, liveness: Liveness) -> BoardEntry {
        let focus = Focus {
            agent: agent.into(),
            frame: frame.into(),
            seq: 1,
            targets: targets.iter().map(|t| t.to_string()).collect(),
        };
        BoardEntry { focus, liveness, expires_at, published_at: 0, commit: String::new(), run: None, ended_with: None }
    }

    fn board(entries: Vec<BoardEntry>) -> Board {
        Board { entries, ..Board::default() }
    }

    fn file(path: &str) -> Touched {
        Touched { path: path.into(), lines: None }
    }

    fn ranges(id: &str) -> Option<[u32; 2]> {
        (id == "a.rs#f").then_some([10, 20])
    }

    const LEASE: Lease = Lease { ttl_secs: 900, renew_after_secs: 60 };

    #[test]
    fn every_target_of_a_live_focus_is_held_across_frames() {
        let b = board(vec![
            entry("alice.claude-00000001", "F", &["x.rs", "y.rs"], 1900, Liveness::Live),
            entry("carol", "OLD", &["a.rs#f"], 1900, Liveness::Live),
            entry("dave", "F", &["z.rs"], 900, Liveness::Expired),
            entry("erin", "F", &["w.rs"], 900, Liveness::Released),
        ]);
        let who = |path: &str| -> Vec<String> {
            blocks("bob", &b, "F", &[file(path)], &ranges, 1000).into_iter().map(|b| b.holder).collect()
        };
        assert_eq!(who("x.rs"), ["alice.claude-00000001"]);
        assert_eq!(who("y.rs"), ["alice.claude-00000001"], "not only the top target");
        assert_eq!(who("a.rs"), ["carol"], "a symbol on an older frame holds its whole file");
        assert!(who("z.rs").is_empty(), "an expired claim holds nothing");
        assert!(who("w.rs").is_empty(), "a released claim holds nothing");
        assert!(who("q.rs").is_empty());
        let blocks = blocks("bob", &b, "F", &[file("x.rs")], &ranges, 1000);
        assert!(blocks[0].why.contains("15 min left"), "{:?}", blocks[0]);
        assert!(blocks[0].remedy.contains("alice.claude-00000001"), "{:?}", blocks[0]);
    }

    #[test]
    fn a_symbol_on_the_current_frame_holds_its_lines_only() {
        let b = board(vec![entry("carol", "F", &["a.rs#f"], 1900, Liveness::Live)]);
        let lines = |r: [u32; 2]| Touched { path: "a.rs".into(), lines: Some(vec![r]) };
        assert!(blocks("bob", &b, "F", &[lines([30, 31])], &ranges, 1000).is_empty());
        assert_eq!(blocks("bob", &b, "F", &[lines([19, 25])], &ranges, 1000).len(), 1);
        assert_eq!(blocks("bob", &b, "F", &[file("a.rs")], &ranges, 1000).len(), 1, "unknown lines: whole file");
    }

    #[test]
    fn two_holders_of_one_file_serialize_by_name() {
        let b = board(vec![
            entry("alice", "F", &["x.rs"], 1900, Liveness::Live),
            entry("bob", "F", &["x.rs"], 1900, Liveness::Live),
        ]);
        assert!(blocks("alice", &b, "F", &[file("x.rs")], &ranges, 1000).is_empty());
        let bob = blocks("bob", &b, "F", &[file("x.rs")], &ranges, 1000);
        assert_eq!(bob.len(), 1);
        assert!(bob[0].why.contains("Serialize"), "{:?}", bob[0]);
        // An expired claim of the caller is no claim: the holder wins whatever the names.
        let b = board(vec![
            entry("alice", "F", &["x.rs"], 900, Liveness::Expired),
            entry("bob", "F", &["x.rs"], 1900, Liveness::Live),
        ]);
        assert_eq!(blocks("alice", &b, "F", &[file("x.rs")], &ranges, 1000).len(), 1);
    }

    #[test]
    fn next_claims_adds_carries_orders_and_caps() {
        let all = |_: &str| true;
        let rank = |t: &str| match t {
            "hot.rs" => Some(0),
            "warm.rs" => Some(1),
            _ => None,
        };
        // A first edit claims.
        let n = next_claims(None, "F", &["b.rs".into()], &all, &rank, LEASE, 1000);
        assert_eq!(n, Next::Publish { targets: vec!["b.rs".into()], claimed: vec!["b.rs".into()], dropped: vec![] });
        // The rule's order: the snapshot's, then unlisted by path; not the edit order.
        let mine = entry("bob", "F", &["b.rs", "z.rs"], 1900, Liveness::Live);
        let Next::Publish { targets, claimed, .. } = next_claims(
            Some(&mine),
            "F",
            &["warm.rs".into(), "a.rs".into(), "hot.rs".into()],
            &all,
            &rank,
            LEASE,
            1000,
        ) else {
            panic!()
        };
        assert_eq!(targets, ["hot.rs", "warm.rs", "a.rs", "b.rs", "z.rs"]);
        assert_eq!(claimed, ["a.rs", "hot.rs", "warm.rs"]);
        // Re-editing a claimed file on the current frame, renewed recently: nothing to write.
        assert_eq!(next_claims(Some(&mine), "F", &["b.rs".into()], &all, &rank, LEASE, 1000), Next::Keep);
        // Renewed long enough ago: renew.
        assert!(matches!(
            next_claims(Some(&mine), "F", &["b.rs".into()], &all, &rank, LEASE, 1900 - 900 + 61),
            Next::Publish { .. }
        ));
        // A new frame: moved, carrying claims whose file exists.
        let gone = |p: &str| p != "z.rs";
        assert_eq!(
            next_claims(Some(&mine), "G", &["b.rs".into()], &gone, &rank, LEASE, 1000),
            Next::Publish { targets: vec!["b.rs".into()], claimed: vec![], dropped: vec!["z.rs".into()] }
        );
        // An expired focus is no claim: the edit claims afresh.
        let expired = entry("bob", "F", &["b.rs"], 900, Liveness::Expired);
        assert!(matches!(
            next_claims(Some(&expired), "F", &["b.rs".into()], &all, &rank, LEASE, 1000),
            Next::Publish { claimed, .. } if claimed == ["b.rs"]
        ));
        // The cap: a ninth file is refused, nothing dropped.
        let eight: Vec<String> = (0..8).map(|i| format!("f{i}.rs")).collect();
        let refs: Vec<&str> = eight.iter().map(String::as_str).collect();
        let full = entry("bob", "F", &refs, 1900, Liveness::Live);
        assert_eq!(
            next_claims(Some(&full), "F", &["n.rs".into()], &all, &rank, LEASE, 1000),
            Next::OverCap { held: eight.clone(), wanted: vec!["n.rs".into()] }
        );
        assert_eq!(next_claims(Some(&full), "F", &["f3.rs".into()], &all, &rank, LEASE, 1000), Next::Keep);
    }

    #[test]
    fn time_left_reads_in_the_agents_terms() {
        assert_eq!(left(900), "15 min");
        assert_eq!(left(61), "61 s");
        assert_eq!(left(0), "0 s");
    }
}

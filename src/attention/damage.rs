//! What the gate does about a focus chain that lost an object ([`crate::store::damage`]).
//!
//! Before, one chain that could not be read made the whole board unreadable, so every gate call
//! of every session failed closed until someone found the chain by hand. Now the board folds a
//! damaged chain from what can be read of it ([`super::focus_store`]) and lists it in
//! [`Board::damaged`]; this pure function decides what stays refused:
//!
//! - **What the chain is known to claim stays refused.** Its agent's entry is folded from its
//!   newest readable records (when the lost record lies below them, what it holds now is exactly
//!   known), else from its last state that can be read: the records below the lost one, or the
//!   window the board's read cache remembered at an earlier tip. A file that entry holds is
//!   blocked as any held file is, and the block names the damaged chain and `git mas doctor
//!   --fix`.
//! - **When the chain's newest record is what is lost, what it claims now cannot be known.** The
//!   lost record is most often a claim written just before the object was pruned: its agent is
//!   editing a file no readable record names. Decision: the other agents may go on editing the
//!   files they hold themselves (a live claim of theirs proves the damaged agent could not have
//!   claimed those files since), and every other file — a new claim — is refused, naming the
//!   damaged chain and `git mas doctor --fix`, until the chain is repaired. This keeps working
//!   sessions working and fails closed only where a collision cannot be ruled out.
//! - **The damaged chain's own agent is refused everything** (its next claim would be appended to
//!   a chain whose tip cannot be read), with the same remedy.
//!
//! A session's damaged chain whose host process on this machine is gone is not listed at all:
//! its claims, lost or not, ended with the process ([`super::focus_store`]'s gone sessions).
//!
//! Files that no damaged chain can hold under these rules are decided by the ordinary rule, so a
//! damaged chain no longer takes down anyone else's edits of free files when its state is known.

use super::board::{Board, DamagedChain, Liveness};
use super::claims::file_of;
use super::gate::{Block, Touched};

/// What to do, in every refusal that a damaged chain causes.
pub const REMEDY: &str =
    "run `git mas doctor --fix` (it cuts the damaged chain back to its last whole record), then retry";

/// Why `d` is damaged, in words.
pub fn describe(d: &DamagedChain) -> String {
    format!(
        "its focus chain {} is damaged: record {} lost its {} {}",
        d.refname,
        short(&d.record),
        d.part,
        short(&d.missing)
    )
}

fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// Adds to `blocks` (the ordinary rule's, for `caller` editing `touched`) what the board's
/// damaged chains refuse, and names the damage in the blocks whose holder's chain is damaged.
pub fn apply(caller: &str, board: &Board, touched: &[Touched], blocks: &mut Vec<Block>) {
    if board.damaged.is_empty() {
        return;
    }
    for b in blocks.iter_mut() {
        if let Some(d) = board.damaged.iter().find(|d| d.agent == b.holder) {
            b.why = format!("{}; {}", b.why, describe(d));
            b.remedy = format!("{}; or {REMEDY}", b.remedy);
        }
    }
    let mine: Vec<&str> = board
        .entry(caller)
        .filter(|e| e.liveness == Liveness::Live)
        .map(|e| e.focus.targets.iter().map(|t| file_of(t)).collect())
        .unwrap_or_default();
    let own = board.damaged.iter().find(|d| d.agent == caller);
    let unknown = board.damaged.iter().find(|d| !d.newest_known && d.agent != caller);
    let mut paths: Vec<&str> = touched.iter().map(|t| t.path.as_str()).collect();
    paths.sort_unstable();
    paths.dedup();
    for path in paths {
        if blocks.iter().any(|b| file_of(&b.target) == path) {
            continue;
        }
        let block = match (own, unknown) {
            (Some(d), _) => Block {
                holder: caller.to_string(),
                target: path.to_string(),
                why: format!("{caller} cannot claim it: {}", describe(d)),
                remedy: REMEDY.to_string(),
            },
            (None, Some(d)) if !mine.contains(&path) => Block {
                holder: d.agent.clone(),
                target: path.to_string(),
                why: format!(
                    "{}, so the files {} claims now cannot all be known and only files {caller} holds may be edited",
                    describe(d),
                    d.agent
                ),
                remedy: REMEDY.to_string(),
            },
            _ => continue,
        };
        blocks.push(block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::board::BoardEntry;
    use crate::attention::rule::Focus;
    use crate::store::damage::Part;

    fn entry(agent: &str, targets: &[&str]) -> BoardEntry {
        BoardEntry {
            focus: Focus {
                agent: agent.into(),
                frame: "F".into(),
                seq: 1,
                targets: targets.iter().map(|t| t.to_string()).collect(),
            },
            liveness: Liveness::Live,
            expires_at: 100,
            published_at: 0,
            commit: "c".into(),
            run: None,
            ended_with: None,
        }
    }

    fn damaged(agent: &str, newest_known: bool) -> DamagedChain {
        DamagedChain {
            agent: agent.into(),
            refname: format!("refs/mas/focus/{agent}"),
            record: "r".repeat(40),
            missing: "m".repeat(40),
            part: Part::Commit,
            newest_known,
        }
    }

    fn held_by(holder: &str, target: &str) -> Block {
        Block { holder: holder.into(), target: target.into(), why: "held".into(), remedy: "wait".into() }
    }

    #[test]
    fn what_a_damaged_chain_refuses() {
        // (damaged chains, caller's files, touched, the ordinary blocks) → (holder, file, names the damage)
        type Row = (
            Vec<DamagedChain>,
            &'static [&'static str],
            &'static [&'static str],
            Vec<Block>,
            Vec<(&'static str, &'static str)>,
        );
        let rows: Vec<Row> = vec![
            // No damage: nothing added.
            (vec![], &[], &["free.rs"], vec![], vec![]),
            // Known state: a free file is free, the held file's block names the damage.
            (vec![damaged("a", true)], &[], &["free.rs"], vec![], vec![]),
            (vec![damaged("a", true)], &[], &["held.rs"], vec![held_by("a", "held.rs")], vec![("a", "held.rs")]),
            // Unknown newest state: a new claim is refused, the caller's own file is not.
            (vec![damaged("a", false)], &["mine.rs"], &["free.rs", "mine.rs"], vec![], vec![("a", "free.rs")]),
            (vec![damaged("a", false)], &["mine.rs"], &["mine.rs"], vec![], vec![]),
            // The caller's own chain is damaged: everything is refused.
            (vec![damaged("b", true)], &["mine.rs"], &["mine.rs"], vec![], vec![("b", "mine.rs")]),
            (vec![damaged("b", false)], &[], &["x.rs", "x.rs"], vec![], vec![("b", "x.rs")]),
        ];
        for (i, (chains, mine, touched, mut blocks, want)) in rows.into_iter().enumerate() {
            let board = Board { entries: vec![entry("b", mine)], damaged: chains, ..Board::default() };
            let touched: Vec<Touched> = touched.iter().map(|p| Touched { path: p.to_string(), lines: None }).collect();
            apply("b", &board, &touched, &mut blocks);
            let got: Vec<(&str, &str)> = blocks.iter().map(|b| (b.holder.as_str(), b.target.as_str())).collect();
            assert_eq!(got, want, "row {i}");
            for b in &blocks {
                assert!(b.why.contains("is damaged") && b.remedy.contains("git mas doctor --fix"), "row {i}: {b:?}");
            }
        }
    }
}

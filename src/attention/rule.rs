//! Foci, alignment and the coordination rule: pure functions of two foci.
//!
//! A focus is {agent, frame hash, per-agent seq, at most [`MAX_FOCUS_TARGETS`] targets in the
//! snapshot's order}. Alignment is defined only between foci on the same frame. The rule:
//! frame mismatch → Reject; either focus empty → Parallel; same top target → Serialize with the
//! lexicographically smaller agent id as holder; otherwise Parallel. (Choosing the holder by
//! saliency cannot work: under one shared snapshot both agents read the same saliency, so the
//! comparison is always a tie and only the name decides.)

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use thiserror::Error;

/// The most targets one focus may hold.
pub const MAX_FOCUS_TARGETS: usize = 8;
/// The most live agents one principal holds on the board at once: the principal itself and its
/// session agents (the per-principal flood cap; see [`super::board`]).
pub const MAX_PRINCIPAL_AGENTS: usize = 64;
/// The most live agents the whole board admits at once (the board's flood cap, a backstop far above
/// a real team; see [`super::board`]).
pub const MAX_BOARD_AGENTS: usize = 4096;

/// The principal an agent counts against for [`MAX_PRINCIPAL_AGENTS`]: the principal a session
/// agent's name names, else the agent itself. A pure function of the name, so every reader folds
/// the same board whatever roster it holds.
pub fn principal(agent: &str) -> &str {
    crate::identity::principal_of(agent).unwrap_or(agent)
}

/// One agent's published focus.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Focus {
    /// The agent.
    pub agent: String,
    /// The frame hash the targets were chosen from.
    pub frame: String,
    /// The agent's sequence number for this focus.
    pub seq: u64,
    /// Targets, highest saliency first.
    pub targets: Vec<String>,
}

impl Focus {
    /// The top target, if any.
    pub fn top(&self) -> Option<&str> {
        self.targets.first().map(String::as_str)
    }
}

/// Alignment across frames is not defined.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("snapshot mismatch: {a_agent} is on frame {a_frame}, {b_agent} on frame {b_frame}; alignment needs one frame")]
pub struct FrameMismatch {
    /// First agent.
    pub a_agent: String,
    /// Its frame.
    pub a_frame: String,
    /// Second agent.
    pub b_agent: String,
    /// Its frame.
    pub b_frame: String,
}

/// How much two foci overlap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alignment {
    /// |A ∩ B| / |A ∪ B|; 0 when both are empty.
    pub jaccard: f64,
    /// Both have a top target and it is the same.
    pub top_shared: bool,
    /// The shared targets, sorted.
    pub shared: Vec<String>,
}

fn mismatch(a: &Focus, b: &Focus) -> FrameMismatch {
    FrameMismatch {
        a_agent: a.agent.clone(),
        a_frame: a.frame.clone(),
        b_agent: b.agent.clone(),
        b_frame: b.frame.clone(),
    }
}

/// Jaccard overlap and top-target sharing of two foci on one frame.
pub fn align(a: &Focus, b: &Focus) -> Result<Alignment, FrameMismatch> {
    if a.frame != b.frame {
        return Err(mismatch(a, b));
    }
    let sa: BTreeSet<&String> = a.targets.iter().collect();
    let sb: BTreeSet<&String> = b.targets.iter().collect();
    let union = sa.union(&sb).count();
    let shared: Vec<String> = sa.intersection(&sb).map(|s| (*s).clone()).collect();
    let jaccard = if union == 0 { 0.0 } else { shared.len() as f64 / union as f64 };
    let top_shared = matches!((a.top(), b.top()), (Some(x), Some(y)) if x == y);
    Ok(Alignment { jaccard, top_shared, shared })
}

/// What two agents should do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// The foci are on different frames: nothing can be decided; republish on the current frame.
    Reject { reason: String },
    /// No conflict: both proceed.
    Parallel,
    /// Same top target: `holder` proceeds, `deferring` waits.
    Serialize { holder: String, deferring: String, target: String },
}

/// The coordination rule.
pub fn decide(a: &Focus, b: &Focus) -> Decision {
    if a.frame != b.frame {
        return Decision::Reject { reason: mismatch(a, b).to_string() };
    }
    match (a.top(), b.top()) {
        (Some(x), Some(y)) if x == y => {
            let (holder, deferring) = if a.agent <= b.agent { (a, b) } else { (b, a) };
            Decision::Serialize {
                holder: holder.agent.clone(),
                deferring: deferring.agent.clone(),
                target: x.to_string(),
            }
        }
        _ => Decision::Parallel,
    }
}

/// Derives a focus from a snapshot: the targets `chosen` picks, in the snapshot's order (highest
/// saliency first), at most [`MAX_FOCUS_TARGETS`] of them. `frame` is the snapshot's frame hash.
/// Targets the snapshot does not list cannot be chosen: a focus is derived, never free-typed.
pub fn derive_focus(
    agent: &str,
    seq: u64,
    snapshot: &super::snapshot::Snapshot,
    frame: &str,
    chosen: &dyn Fn(&str) -> bool,
) -> Focus {
    let targets =
        snapshot.targets.iter().filter(|t| chosen(&t.id)).take(MAX_FOCUS_TARGETS).map(|t| t.id.clone()).collect();
    Focus { agent: agent.to_string(), frame: frame.to_string(), seq, targets }
}

/// Which shared targets make two agents serialize.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overlap {
    /// Only a shared top target (the coordination rule, [`decide`]).
    Top,
    /// Any shared target: a stricter variant that trades throughput for fewer collisions.
    Any,
}

/// The coordination rule with a choice of overlap: [`Overlap::Top`] is exactly [`decide`];
/// [`Overlap::Any`] also serializes when the foci share any target, the shared target being the
/// first of them in the holder's order, with the same lexicographic holder.
pub fn decide_overlap(a: &Focus, b: &Focus, overlap: Overlap) -> Decision {
    let top = decide(a, b);
    if overlap == Overlap::Top || !matches!(top, Decision::Parallel) {
        return top;
    }
    let (holder, deferring) = if a.agent <= b.agent { (a, b) } else { (b, a) };
    match holder.targets.iter().find(|t| deferring.targets.contains(t)) {
        Some(t) => {
            Decision::Serialize { holder: holder.agent.clone(), deferring: deferring.agent.clone(), target: t.clone() }
        }
        None => Decision::Parallel,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn focus(agent: &str, frame: &str, targets: &[&str]) -> Focus {
        Focus {
            agent: agent.into(),
            frame: frame.into(),
            seq: 1,
            targets: targets.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn alignment_table() {
        let cases: &[(&[&str], &[&str], f64, bool)] = &[
            (&["a", "b"], &["a", "b"], 1.0, true),
            (&["a", "b"], &["b", "a"], 1.0, false),
            (&["a", "b", "c"], &["a", "d"], 0.25, true),
            (&["a"], &["b"], 0.0, false),
            (&[], &[], 0.0, false),
            (&["a"], &[], 0.0, false),
        ];
        for (x, y, jaccard, top) in cases {
            let al = align(&focus("p", "f", x), &focus("q", "f", y)).unwrap();
            assert_eq!((al.jaccard, al.top_shared), (*jaccard, *top), "{x:?} vs {y:?}");
        }
        assert!(align(&focus("p", "f1", &["a"]), &focus("q", "f2", &["a"])).is_err());
    }

    #[test]
    fn decision_table() {
        use Decision::*;
        let s = |h: &str, d: &str, t: &str| Serialize { holder: h.into(), deferring: d.into(), target: t.into() };
        let cases: Vec<(Focus, Focus, Decision)> = vec![
            (focus("bob", "f", &["x"]), focus("alice", "f", &["x", "y"]), s("alice", "bob", "x")),
            (focus("alice", "f", &["x"]), focus("bob", "f", &["x"]), s("alice", "bob", "x")),
            (focus("alice", "f", &["x", "y"]), focus("bob", "f", &["y", "x"]), Parallel),
            (focus("alice", "f", &[]), focus("bob", "f", &["x"]), Parallel),
            (focus("alice", "f", &["x"]), focus("bob", "f", &["z"]), Parallel),
        ];
        for (a, b, want) in cases {
            assert_eq!(decide(&a, &b), want, "{a:?} / {b:?}");
            // The rule is symmetric.
            assert_eq!(decide(&b, &a), want);
        }
        assert!(matches!(decide(&focus("a", "f1", &["x"]), &focus("b", "f2", &["x"])), Reject { .. }));
        // Reject wins even when a focus is empty.
        assert!(matches!(decide(&focus("a", "f1", &[]), &focus("b", "f2", &["x"])), Reject { .. }));
    }

    #[test]
    fn derived_foci_follow_the_snapshot_order_and_bound() {
        use crate::attention::snapshot::{FileFacts, SnapshotInput, compute};
        let input = SnapshotInput {
            files: (0..12)
                .map(|i| FileFacts { path: format!("f{i:02}.rs"), touched: false, commits_since: Some(i) })
                .collect(),
            ..Default::default()
        };
        let snap = compute(&input, |_| false);
        let frame = snap.frame_hash();
        let f = derive_focus("alice", 3, &snap, &frame, &|id| id != "f00.rs" && id != "missing.rs");
        assert_eq!(f.targets.len(), MAX_FOCUS_TARGETS);
        assert_eq!(f.targets[0], "f01.rs", "most recent first, f00 left out");
        assert_eq!((f.agent.as_str(), f.seq, f.frame.as_str()), ("alice", 3, frame.as_str()));
        // Chosen in any order, listed in the snapshot's.
        let g = derive_focus("bob", 1, &snap, &frame, &|id| id == "f05.rs" || id == "f02.rs" || id == "nope.rs");
        assert_eq!(g.targets, ["f02.rs", "f05.rs"]);
    }

    #[test]
    fn overlap_any_serializes_on_any_shared_target() {
        use Decision::*;
        let a = focus("bob", "f", &["x", "y"]);
        let b = focus("alice", "f", &["z", "y"]);
        assert_eq!(decide_overlap(&a, &b, Overlap::Top), Parallel);
        let want = Serialize { holder: "alice".into(), deferring: "bob".into(), target: "y".into() };
        assert_eq!(decide_overlap(&a, &b, Overlap::Any), want);
        assert_eq!(decide_overlap(&b, &a, Overlap::Any), want);
        // Disjoint foci stay parallel; a shared top is the rule's own answer; frames still reject.
        assert_eq!(decide_overlap(&a, &focus("alice", "f", &["w"]), Overlap::Any), Parallel);
        let same_top = focus("alice", "f", &["x"]);
        assert_eq!(decide_overlap(&a, &same_top, Overlap::Any), decide(&a, &same_top));
        assert!(matches!(decide_overlap(&a, &focus("alice", "g", &["y"]), Overlap::Any), Reject { .. }));
    }
}

//! The edit gate's verdict: a pure function of the caller's focus, the other live foci, the
//! current frame and what the change touches.
//!
//! Block when another agent holds a target the change touches — as the Serialize holder of a
//! top target both want, or simply as its own top target. Fail closed when the caller has no focus,
//! when its focus is on an old frame, when there is no frame, and when another agent's focus on a
//! different frame names a touched target (their claim cannot be compared with ours, so we may not
//! assume it is harmless). A held symbol (`path#symbol`) protects only its line range; when the
//! change's lines in that file are unknown, the symbol is treated as holding the whole file, and
//! the block says so.

use super::rule::{Decision, Focus, decide};
use serde::{Deserialize, Serialize};

/// What a change touches in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touched {
    /// Repo-relative path.
    pub path: String,
    /// Line ranges (1-based, inclusive) in the frame's version of the file; `None` when unknown.
    pub lines: Option<Vec<[u32; 2]>>,
}

/// One reason the change may not proceed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// The agent holding the target.
    pub holder: String,
    /// The held target.
    pub target: String,
    /// Why it counts as held.
    pub why: String,
    /// What to do.
    pub remedy: String,
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// The change may proceed; `frame` goes into the receipt.
    Allow { frame: String, notes: Vec<String> },
    /// Another agent holds something the change touches.
    Block { blocks: Vec<Block> },
    /// The gate cannot decide safely, so it refuses.
    FailClosed { reason: String, remedy: String },
}

impl Verdict {
    /// Whether the change may proceed.
    pub fn allows(&self) -> bool {
        matches!(self, Verdict::Allow { .. })
    }
}

/// What to do when no identity says whose change it is.
pub const NO_IDENTITY_REMEDY: &str = "name the agent (--agent, GIT_MAS_AGENT or `git config mas.agent`), then retry";

/// The verdict when the gate's inputs could not be gathered (no identity, an unreadable board or
/// change): fail closed, naming why and what to do about that cause.
pub fn unreadable(reason: &str, remedy: &str) -> Verdict {
    Verdict::FailClosed { reason: reason.to_string(), remedy: remedy.to_string() }
}

/// Whether a change touches a target; `None` when it does not, else a note (empty when exact).
pub(crate) fn touches(
    target: &str,
    lines_of: &dyn Fn(&str) -> Option<[u32; 2]>,
    touched: &[Touched],
) -> Option<String> {
    let (path, symbol) = match target.split_once('#') {
        Some((p, _)) => (p, true),
        None => (target, false),
    };
    let t = touched.iter().find(|t| t.path == path)?;
    if !symbol {
        return Some(String::new());
    }
    match (lines_of(target), &t.lines) {
        (Some([lo, hi]), Some(ranges)) => ranges.iter().any(|[a, b]| *a <= hi && *b >= lo).then(String::new),
        (None, _) => Some(format!("the range of {target} is unknown, so it holds all of {path}")),
        (_, None) => Some(format!("the changed lines in {path} are unknown, so {target} holds the whole file")),
    }
}

/// Decides for `caller`. `others` are the other agents' live foci; `lines_of` gives a symbol
/// target's line range in the current frame.
pub fn gate(
    caller: &str,
    caller_focus: Option<&Focus>,
    current_frame: Option<&str>,
    others: &[Focus],
    touched: &[Touched],
    lines_of: &dyn Fn(&str) -> Option<[u32; 2]>,
) -> Verdict {
    let Some(frame) = current_frame else {
        return Verdict::FailClosed {
            reason: "no frame has been published, so no focus can be checked".into(),
            remedy: "publish one with `git mas snapshot --publish`, then `git mas focus publish`".into(),
        };
    };
    let Some(mine) = caller_focus else {
        return Verdict::FailClosed {
            reason: format!("{caller} has no live focus"),
            remedy: "publish one with `git mas focus publish --targets …` (or --top K) before editing".into(),
        };
    };
    if mine.frame != frame {
        return Verdict::FailClosed {
            reason: format!("{caller}'s focus is on frame {}, but the current frame is {frame}", short(&mine.frame)),
            remedy: "republish your focus on the current frame: `git mas focus publish`".into(),
        };
    }
    let mut blocks = Vec::new();
    let notes = Vec::new();
    for other in others.iter().filter(|f| f.agent != caller) {
        if other.frame != frame {
            if let Some(t) = other.targets.iter().find(|t| touches(t, lines_of, touched).is_some()) {
                return Verdict::FailClosed {
                    reason: format!(
                        "{} holds {t} on an old frame ({}), and this change touches it",
                        other.agent,
                        short(&other.frame)
                    ),
                    remedy: format!("ask {} to republish its focus on the current frame, then retry", other.agent),
                };
            }
            continue;
        }
        let Some(top) = other.top() else { continue };
        let (held, why) = match decide(mine, other) {
            Decision::Serialize { holder, target, .. } if holder == other.agent => {
                (target, format!("Serialize: both top targets are this one and {holder} < {caller}"))
            }
            Decision::Serialize { .. } => continue, // we hold it
            _ => (top.to_string(), "its top target".to_string()),
        };
        if let Some(note) = touches(&held, lines_of, touched) {
            let why = if note.is_empty() { why } else { format!("{why}; {note}") };
            blocks.push(Block {
                holder: other.agent.clone(),
                target: held.clone(),
                why,
                remedy: format!(
                    "wait until {} releases it (`git mas focus release`) or its focus expires, or leave {held} out of this change",
                    other.agent
                ),
            });
        }
    }
    if blocks.is_empty() { Verdict::Allow { frame: frame.to_string(), notes } } else { Verdict::Block { blocks } }
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
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

    fn file(path: &str) -> Touched {
        Touched { path: path.into(), lines: None }
    }

    fn lines(path: &str, ranges: &[[u32; 2]]) -> Touched {
        Touched { path: path.into(), lines: Some(ranges.to_vec()) }
    }

    fn ranges(id: &str) -> Option<[u32; 2]> {
        match id {
            "a.rs#f" => Some([10, 20]),
            "a.rs#g" => Some([30, 40]),
            _ => None,
        }
    }

    fn run(caller: &str, mine: Option<Focus>, others: &[Focus], touched: &[Touched]) -> Verdict {
        gate(caller, mine.as_ref(), Some("F"), others, touched, &ranges)
    }

    fn label(v: &Verdict) -> &'static str {
        match v {
            Verdict::Allow { .. } => "allow",
            Verdict::Block { .. } => "block",
            Verdict::FailClosed { .. } => "fail",
        }
    }

    #[test]
    fn verdict_table() {
        type Case<'a> = (&'a str, Option<Focus>, Vec<Focus>, Vec<Touched>, &'a str);
        let cases: Vec<Case> = vec![
            // Colliding top targets: the smaller name holds, the other is blocked.
            (
                "bob",
                Some(focus("bob", "F", &["x.rs"])),
                vec![focus("alice", "F", &["x.rs"])],
                vec![file("x.rs")],
                "block",
            ),
            (
                "alice",
                Some(focus("alice", "F", &["x.rs"])),
                vec![focus("bob", "F", &["x.rs"])],
                vec![file("x.rs")],
                "allow",
            ),
            // Another agent's top target is held even without a collision of tops.
            (
                "alice",
                Some(focus("alice", "F", &["y.rs"])),
                vec![focus("bob", "F", &["x.rs"])],
                vec![file("x.rs")],
                "block",
            ),
            // Its second target is not held.
            (
                "alice",
                Some(focus("alice", "F", &["y.rs"])),
                vec![focus("bob", "F", &["z.rs", "x.rs"])],
                vec![file("x.rs")],
                "allow",
            ),
            // Untouched held targets do not matter.
            (
                "bob",
                Some(focus("bob", "F", &["x.rs"])),
                vec![focus("alice", "F", &["x.rs"])],
                vec![file("other.rs")],
                "allow",
            ),
            // No focus, old focus: fail closed.
            ("bob", None, vec![], vec![file("x.rs")], "fail"),
            ("bob", Some(focus("bob", "OLD", &["x.rs"])), vec![], vec![file("x.rs")], "fail"),
            // Someone on an old frame names a touched target: fail closed; an untouched one: fine.
            (
                "bob",
                Some(focus("bob", "F", &["y.rs"])),
                vec![focus("carol", "OLD", &["q.rs", "x.rs"])],
                vec![file("x.rs")],
                "fail",
            ),
            (
                "bob",
                Some(focus("bob", "F", &["y.rs"])),
                vec![focus("carol", "OLD", &["q.rs"])],
                vec![file("x.rs")],
                "allow",
            ),
            // Symbols protect their lines only.
            (
                "bob",
                Some(focus("bob", "F", &["a.rs#g"])),
                vec![focus("alice", "F", &["a.rs#f"])],
                vec![lines("a.rs", &[[30, 31]])],
                "allow",
            ),
            (
                "bob",
                Some(focus("bob", "F", &["a.rs#g"])),
                vec![focus("alice", "F", &["a.rs#f"])],
                vec![lines("a.rs", &[[19, 25]])],
                "block",
            ),
            // Unknown lines: the symbol holds the whole file.
            (
                "bob",
                Some(focus("bob", "F", &["a.rs#g"])),
                vec![focus("alice", "F", &["a.rs#f"])],
                vec![file("a.rs")],
                "block",
            ),
            // An empty focus holds nothing.
            ("bob", Some(focus("bob", "F", &["y.rs"])), vec![focus("alice", "F", &[])], vec![file("x.rs")], "allow"),
        ];
        for (i, (caller, mine, others, touched, want)) in cases.into_iter().enumerate() {
            let v = run(caller, mine, &others, &touched);
            assert_eq!(label(&v), want, "case {i}: {v:?}");
        }
    }

    #[test]
    fn blocks_name_the_holder_the_target_and_a_remedy() {
        let v = run("bob", Some(focus("bob", "F", &["a.rs#g"])), &[focus("alice", "F", &["a.rs#f"])], &[file("a.rs")]);
        let Verdict::Block { blocks } = v else { panic!("{v:?}") };
        assert_eq!(blocks[0].holder, "alice");
        assert_eq!(blocks[0].target, "a.rs#f");
        assert!(blocks[0].why.contains("holds the whole file"));
        assert!(blocks[0].remedy.contains("git mas focus release"));
        assert!(matches!(gate("bob", None, None, &[], &[], &ranges), Verdict::FailClosed { .. }));
    }
}

//! The gate before an edit: the commit gate's verdict ([`super::gate`]) turned into the answer an
//! edit hook gives (allow, warn or deny), under the repository's gate mode. Reading the host's
//! payload and writing the answer in its format are the host's business ([`crate::hosts::payload`],
//! [`crate::hosts::reply`]).

use super::gate::Verdict;
use super::git_hooks::Mode;
use crate::hosts::reply::Answer;

/// The text of a refusing verdict: every holder, target and remedy, or why the gate failed closed.
pub fn refusal(verdict: &Verdict) -> Option<String> {
    match verdict {
        Verdict::Allow { .. } => None,
        Verdict::Block { blocks } => Some(
            blocks
                .iter()
                .map(|b| {
                    format!("git mas gate: {} is held by {} ({}). Remedy: {}.", b.target, b.holder, b.why, b.remedy)
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        Verdict::FailClosed { reason, remedy } => {
            Some(format!("git mas gate refused (failing closed): {reason}. Remedy: {remedy}."))
        }
    }
}

/// The answer to a verdict in `mode`: off lets everything through, warn lets a refusal through
/// with its text, enforce refuses.
pub fn answer(verdict: &Verdict, mode: Mode) -> Answer {
    match (refusal(verdict), mode) {
        (None, _) => {
            let note = match verdict {
                Verdict::Allow { notes, .. } if !notes.is_empty() => Some(notes.join("; ")),
                _ => None,
            };
            Answer::Allow { note }
        }
        (Some(_), Mode::Off) => Answer::Allow { note: None },
        (Some(text), Mode::Warn) => {
            Answer::Warn { message: format!("{text}\n(mas.gate is warn: the edit goes ahead)") }
        }
        (Some(reason), Mode::Enforce) => Answer::Deny { reason },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::gate::Block;

    #[test]
    fn answer_table() {
        let allow = Verdict::Allow { frame: "F".into(), notes: vec![] };
        let block = Verdict::Block {
            blocks: vec![Block {
                holder: "alice".into(),
                target: "src/money.rs".into(),
                why: "its top target".into(),
                remedy: "wait".into(),
            }],
        };
        let fail = Verdict::FailClosed { reason: "bob has no live focus".into(), remedy: "publish one".into() };
        let label = |a: &Answer| match a {
            Answer::Allow { .. } => "allow",
            Answer::Warn { .. } => "warn",
            Answer::Deny { .. } => "deny",
        };
        let cases = [
            (&allow, Mode::Enforce, "allow"),
            (&allow, Mode::Warn, "allow"),
            (&block, Mode::Enforce, "deny"),
            (&block, Mode::Warn, "warn"),
            (&block, Mode::Off, "allow"),
            (&fail, Mode::Enforce, "deny"),
            (&fail, Mode::Warn, "warn"),
        ];
        for (v, mode, want) in cases {
            assert_eq!(label(&answer(v, mode)), want, "{v:?} {mode:?}");
        }
        let Answer::Deny { reason } = answer(&block, Mode::Enforce) else { panic!() };
        assert!(reason.contains("alice") && reason.contains("src/money.rs") && reason.contains("wait"), "{reason}");
        let Answer::Deny { reason } = answer(&fail, Mode::Enforce) else { panic!() };
        assert!(reason.contains("no live focus") && reason.contains("publish one"), "{reason}");
    }
}

//! The line protocol peers write in both phases, and the parsers that find it.
//!
//! A peer's reply is free text: prose, then the protocol lines. ASSEMBLY ends with `CLASS <name>` and
//! `UPDATE <expression>`, CONVERGE with `ANNOUNCE value=<f64> agent=<id> epoch=<k>` and
//! `VOTE CONTINUE|STOP`, and every hop with `NEXT <peer>` or `DONE`. Models wrap such lines in code
//! fences, in inline backticks, and end lines with CRLF; they also show their working first, so
//! the protocol line is rarely the first line. Every parser therefore looks at [`protocol_lines`]:
//! the reply split on `\n`, each line trimmed (which drops a `\r`), surrounding backticks removed,
//! and fence markers (lines starting with three backticks) skipped — the lines inside a fence count.
//!
//! What each parser takes follows the seed's published implementation, so that transcripts keep
//! their meaning:
//!
//! - CLASS: the first line starting with `CLASS `, `CLASS=`, `CLASS:` or `class `; its first token
//!   (split on whitespace, `,` or `;`) is the name. A marker with no name is skipped and later lines
//!   still count. (`CLASS:` is an addition: it cannot be read any other way.)
//! - UPDATE: the first line starting with `UPDATE` followed by a space, `:` or `=`; backticks and a
//!   leading `name =` (not `==`) are stripped; an empty remainder is skipped.
//! - ANNOUNCE: the first line starting with `ANNOUNCE value=`, `ANNOUNCE ` or `COMMIT proposal=`
//!   whose number (ending at whitespace or a comma) is finite; otherwise the next such line is
//!   tried. When none is readable the error says why, so the peer can be asked once more with it.
//! - VOTE: `VOTE STOP…` or a bare `STOP` is stop, `VOTE CONTINUE…` or a bare `CONTINUE` is continue
//!   (case-insensitive, as published); the first such line wins.
//! - NEXT / DONE: the *last* `NEXT <peer>` or `DONE` line wins, because the handoff is what closes a
//!   reply (prose before it may quote the protocol).

use crate::runtime::{PatternKind, Vote};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The protocol lines of a reply: trimmed, unwrapped from backticks, fence markers skipped. Yields
/// 1-based line numbers with the lines.
pub fn protocol_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n').enumerate().filter_map(|(i, raw)| {
        let line = raw.trim();
        if line.starts_with("```") {
            return None;
        }
        let line = line.trim_matches('`').trim();
        Some((i + 1, line))
    })
}

/// A `CLASS` line: the token as written and the class it denotes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassLine {
    /// The token, as written.
    pub token: String,
    /// The class; `Unmapped` for any token that is not a known name or alias.
    pub pattern: PatternKind,
}

/// The first `CLASS` line that names something.
pub fn parse_class_line(text: &str) -> Option<ClassLine> {
    protocol_lines(text).find_map(|(_, line)| {
        let rest = ["CLASS ", "CLASS=", "CLASS:", "class "].iter().find_map(|marker| line.strip_prefix(marker))?;
        let token = rest.split(|c: char| c.is_whitespace() || c == ',' || c == ';').find(|t| !t.is_empty())?;
        Some(ClassLine { token: token.to_owned(), pattern: PatternKind::from_token(token) })
    })
}

/// The expression of the first `UPDATE` line that has one.
pub fn parse_update_line(text: &str) -> Option<String> {
    protocol_lines(text).find_map(|(_, line)| {
        let rest = line.strip_prefix("UPDATE")?;
        let rest = rest.strip_prefix([' ', ':', '='])?;
        let rest: String = rest.chars().filter(|&c| c != '`').collect();
        let rule = strip_assignment(rest.trim()).trim();
        (!rule.is_empty()).then(|| rule.to_owned())
    })
}

/// `next = expr` → `expr` (but not `a == b`).
fn strip_assignment(rule: &str) -> &str {
    let name_len = rule.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
    if name_len == 0 || rule.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return rule;
    }
    let after = rule[name_len..].trim_start();
    match after.strip_prefix('=') {
        Some(value) if !value.starts_with('=') => value,
        _ => rule,
    }
}

/// How a reply hands the turn on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Handoff {
    /// `NEXT <peer>`.
    Next(String),
    /// `DONE`.
    Done,
}

/// The last `NEXT <peer>` or `DONE` line.
pub fn parse_handoff(text: &str) -> Option<Handoff> {
    protocol_lines(text)
        .filter_map(|(_, line)| {
            if line == "DONE" {
                return Some(Handoff::Done);
            }
            let peer = line.strip_prefix("NEXT ")?.split_whitespace().next()?;
            Some(Handoff::Next(peer.to_owned()))
        })
        .last()
}

/// A readable announcement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Announcement {
    /// The announced value (always finite).
    pub value: f64,
    /// The `agent=` field, when present.
    pub agent: Option<String>,
    /// The `epoch=` field, when present and a whole number.
    pub epoch: Option<u64>,
    /// The line it was read from (1-based).
    pub line: usize,
}

/// Why a reply has no readable announcement. The message is meant to be sent back to the peer.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AnnounceError {
    /// No line starts with an announce marker.
    #[error("no line starts with `ANNOUNCE value=`; end the reply with `ANNOUNCE value=<number> agent=<id> epoch=<k>`")]
    Missing,
    /// Announce lines exist, but none holds a finite number.
    #[error(
        "line {line}: {found:?} is not a finite number; write the value as a plain decimal, e.g. `ANNOUNCE value=2.5`"
    )]
    Unreadable {
        /// The first such line (1-based).
        line: usize,
        /// What stood where the number belongs.
        found: String,
    },
}

/// The first readable `ANNOUNCE` (or `COMMIT proposal=`) line.
pub fn parse_announce(text: &str) -> Result<Announcement, AnnounceError> {
    let mut first_problem = None;
    for (line_no, line) in protocol_lines(text) {
        let Some(rest) =
            ["ANNOUNCE value=", "ANNOUNCE ", "COMMIT proposal="].iter().find_map(|marker| line.strip_prefix(marker))
        else {
            continue;
        };
        let rest = rest.trim_start();
        let rest = rest.strip_prefix("value=").unwrap_or(rest);
        let token = rest.split(|c: char| c.is_whitespace() || c == ',').next().unwrap_or("");
        match token.parse::<f64>() {
            Ok(value) if value.is_finite() => {
                let field = |key: &str| {
                    rest.split(|c: char| c.is_whitespace() || c == ',')
                        .find_map(|part| part.strip_prefix(key))
                        .filter(|v| !v.is_empty())
                };
                return Ok(Announcement {
                    value,
                    agent: field("agent=").map(str::to_owned),
                    epoch: field("epoch=").and_then(|e| e.parse().ok()),
                    line: line_no,
                });
            }
            _ => {
                if first_problem.is_none() {
                    let found: String = token.chars().take(40).collect();
                    first_problem = Some(AnnounceError::Unreadable { line: line_no, found });
                }
            }
        }
    }
    Err(first_problem.unwrap_or(AnnounceError::Missing))
}

/// The first `VOTE` line (or bare `STOP` / `CONTINUE`).
pub fn parse_vote(text: &str) -> Option<Vote> {
    protocol_lines(text).find_map(|(_, line)| {
        let upper = line.to_ascii_uppercase();
        if upper.starts_with("VOTE STOP") || upper == "STOP" {
            Some(Vote::Stop)
        } else if upper.starts_with("VOTE CONTINUE") || upper == "CONTINUE" {
            Some(Vote::Continue)
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn class_line_is_found_among_prose_fences_and_crlf() {
        let cases: &[(&str, Option<(&str, PatternKind)>)] = &[
            ("CLASS preference", Some(("preference", PatternKind::Preference))),
            ("we agree\r\nCLASS cascade\r\nUPDATE x", Some(("cascade", PatternKind::Cascade))),
            ("prose\n```\nCLASS=resource\n```\n", Some(("resource", PatternKind::Resource))),
            ("`CLASS jacobi`", Some(("jacobi", PatternKind::Preference))),
            ("class beer; because", Some(("beer", PatternKind::Cascade))),
            ("CLASS: development", Some(("development", PatternKind::Development))),
            ("CLASS matching-markets", Some(("matching-markets", PatternKind::Unmapped))),
            ("CLASS \nCLASS resource", Some(("resource", PatternKind::Resource))),
            ("CLASS ,;\nmore", None),
            ("the CLASS preference", None),
            ("CLASSY preference", None),
            ("", None),
        ];
        for (text, want) in cases {
            let got = parse_class_line(text).map(|c| (c.token, c.pattern));
            assert_eq!(got, want.map(|(t, p)| (t.to_owned(), p)), "{text:?}");
        }
    }

    #[test]
    fn update_line_table() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                "UPDATE (target + 2*beta*neighbour_sum) / (1 + 2*beta*degree)",
                Some("(target + 2*beta*neighbour_sum) / (1 + 2*beta*degree)"),
            ),
            ("prose\r\nUPDATE: `state + 1`\r\nDONE", Some("state + 1")),
            ("UPDATE=z_next = target", Some("target")),
            ("UPDATE next == 2", Some("next == 2")),
            ("UPDATE 2 = 3", Some("2 = 3")),
            ("```text\nUPDATE max(0, stock)\n```", Some("max(0, stock)")),
            ("UPDATE \nUPDATE stock", Some("stock")),
            ("UPDATE next =  \nUPDATE stock", Some("stock")),
            ("UPDATES stock", None),
            ("UPDATE", None),
            ("no protocol here", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_update_line(text).as_deref(), *want, "{text:?}");
        }
    }

    #[test]
    fn handoff_takes_the_last_line() {
        assert_eq!(parse_handoff("NEXT bob"), Some(Handoff::Next("bob".into())));
        assert_eq!(parse_handoff("I said `NEXT bob` before\r\nDONE\r\n"), Some(Handoff::Done));
        assert_eq!(parse_handoff("DONE\nNEXT carol "), Some(Handoff::Next("carol".into())));
        assert_eq!(parse_handoff("NEXT \ndone"), None);
    }

    #[test]
    fn announce_table() {
        let ok: &[(&str, f64, Option<&str>, Option<u64>)] = &[
            ("ANNOUNCE value=1.5 agent=goose-0 epoch=3", 1.5, Some("goose-0"), Some(3)),
            ("COMMIT proposal=2.25 agent=a", 2.25, Some("a"), None),
            ("next = 4.0 + 1.5\r\nANNOUNCE value=5.5 agent=a epoch=0\r\nVOTE STOP", 5.5, Some("a"), Some(0)),
            ("ANNOUNCE value=x\nANNOUNCE value=2", 2.0, None, None),
            ("ANNOUNCE 3.25 extra", 3.25, None, None),
            ("ANNOUNCE value=-1e-3, agent=b, epoch=x", -0.001, Some("b"), None),
            ("```\nANNOUNCE value=.5\n```", 0.5, None, None),
            ("`ANNOUNCE value=7 agent=c epoch=1`", 7.0, Some("c"), Some(1)),
        ];
        for (text, value, agent, epoch) in ok {
            let got = parse_announce(text).expect(text);
            assert_eq!(got.value, *value, "{text:?}");
            assert_eq!(got.agent.as_deref(), *agent, "{text:?}");
            assert_eq!(got.epoch, *epoch, "{text:?}");
        }
        assert_eq!(parse_announce("VOTE STOP"), Err(AnnounceError::Missing));
        assert_eq!(
            parse_announce("ANNOUNCE value=<f64> agent=a\nANNOUNCE nan"),
            Err(AnnounceError::Unreadable { line: 1, found: "<f64>".into() })
        );
        assert!(matches!(parse_announce("ANNOUNCE value=inf"), Err(AnnounceError::Unreadable { .. })));
        assert!(matches!(parse_announce("ANNOUNCE value=1e999"), Err(AnnounceError::Unreadable { .. })));
    }

    #[test]
    fn vote_table() {
        let cases: &[(&str, Option<Vote>)] = &[
            ("VOTE CONTINUE\nNEXT goose-1", Some(Vote::Continue)),
            ("VOTE STOP", Some(Vote::Stop)),
            ("STOP", Some(Vote::Stop)),
            ("  continue \r\n", Some(Vote::Continue)),
            ("vote stop because the metric is flat", Some(Vote::Stop)),
            ("ANNOUNCE value=1\r\n```\nVOTE STOP\n```", Some(Vote::Stop)),
            ("VOTE CONTINUE\nVOTE STOP", Some(Vote::Continue)),
            ("we should stop soon", None),
            ("NEXT goose-1", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_vote(text), *want, "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn line_parsers_never_panic(text in "\\PC{0,200}") {
            let _ = parse_class_line(&text);
            let _ = parse_update_line(&text);
            let _ = parse_handoff(&text);
            let _ = parse_announce(&text);
            let _ = parse_vote(&text);
        }

        #[test]
        fn line_parsers_never_panic_on_protocol_like_input(
            text in "((CLASS|UPDATE|ANNOUNCE|COMMIT proposal=|VOTE|NEXT|DONE|STOP|value=|agent=|epoch=|```|`|=|:|,|;| |\r|\n|[a-z0-9.eE+-]{0,6}|é){0,30})"
        ) {
            let _ = parse_class_line(&text);
            let _ = parse_update_line(&text);
            let _ = parse_handoff(&text);
            if let Ok(a) = parse_announce(&text) {
                prop_assert!(a.value.is_finite());
            }
            let _ = parse_vote(&text);
        }
    }
}

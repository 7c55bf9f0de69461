//! ASSEMBLY: the team models the problem together, names a class and derives each member's update
//! rule.
//!
//! Peers debate in prose; the class is *inferred* from what they write, softly, by
//! [`AssemblySession`]. Each ingested reply is read on its own, in order:
//!
//! 1. A `CLASS` line ([`protocol::parse_class_line`]) sets the hypothesis. Any token that is not a
//!    known name or alias gives [`PatternKind::Unmapped`] — a successful modelling outcome on which
//!    CONVERGE must not start.
//! 2. Otherwise keywords vote ([`keyword_votes`]): each keyword of a class counts once if it occurs
//!    anywhere in the lower-cased reply; the class with the most votes wins; no votes or a tie
//!    leaves the hypothesis as it was.
//!
//! Decision: **a CLASS line outranks keywords across the whole transcript.** Once some reply named
//! a class, later prose that merely mentions "stock" or "inventory" does not overturn it; only
//! another CLASS line does. (The published implementation let any later keyword vote replace a
//! named class, which contradicts "a CLASS line wins".) A hypothesis seeded from `--pattern`
//! ([`AssemblySession::seeded`]) is the weakest: keywords or a CLASS line replace it.
//!
//! [`AssemblySession::remap`] clears the hypothesis (the seed included) and re-ingests the
//! transcript, counting the remap: the class then rests on what the team wrote alone.
//!
//! The rules themselves live in [`expr`] (the language), [`rules`] (each class's names, reference
//! and scoring) and [`protocol`] (the line parsers, shared with CONVERGE).

pub mod expr;
pub mod protocol;
pub mod rules;

pub use expr::{Expr, ExprError, Quantities, evaluate};
pub use protocol::{
    AnnounceError, Announcement, ClassLine, Handoff, parse_announce, parse_class_line, parse_handoff,
    parse_update_line, parse_vote, protocol_lines,
};
pub use rules::{
    CASCADE, PREFERENCE, ProbeRange, ProbeRng, QuantitySpec, RESOURCE, UpdateClass, Verdict, quantity_names,
    score_rule, update_class,
};

use crate::runtime::PatternKind;
use serde::{Deserialize, Serialize};

/// The keywords that vote for each paper class (matched as lower-case substrings, once each).
pub const KEYWORDS: [(PatternKind, &[&str]); 3] = [
    (PatternKind::Preference, &["preference", "jacobi", "neighbor", "quadratic", "shared score"]),
    (PatternKind::Cascade, &["cascade", "inventory", "pipeline", "supply chain", "retailer", "factory", "order-up-to"]),
    (PatternKind::Resource, &["resource", "extraction", "quota", "renewable", "stock", "lambda"]),
];

/// How many keywords of each paper class a text contains.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeywordVotes {
    /// Preference keywords found.
    pub preference: usize,
    /// Cascade keywords found.
    pub cascade: usize,
    /// Resource keywords found.
    pub resource: usize,
}

impl KeywordVotes {
    /// The class with strictly the most votes, if any has votes.
    pub fn winner(&self) -> Option<PatternKind> {
        let tally = [
            (PatternKind::Preference, self.preference),
            (PatternKind::Cascade, self.cascade),
            (PatternKind::Resource, self.resource),
        ];
        let best = tally.iter().map(|(_, n)| *n).max().unwrap_or(0);
        let mut leaders = tally.iter().filter(|(_, n)| *n == best);
        match (leaders.next(), leaders.next()) {
            (Some((kind, _)), None) if best > 0 => Some(*kind),
            _ => None,
        }
    }
}

/// Counts keyword votes in `text`.
pub fn keyword_votes(text: &str) -> KeywordVotes {
    let lower = text.to_lowercase();
    let count = |class: PatternKind| {
        KEYWORDS
            .iter()
            .filter(|(kind, _)| *kind == class)
            .flat_map(|(_, words)| words.iter())
            .filter(|word| lower.contains(**word))
            .count()
    };
    KeywordVotes {
        preference: count(PatternKind::Preference),
        cascade: count(PatternKind::Cascade),
        resource: count(PatternKind::Resource),
    }
}

/// Where a hypothesis came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "kebab-case")]
pub enum Inference {
    /// A `--pattern` seed.
    Seed {
        /// The seeded class.
        pattern: PatternKind,
    },
    /// Keyword votes in one reply.
    Keywords {
        /// The winning class.
        pattern: PatternKind,
        /// The votes.
        votes: KeywordVotes,
    },
    /// A `CLASS` line.
    ClassLine {
        /// The class.
        pattern: PatternKind,
        /// The token as written.
        token: String,
    },
}

impl Inference {
    /// The inferred class.
    pub fn pattern(&self) -> PatternKind {
        match self {
            Inference::Seed { pattern }
            | Inference::Keywords { pattern, .. }
            | Inference::ClassLine { pattern, .. } => *pattern,
        }
    }
}

/// What one reply says about the class on its own: its CLASS line, else its keyword winner.
pub fn infer_pattern(text: &str) -> Option<Inference> {
    if let Some(line) = parse_class_line(text) {
        return Some(Inference::ClassLine { pattern: line.pattern, token: line.token });
    }
    let votes = keyword_votes(text);
    votes.winner().map(|pattern| Inference::Keywords { pattern, votes })
}

/// The ASSEMBLY transcript and the class hypothesis drawn from it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AssemblySession {
    transcript: Vec<String>,
    inference: Option<Inference>,
    remap_count: u32,
}

impl AssemblySession {
    /// An empty session with no hypothesis.
    pub fn new() -> Self {
        AssemblySession::default()
    }

    /// An empty session whose hypothesis starts as `pattern` (from `--pattern`).
    pub fn seeded(pattern: PatternKind) -> Self {
        AssemblySession { inference: Some(Inference::Seed { pattern }), ..AssemblySession::default() }
    }

    /// Adds a reply to the transcript and updates the hypothesis; returns the class inferred now.
    pub fn ingest(&mut self, text: &str) -> Option<PatternKind> {
        self.transcript.push(text.to_owned());
        self.infer_from(text);
        self.inferred()
    }

    fn infer_from(&mut self, text: &str) {
        match infer_pattern(text) {
            Some(line @ Inference::ClassLine { .. }) => self.inference = Some(line),
            Some(keywords) if !matches!(self.inference, Some(Inference::ClassLine { .. })) => {
                self.inference = Some(keywords);
            }
            _ => {}
        }
    }

    /// Clears the hypothesis (a seed included) and re-infers it from the transcript alone.
    pub fn remap(&mut self) -> Option<PatternKind> {
        self.remap_count = self.remap_count.saturating_add(1);
        self.inference = None;
        let transcript = std::mem::take(&mut self.transcript);
        for text in &transcript {
            self.infer_from(text);
        }
        self.transcript = transcript;
        self.inferred()
    }

    /// The class inferred so far.
    pub fn inferred(&self) -> Option<PatternKind> {
        self.inference.as_ref().map(Inference::pattern)
    }

    /// How the current hypothesis was reached.
    pub fn inference(&self) -> Option<&Inference> {
        self.inference.as_ref()
    }

    /// The replies ingested, in order.
    pub fn transcript(&self) -> &[String] {
        &self.transcript
    }

    /// How many times the session was remapped.
    pub fn remap_count(&self) -> u32 {
        self.remap_count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_line_wins_over_keywords_in_one_reply() {
        let text = "the stock and the quota and the extraction matter\nCLASS preference";
        assert_eq!(infer_pattern(text).map(|i| i.pattern()), Some(PatternKind::Preference));
    }

    #[test]
    fn keywords_vote_once_each() {
        assert_eq!(
            infer_pattern("blend neighbor scores on a line").map(|i| i.pattern()),
            Some(PatternKind::Preference)
        );
        assert_eq!(
            infer_pattern("Factory and retailer inventory pipeline").map(|i| i.pattern()),
            Some(PatternKind::Cascade)
        );
        assert_eq!(
            infer_pattern("shared renewable stock and extraction quota").map(|i| i.pattern()),
            Some(PatternKind::Resource)
        );
        // "stock" five times is one vote; two cascade keywords beat it.
        let votes = keyword_votes("stock stock stock stock stock, inventory in the pipeline");
        assert_eq!(votes, KeywordVotes { preference: 0, cascade: 2, resource: 1 });
        assert_eq!(votes.winner(), Some(PatternKind::Cascade));
        // A tie gives no hypothesis.
        assert_eq!(keyword_votes("inventory and stock").winner(), None);
        assert_eq!(keyword_votes("nothing relevant").winner(), None);
    }

    #[test]
    fn session_keeps_the_last_hypothesis_on_ties_and_silence() {
        let mut session = AssemblySession::new();
        assert_eq!(session.ingest("talk only"), None);
        assert_eq!(session.ingest("the inventory and the pipeline"), Some(PatternKind::Cascade));
        assert_eq!(session.ingest("inventory versus stock"), Some(PatternKind::Cascade));
        assert_eq!(session.ingest("a renewable stock"), Some(PatternKind::Resource));
        assert_eq!(session.ingest("CLASS preference"), Some(PatternKind::Preference));
        // Keywords do not overturn a CLASS line; another CLASS line does.
        assert_eq!(session.ingest("renewable stock, extraction quota"), Some(PatternKind::Preference));
        assert_eq!(session.ingest("CLASS matching-markets"), Some(PatternKind::Unmapped));
        assert_eq!(
            session.inference(),
            Some(&Inference::ClassLine { pattern: PatternKind::Unmapped, token: "matching-markets".into() })
        );
        assert_eq!(session.transcript().len(), 7);
    }

    #[test]
    fn remap_clears_a_seed_and_reinfers_from_the_transcript() {
        let mut session = AssemblySession::seeded(PatternKind::Cascade);
        assert_eq!(session.inferred(), Some(PatternKind::Cascade));
        assert_eq!(session.ingest("we talked"), Some(PatternKind::Cascade));
        assert_eq!(session.remap(), None);
        assert_eq!(session.remap_count(), 1);
        session.ingest("CLASS resource");
        session.ingest("the inventory pipeline");
        assert_eq!(session.remap(), Some(PatternKind::Resource));
        assert_eq!(session.remap_count(), 2);
        assert_eq!(session.transcript().len(), 3);
        let json = serde_json::to_string(&session).unwrap();
        assert_eq!(serde_json::from_str::<AssemblySession>(&json).unwrap(), session);
    }

    #[test]
    fn unknown_class_is_unmapped() {
        let mut session = AssemblySession::seeded(PatternKind::Preference);
        assert_eq!(session.ingest("prose\r\n```\nCLASS matching-markets\nUPDATE x\n```"), Some(PatternKind::Unmapped));
    }
}

//! One name for one ending of a run, the same in every place that says how a run ended or
//! stands: `coordinate`'s halt line (its `halt` code), `git mas report` (text, `--json`'s
//! `ending`, the `--html` header), `git mas run list` / `run show` and `git mas status`.
//!
//! A run's end used to be named three ways at once — the driver's halt (`max-rounds-reached`),
//! the report's status and reason (`blocked (risk_blocked)`, when a hard conflict was left
//! unresolved) and the run's phase (`aborted`) — for one and the same halt. The ending is the
//! one name; the seed's status and termination reason stay in the report (`status`,
//! `termination_reason` in `--json`, unchanged fields) and, for an ending the driver decided, now
//! agree with it: the reason *is* the halt.
//!
//! | ending | what happened | `coordinate` halt | report status (reason) | phase (`--json`) |
//! |--------|---------------|-------------------|------------------------|------------------|
//! | `open` | the run takes proposals | — | running | open |
//! | `landed` | the winner(s) landed | `landed` | converged (quality_reached, tasks_completed, max_rounds_reached or budget_exhausted) | landed (landing while it completes) |
//! | `land-blocked` | the last landing was blocked (merge conflict, failing merged check) and still stands; the run stays open for a fix | `land-blocked` | blocked (risk_blocked) | open |
//! | `max-rounds-reached` | the driver's rounds ran out unlanded | `max-rounds-reached` | failed (max_rounds_reached) — unresolved hard conflicts are listed as risks, not made the reason | aborted |
//! | `budget-exhausted` | the driver's budget ran out unlanded | `budget-exhausted` | failed (budget_exhausted) | aborted |
//! | `unreadable-reply` | an agent's reply was unusable twice | `unreadable-reply` | blocked (risk_blocked) | aborted |
//! | `nothing-to-land` | every slice's agent abstained | `nothing-to-land` | failed (as the seed's rules give) | aborted |
//! | `aborted` | `git mas run abort` | — | failed (budget_exhausted, max_rounds_reached or tasks_completed), or blocked (risk_blocked) when it leaves a hard conflict unresolved | aborted |
//! | `aborted-as-risk` | `git mas run abort --risk` | — | blocked (risk_blocked) | aborted |
//!
//! The driver records its halt in the abort record (`halt`); an abort recorded before that was
//! kept reads as `aborted` or `aborted-as-risk`.

use serde::{Deserialize, Serialize};

/// How a run ended, or that it has not: one name each (see the module docs for the mapping).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// The run takes proposals.
    Open,
    /// The winner(s) landed.
    Landed,
    /// The last landing attempt was blocked, and still stands.
    LandBlocked,
    /// The driver's rounds ran out unlanded.
    MaxRoundsReached,
    /// The driver's budget ran out unlanded.
    BudgetExhausted,
    /// An agent's reply was unusable twice.
    UnreadableReply,
    /// Every slice's agent abstained: nothing to land.
    NothingToLand,
    /// Aborted by hand.
    Aborted,
    /// Aborted by hand as a blocking risk.
    AbortedAsRisk,
}

impl Ending {
    /// Every ending, in the order of the module docs' table.
    pub const ALL: [Ending; 9] = [
        Ending::Open,
        Ending::Landed,
        Ending::LandBlocked,
        Ending::MaxRoundsReached,
        Ending::BudgetExhausted,
        Ending::UnreadableReply,
        Ending::NothingToLand,
        Ending::Aborted,
        Ending::AbortedAsRisk,
    ];

    /// The name (kebab-case, as `--json` and the driver's halt codes spell it).
    pub fn name(self) -> &'static str {
        match self {
            Ending::Open => "open",
            Ending::Landed => "landed",
            Ending::LandBlocked => "land-blocked",
            Ending::MaxRoundsReached => "max-rounds-reached",
            Ending::BudgetExhausted => "budget-exhausted",
            Ending::UnreadableReply => "unreadable-reply",
            Ending::NothingToLand => "nothing-to-land",
            Ending::Aborted => "aborted",
            Ending::AbortedAsRisk => "aborted-as-risk",
        }
    }

    /// The ending a name names.
    pub fn parse(name: &str) -> Option<Ending> {
        Ending::ALL.into_iter().find(|e| e.name() == name)
    }

    /// How an aborted run ended: the driver's recorded halt when it names an unlanded ending,
    /// else a hand abort (as a risk, or not).
    pub fn of_abort(halt: Option<&str>, risk: bool) -> Ending {
        match halt.and_then(Ending::parse) {
            Some(e) if !matches!(e, Ending::Open | Ending::Landed) => e,
            _ if risk => Ending::AbortedAsRisk,
            _ => Ending::Aborted,
        }
    }
}

impl std::fmt::Display for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_and_an_abort_reads_its_recorded_halt() {
        for e in Ending::ALL {
            assert_eq!(Ending::parse(e.name()), Some(e));
            assert_eq!(serde_json::to_value(e).unwrap(), e.name());
        }
        let table: &[(Option<&str>, bool, Ending)] = &[
            (Some("max-rounds-reached"), false, Ending::MaxRoundsReached),
            (Some("budget-exhausted"), false, Ending::BudgetExhausted),
            (Some("unreadable-reply"), true, Ending::UnreadableReply),
            (Some("nothing-to-land"), false, Ending::NothingToLand),
            (Some("landed"), false, Ending::Aborted), // not an abort's halt: read as a hand abort
            (Some("something-new"), true, Ending::AbortedAsRisk),
            (None, false, Ending::Aborted),
            (None, true, Ending::AbortedAsRisk),
        ];
        for (halt, risk, want) in table {
            assert_eq!(Ending::of_abort(*halt, *risk), *want, "{halt:?} {risk}");
        }
    }
}

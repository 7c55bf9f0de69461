//! Class names and protocol phases.
//!
//! A class name arrives from three places: a `CLASS` line a peer wrote, a `--pattern` flag a person
//! typed, and stored records. Peers write freely, so [`PatternKind::from_token`] is lenient: it
//! trims, ignores case, knows the published aliases (`jacobi`, `beer`, `fishbanks`, …) and maps any
//! other token to [`PatternKind::Unmapped`] — naming a class git-mas does not solve is a legitimate
//! modelling outcome, not an error. A flag is different: a typo there must not silently become
//! "unmapped", so [`PatternKind::parse_flag`] (also [`std::str::FromStr`]) accepts the same names and
//! aliases and refuses anything else with an error that lists the five names.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// The class of problem a team is solving, which selects the engine that applies its updates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PatternKind {
    /// A shared code artifact: peers propose trees and endorse them with tool results.
    Development,
    /// Preference aggregation on a line graph (synchronous Jacobi steps).
    Preference,
    /// A supply-chain cascade of stages ordering from each other.
    Cascade,
    /// A shared renewable resource with a price on extraction.
    Resource,
    /// A class git-mas has no engine for; CONVERGE must not start on it.
    Unmapped,
}

/// Why a `--pattern` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PatternError {
    /// The value is not a class name or alias.
    #[error("unknown pattern {given:?}; expected one of: development, preference, cascade, resource, unmapped")]
    Unknown {
        /// The value as given.
        given: String,
    },
}

impl PatternKind {
    /// Every class, in the order the flag's help lists them.
    pub const ALL: [PatternKind; 5] = [
        PatternKind::Development,
        PatternKind::Preference,
        PatternKind::Cascade,
        PatternKind::Resource,
        PatternKind::Unmapped,
    ];

    /// The canonical lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            PatternKind::Development => "development",
            PatternKind::Preference => "preference",
            PatternKind::Cascade => "cascade",
            PatternKind::Resource => "resource",
            PatternKind::Unmapped => "unmapped",
        }
    }

    /// True for the three scalar classes that run under the scalar CONVERGE driver
    /// (announce a value, vote, `ConvergeController` halts). Development is CONVERGE too, but with the
    /// artifact driver.
    pub fn is_converge_class(self) -> bool {
        matches!(self, PatternKind::Preference | PatternKind::Cascade | PatternKind::Resource)
    }

    /// True when git-mas has an engine for the class (everything but `Unmapped`).
    pub fn is_implemented(self) -> bool {
        self != PatternKind::Unmapped
    }

    /// The class a name or alias denotes, or `None` when it is not one (trimmed, case-insensitive).
    pub fn lookup(name: &str) -> Option<PatternKind> {
        let lower = name.trim().to_ascii_lowercase();
        Some(match lower.as_str() {
            "preference" | "preference-aggregation" | "jacobi" => PatternKind::Preference,
            "cascade" | "supply-chain" | "supply_chain" | "beer" => PatternKind::Cascade,
            "resource" | "allocation" | "fishbanks" => PatternKind::Resource,
            "development" | "dev" => PatternKind::Development,
            "unmapped" | "unknown" | "other" => PatternKind::Unmapped,
            _ => return None,
        })
    }

    /// The class a peer's `CLASS` token names: any token that is not a known name or alias is
    /// [`PatternKind::Unmapped`].
    pub fn from_token(token: &str) -> PatternKind {
        PatternKind::lookup(token).unwrap_or(PatternKind::Unmapped)
    }

    /// Strict parsing for a `--pattern` flag: names and aliases only.
    pub fn parse_flag(value: &str) -> Result<PatternKind, PatternError> {
        PatternKind::lookup(value).ok_or_else(|| PatternError::Unknown { given: value.to_owned() })
    }
}

impl fmt::Display for PatternKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PatternKind {
    type Err = PatternError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PatternKind::parse_flag(s)
    }
}

/// The two group phases: model together, then converge together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProtocolPhase {
    /// Joint modelling: each peer names a class and derives its UPDATE rule.
    Assembly,
    /// Joint solving: each peer applies its rule and announces; the engine applies what is announced.
    Converge,
}

impl ProtocolPhase {
    /// The upper-case form a hop prints (`phase=ASSEMBLY`).
    pub fn label(self) -> &'static str {
        match self {
            ProtocolPhase::Assembly => "ASSEMBLY",
            ProtocolPhase::Converge => "CONVERGE",
        }
    }
}

impl fmt::Display for ProtocolPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_map_as_published() {
        let cases: &[(&str, PatternKind)] = &[
            ("preference", PatternKind::Preference),
            (" Preference-Aggregation ", PatternKind::Preference),
            ("JACOBI", PatternKind::Preference),
            ("cascade", PatternKind::Cascade),
            ("supply-chain", PatternKind::Cascade),
            ("supply_chain", PatternKind::Cascade),
            ("Beer", PatternKind::Cascade),
            ("resource", PatternKind::Resource),
            ("allocation", PatternKind::Resource),
            ("fishbanks", PatternKind::Resource),
            ("development", PatternKind::Development),
            ("dev", PatternKind::Development),
            ("unmapped", PatternKind::Unmapped),
            ("unknown", PatternKind::Unmapped),
            ("other", PatternKind::Unmapped),
        ];
        for (token, kind) in cases {
            assert_eq!(PatternKind::from_token(token), *kind, "{token:?}");
            assert_eq!(token.parse::<PatternKind>(), Ok(*kind), "{token:?}");
        }
    }

    #[test]
    fn unknown_token_is_unmapped_but_an_unknown_flag_is_an_error() {
        assert_eq!(PatternKind::from_token("matching-markets"), PatternKind::Unmapped);
        assert_eq!(PatternKind::from_token(""), PatternKind::Unmapped);
        let err = PatternKind::parse_flag("matching-markets").unwrap_err();
        let message = err.to_string();
        for kind in PatternKind::ALL {
            assert!(message.contains(kind.name()), "{message}");
        }
    }

    #[test]
    fn only_the_scalar_classes_use_the_scalar_driver() {
        let scalar: Vec<PatternKind> = PatternKind::ALL.into_iter().filter(|k| k.is_converge_class()).collect();
        assert_eq!(scalar, [PatternKind::Preference, PatternKind::Cascade, PatternKind::Resource]);
        assert!(!PatternKind::Unmapped.is_implemented());
        assert!(PatternKind::Development.is_implemented());
    }

    #[test]
    fn serde_uses_the_canonical_names() {
        for kind in PatternKind::ALL {
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{}\"", kind.name()));
            assert_eq!(kind.name().parse::<PatternKind>(), Ok(kind));
        }
        assert_eq!(ProtocolPhase::Converge.to_string(), "CONVERGE");
    }
}

//! The shapes `--json` prints: one module per command, plain `Serialize + Deserialize` structs.
//!
//! This folder depends on nothing but the library and serde, so that the integration tests
//! include it as it is (`#[path = "../../src/cli/json/mod.rs"]`) and deserialize what the binary
//! printed into these very types: a field renamed or dropped here fails the tests that read it.
//! The commands mark each type as printable in `src/cli/json_output.rs`.

/// An enum whose JSON value is one of a fixed set of names: serde renames, `name()`, `Display`,
/// and equality with the name itself (so a test can say `assert_eq!(out.status, "landed")`).
macro_rules! names {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant,)*
        }

        impl $name {
            /// Every value.
            #[allow(dead_code)]
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The value's name, as JSON spells it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// The value a name spells.
            #[allow(dead_code)]
            pub fn from_name(text: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|v| v.as_str() == text)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    };
}

names! {
    /// Where a host's files are installed.
    pub enum Scope {
        /// The working tree.
        Project = "project",
        /// The user's configuration.
        Global = "global",
        /// A directory named with `--dir`.
        Dir = "dir",
    }
}

names! {
    /// A development run's phase.
    pub enum PhaseName {
        /// Taking proposals and endorsements.
        Open = "open",
        /// Aborted.
        Aborted = "aborted",
        /// A landing was recorded and is being written.
        Landing = "landing",
        /// Landed.
        Landed = "landed",
        /// Its definition cannot be read.
        Unreadable = "unreadable",
    }
}

names! {
    /// The one event `coordinate --json` adds to its drivers' stream.
    pub enum ContinueEvent {
        /// CONVERGE continues on the class ASSEMBLY named.
        Continue = "continue",
    }
}

names! {
    /// The first line of `coordinate --json`.
    pub enum PreflightEvent {
        /// What the preflight checked.
        Preflight = "preflight",
    }
}

pub mod agent;
pub mod check;
pub mod claim;
pub mod coordinate;
pub mod doctor;
pub mod endorse;
pub mod exchange;
pub mod focus;
pub mod frame;
pub mod gate;
pub mod hooks;
pub mod land;
pub mod log;
pub mod mcp;
pub mod mcp_install;
pub mod propose;
pub mod record;
pub mod report;
pub mod run;
pub mod skills;
pub mod snapshot;
pub mod status;
pub mod tally;
pub mod watch;
pub mod worktree;

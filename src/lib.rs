//! git-mas: coordination for teams of coding agents that share one git repository.
//!
//! The library never prints, never parses flags and never exits; the `git-mas` binary maps
//! arguments to these calls and errors to exit codes.
#![forbid(unsafe_code)]

pub mod identity;
pub mod signals;
pub mod store;
pub mod sync;

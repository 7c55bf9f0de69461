//! git-mas: coordination for teams of coding agents that share one git repository.
//!
//! The library never prints, never parses flags and never exits; the `git-mas` binary maps
//! arguments to these calls and errors to exit codes.
#![forbid(unsafe_code)]

pub mod assembly;
pub mod attention;
pub mod converge_driver;
pub mod convergence;
pub mod coordinate;
pub mod doctor;
pub mod engines;
pub mod evaluation;
pub mod git;
pub mod identity;
pub mod ops;
pub mod peers;
pub mod pool;
pub mod run;
pub mod runtime;
pub mod signals;
pub mod skills;
pub mod store;
pub mod sync;

#[cfg(test)]
mod layering_tests;

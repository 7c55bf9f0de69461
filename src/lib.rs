//! git-mas: coordination for teams of coding agents that share one git repository.
//!
//! The library never prints, never parses flags and never exits; the `git-mas` binary maps
//! arguments to these calls and errors to exit codes.
//!
//! # Modules, bottom layer first
//!
//! A module uses only modules of its own row or of the rows before it (`layering_tests` holds
//! the code to this table and fails on any cycle among the modules).
//!
//! | layer | modules | what they hold |
//! |---|---|---|
//! | mechanics | [`fsx`], [`git`], [`store`], [`identity`] | a file written atomically; starting git; signed records in `refs/mas/` and their chains; names, keys and the roster |
//! | pure decisions | [`runtime`], [`signals`], [`assembly`] | the coordination runtime (events in, outcomes out); signal readers; ASSEMBLY's protocol and rules |
//! | classes | [`engines`], [`convergence`] | one coordination engine per class; the convergence report over a run's state |
//! | hosts | [`hosts`] | the coding-agent hosts as one table: their hook, MCP and skills files, payloads, answers, trust and command lines |
//! | attention | [`attention`], [`evaluation`] | the saliency snapshot and frame, foci and the board, the gate (commit, CI, edit hooks); the evaluation harnesses |
//! | development runs | [`devrun`], [`pool`] | a run's records, rules and view; the result pool's worktrees, trees, checks and merges |
//! | operations | [`ops`] | propose, endorse and land: a run read, a rule applied, the pool's mechanics done, the record appended; team mode's setup and its undo |
//! | teams | [`peers`], [`coordinate`] | the members of a team behind one trait; `coordinate`, which drives every class (the ASSEMBLY → CONVERGE driver for the scalar classes in `coordinate::scalar`, the development driver in `coordinate::develop`) |
//! | upkeep | [`doctor`], [`sync`], [`exchange`] | what a crash leaves, found and removed; `refs/mas/*` exchanged with a remote, by hand or by a background process that carries team mode's claims between clones |
//!
//! # Where a decision lives
//!
//! | to find | read |
//! |---|---|
//! | **the quorum rule**: the leader, when a proposal is at quorum, self-endorsement, rounds | [`engines::development`] (its module docs; [`engines::development::Tally::quorum_reached`]); a run's quorum from its size: [`devrun::quorum_for`] |
//! | who may propose, endorse or work in a run | [`devrun::rules`] |
//! | **the land commit**: the one commit on the integration branch, planned (the members, the merged whole's check), written, recovered after a crash | [`ops::land::commit`] ([`ops::land::commit::plan`], [`ops::land::commit::write_commit`], [`ops::land::commit::execute`], [`ops::land::commit::recover`]); the landing as an operation: [`ops::land`] |
//! | **a host's hook format**: which settings file, which events, the entry written, the payload's fields, the answer | the host table [`hosts::TABLE`] (per host [`hosts::HookFacts`], [`hosts::PayloadFacts`], [`hosts::AnswerFormat`]); written by [`hosts::hooks`], read by [`hosts::payload`], answered by [`hosts::reply`] |
//! | the edit gate's answer to a tool call | [`attention::edit_gate::decide`]; team mode's answers [`attention::team_gate`]; claims [`attention::team`] |
//! | who is calling | [`attention::caller::resolve`] |
//! | the coordination rule between two foci | [`attention::rule`] |
//! | the commit gate and `git mas check` | [`attention::gate`], [`attention::gate_io`], [`attention::replay`] |
//! | the saliency snapshot and the frame | [`attention::snapshot`], [`attention::frame`] |
//! | a signed record, a chain, compare-and-swap | [`store`], [`store::record`] |
//! | what a crash leaves and how it is cleared | [`doctor`] |
//! | the exit codes | the binary's `Outcome` (`src/cli/mod.rs`; the table in `docs/README.md`) |
#![forbid(unsafe_code)]
// The 80-line budget for functions (clippy.toml) holds the product's code, not its tests.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod assembly;
pub mod attention;
pub mod convergence;
pub mod coordinate;
pub mod devrun;
pub mod doctor;
pub mod engines;
pub mod evaluation;
pub mod exchange;
pub mod fsx;
pub mod git;
pub mod hosts;
pub mod identity;
pub mod ops;
pub mod peers;
pub mod pool;
pub mod runtime;
pub mod signals;
pub mod store;
pub mod sync;

#[cfg(test)]
mod conventions_tests;
#[cfg(test)]
mod layering_tests;

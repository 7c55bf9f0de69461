//! The operations of a development run — propose, endorse, land — above the two layers they
//! combine: `run` (records, rules, the run's view: what happened and what may happen next) and
//! `pool` (worktrees, trees, checks, merges: the mechanics outside `main`). Neither of those knows
//! this module; each operation reads the run, decides with its pure rules, does the mechanics and
//! appends the record.
//!
//! [`setup`] is the operation of team mode's one setup command and its undo: it combines the
//! roster and keys (`identity`), the hosts' files (`hosts`), the git hooks and the frame
//! (`attention`) through a journal that lets every change be taken back.

pub mod endorse;
pub mod land;
pub mod propose;
pub mod setup;

//! The shapes `--json` prints: one module per command, plain `Serialize + Deserialize` structs.
//!
//! This folder depends on nothing but the library and serde, so that the integration tests
//! include it as it is (`#[path = "../../src/cli/json/mod.rs"]`) and deserialize what the binary
//! printed into these very types: a field renamed or dropped here fails the tests that read it.
//! The commands mark each type as printable in `src/cli/json_output.rs`.

pub mod agent;
pub mod check;
pub mod coordinate;
pub mod doctor;
pub mod endorse;
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
pub mod tally;
pub mod watch;
pub mod worktree;

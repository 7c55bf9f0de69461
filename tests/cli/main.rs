//! Integration tests: the real `git-mas` binary in temporary git repositories with a hermetic
//! environment. One test binary, a module per concern.
// Tests may print what they saw; only the product's output must go through its output layer.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]
// A test reads top to bottom as one story; the 80-line budget is for the product's functions.
#![allow(clippy::too_many_lines)]

mod common;
mod hosts;
/// The CLI's own `--json` shapes: tests deserialize what the binary printed into them.
#[path = "../../src/cli/json/mod.rs"]
#[allow(dead_code)]
mod json;

mod aggregate;
mod aggregate_whole;
mod bad_input;
mod bench_harness;
mod board_cache;
mod chain_damage;
mod chain_damage_crash;
mod concurrency;
mod converge;
mod coordinate;
mod coordinate_any;
mod coordinate_crash;
mod crash;
mod development;
mod doctor;
mod exchange;
mod gate;
mod gate_host;
mod held_race;
mod help;
mod host_hooks;
mod hostile;
mod killpoints;
mod lanes;
mod mcp;
mod mcp_install;
mod output;
mod pipe;
mod plans;
mod readme;
mod real_projects;
mod records;
mod report_changes;
mod report_html;
mod report_names;
mod roster_trail;
mod run_claims;
mod session_agents;
mod shell_matrix;
mod skills;
mod snapshot;
mod status;
mod sync;
mod sync_http;
mod team_crash;
mod team_frames;
mod team_mode;
mod team_race;
mod team_setup;
mod verification;

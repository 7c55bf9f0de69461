//! Integration tests: the real `git-mas` binary in temporary git repositories with a hermetic
//! environment. One test binary, a module per concern.

mod common;
mod hosts;

mod bad_input;
mod bench_harness;
mod concurrency;
mod converge;
mod coordinate;
mod crash;
mod development;
mod doctor;
mod gate;
mod help;
mod hostile;
mod killpoints;
mod readme;
mod records;
mod skills;
mod snapshot;
mod sync;
mod verification;

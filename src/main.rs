//! The `git-mas` binary: parse arguments, call the library, map errors to exit codes.
#![forbid(unsafe_code)]
// The 80-line budget for functions (clippy.toml) holds the product's code, not its tests.
#![cfg_attr(test, allow(clippy::too_many_lines))]

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}

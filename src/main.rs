//! The `git-mas` binary: parse arguments, call the library, map errors to exit codes.
#![forbid(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}

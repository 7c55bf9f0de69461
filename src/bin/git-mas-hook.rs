//! `git-mas-hook`: the binary a coding-agent host's hook entry runs, `git-mas-hook --host HOST
//! [--post-tool|--session-end]`. It answers exactly as `git mas gate --host HOST` does (one
//! function, [`hook_host::run`], serves both) but starts no `git` process first and links only the
//! modules of the command line that a hook reaches, included here by path; the linker drops the
//! rest (the parser, the other commands, the MCP server). Measured in BENCHMARKS.md ("The hook's
//! own binary").
#![forbid(unsafe_code)]
// As in main.rs: the 80-line budget for functions (clippy.toml) holds the product's code, not its
// tests (the shared modules' tests are compiled here under `cargo clippy --all-targets`).
#![cfg_attr(test, allow(clippy::too_many_lines))]
// The modules below are the command line's (src/cli/), shared by path: much of each serves other
// commands and is not reached from a hook.
#![allow(dead_code)]

#[path = "../cli/context.rs"]
mod context;
#[path = "../cli/error.rs"]
mod error;
#[path = "../cli/hook_host.rs"]
mod hook_host;
#[path = "../cli/outcome.rs"]
mod outcome;
#[path = "../cli/output.rs"]
mod output;

use context::Context;
use outcome::Outcome;
use output::Ui;

/// The whole command line. The caller is pinned by `GIT_MAS_AGENT` as for `git mas gate` (there
/// is no `--agent` or `-C`). A command line it does not take is refused with exit 2, which the
/// hosts that read exit codes take as a refusal of the tool call, with the usage on stderr.
fn main() -> std::process::ExitCode {
    use std::process::ExitCode;
    let args: Vec<String> = std::env::args_os().skip(1).filter_map(|a| a.into_string().ok()).collect();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    if matches!(words.as_slice(), ["--help" | "-h"] | ["--version" | "-V"]) {
        let ui = Ui::new(output::ColorChoice::Never);
        let _ = ui.bytes(HOOK_USAGE.as_bytes());
        return ExitCode::SUCCESS;
    }
    let agent = match std::env::var_os("GIT_MAS_AGENT") {
        None => Some(None),
        Some(a) => a.into_string().ok().map(Some),
    };
    let parsed = hook_host::parse_flags(&words).filter(|_| args.len() == std::env::args_os().len() - 1);
    let (Some((host, event)), Some(agent)) = (parsed, agent) else {
        let ui = Ui::new(output::ColorChoice::Auto);
        ui.err_text(&format!(
            "git-mas-hook: cannot take `{}`{}\n{HOOK_USAGE}",
            words.join(" "),
            if parsed.is_some() { " (GIT_MAS_AGENT is not Unicode)" } else { "" }
        ));
        return ExitCode::from(Outcome::Usage.code());
    };
    let mut ctx = Context::new(None, agent, output::ColorChoice::Auto);
    match hook_host::run(&mut ctx, host, event) {
        Ok(outcome) => ExitCode::from(outcome.code()),
        Err(err) if err.is_broken_pipe() => ExitCode::from(Outcome::BrokenPipe.code()),
        Err(err) => {
            err.print(&ctx);
            ExitCode::from(err.exit_code())
        }
    }
}

/// `git-mas-hook --help`.
const HOOK_USAGE: &str = "usage: git-mas-hook --host HOST [--post-tool | --session-end]

A coding-agent host's hook: reads the host's hook payload (JSON) on stdin and answers as `git mas
gate --host HOST` does, in a process of its own that links only the hook's path. `git mas hooks
install --host HOST` writes the host's entries with it. See `git mas gate --help`.
";

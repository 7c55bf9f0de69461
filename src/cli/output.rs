//! The one place that writes to stdout and stderr.
//!
//! Data goes to stdout, status, warnings, hints and errors to stderr (jj's `ui.stdout()` /
//! `ui.status()`). Every write to stdout goes through [`Ui::out`] or [`Ui::json`], which turn a
//! closed pipe into a [`CliError`] that [`CliError::is_broken_pipe`]: the command stops there and the process exits
//! quietly with git's status for it, 141 (128 + SIGPIPE), instead of panicking the way `println!`
//! does. `println!`, `print!`, `eprintln!`, `eprint!`, `std::io::stdout` and `std::io::stderr` are
//! refused everywhere else by clippy (`clippy.toml`).
//!
//! `--json` is one shared flag ([`JsonFlag`]); what it prints is always a typed value that
//! implements [`JsonOutput`] — a `Serialize` struct that names the shape, never an ad hoc
//! `serde_json::Value`. Streams (watch, coordinate events) are JSON Lines through [`Ui::json`].
//!
//! A [`Ui::collecting`] Ui keeps what a command says on stderr (warnings, status) as notes and has
//! no stdout at all: the MCP server calls a command's typed function in-process, returns the value
//! it gives and the notes it said, and stdout is the protocol's alone.
#![allow(clippy::disallowed_methods)]

use super::error::{CliError, Kind};
use std::io::{IsTerminal, Write};

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Color when stderr/stdout is a terminal and NO_COLOR is unset.
    Auto,
    /// Always color.
    Always,
    /// Never color.
    Never,
}

/// The shared `--json` flag: flatten it into a command's arguments.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct JsonFlag {
    /// Print the result as JSON (one object on one line; its fields are listed in this command's
    /// help).
    #[arg(long)]
    pub json: bool,
}

/// A value a command prints with `--json`: a `Serialize` type that names the output's shape.
/// Implemented by the command's own output structs (and by library types printed as they are);
/// `serde_json::Value` deliberately does not implement it.
pub trait JsonOutput: serde::Serialize {}

impl<T: JsonOutput + ?Sized> JsonOutput for &T {}
impl<T: JsonOutput> JsonOutput for [T] {}
impl<T: JsonOutput> JsonOutput for Vec<T> {}

/// Standard output and standard error, with the color choice made once.
#[derive(Debug, Clone)]
pub struct Ui {
    color: bool,
    notes: Option<std::sync::Arc<Notes>>,
}

/// What a collecting [`Ui`] was told on stderr, kept for the caller: a command run inside another
/// one (the MCP server calls a command's typed function, and its own stdout carries the protocol).
#[derive(Debug, Default)]
pub struct Notes {
    err: std::sync::Mutex<String>,
}

impl Notes {
    /// What was said on stderr, one note a non-blank line.
    pub fn lines(&self) -> Vec<String> {
        let text = self.err.lock().map(|t| t.clone()).unwrap_or_default();
        text.lines().filter(|l| !l.trim().is_empty()).map(String::from).collect()
    }
}

impl Ui {
    /// Resolves `--color`: `auto` colors when stderr is a terminal and `NO_COLOR` is unset.
    pub fn new(choice: ColorChoice) -> Ui {
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal(),
        };
        Ui { color, notes: None }
    }

    /// A Ui that writes nothing to the process's streams, uncolored: what is said on stderr goes
    /// to the returned [`Notes`], and writing to stdout is an internal error (a typed command
    /// function returns its output; it never prints it).
    pub fn collecting() -> (Ui, std::sync::Arc<Notes>) {
        let notes = std::sync::Arc::new(Notes::default());
        (Ui { color: false, notes: Some(notes.clone()) }, notes)
    }

    /// Whether output is colored.
    pub fn color(&self) -> bool {
        self.color
    }

    /// Writes `text` to stdout as it is, and flushes. Build human output into a `String` and
    /// write it once.
    pub fn out(&self, text: &str) -> Result<(), CliError> {
        self.bytes(text.as_bytes())
    }

    /// Writes `line` and a newline to stdout.
    pub fn line(&self, line: &str) -> Result<(), CliError> {
        self.out(&format!("{line}\n"))
    }

    /// Writes raw bytes to stdout (generated files: completions, man pages).
    pub fn bytes(&self, bytes: &[u8]) -> Result<(), CliError> {
        if self.notes.is_some() {
            return Err(CliError::internal("a command called for its value wrote to stdout"));
        }
        let mut out = std::io::stdout().lock();
        out.write_all(bytes).and_then(|()| out.flush()).map_err(CliError::from)
    }

    /// Writes `value` as one line of JSON to stdout.
    pub fn json<T: JsonOutput + ?Sized>(&self, value: &T) -> Result<(), CliError> {
        let mut line = serde_json::to_vec(value)
            .map_err(|e| CliError::with_message(Kind::Internal, "cannot encode the output as JSON", e))?;
        line.push(b'\n');
        self.bytes(&line)
    }

    /// Prints `value` as JSON when `--json` was given, else the text `human` renders from it.
    pub fn emit<T: JsonOutput>(
        &self,
        flag: JsonFlag,
        value: &T,
        human: impl FnOnce(&T) -> String,
    ) -> Result<(), CliError> {
        if flag.json { self.json(value) } else { self.out(&human(value)) }
    }

    /// A status line on stderr. Errors writing to stderr are ignored: there is nowhere left to
    /// report them.
    pub fn status(&self, message: &str) {
        self.err_text(&format!("{message}\n"));
    }

    /// A warning on stderr.
    pub fn warn(&self, message: &str) {
        self.status(&format!("{} {message}", self.paint("warning:", "1;33")));
    }

    /// A hint on stderr.
    pub fn hint(&self, message: &str) {
        self.status(&format!("{} {message}", self.paint("Hint:", "1;36")));
    }

    /// Text written to stderr as it is (a rendered error, a progress line without newline).
    pub fn err_text(&self, text: &str) {
        if let Some(notes) = &self.notes {
            if let Ok(mut err) = notes.err.lock() {
                err.push_str(text);
            }
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
    }

    /// Wraps `text` in an ANSI color when color is on.
    pub fn paint(&self, text: &str, code: &str) -> String {
        if self.color { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    }

    /// Whether stdout is a terminal (never for a collecting Ui, which has no stdout).
    pub fn stdout_is_terminal(&self) -> bool {
        self.notes.is_none() && std::io::stdout().is_terminal()
    }

    /// Whether stderr is a terminal.
    pub fn stderr_is_terminal(&self) -> bool {
        self.notes.is_none() && std::io::stderr().is_terminal()
    }
}

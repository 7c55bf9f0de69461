//! Output helpers: color choice and JSON printing.

use std::io::Write;

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

/// Prints `value` as one line of JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, value).map_err(std::io::Error::other)?;
    writeln!(out)
}

/// Prints `text` on stdout as is. Build human output into a `String` and print it once with this,
/// so that a closed pipe is an error the caller maps to a quiet exit, not a panic.
pub fn print_text(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

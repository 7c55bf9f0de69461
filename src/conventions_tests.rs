//! Conventions the project decided, held by CI so the next feature cannot erode them silently.
//!
//! What CI enforces (`cargo test`, and `cargo clippy --all-targets -- -D warnings`):
//!
//! - **Layering** (`layering_tests`): no two top-level modules of `src/` reach each other, and
//!   each uses only its own layer of `lib.rs`'s module index and the layers below.
//! - **A line budget per file** ([`FILE_BUDGET`], 800 lines): a non-test source file of `src/`
//!   (not `*_tests.rs`, not `tests.rs`) stays within it, inline test modules counted.
//! - **No error from a string**: a `CliError` keeps the error it reports typed
//!   (`CliError::new(kind, e)`, `CliError::with_message(kind, "…", e)`, or a `From` impl that
//!   decides kind and hints by variant), never `CliError::user(e.to_string())` or
//!   `CliError::internal(format!("…: {e}"))`: the source chain is what prints the causes, and a
//!   variant, not its text, is what decides the kind and the hints.
//! - **Docs that link where they say** (`.ci/run`: `cargo doc` with `-D warnings`): the module
//!   index in `lib.rs` ("where a decision lives") and every intra-doc link resolve, so a module
//!   that moves breaks CI until the index follows it.
//! - **Functions of at most 80 lines** (clippy's `too_many_lines`, `too-many-lines-threshold` in
//!   clippy.toml, switched on in Cargo.toml's `[lints.clippy]`), blank lines and comments aside.
//!   Tests are not held to it.
//!
//! How a feature names an exception, in the open and with a reason, where a reviewer sees it:
//!
//! - a file over the budget: a row in [`OVER_BUDGET`] with its line count as its ceiling. The file
//!   may shrink but not grow past it, and once back within the budget the row must go (the test
//!   fails on a stale row too, so the list stays honest);
//! - a `CliError` from another error's text: a row in [`ERRORS_FROM_STRINGS`] (the file, a snippet
//!   of the call, why: a `String` error with no type to keep, or a typed source that would change
//!   what the user reads). A row whose site is gone fails the test;
//! - a long function: `#[allow(clippy::too_many_lines)] // <why it stays whole>` on it.

use std::path::{Path, PathBuf};

/// The non-test source files of `src/`, relative to it with `/` separators, sorted: every `.rs`
/// file except the test modules (`*_tests.rs`, `tests.rs`).
pub(crate) fn sources(src: &Path) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".rs") || name.ends_with("_tests.rs") || name == "tests.rs" {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().components();
            let rel: Vec<String> = rel.map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            found.push((rel.join("/"), path));
        }
    }
    found.sort();
    found
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The most lines a non-test source file holds (its whole text, inline test modules included).
const FILE_BUDGET: usize = 800;

/// The files over [`FILE_BUDGET`], each with its ceiling (its size when it was listed). A listed
/// file may shrink but not grow; once it is back within the budget it must leave the list.
const OVER_BUDGET: &[(&str, usize)] = &[
    ("attention/frame.rs", 1017),
    ("cli/commands/mcp.rs", 878),
    ("convergence/mod.rs", 980),
    ("coordinate/develop.rs", 934),
    ("coordinate/scalar/mod.rs", 931),
    ("devrun/imports.rs", 871),
    ("devrun/mod.rs", 1089),
    ("doctor.rs", 849),
    ("engines/development.rs", 1225),
    ("hosts/mod.rs", 808),
    ("hosts/trust.rs", 832),
    ("ops/land/commit.rs", 862),
    ("ops/setup/mod.rs", 899),
    ("signals/diagnostics.rs", 1019),
    ("store/mod.rs", 1109),
    ("sync.rs", 1142),
];

#[test]
fn every_source_file_keeps_within_its_line_budget() {
    let src = src();
    let files = sources(&src);
    assert!(files.len() > 50, "the source files of src/ were not found: {files:?}");
    let mut problems = Vec::new();
    for (rel, path) in &files {
        let lines = std::fs::read_to_string(path).unwrap().lines().count();
        match OVER_BUDGET.iter().find(|(name, _)| name == rel) {
            None if lines > FILE_BUDGET => problems.push(format!(
                "src/{rel}: {lines} lines, over the budget of {FILE_BUDGET}: split it, or name it in OVER_BUDGET"
            )),
            Some((_, ceiling)) if lines > *ceiling => problems.push(format!(
                "src/{rel}: {lines} lines, over its ceiling of {ceiling} in OVER_BUDGET: split it rather than grow it"
            )),
            Some(_) if lines <= FILE_BUDGET => problems.push(format!(
                "src/{rel}: {lines} lines, within the budget of {FILE_BUDGET}: take it out of OVER_BUDGET"
            )),
            _ => {}
        }
    }
    for (name, _) in OVER_BUDGET {
        if !files.iter().any(|(rel, _)| rel == name) {
            problems.push(format!("src/{name}, named in OVER_BUDGET, is gone: take it out of the list"));
        }
    }
    assert!(problems.is_empty(), "files over their line budget:\n{}", problems.join("\n"));
}

/// The text of `text` before its first `#[cfg(test)]` (the inline test modules come last).
fn code(text: &str) -> &str {
    text.split("#[cfg(test)]").next().unwrap_or_default()
}

/// The names an error is bound to, by the project's habit (`map_err(|e| …)`, `Err(err) =>`,
/// `source` of an error variant).
const ERROR_NAMES: [&str; 5] = ["e", "err", "error", "source", "cause"];

/// The constructors of `CliError` that take a bare message (`with_message` and `new` keep the
/// source typed).
const MESSAGE_CTORS: [&str; 3] = ["user", "usage", "internal"];

/// The argument of the call whose `(` ends `text[..open]`: up to the matching `)`.
fn argument(text: &str, open: usize) -> &str {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return &text[open + 1..open + i];
                }
            }
            _ => {}
        }
    }
    &text[open + 1..]
}

/// Whether a message argument spells another error's text: `x.to_string()`, an error name
/// interpolated (`{e}`, `{err:?}`) or passed to `format!` (`format!("…: {}", e)`).
fn spells_an_error(arg: &str) -> bool {
    if arg.contains(".to_string()") {
        return true;
    }
    ERROR_NAMES.iter().any(|name| {
        let inline = [format!("{{{name}}}"), format!("{{{name}:")];
        let positional = [format!(", {name})"), format!(", {name},")];
        inline.iter().chain(&positional).any(|p| arg.contains(p.as_str()))
    })
}

/// Every `CliError::<user|usage|internal>(…)` whose message spells another error's text, as
/// `(file, the call on one line)`.
fn errors_from_strings(src: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (rel, path) in sources(src) {
        let text = std::fs::read_to_string(&path).unwrap();
        let code = code(&text);
        for ctor in MESSAGE_CTORS {
            let call = format!("CliError::{ctor}(");
            for (i, _) in code.match_indices(&call) {
                let arg = argument(code, i + call.len() - 1);
                if spells_an_error(arg) {
                    let one_line: Vec<&str> = arg.split_whitespace().collect();
                    found.push((rel.clone(), format!("{call}{})", one_line.join(" "))));
                }
            }
        }
    }
    found
}

/// The `CliError`s still built from another error's text, each `(file, a snippet of the call,
/// why)`: the typed source would change what the user reads.
const ERRORS_FROM_STRINGS: &[(&str, &str, &str)] = &[
    ("cli/commands/agent.rs", "does not parse ({e})", "the roster's parse error is a String: no typed error to keep"),
    ("cli/commands/mcp.rs", "invalid value {value:?} for", "the duration parser's error is a String"),
    (
        "cli/commands/doctor.rs",
        "CliError::internal(other.to_string())",
        "DoctorError::Io and ::Checkout carry a source their message leaves out: kept typed, it would \
         print as a new `Caused by:` line",
    ),
];

#[test]
fn no_cli_error_is_built_from_another_errors_text() {
    let found = errors_from_strings(&src());
    let mut problems = Vec::new();
    for (file, call) in &found {
        if !ERRORS_FROM_STRINGS.iter().any(|(f, snippet, _)| f == file && call.contains(snippet)) {
            problems.push(format!("src/{file}: {call}"));
        }
    }
    for (file, snippet, _) in ERRORS_FROM_STRINGS {
        if !found.iter().any(|(f, call)| f == file && call.contains(snippet)) {
            problems.push(format!("src/{file}: {snippet:?}, named in ERRORS_FROM_STRINGS, is gone: take it out"));
        }
    }
    assert!(
        problems.is_empty(),
        "CliErrors built from another error's text (keep the source typed: CliError::new, \
         CliError::with_message or a From impl; or name the site in ERRORS_FROM_STRINGS):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_scan_finds_an_error_spelled_out() {
    assert!(spells_an_error("e.to_string()"));
    assert!(spells_an_error(r#"format!("cannot read it: {e}")"#));
    assert!(spells_an_error(r#"format!("cannot read it: {err:?}")"#));
    assert!(spells_an_error(r#"format!("cannot read {}: {}", path, e)"#));
    assert!(!spells_an_error(r#"format!("agent '{name}' is not on the roster")"#));
    assert!(!spells_an_error(r#""the error is the user's""#));
}

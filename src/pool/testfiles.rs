//! The files a failing check names: where the plan of an aggregate run starts
//! ([`crate::devrun::cover`]). Paths in the check's output, and the failing tests of its report
//! ([`super::testreport`]) mapped to the files they live in.

use super::testreport::TestReport;
use std::collections::{BTreeMap, BTreeSet};

/// The files a failing check names, each with the failing tests that point at it: paths in its
/// output (relative, or absolute under `root`, the directory it ran in), and its report's failing
/// tests mapped to their files (a unittest id's module, a pytest node's file, a libtest suite's
/// file and the module path of the test inside it). Only `files` count; lines that tell of a
/// passing test, a suite starting, or a compiler warning are not read for paths.
pub fn check_files(
    output: &str,
    report: Option<&TestReport>,
    root: &str,
    files: &BTreeSet<String>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let root = root.trim_end_matches('/');
    let mut in_warning = false;
    for line in output.lines() {
        let t = line.trim();
        if t.is_empty() {
            in_warning = false;
            continue;
        }
        if t.starts_with("warning") {
            in_warning = true;
        } else if t.starts_with("error") {
            in_warning = false;
        }
        if in_warning
            || is_pytest_chatter(t)
            || t.starts_with("Running ")
            || t.starts_with("Doc-tests ")
            || t.starts_with("Compiling ")
            || t.ends_with(" ok")
            || t.ends_with(" PASSED")
            || t.contains(" PASSED ")
        {
            continue;
        }
        for token in t.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | ',' | '`' | '[' | ']'))
        {
            let token = token.strip_prefix(root).map_or(token, |r| r.trim_start_matches('/'));
            let path = token.split("::").next().unwrap_or(token);
            // `src/x.rs:12:5:` → `src/x.rs`.
            let path = path.split(':').next().unwrap_or(path).trim_start_matches("./");
            if files.contains(path) {
                out.entry(path.to_string()).or_default();
            }
        }
    }
    if let Some(report) = report {
        let index = ModuleFiles::new(files);
        for (suite, test) in &report.failed {
            for file in index.of_test(report.format, suite, test) {
                out.entry(file).or_default().insert(short_test(test));
            }
        }
    }
    out
}

/// Whether a line of pytest's output tells nothing of a failure: its header (`rootdir: …,
/// configfile: pyproject.toml`, `platform …`, `plugins: …`) or a progress line
/// (`tests/test_x.py ..F.  [ 50%]`: the failures are in its report and tracebacks).
fn is_pytest_chatter(t: &str) -> bool {
    const HEADER: &[&str] =
        &["rootdir:", "configfile:", "platform ", "cachedir:", "plugins:", "collected ", "collecting "];
    if HEADER.iter().any(|h| t.starts_with(h)) {
        return true;
    }
    let mut words = t.split_whitespace();
    let first = words.next().unwrap_or("");
    first.ends_with(".py")
        && !first.contains(':')
        && words.all(|w| w == "[" || w.ends_with("%]") || w.chars().all(|c| ".FEsxXp".contains(c)))
}

/// A file a failing test's traceback or failure message names: the test, and the line when the
/// output says it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Traced {
    /// The failing test, as its section of the output names it (`test_total`, `Total.test_sums`,
    /// `tests::adds`).
    pub test: String,
    /// The line named with the file (`x.py:12:`, `File "x.py", line 12`, `src/x.rs:12:5`).
    pub line: Option<u32>,
}

/// The files the failure sections of a check's output name, each with the failing test whose
/// section names it: pytest's `FAILURES`/`ERRORS` (`____ test_x ____`, then `x.py:12: in f` and
/// `x.py:12: AssertionError`), unittest's `FAIL: …`/`ERROR: …` (`File "…/x.py", line 12`) and
/// libtest's `---- name stdout ----` (`panicked at src/x.rs:12:5:`). Paths are relative, or
/// absolute under `root`; only `files` count. Lines outside a failure section are not read here.
pub fn traced_files(output: &str, root: &str, files: &BTreeSet<String>) -> BTreeMap<String, Vec<Traced>> {
    let root = root.trim_end_matches('/');
    let mut out: BTreeMap<String, Vec<Traced>> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut pytest_failures = false;
    for line in output.lines() {
        let t = line.trim();
        // pytest's sections (`==== FAILURES ====`) and unittest's separator (`=====`).
        if t.len() >= 3 && t.starts_with("===") && t.ends_with("===") {
            let title = t.trim_matches('=').trim();
            pytest_failures = matches!(title, "FAILURES" | "ERRORS");
            current = None;
            continue;
        }
        if pytest_failures && t.len() >= 3 && t.starts_with("___") && t.ends_with("___") {
            current = Some(t.trim_matches('_').trim().to_string());
            continue;
        }
        if let Some(rest) = t.strip_prefix("FAIL: ").or_else(|| t.strip_prefix("ERROR: ")) {
            current = Some(unittest_name(rest));
            continue;
        }
        if let Some(rest) = t.strip_prefix("---- ")
            && let Some(name) = rest.strip_suffix(" stdout ----").or_else(|| rest.strip_suffix(" stderr ----"))
        {
            current = Some(name.to_string());
            continue;
        }
        if t == "failures:" || t.starts_with("test result:") || t.starts_with("Ran ") {
            current = None;
            continue;
        }
        let Some(test) = &current else { continue };
        let tokens: Vec<&str> = t
            .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | ',' | '`' | '[' | ']'))
            .filter(|w| !w.is_empty())
            .collect();
        for (k, token) in tokens.iter().enumerate() {
            let token = token.strip_prefix(root).map_or(*token, |r| r.trim_start_matches('/'));
            let mut parts = token.split(':');
            let path = parts.next().unwrap_or(token).trim_start_matches("./");
            if !files.contains(path) {
                continue;
            }
            let line = parts.next().and_then(|n| n.parse().ok()).or_else(|| {
                (tokens.get(k + 1) == Some(&"line")).then(|| tokens.get(k + 2).and_then(|n| n.parse().ok())).flatten()
            });
            let list = out.entry(path.to_string()).or_default();
            let traced = Traced { test: test.clone(), line };
            if !list.contains(&traced) {
                list.push(traced);
            }
        }
    }
    out
}

/// `Class.test_x` from unittest's `test_x (pkg.mod.Class.test_x)` (or, before Python 3.11,
/// `test_x (pkg.mod.Class)`).
fn unittest_name(header: &str) -> String {
    let (method, id) = match header.split_once(" (") {
        Some((m, id)) => (m.trim(), id.trim_end_matches(')')),
        None => return header.trim().to_string(),
    };
    let id = if id.ends_with(&format!(".{method}")) { id.to_string() } else { format!("{id}.{method}") };
    short_test(&id)
}

/// A test's name without its module path: `pkg.mod.Class.test_x` → `Class.test_x`,
/// `tests/t.py::test_x` → `test_x`, `money::tests::adds` → `tests::adds`.
fn short_test(test: &str) -> String {
    if let Some((_, name)) = test.rsplit_once(".py::") {
        return name.to_string();
    }
    let sep = if test.contains("::") { "::" } else { "." };
    let parts: Vec<&str> = test.split(sep).collect();
    parts[parts.len().saturating_sub(2)..].join(sep)
}

/// Files by their path without extension, for mapping test ids to files.
struct ModuleFiles<'a> {
    by_stemmed: BTreeMap<String, &'a str>,
    files: &'a BTreeSet<String>,
}

impl<'a> ModuleFiles<'a> {
    fn new(files: &'a BTreeSet<String>) -> Self {
        let mut by_stemmed = BTreeMap::new();
        for f in files {
            if let Some((head, _)) = f.rsplit_once('.') {
                by_stemmed.entry(head.to_string()).or_insert(f.as_str());
            }
        }
        ModuleFiles { by_stemmed, files }
    }

    /// The files a failing test lives in.
    fn of_test(&self, format: &str, suite: &str, test: &str) -> Vec<String> {
        match format {
            // `pkg.mod.Class.test_x`: the longest prefix that is a module (JUnit's classname is
            // that module path for pytest and most runners).
            "unittest" | "junit" => {
                let parts: Vec<&str> = test.split('.').collect();
                (1..parts.len())
                    .rev()
                    .find_map(|n| self.by_stemmed.get(&parts[..n].join("/")).map(|f| f.to_string()))
                    .into_iter()
                    .collect()
            }
            "pytest" => {
                let path = test.split("::").next().unwrap_or(test);
                self.files.contains(path).then(|| path.to_string()).into_iter().collect()
            }
            "libtest" => {
                // `money::tests::adds` in `src/lib.rs`: `src/money.rs` or `src/money/mod.rs`, the
                // file that holds it; the suite's root file only for a test of its own (a crate's
                // `lib.rs` declares every module, and does not hold their tests).
                let dir = suite.rsplit_once('/').map_or("", |(d, _)| d);
                let parts: Vec<&str> = test.split("::").collect();
                let module = (1..parts.len()).rev().find_map(|n| {
                    let module = parts[..n].join("/");
                    let module = if dir.is_empty() { module } else { format!("{dir}/{module}") };
                    [format!("{module}.rs"), format!("{module}/mod.rs")].into_iter().find(|c| self.files.contains(c))
                });
                match module {
                    Some(file) => vec![file],
                    None if self.files.contains(suite) => vec![suite.to_string()],
                    None => Vec::new(),
                }
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
#[path = "testfiles_tests.rs"]
mod tests;

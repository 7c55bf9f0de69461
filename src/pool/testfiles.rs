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
                let mut out = Vec::new();
                if self.files.contains(suite) {
                    out.push(suite.to_string());
                }
                // `money::tests::adds` in `src/lib.rs`: `src/money.rs` or `src/money/mod.rs`.
                let dir = suite.rsplit_once('/').map_or("", |(d, _)| d);
                let parts: Vec<&str> = test.split("::").collect();
                for n in (1..parts.len()).rev() {
                    let module = parts[..n].join("/");
                    let module = if dir.is_empty() { module } else { format!("{dir}/{module}") };
                    let hit = [format!("{module}.rs"), format!("{module}/mod.rs")]
                        .into_iter()
                        .find(|c| self.files.contains(c));
                    if let Some(hit) = hit {
                        out.push(hit);
                        break;
                    }
                }
                out
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
#[path = "testfiles_tests.rs"]
mod tests;

//! What a check's output says test by test, and what a proposal changes against its base.
//!
//! An endorsement runs the team's check (`cargo test`, `python3 -m unittest`, `pytest`, a TAP
//! producer…) on a proposal's tree. In a run where the base already fails — an aggregate run
//! whose other slices fix the other bugs, above all — the check's exit status says nothing about
//! the proposal: the whole suite fails for someone else's bug. So when the check fails, the
//! endorsement reads the test runner's own report ([`parse`]) on the proposal and on the run's
//! base, and judges what the proposal changed ([`compare`]): the tests it makes pass (`fixed`),
//! the tests that passed on the base and fail on it (`broken`), and the suites in which fewer
//! tests ran (`lost`: a proposal that deletes or stops a failing test does not fix it). A
//! proposal that fixes at least one test and breaks and loses none *improves* the base and is
//! endorsed ([`crate::runtime::TestDelta::improves`]); the merged whole of an aggregate run must
//! still pass the whole check before it lands.
//!
//! Formats read, from the interleaved stdout and stderr the check wrote:
//!
//! - **libtest** (`cargo test`): `Running <target>` starts a suite, `test <name> ... ok|FAILED|
//!   ignored` names each test, `test result:` ends the suite. A suite that never printed its
//!   result (a crash, an abort) is *unfinished*.
//! - **unittest** (`python3 -m unittest`, any verbosity): `FAIL: <test> (<id>)` / `ERROR: …`, the
//!   `-v` lines `<test> (<id>) ... ok`, and `Ran N tests`.
//! - **pytest**: the short summary's `FAILED <node id>` / `ERROR <node id>`, the `-v` lines
//!   `<node id> PASSED`, and the closing `= N failed, M passed … =` line — with `-q`, the same
//!   line without its `=` border (`2 failed, 178 passed, 1 warning in 0.52s`). Decision for `-qq`,
//!   which prints no closing line: the progress lines (`.F.sE   [100%]`) count the tests (every
//!   mark but `s`), the short summary names the failing ones; a pytest run with neither (`-qq`
//!   with `-rN`, say) has no report and its exit status alone decides.
//! - **TAP**: `ok N - name` / `not ok N - name` (a `# SKIP` or `# TODO` directive is not a
//!   failure) and the plan `1..N`.
//!
//! - **JUnit XML**, read from the files the check writes into its checkout while it runs
//!   (`pytest --junitxml=report.xml`, jest-junit, surefire, gotestsum, …: [`junit`]): each
//!   `<testsuite>` is a suite, each `<testcase>` a test (`classname.name`), failed when it holds a
//!   `<failure>` or an `<error>`, not counted when `<skipped>`. A JUnit file takes precedence
//!   over the output: it is the runner's own structured report.
//!
//! When the output is in none of them, there is no report and the exit status alone decides.
//! Decision: a test counts as broken only when its suite ran on the base too (cargo stops at
//! the first failing test binary unless told `--no-fail-fast`: the suites after it never ran on
//! the base, and their failures cannot be blamed on the proposal — nor do they count as fixed).

use crate::runtime::TestDelta;
use std::collections::{BTreeMap, BTreeSet};

/// The test runner's report of one check run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TestReport {
    /// The format it was read in (`libtest`, `unittest`, `pytest`, `tap`).
    pub format: &'static str,
    /// Each suite that finished, and how many tests ran in it.
    pub suites: BTreeMap<String, u64>,
    /// Suites that started and never finished.
    pub unfinished: BTreeSet<String>,
    /// The failing tests, as (suite, test).
    pub failed: BTreeSet<(String, String)>,
}

/// The one suite of a runner that runs everything in one process.
const WHOLE: &str = "";

/// Reads the report from a check's output; `None` when no known format is there.
pub fn parse(output: &str) -> Option<TestReport> {
    libtest(output).or_else(|| unittest(output)).or_else(|| pytest(output)).or_else(|| tap(output))
}

/// A JUnit XML report (`<testsuites>` or one `<testsuite>`); `None` when `xml` is not one.
pub fn junit(xml: &str) -> Option<TestReport> {
    let doc = roxmltree::Document::parse(xml).ok()?;
    let root = doc.root_element();
    let suites: Vec<roxmltree::Node> = match root.tag_name().name() {
        "testsuites" => root.descendants().filter(|n| n.has_tag_name("testsuite")).collect(),
        "testsuite" => vec![root],
        _ => return None,
    };
    let mut r = TestReport { format: "junit", ..TestReport::default() };
    for suite in suites {
        let name = suite.attribute("name").unwrap_or_default().to_string();
        let mut count = 0u64;
        // Only this suite's own test cases (a nested suite counts its own).
        for case in suite.children().filter(|n| n.has_tag_name("testcase")) {
            if case.children().any(|c| c.has_tag_name("skipped")) {
                continue;
            }
            count += 1;
            if case.children().any(|c| c.has_tag_name("failure") || c.has_tag_name("error")) {
                let test = match (case.attribute("classname"), case.attribute("name")) {
                    (Some(c), Some(n)) if !c.is_empty() => format!("{c}.{n}"),
                    (_, Some(n)) => n.to_string(),
                    _ => format!("#{count}"),
                };
                r.failed.insert((name.clone(), test));
            }
        }
        *r.suites.entry(name).or_default() += count;
    }
    Some(r)
}

/// `cargo test`'s output.
fn libtest(output: &str) -> Option<TestReport> {
    let mut r = TestReport { format: "libtest", ..TestReport::default() };
    let mut suite: Option<String> = None;
    let mut count = 0u64;
    let mut seen = false;
    for line in output.lines() {
        let line = line.trim_end();
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("Running ") {
            if let Some(open) = suite.take() {
                r.unfinished.insert(open);
            }
            // `Running unittests src/lib.rs (target/…)` / `Running tests/x.rs (target/…)`.
            let name = rest.split(" (").next().unwrap_or(rest);
            suite = Some(name.strip_prefix("unittests ").unwrap_or(name).to_string());
            count = 0;
            seen = true;
        } else if let Some(rest) = t.strip_prefix("Doc-tests ") {
            if let Some(open) = suite.take() {
                r.unfinished.insert(open);
            }
            suite = Some(format!("doc {rest}"));
            count = 0;
        } else if t.starts_with("test result: ") {
            let s = suite.take().unwrap_or_else(|| WHOLE.to_string());
            *r.suites.entry(s).or_default() += count;
            count = 0;
            seen = true;
        } else if let Some(rest) = line.strip_prefix("test ") {
            let Some((name, result)) = rest.rsplit_once(" ... ") else { continue };
            let name = name.trim();
            let s = suite.clone().unwrap_or_else(|| WHOLE.to_string());
            match result.trim() {
                "ok" => count += 1,
                "FAILED" => {
                    count += 1;
                    r.failed.insert((s, name.to_string()));
                }
                _ => {}
            }
            seen = true;
        }
    }
    if let Some(open) = suite {
        r.unfinished.insert(open);
    }
    seen.then_some(r)
}

/// `python3 -m unittest`'s output.
fn unittest(output: &str) -> Option<TestReport> {
    let mut r = TestReport { format: "unittest", ..TestReport::default() };
    let mut ran = None;
    for line in output.lines() {
        let line = line.trim_end();
        if let Some(rest) = after_tag(line, &["FAIL: ", "ERROR: "]) {
            r.failed.insert((WHOLE.to_string(), unittest_id(rest)));
        }
        if let Some((head, result)) = line.rsplit_once(" ... ")
            && matches!(result, "FAIL" | "ERROR")
            && head.contains(" (")
        {
            r.failed.insert((WHOLE.to_string(), unittest_id(head)));
        }
        if let Some(rest) = line.strip_prefix("Ran ")
            && let Some(n) = rest.strip_suffix(" tests").or_else(|| rest.split(" tests in ").next())
            && let Some(n) = n.split(' ').next().and_then(|n| n.parse::<u64>().ok())
        {
            ran = Some(ran.unwrap_or(0) + n);
        }
    }
    let ran = ran?;
    r.suites.insert(WHOLE.to_string(), ran);
    Some(r)
}

/// What follows the first of `tags` that `line` starts with.
fn after_tag<'a>(line: &'a str, tags: &[&str]) -> Option<&'a str> {
    tags.iter().find_map(|t| line.strip_prefix(t))
}

/// `test_x (pkg.mod.Class.test_x)` (3.11+) or `test_x (pkg.mod.Class)` → `pkg.mod.Class.test_x`.
fn unittest_id(text: &str) -> String {
    let text = text.trim();
    let Some((name, rest)) = text.split_once(" (") else { return text.to_string() };
    let inside = rest.split(')').next().unwrap_or(rest);
    if inside.ends_with(&format!(".{name}")) { inside.to_string() } else { format!("{inside}.{name}") }
}

/// pytest's output.
fn pytest(output: &str) -> Option<TestReport> {
    let mut r = TestReport { format: "pytest", ..TestReport::default() };
    let mut total = None;
    // `-qq` prints no closing line: the progress lines (`.F.sE   [100%]`) count the tests then.
    let mut progress: Option<u64> = None;
    for line in output.lines() {
        let line = line.trim_end();
        if let Some(rest) = after_tag(line, &["FAILED ", "ERROR "]) {
            let id = rest.split(" - ").next().unwrap_or(rest).trim();
            r.failed.insert((WHOLE.to_string(), id.to_string()));
        }
        if let Some((id, result)) = line.split_once(' ')
            && id.contains("::")
            && (result.starts_with("FAILED") || result.starts_with("ERROR"))
        {
            r.failed.insert((WHOLE.to_string(), id.to_string()));
        }
        if let Some(n) = pytest_counts(line) {
            total = Some(n);
        } else if let Some(n) = pytest_progress(line) {
            progress = Some(progress.unwrap_or(0) + n);
        }
    }
    r.suites.insert(WHOLE.to_string(), total.or(progress)?);
    Some(r)
}

/// The tests pytest's closing line counts: `==== 2 failed, 5 passed in 0.12s ====` (the default
/// and `-v`), or the same without the `=` border (`-q`: `2 failed, 5 passed, 1 warning in 0.12s`,
/// `no tests ran in 0.01s`). A bordered line counts the words it knows; a bare one must be made
/// of nothing else (`N <word>` parts, then ` in <seconds>s`), so that a line of some other output
/// is not taken for it.
fn pytest_counts(line: &str) -> Option<u64> {
    let bordered = line.starts_with('=') && line.ends_with('=');
    let inner = if bordered { line.trim_matches('=').trim() } else { line };
    let (counts, took) = inner.rsplit_once(" in ")?;
    if !bordered && !pytest_duration(took) {
        return None;
    }
    if counts == "no tests ran" {
        return Some(0);
    }
    let mut n = 0u64;
    let mut any = false;
    for part in counts.split(", ") {
        let mut words = part.splitn(2, ' ');
        match (words.next().and_then(|k| k.parse::<u64>().ok()), words.next()) {
            (Some(k), Some(what)) if PYTEST_COUNTED.contains(&what) => {
                n += k;
                any = true;
            }
            (Some(_), Some(what)) if bordered || PYTEST_NOT_COUNTED.contains(&what) => {}
            _ if bordered => {}
            _ => return None,
        }
    }
    any.then_some(n)
}

/// The outcomes pytest's closing line counts that are tests that ran.
const PYTEST_COUNTED: &[&str] = &["failed", "passed", "error", "errors", "xpassed", "xfailed"];

/// The other words of pytest's closing line.
const PYTEST_NOT_COUNTED: &[&str] = &["skipped", "deselected", "warning", "warnings", "rerun", "reruns"];

/// `0.12s`, or `75.20s (0:01:15)`.
fn pytest_duration(text: &str) -> bool {
    let secs = text.split(" (").next().unwrap_or(text);
    secs.strip_suffix('s').is_some_and(|n| !n.is_empty() && n.parse::<f64>().is_ok())
}

/// How many tests one of pytest's progress lines shows as run (`.`, `F`, `E`, `x`, `X`; `s` is a
/// skip): `..F.sE                                   [ 42%]`.
fn pytest_progress(line: &str) -> Option<u64> {
    let (marks, pct) = line.rsplit_once(" [")?;
    let pct = pct.strip_suffix("%]")?.trim();
    pct.parse::<u8>().ok()?;
    let marks = marks.trim_end();
    if marks.is_empty() || !marks.chars().all(|c| matches!(c, '.' | 'F' | 'E' | 's' | 'x' | 'X')) {
        return None;
    }
    Some(marks.chars().filter(|c| *c != 's').count() as u64)
}

/// Whether cargo stopped at the first failing test binary: its `error: test failed, to rerun
/// pass …` line without the `error: N target(s) failed:` summary that `cargo test
/// --no-fail-fast` ends with. The suites after the failing one never ran, so the differential
/// cannot judge them (they are neither blamed nor credited, see [`compare`]).
pub fn cargo_stopped_early(output: &str) -> bool {
    let mut failed = false;
    for line in output.lines() {
        let line = line.trim();
        if line.starts_with("error: test failed, to rerun pass ") {
            failed = true;
        } else if line.starts_with("error: ")
            && (line.ends_with(" targets failed:") || line.ends_with(" target failed:"))
        {
            return false;
        }
    }
    failed
}

/// TAP.
fn tap(output: &str) -> Option<TestReport> {
    let mut r = TestReport { format: "tap", ..TestReport::default() };
    let mut count = 0u64;
    let mut planned = None;
    for line in output.lines() {
        let line = line.trim_end();
        if let Some(n) = line.strip_prefix("1..").and_then(|n| n.split(' ').next()).and_then(|n| n.parse::<u64>().ok())
        {
            planned = Some(n);
            continue;
        }
        let (failed, rest) = match line.strip_prefix("not ok ") {
            Some(rest) => (true, rest),
            None => match line.strip_prefix("ok ") {
                Some(rest) => (false, rest),
                None => continue,
            },
        };
        let (body, directive) = match rest.split_once(" # ") {
            Some((b, d)) => (b, d.to_ascii_uppercase()),
            None => (rest, String::new()),
        };
        let mut words = body.splitn(2, ' ');
        let number = words.next().unwrap_or_default();
        if number.parse::<u64>().is_err() {
            continue;
        }
        let name = words.next().unwrap_or_default().trim_start_matches("- ").trim();
        let name = if name.is_empty() { format!("#{number}") } else { name.to_string() };
        count += 1;
        if failed && !directive.starts_with("SKIP") && !directive.starts_with("TODO") {
            r.failed.insert((WHOLE.to_string(), name));
        }
    }
    if count == 0 && planned.is_none() {
        return None;
    }
    // A plan the run fell short of: the tests after the last one never ran.
    if planned.is_some_and(|p| p > count) {
        r.unfinished.insert(WHOLE.to_string());
    } else {
        r.suites.insert(WHOLE.to_string(), count);
    }
    Some(r)
}

/// `suite: test`, or the test alone in a single-suite run.
fn label((suite, test): &(String, String)) -> String {
    if suite.is_empty() { test.clone() } else { format!("{suite}: {test}") }
}

/// What `proposal` changes against `base`, or `None` when the two are not in one format.
pub fn compare(base: &TestReport, proposal: &TestReport) -> Option<TestDelta> {
    if base.format != proposal.format {
        return None;
    }
    let ran_in = |r: &TestReport, suite: &str| r.suites.contains_key(suite);
    let fixed =
        base.failed.iter().filter(|t| ran_in(proposal, &t.0) && !proposal.failed.contains(*t)).map(label).collect();
    let broken =
        proposal.failed.iter().filter(|t| ran_in(base, &t.0) && !base.failed.contains(*t)).map(label).collect();
    let mut lost: Vec<String> = base
        .suites
        .iter()
        .filter_map(|(s, n)| {
            let name = if s.is_empty() { "the suite" } else { s.as_str() };
            match proposal.suites.get(s) {
                Some(m) if m < n => Some(format!("{name}: {m} of {n} tests ran")),
                _ => None,
            }
        })
        .collect();
    lost.extend(
        proposal
            .unfinished
            .iter()
            .filter(|s| !base.unfinished.contains(*s))
            .map(|s| format!("{}: did not finish", if s.is_empty() { "the suite" } else { s })),
    );
    lost.sort();
    lost.dedup();
    Some(TestDelta {
        format: proposal.format.to_string(),
        fixed,
        broken,
        lost,
        still_failing: proposal.failed.len() as u64,
    })
}

#[cfg(test)]
mod tests;

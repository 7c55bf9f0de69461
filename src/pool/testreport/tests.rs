//! The reports below are the real outputs of each runner on a small project with known failures
//! (trimmed of tracebacks where the parser has nothing to read).

use super::*;

fn failed(r: &TestReport) -> Vec<String> {
    r.failed.iter().map(label).collect()
}

const UNITTEST: &str = "\
.EFF
======================================================================
ERROR: test_err (test_calc.CalcTest.test_err)
----------------------------------------------------------------------
Traceback (most recent call last):
RuntimeError: boom

======================================================================
FAIL: test_mul (test_calc.CalcTest.test_mul)
----------------------------------------------------------------------
AssertionError: 5 != 6

======================================================================
FAIL: test_neg (test_calc.CalcTest.test_neg)
----------------------------------------------------------------------
AssertionError: 2 != -2

----------------------------------------------------------------------
Ran 4 tests in 0.001s

FAILED (failures=2, errors=1)
";

const UNITTEST_VERBOSE: &str = "\
test_add (test_calc.CalcTest.test_add) ... ok
test_err (test_calc.CalcTest.test_err) ... ERROR
test_mul (test_calc.CalcTest.test_mul) ... FAIL
test_neg (test_calc.CalcTest.test_neg) ... FAIL

======================================================================
ERROR: test_err (test_calc.CalcTest.test_err)
----------------------------------------------------------------------
Ran 4 tests in 0.001s

FAILED (failures=2, errors=1)
";

const PYTEST: &str = "\
============================= test session starts ==============================
collected 4 items

test_calc.py .FFF                                                        [100%]

=================================== FAILURES ===================================
_____________________________ CalcTest.test_err ______________________________
=========================== short test summary info ============================
FAILED test_calc.py::CalcTest::test_err - RuntimeError: boom
FAILED test_calc.py::CalcTest::test_mul - AssertionError: 5 != 6
FAILED test_calc.py::CalcTest::test_neg - AssertionError: 2 != -2
========================= 3 failed, 1 passed in 0.05s ==========================
";

const CARGO: &str = "\
   Compiling rs v0.1.0 (/tmp/samples/rs)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.73s
     Running unittests src/lib.rs (/tmp/samples/rs-target/debug/deps/rs-a35a48c092d3f767)

running 2 tests
test tests::adds ... ok
test tests::muls ... FAILED

failures:

---- tests::muls stdout ----

thread 'tests::muls' (6177) panicked at src/lib.rs:7:25:
assertion `left == right` failed

failures:
    tests::muls

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.11s

error: test failed, to rerun pass `--lib`
";

const CARGO_FIXED: &str = "\
     Running unittests src/lib.rs (/tmp/samples/rs-target/debug/deps/rs-a35a48c092d3f767)

running 2 tests
test tests::adds ... ok
test tests::muls ... ok

test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.11s

     Running tests/more.rs (/tmp/samples/rs-target/debug/deps/more-4a962a88543ab565)

running 2 tests
test one ... ok
test two ... FAILED

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";

const TAP: &str = "\
TAP version 13
ok 1 - adds
not ok 2 - multiplies
ok 3 - negates # SKIP no negation yet
not ok 4 - divides # TODO not written
1..4
";

#[test]
fn each_runner_s_report_names_its_failing_tests() {
    let r = parse(UNITTEST).unwrap();
    assert_eq!(r.format, "unittest");
    assert_eq!(
        failed(&r),
        ["test_calc.CalcTest.test_err", "test_calc.CalcTest.test_mul", "test_calc.CalcTest.test_neg"]
    );
    assert_eq!(r.suites.get(""), Some(&4));
    let v = parse(UNITTEST_VERBOSE).unwrap();
    assert_eq!(failed(&v), failed(&r), "-v names the same tests");
    let p = parse(PYTEST).unwrap();
    assert_eq!(p.format, "pytest");
    assert_eq!(
        failed(&p),
        ["test_calc.py::CalcTest::test_err", "test_calc.py::CalcTest::test_mul", "test_calc.py::CalcTest::test_neg"]
    );
    assert_eq!(p.suites.get(""), Some(&4));
    let c = parse(CARGO).unwrap();
    assert_eq!(c.format, "libtest");
    assert_eq!(failed(&c), ["src/lib.rs: tests::muls"]);
    assert_eq!(c.suites.get("src/lib.rs"), Some(&2));
    assert!(c.unfinished.is_empty());
    let t = parse(TAP).unwrap();
    assert_eq!(t.format, "tap");
    assert_eq!(failed(&t), ["multiplies"], "SKIP and TODO are not failures");
    assert_eq!(t.suites.get(""), Some(&4));
}

#[test]
fn output_in_no_known_format_has_no_report() {
    for text in [
        "",
        "error[E0425]: cannot find value `x` in this scope\nerror: could not compile `rs`",
        "make: *** [check] Error 1",
        "FAILED\n",
    ] {
        assert_eq!(parse(text), None, "{text:?}");
    }
}

#[test]
fn a_slice_that_fixes_its_test_and_breaks_none_improves_the_base() {
    let base = parse(UNITTEST).unwrap();
    // The slice fixed mul; err and neg are other slices' work.
    let slice = parse(&UNITTEST.replace("FAIL: test_mul (test_calc.CalcTest.test_mul)", "")).unwrap();
    let d = compare(&base, &slice).unwrap();
    assert_eq!(d.fixed, ["test_calc.CalcTest.test_mul"]);
    assert!(d.broken.is_empty() && d.lost.is_empty());
    assert_eq!(d.still_failing, 2);
    assert!(d.improves());
    assert_eq!(d.shortfall(), None);
}

#[test]
fn a_change_that_breaks_a_passing_test_or_runs_fewer_tests_does_not_improve() {
    let base = parse(UNITTEST).unwrap();
    let breaks = parse(
        &UNITTEST
            .replace("FAIL: test_mul (test_calc.CalcTest.test_mul)", "FAIL: test_add (test_calc.CalcTest.test_add)"),
    )
    .unwrap();
    let d = compare(&base, &breaks).unwrap();
    assert_eq!(d.fixed, ["test_calc.CalcTest.test_mul"]);
    assert_eq!(d.broken, ["test_calc.CalcTest.test_add"]);
    assert!(!d.improves());
    assert!(d.shortfall().unwrap().contains("test_calc.CalcTest.test_add"), "{:?}", d.shortfall());
    // Deleting the failing test is not fixing it.
    let deletes =
        parse(&UNITTEST.replace("FAIL: test_mul (test_calc.CalcTest.test_mul)", "").replace("Ran 4", "Ran 3")).unwrap();
    let d = compare(&base, &deletes).unwrap();
    assert_eq!(d.lost, ["the suite: 3 of 4 tests ran"]);
    assert!(!d.improves());
    // Nothing fixed, nothing broken: no improvement either.
    let d = compare(&base, &base).unwrap();
    assert!(!d.improves());
    assert_eq!(d.shortfall().as_deref(), Some("it makes no failing test of the base pass"));
}

#[test]
fn suites_that_never_ran_on_the_base_are_neither_blamed_nor_credited() {
    // cargo stops at the first failing test binary: on the base, tests/more.rs never ran.
    let base = parse(CARGO).unwrap();
    let fixed = parse(CARGO_FIXED).unwrap();
    let d = compare(&base, &fixed).unwrap();
    assert_eq!(d.fixed, ["src/lib.rs: tests::muls"]);
    assert!(d.broken.is_empty(), "tests/more.rs did not run on the base: {:?}", d.broken);
    assert!(d.improves());
    // The other way round, the lib suite's new failure is broken.
    let d = compare(&fixed, &base).unwrap();
    assert_eq!(d.broken, ["src/lib.rs: tests::muls"]);
}

#[test]
fn a_suite_that_did_not_finish_is_lost() {
    let base = parse(CARGO).unwrap();
    let crashed = parse(
        "     Running unittests src/lib.rs (x)\n\nrunning 2 tests\ntest tests::adds ... ok\nerror: test failed, to rerun pass `--lib`\n\nCaused by:\n  process didn't exit successfully: `x` (signal: 6, SIGABRT: process abort signal)\n",
    )
    .unwrap();
    assert!(crashed.unfinished.contains("src/lib.rs"));
    let d = compare(&base, &crashed).unwrap();
    assert_eq!(d.lost, ["src/lib.rs: did not finish"]);
    assert!(d.fixed.is_empty(), "a suite that did not finish fixes nothing: {:?}", d.fixed);
    assert!(!d.improves());
}

#[test]
fn reports_in_two_formats_are_not_compared() {
    assert_eq!(compare(&parse(UNITTEST).unwrap(), &parse(PYTEST).unwrap()), None);
}

#[test]
fn a_junit_report_counts_its_cases_and_fails_failures_and_errors_not_skips() {
    // The shape pytest --junitxml writes (xunit2), with a skip, an error and a second suite.
    let xml = r#"<?xml version="1.0" encoding="utf-8"?>
<testsuites name="pytest tests">
  <testsuite name="pytest" errors="1" failures="1" skipped="1" tests="4" time="0.05">
    <testcase classname="tests.test_pricing" name="test_sums" time="0.001">
      <failure message="assert 5 == 6">def test_sums(): ...</failure>
    </testcase>
    <testcase classname="tests.test_pricing" name="test_empty" time="0.001"/>
    <testcase classname="tests.test_stock" name="test_one" time="0.001"><error message="boom"/></testcase>
    <testcase classname="tests.test_stock" name="test_later" time="0.001"><skipped message="later"/></testcase>
  </testsuite>
  <testsuite name="other" tests="1"><testcase name="lonely"/></testsuite>
</testsuites>"#;
    let r = super::junit(xml).unwrap();
    assert_eq!(r.format, "junit");
    assert_eq!(r.suites.get("pytest"), Some(&3), "the skipped case is not counted");
    assert_eq!(r.suites.get("other"), Some(&1));
    assert_eq!(failed(&r), ["pytest: tests.test_pricing.test_sums", "pytest: tests.test_stock.test_one"]);
    assert!(super::junit("<html><body/></html>").is_none());
    assert!(super::junit("not xml").is_none());
}

/// A small pytest project with two failures, an error at setup, a pass, a warning and a skip.
const PYTEST_PROJECT: &str = r#"import warnings
import pytest


def test_ok():
    assert 1 == 1


def test_sums():
    assert 1 + 1 == 3, "one and one"


def test_lists():
    assert [1] == [2]


def test_warns():
    warnings.warn("careful")


@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")


def test_needs_fixture(broken):
    pass


@pytest.mark.skip
def test_skipped():
    pass
"#;

/// Runs the installed pytest (`python3 -m pytest`) with `flags` on [`PYTEST_PROJECT`]: its output.
fn real_pytest(flags: &[&str]) -> String {
    let dir = std::env::temp_dir().join(format!("git-mas-pytest-{}-{}", std::process::id(), flags.join("")));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("tests/test_shop.py"), PYTEST_PROJECT).unwrap();
    let out = std::process::Command::new("python3")
        .args(["-m", "pytest", "-p", "no:cacheprovider"])
        .args(flags)
        .current_dir(&dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs");
    std::fs::remove_dir_all(&dir).unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "pytest failed as expected, not otherwise:\n{text}");
    text
}

#[test]
fn pytest_q_and_qq_name_the_same_failing_tests_as_the_default_output() {
    let want =
        ["tests/test_shop.py::test_lists", "tests/test_shop.py::test_needs_fixture", "tests/test_shop.py::test_sums"];
    // The default output's closing line is bordered; -q's is not; -qq has none (progress marks count).
    for flags in [&[][..], &["-q"], &["-qq"], &["-v"]] {
        let output = real_pytest(flags);
        let r = parse(&output).unwrap_or_else(|| panic!("pytest {flags:?} has a report:\n{output}"));
        assert_eq!(r.format, "pytest", "{flags:?}");
        assert_eq!(failed(&r), want, "{flags:?}:\n{output}");
        // ok, sums, lists, warns, and the error at setup; the skip is not counted.
        assert_eq!(r.suites.get(""), Some(&5), "{flags:?}:\n{output}");
    }
}

#[test]
fn pytest_q_closing_lines_are_read_and_look_alikes_are_not() {
    let table: &[(&str, Option<u64>)] = &[
        ("2 failed, 178 passed in 0.52s", Some(180)),
        ("1 failed, 3 passed, 2 warnings in 0.1s", Some(4)),
        ("5 passed in 0.01s", Some(5)),
        ("3 errors in 1.20s", Some(3)),
        ("1 failed, 2 passed, 1 skipped, 4 deselected in 75.20s (0:01:15)", Some(3)),
        ("no tests ran in 0.01s", Some(0)),
        ("==== 2 failed, 5 passed in 0.12s ====", Some(7)),
        // Not pytest's: a word it does not print, no duration, prose.
        ("2 failed, 5 apples in 0.1s", None),
        ("2 failed, 5 passed in total", None),
        ("copied 3 files in 2s", None),
        ("5 passed", None),
    ];
    for (line, want) in table {
        assert_eq!(pytest_counts(line), *want, "{line}");
    }
    let q = "FAILED tests/test_x.py::test_y - AssertionError: no\n1 failed, 1 passed in 0.03s\n";
    let r = parse(q).unwrap();
    assert_eq!(failed(&r), ["tests/test_x.py::test_y"]);
    assert_eq!(r.suites.get(""), Some(&2));
}

#[test]
fn cargo_stopping_at_the_first_failing_binary_is_told_from_no_fail_fast() {
    // Real `cargo test` output (cargo 1.95) of tests/fixtures-repo with a failing unit test and a
    // failing integration test after it: fail-fast stops after the lib's suite.
    let fail_fast = include_str!("fixtures/cargo_fail_fast.txt");
    let no_fail_fast = include_str!("fixtures/cargo_no_fail_fast.txt");
    assert!(cargo_stopped_early(fail_fast));
    assert!(!cargo_stopped_early(no_fail_fast));
    assert!(!cargo_stopped_early("test result: ok. 3 passed; 0 failed\n"));
    let early = parse(fail_fast).unwrap();
    let all = parse(no_fail_fast).unwrap();
    assert_eq!(early.format, "libtest");
    assert!(!early.suites.contains_key("tests/after.rs"), "the suite after the failing one never ran");
    assert!(all.failed.iter().any(|(s, t)| s == "tests/after.rs" && t == "after_bad"), "{all:?}");
}

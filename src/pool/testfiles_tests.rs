use super::*;
use crate::pool::testreport;

fn set(files: &[&str]) -> BTreeSet<String> {
    files.iter().map(|f| f.to_string()).collect()
}

#[test]
fn a_failing_unittest_run_names_its_test_files_by_traceback_and_by_id() {
    let output = "\
.F
======================================================================
FAIL: test_sums (tests.test_pricing.Total.test_sums)
----------------------------------------------------------------------
Traceback (most recent call last):
  File \"/tmp/git-mas-check-1/tests/test_pricing.py\", line 7, in test_sums
    self.assertEqual(total([1, 2, 3]), 6)
AssertionError: 5 != 6

----------------------------------------------------------------------
Ran 2 tests in 0.001s

FAILED (failures=1)
";
    let files = set(&["tests/test_pricing.py", "tests/__init__.py", "shop/pricing.py", "tests/test_stock.py"]);
    let report = testreport::parse(output).unwrap();
    let named = check_files(output, Some(&report), "/tmp/git-mas-check-1", &files);
    assert_eq!(named.keys().cloned().collect::<BTreeSet<_>>(), set(&["tests/test_pricing.py"]));
    assert_eq!(named["tests/test_pricing.py"], set(&["Total.test_sums"]));
    // Without the report, the traceback alone still names the file.
    let named = check_files(output, None, "/tmp/git-mas-check-1/", &files);
    assert_eq!(named.keys().cloned().collect::<BTreeSet<_>>(), set(&["tests/test_pricing.py"]));
}

#[test]
fn a_failing_cargo_run_names_the_panic_site_and_the_test_module_not_warnings_or_passing_suites() {
    let output = "\
warning: unused variable: `x`
 --> src/tax.rs:3:9
  |
3 |     let x = 1;

     Running unittests src/lib.rs (target/debug/deps/shop-0123)

running 2 tests
test tax::tests::ok ... ok
test money::tests::adds ... FAILED
test tests::crate_root ... FAILED

failures:

---- money::tests::adds stdout ----

thread 'money::tests::adds' panicked at src/money.rs:12:5:
assertion `left == right` failed

---- tests::crate_root stdout ----

thread 'tests::crate_root' panicked at src/lib.rs:40:5:
assertion failed

failures:
    money::tests::adds
    tests::crate_root

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
    let files = set(&["src/lib.rs", "src/money.rs", "src/tax.rs", "tests/api.rs"]);
    let report = testreport::parse(output).unwrap();
    let named = check_files(output, Some(&report), "/tmp/x", &files);
    assert_eq!(named.keys().cloned().collect::<BTreeSet<_>>(), set(&["src/lib.rs", "src/money.rs"]));
    assert_eq!(named["src/money.rs"], set(&["tests::adds"]));
    // The crate root holds its own test only: a module's test is not the root's (the root declares
    // every module, and would pull them all into one slice).
    assert_eq!(named["src/lib.rs"], set(&["tests::crate_root"]));
}

#[test]
fn a_pytest_node_id_names_its_file() {
    let output = "\
tests/test_a.py::test_ok PASSED
tests/test_b.py::test_bad FAILED
=========================== short test summary info ============================
FAILED tests/test_b.py::test_bad - assert 1 == 2
========================= 1 failed, 1 passed in 0.02s ==========================
";
    let files = set(&["tests/test_a.py", "tests/test_b.py"]);
    let report = testreport::parse(output).unwrap();
    let named = check_files(output, Some(&report), "/tmp/x", &files);
    assert_eq!(named.keys().cloned().collect::<BTreeSet<_>>(), set(&["tests/test_b.py"]));
    assert_eq!(named["tests/test_b.py"], set(&["test_bad"]));
}

#[test]
fn the_failure_sections_name_the_files_of_each_failing_tests_traceback_with_the_line() {
    let files =
        set(&["tests/test_pricing.py", "shop/pricing.py", "pyproject.toml", "tests/test_report.py", "src/area.rs"]);
    let pytest = "\
============================= test session starts ==============================
platform linux -- Python 3.12.3, pytest-9.2.0, pluggy-1.6.0
rootdir: /tmp/git-mas-check-7
configfile: pyproject.toml
collected 2 items

tests/test_pricing.py F                                                  [ 50%]
tests/test_report.py .                                                   [100%]

=================================== FAILURES ===================================
__________________________________ test_total __________________________________

    def test_total():
>       assert total([1, 2, 3]) == 6

tests/test_pricing.py:6:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

    def total(prices):
>       raise ValueError(prices)
E       ValueError: [1, 2, 3]

shop/pricing.py:2: ValueError
=========================== short test summary info ============================
FAILED tests/test_pricing.py::test_total - ValueError: [1, 2, 3]
============================== 1 failed, 1 passed in 0.02s ===============================
";
    let traced = traced_files(pytest, "/tmp/git-mas-check-7", &files);
    let at = |file: &str| traced.get(file).cloned().unwrap_or_default();
    assert_eq!(at("shop/pricing.py"), vec![Traced { test: "test_total".into(), line: Some(2) }]);
    assert_eq!(at("tests/test_pricing.py"), vec![Traced { test: "test_total".into(), line: Some(6) }]);
    assert!(!traced.contains_key("pyproject.toml") && !traced.contains_key("tests/test_report.py"), "{traced:?}");
    // Nor does the header or a progress line make a file one the failing check names.
    let report = testreport::parse(pytest);
    let named = check_files(pytest, report.as_ref(), "/tmp/git-mas-check-7", &files);
    assert_eq!(named.keys().cloned().collect::<BTreeSet<_>>(), set(&["shop/pricing.py", "tests/test_pricing.py"]));

    let unittest = "\
======================================================================
FAIL: test_sums (tests.test_pricing.Total.test_sums)
----------------------------------------------------------------------
Traceback (most recent call last):
  File \"/tmp/c/tests/test_pricing.py\", line 7, in test_sums
    self.assertEqual(total([1, 2, 3]), 6)
  File \"/tmp/c/shop/pricing.py\", line 3, in total
    return sum(prices[1:])
AssertionError: 5 != 6

----------------------------------------------------------------------
Ran 2 tests in 0.001s
";
    let traced = traced_files(unittest, "/tmp/c", &files);
    assert_eq!(traced["shop/pricing.py"], vec![Traced { test: "Total.test_sums".into(), line: Some(3) }]);

    let cargo = "\
---- rect stdout ----

thread 'rect' panicked at src/area.rs:12:5:
assertion `left == right` failed

failures:
    rect
";
    let traced = traced_files(cargo, "/tmp/c", &files);
    assert_eq!(traced["src/area.rs"], vec![Traced { test: "rect".into(), line: Some(12) }]);
}

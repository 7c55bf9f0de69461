//! The plan of an aggregate run on real projects, from evidence: a Python package whose
//! `__init__.py` re-exports every module, checked by real pytest, and a Rust crate whose `lib.rs`
//! is `pub mod …; pub use …::*;`, checked by real `cargo test`. Each bug's module must be in one
//! slice with the test that catches it, the hub must not merge the slices, no slice may hold
//! filler, and an agent with nothing left reviews.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const GOAL: &str = "make the test suite pass";

/// A project of `files` committed on main, `lead` and `agents` on its roster, `check` its check.
fn project(env: &TestEnv, name: &str, files: &[(&str, &str)], agents: &[&str], check: &str) -> PathBuf {
    let dir = env.root().join(name);
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    env.git_quiet_ok(&dir, &["init", "--quiet", "-b", "main"]);
    env.git_quiet_ok(&dir, &["add", "."]);
    env.git_quiet_ok(&dir, &["commit", "--quiet", "-m", name]);
    env.agents(&dir, &[&["lead"][..], agents].concat());
    env.git_quiet_ok(&dir, &["config", "mas.check", check]);
    dir
}

/// The plan `git mas coordinate --dry-run --aggregate --json` shows for `agents`.
fn dry_plan(env: &TestEnv, repo: &Path, agents: &[&str]) -> Value {
    let spec: Vec<String> = agents.iter().map(|a| format!("{a}=cmd:sh -c true")).collect();
    let out = with_toolchain(&mut env.mas_cmd(repo))
        .env("CARGO_NET_OFFLINE", "true")
        .args(["--agent", "lead", "coordinate", "--json", "--dry-run", "--aggregate", "--quorum", "1", "--goal", GOAL])
        .args(["--agents", &spec.join(",")])
        .output()
        .unwrap();
    let run = JsonRun::of(&out);
    assert_eq!(run.code, Some(0), "{}", shown(&out));
    let pre = run.events("preflight")[0].clone();
    assert_eq!(pre["ok"], true, "{pre:#}");
    // The check really ran on main and failed test by test.
    let base = pre["items"].as_array().unwrap().iter().find(|i| i["check"] == "base").unwrap()["detail"].clone();
    assert!(base.as_str().unwrap().contains(" on main fails "), "{base}");
    pre["plan"].clone()
}

fn owner(plan: &Value, file: &str) -> Option<String> {
    plan["slices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["targets"].as_array().unwrap().iter().any(|t| t == file))
        .map(|s| s["agent"].as_str().unwrap().to_string())
}

fn held(plan: &Value) -> Vec<String> {
    plan["slices"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["targets"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()))
        .collect()
}

fn reviewers(plan: &Value) -> Vec<String> {
    plan["reviewers"]
        .as_array()
        .map(|r| r.iter().map(|r| r["agent"].as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// Every file of every slice says why it is there.
fn every_file_has_a_why(plan: &Value) {
    for s in plan["slices"].as_array().unwrap() {
        for t in s["targets"].as_array().unwrap() {
            let why = s["why"][t.as_str().unwrap()].as_str().unwrap_or_default();
            assert!(!why.is_empty(), "{t} has no why: {s:#}");
        }
    }
}

/// Asserts the plan: each (test, module) pair in one slice, each pair in its own slice, and
/// nothing else held.
fn assert_pairs(plan: &Value, pairs: &[(&str, &str)]) {
    assert_eq!(plan["source"], "concerns", "{plan:#}");
    let mut owners = Vec::new();
    for (test, module) in pairs {
        let o = owner(plan, test);
        assert!(o.is_some(), "{test} is in no slice: {plan:#}");
        assert_eq!(o, owner(plan, module), "{test} and {module} are not one slice: {plan:#}");
        assert!(!owners.contains(&o), "the hub merged two slices: {plan:#}");
        owners.push(o);
    }
    let mut want: Vec<String> = pairs.iter().flat_map(|(t, m)| [t.to_string(), m.to_string()]).collect();
    let mut got = held(plan);
    want.sort();
    got.sort();
    assert_eq!(got, want, "a slice holds a file no evidence names: {plan:#}");
    every_file_has_a_why(plan);
}

/// A package whose `__init__.py` re-exports its four modules; three of them have a bug, each
/// caught by its own test, each test importing through the hub in another spelling.
const PYTHON: &[(&str, &str)] = &[
    ("README.md", "# inventory\n\nPrices, stock, tax and reports.\n"),
    (".gitignore", "__pycache__/\n"),
    ("pyproject.toml", "[project]\nname = \"inventory\"\nversion = \"0.1.0\"\n"),
    (
        "inventory/__init__.py",
        "\"\"\"Inventory: prices, stock, tax and reports.\"\"\"\nfrom .pricing import *\nfrom .stock import *\nfrom .tax import *\nfrom .report import *\n",
    ),
    ("inventory/pricing.py", "def total(prices):\n    return sum(prices[1:])\n"),
    ("inventory/stock.py", "def in_stock(count):\n    return count.value > 0\n"),
    ("inventory/tax.py", "def with_tax(amount, rate=0.5):\n    return amount + rate\n"),
    ("inventory/report.py", "import json\n\n\ndef summary(items):\n    return json.dumps(sorted(items))\n"),
    (
        "tests/test_pricing.py",
        "\"\"\"Totals. Counts are inventory.stock's business, reports inventory.report's.\"\"\"\nfrom inventory import total\n\n\ndef test_total():\n    assert total([1, 2, 3]) == 6\n",
    ),
    ("tests/test_stock.py", "import inventory\n\n\ndef test_one_left():\n    assert inventory.in_stock(1)\n"),
    (
        "tests/test_tax.py",
        "import json  # not inventory.report\nfrom inventory import *\n\n\ndef test_with_tax():\n    assert with_tax(10) == 15\n",
    ),
    (
        "tests/test_report.py",
        "from inventory import summary\n\n\ndef test_summary():\n    assert summary(['b', 'a']) == '[\"a\", \"b\"]'\n",
    ),
];

const PYTHON_PAIRS: &[(&str, &str)] = &[
    ("tests/test_pricing.py", "inventory/pricing.py"),
    ("tests/test_stock.py", "inventory/stock.py"),
    ("tests/test_tax.py", "inventory/tax.py"),
];

#[test]
fn a_python_package_hub_does_not_merge_the_slices_and_a_fourth_agent_reviews() {
    let env = TestEnv::new();
    let check = "python3 -m pytest -p no:cacheprovider";
    let repo = project(&env, "inventory", PYTHON, &["alice", "bob", "carol", "dave"], check);
    // The check really fails three tests on main.
    let base = std::process::Command::new("sh").args(["-c", check]).current_dir(&repo).output().unwrap();
    assert!(String::from_utf8_lossy(&base.stdout).contains("3 failed, 1 passed"), "{}", shown(&base));

    let plan = dry_plan(&env, &repo, &["alice", "bob", "carol"]);
    assert_pairs(&plan, PYTHON_PAIRS);
    assert!(reviewers(&plan).is_empty(), "{plan:#}");
    // Why, in words: the import through the hub names the hub and the name.
    let pricing = owner(&plan, "inventory/pricing.py").unwrap();
    let slice = plan["slices"].as_array().unwrap().iter().find(|s| s["agent"] == pricing.as_str()).unwrap();
    assert_eq!(
        slice["why"]["inventory/pricing.py"],
        "the failing test tests/test_pricing.py (test_total) imports total from inventory/__init__.py, and it defines total",
        "{slice:#}"
    );
    assert_eq!(slice["why"]["tests/test_pricing.py"], "it holds the failing test test_total", "{slice:#}");
    // A bug that raises in its module: the traceback names the module, at its line.
    let stock = owner(&plan, "inventory/stock.py").unwrap();
    let slice = plan["slices"].as_array().unwrap().iter().find(|s| s["agent"] == stock.as_str()).unwrap();
    let why = slice["why"]["inventory/stock.py"].as_str().unwrap();
    assert!(
        why.starts_with("the traceback of the failing test tests/test_stock.py::test_one_left names it (line 2)"),
        "{slice:#}"
    );

    let plan = dry_plan(&env, &repo, &["alice", "bob", "carol", "dave"]);
    assert_pairs(&plan, PYTHON_PAIRS);
    assert_eq!(reviewers(&plan), ["dave"], "{plan:#}");
    assert_eq!(plan["reviewers"][0]["why"], "nothing the goal concerns is left for a fourth slice");
}

#[test]
fn the_dry_run_lists_the_agent_with_nothing_left_as_a_reviewer() {
    let env = TestEnv::new();
    let check = "python3 -m pytest -p no:cacheprovider";
    let repo = project(&env, "inventory", PYTHON, &["alice", "bob", "carol", "dave"], check);
    let spec: Vec<String> = ["alice", "bob", "carol", "dave"].iter().map(|a| format!("{a}=cmd:sh -c true")).collect();
    let out = env
        .mas_cmd(&repo)
        .args(["--agent", "lead", "coordinate", "--dry-run", "--aggregate", "--goal", GOAL])
        .args(["--agents", &spec.join(",")])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(
        text.contains("\n  dave         (reviews: nothing the goal concerns is left for a fourth slice)"),
        "{text}"
    );
    assert!(!text.contains("README.md") && !text.contains(".gitignore") && !text.contains("pyproject.toml"), "{text}");
}

/// A crate whose `lib.rs` declares and glob re-exports three modules; two have a bug, each
/// caught by its own integration test, one importing by glob, one by name.
const RUST: &[(&str, &str)] = &[
    ("README.md", "# geom\n"),
    (".gitignore", "/target\n"),
    ("Cargo.toml", "[package]\nname = \"geom\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n"),
    (
        "src/lib.rs",
        "//! Geometry: areas, perimeters, units.\npub mod area;\npub mod perimeter;\npub mod units;\npub use area::*;\npub use perimeter::*;\npub use units::*;\n",
    ),
    ("src/area.rs", "/// The area of a w×h rectangle.\npub fn rect_area(w: u32, h: u32) -> u32 {\n    w + h\n}\n"),
    (
        "src/perimeter.rs",
        "/// The perimeter of a w×h rectangle.\npub fn rect_perimeter(w: u32, h: u32) -> u32 {\n    w * h\n}\n",
    ),
    ("src/units.rs", "/// Centimetres in `m` metres.\npub fn cm(m: u32) -> u32 {\n    m * 100\n}\n"),
    ("tests/area.rs", "use geom::*;\n\n#[test]\nfn rect() {\n    assert_eq!(rect_area(2, 3), 6);\n}\n"),
    (
        "tests/perimeter.rs",
        "// Units live in geom::units; see also crate::units.\nuse geom::rect_perimeter;\n\n#[test]\nfn rect() {\n    assert_eq!(rect_perimeter(2, 3), 10);\n}\n",
    ),
    ("tests/units.rs", "#[test]\nfn metres() {\n    assert_eq!(geom::cm(2), 200);\n}\n"),
];

#[test]
fn a_rust_lib_rs_of_pub_use_does_not_merge_the_slices_and_a_third_agent_reviews() {
    let env = TestEnv::new();
    let repo = project(&env, "geom", RUST, &["alice", "bob", "carol"], "cargo test --no-fail-fast");
    let pairs = [("tests/area.rs", "src/area.rs"), ("tests/perimeter.rs", "src/perimeter.rs")];
    let plan = dry_plan(&env, &repo, &["alice", "bob"]);
    assert_pairs(&plan, &pairs);
    let plan = dry_plan(&env, &repo, &["alice", "bob", "carol"]);
    assert_pairs(&plan, &pairs);
    assert_eq!(reviewers(&plan), ["carol"], "{plan:#}");
    let area = owner(&plan, "src/area.rs").unwrap();
    let slice = plan["slices"].as_array().unwrap().iter().find(|s| s["agent"] == area.as_str()).unwrap();
    let why = slice["why"]["src/area.rs"].as_str().unwrap();
    assert!(why.contains("tests/area.rs") && why.contains("from src/lib.rs"), "{slice:#}");
}

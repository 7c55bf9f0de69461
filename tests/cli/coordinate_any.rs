//! `git mas coordinate` on a project that is not the fixture: a small Python project whose plain
//! `python3 -m unittest` is the team's check, configured with nothing but the roster and that
//! check — the preflight, `--dry-run`, and an aggregate run whose slices are judged by what they
//! change.

use crate::common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The project: two modules with one bug each, and their tests. The goal names neither file.
pub(crate) const FILES: &[(&str, &str)] = &[
    ("README.md", "# shop\n\nPrices and stock.\n"),
    ("pricing.py", "def total(prices):\n    return sum(prices[1:])\n"),
    ("stock.py", "def in_stock(count):\n    return count > 1\n"),
    (
        "test_pricing.py",
        "import unittest\nfrom pricing import total\n\n\nclass Total(unittest.TestCase):\n    def test_sums_every_price(self):\n        self.assertEqual(total([1, 2, 3]), 6)\n\n    def test_empty(self):\n        self.assertEqual(total([]), 0)\n",
    ),
    (
        "test_stock.py",
        "import unittest\nfrom stock import in_stock\n\n\nclass InStock(unittest.TestCase):\n    def test_one_left(self):\n        self.assertTrue(in_stock(1))\n\n    def test_none_left(self):\n        self.assertFalse(in_stock(0))\n",
    ),
];

pub(crate) const GOAL: &str = "make the test suite pass";

/// The project committed on main, `lead` and `agents` on its committed roster; no frame, no
/// snapshot input, no check unless `check`.
pub(crate) fn project(env: &TestEnv, agents: &[&str], check: Option<&str>) -> PathBuf {
    let dir = env.root().join("shop");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in FILES {
        std::fs::write(dir.join(name), text).unwrap();
    }
    env.git_quiet_ok(&dir, &["init", "--quiet", "-b", "main"]);
    env.git_quiet_ok(&dir, &["add", "."]);
    env.git_quiet_ok(&dir, &["commit", "--quiet", "-m", "shop"]);
    env.agents(&dir, &[&["lead"][..], agents].concat());
    if let Some(check) = check {
        env.git_quiet_ok(&dir, &["config", "mas.check", check]);
    }
    dir
}

/// An agent that fixes the bugs it finds in its own slice's files (and nothing else), proposes,
/// and endorses what it is asked to; it leaves a mark that it was asked at all.
pub(crate) const FIXER: &str = r##"prompt=$(cat)
exec 2>>"$LOG.$GIT_MAS_AGENT.err"
field() { printf '%s\n' "$prompt" | sed -n "s/^$1=//p" | head -n 1; }
touch "$LOG.asked"
printf '%s\n=====\n' "$prompt" >> "$LOG.$GIT_MAS_AGENT"
case "$(field task)" in
  propose)
    # Best-of-N hands every agent the whole goal: it fixes every bug it finds.
    files=$(field slice | tr , ' '); [ -n "$files" ] || files="pricing.py stock.py"
    for f in $files; do
      case "$f" in
        pricing.py|shop/pricing.py) sed -i 's/prices\[1:\]/prices/' "$f" ;;
        stock.py|shop/stock.py) sed -i 's/count > 1/count >= 1/' "$f" ;;
      esac
    done
    git mas propose -m "$GIT_MAS_AGENT's slice" >&2
    # bob keeps a scratch file he never proposes.
    [ "$GIT_MAS_AGENT" = bob ] && echo "my notes" > scratch.txt ;;
  endorse) for p in $(field endorse | tr , ' '); do git mas endorse "$p" >&2; done ;;
esac
next=$(field next)
if [ "$next" = DONE ]; then echo "done"; echo DONE; else echo "done"; echo "NEXT $next"; fi
"##;

pub(crate) fn fixer(env: &TestEnv, name: &str) -> String {
    let path = env.root().join(format!("{name}.sh"));
    let log = env.root().join("log");
    std::fs::write(&path, format!("LOG='{}'\n{FIXER}", log.display())).unwrap();
    format!("{name}=cmd:sh {}", path.display())
}

pub(crate) fn coordinate(env: &TestEnv, repo: &Path, agents: &[String], extra: &[&str]) -> (JsonRun, Duration) {
    let started = Instant::now();
    let out = env
        .mas_cmd(repo)
        .args(["--agent", "lead", "coordinate", "--json", "--goal", GOAL, "--wait", "2s"])
        .args(["--agents", &agents.join(",")])
        .args(extra)
        .output()
        .unwrap();
    (JsonRun::of(&out), started.elapsed())
}

pub(crate) fn missing(preflight: &Value) -> Vec<(String, String, String)> {
    preflight["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["ok"] == false)
        .map(|i| {
            (
                i["check"].as_str().unwrap().to_string(),
                i["detail"].as_str().unwrap().to_string(),
                i["fix"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_run_that_cannot_end_well_is_refused_before_round_one_with_every_missing_piece_named() {
    let env = TestEnv::new();
    // No check, two agents under the default quorum, an agent whose program does not exist, and
    // a checkout of main with uncommitted changes.
    let repo = project(&env, &["alice", "bob"], None);
    std::fs::write(repo.join("README.md"), "# shop, edited by hand\n").unwrap();
    let refs_before = env.refs(&repo);
    let agents = vec![fixer(&env, "alice"), "bob=cmd:no-such-agent-program --fast".to_string()];
    let (out, took) = coordinate(&env, &repo, &agents, &[]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(took < Duration::from_secs(1), "the refusal took {took:?}");
    let pre = &out.events("preflight")[0];
    assert_eq!(pre["ok"], false);
    let missing = missing(pre);
    let checks: Vec<&str> = missing.iter().map(|m| m.0.as_str()).collect();
    assert_eq!(checks, ["agent", "check", "quorum", "checkout"], "{missing:#?}");
    assert!(missing[0].1.contains("no-such-agent-program"), "{:?}", missing[0]);
    assert!(missing[1].2.contains("git config mas.check"), "{:?}", missing[1]);
    assert_eq!(missing[2].2, "--quorum 1");
    assert!(missing[3].1.contains("uncommitted changes") && missing[3].2.contains("stash"), "{:?}", missing[3]);
    assert!(out.stderr.contains("missing piece(s)"), "{}", out.stderr);
    // Nothing was started: no agent asked, no ref written (no run, no frame), no worktree.
    assert!(!env.root().join("log.asked").exists(), "an agent was asked");
    assert_eq!(env.refs(&repo), refs_before);
    assert_eq!(env.git(&repo, &["worktree", "list"]).lines().count(), 1);

    // In words, each missing piece is one line with its fix.
    let text = env
        .mas_cmd(&repo)
        .args(["--agent", "lead", "coordinate", "--goal", GOAL, "--agents", &agents.join(",")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&text.stderr);
    assert_eq!(text.status.code(), Some(1));
    assert_eq!(stderr.lines().filter(|l| l.trim_start().starts_with("MISSING ")).count(), 4, "{stderr}");
    assert!(stderr.contains("fix: --quorum 1"), "{stderr}");
}

#[test]
fn a_dry_run_prints_the_preflight_and_the_plan_and_starts_nothing() {
    let env = TestEnv::new();
    let repo = project(&env, &["alice", "bob"], Some("python3 -m unittest"));
    let refs_before = env.refs(&repo);
    let agents = vec![fixer(&env, "alice"), fixer(&env, "bob")];
    let (out, _) = coordinate(&env, &repo, &agents, &["--aggregate", "--quorum", "1", "--dry-run"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let pre = &out.events("preflight")[0];
    assert_eq!(pre["ok"], true, "{pre:#}");
    assert_eq!(pre["dry_run"], true);
    assert_eq!(pre["frame"]["current"], false, "no frame is published: the run would publish the goal's");
    let slices = pre["plan"]["slices"].as_array().unwrap();
    assert_eq!(slices.len(), 2);
    assert_eq!(out.lines.len(), 1, "--dry-run --json is the preflight alone");
    assert!(!env.root().join("log.asked").exists(), "an agent was asked");
    assert_eq!(env.refs(&repo), refs_before, "--dry-run wrote a ref");
}

#[test]
fn an_aggregate_run_with_a_plain_unittest_check_lands_every_fix_once() {
    let env = TestEnv::new();
    let repo = project(&env, &["alice", "bob"], Some("python3 -m unittest"));
    let base = env.git(&repo, &["rev-parse", "main"]);
    let agents = vec![fixer(&env, "alice"), fixer(&env, "bob")];
    let (out, _) = coordinate(&env, &repo, &agents, &["--aggregate", "--quorum", "1"]);
    // The two bugs are in two slices: each slice alone leaves the other's test failing.
    let plan = &out.events("plan")[0]["plan"]["slices"];
    let (p, s) = (owner(plan, "pricing.py"), owner(plan, "stock.py"));
    assert!(p.is_some() && s.is_some() && p != s, "the plan: {plan:#}");
    assert_eq!(out.code, Some(0), "{}\n{}", out.stderr, env_log(&env));
    // Every endorsement counted as an improvement of the base, naming the test it fixed.
    let improved: Vec<String> = env
        .mas_ok(&repo, &["log", "--json"])
        .lines()
        .filter(|l| l.contains("\"differential\""))
        .map(str::to_string)
        .collect();
    assert!(!improved.is_empty(), "no endorsement recorded a differential");
    // One landing on main, with both fixes, and the project's own tests pass there.
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    assert!(env.git(&repo, &["show", "main:pricing.py"]).contains("sum(prices)"));
    assert!(env.git(&repo, &["show", "main:stock.py"]).contains("count >= 1"));
    let tests = std::process::Command::new("python3").args(["-m", "unittest"]).current_dir(&repo).output().unwrap();
    assert!(tests.status.success(), "{}", String::from_utf8_lossy(&tests.stderr));
    // The run landed: alice's worktree is gone; bob's stays, it holds a file he never proposed.
    for w in out.events("worktree") {
        let path = Path::new(w["path"].as_str().unwrap());
        assert_eq!(path.exists(), w["agent"] == "bob", "{}", path.display());
    }
    assert_eq!(env.git(&repo, &["worktree", "list"]).lines().count(), 2);
    assert!(
        out.stderr.contains("bob's worktree") && out.stderr.contains("1 path(s) not in bob's proposal"),
        "{}",
        out.stderr
    );
}

#[test]
fn three_agents_on_two_bugs_deal_no_readme_slice_the_third_reviews_and_the_run_lands() {
    let env = TestEnv::new();
    let repo = project(&env, &["alice", "bob", "carol"], Some("python3 -m unittest"));
    let base = env.git(&repo, &["rev-parse", "main"]);
    // carol, asked to endorse, first asks the gate for a file of a slice: it is not hers.
    let reviewer = FIXER.replacen(
        "  endorse)",
        "  endorse) git mas gate --paths pricing.py > \"$LOG.gate\" 2>&1; echo \"exit $?\" >> \"$LOG.gate\"\n   ",
        1,
    );
    assert_ne!(reviewer, FIXER);
    let carol = env.root().join("carol.sh");
    std::fs::write(&carol, format!("LOG='{}'\n{reviewer}", env.root().join("log").display())).unwrap();
    let agents = vec![fixer(&env, "alice"), fixer(&env, "bob"), format!("carol=cmd:sh {}", carol.display())];
    let (out, _) = coordinate(&env, &repo, &agents, &["--aggregate"]);
    let plan = &out.events("plan")[0]["plan"];
    // Two bugs, two slices: carol is dealt no README.md; she reviews.
    assert_eq!(plan["slices"].as_array().unwrap().len(), 2, "{plan:#}");
    assert_eq!(owner(&plan["slices"], "README.md"), None, "{plan:#}");
    assert_eq!(plan["reviewers"][0]["agent"], "carol", "{plan:#}");
    assert_eq!(plan["reviewers"][0]["why"], "nothing the goal concerns is left for a third slice");
    assert_eq!(out.code, Some(0), "{}\n{}", out.stderr, env_log(&env));
    // carol was asked only to endorse, and her endorsements brought both slices to the quorum of 2.
    let carol: Vec<&str> =
        out.events("hop").iter().filter(|h| h["peer"] == "carol").map(|h| h["task"].as_str().unwrap()).collect();
    assert!(carol.contains(&"endorse") && !carol.contains(&"propose"), "{carol:?}");
    // A reviewer holds no file: the gate refused her a slice's file, naming its owner (exit 6).
    let gate = std::fs::read_to_string(env.root().join("log.gate")).unwrap();
    let pricing = owner(&plan["slices"], "pricing.py").unwrap();
    assert!(gate.contains(&format!("{pricing}'s slice")) && gate.trim_end().ends_with("exit 6"), "{gate}");
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    let message = env.git(&repo, &["log", "-1", "--format=%B", "main"]);
    assert!(!message.contains("Mas-Winner: carol") && message.contains("carol"), "{message}");
    let tests = std::process::Command::new("python3").args(["-m", "unittest"]).current_dir(&repo).output().unwrap();
    assert!(tests.status.success(), "{}", String::from_utf8_lossy(&tests.stderr));
    // Every form of the report names the reviewer, why, and whom she endorsed.
    let report = &out.events("report").last().expect("a report")["report"];
    assert_eq!(report["reviewers"][0]["agent"], "carol", "{report:#}");
    assert_eq!(report["reviewers"][0]["why"], "nothing the goal concerns is left for a third slice");
    assert_eq!(report["reviewers"][0]["endorsed"], json!(["alice", "bob"]), "{report:#}");
    let run = report["run"].as_str().unwrap();
    let text = env.mas_ok(&repo, &["report", run]);
    assert!(
        text.contains(
            "  carol        reviewer        endorsed alice, bob (nothing the goal concerns is left for a third slice)"
        ),
        "{text}"
    );
    let html = env.mas_ok(&repo, &["report", run, "--html", "-"]);
    assert!(
        html.contains("<li data-reviewer=\"carol\">carol: nothing the goal concerns is left for a third slice; endorsed alice, bob</li>"),
        "{html}"
    );
}

/// A larger project in packages: the bugs in `shop/`, the failing tests in `tests/`, and more
/// files than two slices of eight: docs, configuration, a lock file, modules and tests that pass.
fn packaged(env: &TestEnv, agents: &[&str]) -> PathBuf {
    let dir = env.root().join("shop-pkg");
    let mut files: Vec<(String, String)> = vec![
        ("README.md".into(), "# shop\n".into()),
        (".gitignore".into(), "__pycache__/\n".into()),
        ("setup.cfg".into(), "[metadata]\nname = shop\n".into()),
        ("poetry.lock".into(), "# generated\n".into()),
        ("shop/__init__.py".into(), String::new()),
        ("tests/__init__.py".into(), String::new()),
        ("shop/pricing.py".into(), "def total(prices):\n    return sum(prices[1:])\n".into()),
        ("shop/stock.py".into(), "def in_stock(count):\n    return count > 1\n".into()),
        (
            "tests/test_pricing.py".into(),
            "import unittest\nfrom shop.pricing import total\n\n\nclass Total(unittest.TestCase):\n    def test_sums_every_price(self):\n        self.assertEqual(total([1, 2, 3]), 6)\n".into(),
        ),
        (
            "tests/test_stock.py".into(),
            "import unittest\nfrom shop.stock import in_stock\n\n\nclass InStock(unittest.TestCase):\n    def test_one_left(self):\n        self.assertTrue(in_stock(1))\n".into(),
        ),
    ];
    for i in 0..8 {
        files.push((format!("docs/part{i}.md"), format!("# part {i}\n")));
        files.push((format!("shop/extra{i}.py"), format!("def f{i}():\n    return {i}\n")));
        files.push((
            format!("tests/test_extra{i}.py"),
            format!("import unittest\nfrom shop.extra{i} import f{i}\n\n\nclass T(unittest.TestCase):\n    def test_f(self):\n        self.assertEqual(f{i}(), {i})\n"),
        ));
    }
    for (name, text) in &files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    env.git_quiet_ok(&dir, &["init", "--quiet", "-b", "main"]);
    env.git_quiet_ok(&dir, &["add", "."]);
    env.git_quiet_ok(&dir, &["commit", "--quiet", "-m", "shop"]);
    env.agents(&dir, &[&["lead"][..], agents].concat());
    env.git_quiet_ok(&dir, &["config", "mas.check", "python3 -m unittest"]);
    dir
}

#[test]
fn an_aggregate_run_covers_the_files_the_failing_check_names_and_lands_with_every_test_fixed() {
    let env = TestEnv::new();
    let repo = packaged(&env, &["alice", "bob"]);
    let base = env.git(&repo, &["rev-parse", "main"]);
    let agents = vec![fixer(&env, "alice"), fixer(&env, "bob")];

    // The plan, before anything runs: the failing check ran once on main and was read.
    let dry = env
        .mas_cmd(&repo)
        .args(["--agent", "lead", "coordinate", "--goal", GOAL, "--aggregate", "--quorum", "1", "--dry-run"])
        .args(["--agents", &agents.join(",")])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&dry.stdout);
    assert_eq!(dry.status.code(), Some(0), "{text}\n{}", String::from_utf8_lossy(&dry.stderr));
    assert!(text.contains("python3 -m unittest` on main fails 2 test(s)"), "{text}");
    assert!(text.contains("slices (covering what the goal concerns)"), "{text}");
    assert!(text.contains("tests/test_pricing.py: it holds the failing test Total.test_sums_every_price"), "{text}");
    assert!(
        text.contains(
            "shop/pricing.py: the failing test tests/test_pricing.py (Total.test_sums_every_price) imports it"
        ),
        "{text}"
    );

    let (out, _) = coordinate(&env, &repo, &agents, &["--aggregate", "--quorum", "1"]);
    let plan = &out.events("plan")[0]["plan"];
    assert_eq!(plan["source"], "concerns", "{plan:#}");
    let slices = plan["slices"].as_array().unwrap();
    let owner = |file: &str| owner(&plan["slices"], file);
    // Every file the failing check names is in a slice, with the module it imports; the two
    // failures are in two slices; nothing else is work.
    for (test, module) in [("tests/test_pricing.py", "shop/pricing.py"), ("tests/test_stock.py", "shop/stock.py")] {
        assert!(owner(test).is_some(), "{test} is in no slice: {plan:#}");
        assert_eq!(owner(test), owner(module), "{plan:#}");
    }
    assert_ne!(owner("shop/pricing.py"), owner("shop/stock.py"));
    let held: usize = slices.iter().map(|s| s["targets"].as_array().unwrap().len()).sum();
    assert_eq!(held, 4, "{plan:#}");
    assert_eq!(out.code, Some(0), "{}\n{}", out.stderr, env_log(&env));
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    let tests = std::process::Command::new("python3").args(["-m", "unittest"]).current_dir(&repo).output().unwrap();
    assert!(tests.status.success(), "{}", String::from_utf8_lossy(&tests.stderr));
}

#[test]
fn a_file_in_another_agents_slice_is_denied_naming_its_owner_and_handed_to_both() {
    let env = TestEnv::new();
    let repo = project(&env, &["alice", "bob"], Some("python3 -m unittest"));
    let base = env.git(&repo, &["rev-parse", "main"]);
    // In round 1 alice asks the gate for bob's file, and proposes work in progress instead of her fix.
    let log = env.root().join("log");
    let eager = FIXER.replacen(
        "  propose)\n",
        "  propose)\n    if [ \"$GIT_MAS_AGENT\" = alice ] && [ \"$(field round)\" = 1 ]; then\n      git mas gate --paths stock.py > \"$LOG.gate\" 2>&1; echo \"exit $?\" >> \"$LOG.gate\"\n      echo wip > wip.txt; git mas propose -m wip >&2; echo done; echo \"NEXT $(field next)\"; exit 0\n    fi\n    rm -f wip.txt\n",
        1,
    );
    assert_ne!(eager, FIXER);
    let script = |name: &str| {
        let path = env.root().join(format!("{name}.sh"));
        std::fs::write(&path, format!("LOG='{}'\n{eager}", log.display())).unwrap();
        format!("{name}=cmd:sh {}", path.display())
    };
    let agents = vec![script("alice"), script("bob")];
    let (out, _) = coordinate(&env, &repo, &agents, &["--aggregate", "--quorum", "1", "--max-rounds", "3"]);
    let slices = out.events("plan")[0]["plan"]["slices"].clone();
    assert_eq!(owner(&slices, "stock.py").as_deref(), Some("bob"), "{slices:#}");
    // The gate named bob as the file's owner and refused (exit 6: blocked).
    let gate = std::fs::read_to_string(env.root().join("log.gate")).unwrap();
    assert!(gate.contains("stock.py") && gate.contains("bob's slice"), "{gate}");
    assert!(gate.trim_end().ends_with("exit 6"), "{gate}");
    // The driver handed the denial to both in the next round.
    let denied = out.events("slice-denied");
    assert_eq!(denied.len(), 1, "{:?}", out.lines);
    assert_eq!(
        (denied[0]["agent"].as_str(), denied[0]["holder"].as_str(), denied[0]["file"].as_str()),
        (Some("alice"), Some("bob"), Some("stock.py"))
    );
    let prompts = |a: &str| std::fs::read_to_string(env.root().join(format!("log.{a}"))).unwrap();
    let round2 = |a: &str| {
        prompts(a)
            .split("=====")
            .find(|p| p.contains("round=2") && p.contains("task=propose"))
            .map(str::to_string)
            .unwrap_or_default()
    };
    assert!(
        round2("alice").contains("conflict=") && round2("alice").contains("the gate denied your edit of stock.py"),
        "{}",
        prompts("alice")
    );
    assert!(round2("bob").contains("alice needed stock.py"), "{}", prompts("bob"));
    // And the run still lands both fixes once.
    assert_eq!(out.code, Some(0), "{}\n{}", out.stderr, env_log(&env));
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    assert!(env.git(&repo, &["show", "main:stock.py"]).contains("count >= 1"));
    assert!(env.git(&repo, &["show", "main:pricing.py"]).contains("sum(prices)"));
}

#[test]
fn a_best_of_n_run_on_the_plain_project_lands_one_proposal_with_the_tests_passing() {
    let env = TestEnv::new();
    let repo = project(&env, &["alice", "bob"], Some("python3 -m unittest"));
    let base = env.git(&repo, &["rev-parse", "main"]);
    let agents = vec![fixer(&env, "alice"), fixer(&env, "bob")];
    let (out, _) = coordinate(&env, &repo, &agents, &["--quorum", "1"]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stderr, env_log(&env));
    assert!(out.events("plan").is_empty(), "best-of-N has no slices");
    // One winner, on main once, and the project's own tests pass there.
    let landed = &out.events("landed")[0];
    assert_eq!(landed["winners"].as_array().unwrap().len(), 1, "{landed}");
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    let tests = std::process::Command::new("python3").args(["-m", "unittest"]).current_dir(&repo).output().unwrap();
    assert!(tests.status.success(), "{}", String::from_utf8_lossy(&tests.stderr));
}

#[test]
fn a_check_that_prints_nothing_but_writes_junit_xml_is_judged_test_by_test() {
    let env = TestEnv::new();
    // pytest, silenced: the only report is the JUnit file it writes into the checkout.
    let check = "python3 -m pytest -q -p no:cacheprovider --junitxml=report.xml >/dev/null 2>&1";
    let repo = project(&env, &["alice", "bob"], Some(check));
    let base = env.git(&repo, &["rev-parse", "main"]);
    let agents = vec![fixer(&env, "alice"), fixer(&env, "bob")];
    let (out, _) = coordinate(&env, &repo, &agents, &["--aggregate", "--quorum", "1"]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stderr, env_log(&env));
    // The plan covered the failing tests' files, read from the JUnit report on main.
    let pre = &out.events("preflight")[0];
    let base_item = pre["items"].as_array().unwrap().iter().find(|i| i["check"] == "base").unwrap().clone();
    assert!(base_item["detail"].as_str().unwrap().contains("fails 2 test(s) (junit report"), "{base_item}");
    // Every endorsement of a slice was an improvement read from JUnit.
    let log = env.mas_ok(&repo, &["log", "--json"]);
    let formats: Vec<&str> = log.lines().filter(|l| l.contains("\"differential\"")).collect();
    assert!(!formats.is_empty() && formats.iter().all(|l| l.contains("\"junit\"")), "{log}");
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
}

/// The agent whose slice in a plan's `slices` (JSON) holds `file`.
pub(crate) fn owner(slices: &Value, file: &str) -> Option<String> {
    slices
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["targets"].as_array().unwrap().iter().any(|t| t == file))
        .map(|s| s["agent"].as_str().unwrap().to_string())
}

pub(crate) fn env_log(env: &TestEnv) -> String {
    ["alice", "bob"]
        .iter()
        .map(|a| std::fs::read_to_string(env.root().join(format!("log.{a}.err"))).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n---\n")
}

#[test]
fn a_check_command_that_is_not_there_is_refused_before_the_run_starts() {
    let env = TestEnv::new();
    let repo = project(&env, &["alice", "bob"], Some("no-such-test-runner -q"));
    let refs_before = env.refs(&repo);
    let agents = vec![fixer(&env, "alice"), fixer(&env, "bob")];
    // Not only --dry-run: the run itself is refused.
    let (out, _) = coordinate(&env, &repo, &agents, &["--quorum", "1"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let missing = missing(out.events("preflight")[0]);
    assert_eq!(missing.len(), 1, "{missing:#?}");
    let (check, detail, fix) = &missing[0];
    assert_eq!(check, "base");
    assert!(
        detail.contains("`no-such-test-runner -q` cannot run on main: exit 127, command not found")
            && detail.contains("no-such-test-runner: not found"),
        "{detail}"
    );
    assert!(fix.starts_with("install no-such-test-runner, or name a command that exists"), "{fix}");
    assert!(out.events("run-started").is_empty());
    assert!(!env.root().join("log.asked").exists(), "an agent was asked");
    assert_eq!(env.refs(&repo), refs_before);
    // In words: one MISSING line naming the command, and its fix.
    let text = env
        .mas_cmd(&repo)
        .args(["--agent", "lead", "coordinate", "--goal", GOAL, "--quorum", "1", "--agents", &agents.join(",")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&text.stderr);
    assert_eq!(text.status.code(), Some(1));
    let line =
        stderr.lines().find(|l| l.trim_start().starts_with("MISSING base")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(line.contains("no-such-test-runner") && line.contains("command not found"), "{line}");
    assert!(stderr.contains("fix: install no-such-test-runner"), "{stderr}");
}

#[test]
fn cargo_stopping_at_its_first_failing_test_binary_is_refused_with_no_fail_fast_as_the_fix() {
    // What cargo 1.95 printed on tests/fixtures-repo with a failing unit test and a failing
    // integration test after it, with and without --no-fail-fast, replayed by the check.
    let env = TestEnv::new();
    let repo = project(&env, &["alice", "bob"], Some("cat cargo-out.txt; exit 101"));
    let replay = |text: &str| {
        std::fs::write(repo.join("cargo-out.txt"), text).unwrap();
        env.git_quiet_ok(&repo, &["add", "cargo-out.txt"]);
        env.git_quiet_ok(&repo, &["commit", "--quiet", "-m", "cargo's output"]);
    };
    replay(include_str!("../../src/pool/testreport/fixtures/cargo_fail_fast.txt"));
    let agents = vec![fixer(&env, "alice"), fixer(&env, "bob")];
    let (out, _) = coordinate(&env, &repo, &agents, &["--quorum", "1", "--dry-run"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let missing = missing(out.events("preflight")[0]);
    assert_eq!(missing.len(), 1, "{missing:#?}");
    assert_eq!(missing[0].0, "base");
    assert!(missing[0].1.contains("cargo stopped at the first failing test binary (src/lib.rs)"), "{:?}", missing[0]);
    assert!(missing[0].2.contains("--no-fail-fast"), "{:?}", missing[0]);
    // With --no-fail-fast every suite ran: the failing base is reported, and the run may start.
    replay(include_str!("../../src/pool/testreport/fixtures/cargo_no_fail_fast.txt"));
    let (out, _) = coordinate(&env, &repo, &agents, &["--quorum", "1", "--dry-run"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let pre = &out.events("preflight")[0];
    let base = pre["items"].as_array().unwrap().iter().find(|i| i["check"] == "base").unwrap();
    assert!(base["detail"].as_str().unwrap().contains("fails 4 test(s) (libtest report, exit 101)"), "{base}");
}

#[test]
fn the_landings_check_of_the_merged_tree_is_killed_at_the_runs_check_timeout() {
    let env = TestEnv::new();
    // The check hangs on the merged tree only (GIT_MAS_PROPOSER=merged); everywhere else it is
    // the plain unittest run.
    let check = "[ \"$GIT_MAS_PROPOSER\" = merged ] && sleep 60; python3 -m unittest";
    let repo = project(&env, &["alice", "bob"], Some(check));
    let main_before = env.git(&repo, &["rev-parse", "main"]);
    let agents = vec![fixer(&env, "alice"), fixer(&env, "bob")];
    let args = ["--aggregate", "--quorum", "1", "--max-rounds", "1", "--check-timeout", "3s"];
    let (out, took) = coordinate(&env, &repo, &agents, &args);
    assert_ne!(out.code, Some(0), "{}", out.stderr);
    assert!(took < Duration::from_secs(50), "the merged tree's check was not killed in time: {took:?}");
    let run = out.events("run-started")[0]["run"].as_str().unwrap().to_string();
    let shown: Value = serde_json::from_str(&env.mas_ok(&repo, &["run", "show", &run, "--json"])).unwrap();
    assert_eq!(shown["def"]["check_timeout_ms"], 3000, "the run records its check timeout: {shown:#}");
    let all: String = out.lines.iter().map(|l| format!("{l}\n")).collect();
    assert!(all.contains("timed out after 3s"), "the merged check's failure says why:\n{all}\n{}", out.stderr);
    assert_eq!(env.git(&repo, &["rev-parse", "main"]), main_before, "nothing landed");
}

//! Complementary work judged as parts and landed as a tested whole, and best-of-N landing the
//! best: a small Python project whose `python3 -m unittest` is the team's check, scripted `cmd:`
//! agents that make real edits, and `git mas coordinate` from the preflight to the landing.
//!
//! - A slice is endorsed when it breaks nothing the base passed (`sound`), whether or not it fixes
//!   a test alone; a slice that needs no change abstains and is neither endorsed nor waited for.
//! - The merged whole is checked before it lands: it lands when it passes, or as a *partial*
//!   landing (exit 10, `partial: N test(s) still fail`) when it improves on main without passing;
//!   a whole that breaks a test names the slices whose combination broke it, and only those.
//! - Best-of-N lands the proposal that fixes the most failing tests, not the first in ring order.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A project of `files` committed on main, with `lead` and `agents` on its committed roster and
/// `python3 -m unittest` as its check.
fn project(env: &TestEnv, agents: &[&str], files: &[(&str, &str)]) -> PathBuf {
    let dir = env.root().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    env.git_quiet_ok(&dir, &["init", "--quiet", "-b", "main"]);
    env.git_quiet_ok(&dir, &["add", "."]);
    env.git_quiet_ok(&dir, &["commit", "--quiet", "-m", "project"]);
    env.agents(&dir, &[&["lead"][..], agents].concat());
    env.git_quiet_ok(&dir, &["config", "mas.check", "PYTHONDONTWRITEBYTECODE=1 python3 -m unittest"]);
    dir
}

/// A scripted agent. In ASSEMBLY it proposes the split `$SPLIT` (`agent:file …`). On a propose
/// hop it applies its edits (`$EDITS`: lines `path|old|new`, literal replacements) to the files of
/// its slice (all of them in a best-of-N run). Nothing changed in a slice: it abstains. On an endorse
/// hop it endorses every agent named. `$PROBE` set: before abstaining it tries what must be
/// refused and writes the exit codes to `$LOG.probe`; `$PROBE_ENDORSE` set: it tries to endorse
/// that agent first, the same way.
const AGENT: &str = r##"prompt=$(cat)
me=$GIT_MAS_AGENT
exec 2>>"$LOG.$me.err"
field() { printf '%s\n' "$prompt" | sed -n "s/^$1=//p" | head -n 1; }
printf '%s\n=====\n' "$prompt" >> "$LOG.$me"
if [ "$(field phase)" = ASSEMBLY ]; then
  echo "We split the work."
  for pair in $SPLIT; do echo "SLICE ${pair%%:*} $(printf '%s' "${pair#*:}" | tr , ' ')"; done
  echo "CLASS development"
fi
case "$(field task)" in
  propose)
    slice=$(field slice | tr , ' ')
    python3 - "$EDITS" $slice <<'PY'
import sys
edits, slice = sys.argv[1], sys.argv[2:]
for line in open(edits).read().splitlines():
    if not line.strip():
        continue
    path, old, new = line.split("|")
    if slice and path not in slice:
        continue
    text = open(path).read()
    if old in text:
        open(path, "w").write(text.replace(old, new, 1))
PY
    if [ -n "$slice" ] && [ -z "$(git status --porcelain)" ]; then
      if [ -n "$PROBE" ]; then
        git mas propose -m "nothing" >/dev/null 2>"$LOG.probe.plain"; echo "plain $?" >> "$LOG.probe"
        echo changed >> "${slice%% *}"
        git mas propose --abstain -m "no" >/dev/null 2>"$LOG.probe.dirty"; echo "dirty $?" >> "$LOG.probe"
        git checkout -- "${slice%% *}"
      fi
      git mas propose --abstain -m "$me: my slice ($slice) needs no change for the goal" >&2
    else
      git mas propose -m "$me's work" >&2
    fi ;;
  endorse)
    if [ -n "$PROBE_ENDORSE" ]; then
      git mas endorse "$PROBE_ENDORSE" >/dev/null 2>"$LOG.probe.endorse"; echo "endorse $?" >> "$LOG.probe"
    fi
    for p in $(field endorse | tr , ' '); do git mas endorse "$p" >&2; done ;;
esac
next=$(field next)
if [ "$next" = DONE ]; then echo "done"; echo DONE; else echo "done"; echo "NEXT $next"; fi
"##;

/// The agent `name` with its `edits` (`path|old|new` lines) and extra shell settings.
fn agent(env: &TestEnv, name: &str, edits: &[&str], settings: &str) -> String {
    let path = env.root().join(format!("{name}.sh"));
    let edits_path = env.root().join(format!("{name}.edits"));
    std::fs::write(&edits_path, edits.join("\n")).unwrap();
    let log = env.root().join("log");
    let head = format!("LOG='{}'\nEDITS='{}'\n{settings}\n", log.display(), edits_path.display());
    std::fs::write(&path, format!("{head}{AGENT}")).unwrap();
    format!("{name}=cmd:sh {}", path.display())
}

fn coordinate(env: &TestEnv, repo: &Path, agents: &[String], extra: &[&str]) -> JsonRun {
    let out = env
        .mas_cmd(repo)
        .args(["--agent", "lead", "coordinate", "--json", "--goal", "make the test suite pass", "--wait", "2s"])
        .args(["--agents", &agents.join(",")])
        .args(extra)
        .output()
        .unwrap();
    JsonRun::of(&out)
}

fn report(out: &JsonRun) -> &Value {
    &out.events("report").last().unwrap_or_else(|| panic!("no report: {}", out.stderr))["report"]
}

/// What the agents' stderr logs hold, for a failure's message.
fn logs(env: &TestEnv, agents: &[&str]) -> String {
    agents
        .iter()
        .map(|a| {
            format!("--- {a}\n{}", std::fs::read_to_string(env.root().join(format!("log.{a}.err"))).unwrap_or_default())
        })
        .collect()
}

/// `python3 -m unittest` on main's checkout: its exit code.
fn suite_on_main(repo: &Path) -> Option<i32> {
    std::process::Command::new("python3")
        .args(["-m", "unittest"])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(repo)
        .output()
        .unwrap()
        .status
        .code()
}

const SUM_PROJECT: &[(&str, &str)] = &[
    ("a.py", "X = 4\n"),
    ("b.py", "Y = 4\n"),
    ("c.py", "Z = 1\n"),
    (
        "test_sum.py",
        "import unittest\nfrom a import X\nfrom b import Y\n\n\nclass Sum(unittest.TestCase):\n    def test_ten(self):\n        self.assertEqual(X + Y, 10)\n",
    ),
    (
        "test_c.py",
        "import unittest\nfrom c import Z\n\n\nclass C(unittest.TestCase):\n    def test_one(self):\n        self.assertEqual(Z, 1)\n",
    ),
];

#[test]
fn parts_that_fix_nothing_alone_are_endorsed_and_their_whole_lands_once() {
    let env = TestEnv::new();
    let repo = project(&env, &["alice", "bob", "carol"], SUM_PROJECT);
    let base = env.git(&repo, &["rev-parse", "main"]);
    // X + Y must be 10: alice's X = 5 alone and bob's Y = 5 alone fix nothing, together they do.
    let split = "SPLIT='alice:a.py bob:b.py carol:c.py'";
    let agents = vec![
        agent(&env, "alice", &["a.py|X = 4|X = 5"], split),
        agent(&env, "bob", &["b.py|Y = 4|Y = 5"], &format!("{split}\nPROBE_ENDORSE=carol")),
        agent(&env, "carol", &[], &format!("{split}\nPROBE=1")),
    ];
    let out = coordinate(&env, &repo, &agents, &["--aggregate", "--assembly", "--quorum", "2"]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stderr, logs(&env, &["alice", "bob", "carol"]));

    // The plan is the agents' split; each part was endorsed as sound (a part that fixes nothing
    // alone and breaks nothing), and carol, whose slice needed nothing, abstained.
    assert_eq!(out.events("plan")[0]["plan"]["source"], "agents");
    let endorse_log = std::fs::read_to_string(env.root().join("log.carol.err")).unwrap();
    assert!(endorse_log.contains("breaks nothing the base passed"), "carol's endorsement of a part: {endorse_log}");
    let barrier = out.events("barrier");
    let last = barrier.last().unwrap();
    let status =
        |a: &str| last["slices"].as_array().unwrap().iter().find(|s| s["agent"] == a).unwrap()["status"].clone();
    assert_eq!(
        (status("alice"), status("bob"), status("carol")),
        ("at_quorum".into(), "at_quorum".into(), "abstained".into())
    );
    assert_eq!(last["holds"], true);
    // Nobody was asked to endorse an abstention, and it was refused when tried.
    for a in ["alice", "bob"] {
        let prompts = std::fs::read_to_string(env.root().join(format!("log.{a}"))).unwrap();
        let asked: Vec<&str> = prompts.lines().filter(|l| l.starts_with("endorse=")).collect();
        assert!(!asked.is_empty() && asked.iter().all(|l| !l.contains("carol")), "{a}: {asked:?}");
    }
    let refused = std::fs::read_to_string(env.root().join("log.probe.endorse")).unwrap();
    assert!(refused.contains("carol abstained in run") && refused.contains("nothing to endorse"), "{refused}");

    // carol's probes: a proposal that changes nothing, and an abstention with a change, refused.
    let probe = std::fs::read_to_string(env.root().join("log.probe")).unwrap();
    let mut lines: Vec<&str> = probe.lines().collect();
    lines.sort();
    assert_eq!(lines, ["dirty 1", "endorse 1", "plain 1"], "{probe}");
    let plain = std::fs::read_to_string(env.root().join("log.probe.plain")).unwrap();
    assert!(plain.contains("a slice that changes nothing is not a proposal") && plain.contains("--abstain"), "{plain}");
    let dirty = std::fs::read_to_string(env.root().join("log.probe.dirty")).unwrap();
    assert!(dirty.contains("you abstain, but your worktree changes 1 path(s)") && dirty.contains("c.py"), "{dirty}");

    // One commit on main, the tested whole: both parts, and the suite passes on it.
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    assert_eq!(env.git(&repo, &["show", "main:a.py"]), "X = 5");
    assert_eq!(env.git(&repo, &["show", "main:b.py"]), "Y = 5");
    assert_eq!(suite_on_main(&repo), Some(0));
    let message = env.git(&repo, &["log", "-1", "--format=%B", "main"]);
    assert!(message.contains("Mas-Winner: alice") && message.contains("Mas-Winner: bob"), "{message}");
    assert!(!message.contains("Mas-Winner: carol"), "an abstention lands nothing: {message}");
    let r = report(&out);
    assert_eq!(r["status"], "converged");
    assert_eq!(r["merged_check_passed"], true);
    assert!(r.get("still_failing").is_none(), "{r}");
    let carol = r["slices"].as_array().unwrap().iter().find(|s| s["agent"] == "carol").unwrap();
    assert_eq!(carol["status"], "abstained");
    let tally = (*out.events("tally").last().unwrap()).clone();
    let carol = tally["proposals"].as_array().unwrap().iter().find(|p| p["agent"] == "carol").unwrap().clone();
    assert_eq!(carol["endorsers"], serde_json::json!([]), "an abstention is not endorsed");
    let tally = env.mas(&repo, &["tally", &run_id(&out)]);
    assert!(
        stdout(&tally)
            .contains("carol  abstained (the base unchanged): carol: my slice (c.py) needs no change for the goal"),
        "{}",
        stdout(&tally)
    );
}

fn run_id(out: &JsonRun) -> String {
    out.events("run-started")[0]["run"].as_str().unwrap().to_string()
}

const THREE_BUGS: &[(&str, &str)] = &[
    ("a.py", "def double(x):\n    return x + 2\n"),
    ("b.py", "def square(x):\n    return x * 2\n"),
    ("c.py", "def negate(x):\n    return x\n"),
    (
        "test_a.py",
        "import unittest\nfrom a import double\n\n\nclass A(unittest.TestCase):\n    def test_double(self):\n        self.assertEqual(double(3), 6)\n",
    ),
    (
        "test_b.py",
        "import unittest\nfrom b import square\n\n\nclass B(unittest.TestCase):\n    def test_square(self):\n        self.assertEqual(square(3), 9)\n",
    ),
    (
        "test_c.py",
        "import unittest\nfrom c import negate\n\n\nclass C(unittest.TestCase):\n    def test_negate(self):\n        self.assertEqual(negate(3), -3)\n",
    ),
];

const FIX_A: &str = "a.py|x + 2|x * 2";
const FIX_B: &str = "b.py|x * 2|x * x";
const FIX_C: &str = "c.py|return x|return -x";

#[test]
fn a_whole_that_improves_without_passing_lands_as_partial_with_its_own_exit_code() {
    let env = TestEnv::new();
    let repo = project(&env, &["alice", "bob", "carol"], THREE_BUGS);
    let base = env.git(&repo, &["rev-parse", "main"]);
    // carol does not know how to fix c.py: she abstains, and one test still fails on the whole.
    let split = "SPLIT='alice:a.py bob:b.py carol:c.py'";
    let agents = vec![
        agent(&env, "alice", &[FIX_A], split),
        agent(&env, "bob", &[FIX_B], split),
        agent(&env, "carol", &[], split),
    ];
    let out = coordinate(&env, &repo, &agents, &["--aggregate", "--assembly", "--quorum", "2"]);
    assert_eq!(out.code, Some(10), "partial: {}\n{}", out.stderr, logs(&env, &["alice", "bob", "carol"]));
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    let halt = out.events("halt").last().copied().unwrap();
    assert_eq!(halt["halt"], "landed");
    assert!(halt["detail"].as_str().unwrap().contains("partial: 1 test(s) still fail on main"), "{halt}");
    let r = report(&out);
    assert_eq!(r["still_failing"], 1, "{r}");
    assert_eq!(r["merged_check_passed"], false);
    assert_ne!(r["termination_reason"], "quality_reached");
    // What landed is the tested whole: a and b fixed, c not.
    assert_eq!(suite_on_main(&repo), Some(1));
    assert!(env.git(&repo, &["show", "main:a.py"]).contains("x * 2"));
    assert!(env.git(&repo, &["show", "main:b.py"]).contains("x * x"));
    // `git mas report` says it in words.
    let text = env.mas(&repo, &["report", &run_id(&out)]);
    assert!(stdout(&text).contains("partial:     1 test(s) still fail on what landed"), "{}", stdout(&text));
}

#[test]
fn a_whole_that_breaks_a_test_names_only_the_slices_whose_combination_broke_it() {
    let env = TestEnv::new();
    let mut files = THREE_BUGS.to_vec();
    // alice and bob each turn one flag on: either alone is fine, both together break test_combo.
    files.extend([
        ("flag_a.py", "ON = False\n"),
        ("flag_b.py", "ON = False\n"),
        (
            "test_combo.py",
            "import unittest\nimport flag_a\nimport flag_b\n\n\nclass Combo(unittest.TestCase):\n    def test_not_both(self):\n        self.assertFalse(flag_a.ON and flag_b.ON)\n",
        ),
    ]);
    let repo = project(&env, &["alice", "bob", "carol"], &files);
    let base = env.git(&repo, &["rev-parse", "main"]);
    let split = "SPLIT='alice:a.py,flag_a.py bob:b.py,flag_b.py carol:c.py'";
    let agents = vec![
        agent(&env, "alice", &[FIX_A, "flag_a.py|ON = False|ON = True"], split),
        agent(&env, "bob", &[FIX_B, "flag_b.py|ON = False|ON = True"], split),
        agent(&env, "carol", &[FIX_C], split),
    ];
    let out = coordinate(&env, &repo, &agents, &["--aggregate", "--assembly", "--quorum", "2", "--max-rounds", "1"]);
    assert_eq!(out.code, Some(6), "blocked: {}\n{}", out.stderr, logs(&env, &["alice", "bob", "carol"]));
    let conflicts = out.events("conflict");
    assert_eq!(conflicts.len(), 1, "{:?}", out.lines);
    let c = &conflicts[0]["conflict"];
    assert_eq!(c["type"], "test_failure", "{c}");
    let parties: Vec<&str> = c["parties"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    assert_eq!(parties, ["alice", "bob", "merged"], "{c}");
    let detail = c["detail"].as_str().unwrap();
    assert!(detail.contains("test_not_both") && detail.contains("the breakage goes with alice, bob"), "{detail}");
    assert_eq!(env.git(&repo, &["rev-parse", "main"]), base, "nothing landed");
}

#[test]
fn best_of_n_lands_the_proposal_that_fixes_the_most_tests() {
    let env = TestEnv::new();
    let repo = project(&env, &["alice", "bob", "carol"], THREE_BUGS);
    let base = env.git(&repo, &["rev-parse", "main"]);
    // alice (first in the ring, first by name) fixes one bug, carol two, bob all three.
    let agents = vec![
        agent(&env, "alice", &[FIX_A], ""),
        agent(&env, "bob", &[FIX_A, FIX_B, FIX_C], ""),
        agent(&env, "carol", &[FIX_B, FIX_C], ""),
    ];
    let out = coordinate(&env, &repo, &agents, &["--quorum", "2"]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stderr, logs(&env, &["alice", "bob", "carol"]));
    // Every proposal reached its quorum in the one round (each improves the base), and the one
    // that fixes the most landed.
    let tally = (*out.events("tally").last().unwrap()).clone();
    for p in tally["proposals"].as_array().unwrap() {
        assert_eq!(p["endorsers"].as_array().unwrap().len(), 2, "{p}");
    }
    assert_eq!(out.events("landed")[0]["winners"], serde_json::json!(["bob"]));
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    assert_eq!(suite_on_main(&repo), Some(0));
    assert!(report(&out).get("still_failing").is_none());
}

#[test]
fn best_of_n_whose_best_still_fails_tests_is_partial() {
    let env = TestEnv::new();
    let repo = project(&env, &["alice", "bob"], THREE_BUGS);
    let agents = vec![agent(&env, "alice", &[FIX_A], ""), agent(&env, "bob", &[FIX_B, FIX_C], "")];
    let out = coordinate(&env, &repo, &agents, &["--quorum", "1"]);
    assert_eq!(out.code, Some(10), "{}\n{}", out.stderr, logs(&env, &["alice", "bob"]));
    assert_eq!(out.events("landed")[0]["winners"], serde_json::json!(["bob"]));
    assert_eq!(report(&out)["still_failing"], 1);
    let land = env.mas(&repo, &["--agent", "lead", "land", &run_id(&out)]);
    assert_eq!(land.status.code(), Some(10), "land again says partial too: {}", stderr(&land));
}

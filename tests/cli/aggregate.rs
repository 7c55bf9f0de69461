//! `git mas coordinate --aggregate`: the goal split by the frame into one slice per agent, each
//! agent working its own slice in its own worktree, the wait-all barrier, and the merged whole
//! landed on main once — with real `cmd:` agents doing their own work with real git mas commands.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A repository (the fixture) with the driver `lead` and `agents` on its committed roster, a
/// configured snapshot input (so the driver publishes a frame), and a check that fails on any
/// tree containing the word BROKEN.
pub fn setup(env: &TestEnv, agents: &[&str]) -> PathBuf {
    env.team(&[&["lead"][..], agents].concat())
        .config("mas.check", "! grep -rq BROKEN --exclude-dir=.git .")
        .config("mas.task", "fix the pricing and the stock check")
        .build()
        .repo
}

/// An aggregate agent: publishes its focus from its slice, marks its slice's top file, proposes;
/// endorses what it is asked to. `MODE`: `slice` (only its slice), `clash` (also rewrites the
/// first line of README.md, until a hop names a conflict), `broken` (its slice says BROKEN),
/// `held` (proposes only once the file `$LOG.go` exists).
const AGENT: &str = r##"prompt=$(cat)
exec 2>>"$LOG.${GIT_MAS_AGENT:-$GIT_MAS_PEER}.err"
field() { printf '%s\n' "$prompt" | sed -n "s/^$1=//p" | head -n 1; }
me=${GIT_MAS_AGENT:-$GIT_MAS_PEER}
printf '%s\n=====\n' "$prompt" >> "$LOG.$me"
if [ "$(field phase)" = ASSEMBLY ]; then
  echo "We split the code work."
  for pair in $SPLIT; do
    want=${pair#*:}
    case "$want" in [0-9]*) want=$(field split | cut -d, -f"$want") ;; esac
    echo "SLICE ${pair%%:*} $want"
  done
  echo "CLASS development"
fi
case "$(field task)" in
  propose)
    slice=$(field slice)
    top=${slice%%,*}
    git mas focus publish --targets $(printf '%s' "$slice" | tr , ' ') >&2
    printf '\nslice work by %s\n' "$GIT_MAS_AGENT" >> "$top"
    if [ "$MODE" = broken ]; then printf 'BROKEN\n' >> "$top"; fi
    if [ "$MODE" = late ] && [ "$(field round)" = 1 ]; then
      git checkout -- "$top"; echo "not yet"; n=$(field next); if [ "$n" = DONE ]; then echo DONE; else echo "NEXT $n"; fi; exit 0
    fi
    if [ "$MODE" = pair ]; then
      if [ -z "$(field conflict)" ]; then echo marked > "$GIT_MAS_AGENT.mark"; else rm -f "$GIT_MAS_AGENT.mark"; fi
    fi
    if [ "$MODE" = hang ]; then echo $$ > "$LOG.hang.pid"; sleep 60; fi
    if [ "$MODE" = held ]; then while [ ! -e "$LOG.go" ]; do sleep 0.1; done; fi
    if [ "$MODE" = mover ] && [ "$(field round)" = 1 ]; then
      main=$(cd "$(git rev-parse --git-common-dir)/.." && pwd)
      echo "main moved" > "$main/MOVED.md" && git -C "$main" add MOVED.md && git -C "$main" commit -qm "main moved" >&2
    fi
    if [ "$MODE" = clash ]; then
      if [ -z "$(field conflict)" ]; then
        { echo "# $GIT_MAS_AGENT's title"; tail -n +2 README.md; } > README.new && mv README.new README.md
      else
        git checkout "$(git merge-base HEAD main)" -- README.md
      fi
    fi
    git mas propose -m "$GIT_MAS_AGENT's slice" >&2 ;;
  endorse) for p in $(field endorse | tr , ' '); do git mas endorse "$p" >&2; done ;;
esac
next=$(field next)
if [ "$next" = DONE ]; then echo "done"; echo DONE; else echo "done"; echo "NEXT $next"; fi
"##;

pub fn agent(env: &TestEnv, name: &str, mode: &str) -> String {
    splitting(env, name, mode, "")
}

/// An agent that, in ASSEMBLY, proposes `split`: `agent:N` (the N-th file the prompt offers) or
/// `agent:path`, space-separated, one `SLICE` line each.
fn splitting(env: &TestEnv, name: &str, mode: &str, split: &str) -> String {
    let path = env.root().join(format!("{name}.sh"));
    let log = env.root().join("prompts");
    std::fs::write(&path, format!("LOG='{}'\nMODE='{mode}'\nSPLIT='{split}'\n{AGENT}", log.display())).unwrap();
    format!("{name}=cmd:sh {}", path.display())
}

/// An aggregate run's own questions of the event stream.
trait Aggregate {
    fn report(&self) -> &Value;
    fn position(&self, kind: &str) -> usize;
}

impl Aggregate for JsonRun {
    fn report(&self) -> &Value {
        &self.events("report").last().unwrap_or_else(|| panic!("no report; stderr: {}", self.stderr))["report"]
    }

    fn position(&self, kind: &str) -> usize {
        self.lines.iter().position(|l| l["event"] == kind).unwrap_or_else(|| panic!("no {kind} event"))
    }
}

pub fn coordinate(env: &TestEnv, repo: &Path, agents: &[String], extra: &[&str]) -> JsonRun {
    coordinate_on(env, repo, "fix the bugs", agents, extra)
}

/// [`coordinate`] with `goal`.
pub fn coordinate_on(env: &TestEnv, repo: &Path, goal: &str, agents: &[String], extra: &[&str]) -> JsonRun {
    // The reference agents' run checks with the fixture's check.sh, which runs cargo.
    let out = with_toolchain(&mut env.mas_cmd(repo))
        .args(["--agent", "lead", "coordinate", "--json", "--aggregate", "--goal", goal])
        .args(["--agents", &agents.join(",")])
        .args(extra)
        .output()
        .unwrap();
    JsonRun::of(&out)
}

fn slices(out: &JsonRun) -> Vec<(String, Vec<String>)> {
    let plan = &out.events("plan")[0]["plan"];
    plan["slices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let targets = s["targets"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect();
            (s["agent"].as_str().unwrap().to_string(), targets)
        })
        .collect()
}

#[test]
fn three_slices_land_as_one_commit_holding_every_slice() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob", "carol"]);
    let base = env.git(&repo, &["rev-parse", "main"]);
    let agents: Vec<String> = ["alice", "bob", "carol"].iter().map(|a| agent(&env, a, "slice")).collect();
    let out = coordinate(&env, &repo, &agents, &["--quorum", "2"]);
    assert_eq!(
        out.code,
        Some(0),
        "{}\n{}",
        out.stderr,
        std::fs::read_to_string(env.root().join("prompts.alice.err")).unwrap_or_default()
    );

    // The plan: one slice per agent, in ring order, before the first hop; no file in two slices.
    let plan = slices(&out);
    assert_eq!(plan.iter().map(|(a, _)| a.as_str()).collect::<Vec<_>>(), ["alice", "bob", "carol"]);
    let mut files: Vec<&String> = plan.iter().flat_map(|(_, t)| t).collect();
    let n = files.len();
    files.sort();
    files.dedup();
    assert_eq!(files.len(), n, "a file in two slices: {plan:?}");
    assert!(out.position("plan") < out.position("hop"));
    // Recorded, signed, in the run's definition.
    let run = out.events("run-started")[0]["run"].as_str().unwrap().to_string();
    let shown: Value = serde_json::from_str(&env.mas_ok(&repo, &["run", "show", &run, "--json"])).unwrap();
    assert_eq!(shown.to_string().matches("\"subgoal\"").count(), 3, "{shown}");

    // One commit on main, holding every slice's change, naming every agent.
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    for (agent, targets) in &plan {
        let file = env.git(&repo, &["show", &format!("main:{}", targets[0])]);
        assert!(file.ends_with(&format!("slice work by {agent}")), "{agent}'s slice is not on main");
    }
    let message = env.git(&repo, &["log", "-1", "--format=%B", "main"]);
    for a in ["alice", "bob", "carol"] {
        assert!(message.contains(&format!("Mas-Winner: {a}")), "{message}");
        assert!(message.contains(&format!("(for {a})")), "endorsers of {a}'s slice: {message}");
    }
    assert!(message.contains("Mas-Termination: quality_reached"), "{message}");

    // Each agent published its focus from its slice, under its own identity.
    let prompt = std::fs::read_to_string(env.root().join("prompts.alice")).unwrap();
    assert!(prompt.contains(&format!("slice={}", plan[0].1.join(","))), "{prompt}");
    let board: Value = serde_json::from_str(&env.mas_ok(&repo, &["focus", "list", "--json"])).unwrap();
    assert!(board.to_string().contains(&plan[1].1[0]), "{board}");

    // The report: every slice landed.
    let report = out.report();
    assert_eq!(report["status"], "converged", "{report}");
    let statuses: Vec<&str> =
        report["slices"].as_array().unwrap().iter().map(|s| s["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["landed", "landed", "landed"], "{report}");
    assert_eq!(report["merged_check_passed"], true, "the merged tree was checked: {report}");
    let summary = env.mas_ok(&repo, &["report", &run]);
    assert!(summary.contains("merged:      the check passed on the merged tree that landed"), "{summary}");
    assert!(
        summary.contains("slices:") && summary.contains(&format!("carol        landed          {}", plan[2].1[0])),
        "{summary}"
    );
}

#[test]
fn two_slices_changing_the_same_lines_are_a_recorded_conflict_resolved_next_round() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob"]);
    let base = env.git(&repo, &["rev-parse", "main"]);
    let agents = vec![agent(&env, "alice", "clash"), agent(&env, "bob", "clash")];
    let out = coordinate(&env, &repo, &agents, &["--quorum", "1", "--max-rounds", "3"]);
    assert_eq!(out.code, Some(0), "{}\n{:#?}", out.stderr, out.lines);
    let conflicts = out.events("conflict");
    assert_eq!(conflicts.len(), 1, "{:?}", out.lines);
    let conflict = &conflicts[0]["conflict"];
    assert_eq!(conflict["type"], "artifact_mismatch", "{conflict}");
    assert!(conflict["paths"].to_string().contains("README.md"), "{conflict}");
    // The next round's hops name it, to both.
    for a in ["alice", "bob"] {
        let prompts = std::fs::read_to_string(env.root().join(format!("prompts.{a}"))).unwrap();
        assert!(prompts.contains("conflict=artifact_mismatch with"), "{a} was not told: {prompts}");
    }
    // And the second to propose its clashing slice was told at once, by `git mas propose`.
    let told: Vec<String> = ["alice", "bob"]
        .iter()
        .map(|a| std::fs::read_to_string(env.root().join(format!("prompts.{a}.err"))).unwrap_or_default())
        .filter(|err| err.contains("proposal changes README.md differently: the two slices cannot land together"))
        .collect();
    assert_eq!(told.len(), 1, "exactly the second proposer is told when it proposes: {told:?}");
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    let report = out.report();
    assert_eq!(report["status"], "converged", "{report}");
    assert!(report["conflicts"].to_string().contains("artifact_mismatch"), "the report keeps it: {report}");
}

#[test]
fn two_clashing_slices_are_told_while_the_barrier_waits_and_the_landing_never_stops_on_them() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob", "carol"]);
    let base = env.git(&repo, &["rev-parse", "main"]);
    // Carol's slice comes in the second round: after the first, the barrier waits for it.
    let agents = vec![agent(&env, "alice", "clash"), agent(&env, "bob", "clash"), agent(&env, "carol", "late")];
    let out = coordinate(&env, &repo, &agents, &["--quorum", "1", "--max-rounds", "3"]);
    assert_eq!(out.code, Some(0), "{}\n{:#?}", out.stderr, out.lines);
    // Both were told in their second propose hop, before any landing: none was blocked.
    for a in ["alice", "bob"] {
        let prompts = std::fs::read_to_string(env.root().join(format!("prompts.{a}"))).unwrap();
        assert!(prompts.contains("change README.md differently: the two cannot land together"), "{a}: {prompts}");
    }
    assert!(out.events("conflict").is_empty(), "the landing never stopped on the clash: {:?}", out.lines);
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    assert_eq!(out.report()["status"], "converged");
}

#[test]
fn a_failing_slice_blocks_the_landing_and_partial_lands_the_others() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob", "carol"]);
    let base = env.git(&repo, &["rev-parse", "main"]);
    let agents = vec![agent(&env, "alice", "slice"), agent(&env, "bob", "slice"), agent(&env, "carol", "broken")];
    let out = coordinate(&env, &repo, &agents, &["--quorum", "2", "--max-rounds", "1"]);
    assert_eq!(out.code, Some(8), "nothing lands: {}", out.stderr);
    assert_eq!(env.git(&repo, &["rev-parse", "main"]), base);
    let report = out.report();
    let carol = report["slices"].as_array().unwrap().iter().find(|s| s["agent"] == "carol").unwrap().clone();
    assert_eq!(carol["status"], "judged_against", "{report}");

    // The same team again, with --partial: the slices at quorum land when the rounds end.
    // The barrier holds after the first round (carol's is judged against): the others land then.
    let out = coordinate(&env, &repo, &agents, &["--quorum", "2", "--max-rounds", "2", "--partial"]);
    assert_eq!(out.code, Some(0), "{}\n{:#?}", out.stderr, out.lines);
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    let message = env.git(&repo, &["log", "-1", "--format=%B", "main"]);
    assert!(message.contains("Mas-Winner: alice") && message.contains("Mas-Winner: bob"), "{message}");
    assert!(!message.contains("Mas-Winner: carol"), "{message}");
    assert!(
        message.contains("Mas-Termination: tasks_completed"),
        "a partial landing is never quality_reached: {message}"
    );
    let report = out.report();
    // Left out of the landing, carol's slice still says why: it was proposed and judged against.
    let carol = report["slices"].as_array().unwrap().iter().find(|s| s["agent"] == "carol").unwrap().clone();
    assert_eq!(carol["status"], "judged_against", "{report}");
    assert!(report["quality_state"]["basis"].as_str().unwrap().contains("slices not in it: carol"), "{report}");
}

#[test]
fn aggregate_without_a_frame_publishes_the_goals_frame_and_splits_it() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["lead", "alice", "bob"]);
    env.git_quiet_ok(&repo, &["config", "mas.check", "! grep -rq BROKEN --exclude-dir=.git ."]);
    assert!(env.git(&repo, &["for-each-ref", "refs/mas/frame"]).is_empty(), "no frame yet");
    let agents = vec![agent(&env, "alice", "slice"), agent(&env, "bob", "slice")];
    let out = coordinate(&env, &repo, &agents, &["--quorum", "1"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    // The driver published the frame of the goal (no snapshot input is configured) and dealt
    // the plan from it.
    let frame: Value = serde_json::from_str(&env.mas_ok(&repo, &["frame", "--json"])).unwrap();
    let plan = &out.events("plan")[0]["plan"];
    assert_eq!(plan["frame"], frame["hash"], "{frame}");
    assert_eq!(out.events("preflight")[0]["frame"]["current"], false);
}

#[test]
fn with_assembly_the_agents_propose_the_split_and_a_bad_one_is_refused_by_name() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob"]);
    // bob, speaking last, swaps the frame's first two files: alice takes the second, bob the first.
    let agents = vec![agent(&env, "alice", "slice"), splitting(&env, "bob", "slice", "alice:2 bob:1")];
    let out = coordinate(&env, &repo, &agents, &["--assembly", "--quorum", "1"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let prompt = std::fs::read_to_string(env.root().join("prompts.bob")).unwrap();
    let offered: Vec<&str> = prompt
        .lines()
        .find_map(|l| l.strip_prefix("split="))
        .unwrap_or_else(|| panic!("no split offered: {prompt}"))
        .split(',')
        .collect();
    let plan = &out.events("plan")[0]["plan"];
    assert_eq!(plan["source"], "agents", "{plan}");
    assert_eq!(
        slices(&out),
        [("alice".to_string(), vec![offered[1].to_string()]), ("bob".into(), vec![offered[0].into()])]
    );
    assert!(prompt.contains("SLICE <peer> <file>"), "the protocol is in the prompt: {prompt}");

    // Overlapping top targets, and a target the frame does not have: refused by name, and the
    // frame's split is used.
    for (split, named) in [
        ("alice:1 bob:1", "share their top target"),
        ("alice:no/such/file.rs bob:1", "\"no/such/file.rs\" is not a file of the frame"),
    ] {
        let agents = vec![agent(&env, "alice", "slice"), splitting(&env, "bob", "slice", split)];
        let out = coordinate(&env, &repo, &agents, &["--assembly", "--quorum", "1"]);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        assert!(
            out.stderr.contains("the agents' split is refused") && out.stderr.contains(named),
            "{split}: {}",
            out.stderr
        );
        assert_eq!(out.events("plan")[0]["plan"]["source"], "frame");
    }
}

#[test]
fn main_moving_during_the_run_is_a_three_way_merge_onto_main() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob"]);
    let base = env.git(&repo, &["rev-parse", "main"]);
    let agents = vec![agent(&env, "alice", "mover"), agent(&env, "bob", "slice")];
    let out = coordinate(&env, &repo, &agents, &["--quorum", "1"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let moved = env.git(&repo, &["rev-parse", "main~1"]);
    assert_ne!(moved, base, "someone committed on main during the run");
    assert_eq!(env.git(&repo, &["log", "-1", "--format=%s", "main~1"]), "main moved");
    assert_eq!(env.git(&repo, &["show", "main:MOVED.md"]), "main moved", "main's own change is kept");
    for (agent, targets) in slices(&out) {
        let file = env.git(&repo, &["show", &format!("main:{}", targets[0])]);
        assert!(file.ends_with(&format!("slice work by {agent}")), "{agent}'s slice is not on main");
    }
    let message = env.git(&repo, &["log", "-1", "--format=%B", "main"]);
    assert!(message.contains(&format!("merged onto main at {moved}")), "{message}");
}

#[test]
fn the_barrier_waits_for_the_slowest_slice() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob", "carol"]);
    let base = env.git(&repo, &["rev-parse", "main"]);
    let agents = vec![agent(&env, "alice", "slice"), agent(&env, "bob", "late"), agent(&env, "carol", "slice")];
    let out = coordinate(&env, &repo, &agents, &["--quorum", "2"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let barriers = out.events("barrier");
    assert_eq!(barriers[0]["holds"], false, "{:?}", barriers[0]);
    let bob = barriers[0]["slices"].as_array().unwrap().iter().find(|s| s["agent"] == "bob").unwrap().clone();
    assert_eq!(bob["status"], "missing", "{bob}");
    // Round 1 landed nothing although alice's and carol's slices were at quorum.
    let landed = out.position("landed");
    assert!(out.position("barrier") < landed);
    assert_eq!(out.events("landed")[0]["winners"], serde_json::json!(["alice", "bob", "carol"]));
    assert_eq!(barriers.len(), 2, "landed after the second round");
    // bob was asked twice in round 1 (no proposal appeared), and alice's and carol's slices were
    // in: they sat the second propose hop out.
    let proposes: Vec<&str> =
        out.events("hop").iter().filter(|h| h["task"] == "propose").map(|h| h["peer"].as_str().unwrap()).collect();
    assert_eq!(proposes, ["alice", "bob", "bob", "carol", "bob"]);
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
}

#[test]
fn ctrl_c_mid_round_leaves_refs_mas_consistent() {
    interrupted_mid_round("INT", Some(130));
}

#[test]
fn sigkill_of_the_driver_mid_round_leaves_refs_mas_consistent() {
    interrupted_mid_round("KILL", None);
}

/// The driver gets `signal` while bob's propose hop runs (alice has proposed): it exits `code`
/// (`None`: killed), and `refs/mas` is as of its last completed write.
fn interrupted_mid_round(signal: &str, code: Option<i32>) {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob"]);
    let base = env.git(&repo, &["rev-parse", "main"]);
    let agents = [agent(&env, "alice", "slice"), agent(&env, "bob", "hang")];
    let child = env
        .mas_cmd(&repo)
        .args(["--agent", "lead", "coordinate", "--json", "--aggregate", "--goal", "fix the bugs", "--quorum", "1"])
        .args(["--agents", &agents.join(",")])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid_file = env.root().join("prompts.hang.pid");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let started = || std::fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n'));
    while !started() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(started(), "bob's hop never started");
    let status =
        std::process::Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), code, "{}", stderr(&out));
    // A killed driver cannot stop its agents (Ctrl-C does): bob's hop, orphaned, is stopped here.
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    std::process::Command::new("sh")
        .args(["-c", &format!("kill -KILL -- -$(ps -o pgid= -p {pid} | tr -d ' ') 2>/dev/null")])
        .status()
        .unwrap();
    // refs/mas as of its last completed write: the run is open, with its plan, alice's proposal,
    // and every record verifies; main did not move.
    let listed: Value = serde_json::from_str(&env.mas_ok(&repo, &["run", "list", "--json"])).unwrap();
    assert_eq!(listed[0]["phase"], "open", "{listed}");
    let run = listed[0]["id"].as_str().unwrap().to_string();
    let shown: Value = serde_json::from_str(&env.mas_ok(&repo, &["run", "show", &run, "--json"])).unwrap();
    assert_eq!(shown.to_string().matches("\"subgoal\"").count(), 2, "{shown}");
    let (code, _) = log_json(&env, &repo, "lead");
    assert_eq!(code, Some(0), "every record verifies");
    assert_eq!(env.git(&repo, &["rev-parse", "--verify", &format!("refs/mas/runs/{run}/proposals/alice")]).len(), 40);
    assert_eq!(env.git(&repo, &["rev-parse", "main"]), base);
    let doctor = env.mas(&repo, &["doctor"]);
    assert_eq!(doctor.status.code(), Some(0), "{}{}", stdout(&doctor), stderr(&doctor));
    env.mas_quiet_ok(&repo, &["--agent", "lead", "run", "abort", &run, "--reason", "interrupted"]);
}

/// Runs the fixture's own test suite (`check.sh`) on `rev`'s tree, exported; its exit code.
fn fixture_suite(env: &TestEnv, repo: &Path, rev: &str) -> Option<i32> {
    let dir = env.root().join(format!("export-{rev}"));
    std::fs::create_dir_all(&dir).unwrap();
    let archive = env.git_cmd(repo).args(["archive", "--format=tar", rev]).output().unwrap();
    assert!(archive.status.success(), "git archive {rev}");
    let mut tar = std::process::Command::new("tar")
        .args(["-x", "-C"])
        .arg(&dir)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(tar.stdin.as_mut().unwrap(), &archive.stdout).unwrap();
    assert!(tar.wait().unwrap().success());
    std::process::Command::new("sh").arg("check.sh").current_dir(&dir).output().unwrap().status.code()
}

#[test]
fn reference_agents_fix_their_slices_a_third_reviews_and_the_fixtures_tests_pass_on_main() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.agents(&repo, &["lead", "alice", "bob", "carol"]);
    env.git_quiet_ok(&repo, &["config", "mas.check", "sh check.sh"]);
    // The goal names the files: the frame of the goal ranks them first.
    let goal = "fix the tax rounding in src/pricing/tax.rs and the reorder point in tools/stockcheck/reorder.py";
    let base = env.git(&repo, &["rev-parse", "main"]);
    assert_eq!(fixture_suite(&env, &repo, &base), Some(1), "the fixture's bugs fail its tests");
    let agents: Vec<String> = ["alice", "bob", "carol"].iter().map(|a| format!("{a}=builtin:reference")).collect();
    let out = coordinate_on(&env, &repo, goal, &agents, &["--quorum", "2"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    // Two bugs, three agents: two slices; carol has no slice (not `.gitignore` as filler): she
    // reviews, in endorse hops only, and the landing names her as an endorser of both.
    let plan = slices(&out);
    assert_eq!(plan.len(), 2, "{plan:?}");
    let reviewers = &out.events("plan")[0]["plan"]["reviewers"];
    assert_eq!(reviewers[0]["agent"], "carol", "{reviewers}");
    assert!(reviewers[0]["why"].as_str().unwrap().contains("nothing the goal concerns is left"), "{reviewers}");
    let carol_tasks: Vec<String> = out
        .events("hop")
        .into_iter()
        .filter(|h| h["peer"] == "carol")
        .map(|h| h["task"].as_str().unwrap().to_string())
        .collect();
    assert!(
        !carol_tasks.iter().any(|t| t == "propose") && carol_tasks.iter().any(|t| t == "endorse"),
        "{carol_tasks:?}"
    );
    let message = env.git(&repo, &["log", "-1", "--format=%B", "main"]);
    for (a, _) in &plan {
        assert!(message.contains(&format!("Mas-Winner: {a}")), "{message}");
    }
    assert!(!message.contains("Mas-Winner: carol"), "{message}");
    assert_eq!(message.matches("carol").count(), 2, "carol endorsed both slices: {message}");
    // The two fixes came from two agents' slices, and together they pass the suite.
    let holder = |file: &str| plan.iter().find(|(_, t)| t.iter().any(|x| x == file)).map(|(a, _)| a.clone());
    let (tax, reorder) = (holder("src/pricing/tax.rs"), holder("tools/stockcheck/reorder.py"));
    assert!(tax.is_some() && reorder.is_some() && tax != reorder, "{plan:?}");
    for a in ["alice", "bob", "carol"] {
        let worked = tax.as_deref() == Some(a) || reorder.as_deref() == Some(a);
        assert_eq!(message.contains(&format!("Mas-Winner: {a}")), worked, "{a}: {message}");
        let status =
            out.report()["slices"].as_array().unwrap().iter().find(|s| s["agent"] == a).map(|s| s["status"].clone());
        // A reviewer has no slice: the report lists none for her.
        assert_eq!(status, if worked { Some(Value::from("landed")) } else { None }, "{a}");
    }
    assert_eq!(fixture_suite(&env, &repo, "main"), Some(0), "the fixture's tests pass on main");
    // Each agent published its focus from its slice, under its own identity (its propose hop),
    // in its run worktree: the landing released it (one record of its own, none written at the
    // close hop), and the board says which run's end did.
    for (agent, targets) in &plan {
        let hop =
            out.events("hop").into_iter().find(|h| h["peer"] == agent.as_str() && h["task"] == "propose").unwrap();
        let reply = hop["reply"].as_str().unwrap();
        let publish = format!("$ git mas focus publish --targets {} (exit 0)", targets.join(" "));
        assert!(reply.starts_with(&publish), "{agent}: {reply}");
    }
    let board: Value = serde_json::from_str(&env.mas_ok(&repo, &["focus", "list", "--json"])).unwrap();
    for entry in board["board"]["entries"].as_array().unwrap() {
        assert_eq!(
            (entry["focus"]["seq"].as_u64(), entry["liveness"].as_str(), entry["ended_with"]["outcome"].as_str()),
            (Some(1), Some("released"), Some("landed")),
            "{entry}"
        );
    }
}

#[test]
fn a_merged_tree_failing_the_check_is_handed_to_its_slices_and_resolved() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob"]);
    // Each slice alone passes; the two together fail: the check refuses two marks in one tree.
    env.git_quiet_ok(&repo, &["config", "mas.check", "test $(ls *.mark 2>/dev/null | wc -l) -lt 2"]);
    let base = env.git(&repo, &["rev-parse", "main"]);
    let agents = vec![agent(&env, "alice", "pair"), agent(&env, "bob", "pair")];
    let out = coordinate(&env, &repo, &agents, &["--quorum", "1"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let conflicts = out.events("conflict");
    assert_eq!(conflicts.len(), 1, "{:?}", out.lines);
    assert_eq!(conflicts[0]["conflict"]["type"], "test_failure", "{:?}", conflicts[0]);
    for a in ["alice", "bob"] {
        let prompts = std::fs::read_to_string(env.root().join(format!("prompts.{a}"))).unwrap();
        assert!(prompts.contains("conflict=test_failure"), "{a} was not told: {prompts}");
    }
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    assert!(env.git(&repo, &["ls-tree", "--name-only", "main"]).lines().all(|f| !f.ends_with(".mark")));
    assert!(out.report()["conflicts"].to_string().contains("test_failure"), "the report keeps it");
}

#[test]
fn built_in_agents_propose_the_split_in_assembly_and_land_it() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob"]);
    let agents: Vec<String> = ["alice", "bob"].iter().map(|a| format!("{a}=builtin:reference")).collect();
    // The goal names the files with the bugs the built-ins know: the frame ranks them first, and
    // the built-ins' split deals them out (a slice with no fix they know is one they abstain on).
    let goal = "fix the tax rounding in src/pricing/tax.rs and the reorder point in tools/stockcheck/reorder.py";
    let out = coordinate_on(&env, &repo, goal, &agents, &["--assembly", "--quorum", "1"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.events("plan")[0]["plan"]["source"], "agents", "{:?}", out.events("plan"));
    assert_eq!(out.events("landed").len(), 1);
}

#[test]
fn the_slices_are_lanes_while_the_run_works_and_one_overlapping_anothers_lane_refuses_the_run() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob", "carol"]);
    let lanes = |env: &TestEnv| -> Vec<(String, String)> {
        let st: crate::json::status::StatusOut =
            serde_json::from_str(&env.mas_ok(&repo, &["status", "--json"])).unwrap();
        let mut l: Vec<(String, String)> = st.lanes.iter().map(|l| (l.agent.clone(), l.glob.clone())).collect();
        l.sort();
        l
    };
    // alice's slice waits for the word; meanwhile the run's slices are lanes.
    let agents = [agent(&env, "alice", "held"), agent(&env, "bob", "slice")];
    let child = with_toolchain(&mut env.mas_cmd(&repo))
        .args(["--agent", "lead", "coordinate", "--json", "--aggregate", "--goal", "fix the bugs"])
        .args(["--agents", &agents.join(","), "--quorum", "1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let prompts = env.root().join("prompts.alice");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !prompts.exists() {
        assert!(std::time::Instant::now() < deadline, "alice was never asked");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let held = lanes(&env);
    let holders: std::collections::BTreeSet<&str> = held.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(holders.into_iter().collect::<Vec<_>>(), ["alice", "bob"], "{held:?}");
    // Another agent's lane over one of alice's files is refused, naming alice.
    let (_, alices) = held.iter().find(|(a, _)| a == "alice").unwrap();
    let out = env.mas(&repo, &["--agent", "carol", "claim", alices, "--json"]);
    assert_eq!(out.status.code(), Some(6), "{}", shown(&out));
    assert!(stdout(&out).contains("\"holder\":\"alice\""), "{}", shown(&out));
    std::fs::write(env.root().join("prompts.go"), "").unwrap();
    let out = JsonRun::of(&child.wait_with_output().unwrap());
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.events("landed").len(), 1, "{}", out.stderr);
    // Each slice's lane was its files, and the run's end released them.
    for (agent, targets) in slices(&out) {
        let mine: Vec<&str> = held.iter().filter(|(a, _)| *a == agent).map(|(_, g)| g.as_str()).collect();
        let mut want: Vec<&str> = targets.iter().map(String::as_str).collect();
        want.sort();
        assert_eq!(mine, want, "{agent}'s lanes");
    }
    assert!(lanes(&env).is_empty(), "released at the end");

    // carol holds src/**: a run whose slice overlaps it is refused before it starts, by name,
    // and takes no lane.
    let out = env.mas(&repo, &["--agent", "carol", "claim", "src/**", "--ttl", "1h"]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let runs = env.mas_ok(&repo, &["run", "list", "--json"]);
    let agents = vec![agent(&env, "alice", "slice"), agent(&env, "bob", "slice")];
    let out = coordinate(&env, &repo, &agents, &["--quorum", "1"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("overlaps carol's lane src/**") && out.stderr.contains("no run was started"),
        "{}",
        out.stderr
    );
    assert_eq!(env.mas_ok(&repo, &["run", "list", "--json"]), runs, "no run was started");
    assert_eq!(lanes(&env), [("carol".to_string(), "src/**".to_string())]);
}

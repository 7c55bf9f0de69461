//! `git mas coordinate` end to end: the real binary in real repositories, with agents that are
//! real shell scripts (`cmd:`) doing their own work with `git mas propose` / `git mas endorse`.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A repository with the driver `lead` and the agents on its committed roster, and a check that
/// fails on any proposal containing the word BROKEN.
pub(crate) fn setup(env: &TestEnv, agents: &[&str]) -> PathBuf {
    env.team(&[&["lead"][..], agents].concat()).config("mas.check", "! grep -rq BROKEN .").build().repo
}

/// A shell script in the test's directory, run as a `cmd:` agent.
fn script(env: &TestEnv, name: &str, body: &str) -> String {
    let path = env.root().join(name);
    std::fs::write(&path, body).unwrap();
    format!("sh {}", path.display())
}

/// A development agent: reads the hop's header, does the task with real git mas commands in its
/// worktree (the hop's directory), logs each prompt, and hands the turn on. `WORK` is what it
/// writes into its note.
const DEV_AGENT: &str = r#"prompt=$(cat)
field() { printf '%s\n' "$prompt" | sed -n "s/^$1=//p" | head -n 1; }
printf '%s\n=====\n' "$prompt" >> "$LOG.$GIT_MAS_AGENT"
[ "$(field phase)" = ASSEMBLY ] && echo "We change code together." && echo "CLASS development"
case "$(field task)" in
  propose) mkdir -p notes; echo "$WORK by $GIT_MAS_AGENT" > "notes/$GIT_MAS_AGENT.md"; git mas propose >&2 ;;
  endorse) for p in $(field endorse | tr , ' '); do git mas endorse "$p" >&2; done ;;
esac
next=$(field next)
if [ "$next" = DONE ]; then echo "done"; echo DONE; else echo "done"; echo "NEXT $next"; fi
"#;

pub(crate) fn dev_agent(env: &TestEnv, name: &str, work: &str) -> String {
    let log = env.root().join("prompts");
    let body = format!("LOG='{}'\nWORK='{work}'\n{DEV_AGENT}", log.display());
    format!("{name}=cmd:{}", script(env, &format!("{name}.sh"), &body))
}

fn coordinate(env: &TestEnv, repo: &Path, args: &[&str]) -> JsonRun {
    JsonRun::of(&env.mas_cmd(repo).args(["--agent", "lead", "coordinate", "--json"]).args(args).output().unwrap())
}

#[test]
fn three_agents_with_quorum_two_land_once_on_main_and_converge() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob", "carol"]);
    // A configured snapshot input: the driver publishes a frame and shows it to every agent.
    env.git_quiet_ok(&repo, &["config", "mas.task", "write a note in notes/"]);
    let base = env.git(&repo, &["rev-parse", "main"]);
    let report_file = env.root().join("report.json");
    let agents = [dev_agent(&env, "alice", "good"), dev_agent(&env, "bob", "good"), dev_agent(&env, "carol", "BROKEN")]
        .join(",");
    let out = coordinate(
        &env,
        &repo,
        &[
            "--goal",
            "write a note",
            "--agents",
            &agents,
            "--quorum",
            "2",
            "--wait",
            "2s",
            "--report",
            report_file.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);

    // One landing on main: one new commit, alice's (she leads the tie with bob), carrying trailers.
    let count = env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]);
    assert_eq!(count, "1");
    let message = env.git(&repo, &["log", "-1", "--format=%B", "main"]);
    assert!(message.contains("Mas-Winner: alice") && message.contains("Mas-Class: development"), "{message}");
    assert_eq!(env.git(&repo, &["show", "main:notes/alice.md"]), "good by alice");

    // The report: converged, stored in refs and written to --report.
    let last = out.last();
    assert_eq!(last["event"], "report");
    let report = &last["report"];
    assert_eq!(report["status"], "converged", "{report}");
    assert_eq!(report["winners"], serde_json::json!(["alice"]));
    let run = report["run"].as_str().unwrap();
    let written: Value = serde_json::from_slice(&std::fs::read(&report_file).unwrap()).unwrap();
    assert_eq!(&written, report);
    assert!(env.git(&repo, &["rev-parse", &format!("refs/mas/runs/{run}/report")]).len() == 40);
    let rendered: Value = serde_json::from_str(&env.mas_ok(&repo, &["report", run, "--json"])).unwrap();
    assert_eq!(rendered["status"], "converged");

    // carol's BROKEN proposal failed the real check of the others.
    let tally = out.events("tally");
    let carol = tally[0]["proposals"].as_array().unwrap().iter().find(|p| p["agent"] == "carol").unwrap();
    assert_eq!(carol["failed"], serde_json::json!(["alice", "bob"]), "{carol}");

    // Every record in the run was written by the agents themselves: the driver wrote none.
    let chains = env.git(&repo, &["for-each-ref", "--format=%(refname)", &format!("refs/mas/runs/{run}/events/")]);
    let owners: Vec<&str> = chains.lines().map(|r| r.rsplit('/').next().unwrap()).collect();
    assert_eq!(owners, ["alice", "bob", "carol"]);

    // The stream: run, worktrees, hops (3 propose, 3 endorse, 3 close), the landing, the halt.
    assert_eq!(out.events("run-started").len(), 1);
    assert_eq!(out.events("worktree").len(), 3);
    let hops = out.events("hop");
    let tasks: Vec<&str> = hops.iter().map(|h| h["task"].as_str().unwrap()).collect();
    assert_eq!(tasks, ["propose", "propose", "propose", "endorse", "endorse", "endorse", "close", "close", "close"]);
    assert!(hops.iter().all(|h| h["failure"].is_null()), "{hops:?}");
    assert_eq!(out.events("landed").len(), 1);
    assert_eq!(out.events("halt")[0]["halt"], "landed");

    // What alice was shown: the phase, her worktree, her task; no skill text.
    let prompts = std::fs::read_to_string(env.root().join("prompts.alice")).unwrap();
    assert!(prompts.contains("phase=CONVERGE\n") && prompts.contains("task=propose\n"), "{prompts}");
    assert!(prompts.contains(&format!("worktree={}", out.events("worktree")[0]["path"].as_str().unwrap())));
    assert!(prompts.contains("endorse=bob,carol\n"), "{prompts}");
    let frame = env.git(&repo, &["rev-parse", "refs/mas/frame"]);
    assert_eq!(frame.len(), 40, "the driver published a frame");
    assert!(prompts.contains("\nframe=") && prompts.contains("git mas focus publish --targets"), "{prompts}");
}

#[test]
fn no_landable_quorum_within_max_rounds_halts_and_aborts_the_run() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob"]);
    // Both proposals fail the check: neither gets the one endorsement it needs.
    let agents = [dev_agent(&env, "alice", "BROKEN"), dev_agent(&env, "bob", "BROKEN")].join(",");
    let out = coordinate(&env, &repo, &["--goal", "g", "--agents", &agents, "--quorum", "1", "--max-rounds", "2"]);
    assert_eq!(out.code, Some(8), "{}", out.stderr);
    assert_eq!(out.events("tally").len(), 2, "two rounds");
    assert_eq!(out.events("halt")[0]["halt"], "max-rounds-reached");
    assert!(out.events("landed").is_empty());
    let report = &out.last()["report"];
    assert_ne!(report["status"], "converged", "{report}");
    // Checks ran and failed: the quality line says so, never "no check ran".
    let q = &report["quality_state"];
    assert!(q["total"].as_u64().unwrap() >= 2 && q["passed"] == 0, "{q}");
    assert_eq!(q["reached"], false, "{q}");
    assert!(q["basis"].as_str().unwrap().contains("none leading"), "{q}");
    let run = report["run"].as_str().unwrap();
    let shown: Value = serde_json::from_str(&env.mas_ok(&repo, &["run", "show", run, "--json"])).unwrap();
    assert_eq!(shown["phase"]["phase"], "aborted", "{shown}");
}

/// A scalar agent: derives its class's reference rule in ASSEMBLY and applies the rule it is shown
/// in CONVERGE, evaluating it with awk over the quantities of the prompt.
const SCALAR_AGENT: &str = r#"prompt=$(cat)
field() { printf '%s\n' "$prompt" | sed -n "s/^$1=//p" | head -n 1; }
next=$(field next); [ "$next" = DONE ] && hand=DONE || hand="NEXT $next"
case "$(field phase)" in
ASSEMBLY)
  case "$(field class)" in
    preference) rule='(target + 2*beta*neighbour_sum) / (1 + 2*beta*degree)' ;;
    cascade) rule='(max(0, target_inventory + lead*demand - inventory - pipeline) + gamma*last_order + rho*previous_demand) / (1 + gamma + rho)' ;;
    resource) rule='clamp(extraction + eta*((desired - extraction) - price), 0, stock)' ;;
  esac
  printf 'I model it.\nCLASS %s\nUPDATE %s\n%s\n' "$(field class)" "$rule" "$hand" ;;
CONVERGE)
  vars=$(printf '%s\n' "$prompt" | sed -n 's/^quantity \([a-z_]*\)=\(.*\)$/\1=\2;/p' | tr -d '\n')
  value=$(awk "function max(a,b){return a>b?a:b} function min(a,b){return a<b?a:b} function clamp(x,l,h){return min(max(x,l),h)} function abs(x){return x<0?-x:x} BEGIN{ $vars printf \"%.17g\", ($(field rule)) }")
  printf 'ANNOUNCE value=%s agent=%s epoch=%s\nVOTE CONTINUE\n%s\n' "$value" "$(field agent)" "$(field epoch)" "$hand" ;;
esac
"#;

/// The parts of a scalar report that do not depend on the run's id or timing.
fn comparable(report: &Value) -> Value {
    let mut r = report.clone();
    let map = r.as_object_mut().unwrap();
    for key in ["run", "refs", "elapsed_ms"] {
        map.remove(key);
    }
    r
}

#[test]
fn each_scalar_class_reports_what_converge_reports_for_the_same_peers() {
    let env = TestEnv::new();
    let repo = setup(&env, &[]);
    let agent = script(&env, "scalar.sh", SCALAR_AGENT);
    let agents = format!("a=cmd:{agent},b=cmd:{agent},c=cmd:{agent}");
    for class in ["preference", "cascade", "resource"] {
        let args = ["--pattern", class, "--agents", &agents, "--max-rounds", "5", "--goal", "converge together"];
        let ours = coordinate(&env, &repo, &args);
        assert_eq!(ours.code, Some(0), "{class}: {}", ours.stderr);
        let out = env.mas_cmd(&repo).args(["--agent", "lead", "converge", "--json"]).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{class}: {}", stderr(&out));
        let theirs: Value = serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
        let ours_report = &ours.last()["report"];
        assert_eq!(ours_report["class"], class);
        assert!(ours_report["epochs"].as_u64().unwrap() > 0, "{class}: CONVERGE ran");
        for d in ours_report["derivation"].as_array().unwrap() {
            assert_eq!(d["verdict"]["verdict"], "matches", "{class}: {d}");
        }
        assert_eq!(comparable(ours_report), comparable(&theirs["report"]), "{class}");
        // The stream is converge's: one line per hop, epoch and halt, then the report.
        assert_eq!(ours.events("halt").len(), 1, "{class}");
        assert!(ours.events("hop").len() >= 3 + 3 * ours_report["epochs"].as_u64().unwrap() as usize);
    }
}

#[test]
fn an_unknown_class_stops_before_converge_and_is_named() {
    let env = TestEnv::new();
    let repo = setup(&env, &[]);
    let agent = script(
        &env,
        "market.sh",
        "cat >/dev/null\nprintf 'Students and schools.\\nCLASS matching-markets\\nUPDATE state\\nDONE\\n'\n",
    );
    let agents = format!("cmd:{agent},cmd:{agent}");
    let out = coordinate(&env, &repo, &["--pattern", "unmapped", "--goal", "match students", "--agents", &agents]);
    assert_eq!(out.code, Some(0), "a modelling outcome is a success: {}", out.stderr);
    let report = &out.last()["report"];
    assert_eq!(report["halt"], "unmapped");
    assert_eq!(report["class_token"], "matching-markets");
    assert!(report["halt_detail"].as_str().unwrap().contains("matching-markets"), "{report}");
    assert!(out.events("converge-started").is_empty());
    assert!(out.events("hop").iter().all(|h| h["phase"] == "assembly"));
    assert_eq!(report["epochs"], 0);
    // Human output names the class too.
    let human =
        env.mas(&repo, &["--agent", "lead", "coordinate", "--pattern", "unmapped", "--goal", "g", "--agents", &agents]);
    assert_eq!(human.status.code(), Some(0));
    assert!(stderr(&human).contains("as class matching-markets"), "{}", stderr(&human));
}

#[test]
fn an_agent_that_times_out_is_asked_again_then_the_run_halts_and_is_aborted() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob"]);
    let pids = env.root().join("sleep.pids");
    let slow = script(&env, "slow.sh", &format!("cat >/dev/null\nsleep 30 &\necho $! >> '{}'\nwait\n", pids.display()));
    let agents = format!("{},bob=cmd:{slow}", dev_agent(&env, "alice", "good"));
    let started = std::time::Instant::now();
    let out = coordinate(&env, &repo, &["--goal", "g", "--agents", &agents, "--hop-timeout", "1s", "--quorum", "1"]);
    assert_eq!(out.code, Some(8), "{}", out.stderr);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    let bob: Vec<&Value> = out.events("hop").into_iter().filter(|h| h["peer"] == "bob").collect();
    assert_eq!(bob.len(), 2, "asked once more");
    for h in &bob {
        assert!(h["failure"].as_str().unwrap().contains("no reply within 1s"), "{h}");
    }
    let halt = &out.events("halt")[0];
    assert_eq!(halt["halt"], "unreadable-reply");
    assert_eq!(halt["peer"], "bob");
    assert!(halt["detail"].as_str().unwrap().contains("no reply within 1s"), "{halt}");
    // The run was ended consistently: aborted with the reason, its report stored.
    let run = out.last()["report"]["run"].as_str().unwrap().to_owned();
    let shown: Value = serde_json::from_str(&env.mas_ok(&repo, &["run", "show", &run, "--json"])).unwrap();
    assert_eq!(shown["phase"]["phase"], "aborted", "{shown}");
    assert!(env.git(&repo, &["rev-parse", &format!("refs/mas/runs/{run}/report")]).len() == 40);
    // The hanging processes were killed with their hop.
    for pid in std::fs::read_to_string(&pids).unwrap().lines() {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(stat.is_empty() || stat.rsplit(')').next().unwrap().trim_start().starts_with('Z'), "{pid} runs");
    }
}

#[test]
fn an_unreadable_reply_is_asked_again_with_the_reason_then_the_run_halts() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob"]);
    let log = env.root().join("mumble.log");
    let mumble = script(
        &env,
        "mumble.sh",
        &format!("cat >> '{}'\necho '=====' >> '{}'\necho 'I worked hard.'\n", log.display(), log.display()),
    );
    let agents = format!("alice=cmd:{mumble},{}", dev_agent(&env, "bob", "good"));
    let out = coordinate(&env, &repo, &["--goal", "g", "--agents", &agents, "--quorum", "1"]);
    assert_eq!(out.code, Some(8), "{}", out.stderr);
    let hops = out.events("hop");
    assert_eq!(hops.len(), 2, "alice twice, nobody after: {hops:?}");
    assert_eq!(hops[1]["attempt"], 2);
    let halt = &out.events("halt")[0];
    assert_eq!(halt["halt"], "unreadable-reply");
    assert!(halt["detail"].as_str().unwrap().contains("no `NEXT <agent>` or `DONE` line"), "{halt}");
    // The second prompt said why.
    let prompts = std::fs::read_to_string(&log).unwrap();
    let second = prompts.split("=====").nth(1).unwrap();
    assert!(second.contains("attempt=2\n") && second.contains("reason=the reply has no `NEXT"), "{second}");
    assert_eq!(out.last()["event"], "report");
    // The report tells it as it happened: an agent that could not be worked with blocked the run
    // in its first round; the rounds did not run out.
    let report = &out.last()["report"];
    assert_eq!(
        (report["status"].as_str(), report["termination_reason"].as_str()),
        (Some("blocked"), Some("risk_blocked"))
    );
    let risks = report["unresolved_risks"].as_array().unwrap();
    assert!(risks.iter().any(|r| r.as_str().unwrap().contains("alice's reply could not be used")), "{risks:?}");
    assert_eq!(report["rounds_state"]["used"], 1, "{report}");
}

#[test]
fn two_agents_who_make_the_identical_change_endorse_each_other_and_it_lands_once() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob"]);
    let base = env.git(&repo, &["rev-parse", "main"]);
    // Both write the same file with the same words: one tree, proposed twice.
    let same = DEV_AGENT
        .replace(r#"echo "$WORK by $GIT_MAS_AGENT" > "notes/$GIT_MAS_AGENT.md""#, r#"echo "$WORK" > notes/fix.md"#);
    assert_ne!(same, DEV_AGENT);
    let log = env.root().join("prompts");
    let agent = |name: &str| {
        let body = format!("LOG='{}'\nWORK='the fix'\n{same}", log.display());
        format!("{name}=cmd:{}", script(&env, &format!("{name}.sh"), &body))
    };
    let agents = [agent("alice"), agent("bob")].join(",");
    let out = coordinate(&env, &repo, &["--goal", "g", "--agents", &agents, "--quorum", "1"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let trees: Vec<String> = ["alice", "bob"]
        .iter()
        .map(|a| {
            env.git(
                &repo,
                &[
                    "rev-parse",
                    &format!("refs/mas/runs/{}/proposals/{a}^{{tree}}", out.last()["report"]["run"].as_str().unwrap()),
                ],
            )
        })
        .collect();
    assert_eq!(trees[0], trees[1], "the identical change");
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    assert_eq!(env.git(&repo, &["show", "main:notes/fix.md"]), "the fix");
    let report = &out.last()["report"];
    assert_eq!(report["status"], "converged", "{report}");
}

#[test]
fn a_run_whose_agents_never_propose_reports_the_rounds_it_held() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob"]);
    // Agents that answer every hop and never propose.
    let idle = script(
        &env,
        "idle.sh",
        "prompt=$(cat)\nnext=$(printf '%s\\n' \"$prompt\" | sed -n 's/^next=//p' | head -n 1)\nif [ \"$next\" = DONE ]; then echo DONE; else echo \"NEXT $next\"; fi\n",
    );
    let agents = format!("alice=cmd:{idle},bob=cmd:{idle}");
    let out = coordinate(&env, &repo, &["--goal", "g", "--agents", &agents, "--quorum", "1", "--max-rounds", "2"]);
    assert_eq!(out.code, Some(8), "{}", out.stderr);
    assert_eq!(out.events("halt")[0]["halt"], "max-rounds-reached");
    let report = &out.last()["report"];
    assert_eq!(report["proposals"], 0, "{report}");
    // Two rounds were held, and they ran out: not "0 of 2", not "tasks_completed".
    assert_eq!(report["rounds_state"]["used"], 2, "{report}");
    assert_eq!(report["rounds_state"]["reached"], true, "{report}");
    assert_eq!(
        (report["status"].as_str(), report["termination_reason"].as_str()),
        (Some("failed"), Some("max_rounds_reached"))
    );
    let human = env.mas_ok(&repo, &["report", report["run"].as_str().unwrap()]);
    assert!(human.contains("rounds:      2 of 2"), "{human}");
}

#[test]
fn agents_off_the_roster_and_bad_patterns_are_refused_before_anything_is_written() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice"]);
    let before = env.refs(&repo);
    let out =
        env.mas(&repo, &["--agent", "lead", "coordinate", "--goal", "g", "--agents", "alice=builtin:reference,codex"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("'codex-1' (codex) is not on the roster"), "{}", stderr(&out));
    assert!(stderr(&out).contains("--agents <agent>=codex"), "the fix names the peer syntax: {}", stderr(&out));
    assert!(stderr(&out).contains("git mas agent new codex-1"), "{}", stderr(&out));
    let out = env.mas(
        &repo,
        &["--agent", "lead", "coordinate", "--goal", "g", "--agents", "alice=builtin:reference", "--pattern", "chess"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("development, preference, cascade, resource, unmapped"), "{}", stderr(&out));
    assert_eq!(env.refs(&repo), before);
}

#[test]
fn a_preset_runs_its_configured_command_line() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob"]);
    // Both agents are Codex by preset; git config points the preset at a script standing in for it.
    let stand_in = dev_agent(&env, "codex-stand-in", "good");
    let line = stand_in.split_once('=').unwrap().1.strip_prefix("cmd:").unwrap().to_owned();
    env.git_quiet_ok(&repo, &["config", "mas.agent.codex.command", &line]);
    let out =
        coordinate(&env, &repo, &["--goal", "g", "--agents", "alice=codex,bob=codex", "--quorum", "1", "--wait", "2s"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.events("halt")[0]["halt"], "landed");
    assert_eq!(out.last()["report"]["status"], "converged");
}

#[test]
fn assembly_before_development_names_the_class_then_the_team_lands() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice", "bob"]);
    let agents = [dev_agent(&env, "alice", "good"), dev_agent(&env, "bob", "good")].join(",");
    for pattern in ["development", "unmapped"] {
        let base = env.git(&repo, &["rev-parse", "main"]);
        let out = coordinate(
            &env,
            &repo,
            &["--goal", "g", "--agents", &agents, "--pattern", pattern, "--assembly", "--quorum", "1"],
        );
        assert_eq!(out.code, Some(0), "{pattern}: {}", out.stderr);
        // ASSEMBLY first: one hop per agent, the class inferred from their CLASS lines…
        let assembly: Vec<&Value> = out.lines.iter().take_while(|l| l["event"] != "continue").collect();
        assert_eq!(assembly.iter().filter(|l| l["event"] == "hop" && l["phase"] == "assembly").count(), 2);
        let assembled = assembly.iter().find(|l| l["event"] == "assembled").unwrap();
        assert_eq!(assembled["class"], "development", "{pattern}");
        let continued = out.events("continue");
        assert_eq!(continued.len(), 1, "{pattern}");
        // …then the development CONVERGE, to one landing.
        assert_eq!(out.events("landed").len(), 1, "{pattern}");
        assert_eq!(out.last()["report"]["status"], "converged");
        assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    }
}

#[test]
fn ctrl_c_stops_every_agent_and_leaves_the_refs_readable() {
    let env = TestEnv::new();
    let repo = setup(&env, &["alice"]);
    // One agent: its own endorsement must count for the preflight to let the run start.
    env.git_quiet_ok(&repo, &["config", "mas.allowSelfEndorse", "true"]);
    let pids = env.root().join("hang.pids");
    let hang = script(&env, "hang.sh", &format!("cat >/dev/null\nsleep 60 &\necho $! >> '{}'\nwait\n", pids.display()));
    let child = env
        .mas_cmd(&repo)
        .args(["--agent", "lead", "coordinate", "--json", "--goal", "g", "--agents"])
        .arg(format!("alice=cmd:{hang}"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    // The file exists as soon as the shell opens it; the pid is complete with its newline.
    let written = || std::fs::read_to_string(&pids).is_ok_and(|t| t.ends_with('\n'));
    while !written() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(written(), "the agent never started");
    let status = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    // The agent's process group was killed with it.
    let pid = std::fs::read_to_string(&pids).unwrap().trim().to_owned();
    let gone = || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.is_empty() || stat.rsplit(')').next().unwrap().trim_start().starts_with('Z')
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !gone() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(gone(), "the agent's sleep {pid} still runs");
    // refs/mas is as of the last completed write: the run is open and reads back verified.
    let listed: Value = serde_json::from_str(&env.mas_ok(&repo, &["run", "list", "--json"])).unwrap();
    assert_eq!(listed[0]["phase"], "open", "{listed}");
    let (code, _) = log_json(&env, &repo, "lead");
    assert_eq!(code, Some(0), "every record verifies");
    let run = listed[0]["id"].as_str().unwrap();
    env.mas_quiet_ok(&repo, &["--agent", "lead", "run", "abort", run, "--reason", "interrupted"]);
}

#[test]
fn the_help_documents_every_preset_with_its_command_line() {
    let env = TestEnv::new();
    let help = env.mas_ok(env.root(), &["coordinate", "--help"]);
    for preset in git_mas::hosts::Host::ALL {
        let line = format!("{:<13} {}", preset.name(), preset.default_command());
        assert!(help.contains(&line), "--help lacks {line:?}:\n{help}");
    }
    assert!(help.contains("mas.agent.<name>.command"), "{help}");
}

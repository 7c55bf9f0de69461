//! `git mas converge` and `git mas report` end to end: the real binary, real peer processes
//! (built-ins started as `git-mas peer <kind>`, `cmd:` shell scripts written here), and the run
//! recorded in and rendered again from the repository's refs.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A repository with agent `alice` on its committed roster.
fn setup(env: &TestEnv, name: &str) -> PathBuf {
    env.team(&["alice"]).named(name).build().repo
}

struct Run {
    code: Option<i32>,
    lines: Vec<Value>,
    stderr: String,
    took: Duration,
}

impl Run {
    fn report(&self) -> &Value {
        let last = self.lines.last().unwrap_or_else(|| panic!("no output; stderr: {}", self.stderr));
        assert_eq!(last["event"], "report", "the stream ends with the report");
        &last["report"]
    }

    fn events(&self, kind: &str) -> Vec<&Value> {
        self.lines.iter().filter(|l| l["event"] == kind).collect()
    }
}

/// `git mas --agent alice converge … --json`, every line parsed.
fn converge(env: &TestEnv, repo: &Path, args: &[&str]) -> Run {
    let started = Instant::now();
    let out = env.mas_cmd(repo).args(["--agent", "alice", "converge", "--json"]).args(args).output().unwrap();
    let took = started.elapsed();
    let lines = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    Run { code: out.status.code(), lines, stderr: stderr(&out), took }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A shell script in the test's directory, run as a `cmd:` peer.
fn script(env: &TestEnv, name: &str, body: &str) -> String {
    let path = env.root().join(name);
    std::fs::write(&path, body).unwrap();
    format!("cmd:sh {}", path.display())
}

const REFERENCE_REPLY: &str = "printf 'We blend scores on a line.\\nCLASS preference\\nUPDATE (target + 2*beta*neighbour_sum) / (1 + 2*beta*degree)\\nDONE\\n'";

#[test]
fn three_reference_peers_derive_every_rule_and_reach_the_preference_optimum() {
    let env = TestEnv::new();
    let repo = setup(&env, "pref");
    let agents = "builtin:reference,builtin:reference,builtin:reference";
    let run = converge(&env, &repo, &["--pattern", "preference", "--agents", agents, "--max-rounds", "60"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report = run.report();
    for d in report["derivation"].as_array().unwrap() {
        assert_eq!(d["verdict"]["verdict"], "matches", "{d}");
    }
    for e in report["execution"].as_array().unwrap() {
        assert_eq!(e["faithful"], true, "{e}");
        assert_eq!(f(&e["max_own_gap"]), 0.0, "{e}");
    }
    let distance = f(&report["optimum"]["distance"]);
    assert!(distance < 1e-6, "final distance {distance}");
    assert_eq!(f(&report["metric"]["final"]), distance);
    let z_star: Vec<f64> = report["optimum"]["z_star"].as_array().unwrap().iter().map(f).collect();
    for (z, want) in z_star.iter().zip([2.4, 4.0, 5.6]) {
        assert!((z - want).abs() < 1e-12, "{z_star:?}");
    }
    assert!(["plateau", "paper-horizon"].contains(&report["halt"].as_str().unwrap()), "{}", report["halt"]);
    assert_eq!(report["replay_matches"], true);
    // The stream: every hop, every epoch, the halt, then the report.
    let epochs = report["epochs"].as_u64().unwrap();
    assert_eq!(run.events("hop").len() as u64, 3 + 3 * epochs);
    assert_eq!(run.events("epoch").len() as u64, epochs);
    assert_eq!(run.events("halt").len(), 1);
    let first = run.events("hop")[0];
    assert_eq!(first["phase"], "assembly");
    assert!(first["prompt_digest"].as_str().unwrap().starts_with("sha256:"));
    eprintln!("preference, 3 reference peers: {} epochs in {:?}", epochs, run.took);
}

#[test]
fn a_faulty_peer_shows_its_execution_gap_and_the_run_is_recorded() {
    let env = TestEnv::new();
    let repo = setup(&env, "faulty");
    let report_file = env.root().join("report.json");
    let agents = "builtin:reference,builtin:faulty,builtin:reference";
    let run = converge(
        &env,
        &repo,
        &[
            "--pattern",
            "preference",
            "--agents",
            agents,
            "--max-rounds",
            "60",
            "--report",
            report_file.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report = run.report();
    // Derivation: the faulty peer derived the right rule…
    assert!(report["derivation"].as_array().unwrap().iter().all(|d| d["verdict"]["verdict"] == "matches"));
    // …execution: it did not apply it, and the others did.
    let execution = report["execution"].as_array().unwrap();
    assert_eq!(execution[1]["peer"], "faulty-1");
    assert_eq!(execution[1]["faithful"], false);
    assert!(f(&execution[1]["max_own_gap"]) > 0.01, "{}", execution[1]);
    assert_eq!(execution[0]["faithful"], true);
    assert_eq!(execution[2]["faithful"], true);
    let gaps: Vec<f64> = report["announcements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["peer"] == "faulty-1")
        .map(|a| f(&a["own_gap"]))
        .collect();
    assert!(gaps.windows(2).all(|w| w[1] > w[0]), "the drift grows: {gaps:?}");
    assert!(f(&report["optimum"]["distance"]) > 1e-3);
    // --report wrote the same report.
    let written: Value = serde_json::from_slice(&std::fs::read(&report_file).unwrap()).unwrap();
    assert_eq!(&written, report);

    // The run is discoverable with `git mas log` and renders again from refs alone.
    let run_id = report["run"].as_str().unwrap();
    let (code, chains) = log_json(&env, &repo, "alice");
    assert_eq!(code, Some(0));
    let events_ref = format!("refs/mas/runs/{run_id}/events/alice");
    assert!(chains.as_array().unwrap().iter().any(|c| c["ref"] == events_ref.as_str()), "{chains}");
    let out = env.mas(&repo, &["report", run_id, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rendered: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(&rendered, report, "git mas report reproduces the report from the refs");
    let human = env.mas_ok(&repo, &["report", run_id]);
    assert!(human.contains("faulty-1") && human.contains("derivation") && human.contains("execution"), "{human}");
    assert!(human.contains("‖z − z*‖₂"), "{human}");
}

#[test]
fn git_mas_report_refuses_a_recording_that_is_not_a_run() {
    let env = TestEnv::new();
    let repo = setup(&env, "tampered");
    let run = converge(&env, &repo, &["--pattern", "cascade", "--agents", "builtin:reference", "--max-rounds", "2"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let run_id = run.report()["run"].as_str().unwrap().to_owned();
    let out = env.mas(&repo, &["report", &run_id, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(&serde_json::from_slice::<Value>(&out.stdout).unwrap(), run.report());

    // A signed record in the chain that is not a run event: refused, exit 4, nothing rendered.
    let chain = format!("refs/mas/runs/{run_id}/events/alice");
    env.mas_quiet_ok(
        &repo,
        &["--agent", "alice", "record", "append", "--ref", &chain, "--kind", "hop", "--payload", "{}"],
    );
    let out = env.mas(&repo, &["report", &run_id, "--json"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("not a run record"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());

    // Unknown or malformed run ids are refused by `report` whatever the class.
    for (bad, message) in [("no-such-run", "no run \"no-such-run\""), ("../x", "is not valid")] {
        let out = env.mas(&repo, &["report", bad]);
        assert_eq!(out.status.code(), Some(1), "{bad}");
        assert!(stderr(&out).contains(message), "{bad}: {}", stderr(&out));
    }
}

#[test]
fn reference_peers_retain_more_resource_stock_than_greedy_peers() {
    let env = TestEnv::new();
    let repo = setup(&env, "resource");
    let stock = |kind: &str| {
        let agents = vec![format!("builtin:{kind}"); 3].join(",");
        let run = converge(&env, &repo, &["--pattern", "resource", "--agents", &agents, "--max-rounds", "12"]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let report = run.report();
        assert_eq!(report["halt"], "paper-horizon");
        assert_eq!(report["epochs"], 12);
        eprintln!("resource, 3 {kind} peers: {:?}", run.took);
        (f(&report["metric"]["final"]), report["derivation"][0]["verdict"]["verdict"].clone())
    };
    let (reference, reference_verdict) = stock("reference");
    let (greedy, greedy_verdict) = stock("greedy");
    assert!(reference > greedy, "reference {reference} vs greedy {greedy}");
    assert_eq!(reference_verdict, "matches");
    assert_eq!(greedy_verdict, "differs", "the greedy rule ignores the price");
}

#[test]
fn four_cascade_stages_stop_at_the_horizon_with_a_positive_cost() {
    let env = TestEnv::new();
    let repo = setup(&env, "cascade");
    let agents = ["builtin:reference"; 4].join(",");
    let run = converge(&env, &repo, &["--pattern", "cascade", "--agents", &agents, "--max-rounds", "60"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report = run.report();
    assert_eq!(report["halt"], "paper-horizon");
    assert_eq!(report["epochs"], 8, "the demand has 8 periods");
    assert!(f(&report["metric"]["final"]) > 0.0);
    assert_eq!(report["metric"]["name"], "cost");
    eprintln!("cascade, 4 reference stages: {:?}", run.took);
}

#[test]
fn plot_writes_an_svg_with_lines() {
    let env = TestEnv::new();
    let repo = setup(&env, "plot");
    let svg = env.root().join("run.svg");
    let agents = "builtin:reference,builtin:greedy,builtin:faulty";
    let run = converge(
        &env,
        &repo,
        &["--pattern", "resource", "--agents", agents, "--max-rounds", "4", "--plot", svg.to_str().unwrap()],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("the plot is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let lines = doc.descendants().filter(|n| matches!(n.tag_name().name(), "path" | "polyline")).count();
    assert!(lines >= 4, "the metric and one line per peer: {lines}");
    for peer in ["reference-0", "greedy-1", "faulty-2"] {
        assert!(doc.descendants().any(|n| n.text().is_some_and(|t| t.contains(peer))), "legend names {peer}");
    }
}

#[test]
fn a_peer_that_never_announces_readably_is_asked_twice_then_the_run_halts() {
    let env = TestEnv::new();
    let repo = setup(&env, "mumble");
    let log = env.root().join("mumbler.log");
    let peer = script(
        &env,
        "mumbler.sh",
        &format!(
            "prompt=$(cat)\ncase \"$prompt\" in\n  *phase=ASSEMBLY*) {REFERENCE_REPLY} ;;\n  *) printf '%s\\n=====\\n' \"$prompt\" >> {log}; echo 'I think it is about four.' ;;\nesac\n",
            log = log.display()
        ),
    );
    let agents = format!("builtin:reference,builtin:reference,{peer}");
    let run = converge(&env, &repo, &["--pattern", "preference", "--agents", &agents]);
    assert_eq!(run.code, Some(8), "{}", run.stderr);
    let report = run.report();
    assert_eq!(report["halt"], "unreadable-announcement");
    assert_eq!(report["halt_peer"], "cmd-2");
    assert_eq!(report["derivation"][2]["verdict"]["verdict"], "matches");
    let asked = std::fs::read_to_string(&log).unwrap();
    let prompts: Vec<&str> = asked.split("=====\n").filter(|p| !p.trim().is_empty()).collect();
    assert_eq!(prompts.len(), 2, "asked twice in CONVERGE:\n{asked}");
    assert!(prompts[0].contains("phase=CONVERGE") && prompts[0].contains("attempt=1"));
    assert!(prompts[1].contains("attempt=2\nreason=no line starts with `ANNOUNCE value=`"), "{}", prompts[1]);
    // No value was substituted: the epoch never closed.
    assert_eq!(report["epochs"], 0);
    assert!(report["announcements"].as_array().unwrap().iter().all(|a| a["peer"] != "cmd-2"));
    let hops: Vec<&Value> = run.events("hop").into_iter().filter(|h| h["peer"] == "cmd-2").collect();
    assert_eq!(hops.len(), 3);
    assert_eq!(hops[2]["attempt"], 2);
}

#[test]
fn a_peer_without_an_update_line_halts_missing_update_rule() {
    let env = TestEnv::new();
    let repo = setup(&env, "noupdate");
    let peer =
        script(&env, "vague.sh", "cat >/dev/null\nprintf 'We should blend the scores.\\nCLASS preference\\nDONE\\n'\n");
    let run = converge(&env, &repo, &["--pattern", "preference", "--agents", &format!("builtin:reference,{peer}")]);
    assert_eq!(run.code, Some(8), "{}", run.stderr);
    let report = run.report();
    assert_eq!(report["halt"], "missing-update-rule");
    assert_eq!(report["derivation"][1]["verdict"]["verdict"], "missing");
    assert!(report["halt_detail"].as_str().unwrap().contains("cmd-1: no UPDATE line"), "{}", report["halt_detail"]);
    assert!(run.events("hop").iter().all(|h| h["phase"] == "assembly"), "CONVERGE never started");
}

#[test]
fn an_unknown_class_halts_unmapped_and_names_it() {
    let env = TestEnv::new();
    let repo = setup(&env, "unmapped");
    let peer = script(
        &env,
        "markets.sh",
        "cat >/dev/null\nprintf 'Students and schools rank each other.\\nCLASS matching-markets\\nUPDATE state\\nDONE\\n'\n",
    );
    let run = converge(&env, &repo, &["--pattern", "unmapped", "--agents", &peer]);
    assert_eq!(run.code, Some(0), "naming an unimplemented class is a modelling outcome: {}", run.stderr);
    let report = run.report();
    assert_eq!(report["halt"], "unmapped");
    assert_eq!(report["class"], "unmapped");
    assert_eq!(report["class_token"], "matching-markets");
    assert!(report["halt_detail"].as_str().unwrap().contains("matching-markets"));
    // People are told the class too.
    let out = env.mas(&repo, &["--agent", "alice", "converge", "--pattern", "unmapped", "--agents", &peer]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("halt unmapped") && text.contains("matching-markets"), "{text}");
}

#[test]
fn a_hanging_peer_is_killed_at_the_hop_timeout() {
    let env = TestEnv::new();
    let repo = setup(&env, "hang");
    let pids = env.root().join("pids");
    let peer =
        script(&env, "hang.sh", &format!("sleep 30 &\necho $! >> {p}\necho $$ >> {p}\nwait\n", p = pids.display()));
    let run = converge(&env, &repo, &["--pattern", "preference", "--agents", &peer, "--hop-timeout", "1s"]);
    assert_eq!(run.code, Some(8), "{}", run.stderr);
    assert!(run.took < Duration::from_secs(10), "{:?}", run.took);
    let report = run.report();
    assert_eq!(report["halt"], "missing-update-rule");
    let failure = report["derivation"][0]["failure"].as_str().unwrap();
    assert!(failure.contains("no reply within 1s"), "{failure}");
    let pids: Vec<i32> = std::fs::read_to_string(&pids).unwrap().lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(pids.len(), 2);
    for pid in pids {
        let deadline = Instant::now() + Duration::from_secs(3);
        while running(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!running(pid), "process {pid} of the timed-out peer still runs");
    }
}

/// True while `pid` runs (a zombie waiting for its parent does not).
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn bad_invocations_are_refused_and_change_no_ref() {
    let env = TestEnv::new();
    let repo = setup(&env, "bad");
    let before = env.refs(&repo);
    let cases: &[(&[&str], i32, &str)] = &[
        (&["--pattern", "matching", "--agents", "builtin:reference"], 2, "preference, cascade, resource, unmapped"),
        (&["--pattern", "development", "--agents", "builtin:reference"], 2, "code artifacts"),
        (&["--pattern", "preference"], 2, "--agents"),
        (&["--pattern", "preference", "--agents", "claude"], 2, "not a peer spec"),
        (&["--pattern", "preference", "--agents", "builtin:oracle"], 2, "unknown built-in peer"),
        (&["--pattern", "preference", "--agents", "builtin:reference", "--max-rounds", "0"], 2, "--max-rounds"),
        (&["--pattern", "preference", "--agents", "builtin:reference", "--hop-timeout", "soon"], 2, "--hop-timeout"),
        (
            &["--pattern", "preference", "--agents", "builtin:reference", "--plot", "/nonexistent/dir/x.svg"],
            1,
            "not a directory",
        ),
    ];
    for (args, code, message) in cases {
        let out = env.mas_cmd(&repo).args(["--agent", "alice", "converge"]).args(*args).output().unwrap();
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
    // Without an identity nothing runs.
    let out = env.mas(&repo, &["converge", "--pattern", "preference", "--agents", "builtin:reference"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no agent identity"), "{}", stderr(&out));
    assert_eq!(env.refs(&repo), before);
}

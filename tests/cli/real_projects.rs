//! The proof on real projects: git-mas on three libraries taken from the package registries at
//! pinned versions (`tests/projects/fetch.sh`, run by `tests/setup.sh`) — toolz (Python, its
//! pytest suite), heck (Rust, `cargo test`) and @fastify/busboy (Node, `node --test`, read as
//! TAP) — each with bugs injected into three of its modules, committed as main, and nothing
//! configured but the roster and the project's own test command as the team's check. The goal
//! names no file.
//!
//! The projects, their checks and their bugs are one table, `tests/projects/projects.json`, that
//! the benchmark reads too. Scripted `cmd:` agents (`tests/projects/agent.sh`) do real work with
//! real git mas commands: on a propose hop an agent reverts the injected bugs it is given — in an aggregate run, every bug whose file is in its
//! slice (it abstains, saying why, when its slice holds none); in best-of-N, the bugs its skill
//! knows — and on an endorse hop it endorses whom it is asked to.
//!
//! - `coordinate --aggregate` (no `--partial`) lands once, the project's own test suite passes
//!   on main, and the report lists each slice's changed paths;
//! - best-of-N with agents of different skill lands the proposal that fixes the most (the most
//!   skilled agent is deliberately not the first by name, so a tie broken by name cannot pass).
//!
//! `bench/aggregate-real.sh` times the same runs against the checks they ran.

use crate::common::*;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The goal: it names no file.
const GOAL: &str = "make the test suite pass";

/// One injected bug: in `file`, the `original` text (occurring once) is replaced by `buggy`,
/// which fails at least `fails` (a test the project's suite names) and breaks no build or import.
#[derive(Debug, Deserialize)]
struct Bug {
    id: String,
    file: String,
    original: String,
    buggy: String,
    fails: String,
}

/// A real project (a row of `tests/projects/projects.json`, which bench/aggregate-real.sh reads
/// too): the team's check, the project's own test command (run on main after the landing) and
/// the bugs.
#[derive(Debug, Deserialize)]
struct Project {
    /// The folder `fetch.sh` fetched it into (under the projects directory): its key in the table.
    #[serde(skip)]
    folder: String,
    /// `name version`, as the registry has it.
    pinned: String,
    /// `mas.check`.
    check: String,
    /// The project's own full test command (argv), run on an export of main.
    suite: Vec<String>,
    /// Whether the check runs cargo (the hermetic environment then needs the toolchain's homes).
    cargo: bool,
    bugs: Vec<Bug>,
}

/// The projects' table.
const PROJECTS: &str = include_str!("../projects/projects.json");

/// The project `folder` of the table.
fn project(folder: &str) -> Project {
    let table: serde_json::Map<String, Value> = serde_json::from_str(PROJECTS).unwrap();
    let mut p: Project = serde_json::from_value(table[folder].clone()).unwrap();
    p.folder = folder.to_string();
    p
}

/// The team: the driver `lead` and three agents.
const AGENTS: [&str; 3] = ["alice", "bob", "carol"];

/// Where `tests/projects/fetch.sh` unpacks the projects (the same rule as the script's).
fn projects_dir() -> PathBuf {
    match std::env::var_os("GIT_MAS_PROJECTS_DIR") {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("CARGO_TARGET_DIR") {
            Some(t) => PathBuf::from(t).join("projects"),
            None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/projects"),
        },
    }
}

/// The project as the registry ships it; fails (never skips) when it was not fetched.
fn shipped(project: &Project) -> PathBuf {
    let src = projects_dir().join(&project.folder).join("src");
    assert!(
        src.is_dir(),
        "{} is not fetched at {}: run `bash tests/projects/fetch.sh` (tests/setup.sh runs it) from the repository root",
        project.pinned,
        src.display()
    );
    src
}

/// `text` with `bug` injected: its original text must occur once.
fn inject(text: &str, bug: &Bug) -> String {
    assert_eq!(
        text.matches(&bug.original).count(),
        1,
        "{}: {:?} must occur once in {}",
        bug.id,
        bug.original,
        bug.file
    );
    text.replacen(&bug.original, &bug.buggy, 1)
}

/// A fresh repository holding the project with its bugs, committed as main in one commit (no
/// history says where the bugs are), `lead` and `agents` on its committed roster, and
/// `mas.check` the project's check: nothing else is configured.
fn buggy_repo(env: &TestEnv, project: &Project) -> PathBuf {
    let repo = env.root().join(&project.folder);
    copy_dir(&shipped(project), &repo);
    for bug in &project.bugs {
        let path = repo.join(&bug.file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, inject(&text, bug)).unwrap();
    }
    env.git_quiet_ok(&repo, &["init", "--quiet", "-b", "main"]);
    env.git_quiet_ok(&repo, &["add", "."]);
    env.git_quiet_ok(&repo, &["commit", "--quiet", "-m", &project.pinned]);
    env.agents(&repo, &[&["lead"][..], &AGENTS].concat());
    env.git_quiet_ok(&repo, &["config", "mas.check", &project.check]);
    repo
}

/// Runs the project's own test suite on `rev`'s tree, exported into a fresh folder (never in
/// main's checkout: a build or a cache there would be an untracked change); its output.
fn suite_on(env: &TestEnv, repo: &Path, project: &Project, rev: &str) -> std::process::Output {
    let dir = env.root().join(format!("export-{}", env.git(repo, &["rev-parse", "--short", rev])));
    std::fs::create_dir_all(&dir).unwrap();
    let archive = env.git_cmd(repo).args(["archive", "--format=tar", rev]).output().unwrap();
    assert!(archive.status.success(), "git archive {rev}");
    let mut tar = Command::new("tar").args(["-x", "-C"]).arg(&dir).stdin(std::process::Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(tar.stdin.as_mut().unwrap(), &archive.stdout).unwrap();
    assert!(tar.wait().unwrap().success());
    let mut cmd = Command::new(&project.suite[0]);
    cmd.args(&project.suite[1..]).current_dir(&dir);
    env.hermetic(&mut cmd);
    with_toolchain(&mut cmd).output().unwrap()
}

/// The `--agents` entry of `name`, the scripted agent of `tests/projects/agent.sh` knowing
/// `skill` (bug ids, for best-of-N).
fn agent(env: &TestEnv, project: &Project, name: &str, skill: &[&str]) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/projects");
    let path = env.root().join(format!("{name}.sh"));
    let script = format!(
        "LOG='{}'\nPROJECTS='{}'\nPROJECT='{}'\nFIXER='{}'\nSKILL='{}'\n. '{}'\n",
        env.root().join("log").display(),
        dir.join("projects.json").display(),
        project.folder,
        dir.join("fixer.py").display(),
        skill.join(","),
        dir.join("agent.sh").display(),
    );
    std::fs::write(&path, script).unwrap();
    format!("{name}=cmd:sh {}", path.display())
}

/// `git mas coordinate --json` as `lead`, with `extra`; the stream and how long it took.
fn coordinate(env: &TestEnv, repo: &Path, project: &Project, agents: &[String], extra: &[&str]) -> (JsonRun, Duration) {
    let mut cmd = env.mas_cmd(repo);
    if project.cargo {
        with_toolchain(&mut cmd);
    }
    let started = Instant::now();
    let out = cmd
        .args(["--agent", "lead", "coordinate", "--json", "--goal", GOAL])
        .args(["--agents", &agents.join(",")])
        .args(extra)
        .output()
        .unwrap();
    (JsonRun::of(&out), started.elapsed())
}

/// What a failing run leaves to read: its stderr, every event but the hops' prompts, and what the
/// agents' commands said.
fn story(env: &TestEnv, out: &JsonRun) -> String {
    let events: Vec<String> = out
        .lines
        .iter()
        .map(|l| {
            let mut l = l.clone();
            if let Some(o) = l.as_object_mut() {
                o.remove("prompt");
            }
            l.to_string()
        })
        .collect();
    let agents: Vec<String> = AGENTS
        .iter()
        .map(|a| {
            let err = std::fs::read_to_string(env.root().join(format!("log.{a}.err"))).unwrap_or_default();
            format!("--- {a}'s commands:\n{err}")
        })
        .collect();
    format!("--- stderr:\n{}\n--- events:\n{}\n{}", out.stderr, events.join("\n"), agents.join("\n"))
}

/// The check's output names every bug's failing test on the injected base, and the project's own
/// suite fails there: the bugs are real, each one fails a test.
fn assert_every_bug_fails_a_test(env: &TestEnv, repo: &Path, project: &Project) {
    let out = suite_on(env, repo, project, "main");
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!out.status.success(), "{}: the suite passes with the bugs in:\n{text}", project.pinned);
    for bug in &project.bugs {
        assert!(
            text.contains(&bug.fails),
            "{}: {} fails no test named {:?}:\n{text}",
            project.pinned,
            bug.id,
            bug.fails
        );
    }
}

/// The run's report (the last `report` event).
fn report(out: &JsonRun) -> &Value {
    &out.events("report").last().unwrap_or_else(|| panic!("no report; stderr: {}", out.stderr))["report"]
}

/// An aggregate run on `project` with three agents, no `--partial`, the default quorum: it lands
/// once, every injected bug is fixed on main and the project's own suite passes there, and the
/// report lists what each slice changed.
fn aggregate_lands_once_with_the_suite_passing(project: &Project) -> Duration {
    let env = TestEnv::new();
    let repo = buggy_repo(&env, project);
    let base = env.git(&repo, &["rev-parse", "main"]);
    assert_every_bug_fails_a_test(&env, &repo, project);
    let agents: Vec<String> = AGENTS.iter().map(|a| agent(&env, project, a, &[])).collect();
    let (out, took) = coordinate(&env, &repo, project, &agents, &["--aggregate"]);
    let story = story(&env, &out);

    // The plan put every bug's file in a slice.
    let plan = &out.events("plan").first().unwrap_or_else(|| panic!("no plan:\n{story}"))["plan"]["slices"];
    let owner = |file: &str| {
        plan.as_array()
            .unwrap()
            .iter()
            .find(|s| s["targets"].as_array().unwrap().iter().any(|t| t == file))
            .map(|s| s["agent"].as_str().unwrap().to_string())
    };
    for bug in &project.bugs {
        assert!(owner(&bug.file).is_some(), "{}: {} is in no slice:\n{plan:#}\n{story}", project.pinned, bug.file);
    }

    assert_eq!(out.code, Some(0), "{}: the run did not land:\n{story}", project.pinned);
    assert_eq!(
        env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]),
        "1",
        "{}: not one landing:\n{story}",
        project.pinned
    );
    for bug in &project.bugs {
        let text = env.git(&repo, &["show", &format!("main:{}", bug.file)]);
        assert!(
            text.contains(&bug.original) && !text.contains(&bug.buggy),
            "{}: {} is not fixed on main",
            project.pinned,
            bug.id
        );
    }
    let suite = suite_on(&env, &repo, project, "main");
    assert!(suite.status.success(), "{}: the suite fails on main:\n{}\n{story}", project.pinned, shown(&suite));

    // The report: converged, the merged tree checked, and for each slice the paths it changed —
    // exactly its own bugs' files.
    let report = report(&out);
    assert_eq!(report["status"], "converged", "{report:#}");
    assert_eq!(report["merged_check_passed"], true, "the merged tree was checked: {report:#}");
    // The merged whole passed the whole check: the goal is reached, whatever the parts' own
    // (failing) checks said.
    assert_eq!(report["termination_reason"], "quality_reached", "{}: {report:#}", project.pinned);
    let changes = report["changes"].as_array().unwrap_or_else(|| {
        panic!("{}: the report lists no slice's changed paths (`changes`):\n{report:#}", project.pinned)
    });
    for slice in report["slices"].as_array().unwrap() {
        let agent = slice["agent"].as_str().unwrap();
        let mut want: Vec<&str> =
            project.bugs.iter().filter(|b| owner(&b.file).as_deref() == Some(agent)).map(|b| b.file.as_str()).collect();
        want.sort();
        let listed: Vec<&str> = changes
            .iter()
            .find(|c| c["agent"] == agent)
            .map(|c| c["paths"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect())
            .unwrap_or_default();
        assert_eq!(listed, want, "{}: {agent}'s slice's changed paths:\n{report:#}", project.pinned);
    }
    // Complementary work: the bugs were not all one agent's.
    let mut holders: Vec<String> = project.bugs.iter().filter_map(|b| owner(&b.file)).collect();
    holders.sort();
    holders.dedup();
    assert!(
        holders.len() >= 2,
        "{}: every bug is in {holders:?}'s slice: the work was not split:\n{plan:#}",
        project.pinned
    );
    took
}

/// A best-of-N run on `project`: carol knows every bug, bob two, alice one (the most skilled is
/// not the first by name); the proposal that lands is carol's, the one that fixes the most, and
/// the suite passes on main.
fn best_of_n_lands_the_most_fixes(project: &Project) -> Duration {
    let env = TestEnv::new();
    let repo = buggy_repo(&env, project);
    let base = env.git(&repo, &["rev-parse", "main"]);
    let ids: Vec<&str> = project.bugs.iter().map(|b| b.id.as_str()).collect();
    let skills = [("alice", &ids[..1]), ("bob", &ids[..2]), ("carol", &ids[..])];
    let agents: Vec<String> = skills.iter().map(|(a, s)| agent(&env, project, a, s)).collect();
    let (out, took) = coordinate(&env, &repo, project, &agents, &[]);
    let story = story(&env, &out);
    assert_eq!(out.code, Some(0), "{}: the run did not land:\n{story}", project.pinned);
    assert!(out.events("plan").is_empty(), "best-of-N has no slices");
    let landed = out.events("landed");
    assert_eq!(landed.len(), 1, "{story}");
    assert_eq!(
        landed[0]["winners"],
        json!(["carol"]),
        "{}: the landed proposal is not the one fixing the most:\n{story}",
        project.pinned
    );
    assert_eq!(env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]), "1");
    let suite = suite_on(&env, &repo, project, "main");
    assert!(suite.status.success(), "{}: the suite fails on main:\n{}\n{story}", project.pinned, shown(&suite));
    took
}

#[test]
fn toolz_aggregate_lands_once_with_pytest_passing_on_main() {
    let took = aggregate_lands_once_with_the_suite_passing(&project("toolz"));
    eprintln!("toolz aggregate run: {took:?}");
}

#[test]
fn toolz_best_of_n_lands_the_proposal_with_the_most_fixes() {
    let took = best_of_n_lands_the_most_fixes(&project("toolz"));
    eprintln!("toolz best-of-N run: {took:?}");
}

#[test]
fn heck_aggregate_lands_once_with_cargo_test_passing_on_main() {
    let took = aggregate_lands_once_with_the_suite_passing(&project("heck"));
    eprintln!("heck aggregate run: {took:?}");
}

#[test]
fn heck_best_of_n_lands_the_proposal_with_the_most_fixes() {
    let took = best_of_n_lands_the_most_fixes(&project("heck"));
    eprintln!("heck best-of-N run: {took:?}");
}

#[test]
fn busboy_aggregate_lands_once_with_node_test_passing_on_main() {
    let took = aggregate_lands_once_with_the_suite_passing(&project("fastify-busboy"));
    eprintln!("busboy aggregate run: {took:?}");
}

#[test]
fn busboy_best_of_n_lands_the_proposal_with_the_most_fixes() {
    let took = best_of_n_lands_the_most_fixes(&project("fastify-busboy"));
    eprintln!("busboy best-of-N run: {took:?}");
}

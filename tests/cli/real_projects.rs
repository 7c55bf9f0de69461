//! The proof on real projects: git-mas on three libraries taken from the package registries at
//! pinned versions (`tests/projects/fetch.sh`, run by `tests/setup.sh`) — toolz (Python, its
//! pytest suite), heck (Rust, `cargo test`) and @fastify/busboy (Node, `node --test`, read as
//! TAP) — each with bugs injected into three of its modules, committed as main, and nothing
//! configured but the roster and the project's own test command as the team's check. The goal
//! names no file.
//!
//! Scripted `cmd:` agents do real work with real git mas commands: on a propose hop an agent
//! reverts the injected bugs it is given — in an aggregate run, every bug whose file is in its
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
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The goal: it names no file.
const GOAL: &str = "make the test suite pass";

/// One injected bug: in `file`, the `original` text (occurring once) is replaced by `buggy`,
/// which fails at least `fails` (a test the project's suite names) and breaks no build or import.
struct Bug {
    id: &'static str,
    file: &'static str,
    original: &'static str,
    buggy: &'static str,
    fails: &'static str,
}

/// A real project: where `fetch.sh` unpacked it, the team's check, the project's own test
/// command (run on main after the landing) and the bugs.
struct Project {
    /// The folder `fetch.sh` fetched it into (under the projects directory).
    folder: &'static str,
    /// `name version`, as the registry has it.
    pinned: &'static str,
    /// `mas.check`.
    check: &'static str,
    /// The project's own full test command (argv), run on an export of main.
    suite: &'static [&'static str],
    /// Whether the check runs cargo (the hermetic environment then needs the toolchain's homes).
    cargo: bool,
    bugs: &'static [Bug],
}

const TOOLZ: Project = Project {
    folder: "toolz",
    pinned: "toolz 1.0.0",
    check: "python3 -m pytest -q -p no:cacheprovider",
    suite: &["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
    cargo: false,
    bugs: &[
        Bug {
            id: "frequencies",
            file: "toolz/itertoolz.py",
            original: "        d[item] += 1\n",
            buggy: "        d[item] += 2\n",
            fails: "test_itertoolz.py::test_frequencies",
        },
        Bug {
            id: "complement",
            file: "toolz/functoolz.py",
            original: "    return compose(not_, func)\n",
            buggy: "    return compose(bool, func)\n",
            fails: "test_functoolz.py::test_complement",
        },
        Bug {
            id: "valfilter",
            file: "toolz/dicttoolz.py",
            original: "        if predicate(v):\n",
            buggy: "        if not predicate(v):\n",
            fails: "test_dicttoolz.py::TestDict::test_valfilter",
        },
    ],
};

/// heck's check runs its unit tests (`--lib`): its 16 doctests are one rustdoc build each, 6 s of
/// every check on this machine; the full `cargo test`, doctests included, runs on main after the
/// landing.
const HECK: Project = Project {
    folder: "heck",
    pinned: "heck 0.5.0",
    check: "cargo test --no-fail-fast --lib",
    suite: &["cargo", "test", "--no-fail-fast"],
    cargo: true,
    bugs: &[
        Bug {
            id: "kebab",
            file: "src/kebab.rs",
            original: "lowercase, |f| write!(f, \"-\"), f)",
            buggy: "lowercase, |f| write!(f, \"_\"), f)",
            fails: "kebab::tests::test1",
        },
        Bug {
            id: "snake",
            file: "src/snake.rs",
            original: "lowercase, |f| write!(f, \"_\"), f)",
            buggy: "lowercase, |f| write!(f, \"-\"), f)",
            fails: "snake::tests::test1",
        },
        Bug {
            id: "title",
            file: "src/title.rs",
            original: "capitalize, |f| write!(f, \" \"), f)",
            buggy: "capitalize, |f| write!(f, \"\"), f)",
            fails: "title::tests::test1",
        },
    ],
};

const BUSBOY: Project = Project {
    folder: "fastify-busboy",
    pinned: "@fastify/busboy 3.2.6",
    check: "node --test",
    suite: &["node", "--test"],
    cargo: false,
    bugs: &[
        Bug {
            id: "basename",
            file: "lib/utils/basename.js",
            original: "path = path.slice(i + 1)",
            buggy: "path = path.slice(i)",
            fails: "not ok 1 - basename",
        },
        Bug {
            id: "limit",
            file: "lib/utils/getLimit.js",
            original: "  return limits[name]\n}",
            buggy: "  return limits[name] || defaultLimit\n}",
            fails: "Get limit",
        },
        Bug {
            id: "plus",
            file: "lib/utils/Decoder.js",
            original: "str = str.replace(RE_PLUS, ' ')",
            buggy: "str = str.replace(RE_PLUS, '+')",
            fails: "Decoder",
        },
    ],
};

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
    let src = projects_dir().join(project.folder).join("src");
    assert!(
        src.is_dir(),
        "{} is not fetched at {}: run `bash tests/projects/fetch.sh` (tests/setup.sh runs it) from the repository root",
        project.pinned,
        src.display()
    );
    src
}

/// `text` with `bug` applied (or reverted, `inject` false); the text it replaces must occur once.
fn apply(text: &str, bug: &Bug, inject: bool) -> String {
    let (from, to) = if inject { (bug.original, bug.buggy) } else { (bug.buggy, bug.original) };
    assert_eq!(text.matches(from).count(), 1, "{}: {from:?} must occur once in {}", bug.id, bug.file);
    text.replacen(from, to, 1)
}

/// A fresh repository holding the project with its bugs, committed as main in one commit (no
/// history says where the bugs are), `lead` and `agents` on its committed roster, and
/// `mas.check` the project's check: nothing else is configured.
fn buggy_repo(env: &TestEnv, project: &Project) -> PathBuf {
    let repo = env.root().join(project.folder);
    copy_dir(&shipped(project), &repo);
    for bug in project.bugs {
        let path = repo.join(bug.file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, apply(&text, bug, true)).unwrap();
    }
    env.git_quiet_ok(&repo, &["init", "--quiet", "-b", "main"]);
    env.git_quiet_ok(&repo, &["add", "."]);
    env.git_quiet_ok(&repo, &["commit", "--quiet", "-m", project.pinned]);
    env.agents(&repo, &[&["lead"][..], &AGENTS].concat());
    env.git_quiet_ok(&repo, &["config", "mas.check", project.check]);
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
    let mut cmd = Command::new(project.suite[0]);
    cmd.args(&project.suite[1..]).current_dir(&dir);
    env.hermetic(&mut cmd);
    with_toolchain(&mut cmd).output().unwrap()
}

/// The fixer every agent runs (Python, which `tests/setup.sh` installs): reads the fix table (JSON)
/// and the scope — `slice <files>` or `skill <ids>`, comma-separated — reverts in the current
/// directory every injected bug in scope that is still there, and prints how many bugs in scope
/// are fixed in the worktree now (reverted now or on an earlier hop).
const FIXER: &str = r#"import json, sys
table = json.load(open(sys.argv[1]))
mode, scope = sys.argv[2], [s for s in sys.argv[3].split(",") if s]
fixed = 0
for bug in table:
    if (bug["file"] if mode == "slice" else bug["id"]) not in scope:
        continue
    try:
        text = open(bug["file"]).read()
    except FileNotFoundError:
        continue
    if text.count(bug["buggy"]) == 1:
        open(bug["file"], "w").write(text.replace(bug["buggy"], bug["original"], 1))
        fixed += 1
    elif bug["original"] in text:
        fixed += 1
print(fixed)
"#;

/// A scripted agent: on a propose hop it fixes its slice (aggregate: the hop names `slice=`) or
/// what its skill knows (best-of-N: no slice), and proposes — or, when its slice holds no
/// injected bug, abstains and says why; on an endorse hop it endorses every agent named. It logs
/// every prompt to `$LOG.<agent>` and its commands' stderr to `$LOG.<agent>.err`.
const AGENT: &str = r##"prompt=$(cat)
me=$GIT_MAS_AGENT
exec 2>>"$LOG.$me.err"
field() { printf '%s\n' "$prompt" | sed -n "s/^$1=//p" | head -n 1; }
printf '%s\n=====\n' "$prompt" >> "$LOG.$me"
case "$(field task)" in
  propose)
    slice=$(field slice)
    if [ -n "$slice" ]; then
      fixed=$(python3 "$FIXER" "$FIXES" slice "$slice")
    else
      fixed=$(python3 "$FIXER" "$FIXES" skill "$SKILL")
    fi
    if [ "$fixed" = 0 ]; then
      echo "$me: abstains ($slice)" >&2
      git mas propose --abstain -m "no injected bug in my slice: nothing of mine fails ($slice)" >&2
    else
      git mas propose -m "$me reverts $fixed bug(s)" >&2
    fi ;;
  endorse) for p in $(field endorse | tr , ' '); do git mas endorse "$p" >&2; done ;;
esac
next=$(field next)
echo "done"
if [ "$next" = DONE ]; then echo DONE; else echo "NEXT $next"; fi
"##;

/// The `--agents` entry of `name`, a scripted agent knowing `skill` (bug ids) for best-of-N.
fn agent(env: &TestEnv, project: &Project, name: &str, skill: &[&str]) -> String {
    let fixes = env.root().join("fixes.json");
    if !fixes.exists() {
        let table: Vec<Value> = project
            .bugs
            .iter()
            .map(|b| json!({"id": b.id, "file": b.file, "original": b.original, "buggy": b.buggy}))
            .collect();
        std::fs::write(&fixes, serde_json::to_string_pretty(&table).unwrap()).unwrap();
        std::fs::write(env.root().join("fixer.py"), FIXER).unwrap();
    }
    let path = env.root().join(format!("{name}.sh"));
    let head = format!(
        "LOG='{}'\nFIXES='{}'\nFIXER='{}'\nSKILL='{}'\n",
        env.root().join("log").display(),
        fixes.display(),
        env.root().join("fixer.py").display(),
        skill.join(",")
    );
    std::fs::write(&path, format!("{head}{AGENT}")).unwrap();
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
    for bug in project.bugs {
        assert!(
            text.contains(bug.fails),
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
    for bug in project.bugs {
        assert!(owner(bug.file).is_some(), "{}: {} is in no slice:\n{plan:#}\n{story}", project.pinned, bug.file);
    }

    assert_eq!(out.code, Some(0), "{}: the run did not land:\n{story}", project.pinned);
    assert_eq!(
        env.git(&repo, &["rev-list", "--count", &format!("{base}..main")]),
        "1",
        "{}: not one landing:\n{story}",
        project.pinned
    );
    for bug in project.bugs {
        let text = env.git(&repo, &["show", &format!("main:{}", bug.file)]);
        assert!(
            text.contains(bug.original) && !text.contains(bug.buggy),
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
    let changes = report["changes"].as_array().unwrap_or_else(|| {
        panic!("{}: the report lists no slice's changed paths (`changes`):\n{report:#}", project.pinned)
    });
    for slice in report["slices"].as_array().unwrap() {
        let agent = slice["agent"].as_str().unwrap();
        let mut want: Vec<&str> =
            project.bugs.iter().filter(|b| owner(b.file).as_deref() == Some(agent)).map(|b| b.file).collect();
        want.sort();
        let listed: Vec<&str> = changes
            .iter()
            .find(|c| c["agent"] == agent)
            .map(|c| c["paths"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect())
            .unwrap_or_default();
        assert_eq!(listed, want, "{}: {agent}'s slice's changed paths:\n{report:#}", project.pinned);
    }
    // Complementary work: the bugs were not all one agent's.
    let mut holders: Vec<String> = project.bugs.iter().filter_map(|b| owner(b.file)).collect();
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
    let ids: Vec<&str> = project.bugs.iter().map(|b| b.id).collect();
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
    let took = aggregate_lands_once_with_the_suite_passing(&TOOLZ);
    eprintln!("toolz aggregate run: {took:?}");
}

#[test]
fn toolz_best_of_n_lands_the_proposal_with_the_most_fixes() {
    let took = best_of_n_lands_the_most_fixes(&TOOLZ);
    eprintln!("toolz best-of-N run: {took:?}");
}

#[test]
fn heck_aggregate_lands_once_with_cargo_test_passing_on_main() {
    let took = aggregate_lands_once_with_the_suite_passing(&HECK);
    eprintln!("heck aggregate run: {took:?}");
}

#[test]
fn heck_best_of_n_lands_the_proposal_with_the_most_fixes() {
    let took = best_of_n_lands_the_most_fixes(&HECK);
    eprintln!("heck best-of-N run: {took:?}");
}

#[test]
fn busboy_aggregate_lands_once_with_node_test_passing_on_main() {
    let took = aggregate_lands_once_with_the_suite_passing(&BUSBOY);
    eprintln!("busboy aggregate run: {took:?}");
}

#[test]
fn busboy_best_of_n_lands_the_proposal_with_the_most_fixes() {
    let took = best_of_n_lands_the_most_fixes(&BUSBOY);
    eprintln!("busboy best-of-N run: {took:?}");
}

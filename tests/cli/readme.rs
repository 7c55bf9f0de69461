//! The examples of the README and of every guide in `docs/`, run as written.
//!
//! A reader copies the documentation's examples into a terminal, so an example that fails is a
//! defect as real as a failing command. Every fenced block of README.md and of each `docs/*.md` has
//! a language, and the language says whether the block is run:
//!
//! - `console`: run. Each line starting with `$ ` is a command, typed into `sh` in the order given;
//!   the other lines are sample output, not compared (they carry ids and hashes of another run). A
//!   command exits 0 unless its comment says `# exit N`. The commands run in a new repository of
//!   their own — one commit on `main`, pushed to a bare `origin`, as a fresh clone has — or, with
//!   the block's attribute `fixtures-repo` (```` ```console fixtures-repo ````), in one whose commit
//!   holds a copy of `tests/fixtures-repo/`. A `cd` carries over to the next command, as in a
//!   terminal. Nothing else is set up: no agent, no key, no git config, so an example that needs an
//!   identity has to show the step that makes one.
//! - `sh` and `text`: not run (the setup commands install things; an example may need real coding
//!   agents). Any other language fails the test, so a new block has to choose.
//!
//! The environment is `TestEnv`'s hermetic one (a scratch HOME and key directory, `git mas` on
//! `PATH` is this build) with the clock's own commit dates, plus the toolchain's own homes so that
//! a check such as `cargo test` runs.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where an example's commands start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    /// A new repository with one commit, pushed to `origin`.
    NewClone,
    /// The same, the commit holding a copy of `tests/fixtures-repo/`.
    FixturesRepo,
}

/// One command of an example.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Step {
    /// The line number in its file (1-based).
    line: usize,
    /// What follows the `$ `.
    text: String,
    /// The exit code the example states (`# exit N`), else 0.
    expect: i32,
}

/// One runnable block.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Example {
    /// The line of the opening fence.
    line: usize,
    setting: Setting,
    steps: Vec<Step>,
}

/// The runnable examples of a README or guide, in order. Refuses a block without a language, a language or
/// attribute it does not know, an unclosed block and a `console` block without a command.
fn examples(readme: &str) -> Result<Vec<Example>, String> {
    let mut found = Vec::new();
    let mut open: Option<(usize, Option<Example>)> = None;
    for (i, line) in readme.lines().enumerate() {
        let number = i + 1;
        let Some(info) = line.strip_prefix("```") else {
            if let Some((_, Some(example))) = &mut open
                && let Some(text) = line.strip_prefix("$ ")
            {
                example.steps.push(Step { line: number, text: text.to_string(), expect: expected_exit(text)? });
            }
            continue;
        };
        match open.take() {
            Some((start, example)) => {
                if !info.trim().is_empty() {
                    return Err(format!("line {number}: a fence with a language inside the block of line {start}"));
                }
                if let Some(example) = example {
                    if example.steps.is_empty() {
                        return Err(format!("line {start}: a console block without a `$ ` command"));
                    }
                    found.push(example);
                }
            }
            None => {
                let mut words = info.split_whitespace();
                let example = match words.next() {
                    Some("console") => {
                        let setting = match words.next() {
                            None => Setting::NewClone,
                            Some("fixtures-repo") => Setting::FixturesRepo,
                            Some(other) => return Err(format!("line {number}: unknown console attribute `{other}`")),
                        };
                        if let Some(extra) = words.next() {
                            return Err(format!("line {number}: unknown console attribute `{extra}`"));
                        }
                        Some(Example { line: number, setting, steps: Vec::new() })
                    }
                    Some("sh" | "text") => None,
                    Some(other) => {
                        return Err(format!("line {number}: block language `{other}` is none of console, sh, text"));
                    }
                    None => return Err(format!("line {number}: a block without a language (console, sh or text)")),
                };
                open = Some((number, example));
            }
        }
    }
    match open {
        Some((start, _)) => Err(format!("line {start}: the block never closes")),
        None => Ok(found),
    }
}

/// The exit code a command's comment states (`# exit N`), else 0.
fn expected_exit(command: &str) -> Result<i32, String> {
    let Some((_, after)) = command.split_once("# exit ") else {
        return Ok(0);
    };
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().map_err(|_| format!("`# exit` without a number in `{command}`"))
}

/// The longest one command may take before the example counts as hanging.
const STEP_LIMIT: Duration = Duration::from_secs(120);

/// Makes the repository an example starts in; returns its path.
fn fresh_repository(env: &TestEnv, setting: Setting) -> PathBuf {
    let repo = env.root().join("repo");
    match setting {
        Setting::FixturesRepo => copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures-repo"), &repo),
        Setting::NewClone => {
            std::fs::create_dir_all(&repo).unwrap();
            std::fs::write(repo.join("README.md"), "# project\n").unwrap();
        }
    }
    let origin = env.root().join("origin.git");
    env.git_quiet_ok(env.root(), &["init", "--quiet", "--bare", "-b", "main", origin.to_str().unwrap()]);
    env.git_quiet_ok(&repo, &["init", "--quiet", "-b", "main"]);
    env.git_quiet_ok(&repo, &["add", "."]);
    env.git_quiet_ok(&repo, &["commit", "--quiet", "-m", "first"]);
    env.git_quiet_ok(&repo, &["remote", "add", "origin", origin.to_str().unwrap()]);
    env.git_quiet_ok(&repo, &["push", "--quiet", "--set-upstream", "origin", "main"]);
    repo
}

/// The toolchain's homes as they are outside the scratch HOME (rustup finds its toolchains there).
fn toolchain_env(cmd: &mut Command) {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    for (var, dir) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
        let value = std::env::var_os(var).map(PathBuf::from).or_else(|| home.as_ref().map(|h| h.join(dir)));
        if let Some(value) = value.filter(|v| v.is_dir()) {
            cmd.env(var, value);
        }
    }
}

/// Runs one example's commands in order; the first that does not exit as stated is the error,
/// with its output.
fn run_example(example: &Example) -> Result<(), String> {
    let env = TestEnv::new();
    let mut cwd = fresh_repository(&env, example.setting);
    let cwd_file = env.root().join("cwd");
    for (n, step) in example.steps.iter().enumerate() {
        let (out, err) = (env.root().join(format!("step-{n}.out")), env.root().join(format!("step-{n}.err")));
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(format!("{}\n__rc=$?\npwd > \"$README_STEP_CWD\"\nexit $__rc", step.text));
        env.hermetic(&mut cmd);
        // A terminal's commits carry the time they are made: `git mas check` replays the gate at
        // each commit's time against the board, which a fixed date would put before every focus.
        cmd.env_remove("GIT_AUTHOR_DATE").env_remove("GIT_COMMITTER_DATE");
        toolchain_env(&mut cmd);
        cmd.current_dir(&cwd)
            .env("README_STEP_CWD", &cwd_file)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().map_err(|e| format!("line {}: cannot run sh: {e}", step.line))?;
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if started.elapsed() > STEP_LIMIT {
                let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let shown = || {
            format!(
                "stdout:\n{}\nstderr:\n{}",
                std::fs::read_to_string(&out).unwrap_or_default(),
                std::fs::read_to_string(&err).unwrap_or_default()
            )
        };
        let code = match status {
            None => return Err(format!("line {}: `{}` ran over {STEP_LIMIT:?}\n{}", step.line, step.text, shown())),
            Some(status) => status.code(),
        };
        if code != Some(step.expect) {
            return Err(format!(
                "line {}: `{}` exited {code:?}, the example says {}\n{}",
                step.line,
                step.text,
                step.expect,
                shown()
            ));
        }
        if let Ok(dir) = std::fs::read_to_string(&cwd_file) {
            cwd = PathBuf::from(dir.trim_end_matches('\n'));
        }
    }
    Ok(())
}

/// The documentation whose examples run: README.md, then every `docs/*.md` by name (relative to
/// the crate's root).
fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut guides: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| p.strip_prefix(root).unwrap().to_path_buf())
        .collect();
    guides.sort();
    std::iter::once(PathBuf::from("README.md")).chain(guides).collect()
}

#[test]
fn readme_examples_run_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let documents = documents();
    for guide in ["README.md", "team-mode.md", "coordinate.md", "by-hand.md", "multi-machine.md", "hosts.md"] {
        assert!(documents.contains(&Path::new("docs").join(guide)), "docs/{guide} is missing: {documents:?}");
    }
    let mut failures = Vec::new();
    let mut total = 0;
    for document in &documents {
        let text = std::fs::read_to_string(root.join(document)).unwrap();
        let examples = examples(&text).unwrap_or_else(|e| panic!("{}: {e}", document.display()));
        total += examples.len();
        // Each example in a scratch of its own, as a reader of that page would run it.
        failures.extend(examples.iter().filter_map(|example| {
            run_example(example).err().map(|e| format!("{} example at line {}: {e}", document.display(), example.line))
        }));
    }
    assert!(total >= 7, "the documentation has {total} runnable examples; the parser lost some");
    assert!(failures.is_empty(), "examples that do not run as written:\n\n{}", failures.join("\n\n"));
}

#[test]
fn readme_parser_reads_blocks_settings_and_stated_exits() {
    let text = "intro\n```console\n$ git mas init\ncreated\n$ git mas gate   # exit 7: no focus\n```\n\
                ```sh\n$ not run\n```\n```console fixtures-repo\n$ cd sub && ls\n```\n```text\nx\n```\n";
    let found = examples(text).unwrap();
    assert_eq!(
        found,
        vec![
            Example {
                line: 2,
                setting: Setting::NewClone,
                steps: vec![
                    Step { line: 3, text: "git mas init".into(), expect: 0 },
                    Step { line: 5, text: "git mas gate   # exit 7: no focus".into(), expect: 7 },
                ],
            },
            Example {
                line: 10,
                setting: Setting::FixturesRepo,
                steps: vec![Step { line: 11, text: "cd sub && ls".into(), expect: 0 }],
            },
        ]
    );
    for (bad, why) in [
        ("```\nx\n```\n", "a block without a language"),
        ("```bash\nx\n```\n", "block language `bash`"),
        ("```console elsewhere\n$ ls\n```\n", "unknown console attribute `elsewhere`"),
        ("```console\nno command\n```\n", "without a `$ ` command"),
        ("```console\n$ ls\n", "never closes"),
        ("```console\n$ true # exit x\n```\n", "`# exit` without a number"),
    ] {
        let e = examples(bad).expect_err(bad);
        assert!(e.contains(why), "{bad:?}: {e}");
    }
}

#[test]
fn readme_runner_refuses_an_example_that_does_not_exit_as_stated() {
    let example = |text: &str| Example {
        line: 1,
        setting: Setting::NewClone,
        steps: vec![Step { line: 2, text: text.into(), expect: expected_exit(text).unwrap() }],
    };
    // The harness itself: a command that works, an unknown subcommand, a stated exit that differs,
    // and a command that needs the identity the example did not make.
    run_example(&example("git mas init && git mas agent new alice")).unwrap();
    let e = run_example(&example("git mas frobnicate")).unwrap_err();
    assert!(e.contains("exited Some(2), the example says 0"), "{e}");
    let e = run_example(&example("git mas init   # exit 1")).unwrap_err();
    assert!(e.contains("exited Some(0), the example says 1"), "{e}");
    run_example(&example("git mas focus publish --top 1   # exit 1")).unwrap();
    let moved = Example {
        line: 1,
        setting: Setting::NewClone,
        steps: vec![
            Step { line: 2, text: "mkdir sub && cd sub".into(), expect: 0 },
            Step { line: 3, text: "test \"$(basename \"$PWD\")\" = sub".into(), expect: 0 },
        ],
    };
    run_example(&moved).unwrap();
}

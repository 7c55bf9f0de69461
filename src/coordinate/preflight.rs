//! What `git mas coordinate` checks before its first hop, so that a run that cannot end well
//! refuses before any agent works rather than after.
//!
//! Every check gives one [`Item`]: what was checked, whether it holds, what was found, and — when
//! it does not hold — the command that fixes it. The driver gathers the facts (the caller, the
//! roster and the keys here, each agent's program, the check, the quorum, the checkout of the
//! integration branch, the frame) and refuses with every missing piece at once; `--dry-run`
//! prints the same list and the plan, and starts nothing.
//!
//! The pure rules live here: which program a `sh -c` line runs first ([`program`]) and where it
//! is on `PATH` ([`find_program`]), what the check's run on main says ([`base_item`]: a command
//! that is not there, a check that hangs, cargo stopping at its first failing test binary), and
//! whether the quorum can be reached by endorsements of
//! others ([`quorum_item`]): with self-endorsement off, a proposal can have at most one
//! endorsement per *other* agent, so a quorum above `agents - 1` never holds — two agents under
//! the default strict majority (2) can never land.

use crate::devrun::quorum_for;
use crate::pool::check::{CheckRun, missing_command};
use crate::pool::testreport;
use serde::Serialize;
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One check of the preflight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Item {
    /// What was checked: `identity`, `roster`, `agent`, `check`, `quorum`, `checkout`, `frame`,
    /// `base`.
    pub check: &'static str,
    /// Whether it holds.
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// The command that fixes it, when it does not hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Item {
    /// A check that holds.
    pub fn ok(check: &'static str, detail: impl Into<String>) -> Item {
        Item { check, ok: true, detail: detail.into(), fix: None }
    }

    /// A check that does not hold, and how to fix it.
    pub fn missing(check: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Item {
        Item { check, ok: false, detail: detail.into(), fix: Some(fix.into()) }
    }
}

/// The whole preflight.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Preflight {
    /// Every check, in the order they were made.
    pub items: Vec<Item>,
}

impl Preflight {
    /// Adds a check.
    pub fn push(&mut self, item: Item) {
        self.items.push(item);
    }

    /// Whether every check holds.
    pub fn passed(&self) -> bool {
        self.items.iter().all(|i| i.ok)
    }

    /// The checks that do not hold.
    pub fn missing(&self) -> impl Iterator<Item = &Item> {
        self.items.iter().filter(|i| !i.ok)
    }

    /// One line per check: `ok` or `MISSING`, what, and the fix.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for i in &self.items {
            let mark = if i.ok { "ok     " } else { "MISSING" };
            out.push_str(&format!("  {mark} {:<9} {}", i.check, i.detail));
            if let Some(fix) = &i.fix {
                out.push_str(&format!("\n          {:<9} fix: {fix}", ""));
            }
            out.push('\n');
        }
        out
    }
}

/// What a `sh -c` command line runs first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// A program looked up on `PATH`.
    Named(String),
    /// A program named by its path (relative to the directory the line runs in).
    Path(PathBuf),
    /// Something the preflight does not follow: a shell builtin or keyword, a subshell, a line
    /// that does not split as shell words.
    Opaque,
}

/// Shell words that are not programs on `PATH`.
const SHELL_WORDS: &[&str] = &[
    "cd", "exec", "eval", "export", "set", "unset", "if", "for", "while", "until", "case", "{", "(", "!", "time", ".",
    "source", "env", "command", "nohup", "exit", "true", "false", ":", "echo", "printf", "read", "test", "[",
];

/// The program `line` (run with `sh -c`) starts with: its first word after `NAME=value`
/// assignments.
pub fn program(line: &str) -> Program {
    let Some(words) = shlex::split(line) else { return Program::Opaque };
    let first = words.into_iter().find(|w| !is_assignment(w));
    match first {
        None => Program::Opaque,
        Some(w) if SHELL_WORDS.contains(&w.as_str()) => Program::Opaque,
        Some(w) if w.contains(['(', ')', ';', '&', '|', '<', '>', '$', '`']) => Program::Opaque,
        Some(w) if w.contains('/') => Program::Path(PathBuf::from(w)),
        Some(w) => Program::Named(w),
    }
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Where `name` is on `path` (a `PATH` value): the first executable file of that name.
pub fn find_program(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

/// Whether `path` is an executable regular file.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether a run of `agents` agents asked for `quorum` (`None`: a strict majority) can reach it
/// by other agents' endorsements (`allow_self`: `mas.allowSelfEndorse`, when a proposer's own
/// counts too).
pub fn quorum_item(agents: usize, quorum: Option<u32>, allow_self: bool) -> Item {
    let size = u32::try_from(agents).unwrap_or(u32::MAX);
    let (need, _) = quorum_for(size, quorum);
    let most = if allow_self { size } else { size.saturating_sub(1) };
    let how = if quorum.is_some() { "--quorum" } else { "the default quorum (a strict majority)" };
    if need <= most {
        return Item::ok("quorum", format!("{need} of {agents} agents' endorsements ({how})"));
    }
    if most == 0 {
        return Item::missing(
            "quorum",
            format!("{agents} agent alone cannot be endorsed by another, and self-endorsement is off"),
            "add an agent to --agents (a proposal is endorsed by the others), or `git config mas.allowSelfEndorse true`",
        );
    }
    Item::missing(
        "quorum",
        format!(
            "{how} is {need}, but a proposal can have at most {most} endorsement(s) with {agents} agents and self-endorsement off"
        ),
        format!("--quorum {most}"),
    )
}

/// What the check's run on the integration branch `branch` says about the run to come.
///
/// Missing when the check cannot run there at all (exit 127, command not found, or 126, not
/// executable: every endorsement would fail the same way), when it did not finish within
/// `timeout` (every endorsement would be killed the same way), or when cargo stopped at its first
/// failing test binary ([`testreport::cargo_stopped_early`]): the suites after it never ran on
/// the base, so an endorsement's differential could judge none of them. Else it holds, saying how
/// the check fared.
pub fn base_item(check: &str, branch: &str, run: &CheckRun, timeout: Duration) -> Item {
    let secs = run.summary.duration_ms as f64 / 1000.0;
    if let Some((what, said)) = missing_command(run) {
        let code = run.summary.exit_status.unwrap_or_default();
        let name = match program(check) {
            Program::Named(n) => n,
            Program::Path(p) => p.display().to_string(),
            Program::Opaque => "the command".to_string(),
        };
        let fix = if code == 126 {
            format!(
                "make {name} executable (`chmod +x {name}` and commit it), or run it through its interpreter (`sh {name}`)"
            )
        } else {
            format!(
                "install {name}, or name a command that exists: git config mas.check '<the project's test command>' (or --check)"
            )
        };
        return Item::missing(
            "base",
            format!("`{check}` cannot run on {branch}: exit {code}, {what} — the shell said: {said}"),
            fix,
        );
    }
    if run.timed_out {
        return Item::missing(
            "base",
            format!(
                "`{check}` did not finish on {branch} within {}: every endorsement's check would be killed the same way",
                humantime::format_duration(timeout)
            ),
            "--check-timeout <longer> (or fix the test that hangs)",
        );
    }
    let output = String::from_utf8_lossy(&run.output);
    if !run.summary.passed()
        && run.report.as_ref().is_some_and(|r| r.format == "libtest")
        && testreport::cargo_stopped_early(&output)
    {
        let failing: BTreeSet<&str> =
            run.report.iter().flat_map(|r| r.failed.iter().map(|(s, _)| s.as_str())).collect();
        let fix = if check.contains("cargo test") && !check.contains("--no-fail-fast") {
            format!(
                "add --no-fail-fast to the check: --check '{}'",
                check.replacen("cargo test", "cargo test --no-fail-fast", 1)
            )
        } else {
            "add --no-fail-fast to the check's `cargo test`".to_string()
        };
        return Item::missing(
            "base",
            format!(
                "`{check}` on {branch}: cargo stopped at the first failing test binary ({}), so the suites after it never ran and no endorsement could judge them",
                failing.into_iter().map(|s| if s.is_empty() { "its tests" } else { s }).collect::<Vec<_>>().join(", ")
            ),
            fix,
        );
    }
    let how = match run.summary.exit_status {
        Some(0) => "passes".to_string(),
        Some(code) => match &run.report {
            Some(r) if !r.failed.is_empty() => {
                format!("fails {} test(s) ({} report, exit {code})", r.failed.len(), r.format)
            }
            Some(r) => format!("fails (exit {code}; its {} report names no failing test)", r.format),
            None => format!("fails (exit {code}; no test report read)"),
        },
        None => "was killed by a signal".to_string(),
    };
    Item::ok("base", format!("`{check}` on {branch} {how} in {secs:.1} s"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_of_a_line_skips_assignments_and_leaves_shell_syntax_alone() {
        let table: &[(&str, Program)] = &[
            ("claude -p --permission-mode acceptEdits", Program::Named("claude".into())),
            (
                "OPENCODE_CONFIG_CONTENT='{\"plugin\": [\"x y\"]}' opencode run --auto",
                Program::Named("opencode".into()),
            ),
            ("A=1 B=2 ./agent.sh --fast", Program::Path("./agent.sh".into())),
            ("python3 /tmp/agent.py", Program::Named("python3".into())),
            ("cd sub && make", Program::Opaque),
            ("(cd sub; make)", Program::Opaque),
            ("$AGENT --x", Program::Opaque),
            ("echo 'unterminated", Program::Opaque),
            ("", Program::Opaque),
            ("1X=2 tool", Program::Named("1X=2".into())),
        ];
        for (line, want) in table {
            assert_eq!(&program(line), want, "{line}");
        }
    }

    #[test]
    fn a_program_is_found_only_as_an_executable_file_on_path() {
        let dir = std::env::temp_dir().join(format!("git-mas-preflight-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("agent-x");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        let plain = dir.join("agent-y");
        std::fs::write(&plain, "").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths(["/nonexistent-dir", dir.to_str().unwrap()]).unwrap();
        assert_eq!(find_program("agent-x", Some(&path)), Some(exe));
        assert_eq!(find_program("agent-y", Some(&path)), None, "not executable");
        assert_eq!(find_program("agent-z", Some(&path)), None);
        assert_eq!(find_program("agent-x", None), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `command` really run with `sh -c` in a scratch directory.
    fn ran(command: &str, timeout: Option<Duration>) -> CheckRun {
        let dir = crate::pool::check::Scratch::new(Path::new("/nonexistent/.git")).unwrap();
        crate::pool::check::run(dir.path(), command, &[], timeout).unwrap()
    }

    #[test]
    fn the_checks_run_on_main_is_refused_when_it_cannot_run_hangs_or_stops_early() {
        let t = Duration::from_secs(5);
        let missing = base_item("no-such-runner -q", "main", &ran("no-such-runner -q", Some(t)), t);
        assert!(!missing.ok);
        assert!(
            missing.detail.contains("exit 127, command not found")
                && missing.detail.contains("no-such-runner: not found"),
            "{missing:?}"
        );
        assert!(missing.fix.as_deref().unwrap().starts_with("install no-such-runner"), "{missing:?}");
        let plain = ran("printf 'echo hi\n' > run.sh; ./run.sh", Some(t));
        let denied = base_item("./run.sh", "main", &plain, t);
        assert!(!denied.ok && denied.detail.contains("exit 126, command not executable"), "{denied:?}");
        assert!(denied.fix.as_deref().unwrap().contains("chmod +x ./run.sh"), "{denied:?}");
        let short = Duration::from_millis(200);
        let hung = base_item("sleep 5", "main", &ran("sleep 5", Some(short)), short);
        assert!(!hung.ok && hung.detail.contains("did not finish on main within 200ms"), "{hung:?}");
        assert_eq!(hung.fix.as_deref(), Some("--check-timeout <longer> (or fix the test that hangs)"));
        // cargo's own output, replayed: fail-fast is refused with the fixed command line.
        let early = CheckRun {
            output: include_bytes!("../pool/testreport/fixtures/cargo_fail_fast.txt").to_vec(),
            report: testreport::parse(include_str!("../pool/testreport/fixtures/cargo_fail_fast.txt")),
            ..ran("exit 101", None)
        };
        let stopped = base_item("cargo test --locked", "main", &early, t);
        assert!(!stopped.ok && stopped.detail.contains("(src/lib.rs)"), "{stopped:?}");
        assert_eq!(
            stopped.fix.as_deref(),
            Some("add --no-fail-fast to the check: --check 'cargo test --no-fail-fast --locked'")
        );
        let all = CheckRun {
            output: include_bytes!("../pool/testreport/fixtures/cargo_no_fail_fast.txt").to_vec(),
            report: testreport::parse(include_str!("../pool/testreport/fixtures/cargo_no_fail_fast.txt")),
            ..ran("exit 101", None)
        };
        let judged = base_item("cargo test --no-fail-fast", "main", &all, t);
        assert!(judged.ok && judged.detail.contains("fails 4 test(s) (libtest report, exit 101)"), "{judged:?}");
        // A check that fails without a report, or passes, holds.
        assert!(base_item("exit 3", "main", &ran("exit 3", None), t).ok);
        let passes = base_item("true", "main", &ran("true", None), t);
        assert!(passes.ok && passes.detail.starts_with("`true` on main passes in"), "{passes:?}");
    }

    #[test]
    fn a_quorum_above_the_other_agents_is_refused_with_the_one_that_holds() {
        // (agents, --quorum, allowSelfEndorse) → ok, fix
        type Row<'a> = (usize, Option<u32>, bool, bool, Option<&'a str>);
        let table: &[Row] = &[
            (3, None, false, true, None),
            (2, None, false, false, Some("--quorum 1")),
            (2, Some(1), false, true, None),
            (2, None, true, true, None),
            (4, Some(4), false, false, Some("--quorum 3")),
            (4, None, false, true, None),
            (1, None, false, false, None),
            (1, None, true, true, None),
        ];
        for (agents, quorum, allow_self, ok, fix) in table {
            let item = quorum_item(*agents, *quorum, *allow_self);
            assert_eq!(item.ok, *ok, "{agents} {quorum:?} {allow_self}: {item:?}");
            if let Some(fix) = fix {
                assert_eq!(item.fix.as_deref(), Some(*fix));
            }
            if !item.ok {
                assert!(item.fix.is_some());
            }
        }
    }
}

//! The development class end to end: runs, worktrees, proposals, endorsements, tallies, landings
//! and the convergence report — the real binary, real repositories, real linked worktrees and real
//! check commands.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

mod build_slots;
mod checkout_crash;
mod crash;
mod endorse;
mod land;
mod propose;
mod report;
mod runs;
mod tally;
mod worktrees;

/// What `git mas ARGS --json` printed, deserialized.
fn parse<T: serde::de::DeserializeOwned>(args: &[&str], out: &str) -> T {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{args:?} --json is not its documented shape ({e}): {out}"))
}

/// A repository holding the fixture project, agents on its committed roster.
pub struct Team {
    pub env: TestEnv,
    pub repo: PathBuf,
}

impl Team {
    pub fn new(agents: &[&str]) -> Self {
        let env = TestEnv::new();
        let repo = env.team(agents).build().repo;
        Team { env, repo }
    }

    /// `git mas --agent AGENT ARGS…` in `dir`, whatever the exit code.
    #[must_use]
    pub fn as_agent(&self, dir: &Path, agent: &str, args: &[&str]) -> std::process::Output {
        let mut all = vec!["--agent", agent];
        all.extend_from_slice(args);
        self.env.mas(dir, &all)
    }

    /// Like [`Team::as_agent`], asserting success; returns stdout.
    #[must_use]
    pub fn ok(&self, dir: &Path, agent: &str, args: &[&str]) -> String {
        let out = self.as_agent(dir, agent, args);
        assert!(
            out.status.success(),
            "{agent}: git mas {args:?} exited {:?}\nstdout: {}\nstderr: {}",
            out.status.code(),
            stdout(&out),
            stderr(&out)
        );
        stdout(&out)
    }

    /// Like [`Team::ok`], for a step whose output the test does not read.
    pub fn quiet_ok(&self, dir: &Path, agent: &str, args: &[&str]) {
        let _ = self.ok(dir, agent, args);
    }

    /// Starts a run as `agent` with extra flags; returns its id.
    #[must_use]
    pub fn start(&self, agent: &str, extra: &[&str]) -> String {
        let mut args = vec!["run", "start", "--goal", "make the fixture better"];
        args.extend_from_slice(extra);
        self.ok(&self.repo, agent, &args).trim().to_string()
    }

    /// Parses `git mas ARGS --json` run as `agent` in `dir`.
    #[must_use]
    pub fn json(&self, dir: &Path, agent: &str, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.ok(dir, agent, &all);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?} --json is not JSON ({e}): {out}"))
    }

    /// `git mas ARGS --json` run as `agent` in `dir`, deserialized into the command's own output
    /// type.
    #[must_use]
    pub fn json_as<T: serde::de::DeserializeOwned>(&self, dir: &Path, agent: &str, args: &[&str]) -> T {
        let mut all = args.to_vec();
        all.push("--json");
        parse(args, &self.ok(dir, agent, &all))
    }

    /// Creates `agent`'s worktree for `run`; returns its path.
    #[must_use]
    pub fn worktree(&self, run: &str, agent: &str) -> PathBuf {
        PathBuf::from(self.ok(&self.repo, agent, &["worktree", "add", agent, "--run", run]).trim())
    }

    /// Runs git-mas in `dir` with no --agent (the worktree's config names the agent), asserting
    /// success; returns stdout.
    #[must_use]
    pub fn here(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.env.mas(dir, args);
        assert!(
            out.status.success(),
            "git mas {args:?} in {} exited {:?}\nstdout: {}\nstderr: {}",
            dir.display(),
            out.status.code(),
            stdout(&out),
            stderr(&out)
        );
        stdout(&out)
    }

    /// Like [`Team::here`], for a step whose output the test does not read.
    pub fn here_quiet_ok(&self, dir: &Path, args: &[&str]) {
        let _ = self.here(dir, args);
    }

    /// `git mas land … --json` in `dir`, as the CLI's own shape.
    #[must_use]
    pub fn land_json(&self, dir: &Path, args: &[&str]) -> crate::json::land::LandOut {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.here(dir, &all);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?} --json is not land's shape ({e}): {out}"))
    }

    /// Like [`Team::here`] with --json, parsed.
    #[must_use]
    pub fn here_json(&self, dir: &Path, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.here(dir, &all);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?} --json is not JSON ({e}): {out}"))
    }

    /// Like [`Team::here_json`], deserialized into the command's own output type.
    #[must_use]
    pub fn here_as<T: serde::de::DeserializeOwned>(&self, dir: &Path, args: &[&str]) -> T {
        let mut all = args.to_vec();
        all.push("--json");
        parse(args, &self.here(dir, &all))
    }

    #[must_use]
    pub fn git(&self, args: &[&str]) -> String {
        self.env.git(&self.repo, args)
    }

    /// `git ARGS` in the repository, asserting success, for a step whose output the test does not
    /// read.
    pub fn git_quiet_ok(&self, args: &[&str]) {
        self.env.git_quiet_ok(&self.repo, args);
    }

    /// Whether `git ARGS` succeeds in the repository.
    #[must_use]
    pub fn git_ok(&self, args: &[&str]) -> bool {
        self.env.git_cmd(&self.repo).args(args).output().expect("run git").status.success()
    }

    #[must_use]
    pub fn main_tip(&self) -> String {
        self.git(&["rev-parse", "refs/heads/main"])
    }

    /// All refs, to check a refused command changed none.
    #[must_use]
    pub fn refs(&self) -> String {
        self.env.refs(&self.repo)
    }
}

/// Asserts a refused command: exit code `code`, stderr containing `want`, and no ref changed.
pub fn assert_refused(team: &Team, out: std::process::Output, code: i32, want: &str, refs_before: &str) {
    assert_eq!(out.status.code(), Some(code), "stdout: {}\nstderr: {}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(want), "stderr lacks {want:?}:\n{err}");
    assert_eq!(team.refs(), refs_before, "a refused command changed refs");
}

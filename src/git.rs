//! The way git is started: one place that decides its environment.
//!
//! git-mas runs git as a library would, in a directory it names: nothing the caller's environment
//! holds may send git to another repository, index or work tree (a hook runs with `GIT_DIR` and
//! `GIT_INDEX_FILE` set; a test harness may export them), and git's messages are read by code, so
//! they come in one language (`LC_ALL=C`). Read-only commands must not take the index lock that a
//! concurrent `read-tree -m -u` of the same checkout needs (`GIT_OPTIONAL_LOCKS=0`).
//!
//! And one way its failures are read: [`run`] (and [`run_with`] for a command prepared with more
//! environment) gives stdout or a [`GitError`] that says which command, how it ended and what git
//! said; [`run_allowing`] lets a caller take named exit codes as answers (`git config KEY` exits
//! 1 for an unset key). Every module maps that one error into its own, so what git said reaches
//! the user the same way from every command.

use std::path::Path;
use std::process::Command;

/// How running git failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not be started.
    #[error("cannot run git {args}: {source}")]
    Spawn {
        /// The arguments, joined by spaces.
        args: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// git ran and exited with a status the caller did not take as an answer.
    #[error("git {args} failed ({status}): {stderr}")]
    Failed {
        /// The arguments, joined by spaces.
        args: String,
        /// How it ended (`exit status: 128`, or the signal).
        status: String,
        /// Its exit code (`None`: killed by a signal).
        code: Option<i32>,
        /// What git said on stderr, trimmed.
        stderr: String,
    },
}

impl GitError {
    /// The arguments of the command that failed, joined by spaces.
    pub fn args(&self) -> &str {
        match self {
            GitError::Spawn { args, .. } | GitError::Failed { args, .. } => args,
        }
    }

    /// Why, in git's words: what it said on stderr, or why it could not be started.
    pub fn reason(&self) -> String {
        match self {
            GitError::Spawn { source, .. } => source.to_string(),
            GitError::Failed { stderr, .. } => stderr.clone(),
        }
    }
}

/// `git ARGS` in `dir`: its stdout, when it exits 0.
pub fn run(dir: &Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
    run_with(command(dir), args)
}

/// A prepared git command ([`command`] with more environment) run with `args`: its stdout, when
/// it exits 0.
pub fn run_with(cmd: Command, args: &[&str]) -> Result<Vec<u8>, GitError> {
    run_allowing_with(cmd, args, &[]).map(|(_, out)| out)
}

/// `git ARGS` in `dir`, taking exit 0 and the codes in `answers` as answers: (code, stdout).
pub fn run_allowing(dir: &Path, args: &[&str], answers: &[i32]) -> Result<(i32, Vec<u8>), GitError> {
    run_allowing_with(command(dir), args, answers)
}

fn run_allowing_with(mut cmd: Command, args: &[&str], answers: &[i32]) -> Result<(i32, Vec<u8>), GitError> {
    let out = cmd.args(args).output().map_err(|source| GitError::Spawn { args: args.join(" "), source })?;
    finish(out, args, answers)
}

/// What a finished `git ARGS` gave, read as [`run_allowing`] reads it: for a caller that runs the
/// command itself (to run it again while another process holds a lock, say).
pub fn finish(out: std::process::Output, args: &[&str], answers: &[i32]) -> Result<(i32, Vec<u8>), GitError> {
    match out.status.code() {
        Some(code) if code == 0 || answers.contains(&code) => Ok((code, out.stdout)),
        code => Err(GitError::Failed {
            args: args.join(" "),
            status: out.status.to_string(),
            code,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        }),
    }
}

/// The variables that would make git act on another repository, index or work tree than the one
/// in the directory it is started in.
pub const REDIRECTING: [&str; 7] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_PREFIX",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
];

/// A `git` command started in `dir`, with the redirecting variables removed, messages in the C
/// locale and optional locks off.
pub fn command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir);
    for var in REDIRECTING {
        cmd.env_remove(var);
    }
    cmd.env("LC_ALL", "C").env("GIT_OPTIONAL_LOCKS", "0");
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirecting_environment_does_not_reach_git() {
        let cmd = command(Path::new("/"));
        let envs: Vec<_> = cmd.get_envs().collect();
        for var in REDIRECTING {
            assert!(envs.iter().any(|(k, v)| *k == var && v.is_none()), "{var} is not removed: {envs:?}");
        }
        assert!(envs.iter().any(|(k, v)| *k == "LC_ALL" && *v == Some(std::ffi::OsStr::new("C"))));
        assert_eq!(cmd.get_current_dir(), Some(Path::new("/")));
    }

    #[test]
    fn a_failing_command_says_which_how_and_what_git_said() {
        let dir = std::env::temp_dir();
        let e = run(&dir, &["rev-parse", "--no-such-option-here"]).unwrap_err();
        assert_eq!(e.args(), "rev-parse --no-such-option-here");
        assert!(matches!(&e, GitError::Failed { code: Some(c), .. } if *c != 0), "{e:?}");
        // `git config` of an unset key is an answer when asked for.
        let scratch = dir.join(format!("git-mas-git-run-{}", std::process::id()));
        std::fs::create_dir_all(&scratch).unwrap();
        run(&scratch, &["init", "-q"]).unwrap();
        let (code, out) = run_allowing(&scratch, &["config", "mas.nothing"], &[1]).unwrap();
        assert_eq!((code, out.is_empty()), (1, true));
        assert!(run(&scratch, &["config", "mas.nothing"]).is_err());
        std::fs::remove_dir_all(&scratch).unwrap();
    }
}

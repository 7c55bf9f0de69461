//! The way git is started: one place that decides its environment.
//!
//! git-mas runs git as a library would, in a directory it names: nothing the caller's environment
//! holds may send git to another repository, index or work tree (a hook runs with `GIT_DIR` and
//! `GIT_INDEX_FILE` set; a test harness may export them), and git's messages are read by code, so
//! they come in one language (`LC_ALL=C`). Read-only commands must not take the index lock that a
//! concurrent `read-tree -m -u` of the same checkout needs (`GIT_OPTIONAL_LOCKS=0`).
//!
//! And one way it is run and its failures read: [`Git`] (with [`run`] and [`run_allowing`] for
//! the plain cases) gives git's output or a [`GitError`] that says which command, how it ended
//! and what git said. A caller adds what its command needs — a variable (`GIT_INDEX_FILE`), bytes
//! on stdin, exit codes taken as answers (`git config KEY` exits 1 for an unset key) — and maps
//! that one error into its own, so what git said reaches the user the same way from every
//! command. Only a process that must outlive the call or stream its output starts [`command`]
//! itself (the layering tests name each such site).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
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
    Git::new(dir).run(args)
}

/// `git ARGS` in `dir`, taking exit 0 and the codes in `answers` as answers: (code, stdout).
pub fn run_allowing(dir: &Path, args: &[&str], answers: &[i32]) -> Result<(i32, Vec<u8>), GitError> {
    Git::new(dir).answers(answers).output(args).map(|out| (out.code, out.stdout))
}

/// One git command to run in a directory: [`command`]'s environment with the variables the caller
/// adds or removes, the bytes it writes to git's stdin, and the exit codes besides 0 it takes as
/// answers. Built once, it runs any number of times ([`Git::output`], [`Git::run`]).
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
    env: Vec<(OsString, Option<OsString>)>,
    input: Option<Vec<u8>>,
    answers: Vec<i32>,
}

/// What a git command that ended with an answer gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Its exit code: 0, or one of the answers asked for.
    pub code: i32,
    /// What it wrote on stdout.
    pub stdout: Vec<u8>,
    /// What it wrote on stderr (git's progress and the remote's lines).
    pub stderr: Vec<u8>,
}

impl Git {
    /// git started in `dir`, with [`command`]'s environment.
    pub fn new(dir: &Path) -> Git {
        Git { dir: dir.to_path_buf(), env: Vec::new(), input: None, answers: Vec::new() }
    }

    /// Sets `key` to `value` for git (a redirecting variable too: the caller names it on purpose).
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Git {
        self.env.push((key.as_ref().to_os_string(), Some(value.as_ref().to_os_string())));
        self
    }

    /// Removes `key` from git's environment.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Git {
        self.env.push((key.as_ref().to_os_string(), None));
        self
    }

    /// Writes `bytes` to git's stdin (else git reads an empty stdin).
    pub fn input(mut self, bytes: impl Into<Vec<u8>>) -> Git {
        self.input = Some(bytes.into());
        self
    }

    /// Takes the exit codes in `codes`, besides 0, as answers rather than failures.
    pub fn answers(mut self, codes: &[i32]) -> Git {
        self.answers = codes.to_vec();
        self
    }

    /// Runs `git ARGS`: its code and output when it exits 0 or with an answer, else the
    /// [`GitError`] that says which command, how it ended and what git said.
    pub fn output<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<Output, GitError> {
        let shown = || args.iter().map(|a| a.as_ref().to_string_lossy()).collect::<Vec<_>>().join(" ");
        let mut cmd = command(&self.dir);
        cmd.args(args);
        for (key, value) in &self.env {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        let out = ended(cmd, self.input.as_deref()).map_err(|source| GitError::Spawn { args: shown(), source })?;
        match out.status.code() {
            Some(code) if code == 0 || self.answers.contains(&code) => {
                Ok(Output { code, stdout: out.stdout, stderr: out.stderr })
            }
            code => Err(GitError::Failed {
                args: shown(),
                status: out.status.to_string(),
                code,
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            }),
        }
    }

    /// Runs `git ARGS`: its stdout when it exits 0 or with an answer.
    pub fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<Vec<u8>, GitError> {
        self.output(args).map(|out| out.stdout)
    }
}

/// `cmd` run to its end, `input` written to its stdin meanwhile (from another thread: git may
/// write a full pipe of output before it reads all of its input).
fn ended(mut cmd: Command, input: Option<&[u8]>) -> std::io::Result<std::process::Output> {
    use std::io::Write as _;
    use std::process::Stdio;
    let Some(input) = input else { return cmd.output() };
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let stdin = child.stdin.take();
    std::thread::scope(|s| {
        if let Some(mut pipe) = stdin {
            // A git that stops reading has failed or has no use for the rest: its exit says which.
            s.spawn(move || {
                let _ = pipe.write_all(input);
            });
        }
        child.wait_with_output()
    })
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

    #[test]
    fn input_variables_and_answers_reach_git() {
        let dir = tempfile::tempdir().unwrap();
        run(dir.path(), &["init", "-q"]).unwrap();
        // Input larger than a pipe holds, written while git runs.
        let big = "x".repeat(1 << 20);
        let id = Git::new(dir.path()).input(big.as_str()).run(&["hash-object", "-w", "--stdin"]).unwrap();
        let back = run(dir.path(), &["cat-file", "blob", String::from_utf8_lossy(&id).trim()]).unwrap();
        assert_eq!(back, big.as_bytes());
        let named = Git::new(dir.path()).env("GIT_AUTHOR_NAME", "Ada").run(&["var", "GIT_AUTHOR_IDENT"]).unwrap();
        assert!(String::from_utf8_lossy(&named).starts_with("Ada "), "{named:?}");
        let unset = Git::new(dir.path()).answers(&[1]).output(&["config", "mas.nothing"]).unwrap();
        assert_eq!((unset.code, unset.stdout.is_empty()), (1, true));
        let e = Git::new(dir.path()).answers(&[1]).output(&["cat-file", "blob", "0000"]).unwrap_err();
        assert!(matches!(&e, GitError::Failed { code: Some(128), stderr, .. } if !stderr.is_empty()), "{e:?}");
    }
}

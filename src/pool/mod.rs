//! The result pool outside `main`: agents' worktrees, their proposals, scratch checkouts and the
//! checks run in them.
//!
//! Seed 001 §7.1: intermediate work never lands in the delivery branch. Each agent works in its own
//! linked worktree ([`worktree`]), detached at the run's base; `propose` turns that worktree into a
//! tree and a commit whose parent is the base, kept under `refs/mas/runs/<run>/proposals/<agent>`
//! ([`proposal`]); endorsers run the team's check in a throw-away checkout of a proposal
//! ([`check`]). Only `land` writes to `main`.
//!
//! The git command line is used where it is the reference implementation of a user-visible
//! behaviour — which files `git add -A` takes (ignore rules, attributes, filters), `git worktree`'s
//! bookkeeping, `read-tree -m -u` updating a checked-out branch — and always with its own temporary
//! index where an index is needed, so no user's index or working tree is touched.

pub mod build_slot;
pub mod check;
pub mod lockfile;
pub mod merge;
pub mod proposal;
pub mod testfiles;
pub mod testreport;
pub mod worktree;

use std::path::{Path, PathBuf};
use thiserror::Error;

/// Errors of the pool.
#[derive(Debug, Error)]
pub enum PoolError {
    /// A git command failed.
    #[error("`git {args}` failed ({status}): {stderr}")]
    Git {
        /// The arguments.
        args: String,
        /// Its exit status.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// git could not be started.
    #[error("cannot run git: {0}")]
    Spawn(#[source] std::io::Error),
    /// A file operation failed.
    #[error("cannot access {}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// The integration branch moved while landing: plan again.
    #[error("the integration branch moved while landing")]
    MainMoved {
        /// The branch.
        branch: String,
    },
    /// A text that should be an object id is not one (a record's field, git's output).
    #[error("{text:?} is not an object id")]
    NotAnObjectId {
        /// The text.
        text: String,
    },
    /// `git write-tree` printed something other than a tree id.
    #[error("git write-tree printed {printed:?}, not a tree id")]
    WriteTreeOutput {
        /// What it printed.
        printed: String,
    },
    /// The agent has a worktree for the run already.
    #[error("{agent} already has a worktree for run {run} at {}", path.display())]
    WorktreeExists {
        /// The agent.
        agent: String,
        /// The run.
        run: String,
        /// Where it is.
        path: PathBuf,
    },
    /// A worktree's path is taken.
    #[error("{} already exists and is not empty", path.display())]
    PathNotEmpty {
        /// The path.
        path: PathBuf,
    },
    /// A path git must be given is not UTF-8.
    #[error("{} is not UTF-8", path.display())]
    PathNotUtf8 {
        /// The path.
        path: PathBuf,
    },
    /// A tree holds an entry that is never checked out (`.git`, `..`, a name with a slash).
    #[error("tree {tree} holds an entry named {name:?}, which is not checked out")]
    UnsafeTreeEntry {
        /// The tree.
        tree: String,
        /// The entry's name.
        name: String,
    },
    /// The check command could not be started.
    #[error("cannot start `sh -c {command}`: {source}")]
    CheckSpawn {
        /// The command.
        command: String,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// An aggregate landing waits until every proposal reached quorum or was judged against.
    #[error(
        "an aggregate landing waits for every proposal to reach quorum or be judged against; still waiting for {}",
        waiting.join(", ")
    )]
    AggregateWaiting {
        /// The run.
        run: String,
        /// The proposals still waiting, each as `agent (endorsements/quorum)`.
        waiting: Vec<String>,
    },
    /// No proposal of an aggregate reached quorum.
    #[error("no proposal has reached the quorum of {quorum}")]
    NoProposalAtQuorum {
        /// The run.
        run: String,
        /// The quorum.
        quorum: u32,
    },
    /// The leader has not reached quorum (or there is no leader).
    #[error("no proposal has reached the quorum of {quorum}: {}", leader_text(leader.as_ref(), *quorum))]
    QuorumNotReached {
        /// The run.
        run: String,
        /// The quorum.
        quorum: u32,
        /// The leader and its valid endorsements; `None` when no proposal has any.
        leader: Option<(String, usize)>,
    },
    /// A proposal at quorum whose latest check by some endorser failed.
    #[error(
        "{agent}'s proposal reached quorum, but the latest check by {} failed on it (test_failure); it lands after a passing re-check or a re-proposal",
        endorsers.join(", ")
    )]
    CheckFailed {
        /// The run.
        run: String,
        /// The proposer.
        agent: String,
        /// The endorsers whose check failed.
        endorsers: Vec<String>,
    },
    /// A proposal at quorum whose dependencies are inconsistent.
    #[error("{detail} (dependency_inconsistency)")]
    DependencyInconsistent {
        /// The run.
        run: String,
        /// The proposer.
        agent: String,
        /// What is inconsistent.
        detail: String,
    },
    /// The integration branch does not exist.
    #[error("the branch {branch} does not exist")]
    NoBranch {
        /// The branch.
        branch: String,
    },
    /// A plan names no proposal.
    #[error("no proposal to land")]
    NothingToLand {
        /// The run.
        run: String,
    },
    /// A blocked plan was given to be written.
    #[error("the landing is blocked")]
    LandingBlocked {
        /// The run.
        run: String,
    },
    /// A checkout of the integration branch that cannot follow the landing (uncommitted changes).
    #[error("{branch} is checked out at {} and cannot follow the landing: {why}", path.display())]
    CheckoutCannotFollow {
        /// The branch.
        branch: String,
        /// The checkout.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The landed ref exists although the meta chain records no landing.
    #[error(
        "{refname} already exists (at {existing}) although the run's meta chain records no landing; it was written outside `git mas land`"
    )]
    LandedRefExists {
        /// The ref.
        refname: String,
        /// Its value.
        existing: String,
    },
    /// Appending the landing intent wrote no record.
    #[error("the landing wrote nothing")]
    NothingWritten {
        /// The run.
        run: String,
    },
    /// A store failure.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// A run failure.
    #[error(transparent)]
    Run(#[from] crate::devrun::RunError),
}

impl PoolError {
    /// Whether this is a refusal: the caller's input or the repository's state stands in the way
    /// (a run not ready to land, a path taken), not a failure of git or of git-mas.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            PoolError::WorktreeExists { .. }
                | PoolError::PathNotEmpty { .. }
                | PoolError::PathNotUtf8 { .. }
                | PoolError::UnsafeTreeEntry { .. }
                | PoolError::CheckSpawn { .. }
                | PoolError::AggregateWaiting { .. }
                | PoolError::NoProposalAtQuorum { .. }
                | PoolError::QuorumNotReached { .. }
                | PoolError::CheckFailed { .. }
                | PoolError::DependencyInconsistent { .. }
                | PoolError::NoBranch { .. }
                | PoolError::NothingToLand { .. }
                | PoolError::CheckoutCannotFollow { .. }
                | PoolError::LandedRefExists { .. }
        )
    }
}

fn leader_text(leader: Option<&(String, usize)>, quorum: u32) -> String {
    match leader {
        Some((l, n)) => format!("the leader, {l}, has {n}/{quorum}"),
        None => "no proposal has a valid endorsement".into(),
    }
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PoolError + '_ {
    move |source| PoolError::Io { path: path.to_path_buf(), source }
}

/// Runs a prepared git command; returns its stdout with the trailing newline trimmed.
pub fn run_git(git: &crate::git::Git, args: &[&str]) -> Result<String, PoolError> {
    // Another git process holding a worktree's index lock for a moment (a concurrent landing
    // updating the same checkout): wait for it, briefly, instead of failing.
    let mut tries = 0;
    let out = loop {
        match git.run(args) {
            Err(crate::git::GitError::Failed { stderr, .. }) if tries < 40 && stderr.contains("index.lock") => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
            done => break done?,
        }
    };
    Ok(String::from_utf8_lossy(&out).trim_end().to_string())
}

impl From<crate::git::GitError> for PoolError {
    fn from(e: crate::git::GitError) -> Self {
        match e {
            crate::git::GitError::Spawn { source, .. } => PoolError::Spawn(source),
            crate::git::GitError::Failed { args, status, stderr, .. } => PoolError::Git { args, status, stderr },
        }
    }
}

/// Runs `git ARGS` in `dir`.
pub fn git(dir: &Path, args: &[&str]) -> Result<String, PoolError> {
    run_git(&crate::git::Git::new(dir), args)
}

/// A scratch name owned by this process: `<prefix><ns>-<pid>-<random>`, where `ns` names the pid
/// namespace (the inode of `/proc/self/ns/pid`, `0` where there is none), so that
/// [`sweep_dead`] can tell whose scratch it is and whether its owner still runs.
pub(crate) fn owned_name(prefix: &str) -> String {
    format!("{prefix}{}-{}-{}", pid_namespace(), std::process::id(), random_hex())
}

/// A scratch name owned by this process for the repository whose common git dir has tag `repo`
/// ([`repo_tag`]): `<prefix><ns>-<pid>-<repo>-<random>`. [`owner_pid`] reads it as it reads an
/// `owned_name`; [`scratch_repo_tag`] gives the repository back.
pub(crate) fn owned_name_for(prefix: &str, repo: &str) -> String {
    format!("{prefix}{}-{}-{repo}-{}", pid_namespace(), std::process::id(), random_hex())
}

/// The tag of a repository in scratch names: the first 12 hex digits of the SHA-256 of its common
/// git dir's canonical path, the same from every worktree of one clone.
pub fn repo_tag(common_dir: &Path) -> String {
    use sha2::Digest;
    let path = common_dir.canonicalize().unwrap_or_else(|_| common_dir.to_path_buf());
    let digest = sha2::Sha256::digest(path.as_os_str().as_encoded_bytes());
    digest[..6].iter().map(|b| format!("{b:02x}")).collect()
}

/// The repository tag in a scratch name made by `owned_name_for` (in any pid namespace);
/// `None` for a name without one (made by `owned_name`, or by an older release).
pub fn scratch_repo_tag(name: &str, prefix: &str) -> Option<String> {
    let parts: Vec<&str> = name.strip_prefix(prefix)?.splitn(4, '-').collect();
    match parts.as_slice() {
        [_, _, tag, random] if tag.len() == 12 && tag.bytes().all(|b| b.is_ascii_hexdigit()) && !random.is_empty() => {
            Some(tag.to_string())
        }
        _ => None,
    }
}

pub(crate) fn pid_namespace() -> String {
    std::fs::read_link("/proc/self/ns/pid")
        .ok()
        .and_then(|l| {
            let text = l.to_string_lossy().into_owned();
            let inner = text.strip_prefix("pid:[")?.strip_suffix(']')?.to_string();
            inner.chars().all(|c| c.is_ascii_digit()).then_some(inner)
        })
        .unwrap_or_else(|| "0".into())
}

/// Removes the entries of `dir` (files or directories) named `<prefix><ns>-<pid>-…` by
/// `owned_name` whose process is gone — scratch space left by a git-mas that was killed — and
/// returns them. Entries of another pid namespace, of a live process, or of a process this user
/// may not signal are left alone; a reused pid only delays the sweep.
pub fn sweep_dead(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return removed };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = owner_pid(&name, prefix) else { continue };
        if pid == std::process::id() || process_running(pid) != Some(false) {
            continue;
        }
        let path = entry.path();
        let gone = if path.is_dir() && !path.is_symlink() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        if gone.is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// The process id in a scratch name made by `owned_name`, when it belongs to this pid namespace
/// (`None`: not such a name, or another namespace's, whose process ids mean nothing here).
pub fn owner_pid(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    let mut parts = rest.splitn(3, '-');
    let (entry_ns, pid, tail) = (parts.next()?, parts.next()?, parts.next()?);
    if entry_ns != pid_namespace() || tail.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok().filter(|&p| p > 0)
}

/// Whether process `pid` runs (`Some(true)` also when it runs as a user we may not signal),
/// `None` when that cannot be told.
pub fn process_running(pid: u32) -> Option<bool> {
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid).ok()?)?;
    match rustix::process::test_kill_process(pid) {
        Err(rustix::io::Errno::SRCH) => Some(false),
        Ok(()) | Err(rustix::io::Errno::PERM) => Some(true),
        Err(_) => None,
    }
}

/// A fresh random hex string for scratch names.
pub(crate) fn random_hex() -> String {
    crate::devrun::events::new_event_id()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_name_carries_its_repositorys_tag_and_its_owner() {
        let (a, b) = (repo_tag(Path::new("/nonexistent/a/.git")), repo_tag(Path::new("/nonexistent/b/.git")));
        assert_eq!(a.len(), 12);
        assert_ne!(a, b);
        let name = owned_name_for("git-mas-check-", &a);
        assert_eq!(scratch_repo_tag(&name, "git-mas-check-"), Some(a));
        assert_eq!(owner_pid(&name, "git-mas-check-"), Some(std::process::id()));
        for untagged in [owned_name("git-mas-check-"), "git-mas-check-0123456789abcdef".to_string()] {
            assert_eq!(scratch_repo_tag(&untagged, "git-mas-check-"), None, "{untagged}");
        }
    }

    #[test]
    fn each_error_says_what_was_refused_and_whether_it_is_a_refusal() {
        let p = || PathBuf::from("/w/alice");
        let table: Vec<(PoolError, &str, bool)> = vec![
            (PoolError::MainMoved { branch: "main".into() }, "the integration branch moved while landing", false),
            (PoolError::NotAnObjectId { text: "xyz".into() }, "\"xyz\" is not an object id", false),
            (PoolError::WriteTreeOutput { printed: "?".into() }, "git write-tree printed \"?\", not a tree id", false),
            (
                PoolError::WorktreeExists { agent: "alice".into(), run: "r1".into(), path: p() },
                "alice already has a worktree for run r1 at /w/alice",
                true,
            ),
            (PoolError::PathNotEmpty { path: p() }, "/w/alice already exists and is not empty", true),
            (PoolError::PathNotUtf8 { path: p() }, "/w/alice is not UTF-8", true),
            (
                PoolError::UnsafeTreeEntry { tree: "t1".into(), name: ".git".into() },
                "tree t1 holds an entry named \".git\", which is not checked out",
                true,
            ),
            (
                PoolError::CheckSpawn { command: "make".into(), source: std::io::Error::other("no sh") },
                "cannot start `sh -c make`: no sh",
                true,
            ),
            (
                PoolError::AggregateWaiting {
                    run: "r1".into(),
                    waiting: vec!["bob (0/2)".into(), "carol (1/2)".into()],
                },
                "an aggregate landing waits for every proposal to reach quorum or be judged against; still waiting for bob (0/2), carol (1/2)",
                true,
            ),
            (
                PoolError::NoProposalAtQuorum { run: "r1".into(), quorum: 2 },
                "no proposal has reached the quorum of 2",
                true,
            ),
            (
                PoolError::QuorumNotReached { run: "r1".into(), quorum: 2, leader: Some(("alice".into(), 1)) },
                "no proposal has reached the quorum of 2: the leader, alice, has 1/2",
                true,
            ),
            (
                PoolError::QuorumNotReached { run: "r1".into(), quorum: 2, leader: None },
                "no proposal has reached the quorum of 2: no proposal has a valid endorsement",
                true,
            ),
            (
                PoolError::CheckFailed { run: "r1".into(), agent: "alice".into(), endorsers: vec!["bob".into()] },
                "alice's proposal reached quorum, but the latest check by bob failed on it (test_failure); it lands after a passing re-check or a re-proposal",
                true,
            ),
            (
                PoolError::DependencyInconsistent {
                    run: "r1".into(),
                    agent: "alice".into(),
                    detail: "stale base".into(),
                },
                "stale base (dependency_inconsistency)",
                true,
            ),
            (PoolError::NoBranch { branch: "main".into() }, "the branch main does not exist", true),
            (PoolError::NothingToLand { run: "r1".into() }, "no proposal to land", true),
            (PoolError::LandingBlocked { run: "r1".into() }, "the landing is blocked", false),
            (
                PoolError::CheckoutCannotFollow { branch: "main".into(), path: p(), why: "dirty".into() },
                "main is checked out at /w/alice and cannot follow the landing: dirty",
                true,
            ),
            (
                PoolError::LandedRefExists { refname: "refs/mas/runs/r1/landed".into(), existing: "c1".into() },
                "refs/mas/runs/r1/landed already exists (at c1) although the run's meta chain records no landing; it was written outside `git mas land`",
                true,
            ),
            (PoolError::NothingWritten { run: "r1".into() }, "the landing wrote nothing", false),
        ];
        for (error, message, refusal) in &table {
            assert_eq!(error.to_string(), *message);
            assert_eq!(error.is_refusal(), *refusal, "{message}");
        }
    }

    #[test]
    fn sweeping_removes_what_dead_processes_left_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let ns = pid_namespace();
        // A process that has exited, one that runs, and this one.
        let mut done = std::process::Command::new("true").spawn().unwrap();
        done.wait().unwrap();
        let mut live = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let dead_dir = dir.path().join(format!("x-{ns}-{}-aa", done.id()));
        let dead_file = dir.path().join(format!("x-{ns}-{}-bb.out", done.id()));
        let live_dir = dir.path().join(format!("x-{ns}-{}-cc", live.id()));
        let mine = dir.path().join(owned_name("x-"));
        let other_ns = dir.path().join(format!("x-1{ns}-{}-dd", done.id()));
        let unrelated = dir.path().join(format!("y-{ns}-{}-ee", done.id()));
        for d in [&dead_dir, &live_dir, &mine, &other_ns, &unrelated] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(dead_dir.join("file"), "x").unwrap();
        std::fs::write(&dead_file, "x").unwrap();
        let mut removed = sweep_dead(dir.path(), "x-");
        removed.sort();
        let mut want = vec![dead_dir.clone(), dead_file.clone()];
        want.sort();
        assert_eq!(removed, want);
        for kept in [&live_dir, &mine, &other_ns, &unrelated] {
            assert!(kept.exists(), "{} was removed", kept.display());
        }
        live.kill().unwrap();
        live.wait().unwrap();
        assert_eq!(sweep_dead(dir.path(), "x-"), vec![live_dir]);
    }
}

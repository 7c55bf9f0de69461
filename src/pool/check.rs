//! Running the team's check against a tree: a scratch checkout written straight from the object
//! database, the command run there with `sh -c`, its output captured and digested.
//!
//! The checkout is a plain directory outside every repository (no `.git`, no worktree bookkeeping,
//! nothing to prune if the process dies), written from the tree itself: regular and executable
//! files, symbolic links, and an empty directory for a submodule. `GIT_CEILING_DIRECTORIES` keeps a
//! check that calls git from finding a repository above it.
//!
//! A killed git-mas cannot remove its scratch checkout, so the name says whose it is:
//! `git-mas-check-<pid namespace>-<pid>-<repository>-<random>` (and its output file, the same
//! name with `.out`) under the temporary directory, where `<repository>` tags the repository's
//! common git dir (`pool::repo_tag`): the temporary directory is shared by every repository on the
//! machine, and `git mas doctor` lists only its own repository's. Every new scratch first sweeps the ones whose process is
//! gone (`pool::sweep_dead`), so what a crash leaves lives until the next check.

use super::testreport::{self, TestReport};
use super::{PoolError, io_err};
use crate::devrun::CheckSummary;
use crate::runtime::TestDelta;
use crate::store::Store;
use gix::ObjectId;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How much of a check's output is kept (the digest covers all of it).
pub const OUTPUT_KEEP: usize = 1 << 20;

/// How scratch checkouts' names begin.
pub const SCRATCH_PREFIX: &str = "git-mas-check-";

/// A scratch directory, removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// A new empty directory under the system's temporary directory for the repository whose
    /// common git dir is `owner` (its tag is in the name, so that `git mas doctor` in another
    /// repository leaves it out), after sweeping those that killed processes left.
    pub fn new(owner: &Path) -> Result<Self, PoolError> {
        let tmp = std::env::temp_dir();
        super::sweep_dead(&tmp, SCRATCH_PREFIX);
        let path = tmp.join(super::owned_name_for(SCRATCH_PREFIX, &super::repo_tag(owner)));
        std::fs::create_dir_all(&path).map_err(io_err(&path))?;
        Ok(Scratch { path })
    }

    /// Its directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn safe_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name != b"."
        && name != b".."
        && !name.eq_ignore_ascii_case(b".git")
        && !name.contains(&b'/')
        && !name.contains(&0)
}

/// Writes the content of `tree` into `dir`.
pub fn checkout_tree(repo: &gix::Repository, tree: ObjectId, dir: &Path) -> Result<(), PoolError> {
    use gix::objs::tree::EntryKind;
    use std::os::unix::ffi::OsStrExt;
    let git_err = |context: String| {
        move |e: Box<dyn std::error::Error + Send + Sync>| {
            PoolError::Store(crate::store::StoreError::Git { context, source: e })
        }
    };
    let t = repo.find_tree(tree).map_err(|e| git_err(format!("reading tree {tree}"))(Box::new(e)))?;
    let decoded = t.decode().map_err(|e| git_err(format!("decoding tree {tree}"))(Box::new(e)))?;
    for entry in &decoded.entries {
        let name: &[u8] = entry.filename.as_ref();
        if !safe_name(name) {
            return Err(PoolError::UnsafeTreeEntry {
                tree: tree.to_string(),
                name: String::from_utf8_lossy(name).into_owned(),
            });
        }
        let path = dir.join(std::ffi::OsStr::from_bytes(name));
        let id = entry.oid.to_owned();
        match entry.mode.kind() {
            EntryKind::Tree => {
                std::fs::create_dir(&path).map_err(io_err(&path))?;
                checkout_tree(repo, id, &path)?;
            }
            EntryKind::Blob | EntryKind::BlobExecutable => {
                let blob = repo.find_blob(id).map_err(|e| git_err(format!("reading blob {id}"))(Box::new(e)))?;
                std::fs::write(&path, &blob.data).map_err(io_err(&path))?;
                if entry.mode.kind() == EntryKind::BlobExecutable {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).map_err(io_err(&path))?;
                }
            }
            EntryKind::Link => {
                let blob = repo.find_blob(id).map_err(|e| git_err(format!("reading link {id}"))(Box::new(e)))?;
                let target = std::ffi::OsStr::from_bytes(&blob.data);
                std::os::unix::fs::symlink(target, &path).map_err(io_err(&path))?;
            }
            EntryKind::Commit => std::fs::create_dir(&path).map_err(io_err(&path))?,
        }
    }
    Ok(())
}

/// A check's full result.
#[derive(Debug, Clone)]
pub struct CheckRun {
    /// The result in brief.
    pub summary: CheckSummary,
    /// The output (stdout and stderr interleaved), at most [`OUTPUT_KEEP`] bytes.
    pub output: Vec<u8>,
    /// Whether it was killed for running past the timeout.
    pub timed_out: bool,
    /// The test runner's report in the output, when it is in a format [`testreport`] reads.
    pub report: Option<TestReport>,
    /// What the checked tree changes against its base, test by test, when the caller compared
    /// the two ([`differential`]).
    pub delta: Option<TestDelta>,
    /// The directory it ran in (its output names files under it).
    pub dir: PathBuf,
}

impl CheckRun {
    /// The last `lines` lines of the output, as text.
    pub fn tail(&self, lines: usize) -> String {
        let text = String::from_utf8_lossy(&self.output);
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

/// Runs `command` with `sh -c` in `dir`, with `env` added, killing it (and its process group)
/// after `timeout`.
// Named exception to the 80-line budget (src/conventions_tests.rs): this file is being reworked
// (one atomic write) on another branch; split `run` after that lands.
#[allow(clippy::too_many_lines)]
pub fn run(
    dir: &Path,
    command: &str,
    env: &[(&str, String)],
    timeout: Option<Duration>,
) -> Result<CheckRun, PoolError> {
    use std::os::unix::process::CommandExt;
    let log_path = dir.with_extension("out");
    let log = std::fs::File::create(&log_path).map_err(io_err(&log_path))?;
    let log_err = log.try_clone().map_err(io_err(&log_path))?;
    let ceiling = dir.parent().unwrap_or(dir).to_path_buf();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(log_err))
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env("GIT_CEILING_DIRECTORIES", &ceiling)
        .process_group(0);
    for (k, v) in env {
        cmd.env(k, v);
    }
    // The reports already in the checkout: what the check writes is what is new or changed after
    // it (file times are kept at the kernel's coarse clock, so "modified since the start" missed
    // a report written within a few milliseconds of it).
    let before = xml_files(dir);
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|source| PoolError::CheckSpawn { command: command.to_string(), source })?;
    let mut timed_out = false;
    let status = loop {
        match child.try_wait().map_err(io_err(dir))? {
            Some(status) => break status,
            None => {
                if timeout.is_some_and(|t| started.elapsed() >= t) {
                    timed_out = true;
                    // The whole group: a check's children (cargo, test binaries) go too.
                    // `--` matters: without it some `kill` builds read `-<pgid>` as options.
                    let group = format!("-{}", child.id());
                    let _ = Command::new("kill").args(["-s", "KILL", "--", &group]).status();
                    let _ = child.kill();
                    break child.wait().map_err(io_err(dir))?;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    };
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut digest = Sha256::new();
    let mut output = Vec::new();
    let mut file = std::fs::File::open(&log_path).map_err(io_err(&log_path))?;
    let mut buf = vec![0u8; 64 * 1024];
    // The whole output, for the test report, up to REPORT_READ; past that there is none.
    let mut whole: Option<Vec<u8>> = Some(Vec::new());
    loop {
        let n = file.read(&mut buf).map_err(io_err(&log_path))?;
        if n == 0 {
            break;
        }
        digest.update(&buf[..n]);
        let room = OUTPUT_KEEP.saturating_sub(output.len());
        output.extend_from_slice(&buf[..n.min(room)]);
        if let Some(w) = whole.as_mut() {
            if w.len() + n > REPORT_READ {
                whole = None;
            } else {
                w.extend_from_slice(&buf[..n]);
            }
        }
    }
    let _ = std::fs::remove_file(&log_path);
    if let (true, Some(limit)) = (timed_out, timeout) {
        // The record says why it failed: its output ends with it (the digest is the check's own).
        output.extend_from_slice(timed_out_line(limit).as_bytes());
    }
    let report = if timed_out {
        None
    } else {
        junit_written(dir, &before).or_else(|| whole.and_then(|w| testreport::parse(&String::from_utf8_lossy(&w))))
    };
    let hex: String = digest.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let exit_status = if timed_out { None } else { status.code() };
    Ok(CheckRun {
        summary: CheckSummary {
            command: command.into(),
            exit_status,
            duration_ms,
            output_digest: format!("sha256:{hex}"),
        },
        output,
        timed_out,
        report,
        delta: None,
        dir: dir.to_path_buf(),
    })
}

/// What identifies one version of a file: its modification and change times, size and inode.
type Stamp = (Option<std::time::SystemTime>, i64, u64, u64);

/// Every `.xml` file under `dir`, at most [`JUNIT_DEPTH`] directories down, with its [`Stamp`].
fn xml_files(dir: &Path) -> BTreeMap<PathBuf, Stamp> {
    use std::os::unix::fs::MetadataExt as _;
    let mut found = BTreeMap::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((at, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else { continue };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            if kind.is_dir() && depth < JUNIT_DEPTH {
                stack.push((path, depth + 1));
            } else if kind.is_file()
                && path.extension().is_some_and(|e| e == "xml")
                && let Ok(m) = entry.metadata()
            {
                found.insert(path, (m.modified().ok(), m.ctime_nsec() + m.ctime() * 1_000_000_000, m.len(), m.ino()));
            }
        }
    }
    found
}

/// The JUnit XML reports the check wrote into `dir` while it ran (`.xml` files that are not in
/// `before` as they are now, at most [`JUNIT_DEPTH`] directories down, each at most
/// [`REPORT_READ`] bytes), merged; `None` when there is none.
fn junit_written(dir: &Path, before: &BTreeMap<PathBuf, Stamp>) -> Option<TestReport> {
    let mut found: Vec<PathBuf> = xml_files(dir)
        .into_iter()
        .filter(|(path, stamp)| before.get(path) != Some(stamp) && stamp.2 <= REPORT_READ as u64)
        .map(|(path, _)| path)
        .collect();
    found.sort();
    let mut merged: Option<TestReport> = None;
    for path in found {
        let Some(r) = std::fs::read_to_string(&path).ok().and_then(|x| testreport::junit(&x)) else { continue };
        let m = merged.get_or_insert_with(|| TestReport { format: "junit", ..TestReport::default() });
        for (suite, n) in r.suites {
            *m.suites.entry(suite).or_default() += n;
        }
        m.failed.extend(r.failed);
        m.unfinished.extend(r.unfinished);
    }
    merged
}

/// How deep under the checkout a JUnit report is looked for.
const JUNIT_DEPTH: usize = 4;

/// The most output read for a test report: a check that writes more has none.
const REPORT_READ: usize = 64 << 20;

/// Runs the check on `base` (a commit) too, when the check failed on `tree` and its output holds a test
/// report, and compares the two ([`testreport::compare`]); `run.delta` says what `tree` changes.
/// The base's check runs with `env`'s [`BASE_ENV`] variables, `GIT_MAS_TREE` naming the base and
/// `GIT_MAS_BASELINE=1`, once per base, command and environment ([`base_run`]).
pub fn differential(
    repo: &gix::Repository,
    base: ObjectId,
    run: &mut CheckRun,
    env: &[(&str, String)],
    timeout: Option<Duration>,
) -> Result<(), PoolError> {
    let Some(report) = run.report.as_ref().filter(|_| !run.summary.passed() && !run.timed_out) else {
        return Ok(());
    };
    let base_tree = tree_of(repo, base)?;
    let env: Vec<(&str, String)> = env.iter().filter(|(k, _)| BASE_ENV.contains(k)).cloned().collect();
    let on_base = base_run(repo, base_tree, &run.summary.command, &env, timeout)?;
    run.delta = on_base.report.as_ref().and_then(|b| testreport::compare(b, report));
    Ok(())
}

/// The line a timed-out check's kept output ends with.
pub fn timed_out_line(limit: Duration) -> String {
    format!("\ngit-mas: the check timed out after {} and was killed\n", humantime::format_duration(limit))
}

/// What the shell said when the check's command could not run at all — exit 127 (command not
/// found) or 126 (found but not executable) — as `(what, the shell's own words)`; `None` for any
/// other result.
pub fn missing_command(run: &CheckRun) -> Option<(&'static str, String)> {
    let what = match run.summary.exit_status {
        Some(127) => "command not found",
        Some(126) => "command not executable",
        _ => return None,
    };
    let text = String::from_utf8_lossy(&run.output);
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let said = lines
        .iter()
        .rev()
        .find(|l| ["not found", "Permission denied", "cannot execute", "No such file"].iter().any(|w| l.contains(w)))
        .or(lines.last())
        .map_or_else(|| "(it printed nothing)".to_string(), |l| l.to_string());
    Some((what, said))
}

/// The variables of an endorsement's environment that its base's run gets too: what the slice
/// is and what the proposal changes, which scope a sliced check. The others name the endorsement
/// (`GIT_MAS_RUN`, `GIT_MAS_PROPOSER`, `GIT_MAS_ENDORSER`), not the base, and would keep one
/// endorsement's base run from serving the next.
pub const BASE_ENV: &[&str] = &["GIT_MAS_SLICE", "GIT_MAS_CHANGED"];

/// The check run on a base's `tree` (`GIT_MAS_BASELINE=1` and `env` added), once per tree,
/// command and environment: the result is kept under the repository's common git dir
/// ([`cache_path`]) and read back by the next differential and by the preflight of a run on the
/// same base. A check that timed out or could not run its command ([`missing_command`]) is not
/// kept: it says more about the machine at the time than about the tree.
///
/// Decision: the key is the tree, the command and the environment the base run gets, not what
/// is installed on the machine; a check whose result changes with the machine (a package
/// installed since) is run afresh after `rm -r <git common dir>/mas/check-cache`.
pub fn base_run(
    repo: &gix::Repository,
    tree: ObjectId,
    command: &str,
    env: &[(&str, String)],
    timeout: Option<Duration>,
) -> Result<CheckRun, PoolError> {
    let mut env = env.to_vec();
    env.push(("GIT_MAS_BASELINE", "1".to_string()));
    let mut keyed = env.clone();
    keyed.push(("GIT_MAS_TREE", tree.to_string()));
    let path = cache_path(repo.common_dir(), tree, command, &keyed);
    if let Some(cached) = cache::read(&path) {
        return Ok(cached);
    }
    let ran = check_tree(repo, tree, command, &env, timeout)?;
    if !ran.timed_out && missing_command(&ran).is_none() {
        // A cache that cannot be written costs a rerun, nothing else.
        let _ = cache::write(&path, &ran);
    }
    Ok(ran)
}

/// Where the base run of `command` on `tree` with `env` (exactly the environment it gets, in any
/// order) is kept: `<common dir>/mas/check-cache/<sha256 of the tree, the command and the sorted
/// environment>`.
pub fn cache_path(common_dir: &Path, tree: ObjectId, command: &str, env: &[(&str, String)]) -> PathBuf {
    let mut sorted: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    sorted.sort();
    let mut h = Sha256::new();
    for part in [tree.to_string().as_str(), command] {
        h.update(part.len().to_le_bytes());
        h.update(part.as_bytes());
    }
    for (k, v) in sorted {
        for part in [k, v] {
            h.update(part.len().to_le_bytes());
            h.update(part.as_bytes());
        }
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    common_dir.join("mas").join("check-cache").join(hex)
}

/// The base-run cache's file: one line of JSON (the summary, the report, the directory the run
/// was in, whose name its output holds), then the kept output, byte for byte.
mod cache {
    use super::{CheckRun, CheckSummary, TestReport};
    use serde::{Deserialize, Serialize};
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    /// The formats a cached report may be in ([`TestReport::format`] is a `&'static str`).
    const FORMATS: &[&str] = &["libtest", "unittest", "pytest", "tap", "junit"];

    #[derive(Serialize, Deserialize)]
    struct Head {
        summary: CheckSummary,
        dir: PathBuf,
        report: Option<Report>,
    }

    #[derive(Serialize, Deserialize)]
    struct Report {
        format: String,
        suites: BTreeMap<String, u64>,
        unfinished: BTreeSet<String>,
        failed: BTreeSet<(String, String)>,
    }

    /// The run kept at `path`; `None` when there is none or it does not read (it is rewritten).
    pub fn read(path: &Path) -> Option<CheckRun> {
        let bytes = std::fs::read(path).ok()?;
        let newline = bytes.iter().position(|b| *b == b'\n')?;
        let head: Head = serde_json::from_slice(&bytes[..newline]).ok()?;
        let report = match head.report {
            Some(r) => Some(TestReport {
                format: FORMATS.iter().find(|f| **f == r.format)?,
                suites: r.suites,
                unfinished: r.unfinished,
                failed: r.failed,
            }),
            None => None,
        };
        Some(CheckRun {
            summary: head.summary,
            output: bytes[newline + 1..].to_vec(),
            timed_out: false,
            report,
            delta: None,
            dir: head.dir,
        })
    }

    /// Keeps `run` at `path`, atomically: a reader sees the old file or the whole new one.
    pub fn write(path: &Path, run: &CheckRun) -> std::io::Result<()> {
        let head = Head {
            summary: run.summary.clone(),
            dir: run.dir.clone(),
            report: run.report.as_ref().map(|r| Report {
                format: r.format.to_string(),
                suites: r.suites.clone(),
                unfinished: r.unfinished.clone(),
                failed: r.failed.clone(),
            }),
        };
        let mut bytes = serde_json::to_vec(&head).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        bytes.extend_from_slice(&run.output);
        let dir = path.parent().unwrap_or(path);
        std::fs::create_dir_all(dir)?;
        crate::fsx::write_atomic(path, &bytes, None)
    }
}

/// The tree of `base`, a commit (a run's base).
pub fn tree_of(repo: &gix::Repository, base: ObjectId) -> Result<ObjectId, PoolError> {
    let git_err = |e: Box<dyn std::error::Error + Send + Sync>| {
        PoolError::Store(crate::store::StoreError::Git { context: format!("reading the base {base}"), source: e })
    };
    Ok(repo.find_object(base).map_err(|e| git_err(Box::new(e)))?.peel_to_tree().map_err(|e| git_err(Box::new(e)))?.id)
}

/// Checks out `tree` into a scratch directory and runs `command` there, in a build slot of the
/// repository ([`super::build_slot`]: `CARGO_TARGET_DIR` names the slot's build directory).
pub fn check_tree(
    repo: &gix::Repository,
    tree: ObjectId,
    command: &str,
    env: &[(&str, String)],
    timeout: Option<Duration>,
) -> Result<CheckRun, PoolError> {
    // The slot first, then the checkout: see `build_slot` for why the order matters.
    let slot = super::build_slot::take(repo.common_dir())?;
    let scratch = Scratch::new(repo.common_dir())?;
    checkout_tree(repo, tree, scratch.path())?;
    let mut env = env.to_vec();
    env.push(("GIT_MAS_TREE", tree.to_string()));
    env.extend(super::build_slot::env(&slot, &env));
    let ran = run(scratch.path(), command, &env, timeout);
    drop(slot);
    ran
}

/// What a slice's endorsement adds to the check's environment in an aggregate run: the slice's
/// targets (`GIT_MAS_SLICE`, comma-separated) and the paths the proposal changes from the run's
/// base (`GIT_MAS_CHANGED`, one per line). A check may scope itself by them — a slice is not the
/// whole goal, so the whole test suite can fail on it for the other slices' sake — while the
/// merged tree's check, and every check of a best-of-N run, gets neither and judges the whole.
/// Empty when the run has no plan or `proposer` no slice in it.
pub fn slice_env(
    store: &Store,
    def: &crate::devrun::RunDef,
    proposer: &str,
    tree: ObjectId,
) -> Result<Vec<(&'static str, String)>, PoolError> {
    let Some(slice) = def.slices.as_ref().and_then(|p| p.slice(proposer)) else { return Ok(Vec::new()) };
    let base = def.base_id()?;
    let changed = super::proposal::changed_paths(store.common_dir(), base, tree)?;
    Ok(vec![("GIT_MAS_SLICE", slice.targets.join(",")), ("GIT_MAS_CHANGED", changed.join("\n"))])
}

/// The check a run's proposals are checked with: `explicit` (a command line's `--check`), else the
/// run's own (`run_check`), else `git config mas.check`. The first one given decides: a blank
/// command there means none (it does not fall through to the next).
pub fn check_command(store: &Store, explicit: Option<&str>, run_check: Option<&str>) -> Option<String> {
    choose_check(explicit, run_check, || store.config_string("mas.check"))
}

/// [`check_command`]'s rule, with the configured check read only when needed.
fn choose_check(
    explicit: Option<&str>,
    run_check: Option<&str>,
    configured: impl FnOnce() -> Option<String>,
) -> Option<String> {
    explicit.or(run_check).map(str::to_string).or_else(configured).filter(|c| !c.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_check_given_decides_and_a_blank_one_is_none() {
        // (--check, the run's check, mas.check) → the check.
        type Row<'a> = (Option<&'a str>, Option<&'a str>, Option<&'a str>, Option<&'a str>);
        let table: &[Row] = &[
            (None, None, None, None),
            (None, None, Some("make test"), Some("make test")),
            (None, Some("cargo test"), Some("make test"), Some("cargo test")),
            (Some("true"), Some("cargo test"), Some("make test"), Some("true")),
            (Some("true"), None, None, Some("true")),
            (None, None, Some("  "), None),
            // A blank check where one is given means none: it does not fall through.
            (None, Some(" "), Some("make test"), None),
            (Some(""), Some("cargo test"), None, None),
        ];
        for (explicit, run, configured, want) in table {
            let got = choose_check(*explicit, *run, || configured.map(str::to_string));
            assert_eq!(got.as_deref(), *want, "{explicit:?} {run:?} {configured:?}");
        }
    }

    #[test]
    fn output_is_captured_digested_and_the_status_kept() {
        let dir = Scratch::new(Path::new("/nonexistent/.git")).unwrap();
        let ok = run(dir.path(), "echo out; echo err >&2; exit 0", &[], None).unwrap();
        assert_eq!(ok.summary.exit_status, Some(0));
        assert!(ok.summary.passed());
        let text = String::from_utf8_lossy(&ok.output);
        assert!(text.contains("out") && text.contains("err"), "{text}");
        assert!(ok.summary.output_digest.starts_with("sha256:") && ok.summary.output_digest.len() == 71);
        let failed = run(dir.path(), "echo $GREETING; exit 3", &[("GREETING", "hello".into())], None).unwrap();
        assert_eq!(failed.summary.exit_status, Some(3));
        assert_eq!(failed.tail(1), "hello");
    }

    #[test]
    fn a_check_past_its_timeout_is_killed_and_fails() {
        let dir = Scratch::new(Path::new("/nonexistent/.git")).unwrap();
        let started = Instant::now();
        let slow = run(dir.path(), "sleep 5 & sleep 5", &[], Some(Duration::from_millis(200))).unwrap();
        assert!(slow.timed_out);
        assert_eq!(slow.summary.exit_status, None);
        assert!(!slow.summary.passed());
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn a_junit_report_the_check_writes_is_its_report_and_one_already_there_is_not() {
        let dir = Scratch::new(Path::new("/nonexistent/.git")).unwrap();
        let junit = r#"<testsuites><testsuite name="pytest" tests="2"><testcase classname="tests.test_a" name="test_ok"/><testcase classname="tests.test_a" name="test_bad"><failure message="assert 1 == 2"/></testcase></testsuite></testsuites>"#;
        // A report in the checkout before the check ran is the tree's, not the run's.
        std::fs::create_dir_all(dir.path().join("fixtures")).unwrap();
        std::fs::write(dir.path().join("fixtures/old.xml"), junit.replace("test_bad", "test_old")).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let command = format!("mkdir -p out && printf '%s' '{junit}' > out/report.xml; echo 'no summary here'; exit 1");
        let ran = run(dir.path(), &command, &[], None).unwrap();
        let report = ran.report.expect("the JUnit file is read");
        assert_eq!(report.format, "junit");
        assert_eq!(report.suites.get("pytest"), Some(&2));
        let failed: Vec<&str> = report.failed.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(failed, ["tests.test_a.test_bad"]);
        // Without one, the output is read as before (here: nothing).
        let plain = run(dir.path(), "echo 'no summary here'; exit 1", &[], None).unwrap();
        assert!(plain.report.is_none());
        // One the check writes again in place, at once, is its report (not the earlier one).
        let again = junit.replace("test_bad", "test_worse");
        let command = format!("printf '%s' '{again}' > out/report.xml; exit 1");
        let ran = run(dir.path(), &command, &[], None).unwrap();
        let failed: Vec<String> = ran.report.expect("rewritten").failed.into_iter().map(|(_, t)| t).collect();
        assert_eq!(failed, ["tests.test_a.test_worse"]);
    }

    #[test]
    fn a_cached_base_run_reads_back_as_it_ran_and_a_damaged_entry_is_none() {
        let dir = Scratch::new(Path::new("/nonexistent/.git")).unwrap();
        let ran =
            run(dir.path(), "printf 'FAILED t.py::test_x - no\n1 failed, 2 passed in 0.1s\n\\377'; exit 1", &[], None)
                .unwrap();
        assert!(ran.report.is_some());
        let path = dir.path().join("cache/entry");
        cache::write(&path, &ran).unwrap();
        let back = cache::read(&path).expect("it reads back");
        assert_eq!(back.summary, ran.summary);
        assert_eq!(back.output, ran.output, "byte for byte");
        assert_eq!(back.report, ran.report);
        assert_eq!(back.dir, ran.dir);
        assert!(!back.timed_out && back.delta.is_none());
        // Nothing else is left in the cache directory (the temporary file was renamed).
        assert_eq!(std::fs::read_dir(dir.path().join("cache")).unwrap().count(), 1);
        for damaged in [&b""[..], b"not json\n", b"{\"summary\": 1}\n", b"no newline at all"] {
            std::fs::write(&path, damaged).unwrap();
            assert!(cache::read(&path).is_none(), "{damaged:?}");
        }
        // The key is the environment as a set: its order does not matter, its values do.
        let tree = ObjectId::empty_tree(gix::hash::Kind::Sha1);
        let a = [("A", "1".to_string()), ("B", "2".to_string())];
        let b = [("B", "2".to_string()), ("A", "1".to_string())];
        let c = [("A", "1".to_string()), ("B", "3".to_string())];
        let common = Path::new("/repo/.git");
        assert_eq!(cache_path(common, tree, "make", &a), cache_path(common, tree, "make", &b));
        assert_ne!(cache_path(common, tree, "make", &a), cache_path(common, tree, "make", &c));
        assert_ne!(cache_path(common, tree, "make", &a), cache_path(common, tree, "make test", &a));
        assert!(cache_path(common, tree, "make", &a).starts_with("/repo/.git/mas/check-cache"));
    }

    #[test]
    fn a_timed_out_check_says_so_at_the_end_of_its_output_and_a_missing_command_is_named() {
        let dir = Scratch::new(Path::new("/nonexistent/.git")).unwrap();
        let slow = run(dir.path(), "echo started; sleep 5", &[], Some(Duration::from_millis(300))).unwrap();
        assert!(slow.timed_out);
        assert!(slow.tail(1).ends_with("git-mas: the check timed out after 300ms and was killed"), "{}", slow.tail(3));
        let missing = run(dir.path(), "no-such-tool --x", &[], None).unwrap();
        let (what, said) = missing_command(&missing).unwrap();
        assert_eq!(what, "command not found");
        assert!(said.contains("no-such-tool: not found"), "{said}");
        assert!(missing_command(&run(dir.path(), "exit 1", &[], None).unwrap()).is_none());
    }

    #[test]
    fn unsafe_names_are_refused() {
        for bad in [&b""[..], b".", b"..", b".git", b".GIT", b"a/b"] {
            assert!(!safe_name(bad), "{bad:?}");
        }
        assert!(safe_name(b".gitignore"));
    }
}

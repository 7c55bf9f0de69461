//! `git mas doctor [--fix]`: stale locks and leftover temporary files, found with their age and
//! removed only when old enough (or orphaned); and a proposal killed mid-way leaves nothing the
//! next run does not sweep.

use crate::common::*;
use crate::killpoints::{self, RENAMES, Trigger};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// `git mas doctor ARGS` with a private temporary directory (the system one is shared).
fn doctor(env: &TestEnv, repo: &Path, args: &[&str]) -> Output {
    let tmp = env.root().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut all = vec!["doctor"];
    all.extend_from_slice(args);
    env.mas_cmd(repo).env("TMPDIR", &tmp).args(&all).output().unwrap()
}

fn doctor_json(env: &TestEnv, repo: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let mut all = args.to_vec();
    all.push("--json");
    let out = doctor(env, repo, &all);
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor --json is not JSON ({e}): {}\n{}", stdout(&out), stderr(&out)));
    (out.status.code(), json)
}

/// Sets a file's modification time with touch(1), e.g. "1 hour ago".
pub fn touch(path: &Path, when: &str) {
    let ok = std::process::Command::new("touch").arg("-d").arg(when).arg(path).status().unwrap().success();
    assert!(ok, "touch -d {when} {}", path.display());
}

fn entry<'a>(list: &'a Value, path: &Path) -> Option<&'a Value> {
    list.as_array().unwrap().iter().find(|d| d["path"] == path.to_str().unwrap())
}

fn common_dir(env: &TestEnv, repo: &Path) -> PathBuf {
    PathBuf::from(env.git(repo, &["rev-parse", "--path-format=absolute", "--git-common-dir"])).canonicalize().unwrap()
}

#[test]
fn a_stale_lock_is_listed_and_fixed_and_a_fresh_lock_is_left_alone() {
    let env = TestEnv::new();
    let repo = env.repo("locks");
    env.agents(&repo, &["alice"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note"]);
    let common = common_dir(&env, &repo);
    assert_eq!(doctor(&env, &repo, &[]).status.code(), Some(0), "a clean repository has nothing to repair");

    let stale = common.join("refs/mas/journal/alice.lock");
    let stale_packed = common.join("packed-refs.lock");
    let fresh = common.join("refs/mas/frame.lock");
    for p in [&stale, &stale_packed, &fresh] {
        std::fs::write(p, b"").unwrap();
    }
    touch(&stale, "1 hour ago");
    touch(&stale_packed, "10 seconds ago");

    let out = doctor(&env, &repo, &[]);
    assert_eq!(out.status.code(), Some(1), "stale locks are problems: {}", stdout(&out));
    let text = stdout(&out);
    let line = text.lines().find(|l| l.contains("refs/mas/journal/alice.lock")).expect("the stale lock is listed");
    assert!(line.starts_with("STALE") && line.contains("age 1h"), "{line}");
    assert!(text.lines().any(|l| l.contains("packed-refs.lock") && l.starts_with("STALE")), "{text}");
    assert!(text.lines().any(|l| l.contains("refs/mas/frame.lock") && !l.starts_with("STALE")), "{text}");
    assert!(stderr(&out).contains("git mas doctor --fix"), "{}", stderr(&out));

    let (code, json) = doctor_json(&env, &repo, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(json["problems"], 2);
    assert_eq!(json["fixed"], false);
    let s = entry(&json["locks"], &stale).expect("stale lock in JSON");
    assert_eq!((s["kind"].as_str(), s["stale"].as_bool()), (Some("lock"), Some(true)));
    assert!(s["age_secs"].as_u64().unwrap() >= 3600);
    let f = entry(&json["locks"], &fresh).expect("fresh lock in JSON");
    assert_eq!(f["stale"], false);
    assert!(f["age_secs"].as_u64().unwrap() < 5);

    let (code, json) = doctor_json(&env, &repo, &["--fix"]);
    assert_eq!(code, Some(0), "--fix fixed everything: {json}");
    assert_eq!(json["fixed"], true);
    assert_eq!(json["problems"], 0);
    let removed: Vec<&str> = json["removed"].as_array().unwrap().iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert!(removed.contains(&stale.to_str().unwrap()) && removed.contains(&stale_packed.to_str().unwrap()));
    assert!(!stale.exists() && !stale_packed.exists(), "stale locks removed");
    assert!(fresh.exists(), "a fresh lock is never removed");
    // The chain the stale lock blocked takes appends again.
    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note"]);
    // The fresh lock is listed, not a problem.
    assert_eq!(doctor(&env, &repo, &[]).status.code(), Some(0));
    let out = doctor(&env, &repo, &["--fix"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(fresh.exists());
}

#[test]
fn leftover_temporary_files_are_removed_only_when_orphaned_or_old() {
    let env = TestEnv::new();
    let repo = env.repo("temps");
    env.agents(&repo, &["alice"]);
    let wt = env.root().join("linked");
    env.git_quiet_ok(&repo, &["worktree", "add", "--quiet", "--detach", wt.to_str().unwrap()]);
    let common = common_dir(&env, &repo);
    let linked_git_dir = PathBuf::from(env.git(&wt, &["rev-parse", "--absolute-git-dir"])).canonicalize().unwrap();
    let tmp = env.root().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    // A process that has exited: its id names an orphan.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();

    let old_index = common.join("mas-snapshot-00112233aabbccdd.index");
    let old_linked_index = linked_git_dir.join("mas-snapshot-44556677aabbccdd.index");
    let fresh_index = common.join("mas-snapshot-8899aabbccddeeff.index");
    // Scratch names carry the pid namespace (the inode of /proc/self/ns/pid) and the process id.
    let ns = std::fs::read_link("/proc/self/ns/pid").map_or_else(
        |_| "0".to_string(),
        |l| l.to_string_lossy().trim_start_matches("pid:[").trim_end_matches(']').to_string(),
    );
    let orphan_index = linked_git_dir.join(format!("mas-snapshot-{ns}-{dead}-0a0b.index"));
    for p in [&old_index, &old_linked_index, &fresh_index, &orphan_index] {
        std::fs::write(p, b"DIRC").unwrap();
    }
    touch(&old_index, "2 hours ago");
    touch(&old_linked_index, "2 hours ago");
    let old_check = tmp.join("git-mas-check-0011223344556677");
    let fresh_check = tmp.join("git-mas-check-8899aabbccddeeff");
    let old_check_in_git_dir = common.join("git-mas-check-aabbccddeeff0011");
    for d in [&old_check, &fresh_check, &old_check_in_git_dir] {
        std::fs::create_dir_all(d.join("src")).unwrap();
        std::fs::write(d.join("src/lib.rs"), b"// scratch").unwrap();
    }
    touch(&old_check, "2 days ago");
    touch(&old_check_in_git_dir, "2 days ago");
    let cache = common.join("mas-cache/events-v2/r1");
    std::fs::create_dir_all(&cache).unwrap();
    let old_cache_tmp = cache.join(".tmp-0011223344556677");
    let fresh_cache_tmp = cache.join(".tmp-8899aabbccddeeff");
    let cache_file = cache.join("events-alice.json");
    for p in [&old_cache_tmp, &fresh_cache_tmp, &cache_file] {
        std::fs::write(p, b"{}").unwrap();
    }
    touch(&old_cache_tmp, "10 minutes ago");
    touch(&cache_file, "10 minutes ago");

    let (code, json) = doctor_json(&env, &repo, &[]);
    assert_eq!(code, Some(1));
    let temps = &json["temp_files"];
    for (p, kind, stale) in [
        (&old_index, "snapshot_index", true),
        (&old_linked_index, "snapshot_index", true),
        (&fresh_index, "snapshot_index", false),
        (&orphan_index, "snapshot_index", true),
        (&old_check, "check_dir", true),
        (&fresh_check, "check_dir", false),
        (&old_check_in_git_dir, "check_dir", true),
        (&old_cache_tmp, "cache_temp", true),
        (&fresh_cache_tmp, "cache_temp", false),
    ] {
        let d = entry(temps, p).unwrap_or_else(|| panic!("{} not listed: {temps}", p.display()));
        assert_eq!((d["kind"].as_str(), d["stale"].as_bool()), (Some(kind), Some(stale)), "{}", p.display());
    }
    assert_eq!(entry(temps, &orphan_index).unwrap()["owner_pid"], dead);
    assert!(entry(temps, &cache_file).is_none(), "a cache file is not debris");
    assert_eq!(json["problems"], 6);

    let out = doctor(&env, &repo, &["--fix"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().filter(|l| l.starts_with("removed")).count(), 6, "{text}");
    for p in [&old_index, &old_linked_index, &orphan_index, &old_check, &old_check_in_git_dir, &old_cache_tmp] {
        assert!(!p.exists(), "{} should be removed", p.display());
    }
    assert!(fresh_index.exists() && fresh_check.join("src/lib.rs").exists(), "young files are kept");
    assert!(fresh_cache_tmp.exists() && cache_file.exists());
}

#[test]
fn a_proposal_killed_mid_way_leaves_no_temporary_index_after_the_next_run() {
    let team = crate::development::Team::new(&["alice", "bob"]);
    let run = team.start("alice", &["--id", "r1"]);
    let wt = team.worktree(&run, "alice");
    std::fs::write(wt.join("NOTES.md"), "alice's notes\n").unwrap();
    let git_dir = PathBuf::from(team.env.git(&wt, &["rev-parse", "--absolute-git-dir"]));
    let leftovers = || -> Vec<PathBuf> {
        std::fs::read_dir(&git_dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("mas-snapshot-"))
            .collect()
    };
    // SIGKILL git-mas itself (not its children) at its N-th wait for a child process, until one
    // kill lands while `git add` runs on the temporary index.
    let waits = Trigger::on("wait4").own_process();
    let mut propose = team.env.mas_cmd(&wt);
    propose.arg("propose");
    let mut killed_with_leftover = None;
    for n in 1..=20 {
        let out = killpoints::kill_at(&propose, &waits, n).output;
        if out.status.success() {
            break;
        }
        if !leftovers().is_empty() {
            killed_with_leftover = Some(n);
            break;
        }
    }
    let n = killed_with_leftover.expect("some kill left a temporary index behind");
    let left = leftovers();
    // A file whose name carries no process id is judged by age; make it as old as a real
    // leftover found the next day. One named with its (now dead) process id needs no waiting.
    for p in &left {
        let name = p.file_name().unwrap().to_str().unwrap();
        let has_pid = name.trim_start_matches("mas-snapshot-").split_once('-').is_some();
        if !has_pid {
            touch(p, "2 hours ago");
        }
    }
    let out = doctor(&team.env, &team.repo, &[]);
    assert_eq!(out.status.code(), Some(1), "the leftover of kill {n} is a problem: {}", stdout(&out));
    // The next run sweeps it, and leaves nothing of its own.
    team.here_quiet_ok(&wt, &["propose"]);
    assert_eq!(leftovers(), Vec::<PathBuf>::new(), "after kill {n} and the next propose");
    assert_eq!(doctor(&team.env, &team.repo, &[]).status.code(), Some(0));
}

/// A `hooks install` killed between writing its temporary file and renaming it over the settings
/// file (in the project, and in the user's home with `--global`) leaves `.NAME.mas-tmp.PID.N`
/// (`git_mas::fsx`'s rule; the live one below has an older build's name, still recognised):
/// doctor lists each as stale (its process is gone), `--fix` removes them, and the settings files
/// keep their bytes. A temporary whose process still runs is listed as in use and left alone.
#[test]
fn a_killed_installers_temporary_is_listed_and_fixed_and_the_settings_file_kept() {
    let env = TestEnv::new();
    let repo = env.repo("installs");
    let codex_home = env.root().join("codex-home");
    let project = repo.join(".claude/settings.json");
    let global = codex_home.join("hooks.json");
    for (file, text) in [(&project, "{\"model\": \"opus\"}\n"), (&global, "{\"hooks\": {}}\n")] {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let settings =
        [(project.clone(), std::fs::read(&project).unwrap()), (global.clone(), std::fs::read(&global).unwrap())];
    for args in
        [&["hooks", "install", "--host", "claude-code"][..], &["hooks", "install", "--global", "--host", "codex"]]
    {
        let mut cmd = env.mas_cmd(&repo);
        cmd.args(args).env("CODEX_HOME", &codex_home);
        // The installer's first rename is its temporary's over the settings file.
        let attempt = killpoints::kill_at(&cmd, &Trigger::on(RENAMES), 1);
        assert!(attempt.killed, "{args:?} was killed at its rename");
        assert_ne!(attempt.output.status.code(), Some(0), "{args:?} was killed at its rename");
    }
    let temps = |dir: &Path| -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| git_mas::fsx::is_temporary(p.file_name().unwrap().to_str().unwrap()))
            .collect();
        found.sort();
        found
    };
    let left: Vec<PathBuf> = [temps(&repo.join(".claude")), temps(&codex_home)].concat();
    assert_eq!(left.len(), 2, "each killed install left its temporary: {left:?}");
    // One whose process (this test) still runs.
    let live = repo.join(format!(".cursor/.hooks.json.git-mas-{}.tmp", std::process::id()));
    std::fs::create_dir_all(live.parent().unwrap()).unwrap();
    std::fs::write(&live, "{}").unwrap();

    let doctor_env = |args: &[&str]| {
        let mut all = vec!["doctor", "--json"];
        all.extend_from_slice(args);
        let out = env.mas_cmd(&repo).env("CODEX_HOME", &codex_home).env("TMPDIR", env.root()).args(&all).output();
        let out = out.unwrap();
        let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
        (out.status.code(), json)
    };
    let (code, json) = doctor_env(&[]);
    assert_eq!(code, Some(1), "{json}");
    let found = &json["temp_files"];
    for temp in &left {
        let d = entry(found, temp).unwrap_or_else(|| panic!("{} not listed: {json}", temp.display()));
        assert_eq!((d["kind"].as_str(), d["stale"].as_bool()), (Some("install_temp"), Some(true)), "{d}");
    }
    let d = entry(found, &live).unwrap_or_else(|| panic!("the live one is listed: {json}"));
    assert_eq!(d["stale"], false, "{d}");

    let (code, json) = doctor_env(&["--fix"]);
    assert_eq!(code, Some(0), "{json}");
    for temp in &left {
        assert!(!temp.exists(), "{} removed", temp.display());
    }
    assert!(live.exists(), "a live installer's temporary is left alone");
    for (file, bytes) in &settings {
        assert_eq!(&std::fs::read(file).unwrap(), bytes, "{} untouched", file.display());
    }
}

/// The temporary directory is shared by every repository on the machine: doctor in one repository
/// does not list a scratch checkout another repository's check is running in (the failure of a
/// full run: "process N is running" in another test's doctor), while doctor in that repository
/// lists it as in use.
#[test]
fn doctor_lists_only_its_own_repositorys_scratch_checkouts() {
    let env = TestEnv::new();
    let tmp = env.root().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let a = env.repo("a");
    let b = env.repo("b");
    env.agents(&a, &["alice", "bob"]);
    let (started, stop) = (env.root().join("started"), env.root().join("stop"));
    let check = format!("touch '{}'; while [ ! -e '{}' ]; do sleep 0.05; done", started.display(), stop.display());
    env.mas_quiet_ok(&a, &["--agent", "alice", "run", "start", "--id", "r1", "--goal", "wait", "--check", &check]);
    let wt =
        |name: &str| PathBuf::from(env.mas_ok(&a, &["--agent", name, "worktree", "add", name, "--run", "r1"]).trim());
    let (alice, bob) = (wt("alice"), wt("bob"));
    std::fs::write(alice.join("a.txt"), "a\n").unwrap();
    env.mas_quiet_ok(&alice, &["propose"]);
    let endorse = env
        .mas_cmd(&bob)
        .env("TMPDIR", &tmp)
        .args(["endorse", "alice"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let endorse = Released { child: endorse, stop: stop.clone() };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !started.exists() {
        assert!(std::time::Instant::now() < deadline, "the check never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let in_tmp = |json: &Value| -> Vec<String> {
        json["temp_files"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["path"].as_str().unwrap().starts_with(tmp.to_str().unwrap()))
            .map(|d| d["path"].as_str().unwrap().to_string())
            .collect()
    };
    let (code, in_b) = doctor_json(&env, &b, &[]);
    assert_eq!((code, in_tmp(&in_b)), (Some(0), vec![]), "nothing of a's in b: {in_b}");
    let (code, in_a) = doctor_json(&env, &a, &[]);
    assert_eq!((code, in_tmp(&in_a).len()), (Some(0), 1), "a's own scratch, in use: {in_a}");
    assert!(endorse.finish(), "the endorsement finished");
}

/// The endorsement, released and waited for when dropped: a failed assertion must not leave
/// its check looping.
struct Released {
    child: std::process::Child,
    stop: PathBuf,
}

impl Released {
    fn finish(mut self) -> bool {
        std::fs::write(&self.stop, "").unwrap();
        self.child.wait().unwrap().success()
    }
}

impl Drop for Released {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.stop, "");
        let _ = self.child.wait();
    }
}

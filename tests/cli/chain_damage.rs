//! A focus chain that lost an object (`git gc --prune=now` beside a writer): it fails closed for
//! its own files only, and `doctor` names it and repairs it.

use crate::common::*;
use crate::json::doctor::DoctorOut;
use crate::team_mode::{board, hook, team_repo, write_payload};
use std::path::Path;

/// Deletes the loose object `id` (git gc pruning it under a writer).
pub fn lose(repo: &Path, id: &str) {
    let path = repo.join(".git/objects").join(&id[..2]).join(&id[2..]);
    std::fs::remove_file(&path).unwrap_or_else(|e| panic!("{} is not a loose object: {e}", path.display()));
}

/// Forgets what readers remembered of the chains: the lost record was pruned before its ref
/// moved, so no reader ever read it whole.
pub fn forget_reads(repo: &Path) {
    for entry in std::fs::read_dir(repo.join(".git")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("mas-windows-") || name == "mas-board-focus" {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
}

/// Two sessions of alice: A claims src/lib.rs, then src/money.rs (two records); B claims README.md.
/// Returns A's agent and its focus ref.
pub fn two_sessions(env: &TestEnv, repo: &Path) -> (String, String) {
    for (session, file) in [("a", "src/lib.rs"), ("a", "src/money.rs"), ("b", "README.md")] {
        assert_eq!(hook(env, repo, &write_payload(repo, session, file)).0, "allow", "{session} {file}");
    }
    let b = board(env, repo);
    let a = b.board.entries.iter().find(|e| e.focus.targets.len() == 2).unwrap().focus.agent.clone();
    let refname = format!("refs/mas/focus/{a}");
    (a, refname)
}

pub fn doctor_json(env: &TestEnv, repo: &Path, args: &[&str]) -> (Option<i32>, DoctorOut) {
    let out = env.mas(repo, &[&["doctor", "--json"][..], args].concat());
    let parsed = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", shown(&out)));
    (out.status.code(), parsed)
}

#[test]
fn a_chain_that_lost_an_older_record_refuses_only_its_files_and_doctor_fix_re_signs_it() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let (a, refname) = two_sessions(&env, &repo);
    let older = env.git(&repo, &["rev-parse", &format!("{refname}^")]);
    lose(&repo, &older);
    forget_reads(&repo);

    // A's files stay refused, naming the damaged chain and the repair.
    let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs"));
    assert_eq!(verdict, "deny", "{reason}");
    assert!(reason.contains(&a) && reason.contains(&refname) && reason.contains("git mas doctor --fix"), "{reason}");
    // Everyone else keeps working: a free file and B's own.
    let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "b", "src/free.rs"));
    assert_eq!(verdict, "allow", "{reason}");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "README.md")).0, "allow");

    // doctor names the chain, the missing object and the last whole record (none: a commit is lost).
    let (code, found) = doctor_json(&env, &repo, &[]);
    assert_eq!(code, Some(1));
    let [d] = found.findings.damaged_chains.as_slice() else { panic!("{found:?}") };
    assert_eq!(
        (d.refname.as_str(), d.missing.as_str(), d.last_whole.as_deref()),
        (refname.as_str(), older.as_str(), None)
    );
    let text = env.mas(&repo, &["doctor"]);
    assert!(stdout(&text).contains(&format!("DAMAGED  {refname}")), "{}", shown(&text));

    // --fix re-signs A's newest state with alice's key (on this machine): A still holds both files.
    let (code, fixed) = doctor_json(&env, &repo, &["--fix"]);
    assert_eq!(code, Some(0), "{fixed:?}");
    let [r] = fixed.repaired_chains.as_slice() else { panic!("{fixed:?}") };
    assert_eq!(r.to.as_deref(), Some(env.git(&repo, &["rev-parse", &refname]).as_str()));
    assert_eq!(doctor_json(&env, &repo, &[]).0, Some(0), "nothing left to repair");
    let after = board(&env, &repo);
    assert_eq!(after.board.entry(&a).unwrap().focus.targets, ["src/lib.rs", "src/money.rs"]);
    let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "b", "src/lib.rs"));
    assert_eq!(verdict, "deny");
    assert!(!reason.contains("damaged"), "{reason}");
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "a", "src/third.rs")).0, "allow", "A claims again");
}

#[test]
fn a_chain_that_lost_its_newest_record_holds_off_new_claims_until_doctor_ends_it() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let (a, refname) = two_sessions(&env, &repo);
    let below = env.git(&repo, &["rev-parse", &format!("{refname}^")]);
    let blob = env.git(&repo, &["rev-parse", &format!("{refname}:record.json")]);
    lose(&repo, &blob);
    forget_reads(&repo);

    // What A held below the lost record stays refused; what it claims now cannot be known, so a
    // new claim is refused too — naming the chain and the repair — while B's own file is B's.
    for file in ["src/lib.rs", "src/free.rs"] {
        let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "b", file));
        assert_eq!(verdict, "deny", "{file}: {reason}");
        assert!(
            reason.contains(&a) && reason.contains(&refname) && reason.contains("git mas doctor --fix"),
            "{reason}"
        );
    }
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "README.md")).0, "allow");
    // `git mas gate` agrees.
    let b = board(&env, &repo).board.entries.iter().find(|e| e.focus.agent != a).unwrap().focus.agent.clone();
    let gate = env.mas(&repo, &["--agent", &b, "gate", "--paths", "src/free.rs"]);
    assert_eq!(gate.status.code(), Some(6), "{}", shown(&gate));
    assert!(shown(&gate).contains(&refname), "{}", shown(&gate));

    let (code, found) = doctor_json(&env, &repo, &[]);
    assert_eq!(code, Some(1));
    let [d] = found.findings.damaged_chains.as_slice() else { panic!("{found:?}") };
    assert_eq!((d.missing.as_str(), d.last_whole.as_deref()), (blob.as_str(), Some(below.as_str())));

    // alice's key is not on this machine: --fix ends the chain (deletes its ref).
    let keys = env.keys();
    let away = env.root().join("keys-away");
    std::fs::rename(&keys, &away).unwrap();
    let (code, fixed) = doctor_json(&env, &repo, &["--fix"]);
    std::fs::rename(&away, &keys).unwrap();
    assert_eq!(code, Some(0), "{fixed:?}");
    let [r] = fixed.repaired_chains.as_slice() else { panic!("{fixed:?}") };
    assert_eq!((r.to.as_deref(), r.error.as_deref()), (None, None), "{r:?}");
    assert!(!env.refs(&repo).contains(&refname), "the chain is ended");
    for file in ["src/free.rs", "src/lib.rs"] {
        let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "b", file));
        assert_eq!(verdict, "allow", "{file}: {reason}");
    }
}

/// Commits `file` (with new content) by hand, dated now, with `receipt`'s team-mode trailers
/// (agent, frame) when given. Returns the commit.
fn commit_now(env: &TestEnv, repo: &Path, receipt: Option<(&str, &str)>, file: &str, subject: &str) -> String {
    std::fs::write(repo.join(file), format!("{subject}\n")).unwrap();
    env.git_quiet_ok(repo, &["add", "--", file]);
    let mut message = subject.to_string();
    if let Some((agent, frame)) = receipt {
        message.push_str(&format!("\n\nMas-Agent: {agent}\nMas-Frame: {frame}\nMas-Rule: claims\n"));
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let date = format!("{now} +0000");
    let out = env
        .git_cmd(repo)
        .args(["commit", "-q", "--no-verify", "-m", &message])
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", shown(&out));
    env.git(repo, &["rev-parse", "HEAD"])
}

fn check_json(env: &TestEnv, repo: &Path, range: &str) -> (Option<i32>, serde_json::Value, String) {
    let out = env.mas(repo, &["check", range, "--json"]);
    let parsed = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", shown(&out)));
    (out.status.code(), parsed, shown(&out))
}

/// (status, holders) of each commit `check --json` listed.
fn statuses(v: &serde_json::Value) -> Vec<(String, Vec<String>)> {
    v["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let holders = c.pointer("/verdict/blocks").and_then(|b| b.as_array()).cloned().unwrap_or_default();
            (c["status"].as_str().unwrap().to_string(), holders.iter().map(|b| b["holder"].to_string()).collect())
        })
        .collect()
}

/// `git mas check` used to fail as a whole (exit 1) on a damaged focus chain. It judges each
/// commit on what can be read of the chain: a commit touching the damaged chain's known files is
/// listed (naming the chain and `git mas doctor --fix`), every other commit passes.
#[test]
fn check_lists_only_what_a_damaged_chain_held_and_passes_the_rest() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let (a, refname) = two_sessions(&env, &repo);
    let before = board(&env, &repo);
    let b_entry = before.board.entries.iter().find(|e| e.focus.agent != a).unwrap();
    let (b, frame) = (b_entry.focus.agent.clone(), b_entry.focus.frame.clone());
    commit_now(&env, &repo, Some((&b, &frame)), "README.md", "B's own file");
    commit_now(&env, &repo, None, "src/lib.rs", "no receipt, A's file");
    commit_now(&env, &repo, Some((&a, &frame)), "src/money.rs", "A's own file");
    commit_now(&env, &repo, Some((&b, &frame)), "src/free.rs", "B's new file");
    let older = env.git(&repo, &["rev-parse", &format!("{refname}^")]);
    lose(&repo, &older);
    forget_reads(&repo);

    let (code, v, said) = check_json(&env, &repo, "HEAD~4..HEAD");
    assert_eq!(code, Some(6), "{said}");
    let quoted = format!("\"{a}\"");
    assert_eq!(
        statuses(&v),
        [
            ("ok".to_string(), vec![]),
            ("blocked".to_string(), vec![quoted]),
            ("ok".to_string(), vec![]),
            ("ok".to_string(), vec![])
        ],
        "{said}"
    );
    let block = &v["commits"][1]["verdict"]["blocks"][0];
    assert_eq!(block["target"], "src/lib.rs", "{said}");
    let (why, remedy) = (block["why"].as_str().unwrap(), block["remedy"].as_str().unwrap());
    assert!(why.contains(&refname) && remedy.contains("git mas doctor --fix"), "{said}");
    assert_eq!(v["damaged_chains"][0]["refname"], refname.as_str(), "{said}");
    // For people: the chain and the repair are named on stderr.
    let text = env.mas(&repo, &["check", "HEAD~4..HEAD"]);
    assert_eq!(text.status.code(), Some(6), "{}", shown(&text));
    assert!(stderr(&text).contains(&refname) && stderr(&text).contains("git mas doctor --fix"), "{}", shown(&text));
    // Others' commits alone pass.
    let (code, _, said) = check_json(&env, &repo, "HEAD~1..HEAD");
    assert_eq!(code, Some(0), "{said}");

    // Repaired, the chain is whole again: the same commit is listed, without the damage.
    assert_eq!(doctor_json(&env, &repo, &["--fix"]).0, Some(0));
    let (code, v, said) = check_json(&env, &repo, "HEAD~4..HEAD");
    assert_eq!(code, Some(6), "{said}");
    assert!(!said.contains("damaged") && v.get("damaged_chains").is_none(), "{said}");
}

/// When a damaged chain's newest record is lost, what it holds now cannot be known: a commit
/// of another agent passes only for files its author held, and the rest is listed naming the
/// chain; the damaged chain's own agent's commits are judged on the others' holds alone.
#[test]
fn check_holds_off_new_files_while_a_damaged_chains_newest_record_is_unknown() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let (a, refname) = two_sessions(&env, &repo);
    let before = board(&env, &repo);
    let b_entry = before.board.entries.iter().find(|e| e.focus.agent != a).unwrap();
    let (b, frame) = (b_entry.focus.agent.clone(), b_entry.focus.frame.clone());
    commit_now(&env, &repo, Some((&b, &frame)), "README.md", "B's own file");
    commit_now(&env, &repo, Some((&b, &frame)), "src/free.rs", "B's new file");
    commit_now(&env, &repo, Some((&a, &frame)), "src/other.rs", "A's new file");
    let blob = env.git(&repo, &["rev-parse", &format!("{refname}:record.json")]);
    lose(&repo, &blob);
    forget_reads(&repo);

    let (code, v, said) = check_json(&env, &repo, "HEAD~3..HEAD");
    assert_eq!(code, Some(6), "{said}");
    let quoted = format!("\"{a}\"");
    assert_eq!(
        statuses(&v),
        [("ok".to_string(), vec![]), ("blocked".to_string(), vec![quoted]), ("ok".to_string(), vec![])],
        "{said}"
    );
    assert!(v["commits"][1]["verdict"]["blocks"][0]["why"].as_str().unwrap().contains(&refname), "{said}");
}

/// A session whose host process is gone holds nothing, damaged chain or not: once A's host is
/// gone, its damaged chain (newest record lost, so new claims were held off) refuses nothing;
/// `doctor` still names it.
#[test]
fn a_damaged_chain_of_a_session_whose_host_is_gone_holds_nothing() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let (a, refname) = two_sessions(&env, &repo);
    let blob = env.git(&repo, &["rev-parse", &format!("{refname}:record.json")]);
    lose(&repo, &blob);
    forget_reads(&repo);
    assert_eq!(hook(&env, &repo, &write_payload(&repo, "b", "src/free.rs")).0, "deny", "A's host runs");

    // A's host process ended (a process that has exited, recorded as A's host).
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let hosts = repo.join(".git/mas/hosts");
    assert!(hosts.join(&a).is_file(), "A's claim recorded its host");
    std::fs::write(hosts.join(&a), format!("{pid}-1")).unwrap();
    for file in ["src/free.rs", "src/lib.rs"] {
        let (verdict, reason) = hook(&env, &repo, &write_payload(&repo, "b", file));
        assert_eq!(verdict, "allow", "{file}: {reason}");
    }
    let (code, found) = doctor_json(&env, &repo, &[]);
    assert_eq!((code, found.findings.damaged_chains.len()), (Some(1), 1), "{found:?}");
}

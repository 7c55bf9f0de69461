//! A focus chain that lost an object (`git gc --prune=now` beside a writer): it fails closed for
//! its own files only, and `doctor` names it and repairs it.

use crate::common::*;
use crate::json::doctor::DoctorOut;
use crate::team_mode::{board, hook, team_repo, write_payload};
use std::path::Path;

/// Deletes the loose object `id` (git gc pruning it under a writer).
fn lose(repo: &Path, id: &str) {
    let path = repo.join(".git/objects").join(&id[..2]).join(&id[2..]);
    std::fs::remove_file(&path).unwrap_or_else(|e| panic!("{} is not a loose object: {e}", path.display()));
}

/// Forgets what readers remembered of the chains: the lost record was pruned before its ref
/// moved, so no reader ever read it whole.
fn forget_reads(repo: &Path) {
    for entry in std::fs::read_dir(repo.join(".git")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("mas-windows-") || name == "mas-board-focus" {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
}

/// Two sessions of alice: A claims src/lib.rs, then src/money.rs (two records); B claims README.md.
/// Returns A's agent and its focus ref.
fn two_sessions(env: &TestEnv, repo: &Path) -> (String, String) {
    for (session, file) in [("a", "src/lib.rs"), ("a", "src/money.rs"), ("b", "README.md")] {
        assert_eq!(hook(env, repo, &write_payload(repo, session, file)).0, "allow", "{session} {file}");
    }
    let b = board(env, repo);
    let a = b.board.entries.iter().find(|e| e.focus.targets.len() == 2).unwrap().focus.agent.clone();
    let refname = format!("refs/mas/focus/{a}");
    (a, refname)
}

fn doctor_json(env: &TestEnv, repo: &Path, args: &[&str]) -> (Option<i32>, DoctorOut) {
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

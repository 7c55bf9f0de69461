//! The roster's signature trail: `git mas check` lists a commit that changes `.mas/roster` without
//! a valid `Mas-Roster-Signed` trailer, the `commit-msg` hook signs for the committing agent, and
//! `agent sign-roster` signs by hand. Forged trailers are made with the library, as an attacker
//! with the source would.

use crate::common::*;
use crate::json::agent::SignRosterOut;
use crate::json::check::CheckOut;
use git_mas::attention::replay::CheckStatus;
use git_mas::identity::AgentKey;
use git_mas::identity::trail::{Trail, TrailProblem, TrailStatus};
use std::path::{Path, PathBuf};

/// A repository whose first roster commit (alice) sits on the fixture commit, with a published
/// frame, the hooks installed (`mas.gate` unset: off) and `mas.agent=alice`. Returns (env, repo,
/// fixture commit).
fn team() -> (TestEnv, PathBuf, String) {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let fixture = env.git(&repo, &["rev-parse", "HEAD"]);
    env.mas_quiet_ok(&repo, &["agent", "new", "alice"]);
    env.git_quiet_ok(&repo, &["config", "mas.agent", "alice"]);
    // A frame first, so that the gate's replay allows the commits after it.
    env.mas_quiet_ok(&repo, &["snapshot", "--publish"]);
    env.git_quiet_ok(&repo, &["add", ".mas/roster"]);
    commit(&env, &repo, &["-qm", "Add alice"]);
    env.mas_quiet_ok(&repo, &["hooks", "install"]);
    env.git_quiet_ok(&repo, &["config", "--unset", "mas.gate"]);
    (env, repo, fixture)
}

/// `git commit <args>` with the clock's dates (`git mas check` judges a commit against the board
/// at its time), asserting success; returns the output.
fn commit(env: &TestEnv, repo: &Path, args: &[&str]) -> std::process::Output {
    let out = git_commit(env, repo, args).output().unwrap();
    assert!(out.status.success(), "git commit {args:?}: {}", stderr(&out));
    out
}

fn git_commit(env: &TestEnv, repo: &Path, args: &[&str]) -> std::process::Command {
    let mut cmd = env.git_cmd(repo);
    cmd.env_remove("GIT_AUTHOR_DATE").env_remove("GIT_COMMITTER_DATE").arg("commit").args(args);
    cmd
}

/// `git mas check <range> --json`: the exit code and the report.
fn check(env: &TestEnv, repo: &Path, range: &str) -> (Option<i32>, CheckOut) {
    let out = env.mas(repo, &["check", range, "--json"]);
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("check --json is not its shape ({e}): {}\n{}", stdout(&out), stderr(&out)));
    (out.status.code(), report)
}

/// Adds agent `name` to the roster in the worktree and stages it (the key goes to the test's key dir).
fn stage_agent(env: &TestEnv, repo: &Path, name: &str) {
    env.mas_quiet_ok(repo, &["agent", "new", name]);
    env.git_quiet_ok(repo, &["add", ".mas/roster"]);
}

/// The roster blob staged and in HEAD.
fn blobs(env: &TestEnv, repo: &Path) -> (String, String) {
    (env.git(repo, &["rev-parse", "HEAD:.mas/roster"]), env.git(repo, &["rev-parse", ":.mas/roster"]))
}

fn key_of(env: &TestEnv, name: &str) -> AgentKey {
    AgentKey::load_from(name, &env.keys().join(format!("{name}.key"))).unwrap()
}

#[test]
fn the_first_roster_needs_no_trail_and_a_hook_signed_change_passes() {
    let (env, repo, fixture) = team();
    let (code, report) = check(&env, &repo, &format!("{fixture}..HEAD"));
    assert_eq!(code, Some(0), "{report:?}");
    let trail = report.commits[0].roster.as_ref().expect("the roster commit carries its judgment");
    assert_eq!((trail.status, trail.old.as_deref()), (TrailStatus::FirstRoster, None));

    // Alice, on the roster, adds bob: the commit-msg hook signs it, whatever mas.gate says.
    let base = env.git(&repo, &["rev-parse", "HEAD"]);
    stage_agent(&env, &repo, "bob");
    commit(&env, &repo, &["-qm", "Add bob"]);
    let message = env.git(&repo, &["log", "-1", "--format=%B"]);
    assert!(message.contains("Mas-Roster-Signed: alice "), "{message}");
    let (code, report) = check(&env, &repo, &format!("{base}..HEAD"));
    assert_eq!(code, Some(0), "{report:?}");
    let c = &report.commits[0];
    let trail = c.roster.as_ref().unwrap();
    assert_eq!(
        (c.status, trail.status, trail.signed_by.as_deref()),
        (CheckStatus::Ok, TrailStatus::Signed, Some("alice"))
    );
    assert_eq!(trail.new.as_deref(), Some(env.git(&repo, &["rev-parse", "HEAD:.mas/roster"]).as_str()));

    // An agent not on the roster cannot sign carol in: the hook warns and adds nothing.
    stage_agent(&env, &repo, "carol");
    let out = git_commit(&env, &repo, &["-qm", "Add carol"]).env("GIT_MAS_AGENT", "dave").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot be signed") && stderr(&out).contains("'dave' is not on the roster"),
        "{}",
        stderr(&out)
    );
    assert!(!env.git(&repo, &["log", "-1", "--format=%B"]).contains("Mas-Roster-Signed"));
}

#[test]
fn an_unsigned_roster_change_is_listed_until_someone_on_the_roster_signs_it() {
    let (env, repo, _) = team();
    let base = env.git(&repo, &["rev-parse", "HEAD"]);
    // --no-verify skips commit-msg: no trail.
    stage_agent(&env, &repo, "mallory");
    commit(&env, &repo, &["-qm", "Add mallory", "--no-verify"]);
    let head = env.git(&repo, &["rev-parse", "HEAD"]);
    let (code, report) = check(&env, &repo, &format!("{base}..HEAD"));
    assert_eq!(code, Some(6));
    let c = &report.commits[0];
    assert_eq!((c.commit.as_str(), c.status), (head.as_str(), CheckStatus::RosterUnsigned));
    let trail = c.roster.as_ref().unwrap();
    assert_eq!((trail.status, &trail.problems), (TrailStatus::Unsigned, &vec![TrailProblem::Missing]));
    // For people: the listed commit on stdout, why and how to sign on stderr.
    let human = env.mas(&repo, &["check", &format!("{base}..HEAD")]);
    assert_eq!(human.status.code(), Some(6));
    assert!(stdout(&human).contains(&format!("{} roster-unsigned Add mallory", &head[..12])), "{}", stdout(&human));
    assert!(stderr(&human).contains("missing: no Mas-Roster-Signed") && stderr(&human).contains("agent sign-roster"));
    // With mas.rosterTrail=off the check does not ask for it.
    env.git_quiet_ok(&repo, &["config", "mas.rosterTrail", "off"]);
    let (code, report) = check(&env, &repo, &format!("{base}..HEAD"));
    assert_eq!((code, report.commits[0].roster.as_ref().unwrap().status), (Some(0), TrailStatus::Off));
    env.git_quiet_ok(&repo, &["config", "--unset", "mas.rosterTrail"]);

    // Mallory cannot sign her own addition by hand; alice can, and rewording keeps it valid.
    let refused = env.mas(&repo, &["--agent", "mallory", "agent", "sign-roster", "--commit", "HEAD"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains("'mallory' is not on the roster before commit HEAD"), "{}", stderr(&refused));
    let signed: SignRosterOut =
        serde_json::from_str(&env.mas_ok(&repo, &["agent", "sign-roster", "--commit", "HEAD", "--json"])).unwrap();
    assert_eq!(signed.agent, "alice");
    commit(&env, &repo, &["--amend", "-q", "--no-verify", "--no-edit", "--trailer", &signed.trailer]);
    let (code, report) = check(&env, &repo, &format!("{base}..HEAD"));
    assert_eq!(code, Some(0), "{report:?}");
    assert_eq!(report.commits[0].roster.as_ref().unwrap().signed_by.as_deref(), Some("alice"));
}

#[test]
fn forged_trails_are_listed_each_by_name() {
    let (env, repo, _) = team();
    let base = env.git(&repo, &["rev-parse", "HEAD"]);
    stage_agent(&env, &repo, "mallory");
    let (old, new) = blobs(&env, &repo);
    let alice = key_of(&env, "alice");
    let mallory = key_of(&env, "mallory");
    let stranger = AgentKey::from_seed([42; 32]);
    let other = "0123456789012345678901234567890123456789";
    let cases: Vec<(&str, Trail, TrailProblem)> = vec![
        (
            "alice's name, another key",
            Trail::sign("alice", &stranger, Some(&old), Some(&new)),
            TrailProblem::WrongKey { agent: "alice".into() },
        ),
        (
            "alice's key over another blob",
            Trail::sign("alice", &alice, Some(&old), Some(other)),
            TrailProblem::OtherChange { agent: "alice".into(), signed_old: old.clone(), signed_new: other.into() },
        ),
        (
            "an agent on no roster",
            Trail::sign("zed", &stranger, Some(&old), Some(&new)),
            TrailProblem::NotOnRoster { agent: "zed".into() },
        ),
        (
            "the agent being added",
            Trail::sign("mallory", &mallory, Some(&old), Some(&new)),
            TrailProblem::SelfAdded { agent: "mallory".into() },
        ),
    ];
    for (name, trail, problem) in cases {
        let message = format!("Add mallory\n\n{}\n", trail.line());
        commit(&env, &repo, &["-q", "--no-verify", "-m", &message]);
        let (code, report) = check(&env, &repo, &format!("{base}..HEAD"));
        assert_eq!(code, Some(6), "{name}");
        let c = &report.commits[0];
        assert_eq!(c.status, CheckStatus::RosterUnsigned, "{name}");
        assert_eq!(c.roster.as_ref().unwrap().problems, vec![problem.clone()], "{name}");
        let human = env.mas(&repo, &["check", &format!("{base}..HEAD")]);
        assert!(stderr(&human).contains(&problem.to_string()), "{name}: {}", stderr(&human));
        env.git_quiet_ok(&repo, &["reset", "-q", "--soft", "HEAD~"]);
    }
    // The same commit with alice's real signature passes.
    let trail = Trail::sign("alice", &alice, Some(&old), Some(&new));
    commit(&env, &repo, &["-q", "--no-verify", "-m", &format!("Add mallory\n\n{}\n", trail.line())]);
    assert_eq!(check(&env, &repo, &format!("{base}..HEAD")).0, Some(0));
}

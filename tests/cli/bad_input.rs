//! Bad input: a clear message, a documented exit code, and no ref changed.

use crate::common::*;

#[test]
fn outside_a_repository() {
    let env = TestEnv::new();
    let dir = env.root().join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    for args in [vec!["log"], vec!["init"], vec!["agent", "list"], vec!["sync"]] {
        let out = env.mas_cmd(&dir).env("GIT_CEILING_DIRECTORIES", env.root()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains("not a git repository"), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_bare_repository_where_a_worktree_is_needed() {
    let env = TestEnv::new();
    let bare = env.root().join("bare.git");
    env.git(env.root(), &["init", "--quiet", "--bare", bare.to_str().unwrap()]);
    for args in [vec!["init"], vec!["agent", "new", "alice"]] {
        let out = env.mas(&bare, &args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains("is a bare repository"), "{}", stderr(&out));
    }
    assert!(!env.keys().join("alice.key").exists(), "no key was created");
    // Reading works in a bare repository.
    assert_eq!(env.mas(&bare, &["log"]).status.code(), Some(0));
}

#[test]
fn invalid_agent_names_change_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("names");
    env.mas_ok(&repo, &["init"]);
    let roster_before = std::fs::read(repo.join(".mas/roster")).unwrap();
    let long = "a".repeat(64);
    for (name, want) in [
        ("", "empty"),
        (long.as_str(), "limit is 63"),
        ("al/ice", "'/'"),
        ("a..b", "'..'"),
        ("al ice", "' '"),
        ("Alice", "'A'"),
    ] {
        let out = env.mas(&repo, &["agent", "new", name]);
        assert_eq!(out.status.code(), Some(1), "{name:?}");
        assert!(stderr(&out).contains(want), "{name:?}: {}", stderr(&out));
        let out = env.mas(&repo, &["--agent", name, "whoami"]);
        assert_eq!(out.status.code(), Some(1), "whoami as {name:?}");
    }
    assert_eq!(std::fs::read(repo.join(".mas/roster")).unwrap(), roster_before);
    assert!(!env.keys().exists() || std::fs::read_dir(env.keys()).unwrap().next().is_none());
}

#[test]
fn a_malformed_roster_line_is_named() {
    let env = TestEnv::new();
    let repo = env.repo("roster");
    env.agents(&repo, &["alice"]);
    env.mas_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note"]);
    let before = env.refs(&repo);
    let mut roster = std::fs::read_to_string(repo.join(".mas/roster")).unwrap();
    roster.push_str("bob\n");
    std::fs::write(repo.join(".mas/roster"), roster).unwrap();
    for args in
        [vec!["log", "alice"], vec!["agent", "list"], vec!["--agent", "alice", "record", "append", "--kind", "note"]]
    {
        let out = env.mas(&repo, &args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains("expected `name did:key`, found \"bob\""), "{}", stderr(&out));
    }
    assert_eq!(env.refs(&repo), before);
}

#[test]
fn a_missing_or_world_readable_private_key_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let repo = env.repo("keyrepo");
    env.agents(&repo, &["alice"]);
    let before = env.refs(&repo);
    let key = env.keys().join("alice.key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = env.mas(&repo, &["--agent", "alice", "record", "append", "--kind", "note"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("readable by others") && stderr(&out).contains("chmod 600"), "{}", stderr(&out));
    std::fs::remove_file(&key).unwrap();
    let out = env.mas(&repo, &["--agent", "alice", "record", "append", "--kind", "note"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no private key for agent 'alice'"), "{}", stderr(&out));
    assert_eq!(env.refs(&repo), before);
}

#[test]
fn bad_record_arguments_change_no_ref() {
    let env = TestEnv::new();
    let repo = env.repo("args");
    env.agents(&repo, &["alice", "bob"]);
    env.mas_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note"]);
    let before = env.refs(&repo);
    let cases: &[(&[&str], &str)] = &[
        (&["--agent", "alice", "record", "append", "--kind", "note", "--payload", "{oops"], "not valid JSON"),
        (&["--agent", "alice", "record", "append", "--kind", "Bad Kind"], "not a lower-case word"),
        (
            &["--agent", "alice", "record", "append", "--kind", "note", "--ref", "refs/heads/main"],
            "not a valid ref under refs/mas/",
        ),
        (
            &["--agent", "alice", "record", "append", "--kind", "note", "--ref", "refs/mas/journal/bob"],
            "belongs to agent 'bob'",
        ),
        (&["--agent", "carol", "record", "append", "--kind", "note"], "not on the roster"),
        (&["record", "append", "--kind", "note"], "no agent identity"),
    ];
    for (args, want) in cases {
        let out = env.mas(&repo, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
    let out = env.mas(&repo, &["record", "append"]);
    assert_eq!(out.status.code(), Some(2), "a missing required flag is a usage error");
    assert_eq!(env.refs(&repo), before);
}

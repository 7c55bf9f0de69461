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
    env.git_quiet_ok(env.root(), &["init", "--quiet", "--bare", bare.to_str().unwrap()]);
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
    env.mas_quiet_ok(&repo, &["init"]);
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
    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note"]);
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
    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note"]);
    let before = env.refs(&repo);
    // Argument values clap cannot check are usage errors, as clap's own are.
    for (args, want) in [
        (&["--agent", "alice", "record", "append", "--kind", "note", "--payload", "{oops"][..], "not valid JSON"),
        (&["--agent", "alice", "record", "append", "--kind", "Bad Kind"][..], "not a lower-case word"),
    ] {
        let out = env.mas(&repo, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).starts_with("Error: ") && stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
    let cases: &[(&[&str], &str)] = &[
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

#[test]
fn an_invalid_mas_branch_is_a_user_error_with_a_hint_not_an_internal_one() {
    let env = TestEnv::new();
    let repo = env.repo("branch");
    env.agents(&repo, &["alice"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note"]);
    let before = env.refs(&repo);
    for bad in ["../../etc", "a..b", "x.lock", "-main"] {
        env.git_quiet_ok(&repo, &["config", "mas.branch", bad]);
        for args in [vec!["log"], vec!["--agent", "alice", "record", "append", "--kind", "note"], vec!["run", "list"]] {
            let out = env.mas(&repo, &args);
            assert_eq!(out.status.code(), Some(1), "mas.branch={bad} {args:?}: {}", stderr(&out));
            let err = stderr(&out);
            assert!(
                err.contains("mas.branch") && err.contains(bad) && err.contains("not a valid branch name"),
                "{err}"
            );
            assert!(
                err.lines().any(|l| l.starts_with("Hint: ") && l.contains("git config --unset mas.branch")),
                "{err}"
            );
        }
    }
    assert_eq!(env.refs(&repo), before);
    // A valid name that is simply not main is fine.
    env.git_quiet_ok(&repo, &["config", "mas.branch", "release/v1"]);
    assert_eq!(env.mas(&repo, &["log"]).status.code(), Some(0));
}

#[test]
fn dash_c_with_a_relative_path_to_a_bare_repository_works() {
    let env = TestEnv::new();
    let repo = env.repo("work");
    env.agents(&repo, &["alice"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "record", "append", "--kind", "note"]);
    let bare = env.root().join("shared.git");
    env.git_quiet_ok(env.root(), &["clone", "--quiet", "--bare", repo.to_str().unwrap(), bare.to_str().unwrap()]);
    env.git_quiet_ok(&repo, &["push", "--quiet", bare.to_str().unwrap(), "refs/mas/*:refs/mas/*"]);
    // From inside another repository, and from the parent directory, with `..` and without.
    for (dir, path) in
        [(&repo, "../shared.git"), (&env.root().to_path_buf(), "shared.git"), (&repo, "../shared.git/refs")]
    {
        let out = env.mas(dir, &["-C", path, "log", "alice", "--json"]);
        assert_eq!(out.status.code(), Some(0), "-C {path} from {}: {}", dir.display(), stderr(&out));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json[0]["ref"], "refs/mas/journal/alice", "-C {path} read the bare repository's refs");
    }
    // A relative path that does not exist is named.
    let out = env.mas(&repo, &["-C", "../nowhere", "log"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("nowhere") && stderr(&out).contains("not a directory"), "{}", stderr(&out));
}

#[test]
fn a_negative_or_zero_ttl_is_refused_as_not_positive_not_as_an_unknown_flag() {
    let env = TestEnv::new();
    let repo = env.repo("ttl");
    env.agents(&repo, &["alice"]);
    let before = env.refs(&repo);
    for args in [
        vec!["--agent", "alice", "focus", "publish", "--targets", "src/lib.rs", "--ttl", "-5m"],
        vec!["--agent", "alice", "focus", "publish", "--targets", "src/lib.rs", "--ttl=-5m"],
        vec!["--agent", "alice", "focus", "publish", "--targets", "src/lib.rs", "--ttl", "0s"],
    ] {
        let out = env.mas(&repo, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: a bad flag value is a usage error");
        let err = stderr(&out);
        assert!(err.contains("a TTL must be positive"), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{err}");
    }
    let out = env.mas(&repo, &["--agent", "alice", "focus", "publish", "--targets", "src/lib.rs", "--ttl", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not a duration"), "{}", stderr(&out));
    assert_eq!(env.refs(&repo), before);
}

/// Writes zeros into a FIFO until the reader closes it; returns how many bytes went in.
fn feed_fifo(path: std::path::PathBuf) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        use std::io::Write;
        let Ok(mut fifo) = std::fs::OpenOptions::new().write(true).open(&path) else { return 0 };
        let chunk = vec![0u8; 1 << 20];
        let mut sent = 0u64;
        while fifo.write_all(&chunk).is_ok() {
            sent += chunk.len() as u64;
        }
        sent
    })
}

#[test]
fn snapshot_inputs_are_read_up_to_a_bound_named_in_the_error_and_change_no_ref() {
    let env = TestEnv::new();
    let repo = env.repo("bounds");
    env.agents(&repo, &["alice"]);
    let before = env.refs(&repo);
    // Sparse files over each limit: refused from their size, without reading them.
    let huge = env.root().join("huge.bin");
    std::fs::File::create(&huge).unwrap().set_len(3 << 30).unwrap();
    let huge = huge.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--scip", "/dev/zero"],
            "the SCIP index /dev/zero is larger than 1 GiB, the most a snapshot reads from a SCIP index",
        ),
        (&["--scip", huge], "the SCIP index"),
        (&["--diagnostics", huge], "larger than 256 MiB, the most a snapshot reads from a diagnostics file"),
        (&["--task-file", huge], "larger than 1 MiB, the most a snapshot reads from a task file"),
        (&["--editor-file", huge], "larger than 1 MiB, the most a snapshot reads from a list of open files"),
    ];
    for (flags, want) in cases {
        let mut args = vec!["--agent", "alice", "snapshot", "--publish"];
        args.extend_from_slice(flags);
        let started = std::time::Instant::now();
        let out = env.mas(&repo, &args);
        assert_eq!(out.status.code(), Some(1), "{flags:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{flags:?}: {}", stderr(&out));
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "{flags:?} read far past its bound");
    }
    // A FIFO stops at the bound: the writer is cut off after about 256 MiB, not fed forever.
    let fifo = env.root().join("diag.fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let writer = feed_fifo(fifo.clone());
    let out = env.mas(&repo, &["--agent", "alice", "snapshot", "--publish", "--diagnostics", fifo.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("diag.fifo is larger than 256 MiB"), "{}", stderr(&out));
    let sent = writer.join().unwrap();
    assert!(sent <= (256 << 20) + (2 << 20) + (1 << 20), "the reader took {sent} bytes");
    assert_eq!(env.refs(&repo), before, "a refused snapshot changed refs");
}

#[test]
fn argument_values_and_flag_combinations_clap_cannot_check_are_usage_errors() {
    let env = TestEnv::new();
    let repo = env.repo("usage");
    env.agents(&repo, &["alice"]);
    let before = env.refs(&repo);
    let converge = ["--agent", "alice", "converge", "--pattern", "preference", "--agents"];
    let cases: &[(Vec<&str>, &str, Option<&str>)] = &[
        (vec!["--agent", "alice", "focus", "publish"], "name targets with --targets", None),
        ([&converge[..], &["builtin:reference", "--goal", " "]].concat(), "--goal must be between", None),
        (
            [&converge[..], &["builtin:oracle"]].concat(),
            "--agents is not a list of peer specs\nCaused by: ",
            Some("peers are cmd:<command line>"),
        ),
    ];
    for (args, want, hint) in cases {
        let out = env.mas(&repo, args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with(&format!("Error: {want}")), "{args:?}: {err}");
        if let Some(hint) = hint {
            assert!(err.lines().any(|l| l.starts_with(&format!("Hint: {hint}"))), "{args:?}: {err}");
        }
    }
    assert_eq!(env.refs(&repo), before);
}

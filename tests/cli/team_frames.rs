//! Team mode while the frame moves: a frame published in the middle of sessions' work refuses no
//! edit that the old frame allowed, and takes no protection away from a claim still on the old
//! frame.

use crate::common::*;
use crate::json::focus::FocusListOut;
use crate::team_mode::{board, hook, team_repo, write_payload};
use std::path::Path;

/// `agent`'s live entry: its frame and targets.
fn live(board: &FocusListOut, agent: &str) -> (String, Vec<String>) {
    let f = board.board.live().find(|f| f.agent == agent).unwrap_or_else(|| panic!("{agent} is not live: {board:?}"));
    (f.frame.clone(), f.targets.clone())
}

/// The agent a session's allowed edit says claims `path` (the hook's note: `<agent> claims <path>`).
fn claimer(note: &str, path: &str) -> String {
    let suffix = format!(" claims {path}");
    note.split(&['\n', ';'][..])
        .find_map(|part| part.trim().strip_suffix(suffix.as_str())?.split_whitespace().last().map(str::to_string))
        .unwrap_or_else(|| panic!("no claim of {path} in {note:?}"))
}

fn allowed(env: &TestEnv, repo: &Path, session: &str, path: &str) -> String {
    let (verdict, note) = hook(env, repo, &write_payload(repo, session, path));
    assert_eq!(verdict, "allow", "{session} editing {path}: {note}");
    note
}

fn denied(env: &TestEnv, repo: &Path, session: &str, path: &str) -> String {
    let (verdict, reason) = hook(env, repo, &write_payload(repo, session, path));
    assert_eq!(verdict, "deny", "{session} editing {path}: {reason}");
    reason
}

#[test]
fn a_frame_published_mid_session_refuses_nothing_the_old_one_allowed_and_protects_old_claims() {
    let env = TestEnv::new();
    let repo = team_repo(&env);

    // A claims two files (the first edit publishes the frame), B one.
    let a = claimer(&allowed(&env, &repo, "session-a", "src/lib.rs"), "src/lib.rs");
    assert_eq!(claimer(&allowed(&env, &repo, "session-a", "src/report.rs"), "src/report.rs"), a);
    let b = claimer(&allowed(&env, &repo, "session-b", "src/money.rs"), "src/money.rs");
    let before = board(&env, &repo);
    let old = before.frame.clone().expect("the first edit published a frame");
    assert_eq!(live(&before, &a).0, old);
    let mut a_targets = live(&before, &a).1;
    a_targets.sort();
    assert_eq!(a_targets, ["src/lib.rs", "src/report.rs"]);
    assert_eq!(live(&before, &b), (old.clone(), vec!["src/money.rs".to_string()]));

    // The working tree changes (one of A's files deleted, another file edited) and a new frame is
    // published by hand.
    std::fs::remove_file(repo.join("src/report.rs")).unwrap();
    std::fs::write(repo.join("README.md"), "changed so that the frame moves\n").unwrap();
    env.mas_quiet_ok(&repo, &["--agent", "alice", "snapshot", "--publish"]);
    let moved = board(&env, &repo);
    let new = moved.frame.clone().unwrap();
    assert_ne!(new, old, "the frame moved");
    assert_eq!(live(&moved, &a).0, old, "nobody moves a session's focus but its own edit");
    assert_eq!(live(&moved, &b).0, old);

    // A's claim on the older frame still holds its file against B.
    let reason = denied(&env, &repo, "session-b", "src/lib.rs");
    assert!(reason.contains(&a), "the deny names A: {reason}");
    // So does its claim on the deleted file, while A's focus is still on the older frame.
    assert!(denied(&env, &repo, "session-c", "src/report.rs").contains(&a));

    // A's edit of its own file: allowed, and its focus moves onto the new frame without the
    // deleted file.
    let note = allowed(&env, &repo, "session-a", "src/lib.rs");
    assert!(note.contains("no longer claims src/report.rs"), "{note}");
    let after_a = board(&env, &repo);
    assert_eq!(live(&after_a, &a), (new.clone(), vec!["src/lib.rs".to_string()]), "A moved, report.rs not carried");
    assert_eq!(live(&after_a, &b).0, old, "B has not edited since: still on the older frame");

    // B's edit of its own file from the older frame: allowed, and B moves.
    allowed(&env, &repo, "session-b", "src/money.rs");
    let after_b = board(&env, &repo);
    assert_eq!(live(&after_b, &b), (new.clone(), vec!["src/money.rs".to_string()]), "B moved");

    // B is still denied A's file; A is denied B's.
    assert!(denied(&env, &repo, "session-b", "src/lib.rs").contains(&a));
    assert!(denied(&env, &repo, "session-a", "src/money.rs").contains(&b));

    // A third session edits a free file, and the file A no longer claims: both allowed.
    let c = claimer(&allowed(&env, &repo, "session-c", "src/error.rs"), "src/error.rs");
    assert_eq!(claimer(&allowed(&env, &repo, "session-c", "src/report.rs"), "src/report.rs"), c);
    let end = board(&env, &repo);
    let (frame, mut targets) = live(&end, &c);
    targets.sort();
    assert_eq!((frame, targets), (new, vec!["src/error.rs".to_string(), "src/report.rs".to_string()]));
    assert_eq!(end.board.live().count(), 3, "{end:?}");
}

//! The caller rule's order, on real repositories: pinned, then (outside team mode) `mas.agent`;
//! in team mode the worktree's own `mas.agent`, the payload's session, the environment's session,
//! then the principal.

use super::*;
use std::path::{Path, PathBuf};

/// An environment holding the variables given.
struct Vars(Vec<(&'static str, &'static str)>);

impl Env for Vars {
    fn var(&self, name: &str) -> Option<PathBuf> {
        self.0.iter().find(|(k, _)| *k == name).map(|(_, v)| PathBuf::from(v))
    }
}

fn git(dir: &Path, args: &[&str]) {
    crate::git::run(dir, args).unwrap();
}

fn repo(team: bool) -> (tempfile::TempDir, Store) {
    let tmp = tempfile::tempdir().unwrap();
    git(tmp.path(), &["init", "-q", "-b", "main"]);
    if team {
        git(tmp.path(), &["config", "mas.team", "true"]);
    }
    let store = Store::discover(tmp.path()).unwrap();
    (tmp, store)
}

fn reopen(dir: &Path) -> Store {
    Store::discover(dir).unwrap()
}

#[test]
fn outside_team_mode_the_flag_then_config_names_the_caller() {
    let (tmp, store) = repo(false);
    let none = Vars(vec![("CLAUDE_CODE_SESSION_ID", "s1")]);
    assert!(matches!(resolve(&store, &Ask::default(), &none), Err(CallerError::NoIdentity)));
    git(tmp.path(), &["config", "mas.agent", "alice"]);
    let store = reopen(tmp.path());
    let who = resolve(&store, &Ask::default(), &none).unwrap();
    assert_eq!((who.name.as_str(), who.source), ("alice", Source::Config));
    let who = resolve(&store, &Ask { pinned: Some("bob"), session: None }, &none).unwrap();
    assert_eq!((who.name.as_str(), who.source), ("bob", Source::FlagOrEnv));
    assert!(matches!(
        resolve(&store, &Ask { pinned: Some("no way"), session: None }, &none),
        Err(CallerError::Name(_))
    ));
}

#[test]
fn in_team_mode_a_session_is_its_principals_agent_the_payloads_id_first() {
    let (tmp, _) = repo(true);
    git(tmp.path(), &["config", "mas.agent", "alice"]);
    let store = reopen(tmp.path());
    let env = Vars(vec![("CLAUDE_CODE_SESSION_ID", "from-env")]);
    let from_env = resolve(&store, &Ask::default(), &env).unwrap();
    assert_eq!(from_env.source, Source::Session);
    assert_eq!(
        from_env.name,
        crate::identity::session_agent("alice", Host::ClaudeCode.session_name(), "from-env").unwrap()
    );
    let ask = Ask { pinned: None, session: Some((Host::Codex, "from-payload")) };
    let from_payload = resolve(&store, &ask, &env).unwrap();
    assert_eq!(
        from_payload.name,
        crate::identity::session_agent("alice", Host::Codex.session_name(), "from-payload").unwrap()
    );
    // A pinned identity wins over both.
    let pinned = resolve(&store, &Ask { pinned: Some("carol"), ..ask }, &env).unwrap();
    assert_eq!((pinned.name.as_str(), pinned.source), ("carol", Source::FlagOrEnv));
    // Without a session, the principal: who commits is then not known.
    let bare = Vars(vec![]);
    let principal = resolve(&store, &Ask::default(), &bare).unwrap();
    assert_eq!((principal.name.as_str(), principal.source), ("alice", Source::Config));
    assert_eq!(committer(&store, &Ask::default(), &bare).unwrap(), None);
    assert_eq!(committer(&store, &Ask::default(), &env).unwrap(), Some(from_env.name));
}

#[test]
fn in_team_mode_a_worktree_of_one_agent_is_that_agent_whatever_the_session() {
    let (tmp, _) = repo(true);
    git(tmp.path(), &["config", "mas.agent", "alice"]);
    git(tmp.path(), &["config", "extensions.worktreeConfig", "true"]);
    git(tmp.path(), &["config", "--worktree", "mas.agent", "bob"]);
    let store = reopen(tmp.path());
    let env = Vars(vec![("CLAUDE_CODE_SESSION_ID", "from-env")]);
    let ask = Ask { pinned: None, session: Some((Host::Codex, "from-payload")) };
    let who = resolve(&store, &ask, &env).unwrap();
    assert_eq!((who.name.as_str(), who.source), ("bob", Source::Config));
    assert_eq!(committer(&store, &Ask::default(), &env).unwrap(), Some("bob".to_string()));
}

#[test]
fn in_team_mode_without_a_principal_a_session_cannot_be_named() {
    let (tmp, store) = repo(true);
    let env = Vars(vec![("CLAUDE_CODE_SESSION_ID", "from-env")]);
    // No mas.agent and no roster: no member's key can be here.
    assert!(resolve(&store, &Ask::default(), &env).is_err());
    assert_eq!(committer(&store, &Ask::default(), &env).unwrap(), None);
    drop(tmp);
}

//! Session agents: `<principal>.<host>-<8 hex>` signs with its principal's key, verifies as the
//! principal's, and is an agent of its own on the board — with no roster entry of its own.

use crate::common::*;
use crate::json::focus::FocusListOut;
use crate::json::gate::GateOut;
use git_mas::attention::gate::Verdict;
use git_mas::identity::session_agent;

const CLAUDE: &str = "alice.claude-3f2a9c1b";
const CODEX: &str = "alice.codex-00ff00ff";

#[test]
fn a_session_of_a_principal_holds_files_as_an_agent_of_its_own() {
    let env = TestEnv::new();
    let team = env.team(&["alice", "bob"]).frame("alice").build();
    let repo = team.repo.clone();
    let before = std::fs::read_to_string(repo.join(".mas/roster")).unwrap();
    // The session signs with alice's key: no roster entry, no key of its own.
    let out = env.mas_ok(&repo, &["--agent", CLAUDE, "focus", "publish", "--targets", "src/lib.rs"]);
    assert!(out.contains("src/lib.rs"), "{out}");
    assert_eq!(std::fs::read_to_string(repo.join(".mas/roster")).unwrap(), before, "no roster entry added");
    assert!(!env.keys().join(format!("{CLAUDE}.key")).exists(), "no key of its own");
    let whoami: serde_json::Value =
        serde_json::from_str(&env.mas_ok(&repo, &["--agent", CLAUDE, "whoami", "--json"])).unwrap();
    assert_eq!(whoami["name"], CLAUDE);
    assert_eq!(whoami["can_sign"], true, "{whoami}");
    let alice: serde_json::Value =
        serde_json::from_str(&env.mas_ok(&repo, &["--agent", "alice", "whoami", "--json"])).unwrap();
    assert_eq!(whoami["did"], alice["did"], "the principal's did");

    // Its record verifies, as alice's.
    let (code, chains) = log_chains(&env, &repo, &format!("refs/mas/focus/{CLAUDE}"));
    assert_eq!(code, Some(0));
    assert!(chains.len() == 1 && all_verified(&chains[0]), "{chains:?}");

    // On the board it is its own agent: bob, and another session of alice, are held off its file.
    let board: FocusListOut = serde_json::from_str(&env.mas_ok(&repo, &["focus", "list", "--json"])).unwrap();
    assert!(board.board.live().any(|f| f.agent == CLAUDE), "{board:?}");
    for other in ["bob", CODEX] {
        env.mas_quiet_ok(&repo, &["--agent", other, "focus", "publish", "--targets", "src/money.rs"]);
        let out = env.mas(&repo, &["--agent", other, "gate", "--paths", "src/lib.rs", "--json"]);
        assert_eq!(out.status.code(), Some(6), "{other}: {}", stderr(&out));
        let gate: GateOut = serde_json::from_slice(&out.stdout).unwrap();
        let Verdict::Block { blocks } = gate.verdict else { panic!("{other}: {:?}", gate.verdict) };
        assert_eq!(blocks[0].holder, CLAUDE, "{other}");
        env.mas_quiet_ok(&repo, &["--agent", other, "focus", "release", "--force"]);
    }
    // The session itself may write its file.
    env.mas_quiet_ok(&repo, &["--agent", CLAUDE, "gate", "--paths", "src/lib.rs"]);
}

#[test]
fn a_session_name_needs_its_principal_on_the_roster_and_the_principals_key() {
    let env = TestEnv::new();
    let team = env.team(&["alice", "bob"]).frame("alice").build();
    let repo = team.repo.clone();
    let before = env.refs(&repo);
    // No principal carol.
    let out = env.mas(&repo, &["--agent", "carol.claude-3f2a9c1b", "focus", "publish", "--targets", "src/lib.rs"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("not on the roster"), "{}", stderr(&out));
    // A machine holding alice's key under bob's name cannot sign as a session of bob.
    let spoof = env.root().join("spoof-keys");
    std::fs::create_dir_all(&spoof).unwrap();
    std::fs::copy(env.keys().join("alice.key"), spoof.join("bob.key")).unwrap();
    let out = env
        .mas_cmd(&repo)
        .env("GIT_MAS_KEY_DIR", &spoof)
        .args(["--agent", "bob.claude-3f2a9c1b", "focus", "publish", "--targets", "src/lib.rs"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("not the one on the roster"), "{}", stderr(&out));
    assert_eq!(env.refs(&repo), before, "nothing written");
    // Names are derived, stable, and of the shape the roster reads as a session.
    let name = session_agent("alice", "claude", "3f2a9c1b-0000-4000-8000-000000000001").unwrap();
    assert_eq!(name, session_agent("alice", "claude", "3f2a9c1b-0000-4000-8000-000000000001").unwrap());
    assert_eq!(git_mas::identity::principal_of(&name), Some("alice"));
}

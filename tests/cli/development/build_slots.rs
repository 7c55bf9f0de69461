//! Checks share a build directory per repository (`pool::build_slot`): the second check of the
//! same crate finds the first one's build, and a tree is never passed on another tree's build.

use super::*;

#[test]
fn checks_of_one_repository_share_a_build_and_each_tree_is_built_as_it_is() {
    let team = Team::new(&["alice", "bob", "carol"]);
    let log = team.env.root().join("builds.log");
    // The crate's own tests; the check notes whether the build directory it is given already
    // holds a build.
    let check = format!(
        "if [ -d \"$CARGO_TARGET_DIR/debug\" ]; then echo warm; else echo cold; fi >> '{}'; cargo test --offline --quiet --lib",
        log.display()
    );
    let run = team.start("alice", &["--id", "r1", "--check", &check]);
    let (alice, bob) = (team.worktree(&run, "alice"), team.worktree(&run, "bob"));
    // alice fixes the tax rounding (the crate's tests pass); bob leaves a function unclosed.
    let tax = alice.join("src/pricing/tax.rs");
    let text = std::fs::read_to_string(&tax).unwrap();
    let buggy = "Money::from_cents(amount.cents() * i64::from(rate_bp) / 10_000)";
    assert_eq!(text.matches(buggy).count(), 1);
    std::fs::write(&tax, text.replace(buggy, "amount.percent_bp(rate_bp)")).unwrap();
    let lib = bob.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, format!("{text}\npub fn unfinished() -> u32 {{\n")).unwrap();
    team.here_quiet_ok(&alice, &["propose"]);
    team.here_quiet_ok(&bob, &["propose"]);
    let endorse = |who: &str, whose: &str| {
        let mut cmd = team.env.mas_cmd(&team.repo);
        with_toolchain(&mut cmd).args(["--agent", who, "endorse", whose, "--json"]);
        let out = cmd.output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", shown(&out)));
        (out.status.code(), v["verdict"].as_str().unwrap_or_default().to_string())
    };
    // One after another, alternating trees: each verdict is its own tree's.
    assert_eq!(endorse("carol", "alice"), (Some(0), "passed".into()));
    assert_eq!(endorse("carol", "bob"), (Some(9), "failed".into()), "bob's tree is not passed on alice's build");
    assert_eq!(endorse("alice", "bob"), (Some(9), "failed".into()));
    assert_eq!(endorse("bob", "alice"), (Some(0), "passed".into()), "alice's tree is rebuilt after bob's");
    // The first check built cold; every later one found the build directory warm.
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "cold\nwarm\nwarm\nwarm\n");
}

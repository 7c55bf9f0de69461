//! Version, help, man pages and completions.

use crate::common::*;

#[test]
fn version_and_help() {
    let env = TestEnv::new();
    let out = env.mas_ok(env.root(), &["--version"]);
    assert_eq!(out.trim(), format!("git-mas {}", env!("CARGO_PKG_VERSION")));
    let out = env.mas_ok(env.root(), &["-h"]);
    assert!(out.contains("Usage: git mas") && out.contains("agent") && out.contains("sync"), "{out}");
    let out = env.mas_ok(env.root(), &["help", "sync"]);
    assert!(out.contains("fast-forward only") && out.contains("Exit status") || out.contains("Exits 5"), "{out}");
    let out = env.mas(env.root(), &["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `git mas gate --help` lists the hosts and their answers from the host table: every host of
/// the table is named, in the `--host HOST (…)` list and among the answers, and `-h` keeps the
/// one-line summary.
#[test]
fn gate_help_names_every_host_of_the_table() {
    let env = TestEnv::new();
    let out = env.mas_ok(env.root(), &["gate", "--help"]);
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    let names: Vec<&str> = git_mas::hosts::TABLE.iter().map(|f| f.name).collect();
    assert!(flat.contains(&format!("With --host HOST ({}) this is", names.join(", "))), "{flat}");
    let answers = &flat[flat.find("The exit code is always 0").expect("the answers paragraph")..];
    for name in &names {
        assert!(answers.contains(name), "{name} among the answers: {answers}");
    }
    assert!(flat.contains("Decide whether the calling agent may commit a change"), "{flat}");
    assert!(flat.contains("Blocks (exit 6) when another agent holds a target"), "{flat}");
    let short = env.mas_ok(env.root(), &["gate", "-h"]);
    assert!(short.contains("Decide whether the calling agent may commit a change"), "{short}");
}

#[test]
fn completions_for_bash_zsh_and_fish() {
    let env = TestEnv::new();
    for (shell, marker) in [("bash", "complete -F"), ("zsh", "#compdef git-mas"), ("fish", "complete -c git-mas")] {
        let out = env.mas_ok(env.root(), &["completions", shell]);
        assert!(out.contains(marker), "{shell}: {}", &out[..out.len().min(200)]);
        assert!(out.contains("agent") && out.contains("sync"), "{shell}");
    }
}

#[test]
fn installed_man_page_serves_git_mas_help() {
    let env = TestEnv::new();
    let man = env.root().join("man");
    let out = env.mas_ok(env.root(), &["install-man", "--dir", man.join("man1").to_str().unwrap()]);
    assert!(out.trim().ends_with("git-mas.1"));
    assert!(man.join("man1/git-mas.1").exists() && man.join("man1/git-mas-sync.1").exists());
    // git turns `git mas --help` into `man git-mas`.
    let bin_dir = std::path::Path::new(BIN).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let out = env
        .git_cmd(env.root())
        .env("PATH", path)
        .env("MANPATH", &man)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "100")
        .args(["mas", "--help"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("git-mas") && text.contains("Coordinate a team of coding agents"), "{text}");
}

#[test]
fn the_demo_runs_end_to_end() {
    let env = TestEnv::new();
    let dir = env.root().join("demo");
    // The demo's team checks with the fixture's check.sh, which runs cargo.
    let out =
        with_toolchain(&mut env.mas_cmd(env.root())).args(["demo", "--dir", dir.to_str().unwrap()]).output().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    for want in [
        "SPOOF",
        "reproduces exactly",
        "serialize on src/money.rs: alice holds, bob defers",
        "is held by alice",
        "Mas-Agent: bob",
        "landed alice on main as",
        "Mas-Winner: alice",
    ] {
        assert!(text.contains(want), "demo output lacks {want:?}");
    }
    assert!(dir.join("remote.git").exists(), "--dir keeps the scratch directory");
    // It opens with team mode, before the records by hand: session a's edit claims src/money.rs,
    // session b's edit of it is refused naming the holder, b's shell write to it is put back after
    // the call, and `git mas status` shows the sessions.
    let team = &text[..text.find("\n== 2.").expect("the steps by hand")];
    assert!(team.contains("== 1. team mode"), "{team}");
    let refused = &team[team.find("session b's Write of the same file").expect("b's write")..];
    assert!(refused.contains("\"permissionDecision\":\"deny\"") && refused.contains("dana.claude-"), "{team}");
    let shell = &team[team.find("session b tries the shell").expect("b's shell call")..];
    assert!(shell.contains("put back") && shell.contains("byte for byte what session a left"), "{team}");
    let status = &team[team.find("$ git mas status").expect("the status")..];
    assert!(status.contains("dana.claude-") && status.contains("src/money.rs"), "{team}");
    assert!(std::fs::read_to_string(dir.join("team-mode/src/money.rs")).unwrap().lines().all(|l| l != "// mine"));
    // The team's final report: converged, with exactly one landing on main.
    let report = text.lines().find(|l| l.trim_start().starts_with("run ") && l.contains(": landed (converged, "));
    assert!(report.is_some(), "no converged report in the demo's output:\n{text}");
    let count = text.split("rev-list --count --grep=^Mas-Run: main").nth(1).and_then(|rest| rest.lines().nth(1));
    assert_eq!(count.map(str::trim), Some("1"), "exactly one landing on main");
    // The gate: blocked first, allowed after alice's work landed.
    let blocked = text.find("the pre-commit hook blocks it").unwrap();
    let landed = text.find("landed alice on main as").unwrap();
    let receipt = text.rfind("Mas-Agent: bob").unwrap();
    assert!(blocked < landed && landed < receipt, "blocked, then landed, then bob's commit");
    assert!(text.contains("scratch repositories kept for inspection at"), "the path is printed");
    // The team's check is the fixture's real test suite: it fails on main before the run (both
    // bugs), and passes on main's tip after the landing.
    let before = text.find("main-before && git -C alice archive main").expect("the check on main before the run");
    let after = text.find("main-after && git -C alice archive main").expect("the check on main after the landing");
    assert!(before < landed && landed < after, "checked before the run, and after the landing");
    let base = &text[before..text[before..].find("each agent works in its own worktree").unwrap() + before];
    assert!(base.contains("check.sh: FAILED: rust python"), "both suites fail on the base:\n{base}");
    assert!(base.contains("tax_rounds_to_the_nearest_cent") && base.contains("test_at_the_threshold"), "{base}");
    let tip = &text[after..text[after..].find("\n== 10.").unwrap() + after];
    assert!(tip.contains("check.sh: all tests passed (rust python)"), "the tests pass on main:\n{tip}");
    assert!(dir.join("main-after/src/pricing/tax.rs").exists(), "the export of main's tip is kept");
    let tax = std::fs::read_to_string(dir.join("main-after/src/pricing/tax.rs")).unwrap();
    assert!(tax.contains("amount.percent_bp(rate_bp)"), "the landed fix is on main:\n{tax}");

    // Then the aggregate run on a fresh copy: the plan before the first hop, one slice per bug,
    // grace and dave (faulty) reviewing with no slice, both slices landed together, and the tests
    // that failed on that copy's base pass on its main.
    let aggregate = &text[text.find("\n== 11.").expect("the aggregate step")..];
    let plan = aggregate.find("slices from frame").expect("the plan is shown");
    let first_hop = aggregate.find("round 1 · propose hop").unwrap();
    assert!(plan < first_hop, "the plan comes before the first hop");
    assert!(aggregate.contains("landed erin, frank on main as"), "{aggregate}");
    assert!(aggregate.contains("Mas-Termination: quality_reached"), "{aggregate}");
    assert!(
        aggregate.contains("    dave         (reviews: nothing the goal concerns is left for a fourth slice)"),
        "{aggregate}"
    );
    // The report names the reviewers and whom they endorsed.
    assert!(aggregate.contains("    grace        reviewer        endorsed erin, frank ("), "{aggregate}");
    let before = aggregate.find("team-before && git -C team archive main").unwrap();
    let after = aggregate.find("team-after && git -C team archive main").unwrap();
    assert!(aggregate[before..first_hop].contains("check.sh: FAILED: rust python"), "{aggregate}");
    assert!(aggregate[after..].contains("check.sh: all tests passed (rust python)"), "{aggregate}");
    assert_eq!(std::fs::read_to_string(dir.join("team-after/src/pricing/tax.rs")).unwrap(), tax, "the same fix");
    assert_narration_matches_the_landing(aggregate);
}

/// The aggregate step's narration says whose slices landed and who was left out exactly as the
/// landing commit's `Mas-Winner:` trailers do.
fn assert_narration_matches_the_landing(aggregate: &str) {
    let winners: Vec<&str> = aggregate
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Mas-Winner: "))
        .map(str::trim)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(!winners.is_empty(), "{aggregate}");
    let team = ["erin", "frank", "grace", "dave"];
    let landed: Vec<&str> = team.iter().copied().filter(|a| winners.contains(a)).collect();
    // The plan lists who reviews (`<agent>  (reviews: …)`); the report's slice lines say who
    // abstained (`<agent>  abstained …`).
    let reviews = |a: &str| aggregate.contains(&format!("    {a:<12} (reviews: "));
    let abstains = |a: &str| {
        aggregate.lines().map(str::trim).any(|l| {
            l.strip_prefix(a).is_some_and(|r| r.starts_with(' ') && r.split_whitespace().next() == Some("abstained"))
        })
    };
    let others: Vec<&str> = team.iter().copied().filter(|a| !winners.contains(a)).collect();
    let abstained: Vec<&str> = others.iter().copied().filter(|a| abstains(a)).collect();
    let reviewed: Vec<&str> = others.iter().copied().filter(|a| reviews(a)).collect();
    let left: Vec<&str> = others.iter().copied().filter(|a| !abstained.contains(a) && !reviewed.contains(a)).collect();
    let mut told = format!("one commit on main holds the slices of {}", landed.join(", "));
    if !abstained.is_empty() {
        told.push_str(&format!("; abstained (their slice needed no change): {}", abstained.join(", ")));
    }
    if !reviewed.is_empty() {
        told.push_str(&format!("; reviewed, with no slice of their own: {}", reviewed.join(", ")));
    }
    if left.is_empty() {
        told.push_str("; every slice with work landed");
    } else {
        told.push_str(&format!("; left out: {}", left.join(", ")));
    }
    assert!(aggregate.contains(&told), "the narration does not say {told:?}:\n{aggregate}");
    let done = format!("({}) landed as one commit, the check passing on it.", landed.join(", "));
    assert!(aggregate.contains(&done), "{done:?}:\n{aggregate}");
    assert!(!aggregate.contains("the merged whole landed once"), "{aggregate}");
}

#[test]
fn the_demo_without_cargo_says_which_check_ran_and_what_landed() {
    let env = TestEnv::new();
    let dir = env.root().join("demo");
    // Without the toolchain's home, cargo does not run: the demo checks with the Python suite alone.
    let out = env.mas_cmd(env.root()).args(["demo", "--dir", dir.to_str().unwrap()]).output().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(text.contains("cargo does not run here: the team's check is the stockcheck tests alone"), "{text}");
    let aggregate = &text[text.find("\n== 11.").expect("the aggregate step")..];
    assert!(aggregate.contains("check.sh: all tests passed (python)"), "{aggregate}");
    assert_narration_matches_the_landing(aggregate);
}

#[test]
fn completions_into_a_closed_pipe_end_quietly() {
    let env = TestEnv::new();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut cmd = std::process::Command::new(BIN);
    env.hermetic(&mut cmd);
    let out = cmd.args(["completions", "bash"]).stdout(writer).output().unwrap();
    assert_ne!(out.status.code(), Some(101), "no panic: {}", stderr(&out));
    assert_eq!(stderr(&out), "", "nothing on stderr");
}

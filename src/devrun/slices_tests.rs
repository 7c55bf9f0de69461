use super::*;
use crate::attention::saliency::Contributions;
use crate::attention::snapshot::Target;

fn snapshot(ids: &[&str]) -> Snapshot {
    let targets = ids
        .iter()
        .enumerate()
        .map(|(i, id)| Target {
            id: id.to_string(),
            saliency: 1.0 / (i as f64 + 1.0),
            signals: Contributions::default(),
            lines: None,
        })
        .collect();
    Snapshot::of_targets(targets)
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

const FRAME: &[&str] =
    &[".mas/roster", "src/tax.rs", "src/tax.rs#round", "src/money.rs", "tools/reorder.py", "src/lib.rs", "README.md"];

#[test]
fn the_frame_is_dealt_out_top_first_and_no_file_is_in_two_slices() {
    let plan =
        plan_from_frame("fix the bugs", &names(&["alice", "bob", "carol"]), &snapshot(FRAME), "f1", None).unwrap();
    let targets: Vec<Vec<&str>> = plan.slices.iter().map(|s| s.targets.iter().map(String::as_str).collect()).collect();
    // README.md is filler: nothing names it, it is dealt to no one.
    assert_eq!(targets, [vec!["src/tax.rs", "src/lib.rs"], vec!["src/money.rs"], vec!["tools/reorder.py"]]);
    assert_eq!(plan.agents(), names(&["alice", "bob", "carol"]));
    assert_eq!(plan.source, SliceSource::Frame);
    assert!(plan.reviewers.is_empty());
    assert!(plan.slices[0].subgoal.starts_with("fix the bugs — your slice: src/tax.rs, src/lib.rs"));
    // The fallback says so, file by file.
    assert_eq!(plan.slices[0].why["src/lib.rs"], "ranked #4 in the frame (nothing says what the goal concerns)");
    assert!(shared_files(&plan).is_empty());
    check_plan(&plan).unwrap();
}

#[test]
fn a_slice_holds_at_most_a_focus_worth_of_files() {
    let many: Vec<String> = (0..40).map(|i| format!("f{i:02}.rs")).collect();
    let ids: Vec<&str> = many.iter().map(String::as_str).collect();
    let plan = plan_from_frame("g", &names(&["a", "b"]), &snapshot(&ids), "f", None).unwrap();
    assert!(plan.slices.iter().all(|s| s.targets.len() == MAX_FOCUS_TARGETS));
    assert_eq!(plan.slices[1].targets[..2], ["f01.rs".to_string(), "f03.rs".to_string()]);
}

#[test]
fn agents_beyond_the_frames_files_review_and_no_file_at_all_is_refused() {
    let plan = plan_from_frame(
        "g",
        &names(&["a", "b", "c"]),
        &snapshot(&["x.rs", "x.rs#f", "Cargo.toml", ".gitignore", "README.md", "y.rs"]),
        "f",
        None,
    )
    .unwrap();
    assert_eq!(plan.agents(), names(&["a", "b"]));
    assert_eq!(plan.reviewers.len(), 1, "{plan:?}");
    assert_eq!(plan.reviewers[0].agent, "c");
    assert!(plan.reviewers[0].why.ends_with("a third slice"), "{:?}", plan.reviewers[0]);
    assert_eq!(plan.members(), names(&["a", "b", "c"]));
    check_plan(&plan).unwrap();
    let err =
        plan_from_frame("g", &names(&["a", "b"]), &snapshot(&["Cargo.toml", "README.md"]), "f", None).unwrap_err();
    assert_eq!(err, SliceError::TooFewTargets { files: 0, agents: 2 });
    assert!(plan_from_frame("g", &[], &snapshot(&["x.rs"]), "f", None).is_err());
}

#[test]
fn a_plan_without_a_slice_or_naming_an_agent_twice_is_refused() {
    let slice = |agent: &str, t: &str| Slice {
        agent: agent.into(),
        subgoal: String::new(),
        targets: names(&[t]),
        why: BTreeMap::new(),
    };
    let reviewer = |agent: &str| Reviewer { agent: agent.into(), why: "w".into() };
    let plan = |slices: Vec<Slice>, reviewers: Vec<Reviewer>| SlicePlan {
        frame: "f".into(),
        source: SliceSource::Concerns,
        slices,
        reviewers,
    };
    check_plan(&plan(vec![slice("a", "x.rs")], vec![reviewer("b")])).unwrap();
    assert_eq!(
        check_plan(&plan(vec![slice("a", "x.rs")], vec![reviewer("a")])),
        Err(SliceError::Agent { agent: "a".into(), why: "is named twice".into() })
    );
    assert_eq!(check_plan(&plan(vec![], vec![reviewer("a")])), Err(SliceError::TooFewTargets { files: 0, agents: 1 }));
    // A plan recorded before reviewers existed reads as one without reviewers.
    let old = r#"{"frame":"f","source":"concerns","slices":[{"agent":"a","subgoal":"s","targets":["x.rs"]}]}"#;
    let read: SlicePlan = serde_json::from_str(old).unwrap();
    assert!(read.reviewers.is_empty());
    assert!(!serde_json::to_string(&read).unwrap().contains("reviewers"));
}

#[test]
fn slice_lines_are_checked_by_name() {
    let team = names(&["alice", "bob"]);
    let s = snapshot(FRAME);
    let parse = |text: &str| parse_slice_lines(text, "g", &team, &s, "f1");
    let plan = parse(
        "Here is my split.\nSLICE bob tools/reorder.py\nSLICE alice src/tax.rs src/money.rs src/tax.rs\nNEXT bob",
    )
    .unwrap()
    .unwrap();
    assert_eq!(plan.agents(), names(&["bob", "alice"]), "the lines' order is the merge order");
    assert_eq!(plan.slice("alice").unwrap().targets, names(&["src/tax.rs", "src/money.rs"]));
    assert_eq!(plan.source, SliceSource::Agents);
    assert_eq!(parse("no plan here\nDONE").unwrap(), None);

    let cases: Vec<(&str, SliceError)> = vec![
        (
            "SLICE alice src/tax.rs\nSLICE bob src/tax.rs src/money.rs",
            SliceError::SharedTop { first: "alice".into(), second: "bob".into(), target: "src/tax.rs".into() },
        ),
        (
            "SLICE alice src/nope.rs\nSLICE bob src/money.rs",
            SliceError::UnknownTarget { agent: "alice".into(), target: "src/nope.rs".into() },
        ),
        (
            "SLICE alice src/tax.rs#round\nSLICE bob src/money.rs",
            SliceError::UnknownTarget { agent: "alice".into(), target: "src/tax.rs#round".into() },
        ),
        ("SLICE alice src/tax.rs", SliceError::Missing { agent: "bob".into() }),
        ("SLICE mallory src/tax.rs", SliceError::Agent { agent: "mallory".into(), why: "not in the team".into() }),
        (
            "SLICE alice src/tax.rs\nSLICE alice src/money.rs",
            SliceError::Agent { agent: "alice".into(), why: "is named twice".into() },
        ),
        ("SLICE alice", SliceError::Unreadable { line: "SLICE alice".into() }),
    ];
    for (text, want) in cases {
        assert_eq!(parse(text).unwrap_err(), want, "{text}");
    }
    // An agent left without a slice by a REVIEW line reviews; one named nowhere is missing.
    let plan = parse("SLICE alice src/tax.rs\nREVIEW bob nothing left for a second slice").unwrap().unwrap();
    assert_eq!(plan.agents(), names(&["alice"]));
    assert_eq!(plan.reviewers, vec![Reviewer { agent: "bob".into(), why: "nothing left for a second slice".into() }]);
    assert_eq!(
        parse("SLICE alice src/tax.rs\nREVIEW alice").unwrap_err(),
        SliceError::Agent { agent: "alice".into(), why: "is named twice".into() }
    );
    assert_eq!(parse("REVIEW alice\nREVIEW bob").unwrap_err(), SliceError::TooFewTargets { files: 0, agents: 2 });
    // Shared files below the top are the rule's Parallel, and named.
    let plan = parse("SLICE alice src/tax.rs src/lib.rs\nSLICE bob src/money.rs src/lib.rs").unwrap().unwrap();
    assert_eq!(shared_files(&plan), BTreeMap::from([("src/lib.rs".to_string(), names(&["alice", "bob"]))]));
}

#[test]
fn the_plan_is_the_agents_last_split_else_dealt_from_the_frame() {
    let team = names(&["alice", "bob"]);
    let s = snapshot(FRAME);
    let choose = |replies: Option<&[String]>| choose_plan("g", &team, &s, "f1", replies, None).unwrap();
    let (plan, choice) = choose(None);
    assert_eq!((plan.source, choice), (SliceSource::Frame, PlanChoice::Frame));
    // The last reply that says SLICE decides: bob amended alice's split.
    let replies = names(&[
        "SLICE alice src/tax.rs\nSLICE bob src/money.rs",
        "SLICE alice src/money.rs\nSLICE bob tools/reorder.py",
        "DONE",
    ]);
    let (plan, choice) = choose(Some(&replies));
    assert_eq!(choice, PlanChoice::Agents);
    assert_eq!(plan.slice("alice").unwrap().targets, names(&["src/money.rs"]));
    let (plan, choice) = choose(Some(&names(&["no split", "DONE"])));
    assert_eq!((plan.source, choice), (SliceSource::Frame, PlanChoice::Unsaid));
    let (plan, choice) = choose(Some(&names(&["SLICE alice src/nope.rs\nSLICE bob src/money.rs"])));
    assert_eq!(plan.source, SliceSource::Frame);
    assert!(matches!(choice, PlanChoice::Refused(why) if why.contains("src/nope.rs")), "refused naming the target");
}

#[test]
fn lock_and_minified_files_are_in_no_slice() {
    let frame = ["Cargo.lock", "src/tax.rs", "web/package-lock.json", "src/money.rs", "web/app.min.js", "go.sum"];
    assert_eq!(frame_files(&snapshot(&frame)), names(&["src/tax.rs", "src/money.rs"]));
    for kept in ["src/lock.rs", "Cargo.toml", "docs/yarn.lock.md", "app.js"] {
        assert!(!is_generated(kept), "{kept}");
    }
}

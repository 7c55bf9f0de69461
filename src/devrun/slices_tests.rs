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
    assert_eq!(
        targets,
        [vec!["src/tax.rs", "src/lib.rs"], vec!["src/money.rs", "README.md"], vec!["tools/reorder.py"]]
    );
    assert_eq!(plan.agents(), names(&["alice", "bob", "carol"]));
    assert_eq!(plan.source, SliceSource::Frame);
    assert!(plan.slices[0].subgoal.starts_with("fix the bugs — your slice: src/tax.rs, src/lib.rs"));
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
fn too_few_files_for_the_team_is_refused() {
    let err =
        plan_from_frame("g", &names(&["a", "b", "c"]), &snapshot(&["x.rs", "x.rs#f", "y.rs"]), "f", None).unwrap_err();
    assert_eq!(err, SliceError::TooFewTargets { files: 2, agents: 3 });
    assert!(plan_from_frame("g", &[], &snapshot(&["x.rs"]), "f", None).is_err());
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
            SliceError::Agent { agent: "alice".into(), why: "has two SLICE lines".into() },
        ),
        ("SLICE alice", SliceError::Unreadable { line: "SLICE alice".into() }),
    ];
    for (text, want) in cases {
        assert_eq!(parse(text).unwrap_err(), want, "{text}");
    }
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

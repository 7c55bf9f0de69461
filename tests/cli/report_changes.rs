//! `git mas report` says what was changed: each proposal's paths against the run's base, in an
//! aggregate run which of them lie outside the proposer's slice (an agent that changed only
//! another's slice is not credited with its own), and the gate's slice refusals — in the text,
//! `--json` and `--html` forms, read again after the run ended.

use crate::common::*;
use crate::coordinate_any::{FIXER, coordinate, env_log, owner, project};
use serde_json::Value;

/// A FIXER team in which the agent whose slice does not hold stock.py, asked to propose, first
/// asks the gate for test_stock.py (it refuses: another's slice), then edits it anyway, leaving
/// its own slice alone.
fn trespassing_team(env: &TestEnv) -> Vec<String> {
    let trespass = FIXER.replacen(
        "  propose)\n",
        "  propose)\n    case \",$(field slice),\" in *,stock.py,*) ;; *)\n      git mas gate --paths test_stock.py > \"$LOG.gate\" 2>&1\n      echo '# looked at by another slice' >> test_stock.py\n      git mas propose -m trespass >&2; echo done\n      n=$(field next); if [ \"$n\" = DONE ]; then echo DONE; else echo \"NEXT $n\"; fi; exit 0 ;;\n    esac\n",
        1,
    );
    assert_ne!(trespass, FIXER);
    ["alice", "bob"]
        .iter()
        .map(|name| {
            let path = env.root().join(format!("{name}.sh"));
            std::fs::write(&path, format!("LOG='{}'\n{trespass}", env.root().join("log").display())).unwrap();
            format!("{name}=cmd:sh {}", path.display())
        })
        .collect()
}

#[test]
fn the_report_lists_each_proposals_paths_and_does_not_credit_a_slice_its_agent_never_touched() {
    let env = TestEnv::new();
    // A check every tree passes: both proposals reach their quorum and land together.
    let repo = project(&env, &["alice", "bob"], Some("true"));
    let agents = trespassing_team(&env);
    let (out, _) = coordinate(&env, &repo, &agents, &["--aggregate", "--quorum", "1", "--max-rounds", "1"]);
    let slices = out.events("plan")[0]["plan"]["slices"].clone();
    let holder = owner(&slices, "stock.py").unwrap_or_else(|| panic!("stock.py is in no slice: {slices:#}"));
    let trespasser = if holder == "alice" { "bob" } else { "alice" };
    assert_eq!(owner(&slices, "test_stock.py").as_ref(), Some(&holder), "{slices:#}");
    assert_eq!(
        out.code,
        Some(0),
        "{:#?}\n{}",
        out.lines.iter().filter(|l| l["event"] != "hop").collect::<Vec<_>>(),
        env_log(&env)
    );
    let run = out.events("run-started")[0]["run"].as_str().unwrap().to_string();

    // --json, read again from the recording.
    let json: Value = serde_json::from_str(&env.mas_ok(&repo, &["report", &run, "--json"])).unwrap();
    let change = |agent: &str| {
        json["changes"].as_array().unwrap().iter().find(|c| c["agent"] == agent).cloned().unwrap_or_default()
    };
    assert_eq!(change(trespasser)["paths"], serde_json::json!(["test_stock.py"]), "{json:#}");
    assert_eq!(change(trespasser)["outside_slice"], serde_json::json!([{"path": "test_stock.py", "slice_of": holder}]));
    assert_eq!(change(trespasser)["slice_untouched"], true);
    assert_eq!(change(&holder)["paths"], serde_json::json!(["stock.py"]));
    assert_eq!(change(&holder)["slice_untouched"], false);
    assert_eq!(change(&holder)["outside_slice"], serde_json::json!([]));
    let status = |agent: &str| {
        json["slices"].as_array().unwrap().iter().find(|s| s["agent"] == agent).map(|s| s["status"].clone())
    };
    assert_eq!(status(trespasser), Some("untouched".into()), "the trespasser landed, but not its slice: {json:#}");
    assert_eq!(status(&holder), Some("landed".into()));
    assert_eq!(json["quality_state"]["reached"], false, "{json:#}");
    let refusals = json["slice_refusals"].as_array().unwrap();
    assert_eq!(refusals.len(), 1, "{json:#}");
    assert_eq!(
        (&refusals[0]["agent"], &refusals[0]["file"], &refusals[0]["slice_of"], &refusals[0]["times"]),
        (&trespasser.into(), &"test_stock.py".into(), &holder.as_str().into(), &1.into())
    );
    // The report the driver stored when the run ended says the same.
    let stored = &out.events("report")[0]["report"];
    assert_eq!(stored["changes"], json["changes"]);
    assert_eq!(stored["slice_refusals"], json["slice_refusals"]);

    // Text.
    let text = env.mas_ok(&repo, &["report", &run]);
    assert!(
        text.contains(&format!("changed only files outside its slice: test_stock.py ({holder}'s slice)")),
        "{text}"
    );
    assert!(
        text.contains(&format!("the gate refused {trespasser} an edit of test_stock.py, in {holder}'s slice (once)")),
        "{text}"
    );
    let slice_line = text.lines().find(|l| l.trim_start().starts_with(trespasser) && l.contains("untouched"));
    assert!(slice_line.is_some(), "{text}");

    // HTML.
    let html = env.mas_ok(&repo, &["report", &run, "--html", "-"]);
    assert!(html.contains(&format!("<tr data-changes=\"{trespasser}\" data-slice-untouched=\"true\">")), "{html}");
    assert!(html.contains(&format!("<code>test_stock.py</code> ({holder}'s slice)")), "{html}");
    assert!(html.contains(&format!(
        "<li data-refused=\"{trespasser}\">the gate refused {trespasser} an edit of <code>test_stock.py</code>, in {holder}'s slice"
    )));
    assert!(!html.contains(&format!("data-changes=\"{holder}\" data-slice-untouched")), "{html}");
}

#[test]
fn a_best_of_n_report_lists_the_paths_and_judges_no_slice() {
    let env = TestEnv::new();
    let repo = project(&env, &["alice", "bob"], Some("python3 -m unittest"));
    let agents: Vec<String> = ["alice", "bob"]
        .iter()
        .map(|name| {
            let path = env.root().join(format!("{name}.sh"));
            std::fs::write(&path, format!("LOG='{}'\n{FIXER}", env.root().join("log").display())).unwrap();
            format!("{name}=cmd:sh {}", path.display())
        })
        .collect();
    let (out, _) = coordinate(&env, &repo, &agents, &["--quorum", "1", "--max-rounds", "1"]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stderr, env_log(&env));
    let run = out.events("run-started")[0]["run"].as_str().unwrap().to_string();
    let json: Value = serde_json::from_str(&env.mas_ok(&repo, &["report", &run, "--json"])).unwrap();
    let changes = json["changes"].as_array().unwrap();
    assert!(!changes.is_empty(), "{json:#}");
    for c in changes {
        assert_eq!(c["paths"], serde_json::json!(["pricing.py", "stock.py"]), "{json:#}");
        assert_eq!((&c["outside_slice"], &c["slice_untouched"]), (&serde_json::json!([]), &false.into()));
    }
    assert_eq!(json["slice_refusals"], serde_json::json!([]));
    let text = env.mas_ok(&repo, &["report", &run]);
    assert!(text.contains("changed:\n") && text.contains("pricing.py, stock.py"), "{text}");
    assert!(!text.contains("outside its slice"), "{text}");
}

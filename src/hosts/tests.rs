//! The host table's own tests: one row per host in order, the user-wide folders, the pinned
//! versions of the real CLIs, detection and names.

use super::*;

#[test]
fn the_table_has_one_row_per_host_in_order() {
    for (i, h) in Host::ALL.into_iter().enumerate() {
        assert_eq!(TABLE[i].host, h, "row {i}");
        assert_eq!(h as usize, i);
    }
}

#[test]
fn a_user_dir_follows_its_variable_else_home() {
    struct E(&'static [(&'static str, &'static str)]);
    impl Env for E {
        fn var(&self, name: &str) -> Option<PathBuf> {
            self.0.iter().find(|(k, _)| *k == name).map(|(_, v)| PathBuf::from(v))
        }
    }
    let opencode = Host::OpenCode.facts().skills.user_dir;
    assert_eq!(opencode.resolve(&E(&[("HOME", "/h")])), Some(PathBuf::from("/h/.config/opencode/skills")));
    assert_eq!(
        opencode.resolve(&E(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "/x")])),
        Some(PathBuf::from("/x/opencode/skills"))
    );
    assert_eq!(opencode.resolve(&E(&[])), None);
    let claude = Host::ClaudeCode.facts().mcp.unwrap().user_dir;
    assert_eq!(claude.resolve(&E(&[("HOME", "/h"), ("CLAUDE_CONFIG_DIR", "/c")])), Some(PathBuf::from("/c")));
    assert_eq!(claude.resolve(&E(&[("HOME", "/h")])), Some(PathBuf::from("/h")));
    // Gemini CLI takes its home from GEMINI_CLI_HOME when set.
    let gemini = Host::Gemini.facts().skills.user_dir;
    assert_eq!(gemini.resolve(&E(&[("HOME", "/h")])), Some(PathBuf::from("/h/.gemini/skills")));
    assert_eq!(
        gemini.resolve(&E(&[("HOME", "/h"), ("GEMINI_CLI_HOME", "/g")])),
        Some(PathBuf::from("/g/.gemini/skills"))
    );
}

/// The rows checked against a real CLI name exactly the versions the host tests install.
#[test]
fn every_real_row_is_the_version_the_host_tests_install() {
    let script = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hosts/install.sh")).unwrap();
    for facts in &TABLE {
        if let Verification::Real { package, version } = facts.verified {
            let pin = format!("\"{package}@{version}\"");
            assert!(script.contains(&pin), "{}: {pin} is not pinned in tests/hosts/install.sh", facts.name);
        }
    }
    let real = TABLE.iter().filter(|f| f.verified.is_real()).count();
    let hosts_pinned = TABLE
        .iter()
        .filter_map(|f| match f.verified {
            Verification::Real { package, .. } => Some(package),
            Verification::Documented { .. } => None,
        })
        .filter(|p| script.contains(&format!("\"{p}@")))
        .count();
    assert_eq!(hosts_pinned, real);
    assert_eq!(real, 5, "claude-code, codex, copilot, gemini and opencode run in the host tests");
}

#[test]
fn a_host_is_detected_by_its_program_on_path_or_a_marker_of_its_own() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = std::env::temp_dir().join(format!("git-mas-detect-{}", std::process::id()));
    let (bin, top) = (tmp.join("bin"), tmp.join("top"));
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(top.join(".claude")).unwrap();
    std::fs::create_dir_all(top.join(".github/workflows")).unwrap();
    std::fs::create_dir_all(top.join(".agents/skills")).unwrap();
    std::fs::write(bin.join("gemini"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(bin.join("gemini"), std::fs::Permissions::from_mode(0o755)).unwrap();
    // Not executable: not a program.
    std::fs::write(bin.join("codex"), "").unwrap();
    struct E(PathBuf);
    impl Env for E {
        fn var(&self, name: &str) -> Option<PathBuf> {
            (name == "PATH").then(|| self.0.clone())
        }
    }
    let env = E(std::env::join_paths([tmp.join("missing"), bin.clone()]).unwrap().into());
    let found: Vec<(Host, Vec<Detection>)> =
        Host::ALL.into_iter().map(|h| (h, detect(h, &top, &env))).filter(|(_, d)| !d.is_empty()).collect();
    assert_eq!(
        found,
        vec![
            (Host::ClaudeCode, vec![Detection::Marker { marker: ".claude".into() }]),
            (Host::Gemini, vec![Detection::Program { program: "gemini".into(), path: bin.join("gemini") }]),
        ],
        ".github/ and .agents/ are shared, so they name no host"
    );
    assert_eq!(found[1].1[0].to_string(), format!("`gemini` on PATH ({})", bin.join("gemini").display()));
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn every_host_is_found_by_its_name_and_only_by_it() {
    for h in Host::ALL {
        assert_eq!(Host::from_name(h.name()), Some(h));
        assert_eq!(serde_json::to_value(h).unwrap(), h.name());
    }
    assert_eq!(Host::from_name("claude"), None);
    assert_eq!(Host::from_name("Codex"), None);
}

//! The Agent Skills in skills/: their format, their quantity tables, and every `git mas` command
//! and flag they mention, checked against the real binary.

use crate::common::*;
use crate::json::skills::SkillsPlaced;
use git_mas::assembly::quantity_names;
use git_mas::hosts::skills::Action;
use git_mas::runtime::PatternKind;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn skills() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("skills");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(e.path().join("SKILL.md"))
                .unwrap_or_else(|err| panic!("skills/{name} has no readable SKILL.md: {err}"));
            (name, text)
        })
        .collect();
    out.sort();
    out
}

/// The front matter's `key: value` pairs.
fn front_matter(folder: &str, text: &str) -> BTreeMap<String, String> {
    let rest = text.strip_prefix("---\n").unwrap_or_else(|| panic!("skills/{folder}: no front matter"));
    let (yaml, _) = rest.split_once("\n---\n").unwrap_or_else(|| panic!("skills/{folder}: front matter not closed"));
    yaml.lines()
        .map(|line| {
            let (key, value) = line.split_once(':').unwrap_or_else(|| panic!("skills/{folder}: {line:?}"));
            (key.trim().to_owned(), value.trim().to_owned())
        })
        .collect()
}

#[test]
fn every_skill_is_in_agent_skills_format() {
    let skills = skills();
    let names: Vec<&str> = skills.iter().map(|(n, _)| n.as_str()).collect();
    for required in ["assembly", "converge", "git-mas"] {
        assert!(names.contains(&required), "skills/{required} is missing: {names:?}");
    }
    for (folder, text) in &skills {
        let meta = front_matter(folder, text);
        let name = meta.get("name").map(String::as_str).unwrap_or_default();
        assert_eq!(name, folder, "the name matches the folder");
        assert!(
            name.len() <= 64
                && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !name.starts_with('-')
                && !name.ends_with('-')
                && !name.contains("--"),
            "{name:?} is not a valid skill name"
        );
        let description = meta.get("description").map(String::as_str).unwrap_or_default();
        assert!(!description.is_empty() && description.len() <= 1024, "skills/{folder}: description");
    }
}

/// The rows of the `| class | quantities |` table.
fn quantity_table(folder: &str, text: &str) -> BTreeMap<String, Vec<String>> {
    let mut lines = text.lines().skip_while(|l| l.replace(' ', "") != "|class|quantities|");
    assert!(lines.next().is_some(), "skills/{folder} has no `| class | quantities |` table");
    lines
        .skip(1)
        .take_while(|l| l.trim_start().starts_with('|'))
        .map(|row| {
            let cells: Vec<&str> = row.trim().trim_matches('|').split('|').map(str::trim).collect();
            let names = cells[1].split(',').map(|n| n.trim().to_owned()).collect();
            (cells[0].to_owned(), names)
        })
        .collect()
}

#[test]
fn the_quantity_tables_equal_the_names_each_engine_accepts() {
    for (folder, text) in skills().iter().filter(|(f, _)| f == "assembly" || f == "converge") {
        let table = quantity_table(folder, text);
        let classes: Vec<&str> = table.keys().map(String::as_str).collect();
        assert_eq!(classes, ["cascade", "preference", "resource"], "skills/{folder}");
        for (class, names) in &table {
            let pattern = PatternKind::from_token(class);
            assert_eq!(names, &quantity_names(pattern), "skills/{folder}: {class}");
        }
    }
}

/// Splits a command line on whitespace, keeping double-quoted strings whole.
fn tokens(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            c if c.is_whitespace() && !quoted => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Every `git mas …` command line in a skill: the text after `git mas`, up to the closing
/// backtick when it is inline code.
fn command_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        while let Some(at) = rest.find("git mas ") {
            let inline = rest[..at].ends_with('`');
            let after = &rest[at + "git mas ".len()..];
            let end = if inline { after.find('`').unwrap_or(after.len()) } else { after.len() };
            out.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    out
}

/// The flags a help text documents.
fn documented_flags(help: &str) -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    for (i, _) in help.match_indices("--") {
        let name: String = help[i + 2..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
        if !name.is_empty() {
            flags.insert(format!("--{name}"));
        }
    }
    flags
}

/// The subcommands a help text lists under `Commands:`.
fn subcommands(help: &str) -> BTreeSet<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

fn flag_of(token: &str) -> Option<String> {
    let token = token.trim_matches(|c: char| c == '`' || c == ',' || c == '.' || c == ';' || c == ')' || c == '(');
    let token = token.split('=').next().unwrap_or(token);
    let name = token.strip_prefix("--")?;
    (name.starts_with(|c: char| c.is_ascii_lowercase()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        .then(|| token.to_owned())
}

#[test]
fn every_command_and_flag_the_skills_mention_exists() {
    let env = TestEnv::new();
    let mut helps: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut help = |path: &[String]| -> Option<String> {
        if let Some(text) = helps.get(path) {
            return Some(text.clone());
        }
        let out = env.mas_cmd(env.root()).args(path).arg("--help").output().unwrap();
        let text = out.status.success().then(|| stdout(&out))?;
        helps.insert(path.to_vec(), text.clone());
        Some(text)
    };
    let global = help(&[]).expect("git mas --help");
    let mut checked = 0;
    for (folder, text) in skills() {
        let mut mentioned_flags = documented_flags(&global);
        for line in command_lines(&text) {
            let words = tokens(&line);
            let Some(first) = words.first() else { continue };
            let command = first.trim_matches('`').to_owned();
            let mut path = vec![command.clone()];
            let mut command_help = help(&path)
                .filter(|_| command.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'))
                .unwrap_or_else(|| panic!("skills/{folder} mentions `git mas {command}`, which does not exist"));
            let mut rest = &words[1..];
            if let Some(second) = rest.first().map(|w| w.trim_matches('`').to_owned())
                && subcommands(&command_help).contains(&second)
            {
                path.push(second);
                command_help = help(&path).unwrap_or_else(|| panic!("skills/{folder}: `git mas {}`", path.join(" ")));
                rest = &rest[1..];
            }
            let documented = documented_flags(&command_help);
            for word in rest {
                if let Some(flag) = flag_of(word) {
                    assert!(
                        documented.contains(&flag) || documented_flags(&global).contains(&flag),
                        "skills/{folder}: `git mas {}` has no flag {flag}",
                        path.join(" ")
                    );
                    checked += 1;
                }
            }
            mentioned_flags.extend(documented);
        }
        // A flag named anywhere in the text belongs to some command the skill mentions.
        for word in text.split_whitespace() {
            if let Some(flag) = flag_of(word) {
                assert!(
                    mentioned_flags.contains(&flag),
                    "skills/{folder} mentions {flag}, which no command it names has"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 10, "the skills mention flags, and they were checked ({checked})");
}

#[test]
fn the_flag_check_catches_an_invented_flag() {
    // The helpers above, on a line that names a flag `converge` does not have.
    let lines = command_lines("run `git mas converge --pattern preference --frobnicate` now");
    assert_eq!(lines, ["converge --pattern preference --frobnicate"]);
    let flags: Vec<String> = tokens(&lines[0]).iter().filter_map(|t| flag_of(t)).collect();
    assert_eq!(flags, ["--pattern", "--frobnicate"]);
    let env = TestEnv::new();
    let help = env.mas_ok(env.root(), &["converge", "--help"]);
    let documented = documented_flags(&help);
    assert!(documented.contains("--pattern") && !documented.contains("--frobnicate"));
    assert_eq!(tokens(r#"--agents "cmd:a --b,c" --json"#), ["--agents", r#""cmd:a --b,c""#, "--json"]);
}

/// The skills' folders as the source tree has them: (folder, relative path) → contents.
fn source_files() -> BTreeMap<(String, String), Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("skills");
    let mut out = BTreeMap::new();
    for (folder, _) in skills() {
        for entry in std::fs::read_dir(dir.join(&folder)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            out.insert((folder.clone(), name), std::fs::read(&path).unwrap());
        }
    }
    out
}

/// Asserts that `dir` holds exactly the three skill folders, byte for byte as in skills/.
fn assert_installed(dir: &Path) {
    let mut found = BTreeMap::new();
    let mut folders: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    assert_eq!(folders, ["assembly", "converge", "git-mas"], "{}", dir.display());
    for folder in folders {
        for entry in std::fs::read_dir(dir.join(&folder)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            found.insert((folder.clone(), name), std::fs::read(&path).unwrap());
        }
    }
    assert_eq!(found, source_files(), "{}", dir.display());
}

#[test]
fn skills_install_puts_the_three_folders_where_each_host_reads_them() {
    // (host, global destination under HOME, project destination under the repository)
    let table = [
        ("claude-code", "home/.claude/skills", ".claude/skills"),
        ("cursor", "home/.cursor/skills", ".cursor/skills"),
        ("copilot", "home/.copilot/skills", ".agents/skills"),
        ("goose", "home/.config/goose/skills", ".agents/skills"),
        ("opencode", "home/.config/opencode/skills", ".agents/skills"),
        ("codex", "home/.codex/skills", ".agents/skills"),
    ];
    for (host, global, project) in table {
        let env = TestEnv::new();
        let repo = env.repo("repo");
        let out = env.mas_ok(&repo, &["skills", "install", "--host", host, "--global", "--json"]);
        let placed: SkillsPlaced = serde_json::from_str(&out).unwrap();
        assert_eq!(placed.scope, "global");
        assert_eq!(placed.host.as_deref(), Some(host));
        assert!(
            !placed.skills.is_empty() && placed.skills.iter().all(|s| s.action == Action::Created),
            "{host}: {out}"
        );
        assert_installed(&env.root().join(global));
        env.mas_quiet_ok(&repo, &["skills", "install", "--host", host]);
        assert_installed(&repo.join(project));
        // The project install is the only change in the repository, under the host's directory.
        let status = env.git(&repo, &["status", "--porcelain", "--untracked-files=all"]);
        assert!(status.lines().all(|l| l.starts_with(&format!("?? {project}/"))), "{host}: {status}");
        assert_eq!(status.lines().count(), source_files().len(), "{host}: {status}");
    }
}

#[test]
fn skills_install_never_overwrites_local_edits_without_force() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    env.mas_quiet_ok(&repo, &["skills", "install"]);
    let again = env.mas_ok(&repo, &["skills", "install"]);
    assert_eq!(again.lines().filter(|l| l.starts_with("unchanged")).count(), 3, "{again}");
    let skill = repo.join(".claude/skills/git-mas/SKILL.md");
    std::fs::write(&skill, "my notes").unwrap();
    std::fs::remove_dir_all(repo.join(".claude/skills/assembly")).unwrap();
    let out = env.mas(&repo, &["skills", "install"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("git-mas") && stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&skill).unwrap(), "my notes", "the edit survives");
    assert!(!repo.join(".claude/skills/assembly").exists(), "nothing was written");
    let dry = env.mas_ok(&repo, &["skills", "install", "--force", "--dry-run"]);
    assert!(dry.contains("would replace") && dry.contains("would create"), "{dry}");
    assert_eq!(std::fs::read_to_string(&skill).unwrap(), "my notes");
    env.mas_quiet_ok(&repo, &["skills", "install", "--force"]);
    assert_installed(&repo.join(".claude/skills"));
    // Uninstall keeps a folder holding a file of the user's, unless forced.
    std::fs::write(repo.join(".claude/skills/converge/mine.md"), "x").unwrap();
    let out = env.mas(&repo, &["skills", "uninstall"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(repo.join(".claude/skills/git-mas").exists());
    env.mas_quiet_ok(&repo, &["skills", "uninstall", "--force"]);
    assert_eq!(std::fs::read_dir(repo.join(".claude/skills")).unwrap().count(), 0);
}

#[test]
fn skills_install_refuses_bad_places_clearly() {
    let env = TestEnv::new();
    // Outside a repository, a project install has nowhere to go.
    let out = env.mas(env.root(), &["skills", "install"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--global"), "{}", stderr(&out));
    // --dir works anywhere, and conflicts with a host.
    env.mas_quiet_ok(env.root(), &["skills", "install", "--dir", "mine"]);
    assert_installed(&env.root().join("mine"));
    let out = env.mas(env.root(), &["skills", "install", "--dir", "x", "--host", "goose"]);
    assert_eq!(out.status.code(), Some(2));
    let out = env.mas(env.root(), &["skills", "install", "--host", "emacs", "--global"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("claude-code"), "the error lists the hosts: {}", stderr(&out));
    // `skills list` names the bundled skills.
    let list: serde_json::Value = serde_json::from_str(&env.mas_ok(env.root(), &["skills", "list", "--json"])).unwrap();
    let names: Vec<&str> = list["skills"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["assembly", "converge", "git-mas"]);
}

#[test]
fn skills_install_for_all_hosts_is_one_plan_writing_the_shared_directory_once() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    let out = env.mas_ok(&repo, &["skills", "install", "--host", "all", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["host"], "all");
    let dirs: Vec<String> = v["dirs"].as_array().unwrap().iter().map(|d| d.as_str().unwrap().to_owned()).collect();
    // In the hosts' table order, each directory once (codex, copilot, gemini, goose and opencode
    // share .agents/skills).
    let want: Vec<String> = [".claude/skills", ".agents/skills", ".cursor/skills"]
        .iter()
        .map(|d| repo.join(d).display().to_string())
        .collect();
    assert_eq!(dirs, want, "{out}");
    let skills = v["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 3 * 3, "{out}");
    assert!(skills.iter().all(|s| s["action"] == "created"), "{out}");
    for d in [".claude/skills", ".cursor/skills", ".agents/skills"] {
        assert_installed(&repo.join(d));
    }

    // One conflict anywhere, and nothing is written anywhere.
    let fresh = env.repo("fresh");
    let edited = fresh.join(".cursor/skills/git-mas/SKILL.md");
    std::fs::create_dir_all(edited.parent().unwrap()).unwrap();
    std::fs::write(&edited, "my own notes\n").unwrap();
    let out = env.mas(&fresh, &["skills", "install", "--host", "all"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!fresh.join(".claude/skills").exists() && !fresh.join(".agents/skills").exists());
    assert_eq!(std::fs::read_to_string(&edited).unwrap(), "my own notes\n");
}

//! The layers point one way: no two top-level modules of `src/` reach each other, directly or
//! through others. Two modules that import each other are one concept split badly, or two
//! concepts missing a third module above them. Every `crate::<module>` mention outside a test
//! module counts, documentation links included (a link is a dependency a reader follows). The
//! same holds among the submodules of `src/hosts/` (`super::<module>`, `crate::hosts::<module>`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every top-level module of `src/` and the top-level modules it mentions.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut mods: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, path) in crate::conventions_tests::sources(src) {
        let first = rel.split('/').next().unwrap_or_default();
        let top = first.strip_suffix(".rs").unwrap_or(first).to_string();
        // The binaries' entries (main.rs, and src/bin/: the hook's own binary, which includes
        // modules of src/cli/ by path) sit above every layer, as `cli` does.
        if top == "main" || top == "bin" || top == "lib" || top == "layering_tests" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.split("#[cfg(test)]").next().unwrap_or_default();
        let refs = mods.entry(top.clone()).or_default();
        refs.extend(mentions(text, "crate::").into_iter().filter(|m| *m != top));
    }
    let names: BTreeSet<String> = mods.keys().cloned().collect();
    mods.into_iter().map(|(m, refs)| (m, refs.intersection(&names).cloned().collect())).collect()
}

/// The module names `text` mentions after `prefix` (`crate::`, `super::`): the first path segment
/// of each mention, and of each item of a `prefix{a, b::{c, d}}` group.
fn mentions(text: &str, prefix: &str) -> BTreeSet<String> {
    let word = |s: &str| -> String {
        s.trim_start().chars().take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_').collect()
    };
    let mut found = BTreeSet::new();
    for (i, _) in text.match_indices(prefix) {
        let rest = &text[i + prefix.len()..];
        let Some(group) = rest.strip_prefix('{') else {
            found.insert(word(rest));
            continue;
        };
        // The group's items at its own depth, up to its closing brace.
        let mut depth = 0usize;
        let mut start = 0;
        for (at, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    found.insert(word(&group[start..at]));
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    found.insert(word(&group[start..at]));
                    start = at + 1;
                }
                _ => {}
            }
        }
    }
    found.remove("");
    found
}

/// The submodules of `src/hosts/` (`hosts/mod.rs`, the table they all read, aside) and the
/// sibling modules each mentions (`super::<module>`, `crate::hosts::<module>`).
fn hosts_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut mods: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, path) in crate::conventions_tests::sources(src) {
        let Some(name) = rel.strip_prefix("hosts/").and_then(|r| r.strip_suffix(".rs")) else { continue };
        if name == "mod" || name.contains('/') {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.split("#[cfg(test)]").next().unwrap_or_default();
        let mut refs = mentions(text, "super::");
        refs.extend(mentions(text, "crate::hosts::"));
        refs.remove(name);
        mods.insert(name.to_string(), refs);
    }
    let names: BTreeSet<String> = mods.keys().cloned().collect();
    mods.into_iter().map(|(m, refs)| (m, refs.intersection(&names).cloned().collect())).collect()
}

/// The module cycles of `graph`: each a path that comes back to where it started.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for start in graph.keys() {
        // Depth-first from `start`, reporting a way back to it through larger names only (each
        // cycle once, from its smallest member).
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((at, path)) = stack.pop() {
            for next in &graph[&at] {
                if next == start {
                    found.push(path.clone());
                } else if next > start && seen.insert(next.clone()) {
                    let mut p = path.clone();
                    p.push(next.clone());
                    stack.push((next.clone(), p));
                }
            }
        }
    }
    found
}

#[test]
fn no_top_level_modules_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = graph(&src);
    assert!(graph.len() > 10, "the modules of src/ were not found: {graph:?}");
    let found = cycles(&graph);
    let text: Vec<String> = found.iter().map(|c| format!("{} -> {}", c.join(" -> "), c[0])).collect();
    assert!(found.is_empty(), "modules that reach each other:\n{}", text.join("\n"));
}

/// Inside `src/hosts/` too, each submodule does one job for every host, and none reaches another
/// that reaches back: what two of them share (the host table's facts, the files toolkit, the
/// installers' plans) lives in a module both import.
#[test]
fn no_hosts_submodules_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = hosts_graph(&src);
    assert!(graph.len() > 8 && graph.contains_key("hooks"), "the submodules of src/hosts/ were not found: {graph:?}");
    assert!(graph["worktree"].contains("hooks"), "a `use super::hooks` is not seen: {graph:?}");
    let found = cycles(&graph);
    let text: Vec<String> = found.iter().map(|c| format!("{} -> {}", c.join(" -> "), c[0])).collect();
    assert!(found.is_empty(), "hosts/ modules that reach each other:\n{}", text.join("\n"));
}

#[test]
fn mentions_are_read_through_groups() {
    let text = "use super::{edit::{self, prop}, files::read};\n/// [`super::hooks`]\nuse crate::hosts::{Host, mcp};";
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<String>>();
    assert_eq!(mentions(text, "super::"), names(&["edit", "files", "hooks"]));
    assert_eq!(mentions(text, "crate::hosts::"), names(&["mcp"]));
}

/// The layers of `lib.rs`'s module index, bottom first.
const LAYERS: [&[&str]; 9] = [
    &["fsx", "git", "store", "identity"],
    &["runtime", "signals", "assembly"],
    &["engines", "convergence"],
    &["hosts"],
    &["attention", "evaluation"],
    &["devrun", "pool"],
    &["ops"],
    &["peers", "coordinate"],
    &["doctor", "sync", "exchange"],
];

#[test]
fn every_module_uses_only_its_layer_and_the_layers_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = graph(&src);
    // The binary's `cli` (src/cli/, `mod cli` of main.rs) sits above every layer of the library.
    let layer = |m: &str| if m == "cli" { Some(LAYERS.len()) } else { LAYERS.iter().position(|l| l.contains(&m)) };
    let unlisted: Vec<&String> = graph.keys().filter(|m| layer(m).is_none()).collect();
    assert!(unlisted.is_empty(), "modules missing from the layers (and from lib.rs's index): {unlisted:?}");
    let mut upward = Vec::new();
    for (m, uses) in &graph {
        for u in uses {
            if layer(u) > layer(m) {
                upward.push(format!("{m} uses {u}"));
            }
        }
    }
    assert!(upward.is_empty(), "a module uses a layer above its own:\n{}", upward.join("\n"));
    let index = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    for row in LAYERS {
        let cells: Vec<String> = row.iter().map(|m| format!("[`{m}`]")).collect();
        assert!(index.contains(&cells.join(", ")), "lib.rs's index lacks the row {row:?}");
    }
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let g = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    assert!(cycles(&g(&[("a", "b"), ("b", "c")])).is_empty());
    assert_eq!(cycles(&g(&[("a", "b"), ("b", "a")])), vec![vec!["a".to_string(), "b".to_string()]]);
    assert_eq!(cycles(&g(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])).len(), 1);
}

#[test]
fn git_is_started_in_one_place() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for (rel, path) in crate::conventions_tests::sources(&src) {
        let text = std::fs::read_to_string(&path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        if code.contains(concat!("Command::new(", "\"git\")")) {
            found.push(rel);
        }
    }
    assert_eq!(found, vec!["git.rs".to_string()], "git is started outside src/git.rs");
}

/// The files outside src/git.rs whose code starts git with [`crate::git::command`] and reads its
/// end by hand rather than through the runner ([`crate::git::Git`]), each with why. A row whose
/// file no longer does fails the test: take it out.
const GIT_COMMAND_SITES: &[(&str, &str)] = &[];

#[test]
fn git_is_run_and_its_failures_read_in_one_place() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for (rel, path) in crate::conventions_tests::sources(&src) {
        let text = std::fs::read_to_string(&path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        if rel != "git.rs" && code.contains("git::command(") {
            found.push(rel);
        }
    }
    let mut problems = Vec::new();
    for rel in &found {
        if !GIT_COMMAND_SITES.iter().any(|(file, _)| file == rel) {
            problems.push(format!("src/{rel} starts git itself: run it with git::Git (or git::run)"));
        }
    }
    for (file, _) in GIT_COMMAND_SITES {
        if !found.iter().any(|rel| rel == file) {
            problems.push(format!("src/{file}, named in GIT_COMMAND_SITES, no longer starts git itself: take it out"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

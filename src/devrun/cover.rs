//! What an aggregate run's goal concerns, and how it is dealt into slices that cover it.
//!
//! A plan dealt from the frame's ranking alone splits what the ranking puts first, which the goal
//! barely moves: index files and configuration become "slices of the goal" while a file holding a
//! bug is in none. So the plan starts from the evidence of what the work is:
//!
//! 1. **Seeds**: the files the goal names (the frame's task signal on the file itself), the files
//!    with error diagnostics (its errors signal), the files the failing tests' tracebacks and
//!    failure messages name (`x.py:12: AssertionError`, `File "…/x.py", line 12`, `panicked at
//!    src/x.rs:12:5`: `traced_files` of the pool's test-file reader, each with its test and line), and
//!    the files the team's check names when it fails on the run's base, the check's own script
//!    excepted (the failing tests its report lists, mapped to their files; paths in its output
//!    outside its header and progress lines).
//! 2. **Neighbours**, one hop from a seed: the modules the seed's import statements name, read
//!    from code, never from docstrings, comments or strings, and only when the module is a file
//!    of the repository (not the standard library, not a third-party package), followed through
//!    re-export hubs (`__init__.py`, a `lib.rs` of `pub use`) to the module that defines the
//!    imported name ([`super::imports`]); in a language without an import reader, the files the
//!    seed's text names as modules ([`NameIndex`]); and with a SCIP index the files the seed
//!    references or that reference it.
//! 3. **Coherent groups**: a seed and its neighbours stay together (connected components), so a
//!    failing test and the module it tests land in one slice.
//! 4. **The deal** ([`plan_covering`]): the groups go to the agents, largest first, each to the
//!    agent holding the fewest files. With fewer groups than agents the agents left over get no
//!    slice: they review (endorse the slices, propose nothing) — no agent is dealt filler (a
//!    README, `.gitignore`, a manifest or a lock file nothing names: [`super::slices::is_filler`]).
//!    Nothing is cut: a slice may hold more files than a focus
//!    ([`crate::attention::rule::MAX_FOCUS_TARGETS`]) — the slice is the plan, the focus what its
//!    agent works on now. Every file's place is said, in words ([`super::slices::Slice::why`]).
//!
//! When there is no seed at all (a goal that names nothing, a check that passes, no diagnostics),
//! the frame's ranking is dealt as before ([`super::slices::plan_from_frame`]), and each file's
//! reason says that nothing says what the goal concerns.
//!
//! A re-export hub is in a slice only when evidence names it directly (the goal, a traceback,
//! its own errors) or a seed imports a name the hub itself defines; importing through it makes
//! the defining module the neighbour, never the hub's other modules.
//!
//! Decisions: neighbours are one hop, not a closure, and a neighbour of two seeds joins neither's
//! group to the other (it goes with one of them): a utility module every test imports, or a crate
//! root that declares every module, would otherwise pull the whole repository into one slice
//! through it. Two seeds that are each other's neighbours do stay together. A neighbour of several
//! seeds goes with the narrowest of them (the seed with the fewest neighbours, then the
//! highest-ranked): a module's own test file rather than a test of the whole package that imports
//! every module through it. The names rule reads
//! only the seeds' own text (finding who names a seed would read every file); a module name
//! counts only for a file in the seed's language (a Python test that says `item` does not mean
//! `item.rs`), and a bare file stem (`pricing`) only when one such file has it, or when the file
//! is beside the seed, and it is not a name every project has (`mod`, `lib`, `main`, `index`,
//! `__init__`, …). A whole path in the text (`docs/setup.md`) names its file in any language.

use super::slices::{Reviewer, Slice, SlicePlan, SliceSource, is_filler, is_generated, nth_slice, subgoal};
use crate::attention::snapshot::Snapshot;
use std::collections::{BTreeMap, BTreeSet};

/// Why a file is in a slice.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Evidence {
    /// The goal names it.
    Named,
    /// It has error diagnostics.
    Errors,
    /// The failing check names it: the failing tests it holds, or empty for a path in the output.
    Check(BTreeSet<String>),
    /// A failing test's traceback or failure message names it (at a line, when the output says).
    Traceback {
        /// The failing test.
        test: String,
        /// The line.
        line: Option<u32>,
    },
    /// A seed's neighbour.
    Neighbour {
        /// The seed.
        of: String,
        /// How they are related.
        via: Via,
    },
}

/// How two files are neighbours.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Via {
    /// The seed imports the module (an import statement, [`super::imports`]).
    Imports,
    /// The seed imports `name` from the re-export hub `hub`, and the file defines it.
    Through {
        /// The hub (`pkg/__init__.py`, `src/lib.rs`).
        hub: String,
        /// The name imported.
        name: String,
    },
    /// The seed's text names the file as a module (a language without an import reader).
    NamedBySeed,
    /// The seed references a symbol the file defines (SCIP).
    References,
    /// The file references a symbol the seed defines (SCIP).
    ReferencedBy,
}

/// At most three names, then how many more.
fn some_of<'a>(names: impl IntoIterator<Item = &'a String>) -> String {
    let names: Vec<&String> = names.into_iter().collect();
    let shown: Vec<&str> = names.iter().take(3).map(|s| s.as_str()).collect();
    let more = if names.len() > 3 { format!(" and {} more", names.len() - 3) } else { String::new() };
    format!("{}{more}", shown.join(", "))
}

impl Evidence {
    /// One phrase; `seeds` says what a neighbour's seed is (a failing test's file is named so).
    pub fn describe(&self, seeds: &BTreeMap<String, Vec<Evidence>>) -> String {
        match self {
            Evidence::Named => "the goal names it".into(),
            Evidence::Errors => "it has error diagnostics".into(),
            Evidence::Check(tests) if tests.is_empty() => "the failing check's output names it".into(),
            Evidence::Check(tests) if tests.len() == 1 => format!("it holds the failing test {}", some_of(tests)),
            Evidence::Check(tests) => format!("it holds the failing tests {}", some_of(tests)),
            Evidence::Traceback { test, line: Some(line) } => {
                format!("the traceback of the failing test {test} names it (line {line})")
            }
            Evidence::Traceback { test, line: None } => format!("the failure of the test {test} names it"),
            Evidence::Neighbour { of, via } => {
                let tests: BTreeSet<&String> = seeds
                    .get(of)
                    .into_iter()
                    .flatten()
                    .filter_map(|e| match e {
                        Evidence::Check(t) => Some(t.iter()),
                        _ => None,
                    })
                    .flatten()
                    .collect();
                let who = match tests.len() {
                    0 => of.clone(),
                    1 => format!("the failing test {of} ({})", some_of(tests)),
                    _ => format!("the failing tests of {of} ({})", some_of(tests)),
                };
                match via {
                    Via::Imports => format!("{who} imports it"),
                    Via::Through { hub, name } => format!("{who} imports {name} from {hub}, and it defines {name}"),
                    Via::NamedBySeed => format!("{who} names it as a module"),
                    Via::References => format!("{who} uses what it defines (SCIP)"),
                    Via::ReferencedBy => format!("it uses what {of} defines (SCIP)"),
                }
            }
        }
    }

    fn is_seed(&self) -> bool {
        matches!(self, Evidence::Named | Evidence::Errors | Evidence::Check(_) | Evidence::Traceback { .. })
    }
}

/// The seeds of a plan: the files the frame says the goal names or that have errors, the files
/// the failing tests' tracebacks and failure messages name (`traced`, file → (test, line)), and
/// the files the failing check names (`check`, file → the failing tests they hold; a bare path
/// in the output says no more than a traceback already does), without generated files and
/// git-mas's own.
pub fn seeds(
    snapshot: &Snapshot,
    check: &BTreeMap<String, BTreeSet<String>>,
    traced: &BTreeMap<String, Vec<(String, Option<u32>)>>,
) -> BTreeMap<String, Vec<Evidence>> {
    let mut out: BTreeMap<String, Vec<Evidence>> = BTreeMap::new();
    let mut add = |file: &str, e: Evidence| {
        if file.starts_with(".mas/") || is_generated(file) {
            return;
        }
        let list = out.entry(file.to_string()).or_default();
        if !list.contains(&e) {
            list.push(e);
        }
    };
    // File targets only: a symbol the goal's words happen to match (`round` in "rounding") does
    // not make its file one the goal names; a file's own errors count, its symbols' are in them.
    for t in snapshot.targets.iter().filter(|t| !t.id.contains('#')) {
        if t.signals.task > 0.0 {
            add(&t.id, Evidence::Named);
        }
        if t.signals.errors > 0.0 {
            add(&t.id, Evidence::Errors);
        }
    }
    for (file, list) in traced {
        // A test's traceback through its own file says no more than that the file holds it.
        let holds = |test: &str| {
            check.get(file).is_some_and(|tests| tests.iter().any(|t| test == t || test.ends_with(&format!("::{t}"))))
        };
        for (test, line) in list.iter().filter(|(test, _)| !holds(test)) {
            add(file, Evidence::Traceback { test: test.clone(), line: *line });
        }
    }
    for (file, tests) in check {
        if tests.is_empty() && traced.contains_key(file) {
            continue;
        }
        add(file, Evidence::Check(tests.clone()));
    }
    out
}

/// Names every project has, never taken alone for a file.
const COMMON_STEMS: &[&str] = &[
    "mod", "lib", "main", "index", "__init__", "__main__", "init", "util", "utils", "test", "tests", "setup",
    "conftest", "types", "config", "common", "core", "app", "base",
];

/// The tracked files by the module names a text may call them.
#[derive(Debug, Default)]
pub struct NameIndex {
    /// Path without its extension, split at `/` (and again without a leading `src`/`lib`) → files.
    keys: BTreeMap<Vec<String>, BTreeSet<String>>,
    /// File stem → files.
    stems: BTreeMap<String, BTreeSet<String>>,
    /// Package name → its module file (`pkg/__init__.py`, `money/mod.rs`): named only by a token
    /// that is the name alone (importing `pkg.mod` is about `mod`, not the package).
    packages: BTreeMap<String, BTreeSet<String>>,
    files: BTreeSet<String>,
}

impl NameIndex {
    /// The index of `files` (repository-relative).
    pub fn new<'a>(files: impl IntoIterator<Item = &'a str>) -> Self {
        let mut index = NameIndex::default();
        for file in files {
            index.files.insert(file.to_string());
            let stemmed = match file.rsplit_once('.') {
                Some((head, _)) if !head.is_empty() && !head.ends_with('/') => head,
                _ => file,
            };
            let parts: Vec<String> = stemmed.split('/').map(str::to_string).collect();
            let Some(stem) = parts.last().cloned() else { continue };
            // `pkg/__init__.py` and `src/money/mod.rs` are the module `pkg` / `money`.
            let module: Vec<String> = if matches!(stem.as_str(), "__init__" | "mod" | "index") && parts.len() > 1 {
                parts[..parts.len() - 1].to_vec()
            } else {
                parts.clone()
            };
            if module.len() > 1 {
                index.keys.entry(module.clone()).or_default().insert(file.to_string());
                if matches!(module[0].as_str(), "src" | "lib") && module.len() > 2 {
                    index.keys.entry(module[1..].to_vec()).or_default().insert(file.to_string());
                }
            }
            if let Some(last) = module.last()
                && last.len() >= 3
                && !COMMON_STEMS.contains(&last.as_str())
            {
                let map = if module.len() < parts.len() { &mut index.packages } else { &mut index.stems };
                map.entry(last.clone()).or_default().insert(file.to_string());
            }
        }
        index
    }

    /// The files `text` (the content of `from`) names as modules, without `from` itself.
    pub fn named_in(&self, from: &str, text: &str) -> BTreeSet<String> {
        let dir = from.rsplit_once('/').map_or("", |(d, _)| d);
        let lang = language(from);
        let mut modules = BTreeSet::new();
        let mut out = BTreeSet::new();
        for token in text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | ':' | '-'))) {
            if token.len() < 3 {
                continue;
            }
            let token = token.trim_matches(|c: char| matches!(c, '.' | '/' | ':' | '-'));
            if self.files.contains(token) {
                out.insert(token.to_string());
                continue;
            }
            let parts: Vec<&str> =
                token.split(['.', '/', ':']).filter(|p| !p.is_empty() && *p != "crate" && *p != "super").collect();
            // Any run of two or more components that is a module's path.
            for i in 0..parts.len() {
                for j in (i + 2)..=parts.len() {
                    let key: Vec<String> = parts[i..j].iter().map(|s| s.to_string()).collect();
                    if let Some(files) = self.keys.get(&key) {
                        modules.extend(files.iter().cloned());
                    }
                }
            }
            // A bare stem: when it is the one file with that stem, or the file is beside `from`.
            for (i, part) in parts.iter().enumerate() {
                let package = if parts.len() == 1 { self.packages.get(*part) } else { None };
                if i == 0
                    && let Some(files) = package
                {
                    modules.extend(files.iter().cloned());
                }
                if let Some(files) = self.stems.get(*part) {
                    let beside: Vec<&String> =
                        files.iter().filter(|f| f.rsplit_once('/').map_or("", |(d, _)| d) == dir).collect();
                    if files.len() == 1 {
                        modules.extend(files.iter().cloned());
                    } else {
                        modules.extend(beside.into_iter().cloned());
                    }
                }
            }
        }
        out.extend(modules.into_iter().filter(|f| lang.is_some() && language(f) == lang));
        out.remove(from);
        out
    }
}

/// A file's language family by its extension, for the names rule: `None` for a file that is not
/// source code (its words name no module).
fn language(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    Some(match ext {
        "py" | "pyi" => "python",
        "rs" => "rust",
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => "js",
        "c" | "h" | "cc" | "cpp" | "cxx" | "hh" | "hpp" | "hxx" => "c",
        "go" => "go",
        "java" | "kt" | "kts" | "scala" => "jvm",
        "rb" => "ruby",
        "php" => "php",
        "cs" => "csharp",
        "swift" => "swift",
        "ex" | "exs" => "elixir",
        "hs" => "haskell",
        "ml" | "mli" => "ocaml",
        "lua" => "lua",
        "dart" => "dart",
        _ => return None,
    })
}

/// The plan that covers `seeds` and their `neighbours` (seed → its neighbours and how), dealt to
/// `agents` in coherent groups; `None` when there is no seed (the caller deals the frame's
/// ranking instead). `ranked`: the frame's files, highest first (the order within a slice).
/// Fewer groups than agents: the agents left over have no slice and review ([`Reviewer`]) —
/// no agent is dealt filler.
pub fn plan_covering(
    goal: &str,
    agents: &[String],
    ranked: &[String],
    frame: &str,
    seeds: &BTreeMap<String, Vec<Evidence>>,
    neighbours: &BTreeMap<String, Vec<(String, Via)>>,
) -> Option<SlicePlan> {
    if seeds.is_empty() || agents.is_empty() {
        return None;
    }
    let (why, mut edges) = neighbour_edges(seeds, neighbours);
    let rank: BTreeMap<&str, usize> = ranked.iter().enumerate().map(|(i, f)| (f.as_str(), i)).collect();
    let order = |f: &String| (rank.get(f.as_str()).copied().unwrap_or(usize::MAX), f.clone());
    // A neighbour of several seeds (not itself a seed) joins none of their groups: it goes with
    // the narrowest of them once the groups are made.
    let mut seeds_of: BTreeMap<&str, Vec<&String>> = BTreeMap::new();
    for (seed, file) in &edges {
        let list = seeds_of.entry(file.as_str()).or_default();
        if !list.contains(&seed) {
            list.push(seed);
        }
    }
    // How many files each seed reaches: the narrowest importer of a shared module is the one most
    // about it (a module's own test file, not a test of the whole package that imports everything).
    let mut reach: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (seed, file) in &edges {
        reach.entry(seed.as_str()).or_default().insert(file.as_str());
    }
    let shared: BTreeMap<String, String> = seeds_of
        .iter()
        .filter(|(file, seeds_here)| seeds_here.len() > 1 && !seeds.contains_key(**file))
        .map(|(file, seeds_here)| {
            let first = seeds_here
                .iter()
                .min_by_key(|s| (reach.get(s.as_str()).map_or(0, BTreeSet::len), order(s)))
                .map_or_else(String::new, |s| (*s).clone());
            (file.to_string(), first)
        })
        .collect();
    edges.retain(|(_, file)| !shared.contains_key(file));
    // Connected components over the seed–neighbour edges.
    let files: Vec<String> = why.keys().cloned().collect();
    let mut groups = components(&files, &edges, &shared);
    for g in &mut groups {
        g.sort_by_key(order);
    }
    // Largest first; among equals, the one with the highest-ranked file first.
    groups.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| order(&a[0]).cmp(&order(&b[0]))));
    let dealt_to = agents.len().min(groups.len());
    let mut dealt: Vec<Vec<String>> = vec![Vec::new(); dealt_to];
    for g in groups {
        let least = (0..dealt_to).min_by_key(|&i| (dealt[i].len(), i)).unwrap_or(0);
        dealt[least].extend(g);
    }
    let slices = agents
        .iter()
        .zip(dealt)
        .map(|(agent, mut targets)| {
            targets.sort_by_key(order);
            let reasons = targets
                .iter()
                .map(|f| {
                    let mut list = why.get(f).cloned().unwrap_or_default();
                    list.sort_by_key(|e| !e.is_seed());
                    (f.clone(), list.iter().map(|e| e.describe(seeds)).collect::<Vec<_>>().join("; "))
                })
                .collect();
            Slice { agent: agent.clone(), subgoal: subgoal(goal, &targets), targets, why: reasons }
        })
        .collect();
    let reviewers = agents[dealt_to..]
        .iter()
        .enumerate()
        .map(|(i, agent)| Reviewer {
            agent: agent.clone(),
            why: format!("nothing the goal concerns is left for {}", nth_slice(dealt_to + i + 1)),
        })
        .collect();
    Some(SlicePlan { frame: frame.into(), source: SliceSource::Concerns, slices, reviewers })
}

/// Each file the goal concerns, with the evidence of why.
type Reasons = BTreeMap<String, Vec<Evidence>>;

/// Every file the goal concerns with why (`seeds` and their `neighbours`, filler left out), and the
/// seed–neighbour edges between them.
fn neighbour_edges(
    seeds: &BTreeMap<String, Vec<Evidence>>,
    neighbours: &BTreeMap<String, Vec<(String, Via)>>,
) -> (Reasons, Vec<(String, String)>) {
    let mut why: BTreeMap<String, Vec<Evidence>> = seeds.clone();
    let mut edges: Vec<(String, String)> = Vec::new();
    for (seed, list) in neighbours {
        if !seeds.contains_key(seed) {
            continue;
        }
        for (file, via) in list {
            if file == seed || file.starts_with(".mas/") || is_filler(file) {
                continue;
            }
            let e = Evidence::Neighbour { of: seed.clone(), via: via.clone() };
            let entry = why.entry(file.clone()).or_default();
            if !entry.contains(&e) {
                entry.push(e);
            }
            edges.push((seed.clone(), file.clone()));
        }
    }
    (why, edges)
}

/// The connected components of `files` over the seed–neighbour `edges`; a `shared` neighbour goes
/// with the seed it is dealt to.
fn components(files: &[String], edges: &[(String, String)], shared: &BTreeMap<String, String>) -> Vec<Vec<String>> {
    let at: BTreeMap<&str, usize> = files.iter().enumerate().map(|(i, f)| (f.as_str(), i)).collect();
    let mut parent: Vec<usize> = (0..files.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for (a, b) in edges {
        let (ra, rb) = (root(&mut parent, at[a.as_str()]), root(&mut parent, at[b.as_str()]));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    let mut groups: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (i, f) in files.iter().enumerate() {
        let home = shared.get(f).map_or(i, |seed| at[seed.as_str()]);
        groups.entry(root(&mut parent, home)).or_default().push(f.clone());
    }
    groups.into_values().collect()
}

#[cfg(test)]
#[path = "cover_tests.rs"]
mod tests;

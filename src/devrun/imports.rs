//! A file's real imports, resolved to files of the repository: the neighbours of a seed in an
//! aggregate run's plan ([`super::cover`]).
//!
//! Words are not imports. A test whose docstring says "see shop.stock" or whose comment mentions
//! `crate::money` does not use those modules, so each language's import statements are read from
//! the code alone — comments and string literals blanked first:
//!
//! - **Python**: `import a.b [as c]`, `from a.b import c, d`, `from . import x`,
//!   `from ..pkg import y` (relative to the file's package), over several lines in parentheses.
//!   An absolute module is looked for beside the file, in its parent folders, then under `src/`
//!   and `lib/`; a module that is no file of the repository (`json`, `pytest`, a third-party
//!   package) is no neighbour.
//! - **Rust**: `use` trees (`use crate::a::{b, c::d as e, *}`), `mod x;`, and paths in code that
//!   start at `crate::`, `self::`, `super::` or the crate's own name (`shapes::area::f` in
//!   `tests/`); `std`, `core`, `alloc` and other crates are not files here.
//!
//! **Re-export hubs.** A package's `__init__.py` that re-exports its modules (`from .pricing
//! import *`), a `lib.rs` or `mod.rs` of `pub mod a; pub use a::*;`, is not a bridge: importing
//! a name from the hub imports the module that defines the name, not every module the hub names.
//! So a name imported from a hub is followed through the hub's re-exports to the file that
//! defines it ([`Import::Through`]); a glob import from a hub (`from shop import *`,
//! `use shapes::*`) follows the names the importing file uses; and a name the hub itself
//! defines makes the hub the neighbour. Otherwise the hub and its modules are left out: the hub
//! is in a slice only when evidence names it directly (the goal, a traceback, its own errors).
//!
//! Decisions: one hop (the imports of the imported modules are not followed, except through
//! hubs, at most [`MAX_HUB_DEPTH`] deep); definitions are found by their top-level keyword
//! (`def`, `class`, an assignment; `fn`, `struct`, `enum`, `trait`, `type`, `const`, `static`,
//! `mod`, `macro_rules!`), not by a parser; a Rust `super::` inside an inline `mod tests` is
//! read as the file's parent module, and `use super::*` is not followed (it is the file's own
//! module there).

use std::collections::{BTreeMap, BTreeSet};

/// How deep re-exports are followed through hubs that re-export hubs.
pub const MAX_HUB_DEPTH: usize = 4;

/// One import of a file, resolved.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Import {
    /// The file imports this module.
    Module(String),
    /// The file imports `name` from `hub`, which re-exports it from this module.
    Through {
        /// The module that defines the name.
        file: String,
        /// The re-export hub the name was imported from.
        hub: String,
        /// The name.
        name: String,
    },
}

impl Import {
    /// The file imported.
    pub fn file(&self) -> &str {
        match self {
            Import::Module(f) | Import::Through { file: f, .. } => f,
        }
    }
}

/// The repository the imports are resolved in: its files, and a way to read one.
pub struct Repo<'a> {
    files: &'a BTreeSet<String>,
    read: &'a dyn Fn(&str) -> Option<String>,
    cache: std::cell::RefCell<BTreeMap<String, Option<String>>>,
    /// Each file's code (comments and strings blanked), read once: a hub is consulted for every
    /// name a glob import brings in.
    code: std::cell::RefCell<BTreeMap<String, Option<std::rc::Rc<str>>>>,
}

impl<'a> Repo<'a> {
    /// The repository of `files` (repository-relative paths), read by `read`.
    pub fn new(files: &'a BTreeSet<String>, read: &'a dyn Fn(&str) -> Option<String>) -> Self {
        Repo { files, read, cache: Default::default(), code: Default::default() }
    }

    fn has(&self, path: &str) -> bool {
        self.files.contains(path)
    }

    /// `path`'s code, blanked by `blank` (the language's), read once.
    fn code(&self, path: &str, blank: fn(&str) -> String) -> Option<std::rc::Rc<str>> {
        if let Some(code) = self.code.borrow().get(path) {
            return code.clone();
        }
        let code: Option<std::rc::Rc<str>> = self.text(path).map(|t| blank(&t).into());
        self.code.borrow_mut().insert(path.to_string(), code.clone());
        code
    }

    fn text(&self, path: &str) -> Option<String> {
        if !self.has(path) {
            return None;
        }
        self.cache.borrow_mut().entry(path.to_string()).or_insert_with(|| (self.read)(path)).clone()
    }
}

/// The imports of `from` (its `text`), resolved to files of `repo`, without `from` itself;
/// `None` when its language has no import reader here (the caller falls back on module names).
pub fn imports(repo: &Repo, from: &str, text: &str) -> Option<BTreeSet<Import>> {
    let mut out = match from.rsplit_once('.').map(|(_, e)| e) {
        Some("py" | "pyi") => python(repo, from, text),
        Some("rs") => rust(repo, from, text),
        _ => return None,
    };
    out.retain(|i| i.file() != from);
    Some(out)
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() { rest.to_string() } else { format!("{dir}/{rest}") }
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The identifiers of `code`.
fn identifiers(code: &str) -> BTreeSet<String> {
    code.split(|c: char| !is_ident_char(c))
        .filter(|w| w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_'))
        .map(str::to_string)
        .collect()
}

// ---------------------------------------------------------------- Python

/// `code` with comments removed and every string literal's content blanked (`""`), lines kept.
fn python_code(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '"' | '\'' => {
                let triple = i + 2 < chars.len() && chars[i + 1] == c && chars[i + 2] == c;
                let quote_len = if triple { 3 } else { 1 };
                i += quote_len;
                out.push_str("\"\"");
                while i < chars.len() {
                    if chars[i] == '\\' {
                        i += 2;
                        continue;
                    }
                    if chars[i] == '\n' {
                        out.push('\n');
                        if !triple {
                            i += 1;
                            break;
                        }
                    }
                    if chars[i] == c && (!triple || (i + 2 < chars.len() && chars[i + 1] == c && chars[i + 2] == c)) {
                        i += quote_len;
                        break;
                    }
                    i += 1;
                }
                continue;
            }
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// The logical statements of Python `code` (lines joined inside brackets and after `\`).
fn python_statements(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth: i32 = 0;
    for line in code.lines() {
        let continued = line.trim_end().ends_with('\\');
        for c in line.chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth = (depth - 1).max(0),
                _ => {}
            }
        }
        current.push(' ');
        current.push_str(line.trim_end().trim_end_matches('\\'));
        if depth == 0 && !continued {
            for statement in current.split(';') {
                let s = statement.trim();
                if !s.is_empty() {
                    out.push(s.to_string());
                }
            }
            current.clear();
        }
    }
    out
}

/// One import statement of Python: the module (dotted), its relative level (leading dots), and
/// the names imported from it (`None` for `import module`), each as (name, local alias).
struct PyImport {
    module: String,
    level: usize,
    names: Option<Vec<(String, String)>>,
    alias: String,
}

fn python_imports(code: &str) -> Vec<PyImport> {
    let mut out = Vec::new();
    for s in python_statements(code) {
        if let Some(rest) = s.strip_prefix("import ") {
            for part in rest.split(',') {
                let mut words = part.split_whitespace();
                let Some(module) = words.next() else { continue };
                let alias = match (words.next(), words.next()) {
                    (Some("as"), Some(a)) => a.to_string(),
                    _ => module.to_string(),
                };
                out.push(PyImport { module: module.into(), level: 0, names: None, alias });
            }
        } else if let Some(rest) = s.strip_prefix("from ") {
            let Some((module, names)) = rest.split_once(" import ") else { continue };
            let module = module.trim();
            let level = module.chars().take_while(|c| *c == '.').count();
            let names: Vec<(String, String)> = names
                .trim()
                .trim_start_matches('(')
                .trim_end_matches(')')
                .split(',')
                .filter_map(|n| {
                    let mut words = n.split_whitespace();
                    let name = words.next()?.to_string();
                    let alias = match (words.next(), words.next()) {
                        (Some("as"), Some(a)) => a.to_string(),
                        _ => name.clone(),
                    };
                    Some((name, alias))
                })
                .collect();
            out.push(PyImport { module: module[level..].into(), level, names: Some(names), alias: String::new() });
        }
    }
    out
}

/// The file of Python module `dotted` imported from `from` (`level` leading dots: relative).
fn python_module(repo: &Repo, from: &str, dotted: &str, level: usize) -> Option<String> {
    let rel = dotted.replace('.', "/");
    let candidates = |base: &str| -> Option<String> {
        let path = if rel.is_empty() { base.to_string() } else { join(base, &rel) };
        if rel.is_empty() {
            return Some(join(&path, "__init__.py")).filter(|p| repo.has(p));
        }
        [format!("{path}.py"), format!("{path}.pyi"), join(&path, "__init__.py")].into_iter().find(|p| repo.has(p))
    };
    if level > 0 {
        let mut base = dir_of(from).to_string();
        for _ in 1..level {
            base = dir_of(&base).to_string();
        }
        return candidates(&base);
    }
    let mut roots: Vec<String> = Vec::new();
    let mut d = dir_of(from).to_string();
    loop {
        roots.push(d.clone());
        if d.is_empty() {
            break;
        }
        d = dir_of(&d).to_string();
    }
    roots.extend(["src".to_string(), "lib".to_string()]);
    roots.iter().find_map(|r| candidates(r))
}

fn is_package(file: &str) -> bool {
    file.ends_with("__init__.py") || file.ends_with("__init__.pyi")
}

/// Whether Python `code` defines `name` at its top level (`def`, `class`, an assignment).
fn python_defines(code: &str, name: &str) -> bool {
    code.lines().any(|line| {
        let rest = line.strip_prefix("async ").unwrap_or(line);
        if let Some(r) = rest.strip_prefix("def ").or_else(|| rest.strip_prefix("class ")) {
            return r.strip_prefix(name).is_some_and(|a| a.trim_start().starts_with(['(', ':']));
        }
        line.strip_prefix(name).is_some_and(|a| {
            let a = a.trim_start();
            (a.starts_with('=') && !a.starts_with("==")) || a.starts_with(':')
        })
    })
}

/// The module of the package `hub` that defines `name` (the hub itself when it does), following
/// its re-exports.
fn python_through(repo: &Repo, hub: &str, name: &str, depth: usize) -> Option<String> {
    if depth > MAX_HUB_DEPTH {
        return None;
    }
    let code = repo.code(hub, python_code)?;
    for import in python_imports(&code) {
        let Some(names) = &import.names else { continue };
        let Some(module) = python_module(repo, hub, &import.module, import.level) else { continue };
        for (origin, alias) in names {
            if origin == "*" {
                let defines = repo.code(&module, python_code).is_some_and(|c| python_defines(&c, name));
                if defines {
                    return Some(module);
                }
                if is_package(&module)
                    && let Some(found) = python_through(repo, &module, name, depth + 1)
                {
                    return Some(found);
                }
            } else if alias == name {
                // `from . import pricing`: the submodule itself.
                let sub = if import.module.is_empty() { origin.clone() } else { format!("{}.{origin}", import.module) };
                if let Some(file) = python_module(repo, hub, &sub, import.level) {
                    return Some(file);
                }
                if is_package(&module) && module != hub {
                    return python_through(repo, &module, origin, depth + 1).or(Some(module));
                }
                return Some(module);
            }
        }
    }
    python_defines(&code, name).then(|| hub.to_string())
}

/// What `from` imports, for each name it takes from `module` (the file of `import`), through a
/// hub when the module is a package.
fn python_names(
    repo: &Repo,
    from: &str,
    module: &str,
    import: &PyImport,
    names: &[(String, String)],
    used: &BTreeSet<String>,
    out: &mut BTreeSet<Import>,
) {
    let (dotted, level) = (import.module.as_str(), import.level);
    for (name, _) in names {
        if name == "*" {
            if !is_package(module) {
                out.insert(Import::Module(module.to_string()));
                continue;
            }
            for n in used {
                through(repo, module, n, out);
            }
            continue;
        }
        // `from pkg import mod`: a submodule.
        let sub = if dotted.is_empty() { name.clone() } else { format!("{dotted}.{name}") };
        if let Some(file) = python_module(repo, from, &sub, level) {
            out.insert(Import::Module(file));
        } else if is_package(module) {
            through(repo, module, name, out);
        } else {
            out.insert(Import::Module(module.to_string()));
        }
    }
}

fn through(repo: &Repo, hub: &str, name: &str, out: &mut BTreeSet<Import>) {
    match python_through(repo, hub, name, 0) {
        Some(file) if file == hub => {
            out.insert(Import::Module(file));
        }
        Some(file) => {
            out.insert(Import::Through { file, hub: hub.to_string(), name: name.to_string() });
        }
        None => {}
    }
}

fn python(repo: &Repo, from: &str, text: &str) -> BTreeSet<Import> {
    let code = python_code(text);
    let used = identifiers(&code);
    let mut out = BTreeSet::new();
    for import in python_imports(&code) {
        let Some(module) = python_module(repo, from, &import.module, import.level) else { continue };
        // A package's own re-exports are its structure, not what it uses.
        if is_package(from) && module.starts_with(&format!("{}/", dir_of(from))) {
            continue;
        }
        match &import.names {
            Some(names) => python_names(repo, from, &module, &import, names, &used, &mut out),
            None if is_package(&module) => {
                // `import pkg` (or `import pkg as p`): the names it uses as `p.name`.
                let prefix = format!("{}.", import.alias);
                let attrs: BTreeSet<String> = code
                    .match_indices(&prefix)
                    .filter(|(at, _)| !code[..*at].ends_with(|c: char| is_ident_char(c) || c == '.'))
                    .filter_map(|(at, _)| {
                        let rest = &code[at + prefix.len()..];
                        let end = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
                        (end > 0).then(|| rest[..end].to_string())
                    })
                    .collect();
                let names: Vec<(String, String)> = attrs.into_iter().map(|a| (a.clone(), a)).collect();
                python_names(repo, from, &module, &import, &names, &used, &mut out);
            }
            None => {
                out.insert(Import::Module(module));
            }
        }
    }
    out
}

// ---------------------------------------------------------------- Rust

/// Rust `text` with comments removed and string and char literals blanked, lines kept.
fn rust_code(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            i = skip_block_comment(&chars, i, &mut out);
            continue;
        }
        // Raw strings: r"…", r#"…"#, br"…".
        if (c == 'r' || (c == 'b' && next == Some('r'))) && !out.ends_with(is_ident_char) && {
            let start = if c == 'b' { i + 2 } else { i + 1 };
            let hashes = chars[start..].iter().take_while(|c| **c == '#').count();
            chars.get(start + hashes) == Some(&'"')
        } {
            let start = if c == 'b' { i + 2 } else { i + 1 };
            let hashes = chars[start..].iter().take_while(|c| **c == '#').count();
            i = start + hashes + 1;
            while i < chars.len() {
                if chars[i] == '"' && chars[i + 1..].iter().take(hashes).filter(|c| **c == '#').count() == hashes {
                    i += 1 + hashes;
                    break;
                }
                if chars[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            out.push_str("\"\"");
            continue;
        }
        if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if chars.get(i) == Some(&'\n') {
                    out.push('\n');
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
            continue;
        }
        // A char literal ('x', '\n', '\u{1F600}'), not a lifetime ('a).
        if c == '\'' {
            let close = if next == Some('\\') {
                chars[i + 2..].iter().position(|c| *c == '\'').map(|p| i + 2 + p)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            if let Some(close) = close {
                out.push_str("' '");
                i = close + 1;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Past the (nested) block comment at `i` in `chars`: the index after it, its newlines kept in `out`.
fn skip_block_comment(chars: &[char], mut i: usize, out: &mut String) -> usize {
    let mut depth = 0;
    while i < chars.len() {
        if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                break;
            }
        } else {
            if chars[i] == '\n' {
                out.push('\n');
            }
            i += 1;
        }
    }
    i
}

/// A Rust file's place: the folder its child modules live in.
fn rust_children_dir(file: &str) -> String {
    let dir = dir_of(file);
    let name = file.rsplit('/').next().unwrap_or(file);
    let parent = dir.rsplit('/').next().unwrap_or(dir);
    if matches!(name, "lib.rs" | "main.rs" | "mod.rs" | "build.rs")
        || matches!(parent, "tests" | "benches" | "examples")
    {
        dir.to_string()
    } else {
        join(dir, name.trim_end_matches(".rs"))
    }
}

fn rust_child(repo: &Repo, dir: &str, name: &str) -> Option<String> {
    [join(dir, &format!("{name}.rs")), join(dir, &format!("{name}/mod.rs"))].into_iter().find(|p| repo.has(p))
}

/// The crate `file` belongs to: its root file (`src/lib.rs`, else `src/main.rs`) and its
/// library's name (`[lib] name`, else `[package] name`, `-` as `_`).
fn rust_crate(repo: &Repo, file: &str) -> Option<(String, Option<String>)> {
    let mut d = dir_of(file).to_string();
    loop {
        let manifest = join(&d, "Cargo.toml");
        if repo.has(&manifest) {
            let root = [join(&d, "src/lib.rs"), join(&d, "src/main.rs")].into_iter().find(|p| repo.has(p))?;
            let name = repo.text(&manifest).and_then(|t| crate_name(&t));
            return Some((root, name));
        }
        if d.is_empty() {
            break;
        }
        d = dir_of(&d).to_string();
    }
    // No manifest: the nearest `src/lib.rs` above.
    let mut d = dir_of(file).to_string();
    loop {
        if let Some(root) = [join(&d, "src/lib.rs"), join(&d, "lib.rs")].into_iter().find(|p| repo.has(p)) {
            return Some((root, None));
        }
        if d.is_empty() {
            return None;
        }
        d = dir_of(&d).to_string();
    }
}

fn crate_name(manifest: &str) -> Option<String> {
    let mut section = "";
    let mut package = None;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let Some(value) = line.strip_prefix("name").map(str::trim_start).and_then(|r| r.strip_prefix('=')) else {
            continue;
        };
        let value = value.trim().trim_matches('"').replace('-', "_");
        match section {
            "[lib]" => return Some(value),
            "[package]" => package = Some(value),
            _ => {}
        }
    }
    package
}

/// Expands one `use` tree (`a::{b, c::d as e, *}`) into its paths, each a list of segments and
/// the name it brings in (`e` for `c::d as e`).
fn expand_use(tree: &str) -> Vec<(Vec<String>, String)> {
    let tree: String = tree.chars().map(|c| if c.is_whitespace() { ' ' } else { c }).collect();
    fn go(prefix: &[String], tree: &str, out: &mut Vec<(Vec<String>, String)>) {
        let tree = tree.trim();
        if let Some(open) = tree.find('{') {
            let head: Vec<String> =
                tree[..open].split("::").map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
            let inner = tree[open + 1..].trim_end().trim_end_matches('}');
            let mut full = prefix.to_vec();
            full.extend(head);
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        go(&full, &inner[start..i], out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            go(&full, &inner[start..], out);
            return;
        }
        let (path, alias) = match tree.split_once(" as ") {
            Some((path, alias)) => (path, Some(alias.trim())),
            None => (tree, None),
        };
        let mut full = prefix.to_vec();
        full.extend(path.split("::").map(str::trim).filter(|s| !s.is_empty()).map(str::to_string));
        if full.len() > prefix.len() {
            let name = alias.map(str::to_string).or_else(|| full.last().cloned()).unwrap_or_default();
            out.push((full, name));
        }
    }
    let mut out = Vec::new();
    go(&[], &tree, &mut out);
    out
}

/// Where a Rust path was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathKind {
    /// A `use` item.
    Use,
    /// A `pub use` item: a re-export.
    PubUse,
    /// A `mod x;` declaration (read as `self::x`).
    Mod,
    /// A path in code.
    Code,
}

/// The `use` or `mod` item a statement ends with: the keyword's place, when only visibility,
/// attributes or a block's edge come before it.
fn item_start(s: &str) -> Option<(usize, &'static str)> {
    let mut best: Option<(usize, &'static str)> = None;
    for keyword in ["use ", "mod "] {
        for (pos, _) in s.match_indices(keyword) {
            if pos > 0 && s[..pos].ends_with(is_ident_char) {
                continue;
            }
            let before = s[..pos].trim_end();
            let ok = before.is_empty()
                || before.ends_with(['{', '}', ']'])
                || before.ends_with("pub")
                || (before.ends_with(')')
                    && before.rsplit("pub").next().is_some_and(|v| v.trim_start().starts_with('(')));
            if ok && best.is_none_or(|(b, _)| pos > b) {
                best = Some((pos, keyword.trim_end()));
            }
        }
    }
    best
}

/// The paths a Rust file names, each with where it was read and the name it brings in: its
/// `use` trees, its `mod x;` lines (as `self::x`), and the paths in its code that start at
/// `crate`, `self`, `super` or `krate`.
fn rust_paths(code: &str, krate: Option<&str>) -> Vec<(Vec<String>, PathKind, String)> {
    let mut out = Vec::new();
    let flat = code.replace('\n', " ");
    for statement in flat.split(';') {
        let Some((pos, keyword)) = item_start(statement) else { continue };
        let rest = statement[pos + keyword.len()..].trim();
        if keyword == "mod" {
            if !rest.is_empty() && rest.chars().all(is_ident_char) {
                out.push((vec!["self".to_string(), rest.to_string()], PathKind::Mod, rest.to_string()));
            }
            continue;
        }
        let head = statement[..pos].trim_end();
        let public = head.ends_with("pub") || (head.ends_with(')') && head.contains("pub("));
        let kind = if public { PathKind::PubUse } else { PathKind::Use };
        out.extend(expand_use(rest.trim_start_matches("::")).into_iter().map(|(p, name)| (p, kind, name)));
    }
    // Paths in code: `crate::a::b(…)`, `super::x`, `shapes::area::f`.
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if is_ident_char(chars[i]) && (i == 0 || !(is_ident_char(chars[i - 1]) || chars[i - 1] == ':')) {
            let start = i;
            while i < chars.len() && (is_ident_char(chars[i]) || (chars[i] == ':' && chars.get(i + 1) == Some(&':'))) {
                i += if chars[i] == ':' { 2 } else { 1 };
            }
            let path: String = chars[start..i].iter().collect();
            let segments: Vec<String> = path.split("::").filter(|s| !s.is_empty()).map(str::to_string).collect();
            if segments.len() > 1
                && (matches!(segments[0].as_str(), "crate" | "self" | "super") || Some(segments[0].as_str()) == krate)
            {
                let name = segments.last().cloned().unwrap_or_default();
                out.push((segments, PathKind::Code, name));
            }
            continue;
        }
        i += 1;
    }
    out
}

/// Whether Rust `code` defines `name` at its top level (an item's keyword before it, on a line
/// that is not indented: a method in an `impl` is not the module's).
fn rust_defines(code: &str, name: &str) -> bool {
    const KEYWORDS: &[&str] =
        &["fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod", "macro_rules!"];
    code.lines().filter(|l| !l.starts_with(char::is_whitespace)).any(|line| {
        let words: Vec<&str> =
            line.split(|c: char| !(is_ident_char(c) || c == '!')).filter(|w| !w.is_empty()).collect();
        words.windows(2).any(|w| KEYWORDS.contains(&w[0]) && w[1] == name)
    })
}

/// The file of hub `hub` (a module file) that defines `name`: the hub itself, or the module its
/// `pub use` re-exports it from.
fn rust_through(repo: &Repo, hub: &str, name: &str, krate: Option<&str>, depth: usize) -> Option<String> {
    if depth > MAX_HUB_DEPTH {
        return None;
    }
    let code = repo.code(hub, rust_code)?;
    for (path, _, local) in rust_paths(&code, None) {
        let Some(last) = path.last() else { continue };
        if last != "*" && local != name {
            continue;
        }
        let Some((file, rest)) = rust_resolve(repo, hub, &path, krate) else { continue };
        if file == hub {
            continue;
        }
        if last == "*" {
            let defines = repo.code(&file, rust_code).is_some_and(|c| rust_defines(&c, name));
            if defines && rest.len() <= 1 {
                return Some(file);
            }
            if is_rust_hub(&file)
                && let Some(found) = rust_through(repo, &file, name, krate, depth + 1)
            {
                return Some(found);
            }
        } else if rest.is_empty() || rest.len() == 1 {
            return Some(file);
        }
    }
    rust_defines(&code, name).then(|| hub.to_string())
}

fn is_rust_hub(file: &str) -> bool {
    matches!(file.rsplit('/').next(), Some("lib.rs" | "main.rs" | "mod.rs"))
}

/// The file a Rust path names from `from`, and the segments left after it (items); `None` when
/// it leaves the repository (another crate, `std`).
fn rust_resolve(repo: &Repo, from: &str, path: &[String], krate: Option<&str>) -> Option<(String, Vec<String>)> {
    let (root, _) = rust_crate(repo, from).unwrap_or_default();
    let mut segments = path.iter().map(String::as_str).peekable();
    let mut file = match *segments.peek()? {
        "crate" => {
            segments.next();
            // `crate::` in an integration test is the test itself.
            let in_tests =
                dir_of(from).rsplit('/').next().is_some_and(|d| matches!(d, "tests" | "benches" | "examples"));
            if in_tests { from.to_string() } else { root.clone() }
        }
        "self" => {
            segments.next();
            from.to_string()
        }
        "super" => {
            let mut file = from.to_string();
            while segments.peek() == Some(&"super") {
                segments.next();
                let children = rust_children_dir(&file);
                let parent_dir = dir_of(&children).to_string();
                file = if dir_of(&root) == parent_dir {
                    root.clone()
                } else {
                    [format!("{parent_dir}.rs"), join(&parent_dir, "mod.rs")].into_iter().find(|p| repo.has(p))?
                };
            }
            file
        }
        first if Some(first) == krate && !root.is_empty() => {
            segments.next();
            root.clone()
        }
        // A child module of this one (2018 paths), else another crate.
        first => {
            rust_child(repo, &rust_children_dir(from), first)?;
            from.to_string()
        }
    };
    let mut rest: Vec<String> = Vec::new();
    for seg in segments {
        if rest.is_empty()
            && let Some(child) = rust_child(repo, &rust_children_dir(&file), seg)
        {
            file = child;
            continue;
        }
        rest.push(seg.to_string());
    }
    Some((file, rest))
}

fn rust(repo: &Repo, from: &str, text: &str) -> BTreeSet<Import> {
    let code = rust_code(text);
    let krate = rust_crate(repo, from).and_then(|(_, name)| name);
    let used = identifiers(&code);
    let mut out = BTreeSet::new();
    let hub = is_rust_hub(from);
    for (path, kind, _) in rust_paths(&code, krate.as_deref()) {
        // A hub's own `mod` and `pub use` items are its structure, not what it uses.
        if hub && matches!(kind, PathKind::Mod | PathKind::PubUse) {
            continue;
        }
        // `use super::*` in a file is its inline test module's parent: the file itself.
        if path.len() == 2 && path[0] == "super" && path[1] == "*" {
            continue;
        }
        let Some((file, rest)) = rust_resolve(repo, from, &path, krate.as_deref()) else { continue };
        if file == from {
            continue;
        }
        if !is_rust_hub(&file) {
            out.insert(Import::Module(file));
            continue;
        }
        // A hub: the names taken from it, followed to where they are defined.
        let names: Vec<String> = match rest.first().map(String::as_str) {
            Some("*") => used.iter().cloned().collect(),
            Some(name) => vec![name.to_string()],
            // `mod x;` of a folder module, or the hub named alone: the module itself.
            None if path.first().is_some_and(|s| s == "self") => {
                out.insert(Import::Module(file));
                continue;
            }
            None => continue,
        };
        for name in names {
            match rust_through(repo, &file, &name, krate.as_deref(), 0) {
                Some(found) if found == file => {
                    out.insert(Import::Module(found));
                }
                Some(found) => {
                    out.insert(Import::Through { file: found, hub: file.clone(), name });
                }
                None => {}
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "imports_tests.rs"]
mod tests;

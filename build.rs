//! Embeds `tests/fixtures-repo/` and `skills/` into the binary, so `git mas demo` and
//! `git mas skills install` work from an installed binary with no source tree at hand.
// A build script talks to cargo through stdout (`cargo:` lines): that is what println! is for here.
#![allow(clippy::disallowed_macros)]

use std::path::Path;

fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("fixture dir").filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let name = e.file_name();
        // Build output and tool caches a local run may leave behind are not part of the fixture.
        if ["target", ".git", "node_modules", "__pycache__", ".ruff_cache"].iter().any(|skip| name == *skip) {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, out);
        } else {
            out.push(path.strip_prefix(root).expect("under root").to_string_lossy().replace('\\', "/"));
        }
    }
}

/// Writes `OUT_DIR/<out>`: a `pub const <name>: &[(&str, &[u8])]` of every file under `root`.
fn embed(root: &Path, name: &str, doc: &str, out: &str) {
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(root, root, &mut files);
    let mut code = format!("/// {doc}: (relative path, contents).\npub const {name}: &[(&str, &[u8])] = &[\n");
    for f in &files {
        code.push_str(&format!("    ({f:?}, include_bytes!({:?})),\n", root.join(f).display().to_string()));
    }
    code.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets it")).join(out);
    std::fs::write(out, code).expect("write the embedded file list");
}

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it");
    let manifest = Path::new(&manifest);
    embed(
        &manifest.join("tests").join("fixtures-repo"),
        "FIXTURE_FILES",
        "The fixture project's files",
        "fixture_files.rs",
    );
    embed(&manifest.join("skills"), "SKILL_FILES", "The Agent Skills in skills/", "skill_files.rs");
}

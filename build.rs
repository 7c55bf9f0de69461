//! Embeds `tests/fixtures-repo/` and `skills/` into the binary, so `git mas demo` and
//! `git mas skills install` work from an installed binary with no source tree at hand; and links
//! release binaries on x86_64 Linux at a fixed address (see `release_link_args`).
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

/// Release binaries for x86_64 Linux are linked as position-dependent executables (`-no-pie`).
///
/// Every git-mas process is short — a commit's gate, an agent host's edit hook — and a measured
/// part of one is the dynamic loader relocating a position-independent binary before `main`: it
/// writes every pointer in the read-only-after-relocation data (vtables, panic locations, string
/// tables), faulting in and copying each page that holds one. The release profile's thin LTO
/// (chosen so that a fresh install takes about 5 minutes, not 7.5) leaves twice the relocations
/// of a fat-LTO build (38,000 against 18,000), and the edit hook paid 12 % for them. Linked at a
/// fixed address the binary has none: the hook and the gate are within 5 % of the fat-LTO,
/// position-independent build's at the profile's opt-level "s", and 3 % faster at opt-level 3
/// (BENCHMARKS.md, "Fresh install").
///
/// What it gives up: address-space randomization of the executable's own image (the heap, the
/// stack and the shared libraries are still randomized), a hardening against memory-corruption
/// exploits, as Go's default linux/amd64 builds also do without it. Set `GIT_MAS_PIE=1` when
/// building to keep a position-independent executable (distribution packages with a PIE policy).
/// Also left position-independent: a build that is not a release build for that target, and one
/// whose linker the user chose (cargo's `linker` setting, or rustflags with link options).
fn release_link_args() {
    // (A change of rustflags rebuilds everything already.)
    for var in ["GIT_MAS_PIE", "RUSTC_LINKER"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let chose_linker = !var("RUSTC_LINKER").is_empty() || var("CARGO_ENCODED_RUSTFLAGS").contains("link");
    if var("TARGET") == "x86_64-unknown-linux-gnu"
        && var("PROFILE") == "release"
        && !chose_linker
        && std::env::var_os("GIT_MAS_PIE").is_none()
    {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}

fn main() {
    release_link_args();
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

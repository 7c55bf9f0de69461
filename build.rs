//! Embeds `tests/fixtures-repo/` and `skills/` into the binary, so `git mas demo` and
//! `git mas skills install` work from an installed binary with no source tree at hand; and links
//! release binaries on x86_64 Linux with identical code folding and packed relative relocations
//! (see `release_link_args`).
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

/// Release binaries for x86_64 Linux, where rustc links with its own lld from 1.90 on: fold
/// identical functions and read-only data (`--icf=all`) and pack the relative relocations
/// (`-z pack-relative-relocs`, DT_RELR, read by glibc from 2.36). Every git-mas process is short and
/// most of a hook's time is the kernel mapping the binary and the loader relocating it: with thin
/// LTO (the release profile's, chosen for a fresh install in under five minutes) the binary has
/// twice the relocations of a fat-LTO build, and these two flags bring the gate back under the
/// fat-LTO build's latency (BENCHMARKS.md, "Fresh install"). Rust gives no guarantee that distinct
/// functions have distinct addresses, so folding them changes nothing a program may rely on.
///
/// Left out, and the binary linked as rustc would, when the build is not a release build for that
/// target, when rustc is older than 1.90 (its default linker there is the system's, which may not
/// know `--icf`), when the user chose a linker (cargo's `linker` setting, or rustflags naming one),
/// when glibc is older than 2.36 (the binary would not start), or with `GIT_MAS_PLAIN_LINK=1`.
fn release_link_args() {
    for var in ["GIT_MAS_PLAIN_LINK", "CARGO_ENCODED_RUSTFLAGS", "RUSTC_LINKER"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let chose_linker = !var("RUSTC_LINKER").is_empty() || var("CARGO_ENCODED_RUSTFLAGS").contains("link");
    if var("TARGET") != "x86_64-unknown-linux-gnu"
        || var("PROFILE") != "release"
        || chose_linker
        || std::env::var_os("GIT_MAS_PLAIN_LINK").is_some()
    {
        return;
    }
    // "rustc 1.95.0 (59807616e 2026-04-14)" and "2.36": the (major, minor) of a version.
    let major_minor = |text: &str| -> Option<(u32, u32)> {
        let mut parts = text.trim().split('.');
        Some((parts.next()?.parse().ok()?, parts.next()?.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?))
    };
    let output = |program: &str, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let rustc = output(&var("RUSTC"), &["--version"]);
    let rustc = rustc.as_deref().and_then(|v| v.split_whitespace().nth(1)).and_then(major_minor);
    // `getconf GNU_LIBC_VERSION` prints "glibc 2.36".
    let glibc = output("getconf", &["GNU_LIBC_VERSION"]);
    let glibc = glibc.as_deref().and_then(|v| v.split_whitespace().nth(1)).and_then(major_minor);
    if rustc.is_some_and(|v| v >= (1, 90)) && glibc.is_some_and(|v| v >= (2, 36)) {
        println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
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

//! Checks `git_mas::signals::scip_symbol::target_name` against the `scip` crate's
//! `scip::symbol::parse_symbol` on every distinct symbol of an index, and times both.
//!
//!     cargo run --release --example scip_symbols -- index.scip
//!
//! Exits 1 and prints the first symbols on which the two disagree; `bench/snapshot.sh` runs it on
//! the benchmark's index.
// A benchmark baseline printing its counts, outside the product's output layer.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

use protobuf::Message;
use scip::types::Index;
use scip::types::descriptor::Suffix;
use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::Instant;

/// The target name through the `scip` crate (what `src/signals/scip.rs` used before).
fn reference(symbol: &str) -> Option<String> {
    let parsed = scip::symbol::parse_symbol(symbol).ok()?;
    let mut names = Vec::new();
    for descriptor in &parsed.descriptors {
        match descriptor.suffix.enum_value() {
            Ok(Suffix::Type | Suffix::Term | Suffix::Method | Suffix::Macro) => names.push(descriptor.name.as_str()),
            Ok(Suffix::Namespace | Suffix::Package | Suffix::Meta | Suffix::UnspecifiedSuffix) => {}
            Ok(Suffix::Parameter | Suffix::TypeParameter | Suffix::Local) | Err(_) => return None,
        }
    }
    if names.is_empty() || names.iter().any(|name| name.is_empty() || name.contains('#')) {
        return None;
    }
    Some(names.join("."))
}

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: scip_symbols INDEX.scip");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("scip_symbols: cannot read {}: {e}", path.to_string_lossy());
            return ExitCode::from(1);
        }
    };
    let index = match Index::parse_from_bytes(&bytes) {
        Ok(index) => index,
        Err(e) => {
            eprintln!("scip_symbols: not a SCIP index: {e}");
            return ExitCode::from(1);
        }
    };
    let mut symbols = BTreeSet::new();
    for document in &index.documents {
        symbols.extend(document.occurrences.iter().map(|o| o.symbol.as_str()));
        symbols.extend(document.symbols.iter().map(|s| s.symbol.as_str()));
    }
    symbols.extend(index.external_symbols.iter().map(|s| s.symbol.as_str()));
    let t = Instant::now();
    let ours: Vec<Option<String>> = symbols.iter().map(|s| git_mas::signals::scip_symbol::target_name(s)).collect();
    let ours_time = t.elapsed();
    let t = Instant::now();
    let theirs: Vec<Option<String>> = symbols.iter().map(|s| reference(s)).collect();
    let theirs_time = t.elapsed();
    let mut disagree = 0;
    for ((symbol, a), b) in symbols.iter().zip(&ours).zip(&theirs) {
        if a != b {
            disagree += 1;
            if disagree <= 10 {
                eprintln!("disagree on {symbol:?}: ours {a:?}, scip crate {b:?}");
            }
        }
    }
    let named = ours.iter().filter(|n| n.is_some()).count();
    println!(
        "{} distinct symbols, {named} with a target name; {disagree} disagreements; target_name {:.1} ms, scip::symbol::parse_symbol {:.1} ms",
        symbols.len(),
        ours_time.as_secs_f64() * 1e3,
        theirs_time.as_secs_f64() * 1e3
    );
    if disagree == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

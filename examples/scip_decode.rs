//! The decode-only baseline for `bench/snapshot.sh`: decodes a whole SCIP index with the `scip`
//! crate and counts cross-document references — what any consumer of the index must at least do.
//!
//!     cargo run --release --example scip_decode -- index.scip
//!
//! Prints documents, occurrences, references to symbols defined in another document of the index,
//! and the index size. A symbol is defined where an occurrence has the `Definition` role; every
//! other occurrence of a non-local symbol is a reference (scip-typescript writes plain references
//! with roles 0).
// A benchmark baseline printing its counts, outside the product's output layer.
#![allow(clippy::disallowed_macros, clippy::disallowed_methods)]

use protobuf::Message;
use scip::types::{Index, SymbolRole};
use std::collections::HashMap;
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: scip_decode INDEX.scip");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("scip_decode: cannot read {}: {e}", path.to_string_lossy());
            return ExitCode::from(1);
        }
    };
    let index = match Index::parse_from_bytes(&bytes) {
        Ok(index) => index,
        Err(e) => {
            eprintln!("scip_decode: not a SCIP index: {e}");
            return ExitCode::from(1);
        }
    };

    // Pass 1: which document defines each symbol.
    let definition = SymbolRole::Definition as i32;
    let mut defined_in: HashMap<&str, usize> = HashMap::new();
    let mut occurrences = 0u64;
    for (doc, document) in index.documents.iter().enumerate() {
        occurrences += document.occurrences.len() as u64;
        for occ in &document.occurrences {
            if occ.symbol_roles & definition != 0 && !occ.symbol.starts_with("local ") {
                defined_in.entry(occ.symbol.as_str()).or_insert(doc);
            }
        }
    }
    // Pass 2: references from a document other than the defining one.
    let mut cross = 0u64;
    for (doc, document) in index.documents.iter().enumerate() {
        for occ in &document.occurrences {
            if occ.symbol_roles & definition == 0 && defined_in.get(occ.symbol.as_str()).is_some_and(|&d| d != doc) {
                cross += 1;
            }
        }
    }
    println!(
        "documents {} occurrences {} symbols defined {} cross-document references {} bytes {}",
        index.documents.len(),
        occurrences,
        defined_in.len(),
        cross,
        bytes.len()
    );
    ExitCode::SUCCESS
}

//! Rust items and their line ranges, from `tree-sitter-rust`, for Rust files no SCIP index covers.
//!
//! Without symbol targets, two agents working on different functions of one file would have to
//! serialize on the whole file. A syntax tree is enough to name items and know their lines, and needs
//! no build, so a Rust repository without an index still gets `path#symbol` targets.
//!
//! Decisions:
//! - **Names follow the SCIP convention** of this crate ([`super::scip`]): `Ledger`, `Ledger.reserve`
//!   for a function in an `impl Ledger` or `impl Trait for Ledger` block (the implementing type, with
//!   generics and paths stripped: `impl<T> fmt::Display for Wrapper<T>` gives `Wrapper`),
//!   `Trait.method` for a function declared in a trait, and plain names for free functions, structs,
//!   enums, unions, traits, type aliases, consts, statics, modules and `macro_rules!` macros.
//!   Associated consts and types are named like methods (`Money.ZERO`). Raw identifiers lose their
//!   `r#`, so a name never contains `#`.
//! - **Inline modules prefix their items** (`tests.sample`), so that a test helper does not share a
//!   name with the item it tests. Out-of-line modules (`mod item;`) are items of their own; their
//!   contents belong to their own file.
//! - **Names can repeat** — `Money.fmt` from both `Display` and `Debug` impls — and each occurrence is
//!   returned with its own range; items come sorted by start line.
//! - **Ranges** are 1-based and inclusive, and start at the item's outer doc comments and attributes
//!   (`/// …`, `#[derive(…)]`), which belong to the item a change to them changes.
//! - **Broken source** still parses: tree-sitter recovers around syntax errors and items in intact
//!   regions are found. Items inside function bodies are not listed. The walk uses an explicit stack,
//!   so deeply nested modules cannot overflow the call stack.

use std::cmp::Reverse;
use thiserror::Error;
use tree_sitter::{Node, Parser};

/// Why a source file could not be parsed at all.
#[derive(Debug, Error)]
pub enum RustItemsError {
    /// The bundled grammar does not match the tree-sitter runtime.
    #[error("the tree-sitter Rust grammar cannot be loaded")]
    Language {
        #[source]
        source: tree_sitter::LanguageError,
    },
    /// tree-sitter addresses source by 32-bit offsets.
    #[error("the source is {len} bytes long, more than tree-sitter can parse")]
    TooLarge { len: usize },
    /// tree-sitter returned no tree.
    #[error("tree-sitter could not parse the source")]
    Parse,
}

/// One item of a Rust source file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RustItem {
    /// Dotted name: `Ledger`, `Ledger.reserve`, `parse_orders`, `tests.sample`.
    pub name: String,
    /// `fn`, `method`, `struct`, `enum`, `union`, `trait`, `type`, `const`, `static`, `mod` or `macro`.
    pub kind: &'static str,
    /// First line, 1-based, including outer doc comments and attributes.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
}

/// What a declaration list belongs to, which decides how its items are named.
enum Container {
    /// The file or an inline module; the prefix is `""` or `"tests."`.
    Module(String),
    /// An `impl` or `trait` block; the prefix is `"Ledger."`.
    Owner(String),
}

/// Lists the items of a Rust source file.
pub fn rust_items(source: &[u8]) -> Result<Vec<RustItem>, RustItemsError> {
    if u32::try_from(source.len()).is_err() {
        return Err(RustItemsError::TooLarge { len: source.len() });
    }
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_rust::LANGUAGE.into()).map_err(|source| RustItemsError::Language { source })?;
    let tree = parser.parse(source, None).ok_or(RustItemsError::Parse)?;

    let mut items = Vec::new();
    let mut stack = vec![(tree.root_node(), Container::Module(String::new()))];
    while let Some((list, container)) = stack.pop() {
        let mut cursor = list.walk();
        for node in list.named_children(&mut cursor) {
            let in_owner = matches!(container, Container::Owner(_));
            let prefix = match &container {
                Container::Module(prefix) | Container::Owner(prefix) => prefix.as_str(),
            };
            let kind = match (node.kind(), in_owner) {
                ("function_item" | "function_signature_item", false) => "fn",
                ("function_item" | "function_signature_item", true) => "method",
                ("const_item", _) => "const",
                ("type_item" | "associated_type", _) => "type",
                ("struct_item", false) => "struct",
                ("enum_item", false) => "enum",
                ("union_item", false) => "union",
                ("static_item", false) => "static",
                ("macro_definition", false) => "macro",
                ("mod_item", false) => "mod",
                ("trait_item", false) => "trait",
                ("impl_item", false) => {
                    let owner = node.child_by_field_name("type").and_then(|t| type_name(t, source));
                    if let (Some(owner), Some(body)) = (owner, node.child_by_field_name("body")) {
                        stack.push((body, Container::Owner(format!("{prefix}{owner}."))));
                    }
                    continue;
                }
                ("foreign_mod_item", false) => {
                    if let Some(body) = node.child_by_field_name("body") {
                        stack.push((body, Container::Module(prefix.to_string())));
                    }
                    continue;
                }
                _ => continue,
            };
            let Some(name) = node.child_by_field_name("name").and_then(|n| identifier(n, source)) else {
                continue;
            };
            let full = format!("{prefix}{name}");
            if let Some(body) = node.child_by_field_name("body") {
                match kind {
                    "mod" => stack.push((body, Container::Module(format!("{full}.")))),
                    "trait" => stack.push((body, Container::Owner(format!("{full}.")))),
                    _ => {}
                }
            }
            items.push(RustItem {
                name: full,
                kind,
                start_line: line(outer_start(node)),
                end_line: line(node.end_position().row),
            });
        }
    }
    items.sort_by(|a, b| {
        (a.start_line, Reverse(a.end_line), &a.name).cmp(&(b.start_line, Reverse(b.end_line), &b.name))
    });
    Ok(items)
}

fn line(row: usize) -> u32 {
    u32::try_from(row).map_or(u32::MAX, |row| row.saturating_add(1))
}

/// The text of an identifier, without a raw identifier's `r#`.
fn identifier(node: Node<'_>, source: &[u8]) -> Option<String> {
    let text = node.utf8_text(source).ok()?;
    let text = text.strip_prefix("r#").unwrap_or(text);
    (!text.is_empty() && !text.contains('#')).then(|| text.to_string())
}

/// The name of the type an `impl` block is for: `Wrapper` for `&mut path::Wrapper<T>`.
fn type_name(mut node: Node<'_>, source: &[u8]) -> Option<String> {
    loop {
        match node.kind() {
            "type_identifier" | "primitive_type" | "identifier" => return identifier(node, source),
            "scoped_type_identifier" => node = node.child_by_field_name("name")?,
            "generic_type" | "reference_type" | "pointer_type" => node = node.child_by_field_name("type")?,
            "dynamic_type" => node = node.child_by_field_name("trait")?,
            "scoped_identifier" => node = node.child_by_field_name("name")?,
            _ => return None,
        }
    }
}

/// The first row of an item including the outer doc comments and attributes right above it.
fn outer_start(node: Node<'_>) -> usize {
    let mut start = node.start_position().row;
    let mut sibling = node.prev_sibling();
    while let Some(prev) = sibling {
        let attached = match prev.kind() {
            "attribute_item" => true,
            "line_comment" | "block_comment" => prev.child_by_field_name("outer").is_some(),
            _ => false,
        };
        // A line comment's node ends at column 0 of the next line, after its newline.
        let end = prev.end_position();
        let last_row = if end.column == 0 && end.row > prev.start_position().row { end.row - 1 } else { end.row };
        // A blank line detaches a comment or attribute from the item below it.
        if !attached || start > last_row + 1 {
            break;
        }
        start = prev.start_position().row;
        sibling = prev.prev_sibling();
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fixture(path: &str) -> Vec<u8> {
        std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures-repo").join(path)).unwrap()
    }

    fn find<'a>(items: &'a [RustItem], name: &str) -> &'a RustItem {
        items.iter().find(|i| i.name == name).unwrap_or_else(|| panic!("no {name} in {items:#?}"))
    }

    fn span(item: &RustItem) -> (&'static str, u32, u32) {
        (item.kind, item.start_line, item.end_line)
    }

    #[test]
    fn fixture_ledger_items() {
        let items = rust_items(&fixture("src/ledger/mod.rs")).unwrap();
        // The doc comment and #[derive] above `pub struct Ledger` belong to it.
        assert_eq!(span(find(&items, "Ledger")), ("struct", 12, 16));
        assert_eq!(span(find(&items, "Ledger.reserve")), ("method", 52, 59));
        assert_eq!(span(find(&items, "Ledger.new")), ("method", 19, 21));
        assert_eq!(span(find(&items, "item")), ("mod", 3, 3));
        assert_eq!(find(&items, "tests").kind, "mod");
        assert_eq!(find(&items, "tests.reserve_reduces_stock").kind, "fn");
        assert!(items.windows(2).all(|w| w[0].start_line <= w[1].start_line));
        for item in &items {
            assert!(item.start_line <= item.end_line && item.end_line <= 114, "{item:?}");
            assert!(!item.name.contains('#'), "{item:?}");
        }
    }

    #[test]
    fn fixture_trait_impls_name_the_implementing_type() {
        let items = rust_items(&fixture("src/money.rs")).unwrap();
        assert_eq!(span(find(&items, "Money")), ("struct", 6, 8));
        assert_eq!(span(find(&items, "Money.ZERO")), ("const", 11, 11));
        assert_eq!(find(&items, "Money.fmt").kind, "method");
        assert_eq!(items.iter().filter(|i| i.name == "Money.Output").count(), 2, "from Add and Sub");
        let errors = rust_items(&fixture("src/error.rs")).unwrap();
        assert_eq!(find(&errors, "InventoryError").kind, "enum");
        assert_eq!(find(&errors, "Result").kind, "type");
        assert_eq!(find(&errors, "InventoryError.fmt").kind, "method");
    }

    #[test]
    fn every_kind_of_item() {
        let source = br#"
macro_rules! square { ($x:expr) => { $x * $x }; }
pub const LIMIT: u32 = 3;
static mut COUNTER: u32 = 0;
pub union Bits { i: u32, f: f32 }
pub trait Shape {
    type Unit;
    const SIDES: u32;
    fn area(&self) -> f64;
    fn name(&self) -> &str { "shape" }
}
impl<T: Copy> Shape for &mut outer::Wrapper<T> {
    type Unit = ();
    const SIDES: u32 = 4;
    fn area(&self) -> f64 { 1.0 }
}
impl Shape for u32 { fn area(&self) -> f64 { 0.0 } }
impl dyn Shape { fn describe(&self) {} }
extern "C" { fn abs(x: i32) -> i32; }
fn r#match() { fn inner() {} }
mod a { mod b { pub struct Deep; impl Deep { fn go() {} } } }
"#;
        let items = rust_items(source).unwrap();
        let names: Vec<(&str, &str)> = items.iter().map(|i| (i.name.as_str(), i.kind)).collect();
        assert_eq!(
            names,
            [
                ("square", "macro"),
                ("LIMIT", "const"),
                ("COUNTER", "static"),
                ("Bits", "union"),
                ("Shape", "trait"),
                ("Shape.Unit", "type"),
                ("Shape.SIDES", "const"),
                ("Shape.area", "method"),
                ("Shape.name", "method"),
                ("Wrapper.Unit", "type"),
                ("Wrapper.SIDES", "const"),
                ("Wrapper.area", "method"),
                ("u32.area", "method"),
                ("Shape.describe", "method"),
                ("abs", "fn"),
                ("match", "fn"),
                ("a", "mod"),
                ("a.b", "mod"),
                ("a.b.Deep", "struct"),
                ("a.b.Deep.go", "method"),
            ]
        );
    }

    #[test]
    fn doc_comments_attach_only_without_a_blank_line() {
        let source = b"// plain comment\n/// doc\n#[inline]\nfn a() {}\n\n/// detached\n\nfn b() {}\n/** block doc */\nfn c() {}\n";
        let items = rust_items(source).unwrap();
        let spans: Vec<(u32, u32)> = items.iter().map(|i| (i.start_line, i.end_line)).collect();
        assert_eq!(spans, [(2, 4), (8, 8), (9, 10)]);
    }

    #[test]
    fn broken_and_hostile_source() {
        let items = rust_items(b"fn ok() {}\nfn broken( {\nstruct After;\n").unwrap();
        assert!(items.iter().any(|i| i.name == "ok"));
        assert!(rust_items(b"").unwrap().is_empty());
        assert!(rust_items(b"\xff\xfe fn \xff() {}").is_ok());
        let deep = "mod m { ".repeat(500) + &"}".repeat(500);
        let items = rust_items(deep.as_bytes()).unwrap();
        assert_eq!(items.len(), 500);
    }

    /// Pieces of Rust items, so that random sequences make trees with items in them.
    const RUST_TOKENS: &[&str] = &[
        "fn ", "impl ", "for ", "mod ", "trait ", "struct ", "pub ", "r#", "#[a]", "///", "/**", "*/", "{", "}", "(",
        ")", "<", ">", "&", "::", ";", "x", "T", "\n", " ",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = rust_items(&bytes);
        }

        #[test]
        fn never_panics_on_rust_shaped_input(
            tokens in proptest::collection::vec(proptest::sample::select(RUST_TOKENS), 0..60)
        ) {
            let text = tokens.concat();
            for item in rust_items(text.as_bytes()).unwrap() {
                prop_assert!(item.start_line <= item.end_line);
                prop_assert!(!item.name.contains('#') && !item.name.is_empty());
            }
        }
    }
}

//! The dotted target name of a SCIP symbol, read straight from the symbol string.
//!
//! A global SCIP symbol is `<scheme> ' ' <manager> ' ' <package-name> ' ' <version> ' ' <descriptor>+`
//! (scip.proto): the first four fields end at a single space, and a space inside a field is written
//! as two. A descriptor is a name followed by a suffix — `/` namespace, `#` type, `.` term, `:` meta,
//! `!` macro, `(<disambiguator>).` method — or a `(name)` parameter or a `[name]` type parameter. A
//! name is a simple identifier (letters, digits, `_ + - $`) or any text between backticks, with a
//! backtick inside written as two. `local <id>` symbols have no descriptors.
//!
//! Decisions:
//! - **Why not `scip::symbol::parse_symbol`.** The `scip` crate (0.10) builds a `Symbol` message with
//!   an owned `String` per field and descriptor, and, for every descriptor, formats a `Debug` dump of
//!   its parser (the whole symbol as a `Vec<char>`, one escaped character at a time) as the context of
//!   an error that is almost never raised. On a 15 MB index that was half of a snapshot's CPU time
//!   (`BENCHMARKS.md`). This reader borrows the symbol, allocates only the result, and stops at the
//!   first descriptor that rules the symbol out.
//! - **Same answers as the crate.** It accepts exactly what `scip::symbol::parse_symbol` accepts, so
//!   that snapshots (and the frame hashes computed from them) do not change: where the crate departs
//!   from the grammar, this reader departs the same way. Simple identifiers accept every Unicode
//!   letter (`char::is_alphabetic`), not only ASCII ones; a symbol that ends right after a field's
//!   space, or right after a closing backtick, is rejected; method disambiguators are identifiers.
//!   Tests compare the two on every symbol of the fixture index and on generated symbols, and
//!   `examples/scip_symbols.rs` does the same on any index (`bench/snapshot.sh` runs it).

/// Appends the dotted target name of `symbol` to `out` (the names of its type, term, method and macro
/// descriptors joined with `.`) and returns `true`; returns `false`, leaving `out` as it was, for a
/// symbol that gets no symbol target: a local symbol, one that does not parse, one with a parameter
/// or type-parameter descriptor, one whose target name would be empty, or one with a name that is
/// empty or contains `#`. Namespace and meta descriptors are left out of the name.
pub fn push_target_name(symbol: &str, out: &mut String) -> bool {
    let start = out.len();
    let ok = Parser { s: symbol.as_bytes(), pos: 0 }.names(symbol, out, start).is_some();
    if !ok {
        out.truncate(start);
    }
    ok
}

/// [`push_target_name`] into a new string.
pub fn target_name(symbol: &str) -> Option<String> {
    let mut out = String::new();
    push_target_name(symbol, &mut out).then_some(out)
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

/// Where a name lies in the symbol, and whether it holds doubled backticks to undo.
#[derive(Clone, Copy)]
struct Name {
    start: usize,
    end: usize,
    escaped: bool,
}

impl Parser<'_> {
    fn names(mut self, symbol: &str, out: &mut String, start: usize) -> Option<()> {
        if symbol.starts_with("local ") {
            return None;
        }
        for _ in 0..4 {
            self.space_terminated_field()?;
        }
        while self.pos < self.s.len() {
            let name = match self.s[self.pos] {
                // Parameters and type parameters: whether they parse or not, no target.
                b'(' | b'[' => return None,
                _ => self.identifier(symbol)?,
            };
            let suffix = *self.s.get(self.pos)?;
            self.pos += 1;
            let keep = match suffix {
                b'(' => {
                    if *self.s.get(self.pos)? != b')' {
                        self.identifier(symbol)?;
                    }
                    self.expect(b')')?;
                    self.expect(b'.')?;
                    true
                }
                b'#' | b'.' | b'!' => true,
                b'/' | b':' => false,
                _ => return None,
            };
            if keep {
                let text = &symbol[name.start..name.end];
                if text.is_empty() || text.contains('#') {
                    return None;
                }
                if out.len() > start {
                    out.push('.');
                }
                if name.escaped {
                    out.push_str(&text.replace("``", "`"));
                } else {
                    out.push_str(text);
                }
            }
        }
        (out.len() > start).then_some(())
    }

    /// One of the four leading fields, up to its terminating single space (a doubled space is part
    /// of the field). A symbol that ends inside a field, or right after its space, does not parse.
    fn space_terminated_field(&mut self) -> Option<()> {
        while self.pos < self.s.len() {
            if self.s[self.pos] == b' ' {
                let next = *self.s.get(self.pos + 1)?;
                if next != b' ' {
                    self.pos += 1;
                    return Some(());
                }
                self.pos += 2;
            } else {
                self.pos += 1;
            }
        }
        None
    }

    /// A backtick-quoted or a simple identifier; at least one character for a simple one.
    fn identifier(&mut self, symbol: &str) -> Option<Name> {
        if self.s.get(self.pos) == Some(&b'`') {
            self.pos += 1;
            let start = self.pos;
            let mut escaped = false;
            while self.pos < self.s.len() {
                if self.s[self.pos] == b'`' {
                    // A closing backtick must be followed by something (the suffix).
                    if *self.s.get(self.pos + 1)? != b'`' {
                        let end = self.pos;
                        self.pos += 1;
                        return Some(Name { start, end, escaped });
                    }
                    escaped = true;
                    self.pos += 2;
                } else {
                    self.pos += 1;
                }
            }
            return None;
        }
        let start = self.pos;
        while self.pos < self.s.len() {
            let byte = self.s[self.pos];
            if byte.is_ascii() {
                if !(byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'+' | b'$' | b'_')) {
                    break;
                }
                self.pos += 1;
            } else {
                // `pos` is always at a character boundary: every byte consumed before was ASCII or a
                // whole character.
                let c = symbol[self.pos..].chars().next()?;
                if !c.is_alphabetic() {
                    break;
                }
                self.pos += c.len_utf8();
            }
        }
        (self.pos > start).then_some(Name { start, end: self.pos, escaped: false })
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (*self.s.get(self.pos)? == byte).then(|| self.pos += 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use scip::types::descriptor::Suffix;

    /// The target name as computed through `scip::symbol::parse_symbol`: the reference.
    fn reference(symbol: &str) -> Option<String> {
        let parsed = scip::symbol::parse_symbol(symbol).ok()?;
        let mut names = Vec::new();
        for descriptor in &parsed.descriptors {
            match descriptor.suffix.enum_value() {
                Ok(Suffix::Type | Suffix::Term | Suffix::Method | Suffix::Macro) => {
                    names.push(descriptor.name.as_str())
                }
                Ok(Suffix::Namespace | Suffix::Package | Suffix::Meta | Suffix::UnspecifiedSuffix) => {}
                Ok(Suffix::Parameter | Suffix::TypeParameter | Suffix::Local) | Err(_) => return None,
            }
        }
        if names.is_empty() || names.iter().any(|name| name.is_empty() || name.contains('#')) {
            return None;
        }
        Some(names.join("."))
    }

    #[test]
    fn table() {
        let table = [
            ("scip-python python stockcheck 0.1.0 `tools.stockcheck.models`/Item#level().", Some("Item.level")),
            ("scip-python python stockcheck 0.1.0 `tools.stockcheck.models`/__init__:", None),
            ("scip-python python stockcheck 0.1.0 `tools.stockcheck.models`/Item#level().(self)", None),
            ("scip-typescript npm pkg 1.0.0 src/`orders.ts`/Order#[T]", None),
            ("scip-typescript npm pkg 1.0.0 src/`orders.ts`/Order#total(+1).", Some("Order.total")),
            ("scip-typescript npm . . src/`a``b.ts`/`x``y`#`z w`.", Some("x`y.z w")),
            ("rust-analyzer cargo inventory 0.1.0 ledger/Ledger#reserve().", Some("Ledger.reserve")),
            ("rust-analyzer cargo inventory 0.1.0 money/cents!", Some("cents")),
            ("a  b c d e f#", Some("f")),
            ("a b c d Größe#ünïcode.", Some("Größe.ünïcode")),
            ("a b c d x#`e", None),
            ("a b c d `x`", None),
            ("a b c d x#m(", None),
            ("a b c d x#m(a", None),
            ("a b c d x#m()", None),
            ("a b c d x#m(a)x", None),
            ("a b c d x#?", None),
            ("a b c d x#``#", None),
            ("scip-test npm pkg 1.0.0 src/`a#b`#", None),
            ("scip-test npm pkg 1.0.0 src/", None),
            ("scip-test npm pkg 1.0.0 ", None),
            ("scip-test npm pkg 1.0.0", None),
            ("local 12", None),
            ("local", None),
            ("not a symbol", None),
            ("", None),
        ];
        for (symbol, want) in table {
            assert_eq!(target_name(symbol).as_deref(), want, "{symbol}");
            assert_eq!(reference(symbol).as_deref(), want, "reference: {symbol}");
        }
    }

    #[test]
    fn push_appends_or_leaves_the_buffer_alone() {
        let mut out = String::from("src/a.ts#");
        assert!(push_target_name("a b c d A#f().", &mut out));
        assert_eq!(out, "src/a.ts#A.f");
        assert!(!push_target_name("a b c d A#f().(x)", &mut out));
        assert_eq!(out, "src/a.ts#A.f");
    }

    #[test]
    fn agrees_with_the_scip_crate_on_every_symbol_of_the_fixture_index() {
        use protobuf::Message;
        let index =
            scip::types::Index::parse_from_bytes(include_bytes!("../../tests/fixtures-repo/index.scip")).unwrap();
        let mut seen = 0;
        let mut named = 0;
        for document in &index.documents {
            let symbols = document.occurrences.iter().map(|o| &o.symbol);
            for symbol in symbols.chain(document.symbols.iter().map(|s| &s.symbol)) {
                let want = reference(symbol);
                assert_eq!(target_name(symbol), want, "{symbol}");
                seen += 1;
                named += usize::from(want.is_some());
            }
        }
        assert!(seen > 100 && named > 20, "{seen} symbols, {named} named");
    }

    /// Symbol-shaped strings: four fields, then descriptors drawn from every form the grammar has,
    /// with the characters that matter (spaces, backticks, suffixes, non-ASCII letters) mixed in.
    fn symbolish() -> impl Strategy<Value = String> {
        let field = "[a-z. ]{0,4}";
        let name = prop_oneof!["[a-zA-Z0-9_$+-]{0,4}", "`[a-z`#. ]{0,4}`", "[é中a]{1,2}", "[a-z`]{0,3}"];
        let descriptor = (
            name,
            prop_oneof![
                "/",
                "#",
                "\\.",
                ":",
                "!",
                "\\(\\)\\.",
                "\\([a-z+0-9]{0,2}\\)\\.?",
                "\\[[a-z]{0,2}\\]?",
                "[ ?]?"
            ],
        )
            .prop_map(|(n, s)| format!("{n}{s}"));
        (field, field, field, field, proptest::collection::vec(descriptor, 0..5), "( |  )?")
            .prop_map(|(a, b, c, d, ds, sep)| format!("{a} {b} {c} {d}{sep}{}", ds.concat()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn agrees_with_the_scip_crate_on_generated_symbols(symbol in symbolish()) {
            prop_assert_eq!(target_name(&symbol), reference(&symbol), "{}", symbol);
        }

        #[test]
        fn agrees_with_the_scip_crate_on_arbitrary_strings(symbol in "\\PC{0,40}") {
            prop_assert_eq!(target_name(&symbol), reference(&symbol), "{}", symbol);
        }
    }
}

//! Centrality from a SCIP index: how many references each document and each symbol receives from
//! the rest of the code base.
//!
//! A file that many other files use is one that many changes can break, so inbound references are
//! the centrality signal. Only references from *other* documents count towards a document: a file
//! that calls itself a lot is not central.
//!
//! Decisions:
//! - **Streaming decode.** The index is read one `Document` message at a time (the top-level `Index`
//!   message is walked by hand; each document is decoded with the `scip` crate and dropped), so peak
//!   memory is one document plus the counts, not the whole decoded index, which is several times the
//!   size of the file. Concatenated `Index` messages, which protobuf merges, work the same way.
//! - **Definitions and references.** An occurrence whose roles include `Definition` defines its symbol;
//!   every other occurrence is a reference, whatever its role bits (scip-typescript writes plain
//!   references with roles 0). A symbol is defined by the document with the smallest path among those
//!   holding a definition of it, so the result does not depend on document order. References to
//!   symbols the index does not define (the standard library, dependencies) are counted in
//!   [`ScipCounts::references_external`] and go to no document.
//! - **Locals are skipped**: `local …` symbols never leave their document, so they carry no
//!   centrality; their occurrences are counted in [`ScipCounts::skipped_local`].
//! - **Symbol names.** A symbol target is `path#Name.sub`: the defining document's path, then the
//!   names of the symbol's type, term, method and macro descriptors joined with `.`. Namespace and
//!   package descriptors are dropped (they restate the module, which the path already names:
//!   scip-python's `` `tools.stockcheck.models`/Item#level(). `` becomes
//!   `tools/stockcheck/models.py#Item.level`), and so are meta descriptors. Symbols with a parameter
//!   or type-parameter descriptor, and symbols that are nothing but a module (scip-python's
//!   `__init__:`), get no symbol target; their references still count for the document. Distinct SCIP
//!   symbols that end up with one name (method overloads, for instance) are merged: counts add up and
//!   the line range becomes the span of both.
//! - **Ranges.** A symbol's lines come from its definition's enclosing range (the whole class or
//!   function) when the indexer gives one, else from the definition's own range (the name only);
//!   [`ScipSymbol::enclosing`] says which. Typed ranges take precedence over the deprecated packed
//!   ones, as the SCIP schema asks.
//! - **Bad input.** Zero bytes, bytes that are not protobuf, a truncated message, or an index with
//!   neither metadata nor documents are errors. Documents whose path is empty, absolute or climbs out
//!   of the project root (`..`) are skipped and counted, and so are occurrences with malformed ranges.

use super::scip_symbol::push_target_name;
use protobuf::Message;
use scip::types::occurrence::{Typed_enclosing_range, Typed_range};
use scip::types::{Document, Metadata, MultiLineRange, Occurrence, SingleLineRange, SymbolRole};
use std::collections::{BTreeMap, HashMap};
use thiserror::Error;

/// Why an index could not be read.
#[derive(Debug, Error)]
pub enum ScipError {
    /// The input has no bytes at all.
    #[error("the SCIP index is empty (0 bytes); did the indexer fail?")]
    Empty,
    /// The bytes are not a protobuf message of the shape of a SCIP index.
    #[error("not a SCIP index: {reason} at byte {offset}")]
    Malformed { offset: usize, reason: &'static str },
    /// A metadata or document message inside the index could not be decoded.
    #[error("cannot decode the SCIP {what} at byte {offset}")]
    Decode {
        what: &'static str,
        offset: usize,
        #[source]
        source: protobuf::Error,
    },
    /// Well-formed protobuf, but nothing a SCIP index holds.
    #[error("not a SCIP index: it holds neither metadata nor documents")]
    NotAnIndex,
}

/// Reference counts read from a SCIP index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScipCounts {
    /// Every document of the index, by repository-relative path, with the number of references that
    /// occur in other documents to symbols defined in this one (0 for documents nobody references).
    pub documents: BTreeMap<String, u64>,
    /// Every symbol defined in the index that has a symbol target, by `path#Name.sub`.
    pub symbols: BTreeMap<String, ScipSymbol>,
    /// Occurrences (definitions and references) of `local …` symbols, which are skipped.
    pub skipped_local: u64,
    /// `Document` messages read, including skipped ones.
    pub documents_total: u64,
    /// Reference occurrences of non-local symbols, including references to external symbols.
    pub references_total: u64,
    /// The part of `references_total` that refers to symbols no document of the index defines.
    pub references_external: u64,
    /// Documents skipped for an empty, absolute or escaping (`..`) path.
    pub skipped_documents: u64,
    /// Occurrences skipped for a malformed range (definitions) — they define nothing.
    pub malformed_occurrences: u64,
    /// The indexer that wrote the index (`"scip-python 0.6.6"`), when its metadata says.
    pub tool: Option<String>,
}

/// What the index says about one symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScipSymbol {
    /// References from documents other than the defining one.
    pub refs_from_other_documents: u64,
    /// All references, including those inside the defining document.
    pub refs_total: u64,
    /// First line of the definition, 1-based.
    pub start_line: u32,
    /// Last line of the definition, 1-based, inclusive.
    pub end_line: u32,
    /// Whether the lines are the definition's enclosing range (the whole item) rather than the range
    /// of its name.
    pub enclosing: bool,
}

impl ScipCounts {
    /// The symbols defined in the document at `path`, as (symbol name, info), in name order.
    pub fn symbols_of<'a>(&'a self, path: &str) -> impl Iterator<Item = (&'a str, &'a ScipSymbol)> + 'a {
        let prefix = format!("{path}#");
        self.symbols
            .range(prefix.clone()..)
            .take_while(move |(id, _)| id.starts_with(&prefix))
            .map(|(id, symbol)| (id.split_once('#').map_or("", |(_, name)| name), symbol))
    }
}

/// The largest SCIP index a snapshot reads: 1 GiB.
///
/// The index is read whole, decoded one document at a time, and stored in every frame it changes
/// (`inputs/index.scip`), so its size is paid in memory and in the object database. The benchmark
/// index (a 20,000-file repository) is 18 MiB; 1 GiB leaves room for repositories some fifty times
/// larger while a mistaken path (`/dev/zero`, a FIFO, a disk image) fails after at most 1 GiB
/// instead of exhausting memory. An index beyond it should cover a narrower part of the repository.
pub const MAX_SCIP_BYTES: u64 = 1 << 30;

/// Reads a SCIP index (the bytes of `index.scip`) into reference counts.
pub fn read_scip(bytes: &[u8]) -> Result<ScipCounts, ScipError> {
    Ok(accumulate(bytes)?.finish())
}

/// Which documents use which: each document's path → the other documents defining a symbol it
/// references (references to symbols no document defines lead nowhere).
pub fn read_scip_edges(bytes: &[u8]) -> Result<BTreeMap<String, std::collections::BTreeSet<String>>, ScipError> {
    let acc = accumulate(bytes)?;
    let mut out: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for (doc, document) in acc.documents.iter().enumerate() {
        for id in document.refs.keys() {
            if let Some(def) = acc.definitions[*id as usize]
                && def.document != doc
            {
                out.entry(document.path.clone()).or_default().insert(acc.documents[def.document].path.clone());
            }
        }
    }
    Ok(out)
}

/// Decodes an index's documents into the accumulator.
fn accumulate(bytes: &[u8]) -> Result<Accumulator, ScipError> {
    if bytes.is_empty() {
        return Err(ScipError::Empty);
    }
    let mut acc = Accumulator::default();
    let mut saw_metadata = false;
    let mut wire = Wire { buf: bytes, pos: 0 };
    while !wire.at_end() {
        let field_start = wire.pos;
        let key = wire.varint()?;
        let (field, wire_type) = (key >> 3, key & 7);
        if field == 0 {
            return Err(ScipError::Malformed { offset: field_start, reason: "field number 0" });
        }
        match (field, wire_type) {
            (1, 2) => {
                let (offset, body) = wire.length_delimited()?;
                let metadata = Metadata::parse_from_bytes(body).map_err(|source| ScipError::Decode {
                    what: "metadata",
                    offset,
                    source,
                })?;
                if !saw_metadata && !metadata.tool_info.name.is_empty() {
                    let info = &metadata.tool_info;
                    acc.counts.tool = Some(format!("{} {}", info.name, info.version).trim_end().to_string());
                }
                saw_metadata = true;
            }
            (2, 2) => {
                let (offset, body) = wire.length_delimited()?;
                let document = Document::parse_from_bytes(body).map_err(|source| ScipError::Decode {
                    what: "document",
                    offset,
                    source,
                })?;
                acc.add_document(document);
            }
            (1 | 2, _) => {
                return Err(ScipError::Malformed {
                    offset: field_start,
                    reason: "metadata or document is not a message",
                });
            }
            // External symbols (field 3) and fields of later SCIP versions carry no references.
            _ => wire.skip(wire_type, field_start)?,
        }
    }
    if !saw_metadata && acc.counts.documents_total == 0 {
        return Err(ScipError::NotAnIndex);
    }
    Ok(acc)
}

/// A cursor over protobuf wire format, for the top-level `Index` message only.
struct Wire<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Wire<'a> {
    fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn malformed(&self, reason: &'static str) -> ScipError {
        ScipError::Malformed { offset: self.pos, reason }
    }

    fn varint(&mut self) -> Result<u64, ScipError> {
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err(self.malformed("truncated varint"));
            };
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(self.malformed("varint longer than 10 bytes"))
    }

    /// Reads a length and that many bytes; returns the offset of the bytes and the bytes.
    fn length_delimited(&mut self) -> Result<(usize, &'a [u8]), ScipError> {
        let len = self.varint()?;
        let start = self.pos;
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| start.checked_add(len))
            .filter(|&end| end <= self.buf.len())
            .ok_or_else(|| self.malformed("truncated message (length runs past the end)"))?;
        self.pos = end;
        Ok((start, &self.buf[start..end]))
    }

    fn advance(&mut self, n: usize) -> Result<(), ScipError> {
        if self.buf.len() - self.pos < n {
            return Err(self.malformed("truncated fixed-width field"));
        }
        self.pos += n;
        Ok(())
    }

    fn skip(&mut self, wire_type: u64, field_start: usize) -> Result<(), ScipError> {
        match wire_type {
            0 => self.varint().map(drop),
            1 => self.advance(8),
            2 => self.length_delimited().map(drop),
            5 => self.advance(4),
            3 | 4 => Err(ScipError::Malformed { offset: field_start, reason: "group wire type, never used by SCIP" }),
            _ => Err(ScipError::Malformed { offset: field_start, reason: "invalid wire type" }),
        }
    }
}

/// Where a symbol is defined.
#[derive(Debug, Clone, Copy)]
struct Definition {
    document: usize,
    start_line: u32,
    end_line: u32,
    enclosing: bool,
}

/// One document path's references, by interned symbol.
struct DocumentRefs {
    path: String,
    refs: HashMap<u32, u64>,
}

#[derive(Default)]
struct Accumulator {
    counts: ScipCounts,
    symbol_ids: HashMap<String, u32>,
    definitions: Vec<Option<Definition>>,
    documents: Vec<DocumentRefs>,
    document_ids: HashMap<String, usize>,
}

impl Accumulator {
    fn intern(&mut self, symbol: String) -> u32 {
        if let Some(&id) = self.symbol_ids.get(&symbol) {
            return id;
        }
        let id = u32::try_from(self.definitions.len()).unwrap_or(u32::MAX);
        self.definitions.push(None);
        self.symbol_ids.insert(symbol, id);
        id
    }

    fn add_document(&mut self, mut document: Document) {
        self.counts.documents_total += 1;
        let Some(path) = normalize_document_path(&document.relative_path) else {
            self.counts.skipped_documents += 1;
            return;
        };
        let doc = match self.document_ids.get(&path) {
            Some(&doc) => doc,
            None => {
                let doc = self.documents.len();
                self.document_ids.insert(path.clone(), doc);
                self.documents.push(DocumentRefs { path, refs: HashMap::new() });
                doc
            }
        };
        for mut occurrence in std::mem::take(&mut document.occurrences) {
            if occurrence.symbol.is_empty() {
                continue;
            }
            if scip::symbol::is_local_symbol(&occurrence.symbol) {
                self.counts.skipped_local += 1;
                continue;
            }
            let is_definition = occurrence.symbol_roles & SymbolRole::Definition as i32 != 0;
            if is_definition {
                let Some((start_line, end_line, enclosing)) = definition_lines(&occurrence) else {
                    self.counts.malformed_occurrences += 1;
                    continue;
                };
                let id = self.intern(std::mem::take(&mut occurrence.symbol));
                let new = Definition { document: doc, start_line, end_line, enclosing };
                let slot = &mut self.definitions[id as usize];
                // The smallest path wins; within one document, the first definition does.
                let replace = match slot {
                    None => true,
                    Some(old) => self.documents[doc].path < self.documents[old.document].path,
                };
                if replace {
                    *slot = Some(new);
                }
            } else {
                self.counts.references_total += 1;
                let id = self.intern(std::mem::take(&mut occurrence.symbol));
                *self.documents[doc].refs.entry(id).or_default() += 1;
            }
        }
    }

    fn finish(mut self) -> ScipCounts {
        let mut refs_total = vec![0u64; self.definitions.len()];
        let mut refs_other = vec![0u64; self.definitions.len()];
        let mut inbound = vec![0u64; self.documents.len()];
        for (doc, document) in self.documents.iter().enumerate() {
            for (&id, &n) in &document.refs {
                match self.definitions[id as usize] {
                    Some(def) => {
                        refs_total[id as usize] += n;
                        if def.document != doc {
                            refs_other[id as usize] += n;
                            inbound[def.document] += n;
                        }
                    }
                    None => self.counts.references_external += n,
                }
            }
        }
        for (document, n) in self.documents.iter().zip(&inbound) {
            self.counts.documents.insert(document.path.clone(), *n);
        }
        let mut key = String::new();
        for (symbol, id) in std::mem::take(&mut self.symbol_ids) {
            let Some(def) = self.definitions[id as usize] else { continue };
            let path = &self.documents[def.document].path;
            // A '#' in the path would make `path#name` ambiguous; such files keep their file target only.
            if path.contains('#') {
                continue;
            }
            key.clear();
            key.push_str(path);
            key.push('#');
            if !push_target_name(&symbol, &mut key) {
                continue;
            }
            let info = ScipSymbol {
                refs_from_other_documents: refs_other[id as usize],
                refs_total: refs_total[id as usize],
                start_line: def.start_line,
                end_line: def.end_line,
                enclosing: def.enclosing,
            };
            match self.counts.symbols.get_mut(key.as_str()) {
                Some(merged) => {
                    merged.refs_from_other_documents += info.refs_from_other_documents;
                    merged.refs_total += info.refs_total;
                    merged.start_line = merged.start_line.min(info.start_line);
                    merged.end_line = merged.end_line.max(info.end_line);
                    merged.enclosing &= info.enclosing;
                }
                None => {
                    self.counts.symbols.insert(key.clone(), info);
                }
            }
        }
        self.counts
    }
}

/// A document path as a repository-relative path with `/` separators, or `None` when it is empty,
/// absolute, or leaves the project root.
fn normalize_document_path(raw: &str) -> Option<String> {
    if raw.starts_with('/') || raw.contains('\0') {
        return None;
    }
    let mut parts = Vec::new();
    for part in raw.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// 1-based inclusive lines of a packed range `[line, char, char]` or `[line, char, line, char]`.
fn packed_lines(range: &[i32]) -> Option<(u32, u32)> {
    match *range {
        [line, _, _] => lines(line, line),
        [start, _, end, _] => lines(start, end),
        _ => None,
    }
}

fn single_lines(range: &SingleLineRange) -> Option<(u32, u32)> {
    lines(range.line, range.line)
}

fn multi_lines(range: &MultiLineRange) -> Option<(u32, u32)> {
    lines(range.start_line, range.end_line)
}

fn lines(start: i32, end: i32) -> Option<(u32, u32)> {
    let start = u32::try_from(start).ok()?;
    let end = u32::try_from(end).ok()?;
    (start <= end).then_some((start + 1, end + 1))
}

/// The lines of a definition: the enclosing range if there is a valid one, else the occurrence's range.
fn definition_lines(occurrence: &Occurrence) -> Option<(u32, u32, bool)> {
    let enclosing = match &occurrence.typed_enclosing_range {
        Some(Typed_enclosing_range::SingleLineEnclosingRange(r)) => single_lines(r),
        Some(Typed_enclosing_range::MultiLineEnclosingRange(r)) => multi_lines(r),
        // Absent, or a typed form newer than this reader: the packed form.
        _ => packed_lines(&occurrence.enclosing_range),
    };
    if let Some((start, end)) = enclosing {
        return Some((start, end, true));
    }
    let own = match &occurrence.typed_range {
        Some(Typed_range::SingleLineRange(r)) => single_lines(r),
        Some(Typed_range::MultiLineRange(r)) => multi_lines(r),
        _ => packed_lines(&occurrence.range),
    };
    own.map(|(start, end)| (start, end, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use scip::types::{Index, ToolInfo};

    const FIXTURE_INDEX: &[u8] = include_bytes!("../../tests/fixtures-repo/index.scip");

    fn occurrence(symbol: &str, roles: i32, range: &[i32]) -> Occurrence {
        Occurrence { symbol: symbol.into(), symbol_roles: roles, range: range.to_vec(), ..Default::default() }
    }

    fn document(path: &str, occurrences: Vec<Occurrence>) -> Document {
        Document { relative_path: path.into(), occurrences, ..Default::default() }
    }

    fn index(documents: Vec<Document>) -> Vec<u8> {
        let metadata = Metadata {
            tool_info: Some(ToolInfo { name: "test-indexer".into(), version: "1.0".into(), ..Default::default() })
                .into(),
            ..Default::default()
        };
        Index { metadata: Some(metadata).into(), documents, ..Default::default() }.write_to_bytes().unwrap()
    }

    const A: &str = "scip-test npm pkg 1.0.0 src/`a.ts`/Order#";
    const A_TOTAL: &str = "scip-test npm pkg 1.0.0 src/`a.ts`/Order#total().";
    const DEF: i32 = SymbolRole::Definition as i32;

    #[test]
    fn fixture_index_says_which_documents_use_which() {
        let edges = read_scip_edges(FIXTURE_INDEX).unwrap();
        // reorder.py uses models.py (Item, levels); nothing uses a document through itself.
        let reorder = &edges["tools/stockcheck/reorder.py"];
        assert!(reorder.contains("tools/stockcheck/models.py"), "{reorder:?}");
        for (from, to) in &edges {
            assert!(!to.contains(from), "{from} uses itself");
        }
        // Every document that uses another is a document of the index.
        let counts = read_scip(FIXTURE_INDEX).unwrap();
        assert!(edges.keys().chain(edges.values().flatten()).all(|p| counts.documents.contains_key(p)));
        // The same refusals as the counts.
        assert!(matches!(read_scip_edges(&[]), Err(ScipError::Empty)));
    }

    #[test]
    fn fixture_index_counts_inbound_references_per_document() {
        let counts = read_scip(FIXTURE_INDEX).unwrap();
        assert_eq!(counts.tool.as_deref(), Some("scip-python 0.6.6"));
        let paths: Vec<&str> = counts.documents.keys().map(String::as_str).collect();
        assert_eq!(
            paths,
            [
                "tools/stockcheck/__init__.py",
                "tools/stockcheck/cli.py",
                "tools/stockcheck/loader.py",
                "tools/stockcheck/models.py",
                "tools/stockcheck/money.py",
                "tools/stockcheck/reorder.py",
                "tools/stockcheck/report.py",
            ]
        );
        assert_eq!(counts.documents_total, 7);
        // models.py is imported by every other module, so it receives the most references.
        let (top, top_count) = counts.documents.iter().max_by_key(|(_, n)| **n).unwrap();
        assert_eq!(top, "tools/stockcheck/models.py");
        for (path, n) in &counts.documents {
            if path != top {
                assert!(n < top_count, "{path} has {n} inbound references, models.py {top_count}");
            }
        }
        // cli.py is the entry point and __init__.py only re-exports: nothing references their symbols.
        let inbound: Vec<u64> = counts.documents.values().copied().collect();
        assert_eq!(inbound, [0, 0, 5, 34, 4, 9, 3]);
        assert!(counts.skipped_local > 0, "the comprehension variables are locals");
        assert!(counts.references_external > 0, "builtins and the standard library are external");
        assert!(counts.references_total > counts.references_external);
        assert_eq!((counts.skipped_documents, counts.malformed_occurrences), (0, 0));
    }

    #[test]
    fn fixture_index_symbols_have_names_ranges_and_counts() {
        let counts = read_scip(FIXTURE_INDEX).unwrap();
        let item = counts.symbols["tools/stockcheck/models.py#Item"];
        // `@dataclass(frozen=True)` on line 15 through the last line of `level`, line 34.
        assert_eq!((item.start_line, item.end_line, item.enclosing), (15, 34, true));
        assert!(item.refs_from_other_documents >= 5, "{item:?}");
        let level = counts.symbols["tools/stockcheck/models.py#Item.level"];
        assert_eq!((level.start_line, level.end_line), (28, 34));
        // Used by reorder.py and report.py.
        assert_eq!(level.refs_from_other_documents, 2);
        let value = counts.symbols["tools/stockcheck/models.py#Item.value_cents"];
        assert_eq!((value.refs_from_other_documents, value.refs_total), (0, 1));
        assert!(counts.symbols.contains_key("tools/stockcheck/models.py#StockLevel.OK"));
        assert!(counts.symbols.contains_key("tools/stockcheck/reorder.py#ReorderPolicy.needs_reorder"));
        assert!(counts.symbols.contains_key("tools/stockcheck/loader.py#load_stock"));
        for id in counts.symbols.keys() {
            let (path, name) = id.split_once('#').unwrap();
            assert!(counts.documents.contains_key(path), "{id}");
            assert!(!name.contains('#') && !name.is_empty(), "{id}");
            assert!(!name.contains('(') && name != "__init__", "parameters and modules are not targets: {id}");
        }
        let in_models: Vec<&str> = counts.symbols_of("tools/stockcheck/models.py").map(|(name, _)| name).collect();
        assert!(in_models.contains(&"Item.level") && in_models.contains(&"total_value_cents"), "{in_models:?}");
        assert!(in_models.iter().all(|name| !name.contains('/')));
    }

    #[test]
    fn references_with_role_bits_zero_count_and_locals_are_skipped() {
        let bytes = index(vec![
            document(
                "src/a.ts",
                vec![
                    occurrence(A, DEF, &[0, 13, 18]),
                    occurrence(A_TOTAL, DEF, &[1, 2, 7]),
                    occurrence(A, 0, &[3, 0, 5]),
                    occurrence("local 1", DEF, &[4, 0, 1]),
                    occurrence("local 1", 0, &[5, 0, 1]),
                ],
            ),
            document(
                "src/b.ts",
                vec![
                    occurrence(A, 0, &[0, 9, 14]),
                    occurrence(A, SymbolRole::Import as i32, &[0, 9, 14]),
                    occurrence(A_TOTAL, SymbolRole::ReadAccess as i32, &[2, 0, 5]),
                    occurrence("scip-test npm lib 2.0.0 `lib.d.ts`/Array#", 0, &[3, 0, 5]),
                    occurrence("", 0, &[3, 0, 5]),
                ],
            ),
        ]);
        let counts = read_scip(&bytes).unwrap();
        assert_eq!(counts.documents["src/a.ts"], 3);
        assert_eq!(counts.documents["src/b.ts"], 0);
        assert_eq!(counts.skipped_local, 2);
        assert_eq!(counts.references_total, 5);
        assert_eq!(counts.references_external, 1);
        let order = counts.symbols["src/a.ts#Order"];
        assert_eq!((order.refs_from_other_documents, order.refs_total), (2, 3));
        assert_eq!((order.start_line, order.end_line, order.enclosing), (1, 1, false));
        assert_eq!(counts.symbols["src/a.ts#Order.total"].start_line, 2);
    }

    #[test]
    fn enclosing_ranges_typed_ranges_and_malformed_ranges() {
        let mut typed = occurrence(A_TOTAL, DEF, &[]);
        typed.typed_range = Some(Typed_range::SingleLineRange(SingleLineRange { line: 9, ..Default::default() }));
        typed.typed_enclosing_range = Some(Typed_enclosing_range::MultiLineEnclosingRange(MultiLineRange {
            start_line: 8,
            end_line: 12,
            ..Default::default()
        }));
        let mut packed_enclosing = occurrence(A, DEF, &[2, 6, 11]);
        packed_enclosing.enclosing_range = vec![2, 0, 20, 1];
        let mut bad_enclosing = occurrence("scip-test npm pkg 1.0.0 src/`a.ts`/f().", DEF, &[30, 0, 1]);
        bad_enclosing.enclosing_range = vec![40, 0, 30, 0];
        let bytes = index(vec![document(
            "src/a.ts",
            vec![
                typed,
                packed_enclosing,
                bad_enclosing,
                occurrence("scip-test npm pkg 1.0.0 src/`a.ts`/g().", DEF, &[1, 2]),
                occurrence("scip-test npm pkg 1.0.0 src/`a.ts`/h().", DEF, &[-1, 0, 1]),
            ],
        )]);
        let counts = read_scip(&bytes).unwrap();
        let total = counts.symbols["src/a.ts#Order.total"];
        assert_eq!((total.start_line, total.end_line, total.enclosing), (9, 13, true));
        let order = counts.symbols["src/a.ts#Order"];
        assert_eq!((order.start_line, order.end_line, order.enclosing), (3, 21, true));
        let f = counts.symbols["src/a.ts#f"];
        assert_eq!((f.start_line, f.end_line, f.enclosing), (31, 31, false));
        assert_eq!(counts.malformed_occurrences, 2);
        assert!(!counts.symbols.contains_key("src/a.ts#g") && !counts.symbols.contains_key("src/a.ts#h"));
    }

    #[test]
    fn definition_in_the_smallest_path_wins_whatever_the_document_order() {
        let a = || document("a.ts", vec![occurrence(A, DEF, &[7, 0, 1]), occurrence(A, 0, &[9, 0, 1])]);
        let b = || document("b.ts", vec![occurrence(A, DEF, &[0, 0, 1]), occurrence(A, 0, &[5, 0, 1])]);
        let one = read_scip(&index(vec![b(), a()])).unwrap();
        let two = read_scip(&index(vec![a(), b()])).unwrap();
        assert_eq!(one, two);
        assert_eq!(one.documents["a.ts"], 1);
        assert_eq!(one.symbols["a.ts#Order"].start_line, 8);
    }

    #[test]
    fn symbol_naming_table() {
        let table = [
            ("scip-python python stockcheck 0.1.0 `tools.stockcheck.models`/Item#level().", Some("Item.level")),
            ("scip-python python stockcheck 0.1.0 `tools.stockcheck.models`/__init__:", None),
            ("scip-python python stockcheck 0.1.0 `tools.stockcheck.models`/Item#level().(self)", None),
            ("scip-typescript npm pkg 1.0.0 src/`orders.ts`/Order#[T]", None),
            ("scip-typescript npm pkg 1.0.0 src/`orders.ts`/Order#total(+1).", Some("Order.total")),
            ("rust-analyzer cargo inventory 0.1.0 ledger/Ledger#reserve().", Some("Ledger.reserve")),
            ("rust-analyzer cargo inventory 0.1.0 money/cents!", Some("cents")),
            ("scip-test npm pkg 1.0.0 src/`a#b`#", None),
            ("scip-test npm pkg 1.0.0 src/", None),
            ("not a symbol", None),
        ];
        for (symbol, want) in table {
            assert_eq!(super::super::scip_symbol::target_name(symbol).as_deref(), want, "{symbol}");
        }
    }

    #[test]
    fn bad_document_paths_are_skipped_and_duplicates_merged() {
        let bytes = index(vec![
            document("", vec![occurrence(A, DEF, &[0, 0, 1])]),
            document("/abs/a.ts", vec![]),
            document("../up.ts", vec![]),
            document("./src//a.ts", vec![occurrence(A, DEF, &[0, 0, 1])]),
            document("src/a.ts", vec![occurrence(A, 0, &[3, 0, 1])]),
            document("x#y.ts", vec![occurrence(A_TOTAL, DEF, &[0, 0, 1]), occurrence(A, 0, &[1, 0, 1])]),
        ]);
        let counts = read_scip(&bytes).unwrap();
        assert_eq!(counts.skipped_documents, 3);
        assert_eq!(counts.documents_total, 6);
        assert_eq!(counts.documents.keys().collect::<Vec<_>>(), ["src/a.ts", "x#y.ts"]);
        // The reference from the merged document is internal; the one from x#y.ts is not.
        assert_eq!(counts.documents["src/a.ts"], 1);
        assert_eq!(counts.symbols["src/a.ts#Order"].refs_total, 2);
        assert!(counts.symbols.keys().all(|id| !id.starts_with("x#")), "{:?}", counts.symbols);
    }

    #[test]
    fn empty_garbage_and_truncated_input_are_errors() {
        assert!(matches!(read_scip(b""), Err(ScipError::Empty)));
        for garbage in [&b"\xff\xff\xff"[..], b"hello, world", b"\x00", b"\x0b", b"\x12\x05ab", b"\x08"] {
            assert!(read_scip(garbage).is_err(), "{garbage:?}");
        }
        // A varint field that is valid protobuf but no part of an index.
        assert!(matches!(read_scip(b"\x20\x01"), Err(ScipError::NotAnIndex)));
        for cut in [1, 2, 10, FIXTURE_INDEX.len() / 2, FIXTURE_INDEX.len() - 1] {
            let err = read_scip(&FIXTURE_INDEX[..cut]).unwrap_err();
            assert!(!err.to_string().is_empty());
        }
    }

    #[test]
    fn an_index_with_metadata_and_no_documents_is_empty() {
        let counts = read_scip(&index(vec![])).unwrap();
        assert_eq!(counts, ScipCounts { tool: Some("test-indexer 1.0".into()), ..Default::default() });
    }

    #[test]
    fn concatenated_indexes_merge() {
        let mut bytes = index(vec![document("a.ts", vec![occurrence(A, DEF, &[0, 0, 1])])]);
        bytes.extend(index(vec![document("b.ts", vec![occurrence(A, 0, &[0, 0, 1])])]));
        assert_eq!(read_scip(&bytes).unwrap().documents["a.ts"], 1);
    }

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = read_scip(&bytes);
        }

        #[test]
        fn never_panics_on_a_corrupted_fixture(
            edits in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 1..8),
            cut in any::<proptest::sample::Index>(),
        ) {
            let mut bytes = FIXTURE_INDEX.to_vec();
            for (at, byte) in edits {
                let i = at.index(bytes.len());
                bytes[i] = byte;
            }
            bytes.truncate(cut.index(bytes.len() + 1));
            let _ = read_scip(&bytes);
        }
    }
}

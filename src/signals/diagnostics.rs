//! Diagnostics: error and warning counts per file, from the formats that tools actually write.
//!
//! A file with compiler errors or linter findings is where work is about to happen, so diagnostics
//! feed saliency. Three formats are read, recognized from the bytes (no flag needed):
//!
//! - **cargo** `--message-format=json`: one JSON object per line; `compiler-message` lines count,
//!   with the message's `level` and its *primary* spans. Span file names are relative to the cargo
//!   workspace root, which is taken to be the repository root, or absolute. When a primary span lies
//!   outside the repository (inside a macro from another crate), its macro expansion chain is
//!   followed to the first span inside the repository — where the macro was invoked.
//! - **SARIF 2.1.0** (ruff, clippy-sarif, eslint, CodeQL…): `runs[].results[]`, with
//!   `locations[].physicalLocation.artifactLocation` (`uri` plus optional `uriBaseId`, or an `index`
//!   into `runs[].artifacts`) and `region.startLine`. `file://` URIs are percent-decoded; relative URIs
//!   are resolved through `runs[].originalUriBaseIds`, and a base the file does not define (or defines
//!   without a `uri`, as for `%SRCROOT%`) is taken to be the repository root, as is the base of a
//!   relative URI with no `uriBaseId`. A result's `level`
//!   follows SARIF's defaulting: absent, it is the rule's `defaultConfiguration.level`, else
//!   `warning`; results whose `kind` is not `fail` are skipped. Other SARIF versions are refused with
//!   an error rather than misread.
//! - **JSON lines** of `{"path": …, "line": …, "severity": "error" | "warning"}`, for anything else;
//!   `path` may be relative to the repository root, absolute, or a `file://` URI; `line` is optional.
//!
//! Decisions:
//! - **Only errors and warnings count.** Notes, help, `none` and informational results are counted in
//!   [`DiagReport::skipped`], never as warnings: a flood of notes must not look like a flood of
//!   warnings.
//! - **One diagnostic per file per message.** A message with several primary locations in one file
//!   counts once for that file (at its first line); locations in different files count once each.
//! - **Paths are mapped into the repository**, lexically first and then through the canonical paths
//!   of both sides (so symlinked checkouts such as `/tmp` → `/private/tmp` still match, even for a
//!   file that no longer exists: its deepest existing ancestor is canonicalized). Messages whose
//!   locations all lie outside the repository are counted in [`DiagReport::outside_repo`]; those with
//!   no usable location (none at all, a path that is not UTF-8 after percent-decoding, the repository
//!   root itself) in `skipped`. Diagnostics for files that no longer exist are kept: whether a target
//!   exists is the caller's decision.
//! - **Bad input.** A SARIF document that does not parse, or a first JSON line that is neither a cargo
//!   message nor a `{path, …}` object, is an error naming the problem. Inside a line format, a line
//!   that is not JSON (truncated, not UTF-8, a stray stderr line) is skipped and counted.

use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};
use thiserror::Error;

/// Why a diagnostics file could not be read.
#[derive(Debug, Error)]
pub enum DiagError {
    /// A SARIF document of a version other than 2.1.0 (or none).
    #[error("SARIF version {found} is not supported; only SARIF 2.1.0 is read")]
    SarifVersion { found: String },
    /// The input looks like SARIF but is not valid JSON (often: truncated).
    #[error("the SARIF document is not valid JSON")]
    BadSarif {
        #[source]
        source: serde_json::Error,
    },
    /// Valid JSON with a SARIF version, but not the shape SARIF prescribes.
    #[error("malformed SARIF: {what}")]
    SarifShape { what: &'static str },
    /// No line of the input is a JSON object.
    #[error(
        "unrecognized diagnostics format: line {line} is not JSON (expected cargo --message-format=json, SARIF 2.1.0, or JSON lines of {{path, line, severity}})"
    )]
    NotJson {
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    /// JSON, but of none of the three formats.
    #[error(
        "unrecognized diagnostics format: line {line} is {found}, not a cargo message (\"reason\") or a {{path, line, severity}} object"
    )]
    Unrecognized { line: usize, found: &'static str },
}

/// The format a diagnostics file was recognized as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DiagFormat {
    /// `cargo … --message-format=json`.
    Cargo,
    /// SARIF 2.1.0.
    Sarif,
    /// JSON lines of `{path, line, severity}` (also the format of empty input).
    JsonLines,
}

/// How bad a diagnostic is; other levels are skipped, not mapped here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// An error: the code does not build or a check failed.
    Error,
    /// A warning.
    Warning,
}

/// One diagnostic, attributed to a file of the repository.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// Repository-relative path with `/` separators.
    pub path: String,
    /// 1-based line, when the tool gave one.
    pub line: Option<u32>,
    /// Error or warning.
    pub severity: Severity,
}

/// Everything read from one diagnostics file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagReport {
    /// The recognized format.
    pub format: DiagFormat,
    /// Diagnostics in input order.
    pub diagnostics: Vec<Diagnostic>,
    /// Messages whose locations all lie outside the repository.
    pub outside_repo: u64,
    /// Messages not turned into diagnostics for another reason: another severity, no usable location,
    /// an unreadable line.
    pub skipped: u64,
}

/// Error and warning counts of one file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiagCounts {
    /// Number of errors.
    pub errors: u64,
    /// Number of warnings.
    pub warnings: u64,
}

impl DiagReport {
    fn new(format: DiagFormat) -> Self {
        DiagReport { format, diagnostics: Vec::new(), outside_repo: 0, skipped: 0 }
    }

    /// Error and warning counts per repository-relative path.
    pub fn counts_by_path(&self) -> BTreeMap<String, DiagCounts> {
        let mut counts: BTreeMap<String, DiagCounts> = BTreeMap::new();
        for d in &self.diagnostics {
            let c = counts.entry(d.path.clone()).or_default();
            match d.severity {
                Severity::Error => c.errors += 1,
                Severity::Warning => c.warnings += 1,
            }
        }
        counts
    }

    /// Records one message given the mapped locations `(path, line)` of its primary spans.
    fn push_message(&mut self, severity: Severity, locations: Vec<(Mapped, Option<u32>)>) {
        let mut any_outside = false;
        let before = self.diagnostics.len();
        for (mapped, line) in locations {
            match mapped {
                Mapped::Inside(path) => {
                    if !self.diagnostics[before..].iter().any(|d| d.path == path) {
                        self.diagnostics.push(Diagnostic { path, line, severity });
                    }
                }
                Mapped::Outside => any_outside = true,
                Mapped::Unusable => {}
            }
        }
        if self.diagnostics.len() == before {
            if any_outside {
                self.outside_repo += 1;
            } else {
                self.skipped += 1;
            }
        }
    }
}

/// The largest diagnostics file a snapshot reads: 256 MiB.
///
/// A diagnostics file is read whole and stored in the frame. `cargo check --message-format=json`
/// on a large workspace writes a few MiB and SARIF files from CodeQL or eslint on big repositories
/// tens of MiB; 256 MiB is generous for a real report while a wrong path (`/dev/zero`, a FIFO, a
/// log that never stops) fails at that bound instead of exhausting memory.
pub const MAX_DIAGNOSTICS_BYTES: u64 = 256 << 20;

/// Reads a diagnostics file, recognizing its format, and maps its paths relative to `repo_root`.
pub fn read_diagnostics(bytes: &[u8], repo_root: &Path) -> Result<DiagReport, DiagError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let mut mapper = PathMapper::new(repo_root);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(DiagReport::new(DiagFormat::JsonLines));
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(document)) if is_sarif(&document) => return read_sarif(&document, &mut mapper),
        Ok(Value::Object(_)) => {} // a single line of one of the line formats
        Ok(other) => return Err(DiagError::Unrecognized { line: 1, found: json_kind(&other) }),
        Err(source) if looks_like_sarif(bytes) => return Err(DiagError::BadSarif { source }),
        Err(_) => {} // several lines
    }
    read_lines(bytes, &mut mapper)
}

fn is_sarif(document: &Map<String, Value>) -> bool {
    document.contains_key("runs")
        || document.get("$schema").and_then(Value::as_str).is_some_and(|s| s.to_ascii_lowercase().contains("sarif"))
}

fn looks_like_sarif(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4096)];
    let contains = |needle: &[u8]| head.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle));
    contains(b"\"runs\"") || contains(b"\"$schema\"")
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "JSON null",
        Value::Bool(_) => "a JSON boolean",
        Value::Number(_) => "a JSON number",
        Value::String(_) => "a JSON string",
        Value::Array(_) => "a JSON array",
        Value::Object(_) => "a JSON object",
    }
}

// --- line formats -----------------------------------------------------------------------------------

fn read_lines(bytes: &[u8], mapper: &mut PathMapper) -> Result<DiagReport, DiagError> {
    let mut report: Option<DiagReport> = None;
    let mut leading_junk = 0u64;
    let mut first_error = None;
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_no = i + 1;
        let raw = raw.trim_ascii();
        if raw.is_empty() {
            continue;
        }
        let object = match serde_json::from_slice::<Value>(raw) {
            Ok(Value::Object(object)) => Some(object),
            Ok(other) if report.is_none() => {
                return Err(DiagError::Unrecognized { line: line_no, found: json_kind(&other) });
            }
            Ok(_) => None,
            Err(source) => {
                first_error.get_or_insert((line_no, source));
                None
            }
        };
        if report.is_none() {
            let Some(object) = &object else {
                leading_junk += 1;
                continue;
            };
            let format = if object.contains_key("reason") {
                DiagFormat::Cargo
            } else if object.contains_key("path") {
                DiagFormat::JsonLines
            } else {
                return Err(DiagError::Unrecognized { line: line_no, found: "a JSON object" });
            };
            report = Some(DiagReport { skipped: leading_junk, ..DiagReport::new(format) });
        }
        let Some(report) = report.as_mut() else { continue };
        match (object, report.format) {
            (None, _) => report.skipped += 1,
            (Some(object), DiagFormat::Cargo) => read_cargo_message(&object, mapper, report),
            (Some(object), _) => read_json_line(&object, mapper, report),
        }
    }
    match (report, first_error) {
        (Some(report), _) => Ok(report),
        (None, Some((line, source))) => Err(DiagError::NotJson { line, source }),
        (None, None) => Ok(DiagReport::new(DiagFormat::JsonLines)),
    }
}

fn read_cargo_message(object: &Map<String, Value>, mapper: &mut PathMapper, report: &mut DiagReport) {
    if object.get("reason").and_then(Value::as_str) != Some("compiler-message") {
        return; // artifacts, build scripts, build-finished: not diagnostics
    }
    let Some(message) = object.get("message").and_then(Value::as_object) else {
        report.skipped += 1;
        return;
    };
    let severity = match message.get("level").and_then(Value::as_str) {
        Some(level) if level.starts_with("error") => Severity::Error,
        Some("warning") => Severity::Warning,
        _ => {
            report.skipped += 1;
            return;
        }
    };
    let spans = message.get("spans").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let locations = spans
        .iter()
        .filter(|span| span.get("is_primary").and_then(Value::as_bool) == Some(true))
        .map(|span| cargo_span_location(span, mapper))
        .collect();
    report.push_message(severity, locations);
}

/// The mapped location of a primary span, following macro expansions out of foreign files.
fn cargo_span_location(span: &Value, mapper: &mut PathMapper) -> (Mapped, Option<u32>) {
    let mut first = None;
    let mut span = span;
    for _ in 0..64 {
        let mapped = match span.get("file_name").and_then(Value::as_str) {
            Some(name) => mapper.map_path(name),
            None => Mapped::Unusable,
        };
        let line = span.get("line_start").and_then(Value::as_u64).and_then(line_number);
        if matches!(mapped, Mapped::Inside(_)) {
            return (mapped, line);
        }
        first.get_or_insert((mapped, line));
        match span.get("expansion").and_then(|e| e.get("span")) {
            Some(next) => span = next,
            None => break,
        }
    }
    first.unwrap_or((Mapped::Unusable, None))
}

fn read_json_line(object: &Map<String, Value>, mapper: &mut PathMapper, report: &mut DiagReport) {
    let severity = match object.get("severity").and_then(Value::as_str).map(str::to_ascii_lowercase).as_deref() {
        Some("error") => Severity::Error,
        Some("warning" | "warn") => Severity::Warning,
        _ => {
            report.skipped += 1;
            return;
        }
    };
    let mapped = match object.get("path").and_then(Value::as_str) {
        Some(path) if has_file_scheme(path) => mapper.map_uri(path, None, &Map::new()),
        Some(path) => mapper.map_path(path),
        None => Mapped::Unusable,
    };
    let line = object.get("line").and_then(Value::as_u64).and_then(line_number);
    report.push_message(severity, vec![(mapped, line)]);
}

fn line_number(n: u64) -> Option<u32> {
    u32::try_from(n).ok().filter(|&n| n > 0)
}

// --- SARIF ----------------------------------------------------------------------------------------

fn read_sarif(document: &Map<String, Value>, mapper: &mut PathMapper) -> Result<DiagReport, DiagError> {
    match document.get("version") {
        Some(Value::String(v)) if v == "2.1.0" => {}
        Some(Value::String(v)) => return Err(DiagError::SarifVersion { found: format!("{v:?}") }),
        Some(other) => return Err(DiagError::SarifVersion { found: other.to_string() }),
        None => return Err(DiagError::SarifVersion { found: "(missing)".into() }),
    }
    let runs = match document.get("runs") {
        Some(Value::Array(runs)) => runs.as_slice(),
        Some(Value::Null) | None => &[],
        Some(_) => return Err(DiagError::SarifShape { what: "\"runs\" is not an array" }),
    };
    let empty = Map::new();
    let mut report = DiagReport::new(DiagFormat::Sarif);
    for run in runs {
        let Some(run) = run.as_object() else {
            return Err(DiagError::SarifShape { what: "a run is not an object" });
        };
        let base_ids = run.get("originalUriBaseIds").and_then(Value::as_object).unwrap_or(&empty);
        let rules = run
            .get("tool")
            .and_then(|tool| tool.pointer("/driver/rules"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let artifacts = run.get("artifacts").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let results = match run.get("results") {
            Some(Value::Array(results)) => results.as_slice(),
            Some(Value::Null) | None => &[],
            Some(_) => return Err(DiagError::SarifShape { what: "\"results\" is not an array" }),
        };
        for result in results {
            let Some(severity) = result.as_object().and_then(|r| sarif_severity(r, rules)) else {
                report.skipped += 1;
                continue;
            };
            let locations = result.get("locations").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            let locations = locations
                .iter()
                .filter_map(|location| location.get("physicalLocation"))
                .map(|physical| {
                    let mapped = sarif_artifact(physical.get("artifactLocation"), artifacts)
                        .map_or(Mapped::Unusable, |(uri, base)| mapper.map_uri(uri, base, base_ids));
                    let line = physical.pointer("/region/startLine").and_then(Value::as_u64).and_then(line_number);
                    (mapped, line)
                })
                .collect();
            report.push_message(severity, locations);
        }
    }
    Ok(report)
}

/// The severity of a result by SARIF's rules, or `None` when it is to be skipped.
fn sarif_severity(result: &Map<String, Value>, rules: &[Value]) -> Option<Severity> {
    match result.get("kind").and_then(Value::as_str) {
        None | Some("fail") => {}
        Some(_) => return None, // pass, open, review, informational, notApplicable
    }
    let level = match result.get("level").and_then(Value::as_str) {
        Some(level) => level,
        None => sarif_rule(result, rules)
            .and_then(|rule| rule.pointer("/defaultConfiguration/level"))
            .and_then(Value::as_str)
            .unwrap_or("warning"),
    };
    match level {
        "error" => Some(Severity::Error),
        "warning" => Some(Severity::Warning),
        _ => None, // note, none
    }
}

/// The rule a result refers to, by `ruleIndex`, `rule.index` or `ruleId`.
fn sarif_rule<'a>(result: &Map<String, Value>, rules: &'a [Value]) -> Option<&'a Value> {
    let index = result.get("ruleIndex").or_else(|| result.get("rule").and_then(|r| r.get("index")));
    if let Some(rule) = index.and_then(Value::as_u64).and_then(|i| usize::try_from(i).ok()).and_then(|i| rules.get(i)) {
        return Some(rule);
    }
    let id = result.get("ruleId").or_else(|| result.get("rule").and_then(|r| r.get("id")))?.as_str()?;
    rules.iter().find(|rule| rule.get("id").and_then(Value::as_str) == Some(id))
}

/// The `(uri, uriBaseId)` of an artifact location, following `index` into `runs[].artifacts`.
fn sarif_artifact<'a>(location: Option<&'a Value>, artifacts: &'a [Value]) -> Option<(&'a str, Option<&'a str>)> {
    let location = location?;
    let location = match location.get("uri") {
        Some(_) => location,
        None => {
            let index = usize::try_from(location.get("index")?.as_u64()?).ok()?;
            artifacts.get(index)?.get("location")?
        }
    };
    Some((location.get("uri")?.as_str()?, location.get("uriBaseId").and_then(Value::as_str)))
}

// --- paths and URIs -------------------------------------------------------------------------------

/// Where a path from a diagnostic lands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mapped {
    /// Inside the repository, at this repository-relative path.
    Inside(String),
    /// Outside the repository.
    Outside,
    /// Not a usable path (not UTF-8, empty, the repository root itself).
    Unusable,
}

/// What a URI reference resolves to before it is mapped into the repository.
enum Resolved {
    Absolute(String),
    Relative(String),
    Outside,
    Unusable,
}

struct PathMapper {
    root: PathBuf,
    canonical_root: Option<PathBuf>,
    cache: HashMap<String, Mapped>,
}

impl PathMapper {
    fn new(repo_root: &Path) -> Self {
        let absolute = if repo_root.is_absolute() {
            repo_root.to_path_buf()
        } else {
            std::env::current_dir().map(|cwd| cwd.join(repo_root)).unwrap_or_else(|_| repo_root.to_path_buf())
        };
        let root = lexical_normalize(&absolute).unwrap_or(absolute);
        let canonical_root = std::fs::canonicalize(&root).ok();
        PathMapper { root, canonical_root, cache: HashMap::new() }
    }

    /// Maps a plain file-system path: absolute, or relative to the repository root.
    fn map_path(&mut self, path: &str) -> Mapped {
        if Path::new(path).is_absolute() { self.map_absolute(path) } else { relative_target(path) }
    }

    fn map_absolute(&mut self, path: &str) -> Mapped {
        if let Some(mapped) = self.cache.get(path) {
            return mapped.clone();
        }
        let mapped = self.map_absolute_uncached(Path::new(path));
        self.cache.insert(path.to_string(), mapped.clone());
        mapped
    }

    fn map_absolute_uncached(&self, path: &Path) -> Mapped {
        let Some(normal) = lexical_normalize(path) else { return Mapped::Outside };
        if let Ok(rest) = normal.strip_prefix(&self.root) {
            return relative_components(rest);
        }
        if let Some(canonical_root) = &self.canonical_root
            && let Some(canonical) = canonicalize_existing_prefix(&normal)
            && let Ok(rest) = canonical.strip_prefix(canonical_root)
        {
            return relative_components(rest);
        }
        Mapped::Outside
    }

    /// Maps a SARIF URI reference with an optional `uriBaseId`.
    fn map_uri(&mut self, uri: &str, base_id: Option<&str>, base_ids: &Map<String, Value>) -> Mapped {
        match resolve_uri(uri, base_id, base_ids, 0) {
            Resolved::Absolute(path) => self.map_absolute(&path),
            Resolved::Relative(path) => relative_target(&path),
            Resolved::Outside => Mapped::Outside,
            Resolved::Unusable => Mapped::Unusable,
        }
    }
}

fn has_file_scheme(s: &str) -> bool {
    s.get(..5).is_some_and(|scheme| scheme.eq_ignore_ascii_case("file:"))
}

/// The scheme of an absolute URI (`file`, `https`), if `uri` has one.
fn uri_scheme(uri: &str) -> Option<&str> {
    let (scheme, _) = uri.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = chars.next()?.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        // A single letter is a Windows drive (`C:/src/x.rs`), not a scheme.
        && scheme.len() > 1;
    valid.then_some(scheme)
}

fn resolve_uri(uri: &str, base_id: Option<&str>, base_ids: &Map<String, Value>, depth: u32) -> Resolved {
    let uri = uri.split(['?', '#']).next().unwrap_or_default();
    if let Some(scheme) = uri_scheme(uri) {
        if !scheme.eq_ignore_ascii_case("file") {
            return Resolved::Outside;
        }
        let rest = &uri[scheme.len() + 1..];
        let path = match rest.strip_prefix("//") {
            Some(authority_and_path) => {
                let (authority, path) = match authority_and_path.find('/') {
                    Some(i) => authority_and_path.split_at(i),
                    None => (authority_and_path, ""),
                };
                if !authority.is_empty() && !authority.eq_ignore_ascii_case("localhost") {
                    return Resolved::Outside; // a file on another host
                }
                path
            }
            None => rest,
        };
        return match percent_decode(path) {
            Some(path) if path.starts_with('/') => Resolved::Absolute(path),
            Some(path) => Resolved::Relative(path),
            None => Resolved::Unusable,
        };
    }
    let Some(path) = percent_decode(uri) else { return Resolved::Unusable };
    if path.starts_with('/') {
        return Resolved::Absolute(path);
    }
    let base = base_id.and_then(|id| base_ids.get(id));
    let base_uri = base.and_then(|b| b.get("uri")).and_then(Value::as_str);
    match base_uri {
        // An unknown base, or one given without a URI (%SRCROOT%): the repository root.
        None => Resolved::Relative(path),
        Some(_) if depth >= 8 => Resolved::Unusable,
        Some(base_uri) => {
            let base_base = base.and_then(|b| b.get("uriBaseId")).and_then(Value::as_str);
            let join = |dir: String| if dir.ends_with('/') { dir + &path } else { format!("{dir}/{path}") };
            match resolve_uri(base_uri, base_base, base_ids, depth + 1) {
                Resolved::Absolute(dir) => Resolved::Absolute(join(dir)),
                Resolved::Relative(dir) => Resolved::Relative(join(dir)),
                other => other,
            }
        }
    }
}

/// Decodes `%XX` escapes; `None` when the result is not UTF-8. Malformed escapes stay as they are.
fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_string());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) =
                (bytes.get(i + 1).and_then(|&b| hex(b)), bytes.get(i + 2).and_then(|&b| hex(b)))
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A path relative to the repository root, normalized; `..` out of the root lands outside.
fn relative_target(path: &str) -> Mapped {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Mapped::Outside;
                }
            }
            part if part.contains('\0') => return Mapped::Unusable,
            part => parts.push(part),
        }
    }
    if parts.is_empty() { Mapped::Unusable } else { Mapped::Inside(parts.join("/")) }
}

/// The repository-relative target for the remainder of a path under the root.
fn relative_components(rest: &Path) -> Mapped {
    let mut parts = Vec::new();
    for component in rest.components() {
        match component {
            Component::Normal(part) => match part.to_str() {
                Some(part) => parts.push(part),
                None => return Mapped::Unusable,
            },
            Component::CurDir => {}
            _ => return Mapped::Unusable,
        }
    }
    if parts.is_empty() { Mapped::Unusable } else { Mapped::Inside(parts.join("/")) }
}

/// Resolves `.` and `..` without touching the file system; `None` for a path with a NUL byte.
fn lexical_normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            Component::Normal(part) if part.as_encoded_bytes().contains(&0) => return None,
            other => out.push(other.as_os_str()),
        }
    }
    Some(out)
}

/// Canonicalizes the deepest existing ancestor of `path` and appends the rest, so that a file that
/// no longer exists still maps through a symlinked directory.
fn canonicalize_existing_prefix(path: &Path) -> Option<PathBuf> {
    let mut missing = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(canonical) = std::fs::canonicalize(existing) {
            let mut out = canonical;
            out.extend(missing.iter().rev());
            return Some(out);
        }
        missing.push(existing.file_name()?);
        existing = existing.parent()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CARGO_JSON: &[u8] = include_bytes!("../../tests/fixtures-repo/diagnostics/cargo.json");
    const RUFF_SARIF: &[u8] = include_bytes!("../../tests/fixtures-repo/diagnostics/ruff.sarif");

    fn diag(path: &str, line: Option<u32>, severity: Severity) -> Diagnostic {
        Diagnostic { path: path.into(), line, severity }
    }

    fn sarif(results: &str, extra: &str) -> String {
        format!(r#"{{"version":"2.1.0","runs":[{{"tool":{{"driver":{{"name":"t"}}}},{extra}"results":[{results}]}}]}}"#)
    }

    fn result_at(uri: &str, level: &str) -> String {
        format!(
            r#"{{"level":"{level}","message":{{"text":"m"}},"locations":[{{"physicalLocation":{{"artifactLocation":{{"uri":"{uri}"}},"region":{{"startLine":3}}}}}}]}}"#
        )
    }

    #[test]
    fn fixture_cargo_json_gives_the_dead_code_warning_in_report_rs() {
        let report = read_diagnostics(CARGO_JSON, Path::new("/nonexistent/repo")).unwrap();
        assert_eq!(report.format, DiagFormat::Cargo);
        assert_eq!(report.diagnostics, [diag("src/report.rs", Some(70), Severity::Warning)]);
        assert_eq!((report.outside_repo, report.skipped), (0, 0));
    }

    #[test]
    fn fixture_ruff_sarif_resolves_srcroot_to_the_repository_root() {
        let report = read_diagnostics(RUFF_SARIF, Path::new("/nonexistent/repo")).unwrap();
        assert_eq!(report.format, DiagFormat::Sarif);
        assert_eq!(
            report.diagnostics,
            [
                diag("tools/stockcheck/cli.py", Some(24), Severity::Error),
                diag("tools/stockcheck/loader.py", Some(3), Severity::Error),
                diag("tools/stockcheck/report.py", Some(10), Severity::Error),
            ]
        );
        let counts = report.counts_by_path();
        assert_eq!(counts["tools/stockcheck/loader.py"], DiagCounts { errors: 1, warnings: 0 });
    }

    #[test]
    fn cargo_levels_primary_spans_and_absolute_paths() {
        let root = Path::new("/work/repo");
        let message = |level: &str, spans: &str| {
            format!(r#"{{"reason":"compiler-message","message":{{"level":"{level}","spans":[{spans}]}}}}"#)
        };
        let span = |file: &str, line: u32, primary: bool| {
            format!(r#"{{"file_name":"{file}","line_start":{line},"is_primary":{primary}}}"#)
        };
        let lines = [
            r#"{"reason":"compiler-artifact","target":{}}"#.to_string(),
            message("error", &[span("src/a.rs", 4, true), span("src/b.rs", 9, false)].join(",")),
            message("warning", &[span("/work/repo/src/c.rs", 7, true), span("/work/repo/src/c.rs", 8, true)].join(",")),
            message("note", &span("src/a.rs", 1, true)),
            message("help", &span("src/a.rs", 1, true)),
            message("error: internal compiler error", &span("src/d.rs", 2, true)),
            message("error", ""),
            message("warning", &span("/home/someone/.cargo/registry/x.rs", 3, true)),
            r#"{"reason":"compiler-message","message":{"level":"warning","spans":[{"file_name":"/rustc/lib/core/src/macros/mod.rs","line_start":5,"is_primary":true,"expansion":{"span":{"file_name":"src/e.rs","line_start":12}}}]}}"#.to_string(),
            r#"{"reason":"build-finished","success":false}"#.to_string(),
        ];
        let report = read_diagnostics(lines.join("\n").as_bytes(), root).unwrap();
        assert_eq!(report.format, DiagFormat::Cargo);
        assert_eq!(
            report.diagnostics,
            [
                diag("src/a.rs", Some(4), Severity::Error),
                diag("src/c.rs", Some(7), Severity::Warning),
                diag("src/d.rs", Some(2), Severity::Error),
                diag("src/e.rs", Some(12), Severity::Warning),
            ]
        );
        assert_eq!(report.outside_repo, 1);
        assert_eq!(report.skipped, 3, "note, help and the message without spans");
    }

    #[test]
    fn cargo_json_with_non_utf8_bytes_and_truncated_lines_skips_them() {
        let mut bytes = CARGO_JSON.to_vec();
        // A message whose file name is not UTF-8, and a truncated last line.
        bytes.extend_from_slice(
            b"{\"reason\":\"compiler-message\",\"message\":{\"level\":\"error\",\"spans\":[{\"file_name\":\"src/\xff.rs\",\"line_start\":1,\"is_primary\":true}]}}\n",
        );
        bytes.extend_from_slice(b"{\"reason\":\"compiler-message\",\"mess");
        let report = read_diagnostics(&bytes, Path::new("/r")).unwrap();
        assert_eq!(report.diagnostics.len(), 1);
        assert_eq!(report.skipped, 2);
        // Non-UTF-8 in the very first line leaves nothing to recognize the format by.
        assert!(matches!(read_diagnostics(b"\xff\xfe{}\n", Path::new("/r")), Err(DiagError::NotJson { line: 1, .. })));
    }

    #[test]
    fn sarif_file_uris_inside_and_outside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("src")).unwrap();
        let root_uri = format!("file://{}", root.display());
        let results = [
            result_at(&format!("{root_uri}/src/a%20b.rs"), "error"),
            result_at(&format!("file://localhost{}/src/gone.rs", root.display()), "warning"),
            result_at(&format!("{root_uri}/../elsewhere/x.rs"), "error"),
            result_at("file:///etc/passwd", "error"),
            result_at("file://server/share/x.rs", "error"),
            result_at("https://example.invalid/x.rs", "error"),
            result_at(&format!("{root_uri}/src/%FF.rs"), "error"),
            result_at(&format!("{root_uri}/src/x.rs"), "note"),
            result_at(&format!("{root_uri}/src/x.rs"), "none"),
        ]
        .join(",");
        let report = read_diagnostics(sarif(&results, "").as_bytes(), &root).unwrap();
        assert_eq!(
            report.diagnostics,
            [diag("src/a b.rs", Some(3), Severity::Error), diag("src/gone.rs", Some(3), Severity::Warning)]
        );
        assert_eq!(report.outside_repo, 4);
        assert_eq!(report.skipped, 3, "a non-UTF-8 path, a note and a none");
    }

    #[cfg(unix)]
    #[test]
    fn absolute_paths_through_a_symlinked_root_map_even_for_deleted_files() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir_all(real.join("src")).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let lines = format!(
            "{{\"path\":\"{}/src/lib.rs\",\"line\":1,\"severity\":\"error\"}}\n{{\"path\":\"{}/src/deleted/x.rs\",\"severity\":\"warning\"}}\n",
            real.display(),
            real.display()
        );
        let report = read_diagnostics(lines.as_bytes(), &link).unwrap();
        assert_eq!(
            report.diagnostics,
            [diag("src/lib.rs", Some(1), Severity::Error), diag("src/deleted/x.rs", None, Severity::Warning)]
        );
    }

    #[test]
    fn sarif_relative_uris_and_uri_base_ids() {
        let root = Path::new("/work/repo");
        let bases = r#""originalUriBaseIds":{"SRC":{"uri":"file:///work/repo/src/"},"LIB":{"uri":"lib/","uriBaseId":"SRC"},"OTHER":{"uri":"file:///opt/other/"},"LOOP":{"uri":"x/","uriBaseId":"LOOP"}},"#;
        let with_base = |uri: &str, base: &str| {
            format!(
                r#"{{"message":{{"text":"m"}},"locations":[{{"physicalLocation":{{"artifactLocation":{{"uri":"{uri}","uriBaseId":"{base}"}},"region":{{"startLine":2}}}}}}]}}"#
            )
        };
        let results = [
            with_base("a.rs", "SRC"),
            with_base("b.rs", "LIB"),
            with_base("c.rs", "%SRCROOT%"),
            with_base("d.rs", "OTHER"),
            with_base("e.rs", "LOOP"),
            result_at("./src/f.rs", "warning"),
            result_at("../outside.rs", "warning"),
        ]
        .join(",");
        let report = read_diagnostics(sarif(&results, bases).as_bytes(), root).unwrap();
        assert_eq!(
            report.diagnostics,
            [
                diag("src/a.rs", Some(2), Severity::Warning),
                diag("src/lib/b.rs", Some(2), Severity::Warning),
                diag("c.rs", Some(2), Severity::Warning),
                diag("src/f.rs", Some(3), Severity::Warning),
            ]
        );
        assert_eq!((report.outside_repo, report.skipped), (2, 1));
    }

    #[test]
    fn sarif_levels_default_from_rules_and_kinds() {
        let rules = r#""tool":{"driver":{"name":"t","rules":[{"id":"R0","defaultConfiguration":{"level":"error"}},{"id":"R1","defaultConfiguration":{"level":"note"}}]}},"#;
        let doc = format!(
            r#"{{"version":"2.1.0","runs":[{{{rules}"artifacts":[{{"location":{{"uri":"src/art.rs"}}}}],"results":[
            {{"ruleIndex":0,"locations":[{{"physicalLocation":{{"artifactLocation":{{"uri":"src/a.rs"}}}}}}]}},
            {{"ruleId":"R1","locations":[{{"physicalLocation":{{"artifactLocation":{{"uri":"src/b.rs"}}}}}}]}},
            {{"ruleId":"R9","locations":[{{"physicalLocation":{{"artifactLocation":{{"index":0}}}}}}]}},
            {{"kind":"pass","level":"error","locations":[{{"physicalLocation":{{"artifactLocation":{{"uri":"src/c.rs"}}}}}}]}},
            {{"level":"error"}},
            {{"level":"error","locations":[{{"physicalLocation":{{"artifactLocation":{{"uri":"src/d.rs"}},"region":{{"startLine":1}}}}}},{{"physicalLocation":{{"artifactLocation":{{"uri":"src/d.rs"}},"region":{{"startLine":9}}}}}},{{"physicalLocation":{{"artifactLocation":{{"uri":"src/e.rs"}},"region":{{"startLine":0}}}}}}]}},
            "not an object"
            ]}}]}}"#
        );
        let report = read_diagnostics(doc.as_bytes(), Path::new("/r")).unwrap();
        assert_eq!(
            report.diagnostics,
            [
                diag("src/a.rs", None, Severity::Error),
                diag("src/art.rs", None, Severity::Warning),
                diag("src/d.rs", Some(1), Severity::Error),
                diag("src/e.rs", None, Severity::Error),
            ]
        );
        assert_eq!(report.skipped, 4, "a note by default, a pass, no location, not an object");
    }

    #[test]
    fn sarif_of_another_version_is_refused() {
        for (doc, found) in [
            (r#"{"version":"2.0.0","runs":[]}"#, "\"2.0.0\""),
            (r#"{"$schema":"https://json.schemastore.org/sarif-1.0.0","version":"1.0.0","runs":[]}"#, "\"1.0.0\""),
            (r#"{"runs":[]}"#, "(missing)"),
            (r#"{"version":2.1,"runs":[]}"#, "2.1"),
        ] {
            let err = read_diagnostics(doc.as_bytes(), Path::new("/r")).unwrap_err();
            assert!(matches!(&err, DiagError::SarifVersion { found: f } if f == found), "{doc}: {err}");
            assert!(err.to_string().contains("only SARIF 2.1.0"), "{err}");
        }
        let err = read_diagnostics(br#"{"version":"2.1.0","runs":{}}"#, Path::new("/r")).unwrap_err();
        assert!(matches!(err, DiagError::SarifShape { .. }), "{err}");
    }

    #[test]
    fn truncated_sarif_is_an_error() {
        let err = read_diagnostics(&RUFF_SARIF[..RUFF_SARIF.len() / 2], Path::new("/r")).unwrap_err();
        assert!(matches!(err, DiagError::BadSarif { .. }), "{err}");
    }

    #[test]
    fn json_lines() {
        let input = concat!(
            "\u{feff}{\"path\":\"src/a.rs\",\"line\":3,\"severity\":\"error\"}\r\n",
            "\n",
            "{\"path\":\"./src/b.rs\",\"severity\":\"WARNING\"}\n",
            "{\"path\":\"src/c.rs\",\"line\":0,\"severity\":\"warn\"}\n",
            "{\"path\":\"src/d.rs\",\"line\":null,\"severity\":\"info\"}\n",
            "{\"path\":\"file:///r/src/e%2Ers\",\"line\":99999999999,\"severity\":\"error\"}\n",
            "{\"path\":\"/elsewhere/f.rs\",\"severity\":\"error\"}\n",
            "{\"path\":7,\"severity\":\"error\"}\n",
            "{\"line\":1,\"severity\":\"error\"}\n",
            "[1,2]\n",
            "not json\n",
        );
        let report = read_diagnostics(input.as_bytes(), Path::new("/r")).unwrap();
        assert_eq!(report.format, DiagFormat::JsonLines);
        assert_eq!(
            report.diagnostics,
            [
                diag("src/a.rs", Some(3), Severity::Error),
                diag("src/b.rs", None, Severity::Warning),
                diag("src/c.rs", None, Severity::Warning),
                diag("src/e.rs", None, Severity::Error),
            ]
        );
        assert_eq!(report.outside_repo, 1);
        assert_eq!(report.skipped, 5);
    }

    #[test]
    fn format_recognition_and_errors() {
        let root = Path::new("/r");
        for empty in [&b""[..], b"\n\n  \n", b"\xef\xbb\xbf"] {
            let report = read_diagnostics(empty, root).unwrap();
            assert_eq!((report.format, report.diagnostics.len()), (DiagFormat::JsonLines, 0));
        }
        let single = read_diagnostics(br#"{"path":"a.rs","severity":"error"}"#, root).unwrap();
        assert_eq!(single.diagnostics, [diag("a.rs", None, Severity::Error)]);
        // A stray stderr line before cargo's JSON is skipped.
        let mixed = read_diagnostics(b"   Compiling x v0.1.0\n{\"reason\":\"build-finished\"}\n", root).unwrap();
        assert_eq!((mixed.format, mixed.skipped), (DiagFormat::Cargo, 1));
        assert!(matches!(read_diagnostics(b"garbage\n", root), Err(DiagError::NotJson { line: 1, .. })));
        assert!(matches!(read_diagnostics(b"[]", root), Err(DiagError::Unrecognized { line: 1, .. })));
        assert!(matches!(read_diagnostics(b"\n42\n{}\n", root), Err(DiagError::Unrecognized { line: 2, .. })));
        assert!(matches!(
            read_diagnostics(b"{\"a\":1}\n{\"b\":2}", root),
            Err(DiagError::Unrecognized { line: 1, .. })
        ));
    }

    #[test]
    fn uri_helpers() {
        assert_eq!(percent_decode("a%20b%2fc%zz%4").as_deref(), Some("a b/c%zz%4"));
        assert_eq!(percent_decode("%C3%A9").as_deref(), Some("é"));
        assert_eq!(percent_decode("%FF"), None);
        assert_eq!(uri_scheme("file:///x"), Some("file"));
        assert_eq!(uri_scheme("C:/src/x.rs"), None);
        assert_eq!(uri_scheme("src/x.rs"), None);
        assert_eq!(relative_target("a/../../b"), Mapped::Outside);
        assert_eq!(relative_target("a/./b//c/../d"), Mapped::Inside("a/b/d".into()));
        assert_eq!(relative_target("."), Mapped::Unusable);
    }

    /// Pieces of the three formats, so that random sequences reach past the JSON parser.
    const JSON_TOKENS: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\n",
        "null",
        "1",
        "\"x\"",
        "\"reason\":\"compiler-message\"",
        "\"message\":",
        "\"level\":\"error\"",
        "\"level\":\"warning\"",
        "\"spans\":",
        "\"file_name\":\"/r/a.rs\"",
        "\"file_name\":\"../x\"",
        "\"is_primary\":true",
        "\"line_start\":1",
        "\"expansion\":",
        "\"span\":",
        "\"path\":\"a.rs\"",
        "\"path\":\"file:///r/%FF\"",
        "\"severity\":\"error\"",
        "\"line\":7",
        "\"version\":\"2.1.0\"",
        "\"runs\":",
        "\"results\":",
        "\"locations\":",
        "\"physicalLocation\":",
        "\"artifactLocation\":",
        "\"uri\":\"file:///r/%41\"",
        "\"uri\":\"b.rs\"",
        "\"uriBaseId\":\"B\"",
        "\"originalUriBaseIds\":",
        "\"B\":",
        "\"index\":0",
        "\"artifacts\":",
        "\"location\":",
        "\"ruleIndex\":0",
        "\"kind\":\"fail\"",
        "\"region\":",
        "\"startLine\":2",
    ];

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = read_diagnostics(&bytes, Path::new("/nonexistent/repo"));
        }

        #[test]
        fn never_panics_on_json_shaped_input(
            tokens in proptest::collection::vec(proptest::sample::select(JSON_TOKENS), 0..60)
        ) {
            let text = tokens.concat();
            let _ = read_diagnostics(text.as_bytes(), Path::new("/r"));
        }
    }
}

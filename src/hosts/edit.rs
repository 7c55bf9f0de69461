//! Format-preserving edits of the hosts' settings files: JSON (with comments where the host reads
//! them) through the byte ranges of a parsed tree, TOML through `toml_edit`'s document.
//!
//! A host's settings file is usually the user's too, so an edit never re-serializes the bytes
//! around what it adds or removes: [`append`] inserts one member at the end of an object or array,
//! laid out like the lines around it, and [`cut`] takes back exactly what [`append`] added (the
//! separator before the node, or for a sole child everything between the opening bracket and its
//! end). Install followed by uninstall gives back the original bytes. The edit hook's installer and
//! the MCP registration both edit through here.

use super::files::HostHookError;
use jsonc_parser::common::{Range, Ranged};
use jsonc_parser::{CollectOptions, CommentCollectionStrategy, ParseOptions, ast, parse_to_ast};
use std::path::Path;

/// What the hosts' JSON readers accept: strict JSON, plus comments where `comments`.
pub fn options(comments: bool) -> ParseOptions {
    ParseOptions {
        allow_comments: comments,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// The file's top-level object, with the byte range of every node; an error naming the file when
/// it is not what the host reads (strict JSON is checked by serde_json as well).
pub fn parse_object<'a>(path: &Path, text: &'a str, comments: bool) -> Result<ast::Object<'a>, HostHookError> {
    let syntax = if comments { "JSON (comments allowed)" } else { "JSON" };
    let invalid = |reason: String| HostHookError::Invalid { path: path.to_path_buf(), syntax, reason };
    if !comments {
        serde_json::from_str::<serde_json::Value>(text).map_err(|e| invalid(e.to_string()))?;
    }
    let collect = CollectOptions { comments: CommentCollectionStrategy::Off, tokens: false };
    let parsed = parse_to_ast(text, &collect, &options(comments)).map_err(|e| invalid(e.to_string()))?;
    match parsed.value {
        Some(ast::Value::Object(o)) => Ok(o),
        _ => Err(invalid("the top level is not an object".into())),
    }
}

/// A property of an object, by name.
pub fn prop<'o, 'a>(o: &'o ast::Object<'a>, name: &str) -> Option<&'o ast::ObjectProp<'a>> {
    o.properties.iter().find(|p| p.name.as_str() == name)
}

/// A node's value.
pub fn value_of(text: &str, node: &impl Ranged, comments: bool) -> Option<serde_json::Value> {
    jsonc_parser::parse_to_serde_value(node.text(text), &options(comments)).ok()
}

/// The file's indentation step: the leading whitespace of its first indented line.
pub fn indent_unit(text: &str) -> String {
    text.lines()
        .map(|l| l.chars().take_while(|c| *c == ' ' || *c == '\t').collect::<String>())
        .find(|w| !w.is_empty())
        .unwrap_or_else(|| "  ".to_string())
}

/// `v` pretty-printed with `unit` as the indentation step.
pub fn pretty_with(v: &serde_json::Value, unit: &str) -> String {
    use serde::Serialize as _;
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut out,
        serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes()),
    );
    v.serialize(&mut ser).expect("a JSON value serializes");
    String::from_utf8(out).expect("JSON is UTF-8")
}

/// A whole new file: `v` pretty-printed, with a final newline.
pub fn pretty(v: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(v).expect("a JSON value serializes");
    text.push('\n');
    text
}

/// `text` with one member added at the end of the container at `container` (an object when `key`
/// is given, else an array), whose last member is at `last`. On its own line, indented like the
/// last member, when that one is; inline otherwise.
pub fn append(
    text: &str,
    container: Range,
    last: Option<Range>,
    key: Option<&str>,
    value: &serde_json::Value,
) -> String {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let unit = indent_unit(text);
    let member = |body: String| match key {
        Some(key) => format!("{}: {body}", serde_json::Value::from(key)),
        None => body,
    };
    let render = |indent: &str| member(pretty_with(value, &unit).replace('\n', &format!("{newline}{indent}")));
    let mut out = text.to_string();
    match last {
        Some(last) => {
            let line_start = text[..last.start].rfind('\n').map(|i| i + 1).unwrap_or(0);
            let lead = &text[line_start..last.start];
            let own_line = line_start > container.start && lead.chars().all(|c| c == ' ' || c == '\t');
            let insert = match own_line {
                true => format!(",{newline}{lead}{}", render(lead)),
                false => format!(", {}", member(value.to_string())),
            };
            out.insert_str(last.end, &insert);
        }
        None => {
            let insert = match text[container.start..container.end].contains('\n') {
                true => {
                    let line_start = text[..container.start].rfind('\n').map(|i| i + 1).unwrap_or(0);
                    let outer: String = text[line_start..].chars().take_while(|c| *c == ' ' || *c == '\t').collect();
                    let indent = format!("{outer}{unit}");
                    format!("{newline}{indent}{}", render(&indent))
                }
                false => member(value.to_string()),
            };
            out.insert_str(container.start + 1, &insert);
        }
    }
    out
}

/// `text` without the member at `index` of the container at `container` whose members are at
/// `siblings`: the separator before it goes with it (after it, for the first), or for a sole
/// member everything from the opening bracket to its end.
pub fn cut(text: &str, container: Range, siblings: &[Range], index: usize) -> String {
    let s = siblings;
    let range = match index {
        0 if s.len() > 1 => s[0].start..s[1].start,
        0 => container.start + 1..s[0].end,
        i => s[i - 1].end..s[i].end,
    };
    let mut out = text.to_string();
    out.replace_range(range, "");
    out
}

/// The members' ranges of an object.
pub fn prop_ranges(o: &ast::Object) -> Vec<Range> {
    o.properties.iter().map(|p| p.range).collect()
}

/// A TOML document, or an error naming the file.
pub fn parse_toml(path: &Path, text: &str) -> Result<toml_edit::DocumentMut, HostHookError> {
    text.parse::<toml_edit::DocumentMut>().map_err(|e| HostHookError::Invalid {
        path: path.to_path_buf(),
        syntax: "TOML",
        reason: e.message().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn top(text: &str) -> (Range, Vec<Range>) {
        let o = parse_object(Path::new("f.json"), text, true).unwrap();
        (o.range, prop_ranges(&o))
    }

    #[test]
    fn append_then_cut_gives_back_the_bytes() {
        let texts = [
            "{}",
            "{\n}\n",
            "{\"a\": 1}",
            "{\n  \"a\": 1\n}\n",
            "{\n\t\"a\": 1, // c\n\t\"b\": [1]\n}",
            "{\r\n    \"a\": 1\r\n}\r\n",
        ];
        for text in texts {
            let (container, members) = top(text);
            let added = append(text, container, members.last().copied(), Some("git-mas"), &json!({"x": [1, 2]}));
            assert!(parse_object(Path::new("f.json"), &added, true).is_ok(), "{added}");
            let (container, members) = top(&added);
            assert_eq!(cut(&added, container, &members, members.len() - 1), text, "{added:?}");
        }
    }

    #[test]
    fn a_member_is_laid_out_like_its_neighbours() {
        let text = "{\n    \"a\": 1\n}\n";
        let (container, members) = top(text);
        let added = append(text, container, members.last().copied(), Some("b"), &json!({"c": 2}));
        assert_eq!(added, "{\n    \"a\": 1,\n    \"b\": {\n        \"c\": 2\n    }\n}\n");
        let inline = "{\"a\": 1}";
        let (container, members) = top(inline);
        assert_eq!(append(inline, container, members.last().copied(), Some("b"), &json!(2)), "{\"a\": 1, \"b\": 2}");
    }

    #[test]
    fn strict_files_refuse_comments_and_name_the_file() {
        let err = parse_object(Path::new("s.json"), "{// no\n}", false).unwrap_err();
        assert!(err.to_string().contains("s.json") && err.to_string().contains("not valid JSON"), "{err}");
        assert!(parse_object(Path::new("s.json"), "[]", true).is_err());
        assert!(parse_toml(Path::new("c.toml"), "a = ").unwrap_err().to_string().contains("c.toml"));
    }
}

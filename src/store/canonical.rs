//! Canonical JSON: the one byte form in which every record is signed, stored and hashed.
//!
//! Two agents on two machines must produce the same bytes from the same value, or signatures and
//! frame hashes stop meaning anything. The rules:
//!
//! - object keys sorted by their UTF-8 bytes, no insignificant whitespace;
//! - strings escaped as `serde_json` escapes them (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, other
//!   control characters as `\u00XX`, everything else literal UTF-8);
//! - integers in plain decimal;
//! - floats in Rust's `Display` form for `f64` — the shortest decimal that round-trips, never an
//!   exponent — with `-0` written as `0`. A float with no fractional part is therefore written like an
//!   integer (`2.0` → `2`), so re-reading and re-writing canonical bytes is the identity.
//!
//! We write the number format ourselves rather than rely on `serde_json`'s, because the float printer
//! behind `serde_json` is an implementation detail that has changed between releases; `f64`'s
//! `Display` is specified by the standard library.

use serde_json::Value;

/// Serializes `value` canonically.
pub fn to_canonical_bytes(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_value(value, &mut out);
    out
}

/// Serializes any serde value canonically (via `serde_json::Value`).
pub fn to_canonical_vec<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    Ok(to_canonical_bytes(&serde_json::to_value(value)?))
}

/// Formats one finite float in the canonical form; `None` for NaN or infinity, which JSON cannot hold.
pub fn format_f64(x: f64) -> Option<String> {
    if !x.is_finite() {
        return None;
    }
    let x = if x == 0.0 { 0.0 } else { x };
    Some(format!("{x}"))
}

fn write_value(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.extend_from_slice(i.to_string().as_bytes());
            } else if let Some(u) = n.as_u64() {
                out.extend_from_slice(u.to_string().as_bytes());
            } else {
                // serde_json never holds a non-finite float, so this always formats.
                let f = n.as_f64().unwrap_or(0.0);
                out.extend_from_slice(format_f64(f).unwrap_or_else(|| "0".into()).as_bytes());
            }
        }
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push(b'{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(k, out);
                out.push(b':');
                write_value(v, out);
            }
            out.push(b'}');
        }
    }
}

fn write_string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for ch in s.chars() {
        match ch {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn canon(v: Value) -> String {
        String::from_utf8(to_canonical_bytes(&v)).unwrap()
    }

    #[test]
    fn keys_are_sorted_and_whitespace_removed() {
        assert_eq!(
            canon(json!({"b": 1, "a": [1, 2], "c": {"z": null, "y": true}})),
            r#"{"a":[1,2],"b":1,"c":{"y":true,"z":null}}"#
        );
    }

    #[test]
    fn floats_have_one_form() {
        assert_eq!(canon(json!(-0.0)), "0");
        assert_eq!(canon(json!(2.0)), "2");
        assert_eq!(canon(json!(0.1)), "0.1");
        assert_eq!(canon(json!(1e-7)), "0.0000001");
        assert_eq!(canon(json!(-2.5)), "-2.5");
        assert_eq!(format_f64(f64::NAN), None);
        assert_eq!(format_f64(f64::INFINITY), None);
    }

    #[test]
    fn strings_escape_controls() {
        assert_eq!(canon(json!("a\"b\\c\nd\u{1}é")), "\"a\\\"b\\\\c\\nd\\u0001é\"");
    }

    #[test]
    fn canonical_bytes_are_a_fixed_point() {
        let v = json!({"x": [1.5, -0.0, 3.0, 1e21, 123456789.125], "é": "ü", "a": {"b": -7}});
        let once = to_canonical_bytes(&v);
        let reparsed: Value = serde_json::from_slice(&once).unwrap();
        assert_eq!(to_canonical_bytes(&reparsed), once);
    }
}

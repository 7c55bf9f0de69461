//! `git mas report --html`: a run's story as one self-contained HTML page.
//!
//! One file a person can open anywhere, mail, print or attach to a CI job: the goal, the roster
//! and the plan, every round with its proposals and endorsements (each check's result and the
//! tail of its output), the conflicts and how they were resolved, the landing commit with its
//! trailers and the convergence report; a converge run's page embeds its plot. Where a person
//! would rather look than read — the timeline of rounds and the board of who held which files —
//! the page draws inline SVG beside the tables.
//!
//! Decisions encoded here:
//!
//! - **The page loads nothing.** No script, no font, no image, no link to fetch: styles are
//!   inline, fonts are the system's, pictures are inline SVG, and a Content-Security-Policy of
//!   `default-src 'none'` makes a browser refuse any request the page might still make.
//! - **Everything recorded is hostile input.** Goals, agent names, commit messages and check
//!   output are written by agents: every value goes through [`esc`], in text and in attributes
//!   alike (attributes are always double-quoted), and control characters are replaced.
//! - **Stable hooks for machines.** Rounds carry `data-round`, proposals `data-proposal` (the
//!   event id), endorsements `data-endorsement`, the landing section `id="landing"` with
//!   `data-commit`: tests and scripts find them without parsing prose.
//! - **Pure.** Values in, a `String` out; the command gathers the values and writes the file.

mod converge;
mod development;
mod pictures;

pub use converge::{ConvergeStory, converge_page};
pub use development::{DevStory, dev_page};

use std::fmt::Write as _;

/// `text` safe inside HTML text and double-quoted attributes: `& < > " '` become entities and
/// control characters (other than newline and tab) become U+FFFD.
pub fn esc(text: &str) -> String {
    let mut o = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            '\n' | '\t' => o.push(c),
            c if c.is_control() => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

/// The first 12 characters of an object id.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// An object id shown short, whole in its tooltip.
fn oid(id: &str) -> String {
    format!("<code title=\"{}\">{}</code>", esc(id), esc(short(id)))
}

/// A duration for people (`1.2 s`, `3 min 4 s`).
fn duration(ms: u64) -> String {
    if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        humantime::format_duration(std::time::Duration::from_secs(ms / 1000)).to_string()
    }
}

/// A time stamp in UTC, to the second.
fn timestamp(ms: u64) -> String {
    humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms)).to_string()
}

/// The page's style: system fonts, one column that wraps at any width, a print layout.
const STYLE: &str = "\
*{box-sizing:border-box}\
html{-webkit-text-size-adjust:100%}\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;\
margin:0 auto;max-width:62rem;padding:1rem;line-height:1.45;color:#1f2328;background:#fff;\
overflow-wrap:break-word}\
h1{font-size:1.5rem;margin:.2rem 0 .6rem}h2{font-size:1.2rem;margin:1.8rem 0 .5rem;\
border-bottom:1px solid #d0d7de;padding-bottom:.2rem}h3{font-size:1rem;margin:1rem 0 .3rem}\
code{overflow-wrap:anywhere}code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,'Liberation Mono',monospace;font-size:.88em}\
pre{white-space:pre-wrap;background:#f6f8fa;border:1px solid #d0d7de;border-radius:4px;padding:.4rem .6rem;\
margin:.3rem 0;max-height:24rem;overflow:auto}\
table{border-collapse:collapse;width:100%;margin:.4rem 0}\
th,td{border-bottom:1px solid #d0d7de;padding:.25rem .4rem;text-align:left;vertical-align:top}\
th{font-weight:600;background:#f6f8fa;white-space:nowrap}\
dl.facts{display:grid;grid-template-columns:minmax(6rem,max-content) 1fr;gap:.15rem .8rem;margin:.4rem 0}\
dl.facts dt{font-weight:600;color:#57606a}dl.facts dd{margin:0}\
svg{max-width:100%;height:auto;display:block}\
figure{margin:.6rem 0}figcaption{color:#57606a;font-size:.9em}\
.goal{font-size:1.1rem;border-left:4px solid #0969da;padding:.2rem .7rem;margin:.4rem 0;white-space:pre-wrap}\
.badge{display:inline-block;border-radius:1rem;padding:0 .6rem;font-weight:600;font-size:.9em;\
background:#eaeef2}\
.ok{color:#1a7f37}.bad{color:#cf222e}.warn{color:#9a6700}.muted{color:#57606a}\
.badge.ok{background:#dafbe1}.badge.bad{background:#ffebe9}.badge.warn{background:#fff8c5}\
.event{border-left:3px solid #d0d7de;padding:.2rem .6rem;margin:.35rem 0}\
.event.proposal{border-color:#0969da}.event.pass{border-color:#1a7f37}.event.fail{border-color:#cf222e}\
.event.refused{opacity:.7;border-style:dashed}\
.legend{display:flex;flex-wrap:wrap;gap:.3rem 1rem;font-size:.9em;color:#57606a;margin:.2rem 0}\
.swatch{display:inline-block;width:.8em;height:.8em;border-radius:2px;vertical-align:-.05em;margin-right:.3em}\
.bar{background:#eaeef2;border-radius:3px;height:.6rem;max-width:16rem}\
.bar span{display:block;height:100%;border-radius:3px;background:#1a7f37}\
footer{margin-top:2rem;color:#57606a;font-size:.85em}\
@media (max-width:40rem){body{padding:.6rem}dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:.3rem}\
table.rows thead{display:none}table.rows tr{display:block;border-bottom:1px solid #d0d7de;padding:.3rem 0}\
table.rows td{display:block;border:0;padding:.05rem 0}\
table.rows td[data-label]::before{content:attr(data-label) ': ';font-weight:600;color:#57606a}}\
@media print{body{max-width:none;padding:0;font-size:10pt;color:#000}\
h2{break-after:avoid}section.round,figure,tr,.event{break-inside:avoid}\
pre{max-height:none;overflow:visible;background:none}a{color:inherit;text-decoration:none}}";

/// The whole page: `title` (text) and `body` (HTML already escaped).
fn page(title: &str, body: &str) -> String {
    let mut o = String::with_capacity(body.len() + STYLE.len() + 512);
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    o.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; \
         img-src data:\">\n",
    );
    o.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    o.push_str("<meta name=\"generator\" content=\"git mas report --html\">\n");
    let _ = writeln!(o, "<title>{}</title>", esc(title));
    let _ = writeln!(o, "<style>{STYLE}</style>\n</head>\n<body>");
    o.push_str(body);
    o.push_str("</body>\n</html>\n");
    o
}

/// A definition list of (term, HTML) pairs.
fn facts(rows: &[(&str, String)]) -> String {
    let mut o = String::from("<dl class=\"facts\">");
    for (term, value) in rows {
        let _ = write!(o, "<dt>{}</dt><dd>{value}</dd>", esc(term));
    }
    o.push_str("</dl>\n");
    o
}

/// The trailers of a commit message: its last paragraph, when that is not the subject and every
/// line of it is a `Key: value` line.
pub fn trailers(message: &str) -> Vec<(String, String)> {
    let paragraphs: Vec<&str> = message.trim_end().split("\n\n").collect();
    let [_, .., last] = paragraphs.as_slice() else { return Vec::new() };
    let parsed: Option<Vec<(String, String)>> = last
        .trim_start_matches('\n')
        .lines()
        .map(|line| {
            let (key, value) = line.split_once(": ")?;
            let token = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
            token.then(|| (key.to_owned(), value.to_owned()))
        })
        .collect();
    parsed.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_values_is_text() {
        assert_eq!(
            esc("<script>alert(\"x\")</script> & 'y'"),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
        assert_eq!(esc("a\u{1b}[31mb\nc\td"), "a\u{fffd}[31mb\nc\td");
    }

    #[test]
    fn the_page_forbids_every_request() {
        let html = page("<t>", "<p>x</p>");
        assert!(html.contains("default-src 'none'"));
        assert!(html.contains("<title>&lt;t&gt;</title>"));
        assert!(!html.contains("<script"));
        assert!(!html.contains("http://") && !html.contains("https://"));
    }

    #[test]
    fn trailers_are_the_last_paragraphs_key_value_lines() {
        let message = "Goal\n\nLand run r1: the aggregate of a, b.\n\nMas-Run: r1\nMas-Winner: a\nMas-Endorsed-By: b, \
                       c (for a)\n";
        assert_eq!(
            trailers(message),
            [("Mas-Run", "r1"), ("Mas-Winner", "a"), ("Mas-Endorsed-By", "b, c (for a)")]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
        assert!(trailers("just a subject").is_empty());
        assert!(trailers("Mas-Run: r1\n").is_empty(), "a subject is no trailer");
        assert!(
            trailers("subject\n\nprose, then\nMas-Run: r1\n").is_empty(),
            "a paragraph of prose is no trailer block"
        );
    }
}

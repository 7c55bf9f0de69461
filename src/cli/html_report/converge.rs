//! A converge run's page: the report rendered again from the recording, its plot embedded, and
//! every recorded hop in order.

use super::{duration, esc, facts, page};
use crate::cli::reports::converge_report;
use git_mas::coordinate::scalar::{HopRecord, Report};
use std::fmt::Write as _;

/// Everything a converge run's page shows.
#[derive(Debug, Clone)]
pub struct ConvergeStory {
    /// The report, rebuilt from the recording.
    pub report: Report,
    /// The recorded hops, in order.
    pub hops: Vec<HopRecord>,
    /// The plot as an SVG document, or why it could not be drawn.
    pub plot: Result<String, String>,
    /// Why the report is not to be trusted (a replay that differs, a missing final report).
    pub doubts: Vec<String>,
}

/// The plot, made to scale with the page: plotters writes a fixed width and height, which the
/// page's style overrides, and a `viewBox` (added when missing) keeps its proportions.
fn scalable(svg: &str) -> String {
    let Some(rest) = svg.strip_prefix("<svg") else { return svg.to_owned() };
    let view_box = if svg.split('>').next().unwrap_or_default().contains("viewBox") {
        String::new()
    } else {
        let (w, h) = git_mas::coordinate::scalar::plot::SIZE;
        format!(" viewBox=\"0 0 {w} {h}\"")
    };
    format!("<svg class=\"plot\"{view_box} role=\"img\" aria-label=\"The run's plot\"{rest}")
}

/// The converge run's page.
pub fn converge_page(story: &ConvergeStory) -> String {
    let r = &story.report;
    let mut o = String::new();
    let _ = writeln!(o, "<header>\n<h1>Run <code>{}</code></h1>", esc(&r.run));
    let _ = writeln!(o, "<p class=\"goal\" id=\"goal\">{}</p>", esc(&r.goal));
    let halt = r.halt.map_or("the run did not finish", |h| h.code());
    let _ = writeln!(
        o,
        "<p><span class=\"badge {}\">{}</span> {}</p>\n</header>",
        if r.halt.is_some() && !r.incomplete() { "ok" } else { "warn" },
        esc(halt),
        esc(&r.halt_detail)
    );
    for doubt in &story.doubts {
        let _ = writeln!(o, "<p class=\"bad\">Warning: {}</p>", esc(doubt));
    }
    let class = r.class.map_or("none inferred".to_owned(), |c| c.to_string());
    let peers: Vec<String> =
        r.peers.iter().map(|p| format!("<span data-agent=\"{0}\">{0}</span>", esc(&p.name))).collect();
    let _ = writeln!(o, "<section id=\"roster\">\n<h2>Team</h2>");
    o.push_str(&facts(&[
        ("class", esc(&class)),
        ("requested", esc(&r.requested.to_string())),
        ("peers", peers.join(", ")),
        ("epochs", r.epochs.to_string()),
        ("hops", r.hops.to_string()),
        ("elapsed", duration(r.elapsed_ms)),
    ]));
    o.push_str("</section>\n<section id=\"plot\">\n<h2>Trajectory</h2>\n<figure>\n");
    match &story.plot {
        Ok(svg) => o.push_str(&scalable(svg)),
        Err(why) => {
            let _ = writeln!(o, "<p class=\"bad\">The plot could not be drawn: {}</p>", esc(why));
        }
    }
    o.push_str(
        "<figcaption>The class metric per epoch (above) and each peer's announced values \
         (below).</figcaption>\n</figure>\n</section>\n",
    );
    hops(&mut o, &story.hops);
    let _ = writeln!(
        o,
        "<section id=\"report\">\n<h2>Report</h2>\n<pre>{}</pre>\n</section>",
        esc(&converge_report(r, &|s| s.to_owned()))
    );
    let _ = writeln!(
        o,
        "<footer>Rendered by <code>git mas report {} --html</code> from <code>{}</code>. The page loads nothing: \
         no script, font or image comes from anywhere else.</footer>",
        esc(&r.run),
        esc(&r.refs.meta)
    );
    page(&format!("git mas run {} — {}", r.run, r.goal.lines().next().unwrap_or_default()), &o)
}

fn hops(o: &mut String, hops: &[HopRecord]) {
    let _ = writeln!(o, "<section id=\"timeline\">\n<h2>Hops</h2>");
    if hops.is_empty() {
        o.push_str("<p>No hop was recorded.</p>\n</section>\n");
        return;
    }
    o.push_str(
        "<table class=\"rows\"><thead><tr><th>#</th><th>phase</th><th>epoch</th><th>peer</th><th>announced</th>\
         <th>vote</th><th>took</th><th>note</th></tr></thead><tbody>\n",
    );
    for (i, h) in hops.iter().enumerate() {
        let round = h.epoch.map(|e| format!(" data-round=\"{e}\"")).unwrap_or_default();
        let note = match (&h.failure, &h.reply) {
            (Some(f), _) => format!("<span class=\"bad\">{}</span>", esc(f)),
            (None, Some(reply)) if h.announced.is_none() => {
                format!("<details><summary>reply</summary><pre>{}</pre></details>", esc(reply))
            }
            _ => String::new(),
        };
        let _ = writeln!(
            o,
            "<tr class=\"hop\" data-hop=\"{}\"{round}><td data-label=\"#\">{}</td><td data-label=\"phase\">{}</td><td \
             data-label=\"epoch\">{}</td><td data-label=\"peer\">{}</td><td data-label=\"announced\">{}</td><td \
             data-label=\"vote\">{}</td><td data-label=\"took\">{}</td><td data-label=\"note\">{note}</td></tr>",
            i + 1,
            i + 1,
            esc(&format!("{:?}", h.phase).to_lowercase()),
            h.epoch.map_or("-".into(), |e| e.to_string()),
            esc(&h.peer),
            h.announced.map_or("-".into(), |v| v.to_string()),
            h.vote.map_or("-".into(), |v| format!("{v:?}").to_lowercase()),
            duration(h.elapsed_ms)
        );
    }
    o.push_str("</tbody></table>\n</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plot_scales_with_the_page() {
        let svg = scalable("<svg width=\"960\" height=\"720\" xmlns=\"x\"><rect/></svg>");
        assert!(svg.starts_with("<svg class=\"plot\" viewBox=\"0 0 960 720\""), "{svg}");
        assert!(svg.ends_with("<rect/></svg>"));
        let svg = scalable("<svg viewBox=\"0 0 1 1\"><rect/></svg>");
        assert_eq!(svg.matches("viewBox").count(), 1, "{svg}");
        assert!(svg.starts_with("<svg class=\"plot\" role="), "{svg}");
    }
}

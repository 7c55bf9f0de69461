//! The pictures of a run's page, as inline SVG: the timeline of rounds and the board of who held
//! which files. Pure geometry over plain inputs; every label goes through [`esc`].

use super::esc;
use std::fmt::Write as _;

/// How a mark is colored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// A check that passed, a review that accepted, a landing.
    Pass,
    /// A check that failed, a review that rejected.
    Fail,
    /// Waiting, or nothing to judge.
    Neutral,
    /// A proposal, or content at its quorum.
    Info,
    /// A blocked landing, a conflict.
    Warn,
}

impl Tone {
    /// Its color.
    pub fn color(self) -> &'static str {
        match self {
            Tone::Pass => "#1a7f37",
            Tone::Fail => "#cf222e",
            Tone::Neutral => "#8c959f",
            Tone::Info => "#0969da",
            Tone::Warn => "#bf8700",
        }
    }
}

/// What a column of the timeline shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// A proposal (a square on its proposer's lane).
    Proposal,
    /// An endorsement (a dot on its endorser's lane, joined to the proposer's lane).
    Endorsement {
        /// The lane of the proposal it judged.
        proposer_lane: Option<usize>,
        /// Its verdict.
        tone: Tone,
    },
    /// A landing attempt that a conflict blocked.
    Blocked,
    /// The landing.
    Landed,
}

/// One column of the timeline: one recorded step, in the order they happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The round it belongs to.
    pub round: u64,
    /// The lane (row) it is drawn on.
    pub lane: usize,
    /// What it is.
    pub mark: Mark,
    /// Its id (the event id, the record or the commit), as a data attribute.
    pub id: String,
    /// What a tooltip says.
    pub label: String,
}

const FONT: &str = "font-family=\"system-ui,-apple-system,'Segoe UI',Roboto,Arial,sans-serif\" font-size=\"12\"";
/// Average width of a character at the pictures' font size, for laying out labels.
const CHAR_W: usize = 7;

/// `text` cut to `max` characters, with an ellipsis when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// The timeline: one row a lane (each agent, then the integration branch), one column a step,
/// the rounds as bands behind them.
pub fn timeline(lanes: &[String], columns: &[Column]) -> String {
    const COL: usize = 26;
    const LANE: usize = 26;
    const TOP: usize = 30;
    let label_w = lanes.iter().map(|l| cut(l, 18).chars().count()).max().unwrap_or(4).max(4) * CHAR_W + 16;
    let width = label_w + columns.len().max(1) * COL + 12;
    let height = TOP + lanes.len().max(1) * LANE + 8;
    let x = |i: usize| label_w + i * COL + COL / 2;
    let y = |lane: usize| TOP + lane * LANE + LANE / 2;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<svg class=\"timeline\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" \
         height=\"{height}\" role=\"img\" aria-label=\"Timeline of the run's rounds\" {FONT}>"
    );
    round_bands(&mut o, columns, label_w, COL, height);
    for (i, lane) in lanes.iter().enumerate() {
        let ly = y(i);
        let _ = writeln!(
            o,
            "<g class=\"lane\"><line x1=\"{label_w}\" x2=\"{}\" y1=\"{ly}\" y2=\"{ly}\" stroke=\"#d0d7de\"/><text \
             x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#1f2328\"><title>{}</title>{}</text></g>",
            width - 4,
            label_w - 8,
            y(i) + 4,
            esc(lane),
            esc(&cut(lane, 18))
        );
    }
    for (i, c) in columns.iter().enumerate() {
        let (cx, cy) = (x(i), y(c.lane));
        let title = format!("<title>{}</title>", esc(&c.label));
        let id = esc(&c.id);
        let _ = match &c.mark {
            Mark::Proposal => writeln!(
                o,
                "<g class=\"mark proposal\" data-proposal=\"{id}\">{title}<rect x=\"{}\" y=\"{}\" width=\"12\" \
                 height=\"12\" fill=\"{}\"/></g>",
                cx - 6,
                cy - 6,
                Tone::Info.color()
            ),
            Mark::Endorsement { proposer_lane, tone } => {
                let link = proposer_lane.map_or(String::new(), |p| {
                    format!(
                        "<line x1=\"{cx}\" x2=\"{cx}\" y1=\"{cy}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\" \
                         stroke-opacity=\".5\"/>",
                        y(p),
                        tone.color()
                    )
                });
                writeln!(
                    o,
                    "<g class=\"mark endorsement\" data-endorsement=\"{id}\">{title}{link}<circle cx=\"{cx}\" \
                     cy=\"{cy}\" r=\"6\" fill=\"{}\"/></g>",
                    tone.color()
                )
            }
            Mark::Blocked => writeln!(
                o,
                "<g class=\"mark blocked\" data-blocked=\"{id}\">{title}<path d=\"M{} {}l12 12m0 -12l-12 12\" \
                 stroke=\"{}\" stroke-width=\"3\"/></g>",
                cx - 6,
                cy - 6,
                Tone::Warn.color()
            ),
            Mark::Landed => writeln!(
                o,
                "<g class=\"mark landed\" data-landed=\"{id}\">{title}<path d=\"M{cx} {}l8 8l-8 8l-8 -8z\" \
                 fill=\"{}\"/></g>",
                cy - 8,
                Tone::Pass.color()
            ),
        };
    }
    o.push_str("</svg>\n");
    o
}

/// The rounds behind the timeline: consecutive columns of one round make a band.
fn round_bands(o: &mut String, columns: &[Column], label_w: usize, col: usize, height: usize) {
    let mut start = 0;
    let mut band = 0;
    while start < columns.len() {
        let round = columns[start].round;
        let end = columns[start..].iter().position(|c| c.round != round).map_or(columns.len(), |n| start + n);
        let (bx, bw) = (label_w + start * col, (end - start) * col);
        let fill = if band % 2 == 0 { "#f6f8fa" } else { "#eaeef2" };
        let text = if bw >= 60 { format!("round {round}") } else { format!("r{round}") };
        let _ = writeln!(
            o,
            "<g class=\"round\" data-round=\"{round}\"><rect x=\"{bx}\" y=\"0\" width=\"{bw}\" height=\"{height}\" \
             fill=\"{fill}\"/><text x=\"{}\" y=\"18\" text-anchor=\"middle\" fill=\"#57606a\">{}</text></g>",
            bx + bw / 2,
            esc(&text)
        );
        start = end;
        band += 1;
    }
}

/// One agent's holding on the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holding {
    /// The agent.
    pub agent: String,
    /// The files it held.
    pub files: Vec<String>,
    /// Where its slice stands, in words.
    pub status: String,
    /// The color of its cells.
    pub tone: Tone,
}

/// The board: one row a file, one column an agent, a cell where the agent held the file.
pub fn board(holdings: &[Holding]) -> String {
    const ROW: usize = 20;
    const TOP: usize = 26;
    let mut files: Vec<&str> = Vec::new();
    for h in holdings {
        for f in &h.files {
            if !files.contains(&f.as_str()) {
                files.push(f);
            }
        }
    }
    let file_w = files.iter().map(|f| cut(f, 40).chars().count()).max().unwrap_or(4).max(4) * CHAR_W + 12;
    let col_w = holdings.iter().map(|h| cut(&h.agent, 14).chars().count()).max().unwrap_or(4).max(4) * CHAR_W + 14;
    let width = file_w + holdings.len().max(1) * col_w + 4;
    let height = TOP + files.len().max(1) * ROW + 4;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<svg class=\"board\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" \
         height=\"{height}\" role=\"img\" aria-label=\"Who held which files\" {FONT}>"
    );
    for (j, h) in holdings.iter().enumerate() {
        let _ = writeln!(
            o,
            "<text x=\"{}\" y=\"16\" text-anchor=\"middle\" font-weight=\"600\" fill=\"#1f2328\"><title>{}</title>{}</text>",
            file_w + j * col_w + col_w / 2,
            esc(&h.agent),
            esc(&cut(&h.agent, 14))
        );
    }
    for (i, file) in files.iter().enumerate() {
        let top = TOP + i * ROW;
        if i % 2 == 0 {
            let _ = writeln!(o, "<rect x=\"0\" y=\"{top}\" width=\"{width}\" height=\"{ROW}\" fill=\"#f6f8fa\"/>");
        }
        let _ = writeln!(
            o,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#1f2328\"><title>{}</title>{}</text>",
            file_w - 8,
            top + 14,
            esc(file),
            esc(&cut(file, 40))
        );
        for (j, h) in holdings.iter().enumerate() {
            if h.files.iter().any(|f| f == file) {
                let _ = writeln!(
                    o,
                    "<rect class=\"held\" data-agent=\"{}\" data-file=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" \
                     rx=\"3\" fill=\"{}\"><title>{} held {} ({})</title></rect>",
                    esc(&h.agent),
                    esc(file),
                    file_w + j * col_w + 4,
                    top + 3,
                    col_w - 8,
                    ROW - 6,
                    h.tone.color(),
                    esc(&h.agent),
                    esc(file),
                    esc(&h.status)
                );
            }
        }
    }
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(round: u64, lane: usize, mark: Mark, id: &str) -> Column {
        Column { round, lane, mark, id: id.into(), label: format!("<b>{id}</b>") }
    }

    #[test]
    fn the_timeline_has_a_band_a_round_and_a_mark_a_step() {
        let lanes = ["alice".to_owned(), "bob".to_owned(), "main".to_owned()];
        let columns = [
            column(1, 0, Mark::Proposal, "p1"),
            column(1, 1, Mark::Endorsement { proposer_lane: Some(0), tone: Tone::Fail }, "e1"),
            column(2, 0, Mark::Proposal, "p2"),
            column(2, 1, Mark::Endorsement { proposer_lane: Some(0), tone: Tone::Pass }, "e2"),
            column(2, 2, Mark::Landed, "c0ffee"),
        ];
        let svg = timeline(&lanes, &columns);
        assert_eq!(svg.matches("class=\"round\"").count(), 2, "{svg}");
        assert!(svg.contains("data-round=\"1\"") && svg.contains("data-round=\"2\""));
        for id in ["p1", "p2"] {
            assert!(svg.contains(&format!("data-proposal=\"{id}\"")));
        }
        for id in ["e1", "e2"] {
            assert!(svg.contains(&format!("data-endorsement=\"{id}\"")));
        }
        assert!(svg.contains("data-landed=\"c0ffee\""));
        assert!(svg.contains(Tone::Fail.color()) && svg.contains(Tone::Pass.color()));
        assert!(svg.contains("&lt;b&gt;p1&lt;/b&gt;") && !svg.contains("<b>"), "labels are text");
    }

    #[test]
    fn the_board_marks_each_file_its_holder_held() {
        let holdings = [
            Holding { agent: "alice".into(), files: vec!["a.rs".into()], status: "landed".into(), tone: Tone::Pass },
            Holding {
                agent: "<bob>".into(),
                files: vec!["b.rs".into(), "c.rs".into()],
                status: "waiting".into(),
                tone: Tone::Neutral,
            },
        ];
        let svg = board(&holdings);
        assert_eq!(svg.matches("class=\"held\"").count(), 3, "{svg}");
        assert!(svg.contains("data-agent=\"&lt;bob&gt;\" data-file=\"c.rs\""));
        assert!(!svg.contains("<bob>"));
    }

    #[test]
    fn long_labels_are_cut() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
    }
}

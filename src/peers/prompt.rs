//! The hop prompt: what a peer is shown, in a form both people and programs can read.
//!
//! A prompt starts with a **header** of `key=value` lines (and `quantity <name>=<value>` lines in
//! CONVERGE), ended by the first blank line; prose instructions follow, and in ASSEMBLY the
//! earlier replies of the round. The header is the contract: a program peer reads it with
//! [`PromptHeader::parse`] (the built-in peers do), a model reads it as plain text.
//!
//! | key | phase | meaning |
//! |---|---|---|
//! | `phase` | both | `ASSEMBLY` or `CONVERGE` |
//! | `run` | both | the run id |
//! | `agent` | both | the peer's own name (what `agent=` in ANNOUNCE must say) |
//! | `peers` | ASSEMBLY | every peer, in ring order |
//! | `next` | both | the peer after this one in the ring, or `DONE` for the last |
//! | `goal` | both | the team's goal (one line) |
//! | `class` | both | ASSEMBLY: the class the run was seeded with (`unmapped`: none); CONVERGE: the class |
//! | `quantities` | ASSEMBLY | the seeded class's quantity names; with no seed, one `quantities.<class>` line per scalar class |
//! | `epoch` | CONVERGE | the open epoch (what `epoch=` in ANNOUNCE must say) |
//! | `rule` | CONVERGE | the peer's own UPDATE rule, as it wrote it in ASSEMBLY |
//! | `quantity <name>` | CONVERGE | one of the peer's local quantities, by the class's names |
//! | `attempt` | both | 1, or 2 when the previous reply could not be used |
//! | `reason` | both | on attempt 2: why the previous reply could not be used |
//!
//! Decision: **a prompt never suggests a value.** It shows the rule and the quantities; applying
//! the one to the other is the peer's work, and a wrong application must show in the trajectory.
//! Numbers are printed in Rust's shortest round-trip form, so a program that parses them sees
//! exactly the values the engine holds.

use crate::assembly::{Quantities, quantity_names, update_class};
use crate::runtime::{PatternKind, ProtocolPhase};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The first line of every prompt.
pub const PROMPT_MAGIC: &str = "git-mas hop";

/// An ASSEMBLY hop.
#[derive(Debug, Clone)]
pub struct AssemblyPrompt<'a> {
    /// The run id.
    pub run: &'a str,
    /// The peer being asked.
    pub agent: &'a str,
    /// Every peer, in ring order.
    pub peers: &'a [String],
    /// The next peer in the ring (`None`: this is the last).
    pub next: Option<&'a str>,
    /// The team's goal.
    pub goal: &'a str,
    /// The class the run was seeded with (`Unmapped`: none).
    pub class: PatternKind,
    /// Which attempt this is (1 or 2).
    pub attempt: u32,
    /// Why the previous attempt could not be used.
    pub reason: Option<&'a str>,
    /// Earlier replies in this ASSEMBLY: (peer, reply).
    pub transcript: &'a [(String, String)],
    /// Before an aggregate development run: the frame's files the peers split the work into
    /// (empty: no split is asked for).
    pub split: &'a [String],
}

/// A CONVERGE hop.
#[derive(Debug, Clone)]
pub struct ConvergePrompt<'a> {
    /// The run id.
    pub run: &'a str,
    /// The peer being asked.
    pub agent: &'a str,
    /// The next peer in the ring (`None`: this is the last).
    pub next: Option<&'a str>,
    /// The open epoch.
    pub epoch: u64,
    /// The team's goal.
    pub goal: &'a str,
    /// The class.
    pub class: PatternKind,
    /// The peer's own UPDATE rule.
    pub rule: &'a str,
    /// The peer's local quantities.
    pub quantities: &'a Quantities,
    /// Which attempt this is (1 or 2).
    pub attempt: u32,
    /// Why the previous attempt could not be used.
    pub reason: Option<&'a str>,
}

/// A header value on one line: line breaks and other control characters become spaces.
pub fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>().trim().to_owned()
}

fn handoff(next: Option<&str>) -> String {
    match next {
        Some(peer) => format!("NEXT {peer}"),
        None => "DONE".to_owned(),
    }
}

fn header_start(out: &mut String, phase: ProtocolPhase, run: &str, agent: &str) {
    let _ = writeln!(out, "{PROMPT_MAGIC}\nphase={}\nrun={}\nagent={}", phase.label(), one_line(run), one_line(agent));
}

fn attempt_lines(out: &mut String, attempt: u32, reason: Option<&str>) {
    let _ = writeln!(out, "attempt={attempt}");
    if let Some(reason) = reason {
        let _ = writeln!(out, "reason={}", one_line(reason));
    }
}

impl AssemblyPrompt<'_> {
    /// The prompt text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        header_start(&mut out, ProtocolPhase::Assembly, self.run, self.agent);
        let _ = writeln!(out, "peers={}", self.peers.join(","));
        let _ = writeln!(out, "next={}", self.next.unwrap_or("DONE"));
        let _ = writeln!(out, "goal={}", one_line(self.goal));
        let _ = writeln!(out, "class={}", self.class);
        if self.class.is_converge_class() {
            let _ = writeln!(out, "quantities={}", quantity_names(self.class).join(","));
        } else {
            for class in [PatternKind::Preference, PatternKind::Cascade, PatternKind::Resource] {
                let _ = writeln!(out, "quantities.{class}={}", quantity_names(class).join(","));
            }
        }
        if !self.split.is_empty() {
            let _ = writeln!(out, "split={}", self.split.join(","));
        }
        attempt_lines(&mut out, self.attempt, self.reason);
        out.push('\n');
        if !self.split.is_empty() {
            let _ = writeln!(
                out,
                "This run splits the code work into slices, at most one per peer. Propose the split: before CLASS, one line\n\
                 per peer, `SLICE <peer> <file>…`, its files taken from split= (the first is its top target; no\n\
                 two peers with one top target); a peer left with nothing the goal concerns gets `REVIEW <peer>`\n\
                 instead (it endorses the slices). A split that breaks these rules is refused by name and the\n\
                 frame's own split is used."
            );
        }
        out.push_str(
            "ASSEMBLY: model the problem together with the other peers. Say who the agents are, what they\n\
             exchange and what \"better\" means, name the class of the problem, and derive the update rule\n\
             you will apply in CONVERGE: your next value as an expression over the class's named\n\
             quantities, with numbers, + - * /, parentheses, max, min, abs and clamp(x, low, high).\n\
             Derive the rule; do not compute the team's answer.\n",
        );
        if self.class.is_converge_class() {
            let _ =
                writeln!(out, "The run was seeded with class {}; name another if the problem is another.", self.class);
        }
        if let Some(reason) = self.reason {
            let _ = writeln!(out, "Your previous reply could not be used: {}", one_line(reason));
        }
        let _ = write!(
            out,
            "End your reply with exactly these lines:\nCLASS <name>\nUPDATE <expression>\n{}\n",
            handoff(self.next)
        );
        if !self.transcript.is_empty() {
            out.push_str("\nEarlier replies in this ASSEMBLY:\n");
            for (peer, reply) in self.transcript {
                let _ = writeln!(out, "--- {peer} ---\n{}\n--- end of {peer} ---", reply.trim_end());
            }
        }
        out
    }
}

impl ConvergePrompt<'_> {
    /// The prompt text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        header_start(&mut out, ProtocolPhase::Converge, self.run, self.agent);
        let _ = writeln!(out, "epoch={}", self.epoch);
        let _ = writeln!(out, "next={}", self.next.unwrap_or("DONE"));
        let _ = writeln!(out, "goal={}", one_line(self.goal));
        let _ = writeln!(out, "class={}", self.class);
        let _ = writeln!(out, "rule={}", one_line(self.rule));
        // The class's own order first, then anything else the view holds.
        let order: Vec<&str> = update_class(self.class).map(|c| c.names()).unwrap_or_default();
        for name in &order {
            if let Some(value) = self.quantities.get(*name) {
                let _ = writeln!(out, "quantity {name}={value}");
            }
        }
        for (name, value) in self.quantities.iter().filter(|(n, _)| !order.contains(&n.as_str())) {
            let _ = writeln!(out, "quantity {name}={value}");
        }
        attempt_lines(&mut out, self.attempt, self.reason);
        out.push('\n');
        out.push_str(
            "CONVERGE: apply your rule to the quantities above and announce the value it gives. Every\n\
             peer does the same with its own rule; the engine applies what is announced once the epoch\n\
             is full.\n",
        );
        if let Some(reason) = self.reason {
            let _ = writeln!(out, "Your previous reply could not be used: {}", one_line(reason));
        }
        let _ = write!(
            out,
            "End your reply with:\nANNOUNCE value=<number> agent={agent} epoch={epoch}\n\
             VOTE CONTINUE   (or VOTE STOP when you judge the team should stop)\n{handoff}\n",
            agent = self.agent,
            epoch = self.epoch,
            handoff = handoff(self.next),
        );
        out
    }
}

/// A prompt's header, as a program peer reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptHeader {
    /// `key=value` lines (the first occurrence of each key).
    pub fields: BTreeMap<String, String>,
    /// `quantity <name>=<value>` lines whose value is a finite number, in order.
    pub quantities: Vec<(String, f64)>,
    /// Header lines that could not be read, with why.
    pub problems: Vec<String>,
}

impl PromptHeader {
    /// Reads the header: the lines up to the first blank one (a first line equal to
    /// [`PROMPT_MAGIC`] is skipped).
    pub fn parse(text: &str) -> PromptHeader {
        let mut header = PromptHeader::default();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() {
                break;
            }
            if i == 0 && line == PROMPT_MAGIC {
                continue;
            }
            if let Some(rest) = line.strip_prefix("quantity ") {
                match rest.split_once('=') {
                    Some((name, value)) => match value.trim().parse::<f64>() {
                        Ok(v) if v.is_finite() => header.quantities.push((name.trim().to_owned(), v)),
                        _ => header.problems.push(format!("quantity {} has no finite value", name.trim())),
                    },
                    None => header.problems.push(format!("{line:?} has no '='")),
                }
                continue;
            }
            match line.split_once('=') {
                Some((key, value)) => {
                    header.fields.entry(key.trim().to_owned()).or_insert_with(|| value.trim().to_owned());
                }
                None => header.problems.push(format!("{line:?} has no '='")),
            }
        }
        header
    }

    /// A field's value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(String::as_str)
    }

    /// The phase, when the header names one.
    pub fn phase(&self) -> Option<ProtocolPhase> {
        match self.get("phase")? {
            "ASSEMBLY" => Some(ProtocolPhase::Assembly),
            "CONVERGE" => Some(ProtocolPhase::Converge),
            _ => None,
        }
    }

    /// The quantities as a map.
    pub fn quantity_map(&self) -> Quantities {
        self.quantities.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_converge_prompt_shows_rule_and_quantities_and_no_value() {
        let quantities: Quantities =
            [("state", 0.1 + 0.2), ("target", 4.0), ("beta", 0.75), ("degree", 2.0), ("neighbour_sum", 8.0)]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect();
        let prompt = ConvergePrompt {
            run: "r1",
            agent: "reference-1",
            next: Some("reference-2"),
            epoch: 3,
            goal: "agree\non scores",
            class: PatternKind::Preference,
            rule: "(target + 2*beta*neighbour_sum) / (1 + 2*beta*degree)",
            quantities: &quantities,
            attempt: 2,
            reason: Some("no line starts with `ANNOUNCE value=`"),
        }
        .render();
        assert!(prompt.starts_with("git-mas hop\nphase=CONVERGE\n"), "{prompt}");
        assert!(prompt.contains("goal=agree on scores\n"));
        assert!(prompt.contains("quantity state=0.30000000000000004\nquantity target=4\n"), "{prompt}");
        assert!(prompt.contains("ANNOUNCE value=<number> agent=reference-1 epoch=3"));
        assert!(prompt.contains("NEXT reference-2"));
        let header = PromptHeader::parse(&prompt);
        assert_eq!(header.phase(), Some(ProtocolPhase::Converge));
        assert_eq!(header.get("epoch"), Some("3"));
        assert_eq!(header.get("attempt"), Some("2"));
        assert_eq!(header.get("rule"), Some("(target + 2*beta*neighbour_sum) / (1 + 2*beta*degree)"));
        assert_eq!(header.quantity_map(), quantities, "values round-trip exactly");
        assert!(header.problems.is_empty());
    }

    #[test]
    fn an_assembly_prompt_names_the_quantities_and_quotes_the_transcript() {
        let peers = vec!["a".to_owned(), "b".to_owned()];
        let transcript = vec![("a".to_owned(), "CLASS preference\nUPDATE target\nNEXT b".to_owned())];
        let prompt = AssemblyPrompt {
            run: "r1",
            agent: "b",
            peers: &peers,
            next: None,
            goal: "g",
            class: PatternKind::Unmapped,
            attempt: 1,
            reason: None,
            transcript: &transcript,
            split: &[],
        }
        .render();
        let header = PromptHeader::parse(&prompt);
        assert_eq!(header.phase(), Some(ProtocolPhase::Assembly));
        assert_eq!(header.get("next"), Some("DONE"));
        assert_eq!(header.get("class"), Some("unmapped"));
        assert_eq!(header.get("quantities.resource"), Some("extraction,desired,price,stock,eta"));
        // The transcript's protocol lines are after the header, so they never read as header fields.
        assert_eq!(header.get("UPDATE target"), None);
        assert!(prompt.contains("--- a ---\nCLASS preference\nUPDATE target\nNEXT b\n--- end of a ---"));
        assert!(prompt.trim_end().ends_with("--- end of a ---"));
    }

    proptest! {
        #[test]
        fn header_parsing_never_panics(text in "\\PC{0,300}") {
            let header = PromptHeader::parse(&text);
            prop_assert!(header.quantities.iter().all(|(_, v)| v.is_finite()));
        }
    }
}

//! `git mas coordinate`: one command that takes a team of agents through ASSEMBLY and CONVERGE,
//! whatever the class.
//!
//! What runs is decided by [`route`], a pure function of `--pattern` and `--assembly`:
//!
//! - **preference, cascade, resource, unmapped**: ASSEMBLY first — it is where each peer's rule
//!   comes from — then CONVERGE on whatever class the team named, through the same driver as
//!   `git mas converge` ([`crate::coordinate::scalar`]), so the two commands give one report for one
//!   team. When ASSEMBLY names `development`, the development CONVERGE below follows; when it names
//!   a class git-mas has no engine for, the run stops there with the class named — a successful
//!   modelling outcome, not a failure.
//! - **development** (the default): CONVERGE on code artifacts ([`develop`]), with ASSEMBLY first
//!   only when `--assembly` asks for it.
//!
//! The development CONVERGE never does an agent's work: every proposal and every endorsement is
//! written by the agent itself, running `git mas propose` / `git mas endorse` in its own worktree
//! under its own identity. The driver starts the run, creates the worktrees, hops, waits for the
//! agents' records to appear in `refs/mas`, tallies, and lands once a quorum holds. The hop prompt
//! ([`DevPrompt`]) names the phase and the task; it never pastes a skill's text (agents load the
//! git-mas Agent Skills installed for their host).
//!
//! Decision: **the frame comes first.** When snapshot inputs are configured the frame is published
//! before the run starts, so that every agent's first hop already names the frame it focuses on
//! (DESIGN.md lists the run first; the order changes nothing recorded).
//!
//! Decision (departs from DESIGN.md's ref layout): **development hops are streamed, not stored.**
//! A development run's record is what its agents wrote (proposals, endorsements) plus the landing
//! and the report; storing the driver's prompts beside them would put non-event records into the
//! run's event chains, which every tally would then have to skip. A scalar run's hops *are* its
//! record (there is nothing else to replay), and they are stored as `git mas converge` stores them.

pub mod builtin;
pub mod coverage;
pub mod develop;
pub mod preflight;
pub mod scalar;

use crate::assembly::{Handoff, parse_handoff};
use crate::devrun::slices::Slice;
use crate::hosts::Host;
use crate::hosts::preset::Wiring;
use crate::peers::prompt::{PROMPT_MAGIC, one_line};
use crate::peers::{PeerEntry, PeerSpec};
use crate::runtime::PatternKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How `coordinate` proceeds for a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Route {
    /// ASSEMBLY, then CONVERGE on the class the team names (development included).
    AssemblyFirst,
    /// Straight to the development CONVERGE.
    Development,
}

/// The route for `--pattern pattern` with `--assembly` given or not.
pub fn route(pattern: PatternKind, assembly: bool) -> Route {
    match pattern {
        PatternKind::Development if !assembly => Route::Development,
        _ => Route::AssemblyFirst,
    }
}

/// The default CONVERGE cap for development: rounds of proposals and endorsements.
pub const DEFAULT_DEVELOPMENT_ROUNDS: u64 = 3;

/// What a development hop asks of an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Task {
    /// Work in your worktree, then `git mas propose`.
    Propose,
    /// Run `git mas endorse` on the listed proposals.
    Endorse,
    /// The run has ended: release what you hold.
    Close,
}

impl Task {
    /// The task's name, as in the prompt's `task=` line.
    pub fn name(self) -> &'static str {
        match self {
            Task::Propose => "propose",
            Task::Endorse => "endorse",
            Task::Close => "close",
        }
    }

    /// The task a name denotes.
    pub fn lookup(name: &str) -> Option<Task> {
        [Task::Propose, Task::Endorse, Task::Close].into_iter().find(|t| t.name() == name)
    }
}

/// A development hop.
///
/// Its header (the lines up to the first blank one, `key=value`) extends the scalar prompt's
/// contract ([`crate::peers::prompt`]): `phase=CONVERGE`, `run`, `agent`, `class=development`,
/// `task` (propose, endorse, close), `round`, `next`, `goal`, `worktree`, `frame` (when one is
/// published), `check` (the team's check command, when set), `endorse` (the agents whose
/// proposals to endorse), `landed` and `winners` (on close: the landing commit and whose work it
/// is), `attempt`, `reason`.
#[derive(Debug, Clone)]
pub struct DevPrompt<'a> {
    /// The run id.
    pub run: &'a str,
    /// The agent asked.
    pub agent: &'a str,
    /// The task.
    pub task: Task,
    /// The round (1-based).
    pub round: u64,
    /// The next agent in the ring (`None`: the last).
    pub next: Option<&'a str>,
    /// The team's goal.
    pub goal: &'a str,
    /// The agent's worktree.
    pub worktree: &'a str,
    /// The current frame's hash.
    pub frame: Option<&'a str>,
    /// The team's check command.
    pub check: Option<&'a str>,
    /// Whose proposals to endorse (endorse task).
    pub endorse: &'a [String],
    /// The landing commit (close task).
    pub landed: Option<&'a str>,
    /// Whose work landed (close task).
    pub winners: &'a [String],
    /// 1, or 2 when the previous reply could not be used.
    pub attempt: u32,
    /// Why the previous reply could not be used.
    pub reason: Option<&'a str>,
    /// The agent's slice, in an aggregate run.
    pub slice: Option<&'a Slice>,
    /// What the agent's focus names first: its slice's files the frame lists, at most
    /// [`crate::attention::rule::MAX_FOCUS_TARGETS`].
    pub focus: &'a [String],
    /// What the last round left for this agent to resolve (conflicts with whom, a failed check).
    pub notes: &'a [String],
}

impl DevPrompt<'_> {
    /// The prompt text: the header, the task's instructions, and how to end the reply.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.header(&mut out);
        out.push('\n');
        match self.task {
            Task::Propose => self.propose_steps(&mut out),
            Task::Endorse => self.endorse_steps(&mut out),
            Task::Close => self.close_steps(&mut out),
        }
        self.ending(&mut out);
        out
    }

    /// The `key=value` header lines.
    fn header(&self, out: &mut String) {
        let _ = writeln!(out, "{PROMPT_MAGIC}\nphase=CONVERGE\nrun={}\nagent={}", one_line(self.run), self.agent);
        let _ = writeln!(out, "class=development\ntask={}\nround={}", self.task.name(), self.round);
        let _ = writeln!(out, "next={}", self.next.unwrap_or("DONE"));
        let _ = writeln!(out, "goal={}", one_line(self.goal));
        let _ = writeln!(out, "worktree={}", one_line(self.worktree));
        if let Some(frame) = self.frame {
            let _ = writeln!(out, "frame={frame}");
        }
        if let Some(check) = self.check {
            let _ = writeln!(out, "check={}", one_line(check));
        }
        if !self.endorse.is_empty() {
            let _ = writeln!(out, "endorse={}", self.endorse.join(","));
        }
        if let Some(landed) = self.landed {
            let _ = writeln!(out, "landed={landed}");
        }
        if !self.winners.is_empty() {
            let _ = writeln!(out, "winners={}", self.winners.join(","));
        }
        let _ = writeln!(out, "attempt={}", self.attempt);
        if let Some(reason) = self.reason {
            let _ = writeln!(out, "reason={}", one_line(reason));
        }
        if let Some(slice) = self.slice {
            let _ = writeln!(out, "slice={}", slice.targets.join(","));
            let _ = writeln!(out, "subgoal={}", one_line(&slice.subgoal));
        }
        if !self.notes.is_empty() {
            let _ = writeln!(out, "conflict={}", one_line(&self.notes.join(" | ")));
        }
    }

    /// The propose task: focus (when a frame is published), edit, propose.
    fn propose_steps(&self, out: &mut String) {
        let agent = self.agent;
        let _ = writeln!(
            out,
            "CONVERGE (development), round {}: you are {agent}, working in your own worktree (above; this \
             hop runs in it).",
            self.round
        );
        if let Some(slice) = self.slice {
            self.slice_steps(slice, out);
            return;
        }
        if self.frame.is_some() {
            out.push_str(
                "1. Read the frame (`git mas frame`) and publish your focus on what you will change\n   \
                 (`git mas focus publish --targets <id>…`).\n2. Before editing, check the gate: \
                 `git mas gate --paths <path>…`; respect a Serialize decision.\n",
            );
        } else {
            out.push_str("1. Decide what to change for the goal.\n2. (No frame is published: no focus is needed.)\n");
        }
        out.push_str(
            "3. Edit the files in your worktree to achieve the goal.\n4. Run `git mas propose` in your worktree: \
             your worktree's content becomes your proposal.\n",
        );
    }

    /// The propose task of an aggregate run: the agent's own slice, and what to resolve.
    fn slice_steps(&self, slice: &Slice, out: &mut String) {
        let _ = writeln!(
            out,
            "This is an aggregate run: the goal is split into slices, one per agent, merged onto main together \
             once\nevery slice is in. Your slice: {}\n\
             1. Publish your focus from your slice: `git mas focus publish --targets {}`.\n\
             2. Change only your slice's files (other agents hold the others; the gate refuses them).\n\
             3. Run `git mas propose` in your worktree: your worktree's content becomes your slice's proposal.\n\
             If your slice needs no change for the goal, change nothing and say why instead: \
             `git mas propose --abstain -m \"<why>\"` (a proposal that changes nothing is refused).",
            slice.subgoal,
            self.focus.join(" ")
        );
        if !slice.why.is_empty() {
            out.push_str("Why these files are yours:\n");
            for t in &slice.targets {
                if let Some(why) = slice.why.get(t) {
                    let _ = writeln!(out, "  {t}: {}", one_line(why));
                }
            }
        }
        for note in self.notes {
            let _ = writeln!(out, "To resolve from the last round: {note}");
        }
    }

    /// The endorse task: run the check on each listed proposal.
    fn endorse_steps(&self, out: &mut String) {
        let agent = self.agent;
        let _ = writeln!(
            out,
            "CONVERGE (development), round {}: you are {agent}. Endorse each of these proposals by running\n\
             its check: `git mas endorse <agent>` for each of: {}.",
            self.round,
            self.endorse.join(", ")
        );
        out.push_str(
            "A failing check is recorded as a failed endorsement; that is a result, not an error. To\n\
             disagree on review instead, `git mas endorse <agent> --reject --reason <text>`.\n",
        );
    }

    /// The close task: the run has ended; release the focus when one's work landed.
    fn close_steps(&self, out: &mut String) {
        let agent = self.agent;
        let _ = writeln!(
            out,
            "The run has ended{}.",
            self.landed.map(|c| format!(": it landed as {c}")).unwrap_or_default()
        );
        if self.winners.iter().any(|w| w == agent) {
            out.push_str(
                "Your work landed. The focus you published in your worktree ended with the run; release any other \
                 focus you hold (`git mas focus release`) so others may go on.\n",
            );
        } else {
            out.push_str(
                "The focus you published in your worktree ended with the run; any other focus you hold stays \
                 yours until you release it.\n",
            );
        }
    }

    /// Why the previous reply could not be used, and the handoff line to end with.
    fn ending(&self, out: &mut String) {
        if let Some(reason) = self.reason {
            let _ = writeln!(out, "Your previous reply could not be used: {}", one_line(reason));
        }
        let _ = writeln!(
            out,
            "Say what you did, then end your reply with exactly one line: {}",
            match self.next {
                Some(peer) => format!("NEXT {peer}"),
                None => "DONE".to_owned(),
            }
        );
    }
}

/// Reads a development reply: its handoff, or why the reply cannot be used. A `NEXT` must name a
/// member of the run.
pub fn read_reply(text: &str, roster: &[String]) -> Result<Handoff, String> {
    match parse_handoff(text) {
        None => Err("the reply has no `NEXT <agent>` or `DONE` line".to_owned()),
        Some(Handoff::Next(peer)) if !roster.contains(&peer) => {
            Err(format!("NEXT {peer} names no member of this run ({})", roster.join(", ")))
        }
        Some(handoff) => Ok(handoff),
    }
}

/// What each preset agent's worktree is given in a development run: its host's edit hook (every
/// preset, unless the run turns the gate off) and the git-mas MCP server registered as the agent
/// (the presets whose host has a registration git-mas can write: [`crate::hosts::McpFacts`];
/// not goose's YAML). `cmd:` and built-in peers get neither.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TeamWiring {
    gated: BTreeMap<String, Host>,
    served: BTreeMap<String, Host>,
}

impl TeamWiring {
    /// The wiring of `peers`; `edit_gate` and `mcp` false leave every worktree without that part.
    pub fn of(peers: &[PeerEntry], edit_gate: bool, mcp: bool) -> TeamWiring {
        let presets = || {
            peers.iter().filter_map(|p| match &p.spec {
                PeerSpec::Preset { preset } => Some((p.name.clone(), *preset)),
                _ => None,
            })
        };
        TeamWiring {
            gated: if edit_gate { presets().collect() } else { BTreeMap::new() },
            served: if mcp { presets().filter(|(_, h)| h.facts().mcp.is_some()).collect() } else { BTreeMap::new() },
        }
    }

    /// The host whose edit hook `agent`'s worktree gets.
    pub fn gated(&self, agent: &str) -> Option<Host> {
        self.gated.get(agent).copied()
    }

    /// The host in whose configuration `agent`'s worktree gets the MCP server.
    pub fn served(&self, agent: &str) -> Option<Host> {
        self.served.get(agent).copied()
    }

    /// What `agent`'s session must be told about ([`Host::session_command_line`]).
    pub fn wiring(&self, agent: &str) -> Wiring {
        Wiring { edit_gate: self.gated.contains_key(agent), mcp: self.served.contains_key(agent) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_get_the_edit_hook_and_mcp_where_their_host_takes_it() {
        let peers = crate::peers::parse_agents(&["a=claude-code,g=goose,c=cmd:true,b=builtin:reference"]).unwrap();
        let all = TeamWiring::of(&peers, true, true);
        assert_eq!(all.gated("a"), Some(Host::ClaudeCode));
        assert_eq!(all.served("a"), Some(Host::ClaudeCode));
        assert_eq!(all.gated("g"), Some(Host::Goose));
        assert_eq!(all.served("g"), None, "goose's MCP registration is manual");
        for other in ["c", "b", "nobody"] {
            assert_eq!(all.wiring(other), Wiring::default());
        }
        assert_eq!(TeamWiring::of(&peers, false, true).wiring("a"), Wiring { edit_gate: false, mcp: true });
        assert_eq!(TeamWiring::of(&peers, true, false).wiring("a"), Wiring { edit_gate: true, mcp: false });
    }
    use crate::peers::prompt::PromptHeader;
    use crate::runtime::ProtocolPhase;

    #[test]
    fn routes_follow_the_pattern_and_the_assembly_flag() {
        assert_eq!(route(PatternKind::Development, false), Route::Development);
        assert_eq!(route(PatternKind::Development, true), Route::AssemblyFirst);
        for p in [PatternKind::Preference, PatternKind::Cascade, PatternKind::Resource, PatternKind::Unmapped] {
            assert_eq!(route(p, false), Route::AssemblyFirst, "{p}");
            assert_eq!(route(p, true), Route::AssemblyFirst, "{p}");
        }
    }

    #[test]
    fn an_aggregate_propose_hop_names_the_slice_and_what_to_resolve() {
        let slice = Slice {
            agent: "alice".into(),
            subgoal: "fix the bugs — your slice: src/tax.rs, src/lib.rs".into(),
            targets: vec!["src/tax.rs".into(), "src/lib.rs".into()],
            why: [("src/tax.rs".to_string(), "the failing check names it (tax::rounds)".to_string())].into(),
        };
        let focus = slice.targets.clone();
        let notes = vec!["artifact_mismatch with bob in README.md: both changed line 1".to_owned()];
        let text = DevPrompt {
            run: "r1",
            agent: "alice",
            task: Task::Propose,
            round: 2,
            next: Some("bob"),
            goal: "fix the bugs",
            worktree: "/w/alice",
            frame: Some("abc"),
            check: None,
            endorse: &[],
            landed: None,
            winners: &[],
            attempt: 1,
            reason: None,
            slice: Some(&slice),
            focus: &focus,
            notes: &notes,
        }
        .render();
        let h = PromptHeader::parse(&text);
        assert_eq!(h.get("slice"), Some("src/tax.rs,src/lib.rs"));
        assert_eq!(h.get("subgoal"), Some(slice.subgoal.as_str()));
        assert_eq!(h.get("conflict"), Some(notes[0].as_str()));
        assert!(text.contains("`git mas focus publish --targets src/tax.rs src/lib.rs`"), "{text}");
        assert!(text.contains("To resolve from the last round: artifact_mismatch with bob"), "{text}");
    }

    #[test]
    fn a_development_prompt_names_the_phase_and_task_in_its_header() {
        let endorse = vec!["bob".to_owned(), "carol".to_owned()];
        let text = DevPrompt {
            run: "r1",
            agent: "alice",
            task: Task::Endorse,
            round: 2,
            next: Some("bob"),
            goal: "fix\nrounding",
            worktree: "/w/alice",
            frame: Some("abc"),
            check: Some("cargo test"),
            endorse: &endorse,
            landed: None,
            winners: &[],
            attempt: 2,
            reason: Some("no DONE"),
            slice: None,
            focus: &[],
            notes: &[],
        }
        .render();
        let h = PromptHeader::parse(&text);
        assert_eq!(h.phase(), Some(ProtocolPhase::Converge));
        assert_eq!(h.get("class"), Some("development"));
        assert_eq!(h.get("task"), Some("endorse"));
        assert_eq!(h.get("goal"), Some("fix rounding"));
        assert_eq!(h.get("endorse"), Some("bob,carol"));
        assert_eq!(h.get("reason"), Some("no DONE"));
        assert!(text.contains("`git mas endorse <agent>` for each of: bob, carol"), "{text}");
        assert!(text.trim_end().ends_with("NEXT bob"), "{text}");
        assert!(!text.contains("SKILL"), "a hop names the phase, never a skill's body");
    }

    #[test]
    fn replies_need_a_handoff_to_a_member() {
        let roster = vec!["alice".to_owned(), "bob".to_owned()];
        assert_eq!(read_reply("done it\nNEXT bob\n", &roster), Ok(Handoff::Next("bob".into())));
        assert_eq!(read_reply("ok\nDONE", &roster), Ok(Handoff::Done));
        assert!(read_reply("I proposed.", &roster).unwrap_err().contains("no `NEXT"));
        assert!(read_reply("NEXT mallory", &roster).unwrap_err().contains("mallory"));
    }
}

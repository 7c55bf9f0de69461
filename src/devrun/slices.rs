//! The plan of an aggregate run: the goal split into complementary slices, one per agent, taken
//! from the frame (seed 001 §7: a seed task decomposed into sub-tasks whose outputs do not
//! overlap, each output to the pool, a wait-all barrier, one merged landing).
//!
//! A slice is an agent's sub-goal and its targets: whole files, highest saliency first, the first
//! its top target, each with why it is there. [`plan_from_frame`] covers what the goal concerns
//! ([`super::cover`]: the files the goal names, the files with errors, the files the failing check
//! names, and their neighbours, in coherent groups), or deals the frame's ranking when nothing
//! says what the goal concerns; either way no two slices share any file, so every pair of the slices' foci is Parallel under the
//! coordination rule, the gate never blocks inside the team, and the slices' changes merge
//! cleanly as long as each agent keeps to its files. Agents may instead propose the split
//! themselves ([`parse_slice_lines`]: `SLICE <agent> <target>…`), which is held to the rule's
//! own condition — no two slices with one top target — and to the frame: every target must be
//! one of its files. Either way the plan is checked by [`check_plan`] against the rule itself.
//!
//! Git-mas's own files (`.mas/`, the roster) are never in a slice. Targets are files (`path`), never symbols (`path#symbol`): the gate and the merge work on
//! files, and two slices holding two symbols of one file would meet in that file.
//!
//! The plan is recorded, signed, in the run's definition ([`super::RunDef::slices`]): the
//! aggregate landing merges the slices in the plan's order, and the report judges each slice.

use super::cover;
use crate::attention::rule::{self, Decision, Focus, MAX_FOCUS_TARGETS};
use crate::attention::snapshot::Snapshot;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use thiserror::Error;

/// One agent's part of the goal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slice {
    /// The agent.
    pub agent: String,
    /// What the agent is to do.
    pub subgoal: String,
    /// Its files, highest saliency first (the first is its top target).
    pub targets: Vec<String>,
    /// Why each file is in this slice ([`super::cover`]); empty in a split the agents proposed
    /// and in plans recorded before it was kept.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub why: BTreeMap<String, String>,
}

impl Slice {
    /// What its agent's focus names first: its files the frame lists (`listed`), at most
    /// [`MAX_FOCUS_TARGETS`] — the slice is the plan, the focus what the agent works on now.
    pub fn focus(&self, listed: impl Fn(&str) -> bool) -> Vec<String> {
        self.targets.iter().filter(|t| listed(t)).take(MAX_FOCUS_TARGETS).cloned().collect()
    }
}

/// Where a plan came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SliceSource {
    /// Dealt from the frame's ranking.
    Frame,
    /// What the goal concerns, in coherent groups ([`super::cover`]).
    Concerns,
    /// Proposed by the agents (`SLICE` lines).
    Agents,
}

/// The slices of an aggregate run, in merge order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlicePlan {
    /// The frame hash the targets were taken from.
    pub frame: String,
    /// Where the split came from.
    pub source: SliceSource,
    /// The slices, one per agent, in the order they are merged.
    pub slices: Vec<Slice>,
}

impl SlicePlan {
    /// The slice of `agent`.
    pub fn slice(&self, agent: &str) -> Option<&Slice> {
        self.slices.iter().find(|s| s.agent == agent)
    }

    /// The agent whose slice holds `path`, if any.
    pub fn owner_of(&self, path: &str) -> Option<&str> {
        self.slices.iter().find(|s| s.targets.iter().any(|t| t == path)).map(|s| s.agent.as_str())
    }

    /// The agents in merge order.
    pub fn agents(&self) -> Vec<String> {
        self.slices.iter().map(|s| s.agent.clone()).collect()
    }
}

/// Why a plan cannot be made or is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SliceError {
    /// The frame has fewer files than there are agents.
    #[error("the frame ranks {files} file(s), too few for {agents} slices: every agent needs a top target of its own")]
    TooFewTargets {
        /// Files in the frame.
        files: usize,
        /// Agents.
        agents: usize,
    },
    /// A proposed target is not one of the frame's files.
    #[error("SLICE {agent}: {target:?} is not a file of the frame")]
    UnknownTarget {
        /// Whose slice.
        agent: String,
        /// The target.
        target: String,
    },
    /// Two slices have one top target: the rule would serialize them.
    #[error("SLICE {first} and SLICE {second} share their top target {target}: the rule would serialize them")]
    SharedTop {
        /// One agent.
        first: String,
        /// The other.
        second: String,
        /// The target.
        target: String,
    },
    /// A slice names an agent that is not in the team, or one twice.
    #[error("SLICE {agent}: {why}")]
    Agent {
        /// The agent named.
        agent: String,
        /// What is wrong.
        why: String,
    },
    /// A team member has no slice.
    #[error("no SLICE line for {agent}")]
    Missing {
        /// The agent.
        agent: String,
    },
    /// A line starting `SLICE` that is not `SLICE <agent> <target>…`.
    #[error("unreadable SLICE line {line:?}: expected `SLICE <agent> <target>…`")]
    Unreadable {
        /// The line.
        line: String,
    },
}

/// Lock files package managers write: regenerated, never the work of a slice.
const LOCK_FILES: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "bun.lock",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "pdm.lock",
    "Gemfile.lock",
    "composer.lock",
    "go.sum",
    "flake.lock",
    "mix.lock",
    "pubspec.lock",
    "Podfile.lock",
    "packages.lock.json",
];

/// Whether `path` is generated rather than written: a package manager's lock file, or a minified
/// script or style sheet (`*.min.js`, `*.min.css`).
pub fn is_generated(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    LOCK_FILES.contains(&name) || name.ends_with(".min.js") || name.ends_with(".min.css")
}

/// The frame's files (targets without `#`), highest saliency first, without git-mas's own
/// (`.mas/`: the roster is the team's state, not its work) and without generated files
/// ([`is_generated`]: a lock file is not a slice of the goal).
pub fn frame_files(snapshot: &Snapshot) -> Vec<String> {
    let mut seen = BTreeSet::new();
    snapshot
        .targets
        .iter()
        .filter(|t| !t.id.contains('#') && !t.id.starts_with(".mas/") && !is_generated(&t.id))
        .filter(|t| seen.insert(t.id.clone()))
        .map(|t| t.id.clone())
        .collect()
}

/// The sub-goal of a slice: the goal, narrowed to the slice's files.
pub fn subgoal(goal: &str, targets: &[String]) -> String {
    let goal = goal.lines().next().unwrap_or("").trim();
    format!("{goal} — your slice: {} (change no other file)", targets.join(", "))
}

/// Deals `files` to `agents` (pure): agent `i` gets the `i`-th as its top target, then every
/// `n`-th after it, at most [`MAX_FOCUS_TARGETS`] each; `None` when there are fewer files than
/// agents (or no agent).
pub fn deal(files: &[String], agents: &[String]) -> Option<Vec<Vec<String>>> {
    let n = agents.len();
    if n == 0 || files.len() < n {
        return None;
    }
    Some((0..n).map(|i| files.iter().skip(i).step_by(n).take(MAX_FOCUS_TARGETS).cloned().collect()).collect())
}

/// The plan from the frame (pure): the slices that cover what the goal concerns
/// ([`cover::plan_covering`]) when `coverage` has a seed; else the frame's files dealt to
/// `agents` — agent `i` gets the `i`-th file as its top target, then every `n`-th file after it,
/// at most [`MAX_FOCUS_TARGETS`] each. No file in two slices; the slices in the agents' order.
pub fn plan_from_frame(
    goal: &str,
    agents: &[String],
    snapshot: &Snapshot,
    frame: &str,
    coverage: Option<&Coverage>,
) -> Result<SlicePlan, SliceError> {
    let files = frame_files(snapshot);
    if let Some(c) = coverage
        && let Some(plan) = cover::plan_covering(goal, agents, &files, frame, &c.seeds, &c.neighbours)
    {
        return plan.map_err(|files| SliceError::TooFewTargets { files, agents: agents.len() });
    }
    let dealt = deal(&files, agents).ok_or(SliceError::TooFewTargets { files: files.len(), agents: agents.len() })?;
    let rank: BTreeMap<&str, usize> = files.iter().enumerate().map(|(i, f)| (f.as_str(), i + 1)).collect();
    let slices = agents
        .iter()
        .zip(dealt)
        .map(|(agent, targets)| {
            let why = targets
                .iter()
                .map(|t| (t.clone(), format!("ranked #{} in the frame", rank.get(t.as_str()).copied().unwrap_or(0))))
                .collect();
            Slice { agent: agent.clone(), subgoal: subgoal(goal, &targets), targets, why }
        })
        .collect();
    Ok(SlicePlan { frame: frame.into(), source: SliceSource::Frame, slices })
}

/// What the goal concerns, for [`plan_from_frame`]: the seeds and their neighbours
/// ([`super::cover`]).
#[derive(Debug, Clone, Default)]
pub struct Coverage {
    /// The seeds and why.
    pub seeds: BTreeMap<String, Vec<cover::Evidence>>,
    /// Each seed's neighbours.
    pub neighbours: BTreeMap<String, Vec<(String, cover::Via)>>,
}

/// The slices proposed by `SLICE <agent> <target>…` lines in `text` (other lines are ignored),
/// checked: every agent of `agents` exactly once, every target a file of the frame, no two
/// slices with one top target. A slice may hold more files than a focus: the slice is the plan,
/// the focus what its agent works on now. `Ok(None)` when
/// the text has no `SLICE` line. The slices are in the lines' order.
pub fn parse_slice_lines(
    text: &str,
    goal: &str,
    agents: &[String],
    snapshot: &Snapshot,
    frame: &str,
) -> Result<Option<SlicePlan>, SliceError> {
    let files: BTreeSet<String> = frame_files(snapshot).into_iter().collect();
    let mut slices: Vec<Slice> = Vec::new();
    for line in text.lines().map(str::trim) {
        let mut words = line.split_whitespace();
        if words.next() != Some("SLICE") {
            continue;
        }
        let (Some(agent), targets) = (words.next(), words.collect::<Vec<_>>()) else {
            return Err(SliceError::Unreadable { line: line.into() });
        };
        if targets.is_empty() {
            return Err(SliceError::Unreadable { line: line.into() });
        }
        if !agents.iter().any(|a| a == agent) {
            return Err(SliceError::Agent { agent: agent.into(), why: "not in the team".into() });
        }
        if slices.iter().any(|s| s.agent == agent) {
            return Err(SliceError::Agent { agent: agent.into(), why: "has two SLICE lines".into() });
        }
        let mut own: Vec<String> = Vec::new();
        for target in targets {
            if !files.contains(target) {
                return Err(SliceError::UnknownTarget { agent: agent.into(), target: target.into() });
            }
            if !own.iter().any(|t| t == target) {
                own.push(target.into());
            }
        }
        slices.push(Slice { agent: agent.into(), subgoal: subgoal(goal, &own), targets: own, why: BTreeMap::new() });
    }
    if slices.is_empty() {
        return Ok(None);
    }
    if let Some(agent) = agents.iter().find(|a| !slices.iter().any(|s| &s.agent == *a)) {
        return Err(SliceError::Missing { agent: agent.clone() });
    }
    let plan = SlicePlan { frame: frame.into(), source: SliceSource::Agents, slices };
    check_plan(&plan)?;
    Ok(Some(plan))
}

/// Where an aggregate run's plan came from, when the agents had their say in an ASSEMBLY.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanChoice {
    /// The agents' own split.
    Agents,
    /// No ASSEMBLY reply has `SLICE` lines: dealt from the frame.
    Unsaid,
    /// The agents' split is refused (why): dealt from the frame.
    Refused(String),
    /// No ASSEMBLY ran: dealt from the frame.
    Frame,
}

/// An aggregate run's plan: the agents' own split from their ASSEMBLY replies (the last reply
/// with `SLICE` lines: a later peer, who read the earlier replies, may amend the split) when it
/// is valid, else the frame's files dealt to `agents` in their order.
pub fn choose_plan(
    goal: &str,
    agents: &[String],
    snapshot: &Snapshot,
    frame: &str,
    assembly: Option<&[String]>,
    coverage: Option<&Coverage>,
) -> Result<(SlicePlan, PlanChoice), SliceError> {
    let said = |reply: &&String| reply.lines().any(|l| l.trim_start().starts_with("SLICE "));
    let choice = match assembly {
        None => PlanChoice::Frame,
        Some(replies) => {
            let last = replies.iter().rev().find(said).map_or("", String::as_str);
            match parse_slice_lines(last, goal, agents, snapshot, frame) {
                Ok(Some(plan)) => return Ok((plan, PlanChoice::Agents)),
                Ok(None) => PlanChoice::Unsaid,
                Err(refused) => PlanChoice::Refused(refused.to_string()),
            }
        }
    };
    Ok((plan_from_frame(goal, agents, snapshot, frame, coverage)?, choice))
}

/// Checks the plan against the coordination rule: every pair of its slices' foci (on its frame)
/// is Parallel. The first pair that is not is the error.
pub fn check_plan(plan: &SlicePlan) -> Result<(), SliceError> {
    let foci: Vec<Focus> = plan
        .slices
        .iter()
        .map(|s| Focus { agent: s.agent.clone(), frame: plan.frame.clone(), seq: 1, targets: s.targets.clone() })
        .collect();
    for (i, a) in foci.iter().enumerate() {
        for b in &foci[i + 1..] {
            if let Decision::Serialize { target, .. } = rule::decide(a, b) {
                return Err(SliceError::SharedTop { first: a.agent.clone(), second: b.agent.clone(), target });
            }
        }
    }
    Ok(())
}

/// Which slices share a file with another (a plan from the agents may): file → the agents.
pub fn shared_files(plan: &SlicePlan) -> BTreeMap<String, Vec<String>> {
    let mut by_file: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in &plan.slices {
        for t in &s.targets {
            by_file.entry(t.clone()).or_default().push(s.agent.clone());
        }
    }
    by_file.retain(|_, agents| agents.len() > 1);
    by_file
}

#[cfg(test)]
#[path = "slices_tests.rs"]
mod tests;

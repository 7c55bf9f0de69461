//! The plan of an aggregate run: the goal split into complementary slices, at most one per agent
//! (an agent left without one reviews: [`SlicePlan::reviewers`]), taken from the frame (seed 001 §7: a seed task decomposed into sub-tasks whose outputs do not
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

/// An agent of an aggregate run with no slice: it reviews (endorses) the slices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reviewer {
    /// The agent.
    pub agent: String,
    /// Why it has no slice.
    pub why: String,
}

/// The slices of an aggregate run, in merge order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlicePlan {
    /// The frame hash the targets were taken from.
    pub frame: String,
    /// Where the split came from.
    pub source: SliceSource,
    /// The slices, at most one per agent, in the order they are merged.
    pub slices: Vec<Slice>,
    /// The agents with no slice (fewer concerned groups than agents): they review — endorse the
    /// slices — and propose nothing. Empty in plans recorded before reviewers existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviewers: Vec<Reviewer>,
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

    /// The agents with a slice, in merge order.
    pub fn agents(&self) -> Vec<String> {
        self.slices.iter().map(|s| s.agent.clone()).collect()
    }

    /// Every agent of the plan: the slices' agents in merge order, then the reviewers.
    pub fn members(&self) -> Vec<String> {
        self.slices.iter().map(|s| &s.agent).chain(self.reviewers.iter().map(|r| &r.agent)).cloned().collect()
    }

    /// Whether `agent` reviews (has no slice but is in the plan).
    pub fn reviews(&self, agent: &str) -> bool {
        self.reviewers.iter().any(|r| r.agent == agent)
    }
}

/// `a third slice`, for the `n`-th slice (1-based) of a plan.
pub fn nth_slice(n: usize) -> String {
    const ORDINALS: &[&str] = &["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"];
    ORDINALS.get(n.wrapping_sub(1)).map_or_else(|| format!("slice #{n}"), |w| format!("a {w} slice"))
}

/// Why a plan cannot be made or is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SliceError {
    /// The frame has fewer files than there are agents.
    #[error(
        "the frame ranks {files} file(s) a slice could hold, too few for {agents} agent(s): every slice needs a top target of its own"
    )]
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
    /// A team member has no slice and is not named a reviewer.
    #[error("no SLICE or REVIEW line for {agent}")]
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

/// A project's housekeeping files: manifests, ignore files, its README, licence and changelog.
/// Work only when evidence names them (the goal, the check's output); never dealt as filler.
const HOUSEKEEPING: &[&str] = &[
    ".gitignore",
    ".gitattributes",
    ".gitmodules",
    ".editorconfig",
    ".dockerignore",
    "Cargo.toml",
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "tox.ini",
    "MANIFEST.in",
    "requirements.txt",
    "package.json",
    "tsconfig.json",
    "go.mod",
    "Gemfile",
    "rustfmt.toml",
    "clippy.toml",
    "rust-toolchain.toml",
];

/// Whether `path` is filler when nothing names it: generated ([`is_generated`]), a manifest or
/// ignore file (`HOUSEKEEPING`), or a README, LICENSE, CHANGELOG, CONTRIBUTING or NOTICE.
pub fn is_filler(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let upper = name.to_ascii_uppercase();
    let stem = upper.split('.').next().unwrap_or(&upper);
    is_generated(path)
        || HOUSEKEEPING.contains(&name)
        || matches!(stem, "README" | "LICENSE" | "LICENCE" | "COPYING" | "CHANGELOG" | "CONTRIBUTING" | "NOTICE")
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
/// ([`cover::plan_covering`]) when `coverage` has a seed. Else — nothing says what the goal
/// concerns: a check that passes, no diagnostics, a goal that names no file — the frame's files
/// that are not filler ([`is_filler`]) are dealt to `agents`, and each file's reason says so:
/// agent `i` gets the `i`-th file as its top target, then every `n`-th file after it, at most
/// [`MAX_FOCUS_TARGETS`] each; agents beyond the files review. No file in two slices; the slices
/// in the agents' order.
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
        return Ok(plan);
    }
    let rank: BTreeMap<&str, usize> = files.iter().enumerate().map(|(i, f)| (f.as_str(), i + 1)).collect();
    let work: Vec<String> = files.iter().filter(|f| !is_filler(f)).cloned().collect();
    let n = agents.len().min(work.len());
    let dealt =
        deal(&work, &agents[..n]).ok_or(SliceError::TooFewTargets { files: work.len(), agents: agents.len() })?;
    let slices = agents
        .iter()
        .zip(dealt)
        .map(|(agent, targets)| {
            let why = targets
                .iter()
                .map(|t| {
                    let r = rank.get(t.as_str()).copied().unwrap_or(0);
                    (t.clone(), format!("ranked #{r} in the frame (nothing says what the goal concerns)"))
                })
                .collect();
            Slice { agent: agent.clone(), subgoal: subgoal(goal, &targets), targets, why }
        })
        .collect();
    let reviewers = agents[n..]
        .iter()
        .enumerate()
        .map(|(i, agent)| Reviewer {
            agent: agent.clone(),
            why: format!(
                "nothing says what the goal concerns, and the frame has no file left for {}",
                nth_slice(n + i + 1)
            ),
        })
        .collect();
    Ok(SlicePlan { frame: frame.into(), source: SliceSource::Frame, slices, reviewers })
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

/// The slices proposed by `SLICE <agent> <target>…` lines in `text`, and the reviewers named by
/// `REVIEW <agent> [why…]` lines (other lines are ignored), checked: every agent of `agents`
/// exactly once (in a slice or reviewing), at least one slice, every target a file of the frame,
/// no two slices with one top target. A slice may hold more files than a focus: the slice is the plan,
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
    let mut reviewers: Vec<Reviewer> = Vec::new();
    let named = |agent: &str, slices: &[Slice], reviewers: &[Reviewer]| {
        slices.iter().any(|s| s.agent == agent) || reviewers.iter().any(|r| r.agent == agent)
    };
    for line in text.lines().map(str::trim) {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("SLICE") => {}
            Some("REVIEW") => {
                let Some(agent) = words.next() else {
                    return Err(SliceError::Unreadable { line: line.into() });
                };
                if !agents.iter().any(|a| a == agent) {
                    return Err(SliceError::Agent { agent: agent.into(), why: "not in the team".into() });
                }
                if named(agent, &slices, &reviewers) {
                    return Err(SliceError::Agent { agent: agent.into(), why: "is named twice".into() });
                }
                let why = words.collect::<Vec<_>>().join(" ");
                let why = if why.is_empty() { "the agents' split leaves it no slice".to_string() } else { why };
                reviewers.push(Reviewer { agent: agent.into(), why });
                continue;
            }
            _ => continue,
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
        if named(agent, &slices, &reviewers) {
            return Err(SliceError::Agent { agent: agent.into(), why: "is named twice".into() });
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
    if slices.is_empty() && reviewers.is_empty() {
        return Ok(None);
    }
    if let Some(agent) = agents.iter().find(|a| !named(a, &slices, &reviewers)) {
        return Err(SliceError::Missing { agent: agent.clone() });
    }
    let plan = SlicePlan { frame: frame.into(), source: SliceSource::Agents, slices, reviewers };
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
    let said = |reply: &&String| {
        reply.lines().map(str::trim_start).any(|l| l.starts_with("SLICE ") || l.starts_with("REVIEW "))
    };
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

/// Checks the plan: at least one slice, no agent named twice (in two slices, or in a slice and
/// reviewing), and under the coordination rule every pair of its slices' foci (on its frame) is
/// Parallel. The first fault is the error.
pub fn check_plan(plan: &SlicePlan) -> Result<(), SliceError> {
    let members = plan.members();
    for (i, agent) in members.iter().enumerate() {
        if members[..i].contains(agent) {
            return Err(SliceError::Agent { agent: agent.clone(), why: "is named twice".into() });
        }
    }
    if plan.slices.is_empty() {
        return Err(SliceError::TooFewTargets { files: 0, agents: members.len() });
    }
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

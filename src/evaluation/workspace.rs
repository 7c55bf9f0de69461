//! The two-coder workspace simulation.
//!
//! A run generates a workspace of `files` files with SCIP-like centrality (heavy-tailed inbound
//! reference counts), diagnostics (errors and warnings on some files), history (commits since each
//! file last changed) and a task that names a quarter of the files. Each coder is given a work
//! list: a quarter of the files drawn with probability proportional to their saliency in the
//! snapshot, so both are drawn to the same hot files. At each step every unfinished coder
//! re-snapshots the workspace (production [`snapshot::compute`]; both coders compute it and must
//! reach the same frame hash), derives its focus — the first [`FOCUS`] of its remaining files in the
//! snapshot's order ([`derive_focus`]) — and plans an edit: its top file (which completes that
//! item), plus spill-over into each other focus file with probability [`SPILL`] and, with
//! probability [`HUB`], into a hub file drawn by centrality (a shared module any change may need).
//! A step in which the two coders' edits touch a common file is a conflict.
//!
//! Without the protocol both coders edit as planned. With it, each coder publishes its focus and
//! asks the production gate ([`gate`]) before editing: a blocked top file means the coder waits
//! this step (the deferral); a blocked spill file is left out of this step's edit. With
//! [`Overlap::Any`] the deferring coder of [`decide_overlap`] also keeps out of every target the
//! two foci share (from [`align`]), waiting when its top is among them. Conflicts that remain come
//! from files outside the holder's top: spill into a shared non-top focus file (`top` only) and hub
//! files that neither focus names.
//!
//! Edited files become touched in the working tree (recency 1) and a completed file's diagnostics
//! are fixed, so the snapshot, and the frame, move with the work.

use super::rng::Stream;
use super::stats::{Mean, Proportion, mean, wilson};
use crate::attention::gate::{Touched, Verdict, gate};
use crate::attention::rule::{Decision, Focus, Overlap, align, decide_overlap, derive_focus};
use crate::attention::snapshot::{self, DiagFact, FileFacts, Snapshot, SnapshotInput};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Targets in a coder's focus.
pub const FOCUS: usize = 3;
/// Probability that an edit spills into each other file of the coder's focus.
pub const SPILL: f64 = 0.2;
/// Probability that an edit also touches a hub file (drawn by centrality).
pub const HUB: f64 = 0.1;
/// The two coders (the rule's holder is the smaller name).
pub const CODERS: [&str; 2] = ["coder-a", "coder-b"];
/// Stream tag of this harness.
const TAG: u64 = 0x5EA1;

/// The harness's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkspaceConfig {
    /// Seed of every draw.
    pub seed: u64,
    /// Runs per arm.
    pub runs: u64,
    /// Files in the workspace.
    pub files: usize,
    /// When the protocol serializes.
    pub overlap: Overlap,
}

impl Default for WorkspaceConfig {
    fn default() -> Self {
        WorkspaceConfig { seed: 0, runs: 200, files: 24, overlap: Overlap::Top }
    }
}

#[derive(Debug, Clone)]
struct File {
    path: String,
    refs: u64,
    errors: u32,
    warnings: u32,
    since: Option<usize>,
    touched: bool,
}

#[derive(Debug, Clone)]
struct Workspace {
    files: Vec<File>,
    named: BTreeSet<String>,
}

impl Workspace {
    fn generate(s: &mut Stream, n: usize) -> Workspace {
        let files = (0..n)
            .map(|i| File {
                path: format!("src/m{i:03}.rs"),
                // Heavy tail, in integers (no `exp`, whose last bit differs between math
                // libraries): a uniform octave k in 0..8, then uniform within [2^k − 1, 2^(k+1) − 1).
                refs: {
                    let k = s.below(8);
                    (1u64 << k) - 1 + s.below(1u64 << k)
                },
                errors: if s.chance(0.25) { 1 + s.below(3) as u32 } else { 0 },
                warnings: if s.chance(0.3) { 1 + s.below(4) as u32 } else { 0 },
                since: if s.chance(0.6) { Some(s.index(20)) } else { None },
                touched: false,
            })
            .collect::<Vec<_>>();
        let mut order: Vec<usize> = (0..n).collect();
        s.shuffle(&mut order);
        let named = order.iter().take(n.div_ceil(4)).map(|&i| files[i].path.clone()).collect();
        Workspace { files, named }
    }

    fn input(&self) -> SnapshotInput {
        let mut input = SnapshotInput::default();
        for f in &self.files {
            input.files.push(FileFacts { path: f.path.clone(), touched: f.touched, commits_since: f.since });
            if f.refs > 0 {
                input.doc_refs.insert(f.path.clone(), f.refs);
            }
            for i in 0..f.errors + f.warnings {
                input.diagnostics.push(DiagFact { path: f.path.clone(), line: Some(1), error: i < f.errors });
            }
        }
        input.sources.recency = "harness".into();
        input
    }

    fn snapshot(&self) -> (Snapshot, String) {
        let snap = snapshot::compute(&self.input(), |id| self.named.contains(id));
        let hash = snap.frame_hash();
        (snap, hash)
    }

    fn index(&self, path: &str) -> Option<usize> {
        self.files.iter().position(|f| f.path == path)
    }
}

/// Draws `k` distinct items with probability proportional to `weight` (zero weights never).
fn weighted_sample(s: &mut Stream, items: &[(usize, f64)], k: usize) -> Vec<usize> {
    let mut pool: Vec<(usize, f64)> = items.iter().copied().filter(|(_, w)| *w > 0.0).collect();
    let mut out = Vec::new();
    while out.len() < k && !pool.is_empty() {
        let total: f64 = pool.iter().map(|(_, w)| w).sum();
        let mut x = s.unit() * total;
        let mut pick = pool.len() - 1;
        for (j, (_, w)) in pool.iter().enumerate() {
            if x < *w {
                pick = j;
                break;
            }
            x -= w;
        }
        out.push(pool.remove(pick).0);
    }
    out
}

/// One run of one arm.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Steps until both coders finished (or the step cap).
    pub steps: u64,
    /// Steps in which both edits touched a common file.
    pub conflict_steps: u64,
    /// Coder-steps spent waiting on a blocked top file.
    pub waits: u64,
    /// Gate verdicts that failed closed (should stay 0: both coders share every frame).
    pub fail_closed: u64,
    /// Frames whose hash the two coders computed differently (must stay 0).
    pub frame_splits: u64,
    /// Whether both work lists were done before the cap.
    pub finished: bool,
}

fn touched_of(paths: &BTreeSet<String>) -> Vec<Touched> {
    paths.iter().map(|p| Touched { path: p.clone(), lines: None }).collect()
}

/// One run in progress: the workspace, each coder's remaining work list, and the counts so far.
struct Sim<'c> {
    cfg: &'c WorkspaceConfig,
    run: u64,
    ws: Workspace,
    /// Hub weights: every file by its centrality.
    hub_weights: Vec<(usize, f64)>,
    remaining: Vec<BTreeSet<String>>,
    result: RunResult,
}

impl<'c> Sim<'c> {
    /// Generates the run's workspace and draws both work lists by saliency.
    fn new(cfg: &'c WorkspaceConfig, run: u64) -> Sim<'c> {
        let mut s = Stream::new(cfg.seed, &[TAG, run]);
        let ws = Workspace::generate(&mut s, cfg.files);
        let (snap0, _) = ws.snapshot();
        let weights: Vec<(usize, f64)> =
            snap0.targets.iter().filter_map(|t| ws.index(&t.id).map(|i| (i, t.saliency))).collect();
        let work = cfg.files.div_ceil(4);
        let remaining = (0..2)
            .map(|_| weighted_sample(&mut s, &weights, work).into_iter().map(|i| ws.files[i].path.clone()).collect())
            .collect();
        let hub_weights = ws.files.iter().enumerate().map(|(i, f)| (i, f.refs as f64)).collect();
        Sim { cfg, run, ws, hub_weights, remaining, result: RunResult::default() }
    }

    /// Whether a coder still has work.
    fn unfinished(&self) -> bool {
        self.remaining.iter().any(|r| !r.is_empty())
    }

    /// One step: both coders snapshot, plan, (with the protocol) ask the gate, and edit.
    fn step(&mut self, protocol: bool) {
        self.result.steps += 1;
        // Both coders snapshot the shared workspace.
        let (snap, frame) = self.ws.snapshot();
        let (_, frame_b) = self.ws.snapshot();
        if frame != frame_b {
            self.result.frame_splits += 1;
        }
        let mut foci: Vec<Option<Focus>> = vec![None, None];
        let mut plans: Vec<BTreeSet<String>> = vec![BTreeSet::new(), BTreeSet::new()];
        for c in 0..2 {
            if !self.remaining[c].is_empty() {
                let (focus, plan) = self.plan(c, &snap, &frame);
                plans[c] = plan;
                foci[c] = Some(focus);
            }
        }
        let mut tops: Vec<Option<String>> =
            foci.iter().map(|f| f.as_ref().and_then(|f| f.top().map(String::from))).collect();
        if protocol {
            plans = self.gate_plans(&foci, &plans, &mut tops, &frame);
        }
        if plans[0].intersection(&plans[1]).next().is_some() {
            self.result.conflict_steps += 1;
        }
        self.edit(&plans, &tops);
    }

    /// Coder `c`'s focus and planned edit: its top file, spill into each other focus file, and
    /// perhaps a hub file. The same draws in both arms, from a stream per (run, step, coder).
    fn plan(&self, c: usize, snap: &Snapshot, frame: &str) -> (Focus, BTreeSet<String>) {
        let steps = self.result.steps;
        let mut f = derive_focus(CODERS[c], steps, snap, frame, &|id| self.remaining[c].contains(id));
        f.targets.truncate(FOCUS);
        let mut ps = Stream::new(self.cfg.seed, &[TAG, self.run, steps, c as u64]);
        let mut plan = BTreeSet::new();
        for (k, t) in f.targets.iter().enumerate() {
            let spill = ps.chance(SPILL);
            if k == 0 || spill {
                plan.insert(t.clone());
            }
        }
        if ps.chance(HUB)
            && let Some(&h) = weighted_sample(&mut ps, &self.hub_weights, 1).first()
        {
            plan.insert(self.ws.files[h].path.clone());
        }
        (f, plan)
    }

    /// The protocol: what each coder may edit after asking the gate. A coder whose top file is
    /// held, or whose remaining edit does not pass, waits (its plan is emptied and its top unset).
    fn gate_plans(
        &mut self,
        foci: &[Option<Focus>],
        plans: &[BTreeSet<String>],
        tops: &mut [Option<String>],
        frame: &str,
    ) -> Vec<BTreeSet<String>> {
        let no_lines = |_: &str| None;
        let mut allowed = plans.to_vec();
        for c in 0..2 {
            let (Some(mine), Some(top)) = (&foci[c], tops[c].clone()) else { continue };
            let others: Vec<Focus> = foci[1 - c].iter().cloned().collect();
            let held = self.held(c, mine, &others, &plans[c], &top, frame);
            let waits = if held.contains(&top) {
                true
            } else {
                allowed[c].retain(|p| !held.contains(p));
                // What remains must pass the gate.
                !matches!(
                    gate(CODERS[c], Some(mine), Some(frame), &others, &touched_of(&allowed[c]), &no_lines),
                    Verdict::Allow { .. }
                )
            };
            if waits {
                allowed[c].clear();
                tops[c] = None;
                self.result.waits += 1;
            }
        }
        allowed
    }

    /// The files coder `c` must keep out of: those the gate blocks in its plan (its top when the
    /// gate fails closed) and, with [`Overlap::Any`], the shared targets when it is the deferring
    /// coder.
    fn held(
        &mut self,
        c: usize,
        mine: &Focus,
        others: &[Focus],
        plan: &BTreeSet<String>,
        top: &str,
        frame: &str,
    ) -> BTreeSet<String> {
        let mut held: BTreeSet<String> = BTreeSet::new();
        match gate(CODERS[c], Some(mine), Some(frame), others, &touched_of(plan), &|_: &str| None) {
            Verdict::Allow { .. } => {}
            Verdict::Block { blocks } => held.extend(blocks.into_iter().map(|b| b.target)),
            Verdict::FailClosed { .. } => {
                self.result.fail_closed += 1;
                held.insert(top.to_owned());
            }
        }
        if self.cfg.overlap == Overlap::Any
            && let Some(other) = others.first()
            && let Decision::Serialize { deferring, .. } = decide_overlap(mine, other, Overlap::Any)
            && deferring == CODERS[c]
            && let Ok(al) = align(mine, other)
        {
            held.extend(al.shared);
        }
        held
    }

    /// Edited files become touched; a coder's top file is done and its diagnostics fixed.
    fn edit(&mut self, plans: &[BTreeSet<String>], tops: &[Option<String>]) {
        for c in 0..2 {
            for p in &plans[c] {
                if let Some(i) = self.ws.index(p) {
                    self.ws.files[i].touched = true;
                }
            }
            if let Some(top) = &tops[c] {
                self.remaining[c].remove(top);
                if let Some(i) = self.ws.index(top) {
                    self.ws.files[i].errors = 0;
                    self.ws.files[i].warnings = 0;
                }
            }
        }
    }
}

/// Simulates one run. `protocol`: publish foci and ask the gate; `overlap`: the serialization rule.
fn simulate(cfg: &WorkspaceConfig, run: u64, protocol: bool) -> RunResult {
    let mut sim = Sim::new(cfg, run);
    let cap = 10 * (cfg.files.div_ceil(4) as u64 + 1);
    while sim.unfinished() && sim.result.steps < cap {
        sim.step(protocol);
    }
    sim.result.finished = !sim.unfinished();
    sim.result
}

/// One arm's summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmResult {
    /// `without` or `with`.
    pub arm: String,
    /// Runs with at least one conflicting step.
    pub conflict_rate: Proportion,
    /// Conflicting steps per run.
    pub conflict_steps: Mean,
    /// Steps to finish both work lists.
    pub steps: Mean,
    /// Coder-steps spent waiting.
    pub waits: Mean,
    /// Runs that hit the step cap.
    pub unfinished: u64,
    /// Gate verdicts that failed closed.
    pub fail_closed: u64,
    /// Steps where the coders' frames differed.
    pub frame_splits: u64,
    /// The publication's conflict rate for this arm.
    pub published_conflict_rate: f64,
}

fn summarize(arm: &str, runs: &[RunResult], published: f64) -> ArmResult {
    // Counts: a normal interval's lower end below 0 says nothing; cut it at 0.
    let f = |g: fn(&RunResult) -> u64| {
        let mut m = mean(&runs.iter().map(|r| g(r) as f64).collect::<Vec<_>>());
        m.low = m.low.max(0.0);
        m
    };
    ArmResult {
        arm: arm.into(),
        conflict_rate: wilson(runs.iter().filter(|r| r.conflict_steps > 0).count() as u64, runs.len() as u64),
        conflict_steps: f(|r| r.conflict_steps),
        steps: f(|r| r.steps),
        waits: f(|r| r.waits),
        unfinished: runs.iter().filter(|r| !r.finished).count() as u64,
        fail_closed: runs.iter().map(|r| r.fail_closed).sum(),
        frame_splits: runs.iter().map(|r| r.frame_splits).sum(),
        published_conflict_rate: published,
    }
}

/// The harness's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkspaceReport {
    /// What was run.
    pub config: WorkspaceConfig,
    /// Files on each coder's work list.
    pub work_per_coder: usize,
    /// Without the protocol, then with it.
    pub arms: Vec<ArmResult>,
}

/// Runs both arms on the same workspaces and plans.
pub fn run(cfg: &WorkspaceConfig) -> WorkspaceReport {
    let without: Vec<RunResult> = (0..cfg.runs).map(|r| simulate(cfg, r, false)).collect();
    let with: Vec<RunResult> = (0..cfg.runs).map(|r| simulate(cfg, r, true)).collect();
    WorkspaceReport {
        config: cfg.clone(),
        work_per_coder: cfg.files.div_ceil(4),
        arms: vec![summarize("without", &without, 0.558), summarize("with", &with, 0.098)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(overlap: Overlap) -> WorkspaceConfig {
        WorkspaceConfig { seed: 5, runs: 40, files: 24, overlap }
    }

    #[test]
    fn the_protocol_lowers_conflicts_and_every_run_finishes() {
        let r = run(&cfg(Overlap::Top));
        let (without, with) = (&r.arms[0], &r.arms[1]);
        assert!(with.conflict_rate.rate < without.conflict_rate.rate, "{without:?} vs {with:?}");
        assert!(with.waits.mean > 0.0 && without.waits.mean == 0.0);
        assert_eq!(without.unfinished + with.unfinished, 0);
        assert_eq!(with.fail_closed + with.frame_splits, 0);
    }

    #[test]
    fn pinned_counts_for_a_small_configuration() {
        // The same seed must give this table on every platform.
        let r = run(&cfg(Overlap::Top));
        let got: Vec<(u64, f64)> = r.arms.iter().map(|a| (a.conflict_rate.count, a.steps.mean)).collect();
        assert_eq!(got, [(29, 6.0), (3, 6.7)]);
    }

    #[test]
    fn overlap_any_is_no_worse_than_top() {
        let top = run(&cfg(Overlap::Top));
        let any = run(&cfg(Overlap::Any));
        assert!(any.arms[1].conflict_steps.mean <= top.arms[1].conflict_steps.mean);
        // Same workspaces and plans without the protocol.
        assert_eq!(any.arms[0], top.arms[0]);
    }

    #[test]
    fn weighted_sampling_skips_zero_weights_and_is_distinct() {
        let mut s = Stream::new(1, &[]);
        let items = [(0, 0.0), (1, 1.0), (2, 5.0), (3, 0.0)];
        let mut got = weighted_sample(&mut s, &items, 4);
        got.sort();
        assert_eq!(got, [1, 2]);
    }
}

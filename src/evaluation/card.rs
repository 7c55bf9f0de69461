//! The card-alignment analog: zero-shot coordination between agents from independent runs.
//!
//! An episode deals [`TARGETS`] targets whose features are frame-invariant (the saliency signals:
//! task naming, error and warning counts, reference counts, commits since the last change). Each
//! of the two agents sees them under a private frame permutation: its own labels `0..5`, in its own
//! order. The agents come from independent runs; a run's convention is an arbitrary total order
//! over feature vectors (what self-play would settle on: any order works when both players share
//! it), keyed by the run, so two runs' conventions are unrelated. After [`CardConfig::rounds`]
//! deliberation rounds each agent makes a private pick; the episode succeeds when both picks are
//! the same target. The conditions:
//!
//! - **protocol**: each agent computes the saliency snapshot with the production
//!   [`snapshot::compute`] from its own view (inputs listed in its private order) and takes the
//!   frame hash; it attends to its run's three favourite targets and publishes them as a focus
//!   derived from the snapshot ([`derive_focus`]), so its top target is the most salient of them.
//!   Each round both read the partner's focus and ask the production rule ([`decide`]): Reject →
//!   fail closed (the episode is refused, not failed); Serialize → both hold the shared top;
//!   Parallel → grounded deference: the agent whose top ranks lower in the shared snapshot adopts
//!   the partner's top. The final pick is the top of the focus after the last exchange (how
//!   many first exchanges disagreed is reported, so that the ceiling is seen to be reached by
//!   deference, not by agents that agreed from the start).
//! - **mismatched conventions**: the same message exchange and the rule's lexicographic holder,
//!   but each agent names its pick by its private label, which the partner reads in its own frame
//!   (the failure the protocol exists to prevent).
//! - **no signal**: each agent picks its run's favourite; no messages.
//! - **ungrounded sharing**: agents share their live candidates by frame-invariant name and keep
//!   only candidates both hold ([`align`]'s shared set), but rank them by their own run's order:
//!   no shared ranking to defer by. The final pick is the own favourite among the candidates.
//! - **stale frames**: the protocol when, with probability `r`, one agent of the pair computed its
//!   snapshot from a stale workspace (one target's diagnostics out of date) and keeps it for the
//!   episode. Its frame hash differs; the rule rejects, both fail closed, and the episode counts as
//!   a refusal — separately from failures (both picked, different targets).
//!
//! Departures from the publication, by design: a convention read in the wrong frame is a uniformly
//! random relabelling here, so mismatched conventions land at chance rather than below it; and a
//! stale producer does not re-snapshot within an episode, so every mismatched episode is refused.

use super::rng::Stream;
use super::stats::{Proportion, wilson};
use crate::attention::rule::{Decision, Focus, align, decide, derive_focus};
use crate::attention::snapshot::{self, DiagFact, FileFacts, Snapshot, SnapshotInput};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Targets dealt per episode.
pub const TARGETS: usize = 5;
/// How many targets an agent attends to at first (a majority, so two agents' sets always meet).
pub const CANDIDATES: usize = 3;
/// The two agents' names (the rule's holder is the smaller).
pub const AGENTS: [&str; 2] = ["agent-a", "agent-b"];
/// Stream tag of this harness.
const TAG: u64 = 0xCA4D;

/// The harness's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardConfig {
    /// Seed of every draw.
    pub seed: u64,
    /// Run pairs (each pair: two agents from independent runs).
    pub pairs: u64,
    /// Episodes per pair.
    pub episodes: u64,
    /// Deliberation rounds.
    pub rounds: u64,
    /// Frame mismatch rates of the stale-frame rows.
    pub stale_rates: Vec<f64>,
}

impl Default for CardConfig {
    fn default() -> Self {
        CardConfig { seed: 0, pairs: 200, episodes: 25, rounds: 7, stale_rates: vec![0.0, 0.1, 0.2, 0.3] }
    }
}

/// One target's frame-invariant features.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// The task names it.
    pub task: bool,
    /// Error count.
    pub errors: u32,
    /// Warning count.
    pub warnings: u32,
    /// Inbound references.
    pub refs: u64,
    /// Commits since it last changed.
    pub since: Option<usize>,
}

impl Card {
    /// The frame-invariant name: built from the features alone, so any agent can say it.
    pub fn id(&self) -> String {
        let since = self.since.map_or("n".to_string(), |k| k.to_string());
        format!("card/t{}e{}w{}c{}r{since}", u8::from(self.task), self.errors, self.warnings, self.refs)
    }

    fn deal(s: &mut Stream) -> Card {
        Card {
            task: s.chance(0.2),
            errors: if s.chance(0.3) { 1 + s.below(3) as u32 } else { 0 },
            warnings: if s.chance(0.3) { 1 + s.below(4) as u32 } else { 0 },
            refs: 1 + s.below(64),
            since: if s.chance(0.7) { Some(s.index(12)) } else { None },
        }
    }
}

/// Deals `TARGETS` cards with distinct features.
fn deal(s: &mut Stream) -> Vec<Card> {
    let mut cards: Vec<Card> = Vec::with_capacity(TARGETS);
    while cards.len() < TARGETS {
        let c = Card::deal(s);
        if cards.iter().all(|d| d.id() != c.id()) {
            cards.push(c);
        }
    }
    cards
}

/// The snapshot input an agent builds from the cards in the order it sees them.
pub fn snapshot_input(cards: &[&Card]) -> SnapshotInput {
    let mut input = SnapshotInput::default();
    for c in cards {
        let id = c.id();
        input.files.push(FileFacts { path: id.clone(), touched: false, commits_since: c.since });
        input.doc_refs.insert(id.clone(), c.refs);
        for i in 0..c.errors + c.warnings {
            input.diagnostics.push(DiagFact { path: id.clone(), line: None, error: i < c.errors });
        }
    }
    input.sources.recency = "harness".into();
    input
}

/// An agent's computed view: its snapshot, frame hash, and labels.
struct View {
    snapshot: Snapshot,
    frame: String,
    /// Canonical card index → the id this agent computed for it.
    ids: Vec<String>,
}

impl View {
    fn new(cards: &[Card], perm: &[usize]) -> View {
        let seen: Vec<&Card> = perm.iter().map(|&i| &cards[i]).collect();
        let named: BTreeSet<String> = cards.iter().filter(|c| c.task).map(Card::id).collect();
        let snapshot = snapshot::compute(&snapshot_input(&seen), |id| named.contains(id));
        let frame = snapshot.frame_hash();
        View { snapshot, frame, ids: cards.iter().map(Card::id).collect() }
    }

    fn rank(&self, id: &str) -> usize {
        self.snapshot.targets.iter().position(|t| t.id == id).unwrap_or(usize::MAX)
    }

    fn canonical(&self, id: &str) -> Option<usize> {
        self.ids.iter().position(|i| i == id)
    }
}

/// A run's convention: an arbitrary total order over feature vectors, keyed by the run.
fn preference(run: u64, card: &Card) -> u64 {
    // FNV-1a over the id, then the stream mixer: portable and unrelated across runs.
    let h = card.id().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    Stream::new(run, &[h]).next_u64()
}

/// Canonical indices in a run's order of preference.
fn favourites(run: u64, cards: &[Card]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..cards.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(preference(run, &cards[i])));
    order
}

/// How an episode ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Both picked the same target.
    Success,
    /// Both picked, different targets.
    Failure,
    /// The protocol failed closed (frame mismatch): no pick.
    Refused,
}

/// One deal of one pair.
struct Episode {
    cards: Vec<Card>,
    perms: [Vec<usize>; 2],
    runs: [u64; 2],
    /// The stale agent and the card whose diagnostics it saw out of date, drawn for every
    /// episode so that all stale rows share the draws; applied when `stale_draw < rate`.
    stale_draw: f64,
    stale_agent: usize,
    stale_card: usize,
}

fn episode(cfg: &CardConfig, runs: [u64; 2], pair: u64, ep: u64) -> Episode {
    let mut s = Stream::new(cfg.seed, &[TAG, 1, pair, ep]);
    let cards = deal(&mut s);
    let perms = [s.permutation(TARGETS), s.permutation(TARGETS)];
    Episode { cards, perms, runs, stale_draw: s.unit(), stale_agent: s.index(2), stale_card: s.index(TARGETS) }
}

/// The protocol: snapshot, derived foci, the rule, grounded deference. `stale`: the agent whose
/// workspace view is out of date. Also says whether the first exchange disagreed (Parallel: the
/// tops differed and deference had work to do).
fn protocol(e: &Episode, rounds: u64, stale: Option<usize>) -> (Outcome, bool) {
    let views: Vec<View> = (0..2)
        .map(|a| {
            let mut cards = e.cards.clone();
            if stale == Some(a) {
                // Diagnostics out of date: one more error than the workspace now has (changing
                // the warnings instead if that would collide with another card's features).
                let mut c = cards[e.stale_card].clone();
                c.errors += 1;
                if cards.iter().any(|d| d.id() == c.id()) {
                    c.errors -= 1;
                    c.warnings += 7;
                }
                cards[e.stale_card] = c;
            }
            View::new(&cards, &e.perms[a])
        })
        .collect();
    let mut wanted: Vec<BTreeSet<String>> = (0..2)
        .map(|a| {
            favourites(e.runs[a], &e.cards).into_iter().take(CANDIDATES).map(|i| views[a].ids[i].clone()).collect()
        })
        .collect();
    let mut last = Decision::Parallel;
    let mut disagreed = false;
    for round in 0..rounds {
        let foci: Vec<Focus> = (0..2)
            .map(|a| {
                derive_focus(AGENTS[a], round + 1, &views[a].snapshot, &views[a].frame, &|id| wanted[a].contains(id))
            })
            .collect();
        last = decide(&foci[0], &foci[1]);
        disagreed |= round == 0 && last == Decision::Parallel;
        if let Decision::Parallel = last {
            // Grounded deference: the top that ranks higher in the shared snapshot wins.
            for a in 0..2 {
                let (mine, theirs) = (&foci[a], &foci[1 - a]);
                if let (Some(m), Some(t)) = (mine.top(), theirs.top())
                    && views[a].rank(t) < views[a].rank(m)
                {
                    wanted[a].insert(t.to_string());
                }
            }
        }
    }
    if let Decision::Reject { .. } = last {
        return (Outcome::Refused, disagreed);
    }
    // The final private pick: the top of the focus each agent would publish next, after the last
    // exchange's deference (as the other conditions pick from their updated state).
    let picks: Vec<Option<usize>> = (0..2)
        .map(|a| {
            let f =
                derive_focus(AGENTS[a], rounds + 1, &views[a].snapshot, &views[a].frame, &|id| wanted[a].contains(id));
            f.top().and_then(|t| views[a].canonical(t))
        })
        .collect();
    (judge(picks[0], picks[1]), disagreed)
}

fn judge(a: Option<usize>, b: Option<usize>) -> Outcome {
    match (a, b) {
        (Some(x), Some(y)) if x == y => Outcome::Success,
        _ => Outcome::Failure,
    }
}

/// Mismatched conventions: the exchange and the rule's holder, over private labels.
fn mismatched(e: &Episode, rounds: u64) -> Outcome {
    // Each agent's pick, as its own private label: the label of its run's favourite.
    let mut labels: Vec<usize> = (0..2)
        .map(|a| {
            let fav = favourites(e.runs[a], &e.cards)[0];
            e.perms[a].iter().position(|&i| i == fav).unwrap_or(0)
        })
        .collect();
    for round in 0..rounds {
        let foci: Vec<Focus> = (0..2)
            .map(|a| Focus {
                agent: AGENTS[a].into(),
                frame: "private-labels".into(),
                seq: round + 1,
                targets: vec![format!("label/{}", labels[a])],
            })
            .collect();
        if let Decision::Parallel = decide(&foci[0], &foci[1]) {
            // The deferring agent (the larger name, as the rule would choose) adopts the
            // partner's label, read in its own frame.
            labels[1] = labels[0];
        }
    }
    judge(Some(e.perms[0][labels[0]]), Some(e.perms[1][labels[1]]))
}

/// No signal: each picks its run's favourite.
fn no_signal(e: &Episode) -> Outcome {
    judge(Some(favourites(e.runs[0], &e.cards)[0]), Some(favourites(e.runs[1], &e.cards)[0]))
}

/// Ungrounded sharing: live candidates by name, intersected, ranked privately.
fn ungrounded(e: &Episode, rounds: u64) -> Outcome {
    let ids: Vec<String> = e.cards.iter().map(Card::id).collect();
    let orders: Vec<Vec<usize>> = (0..2).map(|a| favourites(e.runs[a], &e.cards)).collect();
    let mut cands: Vec<Vec<usize>> = orders.iter().map(|o| o[..CANDIDATES].to_vec()).collect();
    for round in 0..rounds {
        let foci: Vec<Focus> = (0..2)
            .map(|a| Focus {
                agent: AGENTS[a].into(),
                frame: "ungrounded".into(),
                seq: round + 1,
                targets: cands[a].iter().map(|&i| ids[i].clone()).collect(),
            })
            .collect();
        let Ok(al) = align(&foci[0], &foci[1]) else { break };
        if al.top_shared || al.shared.is_empty() {
            continue;
        }
        for (a, c) in cands.iter_mut().enumerate() {
            *c = orders[a].iter().copied().filter(|&i| al.shared.contains(&ids[i])).collect();
        }
    }
    judge(cands[0].first().copied(), cands[1].first().copied())
}

/// One condition's tally.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConditionResult {
    /// Stable key (`protocol`, `mismatched`, `no_signal`, `ungrounded`, `stale`).
    pub condition: String,
    /// Human label.
    pub label: String,
    /// Frame mismatch rate (stale rows only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stale_rate: Option<f64>,
    /// Episodes.
    pub episodes: u64,
    /// Both picks coincide.
    pub success: Proportion,
    /// Both picked, different targets.
    pub failure: Proportion,
    /// Failed closed on a frame mismatch.
    pub refused: Proportion,
    /// The publication's figure, where it gives one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub published: Option<f64>,
    /// Protocol rows: episodes whose first exchange disagreed (different tops), which grounded
    /// deference then had to resolve.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub first_exchange_disagreed: Option<Proportion>,
}

/// The harness's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardReport {
    /// What was run.
    pub config: CardConfig,
    /// Chance for two independent uniform picks.
    pub chance: f64,
    /// One row per condition.
    pub conditions: Vec<ConditionResult>,
}

#[derive(Default, Clone, Copy)]
struct Tally {
    success: u64,
    failure: u64,
    refused: u64,
    disagreed: Option<u64>,
}

impl Tally {
    fn add_protocol(&mut self, (o, disagreed): (Outcome, bool)) {
        *self.disagreed.get_or_insert(0) += u64::from(disagreed);
        self.add(o);
    }

    fn add(&mut self, o: Outcome) {
        match o {
            Outcome::Success => self.success += 1,
            Outcome::Failure => self.failure += 1,
            Outcome::Refused => self.refused += 1,
        }
    }

    fn row(self, condition: &str, label: String, stale_rate: Option<f64>, published: Option<f64>) -> ConditionResult {
        let n = self.success + self.failure + self.refused;
        ConditionResult {
            condition: condition.into(),
            label,
            stale_rate,
            episodes: n,
            success: wilson(self.success, n),
            failure: wilson(self.failure, n),
            refused: wilson(self.refused, n),
            published,
            first_exchange_disagreed: self.disagreed.map(|d| wilson(d, n)),
        }
    }
}

/// Runs every condition on the same deals.
pub fn run(cfg: &CardConfig) -> CardReport {
    let mut protocol_t = Tally::default();
    let mut mismatched_t = Tally::default();
    let mut no_signal_t = Tally::default();
    let mut ungrounded_t = Tally::default();
    let mut stale_t = vec![Tally::default(); cfg.stale_rates.len()];
    for pair in 0..cfg.pairs {
        // Two independent runs: their conventions are keyed by unrelated draws.
        let mut s = Stream::new(cfg.seed, &[TAG, 0, pair]);
        let runs = [s.next_u64(), s.next_u64()];
        for ep in 0..cfg.episodes {
            let e = episode(cfg, runs, pair, ep);
            protocol_t.add_protocol(protocol(&e, cfg.rounds, None));
            mismatched_t.add(mismatched(&e, cfg.rounds));
            no_signal_t.add(no_signal(&e));
            ungrounded_t.add(ungrounded(&e, cfg.rounds));
            for (t, &rate) in stale_t.iter_mut().zip(&cfg.stale_rates) {
                let stale = (e.stale_draw < rate).then_some(e.stale_agent);
                t.add_protocol(protocol(&e, cfg.rounds, stale));
            }
        }
    }
    let mut conditions = vec![
        protocol_t.row("protocol", "protocol (shared ranking + grounded deference)".into(), None, Some(1.000)),
        mismatched_t.row("mismatched", "mismatched conventions".into(), None, Some(0.145)),
        no_signal_t.row("no_signal", "no signal".into(), None, Some(0.199)),
        ungrounded_t.row(
            "ungrounded",
            "ungrounded sharing (live candidates, no shared ranking)".into(),
            None,
            Some(0.569),
        ),
    ];
    for (t, &rate) in stale_t.iter().zip(&cfg.stale_rates) {
        let label = format!("protocol, stale frames {:.0} %", rate * 100.0);
        conditions.push(t.row("stale", label, Some(rate), None));
    }
    CardReport { config: cfg.clone(), chance: 1.0 / TARGETS as f64, conditions }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> CardConfig {
        CardConfig { seed: 11, pairs: 20, episodes: 10, rounds: 7, stale_rates: vec![0.0, 0.3] }
    }

    fn rate(r: &CardReport, key: &str) -> f64 {
        r.conditions.iter().find(|c| c.condition == key).map(|c| c.success.rate).unwrap()
    }

    #[test]
    fn both_agents_compute_one_frame_whatever_their_private_order() {
        let mut s = Stream::new(3, &[]);
        let cards = deal(&mut s);
        let a = View::new(&cards, &[0, 1, 2, 3, 4]);
        let b = View::new(&cards, &[4, 2, 0, 3, 1]);
        assert_eq!(a.frame, b.frame);
        assert_eq!(a.snapshot.targets.len(), TARGETS, "every card carries a signal");
    }

    #[test]
    fn a_stale_view_changes_the_frame_and_is_refused() {
        let cfg = small();
        let e = episode(&cfg, [1, 2], 0, 0);
        assert_eq!(protocol(&e, 7, None).0, Outcome::Success);
        assert_eq!(protocol(&e, 7, Some(0)).0, Outcome::Refused);
        assert_eq!(protocol(&e, 7, Some(1)).0, Outcome::Refused);
    }

    #[test]
    fn the_protocol_agrees_after_one_exchange() {
        let cfg = small();
        let mut disagreed = 0;
        for ep in 0..50 {
            let e = episode(&cfg, [5, 9], 1, ep);
            let (outcome, d) = protocol(&e, 1, None);
            assert_eq!(outcome, Outcome::Success, "episode {ep}");
            disagreed += u32::from(d);
        }
        // Deference did real work: many first exchanges disagreed and still ended in agreement.
        assert!(disagreed >= 10, "{disagreed} of 50");
    }

    #[test]
    fn conditions_order_as_the_protocol_predicts() {
        let r = run(&small());
        assert_eq!(rate(&r, "protocol"), 1.0);
        let none = rate(&r, "no_signal");
        let ung = rate(&r, "ungrounded");
        assert!(none < ung && ung < 1.0, "no signal {none}, ungrounded {ung}");
        let stale: Vec<&ConditionResult> = r.conditions.iter().filter(|c| c.condition == "stale").collect();
        assert_eq!(stale[0].refused.count, 0);
        assert!(stale[1].refused.count > 0);
        assert_eq!(stale[1].success.count + stale[1].failure.count + stale[1].refused.count, 200);
    }

    #[test]
    fn pinned_counts_for_a_small_configuration() {
        // The same seed must give this table on every platform; a change here changes every
        // published number and must be deliberate.
        let r = run(&small());
        let got: Vec<(&str, u64, u64)> =
            r.conditions.iter().map(|c| (c.condition.as_str(), c.success.count, c.refused.count)).collect();
        let want = [
            ("protocol", 200, 0),
            ("mismatched", 42, 0),
            ("no_signal", 32, 0),
            ("ungrounded", 130, 0),
            ("stale", 200, 0),
            ("stale", 144, 56),
        ];
        assert_eq!(got, want);
        assert_eq!(r.conditions[0].first_exchange_disagreed.as_ref().map(|p| p.count), Some(117));
    }

    #[test]
    fn same_seed_same_report() {
        assert_eq!(run(&small()), run(&small()));
        let other = run(&CardConfig { seed: 12, ..small() });
        assert_ne!(other.conditions, run(&small()).conditions);
    }
}

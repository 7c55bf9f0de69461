//! The focus board: a deterministic fold over every agent's focus chain.
//!
//! Each agent appends `focus` records (frame hash, ≤ 8 targets, a TTL and the time it was
//! published) and `release` records to its own chain `refs/mas/focus/<agent>`. The board keeps, per
//! agent, the latest record that verified and passed the board's own checks; everything else is
//! listed as rejected, by name. A focus is live until `published_at + ttl`; a released or expired
//! focus holds nothing.
//!
//! **The flood cap bounds each principal, not the team.** The seed capped the board at 64 live
//! agents. Since every host session is an agent of its own (a session agent,
//! [`crate::identity::session`]), that cap refused a team of 20 people with a few sessions each.
//! Decision: a principal — a roster entry, with every session agent signing with its key
//! ([`super::rule::principal`]) — holds at most [`MAX_PRINCIPAL_AGENTS`] live agents; the whole
//! board admits at most [`MAX_BOARD_AGENTS`] (4,096), a backstop far above a team of 1,000. In both
//! the earliest published keep their places: a later live focus beyond a cap is rejected as a
//! flood, naming the principal. What it still stops: one agent holds at most
//! [`MAX_FOCUS_TARGETS`] files; one key — compromised, or driving a runaway spawner of sessions —
//! holds at most 64 × 8 files and never takes a place from another principal's agents, and its
//! floods lapse with their leases (24 h at most) or end the moment its entry leaves the roster (a
//! reviewed, signed commit: its records then fail verification). Only many keys could fill the
//! board, and each key is a roster commit. Not per run or per frame: a run's agents are roster
//! entries already (a principal each), and a frame changes whenever the code does, so a cap per
//! frame would reset under an attacker's feet.
//!
//! Time enters here and only here: a lease must lapse without anyone acting, so liveness is judged
//! against the reader's clock. A TTL is capped at [`MAX_TTL_SECS`] and a publication time more than
//! [`MAX_CLOCK_SKEW_SECS`] in the reader's future is rejected, so a lease cannot be made endless.

use super::rule::{Focus, MAX_BOARD_AGENTS, MAX_FOCUS_TARGETS, MAX_PRINCIPAL_AGENTS, principal};
use crate::store::record::{Record, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Record kind of a focus.
pub const FOCUS_KIND: &str = "focus";
/// Record kind of a release.
pub const RELEASE_KIND: &str = "release";
/// Default time to live of a focus: 30 minutes.
pub const DEFAULT_TTL_SECS: u64 = 30 * 60;
/// The longest TTL accepted: 24 hours.
pub const MAX_TTL_SECS: u64 = 24 * 60 * 60;
/// How far in the future a publication time may be.
pub const MAX_CLOCK_SKEW_SECS: u64 = 5 * 60;

/// A focus record's payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FocusPayload {
    /// Frame hash.
    pub frame: String,
    /// Targets in the snapshot's order.
    pub targets: Vec<String>,
    /// Time to live, seconds.
    pub ttl_secs: u64,
    /// Unix seconds when published.
    pub published_at: u64,
    /// A team-mode claim: files the agent wrote, held whether or not the frame's snapshot lists
    /// them (a new file, a file with no signal). Absent (false) in a focus chosen from the frame.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub claims: bool,
    /// The development run the focus was published for (the `mas.run` of the run's worktree it was
    /// published from): it ends with that run ([`super::run_end`]). Absent for a person's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

/// A release record's payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleasePayload {
    /// Unix seconds when released.
    pub published_at: u64,
}

/// Whether a focus holds anything now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Liveness {
    /// Holding its targets.
    Live,
    /// Its TTL passed.
    Expired,
    /// Its agent released it.
    Released,
}

/// One agent's place on the board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardEntry {
    /// The focus (targets empty after a release).
    pub focus: Focus,
    /// State now.
    pub liveness: Liveness,
    /// Unix seconds when the focus stops holding (for a live one).
    pub expires_at: u64,
    /// Unix seconds when its last record (a focus, a claim or its renewal, a release) was
    /// published: the agent's last activity on the board.
    #[serde(default)]
    pub published_at: u64,
    /// The record's commit.
    pub commit: String,
    /// The run the focus was published for ([`FocusPayload::run`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The end of that run, when it released this focus ([`super::run_end`]): the entry is
    /// [`Liveness::Released`] and keeps the targets it held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_with: Option<super::run_end::RunEnd>,
}

/// Why the board refused a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Rejection {
    /// The record did not verify (spoof, replay, unsigned, unknown participant, …).
    #[error("the record is {verdict}")]
    Unverified { verdict: String },
    /// Not a focus or release payload.
    #[error("not a focus or release record: {detail}")]
    Malformed { detail: String },
    /// More than eight targets.
    #[error("a focus holds at most {MAX_FOCUS_TARGETS} targets; {count} given")]
    TooManyTargets { count: usize },
    /// A target that escapes the repository (`..`, absolute, empty component).
    #[error("target {target:?} escapes the repository")]
    PathEscapes { target: String },
    /// A target the focus's frame does not list.
    #[error("target {target:?} is not in the current frame's snapshot")]
    UnknownTarget { target: String },
    /// A TTL of zero or above the cap, or a publication time in the future.
    #[error("bad lease: {detail}")]
    BadLease { detail: String },
    /// The board already has [`MAX_BOARD_AGENTS`] live agents.
    #[error("the board already holds {MAX_BOARD_AGENTS} live agents (flood cap)")]
    Flood,
    /// The agent's principal already has [`MAX_PRINCIPAL_AGENTS`] live agents on the board.
    #[error("{principal} already has {MAX_PRINCIPAL_AGENTS} live agents on the board (the per-principal flood cap)")]
    PrincipalFlood {
        /// The principal (a roster entry) whose agents fill its places.
        principal: String,
    },
}

/// A rejected record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejected {
    /// The agent whose chain held it.
    pub agent: String,
    /// The record's commit.
    pub commit: String,
    /// Why.
    #[serde(flatten)]
    pub rejection: Rejection,
}

/// The board.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Board {
    /// One entry per agent, sorted by agent.
    pub entries: Vec<BoardEntry>,
    /// Every refused record.
    pub rejected: Vec<Rejected>,
    /// The focus chains that lost an object ([`crate::store::damage`]): each is folded from what
    /// could be read of it, and the gate treats it as [`super::damage`] decides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub damaged: Vec<DamagedChain>,
}

/// A focus chain that lost an object, as the board read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DamagedChain {
    /// The chain's agent.
    pub agent: String,
    /// The chain's ref.
    pub refname: String,
    /// The record that cannot be read.
    pub record: String,
    /// The missing object.
    pub missing: String,
    /// Which object of the record it is.
    pub part: crate::store::damage::Part,
    /// Whether the chain's newest record could be read (the break is below it), so that what
    /// the agent holds now is known. When false, the agent's entry is its last state that could
    /// be read (below the break, or remembered by the board's read cache), if any.
    pub newest_known: bool,
}

impl Board {
    /// The live foci.
    pub fn live(&self) -> impl Iterator<Item = &Focus> {
        self.entries.iter().filter(|e| e.liveness == Liveness::Live).map(|e| &e.focus)
    }

    /// An agent's entry.
    pub fn entry(&self, agent: &str) -> Option<&BoardEntry> {
        self.entries.iter().find(|e| e.focus.agent == agent)
    }

    /// The focus an agent holds by, for the pure rule: its focus when live, with no targets when
    /// released or expired (it holds nothing but is still on its frame); `None` when it published
    /// none.
    pub fn holding(&self, agent: &str) -> Option<Focus> {
        self.entry(agent).map(|e| match e.liveness {
            Liveness::Live => e.focus.clone(),
            Liveness::Expired | Liveness::Released => Focus { targets: Vec::new(), ..e.focus.clone() },
        })
    }
}

/// Whether an agent's focus is live and on the current frame: what `focus status` answers and the
/// gate's own precondition (anything but [`FocusState::Live`] fails the agent's gate closed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FocusState {
    /// The agent has published no focus.
    None,
    /// Its latest record is a release.
    Released,
    /// Its TTL passed.
    Expired,
    /// Live, but on a frame other than the current one.
    OldFrame,
    /// Live on the current frame.
    Live,
}

impl FocusState {
    /// The state's name, as `--json` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            FocusState::None => "none",
            FocusState::Released => "released",
            FocusState::Expired => "expired",
            FocusState::OldFrame => "old-frame",
            FocusState::Live => "live",
        }
    }
}

/// The state of `entry` (an agent's place on the board, if any) against the current frame's hash.
/// A live focus with no current frame is on an old frame: there is nothing it can be checked on.
pub fn focus_state(entry: Option<&BoardEntry>, current_frame: Option<&str>) -> FocusState {
    match entry {
        None => FocusState::None,
        Some(e) if e.liveness == Liveness::Released => FocusState::Released,
        Some(e) if e.liveness == Liveness::Expired => FocusState::Expired,
        Some(e) if Some(e.focus.frame.as_str()) != current_frame => FocusState::OldFrame,
        Some(_) => FocusState::Live,
    }
}

/// Which frame a focus is on, seen from the current frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFrame<'a> {
    /// The current frame.
    Current,
    /// None (a release with no focus before it).
    NoFrame,
    /// Another frame: its hash.
    Old(&'a str),
}

/// Which frame `focus_frame` is, given the current frame's hash.
pub fn on_frame<'a>(focus_frame: &'a str, current_frame: Option<&str>) -> OnFrame<'a> {
    match current_frame {
        Some(h) if h == focus_frame => OnFrame::Current,
        _ if focus_frame.is_empty() => OnFrame::NoFrame,
        _ => OnFrame::Old(focus_frame),
    }
}

impl Rejection {
    /// The reason's name, as `--json` spells it (`unverified`, `too_many_targets`, …).
    pub fn reason(&self) -> &'static str {
        match self {
            Rejection::Unverified { .. } => "unverified",
            Rejection::Malformed { .. } => "malformed",
            Rejection::TooManyTargets { .. } => "too_many_targets",
            Rejection::PathEscapes { .. } => "path_escapes",
            Rejection::UnknownTarget { .. } => "unknown_target",
            Rejection::BadLease { .. } => "bad_lease",
            Rejection::Flood => "flood",
            Rejection::PrincipalFlood { .. } => "principal_flood",
        }
    }
}

/// Whether the board has a place for a live focus of `agent`: always when it holds one already,
/// else when neither flood cap of the fold is reached on the board as read (so a publisher refuses
/// what the board would reject, before writing it).
pub fn admits(board: &Board, agent: &str) -> Result<(), Rejection> {
    if board.entry(agent).is_some_and(|e| e.liveness == Liveness::Live) {
        return Ok(());
    }
    let p = principal(agent);
    let (mut mine, mut all) = (0, 0);
    for f in board.live() {
        all += 1;
        mine += usize::from(principal(&f.agent) == p);
    }
    if mine >= MAX_PRINCIPAL_AGENTS {
        return Err(Rejection::PrincipalFlood { principal: p.to_string() });
    }
    if all >= MAX_BOARD_AGENTS {
        return Err(Rejection::Flood);
    }
    Ok(())
}

/// Whether a target id stays inside the repository.
pub fn target_path_ok(target: &str) -> bool {
    let path = target.split_once('#').map_or(target, |(p, _)| p);
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && !path.contains('\0')
        && path.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

/// Checks a focus payload against the board's rules (not the flood cap, which needs the board).
/// `in_frame` says whether a target is listed in the snapshot of the payload's frame, when that
/// snapshot is at hand (`None`: not checked).
pub fn check_focus(p: &FocusPayload, now: u64, in_frame: Option<&dyn Fn(&str) -> bool>) -> Result<(), Rejection> {
    if p.targets.len() > MAX_FOCUS_TARGETS {
        return Err(Rejection::TooManyTargets { count: p.targets.len() });
    }
    if let Some(t) = p.targets.iter().find(|t| !target_path_ok(t)) {
        return Err(Rejection::PathEscapes { target: t.clone() });
    }
    if p.ttl_secs == 0 || p.ttl_secs > MAX_TTL_SECS {
        return Err(Rejection::BadLease { detail: format!("ttl {}s is outside 1s..{MAX_TTL_SECS}s", p.ttl_secs) });
    }
    if p.published_at > now.saturating_add(MAX_CLOCK_SKEW_SECS) {
        return Err(Rejection::BadLease { detail: "published in the future".into() });
    }
    if let Some(in_frame) = in_frame.filter(|_| !p.claims)
        && let Some(t) = p.targets.iter().find(|t| !in_frame(t))
    {
        return Err(Rejection::UnknownTarget { target: t.clone() });
    }
    Ok(())
}

/// One agent's focus chain, oldest first: (commit id, the record or why it did not parse, verdict).
pub type ChainRecords = Vec<(String, Result<Record, String>, Verdict)>;

/// What the fold needs of one record of a focus chain: its verdict and payload, decoded once.
/// A pure function of the record and its verdict ([`item`]), so it can be kept per chain tip
/// ([`super::board_cache`]); nothing here depends on the reader's clock or frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Item {
    /// The record did not verify (the verdict's label).
    Unverified { verdict: String },
    /// The record is not readable: skipped without a word (its verdict already says so).
    Unreadable,
    /// A focus record.
    Focus { seq: u64, payload: FocusPayload },
    /// A release record (its time; 0 when it names none).
    Release { seq: u64, at: u64 },
    /// A focus whose payload does not decode, or a record of another kind.
    Malformed { detail: String },
}

/// One agent's focus chain as the fold reads it, oldest first: (commit id, item).
pub type ChainItems = Vec<(String, Item)>;

/// What the fold needs of one record.
pub fn item(record: &Result<Record, String>, verdict: &Verdict) -> Item {
    if !verdict.is_verified() {
        return Item::Unverified { verdict: verdict.label().to_string() };
    }
    let Ok(record) = record else { return Item::Unreadable };
    match record.kind.as_str() {
        FOCUS_KIND => match FocusPayload::deserialize(&record.payload) {
            Ok(payload) => Item::Focus { seq: record.seq, payload },
            Err(e) => Item::Malformed { detail: e.to_string() },
        },
        RELEASE_KIND => Item::Release {
            seq: record.seq,
            at: ReleasePayload::deserialize(&record.payload).map_or(0, |p| p.published_at),
        },
        other => Item::Malformed { detail: format!("unknown kind {other:?}") },
    }
}

/// A chain's records as the fold reads them.
pub fn items(records: &ChainRecords) -> ChainItems {
    records.iter().map(|(commit, record, verdict)| (commit.clone(), item(record, verdict))).collect()
}

/// Folds the chains: `chains` holds, per agent, its records oldest first with their verdicts and
/// commit ids. `in_frame(frame, target)` answers for frames whose snapshot is at hand.
pub fn fold(chains: &[(String, ChainRecords)], now: u64, in_frame: &dyn Fn(&str, &str) -> Option<bool>) -> Board {
    let chains: Vec<(String, ChainItems)> = chains.iter().map(|(agent, r)| (agent.clone(), items(r))).collect();
    fold_items(&chains, now, in_frame)
}

/// [`fold`] of chains already read as items.
pub fn fold_items(chains: &[(String, ChainItems)], now: u64, in_frame: &dyn Fn(&str, &str) -> Option<bool>) -> Board {
    let mut board = Board::default();
    let mut latest: Vec<(BoardEntry, u64)> = Vec::new();
    for (agent, items) in chains {
        let mut current: Option<(BoardEntry, u64)> = None;
        for (commit, item) in items {
            let reject = |rejection| Rejected { agent: agent.clone(), commit: commit.clone(), rejection };
            match item {
                Item::Unverified { verdict } => {
                    board.rejected.push(reject(Rejection::Unverified { verdict: verdict.clone() }));
                }
                Item::Unreadable => {}
                Item::Malformed { detail } => {
                    board.rejected.push(reject(Rejection::Malformed { detail: detail.clone() }))
                }
                Item::Focus { seq, payload: p } => {
                    let check = |t: &str| in_frame(&p.frame, t).unwrap_or(true);
                    let has_snapshot = in_frame(&p.frame, "").is_some();
                    if let Err(r) = check_focus(p, now, if has_snapshot { Some(&check) } else { None }) {
                        board.rejected.push(reject(r));
                        continue;
                    }
                    let expires_at = p.published_at.saturating_add(p.ttl_secs);
                    let liveness = if now < expires_at { Liveness::Live } else { Liveness::Expired };
                    let focus =
                        Focus { agent: agent.clone(), frame: p.frame.clone(), seq: *seq, targets: p.targets.clone() };
                    current = Some((
                        BoardEntry {
                            focus,
                            liveness,
                            expires_at,
                            published_at: p.published_at,
                            commit: commit.clone(),
                            run: p.run.clone(),
                            ended_with: None,
                        },
                        p.published_at,
                    ));
                }
                Item::Release { seq, at } => {
                    let frame = current.as_ref().map(|(e, _)| e.focus.frame.clone()).unwrap_or_default();
                    let focus = Focus { agent: agent.clone(), frame, seq: *seq, targets: Vec::new() };
                    current = Some((
                        BoardEntry {
                            focus,
                            liveness: Liveness::Released,
                            expires_at: *at,
                            published_at: *at,
                            commit: commit.clone(),
                            run: None,
                            ended_with: None,
                        },
                        *at,
                    ));
                }
            }
        }
        if let Some(c) = current {
            latest.push(c);
        }
    }
    let mut flooded = flooded(&latest);
    for (i, (entry, _)) in latest.into_iter().enumerate() {
        match flooded.remove(&i) {
            Some(rejection) => {
                board.rejected.push(Rejected { agent: entry.focus.agent.clone(), commit: entry.commit, rejection })
            }
            None => board.entries.push(entry),
        }
    }
    board.entries.sort_by(|a, b| a.focus.agent.cmp(&b.focus.agent));
    board
}

/// The flood caps: the earliest published live foci keep their places, per principal and in all;
/// the others (by their index in `latest`) are refused, with why.
fn flooded(latest: &[(BoardEntry, u64)]) -> BTreeMap<usize, Rejection> {
    let mut live: Vec<usize> = (0..latest.len()).filter(|&i| latest[i].0.liveness == Liveness::Live).collect();
    live.sort_by(|&a, &b| (latest[a].1, &latest[a].0.focus.agent).cmp(&(latest[b].1, &latest[b].0.focus.agent)));
    let mut flooded: BTreeMap<usize, Rejection> = BTreeMap::new();
    let mut held: BTreeMap<&str, usize> = BTreeMap::new();
    let mut admitted = 0;
    for i in live {
        let p = principal(&latest[i].0.focus.agent);
        let n = held.entry(p).or_default();
        if *n >= MAX_PRINCIPAL_AGENTS {
            flooded.insert(i, Rejection::PrincipalFlood { principal: p.to_string() });
        } else if admitted >= MAX_BOARD_AGENTS {
            flooded.insert(i, Rejection::Flood);
        } else {
            *n += 1;
            admitted += 1;
        }
    }
    flooded
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(agent: &str, seq: u64, kind: &str, payload: serde_json::Value) -> (String, Result<Record, String>, Verdict) {
        (format!("c{seq}"), Ok(Record::new(kind, agent, seq, payload)), Verdict::Verified)
    }

    fn focus(agent: &str, seq: u64, targets: &[&str], at: u64, ttl: u64) -> (String, Result<Record, String>, Verdict) {
        rec(agent, seq, FOCUS_KIND, json!({"frame": "F", "targets": targets, "ttl_secs": ttl, "published_at": at}))
    }

    fn any_frame(_: &str, t: &str) -> Option<bool> {
        Some(t.is_empty() || t != "missing.rs")
    }

    #[test]
    fn latest_valid_record_wins_and_leases_lapse() {
        let chains = vec![
            ("alice".to_string(), vec![focus("alice", 1, &["a.rs"], 100, 60), focus("alice", 2, &["b.rs"], 110, 60)]),
            ("bob".to_string(), vec![focus("bob", 1, &["c.rs"], 100, 5)]),
            (
                "carol".to_string(),
                vec![
                    focus("carol", 1, &["d.rs"], 100, 600),
                    rec("carol", 2, RELEASE_KIND, json!({"published_at": 120})),
                ],
            ),
        ];
        let board = fold(&chains, 150, &any_frame);
        assert_eq!(board.entry("alice").unwrap().focus.targets, ["b.rs"]);
        assert_eq!(board.entry("alice").unwrap().liveness, Liveness::Live);
        assert_eq!(board.entry("bob").unwrap().liveness, Liveness::Expired);
        assert_eq!(board.entry("carol").unwrap().liveness, Liveness::Released);
        assert_eq!(board.live().count(), 1);
    }

    #[test]
    fn bad_records_are_rejected_by_name_and_the_previous_focus_stands() {
        let nine: Vec<String> = (0..9).map(|i| format!("f{i}.rs")).collect();
        let nine: Vec<&str> = nine.iter().map(String::as_str).collect();
        let mut spoofed = focus("alice", 5, &["z.rs"], 100, 60);
        spoofed.2 = Verdict::Spoof;
        let chains = vec![(
            "alice".to_string(),
            vec![
                focus("alice", 1, &["a.rs"], 100, 600),
                focus("alice", 2, &nine, 100, 600),
                focus("alice", 3, &["../etc/passwd"], 100, 600),
                focus("alice", 4, &["missing.rs"], 100, 600),
                spoofed,
                focus("alice", 6, &["a.rs"], 100, 10 * MAX_TTL_SECS),
                focus("alice", 7, &["a.rs"], 10_000, 60),
            ],
        )];
        let board = fold(&chains, 150, &any_frame);
        let reasons: Vec<String> = board
            .rejected
            .iter()
            .map(|r| serde_json::to_value(&r.rejection).unwrap()["reason"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            reasons,
            ["too_many_targets", "path_escapes", "unknown_target", "unverified", "bad_lease", "bad_lease"]
        );
        assert_eq!(board.entry("alice").unwrap().focus.targets, ["a.rs"]);
        assert_eq!(board.entry("alice").unwrap().focus.seq, 1);
    }

    #[test]
    fn a_principal_holds_at_most_sixty_four_live_agents_and_others_keep_their_places() {
        // alice and 64 of her sessions, published one a second; bob's session after them all.
        let mut names = vec!["alice".to_string()];
        names.extend((0..64).map(|i| format!("alice.claude-{i:08x}")));
        names.push("bob.codex-0000abcd".into());
        let chains: Vec<_> = names
            .iter()
            .enumerate()
            .map(|(i, a)| (a.clone(), vec![focus(a, 1, &["x.rs"], 100 + i as u64, 600)]))
            .collect();
        let board = fold(&chains, 200, &any_frame);
        assert_eq!(board.live().count(), 65, "alice's first 64 and bob's session");
        assert_eq!(board.rejected.len(), 1);
        assert_eq!(board.rejected[0].agent, "alice.claude-0000003f", "the latest published of alice's 65");
        assert_eq!(board.rejected[0].rejection, Rejection::PrincipalFlood { principal: "alice".into() });
        assert!(board.entry("bob.codex-0000abcd").is_some());
        assert_eq!(
            admits(&board, "alice.codex-12345678"),
            Err(Rejection::PrincipalFlood { principal: "alice".into() })
        );
        assert_eq!(admits(&board, "alice"), Ok(()), "a live agent keeps its place");
        assert_eq!(admits(&board, "carol.gemini-12345678"), Ok(()));
        // When one of alice's lapses, the flooded session takes its place at the next read.
        let mut lapsing = chains.clone();
        lapsing[1].1 = vec![focus(&names[1], 1, &["x.rs"], 101, 50)];
        let board = fold(&lapsing, 200, &any_frame);
        assert!(board.rejected.is_empty(), "{:?}", board.rejected);
        assert_eq!(board.live().count(), 65);
    }

    #[test]
    fn a_thousand_principals_fit_and_the_board_stops_at_its_backstop() {
        let chains: Vec<_> = (0..=MAX_BOARD_AGENTS)
            .map(|i| {
                let a = format!("a{i:05}");
                (a.clone(), vec![focus(&a, 1, &["x.rs"], 100 + i as u64, 80_000)])
            })
            .collect();
        let board = fold(&chains[..1000], 50_000, &any_frame);
        assert_eq!((board.live().count(), board.rejected.len()), (1000, 0));
        let board = fold(&chains, 50_000, &any_frame);
        assert_eq!(board.live().count(), MAX_BOARD_AGENTS);
        assert_eq!(board.rejected.len(), 1);
        assert_eq!(board.rejected[0].agent, format!("a{MAX_BOARD_AGENTS:05}"));
        assert_eq!(board.rejected[0].rejection, Rejection::Flood);
        assert_eq!(admits(&board, "z"), Err(Rejection::Flood));
    }

    fn entry(agent: &str, frame: &str, liveness: Liveness) -> BoardEntry {
        let focus = Focus { agent: agent.into(), frame: frame.into(), seq: 1, targets: vec!["a.rs".into()] };
        BoardEntry {
            focus,
            liveness,
            expires_at: 0,
            published_at: 0,
            commit: String::new(),
            run: None,
            ended_with: None,
        }
    }

    #[test]
    fn focus_state_table() {
        let cases: Vec<(Option<BoardEntry>, Option<&str>, FocusState)> = vec![
            (None, Some("F"), FocusState::None),
            (None, None, FocusState::None),
            (Some(entry("a", "F", Liveness::Released)), Some("F"), FocusState::Released),
            (Some(entry("a", "F", Liveness::Expired)), Some("F"), FocusState::Expired),
            (Some(entry("a", "OLD", Liveness::Expired)), Some("F"), FocusState::Expired),
            (Some(entry("a", "OLD", Liveness::Live)), Some("F"), FocusState::OldFrame),
            (Some(entry("a", "F", Liveness::Live)), None, FocusState::OldFrame),
            (Some(entry("a", "F", Liveness::Live)), Some("F"), FocusState::Live),
        ];
        for (i, (e, current, want)) in cases.into_iter().enumerate() {
            let got = focus_state(e.as_ref(), current);
            assert_eq!(got, want, "case {i}");
            assert_eq!(serde_json::to_value(got).unwrap(), want.as_str(), "case {i}");
        }
    }

    #[test]
    fn on_frame_table() {
        let cases = [
            ("F", Some("F"), OnFrame::Current),
            ("", Some("F"), OnFrame::NoFrame),
            ("", None, OnFrame::NoFrame),
            ("OLD", Some("F"), OnFrame::Old("OLD")),
            ("OLD", None, OnFrame::Old("OLD")),
        ];
        for (frame, current, want) in cases {
            assert_eq!(on_frame(frame, current), want, "{frame:?} {current:?}");
        }
    }

    #[test]
    fn holding_keeps_the_frame_and_drops_what_is_not_live() {
        let board = Board {
            entries: vec![
                entry("live", "F", Liveness::Live),
                entry("gone", "F", Liveness::Expired),
                entry("done", "G", Liveness::Released),
            ],
            ..Board::default()
        };
        let cases: [(&str, Option<(&str, usize)>); 4] =
            [("live", Some(("F", 1))), ("gone", Some(("F", 0))), ("done", Some(("G", 0))), ("nobody", None)];
        for (agent, want) in cases {
            let got = board.holding(agent);
            assert_eq!(got.as_ref().map(|f| (f.frame.as_str(), f.targets.len())), want, "{agent}");
            assert!(got.is_none_or(|f| f.agent == agent));
        }
    }

    #[test]
    fn rejection_reasons_are_the_json_tags() {
        let all = [
            Rejection::Unverified { verdict: "SPOOF".into() },
            Rejection::Malformed { detail: "x".into() },
            Rejection::TooManyTargets { count: 9 },
            Rejection::PathEscapes { target: "../x".into() },
            Rejection::UnknownTarget { target: "x".into() },
            Rejection::BadLease { detail: "x".into() },
            Rejection::Flood,
            Rejection::PrincipalFlood { principal: "alice".into() },
        ];
        for r in all {
            assert_eq!(serde_json::to_value(&r).unwrap()["reason"], r.reason(), "{r:?}");
        }
    }

    #[test]
    fn target_paths_must_stay_inside() {
        for ok in ["a.rs", "src/a.rs#F.g", "x/y/z"] {
            assert!(target_path_ok(ok), "{ok}");
        }
        for bad in ["", "/etc/passwd", "../x", "a/../../b", "a//b", "./a", "a\\b", "#sym"] {
            assert!(!target_path_ok(bad), "{bad}");
        }
    }
}

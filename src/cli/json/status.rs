//! `git mas status --json`.

use git_mas::attention::denials::Waiting;
use serde::{Deserialize, Serialize};

/// The one view of the team.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusOut {
    /// The reader's clock, unix seconds: every age and time left is against it.
    pub now: u64,
    /// Whether the repository is in team mode (`mas.team`), where the hooks move the frame.
    #[serde(default)]
    pub team: bool,
    /// The current frame; `None` before any was published.
    pub frame: Option<StatusFrame>,
    /// Every live agent and session, by name.
    pub agents: Vec<StatusAgent>,
    /// How many agents on the board ended, released or lapsed (not listed).
    pub not_live: usize,
    /// Sessions whose claims would still run but whose host process on this machine is gone (a
    /// killed host runs no session-end hook): their claims ended with it. Each with the files it
    /// held.
    #[serde(default)]
    pub process_gone: Vec<StatusGone>,
    /// Agents of a development run whose claims the run's end released before their lease ran out
    /// (`git_mas::attention::run_end`): the run landed or was aborted. Each with the files it held.
    #[serde(default)]
    pub released_by_run: Vec<StatusRunReleased>,
    /// Who waits on whom: recent refusals of files the holder still holds.
    pub waiting: Vec<Waiting>,
    /// Pairs of agents each waiting on a file the other holds.
    pub deadlocks: Vec<Deadlock>,
    /// Development runs in progress (open, or landing) and unreadable ones.
    pub runs: Vec<StatusRun>,
    /// What a crash left (`git mas doctor`'s findings).
    pub debris: StatusDebris,
    /// How refs/mas stands against the remote (`mas.remote`, else `origin`) as of the last sync;
    /// `None` when there is no such remote and no sync fetched from it.
    pub remote: Option<StatusRemote>,
    /// Live lanes (`git mas claim <glob>`): whose, which glob, when it lapses.
    #[serde(default)]
    pub lanes: Vec<StatusLane>,
    /// Changes kept for a claim lost to another clone's (`refs/mas/kept/`): whose, which file, the
    /// commit that holds them.
    #[serde(default)]
    pub kept: Vec<git_mas::attention::lost::Listed>,
    /// Converge runs (`git mas converge`, or `coordinate` on a scalar class) whose driver has
    /// recorded no report yet: running now, or stopped by a crash.
    pub converging: Vec<StatusConverge>,
}

/// A live lane.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusLane {
    /// Its holder.
    pub agent: String,
    /// The glob.
    pub glob: String,
    /// When it lapses.
    pub expires_at: u64,
}

/// A session that ended because its host process is gone.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusGone {
    /// The session agent.
    pub agent: String,
    /// What it held when its process ended.
    pub claims: Vec<String>,
}

/// An agent whose claims ended with its run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusRunReleased {
    /// The agent.
    pub agent: String,
    /// The run it claimed them for.
    pub run: String,
    /// How the run ended: `landed` or `aborted`.
    pub outcome: git_mas::attention::run_end::RunOutcome,
    /// What it held when the run ended.
    pub claims: Vec<String>,
}

/// What a crash left, as `git mas doctor` finds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusDebris {
    /// Stale locks and temporary files, and interrupted operations.
    pub problems: usize,
    /// The stale locks (each blocks updating its ref until removed).
    pub stale_locks: Vec<std::path::PathBuf>,
    /// Stale temporary files.
    pub stale_temp_files: usize,
    /// Interrupted operations (a landing to complete).
    pub interrupted: usize,
    /// Each interrupted operation: what, of which run, and the command that completes it.
    #[serde(default)]
    pub operations: Vec<git_mas::doctor::HalfFinished>,
    /// The command that clears them, when there is anything.
    pub remedy: Option<String>,
}

/// The current frame.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusFrame {
    /// Its hash.
    pub hash: String,
    /// Its record's commit.
    pub commit: String,
    /// Who published it.
    pub publisher: String,
    /// When, unix seconds (the record's commit time).
    pub published_at: u64,
    /// Whether HEAD or the working tree moved on since the frame was computed (`same`,
    /// `head_moved`, `worktree_changed`); `None` when that cannot be told.
    pub since: Option<git_mas::attention::frame::Since>,
}

/// One live agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusAgent {
    /// Its name.
    pub agent: String,
    /// The host of a team-mode session (`claude-code`, `codex`, …); `None` for another agent.
    pub host: Option<String>,
    /// What it holds, in the frame's order.
    pub claims: Vec<String>,
    /// When its hold lapses unless renewed, unix seconds.
    pub expires_at: u64,
    /// Its last record on the board (a claim, a renewal, a focus), unix seconds.
    pub last_activity: u64,
    /// The frame its focus is on.
    pub frame: String,
}

/// Two agents each waiting on the other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deadlock {
    /// One of them (the smaller name).
    pub a: String,
    /// The other.
    pub b: String,
}

/// A development run in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusRun {
    /// The run id.
    pub id: String,
    /// `open`, `landing` or `unreadable`.
    pub phase: super::PhaseName,
    /// `open`, or `land-blocked` when its last landing was blocked and still stands (the name
    /// `coordinate`'s halt line and `git mas report` give it); absent when unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ending: Option<git_mas::convergence::Ending>,
    /// Its goal (`None` when unreadable).
    pub goal: Option<String>,
    /// Why it is unreadable.
    pub problem: Option<String>,
    /// `best_of_n` (every agent works the whole goal, one proposal lands) or `aggregate` (the
    /// goal split into slices, all landing merged); `None` when unreadable.
    pub class: Option<String>,
    /// An aggregate run's slices in merge order, each with where its proposal stands.
    pub slices: Vec<StatusSlice>,
    /// An aggregate run's reviewers: the agents its plan gave no slice, who endorse the slices.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviewers: Vec<String>,
    /// An aggregate run's wait-all barrier: whether every slice is in (`None` for best-of-N).
    pub barrier_holds: Option<bool>,
    /// Valid endorsements a proposal needs.
    pub quorum: u32,
    /// The quorum asked, when the roster's size capped it (`quorum` is the cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_quorum: Option<u32>,
    /// The highest round count, and the limit.
    pub rounds: u64,
    /// The round limit.
    pub max_rounds: Option<u64>,
    /// Each proposal: its agent, valid endorsers, checks passed of those run, at quorum.
    pub proposals: Vec<StatusProposal>,
    /// The proposal with the most valid endorsements.
    pub leader: Option<String>,
    /// Conflicts the convergence report sees.
    pub conflicts: usize,
    /// What keeps it from landing now, in words; `None` when it can land.
    pub blocks_landing: Option<String>,
}

/// One proposal of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusProposal {
    /// The proposer.
    pub agent: String,
    /// Its valid endorsers.
    pub endorsers: Vec<String>,
    /// Checks that passed on its current tree, and checks that ran.
    pub checks_passed: u64,
    /// Checks that ran.
    pub checks_run: u64,
    /// Whether it is at quorum.
    pub at_quorum: bool,
    /// What it cannot land together with: other proposals, and the run's branch where it moved
    /// since the base, each with the files both change differently (`git mas propose`'s).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clashes: Vec<super::propose::ClashOut>,
}

/// One slice of an aggregate run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusSlice {
    /// The agent.
    pub agent: String,
    /// Its files.
    pub files: usize,
    /// `at_quorum`, `judged_against`, `waiting`, `missing` (or `landed`).
    pub status: String,
    /// Why it was judged against, or what it waits for.
    pub detail: Option<String>,
}

/// refs/mas against a remote, as of the last sync's fetch.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusRemote {
    /// The remote.
    pub name: String,
    /// Whether a sync has fetched from it.
    pub fetched: bool,
    /// Refs at the same commit on both sides.
    pub same: usize,
    /// Refs the next sync pushes.
    pub ahead: usize,
    /// Refs the next sync takes.
    pub behind: usize,
    /// Refs that moved on both sides.
    pub diverged: Vec<String>,
    /// The background exchange of claims with it (team mode only; `None` otherwise).
    #[serde(default)]
    pub exchange: Option<StatusExchange>,
}

/// The background exchange of claims (`git mas exchange`), as its lock and state file show it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusExchange {
    /// Whether one runs for this clone now.
    pub running: bool,
    /// `git config mas.exchange false`: it never starts.
    pub off: bool,
    /// What the running (or last) exchange wrote after its last round, if any.
    pub state: Option<git_mas::exchange::State>,
}

/// A converge run without a report yet.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusConverge {
    /// The run id.
    pub id: String,
    /// Its class (`preference`, `cascade`, `resource`, …).
    pub class: String,
    /// Its goal.
    pub goal: String,
    /// The agent driving it.
    pub driver: String,
    /// Its peers.
    pub peers: Vec<String>,
    /// The kind of the newest record its driver appended (`hop`, `converge-start`, `halt`), `None`
    /// when none yet.
    pub last: Option<String>,
}

//! Lanes: a lease on a glob of paths, taken before any edit (`git mas claim 'src/parser/**' --ttl
//! 4h`), for a session, a person or an agent about to be launched.
//!
//! Teams that launch many agents at once declare each one's paths first and check them for
//! overlap; a lane is that declaration, held by the tool. Each agent's lanes are the newest
//! verified record of its chain `refs/mas/lanes/<agent>` (kind `lane`: the globs, a time to live
//! and when it was published; no globs is a release). The chain is a record chain like a focus
//! chain: sync and the exchange carry it to every clone, so a lane holds wherever the remote
//! carries it.
//!
//! - **Taking one** ([`overlaps`]) is refused when a glob overlaps another agent's live lane or
//!   live claim, naming the holder. Two globs overlap when some path both match: a tracked file,
//!   a claimed file, or the other glob's own literal text (`src/a.rs` in both). Globs that match
//!   only untracked paths no one has claimed yet are taken as apart.
//! - **An edit** inside another agent's live lane is refused, naming the lane and its holder
//!   ([`holder_of`]); an edit entirely inside the caller's own lanes needs no claim ([`inside_own`]).
//! - Two lanes taken in two clones before either saw the other may overlap: the smaller name holds
//!   the overlap, as the rule's Serialize decides between two claims ([`holder_of`]).
//! - A lane lapses at its time to live, or is released (`git mas release`).

use super::board::Board;
use super::claims::file_of;
use crate::store::{Store, StoreError};
use globset::{Glob, GlobMatcher};

/// Where lanes live: `refs/mas/lanes/<agent>`.
pub const LANES_PREFIX: &str = "refs/mas/lanes/";

/// The record kind of a lane record.
pub const LANE_KIND: &str = "lane";

/// The longest lane: a week.
pub const MAX_LANE_TTL_SECS: u64 = 7 * 24 * 60 * 60;

/// `agent`'s lane chain.
pub fn lane_ref(agent: &str) -> String {
    format!("{LANES_PREFIX}{agent}")
}

/// A lane record's payload.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LanePayload {
    /// The globs held (empty: released).
    pub globs: Vec<String>,
    /// Time to live, seconds from `published_at`.
    pub ttl_secs: u64,
    /// When it was published (seconds since the epoch).
    pub published_at: u64,
}

/// One live lane.
#[derive(Debug, Clone)]
pub struct Lane {
    /// Its holder.
    pub agent: String,
    /// The glob.
    pub glob: String,
    /// When it lapses.
    pub expires_at: u64,
    matcher: GlobMatcher,
}

impl Lane {
    /// Whether the lane holds `path`.
    pub fn holds(&self, path: &str) -> bool {
        self.matcher.is_match(path)
    }
}

/// Why a glob is not one a lane can hold.
pub fn bad_glob(glob: &str) -> Option<String> {
    if glob.is_empty() || glob.starts_with('/') || glob.contains('\\') || glob.split('/').any(|c| c == "..") {
        return Some("a lane is a path glob inside the repository, such as 'src/parser/**'".into());
    }
    Glob::new(glob).err().map(|e| e.to_string())
}

fn matcher(glob: &str) -> Option<GlobMatcher> {
    globset::GlobBuilder::new(glob).literal_separator(true).build().ok().map(|g| g.compile_matcher())
}

/// Every live lane, from each chain's newest verified record.
pub fn live(store: &Store, now: u64) -> Result<Vec<Lane>, StoreError> {
    let infos = store.list(LANES_PREFIX)?;
    if infos.is_empty() {
        return Ok(Vec::new());
    }
    let roster = store.roster()?;
    let mut out = Vec::new();
    for info in infos {
        let Some(agent) = info.name.strip_prefix(LANES_PREFIX).filter(|a| !a.contains('/')) else { continue };
        let Some(entry) = store.newest_verified(&info.name, &roster)? else { continue };
        let Ok(record) = entry.record else { continue };
        if record.kind != LANE_KIND || record.agent != agent {
            continue;
        }
        let Ok(p) = serde_json::from_value::<LanePayload>(record.payload) else { continue };
        let expires_at = p.published_at.saturating_add(p.ttl_secs.min(MAX_LANE_TTL_SECS));
        if expires_at <= now {
            continue;
        }
        for glob in p.globs {
            if let Some(m) = matcher(&glob) {
                out.push(Lane { agent: agent.to_string(), glob, expires_at, matcher: m });
            }
        }
    }
    Ok(out)
}

/// The lane of another agent than `caller` that holds `path`, if any (the smallest name's).
///
/// Two lanes taken in two clones before either saw the other may overlap. There the rule's
/// Serialize decides, as for two claims: the smaller name holds the overlap. So when `caller`'s
/// own lane holds `path` too, only a smaller-named agent's lane holds it against `caller` (else
/// each would refuse the other, and neither could edit there).
pub fn holder_of<'a>(lanes: &'a [Lane], caller: &str, path: &str) -> Option<&'a Lane> {
    let own = lanes.iter().any(|l| l.agent == caller && l.holds(path));
    lanes
        .iter()
        .filter(|l| l.agent != caller && l.holds(path) && (!own || l.agent.as_str() < caller))
        .min_by(|a, b| a.agent.cmp(&b.agent))
}

/// Whether every one of `paths` is inside one of `caller`'s own lanes (and there is at least one).
pub fn inside_own(lanes: &[Lane], caller: &str, paths: &[String]) -> bool {
    !paths.is_empty() && paths.iter().all(|p| lanes.iter().any(|l| l.agent == caller && l.holds(p)))
}

/// What a new lane would overlap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlap {
    /// The new glob.
    pub glob: String,
    /// The other agent.
    pub holder: String,
    /// Its lane's glob, or the file it claims.
    pub what: String,
    /// A path both hold.
    pub example: String,
}

/// What `globs`, taken by `caller`, would overlap: the live lane or live claim (on `board`) of an
/// agent other than `caller` and its `team`, judged on `tracked` files, the claimed files and
/// each glob's own text.
pub fn overlaps(
    globs: &[String],
    caller: &str,
    team: &[String],
    lanes: &[Lane],
    board: &Board,
    tracked: &[String],
) -> Vec<Overlap> {
    let other = |agent: &str| agent != caller && !team.iter().any(|t| t == agent);
    let mut out = Vec::new();
    for glob in globs {
        let Some(mine) = matcher(glob) else { continue };
        for lane in lanes.iter().filter(|l| other(&l.agent)) {
            let both = |p: &str| mine.is_match(p) && lane.holds(p);
            let example = tracked
                .iter()
                .map(String::as_str)
                .find(|p| both(p))
                .or_else(|| [glob.as_str(), lane.glob.as_str()].into_iter().find(|p| both(p)));
            if let Some(example) = example {
                out.push(Overlap {
                    glob: glob.clone(),
                    holder: lane.agent.clone(),
                    what: format!("its lane {}", lane.glob),
                    example: example.to_string(),
                });
            }
        }
        for e in board.live().filter(|f| other(&f.agent)) {
            if let Some(file) = e.targets.iter().map(|t| file_of(t)).find(|f| mine.is_match(f)) {
                out.push(Overlap {
                    glob: glob.clone(),
                    holder: e.agent.clone(),
                    what: format!("its claim on {file}"),
                    example: file.to_string(),
                });
            }
        }
    }
    out
}

/// What taking lanes came to.
#[derive(Debug, Clone)]
pub enum Taken {
    /// Recorded: the caller's live lanes now.
    Held(Vec<(String, u64)>),
    /// Refused: what they would overlap. Nothing was written.
    Overlapping(Vec<Overlap>),
}

/// The files in the index (the tracked files), for judging overlaps.
fn tracked(store: &Store) -> Vec<String> {
    store
        .repo()
        .index_or_empty()
        .map(|index| index.entries().iter().map(|e| e.path(&index).to_string()).collect())
        .unwrap_or_default()
}

/// Takes `globs` as `caller`'s lanes for `ttl_secs` (with the lanes it holds already, renewed),
/// under team mode's claims lock, unless one overlaps the live lane or claim of an agent other
/// than `caller` and its `team` (a coordinate run's agents and driver, whose slices the plan
/// already keeps apart).
#[allow(clippy::too_many_arguments)]
pub fn take(
    store: &Store,
    caller: &str,
    key: &crate::identity::AgentKey,
    team: &[String],
    globs: &[String],
    ttl_secs: u64,
    now: u64,
    runs: &dyn super::run_end::RunLedger,
) -> Result<Taken, super::team::TeamError> {
    let _lock = super::team::lock(store)?;
    let lanes = live(store, now)?;
    let board = super::focus_store::load_live_board(store, &store.roster()?, now, None, Some(caller), runs)?;
    let found = overlaps(globs, caller, team, &lanes, &board, &tracked(store));
    if !found.is_empty() {
        return Ok(Taken::Overlapping(found));
    }
    let mut held: Vec<String> = lanes.iter().filter(|l| l.agent == caller).map(|l| l.glob.clone()).collect();
    held.extend(globs.iter().cloned());
    held.sort();
    held.dedup();
    write(store, caller, key, &held, ttl_secs, now)?;
    let expires = now + ttl_secs;
    Ok(Taken::Held(held.into_iter().map(|g| (g, expires)).collect()))
}

/// Releases `globs` of `caller`'s lanes (every one with `None`); returns the lanes it still holds.
pub fn release(
    store: &Store,
    caller: &str,
    key: &crate::identity::AgentKey,
    globs: Option<&[String]>,
    now: u64,
) -> Result<Vec<(String, u64)>, StoreError> {
    let lanes = live(store, now)?;
    let mine: Vec<&Lane> = lanes.iter().filter(|l| l.agent == caller).collect();
    let keep: Vec<&Lane> = mine.iter().copied().filter(|l| globs.is_some_and(|g| !g.contains(&l.glob))).collect();
    let expires = keep.iter().map(|l| l.expires_at).max().unwrap_or(now + 1);
    let kept: Vec<String> = keep.iter().map(|l| l.glob.clone()).collect();
    write(store, caller, key, &kept, expires.saturating_sub(now).max(1), now)?;
    Ok(kept.into_iter().map(|g| (g, expires)).collect())
}

fn write(
    store: &Store,
    caller: &str,
    key: &crate::identity::AgentKey,
    globs: &[String],
    ttl_secs: u64,
    now: u64,
) -> Result<(), StoreError> {
    let payload = LanePayload { globs: globs.to_vec(), ttl_secs, published_at: now };
    let value = serde_json::to_value(&payload).map_err(|e| StoreError::Encode { what: "a lane".into(), source: e })?;
    store.append(&lane_ref(caller), caller, key, LANE_KIND, &[], |_| Ok(Some(value.clone())))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::board::{BoardEntry, Liveness};
    use crate::attention::rule::Focus;

    fn lane(agent: &str, glob: &str) -> Lane {
        Lane { agent: agent.into(), glob: glob.into(), expires_at: 10, matcher: matcher(glob).unwrap() }
    }

    #[test]
    fn a_lane_holds_its_glob_for_others_and_frees_its_holder() {
        let lanes = [lane("alice", "src/parser/**"), lane("bob", "docs/*.md")];
        assert_eq!(holder_of(&lanes, "carol", "src/parser/a/b.rs").map(|l| l.agent.as_str()), Some("alice"));
        assert!(holder_of(&lanes, "alice", "src/parser/x.rs").is_none(), "not against its holder");
        assert!(holder_of(&lanes, "carol", "docs/sub/x.md").is_none(), "* does not cross a /");
        assert!(holder_of(&lanes, "carol", "src/parse.rs").is_none());
        assert!(inside_own(&lanes, "alice", &["src/parser/x.rs".into()]));
        assert!(!inside_own(&lanes, "alice", &["src/parser/x.rs".into(), "src/main.rs".into()]));
        assert!(!inside_own(&lanes, "alice", &[]));
        // Overlapping lanes (taken in two clones at once): the smaller name holds the overlap.
        let lanes = [lane("bob", "src/**"), lane("alice", "src/parser/**"), lane("carol", "src/parser/x.rs")];
        assert_eq!(holder_of(&lanes, "bob", "src/parser/x.rs").map(|l| l.agent.as_str()), Some("alice"));
        assert!(holder_of(&lanes, "alice", "src/parser/x.rs").is_none(), "alice's own lane, and the smallest");
        assert_eq!(holder_of(&lanes, "carol", "src/parser/x.rs").map(|l| l.agent.as_str()), Some("alice"));
        assert!(holder_of(&lanes, "bob", "src/main.rs").is_none(), "only bob's lane holds it");
        assert_eq!(holder_of(&lanes, "dave", "src/main.rs").map(|l| l.agent.as_str()), Some("bob"));
    }

    #[test]
    fn overlaps_are_found_on_tracked_files_claims_and_the_globs_text() {
        let lanes = [lane("alice", "src/parser/**")];
        let focus = |agent: &str, t: &str| BoardEntry {
            focus: Focus { agent: agent.into(), frame: "F".into(), seq: 1, targets: vec![t.into()] },
            liveness: Liveness::Live,
            expires_at: 100,
            published_at: 0,
            commit: String::new(),
            run: None,
            ended_with: None,
        };
        let board = Board { entries: vec![focus("dave", "lib/x.rs#f")], ..Board::default() };
        let tracked = vec!["src/parser/mod.rs".to_string(), "src/lexer.rs".to_string()];
        let got = overlaps(&["src/**".into()], "bob", &[], &lanes, &board, &tracked);
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].holder.as_str(), got[0].example.as_str()), ("alice", "src/parser/mod.rs"));
        assert!(overlaps(&["src/lexer*".into()], "bob", &[], &lanes, &board, &tracked).is_empty());
        // No tracked file in common, but the same literal path.
        let lanes = [lane("alice", "new/a.rs")];
        assert_eq!(overlaps(&["new/*.rs".into()], "bob", &[], &lanes, &board, &tracked).len(), 1);
        // A claim's file.
        let got = overlaps(&["lib/**".into()], "bob", &[], &[], &board, &tracked);
        assert_eq!((got[0].holder.as_str(), got[0].what.as_str()), ("dave", "its claim on lib/x.rs"));
        assert!(overlaps(&["lib/**".into()], "dave", &[], &[], &board, &tracked).is_empty(), "its own claim");
        assert!(overlaps(&["lib/**".into()], "bob", &["dave".into()], &[], &board, &tracked).is_empty(), "its team's");
        let lanes = [lane("alice", "src/parser/**")];
        assert!(overlaps(&["src/**".into()], "bob", &["alice".into()], &lanes, &board, &tracked).is_empty());
        assert!(bad_glob("../x").is_some() && bad_glob("/etc/*").is_some() && bad_glob("src/[").is_some());
        assert!(bad_glob("src/parser/**").is_none());
    }
}

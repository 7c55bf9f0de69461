//! A cache of verified chain windows, keyed by each chain's exact tip and by the roster.
//!
//! Folds such as the focus board read the newest records of every chain under a prefix and verify
//! each against the roster. Done from scratch, that is one object walk and one signature check per
//! record on every call — the largest fixed cost of an edit-time gate, which runs on every edit an
//! agent makes. But what a window of a chain verifies to is a pure function of the chain's tip
//! commit (objects are content-addressed: the tip names every commit, tree and blob below it), the
//! window's length and the roster's name → did:key map. So this cache keeps, per ref, the verified
//! window it read last with the tip it read it at, under a digest of the roster: when a ref still
//! points at that tip and the roster is unchanged, the window is taken from the cache and no object
//! is read and no signature checked. A ref that moved on from its cached tip (an append: one
//! record) is read from its new tip back to that tip only, and what was read is joined to the
//! cached window ([`WindowCache::earlier`]); the joined window is verified whole, so its verdicts
//! are those of a fresh read of the same records. A ref that appeared, or whose cached tip is not
//! among its newest window's records, is read fresh; nothing else is.
//!
//! Nothing that depends on the reader's clock is cached: the cache holds records and their
//! verdicts, never a board. Liveness, TTL expiry and the future-publication check are computed by
//! the fold at read time, so a lease lapses on time with no ref moving.
//!
//! The focus board's chains are kept in `mas-windows-focus`, the frame chain's newest window
//! ([`super::Store::newest_verified`]) in `mas-windows-frame`, both in the common git dir.
//!
//! **Doubt means a fresh read.** The file (`mas-windows-<last prefix component>`) starts with a SHA-256 over the repository's common dir and the body, so a torn, truncated or
//! edited file, or one copied from another repository, fails the check and is ignored as a whole.
//! The body names its format version, prefix, window length and roster digest; any mismatch ignores
//! it as a whole. Each window must be self-consistent (newest last, each record's parent the one
//! before it, the newest record's commit the tip, every record parsing) or that ref is read fresh.
//! The cache cannot make a reader see a record that is not in the chain it would read, short of a
//! forged file with a recomputed checksum — and whoever can write the common git dir can already
//! delete or rewrite any ref under `refs/mas/` (a deleted focus ref holds nothing), so the cache
//! adds no new trust, as with the signature cache ([`super::sigcache`]).
//!
//! **What a crash leaves.** The cache is written to a temporary file beside it
//! (`<name>.tmp.<pid>`) and renamed over the old one, so a reader sees the old file or the new one,
//! never a mix. A process killed mid-write leaves at most that temporary file, which no reader
//! opens and the next write by a process with the same id replaces; the cache itself stays as it
//! was. Two writers at once each rename a complete file: the last one wins, and either is correct
//! for the tips it names. Failing to write costs only speed.

use super::Entry;
use super::record::{Record, Verdict};
use crate::identity::Roster;
use gix::ObjectId;
use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The cache file's name in the common git dir: `mas-windows-` and the prefix's last component.
pub fn cache_file_name(prefix: &str) -> String {
    let last = prefix.trim_end_matches('/').rsplit('/').next().unwrap_or_default();
    format!("mas-windows-{last}")
}

/// The format version: a file of another version is ignored.
const VERSION: u32 = 1;

/// A digest of what verification reads from the roster: each agent's name and did:key.
pub fn roster_digest(roster: &Roster) -> String {
    let mut h = sha2::Sha256::new();
    for e in roster.entries() {
        h.update(e.name.as_bytes());
        h.update([0]);
        h.update(e.did.as_bytes());
        h.update([b'\n']);
    }
    crate::identity::key::hex(&h.finalize())
}

/// What a cache file is valid for: a file made for anything else is ignored.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// The repository's common git dir (canonical).
    pub common_dir: PathBuf,
    /// The ref prefix whose chains it holds.
    pub prefix: String,
    /// How many of each chain's newest records a window holds.
    pub window: usize,
    /// [`roster_digest`] of the roster the verdicts were given under.
    pub roster: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Body {
    version: u32,
    prefix: String,
    window: usize,
    roster: String,
    chains: Vec<CachedChain>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct CachedChain {
    refname: String,
    tip: String,
    /// Oldest first, as [`super::Store::verified_window`] returns them.
    entries: Vec<CachedEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct CachedEntry {
    commit: String,
    parent: Option<String>,
    blob: Option<String>,
    /// The record's canonical bytes.
    record: String,
    verdict: Verdict,
}

/// A verified window: (entry, verdict) pairs, oldest first.
pub type Window = Vec<(Entry, Verdict)>;

/// The file's bytes for `chains` under `key`.
fn encode(key: &CacheKey, chains: &BTreeMap<String, CachedChain>) -> Vec<u8> {
    let body = Body {
        version: VERSION,
        prefix: key.prefix.clone(),
        window: key.window,
        roster: key.roster.clone(),
        chains: chains.values().cloned().collect(),
    };
    super::sealed::seal(&key.common_dir, &serde_json::to_vec(&body).unwrap_or_default())
}

/// The chains of a cache file, or nothing when the file is not exactly one made for `key`.
fn decode(key: &CacheKey, bytes: &[u8]) -> BTreeMap<String, CachedChain> {
    let Some(body) = super::sealed::unseal(&key.common_dir, bytes) else { return BTreeMap::new() };
    let Ok(body) = serde_json::from_slice::<Body>(body) else { return BTreeMap::new() };
    if body.version != VERSION || body.prefix != key.prefix || body.window != key.window || body.roster != key.roster {
        return BTreeMap::new();
    }
    body.chains.into_iter().map(|c| (c.refname.clone(), c)).collect()
}

fn oid(hex: &str) -> Option<ObjectId> {
    ObjectId::from_hex(hex.as_bytes()).ok()
}

/// A cached chain as a window, when it is self-consistent for `tip` and `window`: newest last, each
/// record's parent the one before it, the newest record's commit `tip`, a short window starting at
/// the chain's root, and every record parsing.
fn window_of(chain: &CachedChain, tip: &ObjectId, window: usize) -> Option<Window> {
    if chain.entries.is_empty() || chain.entries.len() > window || oid(&chain.tip)? != *tip {
        return None;
    }
    let mut out: Window = Vec::with_capacity(chain.entries.len());
    for e in &chain.entries {
        let commit = oid(&e.commit)?;
        let parent = match &e.parent {
            Some(p) => Some(oid(p)?),
            None => None,
        };
        let expected_parent = out.last().map(|(prev, _): &(Entry, Verdict)| prev.commit);
        match (out.is_empty(), expected_parent) {
            (true, _) if chain.entries.len() < window && parent.is_some() => return None,
            (false, Some(prev)) if parent != Some(prev) => return None,
            _ => {}
        }
        let blob = match &e.blob {
            Some(b) => Some(oid(b)?),
            None => None,
        };
        let record = Record::parse(e.record.as_bytes()).ok()?;
        out.push((Entry { commit, parent, blob, record: Ok(record) }, e.verdict.clone()));
    }
    (out.last().map(|(e, _)| e.commit) == Some(*tip)).then_some(out)
}

/// A window in the cache's form, when it can be cached (every record parsed: a parse error is not
/// kept, so such a chain is read fresh every time).
fn cached_of(refname: &str, tip: &ObjectId, window: &Window) -> Option<CachedChain> {
    let entries = window
        .iter()
        .map(|(e, v)| {
            let record = e.record.as_ref().ok()?;
            Some(CachedEntry {
                commit: e.commit.to_string(),
                parent: e.parent.map(|p| p.to_string()),
                blob: e.blob.map(|b| b.to_string()),
                record: String::from_utf8(record.to_bytes()).ok()?,
                verdict: v.clone(),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(CachedChain { refname: refname.to_string(), tip: tip.to_string(), entries })
}

/// What a window cache held after one use, kept in memory by a long-lived process (the MCP
/// server) so that its next use reads no file: the chains as the file holds them, and their windows
/// already decoded. It is valid for exactly the [`CacheKey`] it was made under, and each window for
/// exactly the tip it names, as the file is.
#[derive(Debug, Clone, Default)]
pub struct Remembered {
    chains: BTreeMap<String, CachedChain>,
    windows: BTreeMap<String, (ObjectId, Window)>,
}

impl Remembered {
    /// The window of `refname` as last seen, with the tip it was read at.
    pub fn window(&self, refname: &str) -> Option<&(ObjectId, Window)> {
        self.windows.get(refname)
    }
}

/// The cache of one prefix's windows, loaded once, consulted per ref, saved once.
#[derive(Debug)]
pub struct WindowCache {
    key: CacheKey,
    path: PathBuf,
    loaded: BTreeMap<String, CachedChain>,
    next: BTreeMap<String, CachedChain>,
    /// Windows already decoded (from [`Remembered`]), consulted before decoding `loaded`.
    decoded: BTreeMap<String, (ObjectId, Window)>,
    next_decoded: BTreeMap<String, (ObjectId, Window)>,
}

impl WindowCache {
    /// Loads the cache for `key` (empty when absent or when anything about the file is in doubt).
    pub fn load(key: CacheKey) -> Self {
        let path = key.common_dir.join(cache_file_name(&key.prefix));
        let loaded = std::fs::read(&path).map(|b| decode(&key, &b)).unwrap_or_default();
        WindowCache {
            key,
            path,
            loaded,
            next: BTreeMap::new(),
            decoded: BTreeMap::new(),
            next_decoded: BTreeMap::new(),
        }
    }

    /// The cache for `key` as a previous use left it in memory: no file is read. What another
    /// process wrote to the file since is not seen, which costs only speed (a ref that moved is
    /// read fresh either way).
    pub fn resume(key: CacheKey, remembered: Remembered) -> Self {
        let path = key.common_dir.join(cache_file_name(&key.prefix));
        let Remembered { chains, windows } = remembered;
        WindowCache {
            key,
            path,
            loaded: chains,
            next: BTreeMap::new(),
            decoded: windows,
            next_decoded: BTreeMap::new(),
        }
    }

    /// What this cache is valid for.
    pub fn key(&self) -> &CacheKey {
        &self.key
    }

    /// The cached window of `refname` at `tip`, when the cache has exactly that.
    pub fn get(&mut self, refname: &str, tip: &ObjectId) -> Option<Window> {
        let chain = self.loaded.get(refname)?;
        let window = match self.decoded.get(refname) {
            Some((at, window)) if at == tip && oid(&chain.tip).as_ref() == Some(at) => window.clone(),
            _ => window_of(chain, tip, self.key.window)?,
        };
        self.next.insert(refname.to_string(), chain.clone());
        self.next_decoded.insert(refname.to_string(), (*tip, window.clone()));
        Some(window)
    }

    /// The window the cache holds for `refname` at whatever tip it was read at, with that tip,
    /// when it is self-consistent there. A ref that moved on from that tip is then read only from
    /// its new tip back to the old one ([`super::Store`]'s `window_through`).
    pub fn earlier(&self, refname: &str) -> Option<(ObjectId, Window)> {
        let chain = self.loaded.get(refname)?;
        let tip = oid(&chain.tip)?;
        match self.decoded.get(refname) {
            Some((at, window)) if *at == tip => Some((tip, window.clone())),
            _ => Some((tip, window_of(chain, &tip, self.key.window)?)),
        }
    }

    /// Remembers the window read fresh for `refname` at `tip`.
    pub fn put(&mut self, refname: &str, tip: &ObjectId, window: &Window) {
        if let Some(chain) = cached_of(refname, tip, window) {
            self.next.insert(refname.to_string(), chain);
            self.next_decoded.insert(refname.to_string(), (*tip, window.clone()));
        }
    }

    /// Writes the cache when it changed: the refs seen this time (`put` or `get`), nothing else.
    /// Best effort: temporary file, then rename. Returns what it holds now, for [`Self::resume`].
    pub fn save(self) -> Remembered {
        let unchanged = self.next.len() == self.loaded.len()
            && self.next.iter().all(|(name, c)| self.loaded.get(name).is_some_and(|l| l.tip == c.tip));
        if !unchanged {
            self.write();
        }
        Remembered { chains: self.next, windows: self.next_decoded }
    }

    fn write(&self) {
        super::sealed::replace(&self.path, &encode(&self.key, &self.next));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_hex(format!("{n:02x}").repeat(20).as_bytes()).unwrap()
    }

    fn entry(commit: u8, parent: Option<u8>, seq: u64) -> (Entry, Verdict) {
        let record = Record::new("focus", "alice", seq, json!({"n": seq}));
        (
            Entry { commit: id(commit), parent: parent.map(id), blob: Some(id(100 + commit)), record: Ok(record) },
            Verdict::Verified,
        )
    }

    fn key(dir: &str) -> CacheKey {
        CacheKey { common_dir: dir.into(), prefix: "refs/mas/focus/".into(), window: 3, roster: "R".into() }
    }

    fn chains(windows: &[(&str, u8, Window)]) -> BTreeMap<String, CachedChain> {
        windows.iter().map(|(r, tip, w)| (r.to_string(), cached_of(r, &id(*tip), w).unwrap())).collect()
    }

    #[test]
    fn a_file_is_used_only_for_exactly_its_key() {
        let w: Window = vec![entry(1, None, 1), entry(2, Some(1), 2)];
        let bytes = encode(&key("/r/.git"), &chains(&[("refs/mas/focus/alice", 2, w)]));
        let other = |f: &dyn Fn(&mut CacheKey)| {
            let mut k = key("/r/.git");
            f(&mut k);
            decode(&k, &bytes).len()
        };
        assert_eq!(other(&|_| {}), 1);
        assert_eq!(other(&|k| k.common_dir = "/other/.git".into()), 0, "another repository");
        assert_eq!(other(&|k| k.roster = "R2".into()), 0, "another roster");
        assert_eq!(other(&|k| k.window = 4), 0, "another window");
        assert_eq!(other(&|k| k.prefix = "refs/mas/journal/".into()), 0, "another prefix");
        for cut in [0, 10, 64, 65, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode(&key("/r/.git"), &bytes[..cut]).is_empty(), "torn at {cut}");
        }
        let mut flipped = bytes.clone();
        let at = flipped.len() - 20;
        flipped[at] ^= 1;
        assert!(decode(&key("/r/.git"), &flipped).is_empty(), "edited body");
    }

    #[test]
    fn a_window_is_used_only_at_its_tip_and_when_consistent() {
        let good: Window = vec![entry(1, None, 1), entry(2, Some(1), 2)];
        let full: Window = vec![entry(2, Some(1), 2), entry(3, Some(2), 3), entry(4, Some(3), 4)];
        let c = |tip: u8, w: &Window| cached_of("refs/mas/focus/alice", &id(tip), w).unwrap();
        let cases: Vec<(&str, CachedChain, u8, bool)> = vec![
            ("same tip", c(2, &good), 2, true),
            ("moved tip", c(2, &good), 3, false),
            ("a full window need not reach the root", c(4, &full), 4, true),
            ("a short window must start at the root", c(4, &full[1..].to_vec()), 4, false),
            ("broken parent link", c(2, &vec![entry(1, None, 1), entry(2, Some(9), 2)]), 2, false),
            ("newest is not the tip", c(1, &good), 1, false),
            ("longer than the window", c(5, &[good.clone(), full.clone()].concat()), 5, false),
            ("empty", c(2, &Vec::new()), 2, false),
        ];
        for (what, chain, tip, usable) in cases {
            let got = window_of(&chain, &id(tip), 3);
            assert_eq!(got.is_some(), usable, "{what}");
            if let Some(w) = got {
                let want: Vec<_> = chain.entries.iter().map(|e| e.commit.clone()).collect();
                assert_eq!(w.iter().map(|(e, _)| e.commit.to_string()).collect::<Vec<_>>(), want, "{what}");
            }
        }
        let mut garbled = c(2, &good);
        garbled.entries[1].record = "{not json".into();
        assert!(window_of(&garbled, &id(2), 3).is_none(), "a record that does not parse");
    }

    #[test]
    fn a_moved_ref_is_offered_the_window_at_the_tip_it_was_read_at() {
        let dir = tempfile::tempdir().unwrap();
        let key = CacheKey { common_dir: dir.path().into(), ..key("") };
        let good: Window = vec![entry(1, None, 1), entry(2, Some(1), 2)];
        let mut broken = cached_of("refs/mas/focus/bob", &id(2), &good).unwrap();
        broken.entries[0].commit = id(9).to_string();
        let mut chains = chains(&[("refs/mas/focus/alice", 2, good)]);
        chains.insert("refs/mas/focus/bob".into(), broken);
        std::fs::write(dir.path().join(cache_file_name(&key.prefix)), encode(&key, &chains)).unwrap();
        let mut cache = WindowCache::load(key);
        assert!(cache.get("refs/mas/focus/alice", &id(3)).is_none(), "the ref moved");
        let (tip, window) = cache.earlier("refs/mas/focus/alice").unwrap();
        assert_eq!(tip, id(2));
        assert_eq!(window.iter().map(|(e, _)| e.commit).collect::<Vec<_>>(), [id(1), id(2)]);
        assert!(cache.earlier("refs/mas/focus/bob").is_none(), "an inconsistent window is not offered");
        assert!(cache.earlier("refs/mas/focus/carol").is_none());
    }

    #[test]
    fn verdicts_and_records_survive_a_round_trip() {
        let mut w: Window = vec![entry(1, None, 1), entry(2, Some(1), 2)];
        w[0].1 = Verdict::Replay { seq: 1, last: 4 };
        let bytes = encode(&key("/r/.git"), &chains(&[("refs/mas/focus/alice", 2, w.clone())]));
        let back = decode(&key("/r/.git"), &bytes);
        let got = window_of(&back["refs/mas/focus/alice"], &id(2), 3).unwrap();
        assert_eq!(
            got.iter().map(|(_, v)| v.clone()).collect::<Vec<_>>(),
            [Verdict::Replay { seq: 1, last: 4 }, Verdict::Verified]
        );
        assert_eq!(got[1].0.record.as_ref().unwrap(), w[1].0.record.as_ref().unwrap());
        assert_eq!(got[1].0.blob, w[1].0.blob);
    }

    #[test]
    fn a_parse_error_is_not_cached() {
        let mut w: Window = vec![entry(1, None, 1)];
        w[0].0.record = Err(super::super::record::ParseError::NotJson("x".into()));
        assert!(cached_of("refs/mas/focus/alice", &id(1), &w).is_none());
    }

    #[test]
    fn the_roster_digest_follows_names_and_keys() {
        let r = |pairs: &[(&str, &str)]| {
            let v = pairs.iter().map(|(n, d)| (n.to_string(), d.to_string())).collect();
            roster_digest(&Roster::merge(v, Vec::new(), "main"))
        };
        assert_eq!(r(&[("a", "did:1"), ("b", "did:2")]), r(&[("b", "did:2"), ("a", "did:1")]));
        assert_ne!(r(&[("a", "did:1"), ("b", "did:2")]), r(&[("a", "did:1")]), "agent removed");
        assert_ne!(r(&[("a", "did:1")]), r(&[("a", "did:3")]), "key rotated");
        assert_ne!(r(&[("ab", "did:1")]), r(&[("a", "bdid:1")]), "names and keys are separated");
    }
}

//! The board's read cache: every focus chain's window as the fold reads it ([`super::board::Item`]s),
//! keyed by each chain's exact tip and by the roster.
//!
//! The store's window cache ([`crate::store::windowcache`]) spares a board reader the object reads
//! and signature checks of chains that did not move, but each read still decoded every cached record
//! from its canonical bytes and every payload from JSON values: on an edit hook that touches
//! nothing, most of the board's cost. What the fold needs of a record ([`super::board::item`]) is a pure
//! function of the record and its verdict, and a window's records and verdicts are a pure function
//! of the chain's tip, the window's length and the roster (the window cache's own argument). So this
//! file keeps, per focus ref, the tip it was read at and its items, under the roster's digest and
//! the window length: when every listed focus ref still points where the file says, the board is
//! folded from the file alone — no window cache, no object, no record parsed. When any ref moved,
//! appeared or cannot be listed with a tip, the board is read through the window cache as before
//! and the file is written again with what that read gave.
//!
//! **Lapsed chains are not even parsed** by a reader that needs only the live board (the gate,
//! the edit hook, a claim: [`crate::attention::focus_store::read_live_board`]). Each chain is
//! kept with its *horizon*, the latest expiry of any focus record in its window: once the
//! reader's clock has passed it, no record of the chain can be live, whatever the frame, so the
//! chain is skipped — its items stay unparsed text in the file. A chain that moves gets a new tip,
//! and so is read again. With 10,000 lapsed sessions on the board this is what keeps such a read
//! flat.
//!
//! Nothing that depends on the reader's clock or on the frame is kept: the fold ([`super::board::fold_items`])
//! runs on every read, so a lease lapses on time with no ref moving and a target is checked
//! against the frame at hand.
//!
//! **Doubt means a fresh read.** The file (`mas-board-focus` in the common git dir) is sealed
//! ([`crate::store::sealed`]): a torn, truncated or edited file, or one copied from another
//! repository, is ignored whole, and so is one of another format version, roster or window. As
//! with the window cache, a forged file with a recomputed checksum could show a board the chains do
//! not hold — and whoever can write the common git dir can already rewrite any ref under
//! `refs/mas/`, so the file adds no new trust.
//!
//! **What a crash leaves.** Written to `mas-board-focus.tmp.<pid>` and renamed over the old file: a
//! reader sees the old file or the new one, never a mix. A killed writer leaves at most that
//! temporary file, which no reader opens. Two writers at once each rename a whole file, either
//! correct for the tips it names. Failing to write costs only speed.

use super::board::{ChainItems, Item};
use crate::store::sealed;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};

/// The file's name in the common git dir.
pub const CACHE_FILE: &str = "mas-board-focus";

/// The format version: a file of another version is ignored (3: a focus may name its run, which a
/// file written by an earlier version would have dropped).
const VERSION: u32 = 3;

/// One chain as kept: its ref, the tip its items were read at, its horizon, and the items, oldest
/// first, as JSON text parsed only when wanted ([`Chain::items`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Chain {
    /// The focus ref.
    pub refname: String,
    /// The commit the ref pointed at.
    pub tip: String,
    /// The latest expiry (Unix seconds) of any focus record among the items; 0 when none.
    pub horizon: u64,
    /// The window's records as the fold reads them ([`ChainItems`]), as JSON.
    items: Box<RawValue>,
}

impl Chain {
    /// The chain `refname` at `tip` with `items`.
    pub fn new(refname: String, tip: String, items: &ChainItems) -> Option<Chain> {
        let raw = serde_json::value::to_raw_value(items).ok()?;
        Some(Chain { refname, tip, horizon: horizon(items), items: raw })
    }

    /// The items; `None` when the text does not parse (then the chain is read again).
    pub fn items(&self) -> Option<ChainItems> {
        serde_json::from_str(self.items.get()).ok()
    }
}

impl PartialEq for Chain {
    fn eq(&self, other: &Chain) -> bool {
        (&self.refname, &self.tip, self.horizon, self.items.get())
            == (&other.refname, &other.tip, other.horizon, other.items.get())
    }
}

/// The latest expiry of any focus record among `items` (publication plus TTL, whether or not the
/// fold will find the record valid): no record of the chain is live at or after it.
pub fn horizon(items: &ChainItems) -> u64 {
    items
        .iter()
        .filter_map(|(_, item)| match item {
            Item::Focus { payload, .. } => Some(payload.published_at.saturating_add(payload.ttl_secs)),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

#[derive(Serialize, Deserialize)]
struct Body {
    version: u32,
    roster: String,
    window: usize,
    chains: Vec<Chain>,
}

fn path(common_dir: &Path) -> PathBuf {
    common_dir.join(CACHE_FILE)
}

/// The chains the file holds for `roster` (a roster digest) and `window`, sorted by ref name as
/// written; empty when the file is absent or anything about it is in doubt.
pub fn load(common_dir: &Path, roster: &str, window: usize) -> Vec<Chain> {
    let Ok(bytes) = std::fs::read(path(common_dir)) else { return Vec::new() };
    let Some(body) = sealed::unseal(common_dir, &bytes) else { return Vec::new() };
    match serde_json::from_slice::<Body>(body) {
        Ok(b) if b.version == VERSION && b.roster == roster && b.window == window => b.chains,
        _ => Vec::new(),
    }
}

/// The kept chains when they are exactly `listed` ((ref, tip) pairs, in order): the board then
/// folds from them alone. `None` when any ref is missing, extra, or at another tip.
pub fn hit(kept: Vec<Chain>, listed: &[(String, String)]) -> Option<Vec<Chain>> {
    let same = kept.len() == listed.len()
        && kept.iter().zip(listed).all(|(c, (name, tip))| c.refname == *name && c.tip == *tip);
    same.then_some(kept)
}

/// Replaces the file with `chains` (best effort).
pub fn save(common_dir: &Path, roster: &str, window: usize, chains: Vec<Chain>) {
    let body = Body { version: VERSION, roster: roster.to_string(), window, chains };
    let Ok(json) = serde_json::to_vec(&body) else { return };
    sealed::replace(&path(common_dir), &sealed::seal(common_dir, &json));
}

/// A read's chains, to be written to the file when the reader is done — unless it then appends to
/// a focus chain, which would make the file stale at once ([`Pending::forget`]). Written when
/// dropped.
#[derive(Debug)]
pub struct Pending {
    common_dir: PathBuf,
    roster: String,
    window: usize,
    chains: Option<Vec<Chain>>,
}

impl Pending {
    /// What [`save`] would write.
    pub fn new(common_dir: &Path, roster: &str, window: usize, chains: Vec<Chain>) -> Pending {
        Pending { common_dir: common_dir.to_path_buf(), roster: roster.to_string(), window, chains: Some(chains) }
    }

    /// Drops it unwritten: the reader is about to move a focus chain.
    pub fn forget(mut self) {
        self.chains = None;
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(chains) = self.chains.take() {
            save(&self.common_dir, &self.roster, self.window, chains);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::board::{FocusPayload, Item};

    fn chain(name: &str, tip: &str) -> Chain {
        let payload = FocusPayload {
            frame: "f".into(),
            targets: vec!["a.rs".into()],
            ttl_secs: 60,
            published_at: 7,
            claims: true,
            run: Some("r1".into()),
        };
        let items = vec![
            ("c1".into(), Item::Focus { seq: 1, payload }),
            ("c2".into(), Item::Release { seq: 2, at: 9 }),
            ("c3".into(), Item::Unverified { verdict: "SPOOF".into() }),
        ];
        let chain = Chain::new(format!("refs/mas/focus/{name}"), tip.into(), &items).unwrap();
        assert_eq!(chain.items(), Some(items));
        assert_eq!(chain.horizon, 67, "published at 7, for 60 s");
        chain
    }

    #[test]
    fn a_saved_file_is_read_back_only_for_its_roster_window_and_tips() {
        let dir = std::env::temp_dir().join(format!("mas-board-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let chains = vec![chain("a", "t1"), chain("b", "t2")];
        save(&dir, "r1", 32, chains.clone());
        assert_eq!(load(&dir, "r1", 32), chains);
        assert!(load(&dir, "r2", 32).is_empty(), "another roster");
        assert!(load(&dir, "r1", 16).is_empty(), "another window");
        let listed = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(n, t)| (format!("refs/mas/focus/{n}"), t.to_string())).collect()
        };
        assert_eq!(hit(load(&dir, "r1", 32), &listed(&[("a", "t1"), ("b", "t2")])), Some(chains));
        assert_eq!(hit(load(&dir, "r1", 32), &listed(&[("a", "t1"), ("b", "t3")])), None, "a ref moved");
        assert_eq!(hit(load(&dir, "r1", 32), &listed(&[("a", "t1")])), None, "a ref went");
        assert_eq!(hit(load(&dir, "r1", 32), &listed(&[("a", "t1"), ("b", "t2"), ("c", "t4")])), None);
        // A file changed by a byte is ignored whole.
        let file = dir.join(CACHE_FILE);
        let mut bytes = std::fs::read(&file).unwrap();
        let at = bytes.len() - 3;
        bytes[at] ^= 1;
        std::fs::write(&file, &bytes).unwrap();
        assert!(load(&dir, "r1", 32).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

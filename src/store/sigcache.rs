//! A cache of signatures already verified, keyed by the record blob's object id and the signer's
//! did:key.
//!
//! Objects are content-addressed: a blob whose signature verified under a key verifies under that
//! key forever, so a reader need not pay ~40 µs of ed25519 per record on every read. Only positive
//! results are kept. The cache is a plain append-only file in the common git dir
//! (`mas-verified`), one `<blob id> <first 16 hex of sha256(did)>` line per entry; lines that do not
//! parse are ignored, so a torn write costs a re-verification, never a wrong answer. Anyone who can
//! write the git dir can already rewrite every ref, so the cache adds no new trust.

use gix::ObjectId;
use sha2::Digest;
use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;

/// The cache file's name in the common git dir.
pub const CACHE_FILE: &str = "mas-verified";

/// Verified (blob, signer) pairs.
#[derive(Debug, Default)]
pub struct SigCache {
    path: PathBuf,
    known: HashSet<String>,
    fresh: Vec<String>,
}

fn key(blob: &ObjectId, did: &str) -> String {
    let digest = sha2::Sha256::digest(did.as_bytes());
    format!("{blob} {}", crate::identity::key::hex(&digest[..8]))
}

impl SigCache {
    /// Loads the cache of the repository whose common dir is `common_dir` (empty when absent).
    pub fn load(common_dir: &std::path::Path) -> Self {
        let path = common_dir.join(CACHE_FILE);
        let known = std::fs::read_to_string(&path)
            .map(|t| t.lines().filter(|l| l.len() == 40 + 1 + 16 || l.len() == 64 + 1 + 16).map(String::from).collect())
            .unwrap_or_default();
        SigCache { path, known, fresh: Vec::new() }
    }

    /// Whether this blob's signature was verified under `did` before.
    pub fn contains(&self, blob: &ObjectId, did: &str) -> bool {
        self.known.contains(&key(blob, did))
    }

    /// Remembers a verified signature.
    pub fn insert(&mut self, blob: &ObjectId, did: &str) {
        let k = key(blob, did);
        if self.known.insert(k.clone()) {
            self.fresh.push(k);
        }
    }

    /// Appends the new entries to the file (best effort: a cache that cannot be written is only slower).
    pub fn save(&mut self) {
        if self.fresh.is_empty() {
            return;
        }
        let mut text = String::new();
        for k in self.fresh.drain(..) {
            text.push_str(&k);
            text.push('\n');
        }
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(&self.path) {
            // One write call: concurrent appenders interleave whole lines.
            let _ = f.write_all(text.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_survive_a_reload_and_garbage_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let blob = ObjectId::from_hex(b"0123456789abcdef0123456789abcdef01234567").unwrap();
        let mut cache = SigCache::load(dir.path());
        assert!(!cache.contains(&blob, "did:key:zA"));
        cache.insert(&blob, "did:key:zA");
        cache.save();
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(CACHE_FILE))
            .unwrap()
            .write_all(b"torn li")
            .unwrap();
        let reloaded = SigCache::load(dir.path());
        assert!(reloaded.contains(&blob, "did:key:zA"));
        assert!(!reloaded.contains(&blob, "did:key:zB"), "the signer is part of the key");
    }
}

//! A cache of the parsed roster, keyed by exactly what it was parsed from.
//!
//! Parsing `.mas/roster` checks that every did:key decodes to an ed25519 point: 64 point
//! decompressions for 64 agents, the largest single cost of an edit-time gate once the board comes
//! from the window cache ([`super::windowcache`]). Parsing is a pure function of the integration
//! branch's name, the committed file and the worktree's file — and the committed file is named by
//! the branch's tip commit (a commit id names its tree and every blob in it). So the entries parsed
//! are kept (`mas-roster` in the common git dir) under a SHA-256 of the branch name, the tip's id
//! and the worktree file's bytes, and taken from there while those are the same: a reader whose
//! branch has not moved reads no object at all. Anything else is parsed afresh; bytes that do not
//! parse are never cached, so their error is reported on every read.
//!
//! **Doubt means a fresh parse.** The file starts with a SHA-256 over the common git dir and the
//! body: a torn or edited file, or one from another repository, is ignored. A forged file with a
//! recomputed checksum could name entries the roster does not have — but whoever can write the
//! common git dir can already commit any roster to the integration branch, so the cache adds no new
//! trust. **What a crash leaves:** written to `mas-roster.tmp.<pid>` and renamed over the old file,
//! so a reader sees a whole file or none; a killed writer leaves at most that temporary file, which
//! nobody reads.

use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::path::{Path, PathBuf};

/// The cache file's name in the common git dir.
pub const CACHE_FILE: &str = "mas-roster";

const VERSION: u32 = 2;

/// (name, did:key) pairs, in file order, as `identity::parse_roster` returns them.
pub type Pairs = Vec<(String, String)>;

/// A digest of what a roster is parsed from: the integration branch's name, the id of the commit
/// the committed file is read from (hex; absent without the branch) and the worktree's file
/// (absent without one).
pub fn sources_digest(branch: &str, committed: Option<&[u8]>, worktree: Option<&[u8]>) -> String {
    let mut h = sha2::Sha256::new();
    h.update(branch.as_bytes());
    for part in [committed, worktree] {
        match part {
            Some(b) => {
                h.update([1]);
                h.update((b.len() as u64).to_le_bytes());
                h.update(b);
            }
            None => h.update([0]),
        }
    }
    crate::identity::key::hex(&h.finalize())
}

#[derive(Debug, Serialize, Deserialize)]
struct Body {
    version: u32,
    sources: String,
    committed: Pairs,
    worktree: Pairs,
}

fn path(common_dir: &Path) -> PathBuf {
    common_dir.join(CACHE_FILE)
}

fn encode(common_dir: &Path, sources: &str, committed: &Pairs, worktree: &Pairs) -> Vec<u8> {
    let body =
        Body { version: VERSION, sources: sources.into(), committed: committed.clone(), worktree: worktree.clone() };
    super::sealed::seal(common_dir, &serde_json::to_vec(&body).unwrap_or_default())
}

fn decode(common_dir: &Path, sources: &str, bytes: &[u8]) -> Option<(Pairs, Pairs)> {
    let body: Body = serde_json::from_slice(super::sealed::unseal(common_dir, bytes)?).ok()?;
    (body.version == VERSION && body.sources == sources).then_some((body.committed, body.worktree))
}

/// The (committed, worktree) entries parsed before from the bytes whose digest is `sources`.
pub fn load(common_dir: &Path, sources: &str) -> Option<(Pairs, Pairs)> {
    decode(common_dir, sources, &std::fs::read(path(common_dir)).ok()?)
}

/// Remembers what the bytes whose digest is `sources` parsed to (best effort: temporary file,
/// then rename).
pub fn save(common_dir: &Path, sources: &str, committed: &Pairs, worktree: &Pairs) {
    super::sealed::replace(&path(common_dir), &encode(common_dir, sources, committed, worktree));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_separates_every_source() {
        let d = sources_digest;
        let all = [
            d("main", Some(b"a x\n"), None),
            d("main", None, Some(b"a x\n")),
            d("main", Some(b"a x\n"), Some(b"")),
            d("main", Some(b"a x\n"), Some(b"b y\n")),
            d("main", Some(b"a x\nb y\n"), None),
            d("trunk", Some(b"a x\n"), None),
            d("main", None, None),
        ];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(d("main", Some(b"a x\n"), None), all[0]);
    }

    #[test]
    fn a_file_is_used_only_for_its_sources_and_repository() {
        let dir = tempfile::tempdir().unwrap();
        let pairs: Pairs = vec![("alice".into(), "did:key:zA".into())];
        save(dir.path(), "S", &pairs, &Vec::new());
        assert_eq!(load(dir.path(), "S"), Some((pairs.clone(), Vec::new())));
        assert_eq!(load(dir.path(), "T"), None, "other bytes");
        let bytes = std::fs::read(dir.path().join(CACHE_FILE)).unwrap();
        assert_eq!(decode(Path::new("/elsewhere"), "S", &bytes), None, "another repository");
        for cut in [0, 1, 64, 65, bytes.len() - 1] {
            assert_eq!(decode(dir.path(), "S", &bytes[..cut]), None, "torn at {cut}");
        }
        let edited = String::from_utf8(bytes).unwrap().replace("alice", "mallo");
        assert_eq!(decode(dir.path(), "S", edited.as_bytes()), None, "edited");
        assert!(
            std::fs::read_dir(dir.path()).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().contains(".tmp."))
        );
    }
}

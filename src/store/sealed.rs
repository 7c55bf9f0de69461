//! A cache file sealed to its repository: the first line is a SHA-256 over the repository's common
//! dir and the body, so a torn, truncated or edited file, or one copied from another repository,
//! fails the check and is ignored as a whole. Written to `<name>.tmp.<pid>` beside it and renamed
//! over the old file, so a reader sees the old file or the new one, never a mix; a process killed
//! mid-write leaves at most that temporary file, which no reader opens. Failing to write costs only
//! speed: every caller reads afresh what the file does not vouch for.
//!
//! Used by the verified-window cache ([`super::windowcache`]), the roster cache
//! ([`super::rostercache`]) and team mode's frame-order cache (`attention::team`).

use sha2::Digest;
use std::path::Path;

fn checksum(common_dir: &Path, body: &[u8]) -> String {
    let mut h = sha2::Sha256::new();
    h.update(common_dir.as_os_str().as_encoded_bytes());
    h.update([0]);
    h.update(body);
    crate::identity::key::hex(&h.finalize())
}

/// The file's bytes for `body` in the repository whose common dir is `common_dir`.
pub fn seal(common_dir: &Path, body: &[u8]) -> Vec<u8> {
    let mut out = checksum(common_dir, body).into_bytes();
    out.push(b'\n');
    out.extend_from_slice(body);
    out
}

/// The body of a sealed file, `None` when the seal does not match (or there is none).
pub fn unseal<'a>(common_dir: &Path, bytes: &'a [u8]) -> Option<&'a [u8]> {
    let nl = bytes.iter().position(|&b| b == b'\n')?;
    let (sum, body) = (&bytes[..nl], &bytes[nl + 1..]);
    (sum == checksum(common_dir, body).as_bytes()).then_some(body)
}

/// Replaces the file at `path` with `bytes` (best effort: [`crate::fsx::write_atomic`]).
pub fn replace(path: &Path, bytes: &[u8]) {
    let _ = crate::fsx::write_atomic(path, bytes, None);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_unseals_only_in_its_repository_and_whole() {
        let (a, b) = (Path::new("/r/a/.git"), Path::new("/r/b/.git"));
        let sealed = seal(a, b"{\"x\":1}");
        assert_eq!(unseal(a, &sealed), Some(&b"{\"x\":1}"[..]));
        assert_eq!(unseal(b, &sealed), None, "another repository");
        assert_eq!(unseal(a, &sealed[..sealed.len() - 1]), None, "torn");
        let mut edited = sealed.clone();
        *edited.last_mut().unwrap() = b'2';
        assert_eq!(unseal(a, &edited), None, "edited");
        assert_eq!(unseal(a, b"no seal"), None);
        assert_eq!(unseal(a, b""), None);
    }
}

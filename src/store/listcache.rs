//! A listing of the refs under one prefix, kept while nothing it read has changed.
//!
//! Every gate and hook call lists the focus refs to learn that nothing moved, and with 10,000
//! sessions on the board (lapsed ones, not yet pruned) that listing opened, read and closed
//! 10,000 loose ref files: most of such a call, and all of it system time. But a loose ref changes
//! only by a rename into its directory (git's lock protocol, and ours: [`super::refs`]) or an
//! unlink from it, and `packed-refs` is only ever replaced by a rename: each changes the
//! directory's or the file's identity and times ([`Stamp`]). So this file keeps the last listing
//! with the stamps it saw, and a reader whose stamps are the same — one `stat` per directory and
//! one of `packed-refs` — takes the listing from the file.
//!
//! **Racing the clock.** A change within the same clock tick as a recorded time leaves that time
//! as it was, and a listing taken in that tick could miss it. A listing is therefore kept only when
//! every time its stamps hold was at least [`QUIET`] old when the listing began (taken from the
//! reader's clock, which file times on a local file system follow within a tick): a directory
//! changed in the last second is listed afresh every time until it has been quiet that long. On a
//! file system whose times come from another machine's clock (a network mount) that argument does
//! not hold; git-mas's locks do not hold there either.
//!
//! **What is not caught.** A ref file rewritten in place (not renamed) keeps its directory's times;
//! neither git nor git-mas writes a ref so, and whoever can write the common git dir can already
//! rewrite any ref (the same trust as the board's and the window cache's files).
//!
//! **Doubt means a fresh listing.** The file (`mas-refs-<last prefix component>` in the common
//! git dir) is sealed ([`super::sealed`]): torn, edited or copied from another repository, it is
//! ignored whole, and so is one of another version or prefix. **What a crash leaves:** written to a
//! temporary file and renamed into place, so a reader sees the old file or the new one; a killed
//! writer leaves at most that temporary file, which no reader opens. Failing to write costs only
//! speed.

use super::refs::{Listed, Stamp};
use super::{RefInfo, Store, StoreError};
use gix::ObjectId;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How old every time in a listing's stamps must be, when the listing begins, for it to be kept.
pub const QUIET: Duration = Duration::from_secs(1);

/// The first line of the body: the format and its version.
const HEADER: &str = "git-mas ref listing 1";

fn path(common_dir: &Path, prefix: &str) -> PathBuf {
    let last = prefix.trim_end_matches('/').rsplit('/').next().unwrap_or_default();
    common_dir.join(format!("mas-refs-{last}"))
}

impl Store {
    /// [`Store::list`] of `prefix` (refs in the common git dir), taken from the kept listing when
    /// nothing it read has changed since (see the module docs), else listed afresh and kept when it
    /// is quiet.
    pub fn list_kept(&self, prefix: &str) -> Result<Vec<RefInfo>, StoreError> {
        if !super::refs::RefFiles::handles(prefix) {
            return self.list(prefix);
        }
        let common = self.common_dir();
        if let Some(kept) = load(common, prefix, &|stamps| self.refs.stamps_now(stamps)) {
            return Ok(kept
                .into_iter()
                .map(|(name, id)| RefInfo { name, target: Some(id.to_string()), problem: None })
                .collect());
        }
        let began = SystemTime::now();
        let (listed, stamps) = self.refs.list_stamped(prefix).map_err(|e| super::ref_file_err(prefix, e))?;
        save(common, prefix, began, &stamps, &listed);
        Ok(ref_infos(listed))
    }
}

/// The kept listing of `prefix` when the file holds one whose stamps are what `now` finds.
fn load(common_dir: &Path, prefix: &str, now: &dyn Fn(&[Stamp]) -> Vec<Stamp>) -> Option<Vec<(String, ObjectId)>> {
    let bytes = std::fs::read(path(common_dir, prefix)).ok()?;
    let body = std::str::from_utf8(super::sealed::unseal(common_dir, &bytes)?).ok()?;
    let mut lines = body.lines();
    if lines.next()? != HEADER || lines.next()? != prefix {
        return None;
    }
    let (mut stamps, mut refs) = (Vec::new(), Vec::new());
    for line in lines {
        match line.split_once(' ')? {
            ("s", rest) => stamps.push(parse_stamp(rest)?),
            ("r", rest) => {
                let (id, name) = rest.split_once(' ')?;
                refs.push((name.to_string(), ObjectId::from_hex(id.as_bytes()).ok()?));
            }
            _ => return None,
        }
    }
    (!stamps.is_empty() && now(&stamps) == stamps).then_some(refs)
}

fn parse_stamp(text: &str) -> Option<Stamp> {
    let mut f = text.split(' ');
    let path = f.next()?.to_string();
    let seen = match f.next()? {
        "-" => None,
        dev => Some((dev.parse().ok()?, f.next()?.parse().ok()?, f.next()?.parse().ok()?, f.next()?.parse().ok()?)),
    };
    f.next().is_none().then_some(Stamp { path, seen })
}

/// Keeps `listed` with its `stamps` when every time they hold is [`QUIET`] older than `began`
/// and every ref has a value (a ref that cannot be read is listed afresh, to be named again).
fn save(common_dir: &Path, prefix: &str, began: SystemTime, stamps: &[Stamp], listed: &[Listed]) {
    let Ok(began) = began.duration_since(SystemTime::UNIX_EPOCH) else { return };
    let horizon = began.saturating_sub(QUIET).as_nanos() as i128;
    let quiet = stamps.iter().all(|s| s.seen.is_none_or(|(_, _, m, c)| m < horizon && c < horizon));
    // Fields are split on spaces: a name that holds one (git accepts none in a ref) is not kept.
    let plain = |t: &str| !t.is_empty() && !t.contains([' ', '\n', '\r']);
    if !quiet || listed.iter().any(|(n, v)| v.is_err() || !plain(n)) || !stamps.iter().all(|s| plain(&s.path)) {
        return;
    }
    let mut body = format!("{HEADER}\n{prefix}\n");
    for s in stamps {
        match s.seen {
            Some((dev, ino, m, c)) => body.push_str(&format!("s {} {dev} {ino} {m} {c}\n", s.path)),
            None => body.push_str(&format!("s {} -\n", s.path)),
        }
    }
    for (name, id) in listed {
        if let Ok(id) = id {
            body.push_str(&format!("r {id} {name}\n"));
        }
    }
    super::sealed::replace(&path(common_dir, prefix), &super::sealed::seal(common_dir, body.as_bytes()));
}

/// A listing's refs as [`Store::list`] reports them: a ref that cannot be read with the problem.
pub(super) fn ref_infos(listed: Vec<Listed>) -> Vec<RefInfo> {
    listed
        .into_iter()
        .map(|(name, value)| match value {
            Ok(id) => RefInfo { name, target: Some(id.to_string()), problem: None },
            Err(super::refs::RefFileError::Unreadable { content, .. }) if content.starts_with("ref:") => {
                RefInfo { name, target: None, problem: Some("symbolic ref".into()) }
            }
            Err(e) => {
                let problem = super::ref_file_err(&name, e).to_string();
                RefInfo { name, target: None, problem: Some(problem) }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        String::from_utf8(crate::git::run(dir, args).unwrap()).unwrap()
    }

    fn names(infos: &[RefInfo]) -> Vec<(String, Option<String>)> {
        infos.iter().map(|i| (i.name.clone(), i.target.clone())).collect()
    }

    #[test]
    fn a_quiet_listing_is_kept_and_any_rename_unlink_or_pack_lists_afresh() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        for (i, r) in ["a", "b", "c"].iter().enumerate() {
            git(
                dir,
                &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", &i.to_string()],
            );
            git(dir, &["update-ref", &format!("refs/mas/focus/{r}"), "HEAD"]);
        }
        let store = Store::discover(dir).unwrap();
        let prefix = "refs/mas/focus/";
        let file = path(store.common_dir(), prefix);
        let fresh = store.list(prefix).unwrap();
        assert_eq!(fresh.len(), 3);
        // Just written: too young to keep.
        assert_eq!(names(&store.list_kept(prefix).unwrap()), names(&fresh));
        assert!(!file.exists(), "a listing of a directory changed within the last second was kept");
        std::thread::sleep(QUIET + Duration::from_millis(100));
        assert_eq!(names(&store.list_kept(prefix).unwrap()), names(&fresh));
        assert!(file.exists(), "a quiet listing was not kept");
        // Kept, and read from the file: a ref rewritten in place (which neither git nor git-mas
        // does) changes no stamp, so the kept value is still what the listing gives.
        let a = dir.join(".git/refs/mas/focus/a");
        let first = std::fs::read_to_string(&a).unwrap();
        let c = git(dir, &["rev-parse", "refs/mas/focus/c"]);
        std::fs::write(&a, format!("{}\n", c.trim())).unwrap();
        assert_eq!(names(&store.list_kept(prefix).unwrap()), names(&fresh), "the kept listing was not used");
        // A ref moved by git's lock and rename: listed afresh (and so the in-place one too).
        git(dir, &["update-ref", "refs/mas/focus/b", first.trim()]);
        let now = store.list_kept(prefix).unwrap();
        assert_eq!(names(&now), names(&store.list(prefix).unwrap()));
        assert_eq!(now[0].target.as_deref(), Some(c.trim()));
        assert_eq!(now[1].target.as_deref(), Some(first.trim()));
        // A deleted ref, then every ref packed: each listed afresh.
        git(dir, &["update-ref", "-d", "refs/mas/focus/c"]);
        assert_eq!(store.list_kept(prefix).unwrap().len(), 2);
        std::thread::sleep(QUIET + Duration::from_millis(100));
        assert_eq!(store.list_kept(prefix).unwrap().len(), 2);
        git(dir, &["pack-refs", "--all"]);
        git(dir, &["update-ref", "refs/mas/focus/d", "HEAD"]);
        assert_eq!(names(&store.list_kept(prefix).unwrap()), names(&store.list(prefix).unwrap()));
        assert_eq!(store.list_kept(prefix).unwrap().len(), 3);
    }

    #[test]
    fn a_kept_listing_of_another_prefix_or_with_other_stamps_or_torn_or_young_is_not_taken() {
        let stamps = vec![Stamp { path: "refs/mas/focus".into(), seen: Some((1, 2, 3, 4)) }];
        let id = ObjectId::from_hex(b"0123456789012345678901234567890123456789").unwrap();
        let listed: Vec<Listed> = vec![("refs/mas/focus/a".into(), Ok(id))];
        let tmp = tempfile::tempdir().unwrap();
        let common = tmp.path();
        save(common, "refs/mas/focus/", SystemTime::now(), &stamps, &listed);
        let same = |s: &[Stamp]| s.to_vec();
        assert_eq!(load(common, "refs/mas/focus/", &same), Some(vec![("refs/mas/focus/a".to_string(), id)]));
        assert_eq!(load(common, "refs/mas/other/", &same), None, "another prefix's name");
        let moved = |s: &[Stamp]| s.iter().map(|s| Stamp { seen: None, ..s.clone() }).collect();
        assert_eq!(load(common, "refs/mas/focus/", &moved), None, "a stamp changed");
        let file = path(common, "refs/mas/focus/");
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&file, &bytes[..bytes.len() - 3]).unwrap();
        assert_eq!(load(common, "refs/mas/focus/", &same), None, "torn");
        std::fs::write(&file, &bytes).unwrap();
        assert!(load(common, "refs/mas/focus/", &same).is_some());
        // Young stamps are not kept.
        std::fs::remove_file(&file).unwrap();
        let young = SystemTime::UNIX_EPOCH + Duration::from_nanos(3) + QUIET / 2;
        save(common, "refs/mas/focus/", young, &stamps, &listed);
        assert!(!file.exists(), "a listing whose times were younger than QUIET was kept");
    }
}

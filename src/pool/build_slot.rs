//! Build slots: the build directory the checks of one repository share, so that a check of the
//! same crate is not a cold build each time.
//!
//! Every check runs in a fresh scratch checkout (`super::check`), so a toolchain that keeps its
//! build outside the source tree can reuse what an earlier check built — cargo's dependencies
//! above all, which are rebuilt only when their version or flags change. A check gets
//! `CARGO_TARGET_DIR` pointing at a slot's `target/`, also when git-mas's own environment names
//! one: a build directory shared outside the slots' locks would bring back the hazard below. A
//! check command that sets its own (`CARGO_TARGET_DIR=… cargo test`, a script that exports it)
//! keeps it.
//!
//! Decision — why a slot is locked for the whole check, and the checkout is written only once
//! the lock is held: cargo judges a path crate (the project itself) fresh by file times — a
//! source file older than the last build's start is taken as built. A checkout written before
//! another check's build finished would look older than that build and be passed on the other
//! tree's artifacts. Holding the slot from before the checkout is written until the check ends
//! makes every checkout in a slot newer than every build before it: the project is always
//! rebuilt, its dependencies are not. Slots are `min(available parallelism, 4)`, so checks of
//! several agents still run side by side, each in a free slot; when every slot is busy a check
//! waits for one.
//!
//! The slots live under the system's temporary directory, `git-mas-build-<repository tag>/<k>/`
//! (`lock`, `target/`): a cache, never needed for correctness — removing it costs a cold build.
//! A killed check leaves nothing locked (the lock is the kernel's, on an open file) and its
//! scratch checkout to the next check's sweep.

use super::{PoolError, io_err};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// How build slots' directories begin (under the system's temporary directory).
pub const BUILD_PREFIX: &str = "git-mas-build-";

/// The most slots a repository has.
const MAX_SLOTS: usize = 4;

/// A slot held for one check: released when dropped.
#[derive(Debug)]
pub struct Slot {
    dir: PathBuf,
    _lock: File,
}

impl Slot {
    /// The build directory a check in this slot uses.
    pub fn target(&self) -> PathBuf {
        self.dir.join("target")
    }
}

/// Takes a free build slot of the repository whose common git dir is `owner`, waiting for one
/// when every slot is busy.
pub fn take(owner: &Path) -> Result<Slot, PoolError> {
    let base = std::env::temp_dir().join(format!("{BUILD_PREFIX}{}", super::repo_tag(owner)));
    let slots = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_SLOTS);
    let open = |k: usize| -> Result<(PathBuf, File), PoolError> {
        let dir = base.join(k.to_string());
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        let path = dir.join("lock");
        let file = OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(io_err(&path))?;
        Ok((dir, file))
    };
    for k in 0..slots {
        let (dir, file) = open(k)?;
        if file.try_lock().is_ok() {
            return Ok(Slot { dir, _lock: file });
        }
    }
    let (dir, file) = open(std::process::id() as usize % slots)?;
    file.lock().map_err(io_err(&dir))?;
    Ok(Slot { dir, _lock: file })
}

/// The environment a check in `slot` adds: `CARGO_TARGET_DIR`, unless `env` names one already.
pub fn env(slot: &Slot, env: &[(&str, String)]) -> Option<(&'static str, String)> {
    let named = env.iter().any(|(k, _)| *k == "CARGO_TARGET_DIR");
    (!named).then(|| ("CARGO_TARGET_DIR", slot.target().display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_slot_is_not_taken_twice_and_a_released_one_is_taken_again() {
        let owner = std::env::temp_dir().join(format!("git-mas-slot-test-{}", std::process::id()));
        let first = take(&owner).unwrap();
        let slots = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_SLOTS);
        if slots > 1 {
            let second = take(&owner).unwrap();
            assert_ne!(first.target(), second.target(), "two checks at once get two slots");
        }
        let target = first.target();
        drop(first);
        let again = take(&owner).unwrap();
        assert_eq!(again.target(), target, "the first free slot is taken");
        assert!(target.starts_with(std::env::temp_dir()) && target.ends_with("0/target"), "{}", target.display());
        let _ = std::fs::remove_dir_all(target.parent().unwrap().parent().unwrap());
    }

    #[test]
    fn the_callers_cargo_target_dir_is_kept() {
        let owner = std::env::temp_dir().join(format!("git-mas-slot-env-{}", std::process::id()));
        let slot = take(&owner).unwrap();
        assert_eq!(env(&slot, &[("CARGO_TARGET_DIR", "/mine".into())]), None);
        assert_eq!(env(&slot, &[]), Some(("CARGO_TARGET_DIR", slot.target().display().to_string())));
        let _ = std::fs::remove_dir_all(slot.target().parent().unwrap().parent().unwrap());
    }
}

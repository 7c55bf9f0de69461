//! The way git is started: one place that decides its environment.
//!
//! git-mas runs git as a library would, in a directory it names: nothing the caller's environment
//! holds may send git to another repository, index or work tree (a hook runs with `GIT_DIR` and
//! `GIT_INDEX_FILE` set; a test harness may export them), and git's messages are read by code, so
//! they come in one language (`LC_ALL=C`). Read-only commands must not take the index lock that a
//! concurrent `read-tree -m -u` of the same checkout needs (`GIT_OPTIONAL_LOCKS=0`).

use std::path::Path;
use std::process::Command;

/// The variables that would make git act on another repository, index or work tree than the one
/// in the directory it is started in.
pub const REDIRECTING: [&str; 7] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_PREFIX",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
];

/// A `git` command started in `dir`, with the redirecting variables removed, messages in the C
/// locale and optional locks off.
pub fn command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir);
    for var in REDIRECTING {
        cmd.env_remove(var);
    }
    cmd.env("LC_ALL", "C").env("GIT_OPTIONAL_LOCKS", "0");
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirecting_environment_does_not_reach_git() {
        let cmd = command(Path::new("/"));
        let envs: Vec<_> = cmd.get_envs().collect();
        for var in REDIRECTING {
            assert!(envs.iter().any(|(k, v)| *k == var && v.is_none()), "{var} is not removed: {envs:?}");
        }
        assert!(envs.iter().any(|(k, v)| *k == "LC_ALL" && *v == Some(std::ffi::OsStr::new("C"))));
        assert_eq!(cmd.get_current_dir(), Some(Path::new("/")));
    }
}

//! The gate's own ground: the files whose change would switch the gate off or re-key the team,
//! which an agent's edit tool may not write while the gate enforces.
//!
//! An agent that may write `.git/config` can set `mas.gate off`; one that may write its host's
//! settings file can take the hook out; one that may write `.git/hooks/pre-commit` or
//! `.mas/roster` can remove the commit gate or add a key of its own. None of these is an edit of
//! the team's code, and each has a `git mas` or `git config` command a person runs instead. So in
//! `enforce` mode an edit hook refuses a write to:
//!
//! - anything inside the repository's git dirs (the worktree's and the common one: config,
//!   hooks, refs, the index), or any path with a `.git` component (git itself refuses to store
//!   one);
//! - anything under `.mas/` in the working tree (the roster);
//! - a host's hook or MCP file, project or user-wide, while it carries git-mas's entry (a file
//!   that mentions `git mas` or `git-mas`): the files `git mas hooks install --host` and
//!   `git mas mcp install --host` write.
//!
//! What remains open, and is said in docs/hosts.md: a shell command (`git config mas.gate off`,
//! `echo > .git/hooks/pre-commit`) is no edit tool call, so no pre-tool hook sees its effect; the
//! commit gate and `git mas check` stay the backstop there.
//!
//! Paths are compared after resolving symlinks (the nearest existing ancestor, canonical, with the
//! rest appended), so a link into `.git/` is `.git/`. The decision is pure over the resolved
//! paths ([`ground_of`]); [`Grounds::of_repository`] gathers the candidates.

use crate::hosts::{Env, Host, Scope, hooks, mcp};
use std::path::{Component, Path, PathBuf};

/// Why a path is the gate's own ground, and what a person runs instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ground {
    /// What the path is, in words ("git's configuration (.git/config)").
    pub what: String,
    /// The command a person runs instead.
    pub remedy: String,
}

/// A host file that may carry git-mas's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFile {
    /// The file, resolved.
    pub path: PathBuf,
    /// Its host.
    pub host: Host,
    /// `hooks` or `mcp`: the command group that installs it.
    pub group: &'static str,
    /// Whether it is the user-wide file.
    pub global: bool,
}

/// The candidates of one repository: its git dirs, its working tree and the hosts' files.
#[derive(Debug, Clone, Default)]
pub struct Grounds {
    /// The git dirs (the worktree's own and the common one), resolved.
    pub git_dirs: Vec<PathBuf>,
    /// The working tree's top, resolved.
    pub root: PathBuf,
    /// The hosts' hook and MCP files, project and global, resolved.
    pub host_files: Vec<HostFile>,
}

impl Grounds {
    /// The candidates for the repository whose working tree is `root` and whose git dirs are
    /// `git_dirs`, with the hosts' user-wide files where `env` places them.
    pub fn of_repository(root: &Path, git_dirs: &[PathBuf], env: &dyn Env) -> Grounds {
        // Some thirty paths under two or three folders: one resolver, so each folder on the way
        // is looked at once (`canonicalize` of each path looked at every component of it again,
        // a tenth of an edit hook's time).
        let mut resolver = Resolver::default();
        let mut host_files = Vec::new();
        let scopes = [(Scope::Project(root.to_path_buf()), false), (Scope::Global, true)];
        for host in Host::ALL {
            for (scope, global) in &scopes {
                for f in hooks::hook_paths(host, scope, env).unwrap_or_default() {
                    let path = resolver.resolve(&f);
                    host_files.push(HostFile { path, host, group: "hooks", global: *global });
                }
                if let Ok((base, rel)) = mcp::config_file(host, scope, env) {
                    let path = resolver.resolve(&base.join(rel));
                    host_files.push(HostFile { path, host, group: "mcp", global: *global });
                }
            }
        }
        let git_dirs = git_dirs.iter().map(|d| resolver.resolve(d)).collect();
        Grounds { git_dirs, root: resolver.resolve(root), host_files }
    }
}

/// `path` with `.` and `..` taken out lexically, then its nearest existing ancestor resolved
/// through symlinks and the rest appended.
pub fn resolve(path: &Path) -> PathBuf {
    Resolver::default().resolve(path)
}

/// [`resolve`] for many paths: what it learnt of each folder (its canonical path, or that it does
/// not exist) is kept, so a folder shared by several paths is looked at once.
#[derive(Default)]
pub struct Resolver {
    /// A lexical absolute path → its canonical path, `None` when it does not exist.
    known: std::collections::HashMap<PathBuf, Option<PathBuf>>,
}

impl Resolver {
    /// See [`resolve`].
    pub fn resolve(&mut self, path: &Path) -> PathBuf {
        let mut lexical = PathBuf::new();
        for c in path.components() {
            match c {
                Component::ParentDir => {
                    lexical.pop();
                }
                Component::CurDir => {}
                other => lexical.push(other),
            }
        }
        let mut rest = Vec::new();
        let mut at = lexical.as_path();
        loop {
            if let Some(real) = self.real(at) {
                return rest.iter().rev().fold(real, |p: PathBuf, c| p.join(c));
            }
            match (at.file_name(), at.parent()) {
                (Some(name), Some(parent)) => {
                    rest.push(name.to_os_string());
                    at = parent;
                }
                _ => return lexical,
            }
        }
    }

    /// The canonical path of `path` (absolute, without `.` or `..`), `None` when it does not
    /// exist: its parent's, joined with its name, and followed when it is a symlink.
    fn real(&mut self, path: &Path) -> Option<PathBuf> {
        if let Some(known) = self.known.get(path) {
            return known.clone();
        }
        let real = match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) if path.is_absolute() => match self.real(parent) {
                None => None,
                Some(parent) => {
                    let joined = parent.join(name);
                    match std::fs::symlink_metadata(&joined) {
                        Err(_) => None,
                        Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(&joined).ok(),
                        Ok(_) => Some(joined),
                    }
                }
            },
            // The root, or a relative path (which `canonicalize` reads from the current folder).
            _ => std::fs::canonicalize(path).ok(),
        };
        self.known.insert(path.to_path_buf(), real.clone());
        real
    }
}

/// Whether `resolved` (a written path, resolved) is the gate's own ground; `carries_ours` tells
/// whether a host file currently holds git-mas's entry (read only for a host file that matches).
pub fn ground_of(resolved: &Path, grounds: &Grounds, carries_ours: &dyn Fn(&Path) -> bool) -> Option<Ground> {
    let has_git_component =
        resolved.components().any(|c| matches!(c, Component::Normal(n) if n.eq_ignore_ascii_case(".git")));
    let in_git_dir = grounds.git_dirs.iter().find(|d| resolved.starts_with(d));
    if has_git_component || in_git_dir.is_some() {
        let inside = in_git_dir.and_then(|d| resolved.strip_prefix(d).ok()).map(Path::to_path_buf);
        let first = inside.as_ref().and_then(|p| p.components().next()).map(|c| c.as_os_str().to_string_lossy());
        let (what, remedy) = match first.as_deref() {
            Some("config") | Some("config.worktree") => (
                "git's configuration",
                "a person changes it with `git config` (for example `git config mas.gate warn`), not an agent's edit",
            ),
            Some("hooks") => (
                "git's hooks",
                "a person installs or removes git-mas's git hooks with `git mas hooks install|uninstall`",
            ),
            _ => ("git's own files", "git's files change through git commands, not an agent's edit"),
        };
        return Some(Ground { what: format!("{what} ({})", resolved.display()), remedy: remedy.to_string() });
    }
    if let Ok(rel) = resolved.strip_prefix(&grounds.root)
        && rel.components().next().is_some_and(|c| c.as_os_str() == ".mas")
    {
        return Some(Ground {
            what: format!("git-mas's team files ({})", rel.display()),
            remedy: "a person adds an agent with `git mas agent new NAME` and commits .mas/roster".to_string(),
        });
    }
    let file = grounds.host_files.iter().find(|f| f.path == resolved)?;
    if !carries_ours(resolved) {
        return None;
    }
    let scope = if file.global { " --global" } else { "" };
    Some(Ground {
        what: format!("{}'s {} file with git-mas's entry ({})", file.host.name(), file.group, resolved.display()),
        remedy: format!(
            "a person changes it with `git mas {} install|uninstall --host {}{scope}`",
            file.group,
            file.host.name()
        ),
    })
}

/// Whether the file at `path` mentions git-mas (its entry, its command or its server name).
/// Only a file's first 4 MiB are read; a file that cannot be read carries nothing of ours.
pub fn mentions_git_mas(path: &Path) -> bool {
    use std::io::Read as _;
    let Ok(meta) = std::fs::metadata(path) else { return false };
    if !meta.is_file() {
        return false;
    }
    let mut text = Vec::new();
    let Ok(f) = std::fs::File::open(path) else { return false };
    if f.take(4 << 20).read_to_end(&mut text).is_err() {
        return false;
    }
    let has = |needle: &[u8]| text.windows(needle.len()).any(|w| w == needle);
    has(b"git mas") || has(b"git-mas")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grounds() -> Grounds {
        Grounds {
            git_dirs: vec![PathBuf::from("/r/.git"), PathBuf::from("/common.git")],
            root: PathBuf::from("/r"),
            host_files: vec![
                HostFile {
                    path: "/r/.claude/settings.json".into(),
                    host: Host::ClaudeCode,
                    group: "hooks",
                    global: false,
                },
                HostFile { path: "/h/.codex/config.toml".into(), host: Host::Codex, group: "mcp", global: true },
            ],
        }
    }

    #[test]
    fn own_ground_table() {
        let g = grounds();
        let ours = |_: &Path| true;
        let not_ours = |_: &Path| false;
        // (path, host file carries ours, protected?, words in what, words in remedy)
        type Carries<'a> = &'a dyn Fn(&Path) -> bool;
        type Want = Option<(&'static str, &'static str)>;
        let cases: [(&str, Carries, Want); 12] = [
            ("/r/.git/config", &ours, Some(("git's configuration", "git config"))),
            ("/r/.git/hooks/pre-commit", &ours, Some(("git's hooks", "git mas hooks install"))),
            ("/r/.git/HEAD", &ours, Some(("git's own files", "git commands"))),
            ("/common.git/config", &ours, Some(("git's configuration", "git config"))),
            ("/r/sub/.GIT/x", &ours, Some(("git's own files", "git commands"))),
            ("/r/.mas/roster", &ours, Some(("team files", "git mas agent new"))),
            ("/r/.claude/settings.json", &ours, Some(("claude-code's hooks file", "--host claude-code"))),
            ("/r/.claude/settings.json", &not_ours, None),
            ("/h/.codex/config.toml", &ours, Some(("codex's mcp file", "--host codex --global"))),
            ("/r/src/money.rs", &ours, None),
            ("/r/.masked", &ours, None),
            ("/elsewhere/.mas/roster", &ours, None),
        ];
        for (path, carries, want) in cases {
            let got = ground_of(Path::new(path), &g, carries);
            match (want, got) {
                (None, None) => {}
                (Some((what, remedy)), Some(got)) => {
                    assert!(got.what.contains(what), "{path}: {got:?}");
                    assert!(got.remedy.contains(remedy), "{path}: {got:?}");
                }
                (want, got) => panic!("{path}: want {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn resolve_goes_through_symlinks_and_dots() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(real.join("repo/.git")).unwrap();
        std::os::unix::fs::symlink(real.join("repo/.git"), real.join("repo/gitlink")).unwrap();
        assert_eq!(resolve(&real.join("repo/gitlink/config")), real.join("repo/.git/config"));
        assert_eq!(resolve(&real.join("repo/src/../.git/./hooks/x")), real.join("repo/.git/hooks/x"));
        assert_eq!(resolve(&real.join("repo/new/dir/file")), real.join("repo/new/dir/file"));
        // One resolver for many paths gives what each alone gives, links to links and dangling
        // links included.
        std::os::unix::fs::symlink(real.join("repo/gitlink"), real.join("linklink")).unwrap();
        std::os::unix::fs::symlink(real.join("nowhere"), real.join("dangling")).unwrap();
        std::os::unix::fs::symlink("../repo/.git", real.join("repo/rel")).unwrap();
        let mut resolver = Resolver::default();
        for rel in [
            "repo/gitlink/config",
            "linklink/hooks/pre-commit",
            "dangling/x",
            "repo/rel/config",
            "repo/new/dir/file",
            "repo/.git",
            "repo/gitlink/config",
        ] {
            let path = real.join(rel);
            assert_eq!(
                resolver.resolve(&path),
                std::fs::canonicalize(&path).unwrap_or_else(|_| resolve(&path)),
                "{rel}"
            );
        }
        assert_eq!(resolver.resolve(&real.join("linklink/hooks/pre-commit")), real.join("repo/.git/hooks/pre-commit"));
    }
}

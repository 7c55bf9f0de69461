//! Which session a `git commit` belongs to: the process tree says.
//!
//! A session's shell tool runs `git commit` as a child of the host's process; git runs the
//! pre-commit hook as its child. The hook payload that names the session arrives only at the
//! host's own hooks, so the pre-tool hook of every shell call records the host's process — as its
//! pid and start time, so a reused pid is another process — under `<common git dir>/mas/sessions/`
//! as naming that session's agent ([`record`]). The commit gate, and any git-mas command the
//! session's shell runs, walks its own ancestors and takes the nearest one recorded ([`find`]).
//!
//! Refusing when unsure: a process recorded for two agents (teammates a host runs in one process)
//! names no agent ([`AMBIGUOUS`]), and the commit is then gated for nobody's claims but its own —
//! that is, every file another live agent holds is refused. Linux only (`/proc`); elsewhere no
//! session is found, with the same effect.

use crate::store::Store;
use std::path::PathBuf;

/// What a process recorded for two different agents names.
pub const AMBIGUOUS: &str = "?";

/// `pid`'s parent and start time, from `/proc/<pid>/stat`.
fn stat(pid: u32) -> Option<(u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: fields start after the last ')'.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, start))
}

/// This process's ancestors, nearest first, as (pid, start time); at most 32.
pub fn ancestors() -> Vec<(u32, u64)> {
    let mut out = Vec::new();
    let mut pid = std::process::id();
    while let Some((ppid, _)) = stat(pid) {
        if ppid <= 1 || out.len() >= 32 {
            break;
        }
        match stat(ppid) {
            Some((_, start)) => out.push((ppid, start)),
            None => break,
        }
        pid = ppid;
    }
    out
}

fn dir(store: &Store) -> PathBuf {
    store.common_dir().join("mas").join("sessions")
}

fn file(store: &Store, (pid, start): (u32, u64)) -> PathBuf {
    dir(store).join(format!("{pid}-{start}"))
}

/// Programs that run a hook's command line without being the host: the host is the nearest
/// ancestor that is none of these.
const RUNNERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "fish", "ksh", "env", "timeout", "nice", "nohup", "xargs", "git", "git-mas", "strace",
    "ltrace", "stdbuf", "flock",
];

fn is_runner(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| RUNNERS.contains(&c.trim()))
}

/// Records this process's host — its nearest ancestor that is not a shell running the hook's
/// command line — as `agent`'s (called by the pre-tool hook of a shell call). Only the host is
/// recorded: the shell a person started the host from is not the session's, and commands the
/// person runs there stay the person's.
pub fn record(store: &Store, agent: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir(store))?;
    for a in ancestors().into_iter().filter(|(pid, _)| !is_runner(*pid)).take(1) {
        let path = file(store, a);
        let name = match std::fs::read_to_string(&path) {
            Ok(old) if old == agent || old == AMBIGUOUS => continue,
            Ok(_) => AMBIGUOUS,
            Err(_) => agent,
        };
        crate::fsx::write_atomic(&path, name.as_bytes(), None)?;
    }
    Ok(())
}

/// The agent whose shell call this process descends from: the nearest recorded ancestor's;
/// `None` when none is recorded or the nearest is [`AMBIGUOUS`].
pub fn find(store: &Store) -> Option<String> {
    for a in ancestors() {
        if let Ok(name) = std::fs::read_to_string(file(store, a)) {
            return (name != AMBIGUOUS && !name.is_empty()).then_some(name);
        }
    }
    None
}

/// Forgets every process recorded as `agent`'s (its session ended), and the records of processes
/// that no longer run.
pub fn forget(store: &Store, agent: &str) {
    let Ok(entries) = std::fs::read_dir(dir(store)) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let alive = name
            .split_once('-')
            .and_then(|(pid, start)| Some((pid.parse::<u32>().ok()?, start.parse::<u64>().ok()?)))
            .is_some_and(|(pid, start)| stat(pid).is_some_and(|(_, s)| s == start));
        if !alive || std::fs::read_to_string(e.path()).is_ok_and(|n| n == agent) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Whether `pid` has ended and waits only to be reaped (a killed host whose parent has not yet
/// collected it still has a `/proc` entry).
fn zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| t.rfind(')').map(|i| t[i + 1..].trim_start().starts_with(['Z', 'X'])))
        .unwrap_or(false)
}

/// Where each session's host process is kept, one file per agent: `<pid>-<start time>`.
fn hosts_dir(store: &Store) -> PathBuf {
    store.common_dir().join("mas").join("hosts")
}

/// Records this process's host (as [`record`] finds it) as the one `agent`'s claims live with,
/// when it claims a file: should that process end without the session's end hook (a SIGKILL),
/// the claims end with it ([`gone`]). When every ancestor is a shell or another runner, no host
/// is known: an earlier host recorded for `agent` is forgotten (its end no longer ends claims the
/// session makes now), and the claims live by their time to live.
pub fn record_host(store: &Store, agent: &str) -> std::io::Result<()> {
    let Some((pid, start)) = ancestors().into_iter().find(|(pid, _)| !is_runner(*pid)) else {
        forget_host(store, agent);
        return Ok(());
    };
    let path = hosts_dir(store).join(agent);
    let text = format!("{pid}-{start}");
    if std::fs::read_to_string(&path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    std::fs::create_dir_all(hosts_dir(store))?;
    // Agent names never start with a dot: a temporary (a dot first) is never read as an agent's.
    crate::fsx::write_atomic(&path, text.as_bytes(), None)
}

/// Forgets `agent`'s host process (its session ended).
pub fn forget_host(store: &Store, agent: &str) {
    let _ = std::fs::remove_file(hosts_dir(store).join(agent));
}

/// The agents whose host process, recorded on this machine when they claimed ([`record_host`]),
/// has ended: a SIGKILLed host runs no session-end hook, and its claims end with it (the board's
/// fold treats them as expired). An agent recorded nowhere here (another machine's, or one
/// whose claims no hook made here) keeps its claims' time to live.
pub fn gone(store: &Store) -> std::collections::BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(hosts_dir(store)) else { return Default::default() };
    entries
        .flatten()
        .filter_map(|e| {
            let agent = e.file_name().to_string_lossy().into_owned();
            if agent.starts_with('.') {
                return None;
            }
            let text = std::fs::read_to_string(e.path()).ok()?;
            let (pid, start) = text.trim().split_once('-')?;
            let (pid, start) = (pid.parse::<u32>().ok()?, start.parse::<u64>().ok()?);
            let alive = stat(pid).is_some_and(|(_, s)| s == start) && !zombie(pid);
            (!alive).then_some(agent)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_ancestors_with_start_times() {
        let a = ancestors();
        assert!(!a.is_empty(), "the test runner has a parent");
        assert_ne!(a[0].0, std::process::id());
        assert_eq!(stat(a[0].0).map(|(_, s)| s), Some(a[0].1));
    }
}

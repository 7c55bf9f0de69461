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

/// One process as `/proc/<pid>/stat` shows it.
struct Proc {
    ppid: u32,
    start: u64,
    /// Its command name (`/proc/<pid>/comm`, which the same file holds).
    comm: String,
    /// Ended, and not yet reaped by its parent (state `Z` or `X`).
    zombie: bool,
}

/// `pid`'s parent, start time and command name, from `/proc/<pid>/stat`.
fn proc_stat(pid: u32) -> Option<Proc> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: fields start after the last ')'.
    let (open, close) = (text.find('(')?, text.rfind(')')?);
    let comm = text.get(open + 1..close)?.to_string();
    let rest = text.get(close + 2..)?;
    let zombie = rest.starts_with(['Z', 'X']);
    let mut fields = rest.split(' ');
    let ppid = fields.nth(1)?.parse().ok()?;
    let start = fields.nth(17)?.parse().ok()?;
    Some(Proc { ppid, start, comm, zombie })
}

/// `pid`'s parent and start time.
fn stat(pid: u32) -> Option<(u32, u64)> {
    proc_stat(pid).map(|p| (p.ppid, p.start))
}

/// This process's ancestors, nearest first, as (pid, start time, command name); at most 32.
/// Read as they are asked for, each from one file: a hook that wants the nearest host reads
/// no further (every ancestor up to `init`, each read twice and its name from another file, took
/// 0.25 ms of every edit hook).
fn lineage() -> impl Iterator<Item = (u32, u64, String)> {
    let mut parent = stat(std::process::id()).map(|(ppid, _)| ppid);
    std::iter::from_fn(move || {
        let pid = parent.filter(|p| *p > 1)?;
        let p = proc_stat(pid)?;
        parent = Some(p.ppid);
        Some((pid, p.start, p.comm))
    })
    .take(32)
}

/// This process's ancestors, nearest first, as (pid, start time); at most 32.
pub fn ancestors() -> impl Iterator<Item = (u32, u64)> {
    lineage().map(|(pid, start, _)| (pid, start))
}

/// The nearest ancestor that is not a runner ([`RUNNERS`]): the host.
fn host() -> Option<(u32, u64)> {
    lineage().find(|(_, _, comm)| !RUNNERS.contains(&comm.as_str())).map(|(pid, start, _)| (pid, start))
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

/// Records this process's host — its nearest ancestor that is not a shell running the hook's
/// command line — as `agent`'s (called by the pre-tool hook of a shell call). Only the host is
/// recorded: the shell a person started the host from is not the session's, and commands the
/// person runs there stay the person's.
pub fn record(store: &Store, agent: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir(store))?;
    let Some(a) = host() else { return Ok(()) };
    let path = file(store, a);
    let name = match std::fs::read_to_string(&path) {
        Ok(old) if old == agent || old == AMBIGUOUS => return Ok(()),
        Ok(_) => AMBIGUOUS,
        Err(_) => agent,
    };
    crate::fsx::write_atomic(&path, name.as_bytes(), None)
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
        let alive = process_of(&name).is_some_and(|(pid, start)| stat(pid).is_some_and(|(_, s)| s == start));
        if !alive || std::fs::read_to_string(e.path()).is_ok_and(|n| n == agent) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The process a `<pid>-<start time>` text names (a record's file name, a host file's content).
fn process_of(text: &str) -> Option<(u32, u64)> {
    let (pid, start) = text.trim().split_once('-')?;
    Some((pid.parse().ok()?, start.parse().ok()?))
}

/// Whether the process `pid` that started at `start` still runs: not ended, and not ended and
/// waiting only to be reaped (a killed host whose parent has not yet collected it still has a
/// `/proc` entry).
fn running(pid: u32, start: u64) -> bool {
    proc_stat(pid).is_some_and(|p| p.start == start && !p.zombie)
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
    let Some((pid, start)) = host() else {
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

/// Of `agents`, those whose host process, recorded on this machine when they claimed
/// ([`record_host`]), has ended: a SIGKILLed host runs no session-end hook, and its claims end
/// with it (the board's fold treats them as expired). An agent recorded nowhere here (another
/// machine's, or one whose claims no hook made here) keeps its claims' time to live.
///
/// Only the files of the agents asked about are read, each with its process's `/proc/<pid>/stat`
/// once: a SIGKILLed host's file stays, and every hook call read every such file (and each
/// process's stat twice), however long ago its session ended.
pub fn gone<'a>(store: &Store, agents: impl IntoIterator<Item = &'a str>) -> std::collections::BTreeSet<String> {
    let dir = hosts_dir(store);
    agents
        .into_iter()
        // A file name of one component that is no temporary's (those start with a dot).
        .filter(|agent| !agent.is_empty() && !agent.starts_with('.') && !agent.contains(['/', '\\']))
        .filter(|agent| {
            let Ok(text) = std::fs::read_to_string(dir.join(agent)) else { return false };
            process_of(&text).is_some_and(|(pid, start)| !running(pid, start))
        })
        .map(str::to_string)
        .collect()
}

/// Whether any session's host process recorded on this machine ([`record_host`]) still runs: the
/// background exchange of claims keeps going while one does.
pub fn any_host_running(store: &Store) -> bool {
    let Ok(dir) = std::fs::read_dir(hosts_dir(store)) else { return false };
    dir.flatten().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        !name.starts_with('.')
            && std::fs::read_to_string(e.path())
                .ok()
                .and_then(|t| process_of(&t))
                .is_some_and(|(pid, start)| running(pid, start))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn of_the_agents_asked_those_whose_host_ended_are_gone_and_no_other_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            std::process::Command::new("git").args(["init", "-q"]).current_dir(dir.path()).status().unwrap().success()
        );
        let store = Store::discover(dir.path()).unwrap();
        let hosts = hosts_dir(&store);
        std::fs::create_dir_all(&hosts).unwrap();
        let me = (std::process::id(), proc_stat(std::process::id()).unwrap().start);
        let put =
            |name: &str, (pid, start): (u32, u64)| std::fs::write(hosts.join(name), format!("{pid}-{start}")).unwrap();
        put("live", me);
        // The same pid started at another time: another process.
        put("reused", (me.0, me.1 + 1));
        put("unasked", (me.0, me.1 + 1));
        // A name of more than one component names no agent's file.
        std::fs::create_dir_all(hosts.join("sub")).unwrap();
        put("sub/x", (me.0, me.1 + 1));
        put(".live.mas-tmp.1.0", (me.0, me.1 + 1));
        // A host that ended and is not yet reaped by its parent.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let mut ended = None;
        for _ in 0..2000 {
            ended = proc_stat(child.id()).filter(|p| p.zombie);
            if ended.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        put("zombie", (child.id(), ended.expect("the child ended").start));
        let asked = ["live", "reused", "zombie", "nobody", "sub/x", ".live.mas-tmp.1.0", ""];
        let got: Vec<String> = gone(&store, asked).into_iter().collect();
        child.wait().unwrap();
        assert_eq!(got, ["reused", "zombie"]);
    }

    #[test]
    fn this_process_has_ancestors_with_start_times() {
        let a: Vec<_> = lineage().collect();
        assert!(!a.is_empty(), "the test runner has a parent");
        assert_ne!(a[0].0, std::process::id());
        assert_eq!(stat(a[0].0).map(|(_, s)| s), Some(a[0].1));
        // Each is the parent of the one before it, and named as /proc/<pid>/comm names it.
        assert_eq!(stat(std::process::id()).map(|(ppid, _)| ppid), Some(a[0].0));
        for w in a.windows(2) {
            assert_eq!(stat(w[0].0).map(|(ppid, _)| ppid), Some(w[1].0));
        }
        for (pid, _, comm) in &a {
            let named = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            assert_eq!(named.trim_end_matches('\n'), comm);
        }
    }
}

//! `sync`: exchange `refs/mas/*` with an ordinary git remote, fast-forward only.
//!
//! gix has no push, so transport uses the system `git` (`fetch` and `push --porcelain`); every local
//! ref update goes through [`Store::cas`]. One round is:
//!
//! 1. fetch the remote's `refs/mas/*` into a staging namespace, `refs/mas-remote/<remote>/*` (outside
//!    `refs/mas/`, so staged refs are never mistaken for our own chains);
//! 2. integrate each staged ref: create it locally when missing, fast-forward when the local chain is
//!    behind, leave it when the local chain is ahead. When both moved on a **shared** chain, the local
//!    records the remote lacks are re-parented (same trees, same signed blobs) on top of the remote tip:
//!    a shared chain is a set of records in arrival order, and this is the cross-machine form of
//!    re-reading after a lost compare-and-swap. When both moved on a **per-agent** chain (one agent
//!    writing from two machines) nothing is rewritten: the ref is reported as diverged;
//! 3. push every local ref the remote lacks or is behind on, without force. A ref the remote rejects
//!    (someone advanced it between our fetch and our push) is reported, and the round starts again
//!    with a re-fetch, at most [`MAX_ROUNDS`] times.

use crate::store::{CasOutcome, REF_PREFIX, Store, StoreError, owner_of};
use gix::ObjectId;
use std::collections::BTreeSet;
use std::process::Command;
use thiserror::Error;

/// Fetch–integrate–push rounds before giving up on refs that keep being rejected.
pub const MAX_ROUNDS: u32 = 3;

/// Errors from sync.
#[derive(Debug, Error)]
pub enum SyncError {
    /// The remote name or URL is unusable.
    #[error("remote {0:?} is not a usable remote name or URL")]
    BadRemote(String),
    /// `git` could not be started.
    #[error("cannot run git: {0}")]
    Spawn(#[source] std::io::Error),
    /// `git fetch` failed.
    #[error("git fetch from {remote} failed: {stderr}")]
    Fetch { remote: String, stderr: String },
    /// `git push` failed for a reason other than a rejected ref.
    #[error("git push to {remote} failed: {stderr}")]
    Push { remote: String, stderr: String },
    /// A store operation failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What happened to one ref.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum RefAction {
    /// Created locally from the remote.
    Created { to: String },
    /// Fast-forwarded locally.
    FastForwarded { from: String, to: String },
    /// Local records re-parented onto the remote tip (shared chains only).
    Rebased { records: usize, onto: String },
    /// Pushed to the remote.
    Pushed { to: String },
    /// The remote refused our push (it moved since our fetch).
    Rejected { reason: String },
    /// Both sides moved on a per-agent chain; left untouched.
    Diverged { local: String, remote: String },
}

/// One ref's event in one round.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RefEvent {
    /// The round (1-based).
    pub round: u32,
    /// The ref.
    #[serde(rename = "ref")]
    pub refname: String,
    /// What happened.
    #[serde(flatten)]
    pub action: RefAction,
}

/// The outcome of a sync.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SyncReport {
    /// The remote synced with.
    pub remote: String,
    /// Every ref event, in order.
    pub events: Vec<RefEvent>,
    /// Refs left rejected or diverged at the end.
    pub unresolved: Vec<String>,
    /// Rounds run.
    pub rounds: u32,
}

impl SyncReport {
    /// Whether every ref ended in agreement with the remote.
    pub fn complete(&self) -> bool {
        self.unresolved.is_empty()
    }
}

/// The staging namespace for `remote`'s refs.
pub fn staging_prefix(remote: &str) -> String {
    let ok = !remote.is_empty()
        && remote.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !remote.contains("..")
        && !remote.starts_with('.');
    let component = if ok {
        remote.to_string()
    } else {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(remote.as_bytes());
        format!("url-{}", crate::identity::key::hex(&digest[..8]))
    };
    format!("refs/mas-remote/{component}/")
}

fn git(store: &Store) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("--git-dir").arg(store.common_dir());
    cmd
}

/// Runs `git fetch` of `refs/mas/*` into the staging namespace.
fn fetch(store: &Store, remote: &str) -> Result<(), SyncError> {
    let staging = staging_prefix(remote);
    let out = git(store)
        .args(["fetch", "--quiet", "--no-tags", "--prune", "--no-write-fetch-head", remote])
        .arg(format!("+{REF_PREFIX}*:{staging}*"))
        .output()
        .map_err(SyncError::Spawn)?;
    if !out.status.success() {
        return Err(SyncError::Fetch {
            remote: remote.into(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().into(),
        });
    }
    Ok(())
}

/// Walks a linear chain from `tip`, returning its commits newest first.
fn chain_commits(store: &Store, tip: ObjectId) -> Result<Vec<ObjectId>, StoreError> {
    let mut out = Vec::new();
    let mut next = Some(tip);
    while let Some(id) = next {
        out.push(id);
        next = store.entry(id)?.parent;
    }
    Ok(out)
}

fn integrate(
    store: &Store,
    remote: &str,
    round: u32,
    events: &mut Vec<RefEvent>,
) -> Result<BTreeSet<String>, SyncError> {
    let staging = staging_prefix(remote);
    let mut diverged = BTreeSet::new();
    for staged in store.list(&staging)? {
        let Some(remote_tip) = staged.target.as_deref().and_then(|t| ObjectId::from_hex(t.as_bytes()).ok()) else {
            continue;
        };
        let local_name = format!("{REF_PREFIX}{}", &staged.name[staging.len()..]);
        let mut event = |action| events.push(RefEvent { round, refname: local_name.clone(), action });
        // Each step is a compare-and-swap from what we just read; a lost race (another local
        // writer) is re-read on the next pass.
        for _ in 0..8 {
            let local = store.tip(&local_name)?;
            match local {
                None => {
                    if store.cas(&local_name, None, remote_tip, "git-mas sync: create")? == CasOutcome::Updated {
                        event(RefAction::Created { to: remote_tip.to_string() });
                        break;
                    }
                }
                Some(l) if l == remote_tip => break,
                Some(l) if store.is_ancestor(l, remote_tip)? => {
                    if store.cas(&local_name, Some(l), remote_tip, "git-mas sync: fast-forward")? == CasOutcome::Updated
                    {
                        event(RefAction::FastForwarded { from: l.to_string(), to: remote_tip.to_string() });
                        break;
                    }
                }
                Some(l) if store.is_ancestor(remote_tip, l)? => break, // we are ahead: push
                Some(l) if owner_of(&local_name).is_some() => {
                    event(RefAction::Diverged { local: l.to_string(), remote: remote_tip.to_string() });
                    diverged.insert(local_name.clone());
                    break;
                }
                Some(l) => {
                    let remote_set: BTreeSet<ObjectId> = chain_commits(store, remote_tip)?.into_iter().collect();
                    let mut only_local: Vec<ObjectId> =
                        chain_commits(store, l)?.into_iter().take_while(|c| !remote_set.contains(c)).collect();
                    only_local.reverse();
                    let mut parent = remote_tip;
                    for c in &only_local {
                        parent = store.reparent(*c, parent)?;
                    }
                    if store.cas(&local_name, Some(l), parent, "git-mas sync: rebase onto remote")?
                        == CasOutcome::Updated
                    {
                        event(RefAction::Rebased { records: only_local.len(), onto: remote_tip.to_string() });
                        break;
                    }
                }
            }
        }
    }
    Ok(diverged)
}

/// Parses `git push --porcelain` output into (ref, rejected?, summary).
fn parse_porcelain(stdout: &str) -> Vec<(String, bool, String)> {
    stdout
        .lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, '\t');
            let flag = parts.next()?;
            let spec = parts.next()?;
            let summary = parts.next().unwrap_or("").to_string();
            if flag.len() != 1 {
                return None;
            }
            let dst = spec.rsplit(':').next()?.to_string();
            Some((dst, flag == "!", summary))
        })
        .collect()
}

/// Syncs `refs/mas/*` with `remote`.
pub fn sync(store: &Store, remote: &str) -> Result<SyncReport, SyncError> {
    if remote.is_empty() || remote.starts_with('-') {
        return Err(SyncError::BadRemote(remote.into()));
    }
    let staging = staging_prefix(remote);
    let mut events = Vec::new();
    let mut rejected: BTreeSet<String> = BTreeSet::new();
    let mut diverged = BTreeSet::new();
    let mut rounds = 0;
    for round in 1..=MAX_ROUNDS {
        rounds = round;
        fetch(store, remote)?;
        diverged = integrate(store, remote, round, &mut events)?;
        // What to push: every local chain the remote lacks or is behind on.
        let mut to_push = Vec::new();
        for local in store.list(REF_PREFIX)? {
            let Some(tip) = local.target.as_deref().and_then(|t| ObjectId::from_hex(t.as_bytes()).ok()) else {
                continue;
            };
            let remote_tip = store.tip(&format!("{staging}{}", &local.name[REF_PREFIX.len()..]))?;
            let push = match remote_tip {
                None => true,
                Some(r) if r == tip => false,
                Some(r) => store.is_ancestor(r, tip)?,
            };
            if push && !diverged.contains(&local.name) {
                to_push.push((local.name, tip));
            }
        }
        rejected.clear();
        if to_push.is_empty() {
            break;
        }
        let mut cmd = git(store);
        // Hooks run as for any push (git-mas's own pre-push hook gates branches only and lets
        // refs/mas/* through).
        cmd.args(["push", "--porcelain", remote]);
        for (name, _) in &to_push {
            cmd.arg(format!("{name}:{name}"));
        }
        let out = cmd.output().map_err(SyncError::Spawn)?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let statuses = parse_porcelain(&stdout);
        if statuses.is_empty() && !out.status.success() {
            return Err(SyncError::Push {
                remote: remote.into(),
                stderr: String::from_utf8_lossy(&out.stderr).trim().into(),
            });
        }
        for (name, tip) in &to_push {
            match statuses.iter().find(|(dst, _, _)| dst == name) {
                Some((_, true, summary)) => {
                    rejected.insert(name.clone());
                    events.push(RefEvent {
                        round,
                        refname: name.clone(),
                        action: RefAction::Rejected { reason: summary.clone() },
                    });
                }
                Some((_, false, _)) => events.push(RefEvent {
                    round,
                    refname: name.clone(),
                    action: RefAction::Pushed { to: tip.to_string() },
                }),
                None => {}
            }
        }
        if rejected.is_empty() {
            break;
        }
    }
    let unresolved = rejected.union(&diverged).cloned().collect();
    Ok(SyncReport { remote: remote.into(), events, unresolved, rounds })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_lines_are_parsed() {
        let out = "To /tmp/r.git\n \trefs/mas/a:refs/mas/a\t[new reference]\n!\trefs/mas/b:refs/mas/b\t[rejected] (fetch first)\nDone\n";
        let parsed = parse_porcelain(out);
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0], ("refs/mas/a".into(), false, "[new reference]".into()));
        assert!(parsed[1].1);
    }

    #[test]
    fn staging_names_are_ref_safe() {
        assert_eq!(staging_prefix("origin"), "refs/mas-remote/origin/");
        let url = staging_prefix("/tmp/some path/remote.git");
        assert!(url.starts_with("refs/mas-remote/url-") && !url.contains(' '));
    }
}

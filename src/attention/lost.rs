//! Claims lost across clones: when two clones claimed one file before either saw the other's
//! claim, the coordination rule's Serialize gives it to the smaller name ([`super::claims`]); the
//! other session — the loser — had already been let through, and may have changed the file.
//!
//! At the loser's next call (its edit or shell call, which read the board anyway) its changes to
//! each file it lost are kept, and it is told so:
//!
//! - the file as it stands in the loser's working tree is written on top of its `HEAD`, as one
//!   commit under `refs/mas/kept/<agent>/<id>` ([`kept_ref`]; `<id>` from the path). The ref is an
//!   artifact, not a record chain: sync carries it to every clone (the holder's too) like a
//!   proposal, and no record is verified in it;
//! - the loser is told who holds the file, why, that nothing of its work is lost, and the command
//!   with which the holder takes the changes (`git diff <commit>^ <commit> | git apply --3way`);
//! - `git mas status` lists every kept change, for the holder.
//!
//! Nothing in the working tree is touched: the loser's copy stays as it was. The ref is written
//! once per agent and file (it is the mark that the loser was told), by compare-and-swap from
//! nothing, so two calls of one session racing write one.
//!
//! What a SIGKILL leaves, at any instant: before the ref moved, unreferenced objects (the blob,
//! the tree, the commit) and no notice — the next call keeps and tells again; after it, the change
//! is kept, and if the process died before its answer was written, the loser was not told (its
//! edits of the file are refused by the rule all the same, naming the holder).

use super::board::{Board, Liveness};
use super::claims::file_of;
use crate::store::{Store, StoreError};
use gix::ObjectId;
use sha2::Digest as _;
use std::path::Path;

/// Where kept changes live: `refs/mas/kept/<agent>/<id>`.
pub const KEPT_PREFIX: &str = "refs/mas/kept/";

/// A file `caller` claimed that another live agent holds too and Serialize gives to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lost {
    /// The file.
    pub file: String,
    /// The agent that holds it: the smallest name of its other holders.
    pub holder: String,
}

/// The files `caller`'s live claims hold that the rule gives to another live agent (one whose
/// name is smaller, holding the same file), each with the smallest such name.
pub fn lost(board: &Board, caller: &str) -> Vec<Lost> {
    let Some(mine) = board.entry(caller).filter(|e| e.liveness == Liveness::Live) else { return Vec::new() };
    let mut out: Vec<Lost> = Vec::new();
    for target in &mine.focus.targets {
        let file = file_of(target);
        if out.iter().any(|l| l.file == file) {
            continue;
        }
        let holder = board
            .entries
            .iter()
            .filter(|e| e.liveness == Liveness::Live && e.focus.agent.as_str() < caller)
            .filter(|e| e.focus.targets.iter().any(|t| file_of(t) == file))
            .map(|e| e.focus.agent.as_str())
            .min();
        if let Some(holder) = holder {
            out.push(Lost { file: file.to_string(), holder: holder.to_string() });
        }
    }
    out
}

/// The ref that keeps `agent`'s changes to `file`.
pub fn kept_ref(agent: &str, file: &str) -> String {
    let digest = sha2::Sha256::digest(file.as_bytes());
    let id: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("{KEPT_PREFIX}{agent}/{id}")
}

/// Whether `refname` is a kept change's ref.
pub fn is_kept_ref(refname: &str) -> bool {
    refname.strip_prefix(KEPT_PREFIX).is_some_and(
        |rest| matches!(rest.split('/').collect::<Vec<_>>().as_slice(), [a, id] if !a.is_empty() && !id.is_empty()),
    )
}

/// One change kept for a lost file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The file and its holder.
    pub lost: Lost,
    /// The ref.
    pub refname: String,
    /// The commit.
    pub commit: ObjectId,
}

/// The first line of a kept commit's message: `kept: <file>`.
const SUBJECT: &str = "kept: ";

fn git_err(context: &str) -> impl Fn(Box<dyn std::error::Error + Send + Sync>) -> StoreError + '_ {
    move |source| StoreError::Git { context: context.to_string(), source }
}

/// Keeps `caller`'s changes to `lost.file` (as it stands under `workdir`) on top of `HEAD`, unless
/// they were kept before. `None`: kept before (the caller was told), or `HEAD` is unborn.
pub fn keep(store: &Store, workdir: &Path, caller: &str, lost: &Lost) -> Result<Option<Kept>, StoreError> {
    let refname = kept_ref(caller, &lost.file);
    if store.tip(&refname)?.is_some() {
        return Ok(None);
    }
    let repo = store.repo();
    let Ok(head) = repo.head_id() else { return Ok(None) };
    let head = head.detach();
    let tree = repo
        .find_commit(head)
        .map_err(|e| git_err("reading HEAD")(Box::new(e)))?
        .tree_id()
        .map_err(|e| git_err("reading HEAD's tree")(Box::new(e)))?
        .detach();
    let mut editor = repo.edit_tree(tree).map_err(|e| git_err("editing HEAD's tree")(Box::new(e)))?;
    let path = workdir.join(&lost.file);
    use gix::objs::tree::EntryKind;
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            let target = std::fs::read_link(&path).map_err(|e| git_err("reading a symbolic link")(Box::new(e)))?;
            let blob = store.write_blob(target.as_os_str().as_encoded_bytes())?;
            editor.upsert(lost.file.as_str(), EntryKind::Link, blob)
        }
        Ok(meta) if meta.is_file() => {
            use std::os::unix::fs::PermissionsExt as _;
            let bytes = std::fs::read(&path).map_err(|e| git_err("reading the lost file")(Box::new(e)))?;
            let blob = store.write_blob(&bytes)?;
            let kind = if meta.permissions().mode() & 0o111 != 0 { EntryKind::BlobExecutable } else { EntryKind::Blob };
            editor.upsert(lost.file.as_str(), kind, blob)
        }
        _ => editor.remove(lost.file.as_str()),
    }
    .map_err(|e| git_err("editing HEAD's tree")(Box::new(e)))?;
    let new_tree = editor.write().map_err(|e| git_err("writing the kept tree")(Box::new(e)))?.detach();
    let who = crate::store::signature(caller, caller);
    let commit = gix::objs::Commit {
        tree: new_tree,
        parents: std::iter::once(head).collect(),
        author: who.clone(),
        committer: who,
        encoding: None,
        message: format!(
            "{SUBJECT}{file}\n\n{caller}'s changes to {file}, which {holder} holds: both clones claimed it before either \
             saw the other's claim, and Serialize gave it to {holder}.\n",
            file = lost.file,
            holder = lost.holder
        )
        .into(),
        extra_headers: Vec::new(),
    };
    let commit = repo.write_object(&commit).map_err(|e| git_err("writing the kept commit")(Box::new(e)))?.detach();
    match store.cas(&refname, None, commit, "git mas: a lost claim's changes kept")? {
        crate::store::CasOutcome::Updated => Ok(Some(Kept { lost: lost.clone(), refname, commit })),
        // Another call of the session kept them first: it tells.
        _ => Ok(None),
    }
}

/// What the loser is told about a kept change.
pub fn describe(k: &Kept) -> String {
    let short = &k.commit.to_string()[..12];
    format!(
        "git mas gate: {file} is {holder}'s: {holder} claimed it on another clone before this clone saw that claim, \
         and yours was made meanwhile; the coordination rule's Serialize gives a file claimed twice to the smaller \
         name. Nothing of your work is lost: your changes to {file} are kept as {r} (commit {short}; `git show \
         {short} -- {file}`), which every clone receives, and your working copy is as you left it. Leave {file} to \
         {holder} now; {holder} can take your changes with `git diff {short}^ {short} | git apply --3way`.",
        file = k.lost.file,
        holder = k.lost.holder,
        r = k.refname,
    )
}

/// A kept change, as `status` lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Listed {
    /// The ref.
    #[serde(rename = "ref")]
    pub refname: String,
    /// The agent whose changes they are.
    pub agent: String,
    /// The file.
    pub file: String,
    /// The commit.
    pub commit: String,
}

/// Every kept change in the store, by ref.
pub fn list(store: &Store) -> Result<Vec<Listed>, StoreError> {
    let mut out = Vec::new();
    for info in store.list(KEPT_PREFIX)? {
        let Some(target) = info.target.as_deref() else { continue };
        let Ok(commit) = ObjectId::from_hex(target.as_bytes()) else { continue };
        let Some(agent) = info.name.strip_prefix(KEPT_PREFIX).and_then(|r| r.split('/').next()) else { continue };
        let Ok(c) = store.repo().find_commit(commit) else { continue };
        let Ok(message) = c.message_raw() else { continue };
        let message = String::from_utf8_lossy(message);
        let Some(file) = message.lines().next().and_then(|l| l.strip_prefix(SUBJECT)) else { continue };
        out.push(Listed {
            refname: info.name.clone(),
            agent: agent.to_string(),
            file: file.to_string(),
            commit: commit.to_string(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::board::BoardEntry;
    use crate::attention::rule::Focus;

    fn entry(agent: &str, targets: &[&str], liveness: Liveness) -> BoardEntry {
        let focus = Focus {
            agent: agent.into(),
            frame: "F".into(),
            seq: 1,
            targets: targets.iter().map(|t| t.to_string()).collect(),
        };
        BoardEntry {
            focus,
            liveness,
            expires_at: 2000,
            published_at: 0,
            commit: String::new(),
            run: None,
            ended_with: None,
        }
    }

    #[test]
    fn a_file_two_live_agents_hold_is_lost_by_the_larger_name_to_the_smallest() {
        let board = Board {
            entries: vec![
                entry("carol", &["x.rs", "y.rs", "z.rs#f"], Liveness::Live),
                entry("bob", &["x.rs"], Liveness::Live),
                entry("alice", &["x.rs", "z.rs"], Liveness::Live),
                entry("aaron", &["y.rs"], Liveness::Expired),
                entry("dave", &["x.rs"], Liveness::Live),
            ],
            ..Board::default()
        };
        assert_eq!(
            lost(&board, "carol"),
            [
                Lost { file: "x.rs".into(), holder: "alice".into() },
                Lost { file: "z.rs".into(), holder: "alice".into() }
            ],
            "an expired claim holds nothing; a symbol's file is its file"
        );
        assert_eq!(lost(&board, "bob"), [Lost { file: "x.rs".into(), holder: "alice".into() }]);
        assert!(lost(&board, "alice").is_empty(), "the smallest name loses nothing");
        assert!(lost(&board, "erin").is_empty(), "no claims, nothing lost");
        let expired = Board {
            entries: vec![entry("bob", &["x.rs"], Liveness::Expired), entry("alice", &["x.rs"], Liveness::Live)],
            ..Board::default()
        };
        assert!(lost(&expired, "bob").is_empty(), "a lapsed claim is not a lost one");
    }

    #[test]
    fn kept_refs_are_one_per_agent_and_file_and_known_as_such() {
        let a = kept_ref("bob.claude-1", "src/lib.rs");
        assert_eq!(a, kept_ref("bob.claude-1", "src/lib.rs"));
        assert_ne!(a, kept_ref("bob.claude-1", "src/main.rs"));
        assert_ne!(a, kept_ref("bob.claude-2", "src/lib.rs"));
        assert!(is_kept_ref(&a) && a.starts_with("refs/mas/kept/bob.claude-1/"));
        assert!(!is_kept_ref("refs/mas/kept/bob"));
        assert!(!is_kept_ref("refs/mas/kept/bob/x/y"));
        assert!(!is_kept_ref("refs/mas/focus/bob"));
    }
}

//! What to do about a store error, said once: every command's hints and the edit gate's
//! refusals read it from here.

use super::StoreError;

impl StoreError {
    /// What the user can do about it, when there is something specific to say.
    pub fn remedy(&self) -> Option<String> {
        match self {
            Self::Roster(_) => None,
            Self::NotARepository { .. } => {
                Some("run this inside a git repository, or pass -C <path>; `git init` creates one".to_string())
            }
            Self::Bare { .. } => Some("run it in a clone or a worktree of this repository".to_string()),
            Self::StaleLock { lock, .. } => Some(format!(
                "if no git-mas or git command is still running here, remove it: `git mas doctor --fix` (or `rm {}`)",
                lock.display()
            )),
            Self::UnreadableRef { name, .. } => {
                Some(format!("inspect it with `git show-ref {name}`; `git update-ref -d {name}` removes it"))
            }
            Self::MissingObject { .. } => Some(
                "`git mas doctor` names the damaged chain; `git mas doctor --fix` cuts it back to its last whole record"
                    .to_string(),
            ),
            Self::BadRefName { .. }
            | Self::SeqOverflow { .. }
            | Self::TooManyRetries { .. }
            | Self::Git { .. }
            | Self::Encode { .. }
            | Self::Io { .. } => None,
        }
    }
}

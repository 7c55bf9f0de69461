//! `git mas check --json`.

use git_mas::attention::board::DamagedChain;
use git_mas::attention::replay::Checked;
use git_mas::sync::Parked;
use serde::{Deserialize, Serialize};

/// The range's commits and, with `--records`, the records in refs/mas/ that do not verify.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckOut {
    /// Every commit of the range, oldest first, with its replayed verdict and status; a commit
    /// that changes `.mas/roster` also carries `roster`: the old and new blob, the trail's status
    /// (`first-roster`, `signed` with `signed_by`, `off`, `unsigned` with `problems`, each
    /// `{problem: missing | unreadable-roster | malformed | not-on-roster | self-added |
    /// self-rekeyed | other-change | wrong-key, ...}`), from [`git_mas::identity::trail`].
    pub commits: Vec<Checked>,
    /// The focus chains that lost an object (each judged on what can be read of it; `git mas
    /// doctor --fix` repairs them), from [`git_mas::attention::replay::CheckReport::damaged`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub damaged_chains: Vec<DamagedChain>,
    /// With `--records`: every record that does not verify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unverified: Option<Vec<Parked>>,
}

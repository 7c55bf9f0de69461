//! `git mas check --json`.

use git_mas::attention::replay::Checked;
use git_mas::sync::Parked;
use serde::{Deserialize, Serialize};

/// The range's commits and, with `--records`, the records in refs/mas/ that do not verify.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckOut {
    /// Every commit of the range, oldest first, with its replayed verdict and status.
    pub commits: Vec<Checked>,
    /// With `--records`: every record that does not verify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unverified: Option<Vec<Parked>>,
}

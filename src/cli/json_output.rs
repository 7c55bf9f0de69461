//! Which types `--json` may print ([`JsonOutput`]): the shapes in [`super::json`], and library
//! types printed as they are.

use super::json;
use super::output::JsonOutput;

impl JsonOutput for json::frame::FrameOut {}
impl JsonOutput for json::propose::ProposedOut {}
impl JsonOutput for json::endorse::EndorsedOut {}
impl JsonOutput for json::tally::TallyOut {}
impl JsonOutput for json::run::Listed {}
impl JsonOutput for json::run::AbortedOut {}
impl JsonOutput for git_mas::run::RunDef {}
impl JsonOutput for git_mas::run::RunMeta {}
impl JsonOutput for json::worktree::WorktreeOut {}
impl JsonOutput for json::worktree::RemovedOut {}
impl JsonOutput for json::log::LoggedChain {}

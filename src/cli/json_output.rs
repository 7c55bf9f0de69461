//! Which types `--json` may print ([`JsonOutput`]): the shapes in [`super::json`], and library
//! types printed as they are.

use super::json;
use super::output::JsonOutput;

impl JsonOutput for json::frame::FrameOut {}
impl JsonOutput for json::agent::InitOut {}
impl JsonOutput for git_mas::ops::setup::TeamSetup {}
impl JsonOutput for git_mas::ops::setup::TeamUndo {}
impl JsonOutput for json::agent::NewAgentOut {}
impl JsonOutput for json::agent::SignRosterOut {}
impl JsonOutput for json::agent::ListedAgent {}
impl JsonOutput for json::agent::WhoamiOut {}
impl JsonOutput for json::status::StatusOut {}
impl JsonOutput for json::record::AppendOut {}
impl JsonOutput for git_mas::sync::SyncReport {}
impl JsonOutput for json::claim::LanesOut {}
impl JsonOutput for json::exchange::ExchangeOut {}
impl JsonOutput for json::doctor::DoctorOut {}
impl JsonOutput for json::skills::SkillsList {}
impl JsonOutput for json::skills::SkillsPlaced {}
impl JsonOutput for git_mas::evaluation::card::CardReport {}
impl JsonOutput for git_mas::evaluation::workspace::WorkspaceReport {}
impl JsonOutput for json::focus::FocusPublishOut {}
impl JsonOutput for json::focus::FocusListOut {}
impl JsonOutput for json::focus::FocusReleaseOut {}
impl JsonOutput for json::focus::FocusPruneOut {}
impl JsonOutput for json::focus::FocusStatusOut {}
impl JsonOutput for git_mas::attention::board::BoardEntry {}
impl JsonOutput for git_mas::attention::rule::Alignment {}
impl JsonOutput for git_mas::attention::rule::Decision {}
impl JsonOutput for json::gate::GateOut {}
impl JsonOutput for json::check::CheckOut {}
impl JsonOutput for json::hooks::HooksOut {}
impl JsonOutput for json::hooks::HostHooksOut {}
impl JsonOutput for json::snapshot::SnapshotOut {}
impl JsonOutput for json::snapshot::VerifyOut {}
impl JsonOutput for json::watch::WatchEventOut {}
impl JsonOutput for json::land::LandOut {}
impl JsonOutput for json::report::ReportEventOut {}
impl JsonOutput for json::report::HtmlWrittenOut {}
impl JsonOutput for json::coordinate::ContinueOut {}
impl JsonOutput for json::coordinate::PreflightOut {}
impl JsonOutput for git_mas::convergence::ConvergenceReport {}
impl JsonOutput for git_mas::coordinate::scalar::Report {}
impl JsonOutput for git_mas::coordinate::scalar::RunEvent {}
impl JsonOutput for git_mas::coordinate::develop::DevEvent {}
impl JsonOutput for json::propose::ProposedOut {}
impl JsonOutput for json::endorse::EndorsedOut {}
impl JsonOutput for json::tally::TallyOut {}
impl JsonOutput for json::run::Listed {}
impl JsonOutput for json::run::AbortedOut {}
impl JsonOutput for git_mas::devrun::RunDef {}
impl JsonOutput for git_mas::devrun::RunMeta {}
impl JsonOutput for json::worktree::WorktreeOut {}
impl JsonOutput for json::worktree::RemovedOut {}
impl JsonOutput for json::log::LoggedChain {}
impl JsonOutput for json::mcp_install::McpInstallOut {}

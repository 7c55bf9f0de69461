//! Which types `--json` may print ([`JsonOutput`]): the shapes in [`super::json`], and library
//! types printed as they are.

use super::json;
use super::output::JsonOutput;

impl JsonOutput for json::frame::FrameOut {}
impl JsonOutput for json::land::LandOut {}
impl JsonOutput for json::report::ReportEventOut {}
impl JsonOutput for json::coordinate::ContinueOut {}
impl JsonOutput for git_mas::convergence::ConvergenceReport {}
impl JsonOutput for git_mas::converge_driver::Report {}
impl JsonOutput for git_mas::converge_driver::RunEvent {}
impl JsonOutput for git_mas::coordinate::develop::DevEvent {}

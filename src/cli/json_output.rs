//! Which types `--json` may print ([`JsonOutput`]): the shapes in [`super::json`], and library
//! types printed as they are.

use super::json;
use super::output::JsonOutput;

impl JsonOutput for json::frame::FrameOut {}
impl JsonOutput for json::land::LandOut {}

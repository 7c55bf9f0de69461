//! One module per subcommand.

pub mod agent;
pub mod align;
pub mod check;
pub mod completions;
pub mod demo;
pub mod dev_report;
pub mod endorse;
pub mod focus;
pub mod frame;
pub mod gate;
pub mod hook;
pub mod hooks;
pub mod init;
pub mod install_man;
pub mod land;
pub mod log;
pub mod propose;
pub mod record;
pub mod run;
pub mod snapshot;
pub mod sync;
pub mod tally;
pub mod watch;
pub mod whoami;
pub mod worktree;

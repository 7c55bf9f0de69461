//! One module per subcommand.

pub mod agent;
pub mod completions;
pub mod demo;
pub mod init;
pub mod install_man;
pub mod log;
pub mod record;
pub mod sync;
pub mod whoami;

//! `git mas exchange --json`.

/// How an exchange ended.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ExchangeOut {
    /// Another exchange held the clone's lock: this one did nothing.
    pub already_running: bool,
    /// What it did, when it ran.
    pub state: Option<git_mas::exchange::State>,
}

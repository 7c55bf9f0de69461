//! Presets: the coding-agent CLIs a team can name by name (`--agents claude-code,codex`).
//!
//! A preset is a **command template**: a shell command line run with `sh -c` for every hop, the
//! hop's prompt on its stdin and the agent's reply read from its stdout, exactly like a
//! `cmd:<command line>` peer. The hop's environment names the phase and the peer
//! (`GIT_MAS_PHASE`, `GIT_MAS_RUN`, and in development hops `GIT_MAS_AGENT` and
//! `GIT_MAS_WORKTREE`), and a development hop runs in the agent's own worktree.
//!
//! | preset | default command line |
//! |---|---|
//! | `claude-code` | `claude -p --permission-mode acceptEdits --allowedTools 'Bash(git:*)'` |
//! | `codex` | `codex exec --full-auto -` |
//! | `goose` | `goose run --no-session --instructions -` |
//! | `opencode` | `opencode run "$(cat)"` |
//! | `cursor` | `cursor-agent -p --force --output-format text "$(cat)"` |
//! | `copilot` | `copilot -p "$(cat)" -s --allow-all-tools` |
//!
//! Those that cannot read a prompt on stdin get it as an argument (`"$(cat)"`). The defaults are
//! starting points — which permissions a CLI is given is the team's decision — so each is
//! overridable with git config, the first of these that is set winning:
//!
//! 1. `mas.agent.<peer>.command` — for one peer, by its name in the run (`alice=claude-code`);
//! 2. `mas.agent.<preset>.command` — for every peer of that preset (`mas.agent.codex.command`).
//!
//! Decision: **presets never carry a skill's text.** A hop names the phase; the agent loads the
//! git-mas Agent Skills installed for its host (`git mas skills install`), so the prompt stays
//! the same for every host.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A coding-agent CLI git-mas knows how to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Anthropic's Claude Code (`claude`).
    ClaudeCode,
    /// OpenAI's Codex CLI (`codex`).
    Codex,
    /// Block's Goose (`goose`).
    Goose,
    /// OpenCode (`opencode`).
    #[serde(rename = "opencode")]
    OpenCode,
    /// Cursor's agent CLI (`cursor-agent`).
    Cursor,
    /// GitHub Copilot CLI (`copilot`).
    Copilot,
}

impl Preset {
    /// Every preset.
    pub const ALL: [Preset; 6] =
        [Preset::ClaudeCode, Preset::Codex, Preset::Goose, Preset::OpenCode, Preset::Cursor, Preset::Copilot];

    /// The preset's name, as written in `--agents`.
    pub fn name(self) -> &'static str {
        match self {
            Preset::ClaudeCode => "claude-code",
            Preset::Codex => "codex",
            Preset::Goose => "goose",
            Preset::OpenCode => "opencode",
            Preset::Cursor => "cursor",
            Preset::Copilot => "copilot",
        }
    }

    /// The preset a name denotes (exact, lowercase).
    pub fn lookup(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The default command line (see the module docs' table).
    pub fn default_command(self) -> &'static str {
        match self {
            Preset::ClaudeCode => "claude -p --permission-mode acceptEdits --allowedTools 'Bash(git:*)'",
            Preset::Codex => "codex exec --full-auto -",
            Preset::Goose => "goose run --no-session --instructions -",
            Preset::OpenCode => "opencode run \"$(cat)\"",
            Preset::Cursor => "cursor-agent -p --force --output-format text \"$(cat)\"",
            Preset::Copilot => "copilot -p \"$(cat)\" -s --allow-all-tools",
        }
    }

    /// The git config keys that override the command line for peer `peer`, in the order they are
    /// consulted.
    pub fn config_keys(self, peer: &str) -> Vec<String> {
        let mut keys = vec![format!("mas.agent.{peer}.command")];
        if peer != self.name() {
            keys.push(format!("mas.agent.{}.command", self.name()));
        }
        keys
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a preset peer's command line came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "kebab-case")]
pub enum CommandSource {
    /// A git config key.
    Config {
        /// The key.
        key: String,
    },
    /// The preset's default template.
    Default,
}

/// The command line peer `peer` of `preset` runs, with where it came from: the first git config
/// key of [`Preset::config_keys`] that `lookup` finds with a non-blank value, else the default.
pub fn resolve_command(preset: Preset, peer: &str, lookup: impl Fn(&str) -> Option<String>) -> (String, CommandSource) {
    for key in preset.config_keys(peer) {
        if let Some(value) = lookup(&key).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) {
            return (value, CommandSource::Config { key });
        }
    }
    (preset.default_command().to_owned(), CommandSource::Default)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn config(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |key: &str| map.get(key).cloned()
    }

    #[test]
    fn names_round_trip_and_every_preset_has_a_template() {
        for p in Preset::ALL {
            assert_eq!(Preset::lookup(p.name()), Some(p));
            assert!(!p.default_command().trim().is_empty());
            assert_eq!(serde_json::to_string(&p).unwrap(), format!("\"{}\"", p.name()));
        }
        assert_eq!(Preset::lookup("Claude-Code"), None);
        assert_eq!(Preset::lookup("claude"), None);
    }

    #[test]
    fn the_default_template_applies_without_config() {
        let (cmd, from) = resolve_command(Preset::Codex, "codex-0", config(&[]));
        assert_eq!(cmd, "codex exec --full-auto -");
        assert_eq!(from, CommandSource::Default);
    }

    #[test]
    fn the_preset_key_overrides_the_default() {
        let (cmd, from) =
            resolve_command(Preset::Goose, "goose-1", config(&[("mas.agent.goose.command", "goose run -i - -q")]));
        assert_eq!(cmd, "goose run -i - -q");
        assert_eq!(from, CommandSource::Config { key: "mas.agent.goose.command".into() });
    }

    #[test]
    fn the_peer_key_wins_over_the_preset_key() {
        let lookup = config(&[
            ("mas.agent.claude-code.command", "claude -p"),
            ("mas.agent.alice.command", "claude -p --model opus"),
        ]);
        let (cmd, from) = resolve_command(Preset::ClaudeCode, "alice", &lookup);
        assert_eq!(cmd, "claude -p --model opus");
        assert_eq!(from, CommandSource::Config { key: "mas.agent.alice.command".into() });
        // Another peer of the preset gets the preset's key.
        let (cmd, _) = resolve_command(Preset::ClaudeCode, "bob", &lookup);
        assert_eq!(cmd, "claude -p");
    }

    #[test]
    fn a_blank_override_is_ignored() {
        let (cmd, from) = resolve_command(
            Preset::Copilot,
            "copilot-0",
            config(&[("mas.agent.copilot-0.command", "   "), ("mas.agent.copilot.command", "")]),
        );
        assert_eq!(cmd, Preset::Copilot.default_command());
        assert_eq!(from, CommandSource::Default);
    }

    #[test]
    fn a_peer_named_like_its_preset_is_looked_up_once() {
        assert_eq!(Preset::Cursor.config_keys("cursor"), ["mas.agent.cursor.command"]);
        assert_eq!(Preset::Cursor.config_keys("c1"), ["mas.agent.c1.command", "mas.agent.cursor.command"]);
    }
}

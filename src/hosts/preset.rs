//! Presets: the coding-agent CLIs a team can name by name (`--agents claude-code,codex`); each
//! host's line is its row's [`super::PresetFacts`] in [`super::TABLE`].
//!
//! A preset is a **command template**: a shell command line run with `sh -c` for every hop, the
//! hop's prompt on its stdin and the agent's reply read from its stdout, exactly like a
//! `cmd:<command line>` peer. The hop's environment names the phase and the peer
//! (`GIT_MAS_PHASE`, `GIT_MAS_RUN`, and in development hops `GIT_MAS_AGENT` and
//! `GIT_MAS_WORKTREE`), and a development hop runs in the agent's own worktree.
//!
//! | preset | default command line | verified |
//! |---|---|---|
//! | `claude-code` | `claude -p --permission-mode acceptEdits --allowedTools 'Bash(git:*)'` | claude-code 2.1.332 |
//! | `codex` | `codex exec --sandbox danger-full-access --ephemeral --color never -` | codex-cli 0.171.0 |
//! | `copilot` | `copilot -s --allow-all-tools --no-ask-user` | copilot 1.0.102 |
//! | `gemini` | `gemini --approval-mode yolo --skip-trust` | gemini-cli 0.61.0 |
//! | `cursor` | `cursor-agent -p --force --output-format text` | no: vendor docs only |
//! | `goose` | `goose run --no-session --instructions -` | no: vendor docs only |
//! | `opencode` | `opencode run --auto` | opencode 1.18.33 |
//!
//! Every template reads the prompt **on stdin**, never as an argument: an argument above 128 KiB
//! fails with `Argument list too long`, and hop prompts grow with the run. Each runs without a
//! terminal and asks no approval (an approval prompt with nobody to answer is a hang or, for
//! opencode without `--auto`, every permission silently rejected and an empty reply), and prints
//! only the reply on stdout. The "verified" column names the release each template was run
//! against, offline, through the scripted model server of the test suite (`tests/cli/hosts/`,
//! installed by `tests/hosts/install.sh`); goose and cursor-agent install from no registry the
//! suite can reach, so theirs follow the vendors' documentation and are unverified.
//!
//! Decisions, per host:
//!
//! - **claude-code** edits files without asking (`acceptEdits`) and may run `git` (so `git mas`)
//!   and **the team's check**: [`Host::command_line`] adds `Bash(<check>:*)` for the run's check
//!   (`--check`, else `mas.check`), because with `Bash(git:*)` alone claude refuses every other
//!   command ("This command requires approval") and an agent could not test before proposing.
//!   Not `--dangerously-skip-permissions`: claude refuses it when running as root, and it would
//!   allow anything.
//! - **codex** runs with `--sandbox danger-full-access`, its cwd the agent's own worktree. Its
//!   `workspace-write` sandbox mounts `.git` read-only (in a linked worktree too, `--add-dir` does
//!   not help), so `git mas propose`, `endorse` and `focus publish`, which write `refs/mas`,
//!   fail inside it; `danger-full-access` is the narrowest mode in which they work. It keeps
//!   `exec`'s never-ask approval policy rather than bypassing approvals and sandbox together.
//!   `--ephemeral` keeps no session files per hop (a hop's memory is its prompt); `--full-auto`
//!   no longer exists (`unexpected argument`, exit 2).
//! - **opencode** `run` with no message reads the prompt from stdin; `--auto` approves its
//!   permission asks.
//! - **copilot** with piped stdin and no `-p` runs non-interactively; `--allow-all-tools` is
//!   required without a terminal, `--no-ask-user` keeps it from waiting on a question, `-s`
//!   prints only the reply.
//! - **gemini** (0.61.0) with piped stdin and no `-p` runs headless, the whole of stdin its
//!   prompt (a 160 KiB prompt arrived whole), and prints only the reply on stdout.
//!   `--approval-mode yolo` (the same as `--yolo`) runs every tool call without asking. Headless,
//!   it refuses to run at all in a folder it does not trust ("Gemini CLI is not running in a
//!   trusted directory", exit 55), and an agent's worktree is a new folder nobody trusted:
//!   `--skip-trust` lets it run there, without reading the worktree's `.gemini/settings.json`
//!   (project skills in `.agents/skills` are still read). It asks the model's API once more per
//!   prompt to pick a model (a JSON "complexity score" request to a flash-lite model), and with
//!   `privacy.usageStatisticsEnabled` left on it also reaches for Google's statistics host.
//!
//! An agent whose worktree has its host's edit hook (coordinate installs it; `--no-edit-gate`
//! does not) runs [`Host::session_command_line`] instead: codex with the hook inline
//! (`-c hooks.PreToolUse=[…]`) and `--dangerously-bypass-hook-trust`, copilot with
//! `--trust-folder`, opencode with `OPENCODE_CONFIG_CONTENT` naming the plugin in the worktree's
//! git dir, gemini with `GEMINI_CLI_TRUST_WORKSPACE=true` (the worktree trusted for that process);
//! without those, each of the four runs no hook from a linked worktree (or, for opencode, first
//! npm-installs into the worktree). Why: [`crate::hosts::worktree`].
//!
//! An agent whose worktree has the git-mas MCP server registered as that agent (coordinate does
//! it; `--no-mcp` does not) also gets what its host needs to start that server unattended
//! ([`super::mcp::session_args`]): claude-code `--mcp-config .mcp.json` (a
//! project `.mcp.json` is otherwise started only once approved) and `mcp__git-mas` among its
//! allowed tools (in `-p` a tool not allowed is refused), codex the server as one `-c` table
//! with git-mas's environment passed through and its tools approved (it reads a linked worktree's
//! `.codex/` no more than its hooks, clears a server's environment, and in `exec` refuses a tool
//! that writes without approval), copilot `--additional-mcp-config
//! @.copilot/mcp-config.json`, gemini `GEMINI_CLI_TRUST_WORKSPACE=true` before its line (it
//! starts a project's servers only in a trusted folder). Opencode reads the worktree's
//! `opencode.json` itself.
//!
//! A host that is not logged in (claude prints `Not logged in · Please run /login` on stdout and
//! exits 1) or cannot reach its model is a failed call, its own words quoted
//! (`peers::process`); one that hangs is stopped at the hop's timeout.
//!
//! The defaults are starting points — which permissions a CLI is given is the team's decision —
//! so each is overridable with git config, the first of these that is set winning:
//!
//! 1. `mas.agent.<peer>.command` — for one peer, by its name in the run (`alice=claude-code`);
//! 2. `mas.agent.<preset>.command` — for every peer of that preset (`mas.agent.codex.command`).
//!
//! An overriding command line is run as written (no check is added to it).
//!
//! Decision: **presets never carry a skill's text.** A hop names the phase; the agent loads the
//! git-mas Agent Skills installed for its host (`git mas skills install`), so the prompt stays
//! the same for every host.

use super::Host;
use super::{hooks, mcp};
use serde::Serialize;

impl Host {
    /// The default command line (see the module docs' table).
    pub fn default_command(self) -> &'static str {
        self.facts().preset.command
    }

    /// Whether the template was run against the real host (see the module docs' table).
    pub fn verified(self) -> bool {
        self.facts().verified.is_real()
    }

    /// The default command line for a run whose check is `check`: the template, and for
    /// claude-code a permission to run the check (`Bash(<check>:*)`, shell-quoted).
    pub fn command_line(self, check: Option<&str>) -> String {
        let template = self.default_command();
        match (self, check.map(str::trim).filter(|c| !c.is_empty())) {
            (Host::ClaudeCode, Some(check)) => format!("{template} {}", shell_quote(&format!("Bash({check}:*)"))),
            _ => template.to_owned(),
        }
    }

    /// [`Host::command_line`] for agent `agent` whose worktree was given what `wiring` says, with
    /// what the host needs to use it unattended: for the edit hook
    /// ([`super::worktree::install_hook`]), [`hooks::session_prefix`] before the line and
    /// [`hooks::session_args`]; for the MCP server ([`super::worktree::install_mcp`]),
    /// [`mcp::session_prefix`] before the line (once, when the hook's is the same),
    /// [`mcp::session_args`] and, for claude-code, the permission to call the server's tools
    /// (`mcp__git-mas`). Codex's words go after `codex exec`, the others' at the end. The lines
    /// of presets whose hosts need nothing are unchanged.
    pub fn session_command_line(self, check: Option<&str>, wiring: Wiring, agent: &str) -> String {
        let mut line = self.command_line(check);
        let host = self;
        let mut args = Vec::new();
        if wiring.edit_gate {
            args.extend(hooks::session_args(host));
        }
        if wiring.mcp {
            if self == Host::ClaudeCode {
                // One more value of the --allowedTools list the line ends with.
                line.push_str(&format!(" {}", hooks::shell_word(&format!("mcp__{}", mcp::SERVER_NAME))));
            }
            args.extend(mcp::session_args(host, Some(agent)));
        }
        if !args.is_empty() {
            let words = args.iter().map(|a| hooks::shell_word(a)).collect::<Vec<_>>().join(" ");
            let cut = match self.facts().preset.words_after {
                Some(prefix) if line.starts_with(prefix) => prefix.len(),
                _ => line.len(),
            };
            line = format!("{} {words}{}", &line[..cut], &line[cut..]);
        }
        let mut prefixes: Vec<String> = Vec::new();
        let hook_prefix = hooks::session_prefix(host).filter(|_| wiring.edit_gate);
        let server_prefix = mcp::session_prefix(host).filter(|_| wiring.mcp).map(String::from);
        for prefix in [hook_prefix, server_prefix].into_iter().flatten() {
            if !prefixes.contains(&prefix) {
                prefixes.push(prefix);
            }
        }
        prefixes.push(line);
        prefixes.join(" ")
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

/// What coordinate gave an agent's worktree that its host's session must be told about.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wiring {
    /// The host's edit hook is installed ([`super::worktree::install_hook`]).
    pub edit_gate: bool,
    /// The git-mas MCP server is registered as the agent ([`super::worktree::install_mcp`]).
    pub mcp: bool,
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

/// Quotes `text` as one word for `sh` (single quotes; a `'` inside becomes `'\''`).
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The command line peer `peer` of `preset` runs in a run whose check is `check`, with where it
/// came from: the first git config key of [`Host::config_keys`] that `lookup` finds with a
/// non-blank value, else [`Host::session_command_line`] for what the peer's worktree was given
/// (`wiring`). An overriding line is run as written.
pub fn resolve_command(
    preset: Host,
    peer: &str,
    check: Option<&str>,
    wiring: Wiring,
    lookup: impl Fn(&str) -> Option<String>,
) -> (String, CommandSource) {
    for key in preset.config_keys(peer) {
        if let Some(value) = lookup(&key).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) {
            return (value, CommandSource::Config { key });
        }
    }
    (preset.session_command_line(check, wiring, peer), CommandSource::Default)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const GATE: Wiring = Wiring { edit_gate: true, mcp: false };

    fn config(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |key: &str| map.get(key).cloned()
    }

    #[test]
    fn names_round_trip_and_every_preset_has_a_template() {
        for p in Host::ALL {
            assert_eq!(Host::from_name(p.name()), Some(p));
            assert!(!p.default_command().trim().is_empty());
            assert_eq!(serde_json::to_string(&p).unwrap(), format!("\"{}\"", p.name()));
        }
        assert_eq!(Host::from_name("Claude-Code"), None);
        assert_eq!(Host::from_name("claude"), None);
    }

    #[test]
    fn the_default_template_applies_without_config() {
        let (cmd, from) = resolve_command(Host::Codex, "codex-0", None, Wiring::default(), config(&[]));
        assert_eq!(cmd, "codex exec --sandbox danger-full-access --ephemeral --color never -");
        assert_eq!(from, CommandSource::Default);
    }

    #[test]
    fn the_preset_key_overrides_the_default() {
        let (cmd, from) = resolve_command(
            Host::Goose,
            "goose-1",
            None,
            Wiring::default(),
            config(&[("mas.agent.goose.command", "goose run -i - -q")]),
        );
        assert_eq!(cmd, "goose run -i - -q");
        assert_eq!(from, CommandSource::Config { key: "mas.agent.goose.command".into() });
    }

    #[test]
    fn a_gated_line_carries_what_its_host_needs_to_run_the_worktree_hook() {
        let codex = Host::Codex.session_command_line(None, GATE, "a");
        assert!(
            codex.starts_with(
                "codex exec --dangerously-bypass-hook-trust -c 'hooks.PreToolUse=[{matcher=\"apply_patch|Bash|mcp__.*\""
            ),
            "{codex}"
        );
        assert!(codex.contains("command=\"git-mas-hook --host codex\""), "{codex}");
        assert!(codex.ends_with(" --sandbox danger-full-access --ephemeral --color never -"), "{codex}");
        assert_eq!(
            Host::Copilot.session_command_line(None, GATE, "a"),
            "copilot -s --allow-all-tools --no-ask-user --trust-folder"
        );
        assert_eq!(
            Host::OpenCode.session_command_line(None, GATE, "a"),
            r#"OPENCODE_CONFIG_CONTENT="{\"plugin\":[\"file://$(git rev-parse --absolute-git-dir)/mas-opencode-gate.js\"]}" opencode run --auto"#
        );
        assert_eq!(
            Host::Gemini.session_command_line(None, GATE, "a"),
            "GEMINI_CLI_TRUST_WORKSPACE=true gemini --approval-mode yolo --skip-trust"
        );
        for preset in [Host::ClaudeCode, Host::Goose, Host::Cursor] {
            assert_eq!(
                preset.session_command_line(Some("make"), GATE, "a"),
                preset.command_line(Some("make")),
                "{preset}"
            );
        }
        let (cmd, from) = resolve_command(Host::Copilot, "c", None, GATE, config(&[]));
        assert_eq!(
            (cmd.as_str(), from),
            ("copilot -s --allow-all-tools --no-ask-user --trust-folder", CommandSource::Default)
        );
        let (cmd, _) =
            resolve_command(Host::Copilot, "c", None, GATE, config(&[("mas.agent.c.command", "copilot -s")]));
        assert_eq!(cmd, "copilot -s", "an overriding line is run as written");
    }

    #[test]
    fn an_mcp_wired_line_starts_the_worktree_server_as_the_agent() {
        const MCP: Wiring = Wiring { edit_gate: false, mcp: true };
        let claude = Host::ClaudeCode.session_command_line(Some("make"), MCP, "alice");
        assert_eq!(
            claude,
            "claude -p --permission-mode acceptEdits --allowedTools 'Bash(git:*)' 'Bash(make:*)' mcp__git-mas \
             --mcp-config .mcp.json"
        );
        let codex = Host::Codex.session_command_line(None, MCP, "alice");
        assert!(codex.starts_with("codex exec -c "), "{codex}");
        assert!(codex.contains("alice"), "the server acts as the agent: {codex}");
        assert!(codex.ends_with(" --sandbox danger-full-access --ephemeral --color never -"), "{codex}");
        assert_eq!(
            Host::Copilot.session_command_line(None, MCP, "c"),
            "copilot -s --allow-all-tools --no-ask-user --additional-mcp-config @.copilot/mcp-config.json"
        );
        assert_eq!(
            Host::Gemini.session_command_line(None, MCP, "a"),
            "GEMINI_CLI_TRUST_WORKSPACE=true gemini --approval-mode yolo --skip-trust"
        );
        for preset in [Host::OpenCode, Host::Goose, Host::Cursor] {
            assert_eq!(preset.session_command_line(None, MCP, "a"), preset.command_line(None), "{preset}");
        }
        // Both: the hook's words, then the server's.
        let both = Wiring { edit_gate: true, mcp: true };
        let copilot = Host::Copilot.session_command_line(None, both, "c");
        assert!(copilot.ends_with("--trust-folder --additional-mcp-config @.copilot/mcp-config.json"), "{copilot}");
        let codex = Host::Codex.session_command_line(None, both, "alice");
        let (hook, server) = (codex.find("hooks.PreToolUse").unwrap(), codex.find("mcp_servers").unwrap());
        assert!(hook < server, "{codex}");
        // The same prefix for the hook and the server is said once.
        assert_eq!(
            Host::Gemini.session_command_line(None, both, "a"),
            "GEMINI_CLI_TRUST_WORKSPACE=true gemini --approval-mode yolo --skip-trust"
        );
        let (cmd, _) = resolve_command(Host::ClaudeCode, "alice", None, MCP, config(&[]));
        assert!(cmd.ends_with("mcp__git-mas --mcp-config .mcp.json"), "{cmd}");
    }

    #[test]
    fn the_peer_key_wins_over_the_preset_key() {
        let lookup = config(&[
            ("mas.agent.claude-code.command", "claude -p"),
            ("mas.agent.alice.command", "claude -p --model opus"),
        ]);
        let (cmd, from) = resolve_command(Host::ClaudeCode, "alice", Some("cargo test"), Wiring::default(), &lookup);
        assert_eq!(cmd, "claude -p --model opus");
        assert_eq!(from, CommandSource::Config { key: "mas.agent.alice.command".into() });
        // Another peer of the preset gets the preset's key.
        let (cmd, _) = resolve_command(Host::ClaudeCode, "bob", None, Wiring::default(), &lookup);
        assert_eq!(cmd, "claude -p");
    }

    #[test]
    fn a_blank_override_is_ignored() {
        let (cmd, from) = resolve_command(
            Host::Copilot,
            "copilot-0",
            None,
            Wiring::default(),
            config(&[("mas.agent.copilot-0.command", "   "), ("mas.agent.copilot.command", "")]),
        );
        assert_eq!(cmd, Host::Copilot.default_command());
        assert_eq!(from, CommandSource::Default);
    }

    #[test]
    fn claude_code_may_run_the_team_check_and_nothing_else_besides_git() {
        let line = Host::ClaudeCode.command_line(Some("cargo test --locked"));
        assert_eq!(
            line,
            "claude -p --permission-mode acceptEdits --allowedTools 'Bash(git:*)' 'Bash(cargo test --locked:*)'"
        );
        // A quote in the check stays one shell word.
        let line = Host::ClaudeCode.command_line(Some("sh -c 'make check'"));
        assert!(line.ends_with(r#"'Bash(sh -c '\''make check'\'':*)'"#), "{line}");
        // No check, a blank one, or another host: the template as it is.
        assert_eq!(Host::ClaudeCode.command_line(Some("  ")), Host::ClaudeCode.default_command());
        assert_eq!(Host::Codex.command_line(Some("cargo test")), Host::Codex.default_command());
    }

    #[test]
    fn every_template_reads_its_prompt_on_stdin() {
        for p in Host::ALL {
            assert!(!p.default_command().contains("$(cat)"), "{p}: the prompt as an argument");
            assert!(!p.default_command().contains("--full-auto"), "{p}: a flag codex removed");
        }
    }

    #[test]
    fn the_unverified_templates_are_pinned_to_their_vendors_docs() {
        // goose and cursor-agent install from no registry the test suite reaches:
        // what their vendors document, and changes only on purpose.
        assert_eq!(Host::Goose.default_command(), "goose run --no-session --instructions -");
        assert_eq!(Host::Cursor.default_command(), "cursor-agent -p --force --output-format text");
        let unverified: Vec<_> = Host::ALL.into_iter().filter(|p| !p.verified()).collect();
        assert_eq!(unverified, [Host::Cursor, Host::Goose]);
    }

    #[test]
    fn a_peer_named_like_its_preset_is_looked_up_once() {
        assert_eq!(Host::Cursor.config_keys("cursor"), ["mas.agent.cursor.command"]);
        assert_eq!(Host::Cursor.config_keys("c1"), ["mas.agent.c1.command", "mas.agent.cursor.command"]);
    }
}

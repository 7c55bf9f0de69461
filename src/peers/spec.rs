//! Peer specs: how a person names the members of a team on the command line.
//!
//! A spec is `cmd:<command line>` (any program: the hop's prompt on its stdin, its reply on its
//! stdout, run with `sh -c`), `builtin:<kind>` (one of git-mas's own peers, started as a
//! `git-mas peer <kind>` subprocess) or the name of a coding-agent CLI preset (`claude-code`,
//! `codex`, `copilot`, `gemini`, `cursor`, `goose`, `opencode`: a command template, see
//! [`crate::hosts::preset`]).
//! Any may be preceded by `NAME=` to choose the peer's name; otherwise a peer is named after its
//! kind and ring position (`reference-0`, `cmd-2`, `codex-1`).
//!
//! Decision: **a list splits only at a comma that starts another spec.** `--agents` takes a
//! comma-separated list, but command lines contain commas (`cmd:jq -r '.a,.b'`). So a comma ends a
//! spec only when what follows it is itself a spec (`cmd:`, `builtin:` or `NAME=` before one);
//! every other comma belongs to the command line. (A command line with a comma followed by a
//! preset's bare name is therefore split there; quote it differently or name the peer.)

use crate::hosts::Host;
use crate::identity::validate_name;
use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// The most peers one run may have (each is a roster entry of its own, a principal on the board).
pub const MAX_PEERS: usize = 64;

/// git-mas's own peers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BuiltinKind {
    /// Derives the class's reference rule in ASSEMBLY and applies its own rule faithfully in
    /// CONVERGE.
    Reference,
    /// The uncontrolled baseline where the class has one (resource: extract what it desires,
    /// ignoring the price); elsewhere it behaves like `reference`.
    Greedy,
    /// Derives the reference rule, then announces values that drift away from it, so that
    /// execution gaps show.
    Faulty,
}

impl BuiltinKind {
    /// Every kind.
    pub const ALL: [BuiltinKind; 3] = [BuiltinKind::Reference, BuiltinKind::Greedy, BuiltinKind::Faulty];

    /// The kind's name, as in `builtin:<name>`.
    pub fn name(self) -> &'static str {
        match self {
            BuiltinKind::Reference => "reference",
            BuiltinKind::Greedy => "greedy",
            BuiltinKind::Faulty => "faulty",
        }
    }

    /// The kind a name denotes.
    pub fn lookup(name: &str) -> Option<BuiltinKind> {
        BuiltinKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for BuiltinKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a peer is: a command line or a built-in.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum PeerSpec {
    /// `cmd:<command line>`, run with `sh -c`.
    Cmd {
        /// The command line.
        command: String,
    },
    /// `builtin:<kind>`.
    Builtin {
        /// Which one.
        kind: BuiltinKind,
    },
    /// A coding-agent CLI preset, by name.
    Preset {
        /// Which one.
        preset: Host,
    },
}

/// Why a peer spec or list was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SpecError {
    /// No peers at all.
    #[error("no peers given; pass --agents with at least one spec")]
    Empty,
    /// A spec with neither prefix.
    #[error(
        "{given:?} is not a peer spec; expected cmd:<command line>, builtin:reference|greedy|faulty, or a preset: {}",
        preset_names()
    )]
    Unknown {
        /// The spec as given.
        given: String,
    },
    /// `builtin:` with an unknown kind.
    #[error("unknown built-in peer {given:?}; expected builtin:reference, builtin:greedy or builtin:faulty")]
    UnknownBuiltin {
        /// The kind as given.
        given: String,
    },
    /// `cmd:` with nothing after it.
    #[error("{given:?} has no command line after cmd:")]
    EmptyCommand {
        /// The spec as given.
        given: String,
    },
    /// `NAME=` with a name that is not an agent name.
    #[error("peer name {name:?} is not usable: {reason}")]
    BadName {
        /// The name as given.
        name: String,
        /// Why.
        reason: String,
    },
    /// Two peers with one name.
    #[error("two peers are named {name:?}; give one of them another name with NAME=<spec>")]
    Duplicate {
        /// The name.
        name: String,
    },
    /// More than [`MAX_PEERS`].
    #[error("{count} peers given; a run takes at most {MAX_PEERS}")]
    TooMany {
        /// How many.
        count: usize,
    },
}

impl PeerSpec {
    /// Parses `cmd:<command line>` or `builtin:<kind>`.
    pub fn parse(text: &str) -> Result<PeerSpec, SpecError> {
        let text = text.trim();
        if let Some(command) = text.strip_prefix("cmd:") {
            let command = command.trim();
            if command.is_empty() {
                return Err(SpecError::EmptyCommand { given: text.to_owned() });
            }
            return Ok(PeerSpec::Cmd { command: command.to_owned() });
        }
        if let Some(kind) = text.strip_prefix("builtin:") {
            let kind = kind.trim();
            return BuiltinKind::lookup(kind)
                .map(|kind| PeerSpec::Builtin { kind })
                .ok_or_else(|| SpecError::UnknownBuiltin { given: kind.to_owned() });
        }
        if let Some(preset) = Host::from_name(text) {
            return Ok(PeerSpec::Preset { preset });
        }
        Err(SpecError::Unknown { given: text.to_owned() })
    }

    /// A short label for default peer names: the built-in's kind, the preset's name, or `cmd`.
    pub fn label(&self) -> &'static str {
        match self {
            PeerSpec::Cmd { .. } => "cmd",
            PeerSpec::Builtin { kind } => kind.name(),
            PeerSpec::Preset { preset } => preset.name(),
        }
    }
}

impl fmt::Display for PeerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerSpec::Cmd { command } => write!(f, "cmd:{command}"),
            PeerSpec::Builtin { kind } => write!(f, "builtin:{kind}"),
            PeerSpec::Preset { preset } => write!(f, "{preset}"),
        }
    }
}

impl From<PeerSpec> for String {
    fn from(spec: PeerSpec) -> String {
        spec.to_string()
    }
}

impl TryFrom<String> for PeerSpec {
    type Error = SpecError;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        PeerSpec::parse(&value)
    }
}

/// One member of a run: its name (the participant id in events and reports) and what it is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PeerEntry {
    /// The peer's name.
    pub name: String,
    /// What runs for it.
    pub spec: PeerSpec,
}

/// Every preset's name, for messages.
fn preset_names() -> String {
    Host::ALL.map(Host::name).join(", ")
}

/// True when `text` begins with a preset's name, followed by its end or a comma.
fn starts_preset(text: &str) -> bool {
    let word = text.split(',').next().unwrap_or("").trim_end();
    Host::from_name(word).is_some()
}

/// True when `text` starts a spec: `cmd:`, `builtin:`, a preset's name, or `NAME=` followed by
/// one of them.
fn starts_spec(text: &str) -> bool {
    let text = text.trim_start();
    let bare = |t: &str| t.starts_with("cmd:") || t.starts_with("builtin:") || starts_preset(t);
    if bare(text) {
        return true;
    }
    let name_len = text
        .bytes()
        .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-'))
        .count();
    name_len > 0 && text[name_len..].strip_prefix('=').is_some_and(bare)
}

/// Splits one `--agents` value into spec texts (see the module docs for where commas split).
pub fn split_specs(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, _) in value.match_indices(',') {
        if starts_spec(&value[i + 1..]) {
            out.push(value[start..i].trim());
            start = i + 1;
        }
    }
    out.push(value[start..].trim());
    out
}

/// Parses one spec text, with an optional `NAME=` before it; returns the name if one was given.
pub fn parse_named(text: &str) -> Result<(Option<String>, PeerSpec), SpecError> {
    let text = text.trim();
    if text.starts_with("cmd:") || text.starts_with("builtin:") || starts_preset(text) || !starts_spec(text) {
        return PeerSpec::parse(text).map(|spec| (None, spec));
    }
    match text.split_once('=') {
        Some((name, rest)) => {
            validate_name(name).map_err(|e| SpecError::BadName { name: name.to_owned(), reason: e.to_string() })?;
            Ok((Some(name.to_owned()), PeerSpec::parse(rest)?))
        }
        None => PeerSpec::parse(text).map(|spec| (None, spec)),
    }
}

/// Parses every `--agents` value into the run's roster, in ring order, naming unnamed peers
/// `<kind>-<position>`.
pub fn parse_agents<S: AsRef<str>>(values: &[S]) -> Result<Vec<PeerEntry>, SpecError> {
    let texts: Vec<&str> = values.iter().flat_map(|v| split_specs(v.as_ref())).filter(|t| !t.is_empty()).collect();
    if texts.is_empty() {
        return Err(SpecError::Empty);
    }
    if texts.len() > MAX_PEERS {
        return Err(SpecError::TooMany { count: texts.len() });
    }
    let mut peers: Vec<PeerEntry> = Vec::with_capacity(texts.len());
    for (position, text) in texts.into_iter().enumerate() {
        let (name, spec) = parse_named(text)?;
        let name = name.unwrap_or_else(|| format!("{}-{position}", spec.label()));
        if peers.iter().any(|p| p.name == name) {
            return Err(SpecError::Duplicate { name });
        }
        peers.push(PeerEntry { name, spec });
    }
    Ok(peers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(peers: &[PeerEntry]) -> Vec<&str> {
        peers.iter().map(|p| p.name.as_str()).collect()
    }

    #[test]
    fn builtins_and_commands_parse() {
        let peers = parse_agents(&["builtin:reference,builtin:faulty", "cmd:./peer.sh --x 1"]).unwrap();
        assert_eq!(names(&peers), ["reference-0", "faulty-1", "cmd-2"]);
        assert_eq!(peers[0].spec, PeerSpec::Builtin { kind: BuiltinKind::Reference });
        assert_eq!(peers[2].spec, PeerSpec::Cmd { command: "./peer.sh --x 1".into() });
        assert_eq!(peers[2].spec.to_string(), "cmd:./peer.sh --x 1");
    }

    #[test]
    fn commas_inside_a_command_line_stay_in_it() {
        let peers = parse_agents(&["cmd:jq -r '.a,.b' x,builtin:greedy, alice=cmd:echo a,b,c"]).unwrap();
        assert_eq!(names(&peers), ["cmd-0", "greedy-1", "alice"]);
        assert_eq!(peers[0].spec, PeerSpec::Cmd { command: "jq -r '.a,.b' x".into() });
        assert_eq!(peers[2].spec, PeerSpec::Cmd { command: "echo a,b,c".into() });
    }

    #[test]
    fn bad_lists_are_refused_with_the_reason() {
        assert_eq!(parse_agents::<&str>(&[]), Err(SpecError::Empty));
        assert_eq!(parse_agents(&[" , "]).unwrap_err(), SpecError::Unknown { given: ",".into() });
        assert!(matches!(parse_agents(&["claude"]), Err(SpecError::Unknown { .. })));
        assert!(matches!(parse_agents(&["builtin:oracle"]), Err(SpecError::UnknownBuiltin { .. })));
        assert!(matches!(parse_agents(&["cmd:  "]), Err(SpecError::EmptyCommand { .. })));
        assert!(matches!(parse_agents(&["a=builtin:reference,a=builtin:greedy"]), Err(SpecError::Duplicate { .. })));
        assert!(matches!(parse_agents(&["x..y=builtin:reference"]), Err(SpecError::BadName { .. })));
        let many = vec!["builtin:reference"; MAX_PEERS + 1];
        assert!(matches!(parse_agents(&many), Err(SpecError::TooMany { .. })));
    }

    #[test]
    fn presets_are_named_by_their_cli() {
        let peers = parse_agents(&["claude-code,copilot, alice=codex,cmd:echo a,goose"]).unwrap();
        assert_eq!(names(&peers), ["claude-code-0", "copilot-1", "alice", "cmd-3", "goose-4"]);
        assert_eq!(peers[2].spec, PeerSpec::Preset { preset: Host::Codex });
        assert_eq!(peers[3].spec, PeerSpec::Cmd { command: "echo a".into() });
        assert_eq!(peers[2].spec.to_string(), "codex");
        // A word that merely starts like a preset is not one.
        assert_eq!(
            parse_agents(&["cmd:echo x,codexy"]).unwrap()[0].spec,
            PeerSpec::Cmd { command: "echo x,codexy".into() }
        );
        assert!(matches!(parse_agents(&["claude"]), Err(SpecError::Unknown { .. })));
    }

    #[test]
    fn specs_serialize_as_their_text() {
        let entry = PeerEntry { name: "p".into(), spec: PeerSpec::Builtin { kind: BuiltinKind::Greedy } };
        let json = serde_json::to_string(&entry).unwrap();
        assert_eq!(json, r#"{"name":"p","spec":"builtin:greedy"}"#);
        assert_eq!(serde_json::from_str::<PeerEntry>(&json).unwrap(), entry);
        assert!(serde_json::from_str::<PeerEntry>(r#"{"name":"p","spec":"nope"}"#).is_err());
    }

    proptest! {
        #[test]
        fn parsing_never_panics(text in "\\PC{0,80}") {
            let _ = parse_agents(&[text.as_str()]);
        }
    }
}

//! The parts of the help that list hosts, written from [`super::TABLE`].
//!
//! Why generated: a list typed into a doc comment goes stale the day a host is added or its
//! answer format changes; read from the table, adding a host is still a row. Each
//! [`AnswerFormat`] says what its deny, allow and warning look like on stdout (the shapes
//! [`super::reply`] writes), and the help groups the hosts by the shape they share, in
//! [`Host::ALL`]'s order.

use super::{AnswerFormat, Host};

impl AnswerFormat {
    /// What a deny looks like on stdout.
    pub fn deny_shape(self) -> String {
        match self {
            AnswerFormat::HookSpecificOutput => {
                r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason"}}"#.into()
            }
            AnswerFormat::PermissionDecision => r#"{"permissionDecision": "deny", "permissionDecisionReason"}"#.into(),
            AnswerFormat::Decision { .. } => r#"{"decision": "deny", "reason"}"#.into(),
            AnswerFormat::Permission => r#"{"permission": "deny", "user_message", "agent_message"}"#.into(),
            AnswerFormat::Block => r#"{"decision": "block", "reason"}"#.into(),
        }
    }

    /// What an allow looks like on stdout.
    pub fn allow_shape(self) -> String {
        match self {
            AnswerFormat::HookSpecificOutput | AnswerFormat::PermissionDecision | AnswerFormat::Block => {
                "no output".into()
            }
            AnswerFormat::Decision { .. } => r#"{"decision": "allow"}"#.into(),
            AnswerFormat::Permission => r#"{"permission": "allow"}"#.into(),
        }
    }

    /// What an allow with a warning (`mas.gate=warn`) looks like.
    pub fn warn_shape(self) -> String {
        match self {
            AnswerFormat::HookSpecificOutput => {
                r#"{"systemMessage", "hookSpecificOutput": {"hookEventName", "additionalContext"}}"#.into()
            }
            AnswerFormat::PermissionDecision => r#"{"permissionDecision": "allow", "permissionDecisionReason"}"#.into(),
            AnswerFormat::Decision { message } => format!(r#"{{"decision": "allow", "{message}"}}"#),
            AnswerFormat::Permission => r#"{"permission": "allow", "user_message", "agent_message"}"#.into(),
            AnswerFormat::Block => "the message on stderr".into(),
        }
    }
}

/// The hosts' command-line names, comma-separated, in [`Host::ALL`]'s order:
/// `claude-code, codex, …`.
pub fn host_names() -> String {
    Host::ALL.iter().map(|h| h.name()).collect::<Vec<_>>().join(", ")
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// One sentence part per distinct shape, the hosts that share it named before it:
/// `claude-code and codex {…}; copilot {…}`.
fn grouped(shape: impl Fn(AnswerFormat) -> String) -> String {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for host in Host::ALL {
        let s = shape(host.facts().answer);
        match groups.iter_mut().find(|(g, _)| *g == s) {
            Some((_, names)) => names.push(host.name()),
            None => groups.push((s, vec![host.name()])),
        }
    }
    groups.iter().map(|(s, names)| format!("{} {s}", and_list(names))).collect::<Vec<_>>().join("; ")
}

/// The paragraph of `git mas gate --help` on the hosts' answers: every host's deny, allow and
/// warning.
pub fn answer_formats() -> String {
    format!(
        "The exit code is always 0; the answer is on stdout in the host's format (the reason also on \
         stderr). Deny: {}. Allow: {}. Warn: {}.",
        grouped(AnswerFormat::deny_shape),
        grouped(AnswerFormat::allow_shape),
        grouped(AnswerFormat::warn_shape),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_of_the_table_is_named_in_each_list() {
        let names = host_names();
        let formats = answer_formats();
        for facts in super::super::TABLE {
            assert!(names.split(", ").any(|n| n == facts.name), "{} in {names}", facts.name);
            for part in formats.split(". ").filter(|p| p.starts_with("Deny:") || p.starts_with("Allow:")) {
                assert!(part.contains(facts.name), "{} in {part}", facts.name);
            }
        }
    }

    #[test]
    fn hosts_that_share_a_shape_are_named_together() {
        assert_eq!(and_list(&["a", "b", "c"]), "a, b and c");
        assert_eq!(and_list(&["a"]), "a");
        let formats = answer_formats();
        assert!(formats.contains(r#"Deny: claude-code and codex {"hookSpecificOutput""#), "{formats}");
        assert!(formats.contains(r#"gemini {"decision": "allow", "systemMessage"}"#), "{formats}");
        assert!(formats.contains(r#"opencode {"decision": "allow", "message"}"#), "{formats}");
        assert!(formats.contains("Allow: claude-code, codex, copilot and goose no output"), "{formats}");
    }
}

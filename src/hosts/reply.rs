//! The edit hook's answer in each host's own format: what the hook process writes to stdout and
//! stderr, and its exit status. Every host reads its decision from stdout, so every answer exits 0.

use super::payload::PayloadError;
use super::{AnswerFormat, Host};
use serde_json::Value;

/// What the hook answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Let the call through; `note` (if any) is for the log only.
    Allow { note: Option<String> },
    /// Let the call through, and show the agent `message` (`mas.gate=warn`).
    Warn { message: String },
    /// Refuse the call, telling the agent why.
    Deny { reason: String },
}

/// The answer for a payload that could not be read: a deny naming why.
pub fn bad_payload(host: Host, error: &PayloadError) -> Answer {
    Answer::Deny { reason: format!("git mas gate cannot read the {} hook payload: {error}", host.name()) }
}

/// What the hook process writes and exits with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Standard output (the host reads it).
    pub stdout: Vec<u8>,
    /// Standard error (for the log).
    pub stderr: String,
    /// The exit status.
    pub code: u8,
}

fn line(v: Value) -> Vec<u8> {
    let mut s = v.to_string();
    s.push('\n');
    s.into_bytes()
}

/// The host's bytes for `answer`, in its row's [`AnswerFormat`]. Every answer exits 0: each host
/// reads its decision from stdout.
pub fn reply(host: Host, answer: &Answer) -> Reply {
    use serde_json::json;
    let format = host.facts().answer;
    let (stdout, stderr) = match answer {
        Answer::Allow { note } => {
            let out = match format {
                AnswerFormat::Permission => line(json!({"permission": "allow"})),
                AnswerFormat::Decision { .. } => line(json!({"decision": "allow"})),
                AnswerFormat::HookSpecificOutput | AnswerFormat::PermissionDecision | AnswerFormat::Block => Vec::new(),
            };
            (out, note.as_ref().map(|n| format!("git mas gate: note: {n}\n")).unwrap_or_default())
        }
        Answer::Warn { message: m } => {
            let out = match format {
                AnswerFormat::HookSpecificOutput => line(json!({
                    "systemMessage": m,
                    "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": m}
                })),
                AnswerFormat::PermissionDecision => {
                    line(json!({"permissionDecision": "allow", "permissionDecisionReason": m}))
                }
                AnswerFormat::Decision { message } => {
                    let mut v = json!({"decision": "allow"});
                    v[message] = json!(m);
                    line(v)
                }
                AnswerFormat::Permission => line(json!({"permission": "allow", "user_message": m, "agent_message": m})),
                AnswerFormat::Block => Vec::new(),
            };
            (out, format!("{m}\n"))
        }
        Answer::Deny { reason: r } => {
            let out = match format {
                AnswerFormat::HookSpecificOutput => line(json!({
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "deny",
                        "permissionDecisionReason": r
                    }
                })),
                AnswerFormat::PermissionDecision => {
                    line(json!({"permissionDecision": "deny", "permissionDecisionReason": r}))
                }
                AnswerFormat::Decision { .. } => line(json!({"decision": "deny", "reason": r})),
                AnswerFormat::Permission => line(json!({"permission": "deny", "user_message": r, "agent_message": r})),
                AnswerFormat::Block => line(json!({"decision": "block", "reason": r})),
            };
            (out, format!("{r}\n"))
        }
    };
    Reply { stdout, stderr, code: 0 }
}

/// Claude Code's event after a tool call that failed (a shell command that exited non-zero).
pub const POST_TOOL_FAILURE: &str = "PostToolUseFailure";

/// What a post-tool hook writes to tell the agent `message` (a shell call's change undone), for
/// a host whose post-tool answer reaches the agent: Claude Code and Codex read `{decision:
/// "block", reason}` after a call (the call already ran; the reason goes to the model), Gemini
/// appends `hookSpecificOutput.additionalContext` to the tool's result, git-mas's OpenCode plugin
/// adds a `message` to the tool's output, and Copilot CLI (1.0.102) gives the model a
/// `modifiedResult` in place of the tool's result, so it gets `result` (the payload's
/// `toolResult`, [`super::payload::post_tool_result`]) back with the message after its text.
/// `None` for the other hosts, and for Copilot without a result to keep: the message then waits
/// for the session's next pre-tool call.
///
/// `event` is the payload's `hook_event_name`: a Claude Code failure hook (`PostToolUseFailure`,
/// run for a call that exited non-zero) reads only `hookSpecificOutput.additionalContext`, under
/// its own event's name.
pub fn post_tool(host: Host, message: &str, result: Option<&Value>, event: Option<&str>) -> Option<Reply> {
    use serde_json::json;
    let stdout = match host {
        Host::ClaudeCode | Host::Codex if event == Some(POST_TOOL_FAILURE) => line(json!({
            "hookSpecificOutput": {"hookEventName": POST_TOOL_FAILURE, "additionalContext": message}
        })),
        Host::ClaudeCode | Host::Codex => line(json!({
            "decision": "block",
            "reason": message,
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": message}
        })),
        Host::Gemini => line(json!({
            "systemMessage": message,
            "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": message}
        })),
        Host::OpenCode => line(json!({"message": message})),
        Host::Copilot => {
            let mut kept = result.and_then(Value::as_object).cloned()?;
            let text = kept.get("textResultForLlm").and_then(Value::as_str)?;
            let told = if text.is_empty() { message.to_string() } else { format!("{text}\n\n{message}") };
            kept.insert("textResultForLlm".into(), told.into());
            line(json!({"modifiedResult": kept}))
        }
        Host::Cursor | Host::Goose => return None,
    };
    Some(Reply { stdout, stderr: format!("{message}\n"), code: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Host::*;

    fn json_of(r: &Reply) -> serde_json::Value {
        serde_json::from_slice(&r.stdout).unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(&r.stdout)))
    }

    #[test]
    fn reply_table() {
        let deny = Answer::Deny { reason: "held by alice".into() };
        let warn = Answer::Warn { message: "held by alice".into() };
        let allow = Answer::Allow { note: None };
        type Check = fn(&serde_json::Value) -> bool;
        let deny_checks: [(Host, Check); 7] = [
            (ClaudeCode, |v| {
                v["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
                    && v["hookSpecificOutput"]["permissionDecision"] == "deny"
                    && v["hookSpecificOutput"]["permissionDecisionReason"] == "held by alice"
            }),
            (Codex, |v| v["hookSpecificOutput"]["permissionDecision"] == "deny"),
            (Copilot, |v| v["permissionDecision"] == "deny" && v["permissionDecisionReason"] == "held by alice"),
            (Gemini, |v| v["decision"] == "deny" && v["reason"] == "held by alice"),
            (Cursor, |v| {
                v["permission"] == "deny"
                    && v["agent_message"] == "held by alice"
                    && v["user_message"] == "held by alice"
            }),
            (Goose, |v| v["decision"] == "block" && v["reason"] == "held by alice"),
            (OpenCode, |v| v["decision"] == "deny" && v["reason"] == "held by alice"),
        ];
        for (host, check) in deny_checks {
            let r = reply(host, &deny);
            assert_eq!(r.code, 0, "{host:?}");
            assert!(check(&json_of(&r)), "{host:?}: {}", String::from_utf8_lossy(&r.stdout));
            assert!(r.stderr.contains("held by alice"));
            // Warn lets it through, with the message somewhere the agent sees it.
            let w = reply(host, &warn);
            assert_eq!(w.code, 0);
            assert!(!String::from_utf8_lossy(&w.stdout).contains("deny"), "{host:?}");
            assert!(w.stderr.contains("held by alice"));
        }
        let allows: [(Host, &str); 7] = [
            (ClaudeCode, ""),
            (Codex, ""),
            (Copilot, ""),
            (Gemini, "{\"decision\":\"allow\"}\n"),
            (Cursor, "{\"permission\":\"allow\"}\n"),
            (Goose, ""),
            (OpenCode, "{\"decision\":\"allow\"}\n"),
        ];
        for (host, want) in allows {
            assert_eq!(reply(host, &allow), Reply { stdout: want.as_bytes().to_vec(), stderr: String::new(), code: 0 });
        }
        assert!(reply(Cursor, &Answer::Allow { note: Some("outside".into()) }).stderr.contains("outside"));
    }

    #[test]
    fn a_post_tool_message_reaches_the_agent_where_the_host_shows_it() {
        let told = "your shell command changed src/lib.rs";
        let result = serde_json::json!({"resultType": "success", "textResultForLlm": "done\n<exit 0>"});
        let shown = |host: Host, result: Option<&Value>| post_tool(host, told, result, None).map(|r| json_of(&r));
        for host in [ClaudeCode, Codex] {
            let v = shown(host, None).unwrap();
            assert_eq!((v["decision"].as_str(), v["reason"].as_str()), (Some("block"), Some(told)), "{host:?}");
        }
        assert_eq!(shown(Gemini, None).unwrap()["hookSpecificOutput"]["additionalContext"], told);
        assert_eq!(shown(OpenCode, None).unwrap()["message"], told);
        // Copilot: the tool's result, whole, with the message after its text.
        let v = shown(Copilot, Some(&result)).unwrap();
        assert_eq!(v["modifiedResult"]["textResultForLlm"], format!("done\n<exit 0>\n\n{told}"));
        assert_eq!(v["modifiedResult"]["resultType"], "success");
        let empty = serde_json::json!({"resultType": "success", "textResultForLlm": ""});
        assert_eq!(shown(Copilot, Some(&empty)).unwrap()["modifiedResult"]["textResultForLlm"], told);
        // Nothing to keep, or a host that shows no post-tool answer: the next call tells it.
        assert_eq!(shown(Copilot, None), None);
        assert_eq!(shown(Copilot, Some(&serde_json::json!({"resultType": "success"}))), None);
        assert_eq!(shown(Cursor, Some(&result)), None);
        assert_eq!(shown(Goose, None), None);
    }

    #[test]
    fn an_unreadable_payload_is_denied_naming_the_host_and_why() {
        let Answer::Deny { reason } = bad_payload(Gemini, &PayloadError::NoTool { field: "tool_name" }) else {
            panic!()
        };
        assert!(reason.contains("gemini") && reason.contains("tool_name"), "{reason}");
    }
}

use super::*;
use Host::*;

macro_rules! fixture {
    ($host:literal, $name:literal) => {
        include_str!(concat!("../../tests/fixtures/hook-payloads/", $host, "/", $name, ".json"))
    };
}

fn whole(path: &str) -> FileWrite {
    FileWrite { path: path.into(), change: Change::WholeFile }
}

fn hunk(path: &str, old: &[&str]) -> FileWrite {
    FileWrite { path: path.into(), change: Change::Hunks(vec![old.iter().map(|s| s.to_string()).collect()]) }
}

/// The captured payloads' project, and the files their session wrote (tests/cli/hosts/edit_gate.rs).
const P: &str = "/home/user/project";
const FRESH: &str = "/home/user/project/src/fresh.rs";
const REPORT: &str = "/home/user/project/src/report.rs";
const PAIR: &str = "/home/user/project/src/pair.rs";
const USE: &str = "use crate::config::Config;";

fn replaced(path: &str, old: &[&str]) -> FileWrite {
    FileWrite { path: path.into(), change: Change::Replace(old.iter().map(|s| s.to_string()).collect()) }
}

#[test]
fn payload_table() {
    let money = "Money(cents)";
    type Case<'a> = (Host, &'a str, &'a str, Option<&'a str>, Vec<FileWrite>);
    let cases: Vec<Case> = vec![
        // Captured from the real hosts (see the fixtures' README).
        (ClaudeCode, fixture!("claude-code", "write"), "Write", Some(P), vec![whole(FRESH)]),
        (ClaudeCode, fixture!("claude-code", "edit"), "Edit", Some(P), vec![replaced(REPORT, &[USE])]),
        (ClaudeCode, fixture!("claude-code", "edit-lines"), "Edit", Some(P), vec![replaced(PAIR, &["    1\n"])]),
        (ClaudeCode, fixture!("claude-code", "bash"), "Bash", Some(P), vec![]),
        (Codex, fixture!("codex", "add-file"), "apply_patch", Some(P), vec![whole(FRESH)]),
        (Codex, fixture!("codex", "update-file"), "apply_patch", Some(P), vec![hunk(REPORT, &[USE])]),
        (Codex, fixture!("codex", "update-lines"), "apply_patch", Some(P), vec![hunk(PAIR, &["    1"])]),
        (Codex, fixture!("codex", "shell"), "Bash", Some(P), vec![]),
        (Copilot, fixture!("copilot", "create"), "create", Some(P), vec![whole(FRESH)]),
        (Copilot, fixture!("copilot", "edit"), "edit", Some(P), vec![replaced(REPORT, &[USE])]),
        (Copilot, fixture!("copilot", "edit-lines"), "edit", Some(P), vec![replaced(PAIR, &["    1\n"])]),
        (Copilot, fixture!("copilot", "view"), "view", Some(P), vec![]),
        (Copilot, fixture!("copilot", "bash"), "bash", Some(P), vec![]),
        (OpenCode, fixture!("opencode", "write"), "write", Some(P), vec![whole(FRESH)]),
        (OpenCode, fixture!("opencode", "edit"), "edit", Some(P), vec![replaced(REPORT, &[USE])]),
        (OpenCode, fixture!("opencode", "edit-lines"), "edit", Some(P), vec![replaced(PAIR, &["    1\n"])]),
        (OpenCode, fixture!("opencode", "apply-patch-update"), "apply_patch", Some(P), vec![hunk(REPORT, &[USE])]),
        (OpenCode, fixture!("opencode", "apply-patch-add"), "apply_patch", Some(P), vec![whole(FRESH)]),
        (OpenCode, fixture!("opencode", "apply-patch-lines"), "apply_patch", Some(P), vec![hunk(PAIR, &["    1"])]),
        (OpenCode, fixture!("opencode", "read"), "read", Some(P), vec![]),
        (OpenCode, fixture!("opencode", "bash"), "bash", Some(P), vec![]),
        (Gemini, fixture!("gemini", "write-file"), "write_file", Some(P), vec![whole(FRESH)]),
        (Gemini, fixture!("gemini", "replace"), "replace", Some(P), vec![replaced(REPORT, &[USE])]),
        (Gemini, fixture!("gemini", "replace-lines"), "replace", Some(P), vec![replaced(PAIR, &["    1\n"])]),
        (Gemini, fixture!("gemini", "read-file"), "read_file", Some(P), vec![]),
        (Gemini, fixture!("gemini", "run-shell-command"), "run_shell_command", Some(P), vec![]),
        // From the hosts' documentation (copilot's toolArgs as a JSON string, as its reference shows).
        (
            Copilot,
            r#"{"cwd":"/home/user/project","toolName":"create","toolArgs":"{\"path\":\"src/new.rs\",\"file_text\":\"\"}"}"#,
            "create",
            Some(P),
            vec![whole("src/new.rs")],
        ),
        (
            ClaudeCode,
            fixture!("claude-code", "multi-edit"),
            "MultiEdit",
            Some("/home/user/project"),
            vec![replaced("/home/user/project/src/lib.rs", &["mod a;", "mod c;"])],
        ),
        (
            ClaudeCode,
            fixture!("claude-code", "notebook-edit"),
            "NotebookEdit",
            Some("/home/user/project"),
            vec![whole("/home/user/project/notes/analysis.ipynb")],
        ),
        (
            Cursor,
            fixture!("cursor", "write"),
            "Write",
            Some("/home/user/project"),
            vec![whole("/home/user/project/src/money.rs")],
        ),
        (
            Cursor,
            fixture!("cursor", "str-replace"),
            "StrReplace",
            Some("/home/user/project"),
            vec![replaced("src/money.rs", &[money])],
        ),
        (Cursor, fixture!("cursor", "shell"), "Shell", Some("/home/user/project"), vec![]),
        (
            Goose,
            fixture!("goose", "write"),
            "developer__write",
            Some("/home/user/project"),
            vec![whole("/home/user/project/src/money.rs")],
        ),
        (
            Goose,
            fixture!("goose", "edit"),
            "developer__edit",
            Some("/home/user/project"),
            vec![replaced("src/money.rs", &[money])],
        ),
        (Goose, fixture!("goose", "shell"), "developer__shell", Some("/home/user/project"), vec![]),
    ];
    for (host, text, tool, cwd, writes) in cases {
        let p = parse(host, text.as_bytes()).unwrap_or_else(|e| panic!("{host:?} {tool}: {e}"));
        assert_eq!((p.tool.as_str(), p.cwd.as_deref(), &p.writes), (tool, cwd, &writes), "{host:?}");
    }
}

/// The captured edit inside `f` of the session's src/pair.rs touches its line 2 alone, in every host's
/// shape: the held `g` (lines 5-7) is not touched.
#[test]
fn captured_edits_of_one_function_touch_its_lines() {
    let pair = "pub fn f() -> u32 {\n    1\n}\n\npub fn g() -> u32 {\n    2\n}\n";
    let edits = [
        (ClaudeCode, fixture!("claude-code", "edit-lines")),
        (Codex, fixture!("codex", "update-lines")),
        (Copilot, fixture!("copilot", "edit-lines")),
        (OpenCode, fixture!("opencode", "edit-lines")),
    ];
    for (host, text) in edits {
        let p = parse(host, text.as_bytes()).unwrap();
        assert_eq!(changed_lines(&p.writes[0].change, Some(pair)), Some(vec![[2, 2]]), "{host:?}");
    }
}

#[test]
fn apply_patch_names_every_file_with_its_hunks() {
    let p = parse(Codex, fixture!("codex", "apply-patch").as_bytes()).unwrap();
    let paths: Vec<&str> = p.writes.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(paths, ["src/money.rs", "src/tax.rs", "src/old.rs", "src/a.rs", "src/b.rs"]);
    let hunk = vec![
        "    pub const fn from_cents(cents: i64) -> Self {".to_string(),
        "        Money(cents)".to_string(),
        "    }".to_string(),
    ];
    assert_eq!(p.writes[0].change, Change::Hunks(vec![hunk]));
    assert!(p.writes[1..].iter().all(|w| w.change == Change::WholeFile), "{:?}", p.writes);
}

#[test]
fn opencode_multiedit_and_patches_are_read_not_let_through() {
    let patch = "*** Begin Patch\n*** Update File: src/pair.rs\n@@\n-    1\n+    10\n*** Add File: src/fresh.rs\n+pub fn fresh() {}\n*** End Patch";
    let payload =
        |tool: &str, args: serde_json::Value| serde_json::json!({"tool": tool, "args": args, "cwd": P}).to_string();
    let cases: Vec<(String, Vec<FileWrite>)> = vec![
        (
            payload("apply_patch", serde_json::json!({"patchText": patch})),
            vec![hunk("src/pair.rs", &["    1"]), whole("src/fresh.rs")],
        ),
        (
            payload("patch", serde_json::json!({"patchText": patch})),
            vec![hunk("src/pair.rs", &["    1"]), whole("src/fresh.rs")],
        ),
        (
            payload(
                "multiedit",
                serde_json::json!({"filePath": REPORT, "edits": [
                    {"filePath": REPORT, "oldString": USE, "newString": "x"},
                    {"oldString": "fn a", "newString": "fn b"},
                    {"filePath": PAIR, "oldString": "    1\n", "newString": "    10\n"},
                ]}),
            ),
            vec![replaced(REPORT, &[USE, "fn a"]), replaced(PAIR, &["    1\n"])],
        ),
        (
            payload(
                "multiedit",
                serde_json::json!({"filePath": FRESH, "edits": [{"oldString": "", "newString": "x"}]}),
            ),
            vec![whole(FRESH)],
        ),
    ];
    for (bytes, want) in cases {
        assert_eq!(parse(OpenCode, bytes.as_bytes()).unwrap().writes, want, "{bytes}");
    }
    // An asked-about tool whose arguments have another shape is refused, naming what is missing.
    let missing = |tool: &str, field: &str| PayloadError::Missing { tool: tool.into(), field: field.into() };
    let bad: Vec<(String, PayloadError)> = vec![
        (
            payload("apply_patch", serde_json::json!({"input": patch})),
            missing("apply_patch", "patchText or patch_text or patch"),
        ),
        (
            payload("apply_patch", serde_json::json!({"patchText": "hello"})),
            PayloadError::Patch { tool: "apply_patch".into() },
        ),
        (payload("multiedit", serde_json::json!({"filePath": REPORT})), missing("multiedit", "edits list")),
        (
            payload("multiedit", serde_json::json!({"filePath": REPORT, "edits": [{"old": "a"}]})),
            missing("multiedit", "edits[].oldString"),
        ),
        (
            payload("multiedit", serde_json::json!({"filePath": REPORT, "edits": []})),
            missing("multiedit", "edits (an empty list)"),
        ),
        (payload("multiedit", serde_json::json!({"edits": []})), missing("multiedit", "filePath or file_path or path")),
    ];
    for (bytes, want) in bad {
        assert_eq!(parse(OpenCode, bytes.as_bytes()), Err(want), "{bytes}");
    }
}

#[test]
fn bad_payloads_are_errors_for_writing_tools_only() {
    let cases: Vec<(Host, &[u8], Option<PayloadError>)> = vec![
        (ClaudeCode, b"not json", None),
        (ClaudeCode, b"[1,2]", None),
        (ClaudeCode, br#"{"tool_input":{}}"#, Some(PayloadError::NoTool { field: "tool_name" })),
        (
            ClaudeCode,
            br#"{"tool_name":"Edit","tool_input":{"old_string":"x"}}"#,
            Some(PayloadError::Missing { tool: "Edit".into(), field: "file_path or path".into() }),
        ),
        (
            ClaudeCode,
            br#"{"tool_name":"Write"}"#,
            Some(PayloadError::Missing { tool: "Write".into(), field: "tool_input".into() }),
        ),
        (
            Codex,
            br#"{"tool_name":"apply_patch","tool_input":{"command":"hello"}}"#,
            Some(PayloadError::Patch { tool: "apply_patch".into() }),
        ),
        (Copilot, br#"{"toolName":"edit","toolArgs":"{oops"}"#, None),
        (OpenCode, br#"{"tool":"write","args":{}}"#, None),
        (Goose, br#"{"tool_name":"developer__edit","tool_input":{"before":"a"}}"#, None),
    ];
    for (host, bytes, want) in cases {
        let e = parse(host, bytes).expect_err(&String::from_utf8_lossy(bytes));
        if let Some(want) = want {
            assert_eq!(e, want);
        }
    }
    // A tool that writes nothing needs no arguments at all.
    assert_eq!(parse(ClaudeCode, br#"{"tool_name":"Read"}"#).unwrap().writes, vec![]);
    let big = vec![b' '; MAX_PAYLOAD as usize + 1];
    assert_eq!(parse(ClaudeCode, &big), Err(PayloadError::TooLarge { limit: MAX_PAYLOAD }));
}

#[test]
fn changed_lines_table() {
    let file = "a\nb\nc\nd\nb\ne\n";
    let rep = |s: &[&str]| Change::Replace(s.iter().map(|x| x.to_string()).collect());
    let hunk = |s: &[&str]| Change::Hunks(vec![s.iter().map(|x| x.to_string()).collect()]);
    type Case<'a> = (Change, Option<&'a str>, Option<Vec<[u32; 2]>>);
    let cases: Vec<Case> = vec![
        (Change::WholeFile, Some(file), None),
        (rep(&["c"]), Some(file), Some(vec![[3, 3]])),
        (rep(&["c\nd\n"]), Some(file), Some(vec![[3, 4]])),
        (rep(&["c\nd\nb"]), Some(file), Some(vec![[3, 5]])),
        (rep(&["c", "e"]), Some(file), Some(vec![[3, 3], [6, 6]])),
        // Found twice, not found, or no file: unknown.
        (rep(&["b"]), Some(file), None),
        (rep(&["zz"]), Some(file), None),
        (rep(&["c"]), None, None),
        (rep(&["c", "zz"]), Some(file), None),
        (hunk(&["c", "d"]), Some(file), Some(vec![[3, 4]])),
        (hunk(&["d", "b", "e"]), Some(file), Some(vec![[4, 6]])),
        (hunk(&["b"]), Some(file), None),
        (hunk(&["q"]), Some(file), None),
    ];
    for (change, current, want) in cases {
        assert_eq!(changed_lines(&change, current), want, "{change:?}");
    }
}

/// The tool names the properties below try: every host's known writers, readers, and names no
/// host has.
const TOOLS: [&str; 16] = [
    "Write",
    "Edit",
    "write",
    "edit",
    "create",
    "write_file",
    "replace",
    "developer__write",
    "developer__text_editor",
    "apply_patch",
    "mcp__fs__write_file",
    "mcp_fs_edit",
    "str_replace_editor",
    "morph_edit",
    "Delete",
    "x",
];

/// A JSON value nested `depth` deep (arrays and objects alternating).
fn nested(depth: usize, leaf: serde_json::Value) -> serde_json::Value {
    (0..depth).fold(leaf, |v, i| if i % 2 == 0 { serde_json::json!([v]) } else { serde_json::json!({ "a": v }) })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Any bytes at all: an answer (a payload or an error), never a panic.
    #[test]
    fn any_bytes_are_read_or_refused(host in 0..Host::ALL.len(), bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
        let _ = parse(Host::ALL[host], &bytes);
    }

    /// Any nesting, as the arguments or as the whole payload: an answer, never a panic or an
    /// overflow (serde_json stops at 128 levels with an error, which the hook refuses).
    #[test]
    fn any_nesting_is_read_or_refused(host in 0..Host::ALL.len(), depth in 0usize..20_000) {
        let host = Host::ALL[host];
        let deep = nested(depth.min(100), serde_json::json!("src/money.rs"));
        let payload = serde_json::json!({"tool_name": "Write", "toolName": "create", "tool": "write",
            "tool_input": {"file_path": deep.clone()}, "args": {"filePath": deep.clone()}, "toolArgs": {"path": deep}});
        let _ = parse(host, payload.to_string().as_bytes());
        let raw = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        proptest::prop_assert!(parse(host, raw.as_bytes()).is_err());
    }

    /// A call naming the held file under any argument a tool could use for a path, with any tool
    /// name: the payload is refused as unreadable, or it writes the held file, or the tool only
    /// reads. Never a write that the gate would not see.
    #[test]
    fn a_named_held_file_is_never_a_write_the_gate_misses(
        host in 0..Host::ALL.len(),
        tool in 0..TOOLS.len(),
        key in 0..PATH_KEYS.len(),
        upper in proptest::prelude::any::<bool>(),
        underscores in proptest::prelude::any::<bool>(),
        as_list in proptest::prelude::any::<bool>(),
    ) {
        let host = Host::ALL[host];
        let tool = TOOLS[tool];
        let mut name = PATH_KEYS[key].to_string();
        if underscores && name.len() > 4 {
            name.insert(4, '_');
        }
        if upper {
            name = name.to_ascii_uppercase();
        }
        let held = "src/money.rs";
        let value = if as_list { serde_json::json!([held]) } else { serde_json::json!(held) };
        let mut args = serde_json::Map::new();
        args.insert(name.clone(), value);
        if tool == "apply_patch" {
            args.insert("command".into(), format!("*** Begin Patch\n*** Update File: {held}\n*** End Patch\n").into());
        }
        let args = serde_json::Value::Object(args);
        let payload = match host {
            OpenCode => serde_json::json!({"tool": tool, "args": args}),
            Copilot => serde_json::json!({"toolName": tool, "toolArgs": args.to_string()}),
            _ => serde_json::json!({"tool_name": tool, "tool_input": args}),
        };
        match parse(host, payload.to_string().as_bytes()) {
            Err(_) => {}
            Ok(p) => proptest::prop_assert!(
                p.writes.iter().any(|w| w.path == held) || read_only(host, tool),
                "{host:?} {tool} {name}: {:?}", p.writes
            ),
        }
    }
}

/// The ids the captured sessions were normalised to (see the fixtures' README).
const CLAUDE_SESSION: &str = "00000000-0000-4000-8000-000000000001";
const CODEX_SESSION: &str = "00000000-0000-4000-8000-000000000003";
const COPILOT_SESSION: &str = "00000000-0000-4000-8000-000000000005";
const GEMINI_SESSION: &str = "00000000-0000-4000-8000-000000000007";
const OPENCODE_SESSION: &str = "ses_00000000000000000000000001";

#[test]
fn the_session_is_read_from_every_hosts_payload() {
    let cases: Vec<(Host, &str, &str)> = vec![
        // Captured from the real hosts: pre-tool, and the post-tool payloads, which have its shape.
        (ClaudeCode, fixture!("claude-code", "edit"), CLAUDE_SESSION),
        (ClaudeCode, fixture!("claude-code", "bash"), CLAUDE_SESSION),
        (ClaudeCode, fixture!("claude-code", "post-tool-bash"), CLAUDE_SESSION),
        (Codex, fixture!("codex", "update-file"), CODEX_SESSION),
        (Codex, fixture!("codex", "post-tool-shell"), CODEX_SESSION),
        (Copilot, fixture!("copilot", "edit"), COPILOT_SESSION),
        (Copilot, fixture!("copilot", "post-tool-bash"), COPILOT_SESSION),
        (Gemini, fixture!("gemini", "replace"), GEMINI_SESSION),
        (Gemini, fixture!("gemini", "after-tool-run-shell-command"), GEMINI_SESSION),
        (OpenCode, fixture!("opencode", "edit"), OPENCODE_SESSION),
        (OpenCode, fixture!("opencode", "apply-patch-update"), OPENCODE_SESSION),
        (OpenCode, fixture!("opencode", "bash"), OPENCODE_SESSION),
        // From the hosts' documentation.
        (Cursor, fixture!("cursor", "write"), "c-1"),
        (Goose, fixture!("goose", "write"), "20251201_1"),
    ];
    for (host, text, session) in cases {
        let p = parse(host, text.as_bytes()).unwrap_or_else(|e| panic!("{host:?}: {e}"));
        assert_eq!(p.session.as_deref(), Some(session), "{host:?} {}", p.tool);
    }
}

/// The post-tool and session-end payloads the real hosts sent (each to an entry under the
/// table's event) name the session under the same field as their tool calls, with the same id,
/// and name the table's event where the host says which event it is.
#[test]
fn the_real_post_tool_and_session_end_payloads_match_the_table() {
    let post = |h: Host| h.facts().hooks.post_tool_event;
    let end = |h: Host| h.facts().hooks.session_end_event;
    let cases = [
        (ClaudeCode, fixture!("claude-code", "post-tool-bash"), post(ClaudeCode), CLAUDE_SESSION),
        (ClaudeCode, fixture!("claude-code", "session-end"), end(ClaudeCode), CLAUDE_SESSION),
        (Codex, fixture!("codex", "post-tool-shell"), post(Codex), CODEX_SESSION),
        (Codex, fixture!("codex", "session-end"), end(Codex), CODEX_SESSION),
        (Copilot, fixture!("copilot", "post-tool-bash"), post(Copilot), COPILOT_SESSION),
        (Copilot, fixture!("copilot", "session-end"), end(Copilot), COPILOT_SESSION),
        (Gemini, fixture!("gemini", "after-tool-run-shell-command"), post(Gemini), GEMINI_SESSION),
        (Gemini, fixture!("gemini", "session-end"), end(Gemini), GEMINI_SESSION),
    ];
    for (host, text, event, session) in cases {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(v[host.facts().payload.session_field], session, "{host:?}: {text}");
        let event = event.unwrap_or_else(|| panic!("{host:?} has the event it sent"));
        // Copilot's payloads do not name their event.
        if let Some(name) = v.get("hook_event_name") {
            assert_eq!(name, event, "{host:?}");
        }
    }
    assert_eq!((post(Copilot), end(Copilot)), (Some("postToolUse"), Some("sessionEnd")));
}

/// Each envelope reads the session under its host's field, as a string only: absent, under
/// another host's name, or any other JSON type, there is none.
#[test]
fn the_session_is_a_string_under_the_hosts_field_or_absent() {
    for host in Host::ALL {
        let tool = match host.facts().payload.shape {
            PayloadShape::ToolInput => "tool_name",
            PayloadShape::Copilot => "toolName",
            PayloadShape::OpenCode => "tool",
        };
        let field = host.facts().payload.session_field;
        let with = |value: serde_json::Value| {
            let mut v = serde_json::json!({ tool: "Read" });
            v[field] = value;
            parse(host, v.to_string().as_bytes()).unwrap().session
        };
        assert_eq!(with("s-1".into()), Some("s-1".to_string()), "{host:?} {field}");
        for not_a_string in [
            serde_json::json!(7),
            serde_json::json!({"id": "s-1"}),
            serde_json::json!(["s-1"]),
            serde_json::Value::Null,
        ] {
            assert_eq!(with(not_a_string.clone()), None, "{host:?} {field}: {not_a_string}");
        }
        let without = serde_json::json!({ tool: "Read" }).to_string();
        assert_eq!(parse(host, without.as_bytes()).unwrap().session, None, "{host:?}");
        // Another host's name for it is not this host's.
        for other in ["session_id", "sessionId", "sessionID", "conversation_id"].into_iter().filter(|f| *f != field) {
            let v = serde_json::json!({ tool: "Read", other: "s-1" }).to_string();
            assert_eq!(parse(host, v.as_bytes()).unwrap().session, None, "{host:?}: {other}");
        }
    }
}

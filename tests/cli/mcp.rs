//! `git mas mcp`: a plain newline-delimited JSON-RPC client over the real server's stdio, in real
//! repositories (two agents in linked worktrees; a development run with a real check).

use crate::common::*;
use crate::development::Team;
use crate::json::agent::WhoamiOut;
use crate::json::endorse::EndorsedOut;
use crate::json::focus::{FocusListOut, FocusPublishOut, FocusReleaseOut, FocusStatusOut};
use crate::json::frame::FrameOut;
use crate::json::gate::GateOut;
use crate::json::mcp::{ToolOut, ToolRefusalOut};
use crate::json::propose::ProposedOut;
use crate::json::run::Listed;
use crate::json::tally::TallyOut;
use git_mas::attention::board::FocusState;
use git_mas::attention::gate::Verdict;
use git_mas::attention::rule::Decision;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

const TOOLS: [&str; 16] = [
    "align",
    "board",
    "decide",
    "endorse",
    "focus_publish",
    "focus_release",
    "focus_status",
    "frame",
    "gate",
    "propose",
    "report",
    "run_list",
    "run_show",
    "sync",
    "tally",
    "whoami",
];

/// A running `git mas mcp` and the lines it writes on stdout.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Client {
    /// Starts `git mas [ARGS] mcp` in `dir` and completes the initialize handshake.
    fn start(env: &TestEnv, dir: &Path, args: &[&str]) -> (Client, Value) {
        let mut cmd = Command::new(BIN);
        cmd.current_dir(dir);
        env.hermetic(&mut cmd);
        let mut child = cmd
            .args(args)
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start git mas mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = Client { child, stdin: Some(stdin), lines, next_id: 0 };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        (client, init)
    }

    fn send(&mut self, line: &str) {
        self.send_bytes(line.as_bytes());
    }

    /// Sends one line of any bytes (its newline added).
    fn send_bytes(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Closes the server's stdin, as a host ending its session does; returns how it exited.
    fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }

    /// The next message on stdout, whatever it is.
    fn next_message(&mut self) -> Value {
        let line = self.lines.recv_timeout(Duration::from_secs(120)).expect("the server answers");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC on stdout ({e}): {line}"))
    }

    /// Sends a request and returns the whole response (result or error). Every line on stdout
    /// must be JSON-RPC.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        loop {
            // A bound on waiting, so that a hung server fails the test instead of hanging it.
            let line = self.lines.recv_timeout(Duration::from_secs(120)).expect("the server answers");
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC on stdout ({e}): {line}"));
            assert_eq!(message["jsonrpc"], "2.0", "{message}");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// Calls a tool; returns its result (`isError` may be true).
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert!(response.get("error").is_none(), "{tool}: a protocol error: {response}");
        response["result"].clone()
    }

    /// Calls a tool that must run its command (whatever its exit code); returns the whole result
    /// and the text summary.
    fn ran(&mut self, tool: &str, arguments: Value) -> (ToolOut, String) {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], false, "{tool} failed: {result}");
        let out: ToolOut = serde_json::from_value(result["structuredContent"].clone())
            .unwrap_or_else(|e| panic!("{tool}: not a tool result ({e}): {result}"));
        (out, result["content"][0]["text"].as_str().unwrap().to_string())
    }

    /// Calls a tool that must succeed; returns its structured result's `result`, as `T`.
    fn ok<T: serde::de::DeserializeOwned>(&mut self, tool: &str, arguments: Value) -> T {
        let (out, summary) = self.ran(tool, arguments);
        assert_eq!(out.tool, tool);
        assert!(summary.starts_with(&format!("{tool}: ")), "{summary}");
        serde_json::from_value(out.result.clone())
            .unwrap_or_else(|e| panic!("{tool}: not the command's --json shape ({e}): {out:?}"))
    }

    /// Calls a tool that must be refused; returns its structured error.
    fn refused(&mut self, tool: &str, arguments: Value) -> ToolRefusalOut {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], true, "{tool} was not refused: {result}");
        let error: ToolRefusalOut = serde_json::from_value(result["structuredContent"].clone())
            .unwrap_or_else(|e| panic!("{tool}: not a refusal ({e}): {result}"));
        assert_eq!(error.tool, tool);
        assert!(!error.error.is_empty(), "{error:?}");
        let summary = result["content"][0]["text"].as_str().unwrap();
        assert!(summary.contains(&error.error), "{summary}");
        error
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A repository with agents alice and bob, each in a linked worktree whose config names it, and a
/// published frame. Returns (env, repo, alice's worktree, bob's worktree).
fn pair() -> (TestEnv, PathBuf, PathBuf, PathBuf) {
    let env = TestEnv::new();
    let team = env.team(&["alice", "bob"]).named("team").worktrees().frame("alice").build();
    let (alice, bob) = (team.worktree("alice").to_path_buf(), team.worktree("bob").to_path_buf());
    (env, team.repo, alice, bob)
}

#[test]
fn initialize_and_tools_list_work_without_an_identity_and_every_call_says_how_to_fix_it() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    let (mut client, init) = Client::start(&env, &repo, &[]);
    assert_eq!(init["result"]["serverInfo"]["name"], "git-mas", "{init}");
    assert!(init["result"]["capabilities"]["tools"].is_object(), "{init}");

    let list = client.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names, TOOLS);
    for tool in tools {
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object", "{tool}");
        assert!(!tool["description"].as_str().unwrap().is_empty(), "{tool}");
        // No tool takes an argument that could name the agent it acts as.
        let properties = schema["properties"].as_object().cloned().unwrap_or_default();
        assert!(!properties.contains_key("agent"), "{tool}");
        // Hosts add arguments of their own (Gemini's `wait_for_previous`): the schema lets them
        // through, and the server ignores them.
        assert_ne!(schema["additionalProperties"], false, "{tool}");
    }
    // Hosts may run the read-only tools without asking; the five that write say so.
    let mut writers: Vec<&str> = tools
        .iter()
        .filter(|t| t["annotations"]["readOnlyHint"] == false)
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    writers.sort_unstable();
    assert_eq!(writers, ["endorse", "focus_publish", "focus_release", "propose", "sync"]);
    assert!(tools.iter().all(|t| t["annotations"]["readOnlyHint"].is_boolean()), "{list}");
    let schema = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["inputSchema"].clone();
    let publish = schema("focus_publish");
    assert_eq!(publish["properties"]["targets"]["type"], "array");
    assert!(publish["properties"]["ttl"].is_object() && publish["properties"]["top"].is_object());
    assert_eq!(schema("frame")["properties"]["limit"]["type"], "integer");
    assert_eq!(schema("gate")["properties"]["paths"]["type"], "array");
    let endorse = schema("endorse");
    assert_eq!(endorse["required"], json!(["proposer"]));
    // The check is always the run's: a call cannot name a command to run outside the sandbox.
    assert!(endorse["properties"].get("check").is_none(), "{endorse}");
    assert_eq!(schema("align")["required"], json!(["other"]));
    assert_eq!(schema("propose")["properties"]["message"]["type"], "string");

    for tool in ["whoami", "board", "gate"] {
        let error = client.refused(tool, json!({}));
        assert_eq!(
            (error.exit_code, error.outcome.as_str(), error.agent.as_deref()),
            (1, "refused", None),
            "{error:?}"
        );
        let hints = error.hints.join("\n");
        assert!(hints.contains("git config mas.agent") && hints.contains("restart"), "{error:?}");
    }
}

/// The MCP Inspector's `--strict` schema portability rules (`@modelcontextprotocol/inspector`
/// 2.12.0, `core/json/schemaLint.ts`), as `(rule, path)` findings: a `type` array
/// (`type-union`), a schema with no validation keyword (`untyped-schema`), a bare boolean where a
/// schema object is expected (`boolean-schema`), a `$ref` outside the document (`remote-ref`).
/// Every subschema is walked as the Inspector walks it.
mod portability {
    use serde_json::Value;

    const BOOLEAN_VALUED: [&str; 4] =
        ["additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"];
    const SUBSCHEMA: [&str; 12] = [
        "items",
        "contains",
        "not",
        "propertyNames",
        "if",
        "then",
        "else",
        "additionalProperties",
        "unevaluatedProperties",
        "additionalItems",
        "unevaluatedItems",
        "contentSchema",
    ];
    const SUBSCHEMA_ARRAY: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
    const SUBSCHEMA_MAP: [&str; 6] =
        ["properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"];
    const CONSTRAINING: [&str; 41] = [
        "type",
        "enum",
        "const",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "format",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "items",
        "prefixItems",
        "contains",
        "additionalItems",
        "unevaluatedItems",
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "dependentSchemas",
        "dependencies",
        "$ref",
    ];

    /// What the Inspector's `--strict` would report for `schema`.
    pub fn findings(schema: &Value) -> Vec<(&'static str, String)> {
        let mut found = Vec::new();
        walk(schema, String::new(), None, 0, &mut found);
        found
    }

    fn walk(node: &Value, path: String, keyword: Option<&str>, depth: usize, found: &mut Vec<(&'static str, String)>) {
        if depth > 64 {
            return;
        }
        let node = match node {
            Value::Bool(_) if keyword.is_some_and(|k| BOOLEAN_VALUED.contains(&k)) => return,
            Value::Bool(_) => return found.push(("boolean-schema", path)),
            Value::Object(node) => node,
            _ => return,
        };
        if node.get("type").is_some_and(Value::is_array) {
            found.push(("type-union", path.clone()));
        }
        if node.get("$ref").and_then(Value::as_str).is_some_and(|r| !r.is_empty() && !r.starts_with('#')) {
            found.push(("remote-ref", path.clone()));
        }
        let constrains =
            node.keys().any(|k| CONSTRAINING.contains(&k.as_str()) || k == "$dynamicRef" || k == "$recursiveRef")
                || (node.contains_key("if") && (node.contains_key("then") || node.contains_key("else")));
        if !constrains && keyword != Some("not") {
            found.push(("untyped-schema", path.clone()));
        }
        let at = |key: &str| if path.is_empty() { key.to_string() } else { format!("{path}.{key}") };
        for key in SUBSCHEMA_MAP {
            for (name, sub) in node.get(key).and_then(Value::as_object).into_iter().flatten() {
                walk(sub, format!("{}.{name}", at(key)), Some(key), depth + 1, found);
            }
        }
        for key in SUBSCHEMA_ARRAY.into_iter().chain(["items"]) {
            for (i, sub) in node.get(key).and_then(Value::as_array).into_iter().flatten().enumerate() {
                walk(sub, format!("{}[{i}]", at(key)), Some(key), depth + 1, found);
            }
        }
        for key in SUBSCHEMA {
            match node.get(key) {
                Some(Value::Array(_)) if key == "items" => {}
                Some(sub) => walk(sub, at(key), Some(key), depth + 1, found),
                None => {}
            }
        }
    }
}

#[test]
fn tool_input_schemas_pass_the_mcp_inspectors_strict_portability_rules() {
    // The rules find what the Inspector found in the schemas schemars gives by default.
    let nullable = json!({"type": "object", "properties": {"run": {"type": ["string", "null"]}, "any": {}}});
    assert_eq!(
        portability::findings(&nullable),
        [("untyped-schema", "properties.any".to_string()), ("type-union", "properties.run".to_string())]
    );
    let env = TestEnv::new();
    let repo = env.repo("repo");
    let (mut client, _) = Client::start(&env, &repo, &[]);
    let list = client.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), TOOLS.len(), "{list}");
    for tool in tools {
        for schema in ["inputSchema", "outputSchema"] {
            let Some(schema) = tool.get(schema) else { continue };
            let findings = portability::findings(schema);
            assert!(findings.is_empty(), "{}: {findings:?} in {schema}", tool["name"]);
        }
    }
    // An optional argument is still optional, and `null` still means "absent".
    let frame = tools.iter().find(|t| t["name"] == "frame").unwrap();
    assert!(frame["inputSchema"].get("required").is_none(), "{frame}");
    let nulls = client.request("tools/call", json!({"name": "frame", "arguments": {"limit": null}}));
    let error: ToolRefusalOut =
        serde_json::from_value(nulls["result"]["structuredContent"].clone()).unwrap_or_else(|e| {
            panic!("a null limit is the default, refused only for the missing identity ({e}): {nulls}")
        });
    assert!(error.hints.join("\n").contains("git config mas.agent"), "{error:?}");
}

#[test]
fn focus_gate_and_rule_tools_act_as_the_servers_agent_and_see_the_clis_changes() {
    let (env, repo, alice, bob) = pair();
    // Bob's server takes its name from its worktree's config.
    let (mut server, _) = Client::start(&env, &bob, &[]);
    let me: WhoamiOut = server.ok("whoami", json!({}));
    assert_eq!(me.name, "bob");
    assert!(me.can_sign);

    let cli_frame: FrameOut = serde_json::from_str(&env.mas_ok(&repo, &["frame", "--json"])).unwrap();
    let frame: FrameOut = server.ok("frame", json!({"limit": 2}));
    assert_eq!(frame.hash, cli_frame.hash);
    assert_eq!(frame.top.len(), 2);
    assert_eq!(frame.top[..], cli_frame.top[..2]);

    // Without a focus the gate fails closed; the verdict is the result, exit 7 its outcome.
    let (out, _) = server.ran("gate", json!({"paths": ["src/money.rs"]}));
    assert_eq!((out.exit_code, out.outcome.as_str(), out.agent.as_str()), (7, "fail-closed", "bob"));
    let gate: GateOut = serde_json::from_value(out.result).unwrap();
    assert!(matches!(gate.verdict, Verdict::FailClosed { .. }), "{gate:?}");

    let published: FocusPublishOut = server.ok("focus_publish", json!({"targets": ["src/money.rs"], "ttl": "10m"}));
    assert_eq!((published.agent.as_str(), published.targets.as_slice()), ("bob", &["src/money.rs".to_string()][..]));
    assert_eq!(published.ttl_secs, 600);
    assert_eq!(published.frame, frame.hash);
    let gate: GateOut = server.ok("gate", json!({"paths": ["src/money.rs"]}));
    assert!(matches!(gate.verdict, Verdict::Allow { .. }), "{gate:?}");

    // Alice publishes the same target from her shell: the next call sees it, and she holds it.
    env.mas_quiet_ok(&alice, &["focus", "publish", "--targets", "src/money.rs"]);
    let (out, summary) = server.ran("gate", json!({"paths": ["src/money.rs"]}));
    assert_eq!((out.exit_code, out.outcome.as_str()), (6, "blocked"), "{out:?}");
    assert!(out.notes.iter().any(|n| n.contains("alice")), "the CLI's blocked message is a note: {out:?}");
    let gate: GateOut = serde_json::from_value(out.result).unwrap();
    let Verdict::Block { blocks } = &gate.verdict else { panic!("{gate:?}") };
    assert_eq!((blocks[0].holder.as_str(), blocks[0].target.as_str()), ("alice", "src/money.rs"));
    assert!(!blocks[0].remedy.is_empty());
    assert!(summary.contains("alice holds src/money.rs"), "{summary}");

    let decision: Decision = server.ok("decide", json!({"other": "alice"}));
    assert!(
        matches!(&decision, Decision::Serialize { holder, deferring, .. } if holder == "alice" && deferring == "bob"),
        "{decision:?}"
    );
    let alignment: Value = server.ok("align", json!({"other": "alice"}));
    assert_eq!(alignment["jaccard"], 1.0);
    assert_eq!(alignment["top_shared"], true);

    let board: FocusListOut = server.ok("board", json!({}));
    let mut holders: Vec<&str> = board.board.entries.iter().map(|e| e.focus.agent.as_str()).collect();
    holders.sort_unstable();
    assert_eq!(holders, ["alice", "bob"]);
    let status: FocusStatusOut = server.ok("focus_status", json!({}));
    assert_eq!((status.agent.as_str(), status.state), ("bob", FocusState::Live));
    let released: FocusReleaseOut = server.ok("focus_release", json!({}));
    assert!(released.released);
    assert!(released.seq > published.seq);
    let status: FocusStatusOut = server.ok("focus_status", json!({}));
    assert_eq!(status.state, FocusState::Released);
    // The CLI sees the release the tool wrote.
    // The CLI sees the release the tool wrote (and exits 7, as the tool's outcome said).
    let out = env.mas(&bob, &["focus", "status", "--json"]);
    let cli: FocusStatusOut = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(cli.state, FocusState::Released);
    let (status, _) = server.ran("focus_status", json!({}));
    assert_eq!(Some(i32::from(status.exit_code)), out.status.code());
}

#[test]
fn a_gate_block_is_a_result_carrying_the_verdict_and_its_summary_says_blocked_once() {
    let (env, _repo, alice, bob) = pair();
    let (mut server, _) = Client::start(&env, &bob, &[]);
    // What the tool says of itself agrees with what it does (and with docs/hosts.md).
    let list = server.request("tools/list", json!({}));
    let gate = list["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "gate").unwrap().clone();
    let description = gate["description"].as_str().unwrap();
    assert!(description.contains("never a tool error"), "{description}");

    // No focus: fail closed, a result (isError false) whose outcome is fail-closed.
    let (out, summary) = server.ran("gate", json!({"paths": ["src/money.rs"]}));
    assert_eq!((out.exit_code, out.outcome.as_str()), (7, "fail-closed"), "{out:?}");
    let verdict: GateOut = serde_json::from_value(out.result).unwrap();
    let Verdict::FailClosed { reason, remedy } = &verdict.verdict else { panic!("{verdict:?}") };
    assert_eq!(summary, format!("gate: fail-closed: {reason} ({remedy})"));

    // Alice holds the file: blocked, a result carrying holder, target and remedy.
    env.mas_quiet_ok(&alice, &["focus", "publish", "--targets", "src/money.rs"]);
    let _: FocusPublishOut = server.ok("focus_publish", json!({"targets": ["src/lib.rs"]}));
    let (out, summary) = server.ran("gate", json!({"paths": ["src/money.rs"]}));
    assert_eq!((out.exit_code, out.outcome.as_str()), (6, "blocked"), "{out:?}");
    let verdict: GateOut = serde_json::from_value(out.result).unwrap();
    let Verdict::Block { blocks } = &verdict.verdict else { panic!("{verdict:?}") };
    let block = &blocks[0];
    assert_eq!((block.holder.as_str(), block.target.as_str()), ("alice", "src/money.rs"));
    assert_eq!(summary, format!("gate: blocked: alice holds src/money.rs ({})", block.remedy));
    assert!(!summary.contains("blocked: blocked"), "{summary}");

    let (out, summary) = server.ran("gate", json!({"paths": ["src/lib.rs"]}));
    assert_eq!((out.exit_code, out.outcome.as_str(), summary.as_str()), (0, "ok", "gate: ok: allow"));
}

#[test]
fn refusals_carry_the_clis_message_hint_and_exit_code() {
    let (env, repo, _alice, bob) = pair();
    let (mut server, _) = Client::start(&env, &bob, &[]);
    let before = env.refs(&repo);
    let error = server.refused("focus_publish", json!({"targets": ["no/such/file.rs"]}));
    assert_eq!(
        (error.exit_code, error.outcome.as_str(), error.agent.as_deref()),
        (1, "refused", Some("bob")),
        "{error:?}"
    );
    assert!(error.error.contains("no/such/file.rs"), "{error:?}");
    let cli = env.mas(&bob, &["focus", "publish", "--targets", "no/such/file.rs"]);
    assert_eq!(cli.status.code(), Some(1));
    assert!(stderr(&cli).contains(&error.error), "{}", stderr(&cli));

    let error = server.refused("focus_publish", json!({"targets": ["src/money.rs"], "ttl": "-5m"}));
    assert_eq!(error.outcome, "usage", "{error:?}");
    let error = server.refused("sync", json!({"remote": "../elsewhere.git"}));
    assert_eq!(error.exit_code, 2, "{error:?}");
    // A name git could never be given (the kernel refuses an argument that long).
    let error = server.refused("sync", json!({"remote": "a".repeat(1 << 20)}));
    assert_eq!((error.exit_code, error.outcome.as_str()), (2, "usage"), "{error:?}");
    let error = server.refused("endorse", json!({"proposer": "alice", "reject": true}));
    assert_eq!(error.exit_code, 2, "{error:?}");
    let error = server.refused("run_show", json!({"run": "nope"}));
    assert_eq!(error.exit_code, 1, "{error:?}");
    assert_eq!(env.refs(&repo), before, "no refusal wrote anything");
}

#[test]
fn malformed_requests_unknown_tools_and_wrong_types_leave_the_server_serving() {
    let (env, _repo, _alice, bob) = pair();
    let (mut server, _) = Client::start(&env, &bob, &[]);
    // Not JSON: a parse error (id null), as JSON-RPC 2.0 says.
    server.send("this is not json {");
    let parse = server.next_message();
    assert_eq!((parse["error"]["code"].as_i64(), &parse["id"]), (Some(-32700), &Value::Null), "{parse}");
    // JSON but not a request: invalid request.
    server.send(r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":"nope"}"#);
    let invalid = server.next_message();
    assert_eq!(invalid["error"]["code"].as_i64(), Some(-32600), "{invalid}");
    // A blank line is no message, and gets no answer; a line far over the limit is refused whole.
    server.send("");
    server.send(&format!("{{\"pad\": \"{}\"}}", "x".repeat(17 * 1024 * 1024)));
    let long = server.next_message();
    assert_eq!(long["error"]["code"].as_i64(), Some(-32700), "{long}");
    let unknown = server.request("tools/call", json!({"name": "rm_rf", "arguments": {}}));
    assert!(unknown["error"]["code"].is_i64(), "{unknown}");
    let unknown = server.request("no/such/method", json!({}));
    assert!(unknown["error"]["code"].is_i64(), "{unknown}");
    for (tool, arguments) in [
        ("frame", json!({"limit": "ten"})),
        ("focus_publish", json!({"targets": "src/money.rs"})),
        ("gate", json!({"paths": [1, 2]})),
        ("endorse", json!({})),
    ] {
        let response = server.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let failed = response.get("error").is_some() || response["result"]["isError"] == true;
        assert!(failed, "{tool} {arguments}: {response}");
    }
    let me: WhoamiOut = server.ok("whoami", json!({}));
    assert_eq!(me.name, "bob");
    // The host closing stdin ends the session: the server exits 0.
    assert!(server.close().success());
}

/// Sends `line` and returns the one answer it gets, which must be a JSON-RPC error: (code, id,
/// message). Nothing else is in flight, so the next message is that answer; a line that gets
/// none fails the test after 20 s instead of the host's timeout.
fn error_answer(server: &mut Client, line: &[u8]) -> (i64, Value, String) {
    server.send_bytes(line);
    let answer = server
        .lines
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("no answer to {}", String::from_utf8_lossy(&line[..line.len().min(120)])));
    let answer: Value = serde_json::from_str(&answer).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {answer}"));
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    assert!(answer.get("result").is_none(), "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_else(|| panic!("no error: {answer}")).to_string();
    (answer["error"]["code"].as_i64().unwrap(), answer["id"].clone(), message)
}

#[test]
fn undecodable_and_wrongly_shaped_requests_are_each_answered_with_the_specs_code_and_their_id() {
    let (env, _repo, _alice, bob) = pair();
    let (mut server, _) = Client::start(&env, &bob, &[]);
    let deep = |open: &str, close: &str, id: &str| {
        let depth = 100_000;
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"x":{}1{}}}}}"#,
            open.repeat(depth),
            close.repeat(depth)
        )
    };
    // Lines rmcp dropped without a word: invalid UTF-8 in a string, nesting 100,000 deep.
    let parse_errors: [(Vec<u8>, Value); 5] = [
        (b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":{\"x\":\"\xff\"}}".to_vec(), json!(7)),
        (deep("[", "]", "8").into_bytes(), json!(8)),
        (deep(r#"{"a":"#, "}", r#""deep""#).into_bytes(), json!("deep")),
        ("[".repeat(100_000).into_bytes(), Value::Null),
        (b"this is not json {".to_vec(), Value::Null),
    ];
    for (line, id) in parse_errors {
        let (code, answered, message) = error_answer(&mut server, &line);
        assert_eq!((code, &answered), (-32700, &id), "{message}");
    }
    // Wrongly shaped tools/call: invalid params (rmcp said "method not found").
    for params in [
        json!({"arguments": {}}),
        json!({"name": "gate", "arguments": [1]}),
        json!({"name": "gate", "arguments": "paths"}),
        json!({"name": 5, "arguments": {}}),
    ] {
        let line = json!({"jsonrpc": "2.0", "id": "call", "method": "tools/call", "params": params}).to_string();
        let (code, id, message) = error_answer(&mut server, line.as_bytes());
        assert_eq!((code, id), (-32602, json!("call")), "{params}: {message}");
        assert!(message.contains("tools/call"), "{message}");
    }
    let line = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call"}).to_string();
    assert_eq!(error_answer(&mut server, line.as_bytes()).0, -32602, "no params at all");
    // Not a request: invalid request, with the id it carried (rmcp answered with no id at all).
    for line in [
        r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":"nope"}"#,
        r#"{"jsonrpc":"1.0","id":"x","method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":"x","method":["tools/list"]}"#,
    ] {
        let (code, id, message) = error_answer(&mut server, line.as_bytes());
        assert_eq!((code, id), (-32600, json!("x")), "{line}: {message}");
    }
    // Method not found only for a method the server does not have; an unknown tool is invalid
    // params, as MCP says.
    let unknown = server.request("no/such/method", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let unknown = server.request("tools/call", json!({"name": "rm_rf", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    // And the server is still serving.
    let me: WhoamiOut = server.ok("whoami", json!({}));
    assert_eq!(me.name, "bob");
    assert!(server.close().success());
}

#[test]
fn no_argument_makes_the_server_act_as_another_agent() {
    let (env, repo, _alice, bob) = pair();
    let (mut server, _) = Client::start(&env, &bob, &[]);
    // A field naming the agent is ignored as unknown, not obeyed, and the result says so.
    let (out, _) = server.ran("focus_publish", json!({"targets": ["src/lib.rs"], "agent": "alice"}));
    assert_eq!(out.agent, "bob");
    let published: FocusPublishOut = serde_json::from_value(out.result).unwrap();
    assert_eq!(published.agent, "bob");
    assert!(out.notes.iter().any(|n| n.contains("ignored unknown argument `agent`")), "{:?}", out.notes);
    // Values shaped like flags stay values.
    server.refused("focus_publish", json!({"targets": ["--agent=alice"]}));
    server.refused("run_show", json!({"run": "--agent=alice"}));
    let published: FocusPublishOut = server.ok("focus_publish", json!({"targets": ["src/money.rs"]}));
    assert_eq!(published.agent, "bob");
    let board: FocusListOut = serde_json::from_str(&env.mas_ok(&repo, &["focus", "list", "--json"])).unwrap();
    let agents: Vec<&str> = board.board.entries.iter().map(|e| e.focus.agent.as_str()).collect();
    assert_eq!(agents, ["bob"]);

    // GIT_MAS_AGENT of the server's environment is its identity at start, fixed for its life.
    let (mut as_alice, _) = Client::start(&env, &bob, &["--agent", "alice"]);
    let me: WhoamiOut = as_alice.ok("whoami", json!({}));
    assert_eq!(me.name, "alice");
    // A name that is not on the roster: every call is refused with the CLI's hint.
    let (mut stranger, _) = Client::start(&env, &bob, &["--agent", "mallory"]);
    let error = stranger.refused("board", json!({}));
    assert!(error.error.contains("not on the roster"), "{error:?}");
    assert!(error.hints.iter().any(|h| h.contains("git mas agent new mallory")), "{error:?}");
}

/// The Gemini CLI adds `wait_for_previous` to every tool's schema and passes it on in every call
/// (`addWaitForPreviousParameter`, @google/gemini-cli 0.61.0).
#[test]
fn unknown_arguments_like_geminis_wait_for_previous_are_ignored_and_named_in_the_notes() {
    let (env, repo, _alice, bob) = pair();
    let (mut server, _) = Client::start(&env, &bob, &[]);
    let noted =
        |notes: &[String], name: &str| notes.iter().any(|n| n.contains(&format!("ignored unknown argument `{name}`")));

    for tool in ["whoami", "frame", "focus_status", "board", "gate", "run_list"] {
        let (out, _) = server.ran(tool, json!({"wait_for_previous": true}));
        assert_eq!(out.agent, "bob", "{tool}: {out:?}");
        assert!(noted(&out.notes, "wait_for_previous"), "{tool}: {out:?}");
    }
    let published: FocusPublishOut =
        server.ok("focus_publish", json!({"targets": ["src/money.rs"], "wait_for_previous": false}));
    assert_eq!(published.targets, ["src/money.rs"]);
    // A refusal names them too.
    let error = server.refused("run_show", json!({"run": "nope", "wait_for_previous": true}));
    assert!(noted(&error.notes, "wait_for_previous"), "{error:?}");

    // An argument naming another agent, or another place, changes nothing.
    let before = env.refs(&repo);
    let (out, summary) = server.ran("whoami", json!({"agent": "mallory", "wait_for_previous": true}));
    let me: WhoamiOut = serde_json::from_value(out.result.clone()).unwrap();
    assert_eq!((me.name.as_str(), out.agent.as_str()), ("bob", "bob"), "{out:?}");
    assert!(summary.starts_with("whoami: ok: bob "), "{summary}");
    assert!(noted(&out.notes, "agent") && noted(&out.notes, "wait_for_previous"), "{out:?}");
    let elsewhere = env.root().join("elsewhere");
    let (out, _) = server.ran(
        "focus_release",
        json!({"agent": "mallory", "directory": elsewhere, "cwd": elsewhere, "wait_for_previous": true}),
    );
    let released: FocusReleaseOut = serde_json::from_value(out.result.clone()).unwrap();
    assert_eq!(released.agent, "bob");
    for name in ["agent", "cwd", "directory", "wait_for_previous"] {
        assert!(noted(&out.notes, name), "{name}: {out:?}");
    }
    let after = env.refs(&repo);
    assert!(!after.contains("mallory"), "{after}");
    let focus = |refs: &str| refs.lines().find(|l| l.starts_with("refs/mas/focus/bob ")).map(String::from);
    assert_ne!(focus(&after), focus(&before), "bob's release was written: {after}");
}

#[test]
fn two_servers_for_two_agents_publishing_at_once_lose_nothing() {
    let (env, repo, alice, bob) = pair();
    let rounds = 4;
    let publish = |dir: PathBuf, targets: [&'static str; 2]| {
        let (mut server, _) = Client::start(&env, &dir, &[]);
        let mut last = None;
        for i in 0..rounds {
            let out: FocusPublishOut = server.ok("focus_publish", json!({"targets": [targets[i % 2]]}));
            if let Some(previous) = last {
                assert!(out.seq > previous, "seq must increase: {} after {previous}", out.seq);
            }
            last = Some(out.seq);
        }
        (last.unwrap(), targets[(rounds - 1) % 2])
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| publish(alice.clone(), ["src/money.rs", "src/lib.rs"]));
        let b = s.spawn(|| publish(bob.clone(), ["src/lib.rs", "src/money.rs"]));
        (a.join().unwrap(), b.join().unwrap())
    });
    let board: FocusListOut = serde_json::from_str(&env.mas_ok(&repo, &["focus", "list", "--json"])).unwrap();
    let entry = |agent: &str| board.board.entries.iter().find(|e| e.focus.agent == agent).unwrap().focus.clone();
    assert_eq!((entry("alice").seq, entry("alice").targets[0].as_str()), (a.0, a.1));
    assert_eq!((entry("bob").seq, entry("bob").targets[0].as_str()), (b.0, b.1));
    assert!(board.board.rejected.is_empty(), "{:?}", board.board.rejected);
}

#[test]
fn a_development_run_through_the_tools_proposes_endorses_tallies_and_reports() {
    let team = Team::new(&["alice", "bob"]);
    let run = team.start("alice", &["--id", "r1", "--quorum", "1", "--check", "grep -qx ok status.txt"]);
    let alice_wt = team.worktree(&run, "alice");
    std::fs::write(alice_wt.join("status.txt"), "ok\n").unwrap();
    let (mut alice, _) = Client::start(&team.env, &alice_wt, &["--agent", "alice"]);
    let (mut bob, _) = Client::start(&team.env, &team.repo, &["--agent", "bob"]);

    let runs: Vec<Listed> = bob.ok("run_list", json!({}));
    assert_eq!(runs.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["r1"]);
    let shown: Value = bob.ok("run_show", json!({"run": "r1"}));
    assert_eq!(shown["def"]["id"], "r1");

    let proposed: ProposedOut = alice.ok("propose", json!({"message": "status is ok"}));
    assert_eq!((proposed.agent.as_str(), proposed.run.as_str()), ("alice", "r1"));
    let message = team.env.git(&team.repo, &["log", "-1", "--format=%s", &proposed.commit]);
    assert_eq!(message, "status is ok");
    // Self-endorsement is off: refused with the CLI's exit code.
    let error = alice.refused("endorse", json!({"proposer": "alice"}));
    assert_eq!(error.exit_code, 1, "{error:?}");

    let endorsed: EndorsedOut = bob.ok("endorse", json!({"proposer": "alice", "timeout": "5m"}));
    assert_eq!((endorsed.verdict.as_str(), endorsed.endorser.as_str()), ("passed", "bob"));
    assert_eq!(endorsed.command.as_deref(), Some("grep -qx ok status.txt"));
    assert_eq!(endorsed.tree, proposed.tree);
    assert!(endorsed.at_quorum);

    let tally: TallyOut = bob.ok("tally", json!({"run": "r1"}));
    assert_eq!(tally.leader.as_deref(), Some("alice"));
    assert!(tally.quorum_reached);
    let cli: TallyOut = team.json_as(&team.repo, "bob", &["tally", "r1"]);
    assert_eq!(cli.at_quorum, tally.at_quorum);
    let report: Value = bob.ok("report", json!({"run": "r1"}));
    assert_eq!(report["run"], "r1");
    assert!(report["status"].is_string(), "{report}");

    // Bob has proposed nothing: rejecting his proposal is refused, as the CLI refuses it.
    let error = alice.refused("endorse", json!({"proposer": "bob", "reject": true, "reason": "nothing to review"}));
    assert_eq!(error.exit_code, 1, "{error:?}");

    // Bob's proposal adds the same file with other content: the tool result says so, in its
    // summary and its structured result.
    let bob_wt = team.worktree(&run, "bob");
    std::fs::write(bob_wt.join("status.txt"), "not ok\n").unwrap();
    let (mut bob_there, _) = Client::start(&team.env, &bob_wt, &["--agent", "bob"]);
    let (out, summary) = bob_there.ran("propose", json!({"message": "status is not ok"}));
    assert!(summary.contains("cannot land together with alice: both change status.txt"), "{summary}");
    let bobs: ProposedOut = serde_json::from_value(out.result).unwrap();
    let clashes: Vec<(&str, &str)> = bobs.clashes.iter().map(|c| (c.with.as_str(), c.commit.as_str())).collect();
    assert_eq!(clashes, [("alice", proposed.commit.as_str())]);
}

#[test]
fn sync_through_the_tool_exchanges_records_with_the_remote() {
    let env = TestEnv::new();
    let team = env.team(&["alice"]).named("a").frame("alice").remote().build();
    let (remote, a) = (team.remote().to_path_buf(), team.repo);
    let (mut server, _) = Client::start(&env, &a, &["--agent", "alice"]);
    let _: FocusPublishOut = server.ok("focus_publish", json!({"top": 1}));
    let synced: Value = server.ok("sync", json!({}));
    assert_eq!(synced["remote"], "origin", "{synced}");
    let local = env.git(&a, &["rev-parse", "refs/mas/focus/alice"]);
    let pushed = env.git(&remote, &["rev-parse", "refs/mas/focus/alice"]);
    assert_eq!(local, pushed);
}

/// A gate verdict in short: `allow`, `block:HOLDER` or `fail_closed`.
fn verdict_of(gate: &GateOut) -> String {
    match &gate.verdict {
        Verdict::Allow { .. } => "allow".into(),
        Verdict::Block { blocks } => format!("block:{}", blocks[0].holder),
        Verdict::FailClosed { .. } => "fail_closed".into(),
    }
}

/// Bob's `gate` on src/money.rs through the server, asserted equal to the CLI's verdict in the
/// same state.
fn gate_verdict(env: &TestEnv, bob: &Path, server: &mut Client) -> String {
    let (out, _) = server.ran("gate", json!({"paths": ["src/money.rs"]}));
    let tool: GateOut = serde_json::from_value(out.result.clone()).unwrap();
    let cli = env.mas(bob, &["gate", "--paths", "src/money.rs", "--json"]);
    let cli: GateOut = serde_json::from_str(&stdout(&cli)).unwrap();
    assert_eq!(verdict_of(&tool), verdict_of(&cli), "the server and the CLI disagree: {out:?}");
    verdict_of(&tool)
}

#[test]
fn the_resident_cache_sees_every_change_another_process_makes_between_calls() {
    let (env, repo, alice, bob) = pair();
    let (mut server, _) = Client::start(&env, &bob, &[]);
    let _: FocusPublishOut = server.ok("focus_publish", json!({"targets": ["src/money.rs"], "ttl": "10m"}));
    let mut gate = || gate_verdict(&env, &bob, &mut server);
    assert_eq!(gate(), "allow");
    assert_eq!(gate(), "allow", "warm, nothing changed");

    // A focus published from the shell is seen by the next call, and by the warm one after it.
    env.mas_quiet_ok(&alice, &["focus", "publish", "--targets", "src/money.rs", "--ttl", "10m"]);
    assert_eq!(gate(), "block:alice", "published");
    assert_eq!(gate(), "block:alice", "warm");

    // The roster changed (alice removed, committed and in bob's worktree): her records, her focus
    // and the frame she published, stop counting.
    let roster = std::fs::read_to_string(repo.join(".mas/roster")).unwrap();
    let set_roster = |text: &str, msg: &str| {
        std::fs::write(repo.join(".mas/roster"), text).unwrap();
        env.git_quiet_ok(&repo, &["commit", "--quiet", "-am", msg]);
        std::fs::write(bob.join(".mas/roster"), text).unwrap();
    };
    let removed: String = roster.lines().filter(|l| !l.starts_with("alice ")).map(|l| format!("{l}\n")).collect();
    set_roster(&removed, "remove alice");
    assert_eq!(gate(), "fail_closed", "alice removed from the roster: no verified frame");
    set_roster(&roster, "restore alice");
    assert_eq!(gate(), "block:alice", "alice restored");

    env.mas_quiet_ok(&alice, &["focus", "release"]);
    assert_eq!(gate(), "allow", "released");

    // A lease lapses on time with no ref moving.
    env.mas_quiet_ok(&alice, &["focus", "publish", "--targets", "src/money.rs", "--ttl", "2s"]);
    assert_eq!(gate(), "block:alice", "short lease, live");
    let tips = env.refs(&repo);
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(gate(), "allow", "short lease expired");
    assert_eq!(env.refs(&repo), tips, "no ref moved");

    // A frame published from the shell is the next call's frame.
    let before: FrameOut = server.ok("frame", json!({}));
    std::fs::write(repo.join("src/new_module.rs"), "pub fn added() {}\n").unwrap();
    env.git_quiet_ok(&repo, &["add", "."]);
    env.git_quiet_ok(&repo, &["commit", "--quiet", "-m", "a new module"]);
    env.mas_quiet_ok(&repo, &["--agent", "alice", "snapshot", "--publish"]);
    let cli: FrameOut = serde_json::from_str(&env.mas_ok(&repo, &["frame", "--json"])).unwrap();
    assert_ne!(cli.hash, before.hash, "a new frame was published");
    let after: FrameOut = server.ok("frame", json!({}));
    assert_eq!(after.hash, cli.hash);
}

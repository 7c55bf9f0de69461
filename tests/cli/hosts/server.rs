//! The scripted model server: a loopback HTTP server that speaks the wire APIs the coding-agent
//! hosts talk to a model with, and plays a scenario instead of a model.
//!
//! It speaks the Anthropic Messages API (`POST /v1/messages`, streaming SSE or not, and
//! `/v1/messages/count_tokens`), the OpenAI Responses API (`POST …/responses`, streaming), the
//! OpenAI Chat Completions API (`POST …/chat/completions`, streaming `tool_calls`) and the Gemini
//! API (`POST /v1beta/models/<model>:generateContent`, `:streamGenerateContent?alt=sse` — SSE of
//! `GenerateContentResponse` chunks, calls as `functionCall` parts — and `:countTokens`); anything
//! else a host asks (model lists, probes, telemetry) gets a small answer of the same shape, and is
//! logged like the rest. A Gemini request that asks for JSON by a schema and advertises no tools
//! (gemini's model router rates each prompt so) is answered with an object of that schema.
//!
//! The scenario is stateless on purpose: the step a request gets is the number of tool results
//! already in its conversation. A host's side requests (a title, a quota probe, a summary) carry no
//! tool results of the main loop, or advertise no tools, so they never advance the script, and a
//! retried request gets the same answer again. A request that advertises no tools gets plain text.
//!
//! A step names what the "model" does in the host's own terms, and the server fills the call in
//! from the tool schemas the request advertises: a shell command goes to the host's shell tool
//! (`Bash`, `shell`, `exec_command`, `bash`, …) in the argument shape its schema asks for (a string
//! or an argv array), a new file to its write tool (`Write`, `write`, `create`, or codex's
//! `apply_patch`), a replacement to its edit tool (`Edit`, `edit`, `str_replace`, or an
//! `apply_patch` Update File hunk) and a read to its read tool (`Read`, `read`, `view`, or `cat`
//! through the shell). An MCP tool goes to the name the host advertises it under; a host that
//! keeps MCP tools behind a client-side tool search (codex's `tool_search`) is first sent a
//! `tool_search_call`, and the tool is then called by its name in the namespace the search
//! returned (a `tool_search_output` is no tool result: it does not advance the script).

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// What the scripted model does on one turn.
#[derive(Debug, Clone)]
pub enum Step {
    /// Runs a command through the host's shell tool.
    Shell(String),
    /// Runs a command through the host's shell tool once per proposal the hop asks to endorse.
    ShellEach(String),
    /// Writes a new file through the host's file-writing tool.
    Write {
        /// The file (absolute, or relative to the host's working directory).
        path: String,
        /// Its text.
        content: String,
    },
    /// Replaces `old` (which must occur once) with `new` in a file, through the host's editing
    /// tool (codex: an `apply_patch` Update File hunk).
    Edit {
        /// The file (absolute, or relative to the host's working directory).
        path: String,
        /// The text replaced (whole lines, for a patch hunk).
        old: String,
        /// The text it becomes.
        new: String,
    },
    /// Reads a file through the host's reading tool (some hosts edit only a file read first),
    /// or `cat` through its shell tool when it has none.
    Read {
        /// The file.
        path: String,
    },
    /// Calls an MCP tool of the git-mas server by its own name (`gate`), mapped to the name the
    /// host advertises it under (claude: `mcp__git-mas__gate`; codex: `gate` in the namespace
    /// `mcp__git_mas`, found through its `tool_search`), with these JSON arguments.
    Mcp {
        /// The tool's name on the MCP server.
        tool: String,
        /// Its arguments (a JSON object).
        arguments: Value,
    },
    /// The model takes this long before it answers with `then` (the session is between calls
    /// meanwhile, as a real model's thinking leaves it).
    Think {
        /// How long.
        pause: std::time::Duration,
        /// The call it then makes.
        then: Box<Step>,
    },
}

/// A scripted conversation: the tool calls, in order, then the final reply.
///
/// Text in a step or the reply may name a field of a git-mas hop prompt's header (`{agent}`,
/// `{next}`, `{worktree}`, `{check}`, `{endorse}`, …): it is replaced by the field's value in the
/// request, so one scenario serves every agent and every hop. [`Step::ShellEach`] runs once per
/// name in the header's comma-separated `endorse` field, as `{item}`.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The branches; the first whose `when` occurs in the request plays.
    pub branches: Vec<Branch>,
}

/// One way the scripted model acts: for requests containing `when` (empty: every request).
#[derive(Debug, Clone)]
pub struct Branch {
    /// Text the request must contain (e.g. `task=propose`).
    pub when: String,
    /// The tool calls.
    pub steps: Vec<Step>,
    /// The final text once every step has its result.
    pub reply: String,
}

impl Scenario {
    /// One branch for every request.
    pub fn single(steps: Vec<Step>, reply: &str) -> Scenario {
        Scenario { branches: vec![Branch { when: String::new(), steps, reply: reply.to_owned() }] }
    }
}

/// The `key=value` lines of a hop prompt's header found in the request (first occurrence wins).
fn fields(body: &Value) -> Vec<(String, String)> {
    fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::String(s) => out.push(s),
            Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            Value::Object(o) => o.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    strings(body, &mut all);
    let mut found: Vec<(String, String)> = Vec::new();
    for text in all.iter().filter(|t| t.contains("phase=CONVERGE")) {
        for line in text.lines() {
            if let Some((k, v)) = line.split_once('=')
                && !k.is_empty()
                && k.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                && !found.iter().any(|(f, _)| f == k)
            {
                found.push((k.to_owned(), v.trim().to_owned()));
            }
        }
    }
    found
}

fn fill(text: &str, fields: &[(String, String)]) -> String {
    let mut out = text.to_owned();
    for (k, v) in fields {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

/// The steps and reply that play for `body`, placeholders filled.
fn script(scenario: &Scenario, body: &Value) -> (Vec<Step>, String) {
    let text = body.to_string();
    let Some(branch) = scenario.branches.iter().find(|b| text.contains(&b.when)) else {
        return (Vec::new(), "SCENARIO ERROR: no branch for this request".into());
    };
    let f = fields(body);
    let mut steps = Vec::new();
    for step in &branch.steps {
        match step {
            Step::Shell(c) => steps.push(Step::Shell(fill(c, &f))),
            Step::ShellEach(c) => {
                let list = f.iter().find(|(k, _)| k == "endorse").map(|(_, v)| v.clone()).unwrap_or_default();
                for item in list.split(',').filter(|i| !i.is_empty()) {
                    steps.push(Step::Shell(fill(&c.replace("{item}", item), &f)));
                }
            }
            Step::Write { path, content } => {
                steps.push(Step::Write { path: fill(path, &f), content: fill(content, &f) })
            }
            Step::Edit { path, old, new } => {
                steps.push(Step::Edit { path: fill(path, &f), old: fill(old, &f), new: fill(new, &f) })
            }
            Step::Read { path } => steps.push(Step::Read { path: fill(path, &f) }),
            Step::Mcp { tool, arguments } => steps.push(Step::Mcp { tool: tool.clone(), arguments: arguments.clone() }),
            Step::Think { pause, then } => {
                let inner = script(
                    &Scenario {
                        branches: vec![Branch {
                            when: branch.when.clone(),
                            steps: vec![(**then).clone()],
                            reply: String::new(),
                        }],
                    },
                    body,
                )
                .0;
                for step in inner {
                    steps.push(Step::Think { pause: *pause, then: Box::new(step) });
                }
            }
        }
    }
    (steps, fill(&branch.reply, &f))
}

/// One request as the server received it (secret headers removed).
#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Logged {
    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// A running server; it stops when dropped.
pub struct ModelServer {
    pub port: u16,
    log: Arc<Mutex<Vec<Logged>>>,
    stop: Arc<AtomicBool>,
}

impl ModelServer {
    /// Starts a server on 127.0.0.1 at a port the system chooses.
    pub fn start(scenario: Scenario) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let scenario = Arc::new(scenario);
        {
            let (log, stop) = (log.clone(), stop.clone());
            thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let (log, scenario) = (log.clone(), scenario.clone());
                    thread::spawn(move || serve(conn, &scenario, &log));
                }
            });
        }
        ModelServer { port, log, stop }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request so far.
    pub fn log(&self) -> Vec<Logged> {
        self.log.lock().unwrap().clone()
    }

    /// The requests so far as text, for failure messages (bodies shortened).
    pub fn dump(&self) -> String {
        self.log()
            .iter()
            .map(|r| {
                let body: String = r.body.chars().take(1500).collect();
                let agent = r.headers.iter().find(|(k, _)| k == "user-agent").map_or("", |(_, v)| v.as_str());
                format!("{} {} ({agent})\n{}\n", r.method, r.path, body)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The model requests (the ones that advertise tools), in order.
    pub fn turns(&self) -> Vec<Value> {
        self.log().iter().map(Logged::json).filter(|b| !tools(b).is_empty()).collect()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(n, 0);
        reader.read_exact(&mut body).ok()?;
    }
    Some(Request { method, path, headers, body })
}

const SECRET_HEADERS: [&str; 4] = ["authorization", "x-api-key", "cookie", "proxy-authorization"];

fn serve(conn: TcpStream, scenario: &Scenario, log: &Mutex<Vec<Logged>>) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let Ok(write_half) = conn.try_clone() else { return };
    let mut reader = BufReader::new(conn);
    let mut out = write_half;
    // One request per connection keeps the server simple; `Connection: close` tells the client.
    let Some(req) = read_request(&mut reader) else { return };
    let body = String::from_utf8_lossy(&req.body).into_owned();
    log.lock().unwrap().push(Logged {
        method: req.method.clone(),
        path: req.path.clone(),
        headers: req.headers.iter().filter(|(k, _)| !SECRET_HEADERS.contains(&k.as_str())).cloned().collect(),
        body: body.clone(),
    });
    let json: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let path = req.path.split('?').next().unwrap_or("").to_owned();
    let streaming = json["stream"].as_bool().unwrap_or(false);
    let response = if req.method == "POST" && path.ends_with("/messages/count_tokens") {
        Response::json(json!({"input_tokens": 100}))
    } else if req.method == "POST" && path.ends_with("/messages") {
        anthropic(scenario, &json, streaming)
    } else if req.method == "POST" && path.ends_with("/responses") {
        responses(scenario, &json)
    } else if req.method == "POST" && path.ends_with("/chat/completions") {
        chat(scenario, &json, streaming)
    } else if req.method == "POST" && path.ends_with(":countTokens") {
        Response::json(json!({"totalTokens": 100}))
    } else if req.method == "POST" && path.ends_with(":generateContent") {
        gemini(scenario, &json, &path, false)
    } else if req.method == "POST" && path.ends_with(":streamGenerateContent") {
        gemini(scenario, &json, &path, true)
    } else if path.ends_with("/models") {
        Response::json(json!({
            "object": "list",
            "data": [{"id": "mock-model", "object": "model", "created": 0, "owned_by": "git-mas-tests"}],
            "models": [{"slug": "mock-model", "display_name": "mock-model"}]
        }))
    } else {
        Response::json(json!({}))
    };
    let _ = response.write(&mut out, req.method == "HEAD");
}

struct Response {
    content_type: &'static str,
    body: String,
}

impl Response {
    fn json(value: Value) -> Response {
        Response { content_type: "application/json", body: value.to_string() }
    }

    fn sse(events: Vec<(Option<&str>, Value)>, done: bool) -> Response {
        let mut body = String::new();
        for (name, data) in events {
            if let Some(name) = name {
                body.push_str(&format!("event: {name}\n"));
            }
            body.push_str(&format!("data: {data}\n\n"));
        }
        if done {
            body.push_str("data: [DONE]\n\n");
        }
        Response { content_type: "text/event-stream", body }
    }

    fn write(&self, out: &mut TcpStream, head_only: bool) -> std::io::Result<()> {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\nrequest-id: req_test\r\n\r\n",
            self.content_type,
            self.body.len()
        );
        out.write_all(head.as_bytes())?;
        if !head_only {
            out.write_all(self.body.as_bytes())?;
        }
        out.flush()
    }
}

/// A tool a request advertises: its name, its kind (`function`, `custom`, …), its schema and, for
/// one that a tool search found, the namespace it was found in (codex: `mcp__git_mas`).
#[derive(Debug, Clone)]
pub struct Tool {
    pub name: String,
    pub kind: String,
    pub schema: Value,
    pub namespace: Option<String>,
}

/// The tools a request advertises, in any of the four APIs' shapes; a Responses `namespace`
/// tool (codex's MCP servers, for a model that has no tool search) stands for its functions, and
/// a Gemini tool for its `functionDeclarations` (a built-in such as `googleSearch` is none).
pub fn tools(body: &Value) -> Vec<Tool> {
    let Some(list) = body["tools"].as_array() else { return Vec::new() };
    list.iter()
        .flat_map(|t| {
            if let Some(declarations) = t.get("functionDeclarations").and_then(Value::as_array) {
                return declarations.iter().filter_map(gemini_tool).collect();
            }
            if t.get("type").is_none() && t.get("name").is_none() {
                return Vec::new();
            }
            if let Some(f) = t.get("function").filter(|f| f.is_object()) {
                // Chat Completions.
                let Some(name) = f["name"].as_str() else { return Vec::new() };
                let schema = f["parameters"].clone();
                return vec![Tool { name: name.to_owned(), kind: "function".into(), schema, namespace: None }];
            }
            if t["type"] == "namespace" {
                return namespace_tools(t);
            }
            let kind = t["type"].as_str().unwrap_or("function").to_owned();
            let name = t["name"].as_str().map(str::to_owned).unwrap_or_else(|| kind.clone());
            let schema =
                if t["input_schema"].is_object() { t["input_schema"].clone() } else { t["parameters"].clone() };
            vec![Tool { name, kind, schema, namespace: None }]
        })
        .collect()
}

/// A Gemini function declaration: its schema is `parametersJsonSchema` (JSON Schema) or
/// `parameters` (the OpenAPI subset, types in capitals).
fn gemini_tool(declaration: &Value) -> Option<Tool> {
    let name = declaration["name"].as_str()?.to_owned();
    let schema = match declaration.get("parametersJsonSchema") {
        Some(schema) => schema.clone(),
        None => declaration["parameters"].clone(),
    };
    Some(Tool { name, kind: "function".into(), schema, namespace: None })
}

/// The functions of a Responses `namespace` tool, each in that namespace.
fn namespace_tools(namespace: &Value) -> Vec<Tool> {
    let inner = namespace["tools"].as_array().into_iter().flatten();
    inner
        .map(|t| Tool {
            name: t["name"].as_str().unwrap_or_default().to_owned(),
            kind: t["type"].as_str().unwrap_or("function").to_owned(),
            schema: t["parameters"].clone(),
            namespace: namespace["name"].as_str().map(str::to_owned),
        })
        .collect()
}

/// The tools that the host's own tool search (codex's `tool_search`, run on the client) returned
/// into a Responses conversation: each `tool_search_output` item lists namespaces of functions,
/// or functions.
pub fn searched_tools(body: &Value) -> Vec<Tool> {
    let found = body["input"].as_array().into_iter().flatten().filter(|i| i["type"] == "tool_search_output");
    found.flat_map(|i| tools(&json!({"tools": i["tools"]}))).collect()
}

/// A tool call the server makes: the tool, its kind, its arguments (JSON text, or raw input for
/// a custom tool) and the namespace the tool was found in.
struct Call {
    name: String,
    kind: String,
    arguments: String,
    namespace: Option<String>,
}

impl Call {
    fn new(tool: &Tool, arguments: String) -> Call {
        Call { name: tool.name.clone(), kind: tool.kind.clone(), arguments, namespace: tool.namespace.clone() }
    }
}

const SHELL_TOOLS: [&str; 6] = ["bash", "shell", "exec_command", "shell_command", "run_shell_command", "powershell"];
const WRITE_TOOLS: [&str; 4] = ["write", "create", "write_file", "apply_patch"];
const EDIT_TOOLS: [&str; 6] = ["edit", "str_replace", "str_replace_editor", "replace", "edit_file", "apply_patch"];
const READ_TOOLS: [&str; 4] = ["read", "view", "read_file", "cat"];

fn find<'a>(tools: &'a [Tool], names: &[&str]) -> Option<&'a Tool> {
    names.iter().find_map(|n| tools.iter().find(|t| t.name.eq_ignore_ascii_case(n)))
}

fn property<'a>(schema: &Value, names: &[&'a str]) -> Option<&'a str> {
    names.iter().copied().find(|n| schema["properties"].get(n).is_some())
}

/// Fills every required argument not set yet with a harmless value of its type.
fn fill_required(schema: &Value, args: &mut serde_json::Map<String, Value>) {
    for key in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        if args.contains_key(key) {
            continue;
        }
        let prop = &schema["properties"][key];
        let value = if let Some(first) = prop["enum"].as_array().and_then(|e| e.first()) {
            first.clone()
        } else {
            // Gemini's OpenAPI subset writes the types in capitals.
            match prop["type"].as_str().map(str::to_ascii_lowercase).as_deref() {
                Some("integer") | Some("number") => json!(60),
                Some("boolean") => json!(false),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("a step of the git-mas test scenario"),
            }
        };
        args.insert(key.to_owned(), value);
    }
}

/// A call of a tool whose arguments are a JSON object.
fn object_call(tool: &Tool, mut args: serde_json::Map<String, Value>) -> Call {
    fill_required(&tool.schema, &mut args);
    Call::new(tool, Value::Object(args).to_string())
}

/// An `apply_patch` call of `patch`: raw input for the freeform tool, else an object with the
/// patch under the schema's key (`input` for codex, `patchText` for opencode).
fn patch_call(tool: &Tool, patch: String) -> Call {
    let arguments = if tool.kind == "custom" {
        patch
    } else {
        let key = property(&tool.schema, &["input", "patchText", "patch"]).unwrap_or("input");
        json!({ key: patch }).to_string()
    };
    Call::new(tool, arguments)
}

const PATH_KEYS: [&str; 3] = ["file_path", "filePath", "path"];

fn edit_call(path: &str, old: &str, new: &str, tools: &[Tool]) -> Option<Call> {
    let tool = find(tools, &EDIT_TOOLS)?;
    if tool.name == "apply_patch" {
        let lines = |prefix: char, text: &str| text.lines().map(|l| format!("{prefix}{l}\n")).collect::<String>();
        let patch = format!(
            "*** Begin Patch\n*** Update File: {path}\n@@\n{}{}*** End Patch\n",
            lines('-', old),
            lines('+', new)
        );
        return Some(patch_call(tool, patch));
    }
    let key = |names: &[&'static str], default: &'static str| property(&tool.schema, names).unwrap_or(default);
    let mut args = serde_json::Map::new();
    args.insert(key(&PATH_KEYS, "file_path").to_owned(), json!(path));
    args.insert(key(&["old_string", "oldString", "old_str"], "old_string").to_owned(), json!(old));
    args.insert(key(&["new_string", "newString", "new_str"], "new_string").to_owned(), json!(new));
    // An editor tool with sub-commands (`str_replace_editor`) is told which one.
    if tool.schema["properties"]["command"]["enum"].as_array().is_some_and(|e| e.contains(&json!("str_replace"))) {
        args.insert("command".into(), json!("str_replace"));
    }
    Some(object_call(tool, args))
}

fn read_call(path: &str, tools: &[Tool]) -> Option<Call> {
    match find(tools, &READ_TOOLS) {
        Some(tool) => {
            let mut args = serde_json::Map::new();
            args.insert(property(&tool.schema, &PATH_KEYS).unwrap_or("file_path").to_owned(), json!(path));
            if tool.schema["properties"]["command"]["enum"].as_array().is_some_and(|e| e.contains(&json!("view"))) {
                args.insert("command".into(), json!("view"));
            }
            Some(object_call(tool, args))
        }
        None => call_for(&Step::Shell(format!("cat '{path}'")), tools),
    }
}

/// The advertised tool that is the git-mas MCP server's `tool`: a name that mentions the server
/// and ends in the tool's name after a separator, or the tool's own name in a namespace that
/// mentions the server.
fn mcp_tool<'a>(tools: &'a [Tool], tool: &str) -> Option<&'a Tool> {
    let names_server = |s: &str| {
        let lower = s.to_ascii_lowercase();
        lower.contains("git-mas") || lower.contains("git_mas")
    };
    tools.iter().find(|t| match &t.namespace {
        Some(namespace) => t.name == tool && names_server(namespace),
        None => t
            .name
            .strip_suffix(tool)
            .is_some_and(|head| names_server(head) && head.ends_with(['_', '.', '-', '/', ':'])),
    })
}

fn call_for(step: &Step, tools: &[Tool]) -> Option<Call> {
    match step {
        Step::ShellEach(_) => None,
        Step::Think { then, .. } => call_for(then, tools),
        Step::Mcp { tool, arguments } => {
            let tool = mcp_tool(tools, tool)?;
            Some(Call::new(tool, arguments.to_string()))
        }
        Step::Edit { path, old, new } => edit_call(path, old, new, tools),
        Step::Read { path } => read_call(path, tools),
        Step::Shell(command) => {
            let tool = find(tools, &SHELL_TOOLS)?;
            let key = property(&tool.schema, &["command", "cmd"]).unwrap_or("command");
            let value = if tool.schema["properties"][key]["type"] == "array" {
                json!(["bash", "-lc", command])
            } else {
                json!(command)
            };
            let mut args = serde_json::Map::new();
            args.insert(key.to_owned(), value);
            // A login shell would reset PATH from the system profile; the hop's PATH is the one
            // that names this build of git-mas.
            if tool.schema["properties"]["login"]["type"] == "boolean" {
                args.insert("login".into(), json!(false));
            }
            fill_required(&tool.schema, &mut args);
            Some(Call::new(tool, Value::Object(args).to_string()))
        }
        Step::Write { path, content } => {
            let tool = find(tools, &WRITE_TOOLS)?;
            if tool.name == "apply_patch" {
                let lines: String = content.lines().map(|l| format!("+{l}\n")).collect();
                let patch = format!("*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n");
                return Some(patch_call(tool, patch));
            }
            let path_key = property(&tool.schema, &["file_path", "filePath", "path"]).unwrap_or("file_path");
            let content_key =
                property(&tool.schema, &["content", "file_text", "contents", "text"]).unwrap_or("content");
            let mut args = serde_json::Map::new();
            args.insert(path_key.to_owned(), json!(path));
            args.insert(content_key.to_owned(), json!(content));
            fill_required(&tool.schema, &mut args);
            Some(Call::new(tool, Value::Object(args).to_string()))
        }
    }
}

/// What the scripted model answers a request: a tool call, a search for a tool the host defers
/// (codex's `tool_search`, with this query), or text.
enum Turn {
    Call(usize, Call),
    Search(usize, String),
    Text(String),
}

/// The call id of the search made for step `i`.
fn search_id(i: usize) -> String {
    format!("search_{i:04}")
}

fn turn(scenario: &Scenario, body: &Value, done: usize) -> Turn {
    let advertised = tools(body);
    if advertised.is_empty() {
        return Turn::Text("git-mas test".into());
    }
    let (steps, reply) = script(scenario, body);
    let Some(step) = steps.get(done) else { return Turn::Text(reply) };
    if let Step::Think { pause, .. } = step {
        std::thread::sleep(*pause);
    }
    let mut visible = advertised.clone();
    visible.extend(searched_tools(body));
    if let Some(call) = call_for(step, &visible) {
        return Turn::Call(done, call);
    }
    // An MCP tool the host keeps behind its tool search: search for it first, once.
    let searched = body["input"].as_array().into_iter().flatten().any(|i| i["call_id"] == search_id(done).as_str());
    if let Step::Mcp { tool, .. } = step
        && advertised.iter().any(|t| t.kind == "tool_search")
        && !searched
    {
        return Turn::Search(done, format!("git-mas {tool}"));
    }
    Turn::Text(format!(
        "SCENARIO ERROR: no tool for {step:?} among {:?}",
        visible.iter().map(|t| (&t.namespace, &t.name)).collect::<Vec<_>>()
    ))
}

// ---- Anthropic Messages ----

fn anthropic(scenario: &Scenario, body: &Value, streaming: bool) -> Response {
    let done = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["type"] == "tool_result")
        .count();
    let model = body["model"].as_str().unwrap_or("mock-model");
    let (block, stop) = match turn(scenario, body, done) {
        Turn::Call(i, call) => (
            json!({"type": "tool_use", "id": format!("toolu_{i:04}"), "name": call.name,
                   "input": serde_json::from_str::<Value>(&call.arguments).unwrap_or(json!({}))}),
            "tool_use",
        ),
        Turn::Search(..) => (json!({"type": "text", "text": "SCENARIO ERROR: no tool search here"}), "end_turn"),
        Turn::Text(text) => (json!({"type": "text", "text": text}), "end_turn"),
    };
    let usage = json!({"input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    if !streaming {
        return Response::json(json!({
            "id": "msg_test", "type": "message", "role": "assistant", "model": model,
            "content": [block], "stop_reason": stop, "stop_sequence": null, "usage": usage
        }));
    }
    let mut events = vec![(
        Some("message_start"),
        json!({"type": "message_start", "message": {"id": "msg_test", "type": "message", "role": "assistant",
               "model": model, "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage}}),
    )];
    if block["type"] == "tool_use" {
        let input = block["input"].to_string();
        let start = json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}});
        events.push((
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": start}),
        ));
        // The arguments in two pieces, as a model streams them.
        let cut = input.char_indices().nth(input.chars().count() / 2).map_or(0, |(i, _)| i);
        for piece in [&input[..cut], &input[cut..]] {
            events.push((
                Some("content_block_delta"),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ));
        }
    } else {
        events.push((
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ));
        events.push((
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": block["text"]}}),
        ));
    }
    events.push((Some("content_block_stop"), json!({"type": "content_block_stop", "index": 0})));
    events.push((
        Some("message_delta"),
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 10}}),
    ));
    events.push((Some("message_stop"), json!({"type": "message_stop"})));
    Response::sse(events, false)
}

// ---- OpenAI Responses ----

const OUTPUT_ITEMS: [&str; 4] =
    ["function_call_output", "custom_tool_call_output", "local_shell_call_output", "shell_call_output"];

/// Where the call ids of polls start (steps count from 0).
const POLL_IDS: usize = 5000;

/// The text of a Responses tool output (a string, or content items).
fn output_text(item: &Value) -> String {
    match &item["output"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The session id in a codex `exec_command` result whose command still runs ("Process running
/// with session ID N"): the command outlived the call's `yield_time_ms`.
fn still_running(output: &str) -> Option<u64> {
    let rest = output.split("Process running with session ID ").nth(1)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn responses(scenario: &Scenario, body: &Value) -> Response {
    let outputs: Vec<&Value> = body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"].as_str().is_some_and(|t| OUTPUT_ITEMS.contains(&t)))
        .collect();
    // A step is done when its command has ended: a result saying it still runs is not a step,
    // and is polled as a model would, with `write_stdin`, until the command ends.
    let done = outputs.iter().filter(|o| still_running(&output_text(o)).is_none()).count();
    let running = body["input"]
        .as_array()
        .and_then(|items| items.last())
        .filter(|last| last["type"] == "function_call_output")
        .and_then(|last| still_running(&output_text(last)));
    let poll = running.and_then(|session| {
        let tools = tools(body);
        let tool = tools.iter().find(|t| t.name == "write_stdin")?;
        let args = json!({"session_id": session, "chars": "", "yield_time_ms": 30_000});
        // Each poll a call id of its own, apart from the steps'.
        Some(Turn::Call(POLL_IDS + outputs.len(), Call::new(tool, args.to_string())))
    });
    let item = match poll.unwrap_or_else(|| turn(scenario, body, done)) {
        Turn::Call(i, call) if call.kind == "custom" => json!({
            "type": "custom_tool_call", "id": format!("ctc_{i:04}"), "call_id": format!("call_{i:04}"),
            "name": call.name, "input": call.arguments, "status": "completed"
        }),
        Turn::Call(i, call) => {
            let mut item = json!({
                "type": "function_call", "id": format!("fc_{i:04}"), "call_id": format!("call_{i:04}"),
                "name": call.name, "arguments": call.arguments, "status": "completed"
            });
            if let Some(namespace) = call.namespace {
                item["namespace"] = json!(namespace);
            }
            item
        }
        Turn::Search(i, query) => json!({
            "type": "tool_search_call", "id": format!("ts_{i:04}"), "call_id": search_id(i),
            "execution": "client", "arguments": {"query": query, "limit": 8}, "status": "completed"
        }),
        Turn::Text(text) => json!({
            "type": "message", "id": "msg_test", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]
        }),
    };
    let model = body["model"].as_str().unwrap_or("mock-model");
    let response = |status: &str, output: Value| {
        json!({"id": "resp_test", "object": "response", "created_at": 0, "status": status, "model": model,
               "output": output,
               "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                         "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 110}})
    };
    let mut events = vec![
        (Some("response.created"), json!({"type": "response.created", "response": response("in_progress", json!([]))})),
        (
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        ),
    ];
    if item["type"] == "message" {
        events.push((
            Some("response.output_text.delta"),
            json!({"type": "response.output_text.delta", "item_id": "msg_test", "output_index": 0, "content_index": 0,
                   "delta": item["content"][0]["text"]}),
        ));
    }
    events.push((
        Some("response.output_item.done"),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
    ));
    events.push((
        Some("response.completed"),
        json!({"type": "response.completed", "response": response("completed", json!([item]))}),
    ));
    Response::sse(events, false)
}

// ---- OpenAI Chat Completions ----

fn chat(scenario: &Scenario, body: &Value, streaming: bool) -> Response {
    let done = body["messages"].as_array().into_iter().flatten().filter(|m| m["role"] == "tool").count();
    let model = body["model"].as_str().unwrap_or("mock-model");
    let (message, finish) = match turn(scenario, body, done) {
        Turn::Call(i, call) => (
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": format!("call_{i:04}"),
                   "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]}),
            "tool_calls",
        ),
        Turn::Search(..) => (json!({"role": "assistant", "content": "SCENARIO ERROR: no tool search here"}), "stop"),
        Turn::Text(text) => (json!({"role": "assistant", "content": text}), "stop"),
    };
    let usage = json!({"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110});
    if !streaming {
        return Response::json(json!({
            "id": "chatcmpl_test", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage
        }));
    }
    let chunk = |delta: Value, finish: Value, usage: Value| {
        json!({"id": "chatcmpl_test", "object": "chat.completion.chunk", "created": 0, "model": model,
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": usage})
    };
    let events = vec![(None, chunk(message, Value::Null, Value::Null)), (None, chunk(json!({}), json!(finish), usage))];
    Response::sse(events, true)
}

// ---- Gemini ----

/// The JSON schema a Gemini request asks its answer to follow, if any.
fn gemini_answer_schema(body: &Value) -> Option<&Value> {
    let config = &body["generationConfig"];
    ["responseJsonSchema", "responseSchema"].iter().map(|k| &config[*k]).find(|s| s.is_object())
}

fn gemini(scenario: &Scenario, body: &Value, path: &str, streaming: bool) -> Response {
    let done = body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p.get("functionResponse").is_some())
        .count();
    let model = path.rsplit('/').next().and_then(|m| m.split(':').next()).unwrap_or("mock-model");
    let part = match gemini_answer_schema(body).filter(|_| tools(body).is_empty()) {
        Some(schema) => {
            let mut answer = serde_json::Map::new();
            fill_required(schema, &mut answer);
            json!({"text": Value::Object(answer).to_string()})
        }
        None => match turn(scenario, body, done) {
            Turn::Call(i, call) => json!({"functionCall": {
                "name": call.name, "id": format!("call_{i:04}"),
                "args": serde_json::from_str::<Value>(&call.arguments).unwrap_or(json!({}))
            }}),
            Turn::Search(..) => json!({"text": "SCENARIO ERROR: no tool search here"}),
            Turn::Text(text) => json!({"text": text}),
        },
    };
    let response = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
        "modelVersion": model, "responseId": "resp_test"
    });
    if streaming { Response::sse(vec![(None, response)], false) } else { Response::json(response) }
}

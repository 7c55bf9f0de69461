//! The stdio framing of `git mas mcp`: newline-delimited JSON-RPC between the host and the
//! rmcp service, answering every line the service would not answer.
//!
//! rmcp's own stdio transport silently drops a line it cannot decode as JSON (not JSON at all,
//! invalid UTF-8 inside a string, nesting deeper than serde_json's recursion limit of 128), and
//! answers JSON that is not a message it knows with `-32600` and no id at all. A host whose
//! request vanished waits for its timeout instead of learning what it sent wrong. So each line
//! is decoded here first, exactly as rmcp decodes it ([`ClientJsonRpcMessage`] from the line's
//! bytes): a line rmcp decodes is passed to the service unchanged; every other line is answered
//! here and goes no further ([`screen`]):
//!
//! - not JSON (bad syntax, invalid UTF-8, too deep, two values): `-32700 Parse error`;
//! - JSON but not a JSON-RPC request (`jsonrpc` not "2.0", `method` not a string, `params`
//!   neither an object nor an array, an id that is not a string or a number): `-32600`;
//! - a request for a method this server serves ([`SERVED_METHODS`]) whose params do not fit
//!   it: `-32602 Invalid params` (rmcp decodes most of these as a custom request and answers
//!   "method not found"; those are answered here too); for any other method: `-32601`;
//! - a notification or a response that does not decode: nothing (JSON-RPC never answers those).
//!
//! Each answer carries the caller's `id` when it can be read: from the JSON when it parses, else
//! by a cheap scan of the top-level object's members ([`scan_id`]) — so a request that is JSON
//! up to a bad byte still gets its answer matched. The service's output and these answers reach
//! stdout through one writer, whole lines only, so they never interleave. A line over
//! [`MAX_LINE`] is answered `-32700` too and discarded (rmcp's own limit, which would drop it
//! silently).
//!
//! Stdin closing ends the service (rmcp sees its input end); everything the service wrote is
//! copied out before the framing's future ends.

use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, InitializeRequestParams, JsonRpcMessage,
    JsonRpcRequest, PaginatedRequestParams,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// The longest request line read (rmcp's limit for its own stdio transport).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// The methods this server serves. A request for one of them whose params do not fit is
/// `-32602`; any other method is `-32601`.
pub const SERVED_METHODS: [&str; 4] = ["initialize", "ping", "tools/list", "tools/call"];

/// JSON-RPC 2.0's error codes.
pub mod code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
}

/// A JSON-RPC error answered by the framing itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The caller's id, `null` when it could not be read.
    pub id: Value,
    /// One of [`code`]'s codes.
    pub code: i64,
    /// What was wrong, for the host's log.
    pub message: String,
}

impl Answer {
    /// The answer as one newline-terminated JSON-RPC line.
    pub fn line(&self) -> Vec<u8> {
        // Members in the order rmcp writes them.
        #[derive(serde::Serialize)]
        struct Line<'a> {
            jsonrpc: &'a str,
            id: &'a Value,
            error: Value,
        }
        let error = json!({"code": self.code, "message": self.message});
        let answer = Line { jsonrpc: "2.0", id: &self.id, error };
        let mut line = serde_json::to_vec(&answer).expect("JSON values always serialize");
        line.push(b'\n');
        line
    }
}

/// What the framing does with one line.
#[derive(Debug, Clone, PartialEq)]
pub enum Screened {
    /// A message the service decodes: passed to it unchanged.
    Pass,
    /// No answer is due: a blank line, or a notification or a response that does not decode.
    Drop,
    /// Answered here and not passed on.
    Answer(Answer),
}

/// The answer to a line that is not JSON (or too long to read): `-32700`, with the id
/// [`scan_id`] finds in what was read.
pub fn parse_error(line: &[u8], reason: &str) -> Answer {
    Answer { id: scan_id(line), code: code::PARSE_ERROR, message: format!("Parse error: {reason}") }
}

/// Decides what becomes of `line` (without its newline); see the module's documentation.
pub fn screen(line: &[u8]) -> Screened {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Screened::Drop;
    }
    // What rmcp's transport does: skip a byte order mark, then decode the message from the bytes.
    let json = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let typed = match serde_json::from_slice::<ClientJsonRpcMessage>(json) {
        // rmcp decodes a request for a method it knows, whose params do not fit, as a custom
        // request, which it answers "method not found".
        Ok(JsonRpcMessage::Request(JsonRpcRequest { id, request: ClientRequest::CustomRequest(custom), .. }))
            if SERVED_METHODS.contains(&custom.method.as_str()) =>
        {
            let reason = params_error(&custom.method, custom.params.as_ref())
                .unwrap_or_else(|| format!("{}: the params do not fit", custom.method));
            return Screened::Answer(Answer {
                id: serde_json::to_value(id).unwrap_or(Value::Null),
                code: code::INVALID_PARAMS,
                message: format!("Invalid params: {reason}"),
            });
        }
        Ok(_) => return Screened::Pass,
        Err(typed) => typed,
    };
    let value = match serde_json::from_slice::<Value>(json) {
        Ok(value) => value,
        Err(e) => return Screened::Answer(parse_error(json, &e.to_string())),
    };
    let object = match value.as_object() {
        Some(object) => object,
        None => return invalid_request(Value::Null, "not a JSON-RPC message object (batches are not supported)"),
    };
    let id = object.get("id").filter(|id| id.is_string() || id.is_number()).cloned().unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid_request(id, "`jsonrpc` must be \"2.0\"");
    }
    let Some(method) = object.get("method") else {
        // A response (the server sends no requests) or no message at all.
        if object.contains_key("result") || object.contains_key("error") {
            return Screened::Drop;
        }
        return invalid_request(id, "no `method`");
    };
    let Some(method) = method.as_str() else {
        return invalid_request(id, "`method` must be a string");
    };
    let params = object.get("params");
    if params.is_some_and(|p| !p.is_object() && !p.is_array()) {
        return invalid_request(id, "`params` must be an object or an array");
    }
    match object.get("id") {
        None => Screened::Drop, // A notification: never answered.
        Some(given) if !given.is_string() && !given.is_number() => {
            invalid_request(Value::Null, "`id` must be a string or a number")
        }
        Some(_) if SERVED_METHODS.contains(&method) => Screened::Answer(Answer {
            id,
            code: code::INVALID_PARAMS,
            message: format!("Invalid params: {}", params_error(method, params).unwrap_or_else(|| typed.to_string())),
        }),
        Some(_) => Screened::Answer(Answer {
            id,
            code: code::METHOD_NOT_FOUND,
            message: format!("Method not found: {method}"),
        }),
    }
}

fn invalid_request(id: Value, reason: &str) -> Screened {
    Screened::Answer(Answer { id, code: code::INVALID_REQUEST, message: format!("Invalid Request: {reason}") })
}

/// Why `params` do not fit `method` (one of [`SERVED_METHODS`]), as the method's own params type
/// says; `None` when they do fit, or the method is not one of them.
pub fn params_error(method: &str, params: Option<&Value>) -> Option<String> {
    fn check<T: serde::de::DeserializeOwned>(params: Option<&Value>) -> Option<String> {
        let params = params?;
        serde_json::from_value::<T>(params.clone()).err().map(|e| e.to_string())
    }
    let reason = match method {
        "tools/call" if params.is_none() => Some("missing params (`name` and `arguments`)".to_string()),
        "tools/call" => check::<CallToolRequestParams>(params),
        "initialize" if params.is_none() => Some("missing params".to_string()),
        "initialize" => check::<InitializeRequestParams>(params),
        "tools/list" => check::<PaginatedRequestParams>(params),
        "ping" => check::<serde_json::Map<String, Value>>(params),
        _ => None,
    };
    reason.map(|r| format!("{method}: {r}"))
}

/// The top-level `id` of a line that is not (entirely) JSON, when it is a string or a number
/// and comes before whatever breaks the line; else `null`.
///
/// A scan, not a parse: it walks the top-level object's members, skipping each value by
/// counting brackets outside strings (no recursion, so any depth costs one pass), and reads
/// only the `id`'s own token.
pub fn scan_id(line: &[u8]) -> Value {
    let mut at = skip_ws(line, 0);
    if line.get(at) != Some(&b'{') {
        return Value::Null;
    }
    at += 1;
    loop {
        at = skip_ws(line, at);
        let Some(key_end) = string_end(line, at) else { return Value::Null };
        let key = &line[at..key_end];
        at = skip_ws(line, key_end);
        if line.get(at) != Some(&b':') {
            return Value::Null;
        }
        at = skip_ws(line, at + 1);
        let Some(value_end) = value_end(line, at) else { return Value::Null };
        if key == b"\"id\"" {
            return match serde_json::from_slice::<Value>(&line[at..value_end]) {
                Ok(id) if id.is_string() || id.is_number() => id,
                _ => Value::Null,
            };
        }
        at = skip_ws(line, value_end);
        if line.get(at) != Some(&b',') {
            return Value::Null;
        }
        at += 1;
    }
}

fn skip_ws(line: &[u8], mut at: usize) -> usize {
    while line.get(at).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// Where the string starting at `at` ends (one past its closing quote).
fn string_end(line: &[u8], at: usize) -> Option<usize> {
    if line.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        match line.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// Where the value starting at `at` ends: a string, an object or array (brackets counted
/// outside strings), or a scalar token.
fn value_end(line: &[u8], at: usize) -> Option<usize> {
    match line.get(at)? {
        b'"' => string_end(line, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match line.get(i)? {
                    b'"' => {
                        i = string_end(line, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let len = line[at..].iter().position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'));
            Some(at + len.unwrap_or(line.len() - at))
        }
    }
}

/// The two ends the service is served on (its input, its output), and the tasks that frame them
/// between `input` and `output`. Await the returned future after the service ended.
pub fn framed<R, W>(input: R, output: W) -> ((DuplexStream, DuplexStream), impl std::future::Future<Output = ()>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (service_in, feed) = tokio::io::duplex(1 << 16);
    let (service_out, drain) = tokio::io::duplex(1 << 16);
    let (answers, to_write) = mpsc::unbounded_channel();
    let reader = tokio::spawn(read_requests(input, feed, answers));
    let writer = tokio::spawn(write_responses(drain, to_write, output));
    let done = async move {
        let _ = reader.await;
        let _ = writer.await;
    };
    ((service_in, service_out), done)
}

/// Copies the lines the service decodes from `input` to it (`feed`), answering the others on
/// `answers` ([`screen`]).
async fn read_requests<R: AsyncRead + Unpin>(
    input: R,
    mut feed: DuplexStream,
    answers: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut input).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line).await;
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            let _ = answers.send(parse_error(&line, &format!("a line over {MAX_LINE} bytes")).line());
            if skip_line(&mut input).await.is_err() {
                break;
            }
            continue;
        }
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        match screen(body) {
            Screened::Drop => {}
            Screened::Answer(answer) => {
                let _ = answers.send(answer.line());
            }
            Screened::Pass => {
                let mut whole = body.to_vec();
                whole.push(b'\n');
                if feed.write_all(&whole).await.is_err() {
                    break;
                }
            }
        }
    }
    // Dropping `feed` ends the service's input.
}

/// Reads and drops the rest of an over-long line.
async fn skip_line<R: AsyncRead + Unpin>(input: &mut BufReader<R>) -> std::io::Result<()> {
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|b| *b == b'\n') {
            Some(at) => {
                input.consume(at + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

/// Writes the service's lines (`drain`) and the framing's answers (`answers`) to `output`, each whole,
/// until the service's output ends.
async fn write_responses<W: AsyncWrite + Unpin>(
    drain: DuplexStream,
    mut answers: mpsc::UnboundedReceiver<Vec<u8>>,
    mut output: W,
) {
    let mut drain = BufReader::new(drain);
    let mut line = Vec::new();
    let mut answering = true;
    loop {
        line.clear();
        let next = tokio::select! {
            read = drain.read_until(b'\n', &mut line) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => true,
            },
            answer = answers.recv(), if answering => match answer {
                Some(answer) => { line = answer; true }
                None => { answering = false; false }
            },
        };
        if next && (output.write_all(&line).await.is_err() || output.flush().await.is_err()) {
            break;
        }
    }
    // Answers given after the service ended (its input closed first) still go out.
    while let Ok(answer) = answers.try_recv() {
        if output.write_all(&answer).await.is_err() {
            break;
        }
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `screen`'s verdict in short: "pass", "drop" or "CODE ID".
    fn verdict(line: &[u8]) -> String {
        match screen(line) {
            Screened::Pass => "pass".into(),
            Screened::Drop => "drop".into(),
            Screened::Answer(a) => format!("{} {}", a.code, a.id),
        }
    }

    fn nested(open: &str, close: &str, depth: usize) -> Vec<u8> {
        format!(
            r#"{{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{{"x":{}1{}}}}}"#,
            open.repeat(depth),
            close.repeat(depth)
        )
        .into_bytes()
    }

    #[test]
    fn every_line_the_service_cannot_decode_is_answered_with_the_specs_code_and_the_callers_id() {
        let table: [(&[u8], &str); 25] = [
            (br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, "pass"),
            (b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r", "pass"),
            (br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, "pass"),
            (br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gate","arguments":{}}}"#, "pass"),
            // A method nobody serves decodes (rmcp answers -32601 itself).
            (br#"{"jsonrpc":"2.0","id":3,"method":"no/such","params":{}}"#, "pass"),
            (b"", "drop"),
            (b"  \r", "drop"),
            // Not JSON: -32700, with the id when it comes before the break.
            (b"this is not json {", "-32700 null"),
            (br#"{"id": 1"#, "-32700 1"),
            (b"{} {}", "-32700 null"),
            (b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":{\"x\":\"\xff\"}}", "-32700 7"),
            (
                b"{\"jsonrpc\":\"2.0\",\"params\":{\"x\":\"\xff\"},\"id\":\"late\",\"method\":\"tools/list\"}",
                "-32700 \"late\"",
            ),
            (br#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"x":"\udc00"}}"#, "-32700 4"),
            // JSON, not a request: -32600.
            (br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":"nope"}"#, "-32600 \"x\""),
            (br#"{"jsonrpc":"1.0","id":15,"method":"tools/list"}"#, "-32600 15"),
            (br#"{"jsonrpc":"2.0","id":16,"method":5}"#, "-32600 16"),
            (br#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list","params":{"cursor":[]}}"#, "-32600 null"),
            (b"[1, 2]\r", "-32600 null"),
            (b"17", "-32600 null"),
            // A request this server serves, with params that do not fit: -32602.
            (br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{}}}"#, "-32602 9"),
            (
                br#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"gate","arguments":[1]}}"#,
                "-32602 10",
            ),
            (br#"{"jsonrpc":"2.0","id":11,"method":"tools/call"}"#, "-32602 11"),
            // Responses and notifications are never answered.
            (br#"{"jsonrpc":"2.0","id":12,"result":5,"error":{}}"#, "drop"),
            (br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[]}}"#, "pass"),
            (br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#, "-32600 null"),
        ];
        for (line, want) in table {
            assert_eq!(verdict(line), want, "{}", String::from_utf8_lossy(line));
        }
        // Nested past serde_json's recursion limit (128), arrays or objects, at any depth.
        for depth in [200, 100_000] {
            assert_eq!(verdict(&nested("[", "]", depth)), "-32700 8", "[ x {depth}");
            assert_eq!(verdict(&nested(r#"{"a":"#, "}", depth)), "-32700 8", "{{ x {depth}");
            assert_eq!(verdict(&"[".repeat(depth).into_bytes()), "-32700 null");
        }
        assert_eq!(verdict(&nested("[", "]", 100)), "pass", "within the limit");
    }

    #[test]
    fn params_errors_say_what_does_not_fit() {
        let reason = params_error("tools/call", Some(&json!({"arguments": {}}))).unwrap();
        assert!(reason.starts_with("tools/call: ") && reason.contains("name"), "{reason}");
        assert!(params_error("tools/call", Some(&json!({"name": "gate", "arguments": {}}))).is_none());
        assert!(params_error("tools/call", None).is_some());
        assert!(params_error("no/such", None).is_none());
    }

    #[test]
    fn the_id_scan_reads_the_top_level_id_only() {
        let table: [(&[u8], Value); 10] = [
            (br#"{"id": 7, "x": "#, json!(7)),
            (br#"{"a": {"id": 1}, "b": ["}", "\"{"], "id": "s\"q"}"#, json!("s\"q")),
            (br#"{"a": [[[[[[[[[, "id": 2}"#, Value::Null),
            (br#"{"a": [[[]]], "id": -2.5e1 }"#, json!(-25.0)),
            (br#"{"id": null}"#, Value::Null),
            (br#"{"id": {"n": 1}}"#, Value::Null),
            (br#"{"id": tru"#, Value::Null),
            (br#"[{"id": 1}]"#, Value::Null),
            (b"{\"x\": \"\xff\", \"id\": 3}", json!(3)),
            (b"", Value::Null),
        ];
        for (line, id) in table {
            assert_eq!(scan_id(line), id, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn an_answer_is_one_json_rpc_line() {
        let line = parse_error(b"{\"id\": \"a\", ", "EOF while parsing").line();
        assert_eq!(line.last(), Some(&b'\n'));
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["id"], "a");
        assert_eq!(value["error"]["code"], -32700);
        assert_eq!(value["error"]["message"], "Parse error: EOF while parsing");
        assert_eq!(value["jsonrpc"], "2.0");
    }
}

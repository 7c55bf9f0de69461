//! The stdio framing of `git mas mcp`: newline-delimited JSON-RPC between the host and the
//! rmcp service, with the one answer rmcp's own stdio transport does not give.
//!
//! rmcp answers a line that is JSON but not a JSON-RPC message with `-32600 Invalid Request`, and
//! silently drops a line that is not JSON at all. JSON-RPC 2.0 asks for `-32700 Parse error` (id
//! `null`) there, and a host whose request vanished waits for its timeout instead of learning
//! what it sent wrong. So the streams are framed here: each line from stdin that is not JSON is
//! answered `-32700` at once and goes no further; every other line is passed to the service
//! unchanged. The service's output and those answers reach stdout through one writer, whole lines
//! only, so they never interleave. A line over [`MAX_LINE`] is answered `-32700` too and
//! discarded (rmcp's own limit, which would drop it silently).
//!
//! Stdin closing ends the service (rmcp sees its input end); everything the service wrote is
//! copied out before [`serve_stdio`] returns.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// The longest request line read (rmcp's limit for its own stdio transport).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// The answer to a line that is not JSON (or too long to read): `-32700`, id `null`.
pub fn parse_error(reason: &str) -> Vec<u8> {
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": format!("Parse error: {reason}")},
    });
    let mut line = answer.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// Whether `line` (without its newline) is passed to the service; `Err` is the parse error's
/// reason. A blank line is dropped without an answer (it is no message at all).
pub fn screen(line: &[u8]) -> Option<Result<(), String>> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(serde_json::from_slice::<serde::de::IgnoredAny>(line).map(|_| ()).map_err(|e| e.to_string()))
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
    let (errors, answers) = mpsc::unbounded_channel();
    let reader = tokio::spawn(read_requests(input, feed, errors));
    let writer = tokio::spawn(write_responses(drain, answers, output));
    let done = async move {
        let _ = reader.await;
        let _ = writer.await;
    };
    ((service_in, service_out), done)
}

/// Copies request lines from `input` to the service (`feed`), answering bad ones on `errors`.
async fn read_requests<R: AsyncRead + Unpin>(input: R, mut feed: DuplexStream, errors: mpsc::UnboundedSender<Vec<u8>>) {
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
            let _ = errors.send(parse_error(&format!("a line over {MAX_LINE} bytes")));
            if skip_line(&mut input).await.is_err() {
                break;
            }
            continue;
        }
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        match screen(body) {
            None => {}
            Some(Err(reason)) => {
                let _ = errors.send(parse_error(&reason));
            }
            Some(Ok(())) => {
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

/// Writes the service's lines (`drain`) and the parse errors (`answers`) to `output`, each whole,
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
    // Parse errors answered after the service ended (its input closed first) still go out.
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

    #[test]
    fn only_lines_that_are_not_json_are_stopped() {
        assert_eq!(screen(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), Some(Ok(())));
        // JSON that is not a request is the service's to refuse (-32600).
        assert_eq!(screen(br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":"nope"}"#), Some(Ok(())));
        assert_eq!(screen(b"[1, 2]\r"), Some(Ok(())));
        assert!(matches!(screen(b"this is not json {"), Some(Err(_))));
        assert!(matches!(screen(br#"{"id": 1"#), Some(Err(_))));
        assert!(matches!(screen(b"{} {}"), Some(Err(_))), "two values on one line");
        assert_eq!(screen(b""), None);
        assert_eq!(screen(b"  \r"), None);
    }

    #[test]
    fn a_parse_error_is_one_json_rpc_line_with_a_null_id() {
        let line = parse_error("expected value at line 1 column 1");
        assert_eq!(line.last(), Some(&b'\n'));
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["id"], serde_json::Value::Null);
        assert_eq!(value["error"]["code"], -32700);
        assert_eq!(value["jsonrpc"], "2.0");
    }
}

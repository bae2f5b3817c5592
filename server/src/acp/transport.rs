//! The line transport between stdio and the ACP SDK (newline-delimited JSON-RPC), so
//! that no input ends the agent and no reply floods the client.
//!
//! The SDK reads lines as UTF-8 text and stops for good at the first line that is not
//! (its connection fails), quotes a whole unparsable line back in its error reply, and
//! refuses an `initialize` whose `protocolVersion` does not fit its type. Here, in front
//! of it: a line that is not UTF-8 or not JSON gets one -32700 reply quoting at most
//! `MAX_QUOTE` bytes of it and the next line is read; a request whose `params` is a
//! scalar gets -32602 with its id; an `initialize` asking for a version we cannot
//! represent is passed on as asking for our latest (the ACP spec: the agent answers
//! with the latest version it supports). Behind it, every error reply the SDK or our
//! handlers write has its `message` and `data` cut to `MAX_QUOTE` bytes.

use std::io::Write;

use agent_client_protocol::Lines;
use futures::channel::mpsc;
use futures::{AsyncBufReadExt, SinkExt, Stream, StreamExt};
use serde_json::{json, Value};

use crate::text::prefix_within;

/// Most bytes of the input an error reply quotes, and most bytes of an error's
/// `message` and of its `data`.
pub const MAX_QUOTE: usize = 1024;

/// The protocol version an unusable requested version is read as: our latest.
const LATEST_VERSION: u64 = 1;

/// The SDK's transport over `input` and `output`, and the writer thread to join once
/// the connection has ended (it has then written every line).
pub fn lines(
    input: impl futures::AsyncRead + Send + Unpin + 'static,
    output: impl Write + Send + 'static,
) -> (
    Lines<
        impl futures::Sink<String, Error = std::io::Error> + Send + 'static,
        impl Stream<Item = std::io::Result<String>> + Send + 'static,
    >,
    std::thread::JoinHandle<()>,
) {
    let (out, queued) = mpsc::unbounded::<String>();
    let writer = std::thread::spawn(move || write_lines(output, queued));
    let replies = out.clone();
    let outgoing = out
        .sink_map_err(std::io::Error::other)
        .with(|line: String| {
            futures::future::ready(Ok::<_, std::io::Error>(cap_error_reply(line)))
        });
    let incoming = futures::stream::unfold(
        (futures::io::BufReader::new(input), replies),
        |(mut reader, replies)| async move {
            loop {
                let mut buffer = Vec::new();
                match reader.read_until(b'\n', &mut buffer).await {
                    Ok(0) => return None,
                    Ok(_) => {}
                    Err(error) => return Some((Err(error), (reader, replies))),
                }
                match filter_line(&buffer) {
                    Filtered::Pass(line) => return Some((Ok(line), (reader, replies))),
                    Filtered::Reply(reply) => {
                        let _ = replies.unbounded_send(reply);
                    }
                    Filtered::Skip => {}
                }
            }
        },
    );
    (Lines::new(outgoing, Box::pin(incoming)), writer)
}

fn write_lines(mut output: impl Write, mut queued: mpsc::UnboundedReceiver<String>) {
    while let Some(line) = futures::executor::block_on(queued.next()) {
        let written = output
            .write_all(line.as_bytes())
            .and_then(|()| output.write_all(b"\n"))
            .and_then(|()| output.flush());
        if let Err(error) = written {
            tracing::debug!(%error, "the client's output is gone");
            return;
        }
    }
}

/// What becomes of one input line.
#[derive(Debug, PartialEq)]
enum Filtered {
    /// Handed to the SDK (perhaps rewritten).
    Pass(String),
    /// Answered here; the SDK never sees it.
    Reply(String),
    /// Blank.
    Skip,
}

fn filter_line(bytes: &[u8]) -> Filtered {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Filtered::Skip;
    }
    let line = match std::str::from_utf8(bytes) {
        Ok(line) => line,
        Err(error) => {
            tracing::warn!(%error, "input line is not UTF-8");
            let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_QUOTE)]).into_owned();
            return Filtered::Reply(error_reply(
                Value::Null,
                -32700,
                "Parse error",
                json!({"reason": format!("the line is not UTF-8: {error}"), "line": shown}),
            ));
        }
    };
    let mut value = match serde_json::from_str::<Value>(line) {
        Ok(value) => value,
        Err(error) => {
            tracing::warn!(
                line = error.line(),
                column = error.column(),
                "input line is not JSON"
            );
            return Filtered::Reply(error_reply(
                Value::Null,
                -32700,
                "Parse error",
                json!({"reason": format!("invalid JSON at column {}", error.column()), "line": prefix_within(line, MAX_QUOTE)}),
            ));
        }
    };
    let Some(object) = value.as_object_mut() else {
        return Filtered::Pass(line.to_string());
    };
    let is_request = object.get("method").is_some_and(Value::is_string);
    let id = object.get("id").cloned();
    if is_request {
        if let (Some(id), Some(params)) = (&id, object.get("params")) {
            if !(params.is_object() || params.is_array() || params.is_null()) {
                return Filtered::Reply(error_reply(
                    id.clone(),
                    -32602,
                    "Invalid params",
                    json!("params must be an object"),
                ));
            }
        }
    }
    if is_request && object.get("method").and_then(Value::as_str) == Some("initialize") {
        if let Some(params) = object.get_mut("params").and_then(Value::as_object_mut) {
            let usable = params
                .get("protocolVersion")
                .and_then(Value::as_u64)
                .is_some_and(|v| v <= u64::from(u16::MAX));
            if !usable {
                tracing::info!(requested = ?params.get("protocolVersion"), "unsupported protocol version: answering with ours");
                params.insert("protocolVersion".into(), json!(LATEST_VERSION));
                return Filtered::Pass(value.to_string());
            }
        }
    }
    Filtered::Pass(line.to_string())
}

fn error_reply(id: Value, code: i64, message: &str, data: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message, "data": data}})
        .to_string()
}

/// An outgoing error reply with its `message` and `data` cut to `MAX_QUOTE` bytes (a
/// message may quote the input: a 4 MB session id, a serde error). Other lines pass as
/// they are, unparsed.
fn cap_error_reply(line: String) -> String {
    if line.len() <= 2 * MAX_QUOTE || !line.contains("\"error\"") {
        return line;
    }
    let Ok(mut value) = serde_json::from_str::<Value>(&line) else {
        return line;
    };
    let Some(error) = value.get_mut("error").and_then(Value::as_object_mut) else {
        return line;
    };
    if let Some(Value::String(message)) = error.get_mut("message") {
        if message.len() > MAX_QUOTE {
            *message = format!("{}…", prefix_within(message, MAX_QUOTE));
        }
    }
    if let Some(data) = error.get_mut("data") {
        let text = match &*data {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        if text.len() > MAX_QUOTE {
            *data = Value::String(format!("{}…", prefix_within(&text, MAX_QUOTE)));
        }
    }
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(filtered: Filtered) -> Value {
        match filtered {
            Filtered::Reply(line) => serde_json::from_str(&line).unwrap(),
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    #[test]
    fn bad_lines_are_answered_here_with_a_short_quote() {
        let not_utf8 = reply(filter_line(b"\xff\n"));
        assert_eq!(not_utf8["error"]["code"], -32700);
        assert!(not_utf8["id"].is_null());
        let long = format!("{{{}\n", "x".repeat(4 * 1024 * 1024));
        let not_json = reply(filter_line(long.as_bytes()));
        assert_eq!(not_json["error"]["code"], -32700);
        assert!(not_json.to_string().len() < 2 * MAX_QUOTE);
        assert_eq!(filter_line(b"\r\n"), Filtered::Skip);
    }

    #[test]
    fn scalar_params_are_refused_with_the_request_id() {
        let refused = reply(filter_line(
            br#"{"jsonrpc":"2.0","id":7,"method":"session/new","params":5}"#,
        ));
        assert_eq!(refused["id"], 7);
        assert_eq!(refused["error"]["code"], -32602);
        let fine = br#"{"jsonrpc":"2.0","id":7,"method":"session/new","params":{}}"#;
        assert!(matches!(filter_line(fine), Filtered::Pass(_)));
    }

    #[test]
    fn an_unusable_version_is_read_as_our_latest() {
        let Filtered::Pass(line) = filter_line(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":99999}}"#,
        ) else {
            panic!("passed on")
        };
        let value: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["params"]["protocolVersion"], 1);
        let kept =
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#;
        assert_eq!(
            filter_line(kept),
            Filtered::Pass(String::from_utf8(kept.to_vec()).unwrap())
        );
    }

    #[test]
    fn long_error_replies_are_cut() {
        let big = "y".repeat(100_000);
        let line = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": format!("unknown session {big}"), "data": {"line": big}}}).to_string();
        let capped = cap_error_reply(line);
        assert!(capped.len() < 3 * MAX_QUOTE, "{}", capped.len());
        let ok = json!({"jsonrpc": "2.0", "id": 1, "result": {"text": big}}).to_string();
        assert_eq!(cap_error_reply(ok.clone()), ok);
    }
}

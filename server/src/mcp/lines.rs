//! The stdio transport: newline-delimited JSON-RPC, one message per line, in front of
//! rmcp's service loop. It exists because rmcp's own stdio transport drops a line that
//! is not JSON without a word (so a client waits forever for its reply) and answers a
//! request of the wrong shape with an `id: null` error the client cannot match; here
//! each such line gets one JSON-RPC error (-32700 for what is not JSON or not UTF-8,
//! -32600 for JSON that is not a message, with the request's id when it has one) and
//! the server reads on.
//!
//! A reader task owns stdin (so a read is never lost when rmcp's loop drops a pending
//! `receive`); writes are whole lines under one lock, so an error reply never lands
//! inside a message. Input closing ends `receive`, which ends the service.

use std::sync::Arc;

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage};
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, Mutex};
use tokio_util::sync::CancellationToken;

/// A line longer than this is answered with an error and skipped, not buffered.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// An error reply quotes at most this much of the line it refuses.
const QUOTE_BYTES: usize = 200;

type Writer = Arc<Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

pub struct LineTransport {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    writer: Writer,
    /// Whether a session began (a request other than `ping` or `server/discover`).
    /// Before that rmcp ends the service on any notification or response, so those
    /// are dropped here.
    started: bool,
    /// Cancelled when the input ends (calls in flight stop waiting).
    closed: CancellationToken,
}

impl LineTransport {
    /// Starts reading `input` on a task of its own.
    pub fn new(
        input: impl AsyncRead + Send + Unpin + 'static,
        output: impl AsyncWrite + Send + Unpin + 'static,
        closed: CancellationToken,
    ) -> LineTransport {
        let writer: Writer = Arc::new(Mutex::new(Box::new(output)));
        let (sender, incoming) = mpsc::channel(64);
        tokio::spawn(read_lines(input, sender, writer.clone()));
        LineTransport {
            incoming,
            writer,
            started: false,
            closed,
        }
    }
}

/// What one input line is.
#[derive(Debug)]
pub enum Line {
    Message(Box<ClientJsonRpcMessage>),
    /// Nothing to do (a blank line, or a notification rmcp does not know, which
    /// JSON-RPC says to ignore).
    Skip,
    /// Reply with this error.
    Error(Value),
}

/// Classifies one line (without its line break).
pub fn classify(line: &[u8]) -> Line {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::Skip;
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Line::Error(error(
            Value::Null,
            -32700,
            "Parse error: the line is not valid UTF-8",
            line,
        ));
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => {
            return Line::Error(error(
                Value::Null,
                -32700,
                &format!("Parse error: {e}"),
                line,
            ))
        }
    };
    let Value::Object(object) = &value else {
        let what = if value.is_array() {
            "Invalid Request: batches are not supported"
        } else {
            "Invalid Request: a message is a JSON object"
        };
        return Line::Error(error(Value::Null, -32600, what, line));
    };
    let id = object.get("id").cloned();
    let is_request = object.get("method").is_some_and(Value::is_string);
    match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
        Ok(message) => Line::Message(Box::new(message)),
        // An unknown notification is ignored, as JSON-RPC says.
        Err(_) if is_request && id.is_none() && object.get("jsonrpc") == Some(&json!("2.0")) => {
            Line::Skip
        }
        Err(e) => {
            // A usable id is a string or a number; anything else cannot be answered to.
            let id = id
                .filter(|id| id.is_string() || id.is_number())
                .unwrap_or(Value::Null);
            let code = if is_request && !id.is_null() {
                -32602
            } else {
                -32600
            };
            let what = if code == -32602 {
                format!("Invalid params: {e}")
            } else {
                format!("Invalid Request: {e}")
            };
            Line::Error(error(id, code, &what, line))
        }
    }
}

fn error(id: Value, code: i64, message: &str, line: &[u8]) -> Value {
    let quoted = String::from_utf8_lossy(&line[..line.len().min(QUOTE_BYTES)]).into_owned();
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message, "data": {"line": quoted}},
    })
}

async fn read_lines(
    input: impl AsyncRead + Send + Unpin,
    sender: mpsc::Sender<ClientJsonRpcMessage>,
    writer: Writer,
) {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = read_bounded_line(&mut input, &mut line).await;
        let classified = match read {
            Ok(LineRead::Eof) => break,
            Ok(LineRead::Line) => classify(strip_line_break(&line)),
            Ok(LineRead::TooLong) => Line::Error(error(
                Value::Null,
                -32700,
                &format!("Parse error: the line is longer than {MAX_LINE_BYTES} bytes"),
                &line,
            )),
            Err(e) => {
                tracing::warn!("reading stdin: {e}");
                break;
            }
        };
        match classified {
            Line::Message(message) => {
                if sender.send(*message).await.is_err() {
                    break;
                }
            }
            Line::Skip => {}
            Line::Error(reply) => {
                tracing::warn!("malformed input: {}", reply["error"]["message"]);
                let mut bytes = serde_json::to_vec(&reply).unwrap_or_default();
                bytes.push(b'\n');
                if write_line(&writer, &bytes).await.is_err() {
                    break;
                }
            }
        }
    }
}

enum LineRead {
    Line,
    TooLong,
    Eof,
}

/// Reads up to and including the next `\n` into `line`; past `MAX_LINE_BYTES` the rest
/// of the line is read and dropped (only its head is kept, for the error's quote).
async fn read_bounded_line(
    input: &mut (impl AsyncBufReadExt + Unpin),
    line: &mut Vec<u8>,
) -> std::io::Result<LineRead> {
    let mut too_long = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(if line.is_empty() && !too_long {
                LineRead::Eof
            } else if too_long {
                LineRead::TooLong
            } else {
                LineRead::Line
            });
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |at| at + 1);
        if !too_long {
            if line.len() + take > MAX_LINE_BYTES {
                too_long = true;
                line.truncate(QUOTE_BYTES);
            } else {
                line.extend_from_slice(&available[..take]);
            }
        }
        input.consume(take);
        if newline.is_some() {
            return Ok(if too_long {
                LineRead::TooLong
            } else {
                LineRead::Line
            });
        }
    }
}

fn strip_line_break(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

async fn write_line(writer: &Writer, bytes: &[u8]) -> std::io::Result<()> {
    let mut writer = writer.lock().await;
    writer.write_all(bytes).await?;
    writer.flush().await
}

impl Transport<RoleServer> for LineTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move {
            let mut bytes = serde_json::to_vec(&item)?;
            bytes.push(b'\n');
            write_line(&writer, &bytes).await
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let Some(message) = self.incoming.recv().await else {
                self.closed.cancel();
                return None;
            };
            if !self.started {
                match &message {
                    ClientJsonRpcMessage::Request(request) => {
                        let probe = matches!(
                            request.request,
                            ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_)
                        );
                        self.started = !probe;
                    }
                    _ => {
                        tracing::warn!("ignoring a notification or response before initialize");
                        continue;
                    }
                }
            }
            return Some(message);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(line: &str) -> (i64, Value) {
        match classify(line.as_bytes()) {
            Line::Error(reply) => (
                reply["error"]["code"].as_i64().unwrap(),
                reply["id"].clone(),
            ),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn malformed_lines_get_one_error_each() {
        assert_eq!(code("{not json"), (-32700, Value::Null));
        assert_eq!(code("[1, 2]"), (-32600, Value::Null));
        assert_eq!(code("42"), (-32600, Value::Null));
        assert_eq!(code("{\"jsonrpc\":\"2.0\"}"), (-32600, Value::Null));
        // A request with an id but unusable params is answered to that id.
        assert_eq!(
            code("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":5}"),
            (-32602, json!(7))
        );
        assert!(matches!(
            classify(b"\xff\xfe{}"),
            Line::Error(reply) if reply["error"]["code"] == -32700
        ));
    }

    #[test]
    fn messages_blanks_and_unknown_notifications() {
        assert!(matches!(
            classify(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"),
            Line::Message(_)
        ));
        // An unknown method with an id reaches rmcp, which answers -32601.
        assert!(matches!(
            classify(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"no/such\"}"),
            Line::Message(_)
        ));
        assert!(matches!(classify(b"   "), Line::Skip));
        assert!(matches!(
            classify(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\",\"params\":7}"),
            Line::Skip
        ));
    }

    #[tokio::test]
    async fn an_overlong_line_is_refused_and_the_next_one_read() {
        let mut input = format!("{}\n{{\"a\":1}}\n", "x".repeat(MAX_LINE_BYTES + 10)).into_bytes();
        input.extend_from_slice(b"tail");
        let mut reader = BufReader::new(&input[..]);
        let mut line = Vec::new();
        assert!(matches!(
            read_bounded_line(&mut reader, &mut line).await.unwrap(),
            LineRead::TooLong
        ));
        line.clear();
        assert!(matches!(
            read_bounded_line(&mut reader, &mut line).await.unwrap(),
            LineRead::Line
        ));
        assert_eq!(line, b"{\"a\":1}\n");
        line.clear();
        read_bounded_line(&mut reader, &mut line).await.unwrap();
        assert_eq!(line, b"tail");
        line.clear();
        assert!(matches!(
            read_bounded_line(&mut reader, &mut line).await.unwrap(),
            LineRead::Eof
        ));
    }
}

//! The fake provider's HTTP/1.1 server: reads requests on keep-alive connections, records
//! them, plays the next script step, and notices a client that hangs up mid-reply.
//!
//! Hand-written on tokio rather than on hyper so the misbehaviours the script asks for
//! (a body cut after N bytes, a stall, a reply that never comes) are plain byte writes.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};

use super::render::{self, Event, Format};
use super::script::{Limits, Step};
use super::{RecordedRequest, Shared};

const MAX_HEAD_BYTES: usize = 64 * 1024;
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Accepts connections until `shutdown` fires.
pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut shutdown: tokio::sync::oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    tokio::spawn(connection(stream, shared.clone()));
                }
            }
            _ = &mut shutdown => return,
        }
    }
}

struct Request {
    method: String,
    path: String,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

/// What to send back for one request.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Body,
    limits: Limits,
}

enum Body {
    /// Sent with `Content-Length`.
    Whole(Vec<u8>),
    /// Sent chunked, one chunk per SSE event, flushed as it goes.
    Events(Vec<Event>),
    /// Never sent: the request is read and left unanswered.
    Never,
}

/// How a reply ended.
enum Ended {
    Complete,
    /// The script cut the connection: it must be closed, not reused.
    CutByServer,
    /// The client closed its side (or the socket failed) before the reply was complete.
    ClientGone,
}

async fn connection(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let (mut reader, mut writer) = stream.into_split();
    let mut buffer = Vec::new();
    loop {
        let request = match read_request(&mut reader, &mut buffer).await {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(message) => {
                let reply = error_reply(400, &message);
                let _ = write_reply(&mut writer, reply, true, &|_| {}).await;
                return;
            }
        };
        let close_after = request
            .headers
            .get("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let (index, reply) = plan(&request, &shared);
        let first_output = |at: Instant| shared.note_first_output(index, at);
        let ended = tokio::select! {
            ended = write_reply(&mut writer, reply, close_after, &first_output) => ended,
            () = wait_for_close(&mut reader, &mut buffer) => Ended::ClientGone,
        };
        match ended {
            Ended::Complete if !close_after => continue,
            Ended::Complete | Ended::CutByServer => return,
            Ended::ClientGone => {
                shared.mark_disconnected(index);
                return;
            }
        }
    }
}

/// The models `GET …/models` lists, as OpenAI-compatible servers and Anthropic answer.
pub(crate) const LISTED_MODELS: [&str; 2] = ["fake-model", "fake-model-large"];

/// Records the request and picks its reply from the script. A model listing (an ACP
/// session's model menu) is answered at once and not recorded: it is not a chat call,
/// and the tests count chat calls.
fn plan(request: &Request, shared: &Shared) -> (usize, Reply) {
    if request.method == "GET"
        && request
            .path
            .split('?')
            .next()
            .unwrap_or_default()
            .ends_with("/models")
    {
        let data: Vec<Value> = LISTED_MODELS
            .iter()
            .map(|id| json!({"id": id, "object": "model", "owned_by": "fake"}))
            .collect();
        let body = json!({"object": "list", "data": data}).to_string();
        let reply = Reply {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: Body::Whole(body.into_bytes()),
            limits: Limits::default(),
        };
        return (usize::MAX, reply);
    }
    let body: Value = serde_json::from_slice(&request.body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&request.body).into_owned()));
    let path = request.path.split('?').next().unwrap_or_default();
    let format = if request.method != "POST" {
        None
    } else if path.ends_with("/chat/completions") {
        Some(Format::OpenAi)
    } else if path.ends_with("/v1/messages") {
        Some(Format::Anthropic)
    } else {
        None
    };
    let stream = body.get("stream") == Some(&Value::Bool(true));
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("fake-model")
        .to_string();
    let recorded = RecordedRequest {
        method: request.method.clone(),
        path: request.path.clone(),
        headers: request.headers.clone(),
        body,
        disconnected: false,
    };
    let cached = match format {
        Some(format) => shared.prompt_cache(format, &recorded.body),
        None => 0,
    };
    let (index, step) = shared.record(recorded, format.is_some());
    let Some(format) = format else {
        let message = format!(
            "fake provider: no route for {} {}",
            request.method, request.path
        );
        return (index, error_reply(404, &message));
    };
    let Some(step) = step else {
        return (index, error_reply(500, "fake provider: script exhausted"));
    };
    let reply = match step {
        Step::Turn(turn) => {
            let request_bytes = request.body.len();
            if stream {
                Reply {
                    status: 200,
                    headers: vec![("content-type".into(), "text/event-stream".into())],
                    body: Body::Events(render::events(
                        format,
                        &turn,
                        &model,
                        request_bytes,
                        cached,
                    )),
                    limits: turn.limits,
                }
            } else {
                Reply {
                    status: 200,
                    headers: vec![("content-type".into(), "application/json".into())],
                    body: Body::Whole(render::whole(format, &turn, &model, request_bytes, cached)),
                    limits: turn.limits,
                }
            }
        }
        Step::Error {
            status,
            mut headers,
            body,
            delay_ms,
        } => {
            headers.push(("content-type".into(), "application/json".into()));
            Reply {
                status,
                headers,
                body: Body::Whole(body),
                limits: Limits {
                    delay_ms,
                    ..Limits::default()
                },
            }
        }
        Step::Hang => Reply {
            status: 200,
            headers: Vec::new(),
            body: Body::Never,
            limits: Limits::default(),
        },
        Step::Raw {
            body,
            content_type,
            limits,
        } => Reply {
            status: 200,
            headers: vec![("content-type".into(), content_type)],
            body: Body::Whole(body),
            limits,
        },
    };
    (index, reply)
}

fn error_reply(status: u16, message: &str) -> Reply {
    Reply {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: Body::Whole(
            json!({"error": {"message": message}})
                .to_string()
                .into_bytes(),
        ),
        limits: Limits::default(),
    }
}

/// Reads one request head and body; `None` when the client closed between requests.
async fn read_request(
    reader: &mut OwnedReadHalf,
    buffer: &mut Vec<u8>,
) -> Result<Option<Request>, String> {
    let head_end = loop {
        if let Some(at) = find(buffer, b"\r\n\r\n") {
            break at;
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return Err("request head too large".into());
        }
        if !read_more(reader, buffer).await {
            return Ok(None);
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(path), Some(_version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("bad request line {request_line:?}"));
    };
    let mut headers = BTreeMap::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("bad header line {line:?}"));
        };
        let name = name.trim().to_ascii_lowercase();
        let value = value.trim().to_string();
        headers
            .entry(name)
            .and_modify(|existing: &mut String| {
                existing.push_str(", ");
                existing.push_str(&value);
            })
            .or_insert(value);
    }
    if headers.contains_key("transfer-encoding") {
        return Err("chunked request bodies are not supported; send Content-Length".into());
    }
    let length: usize = match headers.get("content-length") {
        Some(value) => value
            .parse()
            .map_err(|_| format!("bad content-length {value:?}"))?,
        None => 0,
    };
    if length > MAX_BODY_BYTES {
        return Err("request body too large".into());
    }
    let body_start = head_end + 4;
    while buffer.len() < body_start + length {
        if !read_more(reader, buffer).await {
            return Ok(None);
        }
    }
    let body = buffer[body_start..body_start + length].to_vec();
    buffer.drain(..body_start + length);
    Ok(Some(Request {
        method: method.to_string(),
        path: path.to_string(),
        headers,
        body,
    }))
}

/// Reads what is available into `buffer`; false on end of stream or error.
async fn read_more(reader: &mut OwnedReadHalf, buffer: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 8192];
    match reader.read(&mut chunk).await {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            buffer.extend_from_slice(&chunk[..n]);
            true
        }
    }
}

/// Returns once the client closes its side. Bytes it sends meanwhile (a pipelined next
/// request) are kept for the next read; `read` is cancel-safe, so losing the race to the
/// reply loses no data.
async fn wait_for_close(reader: &mut OwnedReadHalf, buffer: &mut Vec<u8>) {
    while read_more(reader, buffer).await {}
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    }
}

/// Writes a reply; `first_output` is told when the first event carrying model output has
/// been flushed.
async fn write_reply(
    writer: &mut OwnedWriteHalf,
    reply: Reply,
    close_after: bool,
    first_output: &(dyn Fn(Instant) + Send + Sync),
) -> Ended {
    match write_reply_inner(writer, reply, close_after, first_output).await {
        Ok(ended) => ended,
        Err(_) => Ended::ClientGone,
    }
}

async fn write_reply_inner(
    writer: &mut OwnedWriteHalf,
    reply: Reply,
    close_after: bool,
    first_output: &(dyn Fn(Instant) + Send + Sync),
) -> std::io::Result<Ended> {
    if reply.limits.delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(reply.limits.delay_ms)).await;
    }
    let events: Vec<(Vec<u8>, bool)> = match reply.body {
        Body::Never => std::future::pending().await,
        Body::Whole(ref body) => {
            write_head(writer, &reply, Some(body.len()), close_after).await?;
            // Only streamed events are timestamped as output.
            vec![(body.clone(), false)]
        }
        Body::Events(ref events) => {
            write_head(writer, &reply, None, close_after).await?;
            events
                .iter()
                .map(|e| (e.text.clone().into_bytes(), e.output))
                .collect()
        }
    };
    let mut output_noted = false;
    let chunked = matches!(reply.body, Body::Events(_));
    let mut budget = reply
        .limits
        .cut_after_bytes
        .or(reply.limits.hang_after_bytes)
        .unwrap_or(usize::MAX);
    for (number, (piece, carries_output)) in events.iter().enumerate() {
        if number > 0 && reply.limits.chunk_delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(reply.limits.chunk_delay_ms)).await;
        }
        let piece = &piece[..piece.len().min(budget)];
        budget -= piece.len();
        if !piece.is_empty() {
            if chunked {
                writer
                    .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
                    .await?;
                writer.write_all(piece).await?;
                writer.write_all(b"\r\n").await?;
            } else {
                writer.write_all(piece).await?;
            }
            writer.flush().await?;
            if *carries_output && !output_noted {
                output_noted = true;
                first_output(Instant::now());
            }
        }
        if budget == 0 {
            if reply.limits.cut_after_bytes.is_some() {
                return Ok(Ended::CutByServer);
            }
            // A stall: the connection stays open and silent until the client gives up.
            return std::future::pending().await;
        }
    }
    if chunked {
        writer.write_all(b"0\r\n\r\n").await?;
        writer.flush().await?;
    }
    Ok(Ended::Complete)
}

async fn write_head(
    writer: &mut OwnedWriteHalf,
    reply: &Reply,
    content_length: Option<usize>,
    close_after: bool,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    write!(
        head,
        "HTTP/1.1 {} {}\r\n",
        reply.status,
        reason(reply.status)
    )?;
    for (name, value) in &reply.headers {
        write!(head, "{name}: {value}\r\n")?;
    }
    match content_length {
        Some(length) => write!(head, "content-length: {length}\r\n")?,
        None => write!(
            head,
            "transfer-encoding: chunked\r\ncache-control: no-cache\r\n"
        )?,
    }
    if close_after {
        write!(head, "connection: close\r\n")?;
    }
    write!(head, "\r\n")?;
    writer.write_all(&head).await?;
    writer.flush().await
}

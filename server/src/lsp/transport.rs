//! JSON-RPC framing between the editor's stdio and tower-lsp: reads frames tolerantly,
//! answers the ones it cannot use (one error reply each, `id: null`) and the `$/`
//! requests tower-lsp would leave unanswered, passes the rest on re-framed, and owns the
//! output so replies never interleave. Ends at `exit` or when the input closes.
//!
//! Why a layer in front: tower-lsp's decoder is strict (case-sensitive `Content-Length`,
//! a `Content-Type` must carry a charset, a frame of length 0 stalls the one after it)
//! and the stream it reads from stops at the first frame it cannot decode, which ended
//! the server. Everything handed to it here is a frame it decodes: the body parsed with
//! the same types it uses, behind a canonical `Content-Length` header.

use std::future::Future;
use std::time::Duration;

use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;
use tokio_util::bytes::{Buf, BytesMut};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Id, Request, Response};

/// The largest body accepted (a `didOpen` of a big file is a few MiB).
pub const MAX_BODY: usize = 64 << 20;
/// Headers longer than this without their blank line are garbage.
const MAX_HEADERS: usize = 8 << 10;
/// Bytes buffered in each in-process pipe to and from tower-lsp.
const PIPE: usize = 256 << 10;
/// Whole frames waiting for the writer.
const OUTPUT_QUEUE: usize = 256;
/// How long queued output may take to reach the client once serving ends.
const FLUSH_TIMEOUT: Duration = Duration::from_millis(500);

const CONTENT_LENGTH: &[u8] = b"content-length";

/// One unit cut from the byte stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// The body of a frame with a usable header.
    Body(BytesMut),
    /// Headers that do not frame a message (the reason, for the reply and the log).
    BadHeaders(String),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    #[default]
    Headers,
    Body(usize),
    /// After a header block with no usable length: its body, if it is one JSON value.
    SkipValue,
    /// After a body that was not JSON: the next frame, or garbage left by a wrong length.
    AfterBadBody,
    /// Inside garbage: skip to the next `Content-Length`.
    Resync,
}

/// Cuts a byte stream into frames, whatever the read boundaries. Header names are
/// case-insensitive; only `Content-Length` matters (any `Content-Type` is accepted: a
/// body that is not UTF-8 JSON is refused when it is read).
///
/// Recovery, so that each bad frame costs one [`Frame::BadHeaders`] (or one unusable
/// body) and the frames after it are read normally: a header block without a usable
/// length is skipped with the JSON value that follows it; bytes that are not headers
/// are skipped up to the next `Content-Length` (also one glued to the garbage); after a
/// body that was not JSON, what follows is read as headers only if it looks like them.
#[derive(Debug, Default)]
pub struct Splitter {
    state: State,
}

impl Splitter {
    /// The next frame in `buf` (consuming it), or `None` when more bytes are needed.
    pub fn next(&mut self, buf: &mut BytesMut) -> Option<Frame> {
        loop {
            match self.state {
                State::Body(length) => {
                    if buf.len() < length {
                        buf.reserve(length - buf.len());
                        return None;
                    }
                    self.state = State::Headers;
                    return Some(Frame::Body(buf.split_to(length)));
                }
                State::Resync => match find_content_length(buf) {
                    Some(at) => {
                        buf.advance(at);
                        self.state = State::Headers;
                    }
                    None => {
                        // Keep a tail that may be the start of a split `Content-Length`.
                        let keep = CONTENT_LENGTH.len() - 1;
                        if buf.len() > keep {
                            buf.advance(buf.len() - keep);
                        }
                        return None;
                    }
                },
                State::SkipValue => {
                    skip_blank(buf);
                    if buf.is_empty() {
                        return None;
                    }
                    if !matches!(buf[0], b'{' | b'[' | b'"') {
                        // No body, or not JSON: the next frame is found by its header.
                        self.state = State::Resync;
                        continue;
                    }
                    let mut values = serde_json::Deserializer::from_slice(&buf[..])
                        .into_iter::<serde::de::IgnoredAny>();
                    match values.next() {
                        Some(Ok(_)) => {
                            let end = values.byte_offset();
                            buf.advance(end);
                            self.state = State::Headers;
                        }
                        Some(Err(error)) if error.is_eof() => return None,
                        _ => self.state = State::Resync,
                    }
                }
                State::AfterBadBody => {
                    skip_blank(buf);
                    if buf.is_empty() {
                        return None;
                    }
                    let window = &buf[..buf.len().min(MAX_HEADERS + 4)];
                    match find(window, b"\r\n\r\n") {
                        Some(end) if looks_like_headers(&buf[..end]) => self.state = State::Headers,
                        Some(_) => self.state = State::Resync,
                        None if buf.len() > MAX_HEADERS => self.state = State::Resync,
                        None => return None,
                    }
                }
                State::Headers => {
                    // Blank lines between frames are tolerated.
                    skip_blank(buf);
                    if buf.is_empty() {
                        return None;
                    }
                    let window = &buf[..buf.len().min(MAX_HEADERS + 4)];
                    let Some(end) = find(window, b"\r\n\r\n") else {
                        if buf.len() > MAX_HEADERS {
                            return Some(self.garbage(buf, "no end of headers".to_string()));
                        }
                        return None;
                    };
                    let block = &buf[..end];
                    match content_length(block) {
                        Ok(length) => {
                            buf.advance(end + 4);
                            self.state = State::Body(length);
                        }
                        // Garbage glued to a header (`xyzContent-Length: 2`): find it.
                        Err(reason)
                            if !looks_like_headers(block)
                                || (!has_content_length_header(block)
                                    && find_content_length(block).is_some()) =>
                        {
                            return Some(self.garbage(buf, reason));
                        }
                        Err(reason) => {
                            buf.advance(end + 4);
                            self.state = State::SkipValue;
                            return Some(Frame::BadHeaders(reason));
                        }
                    }
                }
            }
        }
    }

    /// The body just returned was not JSON: its length may have been wrong too, so what
    /// follows is not read as headers unless it looks like them (which would answer one
    /// bad frame twice).
    pub fn after_bad_body(&mut self) {
        self.state = State::AfterBadBody;
    }

    /// Bytes that do not start a frame: skip into them, so a `Content-Length` header
    /// after garbage (or glued to it) still starts the next frame.
    fn garbage(&mut self, buf: &mut BytesMut, reason: String) -> Frame {
        // Past the first byte, so the same bad header is not found again.
        buf.advance(1);
        self.state = State::Resync;
        Frame::BadHeaders(reason)
    }
}

fn skip_blank(buf: &mut BytesMut) {
    let blank = buf
        .iter()
        .take_while(|b| matches!(b, b'\r' | b'\n' | b' ' | b'\t'))
        .count();
    buf.advance(blank);
}

/// Every line is `Name: value` with a header-name token.
fn looks_like_headers(block: &[u8]) -> bool {
    block.split(|&b| b == b'\n').all(|line| {
        let name_end = line.iter().position(|&b| b == b':');
        name_end.is_some_and(|end| {
            end > 0
                && line[..end]
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
        })
    })
}

fn has_content_length_header(block: &[u8]) -> bool {
    block.split(|&b| b == b'\n').any(|line| {
        line.split(|&b| b == b':')
            .next()
            .is_some_and(|name| name.trim_ascii().eq_ignore_ascii_case(CONTENT_LENGTH))
    })
}

/// The `Content-Length` of a header block (without its blank line), or why not.
fn content_length(block: &[u8]) -> Result<usize, String> {
    let mut length = None;
    for line in block.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(line) = std::str::from_utf8(line) else {
            return Err("a header is not UTF-8".to_string());
        };
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("malformed header line {:?}", clip(line)));
        };
        if !name.trim().eq_ignore_ascii_case("content-length") {
            // Content-Type (any value) and unknown headers are ignored.
            continue;
        }
        let value = value.trim();
        let parsed = value
            .parse::<usize>()
            .ok()
            .filter(|&n| n <= MAX_BODY)
            .ok_or_else(|| format!("bad Content-Length {:?}", clip(value)))?;
        if length.is_some_and(|earlier| earlier != parsed) {
            return Err("conflicting Content-Length headers".to_string());
        }
        length = Some(parsed);
    }
    length.ok_or_else(|| "missing Content-Length".to_string())
}

fn clip(text: &str) -> String {
    text.chars().take(40).collect()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn find_content_length(haystack: &[u8]) -> Option<usize> {
    haystack
        .windows(CONTENT_LENGTH.len())
        .position(|w| w.eq_ignore_ascii_case(CONTENT_LENGTH))
}

/// tower-lsp's own message type (private there): what its decoder accepts is exactly
/// what deserializes into this.
#[derive(Deserialize)]
#[serde(untagged)]
enum Message {
    #[allow(dead_code)] // deserialized to check it, forwarded as bytes
    Response(Response),
    Request(Request),
}

/// What to do with one frame's body.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// A message for tower-lsp.
    Forward,
    /// The `shutdown` request (forwarded, and remembered for the exit code).
    Shutdown,
    /// The `exit` notification: stop serving.
    Exit,
    /// A request for a `$/` method: tower-lsp drops these without a reply.
    DollarRequest(Id),
    /// Not usable: one error reply with `id: null`.
    Unusable {
        code: ErrorCode,
        reason: String,
        /// The frame's length may be wrong too (not JSON at all).
        resync: bool,
    },
}

/// Decides what a body is, by the JSON-RPC types tower-lsp decodes.
pub fn classify(body: &[u8]) -> Incoming {
    let not_json = |reason: String| Incoming::Unusable {
        code: ErrorCode::ParseError,
        reason,
        resync: true,
    };
    if body.is_empty() {
        return Incoming::Unusable {
            code: ErrorCode::ParseError,
            reason: "empty body".to_string(),
            resync: false,
        };
    }
    if let Err(error) = std::str::from_utf8(body) {
        return not_json(format!("the body is not UTF-8: {error}"));
    }
    match serde_json::from_slice::<Message>(body) {
        // tower-lsp reads a missing `method` as "" and would answer -32601.
        Ok(Message::Request(request)) if request.method().is_empty() => Incoming::Unusable {
            code: ErrorCode::InvalidRequest,
            reason: "not a JSON-RPC message (no `method`, and not a response)".to_string(),
            resync: false,
        },
        Ok(Message::Request(request)) => {
            let method = request.method();
            match request.id() {
                Some(id) if method.starts_with("$/") => Incoming::DollarRequest(id.clone()),
                Some(_) if method == "shutdown" => Incoming::Shutdown,
                None if method == "exit" => Incoming::Exit,
                _ => Incoming::Forward,
            }
        }
        Ok(Message::Response(_)) => Incoming::Forward,
        Err(_) => match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
            Err(error) => not_json(format!("invalid JSON: {error}")),
            Ok(_) => Incoming::Unusable {
                code: ErrorCode::InvalidRequest,
                reason: not_a_message(body),
                resync: false,
            },
        },
    }
}

/// Why JSON is not a JSON-RPC message, in words for the reply.
fn not_a_message(body: &[u8]) -> String {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return "not a JSON-RPC message (duplicate fields?)".to_string();
    };
    let Some(object) = value.as_object() else {
        return if value.is_array() {
            "batches are not supported".to_string()
        } else {
            "not a JSON-RPC message (not an object)".to_string()
        };
    };
    if object.get("jsonrpc").and_then(|v| v.as_str()) != Some("2.0") {
        return "not a JSON-RPC message (`jsonrpc` must be \"2.0\")".to_string();
    }
    if let Some(id) = object.get("id") {
        let usable = id.is_null() || id.is_string() || id.as_i64().is_some();
        if !usable {
            return format!("not a JSON-RPC message (bad id {id})");
        }
    }
    match object.get("method") {
        Some(method) if !method.is_string() => {
            "not a JSON-RPC message (`method` must be a string)".to_string()
        }
        Some(_) => "not a JSON-RPC message".to_string(),
        None => "not a JSON-RPC message (no `method`, and not a response)".to_string(),
    }
}

/// What the input holds next, frame by frame.
#[derive(Debug, PartialEq)]
pub enum Event {
    /// A message (never [`Incoming::Unusable`]) and its body.
    Message(BytesMut, Incoming),
    /// A frame that gets one error reply with `id: null` (already logged).
    Unusable { code: ErrorCode, reason: String },
}

/// The input side without I/O: frames cut by the [`Splitter`], bodies judged by
/// [`classify`], recovery after a body that is not JSON.
#[derive(Debug, Default)]
pub struct Reader {
    splitter: Splitter,
}

impl Reader {
    /// The next event in `buf` (consuming it), or `None` when more bytes are needed.
    pub fn next(&mut self, buf: &mut BytesMut) -> Option<Event> {
        let body = match self.splitter.next(buf)? {
            Frame::Body(body) => body,
            Frame::BadHeaders(reason) => {
                tracing::warn!("unusable frame: {reason}");
                let code = ErrorCode::ParseError;
                return Some(Event::Unusable { code, reason });
            }
        };
        match classify(&body) {
            Incoming::Unusable {
                code,
                reason,
                resync,
            } => {
                tracing::warn!(length = body.len(), "unusable frame: {reason}");
                if resync {
                    self.splitter.after_bad_body();
                }
                Some(Event::Unusable { code, reason })
            }
            incoming => Some(Event::Message(body, incoming)),
        }
    }
}

/// A whole frame around a body, as written to either side.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn error_reply(id: Id, code: ErrorCode, message: String) -> Vec<u8> {
    let error = Error {
        code,
        message: message.into(),
        data: None,
    };
    let body = serde_json::to_vec(&Response::from_error(id, error)).unwrap_or_default();
    frame(&body)
}

/// Why serving ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The client sent `exit`.
    Exit,
    /// The input closed (the editor went away) or could not be read.
    InputClosed,
    /// tower-lsp stopped by itself (an `exit` sent as a request).
    ServiceEnded,
    /// The output could not be written.
    OutputClosed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub ending: Ending,
    /// A `shutdown` request came before the end.
    pub shutdown_requested: bool,
}

impl Outcome {
    /// LSP: 0 after `shutdown` then `exit`, 1 for `exit` without `shutdown`.
    pub fn exit_code(self) -> u8 {
        match self.ending {
            Ending::Exit | Ending::ServiceEnded if !self.shutdown_requested => 1,
            _ => 0,
        }
    }
}

/// Serves `input`/`output` through `service`, which gets the two ends of the pipes it
/// reads and writes (tower-lsp's `Server::serve`). When `run` returns, the service's
/// future has been dropped: every request still running (an ask) is cancelled.
pub async fn run<R, W, S, F>(input: R, output: W, service: S) -> Outcome
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
    S: FnOnce(DuplexStream, DuplexStream) -> F,
    F: Future<Output = ()>,
{
    let (to_client, queued) = mpsc::channel(OUTPUT_QUEUE);
    let writer = tokio::spawn(write_output(output, queued));
    let (to_service, service_input) = tokio::io::duplex(PIPE);
    let (service_output, from_service) = tokio::io::duplex(PIPE);
    tokio::spawn(forward_output(from_service, to_client.clone()));

    let mut shutdown_requested = false;
    let ending = {
        let service = service(service_input, service_output);
        let reading = read_input(input, to_service, to_client, &mut shutdown_requested);
        tokio::select! {
            ending = reading => ending,
            () = service => Ending::ServiceEnded,
        }
        // Both futures are dropped here: tower-lsp's in-flight handlers with them.
    };
    // The output forwarder ends with the service's pipe; what is queued still goes out.
    let _ = tokio::time::timeout(FLUSH_TIMEOUT, writer).await;
    Outcome {
        ending,
        shutdown_requested,
    }
}

async fn read_input<R: AsyncRead + Unpin>(
    mut input: R,
    mut to_service: DuplexStream,
    to_client: mpsc::Sender<Vec<u8>>,
    shutdown_requested: &mut bool,
) -> Ending {
    let mut buf = BytesMut::with_capacity(64 << 10);
    let mut reader = Reader::default();
    loop {
        while let Some(event) = reader.next(&mut buf) {
            let (body, incoming) = match event {
                Event::Message(body, incoming) => (body, incoming),
                Event::Unusable { code, reason } => {
                    let reply = error_reply(Id::Null, code, reason);
                    if to_client.send(reply).await.is_err() {
                        return Ending::OutputClosed;
                    }
                    continue;
                }
            };
            match incoming {
                Incoming::Exit => return Ending::Exit,
                Incoming::DollarRequest(id) => {
                    tracing::debug!("no handler for this `$/` request: -32601");
                    let message = "method not found".to_string();
                    let reply = error_reply(id, ErrorCode::MethodNotFound, message);
                    if to_client.send(reply).await.is_err() {
                        return Ending::OutputClosed;
                    }
                    continue;
                }
                Incoming::Shutdown => *shutdown_requested = true,
                Incoming::Forward | Incoming::Unusable { .. } => {}
            }
            let header = format!("Content-Length: {}\r\n\r\n", body.len());
            let sent = async {
                to_service.write_all(header.as_bytes()).await?;
                to_service.write_all(&body).await
            };
            if sent.await.is_err() {
                return Ending::ServiceEnded;
            }
        }
        match input.read_buf(&mut buf).await {
            Ok(0) => {
                if !buf.is_empty() {
                    // Nobody is left to read a reply: log it only.
                    tracing::debug!(bytes = buf.len(), "input closed inside a frame");
                }
                return Ending::InputClosed;
            }
            Ok(_) => {}
            Err(error) => {
                tracing::warn!("cannot read the input: {error}");
                return Ending::InputClosed;
            }
        }
    }
}

/// Cuts tower-lsp's output into whole frames for the writer.
async fn forward_output(mut from_service: DuplexStream, to_client: mpsc::Sender<Vec<u8>>) {
    let mut buf = BytesMut::with_capacity(64 << 10);
    let mut splitter = Splitter::default();
    loop {
        while let Some(cut) = splitter.next(&mut buf) {
            match cut {
                Frame::Body(body) => {
                    if to_client.send(frame(&body)).await.is_err() {
                        return;
                    }
                }
                Frame::BadHeaders(reason) => tracing::error!("tower-lsp wrote {reason}"),
            }
        }
        match from_service.read_buf(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// The only writer of the output: one whole frame at a time.
async fn write_output<W: AsyncWrite + Unpin>(mut output: W, mut queued: mpsc::Receiver<Vec<u8>>) {
    while let Some(frame) = queued.recv().await {
        if let Err(error) = output.write_all(&frame).await {
            tracing::warn!("cannot write to the client: {error}");
            return;
        }
        if queued.is_empty() && output.flush().await.is_err() {
            return;
        }
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_all(input: &[u8]) -> Vec<Frame> {
        let mut splitter = Splitter::default();
        let mut buf = BytesMut::from(input);
        std::iter::from_fn(|| splitter.next(&mut buf)).collect()
    }

    fn body(text: &str) -> Frame {
        Frame::Body(BytesMut::from(text.as_bytes()))
    }

    #[test]
    fn header_names_are_case_insensitive_and_content_type_is_any() {
        let frames = split_all(
            b"content-length: 2\r\n\r\n{}CONTENT-LENGTH:2\r\ncontent-type: application/vscode-jsonrpc\r\n\r\n[]\
              Content-Type: application/vscode-jsonrpc; charset=UTF-8\r\nContent-Length: 1\r\n\r\n1",
        );
        assert_eq!(frames, vec![body("{}"), body("[]"), body("1")]);
    }

    #[test]
    fn a_frame_of_length_zero_does_not_hold_up_the_next() {
        let frames = split_all(b"Content-Length: 0\r\n\r\nContent-Length: 2\r\n\r\n{}");
        assert_eq!(frames, vec![body(""), body("{}")]);
    }

    #[test]
    fn a_bad_header_is_one_frame_and_the_next_frame_is_read() {
        for bad in [
            "Content-Length: abc\r\n\r\n{\"x\":1}",
            "Content-Length: -4\r\n\r\n{}",
            "Content-Type: application/vscode-jsonrpc\r\n\r\n{}",
            "garbage without a colon\r\n\r\n",
            "Content-Length: 99999999999999999999\r\n\r\n",
            "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
        ] {
            let input = format!("{bad}Content-Length: 2\r\n\r\n{{}}");
            let frames = split_all(input.as_bytes());
            assert_eq!(frames.len(), 2, "{bad:?}: {frames:?}");
            assert!(matches!(frames[0], Frame::BadHeaders(_)), "{bad:?}");
            assert_eq!(frames[1], body("{}"), "{bad:?}");
        }
    }

    #[test]
    fn a_header_block_without_a_length_is_skipped_with_its_body() {
        let frames = split_all(
            b"Content-Length: 2x\r\n\r\n{\"a\":[1,\"}\"]}X-Other: 1\r\n\r\n{}Content-Length: 2\r\n\r\n{}",
        );
        assert!(matches!(frames[0], Frame::BadHeaders(_)), "{frames:?}");
        assert!(matches!(frames[1], Frame::BadHeaders(_)), "{frames:?}");
        assert_eq!(&frames[2..], &[body("{}")]);
    }

    #[test]
    fn after_a_body_that_is_not_json_garbage_is_skipped_and_a_frame_is_read() {
        let mut splitter = Splitter::default();
        let mut buf = BytesMut::from(
            &b"Content-Length: 3\r\n\r\n{\"jsonrpc\":1}\r\n\r\nContent-Length: 2\r\n\r\n{}"[..],
        );
        assert_eq!(splitter.next(&mut buf), Some(body("{\"j")));
        splitter.after_bad_body();
        assert_eq!(splitter.next(&mut buf), Some(body("{}")));
        assert_eq!(splitter.next(&mut buf), None);
        let mut buf = BytesMut::from(&b"Content-Length: 1\r\n\r\n{Content-Length: 2\r\n\r\n{}"[..]);
        assert_eq!(splitter.next(&mut buf), Some(body("{")));
        splitter.after_bad_body();
        assert_eq!(splitter.next(&mut buf), Some(body("{}")));
    }

    #[test]
    fn garbage_glued_to_a_header_costs_one_bad_frame() {
        let frames = split_all(b"xyzContent-Length: 2\r\n\r\n{}");
        assert!(matches!(frames[0], Frame::BadHeaders(_)));
        assert_eq!(&frames[1..], &[body("{}")]);
    }

    #[test]
    fn garbage_before_a_header_costs_one_bad_frame() {
        let frames = split_all(b"junk\r\nContent-Length: 2\r\n\r\n{}");
        assert!(matches!(frames[0], Frame::BadHeaders(_)));
        assert_eq!(&frames[1..], &[body("{}")]);
    }

    #[test]
    fn headers_without_an_end_are_refused_past_the_limit() {
        let mut input = vec![b'x'; MAX_HEADERS + 1];
        input.extend_from_slice(b"Content-Length: 2\r\n\r\n{}");
        let frames = split_all(&input);
        assert!(matches!(frames[0], Frame::BadHeaders(_)));
        assert_eq!(&frames[1..], &[body("{}")]);
    }

    #[test]
    fn bodies_are_classified_by_what_tower_lsp_decodes() {
        let unusable = |body: &str| match classify(body.as_bytes()) {
            Incoming::Unusable { code, .. } => code.code(),
            other => panic!("{body}: {other:?}"),
        };
        assert_eq!(unusable(""), -32700);
        assert_eq!(unusable("{\"jsonrpc\":"), -32700);
        assert_eq!(unusable("not json"), -32700);
        assert!(matches!(
            classify(b"{\"a\":\"\xff\"}"),
            Incoming::Unusable {
                code: ErrorCode::ParseError,
                ..
            }
        ));
        for invalid in [
            r#"[{"jsonrpc":"2.0","id":1,"method":"shutdown"}]"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
            r#"{"id":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"42"#,
            r#"null"#,
        ] {
            assert_eq!(unusable(invalid), -32600, "{invalid}");
        }
        let ok = |body: &str| classify(body.as_bytes());
        assert_eq!(
            ok(r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#),
            Incoming::Forward
        );
        assert_eq!(
            ok(r#"{"jsonrpc":"2.0","id":"a","method":"x","params":{}}"#),
            Incoming::Forward
        );
        assert_eq!(
            ok(r#"{"jsonrpc":"2.0","method":"$/setTrace","params":{}}"#),
            Incoming::Forward
        );
        assert_eq!(
            ok(r#"{"jsonrpc":"2.0","id":1,"result":null}"#),
            Incoming::Forward
        );
        assert_eq!(
            ok(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#),
            Incoming::Shutdown
        );
        assert_eq!(ok(r#"{"jsonrpc":"2.0","method":"exit"}"#), Incoming::Exit);
        assert_eq!(
            ok(r#"{"jsonrpc":"2.0","id":7,"method":"$/unknown"}"#),
            Incoming::DollarRequest(Id::Number(7))
        );
    }

    #[test]
    fn error_replies_have_a_null_id() {
        let reply = error_reply(Id::Null, ErrorCode::InvalidRequest, "why".into());
        let text = String::from_utf8(reply).unwrap();
        let (_, body) = text.split_once("\r\n\r\n").unwrap();
        let value: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(value["id"], serde_json::Value::Null);
        assert_eq!(value["error"]["code"], -32600);
        assert_eq!(value["error"]["message"], "why");
    }
}

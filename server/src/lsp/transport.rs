//! JSON-RPC framing between the editor's stdio and tower-lsp: reads frames tolerantly
//! (cut by `frames.rs`, judged by `classify.rs`), answers the ones it cannot use (one
//! error reply each, on the request's id when it can be read, else `id: null`) and the
//! `$/` requests tower-lsp would leave unanswered, passes the rest on re-framed, and
//! owns the output so replies never interleave. Ends at `exit` or when the input closes,
//! once the requests read before then are answered (asks aside: they are cancelled).
//!
//! Why a layer in front: tower-lsp's decoder is strict (case-sensitive `Content-Length`,
//! a `Content-Type` must carry a charset, a frame of length 0 stalls the one after it)
//! and the stream it reads from stops at the first frame it cannot decode, which ended
//! the server. Everything handed to it here is a frame it decodes: the body parsed with
//! the same types it uses, behind a canonical `Content-Length` header.

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio::sync::{mpsc, Notify};
use tokio_util::bytes::BytesMut;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Id, Response};

use super::client_calls::ClientCalls;

mod classify;
mod frames;

pub use classify::{classify, Incoming};
pub use frames::{Frame, Splitter, MAX_BODY};

/// Bytes buffered in each in-process pipe to and from tower-lsp.
const PIPE: usize = 256 << 10;
/// Whole frames waiting for the writer.
const OUTPUT_QUEUE: usize = 256;
/// How long queued output may take to reach the client once serving ends.
const FLUSH_TIMEOUT: Duration = Duration::from_millis(500);
/// How long the replies still owed when the input ends may take (see [`Owed`]).
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);
/// Requests whose reply may take minutes: not waited for when serving ends.
const LONG_METHODS: [&str; 2] = ["copilot/ask", "workspace/executeCommand"];

/// The replies the client is owed by requests that end quickly (every request passed
/// on but an ask), by id, until each goes out. When the input ends (`exit`, or a
/// client that wrote `initialize`, `shutdown` and `exit` at once and closed its end),
/// serving goes on until they are paid, so every request gets its one reply; a running
/// ask is not waited for.
#[derive(Default)]
struct Owed {
    ids: Mutex<HashSet<String>>,
    paid: Notify,
}

/// A message's `id` and `method`, read again from its body (two fields, the rest
/// skipped).
fn head(body: &[u8]) -> (Option<String>, Option<String>) {
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(default)]
        id: Option<serde_json::Value>,
        #[serde(default)]
        method: Option<String>,
    }
    match serde_json::from_slice::<Head>(body) {
        Ok(head) => (head.id.map(|id| id.to_string()), head.method),
        Err(_) => (None, None),
    }
}

impl Owed {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.ids
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A request passed on to the service.
    fn request(&self, body: &[u8]) {
        if let (Some(id), Some(method)) = head(body) {
            if !LONG_METHODS.contains(&method.as_str()) {
                self.lock().insert(id);
            }
        }
    }

    /// A message the service wrote: a reply pays its request.
    fn reply(&self, body: &[u8]) {
        if let (Some(id), None) = head(body) {
            let mut ids = self.lock();
            if ids.remove(&id) && ids.is_empty() {
                self.paid.notify_one();
            }
        }
    }

    async fn all_paid(&self) {
        while !self.lock().is_empty() {
            self.paid.notified().await;
        }
    }
}

/// What the input holds next, frame by frame.
#[derive(Debug, PartialEq)]
pub enum Event {
    /// A message (never [`Incoming::Unusable`]) and its body.
    Message(BytesMut, Incoming),
    /// A frame that gets one error reply on `id` (already logged).
    Unusable {
        id: Id,
        code: ErrorCode,
        reason: String,
    },
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
                let id = Id::Null;
                return Some(Event::Unusable { id, code, reason });
            }
        };
        match classify(&body) {
            Incoming::Unusable {
                id,
                code,
                reason,
                resync,
            } => {
                tracing::warn!(length = body.len(), "unusable frame: {reason}");
                if resync {
                    self.splitter.after_bad_body();
                }
                Some(Event::Unusable { id, code, reason })
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
pub async fn run<R, W, S, F>(input: R, output: W, calls: Arc<ClientCalls>, service: S) -> Outcome
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
    S: FnOnce(DuplexStream, DuplexStream) -> F,
    F: Future<Output = ()>,
{
    let (to_client, queued) = mpsc::channel(OUTPUT_QUEUE);
    let writer = tokio::spawn(write_output(output, queued));
    calls.attach(to_client.clone());
    let (to_service, service_input) = tokio::io::duplex(PIPE);
    let (service_output, from_service) = tokio::io::duplex(PIPE);
    let owed = Arc::new(Owed::default());
    tokio::spawn(forward_output(
        from_service,
        to_client.clone(),
        owed.clone(),
    ));

    let mut shutdown_requested = false;
    let ending = {
        let service = service(service_input, service_output);
        tokio::pin!(service);
        let reading = read_input(
            input,
            to_service,
            to_client,
            &mut shutdown_requested,
            &owed,
            &calls,
        );
        let ending = tokio::select! {
            ending = reading => ending,
            () = &mut service => Ending::ServiceEnded,
        };
        // The input is done (its pipe to the service closed with `reading`): the
        // service answers what it was sent before, asks aside.
        if matches!(ending, Ending::Exit | Ending::InputClosed) {
            tokio::select! {
                () = owed.all_paid() => {}
                () = &mut service => {}
                () = tokio::time::sleep(DRAIN_TIMEOUT) => {}
            }
        }
        ending
        // The service is dropped here: tower-lsp's in-flight handlers (asks) with it.
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
    owed: &Owed,
    calls: &ClientCalls,
) -> Ending {
    let mut buf = BytesMut::with_capacity(64 << 10);
    let mut reader = Reader::default();
    loop {
        while let Some(event) = reader.next(&mut buf) {
            let (body, incoming) = match event {
                Event::Message(body, incoming) => (body, incoming),
                Event::Unusable { id, code, reason } => {
                    let reply = error_reply(id, code, reason);
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
                Incoming::Shutdown => {
                    *shutdown_requested = true;
                    owed.request(&body);
                }
                // Replies to our own model calls, and their deltas, end here.
                Incoming::Forward if calls.intercept(&body) => continue,
                Incoming::Forward => owed.request(&body),
                Incoming::Unusable { .. } => {}
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

/// Cuts tower-lsp's output into whole frames for the writer, noting the replies paid.
async fn forward_output(
    mut from_service: DuplexStream,
    to_client: mpsc::Sender<Vec<u8>>,
    owed: Arc<Owed>,
) {
    let mut buf = BytesMut::with_capacity(64 << 10);
    let mut splitter = Splitter::default();
    loop {
        while let Some(cut) = splitter.next(&mut buf) {
            match cut {
                Frame::Body(body) => {
                    let sent = to_client.send(frame(&body)).await;
                    // Queued for the writer, which runs on after the service ends.
                    owed.reply(&body);
                    if sent.is_err() {
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

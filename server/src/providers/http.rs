//! Sending one provider call over HTTP: the reqwest client, the call's deadline, retries
//! with backoff, reading the reply whole or as a stream, and error texts without the key.
//!
//! Everything runs inside the future the caller awaits; nothing is spawned. Dropping that
//! future drops the reqwest request or response, which closes the connection: that is
//! how cancelling an ask reaches the provider.
//!
//! Streamed pieces go to the caller's sink as they are decoded, and an attempt that has
//! sent anything to the sink is never rerun: a retry from scratch happens only while the
//! caller has seen nothing of the reply, so it can never show text twice.
//!
//! An empty 200 stream (llama-cpp-python answers a streamed request with tools and
//! `tool_choice` that way) is rerun once at once without streaming. That fallback is for
//! that one call only: the next call streams again, because one empty reply may be a
//! passing fault (a proxy, a server restarting) and turning streaming off for the rest
//! of the process would cost every later answer its streaming.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, ACCEPT, CONTENT_TYPE};
use tokio::time::{timeout_at, Instant};

use super::retry::{self, Failure};
use super::sse::{SseEvent, SseParser, StreamDecoder, StreamError};
use super::{
    ApiKey, ChatResponse, Decoded, ProviderConfig, ProviderError, StreamEvent, StreamSink,
};

mod words;
use words::error_reason;

/// Longest excerpt of an error body kept in a message.
const MAX_MESSAGE_CHARS: usize = 300;

/// One request, ready to send as many times as the retries need.
pub(crate) struct Outgoing {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
    pub stream: bool,
}

/// How a vendor's replies decode: a whole JSON body, or a stream of events.
pub(crate) struct Decoders {
    pub body: fn(&[u8]) -> Result<Decoded, ProviderError>,
    pub stream: fn() -> Box<dyn StreamDecoder>,
}

pub(crate) struct Transport {
    /// Building a client only fails when the TLS backend cannot start; that is reported
    /// on the first call rather than panicking while the configuration is applied.
    client: Result<reqwest::Client, String>,
    base_url: String,
    api_key: ApiKey,
    request_timeout: Duration,
    max_retries: u32,
    /// `stream` as configured; every call starts from it.
    stream: bool,
}

/// A failed attempt: the error to report and what the retry policy should know of it.
struct AttemptError {
    error: ProviderError,
    kind: FailureKind,
    retry_after_ms: Option<String>,
    retry_after: Option<String>,
}

/// An owned `retry::Failure`, kept until the decision is made.
enum FailureKind {
    Connect,
    TimeoutBeforeHeaders,
    TimeoutAfterHeaders,
    Status {
        status: u16,
        body: String,
    },
    BrokenBeforeOutput,
    BrokenAfterOutput,
    Unusable,
    /// A 200 whose streamed body held not one byte.
    EmptyStream,
}

impl FailureKind {
    fn as_failure(&self) -> Failure<'_> {
        match self {
            FailureKind::Connect => Failure::Connect,
            FailureKind::TimeoutBeforeHeaders => Failure::TimeoutBeforeHeaders,
            FailureKind::TimeoutAfterHeaders => Failure::TimeoutAfterHeaders,
            FailureKind::Status { status, body } => Failure::Status {
                status: *status,
                body,
            },
            FailureKind::BrokenBeforeOutput => Failure::BrokenBeforeOutput,
            FailureKind::BrokenAfterOutput => Failure::BrokenAfterOutput,
            FailureKind::Unusable => Failure::Unusable,
            // Only ever retried by the fallback to a whole reply, never by the policy.
            FailureKind::EmptyStream => Failure::Unusable,
        }
    }
}

/// Boxed: the error is rare and large, the success path should not pay for its size.
type AttemptResult = Result<Decoded, Box<AttemptError>>;

impl AttemptError {
    fn new(kind: FailureKind, error: ProviderError) -> Box<Self> {
        Box::new(AttemptError {
            error,
            kind,
            retry_after_ms: None,
            retry_after: None,
        })
    }
}

impl Transport {
    pub fn new(config: &ProviderConfig) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|e| error_reason(&e));
        Transport {
            client,
            base_url: config.base_url.trim_end_matches('/').to_string(),
            api_key: config.api_key.clone(),
            request_timeout: config.request_timeout,
            max_retries: config.max_retries,
            stream: config.stream,
        }
    }

    /// `{base_url}{path}`, with any trailing slash of the base dropped first.
    pub fn endpoint(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }

    /// Sends the request (`build(stream)` makes its body), retrying as the SDKs do, and
    /// decodes the reply, reporting streamed pieces to `sink` as they arrive.
    pub async fn call(
        &self,
        build: &(dyn Fn(bool) -> Outgoing + Send + Sync),
        decoders: &Decoders,
        sink: StreamSink<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let mut outgoing = build(self.stream);
        let mut retries_done = 0;
        let mut attempts = 0;
        loop {
            attempts += 1;
            match self.attempt(&outgoing, decoders, sink).await {
                Ok(decoded) => {
                    return Ok(ChatResponse {
                        turn: decoded.turn,
                        finish: decoded.finish,
                        usage: decoded.usage,
                        request_bytes: outgoing.body.len(),
                        attempts,
                    })
                }
                // Once per call: the rerun does not stream, so it cannot end here again.
                Err(failed) if matches!(failed.kind, FailureKind::EmptyStream) => {
                    tracing::warn!(
                        "{} answered a streamed request with an empty body; asking again without streaming (this call only)",
                        self.api_key.redact(&self.base_url)
                    );
                    outgoing = build(false);
                }
                Err(failed) => {
                    let error = self.redact_error(failed.error);
                    if retries_done >= self.max_retries
                        || !retry::is_retryable(failed.kind.as_failure())
                    {
                        return Err(error);
                    }
                    let delay = retry::retry_delay(
                        retries_done,
                        failed.retry_after_ms.as_deref(),
                        failed.retry_after.as_deref(),
                        SystemTime::now(),
                        fastrand::f64(),
                    );
                    // In words, once per retry: the command line shows it as it is.
                    tracing::warn!("{error}; retrying in {:.1} s", delay.as_secs_f64());
                    tokio::time::sleep(delay).await;
                    retries_done += 1;
                }
            }
        }
    }

    /// One GET of `{base_url}{path}` (the model listing, not a chat call), read whole
    /// within the call's deadline. Not retried: a listing that fails is only a shorter
    /// menu, and the next session asks again.
    pub async fn get(
        &self,
        path: &str,
        headers: &[(&'static str, String)],
    ) -> Result<Vec<u8>, ProviderError> {
        let client = self
            .client
            .as_ref()
            .map_err(|reason| self.connect_error(reason.clone()))?;
        let deadline = Instant::now() + self.request_timeout;
        let mut request = client
            .get(self.endpoint(path))
            .header(ACCEPT, "application/json");
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let response = match timeout_at(deadline, request.send()).await {
            Err(_elapsed) => return Err(self.redact_error(self.timeout_error())),
            Ok(Err(e)) => return Err(self.redact_error(self.connect_error(error_reason(&e)))),
            Ok(Ok(response)) => response,
        };
        if !response.status().is_success() {
            return Err(self.redact_error(self.status_error(response, deadline).await.error));
        }
        match timeout_at(deadline, response.bytes()).await {
            Err(_elapsed) => Err(self.redact_error(self.timeout_error())),
            Ok(Err(e)) => Err(ProviderError::StreamCut(
                self.api_key.redact(&error_reason(&e)),
            )),
            Ok(Ok(body)) => Ok(body.to_vec()),
        }
    }

    async fn attempt(
        &self,
        outgoing: &Outgoing,
        decoders: &Decoders,
        sink: StreamSink<'_>,
    ) -> AttemptResult {
        let client = self.client.as_ref().map_err(|reason| {
            AttemptError::new(FailureKind::Unusable, self.connect_error(reason.clone()))
        })?;
        let deadline = Instant::now() + self.request_timeout;
        let mut request = client
            .post(&outgoing.url)
            .header(CONTENT_TYPE, "application/json")
            .body(outgoing.body.clone());
        if outgoing.stream {
            request = request.header(ACCEPT, "text/event-stream");
        }
        for (name, value) in &outgoing.headers {
            request = request.header(*name, value);
        }

        let response = match timeout_at(deadline, request.send()).await {
            Err(_elapsed) => {
                return Err(AttemptError::new(
                    FailureKind::TimeoutBeforeHeaders,
                    self.timeout_error(),
                ))
            }
            Ok(Err(e)) => {
                return Err(AttemptError::new(
                    FailureKind::Connect,
                    self.connect_error(error_reason(&e)),
                ))
            }
            Ok(Ok(response)) => response,
        };

        let status = response.status();
        if !status.is_success() {
            return Err(self.status_error(response, deadline).await);
        }
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        // Some OpenAI-compatible servers ignore `stream: true` and answer in one piece.
        if outgoing.stream && !is_json {
            self.read_stream(response, deadline, decoders, sink).await
        } else {
            self.read_whole(response, deadline, decoders, outgoing.stream)
                .await
        }
    }

    /// `streamed`: the request asked for a stream (and got a JSON content type).
    async fn read_whole(
        &self,
        response: reqwest::Response,
        deadline: Instant,
        decoders: &Decoders,
        streamed: bool,
    ) -> AttemptResult {
        let body = match timeout_at(deadline, response.bytes()).await {
            Err(_elapsed) => {
                return Err(AttemptError::new(
                    FailureKind::TimeoutAfterHeaders,
                    self.timeout_error(),
                ))
            }
            // Nothing of a whole-body reply was used yet, so a rerun is clean.
            Ok(Err(e)) => {
                return Err(AttemptError::new(
                    FailureKind::BrokenBeforeOutput,
                    ProviderError::StreamCut(error_reason(&e)),
                ))
            }
            Ok(Ok(body)) => body,
        };
        if body.iter().all(u8::is_ascii_whitespace) {
            let kind = if streamed {
                FailureKind::EmptyStream
            } else {
                FailureKind::Unusable
            };
            return Err(AttemptError::new(
                kind,
                ProviderError::Decode(format!("{} answered 200 with an empty body", self.base_url)),
            ));
        }
        (decoders.body)(&body).map_err(|e| AttemptError::new(FailureKind::Unusable, e))
    }

    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        deadline: Instant,
        decoders: &Decoders,
        sink: StreamSink<'_>,
    ) -> AttemptResult {
        let mut parser = SseParser::default();
        let mut decoder = (decoders.stream)();
        // Whatever reached the sink makes this attempt final (see the file's comment).
        let emitted = AtomicBool::new(false);
        let tracking = |event: StreamEvent<'_>| {
            emitted.store(true, Ordering::Relaxed);
            sink(event);
        };
        let sink: StreamSink<'_> = &tracking;
        let mut received_bytes = 0usize;
        let broken = |decoder: &dyn StreamDecoder, reason: String| {
            let kind = if decoder.has_output() || emitted.load(Ordering::Relaxed) {
                FailureKind::BrokenAfterOutput
            } else {
                FailureKind::BrokenBeforeOutput
            };
            AttemptError::new(kind, ProviderError::StreamCut(reason))
        };
        let fed = |decoder: &mut Box<dyn StreamDecoder>, event: &SseEvent| match decoder
            .feed(event, sink)
        {
            Ok(()) => Ok(()),
            Err(StreamError::Malformed(reason)) => Err(AttemptError::new(
                FailureKind::Unusable,
                ProviderError::Decode(reason),
            )),
            Err(StreamError::Provider(reason)) => Err(broken(decoder.as_ref(), reason)),
        };
        loop {
            let chunk = match timeout_at(deadline, response.chunk()).await {
                Err(_elapsed) => {
                    return Err(AttemptError::new(
                        FailureKind::TimeoutAfterHeaders,
                        self.timeout_error(),
                    ))
                }
                Ok(Err(e)) => return Err(broken(decoder.as_ref(), error_reason(&e))),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(chunk))) => chunk,
            };
            received_bytes += chunk.len();
            for event in parser.push(&chunk) {
                fed(&mut decoder, &event)?;
                if decoder.is_complete() {
                    // Anything after the end marker is not part of the turn; returning
                    // here also spares waiting on a server that keeps the stream open.
                    return decoder
                        .finish()
                        .map_err(|e| AttemptError::new(FailureKind::Unusable, e));
                }
            }
        }
        if received_bytes == 0 {
            return Err(AttemptError::new(
                FailureKind::EmptyStream,
                ProviderError::StreamCut(format!(
                    "{} answered 200 with an empty stream; try `stream: false`",
                    self.base_url
                )),
            ));
        }
        if let Some(event) = parser.finish() {
            match decoder.feed(&event, sink) {
                // A half-received last event is just the cut, reported below.
                Ok(()) | Err(StreamError::Malformed(_)) => {}
                Err(StreamError::Provider(reason)) => return Err(broken(decoder.as_ref(), reason)),
            }
        }
        if !decoder.is_complete() {
            return Err(broken(
                decoder.as_ref(),
                "the connection closed before the end of the reply".to_string(),
            ));
        }
        decoder
            .finish()
            .map_err(|e| AttemptError::new(FailureKind::Unusable, e))
    }

    async fn status_error(
        &self,
        response: reqwest::Response,
        deadline: Instant,
    ) -> Box<AttemptError> {
        let status = response.status();
        let retry_after_ms = header_text(response.headers(), "retry-after-ms");
        let retry_after = header_text(response.headers(), "retry-after");
        // The body only improves the message; a body that never comes must not hide the
        // status, so a failure to read it leaves the message to the status alone.
        let body = match timeout_at(deadline, response.bytes()).await {
            Ok(Ok(body)) => String::from_utf8_lossy(&body).into_owned(),
            _ => String::new(),
        };
        let message = body_message(&body)
            .unwrap_or_else(|| status.canonical_reason().unwrap_or("").to_string());
        // Redact before shortening: cutting first could leave half a key that no longer
        // matches.
        let message = shorten(&self.api_key.redact(&message), MAX_MESSAGE_CHARS);
        Box::new(AttemptError {
            error: ProviderError::Status {
                status: status.as_u16(),
                message,
            },
            kind: FailureKind::Status {
                status: status.as_u16(),
                body,
            },
            retry_after_ms,
            retry_after,
        })
    }

    fn connect_error(&self, reason: String) -> ProviderError {
        ProviderError::Connect {
            url: self.base_url.clone(),
            reason,
        }
    }

    fn timeout_error(&self) -> ProviderError {
        ProviderError::Timeout {
            url: self.base_url.clone(),
            // Whole seconds, rounded up, so a sub-second limit does not read as "0 s".
            secs: self.request_timeout.as_secs()
                + u64::from(self.request_timeout.subsec_nanos() > 0),
        }
    }

    /// Every error text passes through here on its way out, so the key cannot appear in
    /// one whatever the server echoed or the URL contained.
    fn redact_error(&self, error: ProviderError) -> ProviderError {
        let key = &self.api_key;
        match error {
            ProviderError::Connect { url, reason } => ProviderError::Connect {
                url: key.redact(&url),
                reason: key.redact(&reason),
            },
            ProviderError::Timeout { url, secs } => ProviderError::Timeout {
                url: key.redact(&url),
                secs,
            },
            ProviderError::Status { status, message } => ProviderError::Status {
                status,
                message: key.redact(&message),
            },
            ProviderError::StreamCut(reason) => ProviderError::StreamCut(key.redact(&reason)),
            ProviderError::Decode(reason) => ProviderError::Decode(key.redact(&reason)),
            ProviderError::Refused(reason) => ProviderError::Refused(key.redact(&reason)),
        }
    }
}

fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// The human part of an error body: `error.message` (OpenAI and Anthropic both), a bare
/// `error` or `message` string, else the trimmed body itself.
fn body_message(body: &str) -> Option<String> {
    let body = body.trim();
    if body.is_empty() {
        return None;
    }
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(body) {
        let message = json
            .pointer("/error/message")
            .or_else(|| json.get("error"))
            .or_else(|| json.get("message"))
            .and_then(|v| v.as_str());
        if let Some(message) = message {
            return Some(message.to_string());
        }
    }
    Some(body.to_string())
}

/// The first `max_chars` characters of a one-line version of `text`, with `…` when cut.
fn shorten(text: &str, max_chars: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_messages() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                r#"{"error":{"message":"bad key","type":"x"}}"#,
                Some("bad key"),
            ),
            (
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                Some("Overloaded"),
            ),
            (r#"{"error":"model not found"}"#, Some("model not found")),
            (r#"{"message":"nope"}"#, Some("nope")),
            (r#"{"detail":"x"}"#, Some(r#"{"detail":"x"}"#)),
            ("  plain text \n", Some("plain text")),
            ("", None),
        ];
        for &(body, expected) in cases {
            assert_eq!(body_message(body).as_deref(), expected, "{body}");
        }
    }

    #[test]
    fn shortening_is_char_safe_and_one_line() {
        assert_eq!(shorten("a\n  b", 10), "a b");
        assert_eq!(shorten("ééééé", 3), "ééé…");
        assert_eq!(shorten("abc", 3), "abc");
    }

    #[test]
    fn redaction_happens_before_shortening() {
        let config = ProviderConfig {
            kind: super::super::ProviderKind::OpenAi,
            base_url: "http://127.0.0.1:1/v1/".into(),
            model: "m".into(),
            api_key: ApiKey("sk-secret-123456".into()),
            stream: false,
            request_timeout: Duration::from_millis(1500),
            connect_timeout: Duration::from_secs(1),
            max_retries: 0,
            max_tokens: 10,
        };
        let transport = Transport::new(&config);
        assert_eq!(
            transport.endpoint("/chat/completions"),
            "http://127.0.0.1:1/v1/chat/completions"
        );
        let padded = format!("{}sk-secret-123456", "x".repeat(MAX_MESSAGE_CHARS - 5));
        let message = shorten(&transport.api_key.redact(&padded), MAX_MESSAGE_CHARS);
        assert!(!message.contains("sk-sec"), "{message}");
        assert_eq!(
            transport.timeout_error().to_string(),
            "provider did not answer within 2 s (http://127.0.0.1:1/v1)"
        );
    }
}

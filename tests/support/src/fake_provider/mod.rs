//! A scripted fake model provider: a real HTTP/1.1 server on 127.0.0.1 speaking the OpenAI
//! Chat Completions and Anthropic Messages formats, streamed and not, that plays one
//! script step per model request and records every request it receives.
//!
//! Tests use [`FakeProvider`] (it runs on its own thread and runtime, so plain synchronous
//! `#[test]`s can drive a server binary against it); the `fake-provider` binary wraps the
//! same server for use from editors and scripts.
//!
//! A script is `{"steps": [STEP, ...]}`, one step per model request: a model turn
//! (`text`, `tool_calls: [{id, name, arguments}]`, `finish`, `usage: {input_tokens,
//! output_tokens, cached_input_tokens?}`, `delay_ms` before the headers, `chunk_delay_ms`
//! before each streamed event after the first, `cut_after_bytes`, `hang_after_bytes`), an
//! HTTP error (`status`, `headers`, `body`, `delay_ms`), `{"hang": true}`, or a raw body
//! (`raw`, `content_type`, and the same limits).
//!
//! Prompt caching is simulated: a request whose tools and system prompt equal the previous
//! request's (of the same wire format) reports them, and the messages the two share from
//! the start, as cached input tokens. For Anthropic only what the previous request marked
//! with `cache_control` counts, as with the real API.

mod render;
mod script;
mod server;

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{json, Value};

use script::Step;

/// One request as the fake received it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    /// The request target as sent, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Lowercased names; repeated headers joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The body parsed as JSON, or a JSON string holding the raw text when it is not JSON.
    pub body: Value,
    /// Whether the client closed the connection before the reply was complete.
    pub disconnected: bool,
}

impl RecordedRequest {
    /// A header's value, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

struct State {
    steps: Vec<Step>,
    next_step: usize,
    requests: Vec<RecordedRequest>,
    /// When the first event carrying model output was flushed, by request index.
    first_output: BTreeMap<usize, Instant>,
    /// The prompt of the last request of each wire format, for the simulated cache.
    last_prompt: BTreeMap<&'static str, Prompt>,
}

/// What a prompt cache matches on, with `cache_control` markers taken out.
#[derive(Clone, Debug, PartialEq)]
struct Prompt {
    /// Tools and system prompt, serialized.
    head: String,
    messages: Vec<String>,
    /// Anthropic: whether the head and the messages carried a cache breakpoint.
    head_marked: bool,
    messages_marked: bool,
}

impl Prompt {
    fn of(format: render::Format, body: &Value) -> Prompt {
        let mut body = body.clone();
        let marked = |value: &Value| value.to_string().contains("\"cache_control\"");
        let head_marked = match format {
            render::Format::OpenAi => true,
            render::Format::Anthropic => marked(&body["system"]) || marked(&body["tools"]),
        };
        let messages_marked = match format {
            render::Format::OpenAi => true,
            render::Format::Anthropic => marked(&body["messages"]),
        };
        strip_cache_control(&mut body);
        let mut messages: Vec<Value> = body["messages"].as_array().cloned().unwrap_or_default();
        // OpenAI's system prompt is its first message.
        let system = match messages.first() {
            Some(first) if first["role"] == "system" => messages.remove(0),
            _ => body["system"].clone(),
        };
        let head = format!("{}{system}", body["tools"]);
        let messages = messages.iter().map(Value::to_string).collect();
        Prompt {
            head,
            messages,
            head_marked,
            messages_marked,
        }
    }

    /// Tokens of `self` a cache written by `previous` would serve (about four bytes a
    /// token, as the fake's other counts).
    fn cached_from(&self, previous: &Prompt) -> u64 {
        if self.head != previous.head || !previous.head_marked {
            return 0;
        }
        let mut bytes = self.head.len();
        if previous.messages_marked {
            bytes += self
                .messages
                .iter()
                .zip(&previous.messages)
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a.len())
                .sum::<usize>();
        }
        bytes as u64 / 4
    }
}

fn strip_cache_control(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("cache_control");
            map.values_mut().for_each(strip_cache_control);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_cache_control),
        _ => {}
    }
}

/// What the server thread and the test thread share.
pub(crate) struct Shared {
    state: Mutex<State>,
    /// Signalled whenever a request is recorded or marked disconnected.
    changed: Condvar,
    record_file: Option<PathBuf>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking test thread must not turn every later call into a second panic.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a request and, when it is a model call, hands out the next step (`None`
    /// once the script is used up). Both happen under one lock so that requests arriving
    /// on several connections get steps in the order they are recorded.
    fn record(&self, request: RecordedRequest, takes_step: bool) -> (usize, Option<Step>) {
        let mut state = self.lock();
        if let Some(path) = &self.record_file {
            let line =
                json!({"path": request.path, "headers": request.headers, "body": request.body});
            let written = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut file| writeln!(file, "{line}"));
            if let Err(e) = written {
                eprintln!("fake-provider: cannot record to {}: {e}", path.display());
            }
        }
        let step = if takes_step {
            let step = state.steps.get(state.next_step).cloned();
            state.next_step += 1;
            step
        } else {
            None
        };
        state.requests.push(request);
        let index = state.requests.len() - 1;
        drop(state);
        self.changed.notify_all();
        (index, step)
    }

    /// The cached input tokens the simulated prompt cache serves for this request, which
    /// then becomes the prompt the next request is compared with.
    fn prompt_cache(&self, format: render::Format, body: &Value) -> u64 {
        let prompt = Prompt::of(format, body);
        let key = match format {
            render::Format::OpenAi => "openai",
            render::Format::Anthropic => "anthropic",
        };
        let mut state = self.lock();
        let cached = state
            .last_prompt
            .get(key)
            .map_or(0, |previous| prompt.cached_from(previous));
        state.last_prompt.insert(key, prompt);
        cached
    }

    fn note_first_output(&self, index: usize, at: Instant) {
        self.lock().first_output.entry(index).or_insert(at);
        self.changed.notify_all();
    }

    fn mark_disconnected(&self, index: usize) {
        if let Some(request) = self.lock().requests.get_mut(index) {
            request.disconnected = true;
        }
        self.changed.notify_all();
    }
}

/// A running fake provider. Dropping it stops the server and closes its connections.
pub struct FakeProvider {
    port: u16,
    shared: Arc<Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeProvider {
    /// Starts a fake playing `script` (`{"steps": [...]}`) on a free port of 127.0.0.1.
    /// Panics on a malformed script: that is a bug in the test.
    pub fn start(script: Value) -> FakeProvider {
        FakeProvider::try_start(&script, None).unwrap_or_else(|e| panic!("fake provider: {e:#}"))
    }

    /// Like [`FakeProvider::start`], reporting errors, and optionally appending one JSON
    /// line per request (`{"path", "headers", "body"}`) to `record_file`.
    pub fn try_start(script: &Value, record_file: Option<&Path>) -> anyhow::Result<FakeProvider> {
        let steps = script::parse(script)?;
        // Bound here, not on the server thread, so the port is known (and a bind error
        // reported) before `start` returns.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").context("binding 127.0.0.1")?;
        let port = listener.local_addr()?.port();
        listener.set_nonblocking(true)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                steps,
                next_step: 0,
                requests: Vec::new(),
                first_output: BTreeMap::new(),
                last_prompt: BTreeMap::new(),
            }),
            changed: Condvar::new(),
            record_file: record_file.map(Path::to_path_buf),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the fake provider's runtime")?;
        let (shutdown, shutdown_rx) = tokio::sync::oneshot::channel();
        let server_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("fake-provider-{port}"))
            .spawn(move || {
                runtime.block_on(async move {
                    match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => server::serve(listener, server_shared, shutdown_rx).await,
                        Err(e) => eprintln!("fake-provider: {e}"),
                    }
                });
                // Dropping the runtime here drops every connection task, closing their
                // sockets, including those left hanging by the script.
            })
            .context("starting the fake provider's thread")?;
        Ok(FakeProvider {
            port,
            shared,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL for an `openai` provider.
    pub fn openai_base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// `http://127.0.0.1:PORT`, the base URL for an `anthropic` provider.
    pub fn anthropic_base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Waits until at least `count` requests have arrived, or `timeout` passes; returns
    /// the requests received by then (the caller asserts on how many).
    pub fn wait_for_requests(&self, count: usize, timeout: Duration) -> Vec<RecordedRequest> {
        let state = self.shared.lock();
        let (state, _) = self
            .shared
            .changed
            .wait_timeout_while(state, timeout, |s| s.requests.len() < count)
            .unwrap_or_else(|e| e.into_inner());
        state.requests.clone()
    }

    /// Waits until the client of request `index` (0-based) has hung up before its reply
    /// was complete; false if that has not happened within `timeout`.
    pub fn wait_for_disconnect(&self, index: usize, timeout: Duration) -> bool {
        let state = self.shared.lock();
        let (state, _) = self
            .shared
            .changed
            .wait_timeout_while(state, timeout, |s| {
                !s.requests.get(index).is_some_and(|r| r.disconnected)
            })
            .unwrap_or_else(|e| e.into_inner());
        state.requests.get(index).is_some_and(|r| r.disconnected)
    }

    /// When the streamed reply to request `index` (0-based) flushed its first event
    /// carrying model output (text or a tool call), waiting up to `timeout` for it.
    pub fn first_output_at(&self, index: usize, timeout: Duration) -> Option<Instant> {
        let state = self.shared.lock();
        let (state, _) = self
            .shared
            .changed
            .wait_timeout_while(state, timeout, |s| !s.first_output.contains_key(&index))
            .unwrap_or_else(|e| e.into_inner());
        state.first_output.get(&index).copied()
    }

    /// How many script steps have been handed out (requests past the end included).
    pub fn steps_used(&self) -> usize {
        self.shared.lock().next_step
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

//! A scripted fake model provider: a real HTTP/1.1 server on 127.0.0.1 speaking the OpenAI
//! Chat Completions and Anthropic Messages formats, streamed and not, that plays one
//! script step per model request and records every request it receives.
//!
//! Tests use [`FakeProvider`] (it runs on its own thread and runtime, so plain synchronous
//! `#[test]`s can drive a server binary against it); the `fake-provider` binary wraps the
//! same server for use from editors and scripts. The script format is described in
//! `notes/common.md`.

mod render;
mod script;
mod server;

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

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

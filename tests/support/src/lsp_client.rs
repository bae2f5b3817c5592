//! A minimal LSP client over a child process's stdio, for end-to-end tests that drive
//! the real `copilot-ls` binary as an editor would. Synchronous: a reader thread parses
//! messages into a channel; tests wait on messages with timeouts, never on sleeps.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long any single wait may take before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(30);

pub struct LspClient {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    /// Messages received but not yet consumed by a wait.
    backlog: VecDeque<Value>,
    /// Every message received, in order (for assertions over the whole session).
    pub log: Vec<Value>,
    /// Raw bytes on stdout that were not a valid LSP frame (must stay empty).
    pub stray_stdout: Arc<Mutex<Vec<u8>>>,
    pub stderr: Arc<Mutex<String>>,
    next_id: i64,
    /// Methods of server-to-client requests the test answers itself (the editor's
    /// model calls); every other request is answered with `null` as an editor would.
    answered_by_test: Vec<String>,
    /// The server's index cache (`COPILOT_LS_CACHE_DIR`), removed with the client, unless
    /// the test gave one: no test writes into the developer's `~/.cache`.
    _cache: Option<tempfile::TempDir>,
}

impl LspClient {
    /// Starts the binary with `serve`, the given environment (on top of a clean one:
    /// no provider keys leak in from the developer's shell, the index cache is a fresh
    /// temporary directory) and working directory.
    pub fn spawn(binary: &Path, cwd: &Path, env: &[(&str, &str)]) -> LspClient {
        let mut command = Command::new(binary);
        command
            .arg("serve")
            .current_dir(cwd)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", std::env::var("HOME").unwrap_or_default())
            .env("COPILOT_LS_LOG", "debug")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let cache = if env.iter().any(|(key, _)| *key == "COPILOT_LS_CACHE_DIR") {
            None
        } else {
            let dir = tempfile::Builder::new()
                .prefix("copilot-ls-cache-")
                .tempdir()
                .expect("a cache dir");
            command.env("COPILOT_LS_CACHE_DIR", dir.path());
            Some(dir)
        };
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("spawn copilot-ls");
        let stdout = child.stdout.take().expect("stdout");
        let stderr_pipe = child.stderr.take().expect("stderr");
        let (sender, incoming) = mpsc::channel();
        let stray_stdout = Arc::new(Mutex::new(Vec::new()));
        let stray = stray_stdout.clone();
        thread::spawn(move || read_messages(stdout, sender, stray));
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        thread::spawn(move || {
            let mut reader = BufReader::new(stderr_pipe);
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        LspClient {
            stdin: child.stdin.take(),
            child,
            incoming,
            backlog: VecDeque::new(),
            log: Vec::new(),
            stray_stdout,
            stderr,
            next_id: 0,
            answered_by_test: Vec::new(),
            _cache: cache,
        }
    }

    /// `initialize` with the given client capabilities and options, then `initialized`.
    pub fn initialize(&mut self, root: &Path, capabilities: Value, options: Value) -> Value {
        let uri = file_uri(root);
        let result = self.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": "root"}],
                "capabilities": capabilities,
                "initializationOptions": options,
            }),
        );
        self.notify("initialized", json!({}));
        result.expect("initialize succeeds")
    }

    pub fn send(&mut self, message: &Value) {
        let body = serde_json::to_vec(message).unwrap();
        let stdin = self.stdin.as_mut().expect("stdin open");
        write!(stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        stdin.write_all(&body).unwrap();
        stdin.flush().unwrap();
    }

    /// Writes bytes to the server's stdin as they are (frames of any shape).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Leaves the server's requests of `method` for the test to answer (`reply`).
    pub fn answer_myself(&mut self, method: &str) {
        self.answered_by_test.push(method.to_string());
    }

    /// Answers a server-to-client request: `Ok(result)` or `Err(error object)`.
    pub fn reply(&mut self, id: &Value, outcome: Result<Value, Value>) {
        let message = match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        };
        self.send(&message);
    }

    /// Sends a request and returns its id without waiting.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a request and waits for its response: `Ok(result)` or `Err(error object)`.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.send_request(method, params);
        self.response(id)
    }

    /// Waits for the response to request `id`.
    pub fn response(&mut self, id: i64) -> Result<Value, Value> {
        self.response_within(id, TIMEOUT)
    }

    /// Like `response`, with a bound of the caller's choosing (a real model server may
    /// take minutes over one ask).
    pub fn response_within(&mut self, id: i64, timeout: Duration) -> Result<Value, Value> {
        let message = self.wait_for_within(timeout, |m| {
            m.get("id") == Some(&json!(id)) && m.get("method").is_none()
        });
        match message.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        }
    }

    /// Waits for a notification with this method whose params satisfy `pred`.
    pub fn notification(&mut self, method: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let message = self.wait_for(|m| {
            m.get("id").is_none() && m.get("method") == Some(&json!(method)) && pred(&m["params"])
        });
        message["params"].clone()
    }

    /// Waits for any message satisfying `pred`, answering server-to-client requests
    /// (progress token creation, configuration) as an editor would.
    pub fn wait_for(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait_for_within(TIMEOUT, pred)
    }

    /// `wait_for` with a bound of the caller's choosing.
    pub fn wait_for_within(&mut self, timeout: Duration, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(index) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(index).unwrap();
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = match self.incoming.recv_timeout(left) {
                Ok(message) => message,
                Err(RecvTimeoutError::Timeout) => panic!(
                    "timed out waiting for a message; received so far: {:#?}\nstderr:\n{}",
                    self.log,
                    self.stderr.lock().unwrap()
                ),
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "server closed stdout; received: {:#?}\nstderr:\n{}",
                    self.log,
                    self.stderr.lock().unwrap()
                ),
            };
            self.log.push(message.clone());
            let answered_by_test = message["method"]
                .as_str()
                .is_some_and(|method| self.answered_by_test.iter().any(|m| m == method));
            if message.get("id").is_some() && message.get("method").is_some() && !answered_by_test {
                let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": null});
                self.send(&reply);
            }
            if pred(&message) {
                return message;
            }
            self.backlog.push_back(message);
        }
    }

    /// Every notification of a method received so far (consumed or not), in order.
    pub fn received(&self, method: &str) -> Vec<Value> {
        self.log
            .iter()
            .filter(|m| m.get("method") == Some(&json!(method)) && m.get("id").is_none())
            .map(|m| m["params"].clone())
            .collect()
    }

    /// Closes the server's stdin (the editor went away) and waits for it to exit.
    pub fn close_and_wait(mut self) -> ExitStatus {
        self.stdin.take();
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "server did not exit when stdin closed"
            );
            // Process reaping, not test synchronisation (see `shutdown`).
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// `shutdown` then `exit`; returns the exit status.
    pub fn shutdown(mut self) -> (ExitStatus, String, Vec<Value>) {
        let result = self.request("shutdown", Value::Null);
        assert!(result.is_ok(), "shutdown failed: {result:?}");
        self.notify("exit", Value::Null);
        self.stdin.take();
        let deadline = Instant::now() + TIMEOUT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("server did not exit after `exit`");
            }
            // Waiting for a process to exit has no event to block on without a second
            // thread; poll briefly (this is process reaping, not test synchronisation).
            thread::sleep(Duration::from_millis(5));
        };
        while let Ok(message) = self.incoming.recv_timeout(Duration::from_secs(5)) {
            self.log.push(message);
        }
        let stray = self.stray_stdout.lock().unwrap().clone();
        assert!(
            stray.is_empty(),
            "non-protocol bytes on stdout: {:?}",
            String::from_utf8_lossy(&stray)
        );
        let stderr = self.stderr.lock().unwrap().clone();
        (status, stderr, std::mem::take(&mut self.log))
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_messages(stdout: impl Read, sender: mpsc::Sender<Value>, stray: Arc<Mutex<Vec<u8>>>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut length = None;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                if length.is_some() {
                    break;
                }
                continue;
            }
            match trimmed.strip_prefix("Content-Length: ") {
                Some(n) => length = n.parse::<usize>().ok(),
                None if trimmed.starts_with("Content-Type:") => {}
                None => stray.lock().unwrap().extend_from_slice(line.as_bytes()),
            }
        }
        let mut body = vec![0; length.unwrap_or(0)];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        match serde_json::from_slice(&body) {
            Ok(value) => {
                if sender.send(value).is_err() {
                    return;
                }
            }
            Err(_) => stray.lock().unwrap().extend_from_slice(&body),
        }
    }
}

/// `file://` URI of an absolute path (percent-encoding spaces and non-ASCII).
pub fn file_uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Copies a fixture workspace into a fresh temporary directory (tests may change it).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
            // Keep the source's mtime, as `cp -p` does: a file stamped "just now" sits in
            // the index's mtime-resolution window, and a later refresh would re-read it
            // to be sure, which makes "reads nothing after a restart" depend on timing.
            let modified = entry.metadata().unwrap().modified().unwrap();
            std::fs::File::options()
                .write(true)
                .open(&target)
                .unwrap()
                .set_modified(modified)
                .unwrap();
        }
    }
}

/// Applies a `WorkspaceEdit` (documentChanges or changes) to a text, as an editor would,
/// for edits that target one document. Positions are UTF-16 unless `utf8`.
pub fn apply_text_edits(text: &str, edits: &[Value], utf8: bool) -> String {
    let mut edits: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            let range = &e["range"];
            (
                offset_of(text, &range["start"], utf8),
                offset_of(text, &range["end"], utf8),
                e["newText"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    edits.sort_by_key(|edit| std::cmp::Reverse(edit.0));
    let mut out = text.to_string();
    for (start, end, new_text) in edits {
        out.replace_range(start..end, &new_text);
    }
    out
}

fn offset_of(text: &str, position: &Value, utf8: bool) -> usize {
    let line = position["line"].as_u64().unwrap() as usize;
    let character = position["character"].as_u64().unwrap() as usize;
    let mut offset = 0;
    for (index, l) in text.split_inclusive('\n').enumerate() {
        if index == line {
            let content = l.trim_end_matches(['\n', '\r']);
            let mut units = 0;
            for (byte, c) in content.char_indices() {
                if units >= character {
                    return offset + byte;
                }
                units += if utf8 { c.len_utf8() } else { c.len_utf16() };
            }
            return offset + content.len();
        }
        offset += l.len();
    }
    text.len()
}

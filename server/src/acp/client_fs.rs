//! Reading and writing through the client (`fs/read_text_file`, `fs/write_text_file`).
//!
//! The tools read open documents through the `OpenDocuments` trait and never learn
//! where the text came from. Here it comes from the ACP client, which answers with the
//! editor's buffer (unsaved changes included) or the file on disk. Only the three tools
//! that read one file for the model (`read_file`, `read_open_buffer`, `file_outline`)
//! ask the client (`editor_document`); everything else (search, retrieval, the index,
//! citations, instruction files) reads the disk, seeing only the buffers already read
//! in this prompt (`open_document`, `open_documents`), so it never makes a request.
//! Tools run on the blocking pool, so the bridge blocks its thread on the client's
//! reply (through `block_in_place` on a runtime worker).
//!
//! A text is an open buffer only when it differs from the disk, and a path missing on
//! disk only when the client also listed it (attached it to a prompt): some clients
//! answer a read of a missing file with empty text so the agent can create it, which
//! must not make it an existing empty buffer. `list_open_buffers` and
//! `read_open_buffer` therefore agree: both show the buffers read so far.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use agent_client_protocol::v1::schema::{ReadTextFileRequest, SessionId, WriteTextFileRequest};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use ropey::Rope;
use tokio::runtime::{Handle, RuntimeFlavor};

use crate::session::lock;
use crate::workspace::{differs_from_disk, OpenDocument, OpenDocuments};

/// A client that does not answer a read within this long is taken not to have the file
/// open: the tool reads the disk instead of hanging the ask.
const CLIENT_READ_TIMEOUT: Duration = Duration::from_secs(20);

/// What the client offered in `initialize` (`clientCapabilities.fs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct FsCapabilities {
    pub read: bool,
    pub write: bool,
}

/// The client's view of one session's files.
pub struct ClientFiles {
    connection: ConnectionTo<Client>,
    session_id: SessionId,
    capabilities: FsCapabilities,
    runtime: Handle,
    /// Texts read during the current prompt (`None`: the client had no text), so the
    /// tools of one prompt see one consistent text and ask the client once per file.
    cache: Mutex<HashMap<PathBuf, Option<String>>>,
    /// Paths the client attached to a prompt of this session: a file it has open.
    listed: Mutex<HashSet<PathBuf>>,
}

impl ClientFiles {
    pub fn new(
        connection: ConnectionTo<Client>,
        session_id: SessionId,
        capabilities: FsCapabilities,
        runtime: Handle,
    ) -> ClientFiles {
        ClientFiles {
            connection,
            session_id,
            capabilities,
            runtime,
            cache: Mutex::new(HashMap::new()),
            listed: Mutex::new(HashSet::new()),
        }
    }

    /// Notes the files the client attached to a prompt (it has them open).
    pub fn listed(&self, paths: impl IntoIterator<Item = PathBuf>) {
        let mut listed = lock(&self.listed);
        for path in paths {
            listed.insert(canonical(&path));
        }
    }

    /// The client's text of `absolute` as an open buffer: it differs from the disk, and
    /// a file missing on disk was listed by the client.
    fn as_buffer(&self, absolute: &Path, text: &str) -> Option<OpenDocument> {
        let on_disk = absolute.exists();
        if on_disk && !differs_from_disk(absolute, text) {
            return None;
        }
        if !on_disk && !lock(&self.listed).contains(absolute) {
            return None;
        }
        Some(OpenDocument {
            path: absolute.to_path_buf(),
            language_id: String::new(),
            version: 0,
            rope: Rope::from_str(text),
        })
    }

    pub fn capabilities(&self) -> FsCapabilities {
        self.capabilities
    }

    /// Forgets what was read: called as each prompt starts, and before an edit is
    /// offered, so the user's latest text is what gets changed.
    pub fn forget(&self) {
        lock(&self.cache).clear();
    }

    /// The client's text of an absolute path, or `None` when it does not offer reading
    /// or has no such file.
    pub async fn read(&self, absolute: &Path) -> Option<String> {
        if !self.capabilities.read || absolute.is_dir() {
            return None;
        }
        if let Some(hit) = lock(&self.cache).get(absolute) {
            return hit.clone();
        }
        let request = ReadTextFileRequest::new(self.session_id.clone(), absolute);
        let reply = self.connection.send_request(request).block_task();
        let text = match tokio::time::timeout(CLIENT_READ_TIMEOUT, reply).await {
            Ok(Ok(response)) => Some(response.content),
            Ok(Err(error)) => {
                tracing::debug!(path = %absolute.display(), %error, "fs/read_text_file failed");
                None
            }
            Err(_) => {
                tracing::warn!(path = %absolute.display(), "fs/read_text_file timed out");
                None
            }
        };
        lock(&self.cache).insert(absolute.to_path_buf(), text.clone());
        text
    }

    /// Writes through the client. Only `permissions` calls this, after the user allowed
    /// the edit.
    pub async fn write(&self, absolute: &Path, content: String) -> Result<(), String> {
        if !self.capabilities.write {
            return Err("the client does not offer fs/write_text_file".to_string());
        }
        let request = WriteTextFileRequest::new(self.session_id.clone(), absolute, content);
        let written = self
            .connection
            .send_request(request)
            .block_task()
            .await
            .map(|_| ())
            .map_err(|error| client_reason(&error));
        // What is on disk (or in the buffer) now is the new text.
        self.forget();
        written
    }

    /// Runs a read to completion from synchronous code (a tool on the blocking pool, or
    /// a check on a worker thread).
    fn block_on<F: Future>(&self, future: F) -> Option<F::Output> {
        match Handle::try_current() {
            Ok(current) if current.runtime_flavor() == RuntimeFlavor::MultiThread => {
                Some(tokio::task::block_in_place(|| {
                    self.runtime.block_on(future)
                }))
            }
            // A single-threaded runtime cannot wait here without stopping the very
            // connection that carries the reply.
            Ok(_) => None,
            Err(_) => Some(self.runtime.block_on(future)),
        }
    }
}

impl OpenDocuments for ClientFiles {
    /// The buffers read through the client in this prompt.
    fn open_documents(&self) -> Vec<OpenDocument> {
        let read: Vec<(PathBuf, String)> = lock(&self.cache)
            .iter()
            .filter_map(|(path, text)| Some((path.clone(), text.clone()?)))
            .collect();
        read.into_iter()
            .filter_map(|(path, text)| self.as_buffer(&path, &text))
            .collect()
    }

    /// A buffer already read in this prompt; never a request to the client.
    fn open_document(&self, absolute: &Path) -> Option<OpenDocument> {
        let text = lock(&self.cache).get(absolute).cloned()??;
        self.as_buffer(absolute, &text)
    }

    /// The client's text (unsaved changes, a file not yet saved), asked for now.
    fn editor_document(&self, absolute: &Path) -> Option<OpenDocument> {
        let text = self.block_on(self.read(absolute))??;
        self.as_buffer(absolute, &text)
    }
}

/// A path as the sandbox resolves it: canonical where it exists, else its directory
/// canonical and its name as given.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .ok()
        .or_else(|| {
            let parent = std::fs::canonicalize(path.parent()?).ok()?;
            Some(parent.join(path.file_name()?))
        })
        .unwrap_or_else(|| path.to_path_buf())
}

/// The client's reason for a failed request: its message, and its `data` when that
/// says more (a generic "Internal error" often carries the real cause there).
pub fn client_reason(error: &agent_client_protocol::Error) -> String {
    let detail = match &error.data {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(text)) => Some(text.clone()),
        Some(serde_json::Value::Object(object)) => ["details", "message", "reason", "error"]
            .iter()
            .find_map(|key| object.get(*key).and_then(serde_json::Value::as_str))
            .map(str::to_string)
            .or_else(|| Some(serde_json::Value::Object(object.clone()).to_string())),
        Some(other) => Some(other.to_string()),
    };
    match detail {
        Some(detail) if !error.message.contains(&detail) => {
            format!("{} ({detail})", error.message)
        }
        _ => error.message.clone(),
    }
}

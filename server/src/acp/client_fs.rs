//! Reading and writing through the client (`fs/read_text_file`, `fs/write_text_file`).
//!
//! The tools read open documents through the `OpenDocuments` trait and never learn
//! where the text came from. Here it comes from the ACP client, which answers with the
//! editor's buffer (unsaved changes included) or the file on disk. Tools run on the
//! blocking pool, so the bridge blocks its thread on the client's reply; the agent's
//! own checks (citations) run on a runtime worker and get there through
//! `block_in_place`. Search and the index keep reading the disk (`open_documents` is
//! empty), as the contract says.

use std::collections::HashMap;
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
        }
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
        self.connection
            .send_request(request)
            .block_task()
            .await
            .map(|_| ())
            .map_err(|error| error.message)
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
    /// ACP has no list of open buffers; search and the index read the disk.
    fn open_documents(&self) -> Vec<OpenDocument> {
        Vec::new()
    }

    /// The client's text when it differs from the disk (unsaved changes, a file not yet
    /// saved): only then is it the editor's text, so the tools mark it as such. The
    /// same text as on disk is read from disk like any other file.
    fn open_document(&self, absolute: &Path) -> Option<OpenDocument> {
        let text = self.block_on(self.read(absolute))??;
        if !differs_from_disk(absolute, &text) {
            return None;
        }
        Some(OpenDocument {
            path: absolute.to_path_buf(),
            language_id: String::new(),
            version: 0,
            rope: Rope::from_str(&text),
        })
    }
}

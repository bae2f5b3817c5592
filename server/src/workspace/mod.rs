//! The ground floor the tools and the index stand on: the sandbox (every path), the one
//! walker, reading files, and the `Workspace` view of the editor's open documents over
//! the disk. Tools never see the document store itself, only snapshots of it, so the
//! session can change underneath while a tool runs.
//!
//! Invariant: nothing here writes to disk, runs a program or opens a connection.

pub mod error;
pub mod read;
pub mod sandbox;
pub mod walk;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ropey::Rope;

pub use self::error::WorkspaceError;
pub use self::read::{differs_from_disk, read_disk_text, MAX_READ_BYTES};
use self::sandbox::{Resolved, Sandbox};

/// A snapshot of one document open in the editor. Cloning the rope is cheap.
#[derive(Clone, Debug)]
pub struct OpenDocument {
    /// The document's path, canonicalized when the file exists on disk.
    pub path: PathBuf,
    pub language_id: String,
    pub version: i32,
    pub rope: Rope,
}

/// Where the session's open documents come from (the document store implements it).
pub trait OpenDocuments: Send + Sync {
    fn open_documents(&self) -> Vec<OpenDocument>;
}

/// No editor: the command line's view.
pub struct NoDocuments;

impl OpenDocuments for NoDocuments {
    fn open_documents(&self) -> Vec<OpenDocument> {
        Vec::new()
    }
}

/// Where a text came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextSource {
    Disk,
    /// The editor's buffer; `modified` when it differs from the file on disk.
    Editor {
        version: i32,
        modified: bool,
    },
}

#[derive(Clone, Debug)]
pub struct FileText {
    pub text: String,
    pub source: TextSource,
}

#[derive(Clone)]
pub struct Workspace {
    pub sandbox: Sandbox,
    documents: Arc<dyn OpenDocuments>,
}

impl Workspace {
    pub fn new(sandbox: Sandbox, documents: Arc<dyn OpenDocuments>) -> Workspace {
        Workspace { sandbox, documents }
    }

    pub fn root(&self) -> &Path {
        self.sandbox.root()
    }

    pub fn open_documents(&self) -> Vec<OpenDocument> {
        self.documents.open_documents()
    }

    /// The open document at a canonical absolute path, if any.
    pub fn open_document(&self, absolute: &Path) -> Option<OpenDocument> {
        self.documents
            .open_documents()
            .into_iter()
            .find(|doc| doc.path == absolute)
    }

    /// Resolves a path that exists on disk or is open in the editor (an unsaved new file).
    pub fn resolve_readable(&self, user_path: &str) -> Result<Resolved, WorkspaceError> {
        let resolved = self.sandbox.resolve_allow_missing(user_path)?;
        if resolved.absolute.exists() || self.open_document(&resolved.absolute).is_some() {
            Ok(resolved)
        } else {
            Err(WorkspaceError::NotFound(user_path.to_string()))
        }
    }

    /// The current text of a file: the editor's buffer when it is open, else the disk.
    pub fn read_text(&self, resolved: &Resolved) -> Result<FileText, WorkspaceError> {
        if let Some(doc) = self.open_document(&resolved.absolute) {
            let text = doc.rope.to_string();
            let modified = differs_from_disk(&resolved.absolute, &text);
            return Ok(FileText {
                text,
                source: TextSource::Editor {
                    version: doc.version,
                    modified,
                },
            });
        }
        Ok(FileText {
            text: read_disk_text(&resolved.absolute, &resolved.relative)?,
            source: TextSource::Disk,
        })
    }
}

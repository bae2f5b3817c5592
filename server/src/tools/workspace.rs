//! The `Workspace` view the tools read through: the sandbox plus the editor's open
//! documents. Tools never see the document store itself, only snapshots of it, so the
//! session can change underneath while a tool runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ropey::Rope;

use super::error::ToolError;
use super::sandbox::{Resolved, Sandbox};

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

    /// The open document at a canonical absolute path. A source that cannot list its
    /// documents (an ACP client, asked per file) answers here only.
    fn open_document(&self, absolute: &Path) -> Option<OpenDocument> {
        self.open_documents()
            .into_iter()
            .find(|doc| doc.path == absolute)
    }
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

/// Files larger than this are not read whole; the model is told to search instead.
pub const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;

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
        self.documents.open_document(absolute)
    }

    /// Resolves a path that exists on disk or is open in the editor (an unsaved new file).
    pub fn resolve_readable(&self, user_path: &str) -> Result<Resolved, ToolError> {
        let resolved = self.sandbox.resolve_allow_missing(user_path)?;
        if resolved.absolute.exists() || self.open_document(&resolved.absolute).is_some() {
            Ok(resolved)
        } else {
            Err(ToolError::NotFound(user_path.to_string()))
        }
    }

    /// The current text of a file: the editor's buffer when it is open, else the disk.
    pub fn read_text(&self, resolved: &Resolved) -> Result<FileText, ToolError> {
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

/// Whether an editor's text differs from the file on disk (a file not on disk differs).
pub fn differs_from_disk(path: &Path, text: &str) -> bool {
    std::fs::read(path).map_or(true, |disk| disk != text.as_bytes())
}

/// Reads a text file from disk, refusing directories, huge files and binary content.
pub fn read_disk_text(path: &Path, shown: &str) -> Result<String, ToolError> {
    let metadata = std::fs::metadata(path).map_err(|e| ToolError::io(shown, &e))?;
    if metadata.is_dir() {
        return Err(ToolError::IsDirectory(shown.to_string()));
    }
    if metadata.len() > MAX_READ_BYTES {
        return Err(ToolError::TooLarge {
            path: shown.to_string(),
            bytes: metadata.len(),
        });
    }
    let bytes = std::fs::read(path).map_err(|e| ToolError::io(shown, &e))?;
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err(ToolError::Binary(shown.to_string()));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

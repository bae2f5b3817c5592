//! The ground floor the tools and the index stand on: the sandbox (every path), the one
//! walker, reading files, and the `Workspace` view of the editor's open documents over
//! the disk, and the redaction every file text passes before it is shown
//! ([`redact`]). Tools never see the document store itself, only snapshots of it, so the
//! session can change underneath while a tool runs.
//!
//! Invariant: nothing here writes to disk, runs a program or opens a connection.

pub mod error;
pub mod path_form;
pub mod project_root;
pub mod read;
pub mod redact;
pub mod roots;
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

    /// The open document at a canonical absolute path. A source that cannot list its
    /// documents (an ACP client, asked per file) answers here only.
    fn open_document(&self, absolute: &Path) -> Option<OpenDocument> {
        self.open_documents()
            .into_iter()
            .find(|doc| doc.path == absolute)
    }

    /// The editor's document at a canonical absolute path, asking the editor when the
    /// source has to (an ACP client's `fs/read_text_file`, a round trip). Only the tools
    /// that read one file for the model ask this way (see [`Workspace::asking_editor`]);
    /// search, retrieval and the index take [`OpenDocuments::open_document`].
    fn editor_document(&self, absolute: &Path) -> Option<OpenDocument> {
        self.open_document(absolute)
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

#[derive(Clone)]
pub struct Workspace {
    pub sandbox: Sandbox,
    documents: Arc<dyn OpenDocuments>,
    /// Whether `open_document` asks the editor (see `asking_editor`).
    asks_editor: bool,
}

impl Workspace {
    pub fn new(sandbox: Sandbox, documents: Arc<dyn OpenDocuments>) -> Workspace {
        Workspace {
            sandbox,
            documents,
            asks_editor: false,
        }
    }

    /// This workspace with every document lookup asking the editor for its text: for
    /// `read_file`, `read_open_buffer` and `file_outline`, which read one file for the
    /// model and should see the user's unsaved text wherever it lives.
    pub fn asking_editor(&self) -> Workspace {
        Workspace {
            asks_editor: true,
            ..self.clone()
        }
    }

    /// The first root (the only one, usually).
    pub fn root(&self) -> &Path {
        self.sandbox.root()
    }

    /// This workspace narrowed to root `i` alone (`Sandbox::only`), with the same
    /// documents: what that root's index and history see.
    pub fn only(&self, i: usize) -> Workspace {
        Workspace {
            sandbox: self.sandbox.only(i),
            ..self.clone()
        }
    }

    pub fn open_documents(&self) -> Vec<OpenDocument> {
        self.documents.open_documents()
    }

    /// The open document at a canonical absolute path, if any.
    pub fn open_document(&self, absolute: &Path) -> Option<OpenDocument> {
        if self.asks_editor {
            self.documents.editor_document(absolute)
        } else {
            self.documents.open_document(absolute)
        }
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

    /// `read_text` as the model and the user may see it: secrets redacted over the
    /// whole file (so a key block is found from its BEGIN line whatever part of it is
    /// shown later), lines kept. Every tool that shows file text reads through this;
    /// `read_text` itself is for edits, which must match the real text.
    pub fn read_redacted(&self, resolved: &Resolved) -> Result<FileText, WorkspaceError> {
        let mut file = self.read_text(resolved)?;
        if let std::borrow::Cow::Owned(redacted) = redact::redact(&file.text) {
            file.text = redacted;
        }
        Ok(file)
    }

    /// `part` of a file's current text (an editor selection) redacted as the whole file
    /// is: the occurrence nearest 1-based line `near`. `None` when the file cannot be
    /// read or does not hold `part`.
    pub fn redacted_part(&self, path: &str, part: &str, near: usize) -> Option<String> {
        let resolved = self.resolve_readable(path).ok()?;
        let text = self.read_text(&resolved).ok()?.text;
        let line_start = |offset: usize| text[..offset].matches('\n').count() + 1;
        let start = text
            .match_indices(part)
            .map(|(offset, _)| offset)
            .min_by_key(|&offset| line_start(offset).abs_diff(near))?;
        Some(redact::redact_span(&text, start..start + part.len()))
    }

    /// Lines `first..=last` (1-based) of a file's current text, redacted as a whole;
    /// `None` when it cannot be read.
    pub fn redacted_lines(&self, path: &str, first: usize, last: usize) -> Option<String> {
        let resolved = self.resolve_readable(path).ok()?;
        let file = self.read_text(&resolved).ok()?;
        Some(redact::redact_lines(&file.text, first, last))
    }
}

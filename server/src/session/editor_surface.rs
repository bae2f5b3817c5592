//! What the editor shows after an ask: the citations and suggested edits of the last
//! ask, where each edit currently sits in its document (re-anchored by its `old_text`,
//! withdrawn when that is gone or ambiguous, retired once applied), and the diagnostics
//! that follow from them. Plain data: the LSP layer turns it into LSP types.

use std::collections::{BTreeMap, HashSet};

use ropey::Rope;

use crate::agent::{Citation, IdentifiedEdit};
use crate::text::{self, PositionEncoding, Span};
use crate::tools::ProposedEdit;
use crate::workspace::{read_disk_text, Workspace};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Information,
    Hint,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DiagnosticSpec {
    pub span: Span,
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
    pub edit_id: Option<String>,
}

/// Where a suggested edit applies now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Replace `span` (in the document's current text) by the edit's `new_text`.
    Replace { span: Span, version: Option<i32> },
    /// Create the file with the edit's `new_text`.
    Create,
    /// Not offered: applied already, or its `old_text` is gone or ambiguous.
    Withdrawn,
}

/// The diagnostic that marks a suggested edit (also attached to its code action).
pub fn edit_diagnostic(id: &str, title: &str, span: Span) -> DiagnosticSpec {
    DiagnosticSpec {
        span,
        severity: Severity::Hint,
        code: "suggested-edit",
        message: format!("Suggested edit: {title}"),
        edit_id: Some(id.to_string()),
    }
}

#[derive(Clone, Debug)]
struct EditRecord {
    id: String,
    edit: ProposedEdit,
    uri: String,
    /// Where the edit is offered as a code action: its own document, or for a new file
    /// the document the user asked from (a file that does not exist has no document).
    offered_in: String,
    retired: bool,
}

#[derive(Default)]
pub struct EditorSurface {
    question: String,
    citations: Vec<Citation>,
    edits: Vec<EditRecord>,
    /// Every URI we published diagnostics for, so they can be cleared.
    published: HashSet<String>,
}

impl EditorSurface {
    /// Replaces the previous ask's citations and edits.
    pub fn replace(
        &mut self,
        question: &str,
        citations: &[Citation],
        edits: &[IdentifiedEdit],
        asked_from: Option<&str>,
    ) {
        self.question = question.to_string();
        self.citations = citations.iter().filter(|c| c.verified).cloned().collect();
        self.edits = edits
            .iter()
            .map(|e| {
                let uri = text::file_uri(&e.edit.absolute);
                let offered_in = match asked_from {
                    Some(origin) if e.edit.creates_file => origin.to_string(),
                    _ => uri.clone(),
                };
                EditRecord {
                    id: e.id.clone(),
                    uri,
                    offered_in,
                    edit: e.edit.clone(),
                    retired: false,
                }
            })
            .collect();
    }

    /// Forgets everything; returns the URIs whose diagnostics must be cleared.
    pub fn clear(&mut self) -> Vec<String> {
        self.citations.clear();
        self.edits.clear();
        self.question.clear();
        self.published.drain().collect()
    }

    pub fn has_edits_for(&self, uri: &str) -> bool {
        self.edits
            .iter()
            .any(|e| e.uri == uri || e.offered_in == uri)
    }

    /// Where an edit applies in the current text, retiring it for good once applied.
    fn place(
        record: &mut EditRecord,
        workspace: &Workspace,
        encoding: PositionEncoding,
    ) -> Placement {
        if record.retired {
            return Placement::Withdrawn;
        }
        let edit = &record.edit;
        let open = workspace.open_document(&edit.absolute);
        if edit.creates_file {
            if open.is_some() || edit.absolute.exists() {
                record.retired = true;
                return Placement::Withdrawn;
            }
            return Placement::Create;
        }
        let (rope, version) = match open {
            Some(doc) => (doc.rope, Some(doc.version)),
            None => match read_disk_text(&edit.absolute, &edit.path) {
                Ok(text) => (Rope::from_str(&text), None),
                Err(_) => return Placement::Withdrawn,
            },
        };
        let current = rope.to_string();
        let occurrences = current.matches(&edit.old_text).count();
        if occurrences != 1 {
            if occurrences == 0 && current.contains(&edit.new_text) {
                // Applied (by us or by hand): never offer it again, even after an undo.
                record.retired = true;
            }
            return Placement::Withdrawn;
        }
        let byte = current.find(&edit.old_text).unwrap_or(0);
        // When the new text contains the old (adding a doc comment above a line, say),
        // an applied edit still contains `old_text` once: recognise it by the new text
        // standing around it, or the edit would be offered again on top of itself.
        if let Some(inner) = edit.new_text.find(&edit.old_text) {
            let start = byte.checked_sub(inner);
            let around = start.and_then(|s| current.get(s..s + edit.new_text.len()));
            if around == Some(edit.new_text.as_str()) {
                record.retired = true;
                return Placement::Withdrawn;
            }
        }
        let start = rope.byte_to_char(byte);
        let end = rope.byte_to_char(byte + edit.old_text.len());
        Placement::Replace {
            span: Span {
                start: text::position_of(&rope, start, encoding),
                end: text::position_of(&rope, end, encoding),
            },
            version,
        }
    }

    /// The live edits of a document whose span touches `range`, with their placement.
    pub fn edits_at(
        &mut self,
        uri: &str,
        range: Span,
        workspace: &Workspace,
        encoding: PositionEncoding,
    ) -> Vec<(ProposedEdit, String, Placement)> {
        let mut out = Vec::new();
        for record in self.edits.iter_mut().filter(|r| r.offered_in == uri) {
            let placement = Self::place(record, workspace, encoding);
            let touches = match &placement {
                Placement::Replace { span, .. } => span.touches(&range),
                Placement::Create => true,
                Placement::Withdrawn => false,
            };
            if touches {
                out.push((record.edit.clone(), record.id.clone(), placement));
            }
        }
        out
    }

    /// Every live edit with its placement (for the ask result).
    pub fn placement_of(
        &mut self,
        id: &str,
        workspace: &Workspace,
        encoding: PositionEncoding,
    ) -> Option<Placement> {
        let record = self.edits.iter_mut().find(|r| r.id == id)?;
        Some(Self::place(record, workspace, encoding))
    }

    /// Diagnostics per URI for the current state. URIs published before but no longer
    /// carrying anything get an empty list, so the editor clears them.
    pub fn diagnostics(
        &mut self,
        workspace: &Workspace,
        encoding: PositionEncoding,
    ) -> BTreeMap<String, Vec<DiagnosticSpec>> {
        let mut by_uri: BTreeMap<String, Vec<DiagnosticSpec>> = BTreeMap::new();
        for uri in &self.published {
            by_uri.entry(uri.clone()).or_default();
        }
        for citation in &self.citations {
            let message = citation
                .note
                .clone()
                .unwrap_or_else(|| self.question.clone());
            by_uri
                .entry(citation.uri.clone())
                .or_default()
                .push(DiagnosticSpec {
                    span: citation.span,
                    severity: Severity::Information,
                    code: "citation",
                    message,
                    edit_id: None,
                });
        }
        for record in self.edits.iter_mut() {
            let span = match Self::place(record, workspace, encoding) {
                Placement::Replace { span, .. } => span,
                Placement::Create | Placement::Withdrawn => continue,
            };
            by_uri
                .entry(record.uri.clone())
                .or_default()
                .push(edit_diagnostic(&record.id, &record.edit.title, span));
        }
        self.published = by_uri
            .iter()
            .filter(|(_, list)| !list.is_empty())
            .map(|(uri, _)| uri.clone())
            .collect();
        by_uri
    }
}

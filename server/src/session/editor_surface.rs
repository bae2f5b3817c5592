//! What the editor shows after an ask: the citations and suggested edits of the last
//! ask, where each currently sits in its document (an edit re-anchored by its
//! `old_text`, withdrawn when that is gone or ambiguous, retired once applied; a
//! citation by the text of its lines, hidden while that is gone), and the diagnostics
//! that follow from them. Plain data: the LSP layer turns it into LSP types.

use std::collections::{BTreeMap, HashSet};

use ropey::Rope;

use super::citation_anchor::{self, Placed};
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
    /// For a citation: its index in the ask's `citations` and the 1-based lines it
    /// covers now (the diagnostic itself marks only the first).
    pub citation: Option<CitationPlace>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CitationPlace {
    pub index: usize,
    pub line: usize,
    pub end_line: usize,
}

/// Where a suggested edit applies now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// The edit's `old_text` is at `span` in the document's current text. Applying it
    /// replaces `change` by `change_text`: the smallest span that differs (old and new
    /// text with their common start and end trimmed), so a preview shows only that.
    Replace {
        span: Span,
        version: Option<i32>,
        change: Span,
        change_text: String,
    },
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
        citation: None,
    }
}

#[derive(Clone, Debug)]
struct CitationRecord {
    citation: Citation,
    /// Its index in the ask's citations (unverified ones are not shown, but counted).
    index: usize,
    /// The cited lines as last seen, to find them again after the document changed;
    /// `None` when they could not be read at ask time.
    anchor: Option<Vec<String>>,
    /// 0-based first line where the anchor was last found.
    start: usize,
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
    citations: Vec<CitationRecord>,
    edits: Vec<EditRecord>,
    /// Every URI we published diagnostics for, so they can be cleared.
    published: HashSet<String>,
}

impl EditorSurface {
    /// Replaces the previous ask's citations and edits. Each citation's lines are read
    /// now, so it can follow them as the document changes.
    pub fn replace(
        &mut self,
        question: &str,
        citations: &[Citation],
        edits: &[IdentifiedEdit],
        asked_from: Option<&str>,
        workspace: &Workspace,
    ) {
        self.question = question.to_string();
        self.citations = citations
            .iter()
            .enumerate()
            .filter(|(_, c)| c.verified)
            .map(|(index, c)| {
                let start = c.line.saturating_sub(1);
                let anchor = current_text(workspace, &c.absolute, &c.path).map(|(rope, _)| {
                    let count = rope.len_lines();
                    (start..c.end_line.min(count))
                        .map(|line| text::line_text(&rope, line))
                        .collect()
                });
                CitationRecord {
                    citation: c.clone(),
                    index,
                    anchor,
                    start,
                }
            })
            .collect();
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

    /// Forgets the citations and edits in files below `root` (a workspace folder the
    /// editor closed); the next publish clears their diagnostics.
    pub fn forget_under(&mut self, root: &std::path::Path) {
        self.citations
            .retain(|record| !record.citation.absolute.starts_with(root));
        self.edits
            .retain(|record| !record.edit.absolute.starts_with(root));
    }

    pub fn has_edits_for(&self, uri: &str) -> bool {
        self.edits
            .iter()
            .any(|e| e.uri == uri || e.offered_in == uri)
    }

    /// Whether a change to this document can move anything we show.
    pub fn shows_anything_in(&self, uri: &str) -> bool {
        self.has_edits_for(uri) || self.citations.iter().any(|c| c.citation.uri == uri)
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
        if edit.creates_file {
            if workspace.open_document(&edit.absolute).is_some() || edit.absolute.exists() {
                record.retired = true;
                return Placement::Withdrawn;
            }
            return Placement::Create;
        }
        let Some((rope, version)) = current_text(workspace, &edit.absolute, &edit.path) else {
            return Placement::Withdrawn;
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
        let span_of = |from: usize, to: usize| Span {
            start: text::position_of(&rope, rope.byte_to_char(from), encoding),
            end: text::position_of(&rope, rope.byte_to_char(to), encoding),
        };
        let (prefix, suffix) = common_ends(&edit.old_text, &edit.new_text);
        Placement::Replace {
            span: span_of(byte, byte + edit.old_text.len()),
            version,
            change: span_of(byte + prefix, byte + edit.old_text.len() - suffix),
            change_text: edit.new_text[prefix..edit.new_text.len() - suffix].to_string(),
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

    /// Diagnostics per URI for the current state, for every document or only `only`.
    /// URIs published before but no longer carrying anything get an empty list, so the
    /// editor clears them. A citation marks the first line it covers now; one whose
    /// text is gone is left out (and comes back if the text does, say after an undo).
    pub fn diagnostics(
        &mut self,
        workspace: &Workspace,
        encoding: PositionEncoding,
        only: Option<&str>,
    ) -> BTreeMap<String, Vec<DiagnosticSpec>> {
        let wanted = |uri: &str| only.is_none_or(|only| only == uri);
        let mut by_uri: BTreeMap<String, Vec<DiagnosticSpec>> = BTreeMap::new();
        for uri in self.published.iter().filter(|uri| wanted(uri)) {
            by_uri.entry(uri.clone()).or_default();
        }
        let mut texts: BTreeMap<String, Option<Rope>> = BTreeMap::new();
        for record in self.citations.iter_mut() {
            if !wanted(&record.citation.uri) {
                continue;
            }
            let citation = &record.citation;
            let rope = texts
                .entry(citation.uri.clone())
                .or_insert_with(|| {
                    current_text(workspace, &citation.absolute, &citation.path).map(|(r, _)| r)
                })
                .clone();
            let Some(rope) = rope else {
                continue;
            };
            let Some(place) = follow(record, &rope) else {
                continue;
            };
            let citation = &record.citation;
            let message = citation
                .note
                .clone()
                .unwrap_or_else(|| self.question.clone());
            by_uri
                .entry(citation.uri.clone())
                .or_default()
                .push(DiagnosticSpec {
                    span: line_only(&rope, place.start, encoding),
                    severity: Severity::Information,
                    code: "citation",
                    message,
                    edit_id: None,
                    citation: Some(CitationPlace {
                        index: record.index,
                        line: place.start + 1,
                        end_line: place.start + place.len,
                    }),
                });
        }
        for record in self.edits.iter_mut().filter(|r| wanted(&r.uri)) {
            let span = match Self::place(record, workspace, encoding) {
                Placement::Replace { span, .. } => span,
                Placement::Create | Placement::Withdrawn => continue,
            };
            by_uri
                .entry(record.uri.clone())
                .or_default()
                .push(edit_diagnostic(&record.id, &record.edit.title, span));
        }
        for (uri, list) in &by_uri {
            if list.is_empty() {
                self.published.remove(uri);
            } else {
                self.published.insert(uri.clone());
            }
        }
        by_uri
    }
}

/// A document's text as the editor has it, else as it is on disk, with the editor's
/// version when open.
fn current_text(
    workspace: &Workspace,
    absolute: &std::path::Path,
    shown: &str,
) -> Option<(Rope, Option<i32>)> {
    match workspace.open_document(absolute) {
        Some(doc) => Some((doc.rope, Some(doc.version))),
        None => read_disk_text(absolute, shown)
            .ok()
            .map(|text| (Rope::from_str(&text), None)),
    }
}

/// The span of one 0-based line without its line break: a citation's diagnostic marks
/// the line that names the place, not the whole body.
fn line_only(rope: &Rope, line: usize, encoding: PositionEncoding) -> Span {
    let start = rope.line_to_char(line);
    let end = start + text::line_text(rope, line).chars().count();
    Span {
        start: text::position_of(rope, start, encoding),
        end: text::position_of(rope, end, encoding),
    }
}

/// Moves a citation to where its lines are now and refreshes its anchor from them.
fn follow(record: &mut CitationRecord, rope: &Rope) -> Option<Placed> {
    let count = rope.len_lines();
    let Some(anchor) = &record.anchor else {
        // Its lines could not be read at ask time: show it where the ask put it.
        let start = record.start.min(count - 1);
        let len = (record.citation.end_line.saturating_sub(start)).clamp(1, count - start);
        return Some(Placed { start, len });
    };
    let lines: Vec<String> = (0..count).map(|line| text::line_text(rope, line)).collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let place = citation_anchor::relocate(&lines, anchor, record.start)?;
    record.start = place.start;
    record.anchor = Some(
        lines[place.start..place.start + place.len]
            .iter()
            .map(|line| line.to_string())
            .collect(),
    );
    Some(place)
}

/// Byte lengths of the common start and end of old and new text: on char boundaries,
/// never splitting a `\r\n`, and the end never overlapping the start.
fn common_ends(old: &str, new: &str) -> (usize, usize) {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let mut prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    if prefix > 0 && a[prefix - 1] == b'\r' && a.get(prefix) == Some(&b'\n') {
        prefix -= 1;
    }
    let room = a.len().min(b.len()) - prefix;
    let mut suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    while !old.is_char_boundary(a.len() - suffix) || !new.is_char_boundary(b.len() - suffix) {
        suffix -= 1;
    }
    let cut = a.len() - suffix;
    if suffix > 0 && cut > 0 && a[cut] == b'\n' && a[cut - 1] == b'\r' {
        suffix -= 1;
    }
    (prefix, suffix)
}

#[cfg(test)]
mod tests {
    use super::common_ends;

    fn trimmed<'t>(old: &'t str, new: &'t str) -> (&'t str, &'t str) {
        let (prefix, suffix) = common_ends(old, new);
        (
            &old[prefix..old.len() - suffix],
            &new[prefix..new.len() - suffix],
        )
    }

    #[test]
    fn the_change_is_the_smallest_differing_span() {
        assert_eq!(
            trimmed("let a = 1;\nlet b = 2;\n", "let a = 1;\nlet b = 3;\n"),
            ("2", "3")
        );
        assert_eq!(trimmed("abc", "abc"), ("", ""));
        assert_eq!(trimmed("abc", "abXc"), ("", "X"));
        assert_eq!(trimmed("aaa", "aa"), ("a", ""));
        assert_eq!(trimmed("", "new"), ("", "new"));
        // Multi-byte chars are never split, also when they share leading bytes.
        assert_eq!(trimmed("é", "è"), ("é", "è"));
        assert_eq!(trimmed("x😀y", "x😃y"), ("😀", "😃"));
        // A CRLF line break is kept whole.
        assert_eq!(trimmed("a\r\nb", "a\nb"), ("\r\n", "\n"));
        assert_eq!(trimmed("x\r\ny", "x\r\nz\r\ny"), ("", "z\r\n"));
        assert_eq!(trimmed("a\r\n", "b\r\n"), ("a", "b"));
    }
}

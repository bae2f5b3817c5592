//! The document store: what the editor told us about open documents, as ropes with
//! versions. Changes are applied synchronously (no `.await` anywhere here), so the LSP
//! layer can apply a `didChange` before its handler's first suspension point and a
//! request that follows it always sees the new text.

use std::path::PathBuf;

use dashmap::DashMap;
use ropey::Rope;

use crate::text::{self, PositionEncoding, Span};
use crate::workspace::{OpenDocument, OpenDocuments};

#[derive(Clone, Debug)]
pub struct Document {
    pub uri: String,
    /// Canonical path when the file exists on disk; the URI's path otherwise. `None` for
    /// non-file URIs (untitled buffers), which no tool can see.
    pub path: Option<PathBuf>,
    pub language_id: String,
    pub version: i32,
    pub rope: Rope,
}

/// One content change: a range replaced by text, or the whole text when `range` is None.
#[derive(Clone, Debug)]
pub struct TextChange {
    pub range: Option<Span>,
    pub text: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ChangeError {
    #[error("no open document {0}")]
    UnknownDocument(String),
    #[error("change {index} of {uri} has a range past the end of the document ({range:?}); ignored the whole notification")]
    RangePastEnd {
        uri: String,
        index: usize,
        range: Span,
    },
    #[error("change {index} of {uri} has a range whose end is before its start; ignored the whole notification")]
    InvertedRange { uri: String, index: usize },
}

#[derive(Default)]
pub struct DocumentStore {
    documents: DashMap<String, Document>,
}

impl DocumentStore {
    pub fn open(&self, uri: &str, language_id: &str, version: i32, text: &str) {
        let path =
            text::path_from_file_uri(uri).map(|path| std::fs::canonicalize(&path).unwrap_or(path));
        self.documents.insert(
            uri.to_string(),
            Document {
                uri: uri.to_string(),
                path,
                language_id: language_id.to_string(),
                version,
                rope: Rope::from_str(text),
            },
        );
    }

    /// Applies all changes of one `didChange`, in order, or none of them: they are
    /// applied to a copy (cheap: ropes share structure) that replaces the document only
    /// when every change fit.
    pub fn change(
        &self,
        uri: &str,
        version: i32,
        changes: &[TextChange],
        encoding: PositionEncoding,
    ) -> Result<(), ChangeError> {
        let mut entry = self
            .documents
            .get_mut(uri)
            .ok_or_else(|| ChangeError::UnknownDocument(uri.to_string()))?;
        let mut rope = entry.rope.clone();
        for (index, change) in changes.iter().enumerate() {
            match change.range {
                None => rope = Rope::from_str(&change.text),
                Some(range) => {
                    let past_end = || ChangeError::RangePastEnd {
                        uri: uri.to_string(),
                        index,
                        range,
                    };
                    let start =
                        text::char_index(&rope, range.start, encoding).ok_or_else(past_end)?;
                    let end = text::char_index(&rope, range.end, encoding).ok_or_else(past_end)?;
                    if end < start {
                        return Err(ChangeError::InvertedRange {
                            uri: uri.to_string(),
                            index,
                        });
                    }
                    rope.remove(start..end);
                    rope.insert(start, &change.text);
                }
            }
        }
        entry.rope = rope;
        entry.version = version;
        Ok(())
    }

    pub fn close(&self, uri: &str) {
        self.documents.remove(uri);
    }

    /// A snapshot of one document (the rope clone is O(1)); no guard is held after return.
    pub fn get(&self, uri: &str) -> Option<Document> {
        self.documents.get(uri).map(|doc| doc.clone())
    }

    pub fn all(&self) -> Vec<Document> {
        self.documents.iter().map(|doc| doc.clone()).collect()
    }
}

impl OpenDocuments for DocumentStore {
    fn open_documents(&self) -> Vec<OpenDocument> {
        self.documents
            .iter()
            .filter_map(|doc| {
                Some(OpenDocument {
                    path: doc.path.clone()?,
                    language_id: doc.language_id.clone(),
                    version: doc.version,
                    rope: doc.rope.clone(),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Pos;

    fn span(a: (u32, u32), b: (u32, u32)) -> Option<Span> {
        Some(Span {
            start: Pos::new(a.0, a.1),
            end: Pos::new(b.0, b.1),
        })
    }

    #[test]
    fn applies_many_changes_in_order_with_crlf_and_both_encodings() {
        let store = DocumentStore::default();
        store.open(
            "file:///x/a.txt",
            "plaintext",
            1,
            "héllo 😀 wörld\r\n漢字\r\n",
        );
        // UTF-16: 😀 is 2 units. Replace "wörld" (col 9..14) then append to line 1.
        let changes = vec![
            TextChange {
                range: span((0, 9), (0, 14)),
                text: "there".into(),
            },
            TextChange {
                range: span((1, 2), (1, 2)),
                text: "!".into(),
            },
        ];
        store
            .change("file:///x/a.txt", 2, &changes, PositionEncoding::Utf16)
            .unwrap();
        let doc = store.get("file:///x/a.txt").unwrap();
        assert_eq!(doc.rope.to_string(), "héllo 😀 there\r\n漢字!\r\n");
        assert_eq!(doc.version, 2);
        // UTF-8: é is 2 bytes, 😀 4: "there" starts at byte 12.
        let utf8 = vec![TextChange {
            range: span((0, 12), (0, 17)),
            text: "you".into(),
        }];
        store
            .change("file:///x/a.txt", 3, &utf8, PositionEncoding::Utf8)
            .unwrap();
        assert_eq!(
            store.get("file:///x/a.txt").unwrap().rope.to_string(),
            "héllo 😀 you\r\n漢字!\r\n"
        );
    }

    #[test]
    fn bad_changes_are_rejected_whole_and_leave_the_document_alone() {
        let store = DocumentStore::default();
        store.open("file:///x/b.txt", "plaintext", 1, "one\ntwo\n");
        let changes = vec![
            TextChange {
                range: span((0, 0), (0, 3)),
                text: "ONE".into(),
            },
            TextChange {
                range: span((7, 0), (7, 1)),
                text: "x".into(),
            },
        ];
        let err = store.change("file:///x/b.txt", 2, &changes, PositionEncoding::Utf16);
        assert!(matches!(
            err,
            Err(ChangeError::RangePastEnd { index: 1, .. })
        ));
        let doc = store.get("file:///x/b.txt").unwrap();
        assert_eq!(doc.rope.to_string(), "one\ntwo\n");
        assert_eq!(doc.version, 1);
        assert!(matches!(
            store.change("file:///nope", 2, &changes, PositionEncoding::Utf16),
            Err(ChangeError::UnknownDocument(_))
        ));
    }
}

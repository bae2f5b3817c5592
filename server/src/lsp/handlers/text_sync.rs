//! `didOpen` / `didChange` / `didClose` into the document store. Changes are applied
//! synchronously, before any `.await`, so requests that follow see them.

use tower_lsp_server::lsp_types::{
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams,
};

use super::super::convert;
use super::super::server::Backend;
use super::diagnostics;
use crate::session::TextChange;

pub fn did_open(backend: &Backend, params: DidOpenTextDocumentParams) {
    let doc = params.text_document;
    backend
        .session
        .documents
        .open(doc.uri.as_str(), &doc.language_id, doc.version, &doc.text);
}

pub async fn did_change(backend: &Backend, params: DidChangeTextDocumentParams) {
    let uri = params.text_document.uri.as_str().to_string();
    let changes: Vec<TextChange> = params
        .content_changes
        .into_iter()
        .map(|change| TextChange {
            range: change.range.map(convert::span),
            text: change.text,
        })
        .collect();
    let encoding = backend.session.encoding();
    if let Err(error) =
        backend
            .session
            .documents
            .change(&uri, params.text_document.version, &changes, encoding)
    {
        tracing::warn!("didChange ignored: {error}");
        return;
    }
    // A suggested edit in this document may have moved, been applied or been broken:
    // refresh the diagnostics that show it (only now may we suspend).
    let has_edits = crate::session::lock(&backend.session.surface).has_edits_for(&uri);
    if has_edits {
        diagnostics::publish_for(backend, &uri).await;
    }
}

pub fn did_close(backend: &Backend, params: DidCloseTextDocumentParams) {
    backend
        .session
        .documents
        .close(params.text_document.uri.as_str());
}

/// Files changed on disk, as the client's watcher saw them: the retrieval index catches
/// up at the next ask.
pub fn did_change_watched_files(backend: &Backend, params: DidChangeWatchedFilesParams) {
    let paths = params
        .changes
        .iter()
        .filter_map(|change| crate::text::path_from_file_uri(change.uri.as_str()))
        .collect();
    backend.session.files_changed_on_disk(paths);
}

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

pub async fn did_open(backend: &Backend, params: DidOpenTextDocumentParams) {
    let doc = params.text_document;
    let uri = doc.uri.as_str().to_string();
    backend
        .session
        .documents
        .open(&uri, &doc.language_id, doc.version, &doc.text);
    // A reopened document (`:edit`, `:e!`) has lost its diagnostics in the editor, and
    // its text may differ from what they were placed on: publish them again.
    republish_if_shown(backend, &uri).await;
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
    // A citation or suggested edit in this document may have moved, been applied or
    // been broken: refresh the diagnostics that show it (only now may we suspend).
    republish_if_shown(backend, &uri).await;
}

async fn republish_if_shown(backend: &Backend, uri: &str) {
    let shown = crate::session::lock(&backend.session.surface).shows_anything_in(uri);
    if shown {
        diagnostics::publish_for(backend, uri).await;
    }
}

pub async fn did_close(backend: &Backend, params: DidCloseTextDocumentParams) {
    let uri = params.text_document.uri.as_str().to_string();
    backend.session.documents.close(&uri);
    // Closed without saving, the document is back to its disk text.
    republish_if_shown(backend, &uri).await;
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

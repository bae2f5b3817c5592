//! Publishing the editor surface's diagnostics: citations and suggested edits.

use super::super::convert;
use super::super::server::Backend;

/// Publishes the current diagnostics of every cited or edited document, and empty lists
/// for documents that had some before.
pub async fn publish(backend: &Backend) {
    publish_where(backend, None).await;
}

/// Publishes the diagnostics of one document only: after a change to it, the other
/// documents' diagnostics cannot have changed, and this runs on every keystroke.
pub async fn publish_for(backend: &Backend, uri: &str) {
    publish_where(backend, Some(uri)).await;
}

async fn publish_where(backend: &Backend, only: Option<&str>) {
    let Some(workspace) = backend.session.workspace() else {
        return;
    };
    let encoding = backend.session.encoding();
    let by_uri =
        crate::session::lock(&backend.session.surface).diagnostics(&workspace, encoding, only);
    for (uri, specs) in by_uri {
        let diagnostics = specs.iter().map(convert::diagnostic).collect();
        backend
            .client
            .publish_diagnostics(convert::uri(&uri), diagnostics, None)
            .await;
    }
}

/// Clears every diagnostic we published.
pub async fn clear(backend: &Backend) {
    let uris = backend.session.clear();
    for uri in uris {
        backend
            .client
            .publish_diagnostics(convert::uri(&uri), Vec::new(), None)
            .await;
    }
}

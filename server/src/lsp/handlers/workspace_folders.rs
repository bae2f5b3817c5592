//! `workspace/didChangeWorkspaceFolders`: folders added become roots and are indexed in
//! the background (the roots that stay keep their indexes); a folder removed stops being
//! one: its index is let go and what the last answer showed in it is withdrawn.

use std::path::PathBuf;

use tower_lsp_server::lsp_types::DidChangeWorkspaceFoldersParams;

use super::super::server::Backend;
use crate::text;

pub async fn did_change_workspace_folders(
    backend: &Backend,
    params: DidChangeWorkspaceFoldersParams,
) {
    let path_of = |uri: &tower_lsp_server::lsp_types::Uri| text::path_from_file_uri(uri.as_str());
    let canonical = |path: PathBuf| std::fs::canonicalize(&path).unwrap_or(path);
    let removed: Vec<PathBuf> = params
        .event
        .removed
        .iter()
        .filter_map(|folder| path_of(&folder.uri))
        .map(canonical)
        .collect();
    let mut problems = Vec::new();
    let added = super::initialize::usable_roots(
        params
            .event
            .added
            .iter()
            .filter_map(|folder| path_of(&folder.uri))
            .collect(),
        &mut problems,
    );
    let mut roots: Vec<PathBuf> = backend
        .session
        .roots()
        .into_iter()
        .filter(|root| !removed.contains(root))
        .collect();
    // Canonicalized by the sandbox, which drops one given twice.
    roots.extend(added);
    if roots.is_empty() {
        // The last folder closed: nothing to answer about until one is opened.
        tracing::info!("every workspace folder was closed");
    } else if let Err(error) = backend.session.set_roots(&roots) {
        problems.push(format!("cannot use the workspace folders: {error}"));
    }
    for root in &removed {
        backend.session.forget_under(root);
    }
    super::initialize::tell_problems(backend, problems).await;
    // Withdraw the removed folders' diagnostics; index the added ones.
    super::diagnostics::publish(backend).await;
    super::indexing::start(backend);
}

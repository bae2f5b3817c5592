//! `initialize` / `initialized`: the roots (every workspace folder), position encoding,
//! client capabilities, settings.

use std::path::PathBuf;

use tower_lsp_server::lsp_types::{
    DidChangeWatchedFilesRegistrationOptions, FileSystemWatcher, GlobPattern, InitializeParams,
    InitializeResult, MessageType, Registration, ServerInfo,
};

use super::super::capabilities;
use super::super::server::{Backend, ClientFlags};
use crate::text;
use crate::workspace::sandbox::Sandbox;

pub fn initialize(backend: &Backend, params: InitializeParams) -> InitializeResult {
    let encoding = capabilities::negotiate_encoding(&params.capabilities);
    backend.session.set_encoding(encoding);
    *backend.flags.write().unwrap_or_else(|e| e.into_inner()) = ClientFlags {
        edits: capabilities::edit_support(&params.capabilities),
        work_done_progress: capabilities::supports_work_done_progress(&params.capabilities),
        watch_files: capabilities::supports_watching_files(&params.capabilities),
    };

    let mut problems = Vec::new();
    let roots = usable_roots(workspace_roots(&params), &mut problems);
    if !roots.is_empty() {
        if let Err(error) = backend.session.set_roots(&roots) {
            problems.push(format!("cannot use the workspace folders: {error}"));
        }
    }
    problems.extend(
        super::editor_models::initialize(backend, &params)
            .map(|problem| format!("environment: {problem}")),
    );
    if let Some(options) = &params.initialization_options {
        problems.extend(
            backend
                .session
                .apply_settings(options)
                .into_iter()
                .map(|p| format!("initializationOptions: {p}")),
        );
    }
    backend
        .pending_problems
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(problems);

    InitializeResult {
        capabilities: capabilities::server_capabilities(encoding),
        server_info: Some(ServerInfo {
            name: "copilot-ls".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    }
}

/// Every workspace folder, else the (deprecated) root URI, else the current directory:
/// an editor opened on a single file still gets a working server.
#[allow(deprecated)]
fn workspace_roots(params: &InitializeParams) -> Vec<PathBuf> {
    let from_uri = |uri: &tower_lsp_server::lsp_types::Uri| text::path_from_file_uri(uri.as_str());
    let folders: Vec<PathBuf> = params
        .workspace_folders
        .iter()
        .flatten()
        .filter_map(|folder| from_uri(&folder.uri))
        .collect();
    if !folders.is_empty() {
        return folders;
    }
    let root = params
        .root_uri
        .as_ref()
        .and_then(from_uri)
        .or_else(|| params.root_path.as_ref().map(PathBuf::from))
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    vec![root]
}

/// The folders that can be roots; each one that cannot is a problem told to the user
/// (the others still work).
pub fn usable_roots(folders: Vec<PathBuf>, problems: &mut Vec<String>) -> Vec<PathBuf> {
    folders
        .into_iter()
        .filter(|folder| match Sandbox::new(folder) {
            Ok(_) => true,
            Err(error) => {
                problems.push(format!(
                    "cannot use {} as the workspace root: {error}",
                    folder.display()
                ));
                false
            }
        })
        .collect()
}

pub async fn initialized(backend: &Backend) {
    super::indexing::start(backend);
    if backend.flags().watch_files {
        // So the retrieval index sees files that change on disk while not open.
        let registration = Registration {
            id: "copilot-ls-watch-files".to_string(),
            method: "workspace/didChangeWatchedFiles".to_string(),
            register_options: serde_json::to_value(DidChangeWatchedFilesRegistrationOptions {
                watchers: vec![FileSystemWatcher {
                    glob_pattern: GlobPattern::String("**/*".to_string()),
                    kind: None,
                }],
            })
            .ok(),
        };
        // Not awaited here: a handler that waits on the client holds a slot of the
        // connection while the reply may be queued behind it (see `lsp::CONCURRENCY`).
        let client = backend.client.clone();
        tokio::spawn(async move {
            if let Err(error) = client.register_capability(vec![registration]).await {
                tracing::info!("the client did not register the file watcher: {error}");
            }
        });
    }
    let problems: Vec<String> = std::mem::take(
        &mut *backend
            .pending_problems
            .lock()
            .unwrap_or_else(|e| e.into_inner()),
    );
    tell_problems(backend, problems).await;
}

/// Each problem in the log and as an error message in the editor.
pub async fn tell_problems(backend: &Backend, problems: Vec<String>) {
    for problem in problems {
        tracing::warn!("{problem}");
        backend
            .client
            .show_message(MessageType::ERROR, format!("copilot-ls: {problem}"))
            .await;
    }
}

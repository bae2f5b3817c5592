//! The `LanguageServer` impl. Each method hands off to a handler in `handlers/` in a few
//! lines; the state lives in the session.

use std::sync::{Arc, Mutex, RwLock};

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::lsp_types::{
    CodeActionParams, CodeActionResponse, DidChangeConfigurationParams,
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams, DidChangeWorkspaceFoldersParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, ExecuteCommandParams, InitializeParams,
    InitializeResult, InitializedParams, LSPAny,
};
use tower_lsp_server::{Client, LanguageServer};

use super::client_calls::ClientCalls;
use super::convert::EditSupport;
use super::handlers;
use super::wire::{AskParams, AskResult};
use crate::session::Session;

/// What the client said it supports, learned at `initialize`.
#[derive(Clone, Copy, Debug)]
pub struct ClientFlags {
    pub edits: EditSupport,
    pub work_done_progress: bool,
    /// The client can watch files for us (`didChangeWatchedFiles` dynamic registration).
    pub watch_files: bool,
}

pub struct Backend {
    pub client: Client,
    pub session: Arc<Session>,
    pub flags: RwLock<ClientFlags>,
    /// Configuration problems found before the client could be told (environment,
    /// `initializationOptions`); shown at `initialized`.
    pub pending_problems: Mutex<Vec<String>>,
    /// Publishes the asks' diagnostics in the order the asks end.
    pub publisher: super::handlers::diagnostics::Publisher,
    /// Our own requests to the client (the editor's model calls).
    pub calls: Arc<ClientCalls>,
}

impl Backend {
    pub fn new(
        client: Client,
        session: Arc<Session>,
        calls: Arc<ClientCalls>,
        startup_problems: Vec<String>,
    ) -> Backend {
        session.note_env_problems(&startup_problems);
        Backend {
            client,
            session,
            flags: RwLock::new(ClientFlags {
                edits: EditSupport {
                    change_annotations: false,
                },
                work_done_progress: false,
                watch_files: false,
            }),
            pending_problems: Mutex::new(startup_problems),
            publisher: Default::default(),
            calls,
        }
    }

    pub fn flags(&self) -> ClientFlags {
        *self.flags.read().unwrap_or_else(|e| e.into_inner())
    }

    /// `copilot/ask`.
    pub async fn ask(&self, params: AskParams) -> Result<AskResult> {
        handlers::ask::ask(self, params).await
    }

    /// `copilot/didChangeEditorModels` (section 11).
    pub async fn did_change_editor_models(&self, params: LSPAny) {
        handlers::editor_models::did_change(self, params);
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        Ok(handlers::initialize::initialize(self, params))
    }

    async fn initialized(&self, _: InitializedParams) {
        handlers::initialize::initialized(self).await;
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        handlers::text_sync::did_open(self, params).await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        // Applied before the first `.await` inside: a request that follows sees it.
        handlers::text_sync::did_change(self, params).await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        handlers::text_sync::did_close(self, params).await;
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        handlers::configuration::did_change_configuration(self, params).await;
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        handlers::text_sync::did_change_watched_files(self, params);
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        handlers::workspace_folders::did_change_workspace_folders(self, params).await;
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        Ok(handlers::code_action::code_action(self, params))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        handlers::execute_command::execute_command(self, params).await
    }
}

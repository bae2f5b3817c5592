//! The MCP server: rmcp's `ServerHandler` over our tools, each method a few lines
//! handing off to `tool_calls`, `resources` or the `Engine`; and `serve`, which runs it
//! on a line transport until the client's input closes.
//!
//! Protocol revisions: everything rmcp negotiates, the current `2026-07-28` (no
//! handshake: per-request `_meta`, `server/discover`) and the previous `2025-11-25`
//! among them, and the older handshake revisions.

// Roots and logging are deprecated by SEP-2577 but still what 2025-11-25 clients use.
#![allow(deprecated)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeRequestParams,
    InitializeResult, ListResourcesResult, ListToolsResult, LoggingLevel,
    LoggingMessageNotificationParam, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig,
    SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt};
use tokio::io::{AsyncRead, AsyncWrite};

use super::engine::Engine;
use super::lines::LineTransport;
use super::tool_calls::{self, Ended};
use super::{resources, tool_list};
use crate::text::path_from_file_uri;

const INSTRUCTIONS: &str = "copilot-ls: a persistent, syntax-aware index of this workspace. \
Use locate for a question in plain words, find_symbol for where a name is defined, \
find_references for who uses it, file_outline before reading a large file; they answer in \
milliseconds on large repositories, read only inside the workspace and never show secret files.";

pub struct Server {
    engine: Arc<Engine>,
    /// The least severe level the client wants in `notifications/message`.
    log_level: Mutex<LoggingLevel>,
}

impl Server {
    fn new(workspace: Vec<PathBuf>) -> Server {
        Server {
            engine: Arc::new(Engine::new(workspace)),
            log_level: Mutex::new(LoggingLevel::Warning),
        }
    }

    /// Sends the index's notes (a truncated workspace, an index in memory) to the
    /// client's log, at `warning`.
    fn forward_notes(&self, peer: &Peer<RoleServer>, notes: Vec<String>) {
        let wanted = *self.log_level.lock().unwrap_or_else(|e| e.into_inner());
        if notes.is_empty() || severity(LoggingLevel::Warning) < severity(wanted) {
            return;
        }
        let peer = peer.clone();
        tokio::spawn(async move {
            for note in notes {
                let mut message = LoggingMessageNotificationParam::new(
                    LoggingLevel::Warning,
                    serde_json::Value::String(note),
                );
                message.logger = Some("copilot-ls".into());
                let _ = peer.notify_logging_message(message).await;
            }
        });
    }

    /// Asks the client for its roots; every one is a root of the workspace.
    fn ask_roots(&self, peer: &Peer<RoleServer>) {
        let wants_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if self.engine.is_fixed() || !wants_roots {
            return;
        }
        self.engine.asking_roots();
        let (engine, peer) = (self.engine.clone(), peer.clone());
        tokio::spawn(async move {
            let listed = match peer.list_roots().await {
                Ok(listed) => Some(
                    listed
                        .roots
                        .iter()
                        .filter_map(|root| path_from_file_uri(&root.uri))
                        .collect(),
                ),
                Err(error) => {
                    tracing::warn!("roots/list failed: {error}");
                    None
                }
            };
            engine.roots_answered(listed).await;
        });
    }
}

fn severity(level: LoggingLevel) -> u8 {
    level as u8
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_logging()
            .build();
        let mut info = InitializeResult::new(capabilities).with_instructions(INSTRUCTIONS);
        info.server_info = Implementation::new("copilot-ls", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        // Tool calls may arrive before `initialized` is handled: from here on they wait
        // for the roots the client is about to be asked for.
        if request.capabilities.roots.is_some() && !self.engine.is_fixed() {
            self.engine.asking_roots();
        }
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.ask_roots(&context.peer);
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.ask_roots(&context.peer);
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        *self.log_level.lock().unwrap_or_else(|e| e.into_inner()) = request.level;
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let cursor = request.and_then(|r| r.cursor);
        let (tools, next) =
            tool_list::page(&tool_list::tools(), cursor.as_deref(), tool_list::PAGE)
                .map_err(|e| McpError::invalid_params(e, None))?;
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next;
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if !tool_list::names().contains(&request.name.as_ref()) {
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool `{}`; the tools are {}",
                    request.name,
                    tool_list::names().join(", ")
                ),
                None,
            ));
        }
        match tool_calls::call(&self.engine, &request.name, request.arguments, &context).await {
            Ended::Result(result) => {
                if let Ok(root) = self.engine.root().await {
                    self.forward_notes(&context.peer, root.take_notes());
                }
                Ok(result.into())
            }
            // rmcp sends nothing for a cancelled request; this error is never seen.
            Ended::Cancelled => Err(McpError::internal_error("cancelled", None)),
        }
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let root = self
            .engine
            .root()
            .await
            .map_err(|e| McpError::internal_error(e, None))?;
        let listed = resources::list(&root.workspace);
        let cursor = request.and_then(|r| r.cursor);
        let (items, next) = tool_list::page(&listed, cursor.as_deref(), tool_list::PAGE)
            .map_err(|e| McpError::invalid_params(e, None))?;
        let mut result = ListResourcesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let root = self
            .engine
            .root()
            .await
            .map_err(|e| McpError::internal_error(e, None))?;
        match resources::read(&root.workspace, &request.uri) {
            Some(contents) => Ok(ReadResourceResult::new(vec![contents]).into()),
            None => Err(McpError::resource_not_found(
                format!("no such resource: {}", request.uri),
                None,
            )),
        }
    }
}

/// Serves MCP on `input`/`output` until the input closes.
pub async fn serve(
    workspace: Vec<PathBuf>,
    input: impl AsyncRead + Send + Unpin + 'static,
    output: impl AsyncWrite + Send + Unpin + 'static,
) -> anyhow::Result<()> {
    let server = Server::new(workspace);
    server.engine.open_fixed().await?;
    let transport = LineTransport::new(input, output, server.engine.input_closed());
    match server.serve(transport).await {
        Ok(running) => {
            let reason = running.waiting().await?;
            tracing::info!(?reason, "MCP session ended");
            Ok(())
        }
        // The input closed before a session began: nothing to do.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(error) => Err(anyhow::anyhow!("MCP session failed: {error}")),
    }
}

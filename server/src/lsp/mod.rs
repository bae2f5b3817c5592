//! The LSP edge: the `LanguageServer` impl (thin: each method hands off to a handler),
//! the capabilities, the `copilot/ask` custom method, conversion between LSP types
//! and ours, and the JSON-RPC framing (`transport.rs`). Nothing below this layer sees an
//! LSP type.

pub mod capabilities;
pub mod client_calls;
pub mod convert;
mod handlers;
mod server;
pub mod transport;
pub mod wire;

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::{LspService, Server};

use crate::session::{Session, Settings};

/// Requests handled at once. tower-lsp's default is 4, and past this many plus its queue
/// of 100 it stops reading input, replies to our own requests and `$/cancelRequest`
/// included. An ask waiting for a core (`session::cpu_slots`) costs a few kilobytes, and
/// the cores, not this number, bound the work; so this is large enough that a burst of
/// asks never stops the server from reading what the editor sends.
const CONCURRENCY: usize = 1024;

/// Serves LSP on `input`/`output` (the editor's stdio) until the client sends `exit` or
/// closes the input. Every request still running then is dropped (asks are cancelled).
pub async fn serve<R, W>(
    settings: Settings,
    startup_problems: Vec<String>,
    input: R,
    output: W,
) -> transport::Outcome
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let session = Arc::new(Session::new(settings));
    let calls = Arc::new(client_calls::ClientCalls::default());
    let (service, socket) = LspService::build(|client| {
        server::Backend::new(
            client,
            session.clone(),
            calls.clone(),
            startup_problems.clone(),
        )
    })
    .custom_method("copilot/ask", server::Backend::ask)
    .custom_method(
        "copilot/didChangeEditorModels",
        server::Backend::did_change_editor_models,
    )
    .finish();
    // tower-lsp reads only frames the transport has checked and re-framed.
    transport::run(input, output, calls, |service_input, service_output| {
        Server::new(service_input, service_output, socket)
            .concurrency_level(CONCURRENCY)
            .serve(service)
    })
    .await
}

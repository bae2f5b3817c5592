//! The LSP edge: the `LanguageServer` impl (thin: each method hands off to a handler),
//! the capabilities, the `copilot/ask` custom method, and conversion between LSP types
//! and ours. Nothing below this layer sees an LSP type.

pub mod capabilities;
pub mod convert;
mod handlers;
mod server;
pub mod wire;

use std::sync::Arc;

use tower_lsp_server::{LspService, Server};

use crate::session::{Session, Settings};

/// Requests handled at once. tower-lsp's default is 4; an ask can run for a minute, so
/// a few long asks must not hold up code actions and other requests.
const CONCURRENCY: usize = 32;

/// Serves LSP over stdio until the client sends `exit` or closes the stream.
pub async fn serve(settings: Settings, startup_problems: Vec<String>) {
    let session = Arc::new(Session::new(settings));
    let (service, socket) = LspService::build(|client| {
        server::Backend::new(client, session.clone(), startup_problems.clone())
    })
    .custom_method("copilot/ask", server::Backend::ask)
    .finish();
    Server::new(tokio::io::stdin(), tokio::io::stdout(), socket)
        .concurrency_level(CONCURRENCY)
        .serve(service)
        .await;
}

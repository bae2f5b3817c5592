//! `workspace/executeCommand`: `copilot.ask` (the same as `copilot/ask`, for clients
//! without a plugin) and `copilot.clear`.

use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::lsp_types::ExecuteCommandParams;

use super::super::capabilities::{ASK_COMMAND, CLEAR_COMMAND};
use super::super::server::Backend;
use super::{ask, diagnostics};

pub async fn execute_command(
    backend: &Backend,
    params: ExecuteCommandParams,
) -> Result<Option<Value>> {
    match params.command.as_str() {
        ASK_COMMAND => ask::ask_command(backend, params.arguments).await,
        CLEAR_COMMAND => {
            diagnostics::clear(backend).await;
            Ok(None)
        }
        other => Err(Error::invalid_params(format!(
            "unknown command {other:?}; copilot-ls runs {ASK_COMMAND} and {CLEAR_COMMAND}"
        ))),
    }
}

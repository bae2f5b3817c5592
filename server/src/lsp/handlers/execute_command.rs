//! `workspace/executeCommand`: `copilot.ask` (the same as `copilot/ask`, for clients
//! without a plugin), `copilot.clear`, and `copilot.doctor` (the setup checks over the
//! settings the editor sent).

use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::lsp_types::ExecuteCommandParams;

use super::super::capabilities::{ASK_COMMAND, CLEAR_COMMAND, DOCTOR_COMMAND};
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
        DOCTOR_COMMAND => Ok(Some(doctor(backend).await)),
        other => Err(Error::invalid_params(format!(
            "unknown command {other:?}; copilot-ls runs {ASK_COMMAND}, {CLEAR_COMMAND} and {DOCTOR_COMMAND}"
        ))),
    }
}

/// `{checks}` for the settings in force: the environment's, overlaid by the editor's.
async fn doctor(backend: &Backend) -> Value {
    use crate::session::doctor::{self, Sources};
    let session = &backend.session;
    let editor = session.editor_client();
    let sources = Sources {
        env: &crate::session::settings::process_env,
        editor: Some("the editor's settings"),
        editor_models: editor.channel.is_some().then_some(&editor.models[..]),
    };
    let workspace = session.workspace();
    let checks = doctor::run(
        (&session.settings(), &session.problems()),
        &sources,
        workspace.as_ref(),
        session.index().as_ref(),
        crate::index::cache_dir_from_env().as_deref(),
    )
    .await;
    serde_json::json!({ "checks": checks })
}

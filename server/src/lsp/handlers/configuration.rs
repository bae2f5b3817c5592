//! `workspace/didChangeConfiguration`: `settings["copilot-ls"]`, else `settings.copilot`,
//! else the whole settings object (`session::configuration_section`). Bad values are
//! reported and ignored.

use tower_lsp_server::lsp_types::{DidChangeConfigurationParams, MessageType};

use super::super::server::Backend;

pub async fn did_change_configuration(backend: &Backend, params: DidChangeConfigurationParams) {
    let settings = crate::session::configuration_section(&params.settings);
    let problems = backend.session.apply_settings(settings);
    for problem in problems {
        tracing::warn!("configuration: {problem}");
        backend
            .client
            .show_message(
                MessageType::ERROR,
                format!("copilot-ls: configuration: {problem}"),
            )
            .await;
    }
}

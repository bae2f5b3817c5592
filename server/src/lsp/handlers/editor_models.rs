//! The editor's models (contract v5, section 11): whether the client runs them, read at
//! `initialize` (`capabilities.experimental.copilotEditorModels`, with the list in
//! `initializationOptions.editorModels`), and the list replaced by
//! `copilot/didChangeEditorModels` (models often appear seconds after start-up).

use std::sync::Arc;

use serde_json::Value;
use tower_lsp_server::lsp_types::InitializeParams;

use super::super::server::Backend;
use crate::providers::editor::{EditorChannel, EditorModelInfo};

/// At `initialize`, before the settings it carries are applied (they may name
/// `provider: editor`, refused without the capability). Returns a problem to report.
pub fn initialize(backend: &Backend, params: &InitializeParams) -> Option<String> {
    let declared = params
        .capabilities
        .experimental
        .as_ref()
        .and_then(|experimental| experimental.get("copilotEditorModels"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let channel = declared.then(|| backend.calls.clone() as Arc<dyn EditorChannel>);
    let models = params
        .initialization_options
        .as_ref()
        .and_then(|options| options.get("editorModels"))
        .map(EditorModelInfo::list_from)
        .unwrap_or_default();
    backend.session.set_editor_client(channel, models)
}

/// `copilot/didChangeEditorModels {models}`.
pub fn did_change(backend: &Backend, params: Value) {
    let models = EditorModelInfo::list_from(&params["models"]);
    tracing::debug!(models = models.len(), "the editor's models changed");
    backend.session.set_editor_models(models);
}

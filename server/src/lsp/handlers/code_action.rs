//! `textDocument/codeAction`: a quick fix for each live suggested edit the range touches.

use tower_lsp_server::lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse,
};

use super::super::convert;
use super::super::server::Backend;
use crate::session::{edit_diagnostic, Placement};

pub fn code_action(backend: &Backend, params: CodeActionParams) -> Option<CodeActionResponse> {
    if let Some(only) = &params.context.only {
        if !only
            .iter()
            .any(|kind| *kind == CodeActionKind::QUICKFIX || kind.as_str().is_empty())
        {
            return None;
        }
    }
    let workspace = backend.session.workspace()?;
    let encoding = backend.session.encoding();
    let support = backend.flags().edits;
    let found = crate::session::lock(&backend.session.surface).edits_at(
        params.text_document.uri.as_str(),
        convert::span(params.range),
        &workspace,
        encoding,
    );
    let mut actions = Vec::new();
    for (edit, id, placement) in found {
        let Some(workspace_edit) = convert::workspace_edit(&edit, &id, &placement, support) else {
            continue;
        };
        let diagnostics =
            match &placement {
                Placement::Replace { span, .. } => Some(vec![convert::diagnostic(
                    &edit_diagnostic(&id, &edit.title, *span),
                )]),
                _ => None,
            };
        actions.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: format!("Copilot: {}", edit.title),
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics,
            edit: Some(workspace_edit),
            // Edits to tool or CI configuration are never pre-selected.
            is_preferred: Some(!edit.protected),
            ..CodeAction::default()
        }));
    }
    Some(actions)
}

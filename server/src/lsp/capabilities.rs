//! What the server advertises at `initialize`, and what it learns of the client.

use tower_lsp_server::lsp_types::{
    ClientCapabilities, CodeActionKind, CodeActionOptions, CodeActionProviderCapability,
    ExecuteCommandOptions, OneOf, PositionEncodingKind, ServerCapabilities,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    WorkDoneProgressOptions, WorkspaceFoldersServerCapabilities, WorkspaceServerCapabilities,
};

use super::convert::EditSupport;
use crate::text::PositionEncoding;

pub const ASK_COMMAND: &str = "copilot.ask";
pub const CLEAR_COMMAND: &str = "copilot.clear";
pub const DOCTOR_COMMAND: &str = "copilot.doctor";

/// utf-8 when the client offers it (no conversion for us), else the mandatory utf-16.
pub fn negotiate_encoding(capabilities: &ClientCapabilities) -> PositionEncoding {
    let offered = capabilities
        .general
        .as_ref()
        .and_then(|general| general.position_encodings.as_ref());
    match offered {
        Some(encodings) if encodings.contains(&PositionEncodingKind::UTF8) => {
            PositionEncoding::Utf8
        }
        _ => PositionEncoding::Utf16,
    }
}

pub fn edit_support(capabilities: &ClientCapabilities) -> EditSupport {
    let workspace_edit = capabilities
        .workspace
        .as_ref()
        .and_then(|w| w.workspace_edit.as_ref());
    EditSupport {
        change_annotations: workspace_edit
            .and_then(|w| w.change_annotation_support.as_ref())
            .is_some(),
    }
}

pub fn supports_watching_files(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .workspace
        .as_ref()
        .and_then(|w| w.did_change_watched_files.as_ref())
        .and_then(|w| w.dynamic_registration)
        .unwrap_or(false)
}

pub fn supports_work_done_progress(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .window
        .as_ref()
        .and_then(|w| w.work_done_progress)
        .unwrap_or(false)
}

pub fn server_capabilities(encoding: PositionEncoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(match encoding {
            PositionEncoding::Utf8 => PositionEncodingKind::UTF8,
            PositionEncoding::Utf16 => PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                ..TextDocumentSyncOptions::default()
            },
        )),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            work_done_progress_options: WorkDoneProgressOptions::default(),
            resolve_provider: Some(false),
        })),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: [ASK_COMMAND, CLEAR_COMMAND, DOCTOR_COMMAND]
                .map(String::from)
                .to_vec(),
            work_done_progress_options: WorkDoneProgressOptions::default(),
        }),
        // Every folder is a root, and folders added or removed while we run follow.
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                supported: Some(true),
                change_notifications: Some(OneOf::Left(true)),
            }),
            file_operations: None,
        }),
        ..ServerCapabilities::default()
    }
}

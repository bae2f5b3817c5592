//! Conversion between our plain types and LSP types, in one place: positions, URIs,
//! diagnostics, workspace edits, and the ask result.

use std::collections::HashMap;
use std::str::FromStr;

use tower_lsp_server::lsp_types::{
    AnnotatedTextEdit, ChangeAnnotation, CreateFile, CreateFileOptions, Diagnostic,
    DiagnosticSeverity, DocumentChangeOperation, DocumentChanges, NumberOrString, OneOf,
    OptionalVersionedTextDocumentIdentifier, Position, Range, ResourceOp, TextDocumentEdit,
    TextEdit, Uri, WorkspaceEdit,
};

use super::wire;
use crate::agent::IndexState;
use crate::session::{AskOutcome, DiagnosticSpec, EditorSurface, Placement, Severity};
use crate::text::{Pos, PositionEncoding, Span};
use crate::tools::ProposedEdit;
use crate::workspace::Workspace;

/// What the client can take in a `WorkspaceEdit` beyond the contract's baseline. The
/// contract fixes `documentChanges` (so open documents carry their version and a stale
/// edit cannot land on changed text); change annotations depend on the client.
#[derive(Clone, Copy, Debug)]
pub struct EditSupport {
    pub change_annotations: bool,
}

impl EditSupport {
    /// For the command line, which hands the edit to no client: the richest form.
    pub const FULL: EditSupport = EditSupport {
        change_annotations: true,
    };
}

pub fn range(span: Span) -> Range {
    Range::new(position(span.start), position(span.end))
}

pub fn position(pos: Pos) -> Position {
    Position::new(pos.line, pos.character)
}

pub fn span(range: Range) -> Span {
    Span {
        start: Pos::new(range.start.line, range.start.character),
        end: Pos::new(range.end.line, range.end.character),
    }
}

/// Our URIs are built by `text::file_uri`, always valid; a bad one becomes `file:///`.
pub fn uri(text: &str) -> Uri {
    Uri::from_str(text).unwrap_or_else(|_| Uri::from_str("file:///").expect("static URI"))
}

pub fn diagnostic(spec: &DiagnosticSpec) -> Diagnostic {
    Diagnostic {
        range: range(spec.span),
        severity: Some(match spec.severity {
            Severity::Information => DiagnosticSeverity::INFORMATION,
            Severity::Hint => DiagnosticSeverity::HINT,
        }),
        code: Some(NumberOrString::String(spec.code.to_string())),
        source: Some("copilot".to_string()),
        message: spec.message.clone(),
        data: match (&spec.edit_id, &spec.citation) {
            (Some(id), _) => Some(serde_json::json!({ "editId": id })),
            (None, Some(place)) => Some(serde_json::json!({
                "citation": place.index,
                "line": place.line,
                "endLine": place.end_line,
            })),
            (None, None) => None,
        },
        ..Diagnostic::default()
    }
}

/// The `WorkspaceEdit` that applies a suggested edit where it sits now.
pub fn workspace_edit(
    edit: &ProposedEdit,
    id: &str,
    placement: &Placement,
    support: EditSupport,
) -> Option<WorkspaceEdit> {
    let target = uri(&crate::text::file_uri(&edit.absolute));
    let (text_range, version, new_text) = match placement {
        Placement::Replace {
            version,
            change,
            change_text,
            ..
        } => (range(*change), *version, change_text.clone()),
        Placement::Create => (Range::default(), None, edit.new_text.clone()),
        Placement::Withdrawn => return None,
    };
    let annotation_id = format!("copilot-{id}");
    let text_edit = TextEdit::new(text_range, new_text);
    let mut result = WorkspaceEdit::default();
    let edits = if support.change_annotations {
        vec![OneOf::Right(AnnotatedTextEdit {
            text_edit,
            annotation_id: annotation_id.clone(),
        })]
    } else {
        vec![OneOf::Left(text_edit)]
    };
    let document_edit = TextDocumentEdit {
        text_document: OptionalVersionedTextDocumentIdentifier {
            uri: target.clone(),
            version,
        },
        edits,
    };
    let operations = match placement {
        Placement::Create => {
            vec![
                DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
                    uri: target,
                    options: Some(CreateFileOptions {
                        overwrite: Some(false),
                        ignore_if_exists: Some(false),
                    }),
                    annotation_id: support.change_annotations.then(|| annotation_id.clone()),
                })),
                DocumentChangeOperation::Edit(document_edit),
            ]
        }
        _ => vec![DocumentChangeOperation::Edit(document_edit)],
    };
    result.document_changes = Some(DocumentChanges::Operations(operations));
    if support.change_annotations {
        let description = if edit.protected {
            "Suggested by copilot-ls. This changes tool or CI configuration: review it carefully."
        } else {
            "Suggested by copilot-ls; review before applying."
        };
        result.change_annotations = Some(HashMap::from([(
            annotation_id,
            ChangeAnnotation {
                label: edit.title.clone(),
                needs_confirmation: Some(true),
                description: Some(description.to_string()),
            },
        )]));
    }
    Some(result)
}

/// The wire `AskResult` for a finished ask. Edits carry the `WorkspaceEdit` for where
/// they sit at the end of the ask.
pub fn ask_result(
    asked: &AskOutcome,
    surface: &mut EditorSurface,
    workspace: &Workspace,
    encoding: PositionEncoding,
    support: EditSupport,
) -> wire::AskResult {
    let outcome = &asked.outcome;
    let citations = outcome
        .citations
        .iter()
        .map(|c| wire::Citation {
            uri: uri(&c.uri),
            range: range(c.span),
            path: c.path.clone(),
            line: c.line,
            end_line: c.end_line,
            note: c.note.clone(),
            verified: c.verified,
        })
        .collect();
    let edits = outcome
        .edits
        .iter()
        .filter_map(|e| {
            let placement = surface
                .placement_of(&e.id, workspace, encoding)
                .unwrap_or(Placement::Withdrawn);
            Some(wire::SuggestedEdit {
                id: e.id.clone(),
                title: e.edit.title.clone(),
                path: e.edit.path.clone(),
                uri: uri(&crate::text::file_uri(&e.edit.absolute)),
                edit: workspace_edit(&e.edit, &e.id, &placement, support)?,
            })
        })
        .collect();
    let steps = outcome.steps.iter().map(step).collect();
    let usage = &outcome.stats.usage;
    wire::AskResult {
        conversation_id: asked.conversation_id.clone(),
        answer: outcome.answer.clone(),
        citations,
        edits,
        steps,
        stop_reason: outcome.stop_reason.as_str().to_string(),
        usage: wire::Usage {
            model_calls: u64::from(outcome.stats.model_calls),
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cached_input_tokens: usage.cached_input_tokens,
        },
        index: index_coverage(&asked.index),
        model: asked.model.clone(),
    }
}

fn index_coverage(state: &IndexState) -> wire::IndexCoverage {
    match state {
        IndexState::Indexed(coverage) => wire::IndexCoverage {
            complete: coverage.complete,
            files_indexed: coverage.files_indexed as u64,
            files_total: coverage.files_total as u64,
            history: coverage.history.map(|history| wire::HistoryCoverage {
                complete: history.complete,
                commits: history.commits as u64,
            }),
        },
        IndexState::NotIndexed(_) => wire::IndexCoverage::default(),
    }
}

pub fn step(step: &crate::agent::Step) -> wire::Step {
    wire::Step {
        tool: step.tool.clone(),
        arguments: step.arguments.clone(),
        ok: step.ok,
        summary: step.summary.clone(),
        thought: step.thought.clone(),
    }
}

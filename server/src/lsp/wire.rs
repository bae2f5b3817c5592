//! The `copilot/ask` wire types (PROTOCOL.md section 3), serde at the edge.

use serde::{Deserialize, Serialize};
use tower_lsp_server::lsp_types::{
    ProgressToken, Range, TextDocumentIdentifier, Uri, WorkspaceEdit,
};

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct AskParams {
    /// Optional in the type so a missing question gets our own clear -32602 message.
    #[serde(default)]
    pub question: Option<String>,
    #[serde(default)]
    pub conversation_id: Option<String>,
    #[serde(default)]
    pub text_document: Option<TextDocumentIdentifier>,
    #[serde(default)]
    pub range: Option<Range>,
    #[serde(default)]
    pub work_done_token: Option<ProgressToken>,
    /// When given, the answer streams on it as `AskDelta`s.
    #[serde(default)]
    pub partial_result_token: Option<ProgressToken>,
    /// The editor model for this ask alone, over the configured one (section 11).
    #[serde(default)]
    pub editor_model: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AskResult {
    pub conversation_id: String,
    pub answer: String,
    pub citations: Vec<Citation>,
    pub edits: Vec<SuggestedEdit>,
    pub steps: Vec<Step>,
    pub stop_reason: String,
    pub usage: Usage,
    pub index: IndexCoverage,
    /// The model that answered, as people read it (a model name, or the editor model's
    /// name and vendor); absent when no model did. Beyond the contract: the thread shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// What the ask's search could see (v3): `complete` is false while the first build
/// runs, and for a folder that is not indexed.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexCoverage {
    pub complete: bool,
    pub files_indexed: u64,
    pub files_total: u64,
    /// v5: the repository's history, when a root has one to read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<HistoryCoverage>,
}

/// v5: how much of the history the ask could draw on (`complete` as in `index --json`).
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryCoverage {
    pub complete: bool,
    pub commits: u64,
}

/// Summed over the ask's model calls, retries included.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub model_calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_input_tokens: u64,
}

/// The value of each `$/progress` on an ask's `partialResultToken`: text to append to
/// model turn `turn`, or a tool call of that turn that just finished.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AskDelta {
    pub turn: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<Step>,
}

/// `$/progress` carrying a partial result (lsp-types only knows work-done values).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartialResultParams {
    pub token: ProgressToken,
    /// An `AskDelta`.
    pub value: serde_json::Value,
}

pub enum PartialResult {}

impl tower_lsp_server::lsp_types::notification::Notification for PartialResult {
    type Params = PartialResultParams;
    const METHOD: &'static str = "$/progress";
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Citation {
    pub uri: Uri,
    pub range: Range,
    pub path: String,
    pub line: usize,
    pub end_line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub verified: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SuggestedEdit {
    pub id: String,
    pub title: String,
    pub path: String,
    pub uri: Uri,
    pub edit: WorkspaceEdit,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub tool: String,
    pub arguments: serde_json::Value,
    pub ok: bool,
    pub summary: String,
    /// On the first step of a model turn: the text the model wrote before its calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thought: Option<String>,
}

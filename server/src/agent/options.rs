//! What a front end may ask of one ask beyond the question: a read-only ask (no
//! `propose_edit`), the ranked places only (no model), tools from outside (an ACP
//! client's MCP servers), and a reviewer that asks the user about each suggested edit at
//! its tool call, so the tool result the model reads says what the user decided.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::IdentifiedEdit;
use crate::tools::external::ExternalTool;

#[derive(Clone, Default)]
pub struct AskOptions {
    /// No edit tool is offered, and a call of one is refused (ACP's `ask` mode).
    pub read_only: bool,
    /// Answer with the places the server's own search ranks best, as a no-model ask
    /// does, without calling the model even when one is configured (`/locate`).
    pub places_only: bool,
    /// Offered to the model beside the built-in tools.
    pub external_tools: Vec<Arc<ExternalTool>>,
    /// Asked about each suggested edit as its tool call finishes.
    pub review_edit: Option<Arc<dyn EditReview>>,
}

impl std::fmt::Debug for AskOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AskOptions")
            .field("read_only", &self.read_only)
            .field("places_only", &self.places_only)
            .field("external_tools", &self.external_tools.len())
            .field("review_edit", &self.review_edit.is_some())
            .finish()
    }
}

/// Shows a suggested edit to the user and applies it when they allow it.
pub trait EditReview: Send + Sync {
    /// `call_id` is the model's `propose_edit` call.
    fn review<'a>(
        &'a self,
        call_id: &'a str,
        edit: &'a IdentifiedEdit,
    ) -> BoxFuture<'a, EditDecision>;
}

/// What became of a suggested edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditDecision {
    /// The user allowed it and the file was written.
    Applied,
    /// The user rejected it; nothing was written.
    Rejected,
    /// The user cancelled (the prompt is being cancelled too); nothing was written.
    Cancelled,
    /// Allowed, but the write failed (the client's reason), or the edit no longer
    /// applied to the file's current text.
    Failed(String),
    /// Shown to the user; this client cannot write, so nothing was written.
    Shown,
}

impl EditDecision {
    /// Whether the edit's tool call succeeded.
    pub fn ok(&self) -> bool {
        matches!(self, EditDecision::Applied | EditDecision::Shown)
    }

    /// The tool result the model reads: the decision's word first, so the answer that
    /// follows can say what really happened.
    pub fn tool_result(&self, path: &str) -> String {
        match self {
            EditDecision::Applied => {
                format!("applied: the user accepted the edit and {path} was written.")
            }
            EditDecision::Rejected => {
                format!("rejected: the user rejected the edit; {path} was not changed.")
            }
            EditDecision::Cancelled => {
                format!("cancelled: the user cancelled; {path} was not changed.")
            }
            EditDecision::Failed(reason) => {
                format!("Error: the edit of {path} was not applied: {reason}")
            }
            EditDecision::Shown => format!(
                "shown: the edit was shown to the user as a diff; this editor cannot write files, so {path} was not changed."
            ),
        }
    }

    /// One line for people (the step's summary).
    pub fn summary(&self, path: &str) -> String {
        match self {
            EditDecision::Applied => format!("applied to {path}"),
            EditDecision::Rejected => format!("rejected: {path}"),
            EditDecision::Cancelled => format!("cancelled: {path}"),
            EditDecision::Failed(reason) => format!("not applied: {reason}"),
            EditDecision::Shown => format!("shown: {path}"),
        }
    }
}

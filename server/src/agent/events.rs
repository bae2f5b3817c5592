//! What an ask reports while it runs, in the order it happens: the model's text as it
//! streams, each tool call as it starts and finishes. The front ends (`lsp/` progress
//! and partial results, `cli/` stderr, `acp/` session updates) each turn these into
//! their own protocol; the agent knows none of them.

use serde_json::Value;

use super::{IdentifiedEdit, Step};

// Events are passed one at a time and never stored in bulk, so the size of the largest
// variant costs nothing worth boxing for.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum AskEvent {
    /// The ask began; `instruction_files` are the workspace's instruction files that went
    /// into the system prompt (workspace-relative, in prompt order; often none).
    Started { instruction_files: Vec<String> },
    /// Before any model turn: the line the answer starts with because its search could
    /// not see the whole workspace (`index_notice.rs`). The final answer holds it too.
    Notice { text: String },
    /// Model text of turn `turn` (1-based model call) to append, as it is written. The
    /// `answer` string the model writes into the `answer` tool's arguments counts as
    /// text too (after a blank line when the turn wrote text of its own first). Sent at
    /// once, never held back; a provider call is retried only before any of it was sent,
    /// so it is never repeated. The final `AgentOutcome::answer` is authoritative.
    Text { turn: u32, text: String },
    /// Reasoning the provider streams apart from the text (when it does).
    Thought { turn: u32, text: String },
    /// A tool call of turn `turn` is about to run. `label` is its progress line
    /// (`search_code: rate_limit`); `arguments` is always an object.
    ToolStarted {
        turn: u32,
        call_id: String,
        tool: String,
        arguments: Value,
        label: String,
    },
    /// That tool call finished; `edit` is set when it recorded a suggested edit.
    ToolFinished {
        turn: u32,
        call_id: String,
        step: Step,
        edit: Option<IdentifiedEdit>,
    },
}

/// Where an ask's events go. Called synchronously from the agent: it must not block.
pub type EventSink<'a> = &'a (dyn Fn(AskEvent) + Send + Sync);

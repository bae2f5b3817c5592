//! What an ask reports while it runs, in the order it happens: the model's text as it
//! streams, each tool call as it starts and finishes. The front ends (`lsp/` progress
//! and partial results, `cli/` stderr, `acp/` session updates) each turn these into
//! their own protocol; the agent knows none of them.

use serde_json::Value;

use super::{IdentifiedEdit, Step};

#[derive(Clone, Debug)]
pub enum AskEvent {
    /// Model text of turn `turn` (1-based model call) to append, as it is written. The
    /// `answer` string the model writes into the `answer` tool's arguments counts as
    /// text too.
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

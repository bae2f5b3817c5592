//! The first user message: the question, where the user is in the editor, and the few
//! most relevant code chunks the server's own retrieval found, within a byte budget.
//! File text in it (chunks, the selection) arrives redacted (shown_input.rs).

use super::AskInput;
use crate::text::prefix_within;

/// Retrieved context is capped so the first request stays small and cheap.
pub const CONTEXT_BUDGET_BYTES: usize = 8 * 1024;
/// A selection longer than this is cut; the model can read the rest.
const SELECTION_BUDGET_BYTES: usize = 4 * 1024;

pub fn first_message(input: &AskInput) -> String {
    let mut message = input.question.trim().to_string();
    if let Some(focus) = &input.focus {
        message.push_str("\n\n");
        match focus.lines {
            Some((first, last)) => message.push_str(&format!(
                "The user is looking at {} with lines {first}-{last} selected.",
                focus.path
            )),
            None => message.push_str(&format!("The user is looking at {}.", focus.path)),
        }
        if let Some(selected) = focus
            .selected_text
            .as_deref()
            .filter(|s| !s.trim().is_empty())
        {
            message.push_str("\nSelected text:\n```\n");
            message.push_str(prefix_within(selected, SELECTION_BUDGET_BYTES));
            message.push_str("\n```");
        }
    }
    let mut budget = CONTEXT_BUDGET_BYTES;
    let mut chunks = String::new();
    for hit in &input.context {
        let block = format!(
            "\n{}:{}-{}\n```\n{}\n```\n",
            hit.path,
            hit.start_line,
            hit.end_line,
            hit.text.trim_end()
        );
        if block.len() > budget {
            continue;
        }
        budget -= block.len();
        chunks.push_str(&block);
    }
    if !chunks.is_empty() {
        message.push_str(
            "\n\nPossibly relevant code (from a quick lexical search of the workspace; verify before citing):\n",
        );
        message.push_str(&chunks);
    }
    message
}

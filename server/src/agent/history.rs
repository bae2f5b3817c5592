//! Bounding a conversation's history for follow-up questions: the oldest tool results
//! are emptied first (they are the bulk and can be fetched again), then the oldest
//! whole exchanges are dropped.

use crate::providers::{transcript, Message};

/// What a follow-up carries from earlier asks, at most.
pub const MAX_HISTORY_BYTES: usize = 64 * 1024;

const DROPPED: &str =
    "(result dropped to keep the conversation short; call the tool again if needed)";

/// `messages` within `max_bytes`: the oldest tool results emptied first, then the
/// oldest whole exchanges dropped (`providers::transcript`).
pub fn bound_history(messages: Vec<Message>, max_bytes: usize) -> Vec<Message> {
    transcript::bound(messages, max_bytes, DROPPED).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{AssistantTurn, ToolCall, ToolResult};

    fn exchange(question: &str, result_size: usize) -> Vec<Message> {
        vec![
            Message::User(question.to_string()),
            Message::Assistant(AssistantTurn {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "c".into(),
                    name: "read_file".into(),
                    arguments: "{}".into(),
                }],
            }),
            Message::ToolResults(vec![ToolResult {
                call_id: "c".into(),
                name: "read_file".into(),
                content: "x".repeat(result_size),
                is_error: false,
            }]),
            Message::Assistant(AssistantTurn {
                text: format!("answer to {question}"),
                tool_calls: vec![],
            }),
        ]
    }

    #[test]
    fn drops_old_tool_results_before_old_questions() {
        let mut history = exchange("first", 10_000);
        history.extend(exchange("second", 10_000));
        let bounded = bound_history(history.clone(), 12_000);
        assert_eq!(bounded.len(), 8, "both exchanges kept");
        assert!(matches!(&bounded[2], Message::ToolResults(r) if r[0].content == DROPPED));
        let tight = bound_history(history, 200);
        assert!(matches!(&tight[0], Message::User(q) if q == "second"));
    }
}

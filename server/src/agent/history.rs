//! Bounding a conversation's history for follow-up questions: the oldest tool results
//! are emptied first (they are the bulk and can be fetched again), then the oldest
//! whole exchanges are dropped.

use crate::providers::Message;

/// What a follow-up carries from earlier asks, at most.
pub const MAX_HISTORY_BYTES: usize = 64 * 1024;

const DROPPED: &str =
    "(result dropped to keep the conversation short; call the tool again if needed)";

fn size(message: &Message) -> usize {
    match message {
        Message::User(text) => text.len(),
        Message::Assistant(turn) => {
            turn.text.len()
                + turn
                    .tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.len())
                    .sum::<usize>()
        }
        Message::ToolResults(results) => results.iter().map(|r| r.content.len()).sum(),
    }
}

pub fn bound_history(mut messages: Vec<Message>, max_bytes: usize) -> Vec<Message> {
    let total = |messages: &[Message]| messages.iter().map(size).sum::<usize>();
    // 1. Empty tool results, oldest first.
    let mut index = 0;
    while total(&messages) > max_bytes && index < messages.len() {
        if let Message::ToolResults(results) = &mut messages[index] {
            for result in results.iter_mut() {
                if result.content.len() > DROPPED.len() {
                    result.content = DROPPED.to_string();
                }
            }
        }
        index += 1;
    }
    // 2. Drop whole exchanges from the front: everything up to the next user question,
    // so the history still starts with a user message and no tool result is orphaned.
    while total(&messages) > max_bytes && messages.len() > 1 {
        let next_question = messages
            .iter()
            .enumerate()
            .skip(1)
            .find(|(_, m)| matches!(m, Message::User(_)))
            .map(|(i, _)| i);
        match next_question {
            Some(i) => {
                messages.drain(..i);
            }
            None => break,
        }
    }
    messages
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

//! Keeping a conversation within a size, the one way both callers need it: the oldest
//! tool results are emptied first (they are the bulk, and can be fetched again), then the
//! oldest whole exchanges are dropped, up to the next user message, so the conversation
//! still starts with a user message and no tool result loses its call. Used for a
//! follow-up's history (`agent::history`) and for an editor model's input limit
//! (`editor.rs`).

use super::Message;

/// What `bound` took out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bounded {
    /// Tool results replaced by the placeholder.
    pub results: usize,
    /// Whole earlier exchanges dropped.
    pub exchanges: usize,
}

/// A message's size in bytes, as the bound counts it.
pub fn size(message: &Message) -> usize {
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

/// `messages` within `max_bytes` (as [`size`] counts them), a result emptied to
/// `placeholder`, and what was taken out.
pub fn bound(
    mut messages: Vec<Message>,
    max_bytes: usize,
    placeholder: &str,
) -> (Vec<Message>, Bounded) {
    let total = |messages: &[Message]| messages.iter().map(size).sum::<usize>();
    let mut bounded = Bounded::default();
    // 1. Empty tool results, oldest first.
    let mut index = 0;
    while total(&messages) > max_bytes && index < messages.len() {
        if let Message::ToolResults(results) = &mut messages[index] {
            for result in results.iter_mut() {
                if result.content.len() > placeholder.len() {
                    result.content = placeholder.to_string();
                    bounded.results += 1;
                }
            }
        }
        index += 1;
    }
    // 2. Drop whole exchanges from the front: everything up to the next user message.
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
                bounded.exchanges += 1;
            }
            None => break,
        }
    }
    (messages, bounded)
}

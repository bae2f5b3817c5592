//! Tool-call ids made unique before the results go back: a model that repeats an id
//! (within a turn, or one from an earlier turn; some local models number every turn's
//! calls from 1) would otherwise get two results under one id, which providers reject
//! on the next request. A repeated or empty id is renamed `{id}_{n}`; the assistant turn
//! and its results both carry the new id, so they still pair up.

use std::collections::HashSet;

use crate::providers::{Message, ToolCall};

/// Renames the calls of a new turn whose ids are empty or already used in `earlier`
/// (the conversation so far) or by a previous call of the same turn.
pub fn make_unique(calls: &mut [ToolCall], earlier: &[Message]) {
    let mut used: HashSet<String> = earlier
        .iter()
        .flat_map(|message| match message {
            Message::Assistant(turn) => turn.tool_calls.iter().map(|c| c.id.clone()).collect(),
            Message::ToolResults(results) => results.iter().map(|r| r.call_id.clone()).collect(),
            Message::User(_) => Vec::new(),
        })
        .collect();
    for call in calls.iter_mut() {
        if !call.id.is_empty() && used.insert(call.id.clone()) {
            continue;
        }
        let base = if call.id.is_empty() { "call" } else { &call.id };
        let renamed = (2..)
            .map(|n| format!("{base}_{n}"))
            .find(|candidate| !used.contains(candidate))
            .expect("an unused suffix exists");
        tracing::debug!(from = %call.id, to = %renamed, "repeated tool-call id renamed");
        used.insert(renamed.clone());
        call.id = renamed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{AssistantTurn, ToolResult};

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.to_string(),
            name: "read_file".to_string(),
            arguments: "{}".to_string(),
        }
    }

    fn ids(calls: &[ToolCall]) -> Vec<&str> {
        calls.iter().map(|c| c.id.as_str()).collect()
    }

    #[test]
    fn repeated_and_empty_ids_in_a_turn_are_renamed() {
        let mut calls = vec![call("a"), call("a"), call(""), call("a_2"), call("")];
        make_unique(&mut calls, &[]);
        assert_eq!(ids(&calls), ["a", "a_2", "call_2", "a_2_2", "call_3"]);
    }

    #[test]
    fn ids_from_earlier_turns_are_not_reused() {
        let earlier = vec![
            Message::User("q".to_string()),
            Message::Assistant(AssistantTurn {
                text: String::new(),
                tool_calls: vec![call("1")],
            }),
            Message::ToolResults(vec![ToolResult {
                call_id: "1".to_string(),
                name: "read_file".to_string(),
                content: "x".to_string(),
                is_error: false,
            }]),
        ];
        let mut calls = vec![call("1"), call("2")];
        make_unique(&mut calls, &earlier);
        assert_eq!(ids(&calls), ["1_2", "2"]);
    }

    #[test]
    fn distinct_ids_are_kept() {
        let mut calls = vec![call("call_abc"), call("call_def")];
        make_unique(&mut calls, &[]);
        assert_eq!(ids(&calls), ["call_abc", "call_def"]);
    }
}

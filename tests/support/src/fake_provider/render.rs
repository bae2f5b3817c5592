//! Turning a scripted model turn into a vendor's reply, whole or as SSE events. The
//! streams reproduce the quirks of the real recordings (fragmented and interleaved tool
//! arguments, role and first tool delta in one chunk, a usage chunk with no choices,
//! `ping` events, an empty first `partial_json`) so the clients are tested against them.

use serde_json::{json, Value};

use super::script::{Finish, Turn};

/// Which wire format a request spoke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    OpenAi,
    Anthropic,
}

const CREATED: u64 = 1_700_000_000;

fn usage(turn: &Turn, request_bytes: usize) -> (u64, u64) {
    turn.usage.unwrap_or_else(|| {
        // Roughly four bytes a token, like the real tokenizers on English and code.
        let output: usize = turn.text.len()
            + turn
                .tool_calls
                .iter()
                .map(|c| c.arguments.len())
                .sum::<usize>();
        (request_bytes as u64 / 4 + 1, output as u64 / 4 + 1)
    })
}

/// Splits text into word-sized pieces, as models stream it.
fn text_pieces(text: &str) -> Vec<String> {
    text.split_inclusive(char::is_whitespace)
        .map(str::to_string)
        .collect()
}

/// Splits tool arguments into small pieces that cut through keys and values, the way the
/// recordings do.
fn argument_pieces(arguments: &str) -> Vec<String> {
    let chars: Vec<char> = arguments.chars().collect();
    chars.chunks(5).map(|c| c.iter().collect()).collect()
}

fn openai_finish(finish: Finish) -> &'static str {
    match finish {
        Finish::Stop => "stop",
        Finish::ToolCalls => "tool_calls",
        Finish::Length => "length",
    }
}

fn anthropic_stop(finish: Finish) -> &'static str {
    match finish {
        Finish::Stop => "end_turn",
        Finish::ToolCalls => "tool_use",
        Finish::Length => "max_tokens",
    }
}

/// The whole (non-streamed) reply body.
pub(crate) fn whole(format: Format, turn: &Turn, model: &str, request_bytes: usize) -> Vec<u8> {
    let (input_tokens, output_tokens) = usage(turn, request_bytes);
    let body = match format {
        Format::OpenAi => {
            let mut message = json!({
                "role": "assistant",
                "content": if turn.text.is_empty() { Value::Null } else { json!(turn.text) },
                "refusal": null,
            });
            if !turn.tool_calls.is_empty() {
                message["tool_calls"] = turn
                    .tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        })
                    })
                    .collect();
            }
            json!({
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": CREATED,
                "model": model,
                "choices": [{
                    "index": 0,
                    "message": message,
                    "logprobs": null,
                    "finish_reason": openai_finish(turn.finish),
                }],
                "usage": {
                    "prompt_tokens": input_tokens,
                    "completion_tokens": output_tokens,
                    "total_tokens": input_tokens + output_tokens,
                },
            })
        }
        Format::Anthropic => {
            let mut content = Vec::new();
            if !turn.text.is_empty() {
                content.push(json!({"type": "text", "text": turn.text}));
            }
            for call in &turn.tool_calls {
                // Malformed scripted arguments go out as a string: the API never does
                // that, but it lets a test see what the client makes of it.
                let input = serde_json::from_str::<Value>(&call.arguments)
                    .unwrap_or_else(|_| json!(call.arguments));
                content.push(json!({
                    "type": "tool_use", "id": call.id, "name": call.name, "input": input,
                }));
            }
            json!({
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": anthropic_stop(turn.finish),
                "stop_sequence": null,
                "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
            })
        }
    };
    body.to_string().into_bytes()
}

/// The streamed reply, one complete SSE event per element.
pub(crate) fn events(
    format: Format,
    turn: &Turn,
    model: &str,
    request_bytes: usize,
) -> Vec<String> {
    match format {
        Format::OpenAi => openai_events(turn, model, request_bytes),
        Format::Anthropic => anthropic_events(turn, model, request_bytes),
    }
}

fn openai_events(turn: &Turn, model: &str, request_bytes: usize) -> Vec<String> {
    let (input_tokens, output_tokens) = usage(turn, request_bytes);
    let chunk = |delta: Value, finish: Value| {
        let chunk = json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        format!("data: {chunk}\n\n")
    };
    let header = |index: usize| {
        let call = &turn.tool_calls[index];
        json!({
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        })
    };
    let mut events = Vec::new();
    let calls_only = turn.text.is_empty() && !turn.tool_calls.is_empty();
    if calls_only {
        // As OpenAI does: the role and the first call's id and name in one chunk.
        events.push(chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [header(0)]}),
            Value::Null,
        ));
    } else {
        events.push(chunk(
            json!({"role": "assistant", "content": ""}),
            Value::Null,
        ));
        for piece in text_pieces(&turn.text) {
            events.push(chunk(json!({"content": piece}), Value::Null));
        }
    }
    // Parallel calls interleaved: each round sends the next fragment of every call, and
    // a call's header arrives just before its first fragment.
    let pieces: Vec<Vec<String>> = turn
        .tool_calls
        .iter()
        .map(|call| argument_pieces(&call.arguments))
        .collect();
    let rounds = pieces.iter().map(Vec::len).max().unwrap_or(0).max(1);
    for round in 0..rounds {
        for (index, call_pieces) in pieces.iter().enumerate() {
            if round == 0 && !(calls_only && index == 0) {
                events.push(chunk(json!({"tool_calls": [header(index)]}), Value::Null));
            }
            if let Some(piece) = call_pieces.get(round) {
                events.push(chunk(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                    Value::Null,
                ));
            }
        }
    }
    events.push(chunk(json!({}), json!(openai_finish(turn.finish))));
    let usage_chunk = json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "choices": [],
        "usage": {
            "prompt_tokens": input_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        },
    });
    events.push(format!("data: {usage_chunk}\n\n"));
    events.push("data: [DONE]\n\n".to_string());
    events
}

fn anthropic_events(turn: &Turn, model: &str, request_bytes: usize) -> Vec<String> {
    let (input_tokens, output_tokens) = usage(turn, request_bytes);
    let event = |data: Value| {
        let name = data["type"].as_str().unwrap_or_default().to_string();
        format!("event: {name}\ndata: {data}\n\n")
    };
    let ping = || event(json!({"type": "ping"}));
    let mut events = vec![
        event(json!({
            "type": "message_start",
            "message": {
                "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": input_tokens, "output_tokens": 1},
            },
        })),
        ping(),
    ];
    let mut index = 0;
    if !turn.text.is_empty() {
        events.push(event(json!({
            "type": "content_block_start", "index": index,
            "content_block": {"type": "text", "text": ""},
        })));
        for piece in text_pieces(&turn.text) {
            events.push(event(json!({
                "type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": piece},
            })));
        }
        events.push(event(json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    for (position, call) in turn.tool_calls.iter().enumerate() {
        events.push(event(json!({
            "type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
        })));
        let mut fragments = vec![String::new()];
        fragments.extend(argument_pieces(&call.arguments));
        for (number, fragment) in fragments.into_iter().enumerate() {
            events.push(event(json!({
                "type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": fragment},
            })));
            if position == 0 && number == 1 {
                events.push(ping());
            }
        }
        events.push(event(json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    events.push(event(json!({
        "type": "message_delta",
        "delta": {"stop_reason": anthropic_stop(turn.finish), "stop_sequence": null},
        "usage": {"output_tokens": output_tokens},
    })));
    events.push(event(json!({"type": "message_stop"})));
    events
}

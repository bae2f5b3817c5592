//! Turning a scripted model turn into a vendor's reply, whole or as SSE events. The
//! streams reproduce the quirks of the real recordings (fragmented and interleaved tool
//! arguments, role and first tool delta in one chunk, a usage chunk with no choices,
//! `ping` events, an empty first `partial_json`) so the clients are tested against them.

use serde_json::{json, Value};

use super::script::{Finish, Turn};

/// One streamed event, and whether it carries model output (text or a tool call), which
/// is what the fake timestamps for latency measurements.
#[derive(Clone, Debug)]
pub(crate) struct Event {
    pub text: String,
    pub output: bool,
}

fn plain(text: String) -> Event {
    Event {
        text,
        output: false,
    }
}

fn output(text: String) -> Event {
    Event { text, output: true }
}

/// The token counts a reply reports: all input, the cached part of it, and output.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tokens {
    pub input: u64,
    pub cached: u64,
    pub output: u64,
}

/// Which wire format a request spoke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    OpenAi,
    Anthropic,
}

const CREATED: u64 = 1_700_000_000;

/// The scripted counts, else estimates: roughly four bytes a token, like the real
/// tokenizers on English and code, with `cached` from the simulated prompt cache.
fn usage(turn: &Turn, request_bytes: usize, cached: u64) -> Tokens {
    if let Some(scripted) = turn.usage {
        return Tokens {
            input: scripted.input,
            cached: scripted.cached.unwrap_or(0).min(scripted.input),
            output: scripted.output,
        };
    }
    let output: usize = turn.text.len()
        + turn
            .tool_calls
            .iter()
            .map(|c| c.arguments.len())
            .sum::<usize>();
    let input = request_bytes as u64 / 4 + 1;
    Tokens {
        input,
        cached: cached.min(input),
        output: output as u64 / 4 + 1,
    }
}

fn openai_usage(tokens: Tokens) -> Value {
    json!({
        "prompt_tokens": tokens.input,
        "completion_tokens": tokens.output,
        "total_tokens": tokens.input + tokens.output,
        "prompt_tokens_details": {"cached_tokens": tokens.cached},
    })
}

/// Anthropic's `input_tokens` leaves out what was read from the cache.
fn anthropic_usage(tokens: Tokens, output_tokens: u64) -> Value {
    json!({
        "input_tokens": tokens.input - tokens.cached,
        "cache_read_input_tokens": tokens.cached,
        "cache_creation_input_tokens": 0,
        "output_tokens": output_tokens,
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
pub(crate) fn whole(
    format: Format,
    turn: &Turn,
    model: &str,
    request_bytes: usize,
    cached: u64,
) -> Vec<u8> {
    let tokens = usage(turn, request_bytes, cached);
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
                "usage": openai_usage(tokens),
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
                "usage": anthropic_usage(tokens, tokens.output),
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
    cached: u64,
) -> Vec<Event> {
    let tokens = usage(turn, request_bytes, cached);
    match format {
        Format::OpenAi => openai_events(turn, model, tokens),
        Format::Anthropic => anthropic_events(turn, model, tokens),
    }
}

fn openai_events(turn: &Turn, model: &str, tokens: Tokens) -> Vec<Event> {
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
        events.push(output(chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [header(0)]}),
            Value::Null,
        )));
    } else {
        events.push(plain(chunk(
            json!({"role": "assistant", "content": ""}),
            Value::Null,
        )));
        for piece in text_pieces(&turn.text) {
            events.push(output(chunk(json!({"content": piece}), Value::Null)));
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
                events.push(output(chunk(
                    json!({"tool_calls": [header(index)]}),
                    Value::Null,
                )));
            }
            if let Some(piece) = call_pieces.get(round) {
                events.push(output(chunk(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                    Value::Null,
                )));
            }
        }
    }
    events.push(plain(chunk(json!({}), json!(openai_finish(turn.finish)))));
    let usage_chunk = json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "choices": [],
        "usage": openai_usage(tokens),
    });
    events.push(plain(format!("data: {usage_chunk}\n\n")));
    events.push(plain("data: [DONE]\n\n".to_string()));
    events
}

fn anthropic_events(turn: &Turn, model: &str, tokens: Tokens) -> Vec<Event> {
    let event = |data: Value| {
        let name = data["type"].as_str().unwrap_or_default().to_string();
        format!("event: {name}\ndata: {data}\n\n")
    };
    let ping = || plain(event(json!({"type": "ping"})));
    let mut events = vec![
        plain(event(json!({
            "type": "message_start",
            "message": {
                "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": anthropic_usage(tokens, 1),
            },
        }))),
        ping(),
    ];
    let mut index = 0;
    if !turn.text.is_empty() {
        events.push(plain(event(json!({
            "type": "content_block_start", "index": index,
            "content_block": {"type": "text", "text": ""},
        }))));
        for piece in text_pieces(&turn.text) {
            events.push(output(event(json!({
                "type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": piece},
            }))));
        }
        events.push(plain(event(
            json!({"type": "content_block_stop", "index": index}),
        )));
        index += 1;
    }
    for (position, call) in turn.tool_calls.iter().enumerate() {
        events.push(output(event(json!({
            "type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
        }))));
        let mut fragments = vec![String::new()];
        fragments.extend(argument_pieces(&call.arguments));
        for (number, fragment) in fragments.into_iter().enumerate() {
            events.push(output(event(json!({
                "type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": fragment},
            }))));
            if position == 0 && number == 1 {
                events.push(ping());
            }
        }
        events.push(plain(event(
            json!({"type": "content_block_stop", "index": index}),
        )));
        index += 1;
    }
    events.push(plain(event(json!({
        "type": "message_delta",
        "delta": {"stop_reason": anthropic_stop(turn.finish), "stop_sequence": null},
        "usage": {"output_tokens": tokens.output},
    }))));
    events.push(plain(event(json!({"type": "message_stop"}))));
    events
}

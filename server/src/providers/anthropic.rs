//! The Anthropic Messages wire format (`{base_url}/v1/messages`): its request JSON with
//! the prompt-cache breakpoints, its whole and streamed replies, and its three-part input
//! count. What every format shares is in `chat.rs`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};

use super::chat::{self, Stop, StreamedTurn, WireFormat};
use super::sse::{SseEvent, StreamDecoder, StreamError};
use super::{
    ApiKey, AssistantTurn, ChatRequest, Decoded, FinishReason, Message, ProviderError, StreamSink,
    ToolCall, Usage,
};

/// The API version whose wire format this file speaks.
const API_VERSION: &str = "2023-06-01";

/// The Anthropic Messages format.
pub(crate) struct Anthropic;

impl WireFormat for Anthropic {
    const NAME: &'static str = "anthropic";
    const PATH: &'static str = "/v1/messages";
    const MODELS_PATH: &'static str = "/v1/models?limit=1000";
    type Stream = AnthropicStream;

    fn headers(&self, api_key: &ApiKey) -> Vec<(&'static str, String)> {
        let mut headers = vec![("anthropic-version", API_VERSION.to_string())];
        // A proxy in front of a local model may want no key at all.
        if !api_key.0.is_empty() {
            headers.push(("x-api-key", api_key.0.clone()));
        }
        headers
    }

    fn request_body(
        &self,
        model: &str,
        max_tokens: u32,
        request: &ChatRequest,
        stream: bool,
    ) -> Value {
        request_body(model, max_tokens, request, stream)
    }

    fn decode_response(body: &[u8]) -> Result<Decoded, ProviderError> {
        decode_response(body)
    }
}

/// A prompt-cache breakpoint: everything up to and including the block that carries it
/// may be served from the cache on the next request with the same prefix.
fn cache_breakpoint() -> Value {
    json!({"type": "ephemeral"})
}

/// The request JSON. Messages are content-block arrays so that consecutive turns of one
/// role (tool results followed by a user note) merge into one: the API rejects two user
/// turns in a row.
///
/// Three cache breakpoints (the API allows four): the system prompt, the last tool (the
/// tools come before the system prompt in the cached prefix, so this covers both), and
/// the last block of the conversation so far. The next step of the ask, and a follow-up,
/// send the same prefix and read it from the cache.
fn request_body(model: &str, max_tokens: u32, request: &ChatRequest, stream: bool) -> Value {
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let (role, blocks) = match message {
            Message::User(text) => ("user", vec![json!({"type": "text", "text": text})]),
            Message::Assistant(turn) => {
                let mut blocks = Vec::new();
                // The API rejects empty text blocks.
                if !turn.text.is_empty() {
                    blocks.push(json!({"type": "text", "text": turn.text}));
                }
                for call in &turn.tool_calls {
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": tool_input(&call.arguments),
                    }));
                }
                ("assistant", blocks)
            }
            Message::ToolResults(results) => {
                let blocks = results
                    .iter()
                    .map(|result| {
                        json!({
                            "type": "tool_result",
                            "tool_use_id": result.call_id,
                            "content": result.content,
                            "is_error": result.is_error,
                        })
                    })
                    .collect();
                ("user", blocks)
            }
        };
        // An empty turn (no text, no calls) would be rejected; dropping it loses nothing.
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    if let Some(block) = messages
        .last_mut()
        .and_then(|(_, blocks)| blocks.last_mut())
    {
        block["cache_control"] = cache_breakpoint();
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": max_tokens,
        "messages": messages,
        "stream": stream,
    });
    if !request.system.is_empty() {
        body["system"] = json!([{
            "type": "text",
            "text": request.system,
            "cache_control": cache_breakpoint(),
        }]);
    }
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = cache_breakpoint();
        }
        body["tools"] = Value::Array(tools);
    }
    body
}

/// `tool_use.input` must be an object. Arguments the model garbled were already reported
/// to it as a tool error; sending them back as `{}` keeps the conversation valid.
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => json!({}),
    }
}

/// The `stop_reason`s this format defines; `end_turn` and `stop_sequence` are the model
/// ending its turn.
const STOP_REASONS: &[(&str, Stop)] = &[
    ("max_tokens", Stop::Length),
    ("tool_use", Stop::ToolCalls),
    ("refusal", Stop::Refusal),
    ("end_turn", Stop::Natural),
    ("stop_sequence", Stop::Natural),
];

fn finish_reason(stop_reason: Option<&str>, has_tool_calls: bool) -> FinishReason {
    chat::finish_reason(stop_reason, STOP_REASONS, has_tool_calls)
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
}

/// The three parts of Anthropic's input count, kept apart until the call ends because
/// `message_delta` may update any of them.
#[derive(Clone, Copy, Debug, Default)]
struct InputParts {
    uncached: u64,
    cache_read: u64,
    cache_creation: u64,
}

impl InputParts {
    fn update(&mut self, usage: &WireUsage) {
        if let Some(n) = usage.input_tokens {
            self.uncached = n;
        }
        if let Some(n) = usage.cache_read_input_tokens {
            self.cache_read = n;
        }
        if let Some(n) = usage.cache_creation_input_tokens {
            self.cache_creation = n;
        }
    }

    /// `input_tokens` counts only what was neither read from nor written to the cache.
    fn usage(self, output_tokens: u64) -> Usage {
        Usage {
            input_tokens: self.uncached + self.cache_read + self.cache_creation,
            output_tokens,
            cached_input_tokens: self.cache_read,
        }
    }
}

#[derive(Deserialize)]
struct WireResponse {
    /// Required: a reply without it is not a message (an error object from a proxy, say).
    content: Vec<WireBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: WireUsage,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    /// Thinking and server-tool blocks carry nothing the agent uses.
    #[serde(other)]
    Other,
}

/// `input` as the arguments string the agent expects. A string input (not valid per the
/// API, but seen from proxies) is taken as the arguments text itself.
fn input_text(input: Value) -> String {
    chat::json_text(input, "{}")
}

/// Decodes a whole (non-streamed) reply.
fn decode_response(body: &[u8]) -> Result<Decoded, ProviderError> {
    let response: WireResponse = chat::decode_json(body, "message")?;
    let mut turn = AssistantTurn::default();
    for block in response.content {
        match block {
            WireBlock::Text { text } => turn.text.push_str(&text),
            WireBlock::ToolUse { id, name, input } => turn.tool_calls.push(ToolCall {
                id,
                name,
                arguments: input_text(input),
            }),
            WireBlock::Other => {}
        }
    }
    let finish = finish_reason(response.stop_reason.as_deref(), !turn.tool_calls.is_empty());
    let mut input = InputParts::default();
    input.update(&response.usage);
    let usage = input.usage(response.usage.output_tokens.unwrap_or(0));
    Ok(chat::decoded(turn.text, turn.tool_calls, finish, usage))
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireEvent {
    MessageStart {
        message: WireStartMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: WireBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: WireDelta,
    },
    ContentBlockStop {},
    MessageDelta {
        delta: WireMessageDelta,
        #[serde(default)]
        usage: WireUsage,
    },
    MessageStop {},
    Ping {},
    Error {
        error: WireError,
    },
    /// Event types added after this was written are skipped, as the API's versioning
    /// policy asks of clients.
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct WireStartMessage {
    #[serde(default)]
    usage: WireUsage,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct WireMessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    message: String,
}

/// What a started content block is; its text or call is in the [`StreamedTurn`].
enum Block {
    Text,
    /// With the `input` of `content_block_start`, used when no `input_json_delta` follows.
    ToolUse(Value),
    Other,
}

/// Accumulates a streamed message. Blocks are keyed by their `index`; a tool call's input
/// arrives as JSON fragments (the first one empty) that only parse once all have arrived.
#[derive(Default)]
pub(crate) struct AnthropicStream {
    blocks: BTreeMap<usize, Block>,
    turn: StreamedTurn,
    stop_reason: Option<String>,
    input: InputParts,
    output_tokens: u64,
}

impl StreamDecoder for AnthropicStream {
    fn feed(&mut self, event: &SseEvent, sink: StreamSink<'_>) -> Result<(), StreamError> {
        let parsed: WireEvent = serde_json::from_str(&event.data)
            .map_err(|e| StreamError::Malformed(format!("stream event {:?}: {e}", event.event)))?;
        match parsed {
            WireEvent::MessageStart { message } => {
                self.input.update(&message.usage);
                self.output_tokens = message.usage.output_tokens.unwrap_or(0);
            }
            WireEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                self.turn.restart(index);
                let block = match content_block {
                    WireBlock::Text { text } => {
                        self.turn.text(index, &text, sink);
                        Block::Text
                    }
                    WireBlock::ToolUse { id, name, input } => {
                        self.turn.start_call(index, id, name, sink);
                        Block::ToolUse(input)
                    }
                    WireBlock::Other => Block::Other,
                };
                self.blocks.insert(index, block);
            }
            WireEvent::ContentBlockDelta { index, delta } => match (self.blocks.get(&index), delta)
            {
                (Some(Block::Text), WireDelta::TextDelta { text }) => {
                    self.turn.text(index, &text, sink);
                }
                (Some(Block::ToolUse(_)), WireDelta::InputJsonDelta { partial_json }) => {
                    self.turn.arguments(index, &partial_json, sink);
                }
                (Some(_), WireDelta::ThinkingDelta { thinking }) => {
                    self.turn.reasoning(&thinking, sink);
                }
                (None, _) => {
                    return Err(StreamError::Malformed(format!(
                        "delta for block {index}, which never started"
                    )))
                }
                // A delta that does not fit its block.
                _ => {}
            },
            WireEvent::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                // `message_delta` carries the cumulative counts.
                if let Some(output_tokens) = usage.output_tokens {
                    self.output_tokens = output_tokens;
                }
                self.input.update(&usage);
            }
            WireEvent::MessageStop {} => self.turn.end(),
            WireEvent::Error { error } => {
                return Err(chat::reported(Some(&error.kind), &error.message));
            }
            WireEvent::ContentBlockStop {} | WireEvent::Ping {} | WireEvent::Unknown => {}
        }
        Ok(())
    }

    fn has_output(&self) -> bool {
        self.turn.has_output()
    }

    fn is_complete(&self) -> bool {
        self.turn.is_complete()
    }

    fn finish(self: Box<Self>) -> Result<Decoded, ProviderError> {
        let mut this = *self;
        let (text, calls) = this.turn.into_parts();
        // A block cut by `max_tokens` keeps its partial JSON: the agent sees `Length` and
        // must not run it, and the text shows what was cut.
        let tool_calls: Vec<ToolCall> = calls
            .into_iter()
            .map(|(index, call)| {
                let arguments = match this.blocks.remove(&index) {
                    Some(Block::ToolUse(initial_input)) if call.arguments.is_empty() => {
                        input_text(initial_input)
                    }
                    _ => call.arguments,
                };
                ToolCall {
                    id: call.id,
                    name: call.name,
                    arguments,
                }
            })
            .collect();
        let finish = finish_reason(this.stop_reason.as_deref(), !tool_calls.is_empty());
        let usage = this.input.usage(this.output_tokens);
        Ok(chat::decoded(text, tool_calls, finish, usage))
    }
}

#[cfg(test)]
mod tests;

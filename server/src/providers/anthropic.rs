//! The Anthropic Messages wire format (`{base_url}/v1/messages`): request JSON with its
//! prompt-cache breakpoints, the whole reply, and the streamed reply.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};

use super::http::{Decoders, Outgoing, Transport};
use super::sse::{SseEvent, StreamDecoder, StreamError};
use super::{
    AssistantTurn, BoxFuture, ChatModel, ChatRequest, ChatResponse, Decoded, FinishReason, Message,
    ProviderConfig, ProviderError, StreamEvent, StreamSink, ToolCall, Usage,
};

/// The API version whose wire format this file speaks.
const API_VERSION: &str = "2023-06-01";

pub struct AnthropicProvider {
    config: ProviderConfig,
    transport: Transport,
}

impl AnthropicProvider {
    pub fn new(config: ProviderConfig) -> Self {
        let transport = Transport::new(&config);
        AnthropicProvider { config, transport }
    }

    fn outgoing(&self, request: &ChatRequest, stream: bool) -> Outgoing {
        let body = request_body(&self.config.model, self.config.max_tokens, request, stream);
        let mut headers = vec![("anthropic-version", API_VERSION.to_string())];
        // A proxy in front of a local model may want no key at all.
        if !self.config.api_key.0.is_empty() {
            headers.push(("x-api-key", self.config.api_key.0.clone()));
        }
        Outgoing {
            url: self.transport.endpoint("/v1/messages"),
            headers,
            body: body.to_string().into_bytes(),
            stream,
        }
    }
}

impl ChatModel for AnthropicProvider {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ProviderError>> {
        Box::pin(async move {
            let build = |stream: bool| self.outgoing(request, stream);
            let decoders = Decoders {
                body: decode_response,
                stream: || Box::<AnthropicStream>::default(),
            };
            self.transport.call(&build, &decoders, sink).await
        })
    }

    fn describe(&self) -> String {
        format!(
            "anthropic {} at {}",
            self.config.model, self.config.base_url
        )
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
pub(crate) fn request_body(
    model: &str,
    max_tokens: u32,
    request: &ChatRequest,
    stream: bool,
) -> Value {
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

fn finish_reason(stop_reason: Option<&str>, has_tool_calls: bool) -> FinishReason {
    match stop_reason {
        Some("max_tokens") => FinishReason::Length,
        Some("tool_use") => FinishReason::ToolCalls,
        Some("refusal") => FinishReason::Refusal,
        Some("end_turn" | "stop_sequence") | None => {
            if has_tool_calls {
                FinishReason::ToolCalls
            } else {
                FinishReason::Stop
            }
        }
        Some(other) => FinishReason::Other(other.to_string()),
    }
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
    match input {
        Value::Null => "{}".to_string(),
        Value::String(text) => text,
        other => other.to_string(),
    }
}

/// Decodes a whole (non-streamed) reply.
pub(crate) fn decode_response(body: &[u8]) -> Result<Decoded, ProviderError> {
    let response: WireResponse =
        serde_json::from_slice(body).map_err(|e| ProviderError::Decode(format!("message: {e}")))?;
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
    Ok(Decoded {
        turn,
        finish,
        usage: input.usage(response.usage.output_tokens.unwrap_or(0)),
    })
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

enum PartialBlock {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        /// The `input` of `content_block_start`, used when no `input_json_delta` follows.
        initial_input: Value,
        json: String,
    },
    Other,
}

/// Accumulates a streamed message. Blocks are keyed by their `index`; a tool call's input
/// arrives as JSON fragments (the first one empty) that only parse once all have arrived.
#[derive(Default)]
pub(crate) struct AnthropicStream {
    blocks: BTreeMap<usize, PartialBlock>,
    stop_reason: Option<String>,
    input: InputParts,
    output_tokens: u64,
    has_output: bool,
    done: bool,
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
                let block = match content_block {
                    WireBlock::Text { text } => {
                        if !text.is_empty() {
                            self.has_output = true;
                            sink(StreamEvent::Text(&text));
                        }
                        PartialBlock::Text(text)
                    }
                    WireBlock::ToolUse { id, name, input } => {
                        self.has_output = true;
                        sink(StreamEvent::ToolCall {
                            index,
                            id: &id,
                            name: &name,
                        });
                        PartialBlock::ToolUse {
                            id,
                            name,
                            initial_input: input,
                            json: String::new(),
                        }
                    }
                    WireBlock::Other => PartialBlock::Other,
                };
                self.blocks.insert(index, block);
            }
            WireEvent::ContentBlockDelta { index, delta } => {
                match (self.blocks.get_mut(&index), delta) {
                    (Some(PartialBlock::Text(text)), WireDelta::TextDelta { text: more })
                        if !more.is_empty() =>
                    {
                        self.has_output = true;
                        text.push_str(&more);
                        sink(StreamEvent::Text(&more));
                    }
                    (
                        Some(PartialBlock::ToolUse { json, .. }),
                        WireDelta::InputJsonDelta { partial_json },
                    ) if !partial_json.is_empty() => {
                        json.push_str(&partial_json);
                        sink(StreamEvent::ToolArguments {
                            index,
                            fragment: &partial_json,
                        });
                    }
                    (Some(_), WireDelta::ThinkingDelta { thinking }) if !thinking.is_empty() => {
                        self.has_output = true;
                        sink(StreamEvent::Reasoning(&thinking));
                    }
                    (None, _) => {
                        return Err(StreamError::Malformed(format!(
                            "delta for block {index}, which never started"
                        )))
                    }
                    // Thinking deltas and the like.
                    _ => {}
                }
            }
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
            WireEvent::MessageStop {} => self.done = true,
            WireEvent::Error { error } => {
                return Err(StreamError::Provider(format!(
                    "provider reported {}: {}",
                    error.kind, error.message
                )))
            }
            WireEvent::ContentBlockStop {} | WireEvent::Ping {} | WireEvent::Unknown => {}
        }
        Ok(())
    }

    fn has_output(&self) -> bool {
        self.has_output
    }

    fn is_complete(&self) -> bool {
        self.done
    }

    fn finish(self: Box<Self>) -> Result<Decoded, ProviderError> {
        let this = *self;
        let mut turn = AssistantTurn::default();
        for block in this.blocks.into_values() {
            match block {
                PartialBlock::Text(text) => turn.text.push_str(&text),
                // A block cut by `max_tokens` keeps its partial JSON: the agent sees
                // `Length` and must not run it, and the text shows what was cut.
                PartialBlock::ToolUse {
                    id,
                    name,
                    initial_input,
                    json,
                } => turn.tool_calls.push(ToolCall {
                    id,
                    name,
                    arguments: if json.is_empty() {
                        input_text(initial_input)
                    } else {
                        json
                    },
                }),
                PartialBlock::Other => {}
            }
        }
        let finish = finish_reason(this.stop_reason.as_deref(), !turn.tool_calls.is_empty());
        Ok(Decoded {
            turn,
            finish,
            usage: this.input.usage(this.output_tokens),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::sse::decode_all;
    use super::super::{ToolResult, ToolSpec};
    use super::*;

    fn recorded(name: &str) -> Decoded {
        let path = format!(
            "{}/../fixtures/providers/anthropic/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let body = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        decode_all(&body, Box::<AnthropicStream>::default()).unwrap()
    }

    #[test]
    fn recorded_basic_response() {
        let decoded = recorded("basic-response.sse");
        assert_eq!(decoded.turn.text, "Hello there!");
        assert!(decoded.turn.tool_calls.is_empty());
        assert_eq!(decoded.finish, FinishReason::Stop);
        assert_eq!(
            decoded.usage,
            Usage {
                input_tokens: 11,
                output_tokens: 6,
                cached_input_tokens: 0,
            }
        );
    }

    #[test]
    fn recorded_tool_use_response() {
        let decoded = recorded("tool-use-response.sse");
        assert_eq!(
            decoded.turn.text,
            "I'll check the current weather in Paris for you."
        );
        assert_eq!(
            decoded.turn.tool_calls,
            vec![ToolCall {
                id: "toolu_01NRLabsLyVHZPKxbKvkfSMn".into(),
                name: "get_weather".into(),
                arguments: r#"{"location": "Paris"}"#.into(),
            }]
        );
        assert_eq!(decoded.finish, FinishReason::ToolCalls);
        assert_eq!(
            decoded.usage,
            Usage {
                input_tokens: 377,
                output_tokens: 65,
                cached_input_tokens: 0,
            }
        );
    }

    #[test]
    fn recorded_incomplete_partial_json_is_length() {
        let decoded = recorded("incomplete-partial-json-response.sse");
        assert_eq!(decoded.finish, FinishReason::Length);
        assert!(decoded
            .turn
            .text
            .starts_with("I'll create a comprehensive tax guide"));
        assert_eq!(decoded.turn.tool_calls.len(), 1);
        let call = &decoded.turn.tool_calls[0];
        assert_eq!(call.name, "make_file");
        assert!(call.arguments.starts_with(r#"{"filename": "taxes.txt""#));
        assert!(serde_json::from_str::<Value>(&call.arguments).is_err());
        assert_eq!(decoded.usage.output_tokens, 124);
    }

    #[test]
    fn every_recording_is_covered() {
        let dir = format!(
            "{}/../fixtures/providers/anthropic",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "basic-response.sse",
                "incomplete-partial-json-response.sse",
                "tool-use-response.sse",
            ]
        );
        for name in &names {
            recorded(name);
        }
    }

    fn feed(stream: &mut AnthropicStream, data: &str) -> Result<(), StreamError> {
        stream.feed(
            &SseEvent {
                event: String::new(),
                data: data.into(),
            },
            &crate::providers::ignore_stream,
        )
    }

    #[test]
    fn error_event_is_a_provider_error() {
        let mut stream = AnthropicStream::default();
        let result = feed(
            &mut stream,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        assert_eq!(
            result,
            Err(StreamError::Provider(
                "provider reported overloaded_error: Overloaded".into()
            ))
        );
    }

    #[test]
    fn output_starts_with_text_or_tool_use() {
        let mut stream = AnthropicStream::default();
        feed(
            &mut stream,
            r#"{"type":"message_start","message":{"usage":{"input_tokens":3}}}"#,
        )
        .unwrap();
        feed(&mut stream, r#"{"type":"ping"}"#).unwrap();
        feed(
            &mut stream,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        )
        .unwrap();
        assert!(!stream.has_output());
        feed(
            &mut stream,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}"#,
        )
        .unwrap();
        assert!(stream.has_output());
        feed(&mut stream, r#"{"type":"some_future_event"}"#).unwrap();
        assert!(feed(
            &mut stream,
            r#"{"type":"content_block_delta","index":5,"delta":{"type":"text_delta","text":"a"}}"#
        )
        .is_err());
        assert!(feed(&mut stream, "{not json").is_err());
    }

    #[test]
    fn cache_counts_and_stream_events() {
        let body = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"cache_read_input_tokens\":100,\"cache_creation_input_tokens\":20,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"answer\",\"input\":{}}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":7}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        );
        let seen = std::sync::Mutex::new(Vec::new());
        let sink = |event: StreamEvent<'_>| seen.lock().unwrap().push(format!("{event:?}"));
        let decoded = super::super::sse::decode_all_into(
            body.as_bytes(),
            Box::<AnthropicStream>::default(),
            &sink,
        )
        .unwrap();
        assert_eq!(
            seen.into_inner().unwrap(),
            [
                r#"Reasoning("hm")"#,
                r#"Text("Hi")"#,
                r#"ToolCall { index: 2, id: "t", name: "answer" }"#,
                r#"ToolArguments { index: 2, fragment: "{}" }"#,
            ]
        );
        assert_eq!(
            decoded.usage,
            Usage {
                input_tokens: 125,
                output_tokens: 7,
                cached_input_tokens: 100,
            }
        );
        let whole = decode_response(
            br#"{"content":[],"usage":{"input_tokens":3,"cache_read_input_tokens":40,"output_tokens":2}}"#,
        )
        .unwrap();
        assert_eq!(
            whole.usage,
            Usage {
                input_tokens: 43,
                output_tokens: 2,
                cached_input_tokens: 40,
            }
        );
    }

    #[test]
    fn whole_replies() {
        let body = r#"{"id":"m","type":"message","role":"assistant","content":[
            {"type":"thinking","thinking":"hmm","signature":"s"},
            {"type":"text","text":"Looking."},
            {"type":"tool_use","id":"t1","name":"read_file","input":{"path":"a"}},
            {"type":"tool_use","id":"t2","name":"list_directory","input":{}}],
            "stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":7}}"#;
        let decoded = decode_response(body.as_bytes()).unwrap();
        assert_eq!(decoded.turn.text, "Looking.");
        assert_eq!(decoded.finish, FinishReason::ToolCalls);
        assert_eq!(decoded.turn.tool_calls[0].arguments, r#"{"path":"a"}"#);
        assert_eq!(decoded.turn.tool_calls[1].id, "t2");
        assert_eq!(decoded.usage.output_tokens, 7);
        let cases: &[(&str, FinishReason)] = &[
            ("end_turn", FinishReason::Stop),
            ("stop_sequence", FinishReason::Stop),
            ("max_tokens", FinishReason::Length),
            ("refusal", FinishReason::Refusal),
            ("pause_turn", FinishReason::Other("pause_turn".into())),
        ];
        for (stop_reason, expected) in cases {
            let body = format!(
                r#"{{"content":[{{"type":"text","text":"x"}}],"stop_reason":"{stop_reason}"}}"#
            );
            assert_eq!(&decode_response(body.as_bytes()).unwrap().finish, expected);
        }
        assert!(decode_response(b"[]").is_err());
        assert!(decode_response(b"{}").is_err());
    }

    #[test]
    fn request_shape_merges_user_turns() {
        let request = ChatRequest {
            system: "be brief".into(),
            messages: vec![
                Message::User("where?".into()),
                Message::User("and why?".into()),
                Message::Assistant(AssistantTurn {
                    text: "Looking.".into(),
                    tool_calls: vec![
                        ToolCall {
                            id: "c1".into(),
                            name: "read_file".into(),
                            arguments: r#"{"path":"a"}"#.into(),
                        },
                        ToolCall {
                            id: "c2".into(),
                            name: "search_code".into(),
                            arguments: r#"{"pattern": "#.into(),
                        },
                    ],
                }),
                Message::ToolResults(vec![
                    ToolResult {
                        call_id: "c1".into(),
                        name: "read_file".into(),
                        content: "1\tfn main".into(),
                        is_error: false,
                    },
                    ToolResult {
                        call_id: "c2".into(),
                        name: "search_code".into(),
                        content: "Error: bad arguments".into(),
                        is_error: true,
                    },
                ]),
                Message::User("Answer now.".into()),
            ],
            tools: vec![ToolSpec {
                name: "read_file".into(),
                description: "reads".into(),
                parameters: json!({"type": "object"}),
            }],
        };
        let body = request_body("claude", 1024, &request, true);
        assert_eq!(
            body,
            json!({
                "model": "claude",
                "max_tokens": 1024,
                "stream": true,
                "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
                "messages": [
                    {"role": "user", "content": [
                        {"type": "text", "text": "where?"},
                        {"type": "text", "text": "and why?"},
                    ]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Looking."},
                        {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a"}},
                        {"type": "tool_use", "id": "c2", "name": "search_code", "input": {}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "c1", "content": "1\tfn main", "is_error": false},
                        {"type": "tool_result", "tool_use_id": "c2", "content": "Error: bad arguments", "is_error": true},
                        {"type": "text", "text": "Answer now.", "cache_control": {"type": "ephemeral"}},
                    ]},
                ],
                "tools": [{"name": "read_file", "description": "reads", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}],
            })
        );
    }
}

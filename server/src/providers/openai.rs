//! The OpenAI Chat Completions wire format (`{base_url}/chat/completions`), spoken by
//! OpenAI, Groq, Ollama, llama.cpp server, vLLM and LM Studio: request JSON, the whole
//! reply, and the streamed reply.
//!
//! Local servers put `null` where OpenAI leaves a field out (`"tool_calls": null` in
//! llama-cpp-python's first delta, `"content": null`, `"usage": null`…); every optional
//! field here reads `null` as absent (`nullable.rs`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};

use super::http::{Decoders, Outgoing, Transport};
use super::nullable;
use super::sse::{SseEvent, StreamDecoder, StreamError};
use super::{
    AssistantTurn, BoxFuture, ChatModel, ChatRequest, ChatResponse, Decoded, FinishReason, Message,
    ProviderConfig, ProviderError, StreamEvent, StreamSink, ToolCall, Usage,
};

pub struct OpenAiProvider {
    config: ProviderConfig,
    transport: Transport,
}

impl OpenAiProvider {
    pub fn new(config: ProviderConfig) -> Self {
        let transport = Transport::new(&config);
        OpenAiProvider { config, transport }
    }

    fn outgoing(&self, request: &ChatRequest, stream: bool) -> Outgoing {
        let limit = OutputLimit {
            field: limit_field(&self.config.base_url),
            tokens: self.config.max_tokens,
        };
        let body = request_body(&self.config.model, limit, request, stream);
        let mut headers = Vec::new();
        // Local servers need no key; an empty `Bearer ` header would make some reject us.
        if !self.config.api_key.0.is_empty() {
            headers.push(("authorization", format!("Bearer {}", self.config.api_key.0)));
        }
        Outgoing {
            url: self.transport.endpoint("/chat/completions"),
            headers,
            body: body.to_string().into_bytes(),
            stream,
        }
    }
}

impl ChatModel for OpenAiProvider {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ProviderError>> {
        Box::pin(async move {
            let build = |stream: bool| self.outgoing(request, stream);
            let decoders = Decoders {
                body: decode_response,
                stream: || Box::<OpenAiStream>::default(),
            };
            self.transport.call(&build, &decoders, sink).await
        })
    }

    fn describe(&self) -> String {
        format!("openai {} at {}", self.config.model, self.config.base_url)
    }
}

/// The output limit and the name it goes by.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OutputLimit {
    pub field: &'static str,
    pub tokens: u32,
}

/// OpenAI itself wants `max_completion_tokens` (its reasoning models reject `max_tokens`);
/// the other OpenAI-compatible servers (llama-server, llama-cpp-python, Ollama, vLLM,
/// LM Studio, Groq) all read `max_tokens`, and several ignore the newer name.
pub(crate) fn limit_field(base_url: &str) -> &'static str {
    let host = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest)
        .split(['/', ':', '?'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if host == "api.openai.com" {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
}

/// The request JSON. Keys serialize sorted (serde_json's map) and nothing in it depends on
/// the time, so the system message and the tools are byte-identical on every call of an
/// ask and its follow-ups, and the messages only grow at the end: that stable prefix is
/// what OpenAI's and llama-server's prompt caches match on.
pub(crate) fn request_body(
    model: &str,
    limit: OutputLimit,
    request: &ChatRequest,
    stream: bool,
) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        match message {
            Message::User(text) => messages.push(json!({"role": "user", "content": text})),
            Message::Assistant(turn) => {
                // Always a string, `""` when the turn only called tools: llama-cpp-python
                // rejects both `null` and a missing `content` with a 500, and every other
                // recorded server accepts `""`.
                let mut assistant = json!({"role": "assistant", "content": turn.text});
                // Several servers reject an empty `tool_calls` array, so it is left out.
                if !turn.tool_calls.is_empty() {
                    let calls: Vec<Value> = turn
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
                    assistant["tool_calls"] = Value::Array(calls);
                }
                messages.push(assistant);
            }
            Message::ToolResults(results) => {
                for result in results {
                    messages.push(json!({
                        "role": "tool",
                        "tool_call_id": result.call_id,
                        "content": result.content,
                    }));
                }
            }
        }
    }
    let mut body = json!({"model": model, "messages": messages, "stream": stream});
    body[limit.field] = json!(limit.tokens);
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
        body["tools"] = Value::Array(tools);
        // The default, said out loud: llama-cpp-python never calls a tool without it.
        body["tool_choice"] = json!("auto");
    }
    if stream {
        // Without this the stream carries no token counts.
        body["stream_options"] = json!({"include_usage": true});
    }
    body
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default, deserialize_with = "nullable::or_default")]
    prompt_tokens: u64,
    #[serde(default, deserialize_with = "nullable::or_default")]
    completion_tokens: u64,
    #[serde(default, deserialize_with = "nullable::or_default")]
    prompt_tokens_details: WirePromptDetails,
}

#[derive(Deserialize, Default)]
struct WirePromptDetails {
    #[serde(default, deserialize_with = "nullable::or_default")]
    cached_tokens: u64,
}

impl From<WireUsage> for Usage {
    fn from(usage: WireUsage) -> Usage {
        Usage {
            // `prompt_tokens` already counts the cached ones.
            input_tokens: usage.prompt_tokens,
            output_tokens: usage.completion_tokens,
            cached_input_tokens: usage.prompt_tokens_details.cached_tokens,
        }
    }
}

#[derive(Deserialize, Default)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    /// A string per the spec; some servers send an object.
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default, deserialize_with = "nullable::or_default")]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireChoice {
    #[serde(default, deserialize_with = "nullable::or_default")]
    message: WireMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

/// `function_call` (the pre-tools form, which llama-cpp-python sends beside
/// `tool_calls`) is ignored: the same call is in `tool_calls`.
#[derive(Deserialize, Default)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default, deserialize_with = "nullable::or_default")]
    tool_calls: Vec<WireToolCall>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default, deserialize_with = "nullable::or_default")]
    function: WireFunction,
}

fn arguments_text(arguments: Option<Value>) -> String {
    match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text,
        Some(other) => other.to_string(),
    }
}

/// Some local servers leave tool-call ids empty; the conversation needs one to pair each
/// result with its call.
fn call_id(id: Option<String>, position: usize) -> String {
    match id {
        Some(id) if !id.is_empty() => id,
        _ => format!("call_{position}"),
    }
}

/// Decodes a whole (non-streamed) reply.
pub(crate) fn decode_response(body: &[u8]) -> Result<Decoded, ProviderError> {
    let response: WireResponse = serde_json::from_slice(body)
        .map_err(|e| ProviderError::Decode(format!("chat completion: {e}")))?;
    let usage = response.usage.map(Usage::from).unwrap_or_default();
    let choice = response
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| ProviderError::Decode("chat completion without choices".into()))?;
    let tool_calls = choice
        .message
        .tool_calls
        .into_iter()
        .enumerate()
        .map(|(position, call)| ToolCall {
            id: call_id(call.id, position),
            name: call.function.name.unwrap_or_default(),
            arguments: arguments_text(call.function.arguments),
        })
        .collect();
    Ok(finish_turn(
        choice.message.content.unwrap_or_default(),
        choice.message.refusal.unwrap_or_default(),
        tool_calls,
        choice.finish_reason,
        usage,
    ))
}

fn finish_turn(
    text: String,
    refusal: String,
    tool_calls: Vec<ToolCall>,
    finish_reason: Option<String>,
    usage: Usage,
) -> Decoded {
    if !refusal.is_empty() {
        return Decoded {
            turn: AssistantTurn {
                text: refusal,
                tool_calls: Vec::new(),
            },
            finish: FinishReason::Refusal,
            usage,
        };
    }
    let finish = match finish_reason.as_deref() {
        Some("length") => FinishReason::Length,
        // Ollama and others say `stop` even when the turn calls tools.
        Some("tool_calls" | "function_call" | "stop") | None => {
            if tool_calls.is_empty() {
                FinishReason::Stop
            } else {
                FinishReason::ToolCalls
            }
        }
        Some(other) => FinishReason::Other(other.to_string()),
    };
    Decoded {
        turn: AssistantTurn { text, tool_calls },
        finish,
        usage,
    }
}

#[derive(Deserialize)]
struct WireChunk {
    #[serde(default, deserialize_with = "nullable::or_default")]
    choices: Vec<WireChunkChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    /// vLLM, OpenRouter and OpenAI itself may report a failure inside the stream.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireChunkChoice {
    #[serde(default, deserialize_with = "nullable::or_default")]
    index: u32,
    #[serde(default)]
    delta: Option<WireDelta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireDelta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    /// Reasoning streamed apart from the text: `reasoning_content` (DeepSeek, vLLM,
    /// llama-server), `reasoning` (Ollama, OpenRouter).
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default, deserialize_with = "nullable::or_default")]
    tool_calls: Vec<WireToolCallDelta>,
}

#[derive(Deserialize)]
struct WireToolCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    /// Whether `StreamEvent::ToolCall` was sent (once the name is known).
    announced: bool,
}

/// Accumulates a streamed turn. Tool calls are keyed by their `index`, because parallel
/// calls may arrive interleaved and only the first delta of each carries its id and name.
#[derive(Default)]
pub(crate) struct OpenAiStream {
    text: String,
    refusal: String,
    calls: BTreeMap<usize, PartialCall>,
    finish_reason: Option<String>,
    usage: Usage,
    has_output: bool,
    done: bool,
}

impl StreamDecoder for OpenAiStream {
    fn feed(&mut self, event: &SseEvent, sink: StreamSink<'_>) -> Result<(), StreamError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        // Some local servers send empty `data:` lines as keep-alives.
        if data.is_empty() {
            return Ok(());
        }
        let chunk: WireChunk = serde_json::from_str(data)
            .map_err(|e| StreamError::Malformed(format!("stream chunk: {e}")))?;
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| error.to_string());
            return Err(StreamError::Provider(format!(
                "provider reported: {message}"
            )));
        }
        if let Some(usage) = chunk.usage {
            self.usage = usage.into();
        }
        // We never ask for `n > 1`; other choices would belong to other answers.
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta {
                self.apply(delta, sink);
            }
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
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
        let tool_calls = this
            .calls
            .into_values()
            .enumerate()
            .map(|(position, call)| ToolCall {
                id: call_id(Some(call.id), position),
                name: call.name,
                arguments: call.arguments,
            })
            .collect();
        Ok(finish_turn(
            this.text,
            this.refusal,
            tool_calls,
            this.finish_reason,
            this.usage,
        ))
    }
}

impl OpenAiStream {
    fn apply(&mut self, delta: WireDelta, sink: StreamSink<'_>) {
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            self.text.push_str(&text);
            self.has_output = true;
            sink(StreamEvent::Text(&text));
        }
        for reasoning in [delta.reasoning_content, delta.reasoning]
            .into_iter()
            .flatten()
            .filter(|t| !t.is_empty())
        {
            self.has_output = true;
            sink(StreamEvent::Reasoning(&reasoning));
        }
        // A refusal is not streamed as text: the agent reports it whole once the turn ends.
        if let Some(refusal) = delta.refusal.filter(|t| !t.is_empty()) {
            self.refusal.push_str(&refusal);
            self.has_output = true;
        }
        let count = delta.tool_calls.len();
        for (position, call) in delta.tool_calls.into_iter().enumerate() {
            // Without an index (some local servers), a lone call continues the last one
            // and a list of several lists each call in order.
            let index = call.index.unwrap_or_else(|| {
                if count == 1 {
                    self.calls.keys().next_back().copied().unwrap_or(0)
                } else {
                    position
                }
            });
            let partial = self.calls.entry(index).or_default();
            if let Some(id) = call.id.filter(|id| !id.is_empty()) {
                partial.id = id;
            }
            if let Some(function) = call.function {
                // The name comes whole in the first delta; servers that repeat it later
                // must not make it `read_fileread_file`.
                if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                    if partial.name.is_empty() {
                        partial.name = name;
                    }
                }
                if !partial.announced && !partial.name.is_empty() {
                    partial.announced = true;
                    sink(StreamEvent::ToolCall {
                        index,
                        id: &partial.id,
                        name: &partial.name,
                    });
                }
                let fragment = arguments_text(function.arguments);
                if !fragment.is_empty() {
                    partial.arguments.push_str(&fragment);
                    sink(StreamEvent::ToolArguments {
                        index,
                        fragment: &fragment,
                    });
                }
            }
            self.has_output = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::sse::decode_all;
    use super::super::{ToolResult, ToolSpec};
    use super::*;

    fn recorded(name: &str) -> Decoded {
        let path = format!(
            "{}/../fixtures/providers/openai/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let body = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        decode_all(&body, Box::<OpenAiStream>::default()).unwrap()
    }

    fn usage(input_tokens: u64, output_tokens: u64) -> Usage {
        Usage {
            input_tokens,
            output_tokens,
            cached_input_tokens: 0,
        }
    }

    #[test]
    fn recorded_parallel_tool_calls() {
        let decoded = recorded("parallel-tool-calls.sse");
        assert_eq!(decoded.finish, FinishReason::ToolCalls);
        assert_eq!(decoded.turn.text, "");
        let calls = &decoded.turn.tool_calls;
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].id, "call_JMW1whyEaYG438VE1OIflxA2");
        assert_eq!(calls[0].name, "GetWeatherArgs");
        assert_eq!(
            serde_json::from_str::<Value>(&calls[0].arguments).unwrap(),
            json!({"city": "Edinburgh", "country": "GB", "units": "c"})
        );
        assert_eq!(calls[1].id, "call_DNYTawLBoN8fj3KN6qU9N1Ou");
        assert_eq!(calls[1].name, "get_stock_price");
        assert_eq!(
            serde_json::from_str::<Value>(&calls[1].arguments).unwrap(),
            json!({"ticker": "AAPL", "exchange": "NASDAQ"})
        );
        assert_eq!(decoded.usage, usage(149, 60));
    }

    #[test]
    fn recorded_role_and_tool_call_in_first_chunk() {
        let decoded = recorded("role-and-tool-call-in-first-chunk.sse");
        assert_eq!(decoded.finish, FinishReason::ToolCalls);
        let calls = &decoded.turn.tool_calls;
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id, "call_c91SqDXlYFuETYv8mUHzz6pp");
        assert_eq!(calls[0].name, "GetWeatherArgs");
        let arguments: Value = serde_json::from_str(&calls[0].arguments).unwrap();
        assert_eq!(arguments["city"], "Edinburgh");
        assert_eq!(decoded.usage, usage(76, 24));
    }

    #[test]
    fn recorded_single_tool_call() {
        let decoded = recorded("single-tool-call.sse");
        assert_eq!(decoded.finish, FinishReason::ToolCalls);
        assert_eq!(
            decoded.turn.tool_calls,
            vec![ToolCall {
                id: "call_4XzlGBLtUe9dy3GVNV4jhq7h".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"New York City"}"#.into(),
            }]
        );
        assert_eq!(decoded.usage, usage(44, 16));
    }

    #[test]
    fn recorded_finish_reason_length() {
        let decoded = recorded("finish-reason-length.sse");
        assert_eq!(decoded.finish, FinishReason::Length);
        assert_eq!(decoded.turn.text, "{\"");
        assert_eq!(decoded.usage, usage(79, 1));
    }

    #[test]
    fn recorded_refusal() {
        let decoded = recorded("refusal.sse");
        assert_eq!(decoded.finish, FinishReason::Refusal);
        assert_eq!(
            decoded.turn.text,
            "I'm sorry, I can't assist with that request."
        );
        assert!(decoded.turn.tool_calls.is_empty());
        assert_eq!(decoded.usage, usage(79, 11));
    }

    #[test]
    fn every_recording_is_covered() {
        let dir = format!(
            "{}/../fixtures/providers/openai",
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
                "finish-reason-length.sse",
                "parallel-tool-calls.sse",
                "refusal.sse",
                "role-and-tool-call-in-first-chunk.sse",
                "single-tool-call.sse",
            ]
        );
        for name in &names {
            recorded(name);
        }
    }

    #[test]
    fn output_is_noticed_only_on_content_or_tool_deltas() {
        let mut stream = OpenAiStream::default();
        let feed = |stream: &mut OpenAiStream, data: &str| {
            stream
                .feed(
                    &SseEvent {
                        event: String::new(),
                        data: data.into(),
                    },
                    &crate::providers::ignore_stream,
                )
                .unwrap()
        };
        feed(
            &mut stream,
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
        );
        assert!(!stream.has_output());
        feed(
            &mut stream,
            r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#,
        );
        assert!(stream.has_output());
        feed(&mut stream, "");
        assert!(!stream.is_complete());
        feed(&mut stream, "[DONE]");
        assert!(stream.is_complete());
    }

    #[test]
    fn error_chunk_is_a_provider_error() {
        let mut stream = OpenAiStream::default();
        let result = stream.feed(
            &SseEvent {
                event: String::new(),
                data: r#"{"error":{"message":"overloaded"}}"#.into(),
            },
            &crate::providers::ignore_stream,
        );
        assert_eq!(
            result,
            Err(StreamError::Provider(
                "provider reported: overloaded".into()
            ))
        );
    }

    #[test]
    fn whole_replies() {
        let cases: &[(&str, &str, FinishReason, usize)] = &[
            (
                r#"{"choices":[{"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#,
                "Hello",
                FinishReason::Stop,
                0,
            ),
            (
                r#"{"choices":[{"message":{"content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"x\"}"}},{"id":"b","type":"function","function":{"name":"list_directory","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
                "",
                FinishReason::ToolCalls,
                2,
            ),
            // Ollama: tool calls with `stop`, and arguments as an object.
            (
                r#"{"choices":[{"message":{"content":"","tool_calls":[{"function":{"name":"read_file","arguments":{"path":"x"}}}]},"finish_reason":"stop"}]}"#,
                "",
                FinishReason::ToolCalls,
                1,
            ),
            (
                r#"{"choices":[{"message":{"content":"trunc"},"finish_reason":"length"}]}"#,
                "trunc",
                FinishReason::Length,
                0,
            ),
            (
                r#"{"choices":[{"message":{"content":null,"refusal":"No."},"finish_reason":"stop"}]}"#,
                "No.",
                FinishReason::Refusal,
                0,
            ),
            (
                r#"{"choices":[{"message":{"content":"x"},"finish_reason":"content_filter"}]}"#,
                "x",
                FinishReason::Other("content_filter".into()),
                0,
            ),
        ];
        for (body, text, finish, calls) in cases {
            let decoded = decode_response(body.as_bytes()).unwrap();
            assert_eq!(&decoded.turn.text, text, "{body}");
            assert_eq!(&decoded.finish, finish, "{body}");
            assert_eq!(decoded.turn.tool_calls.len(), *calls, "{body}");
        }
        let ollama = decode_response(cases[2].0.as_bytes()).unwrap();
        assert_eq!(ollama.turn.tool_calls[0].id, "call_0");
        assert_eq!(ollama.turn.tool_calls[0].arguments, r#"{"path":"x"}"#);
        assert!(decode_response(b"{\"choices\":[]}").is_err());
        assert!(decode_response(b"<html>").is_err());
    }

    #[test]
    fn request_shape() {
        let request = ChatRequest {
            system: "be brief".into(),
            messages: vec![
                Message::User("where?".into()),
                Message::Assistant(AssistantTurn {
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"a"}"#.into(),
                    }],
                }),
                Message::ToolResults(vec![ToolResult {
                    call_id: "c1".into(),
                    name: "read_file".into(),
                    content: "1\tfn main".into(),
                    is_error: false,
                }]),
            ],
            tools: vec![ToolSpec {
                name: "read_file".into(),
                description: "reads".into(),
                parameters: json!({"type": "object"}),
            }],
        };
        let limit = OutputLimit {
            field: "max_tokens",
            tokens: 300,
        };
        let body = request_body("m", limit, &request, true);
        assert_eq!(
            body,
            json!({
                "model": "m",
                "stream": true,
                "stream_options": {"include_usage": true},
                "max_tokens": 300,
                "tool_choice": "auto",
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "where?"},
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "c1", "content": "1\tfn main"},
                ],
                "tools": [{"type": "function", "function": {"name": "read_file", "description": "reads", "parameters": {"type": "object"}}}],
            })
        );
        let plain = request_body("m", limit, &request, false);
        assert_eq!(plain["stream"], false);
        assert!(plain.get("stream_options").is_none());
        let without_tools = ChatRequest {
            tools: Vec::new(),
            ..request
        };
        let body = request_body("m", limit, &without_tools, false);
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
    }

    #[test]
    fn output_limit_field_by_host() {
        let cases = [
            ("https://api.openai.com/v1", "max_completion_tokens"),
            ("https://API.OpenAI.com:443/v1/", "max_completion_tokens"),
            ("http://127.0.0.1:8080/v1", "max_tokens"),
            ("https://api.groq.com/openai/v1", "max_tokens"),
            ("https://api.openai.com.evil.example/v1", "max_tokens"),
            ("http://localhost:11434/v1", "max_tokens"),
        ];
        for (url, field) in cases {
            assert_eq!(limit_field(url), field, "{url}");
        }
    }

    #[test]
    fn the_prefix_is_byte_stable_across_calls() {
        let tools = vec![ToolSpec {
            name: "read_file".into(),
            description: "reads".into(),
            parameters: json!({"type": "object", "properties": {"b": {}, "a": {}}}),
        }];
        let first = ChatRequest {
            system: "be brief".into(),
            messages: vec![Message::User("where?".into())],
            tools: tools.clone(),
        };
        let mut second = first.clone();
        second.messages.push(Message::Assistant(AssistantTurn {
            text: "Looking.".into(),
            tool_calls: Vec::new(),
        }));
        second.messages.push(Message::User("and?".into()));
        let limit = OutputLimit {
            field: "max_tokens",
            tokens: 10,
        };
        let one = request_body("m", limit, &first, true);
        let two = request_body("m", limit, &second, true);
        let text = |v: &Value| v.to_string();
        assert_eq!(text(&one["tools"]), text(&two["tools"]));
        let earlier = one["messages"].as_array().unwrap();
        let later = two["messages"].as_array().unwrap();
        for (a, b) in earlier.iter().zip(later) {
            assert_eq!(text(a), text(b));
        }
        assert_eq!(
            one.to_string(),
            request_body("m", limit, &first, true).to_string()
        );
    }

    #[test]
    fn streamed_pieces_reach_the_sink_in_order() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":null,\"function_call\":null}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hm\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"answer\",\"arguments\":\"{\\\"a\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\":1}\"}}]},\"finish_reason\":\"tool_calls\"}],\"usage\":null}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":4}}}\n\n",
            "data: [DONE]\n\n",
        );
        let seen = std::sync::Mutex::new(Vec::new());
        let sink = |event: StreamEvent<'_>| seen.lock().unwrap().push(format!("{event:?}"));
        let decoded = super::super::sse::decode_all_into(
            body.as_bytes(),
            Box::<OpenAiStream>::default(),
            &sink,
        )
        .unwrap();
        assert_eq!(
            seen.into_inner().unwrap(),
            [
                r#"Reasoning("hm")"#,
                r#"Text("Hi")"#,
                r#"ToolCall { index: 0, id: "c", name: "answer" }"#,
                r#"ToolArguments { index: 0, fragment: "{\"a" }"#,
                r#"ToolArguments { index: 0, fragment: "\":1}" }"#,
            ]
        );
        assert_eq!(decoded.turn.text, "Hi");
        assert_eq!(decoded.turn.tool_calls[0].arguments, r#"{"a":1}"#);
        assert_eq!(
            decoded.usage,
            Usage {
                input_tokens: 9,
                output_tokens: 2,
                cached_input_tokens: 4
            }
        );
    }
}

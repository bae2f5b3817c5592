//! The OpenAI Chat Completions wire format (`{base_url}/chat/completions`), spoken by
//! OpenAI, Groq, Ollama, llama.cpp server, vLLM and LM Studio: request JSON, the whole
//! reply, and the streamed reply.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};

use super::http::{Decoders, Outgoing, Transport};
use super::sse::{SseEvent, StreamDecoder, StreamError};
use super::{
    AssistantTurn, BoxFuture, ChatModel, ChatRequest, ChatResponse, Decoded, FinishReason, Message,
    ProviderConfig, ProviderError, ToolCall, Usage,
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

    fn outgoing(&self, request: &ChatRequest) -> Outgoing {
        let body = request_body(&self.config.model, request, self.config.stream);
        let mut headers = Vec::new();
        // Local servers need no key; an empty `Bearer ` header would make some reject us.
        if !self.config.api_key.0.is_empty() {
            headers.push(("authorization", format!("Bearer {}", self.config.api_key.0)));
        }
        Outgoing {
            url: self.transport.endpoint("/chat/completions"),
            headers,
            body: body.to_string().into_bytes(),
            stream: self.config.stream,
        }
    }
}

impl ChatModel for OpenAiProvider {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ProviderError>> {
        Box::pin(async move {
            let outgoing = self.outgoing(request);
            let decoders = Decoders {
                body: decode_response,
                stream: || Box::<OpenAiStream>::default(),
            };
            self.transport.call(&outgoing, &decoders).await
        })
    }

    fn describe(&self) -> String {
        format!("openai {} at {}", self.config.model, self.config.base_url)
    }
}

/// The request JSON. `max_tokens` is deliberately not sent: OpenAI's reasoning models reject
/// it (they want `max_completion_tokens`, which other servers do not know), and every
/// server has a sensible default.
pub(crate) fn request_body(model: &str, request: &ChatRequest, stream: bool) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        match message {
            Message::User(text) => messages.push(json!({"role": "user", "content": text})),
            Message::Assistant(turn) => {
                let content = if turn.text.is_empty() {
                    Value::Null
                } else {
                    Value::String(turn.text.clone())
                };
                let mut assistant = json!({"role": "assistant", "content": content});
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
    }
    if stream {
        // Without this the stream carries no token counts.
        body["stream_options"] = json!({"include_usage": true});
    }
    body
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

impl From<WireUsage> for Usage {
    fn from(usage: WireUsage) -> Usage {
        Usage {
            input_tokens: usage.prompt_tokens,
            output_tokens: usage.completion_tokens,
        }
    }
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    /// A string per the spec; some servers send an object.
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: WireMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Vec<WireToolCall>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
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
    #[serde(default)]
    choices: Vec<WireChunkChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    /// vLLM, OpenRouter and OpenAI itself may report a failure inside the stream.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireChunkChoice {
    #[serde(default)]
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
    #[serde(default)]
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
    fn feed(&mut self, event: &SseEvent) -> Result<(), StreamError> {
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
        if let Some(error) = chunk.error {
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
                self.apply(delta);
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
    fn apply(&mut self, delta: WireDelta) {
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            self.text.push_str(&text);
            self.has_output = true;
        }
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
                partial
                    .arguments
                    .push_str(&arguments_text(function.arguments));
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
                .feed(&SseEvent {
                    event: String::new(),
                    data: data.into(),
                })
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
        let result = stream.feed(&SseEvent {
            event: String::new(),
            data: r#"{"error":{"message":"overloaded"}}"#.into(),
        });
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
        let body = request_body("m", &request, true);
        assert_eq!(
            body,
            json!({
                "model": "m",
                "stream": true,
                "stream_options": {"include_usage": true},
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "where?"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "c1", "content": "1\tfn main"},
                ],
                "tools": [{"type": "function", "function": {"name": "read_file", "description": "reads", "parameters": {"type": "object"}}}],
            })
        );
        let plain = request_body("m", &request, false);
        assert_eq!(plain["stream"], false);
        assert!(plain.get("stream_options").is_none());
    }
}

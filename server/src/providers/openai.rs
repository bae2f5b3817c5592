//! The OpenAI Chat Completions wire format (`{base_url}/chat/completions`), spoken by
//! OpenAI, Groq, Ollama, llama.cpp server, vLLM and LM Studio: its request JSON, its
//! whole and streamed replies. What every format shares is in `chat.rs`.
//!
//! Local servers put `null` where OpenAI leaves a field out (`"tool_calls": null` in
//! llama-cpp-python's first delta, `"content": null`, `"usage": null`…); every optional
//! field here reads `null` as absent (`nullable.rs`).

use serde::Deserialize;
use serde_json::{json, Value};

use super::chat::{self, Stop, StreamedTurn, WireFormat};
use super::nullable;
use super::sse::{SseEvent, StreamDecoder, StreamError};
use super::{
    ApiKey, ChatRequest, Decoded, FinishReason, Message, ProviderError, StreamSink, ToolCall, Usage,
};

/// The OpenAI format, with the output limit under the name the server reads.
pub(crate) struct OpenAi {
    limit_field: &'static str,
}

impl OpenAi {
    pub fn for_base_url(base_url: &str) -> Self {
        OpenAi {
            limit_field: limit_field(base_url),
        }
    }
}

impl WireFormat for OpenAi {
    const NAME: &'static str = "openai";
    const PATH: &'static str = "/chat/completions";
    const MODELS_PATH: &'static str = "/models";
    type Stream = OpenAiStream;

    fn headers(&self, api_key: &ApiKey) -> Vec<(&'static str, String)> {
        // Local servers need no key; an empty `Bearer ` header would make some reject us.
        if api_key.0.is_empty() {
            return Vec::new();
        }
        vec![("authorization", format!("Bearer {}", api_key.0))]
    }

    fn request_body(
        &self,
        model: &str,
        max_tokens: u32,
        request: &ChatRequest,
        stream: bool,
    ) -> Value {
        request_body(model, self.limit_field, max_tokens, request, stream)
    }

    fn decode_response(body: &[u8]) -> Result<Decoded, ProviderError> {
        decode_response(body)
    }
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

/// The request JSON. Nothing in it depends on the time and its keys are always inserted
/// in the same order, so the system message and the tools are byte-identical on every
/// call of an ask and its follow-ups, and the messages only grow at the end: that stable
/// prefix is what OpenAI's and llama-server's prompt caches match on.
fn request_body(
    model: &str,
    limit_field: &str,
    max_tokens: u32,
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
    body[limit_field] = json!(max_tokens);
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
    arguments.map_or_else(String::new, |value| chat::json_text(value, ""))
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
    let response: WireResponse = chat::decode_json(body, "chat completion")?;
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

/// The `finish_reason`s this format defines; `stop` and `tool_calls` alike are the model
/// ending its turn (Ollama and others say `stop` even when the turn calls tools).
const STOP_REASONS: &[(&str, Stop)] = &[
    ("length", Stop::Length),
    ("tool_calls", Stop::Natural),
    ("function_call", Stop::Natural),
    ("stop", Stop::Natural),
];

fn finish_turn(
    text: String,
    refusal: String,
    tool_calls: Vec<ToolCall>,
    finish_reason: Option<String>,
    usage: Usage,
) -> Decoded {
    if !refusal.is_empty() {
        return chat::decoded(refusal, Vec::new(), FinishReason::Refusal, usage);
    }
    let finish = chat::finish_reason(
        finish_reason.as_deref(),
        STOP_REASONS,
        !tool_calls.is_empty(),
    );
    chat::decoded(text, tool_calls, finish, usage)
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

/// Accumulates a streamed turn. Only the first delta of each tool call carries its id
/// and name, so a call is announced once its name is known.
#[derive(Default)]
pub(crate) struct OpenAiStream {
    turn: StreamedTurn,
    refusal: String,
    finish_reason: Option<String>,
    usage: Usage,
}

impl StreamDecoder for OpenAiStream {
    fn feed(&mut self, event: &SseEvent, sink: StreamSink<'_>) -> Result<(), StreamError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.turn.end();
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
            return Err(chat::reported(None, &message));
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
        self.turn.has_output()
    }

    fn is_complete(&self) -> bool {
        self.turn.is_complete()
    }

    fn finish(self: Box<Self>) -> Result<Decoded, ProviderError> {
        let this = *self;
        let (text, calls) = this.turn.into_parts();
        let tool_calls = calls
            .into_iter()
            .enumerate()
            .map(|(position, (_, call))| ToolCall {
                id: call_id(Some(call.id), position),
                name: call.name,
                arguments: call.arguments,
            })
            .collect();
        Ok(finish_turn(
            text,
            this.refusal,
            tool_calls,
            this.finish_reason,
            this.usage,
        ))
    }
}

impl OpenAiStream {
    fn apply(&mut self, delta: WireDelta, sink: StreamSink<'_>) {
        if let Some(text) = delta.content {
            self.turn.text(0, &text, sink);
        }
        for reasoning in [delta.reasoning_content, delta.reasoning]
            .into_iter()
            .flatten()
        {
            self.turn.reasoning(&reasoning, sink);
        }
        // A refusal is not streamed as text: the agent reports it whole once the turn ends.
        if let Some(refusal) = delta.refusal.filter(|t| !t.is_empty()) {
            self.refusal.push_str(&refusal);
            self.turn.output_seen();
        }
        let count = delta.tool_calls.len();
        for (position, call) in delta.tool_calls.into_iter().enumerate() {
            // Without an index (some local servers), a lone call continues the last one
            // and a list of several lists each call in order.
            let index = call.index.unwrap_or_else(|| {
                if count == 1 {
                    self.turn.last_call_index()
                } else {
                    position
                }
            });
            let partial = self.turn.call(index);
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
                self.turn.announce_when_named(index, sink);
                let fragment = arguments_text(function.arguments);
                self.turn.arguments(index, &fragment, sink);
            }
            self.turn.output_seen();
        }
    }
}

#[cfg(test)]
mod tests;

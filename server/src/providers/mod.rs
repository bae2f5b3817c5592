//! Model providers: one file per vendor wire format behind the `ChatModel` trait.
//!
//! The agent speaks only the plain types below; each provider translates them to its
//! vendor's JSON, talks HTTP (streaming or not), retries like the official SDKs, and
//! translates the reply back. Nothing above this layer knows about reqwest or SSE.
//! What the formats share is written once (`chat.rs`: the provider, the streamed turn,
//! stop reasons, errors); each vendor's file (`openai.rs`, `anthropic.rs`) holds only
//! its differences, and a new format is one more such file.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// Which wire format to speak. `none` is not a provider: the agent handles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderKind {
    OpenAi,
    Anthropic,
}

/// An API key. Its `Debug` never shows the value, so it cannot leak through a log line.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ApiKey(pub String);

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str("ApiKey(<empty>)")
        } else {
            f.write_str("ApiKey(<redacted>)")
        }
    }
}

impl ApiKey {
    /// Removes every occurrence of the key from `text` (provider error bodies may echo it).
    pub fn redact(&self, text: &str) -> String {
        if self.0.len() < 4 {
            return text.to_string();
        }
        text.replace(&self.0, "<redacted>")
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// `openai`: requests go to `{base_url}/chat/completions`; `anthropic`: `{base_url}/v1/messages`.
    pub base_url: String,
    pub model: String,
    /// Empty means "send no auth header" (local servers need none).
    pub api_key: ApiKey,
    pub stream: bool,
    /// One provider call end to end, retries excluded.
    pub request_timeout: Duration,
    pub connect_timeout: Duration,
    pub max_retries: u32,
    /// The output limit sent with every request (`maxOutputTokens`).
    pub max_tokens: u32,
}

/// One message of the conversation, in the order the model sees them.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    User(String),
    Assistant(AssistantTurn),
    /// The results of every tool call of the preceding assistant turn, in call order.
    ToolResults(Vec<ToolResult>),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct AssistantTurn {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments exactly as the model produced them: a JSON object as text, possibly
    /// malformed (the agent turns that into an `Error: ` result).
    pub arguments: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    pub call_id: String,
    pub name: String,
    pub content: String,
    pub is_error: bool,
}

/// A tool as the model sees it: name, description, JSON Schema of its parameters.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

#[derive(Clone, Debug)]
pub struct ChatRequest {
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinishReason {
    /// The model finished its turn (no tool calls, or tool calls to run).
    Stop,
    ToolCalls,
    /// Output was cut off (`finish_reason: length`, `stop_reason: max_tokens`): of the
    /// turn's tool calls only those whose arguments are complete JSON may run.
    Length,
    /// The model refused; the refusal text is in `turn.text`.
    Refusal,
    Other(String),
}

/// Token counts of one call as the provider reported them; what it does not report is 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Every input token, those served from the prompt cache (and, for Anthropic, those
    /// written to it) included.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The part of `input_tokens` the provider read from its prompt cache.
    pub cached_input_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
    }
}

/// What a provider reports while a reply streams in, in the order it arrives. A
/// non-streamed reply reports nothing; its turn arrives whole in the `ChatResponse`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamEvent<'a> {
    /// Model text to append to the turn.
    Text(&'a str),
    /// Reasoning the provider streams apart from the text (Anthropic thinking,
    /// `reasoning_content` of OpenAI-compatible servers); never part of the turn's text.
    Reasoning(&'a str),
    /// A tool call began. `index` identifies it within the turn (the wire's own index).
    ToolCall {
        index: usize,
        id: &'a str,
        name: &'a str,
    },
    /// The next fragment of that tool call's arguments (partial JSON).
    ToolArguments { index: usize, fragment: &'a str },
}

/// Where a call's stream events go. Called synchronously while the reply is decoded: it
/// must not block.
///
/// A call is retried from scratch only while nothing has gone to the sink yet (see
/// `http.rs`), so what a sink received is never repeated by a rerun of the same call.
pub type StreamSink<'a> = &'a (dyn Fn(StreamEvent<'_>) + Send + Sync);

/// A sink for callers that do not stream.
pub fn ignore_stream(_: StreamEvent<'_>) {}

#[derive(Clone, Debug)]
pub struct ChatResponse {
    pub turn: AssistantTurn,
    pub finish: FinishReason,
    pub usage: Usage,
    /// Bytes of the final (successful) request body, for measuring what an ask costs.
    pub request_bytes: usize,
    /// How many requests the call sent (1 = no retry).
    pub attempts: u32,
}

/// Why a provider call failed. Display texts name the cause and never the key.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("cannot connect to {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("provider did not answer within {secs} s ({url})")]
    Timeout { url: String, secs: u64 },
    #[error("provider returned {status}: {message}")]
    Status { status: u16, message: String },
    #[error("stream from the provider was cut off: {0}")]
    StreamCut(String),
    #[error("unusable reply from the provider: {0}")]
    Decode(String),
    /// The editor's model would not answer (no model, the user declined consent, a
    /// quota, the model's own error): the client's message.
    #[error("the editor's model did not answer: {0}")]
    Refused(String),
}

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A chat model that can call tools. Dropping the returned future aborts the HTTP
/// request (that is how cancellation reaches the connection).
pub trait ChatModel: Send + Sync {
    /// Sends one request and returns the whole turn; while a streamed reply arrives, its
    /// text, reasoning and tool-call fragments go to `sink` as they are decoded.
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ProviderError>>;

    /// The models the provider offers (`GET …/models`), for a model menu.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ProviderError>>;

    /// e.g. `openai gpt-4.1-mini at http://127.0.0.1:4000/v1`, for logs and answers.
    fn describe(&self) -> String;
}

/// Builds the provider for a configuration.
pub fn build(config: ProviderConfig) -> Arc<dyn ChatModel> {
    match config.kind {
        ProviderKind::OpenAi => {
            let wire = openai::OpenAi::for_base_url(&config.base_url);
            Arc::new(chat::Provider::new(config, wire))
        }
        ProviderKind::Anthropic => Arc::new(chat::Provider::new(config, anthropic::Anthropic)),
    }
}

/// What a vendor's reply decodes to, before the transport adds its own counts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Decoded {
    pub turn: AssistantTurn,
    pub finish: FinishReason,
    pub usage: Usage,
}

mod anthropic;
mod chat;
pub mod editor;
mod http;
#[cfg(test)]
mod local_servers;
mod nullable;
mod openai;
mod retry;
mod sse;
pub mod transcript;

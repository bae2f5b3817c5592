//! The editor's own model (contract v5, section 11): a provider whose model call is a
//! `copilot/model` request to the client (VS Code's language models), behind the same
//! `ChatModel` trait as the HTTP providers. This file owns the call's wire format
//! (`ModelParams` out, `ModelResult` back, `ModelDelta`s streamed), keeping the
//! transcript within the model's `maxInputTokens`, and what a refusal is; the request
//! itself travels through an [`EditorChannel`] that the protocol layer (`lsp/`)
//! implements and hands down, so nothing here sees a protocol crate.
//!
//! The reply is the whole turn and the only source of tool calls: deltas only make text
//! appear early (a delta that arrives after the reply is dropped by the channel), so no
//! order of deltas and reply can lose or duplicate a call.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::transcript;
use super::{
    AssistantTurn, BoxFuture, ChatModel, ChatRequest, ChatResponse, FinishReason, Message,
    ProviderError, StreamEvent, StreamSink, ToolCall, Usage,
};

/// JSON-RPC `RequestFailed`: the client's word that the model cannot answer (no model,
/// the user declined consent, a quota, the model's own error).
pub const MODEL_REFUSED: i64 = -32803;

/// A model the editor lists (`initializationOptions.editorModels`,
/// `copilot/didChangeEditorModels`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditorModelInfo {
    pub id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub vendor: String,
    #[serde(default)]
    pub family: String,
    /// 0 when the client did not say (no limit is applied then).
    #[serde(default)]
    pub max_input_tokens: u64,
}

impl EditorModelInfo {
    /// Reads the list a client sent; entries without an id are skipped.
    pub fn list_from(value: &Value) -> Vec<EditorModelInfo> {
        value
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|entry| serde_json::from_value::<EditorModelInfo>(entry.clone()).ok())
            .filter(|model| !model.id.trim().is_empty())
            .collect()
    }

    /// e.g. `GPT-4o (copilot)`, for answers and the doctor.
    pub fn label(&self) -> String {
        let name = if self.name.is_empty() {
            &self.id
        } else {
            &self.name
        };
        if self.vendor.is_empty() {
            name.clone()
        } else {
            format!("{name} ({})", self.vendor)
        }
    }
}

/// Why a call through the channel did not produce a reply.
#[derive(Clone, Debug, PartialEq)]
pub enum ChannelError {
    /// The client answered with a JSON-RPC error.
    Reply { code: i64, message: String },
    /// The connection to the client is gone.
    Closed,
}

/// The way to the client that runs the model, implemented by the protocol layer. A call
/// sends `params` (a `ModelParams` without its `partialResultToken`, which the channel
/// adds) and resolves with the reply's `result`; each `$/progress` value on the call's
/// token goes to `deltas` until the reply arrives. Dropping the future before it
/// resolves cancels the call (the client is sent `$/cancelRequest`, and a reply arriving
/// after that is ignored).
pub trait EditorChannel: Send + Sync {
    fn call(
        &self,
        params: Value,
        deltas: mpsc::UnboundedSender<Value>,
    ) -> BoxFuture<'static, Result<Value, ChannelError>>;
}

/// One editor model, reached through the client.
pub struct EditorModel {
    pub channel: Arc<dyn EditorChannel>,
    pub model: EditorModelInfo,
    pub conversation_id: String,
    pub max_output_tokens: u32,
    /// Bounds each call, as `requestTimeoutSecs` bounds an HTTP call.
    pub timeout: Duration,
}

impl ChatModel for EditorModel {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ProviderError>> {
        Box::pin(async move {
            let fitted = fit_to_input(request, self.model.max_input_tokens);
            if let Some(note) = &fitted.note {
                tracing::info!("{note}");
                sink(StreamEvent::Reasoning(note));
            }
            let params = model_params(
                &self.conversation_id,
                &self.model.id,
                &fitted.request,
                self.max_output_tokens,
            );
            let request_bytes = params.to_string().len();
            let (deltas, mut arriving) = mpsc::unbounded_channel();
            let call = self.channel.call(params, deltas);
            let reply = tokio::time::timeout(self.timeout, async {
                tokio::pin!(call);
                loop {
                    tokio::select! {
                        // Deltas queued before the reply are shown first.
                        biased;
                        Some(delta) = arriving.recv() => {
                            if let Some(text) = delta.get("text").and_then(Value::as_str) {
                                if !text.is_empty() {
                                    sink(StreamEvent::Text(text));
                                }
                            }
                        }
                        reply = &mut call => break reply,
                    }
                }
            })
            .await
            .map_err(|_| ProviderError::Timeout {
                url: "the editor's model".to_string(),
                secs: self.timeout.as_secs(),
            })?;
            let value = reply.map_err(|error| match error {
                ChannelError::Reply { code, message } if code == MODEL_REFUSED => {
                    ProviderError::Refused(message)
                }
                ChannelError::Reply { code, message } => ProviderError::Status {
                    status: 0,
                    message: format!("the editor answered {code}: {message}"),
                },
                ChannelError::Closed => ProviderError::Connect {
                    url: "the editor".to_string(),
                    reason: "the connection to the editor is closed".to_string(),
                },
            })?;
            let (turn, finish, usage) = decode_result(&value)?;
            Ok(ChatResponse {
                turn,
                finish,
                usage,
                request_bytes,
                attempts: 1,
            })
        })
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        let id = self.model.id.clone();
        Box::pin(async move { Ok(vec![id]) })
    }

    fn describe(&self) -> String {
        format!("the editor's model {}", self.model.label())
    }
}

/// `ModelParams` without its `partialResultToken` (the channel adds it).
pub fn model_params(
    conversation_id: &str,
    model: &str,
    request: &ChatRequest,
    max_output_tokens: u32,
) -> Value {
    let mut messages = Vec::new();
    for message in &request.messages {
        match message {
            Message::User(text) => messages.push(json!({"role": "user", "text": text})),
            Message::Assistant(turn) => {
                let mut entry = json!({"role": "assistant", "text": turn.text});
                if !turn.tool_calls.is_empty() {
                    entry["toolCalls"] = turn
                        .tool_calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.id,
                                "name": call.name,
                                "arguments": arguments_object(&call.arguments),
                            })
                        })
                        .collect();
                }
                messages.push(entry);
            }
            Message::ToolResults(results) => {
                messages.extend(results.iter().map(|result| {
                    json!({"role": "tool", "toolCallId": result.call_id, "text": result.content})
                }));
            }
        }
    }
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description,
                "inputSchema": tool.parameters,
            })
        })
        .collect();
    json!({
        "conversationId": conversation_id,
        "model": model,
        "system": request.system,
        "messages": messages,
        "tools": tools,
        "maxOutputTokens": max_output_tokens,
    })
}

/// A call's arguments as the object `ModelParams` carries: what the model wrote when it
/// was an object, else `{}` (the tool result already told the model it was malformed).
fn arguments_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => json!({}),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ModelResult {
    #[serde(default)]
    text: String,
    #[serde(default)]
    tool_calls: Vec<ResultCall>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<ResultUsage>,
}

#[derive(Deserialize)]
struct ResultCall {
    #[serde(default)]
    id: String,
    name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResultUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

/// The turn a `ModelResult` carries. Arguments given as a string (a client that passed
/// the model's text through) are kept as the text, as an HTTP provider's are.
fn decode_result(value: &Value) -> Result<(AssistantTurn, FinishReason, Usage), ProviderError> {
    let result = ModelResult::deserialize(value).map_err(|error| {
        ProviderError::Decode(format!(
            "the editor's model reply is not a ModelResult: {error}"
        ))
    })?;
    let tool_calls: Vec<ToolCall> = result
        .tool_calls
        .into_iter()
        .enumerate()
        .map(|(index, call)| ToolCall {
            id: if call.id.is_empty() {
                format!("editor-call-{}", index + 1)
            } else {
                call.id
            },
            name: call.name,
            arguments: match call.arguments {
                Value::String(text) => text,
                Value::Null => "{}".to_string(),
                other => other.to_string(),
            },
        })
        .collect();
    let finish = match result.stop_reason.as_deref() {
        Some("max_tokens") => FinishReason::Length,
        _ if !tool_calls.is_empty() => FinishReason::ToolCalls,
        Some("tool_calls") | Some("end") | None => FinishReason::Stop,
        Some(other) => FinishReason::Other(other.to_string()),
    };
    let usage = result.usage.map_or_else(Usage::default, |usage| Usage {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cached_input_tokens: 0,
    });
    Ok((
        AssistantTurn {
            text: result.text,
            tool_calls,
        },
        finish,
        usage,
    ))
}

/// A request cut to fit a model's input, and what was cut, for the trace.
struct Fitted {
    request: ChatRequest,
    note: Option<String>,
}

/// Bytes per token assumed when estimating a transcript's size: tokenizers average about
/// four bytes of English and fewer of code, so three errs on the side of fitting.
const BYTES_PER_TOKEN: usize = 3;
/// What an older tool result is replaced with when the transcript must shrink.
const DROPPED_RESULT: &str =
    "(an earlier tool result, dropped to fit the model's input limit; call the tool again if you still need it)";

/// Bytes of the system prompt and the tools: what every call sends besides the messages.
fn fixed_bytes(request: &ChatRequest) -> usize {
    request.system.len()
        + request
            .tools
            .iter()
            .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len())
            .sum::<usize>()
}

/// Estimated tokens of a request as the model would read it.
fn estimated_tokens(request: &ChatRequest) -> usize {
    let messages: usize = request.messages.iter().map(transcript::size).sum();
    (fixed_bytes(request) + messages).div_ceil(BYTES_PER_TOKEN)
}

/// Keeps a transcript within `max_input_tokens` (0: no limit), as a follow-up's history
/// is kept short (`transcript::bound`: the oldest tool results first, then the oldest
/// earlier exchanges). Says what it dropped.
fn fit_to_input(request: &ChatRequest, max_input_tokens: u64) -> Fitted {
    let limit = max_input_tokens as usize;
    if limit == 0 || estimated_tokens(request) <= limit {
        return Fitted {
            request: request.clone(),
            note: None,
        };
    }
    let budget = (limit * BYTES_PER_TOKEN).saturating_sub(fixed_bytes(request));
    let (messages, bounded) = transcript::bound(request.messages.clone(), budget, DROPPED_RESULT);
    let mut parts = Vec::new();
    if bounded.results > 0 {
        parts.push(format!("{} older tool result(s)", bounded.results));
    }
    if bounded.exchanges > 0 {
        parts.push(format!("{} earlier exchange(s)", bounded.exchanges));
    }
    let note = (!parts.is_empty()).then(|| {
        format!(
            "Dropped {} to fit the model's input limit of {max_input_tokens} tokens.",
            parts.join(" and ")
        )
    });
    Fitted {
        request: ChatRequest {
            system: request.system.clone(),
            messages,
            tools: request.tools.clone(),
        },
        note,
    }
}

#[cfg(test)]
mod tests;

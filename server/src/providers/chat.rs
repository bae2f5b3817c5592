//! What every chat wire format shares, written once: the provider (request out through
//! the transport, reply decoded whole or streamed), the streamed turn and what reaches
//! the sink, the reading of stop reasons, and the errors a reply can make. Each vendor
//! file (`openai.rs`, `anthropic.rs`) holds only its differences, as a [`WireFormat`].

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::http::{Decoders, Outgoing, Transport};
use super::sse::{StreamDecoder, StreamError};
use super::{
    ApiKey, AssistantTurn, BoxFuture, ChatModel, ChatRequest, ChatResponse, Decoded, FinishReason,
    ProviderConfig, ProviderError, StreamEvent, StreamSink, ToolCall, Usage,
};

/// One vendor's chat format: everything about a call that is not the same for all.
pub(crate) trait WireFormat: Send + Sync + 'static {
    /// The format's name, as `describe` shows it (`openai`, `anthropic`).
    const NAME: &'static str;
    /// The endpoint, after the base URL.
    const PATH: &'static str;
    /// The model listing (`GET`), after the base URL.
    const MODELS_PATH: &'static str;
    /// Decodes a streamed reply.
    type Stream: StreamDecoder + Default + 'static;

    /// Headers besides the content type: the key (none when it is empty: local servers
    /// and proxies may want none) and any version the vendor asks for.
    fn headers(&self, api_key: &ApiKey) -> Vec<(&'static str, String)>;

    /// The request JSON, with `max_tokens` as the output limit.
    fn request_body(
        &self,
        model: &str,
        max_tokens: u32,
        request: &ChatRequest,
        stream: bool,
    ) -> Value;

    /// Decodes a whole (non-streamed) reply.
    fn decode_response(body: &[u8]) -> Result<Decoded, ProviderError>;
}

/// A chat model spoken to in the wire format `W`.
pub(crate) struct Provider<W> {
    config: ProviderConfig,
    transport: Transport,
    wire: W,
}

impl<W: WireFormat> Provider<W> {
    pub fn new(config: ProviderConfig, wire: W) -> Self {
        let transport = Transport::new(&config);
        Provider {
            config,
            transport,
            wire,
        }
    }

    fn outgoing(&self, request: &ChatRequest, stream: bool) -> Outgoing {
        let body =
            self.wire
                .request_body(&self.config.model, self.config.max_tokens, request, stream);
        Outgoing {
            url: self.transport.endpoint(W::PATH),
            headers: self.wire.headers(&self.config.api_key),
            body: body.to_string().into_bytes(),
            stream,
        }
    }
}

fn new_stream<W: WireFormat>() -> Box<dyn StreamDecoder> {
    Box::<W::Stream>::default()
}

impl<W: WireFormat> ChatModel for Provider<W> {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ProviderError>> {
        Box::pin(async move {
            let build = |stream: bool| self.outgoing(request, stream);
            let decoders = Decoders {
                body: W::decode_response,
                stream: new_stream::<W>,
            };
            self.transport.call(&build, &decoders, sink).await
        })
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        Box::pin(async move {
            let headers = self.wire.headers(&self.config.api_key);
            let body = self.transport.get(W::MODELS_PATH, &headers).await?;
            model_ids(&body)
        })
    }

    fn describe(&self) -> String {
        format!(
            "{} {} at {}",
            W::NAME,
            self.config.model,
            self.config.base_url
        )
    }
}

/// The ids of a model listing: `{"data": [{"id": …}, …]}` is what OpenAI, Anthropic,
/// Ollama, llama.cpp and vLLM all answer. In the provider's order, each once, at most
/// `MAX_MODELS` (a menu, not a catalogue).
fn model_ids(body: &[u8]) -> Result<Vec<String>, ProviderError> {
    #[derive(Deserialize)]
    struct Listing {
        data: Vec<Listed>,
    }
    #[derive(Deserialize)]
    struct Listed {
        id: String,
    }
    let listing: Listing = serde_json::from_slice(body).map_err(|e| {
        ProviderError::Decode(format!(
            "the model listing is not {{\"data\": [{{\"id\": …}}]}}: {e}"
        ))
    })?;
    let mut ids: Vec<String> = Vec::new();
    for listed in listing.data {
        let id = listed.id.trim();
        if !id.is_empty() && !ids.iter().any(|seen| seen == id) && ids.len() < MAX_MODELS {
            ids.push(id.to_string());
        }
    }
    Ok(ids)
}

/// The most models a listing keeps.
pub(crate) const MAX_MODELS: usize = 200;

/// A tool call as its stream arrives.
#[derive(Debug, Default)]
pub(crate) struct PartialCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
    /// Whether `StreamEvent::ToolCall` was sent.
    announced: bool,
}

/// A turn as its stream arrives: text and tool calls keyed by the wire's own index
/// (parallel calls may arrive interleaved), reported to the sink piece by piece.
///
/// Kept in one place because what reaches the sink and `has_output` must agree: the
/// transport retries a call from scratch only while nothing has been output, so a
/// piece sent to the sink without being counted could be shown twice.
#[derive(Debug, Default)]
pub(crate) struct StreamedTurn {
    /// By block index (Anthropic's text blocks); OpenAI's text is one, at 0.
    texts: BTreeMap<usize, String>,
    calls: BTreeMap<usize, PartialCall>,
    has_output: bool,
    done: bool,
}

impl StreamedTurn {
    /// Model text for block `index`; empty pieces are no output.
    pub fn text(&mut self, index: usize, piece: &str, sink: StreamSink<'_>) {
        if piece.is_empty() {
            return;
        }
        self.texts.entry(index).or_default().push_str(piece);
        self.has_output = true;
        sink(StreamEvent::Text(piece));
    }

    /// Reasoning streamed apart from the text: shown, never part of the turn.
    pub fn reasoning(&mut self, piece: &str, sink: StreamSink<'_>) {
        if piece.is_empty() {
            return;
        }
        self.has_output = true;
        sink(StreamEvent::Reasoning(piece));
    }

    /// Output that is not streamed (a refusal, reported whole when the turn ends, or a
    /// tool-call delta that names nothing yet) still makes the call unsafe to rerun.
    pub fn output_seen(&mut self) {
        self.has_output = true;
    }

    /// Forgets block `index`, which starts again.
    pub fn restart(&mut self, index: usize) {
        self.texts.remove(&index);
        self.calls.remove(&index);
    }

    /// A tool call whose id and name are known at its start, announced at once.
    pub fn start_call(&mut self, index: usize, id: String, name: String, sink: StreamSink<'_>) {
        self.has_output = true;
        sink(StreamEvent::ToolCall {
            index,
            id: &id,
            name: &name,
        });
        let call = PartialCall {
            id,
            name,
            arguments: String::new(),
            announced: true,
        };
        self.calls.insert(index, call);
    }

    /// The tool call at `index`, begun empty if it is new.
    pub fn call(&mut self, index: usize) -> &mut PartialCall {
        self.calls.entry(index).or_default()
    }

    /// The index of the last tool call so far (0 when there is none).
    pub fn last_call_index(&self) -> usize {
        self.calls.keys().next_back().copied().unwrap_or(0)
    }

    /// Announces the call at `index` once its name is known.
    pub fn announce_when_named(&mut self, index: usize, sink: StreamSink<'_>) {
        let Some(call) = self.calls.get_mut(&index) else {
            return;
        };
        if !call.announced && !call.name.is_empty() {
            call.announced = true;
            self.has_output = true;
            sink(StreamEvent::ToolCall {
                index,
                id: &call.id,
                name: &call.name,
            });
        }
    }

    /// The next fragment of a call's arguments (partial JSON); empty ones are skipped.
    pub fn arguments(&mut self, index: usize, fragment: &str, sink: StreamSink<'_>) {
        if fragment.is_empty() {
            return;
        }
        self.call(index).arguments.push_str(fragment);
        self.has_output = true;
        sink(StreamEvent::ToolArguments { index, fragment });
    }

    /// The format's end marker arrived.
    pub fn end(&mut self) {
        self.done = true;
    }

    pub fn has_output(&self) -> bool {
        self.has_output
    }

    pub fn is_complete(&self) -> bool {
        self.done
    }

    /// The text, and the calls with their indexes, in index order.
    pub fn into_parts(self) -> (String, Vec<(usize, PartialCall)>) {
        let text = self.texts.into_values().collect();
        (text, self.calls.into_iter().collect())
    }
}

/// What one of a vendor's stop reasons says.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Stop {
    /// The model ended its turn: `ToolCalls` if it called tools, else `Stop` (Ollama
    /// says `stop` even when the turn calls tools).
    Natural,
    Length,
    ToolCalls,
    Refusal,
}

/// The finish of a turn from its stop reason (`None`: the reply had none), read with the
/// vendor's table; a reason the table does not know is kept as `Other`.
pub(crate) fn finish_reason(
    reason: Option<&str>,
    known: &[(&str, Stop)],
    has_tool_calls: bool,
) -> FinishReason {
    let stop = match reason {
        None => Stop::Natural,
        Some(reason) => match known.iter().find(|(name, _)| *name == reason) {
            Some(&(_, stop)) => stop,
            None => return FinishReason::Other(reason.to_string()),
        },
    };
    match stop {
        Stop::Natural if has_tool_calls => FinishReason::ToolCalls,
        Stop::Natural => FinishReason::Stop,
        Stop::Length => FinishReason::Length,
        Stop::ToolCalls => FinishReason::ToolCalls,
        Stop::Refusal => FinishReason::Refusal,
    }
}

/// The decoded reply.
pub(crate) fn decoded(
    text: String,
    tool_calls: Vec<ToolCall>,
    finish: FinishReason,
    usage: Usage,
) -> Decoded {
    Decoded {
        turn: AssistantTurn { text, tool_calls },
        finish,
        usage,
    }
}

/// A whole reply's JSON, or a decode error naming `what` it should have been.
pub(crate) fn decode_json<'a, T: Deserialize<'a>>(
    body: &'a [u8],
    what: &str,
) -> Result<T, ProviderError> {
    serde_json::from_slice(body).map_err(|e| ProviderError::Decode(format!("{what}: {e}")))
}

/// An error the provider reported inside its stream (`kind`: the vendor's error type).
pub(crate) fn reported(kind: Option<&str>, message: &str) -> StreamError {
    StreamError::Provider(match kind {
        Some(kind) => format!("provider reported {kind}: {message}"),
        None => format!("provider reported: {message}"),
    })
}

/// A JSON value where the agent wants the text of one (a tool call's arguments): a
/// string is taken as that text, `null` as `null_text`, anything else as its JSON.
pub(crate) fn json_text(value: Value, null_text: &str) -> String {
    match value {
        Value::Null => null_text.to_string(),
        Value::String(text) => text,
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_natural_stop_is_tool_calls_when_the_turn_calls_tools() {
        let known = [("end", Stop::Natural), ("cut", Stop::Length)];
        assert_eq!(finish_reason(None, &known, false), FinishReason::Stop);
        assert_eq!(finish_reason(None, &known, true), FinishReason::ToolCalls);
        assert_eq!(
            finish_reason(Some("end"), &known, true),
            FinishReason::ToolCalls
        );
        assert_eq!(
            finish_reason(Some("cut"), &known, true),
            FinishReason::Length
        );
        assert_eq!(
            finish_reason(Some("new"), &known, false),
            FinishReason::Other("new".into())
        );
    }

    #[test]
    fn every_piece_sent_to_the_sink_counts_as_output() {
        let seen = std::sync::Mutex::new(Vec::new());
        let sink = |event: StreamEvent<'_>| seen.lock().unwrap().push(format!("{event:?}"));
        let mut turn = StreamedTurn::default();
        turn.text(0, "", &sink);
        turn.reasoning("", &sink);
        turn.call(3).name = "read_file".into();
        assert!(!turn.has_output(), "nothing shown yet");
        turn.announce_when_named(3, &sink);
        assert!(turn.has_output());
        turn.announce_when_named(3, &sink);
        turn.arguments(3, "{}", &sink);
        turn.text(1, "b", &sink);
        turn.text(0, "a", &sink);
        assert!(turn.has_output());
        let (text, calls) = turn.into_parts();
        assert_eq!(text, "ab", "texts join in index order");
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].1.arguments, "{}");
        assert_eq!(
            seen.into_inner().unwrap(),
            [
                r#"ToolCall { index: 3, id: "", name: "read_file" }"#,
                r#"ToolArguments { index: 3, fragment: "{}" }"#,
                r#"Text("b")"#,
                r#"Text("a")"#,
            ]
        );
    }
    #[test]
    fn a_model_listing_gives_its_ids_in_order_each_once() {
        // The shapes OpenAI, Anthropic and llama-server answer (`data[].id` beside fields
        // of their own); a listing that is not one is an error, never a panic.
        let openai = br#"{"object":"list","data":[{"id":"gpt-4.1","object":"model","created":1,"owned_by":"system"},{"id":"gpt-4.1-mini","object":"model"}]}"#;
        let anthropic = br#"{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"}],"has_more":false,"first_id":"claude-sonnet-4-5","last_id":"claude-sonnet-4-5"}"#;
        let llama = br#"{"models":[{"name":"tiny.gguf","model":"tiny.gguf"}],"object":"list","data":[{"id":"tiny.gguf","object":"model","owned_by":"llamacpp","meta":{"n_params":1}},{"id":"tiny.gguf"},{"id":"  "}]}"#;
        assert_eq!(model_ids(openai).unwrap(), ["gpt-4.1", "gpt-4.1-mini"]);
        assert_eq!(model_ids(anthropic).unwrap(), ["claude-sonnet-4-5"]);
        assert_eq!(model_ids(llama).unwrap(), ["tiny.gguf"]);
        assert!(model_ids(b"<html>404</html>").is_err());
        assert!(model_ids(br#"{"models":[]}"#).is_err());
    }
}

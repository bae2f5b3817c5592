//! The editor provider against a scripted channel: the reply is authoritative whatever
//! the deltas said, refusals are told apart, and the transcript fits the model's input.

use std::sync::Mutex;

use super::*;
use crate::providers::{ToolResult, ToolSpec};

/// Replies with a fixed result after sending the given deltas.
struct Scripted {
    deltas: Vec<Value>,
    reply: Result<Value, ChannelError>,
    sent: Mutex<Vec<Value>>,
}

impl EditorChannel for Scripted {
    fn call(
        &self,
        params: Value,
        deltas: mpsc::UnboundedSender<Value>,
    ) -> BoxFuture<'static, Result<Value, ChannelError>> {
        self.sent.lock().unwrap().push(params);
        for delta in &self.deltas {
            let _ = deltas.send(delta.clone());
        }
        let reply = self.reply.clone();
        Box::pin(async move { reply })
    }
}

fn model(channel: Scripted, max_input_tokens: u64) -> (EditorModel, Arc<Scripted>) {
    let channel = Arc::new(channel);
    let model = EditorModel {
        channel: channel.clone(),
        model: EditorModelInfo {
            id: "test-model".into(),
            name: "Test".into(),
            vendor: "tests".into(),
            family: "t".into(),
            max_input_tokens,
        },
        conversation_id: "conversation-1".into(),
        max_output_tokens: 100,
        timeout: Duration::from_secs(5),
    };
    (model, channel)
}

fn request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        system: "You answer.".into(),
        messages,
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Reads a file.".into(),
            parameters: json!({"type": "object"}),
        }],
    }
}

fn collect(model: &EditorModel, request: &ChatRequest) -> (ChatResponse, Vec<String>) {
    let seen = Mutex::new(Vec::new());
    let sink = |event: StreamEvent<'_>| {
        let text = match event {
            StreamEvent::Text(t) => format!("text:{t}"),
            StreamEvent::Reasoning(t) => format!("reasoning:{t}"),
            other => format!("{other:?}"),
        };
        seen.lock().unwrap().push(text);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let response = runtime.block_on(model.complete(request, &sink)).unwrap();
    (response, seen.into_inner().unwrap())
}

#[test]
fn the_reply_is_the_turn_and_deltas_only_show_text() {
    let (model, channel) = model(
        Scripted {
            deltas: vec![json!({"text": "Look"}), json!({"text": "ing."}), json!({})],
            reply: Ok(json!({
                "model": "test-model",
                "text": "Looking.",
                "toolCalls": [{"id": "c1", "name": "read_file", "arguments": {"path": "a.rs"}}],
                "stopReason": "tool_calls",
                "usage": {"inputTokens": 12, "outputTokens": 3}
            })),
            sent: Mutex::default(),
        },
        0,
    );
    let (response, seen) = collect(&model, &request(vec![Message::User("q".into())]));
    assert_eq!(seen, ["text:Look", "text:ing."]);
    assert_eq!(response.turn.text, "Looking.");
    assert_eq!(response.turn.tool_calls.len(), 1);
    assert_eq!(response.turn.tool_calls[0].id, "c1");
    assert_eq!(
        serde_json::from_str::<Value>(&response.turn.tool_calls[0].arguments).unwrap(),
        json!({"path": "a.rs"})
    );
    assert_eq!(response.finish, FinishReason::ToolCalls);
    assert_eq!(
        (response.usage.input_tokens, response.usage.output_tokens),
        (12, 3)
    );
    let sent = channel.sent.lock().unwrap();
    assert_eq!(sent[0]["model"], "test-model");
    assert_eq!(sent[0]["conversationId"], "conversation-1");
    assert_eq!(sent[0]["system"], "You answer.");
    assert_eq!(sent[0]["messages"], json!([{"role": "user", "text": "q"}]));
    assert_eq!(
        sent[0]["tools"][0]["inputSchema"],
        json!({"type": "object"})
    );
    assert_eq!(sent[0]["maxOutputTokens"], 100);
}

#[test]
fn a_tool_call_only_in_the_reply_runs_and_one_only_in_deltas_does_not() {
    // Deltas carry text alone: even a delta that looks like a call is not one.
    let (model, _) = model(
        Scripted {
            deltas: vec![json!({"toolCalls": [{"id": "x", "name": "answer"}]})],
            reply: Ok(
                json!({"text": "", "toolCalls": [{"name": "answer", "arguments": "{\"answer\":\"A\"}"}], "stopReason": "tool_calls"}),
            ),
            sent: Mutex::default(),
        },
        0,
    );
    let (response, seen) = collect(&model, &request(vec![Message::User("q".into())]));
    assert!(seen.is_empty(), "{seen:?}");
    assert_eq!(response.turn.tool_calls.len(), 1);
    assert_eq!(response.turn.tool_calls[0].name, "answer");
    assert_eq!(response.turn.tool_calls[0].id, "editor-call-1");
    assert_eq!(response.turn.tool_calls[0].arguments, "{\"answer\":\"A\"}");
}

#[test]
fn the_conversation_maps_to_model_messages() {
    let messages = vec![
        Message::User("q".into()),
        Message::Assistant(AssistantTurn {
            text: "reading".into(),
            tool_calls: vec![
                ToolCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: "{\"path\":\"a\"}".into(),
                },
                ToolCall {
                    id: "c2".into(),
                    name: "read_file".into(),
                    arguments: "{broken".into(),
                },
            ],
        }),
        Message::ToolResults(vec![
            ToolResult {
                call_id: "c1".into(),
                name: "read_file".into(),
                content: "1: fn a()".into(),
                is_error: false,
            },
            ToolResult {
                call_id: "c2".into(),
                name: "read_file".into(),
                content: "Error: bad JSON".into(),
                is_error: true,
            },
        ]),
    ];
    let params = model_params("c", "m", &request(messages), 10);
    assert_eq!(
        params["messages"],
        json!([
            {"role": "user", "text": "q"},
            {"role": "assistant", "text": "reading", "toolCalls": [
                {"id": "c1", "name": "read_file", "arguments": {"path": "a"}},
                {"id": "c2", "name": "read_file", "arguments": {}}
            ]},
            {"role": "tool", "toolCallId": "c1", "text": "1: fn a()"},
            {"role": "tool", "toolCallId": "c2", "text": "Error: bad JSON"}
        ])
    );
}

#[test]
fn a_refusal_and_other_errors_are_told_apart() {
    for (reply, refused) in [
        (
            Err(ChannelError::Reply {
                code: MODEL_REFUSED,
                message: "the user declined".into(),
            }),
            true,
        ),
        (
            Err(ChannelError::Reply {
                code: -32603,
                message: "internal".into(),
            }),
            false,
        ),
        (Err(ChannelError::Closed), false),
        (Ok(json!({"text": 5})), false),
    ] {
        let (model, _) = model(
            Scripted {
                deltas: vec![],
                reply,
                sent: Mutex::default(),
            },
            0,
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let request = request(vec![Message::User("q".into())]);
        let error = runtime
            .block_on(model.complete(&request, &crate::providers::ignore_stream))
            .unwrap_err();
        assert_eq!(
            matches!(error, ProviderError::Refused(_)),
            refused,
            "{error}"
        );
    }
}

#[test]
fn a_transcript_over_the_input_limit_drops_the_oldest_tool_results_first() {
    let big = "x".repeat(3000);
    let result = |id: &str| {
        Message::ToolResults(vec![ToolResult {
            call_id: id.into(),
            name: "read_file".into(),
            content: big.clone(),
            is_error: false,
        }])
    };
    let call = |id: &str| {
        Message::Assistant(AssistantTurn {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: "read_file".into(),
                arguments: "{}".into(),
            }],
        })
    };
    let messages = vec![
        Message::User("the question".into()),
        call("c1"),
        result("c1"),
        call("c2"),
        result("c2"),
        call("c3"),
        result("c3"),
    ];
    let whole = request(messages);
    // Room for two of the three results.
    let limit = estimated_tokens(&whole) as u64 - 500;
    let (model, channel) = model(
        Scripted {
            deltas: vec![],
            reply: Ok(json!({"text": "done", "stopReason": "end"})),
            sent: Mutex::default(),
        },
        limit,
    );
    let (_, seen) = collect(&model, &whole);
    assert_eq!(
        seen,
        [format!(
            "reasoning:Dropped 1 older tool result(s) to fit the model's input limit of {limit} tokens."
        )]
    );
    let sent = channel.sent.lock().unwrap();
    let texts: Vec<&str> = sent[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, [DROPPED_RESULT, big.as_str(), big.as_str()]);
    assert_eq!(sent[0]["messages"][0]["text"], "the question");
    assert!(estimated_tokens(&fit_to_input(&whole, limit).request) <= limit as usize);
}

#[test]
fn earlier_exchanges_go_when_dropping_results_is_not_enough() {
    let old = "y".repeat(6000);
    let messages = vec![
        Message::User(old.clone()),
        Message::Assistant(AssistantTurn {
            text: old.clone(),
            tool_calls: vec![],
        }),
        Message::User("the new question".into()),
    ];
    let whole = request(messages);
    let fitted = fit_to_input(&whole, 500);
    assert_eq!(
        fitted.request.messages,
        vec![Message::User("the new question".into())]
    );
    assert!(fitted.note.unwrap().contains("1 earlier exchange(s)"));
    // No limit, or a transcript within it: nothing changes and nothing is said.
    assert!(fit_to_input(&whole, 0).note.is_none());
    assert!(fit_to_input(&whole, 1_000_000).note.is_none());
}

#[test]
fn the_listed_models_are_read_leniently() {
    let models = EditorModelInfo::list_from(&json!([
        {"id": "gpt-4o", "name": "GPT-4o", "vendor": "copilot", "family": "gpt-4o", "maxInputTokens": 64000},
        {"name": "no id"},
        {"id": "bare"},
        "not an object"
    ]));
    assert_eq!(models.len(), 2);
    assert_eq!(models[0].label(), "GPT-4o (copilot)");
    assert_eq!(models[0].max_input_tokens, 64000);
    assert_eq!(models[1].label(), "bare");
    assert!(EditorModelInfo::list_from(&json!(null)).is_empty());
}

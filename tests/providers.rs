//! The real providers (OpenAI and Anthropic wire formats) against the scripted fake
//! provider over loopback HTTP: what they send, what they decode, how they retry, time out,
//! fail, and hang up.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use copilot_ls::providers::{
    build, ignore_stream, ApiKey, AssistantTurn, ChatModel, ChatRequest, ChatResponse,
    FinishReason, Message, ProviderConfig, ProviderError, ProviderKind, StreamEvent, ToolCall,
    ToolResult, ToolSpec,
};
use copilot_ls_test_support::fake_provider::FakeProvider;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(10);
const KEY: &str = "sk-fake-Zq9PELICAN-0123456789abcdef";
const KINDS: [ProviderKind; 2] = [ProviderKind::OpenAi, ProviderKind::Anthropic];

fn config(kind: ProviderKind, fake: &FakeProvider, stream: bool) -> ProviderConfig {
    let base_url = match kind {
        ProviderKind::OpenAi => fake.openai_base_url(),
        ProviderKind::Anthropic => fake.anthropic_base_url(),
    };
    config_at(kind, base_url, stream)
}

fn config_at(kind: ProviderKind, base_url: String, stream: bool) -> ProviderConfig {
    ProviderConfig {
        kind,
        base_url,
        model: "test-model".into(),
        api_key: ApiKey(KEY.into()),
        stream,
        request_timeout: WAIT,
        connect_timeout: Duration::from_secs(5),
        max_retries: 2,
        max_tokens: 777,
    }
}

fn question() -> ChatRequest {
    ChatRequest {
        system: "You answer questions about code.".into(),
        messages: vec![Message::User("Where is the retry policy?".into())],
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Reads a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
    }
}

fn complete(config: ProviderConfig, request: &ChatRequest) -> Result<ChatResponse, ProviderError> {
    let provider = build(config);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(provider.complete(request, &ignore_stream))
}

/// Every (provider, streaming) combination.
fn modes() -> Vec<(ProviderKind, bool)> {
    KINDS
        .iter()
        .flat_map(|&kind| [(kind, true), (kind, false)])
        .collect()
}

fn error_step(status: u16, body: Value) -> Value {
    json!({"status": status, "headers": {"retry-after-ms": "0"}, "body": body})
}

fn arguments(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap()
}

#[test]
fn text_turn() {
    for (kind, stream) in modes() {
        let fake = FakeProvider::start(json!({"steps": [
            {"text": "The policy lives in src/retry.rs.", "usage": {"input_tokens": 120, "output_tokens": 9}},
        ]}));
        let response = complete(config(kind, &fake, stream), &question()).unwrap();
        let label = format!("{kind:?} stream={stream}");
        assert_eq!(
            response.turn.text, "The policy lives in src/retry.rs.",
            "{label}"
        );
        assert!(response.turn.tool_calls.is_empty(), "{label}");
        assert_eq!(response.finish, FinishReason::Stop, "{label}");
        assert_eq!(response.usage.input_tokens, 120, "{label}");
        assert_eq!(response.usage.output_tokens, 9, "{label}");
        assert_eq!(response.attempts, 1, "{label}");
        let requests = fake.requests();
        assert_eq!(requests.len(), 1, "{label}");
        let sent: usize = requests[0]
            .header("content-length")
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(response.request_bytes, sent, "{label}");
        assert_eq!(requests[0].body["stream"], stream, "{label}");
        assert_eq!(requests[0].body["model"], "test-model", "{label}");
    }
}

#[test]
fn parallel_tool_calls() {
    for (kind, stream) in modes() {
        let fake = FakeProvider::start(json!({"steps": [{
            "text": if kind == ProviderKind::Anthropic { "Looking." } else { "" },
            "tool_calls": [
                {"id": "call_a", "name": "read_file", "arguments": {"path": "src/lib.rs", "start_line": 10}},
                {"id": "call_b", "name": "search_code", "arguments": {"pattern": "retry", "regex": false}},
                {"id": "call_c", "name": "list_directory", "arguments": {}},
            ],
        }]}));
        let response = complete(config(kind, &fake, stream), &question()).unwrap();
        let label = format!("{kind:?} stream={stream}");
        assert_eq!(response.finish, FinishReason::ToolCalls, "{label}");
        let calls = &response.turn.tool_calls;
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(ids, ["call_a", "call_b", "call_c"], "{label}");
        assert_eq!(
            names,
            ["read_file", "search_code", "list_directory"],
            "{label}"
        );
        assert_eq!(
            arguments(&calls[0]),
            json!({"path": "src/lib.rs", "start_line": 10}),
            "{label}"
        );
        assert_eq!(
            arguments(&calls[1]),
            json!({"pattern": "retry", "regex": false}),
            "{label}"
        );
        assert_eq!(arguments(&calls[2]), json!({}), "{label}");
    }
}

#[test]
fn malformed_tool_arguments_arrive_verbatim_when_streamed() {
    for kind in KINDS {
        let fake = FakeProvider::start(json!({"steps": [{
            "tool_calls": [{"id": "c1", "name": "read_file", "arguments": "{\"path\": \"src/li"}],
        }]}));
        let response = complete(config(kind, &fake, true), &question()).unwrap();
        assert_eq!(
            response.turn.tool_calls[0].arguments, "{\"path\": \"src/li",
            "{kind:?}"
        );
    }
}

#[test]
fn openai_authorization_header() {
    for stream in [true, false] {
        let fake = FakeProvider::start(json!({"steps": [{"text": "a"}, {"text": "b"}]}));
        let mut keyless = config(ProviderKind::OpenAi, &fake, stream);
        keyless.api_key = ApiKey(String::new());
        complete(keyless, &question()).unwrap();
        complete(config(ProviderKind::OpenAi, &fake, stream), &question()).unwrap();
        let requests = fake.requests();
        assert_eq!(requests[0].path, "/v1/chat/completions");
        assert_eq!(requests[0].header("authorization"), None);
        assert_eq!(
            requests[1].header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert_eq!(requests[1].header("content-type"), Some("application/json"));
        assert_eq!(requests[1].header("x-api-key"), None);
        let options = requests[1].body.get("stream_options");
        if stream {
            assert_eq!(options, Some(&json!({"include_usage": true})));
        } else {
            assert_eq!(options, None);
        }
    }
}

#[test]
fn anthropic_headers_and_max_tokens() {
    let fake = FakeProvider::start(json!({"steps": [{"text": "a"}, {"text": "b"}]}));
    let mut keyless = config(ProviderKind::Anthropic, &fake, true);
    keyless.api_key = ApiKey(String::new());
    complete(keyless, &question()).unwrap();
    complete(config(ProviderKind::Anthropic, &fake, false), &question()).unwrap();
    let requests = fake.requests();
    for request in &requests {
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(request.header("authorization"), None);
        assert_eq!(request.body["max_tokens"], 777);
        assert_eq!(
            request.body["system"],
            json!([{"type": "text", "text": "You answer questions about code.", "cache_control": {"type": "ephemeral"}}])
        );
        assert_eq!(request.body["tools"][0]["input_schema"]["type"], "object");
    }
    assert_eq!(requests[0].header("x-api-key"), None);
    assert_eq!(requests[1].header("x-api-key"), Some(KEY));
}

fn conversation_after_tools() -> ChatRequest {
    let mut request = question();
    request.messages.push(Message::Assistant(AssistantTurn {
        text: String::new(),
        tool_calls: vec![
            ToolCall {
                id: "call_a".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"src/retry.rs"}"#.into(),
            },
            ToolCall {
                id: "call_b".into(),
                name: "search_code".into(),
                arguments: r#"{"pattern":"backoff"}"#.into(),
            },
        ],
    }));
    request.messages.push(Message::ToolResults(vec![
        ToolResult {
            call_id: "call_a".into(),
            name: "read_file".into(),
            content: "1\tpub fn backoff() {}".into(),
            is_error: false,
        },
        ToolResult {
            call_id: "call_b".into(),
            name: "search_code".into(),
            content: "Error: no matches".into(),
            is_error: true,
        },
    ]));
    request
}

#[test]
fn openai_request_sends_the_assistant_turn_before_the_results() {
    let fake = FakeProvider::start(json!({"steps": [{"text": "done"}]}));
    complete(
        config(ProviderKind::OpenAi, &fake, true),
        &conversation_after_tools(),
    )
    .unwrap();
    let body = &fake.requests()[0].body;
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "tool"]);
    // `""`, not null: llama-cpp-python rejects a null or missing content with a 500.
    assert_eq!(messages[2]["content"], "");
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_a");
    assert_eq!(messages[2]["tool_calls"][0]["type"], "function");
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["name"],
        "read_file"
    );
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        r#"{"path":"src/retry.rs"}"#
    );
    assert_eq!(messages[2]["tool_calls"][1]["id"], "call_b");
    assert_eq!(messages[3]["tool_call_id"], "call_a");
    assert_eq!(messages[3]["content"], "1\tpub fn backoff() {}");
    assert_eq!(messages[4]["tool_call_id"], "call_b");
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "read_file");
}

#[test]
fn anthropic_request_sends_the_assistant_turn_before_the_results() {
    let fake = FakeProvider::start(json!({"steps": [{"text": "done"}]}));
    let mut request = conversation_after_tools();
    request.messages.push(Message::User("Now answer.".into()));
    complete(config(ProviderKind::Anthropic, &fake, true), &request).unwrap();
    let messages = fake.requests()[0].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    // The results and the follow-up text merge into one user turn.
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(
        messages[1]["content"],
        json!([
            {"type": "tool_use", "id": "call_a", "name": "read_file", "input": {"path": "src/retry.rs"}},
            {"type": "tool_use", "id": "call_b", "name": "search_code", "input": {"pattern": "backoff"}},
        ])
    );
    assert_eq!(
        messages[2]["content"],
        json!([
            {"type": "tool_result", "tool_use_id": "call_a", "content": "1\tpub fn backoff() {}", "is_error": false},
            {"type": "tool_result", "tool_use_id": "call_b", "content": "Error: no matches", "is_error": true},
            {"type": "text", "text": "Now answer.", "cache_control": {"type": "ephemeral"}},
        ])
    );
    let tools = fake.requests()[0].body["tools"].as_array().unwrap().clone();
    assert_eq!(
        tools.last().unwrap()["cache_control"],
        json!({"type": "ephemeral"})
    );
}

#[test]
fn openai_sends_tool_choice_and_the_output_limit() {
    for stream in [true, false] {
        let fake = FakeProvider::start(json!({"steps": [{"text": "a"}, {"text": "b"}]}));
        complete(config(ProviderKind::OpenAi, &fake, stream), &question()).unwrap();
        let mut no_tools = question();
        no_tools.tools.clear();
        complete(config(ProviderKind::OpenAi, &fake, stream), &no_tools).unwrap();
        let requests = fake.requests();
        // Not api.openai.com: the name every other server reads.
        assert_eq!(requests[0].body["max_tokens"], 777);
        assert_eq!(requests[0].body.get("max_completion_tokens"), None);
        assert_eq!(requests[0].body["tool_choice"], "auto");
        assert_eq!(requests[1].body["max_tokens"], 777);
        assert_eq!(requests[1].body.get("tool_choice"), None);
        assert_eq!(requests[1].body.get("tools"), None);
    }
}

#[test]
fn an_empty_200_stream_is_asked_again_without_streaming_for_that_request_only() {
    let fake = FakeProvider::start(json!({"steps": [
        {"raw": ""},
        {"text": "whole reply"},
        {"text": "streamed again"},
    ]}));
    let provider = build(config(ProviderKind::OpenAi, &fake, true));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let first = runtime
        .block_on(provider.complete(&question(), &ignore_stream))
        .unwrap();
    assert_eq!(first.turn.text, "whole reply");
    assert_eq!(first.attempts, 2);
    let second = runtime
        .block_on(provider.complete(&question(), &ignore_stream))
        .unwrap();
    // The next request streams again: the fallback was for the first one alone.
    assert_eq!(second.turn.text, "streamed again");
    assert_eq!(second.attempts, 1);
    let streamed: Vec<Value> = fake
        .requests()
        .iter()
        .map(|r| r.body["stream"].clone())
        .collect();
    assert_eq!(streamed, [json!(true), json!(false), json!(true)]);

    // The same when the empty body claims to be JSON.
    let fake = FakeProvider::start(json!({"steps": [
        {"raw": "", "content_type": "application/json"},
        {"text": "whole reply"},
    ]}));
    let response = complete(config(ProviderKind::OpenAi, &fake, true), &question()).unwrap();
    assert_eq!(response.turn.text, "whole reply");
    assert_eq!(fake.requests()[1].body["stream"], false);
}

#[test]
fn an_empty_whole_reply_is_a_clear_error() {
    let fake =
        FakeProvider::start(json!({"steps": [{"raw": "", "content_type": "application/json"}]}));
    let error = complete(config(ProviderKind::OpenAi, &fake, false), &question()).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "unusable reply from the provider: {} answered 200 with an empty body",
            fake.openai_base_url()
        )
    );
    assert_eq!(fake.requests().len(), 1);
}

#[test]
fn a_500_that_reports_a_validation_failure_is_not_retried() {
    let body = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/providers/local-servers/llama-cpp-python/F-followup-toolmsgs-nochoice-nostream.json"
    ))
    .unwrap();
    let fake = FakeProvider::start(json!({"steps": [
        {"status": 500, "headers": {"retry-after-ms": "0"}, "body": body},
        {"text": "never reached"},
    ]}));
    let error = complete(config(ProviderKind::OpenAi, &fake, false), &question()).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("provider returned 500: 7 validation errors"),
        "{error}"
    );
    assert_eq!(fake.requests().len(), 1);
}

/// A call whose stream events are collected as they arrive.
fn complete_streaming(
    config: ProviderConfig,
    request: &ChatRequest,
) -> (ChatResponse, Vec<String>) {
    let provider = build(config);
    let seen = std::sync::Mutex::new(Vec::new());
    let sink = |event: StreamEvent<'_>| {
        let line = match event {
            StreamEvent::Text(text) => format!("text:{text}"),
            StreamEvent::Reasoning(text) => format!("reasoning:{text}"),
            StreamEvent::ToolCall { index, id, name } => format!("call:{index}:{id}:{name}"),
            StreamEvent::ToolArguments { index, fragment } => format!("args:{index}:{fragment}"),
        };
        seen.lock().unwrap().push(line);
    };
    let response = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(provider.complete(request, &sink))
        .unwrap();
    (response, seen.into_inner().unwrap())
}

#[test]
fn streamed_pieces_reach_the_sink_and_add_up_to_the_turn() {
    for (kind, stream) in modes() {
        let fake = FakeProvider::start(json!({"steps": [{
            "text": "Looking at both files.",
            "tool_calls": [
                {"id": "call_a", "name": "read_file", "arguments": {"path": "src/lib.rs"}},
                {"id": "call_b", "name": "answer", "arguments": {"answer": "It is in \"lib\" ✓."}},
            ],
        }]}));
        let (response, seen) = complete_streaming(config(kind, &fake, stream), &question());
        let label = format!("{kind:?} stream={stream}");
        if !stream {
            assert!(seen.is_empty(), "{label}: {seen:?}");
            continue;
        }
        let text: String = seen
            .iter()
            .filter_map(|line| line.strip_prefix("text:"))
            .collect();
        assert_eq!(text, response.turn.text, "{label}");
        assert!(seen.len() > 4, "{label}: text in pieces: {seen:?}");
        for (position, call) in response.turn.tool_calls.iter().enumerate() {
            let announced: Vec<&String> = seen
                .iter()
                .filter(|line| {
                    line.starts_with("call:")
                        && line.ends_with(&format!(":{}:{}", call.id, call.name))
                })
                .collect();
            assert_eq!(announced.len(), 1, "{label} {position}: {seen:?}");
            let index = announced[0].split(':').nth(1).unwrap();
            let arguments: String = seen
                .iter()
                .filter_map(|line| line.strip_prefix(&format!("args:{index}:")))
                .collect();
            assert_eq!(arguments, call.arguments, "{label}");
        }
        // Text first, then each call is announced before its arguments.
        assert!(seen[0].starts_with("text:"), "{label}");
    }
}

#[test]
fn retries_server_errors_and_rate_limits_then_succeeds() {
    for (kind, stream) in modes() {
        let fake = FakeProvider::start(json!({"steps": [
            error_step(500, json!({"error": {"message": "boom"}})),
            error_step(429, json!({"error": {"message": "rate limited", "type": "rate_limit_exceeded"}})),
            {"text": "finally"},
        ]}));
        let response = complete(config(kind, &fake, stream), &question()).unwrap();
        assert_eq!(response.turn.text, "finally", "{kind:?} {stream}");
        assert_eq!(response.attempts, 3, "{kind:?} {stream}");
        assert_eq!(fake.requests().len(), 3, "{kind:?} {stream}");
    }
    for status in [408, 409, 502, 503, 504, 529] {
        let fake = FakeProvider::start(
            json!({"steps": [error_step(status, json!("busy")), {"text": "ok"}]}),
        );
        let response = complete(config(ProviderKind::Anthropic, &fake, true), &question()).unwrap();
        assert_eq!(response.attempts, 2, "{status}");
    }
}

#[test]
fn gives_up_after_max_retries() {
    let fake = FakeProvider::start(json!({"steps": [
        error_step(503, json!("down")),
        error_step(503, json!("down")),
        error_step(503, json!("still down")),
        {"text": "too late"},
    ]}));
    let error = complete(config(ProviderKind::OpenAi, &fake, true), &question()).unwrap_err();
    assert_eq!(error.to_string(), "provider returned 503: still down");
    assert_eq!(fake.requests().len(), 3);
}

#[test]
fn does_not_retry_client_errors_or_an_exhausted_quota() {
    let quota = json!({"error": {"message": "You exceeded your current quota.", "type": "insufficient_quota", "code": "insufficient_quota"}});
    let cases = [
        (
            400,
            json!({"error": {"message": "bad request"}}),
            "bad request",
        ),
        (
            401,
            json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
            "invalid x-api-key",
        ),
        (403, json!({"error": {"message": "forbidden"}}), "forbidden"),
        (
            404,
            json!({"error": {"message": "model not found"}}),
            "model not found",
        ),
        (422, json!("unprocessable"), "unprocessable"),
        (429, quota, "You exceeded your current quota."),
    ];
    for (status, body, message) in cases {
        for kind in KINDS {
            let fake = FakeProvider::start(
                json!({"steps": [error_step(status, body.clone()), {"text": "no"}]}),
            );
            let error = complete(config(kind, &fake, true), &question()).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!("provider returned {status}: {message}")
            );
            assert!(matches!(error, ProviderError::Status { status: s, .. } if s == status));
            assert_eq!(fake.requests().len(), 1, "{status} {kind:?}");
        }
    }
}

#[test]
fn honours_retry_after_ms() {
    let fake = FakeProvider::start(json!({"steps": [
        {"status": 429, "headers": {"retry-after-ms": "400"}, "body": "slow down"},
        {"text": "ok"},
    ]}));
    let started = Instant::now();
    let response = complete(config(ProviderKind::OpenAi, &fake, false), &question()).unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(response.attempts, 2);
}

#[test]
fn connect_error_names_the_url() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let mut config = config_at(ProviderKind::OpenAi, base_url.clone(), true);
    config.max_retries = 0;
    let error = complete(config, &question()).unwrap_err();
    assert!(matches!(error, ProviderError::Connect { .. }), "{error:?}");
    let text = error.to_string();
    assert!(
        text.starts_with(&format!("cannot connect to {base_url}: ")),
        "{text}"
    );
    assert!(
        text.len() > format!("cannot connect to {base_url}: ").len(),
        "{text}"
    );
}

#[test]
fn request_timeout() {
    for kind in KINDS {
        let fake = FakeProvider::start(json!({"steps": [{"hang": true}]}));
        let mut config = config(kind, &fake, true);
        config.request_timeout = Duration::from_millis(300);
        config.max_retries = 0;
        let started = Instant::now();
        let error = complete(config, &question()).unwrap_err();
        assert!(matches!(error, ProviderError::Timeout { .. }), "{error:?}");
        assert!(
            error
                .to_string()
                .starts_with("provider did not answer within 1 s"),
            "{error}"
        );
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(fake.requests().len(), 1);
    }
}

#[test]
fn timeout_before_headers_is_retried() {
    let fake = FakeProvider::start(
        json!({"steps": [{"text": "slow", "delay_ms": 5000}, {"text": "fast"}]}),
    );
    let mut config = config(ProviderKind::Anthropic, &fake, false);
    config.request_timeout = Duration::from_millis(200);
    let response = complete(config, &question()).unwrap();
    assert_eq!(response.turn.text, "fast");
    assert_eq!(response.attempts, 2);
}

#[test]
fn stream_cut_before_output_is_retried() {
    for kind in KINDS {
        let fake = FakeProvider::start(json!({"steps": [
            {"text": "first try", "cut_after_bytes": 40},
            {"text": "second try"},
        ]}));
        let response = complete(config(kind, &fake, true), &question()).unwrap();
        assert_eq!(response.turn.text, "second try", "{kind:?}");
        assert_eq!(response.attempts, 2, "{kind:?}");
    }
}

fn long_text() -> String {
    (0..60).map(|i| format!("word{i} ")).collect()
}

#[test]
fn stream_cut_after_output_fails() {
    for kind in KINDS {
        let fake = FakeProvider::start(json!({"steps": [
            {"text": long_text(), "cut_after_bytes": 1500},
            {"text": "must not be used"},
        ]}));
        let error = complete(config(kind, &fake, true), &question()).unwrap_err();
        assert!(
            matches!(error, ProviderError::StreamCut(_)),
            "{kind:?}: {error:?}"
        );
        assert!(!error.to_string().contains("word1"), "{error}");
        assert_eq!(fake.requests().len(), 1, "{kind:?}");
    }
}

#[test]
fn stream_without_end_marker_is_a_cut() {
    let openai_body = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"half\"},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    );
    let anthropic_body = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"half\"}}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n",
    );
    for (kind, body) in [
        (ProviderKind::OpenAi, openai_body),
        (ProviderKind::Anthropic, anthropic_body),
    ] {
        let fake = FakeProvider::start(json!({"steps": [{"raw": body}, {"text": "unused"}]}));
        let error = complete(config(kind, &fake, true), &question()).unwrap_err();
        assert!(
            matches!(error, ProviderError::StreamCut(_)),
            "{kind:?}: {error:?}"
        );
        assert_eq!(fake.requests().len(), 1, "{kind:?}");
    }
}

#[test]
fn anthropic_error_event_before_output_is_retried() {
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n\
                event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let fake = FakeProvider::start(json!({"steps": [{"raw": body}, {"text": "recovered"}]}));
    let response = complete(config(ProviderKind::Anthropic, &fake, true), &question()).unwrap();
    assert_eq!(response.turn.text, "recovered");
    assert_eq!(response.attempts, 2);
}

#[test]
fn truncated_turn_is_length() {
    for (kind, stream) in modes() {
        let fake = FakeProvider::start(json!({"steps": [{
            "text": "I will read",
            "tool_calls": [{"id": "c1", "name": "read_file", "arguments": "{\"path\": \"src/"}],
            "finish": "length",
        }]}));
        let response = complete(config(kind, &fake, stream), &question()).unwrap();
        assert_eq!(response.finish, FinishReason::Length, "{kind:?} {stream}");
        assert_eq!(response.turn.text, "I will read", "{kind:?} {stream}");
    }
}

#[test]
fn the_key_never_appears_in_errors() {
    let echo = format!(
        "Incorrect API key provided: {KEY}. You can find your API key at https://example.invalid."
    );
    let long_echo = format!("{}{KEY}", "x".repeat(290));
    let steps = [
        error_step(401, json!({"error": {"message": echo}})),
        error_step(401, json!({"error": {"message": long_echo}})),
        error_step(400, json!(format!("raw body with {KEY} in it"))),
    ];
    for step in steps {
        for kind in KINDS {
            let fake = FakeProvider::start(json!({"steps": [step.clone()]}));
            let error = complete(config(kind, &fake, true), &question()).unwrap_err();
            for text in [error.to_string(), format!("{error:?}")] {
                assert!(!text.contains(KEY), "{text}");
                assert!(!text.contains("Zq9PELICAN"), "{text}");
            }
            assert!(
                error.to_string().starts_with("provider returned 40"),
                "{error}"
            );
        }
    }
    // After retries too, and with the key in the URL.
    let fake = FakeProvider::start(json!({"steps": [
        error_step(500, json!(KEY)), error_step(500, json!(KEY)), error_step(500, json!(KEY)),
    ]}));
    let error = complete(config(ProviderKind::OpenAi, &fake, false), &question()).unwrap_err();
    assert!(!error.to_string().contains(KEY), "{error}");
    let mut config = config_at(
        ProviderKind::OpenAi,
        format!("http://127.0.0.1:9/{KEY}"),
        true,
    );
    config.max_retries = 0;
    let error = complete(config, &question()).unwrap_err();
    assert!(!error.to_string().contains(KEY), "{error}");
}

/// Starts a call on a runtime that stays alive (so nothing but the dropped future can
/// close the connection), waits for the request to arrive, then aborts the call.
fn drop_mid_call(kind: ProviderKind, step: Value) -> (FakeProvider, tokio::runtime::Runtime) {
    let fake = FakeProvider::start(json!({"steps": [step]}));
    let mut config = config(kind, &fake, true);
    // Far past the wait below, so that only the abort can close the connection in time.
    config.request_timeout = Duration::from_secs(600);
    let provider: Arc<dyn ChatModel> = build(config);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let task = runtime.spawn(async move {
        let request = question();
        provider.complete(&request, &ignore_stream).await
    });
    assert_eq!(fake.wait_for_requests(1, WAIT).len(), 1);
    assert!(!fake.requests()[0].disconnected);
    // Aborting drops the `complete` future, as cancelling an ask does.
    task.abort();
    (fake, runtime)
}

#[test]
fn dropping_the_future_closes_the_connection() {
    for kind in KINDS {
        let (fake, _runtime) = drop_mid_call(kind, json!({"hang": true}));
        assert!(
            fake.wait_for_disconnect(0, WAIT),
            "{kind:?} waiting for headers"
        );
        let (fake, _runtime) =
            drop_mid_call(kind, json!({"text": long_text(), "hang_after_bytes": 700}));
        assert!(fake.wait_for_disconnect(0, WAIT), "{kind:?} mid-stream");
    }
}

#[test]
fn describe_names_provider_model_and_url() {
    let fake = FakeProvider::start(json!({"steps": []}));
    let openai = build(config(ProviderKind::OpenAi, &fake, true));
    assert_eq!(
        openai.describe(),
        format!("openai test-model at {}", fake.openai_base_url())
    );
    let anthropic = build(config(ProviderKind::Anthropic, &fake, true));
    assert!(anthropic
        .describe()
        .starts_with("anthropic test-model at http://127.0.0.1:"));
}

#[test]
fn exhausted_script_reports_the_fake_message() {
    let fake = FakeProvider::start(json!({"steps": []}));
    let mut config = config(ProviderKind::OpenAi, &fake, true);
    config.max_retries = 0;
    let error = complete(config, &question()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "provider returned 500: fake provider: script exhausted"
    );
    assert_eq!(fake.requests().len(), 1);
}

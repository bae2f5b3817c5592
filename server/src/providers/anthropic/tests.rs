//! The Anthropic format's unit tests: recorded streams, cache counts, whole replies and
//! the request's shape.

use super::super::sse::decode_all;
use super::super::{StreamEvent, ToolResult, ToolSpec};
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

//! The OpenAI format's unit tests: recorded streams, whole replies and the request's
//! shape.

use super::super::sse::decode_all;
use super::super::{AssistantTurn, StreamEvent, ToolResult, ToolSpec};
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
    let body = request_body("m", "max_tokens", 300, &request, true);
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
    let plain = request_body("m", "max_tokens", 300, &request, false);
    assert_eq!(plain["stream"], false);
    assert!(plain.get("stream_options").is_none());
    let without_tools = ChatRequest {
        tools: Vec::new(),
        ..request
    };
    let body = request_body("m", "max_tokens", 300, &without_tools, false);
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
    let one = request_body("m", "max_tokens", 10, &first, true);
    let two = request_body("m", "max_tokens", 10, &second, true);
    let text = |v: &Value| v.to_string();
    assert_eq!(text(&one["tools"]), text(&two["tools"]));
    let earlier = one["messages"].as_array().unwrap();
    let later = two["messages"].as_array().unwrap();
    for (a, b) in earlier.iter().zip(later) {
        assert_eq!(text(a), text(b));
    }
    assert_eq!(
        one.to_string(),
        request_body("m", "max_tokens", 10, &first, true).to_string()
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
    let decoded =
        super::super::sse::decode_all_into(body.as_bytes(), Box::<OpenAiStream>::default(), &sink)
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

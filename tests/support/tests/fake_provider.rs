//! Tests of the fake provider itself, spoken to with a bare-bones HTTP client so that what
//! is checked is the bytes on the wire, not a client library's reading of them.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use copilot_ls_test_support::fake_provider::FakeProvider;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(10);

struct Response {
    status: u16,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
    /// Whether the body arrived whole (final chunk, or all of `content-length`).
    complete: bool,
}

impl Response {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }

    /// The `data:` payloads of the SSE body, parsed (`[DONE]` as a string), with event names.
    fn events(&self) -> Vec<(String, Value)> {
        let text = String::from_utf8(self.body.clone()).unwrap();
        text.split("\n\n")
            .filter(|block| !block.trim().is_empty())
            .map(|block| {
                let mut name = String::new();
                let mut data = Value::Null;
                for line in block.lines() {
                    if let Some(n) = line.strip_prefix("event: ") {
                        name = n.to_string();
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data = serde_json::from_str(d).unwrap_or_else(|_| json!(d));
                    }
                }
                (name, data)
            })
            .collect()
    }
}

fn send(port: u16, path: &str, body: &Value) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let body = body.to_string();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: fake\r\nContent-Type: application/json\r\nX-Api-Key: k1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream
}

fn post(port: u16, path: &str, body: &Value) -> Response {
    let mut stream = send(port, path, body);
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    parse(&raw)
}

fn parse(raw: &[u8]) -> Response {
    let head_end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&raw[..head_end]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: BTreeMap<String, String> = lines
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.trim().to_ascii_lowercase(), v.trim().to_string())
        })
        .collect();
    let rest = &raw[head_end + 4..];
    if headers.get("transfer-encoding").map(String::as_str) == Some("chunked") {
        let mut body = Vec::new();
        let mut at = 0;
        loop {
            let Some(line_end) = rest[at..].windows(2).position(|w| w == b"\r\n") else {
                return Response {
                    status,
                    headers,
                    body,
                    complete: false,
                };
            };
            let size =
                usize::from_str_radix(std::str::from_utf8(&rest[at..at + line_end]).unwrap(), 16)
                    .unwrap();
            at += line_end + 2;
            if size == 0 {
                return Response {
                    status,
                    headers,
                    body,
                    complete: true,
                };
            }
            let available = rest.len().saturating_sub(at).min(size);
            body.extend_from_slice(&rest[at..at + available]);
            if available < size || rest.len() < at + size + 2 {
                return Response {
                    status,
                    headers,
                    body,
                    complete: false,
                };
            }
            at += size + 2;
        }
    }
    let length: usize = headers["content-length"].parse().unwrap();
    Response {
        status,
        complete: rest.len() == length,
        body: rest.to_vec(),
        headers,
    }
}

fn turn_with_two_calls() -> Value {
    json!({"steps": [{
        "tool_calls": [
            {"id": "call_1", "name": "read_file", "arguments": {"path": "src/lib.rs", "start_line": 1}},
            {"id": "call_2", "name": "search_code", "arguments": {"pattern": "retry_after"}},
        ],
        "usage": {"input_tokens": 42, "output_tokens": 7},
    }]})
}

#[test]
fn openai_stream_has_the_recorded_quirks() {
    let fake = FakeProvider::start(turn_with_two_calls());
    let response = post(
        fake.port(),
        "/v1/chat/completions",
        &json!({"model": "m", "stream": true}),
    );
    assert_eq!(response.status, 200);
    assert!(response.complete);
    assert_eq!(response.headers["content-type"], "text/event-stream");
    let events = response.events();
    let chunks: Vec<&Value> = events.iter().map(|(_, data)| data).collect();

    // Role and first tool delta in the first chunk.
    let first = &chunks[0]["choices"][0]["delta"];
    assert_eq!(first["role"], "assistant");
    assert_eq!(first["tool_calls"][0]["id"], "call_1");

    // Arguments reassembled by index; calls interleaved (index 1 appears before index 0 is done).
    let mut arguments: BTreeMap<u64, String> = BTreeMap::new();
    let mut order = Vec::new();
    for chunk in &chunks {
        for call in chunk["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let index = call["index"].as_u64().unwrap();
            order.push(index);
            let piece = call["function"]["arguments"].as_str().unwrap_or_default();
            arguments.entry(index).or_default().push_str(piece);
        }
    }
    let last_zero = order.iter().rposition(|&i| i == 0).unwrap();
    let first_one = order.iter().position(|&i| i == 1).unwrap();
    assert!(first_one < last_zero, "calls are interleaved: {order:?}");
    assert!(
        order.iter().filter(|&&i| i == 0).count() > 3,
        "arguments are split"
    );
    assert_eq!(
        serde_json::from_str::<Value>(&arguments[&0]).unwrap(),
        json!({"path": "src/lib.rs", "start_line": 1})
    );
    assert_eq!(
        serde_json::from_str::<Value>(&arguments[&1]).unwrap(),
        json!({"pattern": "retry_after"})
    );

    // finish_reason, then a usage chunk with no choices, then [DONE].
    let n = chunks.len();
    assert_eq!(chunks[n - 3]["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(chunks[n - 2]["choices"], json!([]));
    assert_eq!(chunks[n - 2]["usage"]["prompt_tokens"], 42);
    assert_eq!(chunks[n - 2]["usage"]["completion_tokens"], 7);
    assert_eq!(*chunks[n - 1], json!("[DONE]"));
}

#[test]
fn anthropic_stream_has_the_recorded_quirks() {
    let mut script = turn_with_two_calls();
    script["steps"][0]["text"] = json!("Let me look.");
    let fake = FakeProvider::start(script);
    let response = post(
        fake.port(),
        "/v1/messages",
        &json!({"model": "m", "stream": true}),
    );
    assert_eq!(response.status, 200);
    assert!(response.complete);
    let events = response.events();
    for (name, data) in &events {
        assert_eq!(
            name,
            data["type"].as_str().unwrap(),
            "event name matches its type"
        );
    }
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names[0], "message_start");
    assert_eq!(names[names.len() - 1], "message_stop");
    assert_eq!(names[names.len() - 2], "message_delta");
    // A ping in the middle of the tool input, not only at the start.
    let first_json = events
        .iter()
        .position(|(_, data)| data["delta"]["type"] == "input_json_delta")
        .unwrap();
    assert!(names[first_json..].contains(&"ping"));

    let mut text = String::new();
    let mut inputs: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for (_, data) in &events {
        if data["type"] == "content_block_delta" {
            let index = data["index"].as_u64().unwrap();
            match data["delta"]["type"].as_str().unwrap() {
                "text_delta" => text.push_str(data["delta"]["text"].as_str().unwrap()),
                "input_json_delta" => inputs
                    .entry(index)
                    .or_default()
                    .push(data["delta"]["partial_json"].as_str().unwrap().to_string()),
                other => panic!("unexpected delta {other}"),
            }
        }
    }
    assert_eq!(text, "Let me look.");
    assert_eq!(inputs.len(), 2);
    for fragments in inputs.values() {
        assert_eq!(fragments[0], "", "the first partial_json is empty");
        assert!(fragments.len() > 3, "input is split");
    }
    assert_eq!(
        serde_json::from_str::<Value>(&inputs[&1].concat()).unwrap(),
        json!({"path": "src/lib.rs", "start_line": 1})
    );
    let delta = &events[events.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(delta["usage"]["output_tokens"], 7);
}

#[test]
fn whole_replies_in_both_formats() {
    let fake = FakeProvider::start(json!({"steps": [
        {"text": "Hello", "finish": "length"},
        {"tool_calls": [{"id": "t1", "name": "read_file", "arguments": "{\"path\": "}]},
    ]}));
    let openai = post(
        fake.port(),
        "/v1/chat/completions",
        &json!({"model": "gpt-x"}),
    )
    .json();
    assert_eq!(openai["model"], "gpt-x");
    assert_eq!(openai["choices"][0]["message"]["content"], "Hello");
    assert_eq!(openai["choices"][0]["finish_reason"], "length");
    let anthropic = post(
        fake.port(),
        "/v1/messages",
        &json!({"model": "claude-x", "stream": false}),
    )
    .json();
    assert_eq!(anthropic["stop_reason"], "tool_use");
    assert_eq!(anthropic["content"][0]["type"], "tool_use");
    // Malformed scripted arguments come back verbatim.
    assert_eq!(anthropic["content"][0]["input"], "{\"path\": ");
}

#[test]
fn errors_exhaustion_unknown_paths_and_recording() {
    let fake = FakeProvider::start(json!({"steps": [
        {"status": 429, "headers": {"retry-after-ms": "10"}, "body": "{\"error\":{\"message\":\"slow down\"}}"},
    ]}));
    let not_found = post(fake.port(), "/v1/models", &json!({}));
    assert_eq!(not_found.status, 404);
    let limited = post(
        fake.port(),
        "/api/v1/chat/completions",
        &json!({"stream": true}),
    );
    assert_eq!(limited.status, 429);
    assert_eq!(limited.headers["retry-after-ms"], "10");
    assert_eq!(limited.json()["error"]["message"], "slow down");
    let exhausted = post(fake.port(), "/v1/messages", &json!({}));
    assert_eq!(exhausted.status, 500);
    assert_eq!(
        exhausted.json()["error"]["message"],
        "fake provider: script exhausted"
    );

    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].path, "/v1/models");
    assert_eq!(requests[1].path, "/api/v1/chat/completions");
    assert_eq!(requests[1].header("X-API-KEY"), Some("k1"));
    assert_eq!(requests[1].body, json!({"stream": true}));
    assert!(requests
        .iter()
        .all(|r| !r.disconnected && r.method == "POST"));
    assert_eq!(fake.steps_used(), 2, "the 404 took no step");
}

#[test]
fn hang_notices_the_client_leaving() {
    let fake = FakeProvider::start(json!({"steps": [{"hang": true}]}));
    let stream = send(fake.port(), "/v1/chat/completions", &json!({}));
    assert_eq!(fake.wait_for_requests(1, WAIT).len(), 1);
    assert!(!fake.wait_for_disconnect(0, Duration::from_millis(50)));
    drop(stream);
    assert!(fake.wait_for_disconnect(0, WAIT));
}

#[test]
fn cut_and_hang_after_bytes() {
    let fake = FakeProvider::start(json!({"steps": [
        {"text": "a long enough answer to cut", "cut_after_bytes": 100},
        {"text": "a long enough answer to stall", "hang_after_bytes": 60},
    ]}));
    let cut = post(
        fake.port(),
        "/v1/chat/completions",
        &json!({"stream": true}),
    );
    assert_eq!(cut.status, 200);
    assert!(!cut.complete);
    assert_eq!(cut.body.len(), 100);
    assert!(
        !fake.requests()[0].disconnected,
        "the server, not the client, closed"
    );

    let mut stalled = send(fake.port(), "/v1/messages", &json!({"stream": true}));
    // Read until the 60 body bytes are in; the connection then stays open and silent.
    let mut raw = Vec::new();
    let mut buffer = [0u8; 4096];
    while parse_partial_body_len(&raw) < 60 {
        let n = stalled.read(&mut buffer).unwrap();
        assert!(n > 0, "connection closed instead of stalling");
        raw.extend_from_slice(&buffer[..n]);
    }
    assert_eq!(parse(&raw).body.len(), 60);
    drop(stalled);
    assert!(fake.wait_for_disconnect(1, WAIT));
}

fn parse_partial_body_len(raw: &[u8]) -> usize {
    if raw.windows(4).any(|w| w == b"\r\n\r\n") {
        parse(raw).body.len()
    } else {
        0
    }
}

#[test]
fn delay_before_headers() {
    let fake = FakeProvider::start(json!({"steps": [{"text": "late", "delay_ms": 150}]}));
    let started = Instant::now();
    let response = post(fake.port(), "/v1/chat/completions", &json!({}));
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(response.json()["choices"][0]["message"]["content"], "late");
}

#[test]
fn raw_bodies_go_out_verbatim() {
    let body = "data: {\"choices\":[]}\n\n";
    let fake = FakeProvider::start(json!({"steps": [{"raw": body}]}));
    let response = post(
        fake.port(),
        "/v1/chat/completions",
        &json!({"stream": true}),
    );
    assert_eq!(response.headers["content-type"], "text/event-stream");
    assert_eq!(response.body, body.as_bytes());
}

#[test]
fn malformed_scripts_are_rejected() {
    let cases = [
        json!({}),
        json!({"steps": [{"txt": "typo"}]}),
        json!({"steps": [{"text": "x", "finish": "done"}]}),
        json!({"steps": [{"status": 500, "header": {}}]}),
        json!({"steps": [{"hang": false}]}),
        json!({"steps": ["text"]}),
    ];
    for script in cases {
        assert!(FakeProvider::try_start(&script, None).is_err(), "{script}");
    }
}

#[test]
fn binary_prints_its_port_and_records() {
    let dir = std::env::temp_dir().join(format!("fake-provider-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("script.json");
    let record = dir.join("requests.jsonl");
    let _ = std::fs::remove_file(&record);
    std::fs::write(&script, json!({"steps": [{"text": "hi"}]}).to_string()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-provider"))
        .arg(&script)
        .arg("--record")
        .arg(&record)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line.trim().parse().expect("the port alone on a line");
    let response = post(
        port,
        "/v1/chat/completions",
        &json!({"model": "m", "messages": []}),
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(response.json()["choices"][0]["message"]["content"], "hi");
    let recorded = std::fs::read_to_string(&record).unwrap();
    let lines: Vec<Value> = recorded
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["path"], "/v1/chat/completions");
    assert_eq!(lines[0]["headers"]["x-api-key"], "k1");
    assert_eq!(lines[0]["body"], json!({"model": "m", "messages": []}));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_slow_stream_waits_between_events_and_timestamps_its_first_output() {
    let fake = FakeProvider::start(json!({"steps": [
        {"text": "one two three", "chunk_delay_ms": 40},
    ]}));
    let started = Instant::now();
    let response = post(
        fake.port(),
        "/v1/chat/completions",
        &json!({"stream": true}),
    );
    let events = response.events().len();
    // A wait before every event after the first.
    assert!(
        started.elapsed() >= Duration::from_millis(40 * (events as u64 - 1)),
        "{events} events in {:?}",
        started.elapsed()
    );
    let first = fake.first_output_at(0, WAIT).expect("timestamped");
    // The role chunk goes out at once; the first text 40 ms later.
    assert!(first.duration_since(started) >= Duration::from_millis(40));
}

#[test]
fn the_second_call_with_the_same_prefix_reports_cached_tokens() {
    let tools =
        json!([{"name": "read_file", "description": "reads", "input_schema": {"type": "object"}}]);
    let breakpoint = json!({"type": "ephemeral"});
    let mut marked_tools = tools.clone();
    marked_tools[0]["cache_control"] = breakpoint.clone();
    let anthropic = |messages: Value, marked: bool| {
        let mut body = json!({"stream": false, "messages": messages});
        if marked {
            body["system"] =
                json!([{"type": "text", "text": "be brief", "cache_control": breakpoint}]);
            body["tools"] = marked_tools.clone();
        } else {
            body["system"] = json!("be brief");
            body["tools"] = tools.clone();
        }
        body
    };
    let user = |text: &str| json!({"role": "user", "content": [{"type": "text", "text": text}]});
    let fake = FakeProvider::start(
        json!({"steps": [{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}]}),
    );
    let usage = |body: &Value| post(fake.port(), "/v1/messages", body).json()["usage"].clone();
    let first = usage(&anthropic(json!([user("q")]), true));
    assert_eq!(first["cache_read_input_tokens"], 0);
    let second = usage(&anthropic(
        json!([user("q"), {"role": "assistant", "content": "x"}, user("more")]),
        true,
    ));
    assert!(
        second["cache_read_input_tokens"].as_u64().unwrap() > 0,
        "{second}"
    );
    // Without breakpoints the API caches nothing.
    usage(&anthropic(json!([user("q")]), false));
    let unmarked = usage(&anthropic(json!([user("q")]), false));
    assert_eq!(unmarked["cache_read_input_tokens"], 0);

    let fake = FakeProvider::start(json!({"steps": [{"text": "a"}, {"text": "b"}, {"text": "c"}]}));
    let openai = |system: &str| json!({"messages": [{"role": "system", "content": system}, {"role": "user", "content": "q"}], "tools": tools});
    let cached = |body: &Value| {
        post(fake.port(), "/v1/chat/completions", body).json()["usage"]["prompt_tokens_details"]
            ["cached_tokens"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(cached(&openai("be brief")), 0);
    assert!(cached(&openai("be brief")) > 0);
    // A changed system prompt changes the prefix.
    assert_eq!(cached(&openai("be briefer")), 0);
}

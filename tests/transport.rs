//! End-to-end: the transport of PROTOCOL.md section 6 through the real binary over raw
//! stdio: tolerant headers, one error reply per unusable frame and serving on, `$/`
//! requests, empty frames, a flood of malformed frames, stdin closing during an ask,
//! and the exit codes.

use std::path::Path;
use std::time::{Duration, Instant};

use copilot_ls_test_support::fake_provider::FakeProvider;
use copilot_ls_test_support::lsp_client::LspClient;
use copilot_ls_test_support::workspace::temp_workspace;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");

fn start() -> (LspClient, tempfile::TempDir) {
    let ws = temp_workspace();
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[]);
    client.initialize(ws.path(), json!({}), Value::Null);
    (client, ws)
}

fn frame(header: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!("{header}: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn request_body(id: i64, method: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}))
        .unwrap()
}

/// The next error reply with `id: null` (and no other message is skipped silently:
/// whatever came before it is kept for later waits).
fn null_id_error(client: &mut LspClient) -> Value {
    let reply = client.wait_for(|m| m.get("id") == Some(&Value::Null) && m.get("error").is_some());
    reply["error"].clone()
}

#[test]
fn header_names_in_any_case_and_content_type_variants_are_served() {
    let (mut client, _ws) = start();
    let headers = [
        "content-length: {n}",
        "CONTENT-LENGTH: {n}",
        "Content-Length:{n}",
        "Content-Type: application/vscode-jsonrpc\r\nContent-Length: {n}",
        "Content-Length: {n}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8",
        "Content-Length: {n}\r\nContent-Type: application/vscode-jsonrpc; charset=UTF-8",
        "content-type: application/vscode-jsonrpc; charset=utf8\r\ncontent-length: {n}",
    ];
    for (index, header) in headers.iter().enumerate() {
        let id = 100 + index as i64;
        let body = request_body(id, "x/unknown");
        let head = header.replace("{n}", &body.len().to_string());
        let mut bytes = format!("{head}\r\n\r\n").into_bytes();
        bytes.extend_from_slice(&body);
        client.send_raw(&bytes);
        let error = client.response(id).unwrap_err();
        assert_eq!(error["code"], -32601, "{header}: {error}");
    }
    let (status, _, log) = client.shutdown();
    assert!(status.success());
    assert!(
        log.iter().all(|m| m.get("id") != Some(&Value::Null)),
        "no error replies for usable frames: {log:#?}"
    );
}

#[test]
fn each_unusable_frame_gets_one_error_reply_with_a_null_id_and_serving_goes_on() {
    let (mut client, _ws) = start();
    let cases: Vec<(&str, Vec<u8>, i64)> = vec![
        (
            "batch",
            frame(
                "Content-Length",
                br#"[{"jsonrpc":"2.0","id":1,"method":"shutdown"}]"#,
            ),
            -32600,
        ),
        (
            "id true",
            frame(
                "Content-Length",
                br#"{"jsonrpc":"2.0","id":true,"method":"x/y"}"#,
            ),
            -32600,
        ),
        (
            "id 1.5",
            frame(
                "Content-Length",
                br#"{"jsonrpc":"2.0","id":1.5,"method":"x/y"}"#,
            ),
            -32600,
        ),
        (
            "id object",
            frame(
                "Content-Length",
                br#"{"jsonrpc":"2.0","id":{"a":1},"method":"x/y"}"#,
            ),
            -32600,
        ),
        ("not an object", frame("Content-Length", b"42"), -32600),
        (
            "invalid JSON",
            frame("Content-Length", br#"{"jsonrpc":"2.0","#),
            -32700,
        ),
        (
            "invalid UTF-8",
            frame(
                "Content-Length",
                b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"\xff\xfe\"}",
            ),
            -32700,
        ),
        (
            "bad Content-Length",
            b"Content-Length: twelve\r\n\r\n{}".to_vec(),
            -32700,
        ),
        (
            "missing Content-Length",
            b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}".to_vec(),
            -32700,
        ),
    ];
    for (name, bytes, code) in &cases {
        client.send_raw(bytes);
        let error = null_id_error(&mut client);
        assert_eq!(error["code"], *code, "{name}: {error}");
        // Still serving, and the reply belongs to this frame: the next request is answered.
        let id = client.send_request(
            "workspace/executeCommand",
            json!({"command": "copilot.clear"}),
        );
        client.response(id).unwrap();
    }
    let (status, _, log) = client.shutdown();
    assert!(status.success());
    let null_replies = log
        .iter()
        .filter(|m| m.get("id") == Some(&Value::Null))
        .count();
    assert_eq!(null_replies, cases.len(), "one reply per frame: {log:#?}");
}

/// An error reply (not a request of the server's, nor `shutdown`'s result) on `id`.
fn is_error_reply_on(message: &Value, id: &Value) -> bool {
    message.get("id") == Some(id)
        && message.get("method").is_none()
        && message.get("error").is_some()
}

/// Issue #20 item 5: a request that is not usable but whose id can be read is answered
/// on that id (JSON-RPC 2.0 keeps `null` for an id that cannot be detected).
#[test]
fn an_unusable_request_whose_id_is_readable_is_answered_on_that_id() {
    let (mut client, _ws) = start();
    let cases: [(&[u8], Value); 5] = [
        (br#"{"id":2,"method":""}"#, json!(2)),
        (br#"{"jsonrpc":"2.0","id":3,"method":""}"#, json!(3)),
        (
            br#"{"jsonrpc":"1.0","id":"s-4","method":"x/y"}"#,
            json!("s-4"),
        ),
        (br#"{"jsonrpc":"2.0","id":5,"method":7}"#, json!(5)),
        (br#"{"id":6,"method":"x/y","params":{}}"#, json!(6)),
    ];
    for (body, id) in &cases {
        client.send_raw(&frame("Content-Length", body));
        let wanted = id.clone();
        let reply = client.wait_for(move |m| is_error_reply_on(m, &wanted));
        assert_eq!(
            reply["error"]["code"],
            -32600,
            "{}: {reply}",
            String::from_utf8_lossy(body)
        );
    }
    // Ids that cannot be read (or belong to no request) still get `null`.
    for body in [
        br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#.as_slice(),
        br#"{"jsonrpc":"2.0","id":7}"#.as_slice(),
    ] {
        client.send_raw(&frame("Content-Length", body));
        assert_eq!(null_id_error(&mut client)["code"], -32600);
    }
    let (status, _, log) = client.shutdown();
    assert!(status.success());
    for (_, id) in &cases {
        let replies = log.iter().filter(|m| is_error_reply_on(m, id)).count();
        assert_eq!(replies, 1, "one reply on id {id}: {log:#?}");
    }
    let null_replies = log
        .iter()
        .filter(|m| m.get("id") == Some(&Value::Null))
        .count();
    assert_eq!(null_replies, 2, "{log:#?}");
}

#[test]
fn a_request_after_an_empty_frame_is_answered_without_waiting_for_more_input() {
    let (mut client, _ws) = start();
    let mut bytes = b"Content-Length: 0\r\n\r\n".to_vec();
    bytes.extend(frame("Content-Length", &request_body(77, "x/unknown")));
    let started = Instant::now();
    client.send_raw(&bytes);
    // Nothing else is sent until the reply arrives: before, it waited for the next message.
    let error = client.response(77).unwrap_err();
    assert_eq!(error["code"], -32601);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    client.shutdown();
}

#[test]
fn dollar_requests_get_method_not_found_and_unknown_notifications_are_ignored() {
    let (mut client, _ws) = start();
    for method in ["$/unknown", "$/setTrace", "$/cancelRequest"] {
        let id = client.send_request(method, json!({"value": "off", "id": 999}));
        let error = client.response(id).unwrap_err();
        assert_eq!(error["code"], -32601, "{method}: {error}");
    }
    client.notify("$/setTrace", json!({"value": "off"}));
    client.notify("$/unknownNotification", json!({}));
    client.notify("custom/unknownNotification", json!({}));
    let last = client.send_request("x/unknown", json!({}));
    assert_eq!(client.response(last).unwrap_err()["code"], -32601);
    let (status, _, log) = client.shutdown();
    assert!(status.success());
    let replies: Vec<&Value> = log.iter().filter(|m| m.get("method").is_none()).collect();
    // initialize, three `$/` requests, x/unknown, shutdown: nothing for the notifications.
    assert_eq!(replies.len(), 6, "{log:#?}");
}

/// A deterministic malformed input of one of the classes above, chosen by `n`.
fn malformed(n: usize) -> Vec<u8> {
    let ping = br#"{"jsonrpc":"2.0","method":"fuzz/notification","params":{}}"#;
    match n % 12 {
        0 => frame("Content-Length", br#"[{"jsonrpc":"2.0","method":"x"}]"#),
        1 => frame(
            "Content-Length",
            br#"{"jsonrpc":"2.0","id":true,"method":"x"}"#,
        ),
        2 => frame(
            "Content-Length",
            br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
        ),
        3 => frame(
            "Content-Length",
            br#"{"jsonrpc":"2.0","id":{"o":1},"method":"x"}"#,
        ),
        4 => {
            let cut = 1 + n % (ping.len() - 2);
            frame("Content-Length", &ping[..cut])
        }
        5 => frame(
            "Content-Length",
            b"{\"jsonrpc\":\"2.0\",\"method\":\"\xc3\x28\"}",
        ),
        6 => format!("Content-Length: {}x\r\n\r\n{{}}", n).into_bytes(),
        7 => b"X-Header: 1\r\n\r\n{\"a\":1}".to_vec(),
        8 => b"Content-Length: 0\r\n\r\n".to_vec(),
        9 => {
            // Shorter than its body: the rest is garbage before the next frame.
            let mut out = format!("Content-Length: {}\r\n\r\n", 3 + n % 20).into_bytes();
            out.extend_from_slice(ping);
            out
        }
        10 => frame("Content-Length", b"\"just a string\""),
        // Not after 9: garbage right after garbage is one stretch of garbage.
        _ => format!("garbage {n} {{:[\r\n\r\n").into_bytes(),
    }
}

#[test]
fn thousands_of_malformed_frames_leave_the_server_answering_every_request_once() {
    const FRAMES: usize = 2_400;
    let (mut client, _ws) = start();
    let mut ids = Vec::new();
    for n in 0..FRAMES {
        client.send_raw(&malformed(n));
        if n % 3 == 2 {
            // Valid requests interleaved: one per three malformed frames.
            ids.push(client.send_request("fuzz/ping", json!({"n": n})));
        }
    }
    for &id in &ids {
        assert_eq!(
            client.response(id).unwrap_err()["code"],
            -32601,
            "request {id}"
        );
    }
    let (status, _, log) = client.shutdown();
    assert!(status.success(), "alive until shutdown: {status:?}");
    for &id in &ids {
        let replies = log
            .iter()
            .filter(|m| m.get("id") == Some(&json!(id)))
            .count();
        assert_eq!(replies, 1, "request {id} answered exactly once");
    }
    let null_replies = log
        .iter()
        .filter(|m| m.get("id") == Some(&Value::Null))
        .count();
    assert_eq!(null_replies, FRAMES, "one error reply per malformed frame");
}

#[test]
fn stdin_closing_during_an_ask_stops_it_and_the_process_exits_within_a_second() {
    // Each model call hangs past the 1 s request timeout, which the retry policy retries:
    // an ask left running would call the model again.
    let fake =
        FakeProvider::start(json!({"steps": [{"hang": true}, {"hang": true}, {"hang": true}]}));
    let ws = temp_workspace();
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[("TEST_PROVIDER_KEY", "k")]);
    let options = json!({
        "provider": "openai", "baseUrl": fake.openai_base_url(), "model": "m",
        "apiKeyEnv": "TEST_PROVIDER_KEY", "requestTimeoutSecs": 1,
    });
    client.initialize(ws.path(), json!({}), options);
    client.send_request(
        "copilot/ask",
        json!({"question": "how are tokens refilled?"}),
    );
    let first = fake.wait_for_requests(1, Duration::from_secs(30));
    assert_eq!(first.len(), 1, "the ask reached the model");

    let closed = Instant::now();
    let status = client.close_and_wait();
    let elapsed = closed.elapsed();
    assert!(elapsed < Duration::from_secs(1), "exited after {elapsed:?}");
    assert!(status.success(), "{status:?}");
    assert!(
        fake.wait_for_disconnect(0, Duration::from_secs(5)),
        "the provider connection was dropped"
    );
    assert_eq!(fake.requests().len(), 1, "no further model call");
}

#[test]
fn exit_without_shutdown_exits_with_code_1_and_after_shutdown_with_0() {
    let (mut client, _ws) = start();
    client.notify("exit", Value::Null);
    let status = client.close_and_wait();
    assert_eq!(status.code(), Some(1), "{status:?}");

    let (client, _ws) = start();
    let (status, _, _) = client.shutdown();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn exit_is_prompt_even_while_an_ask_runs() {
    let fake = FakeProvider::start(json!({"steps": [{"hang": true}]}));
    let ws = temp_workspace();
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[("TEST_PROVIDER_KEY", "k")]);
    let options = json!({
        "provider": "openai", "baseUrl": fake.openai_base_url(), "model": "m",
        "apiKeyEnv": "TEST_PROVIDER_KEY",
    });
    client.initialize(ws.path(), json!({}), options);
    client.send_request("copilot/ask", json!({"question": "q"}));
    assert_eq!(fake.wait_for_requests(1, Duration::from_secs(30)).len(), 1);
    client.request("shutdown", Value::Null).unwrap();
    let sent = Instant::now();
    client.notify("exit", Value::Null);
    let status = client.close_and_wait();
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(fake.wait_for_disconnect(0, Duration::from_secs(5)));
}

#[test]
fn input_ending_inside_a_frame_writes_nothing_to_stdout() {
    // Before, the decoder answered the leftover bytes with -32700 as the input closed:
    // output nobody reads, on a stdout that must carry nothing unasked for.
    for input in [
        &b"Content-Length: 10\r\n\r\n{"[..],
        b"garbage",
        b"Content-Len",
    ] {
        let ws = temp_workspace();
        let mut child = std::process::Command::new(BIN)
            .current_dir(ws.path())
            .env_clear()
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(input).unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{output:?}");
        assert!(
            output.stdout.is_empty(),
            "{:?}: {:?}",
            String::from_utf8_lossy(input),
            String::from_utf8_lossy(&output.stdout)
        );
    }
}

#[test]
fn requests_written_with_exit_in_one_go_each_get_their_reply() {
    // A scripted client writes everything at once and closes its end: the requests
    // read before `exit` (or before the input closed) are still answered, once each.
    let body = |value: Value| value.to_string().into_bytes();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"capabilities": {}, "rootUri": null}});
    let initialized = json!({"jsonrpc": "2.0", "method": "initialized", "params": {}});
    let shutdown = json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"});
    let exit = json!({"jsonrpc": "2.0", "method": "exit"});
    for (with_exit, code) in [(true, 0), (false, 0)] {
        let ws = temp_workspace();
        let mut input = Vec::new();
        for message in [&init, &initialized, &shutdown] {
            input.extend(frame("Content-Length", &body(message.clone())));
        }
        if with_exit {
            input.extend(frame("Content-Length", &body(exit.clone())));
        }
        let mut child = std::process::Command::new(BIN)
            .current_dir(ws.path())
            .env_clear()
            .env("COPILOT_LS_CACHE_DIR", ws.path().join(".cache-outside"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let output = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        for id in ["\"id\":1", "\"id\":2"] {
            assert_eq!(
                text.matches(id).count(),
                1,
                "with exit: {with_exit}: one reply on {id}: {text}"
            );
        }
        assert_eq!(output.status.code(), Some(code), "{:?}", output.status);
    }
}

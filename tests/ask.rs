//! End-to-end: `copilot/ask` through the real binary over stdio against the scripted
//! fake provider (a real HTTP server speaking the OpenAI and Anthropic wire formats).

use std::path::Path;
use std::time::Duration;

use copilot_ls_test_support::fake_provider::FakeProvider;
use copilot_ls_test_support::lsp_client::{file_uri, LspClient};
use copilot_ls_test_support::workspace::{snapshot, temp_workspace};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");
/// A distinctive key: no message, log line or error may ever contain it.
const KEY: &str = "sk-test-K3Y-d0-n0t-l3ak-7f1e";
const WAIT: Duration = Duration::from_secs(30);

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "name": name, "arguments": arguments})
}

fn turn(calls: Vec<Value>) -> Value {
    json!({"tool_calls": calls})
}

fn answer_turn(id: &str, answer: &str, citations: Value) -> Value {
    turn(vec![call(
        id,
        "answer",
        json!({"answer": answer, "citations": citations}),
    )])
}

struct Setup {
    client: LspClient,
    fake: FakeProvider,
    ws: tempfile::TempDir,
}

fn setup_with(kind: &str, steps: Vec<Value>, options: Value, capabilities: Value) -> Setup {
    let fake = FakeProvider::start(json!({ "steps": steps }));
    let ws = temp_workspace();
    let base_url = if kind == "anthropic" {
        fake.anthropic_base_url()
    } else {
        fake.openai_base_url()
    };
    let mut init = json!({
        "provider": kind, "baseUrl": base_url, "model": "fake-model", "apiKeyEnv": "TEST_PROVIDER_KEY"
    });
    for (key, value) in options.as_object().cloned().unwrap_or_default() {
        init[key] = value;
    }
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[("TEST_PROVIDER_KEY", KEY)]);
    client.initialize(ws.path(), capabilities, init);
    Setup { client, fake, ws }
}

fn setup(kind: &str, steps: Vec<Value>) -> Setup {
    setup_with(kind, steps, json!({}), editor_capabilities())
}

/// What VS Code says it supports, as far as it matters here.
fn editor_capabilities() -> Value {
    json!({
        "window": {"workDoneProgress": true},
        "workspace": {"workspaceEdit": {
            "documentChanges": true,
            "resourceOperations": ["create", "rename", "delete"],
            "changeAnnotationSupport": {"groupsOnLabel": true}
        }}
    })
}

fn open(client: &mut LspClient, root: &Path, relative: &str) -> String {
    let uri = file_uri(&root.canonicalize().unwrap().join(relative));
    let text = std::fs::read_to_string(root.join(relative)).unwrap();
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": text}}),
    );
    uri
}

/// The messages of the n-th request the fake received (OpenAI format).
fn messages(fake: &FakeProvider, n: usize) -> Vec<Value> {
    let requests = fake.wait_for_requests(n + 1, WAIT);
    requests[n].body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn assert_no_key_anywhere(client_log: &[Value], stderr: &str) {
    let all = serde_json::to_string(client_log).unwrap();
    assert!(!all.contains(KEY), "the key leaked into a message");
    assert!(!stderr.contains(KEY), "the key leaked into the log");
}

#[test]
fn openai_streaming_happy_path_with_parallel_calls_edit_and_citations() {
    let old = "    fn refill(&mut self) {\n";
    let new = "    /// Adds the tokens earned since the last refill, up to capacity.\n    fn refill(&mut self) {\n";
    let mut s = setup(
        "openai",
        vec![
            turn(vec![call(
                "c1",
                "search_code",
                json!({"pattern": "fn refill"}),
            )]),
            turn(vec![
                call(
                    "c2",
                    "read_file",
                    json!({"path": "src/rate_limit.rs", "start_line": 30, "end_line": 41}),
                ),
                call(
                    "c3",
                    "propose_edit",
                    json!({"path": "src/rate_limit.rs", "old_text": old, "new_text": new, "title": "Document refill"}),
                ),
            ]),
            answer_turn(
                "c4",
                "Tokens are refilled in `refill` (src/rate_limit.rs:35-40).",
                json!([
                    {"path": "src/rate_limit.rs", "line": 35, "end_line": 40, "note": "refill adds elapsed × rate"},
                    {"path": "src/missing.rs", "line": 3}
                ]),
            ),
        ],
    );
    let before = snapshot(s.ws.path());
    let result = s
        .client
        .request(
            "copilot/ask",
            json!({"question": "How are tokens refilled?", "workDoneToken": "tok-1"}),
        )
        .unwrap();

    assert_eq!(result["stopReason"], "answered");
    assert!(result["answer"].as_str().unwrap().contains("refill"));
    let steps = result["steps"].as_array().unwrap();
    let tools: Vec<_> = steps.iter().map(|s| s["tool"].as_str().unwrap()).collect();
    assert_eq!(tools, ["search_code", "read_file", "propose_edit"]);
    assert!(steps.iter().all(|s| s["ok"] == true), "{steps:#?}");
    assert_eq!(steps[0]["arguments"], json!({"pattern": "fn refill"}));

    // Citations: verified, whole lines; the missing file kept but unverified.
    let citations = result["citations"].as_array().unwrap();
    assert_eq!(citations.len(), 2);
    assert_eq!(citations[0]["path"], "src/rate_limit.rs");
    assert_eq!(citations[0]["line"], 35);
    assert_eq!(citations[0]["endLine"], 40);
    assert_eq!(citations[0]["verified"], true);
    assert_eq!(
        citations[0]["range"],
        json!({"start": {"line": 34, "character": 0}, "end": {"line": 40, "character": 0}})
    );
    assert!(citations[0]["uri"]
        .as_str()
        .unwrap()
        .starts_with("file:///"));
    assert_eq!(citations[1]["verified"], false);

    // The edit: documentChanges with a change annotation that needs confirmation.
    let edits = result["edits"].as_array().unwrap();
    assert_eq!(edits.len(), 1);
    assert_eq!(edits[0]["title"], "Document refill");
    let edit = &edits[0]["edit"];
    let doc_edit = &edit["documentChanges"][0];
    let annotation = doc_edit["edits"][0]["annotationId"].as_str().unwrap();
    assert_eq!(
        edit["changeAnnotations"][annotation]["needsConfirmation"],
        true
    );
    let original = std::fs::read_to_string(s.ws.path().join("src/rate_limit.rs")).unwrap();
    let applied = copilot_ls_test_support::lsp_client::apply_text_edits(
        &original,
        doc_edit["edits"].as_array().unwrap(),
        false,
    );
    assert_eq!(applied, original.replacen(old, new, 1));

    // Wire order: assistant turn with both calls, then one result per call id.
    let second = messages(&s.fake, 1);
    let n = second.len();
    assert_eq!(second[n - 2]["role"], "assistant");
    assert_eq!(second[n - 1]["role"], "tool");
    assert_eq!(second[n - 1]["tool_call_id"], "c1");
    let third = messages(&s.fake, 2);
    let tail: Vec<_> = third.iter().rev().take(3).rev().collect();
    assert_eq!(tail[0]["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(
        (
            tail[1]["tool_call_id"].as_str(),
            tail[2]["tool_call_id"].as_str()
        ),
        (Some("c2"), Some("c3"))
    );
    assert!(tail[1]["content"]
        .as_str()
        .unwrap()
        .contains("35\t    fn refill(&mut self) {"));
    // Streaming was used and the key sent as a bearer token.
    let requests = s.fake.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].body["stream"], true);
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(requests[0].body["model"], "fake-model");
    let tool_names: Vec<_> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        tool_names,
        [
            "search_code",
            "read_file",
            "list_directory",
            "find_files",
            "find_symbol",
            "find_references",
            "file_outline",
            "git_log",
            "git_blame",
            "git_diff",
            "list_open_buffers",
            "read_open_buffer",
            "propose_edit",
            "answer"
        ]
    );

    // Progress on the given token: begin, one report per tool call, end. Notifications
    // and the reply travel on separate channels inside the server: wait for the end.
    s.client.notification("$/progress", |p| {
        p["token"] == "tok-1" && p["value"]["kind"] == "end"
    });
    let progress: Vec<Value> = s
        .client
        .received("$/progress")
        .into_iter()
        .filter(|p| p["token"] == "tok-1")
        .map(|p| p["value"].clone())
        .collect();
    let kinds: Vec<_> = progress
        .iter()
        .map(|v| v["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"begin"));
    assert_eq!(progress[0]["title"], "Copilot");
    let reports: Vec<_> = progress
        .iter()
        .filter(|v| v["kind"] == "report")
        .map(|v| v["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        reports,
        [
            "search_code: fn refill",
            "read_file: src/rate_limit.rs:30-41",
            "propose_edit: src/rate_limit.rs"
        ]
    );

    // Diagnostics for the cited file: citation (Information) and edit (Hint).
    let uri = citations[0]["uri"].as_str().unwrap().to_string();
    let latest = s
        .client
        .notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri.as_str()
        });
    let diags = latest["diagnostics"].as_array().unwrap();
    let citation = diags.iter().find(|d| d["code"] == "citation").unwrap();
    assert_eq!(
        (citation["severity"].as_u64(), citation["source"].as_str()),
        (Some(3), Some("copilot"))
    );
    assert_eq!(citation["message"], "refill adds elapsed × rate");
    let hint = diags
        .iter()
        .find(|d| d["code"] == "suggested-edit")
        .unwrap();
    assert_eq!(hint["severity"], 4);
    assert_eq!(hint["data"]["editId"], edits[0]["id"]);

    let (status, stderr, log) = s.client.shutdown();
    assert!(status.success());
    assert!(progress.last().is_some_and(|v| v["kind"] == "end"));
    assert_no_key_anywhere(&log, &stderr);
    assert_eq!(before, snapshot(s.ws.path()), "nothing was written to disk");
}

#[test]
fn anthropic_non_streaming_uses_native_tool_blocks() {
    let mut s = setup_with(
        "anthropic",
        vec![
            turn(vec![
                call("toolu_1", "list_directory", json!({"path": "src"})),
                call("toolu_2", "find_files", json!({"pattern": "*.md"})),
            ]),
            json!({"text": "The limiter lives in src/rate_limit.rs:44 and config in src/config.rs:4-8."}),
        ],
        json!({"stream": false}),
        json!({}),
    );
    let result = s
        .client
        .request("copilot/ask", json!({"question": "Where is the limiter?"}))
        .unwrap();
    assert_eq!(result["stopReason"], "answered");
    // Plain-text answers: `path:line` mentions become verified citations.
    let cited: Vec<_> = result["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["line"].as_u64().unwrap(),
                c["endLine"].as_u64().unwrap(),
                c["verified"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        cited,
        [
            ("src/rate_limit.rs".to_string(), 44, 44, true),
            ("src/config.rs".to_string(), 4, 8, true)
        ]
    );
    let requests = s.fake.wait_for_requests(2, WAIT);
    let first = &requests[0];
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.header("x-api-key"), Some(KEY));
    assert_eq!(first.header("anthropic-version"), Some("2023-06-01"));
    assert!(first.header("authorization").is_none());
    assert!(first.body["max_tokens"].as_u64().unwrap() > 0);
    assert_eq!(
        first.body["stream"],
        json!(false)
            .as_bool()
            .map(|_| Value::Bool(false))
            .unwrap_or(Value::Null)
    );
    // One text block, a prompt-cache breakpoint on it.
    assert!(first.body["system"][0]["text"]
        .as_str()
        .unwrap()
        .contains("copilot-ls"));
    assert_eq!(
        first.body["system"][0]["cache_control"]["type"],
        "ephemeral"
    );
    let second = requests[1].body["messages"].as_array().unwrap();
    let last = second.last().unwrap();
    assert_eq!(last["role"], "user");
    let blocks = last["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    assert_eq!(
        (
            blocks[0]["type"].as_str(),
            blocks[0]["tool_use_id"].as_str()
        ),
        (Some("tool_result"), Some("toolu_1"))
    );
    assert!(blocks[0]["content"]
        .as_str()
        .unwrap_or(&blocks[0]["content"].to_string())
        .contains("rate_limit.rs"));
    let assistant = &second[second.len() - 2];
    assert_eq!(assistant["content"][0]["type"], "tool_use");
    assert_eq!(assistant["content"][0]["input"], json!({"path": "src"}));
    let (_, stderr, log) = s.client.shutdown();
    assert_no_key_anywhere(&log, &stderr);
}

#[test]
fn a_request_after_did_change_always_sees_the_change() {
    // Each round: a didChange immediately followed by an ask whose model reads the
    // open buffer. The model must see the text of that very change, every time.
    let rounds = 15;
    let mut steps = Vec::new();
    for round in 0..rounds {
        steps.push(turn(vec![call(
            &format!("r{round}"),
            "read_open_buffer",
            json!({"path": "src/config.rs", "start_line": 1, "end_line": 2}),
        )]));
        steps.push(json!({"text": "ok"}));
    }
    let mut s = setup("openai", steps);
    let root = s.ws.path().to_path_buf();
    let uri = open(&mut s.client, &root, "src/config.rs");
    for round in 0..rounds {
        s.client.notify("textDocument/didChange", json!({
            "textDocument": {"uri": uri, "version": round + 2},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": format!("// marker {round}\n")}]
        }));
        s.client
            .request("copilot/ask", json!({"question": "what is on line 1?"}))
            .unwrap();
        let request =
            &s.fake.wait_for_requests(2 * round as usize + 2, WAIT)[2 * round as usize + 1];
        let tool_result = request.body["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            tool_result.contains(&format!("1\t// marker {round}")),
            "round {round}: {tool_result}"
        );
        assert!(
            tool_result.contains(&format!("version {}", round + 2)),
            "round {round}: {tool_result}"
        );
    }
    s.client.shutdown();
}

#[test]
fn incremental_changes_with_emoji_cjk_and_crlf_in_both_encodings() {
    for utf8 in [false, true] {
        let mut steps = Vec::new();
        steps.push(turn(vec![call(
            "r",
            "read_open_buffer",
            json!({"path": "notes.txt"}),
        )]));
        steps.push(json!({"text": "ok"}));
        let caps = if utf8 {
            json!({"general": {"positionEncodings": ["utf-8"]}})
        } else {
            json!({})
        };
        let mut s = setup_with("openai", steps, json!({}), caps);
        let path = s.ws.path().canonicalize().unwrap().join("notes.txt");
        std::fs::write(&path, "").unwrap();
        let uri = file_uri(&path);
        let text = "a😀b漢c\r\nsecond line\r\n";
        s.client.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1, "text": text}}));
        // Replace "b" (after the emoji) and append after 漢, in one notification.
        let (b_start, b_end, after_han) = if utf8 { (5, 6, 9) } else { (3, 4, 5) };
        s.client.notify("textDocument/didChange", json!({
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [
                {"range": {"start": {"line": 0, "character": b_start}, "end": {"line": 0, "character": b_end}}, "text": "B"},
                {"range": {"start": {"line": 0, "character": after_han}, "end": {"line": 0, "character": after_han}}, "text": "字"},
                {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 6}}, "text": "2nd"}
            ]
        }));
        s.client
            .request("copilot/ask", json!({"question": "read it"}))
            .unwrap();
        let request = &s.fake.wait_for_requests(2, WAIT)[1];
        let content = request.body["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            content.contains("1\ta😀B漢字c\n2\t2nd line\n"),
            "utf8={utf8}: {content}"
        );
        s.client.shutdown();
    }
}

#[test]
fn max_steps_bounds_the_number_of_model_calls() {
    let steps: Vec<Value> = (0..6)
        .map(|i| json!({"text": format!("still looking {i}"), "tool_calls": [call(&format!("m{i}"), "list_directory", json!({}))]}))
        .collect();
    let mut s = setup_with("openai", steps, json!({"maxSteps": 3}), json!({}));
    let result = s
        .client
        .request("copilot/ask", json!({"question": "loop forever"}))
        .unwrap();
    assert_eq!(result["stopReason"], "max_steps");
    let answer = result["answer"].as_str().unwrap();
    assert!(
        answer.contains("maxSteps") && answer.contains("still looking 2"),
        "{answer}"
    );
    assert_eq!(result["steps"].as_array().unwrap().len(), 3);
    assert_eq!(
        s.fake.requests().len(),
        3,
        "never more than maxSteps model calls"
    );
    s.client.shutdown();
}

#[test]
fn malformed_arguments_unknown_tools_and_wrong_types_become_error_results() {
    let mut s = setup(
        "openai",
        vec![
            turn(vec![
                call("b1", "read_file", json!("{\"path\": \"src/main.rs\"")),
                call("b2", "delete_everything", json!({})),
                call("b3", "read_file", json!({"path": 7})),
                call("b4", "read_file", json!({"path": "../../etc/passwd"})),
                call("b5", "answer", json!({"citations": []})),
            ]),
            answer_turn("b6", "done", json!([])),
        ],
    );
    let result = s
        .client
        .request("copilot/ask", json!({"question": "break things"}))
        .unwrap();
    assert_eq!(result["stopReason"], "answered");
    let results: Vec<Value> = messages(&s.fake, 1)
        .into_iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    let texts: Vec<_> = results
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts.len(), 5);
    assert!(texts.iter().all(|t| t.starts_with("Error: ")), "{texts:#?}");
    assert!(texts[0].contains("invalid arguments for read_file"));
    assert!(texts[1].contains("unknown tool `delete_everything`"));
    assert!(texts[2].contains("invalid type"));
    assert!(texts[3].contains("outside the workspace"));
    assert!(texts[4].contains("missing field `answer`"));
    let (status, stderr, _) = s.client.shutdown();
    assert!(status.success() && !stderr.contains("panicked"));
}

#[test]
fn a_truncated_turn_never_runs_its_cut_tool_calls() {
    let mut s = setup(
        "openai",
        vec![
            json!({"tool_calls": [call("t1", "propose_edit", json!(r#"{"path": "src/main.rs", "old_text": "fn main() {", "new_text": "fn main() { tod"#))], "finish": "length"}),
            answer_turn("t2", "Short answer.", json!([])),
        ],
    );
    let result = s
        .client
        .request("copilot/ask", json!({"question": "q"}))
        .unwrap();
    assert_eq!(result["stopReason"], "answered");
    assert!(result["steps"].as_array().unwrap().is_empty(), "{result:#}");
    assert!(result["edits"].as_array().unwrap().is_empty());
    let second = messages(&s.fake, 1);
    assert!(second.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .contains("cut off"));
    assert!(result["answer"]
        .as_str()
        .unwrap()
        .contains("output limit, `maxOutputTokens`"));
    s.client.shutdown();
}

#[test]
fn a_truncated_turn_runs_its_complete_calls_and_reports_the_cut_ones() {
    for kind in ["openai", "anthropic"] {
        let mut s = setup_with(
            kind,
            vec![
                json!({"tool_calls": [
                    call("t1", "search_code", json!({"pattern": "fn refill"})),
                    call("t2", "read_file", json!({"path": "src/rate_limit.rs"})),
                    call("t3", "read_file", json!(r#"{"path": "src/ma"#)),
                ], "finish": "length"}),
                answer_turn("t4", "Refilled in src/rate_limit.rs.", json!([])),
            ],
            json!({"maxOutputTokens": 321}),
            editor_capabilities(),
        );
        let result = s
            .client
            .request(
                "copilot/ask",
                json!({"question": "How are tokens refilled?"}),
            )
            .unwrap();
        assert_eq!(result["stopReason"], "answered", "{kind}");
        let tools: Vec<&str> = result["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["tool"].as_str().unwrap())
            .collect();
        assert_eq!(tools, ["search_code", "read_file"], "{kind}: {result:#}");
        let answer = result["answer"].as_str().unwrap();
        assert!(
            answer.starts_with("Refilled in src/rate_limit.rs."),
            "{answer}"
        );
        assert!(
            answer.contains("output limit, `maxOutputTokens`"),
            "{answer}"
        );
        let requests = s.fake.wait_for_requests(2, WAIT);
        // Both call it `max_tokens` (the fake is not api.openai.com).
        assert_eq!(requests[0].body["max_tokens"], 321, "{kind}");
        let body = requests[1].body.to_string();
        assert!(
            body.contains("1 more call(s) were incomplete and did not run (read_file)"),
            "{kind}: {body}"
        );
        if kind == "openai" {
            let second = messages(&s.fake, 1);
            let roles: Vec<&str> = second.iter().map(|m| m["role"].as_str().unwrap()).collect();
            assert_eq!(
                roles,
                ["system", "user", "assistant", "tool", "tool", "user"]
            );
            // Only the complete calls are sent back, each with its result.
            assert_eq!(second[2]["tool_calls"].as_array().unwrap().len(), 2);
            assert_eq!(second[2]["content"], "");
        } else {
            let assistant = &requests[1].body["messages"][1]["content"];
            assert_eq!(assistant.as_array().unwrap().len(), 2, "{assistant}");
        }
        s.client.shutdown();
    }
}

#[test]
fn follow_up_questions_continue_the_conversation() {
    let mut s = setup(
        "openai",
        vec![
            json!({"text": "First answer."}),
            json!({"text": "Second answer."}),
        ],
    );
    let first = s
        .client
        .request(
            "copilot/ask",
            json!({"question": "What is TokenBucket?", "conversationId": "conv-7"}),
        )
        .unwrap();
    assert_eq!(first["conversationId"], "conv-7");
    let second = s
        .client
        .request(
            "copilot/ask",
            json!({"question": "And who calls it?", "conversationId": "conv-7"}),
        )
        .unwrap();
    assert_eq!(second["answer"], "Second answer.");
    let history = messages(&s.fake, 1);
    let contents: Vec<String> = history
        .iter()
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        contents
            .iter()
            .any(|c| c.starts_with("What is TokenBucket?")),
        "{contents:#?}"
    );
    assert!(contents.iter().any(|c| c == "First answer."));
    assert!(contents.last().unwrap().starts_with("And who calls it?"));
    // A different conversation starts fresh.
    let mut s2 = setup("openai", vec![json!({"text": "a"}), json!({"text": "b"})]);
    s2.client
        .request(
            "copilot/ask",
            json!({"question": "one", "conversationId": "x"}),
        )
        .unwrap();
    s2.client
        .request(
            "copilot/ask",
            json!({"question": "two", "conversationId": "y"}),
        )
        .unwrap();
    let fresh = messages(&s2.fake, 1);
    assert!(!fresh
        .iter()
        .any(|m| m["content"].as_str().unwrap_or("").starts_with("one")));
    s.client.shutdown();
    s2.client.shutdown();
}

#[test]
fn provider_faults_retry_or_fail_with_request_failed_and_never_leak_the_key() {
    // 500 and 429 are retried (retry-after-ms honoured), then the call succeeds.
    let mut s = setup(
        "openai",
        vec![
            json!({"status": 500, "headers": {"retry-after-ms": "0"}, "body": "{\"error\":{\"message\":\"boom\"}}"}),
            json!({"status": 429, "headers": {"retry-after-ms": "0"}, "body": "{\"error\":{\"message\":\"slow down\"}}"}),
            json!({"text": "recovered"}),
        ],
    );
    let result = s
        .client
        .request("copilot/ask", json!({"question": "q"}))
        .unwrap();
    assert_eq!(result["answer"], "recovered");
    assert_eq!(s.fake.requests().len(), 3);
    s.client.shutdown();

    // 401 is not retried; the error names the status but never the key, even when the
    // provider's body echoes it.
    let body = format!("{{\"error\":{{\"message\":\"Incorrect API key provided: {KEY}\"}}}}");
    let mut s = setup("openai", vec![json!({"status": 401, "body": body})]);
    let error = s
        .client
        .request("copilot/ask", json!({"question": "q"}))
        .unwrap_err();
    assert_eq!(error["code"], -32803);
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("401"), "{message}");
    assert!(!message.contains(KEY), "{message}");
    assert_eq!(s.fake.requests().len(), 1, "401 is not retried");
    // The server keeps serving after a failed ask.
    let again = s
        .client
        .request("copilot/ask", json!({"question": ""}))
        .unwrap_err();
    assert_eq!(again["code"], -32602);
    let (status, stderr, log) = s.client.shutdown();
    assert!(status.success());
    assert_no_key_anywhere(&log, &stderr);

    // Nothing listening: the message names the URL.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let ws = temp_workspace();
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[("OPENAI_API_KEY", KEY)]);
    let url = format!("http://127.0.0.1:{port}/v1");
    client.initialize(
        ws.path(),
        json!({}),
        json!({"provider": "openai", "baseUrl": url}),
    );
    let error = client
        .request("copilot/ask", json!({"question": "q"}))
        .unwrap_err();
    assert_eq!(error["code"], -32803);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains(&format!("cannot connect to {url}")),
        "{error}"
    );
    let (_, stderr, log) = client.shutdown();
    assert_no_key_anywhere(&log, &stderr);
}

#[test]
fn a_stream_cut_after_output_fails_and_its_partial_text_is_never_the_answer() {
    let partial =
        json!({"text": "PARTIAL-ANSWER-TEXT that goes on and on", "cut_after_bytes": 300});
    let mut s = setup_with(
        "openai",
        vec![partial.clone(), partial.clone(), partial],
        json!({}),
        json!({}),
    );
    let error = s
        .client
        .request("copilot/ask", json!({"question": "q"}))
        .unwrap_err();
    assert_eq!(error["code"], -32803, "{error}");
    let (_, _, log) = s.client.shutdown();
    assert!(!serde_json::to_string(&log)
        .unwrap()
        .contains("PARTIAL-ANSWER"));
}

#[test]
fn cancelling_an_ask_mid_stream_replies_request_cancelled_and_closes_the_connection() {
    let mut s = setup(
        "openai",
        vec![
            json!({"text": "thinking very slowly about it", "hang_after_bytes": 200}),
            json!({"text": "never requested"}),
        ],
    );
    let id = s.client.send_request(
        "copilot/ask",
        json!({"question": "q", "workDoneToken": "cancel-me"}),
    );
    s.fake.wait_for_requests(1, WAIT);
    let started = std::time::Instant::now();
    s.client.notify("$/cancelRequest", json!({"id": id}));
    let error = s.client.response(id).unwrap_err();
    assert_eq!(error["code"], -32800);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "cancelled promptly: {:?}",
        started.elapsed()
    );
    assert!(
        s.fake.wait_for_disconnect(0, WAIT),
        "the provider connection was closed"
    );
    let end = s.client.notification("$/progress", |p| {
        p["token"] == "cancel-me" && p["value"]["kind"] == "end"
    });
    assert_eq!(end["value"]["message"], "Cancelled");
    // Nothing left behind: no further model call, no diagnostics, and the server serves.
    let next = s
        .client
        .request("copilot/ask", json!({"question": "again"}))
        .unwrap();
    assert_eq!(next["answer"], "never requested");
    assert_eq!(s.fake.requests().len(), 2);
    s.client.shutdown();
}

#[test]
fn execute_command_ask_works_for_editors_without_a_plugin() {
    let mut s = setup(
        "openai",
        vec![answer_turn(
            "a",
            "See src/config.rs:12.",
            json!([{"path": "src/config.rs", "line": 12}]),
        )],
    );
    let result = s.client.request("workspace/executeCommand", json!({"command": "copilot.ask", "arguments": [{"question": "Where is the port read?"}]})).unwrap();
    assert_eq!(result["stopReason"], "answered");
    assert_eq!(result["citations"][0]["path"], "src/config.rs");
    let diags = s
        .client
        .notification("textDocument/publishDiagnostics", |p| {
            p["diagnostics"].as_array().is_some_and(|d| !d.is_empty())
        });
    assert_eq!(
        diags["diagnostics"][0]["message"],
        "Where is the port read?"
    );
    // copilot.clear removes them all.
    let cleared = s.client.request(
        "workspace/executeCommand",
        json!({"command": "copilot.clear", "arguments": []}),
    );
    assert_eq!(cleared, Ok(Value::Null));
    let uri = diags["uri"].clone();
    let empty = s
        .client
        .notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri && p["diagnostics"] == json!([])
        });
    assert_eq!(empty["diagnostics"], json!([]));
    s.client.shutdown();
}

#[test]
fn remote_images_and_links_in_answers_are_neutralised() {
    let mut s = setup(
        "openai",
        vec![
            json!({"text": "Look ![x](https://evil.example/p.png?q=1) and [click](command:workbench.action.terminal.new) or [local](src/main.rs)."}),
        ],
    );
    let result = s
        .client
        .request("copilot/ask", json!({"question": "q"}))
        .unwrap();
    let answer = result["answer"].as_str().unwrap();
    assert!(!answer.contains("](https://"), "{answer}");
    assert!(!answer.contains("](command:"), "{answer}");
    assert!(
        answer.contains("`https://evil.example/p.png?q=1`"),
        "{answer}"
    );
    assert!(answer.contains("[local](src/main.rs)"), "{answer}");
    s.client.shutdown();
}

#[test]
fn a_call_past_request_timeout_fails_with_request_failed() {
    let mut s = setup_with(
        "openai",
        vec![
            json!({"hang": true}),
            json!({"hang": true}),
            json!({"hang": true}),
        ],
        json!({"requestTimeoutSecs": 1}),
        json!({}),
    );
    let started = std::time::Instant::now();
    let error = s
        .client
        .request("copilot/ask", json!({"question": "q"}))
        .unwrap_err();
    assert_eq!(error["code"], -32803);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("did not answer within 1 s"),
        "{error}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    s.client.shutdown();
}

#[test]
fn without_a_token_the_server_creates_one_when_the_client_supports_progress() {
    let mut s = setup(
        "openai",
        vec![
            turn(vec![call(
                "p1",
                "read_file",
                json!({"path": "src/config.rs", "start_line": 1, "end_line": 80}),
            )]),
            json!({"text": "done"}),
        ],
    );
    s.client
        .request("copilot/ask", json!({"question": "q"}))
        .unwrap();
    s.client.notification("$/progress", |p| {
        p["value"]["kind"] == "end" && p["token"] != "copilot-ls/indexing"
    });
    let create = s
        .client
        .log
        .iter()
        // The index's own progress has a token of its own.
        .find(|m| {
            m["method"] == "window/workDoneProgress/create"
                && m["params"]["token"] != "copilot-ls/indexing"
        })
        .cloned()
        .expect("token created");
    let token = create["params"]["token"].clone();
    let values: Vec<Value> = s
        .client
        .received("$/progress")
        .into_iter()
        .filter(|p| p["token"] == token)
        .map(|p| p["value"].clone())
        .collect();
    let kinds: Vec<_> = values
        .iter()
        .map(|v| v["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, ["begin", "report", "end"]);
    assert_eq!(values[1]["message"], "read_file: src/config.rs:1-80");
    s.client.shutdown();
}

#[test]
fn the_first_message_carries_the_editor_focus_and_retrieved_context_within_budget() {
    let mut s = setup("openai", vec![json!({"text": "ok"})]);
    let root = s.ws.path().to_path_buf();
    let uri = open(&mut s.client, &root, "src/rate_limit.rs");
    // Lines 35-36 selected (the selection ends at column 0 of line 37).
    let range = json!({"start": {"line": 34, "character": 0}, "end": {"line": 36, "character": 0}});
    s.client
        .request("copilot/ask", json!({"question": "How are tokens refilled?", "textDocument": {"uri": uri}, "range": range}))
        .unwrap();
    let first = messages(&s.fake, 0);
    assert_eq!(first[0]["role"], "system");
    let user = first.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(user.starts_with("How are tokens refilled?"), "{user}");
    assert!(
        user.contains("The user is looking at src/rate_limit.rs with lines 35-36 selected."),
        "{user}"
    );
    assert!(
        user.contains("    fn refill(&mut self) {\n        let now = Instant::now();\n"),
        "{user}"
    );
    assert!(user.contains("Possibly relevant code"), "{user}");
    assert!(
        user.contains("src/rate_limit.rs:35-41"),
        "the refill chunk is in the context: {user}"
    );
    assert!(
        user.len() < 8 * 1024 + 2048,
        "within the context budget: {}",
        user.len()
    );
    s.client.shutdown();
}

#[test]
fn a_configuration_change_takes_effect_at_the_next_ask() {
    let mut s = setup(
        "openai",
        vec![
            json!({"text": "one"}),
            json!({"text": "two"}),
            json!({"text": "three"}),
            json!({"text": "four"}),
        ],
    );
    s.client
        .request("copilot/ask", json!({"question": "q1"}))
        .unwrap();
    s.client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"copilot": {"model": "other-model", "stream": false}}}),
    );
    s.client
        .request("copilot/ask", json!({"question": "q2"}))
        .unwrap();
    // Lua clients send the whole settings object without a `copilot` key.
    s.client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"model": "third-model"}}),
    );
    s.client
        .request("copilot/ask", json!({"question": "q3"}))
        .unwrap();
    // The editor clients' own section, named after the product (the old one still works).
    s.client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"copilot-ls": {"model": "fourth-model"}}}),
    );
    s.client
        .request("copilot/ask", json!({"question": "q4"}))
        .unwrap();
    let requests = s.fake.wait_for_requests(4, WAIT);
    let models: Vec<_> = requests
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        models,
        ["fake-model", "other-model", "third-model", "fourth-model"]
    );
    assert_eq!(requests[0].body["stream"], true);
    assert_eq!(requests[1].body["stream"], false);
    s.client.shutdown();
}

#[test]
fn repeated_tool_call_ids_are_made_unique_before_the_results_go_back() {
    for kind in ["openai", "anthropic"] {
        let read = |path: &str| call("dup", "read_file", json!({"path": path}));
        let mut s = setup(
            kind,
            vec![
                turn(vec![read("src/config.rs"), read("src/main.rs")]),
                // The next turn repeats the id once more.
                turn(vec![read("src/rate_limit.rs")]),
                json!({"text": "done"}),
            ],
        );
        s.client
            .request("copilot/ask", json!({"question": "q"}))
            .unwrap();
        let requests = s.fake.requests();
        assert_eq!(requests.len(), 3, "{kind}");
        let last = requests[2].body.to_string();
        let (call_key, result_key) = match kind {
            "openai" => ("\"id\":\"", "\"tool_call_id\":\""),
            _ => ("\"id\":\"", "\"tool_use_id\":\""),
        };
        for id in ["dup", "dup_2", "dup_3"] {
            let call = format!("{call_key}{id}\"");
            let result = format!("{result_key}{id}\"");
            assert_eq!(last.matches(&call).count(), 1, "{kind} {id}: {last}");
            assert_eq!(last.matches(&result).count(), 1, "{kind} {id}: {last}");
        }
        s.client.shutdown();
    }
}

/// A reply recorded from a real local server, replayed verbatim by the fake.
fn recorded_reply(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/providers/local-servers")
        .join(name);
    let body = std::fs::read_to_string(&path).unwrap();
    let content_type = if name.ends_with(".json") {
        "application/json"
    } else {
        "text/event-stream"
    };
    json!({"raw": body, "content_type": content_type})
}

#[test]
fn recorded_local_server_replies_drive_whole_asks() {
    // llama-cpp-python's stream opens with `"tool_calls": null`; llama-server's ends in
    // a plain text turn.
    let mut s = setup(
        "openai",
        vec![
            recorded_reply("llama-cpp-python/E-tools-forced-stream.sse"),
            recorded_reply("llama-server/R-tools-auto-single-stream.sse"),
        ],
    );
    let result = s
        .client
        .request(
            "copilot/ask",
            json!({"question": "How are tokens refilled?"}),
        )
        .unwrap();
    assert_eq!(result["stopReason"], "answered", "{result:#}");
    let steps = result["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0]["tool"], "read_file");
    assert_eq!(steps[0]["ok"], true, "{steps:#?}");
    let second = messages(&s.fake, 1);
    assert_eq!(second[2]["content"], "");
    assert_eq!(second[3]["role"], "tool");
    s.client.shutdown();

    // llama-server: four whole calls, then `finish_reason: length`; all four run.
    let mut s = setup_with(
        "openai",
        vec![
            recorded_reply("llama-server/A-tools-auto-nostream.json"),
            recorded_reply("llama-server/S-tools-auto-single-nostream.json"),
        ],
        json!({"stream": false}),
        editor_capabilities(),
    );
    let result = s
        .client
        .request(
            "copilot/ask",
            json!({"question": "How are tokens refilled?"}),
        )
        .unwrap();
    assert_eq!(result["stopReason"], "answered");
    assert_eq!(result["steps"].as_array().unwrap().len(), 4, "{result:#}");
    assert!(result["answer"]
        .as_str()
        .unwrap()
        .contains("output limit, `maxOutputTokens`"));
    let second = messages(&s.fake, 1);
    let results = second.iter().filter(|m| m["role"] == "tool").count();
    assert_eq!(results, 4, "every call answered");
    s.client.shutdown();
}

//! End-to-end through the real binary: the editor's own model (contract v5, section 11).
//! A raw LSP client declares `copilotEditorModels`, lists models, and answers each
//! `copilot/model` request with scripted turns, as VS Code's bridge does: tool turns then
//! an `answer` call, deltas before and after the reply, a tool call only in the reply,
//! error replies with `editor` configured and as the default, models that appear after
//! start-up, a slow call cancelled, a transcript over `maxInputTokens`, and planted
//! secrets that never reach any `ModelParams`. Every ask gets exactly one reply.

use std::path::Path;

use copilot_ls_test_support::lsp_client::LspClient;
use copilot_ls_test_support::secrets::{cases, json_strings};
use copilot_ls_test_support::workspace::temp_workspace;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");
const MODEL_METHOD: &str = "copilot/model";

fn models() -> Value {
    json!([{"id": "test-model", "name": "Test Model", "vendor": "tests", "family": "t", "maxInputTokens": 100000}])
}

/// A client that runs models, with `options` as its initialization options.
fn start(root: &Path, options: Value) -> LspClient {
    let mut client = LspClient::spawn(Path::new(BIN), root, &[]);
    client.answer_myself(MODEL_METHOD);
    client.initialize(
        root,
        json!({"experimental": {"copilotEditorModels": true}}),
        options,
    );
    client
}

/// What the scripted editor does with one `copilot/model` request.
enum Turn {
    /// Deltas on the call's token, then the reply, then more deltas.
    Reply {
        before: Vec<&'static str>,
        result: Value,
        after: Vec<&'static str>,
    },
    Error(i64, &'static str),
}

fn reply(result: Value) -> Turn {
    Turn::Reply {
        before: vec![],
        result,
        after: vec![],
    }
}

fn calls(calls: Value) -> Value {
    json!({"model": "test-model", "text": "", "toolCalls": calls, "stopReason": "tool_calls"})
}

fn answer(text: &str, citations: Value) -> Value {
    calls(
        json!([{"id": "a1", "name": "answer", "arguments": {"answer": text, "citations": citations}}]),
    )
}

fn is_model_call(m: &Value) -> bool {
    m["method"] == MODEL_METHOD && m.get("id").is_some()
}

/// Asks and plays `turns`, one per model call; returns the ask's outcome and every
/// `ModelParams` the server sent.
fn ask_with(
    client: &mut LspClient,
    params: Value,
    turns: Vec<Turn>,
) -> (Result<Value, Value>, Vec<Value>) {
    let id = client.send_request("copilot/ask", params);
    let mut turns = turns.into_iter();
    let mut sent = Vec::new();
    loop {
        let message = client
            .wait_for(|m| is_model_call(m) || (m["id"] == json!(id) && m.get("method").is_none()));
        if !is_model_call(&message) {
            let outcome = match message.get("error") {
                Some(error) => Err(error.clone()),
                None => Ok(message["result"].clone()),
            };
            // Exactly one reply to the ask.
            let replies = client
                .log
                .iter()
                .filter(|m| m["id"] == json!(id) && m.get("method").is_none())
                .count();
            assert_eq!(replies, 1);
            return (outcome, sent);
        }
        let params = message["params"].clone();
        let token = params["partialResultToken"].clone();
        sent.push(params);
        let turn = turns.next().expect("a scripted turn for every model call");
        match turn {
            Turn::Reply {
                before,
                result,
                after,
            } => {
                for text in before {
                    client.notify(
                        "$/progress",
                        json!({"token": token, "value": {"text": text}}),
                    );
                }
                client.reply(&message["id"], Ok(result));
                for text in after {
                    client.notify(
                        "$/progress",
                        json!({"token": token, "value": {"text": text}}),
                    );
                }
            }
            Turn::Error(code, text) => {
                client.reply(&message["id"], Err(json!({"code": code, "message": text})))
            }
        }
    }
}

#[test]
fn tool_turns_then_an_answer_with_no_key_and_no_provider_setting() {
    let ws = temp_workspace();
    let mut client = start(ws.path(), json!({"editorModels": models()}));
    let turns = vec![
        Turn::Reply {
            before: vec!["Let me ", "look."],
            result: json!({"model": "test-model", "text": "Let me look.", "stopReason": "tool_calls",
                "toolCalls": [
                    {"id": "c1", "name": "search_code", "arguments": {"pattern": "fn refill"}},
                    {"id": "c2", "name": "read_file", "arguments": {"path": "src/rate_limit.rs", "start_line": 30, "end_line": 45}}
                ],
                "usage": {"inputTokens": 900, "outputTokens": 40}}),
            after: vec![],
        },
        reply(answer(
            "Tokens are refilled in `refill` (src/rate_limit.rs:35).",
            json!([{"path": "src/rate_limit.rs", "line": 35}]),
        )),
    ];
    let (outcome, sent) = ask_with(
        &mut client,
        json!({"question": "How are tokens refilled?", "partialResultToken": "ask-1"}),
        turns,
    );
    let result = outcome.expect("the ask answers");
    assert_eq!(result["stopReason"], "answered");
    assert!(result["answer"].as_str().unwrap().contains("refill"));
    assert_eq!(result["citations"][0]["path"], "src/rate_limit.rs");
    assert_eq!(result["citations"][0]["verified"], true);
    assert_eq!(result["model"], "Test Model (tests)");
    assert_eq!(result["usage"]["modelCalls"], 2);
    assert_eq!(result["usage"]["inputTokens"], 900);
    let tools: Vec<&str> = result["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["search_code", "read_file"]);

    // What the editor was sent: the contract's fields, the conversation so far.
    assert_eq!(sent.len(), 2);
    let first = &sent[0];
    assert_eq!(first["model"], "test-model");
    assert_eq!(first["conversationId"], result["conversationId"]);
    assert!(first["system"].as_str().unwrap().len() > 100);
    assert_eq!(first["messages"][0]["role"], "user");
    assert!(first["messages"][0]["text"]
        .as_str()
        .unwrap()
        .contains("How are tokens refilled?"));
    let tool_names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tool_names.contains(&"answer") && tool_names.contains(&"read_file"));
    assert!(first["tools"][0]["inputSchema"].is_object());
    let second = sent[1]["messages"].as_array().unwrap();
    assert_eq!(second[1]["role"], "assistant");
    assert_eq!(second[1]["toolCalls"][0]["name"], "search_code");
    assert_eq!(second[2]["role"], "tool");
    assert_eq!(second[2]["toolCallId"], "c1");
    assert!(second[3]["text"].as_str().unwrap().contains("fn refill"));

    // The deltas reached the ask's own token, as text of turn 1.
    let streamed: String = client
        .received("$/progress")
        .iter()
        .filter(|p| p["token"] == "ask-1")
        .filter_map(|p| p["value"]["text"].as_str().map(str::to_string))
        .collect();
    assert!(streamed.starts_with("Let me look."), "{streamed}");
    client.shutdown();
}

#[test]
fn deltas_after_the_reply_and_tool_calls_only_in_the_reply_lose_and_add_nothing() {
    let ws = temp_workspace();
    let mut client = start(ws.path(), json!({"editorModels": models()}));
    let turns = vec![
        // The tool call is in the reply only; the deltas carry text, some after it.
        Turn::Reply {
            before: vec!["Reading."],
            result: json!({"model": "test-model", "text": "Reading.", "stopReason": "tool_calls",
                "toolCalls": [{"id": "c1", "name": "read_file", "arguments": {"path": "src/config.rs"}}]}),
            after: vec![" STRAY DELTA"],
        },
        Turn::Reply {
            before: vec![],
            result: json!({"model": "test-model", "text": "The burst is read from TOLLBOOTH_BURST (src/config.rs:15).", "toolCalls": [], "stopReason": "end"}),
            after: vec![" ANOTHER STRAY"],
        },
    ];
    let (outcome, sent) = ask_with(
        &mut client,
        json!({"question": "Where is the burst configured?", "partialResultToken": "ask-2"}),
        turns,
    );
    let result = outcome.unwrap();
    assert_eq!(
        sent.len(),
        2,
        "the reply's tool call ran and a second turn followed"
    );
    assert_eq!(result["steps"][0]["tool"], "read_file");
    assert_eq!(
        result["answer"],
        "The burst is read from TOLLBOOTH_BURST (src/config.rs:15)."
    );
    // A follow-up starts a fresh model call, so a late delta has nowhere to land: the
    // server must not have shown it.
    let (_, stderr, log) = client.shutdown();
    let shown = serde_json::to_string(&log).unwrap();
    assert!(!shown.contains("STRAY"), "{shown}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_refusal_fails_the_ask_when_editor_is_configured() {
    let ws = temp_workspace();
    let mut client = start(
        ws.path(),
        json!({"editorModels": models(), "provider": "editor"}),
    );
    let (outcome, _) = ask_with(
        &mut client,
        json!({"question": "How are tokens refilled?"}),
        vec![Turn::Error(-32803, "The user declined to use the model.")],
    );
    let error = outcome.unwrap_err();
    assert_eq!(error["code"], -32803);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("The user declined to use the model."),
        "{error}"
    );
    client.shutdown();
}

#[test]
fn a_refusal_of_the_default_editor_model_answers_as_none_and_says_why() {
    let ws = temp_workspace();
    let mut client = start(ws.path(), json!({"editorModels": models()}));
    let (outcome, sent) = ask_with(
        &mut client,
        json!({"question": "How are tokens refilled?"}),
        vec![Turn::Error(-32803, "The user declined to use the model.")],
    );
    assert_eq!(sent.len(), 1);
    let result = outcome.expect("the ask still answers");
    let answer = result["answer"].as_str().unwrap();
    let first_line = answer.lines().next().unwrap();
    assert!(first_line.starts_with("**No model answered:**"), "{answer}");
    assert!(
        first_line.contains("The user declined to use the model"),
        "{answer}"
    );
    assert!(first_line.contains("copilot-ls: Choose Model"), "{answer}");
    assert_eq!(result["stopReason"], "no_provider");
    assert!(result.get("model").is_none());
    // The places the search found follow, cited.
    assert!(answer.contains("src/rate_limit.rs"), "{answer}");
    assert!(!result["citations"].as_array().unwrap().is_empty());
    client.shutdown();
}

#[test]
fn no_model_listed_answers_as_none_until_the_editor_lists_one() {
    let ws = temp_workspace();
    let mut client = start(ws.path(), json!({}));
    let (outcome, sent) = ask_with(
        &mut client,
        json!({"question": "How are tokens refilled?"}),
        vec![],
    );
    assert!(sent.is_empty(), "no model call without a model");
    let result = outcome.unwrap();
    assert!(
        result["answer"]
            .as_str()
            .unwrap()
            .starts_with("**No model answered:** the editor lists no language model yet."),
        "{result}"
    );
    // Copilot registers its models seconds after start-up.
    client.notify("copilot/didChangeEditorModels", json!({"models": models()}));
    let (outcome, sent) = ask_with(
        &mut client,
        json!({"question": "How are tokens refilled?"}),
        vec![reply(answer("In `refill`.", json!([])))],
    );
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["model"], "test-model");
    assert_eq!(outcome.unwrap()["answer"], "In `refill`.");
    client.shutdown();
}

#[test]
fn the_ask_s_own_editor_model_is_used_and_an_unlisted_one_falls_back_to_the_first() {
    let ws = temp_workspace();
    let two = json!([
        {"id": "first", "name": "First", "vendor": "v"},
        {"id": "second", "name": "Second", "vendor": "v"}
    ]);
    let mut client = start(
        ws.path(),
        json!({"editorModels": two, "editorModel": "gone"}),
    );
    let (_, sent) = ask_with(
        &mut client,
        json!({"question": "How are tokens refilled?"}),
        vec![reply(answer("A.", json!([])))],
    );
    assert_eq!(sent[0]["model"], "first");
    let (outcome, sent) = ask_with(
        &mut client,
        json!({"question": "How are tokens refilled?", "editorModel": "second"}),
        vec![reply(answer("B.", json!([])))],
    );
    assert_eq!(sent[0]["model"], "second");
    assert_eq!(outcome.unwrap()["model"], "Second (v)");
    client.shutdown();
}

#[test]
fn cancelling_the_ask_cancels_the_model_call_and_a_late_reply_is_ignored() {
    let ws = temp_workspace();
    let mut client = start(ws.path(), json!({"editorModels": models()}));
    let ask = client.send_request(
        "copilot/ask",
        json!({"question": "How are tokens refilled?"}),
    );
    // The model is slow: the call stays unanswered while the user cancels.
    let call = client.wait_for(is_model_call);
    client.notify("$/cancelRequest", json!({"id": ask}));
    let cancel = client.notification("$/cancelRequest", |p| p["id"] == call["id"]);
    assert_eq!(cancel["id"], call["id"]);
    let error = client.response(ask).unwrap_err();
    assert_eq!(error["code"], -32800);
    // The reply the model still sends is dropped; the server keeps serving.
    client.reply(&call["id"], Ok(answer("late", json!([]))));
    let (outcome, _) = ask_with(
        &mut client,
        json!({"question": "How are tokens refilled?"}),
        vec![reply(answer("In `refill`.", json!([])))],
    );
    assert_eq!(outcome.unwrap()["answer"], "In `refill`.");
    let (status, stderr, _) = client.shutdown();
    assert!(status.success(), "{stderr}");
}

#[test]
fn a_transcript_over_max_input_tokens_drops_the_oldest_tool_results() {
    let ws = temp_workspace();
    let mut client = start(ws.path(), json!({"editorModels": models()}));
    let question = json!({"question": "How are tokens refilled?"});
    // How large the ask's first call is, measured with room to spare.
    let (_, sent) = ask_with(
        &mut client,
        question.clone(),
        vec![reply(answer("In `refill`.", json!([])))],
    );
    let first = sent[0].to_string().len() / 3;
    // Then a model with room for that and about one file read more (600 tokens).
    let limit = first + 600;
    let small = json!([{"id": "small", "name": "Small", "vendor": "v", "maxInputTokens": limit}]);
    client.notify("copilot/didChangeEditorModels", json!({"models": small}));
    let read = |id: &str, path: &str| {
        json!({"model": "small", "text": "", "stopReason": "tool_calls",
            "toolCalls": [{"id": id, "name": "read_file", "arguments": {"path": path}}]})
    };
    let (outcome, sent) = ask_with(
        &mut client,
        question,
        vec![
            reply(read("c1", "src/rate_limit.rs")),
            reply(read("c2", "src/config.rs")),
            reply(read("c3", "src/main.rs")),
            reply(answer("In `refill`.", json!([]))),
        ],
    );
    assert_eq!(outcome.unwrap()["answer"], "In `refill`.");
    assert_eq!(sent.len(), 4);
    let tool_texts = |params: &Value| -> Vec<String> {
        params["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["text"].as_str().unwrap().to_string())
            .collect()
    };
    let last = tool_texts(sent.last().unwrap());
    assert_eq!(last.len(), 3);
    assert!(
        last[0].contains("dropped to fit the model's input limit"),
        "the oldest result was dropped: {last:?}"
    );
    // The newest result is whole.
    assert!(last[2].contains("fn main"), "{last:?}");
    // The first call was under the limit and went as it was.
    assert!(tool_texts(&sent[1])[0].contains("fn refill"));
    client.shutdown();
}

#[test]
fn planted_secrets_never_reach_the_editor_s_model() {
    let planted = cases(7);
    let ws = temp_workspace();
    std::fs::create_dir_all(ws.path().join("planted")).unwrap();
    let mut reads = Vec::new();
    for (i, case) in planted.iter().enumerate() {
        let name = format!("case_{i}.{}", case.ext);
        std::fs::write(
            ws.path().join("planted").join(&name),
            format!("# settings\n{}# end\n", case.text),
        )
        .unwrap();
        reads.push(json!({"id": format!("r{i}"), "name": "read_file", "arguments": {"path": format!("planted/{name}")}}));
    }
    let mut client = start(ws.path(), json!({"editorModels": models(), "maxSteps": 5}));
    let searches = json!([
        {"id": "s1", "name": "search_code", "arguments": {"pattern": "password|secret|token|key", "regex": true}},
        {"id": "s2", "name": "search_code", "arguments": {"pattern": "PRIVATE KEY"}}
    ]);
    let (outcome, sent) = ask_with(
        &mut client,
        json!({"question": "Which password and token settings does the service use?"}),
        vec![
            reply(calls(Value::Array(reads))),
            reply(calls(searches)),
            reply(answer("They are under planted/.", json!([]))),
        ],
    );
    outcome.unwrap();
    assert_eq!(sent.len(), 3);
    let everything = serde_json::to_string(&sent).unwrap();
    let unescaped: String = sent
        .iter()
        .map(|p| {
            let mut out = String::new();
            json_strings(p, &mut out);
            out
        })
        .collect();
    for case in &planted {
        for value in &case.values {
            assert!(
                !unescaped.contains(value.as_str()) && !everything.contains(value.as_str()),
                "ModelParams show the {} value",
                case.kind
            );
        }
    }
    assert!(unescaped.contains("[redacted: "), "the files were read");
    client.shutdown();
}

#[test]
fn a_client_without_the_capability_cannot_configure_editor() {
    let ws = temp_workspace();
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[]);
    client.initialize(ws.path(), json!({}), json!({"provider": "editor"}));
    let message = client.notification("window/showMessage", |p| {
        p["message"].as_str().unwrap_or_default().contains("editor")
    });
    assert_eq!(message["type"], 1, "an error message");
    // The ask answers as `none` does: no model call, no failure.
    let result = client
        .request(
            "copilot/ask",
            json!({"question": "How are tokens refilled?"}),
        )
        .unwrap();
    assert_eq!(result["stopReason"], "no_provider");
    assert!(client.log.iter().all(|m| m["method"] != MODEL_METHOD));
    client.shutdown();
}

#[test]
fn the_doctor_names_the_editor_s_model_and_what_to_do_when_none_is_listed() {
    let ws = temp_workspace();
    let doctor = |client: &mut LspClient| -> Vec<Value> {
        let result = client
            .request(
                "workspace/executeCommand",
                json!({"command": "copilot.doctor", "arguments": []}),
            )
            .unwrap();
        result["checks"].as_array().unwrap().clone()
    };
    let find = |checks: &[Value], name: &str| -> Value {
        checks
            .iter()
            .find(|c| c["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} check: {checks:?}"))
    };
    // No model yet: the default editor provider is fine, its model a warning that says
    // what to do; nothing asks for a key.
    let mut client = start(ws.path(), json!({}));
    let checks = doctor(&mut client);
    let provider = find(&checks, "provider");
    assert_eq!(provider["status"], "ok", "{provider}");
    assert!(provider["detail"]
        .as_str()
        .unwrap()
        .starts_with("editor (the default"));
    let model = find(&checks, "model");
    assert_eq!(model["status"], "warn", "{model}");
    assert!(model["detail"]
        .as_str()
        .unwrap()
        .contains("copilot-ls: Choose Model"));
    assert!(checks
        .iter()
        .all(|c| c["name"] != "apiKey" && c["status"] != "fail"));
    // Models listed: the one asks use, and every id.
    client.notify("copilot/didChangeEditorModels", json!({"models": models()}));
    let model = find(&doctor(&mut client), "model");
    assert_eq!(model["status"], "ok");
    assert!(model["detail"]
        .as_str()
        .unwrap()
        .starts_with("Test Model (tests) (the first the editor lists: test-model"));
    client.shutdown();
    // `editor` set explicitly with no model: a failure.
    let mut client = start(ws.path(), json!({"provider": "editor"}));
    let model = find(&doctor(&mut client), "model");
    assert_eq!(model["status"], "fail", "{model}");
    client.shutdown();
}

//! End-to-end: the real `copilot-ls` binary over stdio, as an editor drives it, without a
//! model: initialize, encodings, text sync robustness, errors, configuration, shutdown.

use std::path::Path;

use copilot_ls_test_support::lsp_client::{file_uri, LspClient};
use copilot_ls_test_support::workspace::temp_workspace;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");

fn start(root: &Path, capabilities: Value, options: Value) -> (LspClient, Value) {
    let mut client = LspClient::spawn(Path::new(BIN), root, &[]);
    let init = client.initialize(root, capabilities, options);
    (client, init)
}

#[test]
fn initialize_advertises_sync_actions_commands_and_version() {
    let ws = temp_workspace();
    let (client, init) = start(ws.path(), json!({}), Value::Null);
    let caps = &init["capabilities"];
    assert_eq!(caps["textDocumentSync"]["change"], 2, "incremental sync");
    assert_eq!(caps["textDocumentSync"]["openClose"], true);
    assert_eq!(
        caps["codeActionProvider"]["codeActionKinds"],
        json!(["quickfix"])
    );
    assert_eq!(
        caps["executeCommandProvider"]["commands"],
        json!(["copilot.ask", "copilot.clear", "copilot.doctor"])
    );
    assert_eq!(
        caps["positionEncoding"], "utf-16",
        "utf-16 when the client offers nothing"
    );
    assert_eq!(init["serverInfo"]["name"], "copilot-ls");
    assert_eq!(init["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    let (status, _stderr, _log) = client.shutdown();
    assert!(status.success(), "exit after shutdown is clean: {status:?}");
}

#[test]
fn utf8_is_chosen_when_offered_and_utf16_otherwise() {
    let ws = temp_workspace();
    let offered = json!({"general": {"positionEncodings": ["utf-16", "utf-8"]}});
    let (client, init) = start(ws.path(), offered, Value::Null);
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-8");
    client.shutdown();
    let only16 = json!({"general": {"positionEncodings": ["utf-16"]}});
    let (client, init) = start(ws.path(), only16, Value::Null);
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
    client.shutdown();
}

#[test]
fn unknown_methods_get_method_not_found_and_the_server_keeps_serving() {
    let ws = temp_workspace();
    let (mut client, _) = start(ws.path(), json!({}), Value::Null);
    let error = client
        .request("copilot/doesNotExist", json!({}))
        .unwrap_err();
    assert_eq!(error["code"], -32601);
    client.notify("copilot/someNotification", json!({}));
    let error = client
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": "file:///x"}, "position": {"line": 0, "character": 0}}),
        )
        .unwrap_err();
    assert_eq!(error["code"], -32601);
    let (status, _, _) = client.shutdown();
    assert!(status.success());
}

#[test]
fn malformed_text_sync_is_logged_and_ignored_never_fatal() {
    let ws = temp_workspace();
    let (mut client, _) = start(ws.path(), json!({}), Value::Null);
    let uri = file_uri(&ws.path().join("src/config.rs"));
    // A change for a document that was never opened.
    client.notify("textDocument/didChange", json!({
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "text": "x"}]
    }));
    client.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": "one\ntwo\n"}}));
    // A range far past the end, and an inverted range.
    client.notify("textDocument/didChange", json!({
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 99, "character": 0}, "end": {"line": 100, "character": 0}}, "text": "x"}]
    }));
    client.notify("textDocument/didChange", json!({
        "textDocument": {"uri": uri, "version": 3},
        "contentChanges": [{"range": {"start": {"line": 1, "character": 2}, "end": {"line": 0, "character": 0}}, "text": "x"}]
    }));
    // Garbage params for a notification and a request.
    client.notify("textDocument/didChange", json!({"nonsense": true}));
    let error = client
        .request("textDocument/codeAction", json!({"bogus": 1}))
        .unwrap_err();
    assert_eq!(error["code"], -32602);
    let (status, stderr, _) = client.shutdown();
    assert!(status.success(), "server survived: {stderr}");
    assert!(
        stderr.contains("didChange ignored"),
        "the bad changes were logged: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn an_ask_without_a_question_is_invalid_params() {
    let ws = temp_workspace();
    let (mut client, _) = start(ws.path(), json!({}), Value::Null);
    for params in [
        json!({}),
        json!({"question": ""}),
        json!({"question": "   "}),
        json!({"question": 42}),
    ] {
        let error = client.request("copilot/ask", params.clone()).unwrap_err();
        assert_eq!(error["code"], -32602, "{params}: {error}");
    }
    let error = client
        .request(
            "workspace/executeCommand",
            json!({"command": "copilot.ask", "arguments": [{"question": ""}]}),
        )
        .unwrap_err();
    assert_eq!(error["code"], -32602);
    let error = client
        .request(
            "workspace/executeCommand",
            json!({"command": "copilot.nope", "arguments": []}),
        )
        .unwrap_err();
    assert_eq!(error["code"], -32602);
    client.shutdown();
}

#[test]
fn bad_configuration_is_reported_and_the_previous_value_kept() {
    let ws = temp_workspace();
    let (mut client, _) = start(
        ws.path(),
        json!({}),
        json!({"provider": "gemini", "maxSteps": 3}),
    );
    let shown = client.notification("window/showMessage", |p| {
        p["message"].as_str().unwrap_or("").contains("gemini")
    });
    assert_eq!(shown["type"], 1, "an error message");
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"copilot": {"maxSteps": 0}}}),
    );
    let shown = client.notification("window/showMessage", |p| {
        p["message"].as_str().unwrap_or("").contains("maxSteps")
    });
    assert_eq!(shown["type"], 1);
    // Lua clients send `[]` for an empty table; the server takes it as `{}`.
    client.notify("workspace/didChangeConfiguration", json!({"settings": []}));
    // The provider stayed at its default (none, as no key is set): an ask still answers.
    let result = client
        .request(
            "copilot/ask",
            json!({"question": "where is the port configured?"}),
        )
        .unwrap();
    assert_eq!(result["stopReason"], "no_provider");
    let (status, _, log) = client.shutdown();
    assert!(status.success());
    let errors: Vec<_> = log
        .iter()
        .filter(|m| m["method"] == "window/showMessage")
        .map(|m| m["params"]["message"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        errors.len(),
        2,
        "exactly the two bad values were reported: {errors:?}"
    );
}

#[test]
fn with_no_provider_an_ask_lists_the_most_relevant_places() {
    let ws = temp_workspace();
    let (mut client, _) = start(ws.path(), json!({}), Value::Null);
    let result = client
        .request(
            "copilot/ask",
            json!({"question": "How does the token bucket refill its tokens?"}),
        )
        .unwrap();
    assert_eq!(result["stopReason"], "no_provider");
    let answer = result["answer"].as_str().unwrap();
    assert!(answer.contains("No model is configured"), "{answer}");
    let citations = result["citations"].as_array().unwrap();
    assert!(!citations.is_empty(), "retrieval found places: {result:#}");
    assert_eq!(citations[0]["path"], "src/rate_limit.rs", "{result:#}");
    assert!(citations.iter().all(|c| c["verified"] == true));
    assert!(result["conversationId"]
        .as_str()
        .is_some_and(|id| !id.is_empty()));
    client.shutdown();
}

#[test]
fn serve_ignores_the_stdio_flag_vscode_appends() {
    let ws = temp_workspace();
    let mut command = std::process::Command::new(BIN);
    let output = command
        .arg("--stdio")
        .current_dir(ws.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(output.stdout.is_empty(), "nothing but protocol on stdout");
}

#[test]
fn retrieval_follows_open_documents_and_forgets_unsaved_text_on_close() {
    let ws = temp_workspace();
    let (mut client, _) = start(ws.path(), json!({}), Value::Null);
    let path = ws.path().canonicalize().unwrap().join("src/config.rs");
    let uri = file_uri(&path);
    let disk = std::fs::read_to_string(&path).unwrap();
    let unsaved = format!("{disk}\n/// Zanzibar quota: how many parrots may pass per hour.\npub fn zanzibar_quota() -> u32 {{ 7 }}\n");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": unsaved}}),
    );
    let question = json!({"question": "what is the zanzibar parrot quota?"});
    let result = client.request("copilot/ask", question.clone()).unwrap();
    let first = &result["citations"][0];
    assert_eq!(first["path"], "src/config.rs", "{result:#}");
    assert!(
        first["endLine"].as_u64().unwrap() >= 25,
        "the unsaved lines: {result:#}"
    );
    assert!(
        result["answer"]
            .as_str()
            .unwrap()
            .contains("zanzibar_quota"),
        "{result:#}"
    );
    assert_eq!(
        first["verified"], true,
        "verified against the editor's text"
    );
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    let result = client.request("copilot/ask", question).unwrap();
    let cited = result["citations"].as_array().unwrap();
    assert!(
        cited.iter().all(|c| c["endLine"].as_u64().unwrap() <= 23),
        "the unsaved text is gone: {result:#}"
    );
    assert!(
        !result["answer"].as_str().unwrap().contains("zanzibar"),
        "{result:#}"
    );
    client.shutdown();
}

#[test]
fn the_index_follows_files_changed_on_disk_through_the_clients_watcher() {
    let ws = temp_workspace();
    let caps = json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}});
    let (mut client, _) = start(ws.path(), caps, Value::Null);
    let registration = client.wait_for(|m| m["method"] == "client/registerCapability");
    let watcher = &registration["params"]["registrations"][0];
    assert_eq!(watcher["method"], "workspace/didChangeWatchedFiles");
    assert_eq!(
        watcher["registerOptions"]["watchers"][0]["globPattern"],
        "**/*"
    );
    let question = json!({"question": "how are carrier pigeons dispatched?"});
    let before = client.request("copilot/ask", question.clone()).unwrap();
    assert!(
        !before["answer"].as_str().unwrap().contains("pigeon"),
        "{before:#}"
    );
    // A file appears on disk (a git checkout, say) and the editor's watcher reports it.
    let path = ws.path().canonicalize().unwrap().join("src/pigeon.rs");
    std::fs::write(
        &path,
        "/// Dispatches carrier pigeons to their roost.\npub fn dispatch_pigeons() {}\n",
    )
    .unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&path), "type": 1}]}),
    );
    let after = client.request("copilot/ask", question.clone()).unwrap();
    assert_eq!(after["citations"][0]["path"], "src/pigeon.rs", "{after:#}");
    // Deleted again: gone from the index.
    std::fs::remove_file(&path).unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&path), "type": 3}]}),
    );
    let gone = client.request("copilot/ask", question).unwrap();
    assert!(
        gone["citations"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["path"] != "src/pigeon.rs"),
        "{gone:#}"
    );
    client.shutdown();
}

#[test]
fn the_server_exits_when_the_editor_goes_away() {
    let ws = temp_workspace();
    let (client, _) = start(ws.path(), json!({}), Value::Null);
    let started = std::time::Instant::now();
    client.close_and_wait();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

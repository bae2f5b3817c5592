//! End-to-end through the real binary: a workspace of ordinary files with every planted
//! kind of secret (tests/support's `secrets` table), asked about with a scripted model
//! that reads every file whole, reads from inside every key block, searches for key
//! body lines and secret-named lines, outlines code, and reads the same texts as
//! unsaved editor buffers (didOpen of files that are not on disk); and asked with no
//! model, whose answer shows excerpts of disk files and of unsaved buffers. No planted
//! value may appear in any request body sent to the provider, in any answer, in any
//! message to the editor, or on stderr; the benign look-alikes must reach the model
//! unchanged.

use std::path::Path;

use copilot_ls_test_support::fake_provider::FakeProvider;
use copilot_ls_test_support::lsp_client::{file_uri, LspClient};
use copilot_ls_test_support::secrets::{benign, cases, json_strings, Case};
use copilot_ls_test_support::workspace::temp_workspace;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");

/// `planted/<kind>.<ext>`: a file name from the kind.
fn file_name(kind: &str, ext: &str) -> String {
    let slug: String = kind
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("{slug}.{ext}")
}

/// An ordinary file around a case: a heading and a trailer, as config files have.
fn file_text(case_text: &str) -> String {
    format!("# settings for the storefront service (shop)\n# owner: platform team\n{case_text}# end of settings\n")
}

fn assert_no_planted(what: &str, text: &str, planted: &[Case]) {
    for case in planted {
        for value in &case.values {
            assert!(
                !text.contains(value.as_str()),
                "{what} shows the {} value {value}",
                case.kind
            );
        }
    }
}

/// The 1-based line of a file's text holding `needle`.
fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

fn workspace(planted: &[Case]) -> tempfile::TempDir {
    let ws = temp_workspace();
    std::fs::create_dir_all(ws.path().join("planted")).unwrap();
    std::fs::create_dir_all(ws.path().join("benign")).unwrap();
    for case in planted {
        std::fs::write(
            ws.path()
                .join("planted")
                .join(file_name(case.kind, case.ext)),
            file_text(&case.text),
        )
        .unwrap();
    }
    for look_alike in benign(7) {
        std::fs::write(
            ws.path()
                .join("benign")
                .join(file_name(look_alike.kind, look_alike.ext)),
            file_text(&look_alike.text),
        )
        .unwrap();
    }
    ws
}

fn call(id: String, name: &str, arguments: Value) -> Value {
    json!({"id": id, "name": name, "arguments": arguments})
}

#[test]
fn planted_secrets_reach_neither_the_provider_nor_the_answer_nor_the_log() {
    let planted = cases(7);
    let ws = workspace(&planted);
    let mut whole = Vec::new();
    let mut partial = Vec::new();
    let mut buffers = Vec::new();
    for (i, case) in planted.iter().enumerate() {
        let path = format!("planted/{}", file_name(case.kind, case.ext));
        whole.push(call(format!("w{i}"), "read_file", json!({"path": path})));
        let unsaved = format!("unsaved/{}", file_name(case.kind, case.ext));
        buffers.push(call(
            format!("b{i}"),
            "read_open_buffer",
            json!({"path": unsaved}),
        ));
        if case.kind.contains("private key") {
            // From inside the block: the body's third line on, and one line alone.
            let text = file_text(&case.text);
            let body = line_of(&text, &case.values[2]).unwrap();
            partial.push(call(
                format!("p{i}"),
                "read_file",
                json!({"path": path, "start_line": body, "end_line": body + 3}),
            ));
            partial.push(call(
                format!("q{i}"),
                "read_file",
                json!({"path": path, "start_line": body + 1, "end_line": body + 1}),
            ));
            partial.push(call(
                format!("u{i}"),
                "read_open_buffer",
                json!({"path": unsaved, "start_line": body, "end_line": body + 2}),
            ));
        }
    }
    let searches = vec![
        // Key body lines, whole or in part, on disk and in the unsaved buffers.
        call(
            "s1".into(),
            "search_code",
            json!({"pattern": "^\\s*\"?[A-Za-z0-9+/]{40,}", "regex": true}),
        ),
        call(
            "s2".into(),
            "search_code",
            json!({"pattern": "[A-Za-z0-9+/]{24}==$", "regex": true}),
        ),
        call(
            "s3".into(),
            "search_code",
            json!({"pattern": "password|secret|token|key", "regex": true, "path": "planted"}),
        ),
        call(
            "s4".into(),
            "search_code",
            json!({"pattern": "://", "path": "unsaved"}),
        ),
        call(
            "s5".into(),
            "search_code",
            json!({"pattern": "PRIVATE KEY"}),
        ),
        call(
            "o1".into(),
            "file_outline",
            json!({"path": "planted/go_const_api_token.go"}),
        ),
        call(
            "o2".into(),
            "file_outline",
            json!({"path": "planted/private_key_in_java_string_concatenation.java"}),
        ),
        call("f1".into(), "find_symbol", json!({"name": "Keys"})),
        call("f2".into(), "find_symbol", json!({"name": "config"})),
        call("f3".into(), "find_symbol", json!({"name": "client"})),
    ];
    // Every line of every planted file and buffer through search_code, which redacts
    // only the lines it matched when no secret of the text may span lines: each line
    // must read as read_file shows it (a token whose rule's keyword stands on another
    // line of the file was redacted by one and shown by the other).
    let mut every_line = Vec::new();
    for (i, case) in planted.iter().enumerate() {
        for (prefix, dir) in [("l", "planted"), ("m", "unsaved")] {
            let path = format!("{dir}/{}", file_name(case.kind, case.ext));
            every_line.push(call(
                format!("{prefix}{i}"),
                "search_code",
                json!({"pattern": ".", "regex": true, "path": path}),
            ));
        }
    }
    let benign_reads: Vec<Value> = benign(7)
        .iter()
        .enumerate()
        .map(|(i, b)| {
            call(
                format!("n{i}"),
                "read_file",
                json!({"path": format!("benign/{}", file_name(b.kind, b.ext))}),
            )
        })
        .collect();
    let fake = FakeProvider::start(json!({"steps": [
        {"tool_calls": whole},
        {"tool_calls": partial},
        {"tool_calls": searches},
        {"tool_calls": buffers},
        {"tool_calls": benign_reads},
        {"tool_calls": every_line},
        {"text": "The storefront's settings are under planted/."},
    ]}));
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[("TEST_PROVIDER_KEY", "k")]);
    let options = json!({
        "provider": "openai", "baseUrl": fake.openai_base_url(), "model": "m",
        "apiKeyEnv": "TEST_PROVIDER_KEY", "maxSteps": 12,
    });
    client.initialize(ws.path(), json!({}), options);
    // The same texts as unsaved buffers: open in the editor, not on disk.
    for case in &planted {
        let path = ws
            .path()
            .join("unsaved")
            .join(file_name(case.kind, case.ext));
        client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {
                "uri": file_uri(&path), "languageId": "plaintext", "version": 1,
                "text": file_text(&case.text),
            }}),
        );
    }
    let result = client
        .request(
            "copilot/ask",
            json!({"question": "which settings does the storefront service use?"}),
        )
        .unwrap();
    let requests = fake.requests();
    assert_eq!(requests.len(), 7, "every scripted turn ran");
    let mut sent = String::new();
    for request in &requests {
        assert_no_planted(
            "a provider request (raw)",
            &request.body.to_string(),
            &planted,
        );
        json_strings(&request.body, &mut sent);
    }
    assert_no_planted("a provider request", &sent, &planted);
    // The tools ran and showed what they found, redacted.
    let markers = sent.matches("[redacted: ").count();
    assert!(markers > planted.len() * 2, "{markers} markers");
    assert!(sent.contains("[redacted: private key]"), "{sent}");
    assert!(
        !sent.contains("is not open in the editor"),
        "the buffers were read"
    );
    // The benign look-alikes came through as they are.
    for look_alike in benign(7) {
        for line in look_alike.text.lines().filter(|l| l.len() > 12) {
            assert!(
                sent.contains(line),
                "{}: {line} was changed",
                look_alike.kind
            );
        }
    }
    let mut shown = String::new();
    json_strings(&result, &mut shown);
    assert_no_planted("the result", &shown, &planted);
    let (_, stderr, log) = client.shutdown();
    assert_no_planted("stderr", &stderr, &planted);
    let mut messages = String::new();
    json_strings(&Value::Array(log), &mut messages);
    assert_no_planted("the messages to the editor", &messages, &planted);
}

#[test]
fn no_model_answers_show_no_planted_secret_from_disk_or_unsaved_buffers() {
    let planted = cases(11);
    let ws = workspace(&planted);
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[]);
    client.initialize(ws.path(), json!({}), json!({"provider": "none"}));
    for case in &planted {
        let path = ws
            .path()
            .join("unsaved")
            .join(file_name(case.kind, case.ext));
        client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {
                "uri": file_uri(&path), "languageId": "plaintext", "version": 1,
                "text": file_text(&case.text),
            }}),
        );
    }
    let mut answers = String::new();
    for case in &planted {
        let question = format!("storefront settings {}", case.kind);
        let result = client
            .request("copilot/ask", json!({"question": question}))
            .unwrap();
        json_strings(&result, &mut answers);
    }
    assert!(
        answers.contains("planted/"),
        "excerpts of the planted files: {answers}"
    );
    assert!(
        answers.contains("unsaved/"),
        "excerpts of the unsaved buffers: {answers}"
    );
    assert!(answers.contains("[redacted: "), "{answers}");
    assert_no_planted("a no-model answer", &answers, &planted);
    let (_, stderr, log) = client.shutdown();
    assert_no_planted("stderr", &stderr, &planted);
    let mut messages = String::new();
    json_strings(&Value::Array(log), &mut messages);
    assert_no_planted("the messages to the editor", &messages, &planted);
}

//! End-to-end: what the editor sees after an ask. Suggested edits become quick fixes
//! that re-anchor or withdraw as the document changes; nothing is written to disk.

use std::path::Path;
use std::time::Duration;

use copilot_ls_test_support::fake_provider::FakeProvider;
use copilot_ls_test_support::lsp_client::{apply_text_edits, file_uri, LspClient};
use copilot_ls_test_support::workspace::{snapshot, temp_workspace};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "name": name, "arguments": arguments})
}

fn propose_then_answer(edits: Vec<Value>) -> Vec<Value> {
    let calls: Vec<Value> = edits
        .into_iter()
        .enumerate()
        .map(|(i, args)| call(&format!("e{i}"), "propose_edit", args))
        .collect();
    vec![
        json!({"tool_calls": calls}),
        json!({"tool_calls": [call("fin", "answer", json!({"answer": "Proposed."}))]}),
    ]
}

struct Editor {
    client: LspClient,
    fake: FakeProvider,
    ws: tempfile::TempDir,
    root: std::path::PathBuf,
}

fn editor(steps: Vec<Value>, capabilities: Value) -> Editor {
    let fake = FakeProvider::start(json!({ "steps": steps }));
    let ws = temp_workspace();
    let root = ws.path().canonicalize().unwrap();
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[]);
    client.initialize(
        ws.path(),
        capabilities,
        json!({"provider": "openai", "baseUrl": fake.openai_base_url(), "model": "m"}),
    );
    Editor {
        client,
        fake,
        ws,
        root,
    }
}

fn vscode_like() -> Value {
    json!({"workspace": {"workspaceEdit": {"documentChanges": true, "resourceOperations": ["create"], "changeAnnotationSupport": {}}}})
}

impl Editor {
    fn open(&mut self, relative: &str) -> (String, String) {
        let uri = file_uri(&self.root.join(relative));
        let text = std::fs::read_to_string(self.root.join(relative)).unwrap();
        self.client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": text}}),
        );
        (uri, text)
    }

    fn change(&mut self, uri: &str, version: i32, changes: Value) {
        self.client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
        );
    }

    fn code_actions(&mut self, uri: &str, line: u32) -> Vec<Value> {
        let result = self.client.request("textDocument/codeAction", json!({
            "textDocument": {"uri": uri},
            "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
            "context": {"diagnostics": []}
        })).unwrap();
        result.as_array().cloned().unwrap_or_default()
    }

    fn tool_results(&self, request: usize) -> Vec<String> {
        let requests = self
            .fake
            .wait_for_requests(request + 1, Duration::from_secs(30));
        requests[request].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap().to_string())
            .collect()
    }
}

fn single_document_edits(action: &Value) -> (Value, Vec<Value>) {
    let changes = action["edit"]["documentChanges"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{action:#}");
    (
        changes[0]["textDocument"].clone(),
        changes[0]["edits"].as_array().unwrap().clone(),
    )
}

const OLD: &str = "    pub port: u16,\n";
const NEW: &str = "    /// TCP port to listen on.\n    pub port: u16,\n";

#[test]
fn a_proposed_edit_becomes_a_quick_fix_whose_edit_yields_exactly_the_expected_text() {
    let mut e = editor(
        propose_then_answer(vec![
            json!({"path": "src/config.rs", "old_text": OLD, "new_text": NEW, "title": "Document the port"}),
        ]),
        vscode_like(),
    );
    let before = snapshot(e.ws.path());
    let (uri, text) = e.open("src/config.rs");
    let result = e
        .client
        .request(
            "copilot/ask",
            json!({"question": "document the port", "textDocument": {"uri": uri}}),
        )
        .unwrap();
    let edit_id = result["edits"][0]["id"].as_str().unwrap().to_string();

    // The hint diagnostic marks the edit's lines.
    let diags = e
        .client
        .notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri.as_str()
        });
    let hint = diags["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "suggested-edit")
        .unwrap()
        .clone();
    assert_eq!(hint["data"]["editId"], edit_id.as_str());
    assert_eq!(hint["range"]["start"]["line"], 4);

    assert!(
        e.code_actions(&uri, 0).is_empty(),
        "line 1 does not touch the edit"
    );
    let actions = e.code_actions(&uri, 4);
    assert_eq!(actions.len(), 1);
    let action = &actions[0];
    assert_eq!(action["title"], "Copilot: Document the port");
    assert_eq!(action["kind"], "quickfix");
    assert_eq!(action["isPreferred"], true);
    assert_eq!(action["diagnostics"][0]["data"]["editId"], edit_id.as_str());
    let (document, edits) = single_document_edits(action);
    assert_eq!(
        document,
        json!({"uri": uri, "version": 1}),
        "open documents carry their version"
    );
    let annotation = edits[0]["annotationId"].as_str().unwrap();
    assert_eq!(
        action["edit"]["changeAnnotations"][annotation]["needsConfirmation"],
        true
    );
    let applied = apply_text_edits(&text, &edits, false);
    assert_eq!(applied, text.replacen(OLD, NEW, 1));

    // The editor applies it: the edit is not offered again and its diagnostic goes.
    e.change(&uri, 2, json!([{"text": applied}]));
    let cleared = e
        .client
        .notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri.as_str()
                && p["diagnostics"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|d| d["code"] != "suggested-edit")
        });
    assert!(cleared["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["code"] == "citation"));
    assert!(
        e.code_actions(&uri, 5).is_empty(),
        "an applied edit is not offered again"
    );
    // Undone: the text is back as it was, and the edit is still not offered.
    e.change(&uri, 3, json!([{"text": text}]));
    assert!(
        e.code_actions(&uri, 4).is_empty(),
        "an applied edit is not offered again after an undo"
    );
    let (status, _, _) = e.client.shutdown();
    assert!(status.success());
    assert_eq!(
        before,
        snapshot(e.ws.path()),
        "files on disk are byte-identical"
    );
}

#[test]
fn a_stale_edit_is_re_anchored_by_its_text_or_withdrawn() {
    let mut e = editor(
        propose_then_answer(vec![
            json!({"path": "src/config.rs", "old_text": OLD, "new_text": NEW, "title": "Document the port"}),
        ]),
        vscode_like(),
    );
    let (uri, text) = e.open("src/config.rs");
    e.client
        .request("copilot/ask", json!({"question": "q"}))
        .unwrap();
    // Two lines inserted above: the edit moves down with its text.
    e.change(&uri, 2, json!([{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "// a\n// b\n"}]));
    let actions = e.code_actions(&uri, 6);
    assert_eq!(actions.len(), 1, "re-anchored two lines down");
    let (document, edits) = single_document_edits(&actions[0]);
    assert_eq!(document["version"], 2);
    let current = format!("// a\n// b\n{text}");
    assert_eq!(
        apply_text_edits(&current, &edits, false),
        current.replacen(OLD, NEW, 1)
    );
    // The line is edited away: the edit is withdrawn and its diagnostic removed.
    e.change(&uri, 3, json!([{"range": {"start": {"line": 6, "character": 8}, "end": {"line": 6, "character": 12}}, "text": "tcp_port"}]));
    assert!(e.code_actions(&uri, 6).is_empty());
    let diags = e
        .client
        .notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri.as_str()
                && p["diagnostics"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|d| d["code"] != "suggested-edit")
        });
    assert!(diags["diagnostics"].as_array().unwrap().is_empty());
    e.client.shutdown();
}

#[test]
fn ambiguous_and_missing_old_text_are_errors_the_model_can_fix() {
    let mut e = editor(
        propose_then_answer(vec![
            json!({"path": "src/rate_limit.rs", "old_text": "refill_per_sec: f64,", "new_text": "rate: f64,"}),
            json!({"path": "src/rate_limit.rs", "old_text": "fn does_not_exist()", "new_text": "x"}),
            json!({"path": "src/main.rs", "old_text": "", "new_text": "exists already"}),
        ]),
        vscode_like(),
    );
    let result = e
        .client
        .request("copilot/ask", json!({"question": "q"}))
        .unwrap();
    assert!(result["edits"].as_array().unwrap().is_empty());
    let results = e.tool_results(1);
    assert!(
        results[0].starts_with("Error: old_text occurs 2 times in src/rate_limit.rs"),
        "{}",
        results[0]
    );
    assert!(results[0].contains("include more surrounding lines"));
    assert!(
        results[1].starts_with("Error: old_text does not occur in src/rate_limit.rs"),
        "{}",
        results[1]
    );
    assert!(results[2].contains("already exists"), "{}", results[2]);
    e.client.shutdown();
}

#[test]
fn a_new_file_proposal_creates_it_through_the_workspace_edit_only() {
    let mut e = editor(
        propose_then_answer(vec![
            json!({"path": "tests/bucket.rs", "old_text": "", "new_text": "#[test]\nfn starts_full() {}\n", "title": "Add a bucket test"}),
        ]),
        vscode_like(),
    );
    let (uri, _) = e.open("src/rate_limit.rs");
    let result = e
        .client
        .request(
            "copilot/ask",
            json!({"question": "add a test", "textDocument": {"uri": uri}}),
        )
        .unwrap();
    let edit = &result["edits"][0];
    assert_eq!(edit["path"], "tests/bucket.rs");
    let changes = edit["edit"]["documentChanges"].as_array().unwrap();
    assert_eq!(changes[0]["kind"], "create");
    assert_eq!(changes[0]["options"]["overwrite"], false);
    assert_eq!(
        changes[1]["edits"][0]["newText"],
        "#[test]\nfn starts_full() {}\n"
    );
    assert!(!e.root.join("tests/bucket.rs").exists(), "nothing written");
    // Offered as a quick fix in the document the user asked from.
    let actions = e.code_actions(&uri, 0);
    assert_eq!(actions.len(), 1);
    assert_eq!(actions[0]["title"], "Copilot: Add a bucket test");
    e.client.shutdown();
}

#[test]
fn edits_to_tool_or_ci_configuration_say_so_and_are_never_preselected() {
    let mut e = editor(
        propose_then_answer(vec![
            json!({"path": ".github/workflows/ci.yml", "old_text": "", "new_text": "on: push\n", "title": "Add CI"}),
        ]),
        vscode_like(),
    );
    let (uri, _) = e.open("src/main.rs");
    let result = e
        .client
        .request(
            "copilot/ask",
            json!({"question": "q", "textDocument": {"uri": uri}}),
        )
        .unwrap();
    let title = result["edits"][0]["title"].as_str().unwrap();
    assert!(
        title.contains("changes tool or CI configuration"),
        "{title}"
    );
    let actions = e.code_actions(&uri, 0);
    assert_eq!(actions[0]["isPreferred"], false);
    let annotations = actions[0]["edit"]["changeAnnotations"].as_object().unwrap();
    let annotation = annotations.values().next().unwrap();
    assert!(annotation["description"]
        .as_str()
        .unwrap()
        .contains("tool or CI configuration"));
    assert_eq!(annotation["needsConfirmation"], true);
    e.client.shutdown();
}

#[test]
fn clients_without_edit_capabilities_still_get_document_changes_without_annotations() {
    // The contract fixes `documentChanges`; change annotations only go to clients that
    // support them. Files that are not open carry no version.
    let mut e = editor(
        propose_then_answer(vec![
            json!({"path": "src/config.rs", "old_text": OLD, "new_text": NEW}),
        ]),
        json!({}),
    );
    let result = e
        .client
        .request("copilot/ask", json!({"question": "q"}))
        .unwrap();
    let edit = &result["edits"][0]["edit"];
    assert!(
        edit.get("changeAnnotations").is_none_or(Value::is_null),
        "{edit:#}"
    );
    let uri = file_uri(&e.root.join("src/config.rs"));
    let change = &edit["documentChanges"][0];
    assert_eq!(change["textDocument"], json!({"uri": uri, "version": null}));
    let edits = change["edits"].as_array().unwrap();
    assert!(edits[0].get("annotationId").is_none());
    let text = std::fs::read_to_string(e.root.join("src/config.rs")).unwrap();
    assert_eq!(
        apply_text_edits(&text, edits, false),
        text.replacen(OLD, NEW, 1)
    );
    // Diagnostics for a file that is not open still carry correct ranges.
    let diags = e
        .client
        .notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri.as_str()
        });
    let hint = diags["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "suggested-edit")
        .unwrap()
        .clone();
    assert_eq!(
        hint["range"],
        json!({"start": {"line": 4, "character": 0}, "end": {"line": 5, "character": 0}})
    );
    e.client.shutdown();
}

/// The `citation` diagnostics of one publication for `uri`.
fn citation_diagnostics(published: &Value) -> Vec<Value> {
    published["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "citation")
        .cloned()
        .collect()
}

#[test]
fn citations_mark_their_first_line_and_follow_the_cited_text_as_the_document_changes() {
    let mut e = editor(
        vec![json!({"tool_calls": [call("fin", "answer", json!({
            "answer": "`Config::from_env` reads the environment.",
            "citations": [{"path": "src/config.rs", "line": 10, "end_line": 19, "note": "impl Config"}]
        }))]})],
        vscode_like(),
    );
    let (uri, text) = e.open("src/config.rs");
    let result = e
        .client
        .request(
            "copilot/ask",
            json!({"question": "how is the config read?"}),
        )
        .unwrap();
    // The ask result keeps the whole cited range...
    assert_eq!(result["citations"][0]["range"]["start"]["line"], 9);
    assert_eq!(result["citations"][0]["range"]["end"]["line"], 19);
    // ...the diagnostic marks only the line that names the place.
    let published = e
        .client
        .notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri.as_str()
        });
    let cited = citation_diagnostics(&published);
    assert_eq!(cited.len(), 1, "{published:#}");
    assert_eq!(
        cited[0]["range"],
        json!({"start": {"line": 9, "character": 0}, "end": {"line": 9, "character": 13}})
    );
    assert_eq!(cited[0]["message"], "impl Config");
    assert_eq!(
        cited[0]["data"],
        json!({"citation": 0, "line": 10, "endLine": 19})
    );

    // Two lines inserted above: the citation is republished two lines down.
    e.change(&uri, 2, json!([{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "// a\n// b\n"}]));
    let moved = e
        .client
        .notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri.as_str()
                && citation_diagnostics(p)
                    .first()
                    .is_some_and(|d| d["range"]["start"]["line"] == 11)
        });
    assert_eq!(
        citation_diagnostics(&moved)[0]["data"],
        json!({"citation": 0, "line": 12, "endLine": 21})
    );

    // Reopened from disk (`:e!`): the editor dropped its diagnostics, the server
    // publishes them again, back on the disk text's lines.
    let before = e.client.received("textDocument/publishDiagnostics").len();
    e.client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    e.client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 5, "text": text}}),
    );
    let reopened = e
        .client
        .notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri.as_str()
                && citation_diagnostics(p)
                    .first()
                    .is_some_and(|d| d["range"]["start"]["line"] == 9)
        });
    assert_eq!(citation_diagnostics(&reopened).len(), 1);
    assert!(e.client.received("textDocument/publishDiagnostics").len() > before);

    // The cited lines are deleted: the citation is dropped.
    e.change(&uri, 6, json!([{"range": {"start": {"line": 9, "character": 0}, "end": {"line": 19, "character": 0}}, "text": ""}]));
    e.client
        .notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri.as_str() && citation_diagnostics(p).is_empty()
        });
    e.client.shutdown();
}

#[test]
fn a_quick_fix_replaces_only_the_span_that_changes() {
    let old = "            port: read(\"TOLLBOOTH_PORT\", 8080),\n";
    let new = "            port: read(\"TOLLBOOTH_PORT\", 8000),\n";
    let mut e = editor(
        propose_then_answer(vec![
            json!({"path": "src/config.rs", "old_text": old, "new_text": new, "title": "Default to 8000"}),
        ]),
        vscode_like(),
    );
    let (uri, text) = e.open("src/config.rs");
    e.client
        .request(
            "copilot/ask",
            json!({"question": "change the default port"}),
        )
        .unwrap();
    let actions = e.code_actions(&uri, 13);
    assert_eq!(actions.len(), 1);
    let (_, edits) = single_document_edits(&actions[0]);
    assert_eq!(edits.len(), 1);
    // Only the differing digit: `8080` -> `8000` differs in its third char.
    assert_eq!(edits[0]["newText"], "0");
    assert_eq!(
        edits[0]["range"],
        json!({"start": {"line": 13, "character": 43}, "end": {"line": 13, "character": 44}})
    );
    assert_eq!(
        apply_text_edits(&text, &edits, false),
        text.replacen(old, new, 1)
    );
    e.client.shutdown();
}

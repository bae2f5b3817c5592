//! End-to-end: a workspace of several roots (docs/protocol.md section 10, "Several
//! roots"), through the command line and LSP. Every path is `<root name>/<path>`, the
//! sandbox admits each root and nothing between them, searches span the roots ranked as
//! one index, and the editor follows folders added and removed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use copilot_ls_test_support::fake_provider::FakeProvider;
use copilot_ls_test_support::lsp_client::{file_uri, LspClient};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");

/// `parent/backend` (Rust) and `parent/frontend` (TypeScript), a file between them in
/// `parent` that no tool may read, and a cache dir of the test's own.
struct Folders {
    _dir: tempfile::TempDir,
    parent: PathBuf,
    cache: PathBuf,
}

impl Folders {
    fn new() -> Folders {
        let dir = tempfile::tempdir().unwrap();
        let parent = dir.path().canonicalize().unwrap();
        // Written an hour ago: a file changed within the index's unsure window is read
        // again at the next refresh, which would hide what the refresh reads.
        let write = |path: &str, text: &str| {
            let path = parent.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(hour_ago).unwrap();
        };
        write(
            "backend/src/billing.rs",
            "/// Settles an invoice: the total with the tax rate applied.\npub fn settle_invoice(total: u64, rate: u64) -> u64 {\n    total + total * rate / 100\n}\n",
        );
        write("backend/src/main.rs", "mod billing;\n\nfn main() {\n    println!(\"{}\", billing::settle_invoice(100, 20));\n}\n");
        write("backend/.env", "TOKEN=abc\n");
        write(
            "frontend/src/cart.ts",
            "// The shopping cart shown in the browser.\nexport function renderCart(items: string[]): string {\n  return items.map((item) => `<li>${item}</li>`).join('');\n}\n\nexport function checkoutButton(): string {\n  return renderCart(['pay']);\n}\n",
        );
        write("frontend/AGENTS.md", "Run npm test before answering.\n");
        write("between.txt", "CANARY between the roots\n");
        // A link from a root to what lies between the roots.
        std::os::unix::fs::symlink(
            parent.join("between.txt"),
            parent.join("backend/src/peek.txt"),
        )
        .unwrap();
        std::fs::create_dir(parent.join("cache")).unwrap();
        Folders {
            cache: parent.join("cache"),
            parent,
            _dir: dir,
        }
    }

    fn root(&self, name: &str) -> PathBuf {
        self.parent.join(name)
    }

    /// `copilot-ls ARGS --workspace backend --workspace frontend`.
    fn run(&self, args: &[&str]) -> Output {
        let (backend, frontend) = (self.root("backend"), self.root("frontend"));
        let mut command = Command::new(BIN);
        command
            .args(args)
            .args(["--workspace", backend.to_str().unwrap()])
            .args(["--workspace", frontend.to_str().unwrap()])
            .current_dir(&self.parent)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("COPILOT_LS_CACHE_DIR", &self.cache);
        command.output().unwrap()
    }

    fn tool(&self, name: &str, args: Value) -> String {
        let output = self.run(&["tool", name, &args.to_string()]);
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

#[test]
fn every_path_is_under_its_roots_name_and_nothing_between_the_roots_is_reached() {
    let folders = Folders::new();
    assert_eq!(
        folders.tool("list_directory", json!({})),
        "(the workspace's 2 roots)\nbackend/\nfrontend/\n"
    );
    assert_eq!(
        folders.tool("list_directory", json!({"path": "frontend"})),
        "AGENTS.md\nsrc/\n"
    );
    let read = folders.tool(
        "read_file",
        json!({"path": "frontend/src/cart.ts", "start_line": 2, "end_line": 2}),
    );
    assert!(read.starts_with("2\texport function renderCart"), "{read}");
    // An absolute path inside a root is that root's.
    let absolute = folders.root("backend").join("src/billing.rs");
    let read = folders.tool(
        "read_file",
        json!({"path": absolute, "start_line": 2, "end_line": 2}),
    );
    assert!(read.starts_with("2\tpub fn settle_invoice"), "{read}");
    // A path without its root's name says which names there are.
    let missing = folders.tool("read_file", json!({"path": "src/cart.ts"}));
    assert!(
        missing.starts_with("Error: path is outside the workspace: src/cart.ts")
            && missing.contains("backend, frontend"),
        "{missing}"
    );
    // Nothing between the roots, no escape from one root into the other, no secrets.
    for path in [
        "between.txt",
        "backend/../between.txt",
        "backend/../frontend/src/cart.ts",
        "backend/.env",
        "backend/src/peek.txt",
    ] {
        let refused = folders.tool("read_file", json!({ "path": path }));
        assert!(refused.starts_with("Error: "), "{path}: {refused}");
        assert!(!refused.contains("CANARY"), "{path}: {refused}");
    }
    let between = folders.parent.join("between.txt");
    assert!(folders
        .tool("read_file", json!({ "path": between }))
        .starts_with("Error: path is outside the workspace"));
    let everywhere = folders.tool("search_code", json!({"pattern": "CANARY"}));
    assert_eq!(everywhere.trim_end(), "(no matches for CANARY)");
    // The searches span both roots.
    assert_eq!(
        folders.tool("find_files", json!({"pattern": "src/*"})),
        "backend/src/billing.rs\nbackend/src/main.rs\nfrontend/src/cart.ts\n"
    );
    let found = folders.tool(
        "search_code",
        json!({"pattern": "function|fn ", "regex": true}),
    );
    assert!(
        found.contains("backend/src/billing.rs:2:") && found.contains("frontend/src/cart.ts:2:"),
        "{found}"
    );
    let scoped = folders.tool(
        "search_code",
        json!({"pattern": "render", "path": "frontend/src"}),
    );
    assert!(scoped.starts_with("frontend/src/cart.ts:2:"), "{scoped}");
    let symbol = folders.tool("find_symbol", json!({"name": "renderCart"}));
    assert!(symbol.starts_with("frontend/src/cart.ts:2:"), "{symbol}");
    let uses = folders.tool("find_references", json!({"name": "settle_invoice"}));
    assert!(uses.contains("backend/src/main.rs:4:"), "{uses}");
    let outline = folders.tool("file_outline", json!({"path": "backend/src/billing.rs"}));
    assert!(outline.contains("settle_invoice"), "{outline}");
}

#[test]
fn index_json_reports_each_root_and_the_totals() {
    let folders = Folders::new();
    // The first folder alone first: adding the second never rebuilds it.
    let alone = Command::new(BIN)
        .args(["index", "--json", "--workspace"])
        .arg(folders.root("backend"))
        .env_clear()
        .env("COPILOT_LS_CACHE_DIR", &folders.cache)
        .output()
        .unwrap();
    let alone: Value = serde_json::from_slice(&alone.stdout).unwrap();
    assert_eq!(
        (alone["files"].as_u64(), alone.get("roots")),
        (Some(2), None),
        "{alone}"
    );
    let output = folders.run(&["index", "--json"]);
    assert!(output.status.success(), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let roots = report["roots"].as_array().unwrap();
    assert_eq!(roots.len(), 2);
    let files = |root: &Value| root["files"].as_u64().unwrap();
    assert_eq!(roots[0]["root"], folders.root("backend").to_str().unwrap());
    assert_eq!(roots[1]["root"], folders.root("frontend").to_str().unwrap());
    // backend: two sources (its `.env` is never indexed); frontend: a source and AGENTS.md.
    assert_eq!((files(&roots[0]), files(&roots[1])), (2, 2));
    assert_eq!(report["files"], 4);
    for key in ["chunks", "symbols", "filesRead", "bytes", "seconds"] {
        assert!(report[key].is_number(), "{key}: {report}");
    }
    assert_eq!(roots[0]["history"]["reason"], "no_repository");
    let read = |root: &Value| root["filesRead"].as_u64().unwrap();
    assert_eq!((read(&roots[0]), read(&roots[1])), (0, 2), "{report}");
    // Each root keeps its own index: the next run reads nothing again.
    let again: Value = serde_json::from_slice(&folders.run(&["index", "--json"]).stdout).unwrap();
    assert_eq!(again["filesRead"], 0, "{again}");
}

#[test]
fn the_doctor_checks_each_roots_index() {
    let folders = Folders::new();
    assert!(folders.run(&["index"]).status.success());
    let output = folders.run(&["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let index: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == "index")
        .map(|c| c["detail"].as_str().unwrap())
        .collect();
    assert_eq!(index.len(), 2, "{report}");
    assert!(
        index[0].starts_with(folders.root("backend").to_str().unwrap()),
        "{index:?}"
    );
    assert!(
        index[1].starts_with(folders.root("frontend").to_str().unwrap()),
        "{index:?}"
    );
}

#[test]
fn a_no_model_ask_cites_the_second_root_under_its_name() {
    let folders = Folders::new();
    let output = folders.run(&[
        "ask",
        "--json",
        "how is the shopping cart rendered in the browser",
    ]);
    assert!(output.status.success(), "{output:?}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let first = &result["citations"][0];
    assert_eq!(first["path"], "frontend/src/cart.ts", "{result}");
    assert_eq!(
        first["uri"],
        file_uri(&folders.root("frontend").join("src/cart.ts"))
    );
}

/// A word common in one root and rare in the other: ranked as one index over both, the
/// word that is rare in the whole workspace decides. (Each root ranked with its own
/// statistics would put `plain/odd.rs` first: there `widget` is in one file of ten.)
#[test]
fn a_word_rare_in_one_root_and_common_in_the_other_is_ranked_as_in_one_index() {
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().canonicalize().unwrap();
    let write = |path: &str, text: &str| {
        let path = parent.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    // `busy`: `widget` in every file, `gizmo` in five.
    for i in 0..20 {
        let gizmo = if i < 5 { " and a gizmo" } else { "" };
        write(
            &format!("busy/src/part{i:02}.rs"),
            &format!("// A widget part{gizmo}, number {i}.\npub const PART_{i}: u32 = {i};\n"),
        );
    }
    // `plain`: `widget` in one file of ten.
    write(
        "plain/src/odd.rs",
        "// A widget, once.\npub const ODD: u32 = 1;\n",
    );
    for i in 0..9 {
        write(
            &format!("plain/src/other{i}.rs"),
            &format!("// Nothing of note, number {i}.\npub const OTHER_{i}: u32 = {i};\n"),
        );
    }
    std::fs::create_dir(parent.join("cache")).unwrap();
    let locate = |roots: &[&str]| {
        let mut command = Command::new(BIN);
        command.args(["tool", "locate", r#"{"question": "widget gizmo"}"#]);
        for root in roots {
            command.args(["--workspace", parent.join(root).to_str().unwrap()]);
        }
        let output = command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("COPILOT_LS_CACHE_DIR", parent.join("cache"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        (text.lines().next().unwrap_or_default().to_string(), text)
    };
    // Alone, `plain` puts its one `widget` first: there the word is rare.
    let (first, text) = locate(&["plain"]);
    assert!(first.contains("src/odd.rs"), "{text}");
    // Over both roots `widget` is common and `gizmo` rare: a `gizmo` file leads, in
    // whichever order the roots are given.
    for roots in [["plain", "busy"], ["busy", "plain"]] {
        let (first, text) = locate(&roots);
        assert!(first.contains("busy/src/part0"), "{roots:?}: {text}");
    }
}

fn folder(path: &Path) -> Value {
    json!({"uri": file_uri(path), "name": path.file_name().unwrap().to_str().unwrap()})
}

#[test]
fn the_editor_asks_across_its_folders_and_follows_folders_added_and_removed() {
    let folders = Folders::new();
    let (backend, frontend) = (folders.root("backend"), folders.root("frontend"));
    let cart = frontend.join("src/cart.ts");
    let answer = |citations: Value| json!({"tool_calls": [{"id": "a", "name": "answer", "arguments": {"answer": "See the cart.", "citations": citations}}]});
    let fake = FakeProvider::start(json!({"steps": [
        {"tool_calls": [{"id": "r", "name": "read_file", "arguments": {"path": "frontend/src/cart.ts"}}]},
        answer(json!([{"path": "frontend/src/cart.ts", "line": 2, "end_line": 4}])),
        answer(json!([{"path": "frontend/src/cart.ts", "line": 6, "end_line": 8}])),
    ]}));
    let mut client = LspClient::spawn(
        Path::new(BIN),
        &folders.parent,
        &[("COPILOT_LS_CACHE_DIR", folders.cache.to_str().unwrap())],
    );
    let result = client
        .request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": file_uri(&backend),
                "workspaceFolders": [folder(&backend), folder(&frontend)],
                "capabilities": {},
                "initializationOptions": {"provider": "openai", "baseUrl": fake.openai_base_url(), "model": "m"},
            }),
        )
        .unwrap();
    assert_eq!(
        result["capabilities"]["workspace"]["workspaceFolders"],
        json!({"supported": true, "changeNotifications": true})
    );
    client.notify("initialized", json!({}));

    // A question about the second folder: the model reads it under its name, and the
    // citation lands on the file's own URI.
    let asked = client
        .request(
            "copilot/ask",
            json!({"question": "how is the cart rendered?"}),
        )
        .unwrap();
    assert_eq!(
        asked["citations"][0]["path"], "frontend/src/cart.ts",
        "{asked}"
    );
    assert_eq!(asked["citations"][0]["uri"], file_uri(&cart));
    assert!(
        fake.requests()[1].body.to_string().contains("renderCart"),
        "the file was read"
    );
    // The second folder's instructions reach the model.
    assert!(fake.requests()[0]
        .body
        .to_string()
        .contains("frontend/AGENTS.md"));
    let cart_uri = file_uri(&cart);
    client.notification("textDocument/publishDiagnostics", |p| {
        p["uri"] == cart_uri.as_str() && p["diagnostics"].as_array().is_some_and(|d| !d.is_empty())
    });

    // A folder added: the citation made before still points at its file, which the
    // editor now edits (one line added at the top): it follows the text.
    let extra = folders.parent.join("extra");
    std::fs::create_dir_all(extra.join("lib")).unwrap();
    std::fs::write(
        extra.join("lib/ledger.py"),
        "def post_ledger_entry(amount):\n    return amount\n",
    )
    .unwrap();
    client.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [folder(&extra)], "removed": []}}),
    );
    let text = std::fs::read_to_string(&cart).unwrap();
    client.notify("textDocument/didOpen", json!({"textDocument": {"uri": cart_uri, "languageId": "typescript", "version": 1, "text": text}}));
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": cart_uri, "version": 2}, "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "// moved\n"}]}),
    );
    client.notification("textDocument/publishDiagnostics", |p| {
        p["uri"] == cart_uri.as_str() && p["diagnostics"][0]["range"]["start"]["line"] == 2
    });
    // Asks go on over the roots as they are now.
    let asked = client
        .request(
            "copilot/ask",
            json!({"question": "and the checkout button?"}),
        )
        .unwrap();
    assert_eq!(
        asked["citations"][0]["path"], "frontend/src/cart.ts",
        "{asked}"
    );

    // The second folder removed: what was shown in it is withdrawn.
    client.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [], "removed": [folder(&frontend)]}}),
    );
    client.notification("textDocument/publishDiagnostics", |p| {
        p["uri"] == cart_uri.as_str() && p["diagnostics"].as_array().is_some_and(|d| d.is_empty())
    });
    let (status, _, _) = client.shutdown();
    assert!(status.success());
}

#[test]
fn the_editor_without_a_model_finds_places_in_a_folder_added_while_it_runs() {
    let folders = Folders::new();
    let backend = folders.root("backend");
    let mut client = LspClient::spawn(
        Path::new(BIN),
        &folders.parent,
        &[("COPILOT_LS_CACHE_DIR", folders.cache.to_str().unwrap())],
    );
    client.initialize(
        &backend,
        json!({"window": {"workDoneProgress": true}}),
        json!({}),
    );
    // Indexing ends (`$/progress` end), once for the first folder and once for the one
    // added: the ask below answers from a complete index.
    let indexed = |message: &Value| {
        message["method"] == "$/progress"
            && message["params"]["token"]
                .as_str()
                .is_some_and(|token| token.starts_with("copilot-ls/indexing"))
            && message["params"]["value"]["kind"] == "end"
    };
    client.wait_for(indexed);
    let extra = folders.parent.join("ledger");
    std::fs::create_dir_all(extra.join("lib")).unwrap();
    std::fs::write(
        extra.join("lib/ledger.py"),
        "def post_ledger_entry(amount):\n    \"\"\"Posts one entry to the general ledger.\"\"\"\n    return amount\n",
    )
    .unwrap();
    client.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [folder(&extra)], "removed": []}}),
    );
    client.wait_for(indexed);
    let asked = client
        .request(
            "copilot/ask",
            json!({"question": "where is an entry posted to the general ledger"}),
        )
        .unwrap();
    let paths: Vec<&str> = asked["citations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["path"].as_str())
        .collect();
    assert_eq!(
        paths.first().copied(),
        Some("ledger/lib/ledger.py"),
        "{asked}"
    );
    // The first folder is shown under its name now too.
    let asked = client
        .request(
            "copilot/ask",
            json!({"question": "where is the invoice settled with the tax rate"}),
        )
        .unwrap();
    assert_eq!(
        asked["citations"][0]["path"], "backend/src/billing.rs",
        "{asked}"
    );
    let (status, _, _) = client.shutdown();
    assert!(status.success());
}

#[test]
fn a_folder_that_cannot_be_a_root_is_told_and_the_others_still_work() {
    let folders = Folders::new();
    let (backend, missing) = (folders.root("backend"), folders.parent.join("missing"));
    let mut client = LspClient::spawn(
        Path::new(BIN),
        &folders.parent,
        &[("COPILOT_LS_CACHE_DIR", folders.cache.to_str().unwrap())],
    );
    client
        .request(
            "initialize",
            json!({
                "processId": null,
                "workspaceFolders": [folder(&backend), {"uri": file_uri(&missing), "name": "missing"}],
                "capabilities": {"window": {"workDoneProgress": true}},
            }),
        )
        .unwrap();
    client.notify("initialized", json!({}));
    // The ask below answers from the whole index: its build's progress ends first.
    client.wait_for(|message| {
        message["method"] == "$/progress" && message["params"]["value"]["kind"] == "end"
    });
    let told = client.notification("window/showMessage", |p| {
        p["message"].as_str().is_some_and(|m| m.contains("missing"))
    });
    assert_eq!(told["type"], 1, "an error: {told}");
    // One root left: its paths are its own, as with one folder.
    let asked = client
        .request(
            "copilot/ask",
            json!({"question": "where is the invoice settled with the tax rate"}),
        )
        .unwrap();
    assert_eq!(asked["citations"][0]["path"], "src/billing.rs", "{asked}");
    let (status, _, _) = client.shutdown();
    assert!(status.success());
}

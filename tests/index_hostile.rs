//! End-to-end: hostile workspaces. A FIFO inside the workspace is an `Error:` for the
//! tools (never a hang), through `copilot-ls tool` and through an ask.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use copilot_ls_test_support::fake_provider::FakeProvider;
use copilot_ls_test_support::lsp_client::LspClient;
use copilot_ls_test_support::process::{run_bounded, Run};
use copilot_ls_test_support::workspace::temp_workspace;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");
/// A hang fails the test after this long instead of blocking the suite.
const LIMIT: Duration = Duration::from_secs(60);

/// Runs the binary in a clean environment with a private cache dir; fails the test if
/// it has not exited within `LIMIT`.
fn run(args: &[&str], env: &[(&str, &str)], cache: &Path) -> Run {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("COPILOT_LS_CACHE_DIR", cache);
    for (key, value) in env {
        command.env(key, value);
    }
    run_bounded(command, LIMIT)
        .unwrap_or_else(|| panic!("copilot-ls {args:?} did not exit within {LIMIT:?}"))
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

#[test]
fn a_fifo_is_an_error_for_every_tool_from_the_command_line() {
    let ws = temp_workspace();
    let cache = tempfile::tempdir().unwrap();
    mkfifo(&ws.path().join("src/pipe.rs"));
    let dir = ws.path().to_str().unwrap();
    for (tool, args) in [
        ("read_file", json!({"path": "src/pipe.rs"})),
        (
            "propose_edit",
            json!({"path": "src/pipe.rs", "old_text": "a", "new_text": "b"}),
        ),
        ("read_open_buffer", json!({"path": "src/pipe.rs"})),
    ] {
        let out = run(
            &["tool", tool, &args.to_string(), "--workspace", dir],
            &[],
            cache.path(),
        );
        assert_eq!(out.code, Some(1), "{tool}: {}", out.stdout);
        assert!(out.stdout.starts_with("Error: "), "{tool}: {}", out.stdout);
    }
    let out = run(
        &[
            "tool",
            "read_file",
            r#"{"path":"src/pipe.rs"}"#,
            "--workspace",
            dir,
        ],
        &[],
        cache.path(),
    );
    assert!(out.stdout.contains("FIFO"), "{}", out.stdout);
    // The walkers skip it; searching and listing still work around it.
    let out = run(
        &[
            "tool",
            "search_code",
            r#"{"pattern":"TOLLBOOTH_PORT"}"#,
            "--workspace",
            dir,
        ],
        &[],
        cache.path(),
    );
    assert_eq!(out.code, Some(0));
    assert!(out.stdout.contains("src/config.rs:14:"), "{}", out.stdout);
    let out = run(
        &[
            "tool",
            "search_code",
            r#"{"pattern":"x","path":"src/pipe.rs"}"#,
            "--workspace",
            dir,
        ],
        &[],
        cache.path(),
    );
    assert!(!out.stdout.contains("pipe.rs:"), "{}", out.stdout);
}

#[test]
fn an_ask_whose_model_reads_a_fifo_gets_errors_and_answers() {
    let ws = temp_workspace();
    let cache = tempfile::tempdir().unwrap();
    mkfifo(&ws.path().join("src/pipe.rs"));
    let fake = FakeProvider::start(json!({"steps": [
        {"tool_calls": [
            {"id": "1", "name": "read_file", "arguments": {"path": "src/pipe.rs"}},
            {"id": "2", "name": "propose_edit", "arguments": {"path": "src/pipe.rs", "old_text": "a", "new_text": "b"}}
        ]},
        {"tool_calls": [{"id": "3", "name": "answer", "arguments": {"answer": "It is a pipe.", "citations": []}}]}
    ]}));
    let base_url = fake.openai_base_url();
    let out = run(
        &[
            "ask",
            "--json",
            "--workspace",
            ws.path().to_str().unwrap(),
            "what is in src/pipe.rs?",
        ],
        &[
            ("COPILOT_LS_PROVIDER", "openai"),
            ("COPILOT_LS_BASE_URL", base_url.as_str()),
            ("OPENAI_API_KEY", "sk-fifo"),
        ],
        cache.path(),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result: Value = serde_json::from_str(&out.stdout).expect("one AskResult");
    assert_eq!(result["answer"], "It is a pipe.");
    let steps = result["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{result}");
    assert!(steps.iter().all(|s| s["ok"] == false), "{result}");
    assert!(result["edits"].as_array().unwrap().is_empty());
    // The model was told why, in both results.
    let requests = fake.requests();
    let second = requests[1].body.to_string();
    assert_eq!(
        second.matches("not a regular file (a FIFO)").count(),
        2,
        "{second}"
    );
}

#[test]
fn a_fifo_through_the_editor_is_an_error_not_a_hang() {
    let ws = temp_workspace();
    let cache = tempfile::tempdir().unwrap();
    mkfifo(&ws.path().join("src/pipe.rs"));
    let fake = FakeProvider::start(json!({"steps": [
        {"tool_calls": [
            {"id": "1", "name": "read_file", "arguments": {"path": "src/pipe.rs"}},
            {"id": "2", "name": "propose_edit", "arguments": {"path": "src/pipe.rs", "old_text": "a", "new_text": "b"}}
        ]},
        {"tool_calls": [{"id": "3", "name": "answer", "arguments": {"answer": "done", "citations": []}}]}
    ]}));
    let cache_dir = cache.path().to_str().unwrap().to_string();
    let mut client = LspClient::spawn(
        Path::new(BIN),
        ws.path(),
        &[("KEY", "sk-x"), ("COPILOT_LS_CACHE_DIR", &cache_dir)],
    );
    client.initialize(
        ws.path(),
        json!({}),
        json!({"provider": "openai", "baseUrl": fake.openai_base_url(), "model": "m", "apiKeyEnv": "KEY"}),
    );
    let result = client
        .request("copilot/ask", json!({"question": "what is in the pipe?"}))
        .expect("an AskResult");
    assert_eq!(result["answer"], "done");
    assert!(result["steps"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["ok"] == false));
    client.shutdown();
}

//! End-to-end against a real local model server: llama.cpp's `llama-server` running the
//! tiny Gemma 3 270M, started on loopback by `scripts/llama_server.sh` (the only way this
//! runs: it sets `COPILOT_LS_LOCAL_SERVER_URL`, and without it every test fails). One ask
//! through `copilot-ls ask --json` (not streamed) and one over LSP (streamed), each
//! through a recording proxy: every request must succeed, every reply decode, every
//! complete tool call the server made be executed and answered, and the ask end with a
//! `stopReason`. The model is tiny, so the answer's quality is not checked.

#[path = "local_server/check.rs"]
mod check;
#[path = "local_server/proxy.rs"]
mod proxy;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use copilot_ls_test_support::lsp_client::LspClient;
use copilot_ls_test_support::workspace::temp_workspace;
use serde_json::{json, Value};

use proxy::RecordingProxy;

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");
const URL_VAR: &str = "COPILOT_LS_LOCAL_SERVER_URL";
/// Small, to keep CI time down: the checks are about the protocol.
const MAX_STEPS: u64 = 3;
const MAX_OUTPUT_TOKENS: u64 = 256;
/// One provider call on 2 cores with a cold prompt cache takes well under this.
const REQUEST_TIMEOUT_SECS: u64 = 240;
/// A whole ask: every step at its timeout, plus slack.
const ASK_TIMEOUT: Duration = Duration::from_secs(REQUEST_TIMEOUT_SECS * (MAX_STEPS + 1));
const QUESTION: &str =
    "Where are the tokens of the rate limiter refilled? Search the code, then answer.";

/// The server's root URL (`http://127.0.0.1:PORT`), which only the script provides.
fn server_url() -> String {
    std::env::var(URL_VAR).unwrap_or_else(|_| {
        panic!(
            "{URL_VAR} is not set: this test needs a real llama-server; run it with `bash scripts/llama_server.sh`"
        )
    })
}

/// The model name the server answers to (the script's `--alias`).
fn model() -> String {
    std::env::var("COPILOT_LS_LOCAL_SERVER_MODEL").unwrap_or_else(|_| "gemma".to_string())
}

fn assert_protocol(proxy: &RecordingProxy, result: &Value) {
    if let Err(report) = check::check_ask(&proxy.exchanges(), result) {
        panic!("protocol check failed:\n{report}\nAskResult: {result:#}");
    }
}

#[test]
fn cli_ask_against_llama_server_completes_without_a_protocol_error() {
    let proxy = RecordingProxy::start(&server_url());
    let ws = temp_workspace();
    let output = Command::new(BIN)
        .args(["ask", "--json", "--max-steps", &MAX_STEPS.to_string()])
        .arg("--workspace")
        .arg(ws.path())
        .arg(QUESTION)
        .current_dir(ws.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", std::env::var("HOME").unwrap_or_default())
        .env("COPILOT_LS_LOG", "debug")
        .env("COPILOT_LS_PROVIDER", "openai")
        .env("COPILOT_LS_BASE_URL", proxy.base_url())
        .env("COPILOT_LS_MODEL", model())
        .env("COPILOT_LS_STREAM", "false")
        .env(
            "COPILOT_LS_MAX_OUTPUT_TOKENS",
            MAX_OUTPUT_TOKENS.to_string(),
        )
        .env("COPILOT_LS_TIMEOUT_SECS", REQUEST_TIMEOUT_SECS.to_string())
        .output()
        .expect("run copilot-ls ask");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "ask failed ({}):\nstderr:\n{stderr}\nexchanges: {:#?}",
        output.status,
        proxy.exchanges()
    );
    let result: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is not one AskResult ({e}): {stdout}"));
    assert_protocol(&proxy, &result);
    for exchange in proxy.exchanges() {
        assert_eq!(exchange.request["stream"], false, "stream: false is sent");
        assert_eq!(exchange.request["max_tokens"], MAX_OUTPUT_TOKENS);
    }
}

#[test]
fn lsp_ask_against_llama_server_completes_without_a_protocol_error() {
    let proxy = RecordingProxy::start(&server_url());
    let ws = temp_workspace();
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[]);
    client.initialize(
        ws.path(),
        json!({"window": {"workDoneProgress": true}}),
        json!({
            "provider": "openai",
            "baseUrl": proxy.base_url(),
            "model": model(),
            "maxSteps": MAX_STEPS,
            "maxOutputTokens": MAX_OUTPUT_TOKENS,
            "requestTimeoutSecs": REQUEST_TIMEOUT_SECS,
        }),
    );
    let id = client.send_request(
        "copilot/ask",
        json!({"question": QUESTION, "workDoneToken": "work", "partialResultToken": "partial"}),
    );
    let result = client
        .response_within(id, ASK_TIMEOUT)
        .unwrap_or_else(|error| {
            panic!(
                "copilot/ask failed: {error}\nexchanges: {:#?}\nstderr:\n{}",
                proxy.exchanges(),
                client.stderr.lock().unwrap()
            )
        });
    assert_protocol(&proxy, &result);
    for exchange in proxy.exchanges() {
        assert_eq!(exchange.request["stream"], true, "streamed by default");
        assert_eq!(exchange.request["max_tokens"], MAX_OUTPUT_TOKENS);
    }
    let errors: Vec<Value> = client
        .received("window/showMessage")
        .into_iter()
        .filter(|m| m["type"] == 1)
        .collect();
    assert!(errors.is_empty(), "configuration errors: {errors:#?}");
    let (status, stderr, _) = client.shutdown();
    assert!(status.success(), "server exit {status}; stderr:\n{stderr}");
}

//! What the editor's model bridge costs (contract v5, section 11): the same scripted ask,
//! a `read_file` turn then a streamed answer, once through the fake provider over HTTP
//! (SSE) and once through `copilot/model` answered by this process as VS Code's bridge
//! would (deltas on the call's token, then the reply). The two servers run side by side
//! and the asks alternate between them, so the machine's noise falls on both. Printed:
//! the time from sending `copilot/ask` to its first streamed text delta, and to its
//! reply, p50 and p90 over the runs, and the editor's minus HTTP's.
//!
//! `cargo run --release -p copilot-ls --example editor_model_latency [-- --runs N]`
//! (build the binary first: `cargo build --release --bin copilot-ls`; the debug binary is
//! used when there is no release one).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use copilot_ls_test_support::fake_provider::FakeProvider;
use copilot_ls_test_support::lsp_client::LspClient;
use serde_json::json;

const ANSWER: &str = "Tokens are refilled lazily: each call to try_acquire first adds the \
                      tokens earned since the last refill, capped at the bucket's capacity \
                      (src/rate_limit.rs:35).";
/// The answer's text in the pieces a model streams it in.
const PIECES: usize = 12;

fn pieces() -> Vec<String> {
    let chars: Vec<char> = ANSWER.chars().collect();
    chars
        .chunks(chars.len().div_ceil(PIECES))
        .map(|c| c.iter().collect())
        .collect()
}

fn percentile(values: &mut [Duration], p: f64) -> Duration {
    values.sort();
    values[((values.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One ask: (time to the first text delta, time to the reply). With `editor`, this
/// process answers the server's model calls as the editor's bridge would.
fn ask(client: &mut LspClient, run: usize, editor: bool) -> (Duration, Duration) {
    let token = format!("ask-{run}");
    let started = Instant::now();
    let id = client.send_request(
        "copilot/ask",
        json!({"question": "How are tokens refilled?", "partialResultToken": token}),
    );
    let mut first_delta = None;
    let mut turn = 0;
    loop {
        let message = client.wait_for(|m| {
            (m["method"] == "copilot/model" && m.get("id").is_some())
                || (m["method"] == "$/progress"
                    && m["params"]["token"] == token.as_str()
                    && m["params"]["value"]["text"].is_string())
                || (m["id"] == json!(id) && m.get("method").is_none())
        });
        if message["method"] == "$/progress" {
            first_delta.get_or_insert_with(|| started.elapsed());
            continue;
        }
        if message["method"] == "copilot/model" {
            assert!(editor);
            turn += 1;
            let call_token = message["params"]["partialResultToken"].clone();
            let result = if turn == 1 {
                json!({"model": "m", "text": "", "stopReason": "tool_calls", "toolCalls": [
                    {"id": "r1", "name": "read_file", "arguments": {"path": "src/rate_limit.rs"}}]})
            } else {
                for piece in pieces() {
                    client.notify(
                        "$/progress",
                        json!({"token": call_token, "value": {"text": piece}}),
                    );
                }
                json!({"model": "m", "text": ANSWER, "toolCalls": [], "stopReason": "end"})
            };
            client.reply(&message["id"], Ok(result));
            continue;
        }
        assert!(message.get("error").is_none(), "{message}");
        let done = started.elapsed();
        return (first_delta.expect("a streamed delta"), done);
    }
}

#[allow(clippy::print_stdout)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(50);
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let workspace = repo.join("fixtures/workspace");
    let release = repo.join("target/release/copilot-ls");
    let binary = if release.exists() {
        release
    } else {
        repo.join("target/debug/copilot-ls")
    };
    println!("binary: {}", binary.display());

    // HTTP: the fake provider plays the same two turns for every ask, streamed as SSE.
    let mut steps = Vec::new();
    for _ in 0..runs + 1 {
        steps.push(json!({"tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "src/rate_limit.rs"}}]}));
        steps.push(json!({"text": ANSWER}));
    }
    let fake = FakeProvider::start(json!({ "steps": steps }));
    let mut http = LspClient::spawn(&binary, &workspace, &[]);
    http.initialize(
        &workspace,
        json!({}),
        json!({"provider": "openai", "baseUrl": fake.openai_base_url(), "model": "m"}),
    );
    let mut editor = LspClient::spawn(&binary, &workspace, &[]);
    editor.answer_myself("copilot/model");
    editor.initialize(
        &workspace,
        json!({"experimental": {"copilotEditorModels": true}}),
        json!({"editorModels": [{"id": "m", "name": "M", "vendor": "bench", "maxInputTokens": 100000}]}),
    );
    // One ask each first: the index is built and the code paths are warm.
    ask(&mut http, 0, false);
    ask(&mut editor, 0, true);

    let (mut http_first, mut http_done, mut editor_first, mut editor_done) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for run in 1..=runs {
        let (first, done) = ask(&mut http, run, false);
        http_first.push(first);
        http_done.push(done);
        let (first, done) = ask(&mut editor, run, true);
        editor_first.push(first);
        editor_done.push(done);
    }
    let row = |name: &str, values: &mut Vec<Duration>| {
        let (p50, p90) = (percentile(values, 0.5), percentile(values, 0.9));
        println!("{name:28} p50 {:7.2} ms   p90 {:7.2} ms", ms(p50), ms(p90));
        p50
    };
    let hf = row("http: first text delta", &mut http_first);
    let ef = row("editor: first text delta", &mut editor_first);
    let hd = row("http: whole answer", &mut http_done);
    let ed = row("editor: whole answer", &mut editor_done);
    println!(
        "editor minus http, p50 over {runs} asks: first delta {:+.2} ms, whole answer {:+.2} ms (target: <= +20 ms each)",
        ms(ef) - ms(hf),
        ms(ed) - ms(hd)
    );
    http.shutdown();
    editor.shutdown();
}

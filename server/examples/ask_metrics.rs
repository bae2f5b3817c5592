//! Measures what an ask costs, end to end through the real binary over stdio against the
//! scripted fake provider (which answers instantly, so the times are the server's own):
//! model calls and tool steps per ask, bytes sent to the provider per ask, time to the
//! first progress report and to the reply.
//!
//! `cargo run --release -p copilot-ls --example ask_metrics [-- --workspace DIR --runs N]`
//! (build the binary first: `cargo build --release --bin copilot-ls`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use copilot_ls_test_support::fake_provider::FakeProvider;
use copilot_ls_test_support::lsp_client::LspClient;
use serde_json::{json, Value};

fn script() -> Value {
    let call =
        |id: &str, name: &str, args: Value| json!({"id": id, "name": name, "arguments": args});
    json!({"steps": [
        {"tool_calls": [call("1", "search_code", json!({"pattern": "fn refill"})), call("2", "find_files", json!({"pattern": "**/*.rs"}))]},
        {"tool_calls": [call("3", "read_file", json!({"path": "src/rate_limit.rs"}))]},
        {"tool_calls": [call("4", "answer", json!({"answer": "Tokens refill in src/rate_limit.rs:35-40.", "citations": [{"path": "src/rate_limit.rs", "line": 35, "end_line": 40}]}))]}
    ]})
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

#[allow(clippy::print_stdout)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let workspace = flag("--workspace")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("fixtures/workspace"));
    let runs: usize = flag("--runs").and_then(|n| n.parse().ok()).unwrap_or(20);
    let binary = repo.join("target/release/copilot-ls");
    let binary = if binary.exists() {
        binary
    } else {
        repo.join("target/debug/copilot-ls")
    };

    let mut first_progress = Vec::new();
    let mut total = Vec::new();
    let mut bytes = Vec::new();
    let mut calls = 0;
    let mut steps = 0;
    for run in 0..runs {
        let fake = FakeProvider::start(script());
        let mut client = LspClient::spawn(&binary, &workspace, &[]);
        client.initialize(
            &workspace,
            json!({}),
            json!({"provider": "openai", "baseUrl": fake.openai_base_url(), "model": "m"}),
        );
        let token = format!("t{run}");
        let started = Instant::now();
        let id = client.send_request("copilot/ask", json!({"question": "How does the token bucket refill its tokens?", "workDoneToken": token}));
        client.notification("$/progress", |p| {
            p["token"] == token.as_str() && p["value"]["kind"] == "report"
        });
        first_progress.push(started.elapsed());
        let result = client.response(id).expect("ask succeeds");
        total.push(started.elapsed());
        let requests = fake.requests();
        calls = requests.len();
        steps = result["steps"].as_array().map_or(0, Vec::len);
        bytes.push(
            requests
                .iter()
                .map(|r| r.body.to_string().len())
                .sum::<usize>(),
        );
        client.shutdown();
    }
    println!("binary: {}", binary.display());
    println!("workspace: {}", workspace.display());
    println!("runs: {runs}");
    println!("model calls per ask: {calls}, tool steps per ask: {steps}");
    println!(
        "bytes sent to the provider per ask: {} (first request: context + tool schemas)",
        bytes[0]
    );
    println!(
        "time to first progress report (median): {:?}",
        median(first_progress)
    );
    println!("time to reply (median): {:?}", median(total));
}

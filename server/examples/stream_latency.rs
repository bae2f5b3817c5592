//! Measures how soon the first streamed `text` delta leaves the server after the
//! provider's first token: the real binary over stdio, `copilot/ask` with a
//! `partialResultToken`, against the fake provider streaming slowly (a pause before every
//! event). The fake timestamps the flush of its first event carrying text; the client
//! timestamps the arrival of the first `AskDelta`. Their difference bounds the server's
//! own delay from above (it includes the loopback socket, the stdout pipe and the test
//! client's reader thread).
//!
//! `cargo run --release -p copilot-ls --example stream_latency [-- --runs N]`
//! (build the binary first: `cargo build --release --bin copilot-ls`; the debug binary is
//! used when there is no release one).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use copilot_ls_test_support::fake_provider::FakeProvider;
use copilot_ls_test_support::lsp_client::LspClient;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);

fn percentile(values: &mut [Duration], p: f64) -> Duration {
    values.sort();
    let index = ((values.len() - 1) as f64 * p).round() as usize;
    values[index]
}

#[allow(clippy::print_stdout)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let workspace = repo.join("fixtures/workspace");
    let release = repo.join("target/release/copilot-ls");
    let binary = if release.exists() {
        release
    } else {
        repo.join("target/debug/copilot-ls")
    };
    println!("binary: {}", binary.display());
    let text = "Tokens are refilled lazily: each call to try_acquire first adds the tokens \
                earned since the last refill, capped at the bucket's capacity.";
    for kind in ["openai", "anthropic"] {
        let mut latencies = Vec::new();
        for run in 0..runs {
            let fake = FakeProvider::start(json!({"steps": [
                {"text": text, "chunk_delay_ms": 30},
            ]}));
            let base_url = if kind == "openai" {
                fake.openai_base_url()
            } else {
                fake.anthropic_base_url()
            };
            let mut client = LspClient::spawn(&binary, &workspace, &[]);
            client.initialize(
                &workspace,
                json!({}),
                json!({"provider": kind, "baseUrl": base_url, "model": "m"}),
            );
            let token = format!("stream-{run}");
            let id = client.send_request(
                "copilot/ask",
                json!({"question": "How are tokens refilled?", "partialResultToken": token}),
            );
            client.notification("$/progress", |p| {
                p["token"] == token.as_str() && p["value"]["text"].is_string()
            });
            let received = Instant::now();
            let first_token = fake
                .first_output_at(0, WAIT)
                .expect("the fake streamed text");
            latencies.push(received.saturating_duration_since(first_token));
            client.response(id).expect("the ask succeeds");
            client.shutdown();
        }
        let median = percentile(&mut latencies, 0.5);
        let p90 = percentile(&mut latencies, 0.9);
        let max = percentile(&mut latencies, 1.0);
        println!(
            "{kind:9} first text delta after the provider's first token: median {:.2} ms, p90 {:.2} ms, max {:.2} ms ({runs} runs)",
            median.as_secs_f64() * 1000.0,
            p90.as_secs_f64() * 1000.0,
            max.as_secs_f64() * 1000.0,
        );
    }
}

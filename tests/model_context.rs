//! End-to-end: the chunks a model is shown in its first message show as many files as
//! they can (issue #23 item 4), through the real binary over stdio against the fake
//! provider. One file matches the question in many places and a second file in one;
//! the second file's chunk is shown before the first file's further chunks, and a test
//! file that matches waits with those.

use std::path::Path;
use std::time::Duration;

use copilot_ls_test_support::fake_provider::FakeProvider;
use copilot_ls_test_support::lsp_client::LspClient;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");
const WAIT: Duration = Duration::from_secs(30);

/// A ledger module whose every function is about zebra quotas: the retrieval's first
/// hits are all in it.
fn ledger() -> String {
    (0..8)
        .map(|i| {
            format!(
                "/// Books zebra quota {i} in the ledger: the zebra quota ledger entry.\n\
                 pub fn book_zebra_quota_{i}(ledger: &mut Ledger) {{\n    \
                 ledger.zebra_quota += {i}; // zebra quota ledger\n}}\n\n"
            )
        })
        .collect()
}

const AUDIT: &str = "\
/// Audits the books once a night.
pub fn nightly_audit(books: &Books) -> bool {
    let checked = books.entries.len();
    // The zebra quota must never go negative.
    books.zebra >= 0 && checked > 0
}
";

const TEST: &str = "\
#[test]
fn zebra_quota_ledger_books_quota() {
    // zebra quota ledger zebra quota ledger
    assert!(book_zebra_quota_1(&mut Ledger::default()));
}
";

#[test]
fn a_model_is_shown_a_chunk_of_each_matching_file_before_a_second_of_any() {
    let ws = tempfile::tempdir().unwrap();
    for (path, text) in [
        ("src/ledger.rs", ledger()),
        ("src/audit.rs", AUDIT.to_string()),
        ("tests/ledger_test.rs", TEST.to_string()),
    ] {
        let path = ws.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let fake = FakeProvider::start(json!({"steps": [{"text": "ok"}]}));
    let init = json!({
        "provider": "openai", "baseUrl": fake.openai_base_url(), "model": "fake-model",
        "apiKeyEnv": "TEST_PROVIDER_KEY"
    });
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[("TEST_PROVIDER_KEY", "k")]);
    client.initialize(ws.path(), json!({}), init);
    client
        .request(
            "copilot/ask",
            json!({"question": "Where is the zebra quota booked in the ledger?"}),
        )
        .unwrap();
    let requests = fake.wait_for_requests(1, WAIT);
    let messages = requests[0].body["messages"].as_array().unwrap().clone();
    let user: &Value = messages.last().unwrap();
    let user = user["content"].as_str().unwrap();
    // The shown chunks' headers (`path:first-last`), in order.
    let shown: Vec<&str> = user
        .lines()
        .filter(|line| line.starts_with("src/") || line.starts_with("tests/"))
        .map(|line| line.split(':').next().unwrap())
        .collect();
    assert_eq!(shown.first(), Some(&"src/ledger.rs"), "{user}");
    assert_eq!(shown.get(1), Some(&"src/audit.rs"), "{user}");
    assert_eq!(shown.len(), 6, "{user}");
    let test_at = shown.iter().position(|p| *p == "tests/ledger_test.rs");
    assert!(
        test_at.is_none_or(|at| at >= 2),
        "the test waits with the second places: {user}"
    );
    client.shutdown();
}

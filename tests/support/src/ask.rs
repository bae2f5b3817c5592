//! `copilot-ls ask --json` as a new user runs it with no model: a clean environment, a
//! cache of its own, and the distinct files the answer cites.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// One `ask --json` in `workspace` with `provider: none`, the environment cleared but
/// for `PATH` and `env`, on a fresh cache: its `AskResult`.
pub fn ask_without_model(
    binary: &Path,
    workspace: &Path,
    question: &str,
    env: &[(&str, &str)],
) -> Value {
    let cache = tempfile::tempdir().unwrap();
    let output = Command::new(binary)
        .args(["ask", "--json", "--workspace"])
        .arg(workspace)
        .arg(question)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("COPILOT_LS_PROVIDER", "none")
        .env("COPILOT_LS_CACHE_DIR", cache.path())
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).expect("one AskResult")
}

/// The distinct files an `AskResult` cites, in their order.
pub fn cited_files(result: &Value) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for citation in result["citations"].as_array().unwrap() {
        let path = citation["path"].as_str().unwrap().to_string();
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

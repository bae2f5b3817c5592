//! Every reply recorded from real local OpenAI-compatible servers
//! (`fixtures/providers/local-servers/`: llama-cpp-python and llama-server) through the
//! decoders and the retry policy, so a server's quirk that once broke an ask stays fixed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::openai::{decode_response, OpenAiStream};
use super::retry::{is_retryable, Failure};
use super::sse::decode_all;
use super::{Decoded, FinishReason, ProviderError};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/providers/local-servers")
}

/// The HTTP status on the first line of the reply's `.headers` file. A few streams were
/// recorded without their headers (the `W-`/`X-` samples): those were 200s.
fn status(reply: &Path) -> Option<u16> {
    let headers = reply.with_extension("headers");
    if !headers.exists() {
        return Some(200);
    }
    let text = std::fs::read_to_string(&headers).unwrap_or_default();
    text.lines().next()?.split(' ').nth(1)?.parse().ok()
}

fn read(relative: &str) -> Vec<u8> {
    let path = root().join(relative);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn whole(relative: &str) -> Decoded {
    decode_response(&read(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

fn streamed(relative: &str) -> Result<Decoded, ProviderError> {
    decode_all(&read(relative), Box::<OpenAiStream>::default())
}

fn complete_json(arguments: &str) -> bool {
    serde_json::from_str::<Value>(arguments).is_ok()
}

/// Every recorded reply (`.json` or `.sse`, not a request), recursively.
fn replies(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            replies(&path, found);
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let is_reply = (name.ends_with(".sse") || name.ends_with(".json"))
            && !name.ends_with(".request.json")
            && name != "tools.json";
        if is_reply {
            found.push(path);
        }
    }
}

#[test]
fn every_recorded_reply_decodes_or_is_classified() {
    let mut found = Vec::new();
    replies(&root(), &mut found);
    found.sort();
    assert_eq!(found.len(), 28, "{found:?}");
    for path in &found {
        let label = path.strip_prefix(root()).unwrap().display().to_string();
        let body = std::fs::read(path).unwrap();
        match status(path) {
            Some(200) if path.extension().unwrap() == "json" => {
                decode_response(&body).unwrap_or_else(|e| panic!("{label}: {e}"));
            }
            Some(200) if body.is_empty() => {
                // The empty 200 stream: the transport reruns it without streaming.
                assert!(label.contains("D-tools-auto-stream"), "{label}");
            }
            Some(200) => match decode_all(&body, Box::<OpenAiStream>::default()) {
                Ok(_) => {}
                // Recorded until the client gave up on a model that never stopped.
                Err(ProviderError::StreamCut(_)) => {
                    assert!(label.starts_with("llama-server/chatml-fallback"), "{label}");
                }
                Err(e) => panic!("{label}: {e}"),
            },
            Some(500) => {
                let text = String::from_utf8_lossy(&body);
                let retried = is_retryable(Failure::Status {
                    status: 500,
                    body: &text,
                });
                // A validation failure can never pass; the template error of sample I
                // cannot be told from a passing fault by its body, so it is retried
                // (and no longer provoked: the tool-call turn's content is `""`).
                assert_eq!(retried, !text.contains("validation errors"), "{label}");
            }
            other => panic!("{label}: unexpected status {other:?}"),
        }
    }
}

#[test]
fn llama_cpp_python_nulls_mean_absent() {
    // First delta: `"content": null, "function_call": null, "tool_calls": null`.
    let forced = streamed("llama-cpp-python/E-tools-forced-stream.sse").unwrap();
    assert_eq!(forced.finish, FinishReason::ToolCalls);
    assert_eq!(forced.turn.text, "");
    let calls = &forced.turn.tool_calls;
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "read_file");
    assert!(complete_json(&calls[0].arguments), "{}", calls[0].arguments);
    assert!(calls[0].id.starts_with("call__0_read_file"));

    for sample in [
        "llama-cpp-python/C-tools-auto-nostream.json",
        "llama-cpp-python/E2-tools-forced-nostream.json",
        "llama-cpp-python/K-followup-content-empty-auto-nostream.json",
    ] {
        let decoded = whole(sample);
        assert_eq!(decoded.finish, FinishReason::ToolCalls, "{sample}");
        assert_eq!(decoded.turn.text, "", "{sample}");
        assert_eq!(decoded.turn.tool_calls.len(), 1, "{sample}");
        assert_eq!(decoded.turn.tool_calls[0].name, "read_file", "{sample}");
        assert!(decoded.usage.input_tokens > 0, "{sample}");
    }
    let text = streamed("llama-cpp-python/B-tools-nochoice-stream.sse").unwrap();
    assert_eq!(text.finish, FinishReason::Stop);
    assert!(text.turn.text.starts_with("Change the file src/"));
    // It ignores `include_usage`: no counts, which count 0.
    assert_eq!(text.usage.input_tokens, 0);
}

#[test]
fn llama_server_length_cut_turns_keep_their_complete_calls() {
    let whole_cut = whole("llama-server/A-tools-auto-nostream.json");
    assert_eq!(whole_cut.finish, FinishReason::Length);
    assert_eq!(whole_cut.turn.tool_calls.len(), 4);
    assert!(whole_cut
        .turn
        .tool_calls
        .iter()
        .all(|c| complete_json(&c.arguments)));

    let followup = whole("llama-server/F-followup-parallel-contentnull-nostream.json");
    assert_eq!(followup.finish, FinishReason::Length);
    let (complete, cut): (Vec<_>, Vec<_>) = followup
        .turn
        .tool_calls
        .iter()
        .partition(|c| complete_json(&c.arguments));
    assert!(!complete.is_empty());
    assert_eq!(cut.len(), 1);
    assert_eq!(cut[0].arguments, "{");
    assert_eq!(followup.usage.cached_input_tokens, 341);
    assert_eq!(followup.usage.input_tokens, 603);

    let streamed_cut = streamed("llama-server/G-followup-parallel-contentnull-stream.sse").unwrap();
    assert_eq!(streamed_cut.finish, FinishReason::Length);
    assert!(streamed_cut
        .turn
        .tool_calls
        .iter()
        .any(|c| complete_json(&c.arguments)));
    assert_eq!(streamed_cut.usage.cached_input_tokens, 602);
}

#[test]
fn llama_server_streams_usage_with_cached_tokens() {
    let decoded = streamed("llama-server/R-tools-auto-single-stream.sse").unwrap();
    assert_eq!(decoded.finish, FinishReason::Stop);
    assert!(decoded.usage.input_tokens > 0 && decoded.usage.output_tokens > 0);
    let cached = whole("llama-server/Q-copilot-request-named-nostream.json");
    assert_eq!(cached.usage.cached_input_tokens, 2771);
    assert_eq!(cached.usage.input_tokens, 2772);
}

//! One `tools/call`: the workspace it runs in, waiting for the index (with
//! `notifications/progress` when the request has a `progressToken`) for the tools that
//! answer from it, the tool itself on a blocking thread (through `tools::run_with_data`,
//! `run_with_index` with the `git_*` tools' structure: the same sandbox and secret
//! redaction as in an ask), cancellation, and the result
//! as text plus `structuredContent`. Bad arguments, paths or patterns are results with
//! `isError: true`, never protocol errors.

use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::Value;

use super::engine::{Building, Coverage, Engine, Root};
use super::structured;
use crate::agent;
use crate::tools;

/// What ending a call can mean besides a result.
pub enum Ended {
    Result(CallToolResult),
    Cancelled,
}

pub async fn call(
    engine: &Engine,
    name: &str,
    arguments: Option<JsonObject>,
    context: &RequestContext<RoleServer>,
) -> Ended {
    let arguments = Value::Object(arguments.unwrap_or_default());
    let root = match engine.root().await {
        Ok(root) => root,
        Err(error) => return Ended::Result(failed(&error)),
    };
    let (cancel, _watching) = engine.call_cancel(&context.ct);
    let uses_index = name == "locate" || tools::uses_index(name);
    let mut coverage = Coverage::Complete;
    if uses_index {
        let progress = Progress::new(context);
        coverage = root
            .wait_for_index(&cancel, |building| progress.send(building))
            .await;
        if coverage == Coverage::Cancelled {
            return Ended::Cancelled;
        }
    }
    let tool = name.to_string();
    let running = tokio::task::spawn_blocking(move || run(&root, &tool, &arguments, coverage));
    tokio::select! {
        done = running => match done {
            Ok(result) => Ended::Result(result),
            Err(error) => Ended::Result(failed(&format!("the tool failed unexpectedly: {error}"))),
        },
        _ = cancel.cancelled() => Ended::Cancelled,
    }
}

fn run(root: &Root, name: &str, arguments: &Value, coverage: Coverage) -> CallToolResult {
    if name == "locate" {
        return locate(root, arguments, coverage);
    }
    let (output, data) = tools::run_with_data(
        name,
        &arguments.to_string(),
        &root.workspace,
        Some(&root.index),
    );
    if !output.ok {
        return failed(output.text.trim_start_matches("Error: "));
    }
    let mut text = output.text.clone();
    if let Coverage::Partial { done, total } = coverage {
        text.push_str(&partial_note(done, total));
    }
    let mut structure = structured::of(name, arguments, &output, data);
    if matches!(coverage, Coverage::Partial { .. }) && structure.get("complete").is_some() {
        structure["complete"] = Value::Bool(false);
    }
    success(text, structure)
}

/// `locate`: the places a no-model ask lists for the question.
fn locate(root: &Root, arguments: &Value, coverage: Coverage) -> CallToolResult {
    let question = match agent::locate_question(arguments) {
        Ok(question) => question,
        Err(why) => return failed(&why),
    };
    // As many chunks as a no-model ask chooses its places from.
    let hits = agent::place_candidates(&|n| root.index.search(question, n));
    let places = agent::locate(&root.workspace, &hits, question);
    let mut text = agent::places_text(&places);
    let complete = coverage == Coverage::Complete;
    if places.is_empty() {
        text.push_str(if complete {
            "(nothing in the workspace matches the question's words)\n"
        } else {
            "(nothing found yet: the workspace index is still being built)\n"
        });
    }
    if let Coverage::Partial { done, total } = coverage {
        text.push_str(&partial_note(done, total));
    }
    // The history is read after the files (PROTOCOL.md section 11): a first call may
    // come before it, and says so, as an ask's first answer does.
    let history = root.index.coverage().history;
    if history.is_some_and(|h| h.pending) {
        text.push_str("(the repository's history is still being read: past changes do not inform this ranking yet)\n");
    }
    // The excerpts were redacted by `agent::locate`; the whole text once more, as every
    // tool result is.
    let text = crate::workspace::redact::redact(&text).into_owned();
    let mut structure = structured::located(&places, complete);
    if let Some(history) = history {
        structure["history"] =
            serde_json::json!({"complete": history.complete, "commits": history.commits});
    }
    success(text, structure)
}

fn partial_note(done: usize, total: usize) -> String {
    format!(
        "(the workspace index is still being built: {done} of {total} files checked; results may be incomplete)\n"
    )
}

fn success(text: String, structure: Value) -> CallToolResult {
    let structure = structured::with_notes(structure, &text);
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structure);
    result
}

/// A result the model reads as a failure (`isError: true`), with the reason.
pub fn failed(reason: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("Error: {reason}"))])
}

/// `notifications/progress` on the request's token, when it has one.
struct Progress {
    target: Option<(Peer<RoleServer>, ProgressToken)>,
    last: std::sync::Mutex<Option<(usize, usize)>>,
}

impl Progress {
    fn new(context: &RequestContext<RoleServer>) -> Progress {
        Progress {
            target: context
                .meta
                .get_progress_token()
                .map(|token| (context.peer.clone(), token)),
            last: std::sync::Mutex::new(None),
        }
    }

    fn send(&self, building: Building) {
        let Some((peer, token)) = &self.target else {
            return;
        };
        // Before the walk has counted the files there is nothing to report.
        if building.total == 0 {
            return;
        }
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let now = (building.done, building.total);
        // Progress must increase: a repeated value is not sent again.
        if last.is_some_and(|(done, total)| done >= now.0 && total == now.1) {
            return;
        }
        *last = Some(now);
        let mut param = ProgressNotificationParam::new(token.clone(), building.done as f64);
        param.total = (building.total > 0).then_some(building.total as f64);
        param.message = Some(format!(
            "indexing {}/{} files",
            building.done, building.total
        ));
        let peer = peer.clone();
        tokio::spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }
}

//! `copilot/ask`: runs an ask with progress and cancellation, publishes the answer's
//! diagnostics, and replies with the `AskResult`.
//!
//! Cancellation: tower-lsp answers `$/cancelRequest` with -32800 by dropping this
//! handler's future. The ask itself runs in a task of its own holding a cancellation
//! token whose drop guard lives in this future, so dropping the future cancels the
//! token, the task drops the provider call (closing its connection) and ends the
//! progress. A cancelled ask records nothing.
//!
//! Streaming: with a `partialResultToken`, each `AskEvent::Text` and `ToolFinished`
//! becomes an `AskDelta` on that token, sent in order by a forwarding task of its own so
//! the agent never waits on the client; the reply waits until every delta is queued.
//! Without the token nothing streams.

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::lsp_types::notification::Progress;
use tower_lsp_server::lsp_types::request::WorkDoneProgressCreate;
use tower_lsp_server::lsp_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, ProgressToken, WorkDoneProgress,
    WorkDoneProgressBegin, WorkDoneProgressCreateParams, WorkDoneProgressEnd,
    WorkDoneProgressReport,
};
use tower_lsp_server::Client;

use super::super::convert;
use super::super::server::Backend;
use super::super::wire::{AskDelta, AskParams, AskResult, PartialResult, PartialResultParams};
use super::diagnostics;
use crate::agent::AskEvent;
use crate::session::{AskError, AskRequest};

/// JSON-RPC `RequestFailed`: the ask could not be answered (provider error and the like).
pub const REQUEST_FAILED: i64 = -32803;

pub async fn ask(backend: &Backend, params: AskParams) -> Result<AskResult> {
    let question = params.question.clone().unwrap_or_default();
    if question.trim().is_empty() {
        return Err(Error::invalid_params(
            "`question` is required and must not be empty",
        ));
    }
    let request = AskRequest {
        question,
        conversation_id: params.conversation_id.clone(),
        document_uri: params
            .text_document
            .as_ref()
            .map(|d| d.uri.as_str().to_string()),
        selection: params.range.map(convert::span),
    };

    let token = CancellationToken::new();
    let _cancel_when_dropped = token.clone().drop_guard();
    let (progress, progress_done) = start_progress(backend, params.work_done_token.clone()).await;
    let (deltas, deltas_done) = start_partial_results(backend, params.partial_result_token.clone());

    let session = backend.session.clone();
    let task = tokio::spawn(async move {
        let reporter = progress.clone();
        let report = move |event: AskEvent| match event {
            AskEvent::Started { instruction_files } if !instruction_files.is_empty() => {
                reporter.send(ProgressEvent::Report(format!(
                    "Instructions: {}",
                    instruction_files.join(", ")
                )));
            }
            AskEvent::ToolStarted { label, .. } => reporter.send(ProgressEvent::Report(label)),
            AskEvent::Text { turn, text } => deltas.send(AskDelta {
                turn,
                text: Some(text),
                step: None,
            }),
            AskEvent::ToolFinished { turn, step, .. } => deltas.send(AskDelta {
                turn,
                text: None,
                step: Some(convert::step(&step)),
            }),
            _ => {}
        };
        let result = tokio::select! {
            biased;
            _ = token.cancelled() => None,
            result = session.ask(request, &report) => Some(result),
        };
        progress.send(ProgressEvent::End(match &result {
            None => "Cancelled".to_string(),
            Some(Ok(_)) => "Done".to_string(),
            Some(Err(_)) => "Failed".to_string(),
        }));
        result
    });
    let joined = task.await;
    // The progress `end` is queued before the reply. (tower-lsp writes notifications and
    // replies through separate queues, so their order on the wire is not guaranteed.)
    if let Some(done) = progress_done {
        let _ = done.await;
    }
    // The task's event closure (and with it the delta sender) is gone once the task
    // ended, so the forwarder ends after queueing every delta.
    if let Some(done) = deltas_done {
        let _ = done.await;
    }
    let result = match joined {
        Ok(Some(result)) => result,
        Ok(None) => return Err(Error::request_cancelled()),
        Err(join_error) => Err(AskError::Failed(format!(
            "the ask failed unexpectedly: {join_error}"
        ))),
    };
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(AskError::InvalidParams(message)) => return Err(Error::invalid_params(message)),
        Err(error) => {
            tracing::warn!("ask failed: {error}");
            return Err(Error {
                code: ErrorCode::ServerError(REQUEST_FAILED),
                message: error.to_string().into(),
                data: None,
            });
        }
    };

    // Diagnostics are queued before the reply (see above on ordering).
    diagnostics::publish(backend).await;
    let Some(workspace) = backend.session.workspace() else {
        return Err(Error::internal_error());
    };
    let encoding = backend.session.encoding();
    let mut surface = crate::session::lock(&backend.session.surface);
    Ok(convert::ask_result(
        outcome.conversation_id,
        &outcome.outcome,
        &mut surface,
        &workspace,
        encoding,
        backend.flags().edits,
    ))
}

/// `workspace/executeCommand` `copilot.ask` with `arguments: [AskParams]`.
pub async fn ask_command(backend: &Backend, arguments: Vec<Value>) -> Result<Option<Value>> {
    let first = arguments.into_iter().next().unwrap_or(Value::Null);
    let params: AskParams = serde_json::from_value(first).map_err(|e| {
        Error::invalid_params(format!("copilot.ask takes one AskParams argument: {e}"))
    })?;
    let result = ask(backend, params).await?;
    serde_json::to_value(result)
        .map(Some)
        .map_err(|_| Error::internal_error())
}

/// Sends an ask's `AskDelta`s in order from a task of their own.
struct DeltaSender(Option<mpsc::UnboundedSender<AskDelta>>);

impl DeltaSender {
    fn send(&self, delta: AskDelta) {
        if let Some(sender) = &self.0 {
            let _ = sender.send(delta);
        }
    }
}

fn start_partial_results(
    backend: &Backend,
    token: Option<ProgressToken>,
) -> (DeltaSender, Option<tokio::task::JoinHandle<()>>) {
    let Some(token) = token else {
        return (DeltaSender(None), None);
    };
    let client = backend.client.clone();
    let (sender, mut receiver) = mpsc::unbounded_channel::<AskDelta>();
    let forwarder = tokio::spawn(async move {
        while let Some(delta) = receiver.recv().await {
            let Ok(value) = serde_json::to_value(delta) else {
                continue;
            };
            client
                .send_notification::<PartialResult>(PartialResultParams {
                    token: token.clone(),
                    value,
                })
                .await;
        }
    });
    (DeltaSender(Some(sender)), Some(forwarder))
}

enum ProgressEvent {
    Report(String),
    End(String),
}

/// Sends progress notifications in order from a task of their own, so the agent can
/// report synchronously and never waits on the client.
#[derive(Clone)]
struct ProgressSender(Option<mpsc::UnboundedSender<ProgressEvent>>);

impl ProgressSender {
    fn send(&self, event: ProgressEvent) {
        if let Some(sender) = &self.0 {
            let _ = sender.send(event);
        }
    }
}

async fn start_progress(
    backend: &Backend,
    requested: Option<ProgressToken>,
) -> (ProgressSender, Option<tokio::task::JoinHandle<()>>) {
    let token = match requested {
        Some(token) => token,
        None if backend.flags().work_done_progress => {
            let token = NumberOrString::String(format!(
                "copilot-ask-{}",
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or_default()
            ));
            let created = backend
                .client
                .send_request::<WorkDoneProgressCreate>(WorkDoneProgressCreateParams {
                    token: token.clone(),
                })
                .await;
            if created.is_err() {
                return (ProgressSender(None), None);
            }
            token
        }
        None => return (ProgressSender(None), None),
    };
    let client = backend.client.clone();
    let (sender, mut receiver) = mpsc::unbounded_channel();
    let begin = WorkDoneProgress::Begin(WorkDoneProgressBegin {
        title: "Copilot".to_string(),
        cancellable: Some(true),
        message: Some("Thinking".to_string()),
        percentage: None,
    });
    send(&client, &token, begin).await;
    let forwarder = tokio::spawn(async move {
        while let Some(event) = receiver.recv().await {
            match event {
                ProgressEvent::Report(message) => {
                    let report = WorkDoneProgress::Report(WorkDoneProgressReport {
                        cancellable: Some(true),
                        message: Some(message),
                        percentage: None,
                    });
                    send(&client, &token, report).await;
                }
                ProgressEvent::End(message) => {
                    let end = WorkDoneProgress::End(WorkDoneProgressEnd {
                        message: Some(message),
                    });
                    send(&client, &token, end).await;
                    break;
                }
            }
        }
    });
    (ProgressSender(Some(sender)), Some(forwarder))
}

async fn send(client: &Client, token: &ProgressToken, value: WorkDoneProgress) {
    client
        .send_notification::<Progress>(ProgressParams {
            token: token.clone(),
            value: ProgressParamsValue::WorkDone(value),
        })
        .await;
}

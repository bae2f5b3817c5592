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
    // Before any await: asks take their turn for a core in the order they arrived.
    let arrival = crate::session::arrival();
    let _place = crate::session::queue(arrival);
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
        arrival: Some(arrival),
        editor_model: params.editor_model.clone(),
        ..AskRequest::default()
    };

    let token = CancellationToken::new();
    let _cancel_when_dropped = token.clone().drop_guard();
    let (progress, progress_done) = start_progress(backend, params.work_done_token.clone());
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
        &outcome,
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

/// How long an ask that is already answered waits for the editor to confirm its
/// progress token, so that an editor which answers `window/workDoneProgress/create`
/// sees `begin` and `end` for every ask; one that never answers delays a reply by no
/// more than this.
const TOKEN_CONFIRMATION: std::time::Duration = std::time::Duration::from_secs(2);

/// Progress for one ask. A token the editor gave is used at once. A token of ours is
/// created with `window/workDoneProgress/create` without waiting for the reply here: a
/// handler that awaits the client can deadlock the connection (tower-lsp stops reading
/// input, replies included, while its queue of requests is full). Until the editor
/// confirms, the forwarder holds the reports (one per tool call, PROTOCOL.md §3
/// Progress); a refused token shows nothing.
fn start_progress(
    backend: &Backend,
    requested: Option<ProgressToken>,
) -> (ProgressSender, Option<tokio::task::JoinHandle<()>>) {
    static NEXT_TOKEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let client = backend.client.clone();
    let (token, confirmation) = match requested {
        Some(token) => (token, None),
        None if backend.flags().work_done_progress => {
            let n = NEXT_TOKEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let token = NumberOrString::String(format!("copilot-ask-{n}"));
            let (client, created) = (client.clone(), token.clone());
            let confirmation = tokio::spawn(async move {
                client
                    .send_request::<WorkDoneProgressCreate>(WorkDoneProgressCreateParams {
                        token: created,
                    })
                    .await
                    .is_ok()
            });
            (token, Some(confirmation))
        }
        None => return (ProgressSender(None), None),
    };
    let (sender, mut receiver) = mpsc::unbounded_channel();
    let forwarder = tokio::spawn(async move {
        let mut held = Vec::new();
        if let Some(confirmation) = confirmation {
            match await_confirmation(confirmation, &mut receiver).await {
                Confirmation::Refused => return,
                Confirmation::Confirmed(latest) => held = latest,
                Confirmation::ConfirmedAfterEnd(events) => {
                    begin(&client, &token).await;
                    for event in events {
                        forward(&client, &token, event).await;
                    }
                    return;
                }
            }
        }
        begin(&client, &token).await;
        for report in held {
            forward(&client, &token, report).await;
        }
        while let Some(event) = receiver.recv().await {
            let last = matches!(event, ProgressEvent::End(_));
            forward(&client, &token, event).await;
            if last {
                break;
            }
        }
    });
    (ProgressSender(Some(sender)), Some(forwarder))
}

enum Confirmation {
    /// The editor refused the token, or the ask ended and it did not answer in time.
    Refused,
    /// Confirmed while the ask runs; the reports held meanwhile.
    Confirmed(Vec<ProgressEvent>),
    /// Confirmed only after the ask ended: `begin`, these reports and their `end`
    /// remain to be sent.
    ConfirmedAfterEnd(Vec<ProgressEvent>),
}

async fn await_confirmation(
    mut confirmation: tokio::task::JoinHandle<bool>,
    receiver: &mut mpsc::UnboundedReceiver<ProgressEvent>,
) -> Confirmation {
    let mut held = Vec::new();
    loop {
        tokio::select! {
            confirmed = &mut confirmation => {
                return match confirmed {
                    Ok(true) => Confirmation::Confirmed(held),
                    _ => Confirmation::Refused,
                };
            }
            event = receiver.recv() => match event {
                Some(report @ ProgressEvent::Report(_)) => held.push(report),
                Some(end) => {
                    held.push(end);
                    let confirmed = tokio::time::timeout(TOKEN_CONFIRMATION, confirmation).await;
                    return match confirmed {
                        Ok(Ok(true)) => Confirmation::ConfirmedAfterEnd(held),
                        _ => Confirmation::Refused,
                    };
                }
                None => return Confirmation::Refused,
            },
        }
    }
}

async fn begin(client: &Client, token: &ProgressToken) {
    let begin = WorkDoneProgress::Begin(WorkDoneProgressBegin {
        title: "Copilot".to_string(),
        cancellable: Some(true),
        message: Some("Thinking".to_string()),
        percentage: None,
    });
    send(client, token, begin).await;
}

async fn forward(client: &Client, token: &ProgressToken, event: ProgressEvent) {
    let value = match event {
        ProgressEvent::Report(message) => WorkDoneProgress::Report(WorkDoneProgressReport {
            cancellable: Some(true),
            message: Some(message),
            percentage: None,
        }),
        ProgressEvent::End(message) => WorkDoneProgress::End(WorkDoneProgressEnd {
            message: Some(message),
        }),
    };
    send(client, token, value).await;
}

async fn send(client: &Client, token: &ProgressToken, value: WorkDoneProgress) {
    client
        .send_notification::<Progress>(ProgressParams {
            token: token.clone(),
            value: ProgressParamsValue::WorkDone(value),
        })
        .await;
}

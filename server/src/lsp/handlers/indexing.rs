//! The background index refresh as the editor sees it: `$/progress` (title `Indexing`,
//! `n/N files`) on a server-created token when the client supports it, and a
//! `window/showMessage` when the workspace is too large to index fully.

use std::sync::Arc;

use tokio::sync::mpsc;
use tower_lsp_server::lsp_types::notification::Progress as ProgressNotification;
use tower_lsp_server::lsp_types::request::WorkDoneProgressCreate;
use tower_lsp_server::lsp_types::{
    MessageType, NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress,
    WorkDoneProgressBegin, WorkDoneProgressCreateParams, WorkDoneProgressEnd,
    WorkDoneProgressReport,
};
use tower_lsp_server::Client;

use crate::index::Progress;
use crate::lsp::server::Backend;
use crate::session::IndexEvent;

/// Starts the session's index refresh and forwards what it reports to the client.
pub fn start(backend: &Backend) {
    let (sender, mut receiver) = mpsc::unbounded_channel::<IndexEvent>();
    backend.session.warm_up(Arc::new(move |event| {
        let _ = sender.send(event);
    }));
    let client = backend.client.clone();
    let supported = backend.flags().work_done_progress;
    tokio::spawn(async move {
        let token = NumberOrString::String("copilot-ls/indexing".to_string());
        let token = if supported {
            let created = client
                .send_request::<WorkDoneProgressCreate>(WorkDoneProgressCreateParams {
                    token: token.clone(),
                })
                .await;
            created.is_ok().then_some(token)
        } else {
            None
        };
        let mut begun = false;
        while let Some(event) = receiver.recv().await {
            match event {
                IndexEvent::Progress(Progress::Truncated(why)) => {
                    tracing::warn!("{why}");
                    client
                        .show_message(MessageType::WARNING, format!("copilot-ls: {why}"))
                        .await;
                }
                IndexEvent::Progress(Progress::Files { done, total }) => {
                    let Some(token) = &token else { continue };
                    let message = format!("{done}/{total} files");
                    let percentage = (done * 100).checked_div(total).map(|p| p.min(100) as u32);
                    let value = if begun {
                        WorkDoneProgress::Report(WorkDoneProgressReport {
                            cancellable: Some(false),
                            message: Some(message),
                            percentage,
                        })
                    } else {
                        begun = true;
                        WorkDoneProgress::Begin(WorkDoneProgressBegin {
                            title: "Indexing".to_string(),
                            cancellable: Some(false),
                            message: Some(message),
                            percentage,
                        })
                    };
                    send(&client, token, value).await;
                }
                IndexEvent::Done(report) => {
                    if let (Some(token), true) = (&token, begun) {
                        let end = WorkDoneProgress::End(WorkDoneProgressEnd {
                            message: Some(format!("{} files read", report.files_read)),
                        });
                        send(&client, token, end).await;
                    }
                    break;
                }
            }
        }
    });
}

async fn send(client: &Client, token: &NumberOrString, value: WorkDoneProgress) {
    client
        .send_notification::<ProgressNotification>(ProgressParams {
            token: token.clone(),
            value: ProgressParamsValue::WorkDone(value),
        })
        .await;
}

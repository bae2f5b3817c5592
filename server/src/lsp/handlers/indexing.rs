//! The background index refresh as the editor sees it: `$/progress` (title `Indexing`,
//! `n/N files`) on a server-created token when the client supports it, ended when the
//! index is complete; during a cold build's second phase a second token (title
//! `Indexing definitions`, `n/N files`); and a `window/showMessage` when the workspace
//! is too large to index fully, when the index is kept in memory only (and why), and
//! when the root is not a project.

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

/// Refreshes started in this process: the first's tokens are `copilot-ls/indexing` and
/// `copilot-ls/definitions`, a later one's `copilot-ls/indexing/2` and so on.
static REFRESHES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Starts the session's index refresh and forwards what it reports to the client.
pub fn start(backend: &Backend) {
    let (sender, mut receiver) = mpsc::unbounded_channel::<IndexEvent>();
    backend.session.warm_up(Arc::new(move |event| {
        let _ = sender.send(event);
    }));
    let client = backend.client.clone();
    let supported = backend.flags().work_done_progress;
    tokio::spawn(async move {
        // A token of its own per refresh (a folder added while the first build runs
        // starts another): two refreshes sharing one would end each other's progress.
        let n = REFRESHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = |base: &str| match n {
            0 => base.to_string(),
            n => format!("{base}/{}", n + 1),
        };
        let mut files =
            Token::new(&client, supported, &name("copilot-ls/indexing"), "Indexing").await;
        let mut definitions = None;
        while let Some(event) = receiver.recv().await {
            match event {
                IndexEvent::InMemory(why) => {
                    let message = format!(
                        "copilot-ls: the index is kept in memory only, so the next start builds it again: {why}"
                    );
                    client.show_message(MessageType::WARNING, message).await;
                }
                IndexEvent::NotIndexed(why) => {
                    let message = format!(
                        "copilot-ls: {why}; the tools still read and search files on demand."
                    );
                    client.show_message(MessageType::WARNING, message).await;
                    break;
                }
                IndexEvent::Progress(Progress::Truncated(why)) => {
                    tracing::warn!("{why}");
                    client
                        .show_message(MessageType::WARNING, format!("copilot-ls: {why}"))
                        .await;
                }
                IndexEvent::Progress(Progress::Files { done, total }) => {
                    files.report(&client, done, total).await;
                }
                IndexEvent::Progress(Progress::Definitions { done, total }) => {
                    let token = match &mut definitions {
                        Some(token) => token,
                        None => definitions.insert(
                            Token::new(
                                &client,
                                supported,
                                &name("copilot-ls/definitions"),
                                "Indexing definitions",
                            )
                            .await,
                        ),
                    };
                    token.report(&client, done, total).await;
                }
                IndexEvent::Done(report) => {
                    if let Some(token) = &definitions {
                        token.end(&client, "definitions read".to_string()).await;
                    }
                    files
                        .end(&client, format!("{} files read", report.files_read))
                        .await;
                    break;
                }
            }
        }
    });
}

/// One `$/progress` token the server created, if the client supports them.
struct Token {
    token: Option<NumberOrString>,
    title: &'static str,
    begun: bool,
}

impl Token {
    async fn new(client: &Client, supported: bool, name: &str, title: &'static str) -> Token {
        let token = NumberOrString::String(name.to_string());
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
        Token {
            token,
            title,
            begun: false,
        }
    }

    /// `begin` the first time, `report` after: `n/N files`.
    async fn report(&mut self, client: &Client, done: usize, total: usize) {
        let Some(token) = &self.token else { return };
        let message = format!("{done}/{total} files");
        let percentage = (done * 100).checked_div(total).map(|p| p.min(100) as u32);
        let value = if self.begun {
            WorkDoneProgress::Report(WorkDoneProgressReport {
                cancellable: Some(false),
                message: Some(message),
                percentage,
            })
        } else {
            self.begun = true;
            WorkDoneProgress::Begin(WorkDoneProgressBegin {
                title: self.title.to_string(),
                cancellable: Some(false),
                message: Some(message),
                percentage,
            })
        };
        send(client, token, value).await;
    }

    async fn end(&self, client: &Client, message: String) {
        if let (Some(token), true) = (&self.token, self.begun) {
            let end = WorkDoneProgress::End(WorkDoneProgressEnd {
                message: Some(message),
            });
            send(client, token, end).await;
        }
    }
}

async fn send(client: &Client, token: &NumberOrString, value: WorkDoneProgress) {
    client
        .send_notification::<ProgressNotification>(ProgressParams {
            token: token.clone(),
            value: ProgressParamsValue::WorkDone(value),
        })
        .await;
}

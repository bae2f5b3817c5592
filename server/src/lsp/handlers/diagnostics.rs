//! Publishing the editor surface's diagnostics: citations and suggested edits.
//!
//! After an ask, one task publishes them for every handler that asks, in the order they
//! asked (`Publisher`). Each handler sending its own notifications contended for the
//! client's channel, which wakes its waiting senders in no set order: the replies of a
//! burst of asks, each sent after its diagnostics, left in another order than the fair
//! CPU queue served them (`tests/load.rs` caught it in about one run in five). Handlers
//! waiting together are served by one publication: it is the same surface, the latest.

use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};
use tower_lsp_server::Client;

use super::super::convert;
use super::super::server::Backend;
use crate::session::Session;

/// The task that publishes the asks' diagnostics, started by the first ask.
#[derive(Default)]
pub struct Publisher {
    queue: Mutex<Option<mpsc::UnboundedSender<oneshot::Sender<()>>>>,
}

impl Publisher {
    /// The queue of the publishing task, started now if it is not running.
    fn queue(
        &self,
        client: &Client,
        session: &Arc<Session>,
    ) -> mpsc::UnboundedSender<oneshot::Sender<()>> {
        let mut queue = crate::session::lock(&self.queue);
        if let Some(sender) = queue.as_ref().filter(|sender| !sender.is_closed()) {
            return sender.clone();
        }
        let (sender, mut requests) = mpsc::unbounded_channel::<oneshot::Sender<()>>();
        let (client, session) = (client.clone(), session.clone());
        tokio::spawn(async move {
            while let Some(first) = requests.recv().await {
                let mut served = vec![first];
                while let Ok(more) = requests.try_recv() {
                    served.push(more);
                }
                publish_with(&client, &session, None).await;
                for done in served {
                    let _ = done.send(());
                }
            }
        });
        *queue = Some(sender.clone());
        sender
    }
}

/// Publishes the current diagnostics of every cited or edited document, and empty lists
/// for documents that had some before; returns once they are queued for the client.
pub async fn publish(backend: &Backend) {
    let (done, published) = oneshot::channel();
    let queue = backend.publisher.queue(&backend.client, &backend.session);
    if queue.send(done).is_err() || published.await.is_err() {
        // The task is gone (the runtime is stopping): publish here.
        publish_where(backend, None).await;
    }
}

/// Publishes the diagnostics of one document only: after a change to it, the other
/// documents' diagnostics cannot have changed, and this runs on every keystroke.
pub async fn publish_for(backend: &Backend, uri: &str) {
    publish_where(backend, Some(uri)).await;
}

async fn publish_where(backend: &Backend, only: Option<&str>) {
    publish_with(&backend.client, &backend.session, only).await;
}

async fn publish_with(client: &Client, session: &Session, only: Option<&str>) {
    let Some(workspace) = session.workspace() else {
        return;
    };
    let encoding = session.encoding();
    let by_uri = crate::session::lock(&session.surface).diagnostics(&workspace, encoding, only);
    for (uri, specs) in by_uri {
        let diagnostics = specs.iter().map(convert::diagnostic).collect();
        client
            .publish_diagnostics(convert::uri(&uri), diagnostics, None)
            .await;
    }
}

/// Clears every diagnostic we published.
pub async fn clear(backend: &Backend) {
    let uris = backend.session.clear();
    for uri in uris {
        backend
            .client
            .publish_diagnostics(convert::uri(&uri), Vec::new(), None)
            .await;
    }
}

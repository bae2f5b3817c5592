//! Requests this server sends the client whose reply it must match itself: the editor's
//! model calls (`copilot/model`, contract v5 section 11). tower-lsp's own client picks
//! request ids we cannot see, so a cancel could not name the request; these are framed
//! here with ids of our own (`copilot-model-N`), written through the transport's one
//! output, and their replies and `$/progress` values are taken off the input by the
//! transport (`intercept`) before tower-lsp sees them.
//!
//! A call whose future is dropped (the ask was cancelled, or timed out) sends
//! `$/cancelRequest` for its id and forgets it, so a reply that still arrives, and any
//! delta after the reply, is dropped here.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use super::transport::frame;
use crate::providers::editor::{ChannelError, EditorChannel};
use crate::providers::BoxFuture;

/// The method of the editor's model call.
pub const MODEL_METHOD: &str = "copilot/model";
/// Every id (and progress token) of ours starts so; nothing else the client sends does.
const ID_PREFIX: &str = "copilot-model-";
/// A call's progress token is its id with this after it.
const TOKEN_SUFFIX: &str = "/text";

struct Pending {
    deltas: mpsc::UnboundedSender<Value>,
    reply: oneshot::Sender<Result<Value, ChannelError>>,
}

#[derive(Default)]
pub struct ClientCalls {
    /// The transport's output queue, once serving began.
    output: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    pending: Arc<Mutex<HashMap<String, Pending>>>,
    counter: AtomicU64,
}

impl ClientCalls {
    /// Called by the transport when it starts: where frames to the client go.
    pub fn attach(&self, output: mpsc::Sender<Vec<u8>>) {
        *lock(&self.output) = Some(output);
    }

    /// Takes a message off the input when it is ours: a reply to one of our calls, or a
    /// `$/progress` on one of their tokens (late ones are dropped). Returns whether it was.
    pub fn intercept(&self, body: &[u8]) -> bool {
        if memchr::memmem::find(body, ID_PREFIX.as_bytes()).is_none() {
            return false;
        }
        let Ok(message) = serde_json::from_slice::<Value>(body) else {
            return false;
        };
        match message.get("method").and_then(Value::as_str) {
            Some("$/progress") => {
                let token = message["params"]["token"].as_str().unwrap_or_default();
                let Some(id) = token
                    .strip_suffix(TOKEN_SUFFIX)
                    .filter(|id| id.starts_with(ID_PREFIX))
                else {
                    return false;
                };
                if let Some(pending) = lock(&self.pending).get(id) {
                    let _ = pending.deltas.send(message["params"]["value"].clone());
                }
                true
            }
            Some(_) => false,
            None => {
                let Some(id) = message
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| id.starts_with(ID_PREFIX))
                else {
                    return false;
                };
                let Some(pending) = lock(&self.pending).remove(id) else {
                    tracing::debug!(id, "a reply to a model call no longer waited for");
                    return true;
                };
                let result = match message.get("error") {
                    Some(error) => Err(ChannelError::Reply {
                        code: error["code"].as_i64().unwrap_or(0),
                        message: error["message"]
                            .as_str()
                            .unwrap_or("no message")
                            .to_string(),
                    }),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = pending.reply.send(result);
                true
            }
        }
    }
}

impl EditorChannel for ClientCalls {
    fn call(
        &self,
        mut params: Value,
        deltas: mpsc::UnboundedSender<Value>,
    ) -> BoxFuture<'static, Result<Value, ChannelError>> {
        let number = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("{ID_PREFIX}{number}");
        params["partialResultToken"] = json!(format!("{id}{TOKEN_SUFFIX}"));
        let request = json!({"jsonrpc": "2.0", "id": id, "method": MODEL_METHOD, "params": params});
        let output = lock(&self.output).clone();
        let (reply, replied) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), Pending { deltas, reply });
        let guard = CancelOnDrop {
            id,
            pending: self.pending.clone(),
            output: output.clone(),
        };
        Box::pin(async move {
            let Some(output) = output else {
                return Err(ChannelError::Closed);
            };
            if output
                .send(frame(request.to_string().as_bytes()))
                .await
                .is_err()
            {
                return Err(ChannelError::Closed);
            }
            let result = replied.await.unwrap_or(Err(ChannelError::Closed));
            drop(guard);
            result
        })
    }
}

/// Lives as long as the call's future: dropped before the reply, it cancels the call.
struct CancelOnDrop {
    id: String,
    pending: Arc<Mutex<HashMap<String, Pending>>>,
    output: Option<mpsc::Sender<Vec<u8>>>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        // Still pending: no reply came, so the client is told to stop.
        if lock(&self.pending).remove(&self.id).is_none() {
            return;
        }
        let Some(output) = &self.output else {
            return;
        };
        tracing::debug!(id = %self.id, "model call cancelled");
        let cancel =
            json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": self.id}});
        let frame = frame(cancel.to_string().as_bytes());
        if let Err(mpsc::error::TrySendError::Full(frame)) = output.try_send(frame) {
            // The queue is momentarily full: the cancel still goes, after what is queued.
            let output = output.clone();
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = output.send(frame).await;
                });
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(frame: &[u8]) -> Value {
        let text = std::str::from_utf8(frame).unwrap();
        serde_json::from_str(text.split_once("\r\n\r\n").unwrap().1).unwrap()
    }

    #[tokio::test]
    async fn a_call_is_framed_with_our_id_and_token_and_its_reply_and_deltas_are_taken() {
        let calls = ClientCalls::default();
        let (output, mut sent) = mpsc::channel(8);
        calls.attach(output);
        let (deltas, mut arrived) = mpsc::unbounded_channel();
        let call = calls.call(json!({"model": "m"}), deltas);
        let task = tokio::spawn(call);
        let request = body(&sent.recv().await.unwrap());
        assert_eq!(request["method"], MODEL_METHOD);
        assert_eq!(request["id"], "copilot-model-1");
        assert_eq!(
            request["params"]["partialResultToken"],
            "copilot-model-1/text"
        );
        assert_eq!(request["params"]["model"], "m");

        let progress = json!({"jsonrpc": "2.0", "method": "$/progress",
            "params": {"token": "copilot-model-1/text", "value": {"text": "Hi"}}});
        assert!(calls.intercept(progress.to_string().as_bytes()));
        assert_eq!(arrived.recv().await.unwrap(), json!({"text": "Hi"}));
        // Someone else's progress and replies pass on to tower-lsp.
        let other =
            json!({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": 3, "value": {}}});
        assert!(!calls.intercept(other.to_string().as_bytes()));
        assert!(!calls.intercept(br#"{"jsonrpc":"2.0","id":4,"result":null}"#));

        let reply = json!({"jsonrpc": "2.0", "id": "copilot-model-1", "result": {"text": "Hi"}});
        assert!(calls.intercept(reply.to_string().as_bytes()));
        assert_eq!(task.await.unwrap(), Ok(json!({"text": "Hi"})));
        // A delta after the reply is dropped, not passed on.
        assert!(calls.intercept(progress.to_string().as_bytes()));
        assert!(arrived.try_recv().is_err());
    }

    #[tokio::test]
    async fn a_dropped_call_sends_a_cancel_and_its_late_reply_is_dropped() {
        let calls = ClientCalls::default();
        let (output, mut sent) = mpsc::channel(8);
        calls.attach(output);
        let (deltas, _arrived) = mpsc::unbounded_channel();
        let mut call = calls.call(json!({}), deltas);
        // Poll once so the request goes out, then drop the call.
        assert!(futures::poll!(&mut call).is_pending());
        drop(call);
        let request = body(&sent.recv().await.unwrap());
        let cancel = body(&sent.recv().await.unwrap());
        assert_eq!(cancel["method"], "$/cancelRequest");
        assert_eq!(cancel["params"]["id"], request["id"]);
        let late = json!({"jsonrpc": "2.0", "id": request["id"], "result": {}});
        assert!(calls.intercept(late.to_string().as_bytes()));
    }

    #[tokio::test]
    async fn an_error_reply_is_the_clients_code_and_message() {
        let calls = ClientCalls::default();
        let (output, mut sent) = mpsc::channel(8);
        calls.attach(output);
        let (deltas, _arrived) = mpsc::unbounded_channel();
        let task = tokio::spawn(calls.call(json!({}), deltas));
        let request = body(&sent.recv().await.unwrap());
        let error = json!({"jsonrpc": "2.0", "id": request["id"],
            "error": {"code": -32803, "message": "no model"}});
        assert!(calls.intercept(error.to_string().as_bytes()));
        assert_eq!(
            task.await.unwrap(),
            Err(ChannelError::Reply {
                code: -32803,
                message: "no model".into()
            })
        );
    }
}

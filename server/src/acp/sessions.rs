//! The session map: one `session::Session` per ACP session (its own root, sandbox and
//! conversation), and the prompt running in it with the token that cancels it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::updates::Updates;
use crate::session::{lock, Session};

pub struct AcpSession {
    pub session: Arc<Session>,
    pub updates: Updates,
    /// The conversation every prompt of this session continues.
    pub conversation_id: String,
    /// The running prompt: its number and the token that stops it.
    running: Mutex<Option<(u64, CancellationToken)>>,
    prompts: AtomicU64,
}

/// A running prompt's hold on its session; dropping it forgets the prompt.
pub struct RunningPrompt {
    session: Arc<AcpSession>,
    number: u64,
    pub cancel: CancellationToken,
}

impl Drop for RunningPrompt {
    fn drop(&mut self) {
        let mut running = lock(&self.session.running);
        if running
            .as_ref()
            .is_some_and(|(number, _)| *number == self.number)
        {
            *running = None;
        }
    }
}

impl AcpSession {
    pub fn new(session: Arc<Session>, updates: Updates, conversation_id: String) -> AcpSession {
        AcpSession {
            session,
            updates,
            conversation_id,
            running: Mutex::new(None),
            prompts: AtomicU64::new(0),
        }
    }

    /// Starts a prompt. Clients send one prompt at a time per session; one that comes
    /// while another runs replaces it (the earlier one ends as cancelled).
    pub fn start_prompt(self: &Arc<Self>) -> RunningPrompt {
        let number = self.prompts.fetch_add(1, Ordering::Relaxed) + 1;
        let cancel = CancellationToken::new();
        if let Some((_, earlier)) = lock(&self.running).replace((number, cancel.clone())) {
            earlier.cancel();
        }
        RunningPrompt {
            session: self.clone(),
            number,
            cancel,
        }
    }

    /// `session/cancel`: stops the running prompt, if any.
    pub fn cancel(&self) {
        if let Some((_, cancel)) = lock(&self.running).as_ref() {
            cancel.cancel();
        }
    }
}

#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Arc<AcpSession>>>,
    counter: AtomicU64,
}

impl Sessions {
    pub fn next_id(&self) -> String {
        format!(
            "session-{}",
            self.counter.fetch_add(1, Ordering::Relaxed) + 1
        )
    }

    pub fn insert(&self, id: String, session: AcpSession) {
        lock(&self.map).insert(id, Arc::new(session));
    }

    pub fn get(&self, id: &str) -> Option<Arc<AcpSession>> {
        lock(&self.map).get(id).cloned()
    }
}

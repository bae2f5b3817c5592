//! The session map: one `session::Session` per ACP session (its own root, sandbox and
//! conversation, which is kept on disk under the session's id), with its mode and the
//! models its provider listed, its MCP
//! servers' tools, the tools the user allowed for the whole session, the notices still
//! to show, and the prompt running in it with the token that cancels it.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::updates::Updates;
use crate::mcp::client::McpTool;
use crate::session::{lock, Session};

/// `session/set_mode`'s modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Read-only: the edit tool is not offered.
    Ask,
    /// Suggested edits, each asked about at its tool call.
    Edit,
}

impl Mode {
    pub const ALL: [Mode; 2] = [Mode::Ask, Mode::Edit];

    pub fn id(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::Edit => "edit",
        }
    }

    /// As a menu shows it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Ask => "Ask",
            Mode::Edit => "Edit",
        }
    }

    pub fn from_id(id: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|mode| mode.id() == id)
    }
}

/// The session's MCP servers: `None` while they start.
pub type McpTools = watch::Receiver<Option<Vec<McpTool>>>;

pub struct AcpSession {
    pub session: Arc<Session>,
    pub updates: Updates,
    /// The session id, which is also its conversation's id.
    pub id: String,
    pub mode: Mutex<Mode>,
    /// The models the provider listed for the model menu (empty until it answers).
    pub listed_models: Mutex<Vec<String>>,
    /// Whether the menu with the listed models was sent again at a first prompt.
    pub menu_resent: AtomicBool,
    pub mcp_tools: McpTools,
    /// Tools the user allowed for the rest of the session ("allow always").
    pub always_allowed: Mutex<HashSet<String>>,
    /// What to tell the user at the start of the next answer.
    pub notices: Arc<Notices>,
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
    pub fn new(
        session: Arc<Session>,
        updates: Updates,
        id: String,
        mcp_tools: McpTools,
        notices: Arc<Notices>,
    ) -> AcpSession {
        AcpSession {
            session,
            updates,
            id,
            mode: Mutex::new(Mode::Edit),
            listed_models: Mutex::new(Vec::new()),
            menu_resent: AtomicBool::new(false),
            mcp_tools,
            always_allowed: Mutex::new(HashSet::new()),
            notices,
            running: Mutex::new(None),
            prompts: AtomicU64::new(0),
        }
    }

    /// Starts a prompt. Called in the request's handler, before anything else is read
    /// from the client, so a `session/cancel` right behind it finds it. Clients send
    /// one prompt at a time per session; one that comes while another runs replaces it
    /// (the earlier one ends as cancelled).
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

    pub fn mode(&self) -> Mode {
        *lock(&self.mode)
    }
}

/// Things to tell the user at the start of the next answer (an MCP server that failed),
/// each once: ACP has no channel for them outside a prompt.
#[derive(Default)]
pub struct Notices {
    pending: Mutex<Vec<String>>,
    /// MCP servers already reported as failed.
    failed_servers: Mutex<HashSet<String>>,
}

impl Notices {
    /// Notes that an MCP server failed; it is reported once.
    pub fn server_failed(&self, server: &str, reason: &str) {
        if lock(&self.failed_servers).insert(server.to_string()) {
            tracing::warn!(server, reason, "MCP server failed");
            lock(&self.pending).push(format!(
                "*The MCP server `{server}` is not available: {reason}. Its tools are not offered in this session.*"
            ));
        }
    }

    pub fn server_has_failed(&self, server: &str) -> bool {
        lock(&self.failed_servers).contains(server)
    }

    /// The notices not shown yet; each is returned once.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.pending))
    }
}

#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Arc<AcpSession>>>,
}

impl Sessions {
    /// A new session id: 128 random bits, so ids never repeat across processes (ACP
    /// clients key their records by it, and it names the conversation on disk).
    pub fn new_id() -> String {
        format!("{:016x}{:016x}", random_u64(), random_u64())
    }

    pub fn insert(&self, session: AcpSession) -> Arc<AcpSession> {
        let session = Arc::new(session);
        if let Some(earlier) = lock(&self.map).insert(session.id.clone(), session.clone()) {
            // Loaded again: the earlier copy's prompt ends.
            earlier.cancel();
        }
        session
    }

    pub fn get(&self, id: &str) -> Option<Arc<AcpSession>> {
        lock(&self.map).get(id).cloned()
    }
}

/// 64 bits from the operating system's randomness: each `RandomState` is keyed from it
/// (std seeds the keys per thread and steps them per instance), and SipHash with secret
/// keys is unpredictable. The clock and the process id only keep two calls apart.
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.write_u128(now);
    hasher.write_u32(std::process::id());
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_random_hex_and_do_not_repeat() {
        let ids: HashSet<String> = (0..1000).map(|_| Sessions::new_id()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids
            .iter()
            .all(|id| id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit())));
    }
}

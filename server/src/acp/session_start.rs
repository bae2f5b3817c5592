//! Beginning a session: `session/new` (a new id, random), `session/load` (a kept
//! conversation replayed as `session/update`s, then continued), and `session/list`
//! (the kept conversations). A session's workspace root and sandbox are its `cwd`; its
//! MCP servers start in the background; the answer carries the modes and the menus
//! (`config_options.rs`), and the slash commands and the provider's models follow it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    AvailableCommandsUpdate, ListSessionsRequest, ListSessionsResponse, LoadSessionRequest,
    LoadSessionResponse, McpServer, NewSessionRequest, NewSessionResponse, SessionId, SessionInfo,
    SessionMode, SessionModeState, SessionUpdate,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};

use super::agent::{invalid_params, AgentState};
use super::client_fs::ClientFiles;
use super::sessions::{AcpSession, Mode, Notices, Sessions};
use super::updates::Updates;
use super::{commands, config_options, mcp_tools};
use crate::session::conversations::{self, ConversationStore};
use crate::session::{lock, IndexEvent, Session};

pub fn new_session(
    state: &AgentState,
    request: NewSessionRequest,
    responder: Responder<NewSessionResponse>,
    connection: ConnectionTo<Client>,
) -> Result<(), Error> {
    let id = Sessions::new_id();
    let directories = request.additional_directories;
    match open(
        state,
        (&request.cwd, &directories),
        request.mcp_servers,
        id.clone(),
        connection,
    ) {
        Ok(session) => {
            // Kept at once: a client may load it in another process before asking.
            let store = ConversationStore::from_env();
            store.create(&session.updates.root, &id);
            store.keep_directories(&session.updates.root, &id, &directories);
            responder.respond(
                NewSessionResponse::new(id)
                    .modes(modes(session.mode()))
                    .config_options(config_options::options(&session)),
            )?;
            send_commands(&session);
            config_options::list_models(&session);
            Ok(())
        }
        Err(error) => responder.respond_with_error(error),
    }
}

pub fn load_session(
    state: &AgentState,
    request: LoadSessionRequest,
    responder: Responder<LoadSessionResponse>,
    connection: ConnectionTo<Client>,
) -> Result<(), Error> {
    let id = request.session_id.0.to_string();
    let kept = canonical_cwd(&request.cwd).and_then(|root| {
        ConversationStore::from_env()
            .load(&root, &id)
            .ok_or_else(|| {
                let mut error = Error::new(
                    ErrorCode::RESOURCE_NOT_FOUND,
                    format!("no session {id} is kept for {}", request.cwd.display()),
                );
                error.data = None;
                error
            })
    });
    let conversation = match kept {
        Ok(conversation) => conversation,
        Err(error) => return responder.respond_with_error(error),
    };
    // The folders the client names now, else those the session was kept with.
    let directories = match request.additional_directories.is_empty() {
        true => conversation.additional_directories.clone(),
        false => request.additional_directories,
    };
    match open(
        state,
        (&request.cwd, &directories),
        request.mcp_servers,
        id.clone(),
        connection,
    ) {
        Ok(session) => {
            ConversationStore::from_env().keep_directories(
                &session.updates.root,
                &id,
                &directories,
            );
            // The conversation as it was shown, then the answer; the next prompt
            // continues it (the session's history comes from the same file).
            session.updates.replay(&conversation.transcript);
            config_options::restore(&session, &conversation);
            responder.respond(
                LoadSessionResponse::new()
                    .modes(modes(session.mode()))
                    .config_options(config_options::options(&session)),
            )?;
            send_commands(&session);
            config_options::list_models(&session);
            Ok(())
        }
        Err(error) => responder.respond_with_error(error),
    }
}

pub fn list_sessions(request: &ListSessionsRequest) -> ListSessionsResponse {
    let cwd = match &request.cwd {
        Some(cwd) => match std::fs::canonicalize(cwd) {
            Ok(root) => Some(root),
            // A folder that is gone has no sessions.
            Err(_) => return ListSessionsResponse::new(Vec::new()),
        },
        None => None,
    };
    let sessions = ConversationStore::from_env()
        .list(cwd.as_deref())
        .into_iter()
        // A session nobody asked anything in (a client opens one per chat window) has
        // nothing to resume, and would be listed as a bare id.
        .filter(|kept| !kept.title.is_empty())
        .map(|kept| {
            SessionInfo::new(kept.id, kept.cwd)
                .additional_directories(kept.additional_directories)
                .title(Some(kept.title).filter(|title| !title.is_empty()))
                .updated_at(conversations::rfc3339(kept.updated))
        })
        .collect();
    ListSessionsResponse::new(sessions)
}

fn canonical_cwd(cwd: &Path) -> Result<PathBuf, Error> {
    if !cwd.is_absolute() {
        return Err(invalid_params(format!(
            "cwd must be an absolute path, got {}",
            cwd.display()
        )));
    }
    std::fs::canonicalize(cwd).map_err(|error| {
        invalid_params(format!(
            "cannot use {} as the workspace: {error}",
            cwd.display()
        ))
    })
}

/// A session rooted at `cwd` and its additional directories (each a root beside it,
/// docs/protocol.md section 10): its sandbox over them, its index warming up, its MCP
/// servers starting.
fn open(
    state: &AgentState,
    (cwd, additional): (&Path, &[PathBuf]),
    mcp_servers: Vec<McpServer>,
    id: String,
    connection: ConnectionTo<Client>,
) -> Result<Arc<AcpSession>, Error> {
    let cwd_root = canonical_cwd(cwd)?;
    let mut roots = vec![cwd_root.clone()];
    for directory in additional {
        roots.push(canonical_cwd(directory).map_err(|_| {
            invalid_params(format!(
                "cannot use {} as an additional directory: it must be an absolute path to a folder",
                directory.display()
            ))
        })?);
    }
    let session_id = SessionId::new(id.clone());
    let files = Arc::new(ClientFiles::new(
        connection.clone(),
        session_id.clone(),
        *lock(&state.fs),
        tokio::runtime::Handle::current(),
    ));
    let session = Arc::new(Session::new(state.settings.clone()));
    // `cwd: "/"` or a home directory is not a project: indexing it would read the
    // whole machine in the background.
    let home = crate::workspace::project_root::home_dir();
    for root in &roots {
        if let Some(why) = crate::workspace::project_root::not_a_project(root, home.as_deref()) {
            return Err(invalid_params(why));
        }
    }
    session
        .set_roots_with_documents(&roots, files.clone())
        .map_err(|error| {
            invalid_params(format!(
                "cannot use {} as the workspace: {error}",
                cwd.display()
            ))
        })?;
    let Some(workspace) = session.workspace() else {
        return Err(Error::internal_error());
    };
    // An index fault (kept in memory only) is told in the next answer.
    session.tell_faults_in_answers();
    // ACP has no progress or message channel outside a prompt: the index's report
    // (and a workspace too large to index fully) goes to the log.
    session.warm_up(Arc::new(|event| {
        if let IndexEvent::Done(report) = event {
            match report.truncated {
                Some(left_out) => tracing::warn!("workspace index bounded: {left_out}"),
                None => tracing::debug!(files_read = report.files_read, "index refreshed"),
            }
        }
    }));
    // The conversation is kept under `cwd`, whatever the other roots.
    let root = cwd_root;
    let notices = Arc::new(Notices::default());
    let mcp = mcp_tools::start(mcp_servers, &root, notices.clone());
    let updates = Updates {
        connection,
        session_id,
        root,
        sandbox: workspace.sandbox.clone(),
        files,
    };
    tracing::info!(session = %id, roots = workspace.sandbox.roots().len(), root = %workspace.root().display(), "ACP session");
    Ok(state
        .sessions
        .insert(AcpSession::new(session, updates, id, mcp, notices)))
}

fn modes(current: Mode) -> SessionModeState {
    SessionModeState::new(
        current.id(),
        vec![
            SessionMode::new(Mode::Ask.id(), Mode::Ask.name())
                .description("Answers only: no edits are suggested".to_string()),
            SessionMode::new(Mode::Edit.id(), Mode::Edit.name())
                .description("Answers, and edits you approve one by one".to_string()),
        ],
    )
}

fn send_commands(session: &AcpSession) {
    session.updates.send(SessionUpdate::AvailableCommandsUpdate(
        AvailableCommandsUpdate::new(commands::available()),
    ));
}

//! The ACP agent: the handler table over one stdio connection. Each handler hands off
//! in a few lines. Handlers run inside the SDK's dispatch loop, so a prompt runs on a
//! task of its own and answers when it ends; the loop stays free for `session/cancel`
//! and for the client's replies to our `fs/*` and permission requests.

use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, Implementation, InitializeRequest, InitializeResponse,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse,
    SessionId, StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, ByteStreams, Client, Error};
use tokio::sync::mpsc;

use super::client_fs::{ClientFiles, FsCapabilities};
use super::permissions::{self, Offered};
use super::prompt;
use super::sessions::{AcpSession, Sessions};
use super::updates::Updates;
use crate::agent::{AskEvent, StopReason as AgentStop};
use crate::session::{lock, AskError, Session, Settings};

struct AgentState {
    settings: Settings,
    fs: Mutex<FsCapabilities>,
    sessions: Sessions,
}

/// Serves ACP on stdin and `output` (the protocol's stdout) until the client closes
/// the connection.
pub async fn serve(
    settings: Settings,
    output: impl std::io::Write + Send + 'static,
) -> anyhow::Result<()> {
    let transport = ByteStreams::new(
        blocking::Unblock::new(output),
        blocking::Unblock::new(std::io::stdin()),
    );
    let state = Arc::new(AgentState {
        settings,
        fs: Mutex::new(FsCapabilities::default()),
        sessions: Sessions::default(),
    });
    let (on_initialize, on_new_session, on_prompt, on_cancel) =
        (state.clone(), state.clone(), state.clone(), state);
    Agent
        .v1()
        .name("copilot-ls")
        .on_receive_request(
            async move |request: InitializeRequest,
                        responder: Responder<InitializeResponse>,
                        _connection: ConnectionTo<Client>| {
                responder.respond(on_initialize.initialize(&request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest,
                        responder: Responder<NewSessionResponse>,
                        connection: ConnectionTo<Client>| {
                match on_new_session.new_session(request, connection) {
                    Ok(response) => responder.respond(response),
                    Err(error) => responder.respond_with_error(error),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest,
                        responder: Responder<PromptResponse>,
                        _connection: ConnectionTo<Client>| {
                match on_prompt.sessions.get(&request.session_id.0) {
                    Some(session) => {
                        tokio::spawn(run_prompt(session, request, responder));
                        Ok(())
                    }
                    None => responder.respond_with_error(unknown_session(&request.session_id)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _connection: ConnectionTo<Client>| {
                if let Some(session) = on_cancel.sessions.get(&notification.session_id.0) {
                    session.cancel();
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await
        .map_err(|error| anyhow::anyhow!("ACP connection failed: {}", error.message))
}

impl AgentState {
    fn initialize(&self, request: &InitializeRequest) -> InitializeResponse {
        let fs = &request.client_capabilities.fs;
        *lock(&self.fs) = FsCapabilities {
            read: fs.read_text_file,
            write: fs.write_text_file,
        };
        tracing::info!(
            client_version = ?request.protocol_version,
            read_text_file = fs.read_text_file,
            write_text_file = fs.write_text_file,
            "ACP initialize"
        );
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(
                AgentCapabilities::new()
                    .prompt_capabilities(PromptCapabilities::new().embedded_context(true)),
            )
            .agent_info(
                Implementation::new("copilot-ls", env!("CARGO_PKG_VERSION")).title("copilot-ls"),
            )
    }

    /// A session rooted at `cwd`: its workspace root and sandbox.
    fn new_session(
        &self,
        request: NewSessionRequest,
        connection: ConnectionTo<Client>,
    ) -> Result<NewSessionResponse, Error> {
        if !request.cwd.is_absolute() {
            return Err(invalid_params(format!(
                "cwd must be an absolute path, got {}",
                request.cwd.display()
            )));
        }
        let id = self.sessions.next_id();
        let session_id = SessionId::new(id.clone());
        let files = Arc::new(ClientFiles::new(
            connection.clone(),
            session_id.clone(),
            *lock(&self.fs),
            tokio::runtime::Handle::current(),
        ));
        let session = Arc::new(Session::new(self.settings.clone()));
        session
            .set_root_with_documents(&request.cwd, files.clone())
            .map_err(|error| {
                invalid_params(format!(
                    "cannot use {} as the workspace: {error}",
                    request.cwd.display()
                ))
            })?;
        let Some(workspace) = session.workspace() else {
            return Err(Error::internal_error());
        };
        // ACP has no progress or message channel outside a prompt: the index's report
        // (and a workspace too large to index fully) goes to the log.
        session.warm_up(std::sync::Arc::new(|event| {
            if let crate::session::IndexEvent::Done(report) = event {
                match report.truncated {
                    Some(left_out) => tracing::warn!("workspace index bounded: {left_out}"),
                    None => tracing::debug!(files_read = report.files_read, "index refreshed"),
                }
            }
        }));
        let updates = Updates {
            connection,
            session_id: session_id.clone(),
            root: workspace.root().to_path_buf(),
            files,
        };
        tracing::info!(session = %id, root = %workspace.root().display(), "ACP session");
        self.sessions.insert(
            id.clone(),
            AcpSession::new(session, updates, format!("acp-{id}")),
        );
        Ok(NewSessionResponse::new(session_id))
    }
}

/// One prompt, start to answer: the ask with its events streamed as session updates,
/// then the rest of the answer, then the permission for each suggested edit.
async fn run_prompt(
    session: Arc<AcpSession>,
    request: PromptRequest,
    responder: Responder<PromptResponse>,
) {
    let reply = prompt_reply(&session, &request).await;
    let sent = match reply {
        Ok(stop) => responder.respond(PromptResponse::new(stop)),
        Err(error) => responder.respond_with_error(error),
    };
    if let Err(error) = sent {
        tracing::debug!(error = %error.message, "prompt reply not sent");
    }
}

async fn prompt_reply(
    session: &Arc<AcpSession>,
    request: &PromptRequest,
) -> Result<StopReason, Error> {
    let updates = &session.updates;
    let ask = prompt::ask_request(&request.prompt, &updates.root, &session.conversation_id)
        .map_err(invalid_params)?;
    let running = session.start_prompt();
    updates.files.forget();

    let (events, received) = mpsc::unbounded_channel();
    let sink = move |event: AskEvent| {
        let _ = events.send(event);
    };
    let forwarder = {
        let updates = updates.clone();
        tokio::spawn(async move { updates.forward(received).await })
    };
    // Dropping the ask (on cancel) aborts its provider call: no further model call.
    let result = tokio::select! {
        biased;
        _ = running.cancel.cancelled() => None,
        result = session.session.ask(ask, &sink) => Some(result),
    };
    drop(sink);
    let streamed = forwarder.await.unwrap_or_default();
    let outcome = match result {
        None => return Ok(StopReason::Cancelled),
        Some(Err(error)) => return Err(ask_error(error)),
        Some(Ok(outcome)) => outcome.outcome,
    };
    updates.finish_answer(&streamed, &outcome);
    if permissions::offer(updates, &streamed.edits, &running.cancel).await == Offered::Cancelled
        || running.cancel.is_cancelled()
    {
        return Ok(StopReason::Cancelled);
    }
    Ok(match outcome.stop_reason {
        AgentStop::MaxSteps => StopReason::MaxTurnRequests,
        AgentStop::Answered | AgentStop::NoProvider => StopReason::EndTurn,
    })
}

/// A failed ask as the contract wants it: -32603 naming the cause (the provider's
/// status or connection error; the key never appears in it).
fn ask_error(error: AskError) -> Error {
    match error {
        AskError::InvalidParams(message) => invalid_params(message),
        AskError::Provider(error) => internal_error(error.to_string()),
        AskError::Failed(message) => internal_error(message),
    }
}

fn invalid_params(message: impl Into<String>) -> Error {
    let mut error = Error::invalid_params();
    error.message = message.into();
    error
}

fn internal_error(message: impl Into<String>) -> Error {
    let mut error = Error::internal_error();
    error.message = message.into();
    error
}

fn unknown_session(id: &SessionId) -> Error {
    invalid_params(format!("unknown session {}", id.0))
}

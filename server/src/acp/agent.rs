//! The ACP agent: the handler table over one stdio connection. Each handler hands off
//! in a few lines. Handlers run inside the SDK's dispatch loop, one message at a time in
//! the order they arrive, so a prompt is registered (and can be cancelled) before the
//! next message is read, then runs on a task of its own and answers when it ends; the
//! loop stays free for `session/cancel` and for the client's replies to our `fs/*` and
//! permission requests.

use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, Implementation, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    PromptResponse, SessionAdditionalDirectoriesCapabilities, SessionCapabilities,
    SessionListCapabilities, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
    SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Error};

use super::client_fs::FsCapabilities;
use super::sessions::{Mode, Sessions};
use super::{config_options, session_start, transport, turn};
use crate::session::{lock, Settings};

pub struct AgentState {
    pub settings: Settings,
    pub fs: Mutex<FsCapabilities>,
    pub sessions: Sessions,
}

/// Serves ACP on stdin and `output` (the protocol's stdout) until the client closes
/// the connection.
pub async fn serve(
    settings: Settings,
    output: impl std::io::Write + Send + 'static,
) -> anyhow::Result<()> {
    let (transport, writer) = transport::lines(blocking::Unblock::new(std::io::stdin()), output);
    let state = Arc::new(AgentState {
        settings,
        fs: Mutex::new(FsCapabilities::default()),
        sessions: Sessions::default(),
    });
    let (on_initialize, on_new, on_load) = (state.clone(), state.clone(), state.clone());
    let (on_prompt, on_cancel, on_mode) = (state.clone(), state.clone(), state.clone());
    let on_option = state;
    let served = Agent
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
                session_start::new_session(&on_new, request, responder, connection)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest,
                        responder: Responder<LoadSessionResponse>,
                        connection: ConnectionTo<Client>| {
                session_start::load_session(&on_load, request, responder, connection)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ListSessionsRequest,
                        responder: Responder<ListSessionsResponse>,
                        _connection: ConnectionTo<Client>| {
                responder.respond(session_start::list_sessions(&request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest,
                        responder: Responder<PromptResponse>,
                        _connection: ConnectionTo<Client>| {
                match on_prompt.sessions.get(&request.session_id.0) {
                    Some(session) => turn::start(session, request, responder),
                    None => responder.respond_with_error(unknown_session(&request.session_id.0)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest,
                        responder: Responder<SetSessionModeResponse>,
                        _connection: ConnectionTo<Client>| {
                let Some(session) = on_mode.sessions.get(&request.session_id.0) else {
                    return responder.respond_with_error(unknown_session(&request.session_id.0));
                };
                let Some(mode) = Mode::from_id(&request.mode_id.0) else {
                    return responder.respond_with_error(invalid_params(format!(
                        "unknown mode {}: the modes are ask and edit",
                        request.mode_id.0
                    )));
                };
                responder.respond(SetSessionModeResponse::new())?;
                config_options::set_mode(&session, mode);
                config_options::send_options(&session);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionConfigOptionRequest,
                        responder: Responder<SetSessionConfigOptionResponse>,
                        _connection: ConnectionTo<Client>| {
                let Some(session) = on_option.sessions.get(&request.session_id.0) else {
                    return responder.respond_with_error(unknown_session(&request.session_id.0));
                };
                match config_options::set(&session, &request) {
                    Ok(options) => responder.respond(SetSessionConfigOptionResponse::new(options)),
                    Err(error) => responder.respond_with_error(error),
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
        .map_err(|error| anyhow::anyhow!("ACP connection failed: {}", error.message));
    // Every line the connection wrote reaches the client before we exit.
    let _ = blocking::unblock(move || writer.join()).await;
    served
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
        // Whatever version was asked for, ours is the one answered (the transport
        // reads an unusable one as ours).
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(
                AgentCapabilities::new()
                    .load_session(true)
                    .prompt_capabilities(PromptCapabilities::new().embedded_context(true))
                    // stdio MCP servers only (the spec requires them of every agent).
                    .mcp_capabilities(McpCapabilities::new())
                    .session_capabilities(
                        SessionCapabilities::new()
                            .list(SessionListCapabilities::new())
                            .additional_directories(SessionAdditionalDirectoriesCapabilities::new()),
                    ),
            )
            .agent_info(
                Implementation::new("copilot-ls", env!("CARGO_PKG_VERSION")).title("copilot-ls"),
            )
    }
}

pub fn invalid_params(message: impl Into<String>) -> Error {
    let mut error = Error::invalid_params();
    error.message = message.into();
    error
}

pub fn internal_error(message: impl Into<String>) -> Error {
    let mut error = Error::internal_error();
    error.message = message.into();
    error
}

pub fn unknown_session(id: &str) -> Error {
    invalid_params(format!("unknown session {id}"))
}

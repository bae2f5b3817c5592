//! One `session/prompt`, start to answer. It is registered (and can be cancelled) in
//! the request's handler, before the next message is read: a `session/cancel` written
//! right behind its prompt always finds it. Then, on a task of its own: a slash command
//! answered from the index, or the ask with its events streamed as session updates,
//! the MCP tools and the edit reviewer of the session, and the rest of the answer.
//! A cancelled ask ends every tool call it left running with a final update.

use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{PromptRequest, PromptResponse, StopReason};
use agent_client_protocol::v1::Responder;
use agent_client_protocol::Error;

use super::agent::{internal_error, invalid_params};
use super::permissions::EditReviewer;
use super::prompt::{self, Prompt};
use super::sessions::{AcpSession, Mode, RunningPrompt};
use super::updates::Streamed;
use super::{commands, config_options, mcp_tools};
use crate::agent::{AskEvent, AskOptions, StopReason as AgentStop};
use crate::session::conversations::ConversationStore;
use crate::session::{lock, AskError};

pub fn start(
    session: Arc<AcpSession>,
    request: PromptRequest,
    responder: Responder<PromptResponse>,
) -> Result<(), Error> {
    let Some(workspace) = session.session.workspace() else {
        return responder.respond_with_error(Error::internal_error());
    };
    let shown = |path: &std::path::Path| prompt::shown_in(path, &workspace.sandbox);
    let prompt = match prompt::ask_request(&request.prompt, &shown, &session.id) {
        Ok(prompt) => prompt,
        Err(reason) => return responder.respond_with_error(invalid_params(reason)),
    };
    let running = session.start_prompt();
    config_options::resend_at_first_prompt(&session);
    tokio::spawn(async move {
        let reply = run(&session, prompt, &running).await;
        let sent = match reply {
            Ok(stop) => responder.respond(PromptResponse::new(stop)),
            Err(error) => responder.respond_with_error(error),
        };
        if let Err(error) = sent {
            tracing::debug!(error = %error.message, "prompt reply not sent");
        }
    });
    Ok(())
}

async fn run(
    session: &Arc<AcpSession>,
    prompt: Prompt,
    running: &RunningPrompt,
) -> Result<StopReason, Error> {
    let updates = &session.updates;
    let cancel = &running.cancel;
    updates.files.forget();
    updates.files.listed(prompt.attached.iter().cloned());
    // A turn no model takes part in is kept for the replay only.
    let keep = |answer: &str| {
        ConversationStore::from_env().record_exchange(
            &updates.root,
            &session.id,
            &prompt.text,
            answer,
        )
    };
    if let Some((command, argument)) = commands::parse(&prompt.text) {
        let answer = tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                keep(CANCELLED);
                return Ok(StopReason::Cancelled);
            }
            answer = commands::run(session, command, argument) => answer,
        };
        keep(&answer);
        updates.message(answer);
        return Ok(StopReason::EndTurn);
    }
    // The session's MCP servers may still be starting.
    let mcp = tokio::select! {
        biased;
        _ = cancel.cancelled() => {
            keep(CANCELLED);
            return Ok(StopReason::Cancelled);
        }
        tools = mcp_tools::ready(&session.mcp_tools) => tools,
    };
    for notice in session.notices.take() {
        updates.message(format!("{notice}\n\n"));
    }
    if !prompt.left_out.is_empty() {
        updates.message(format!(
            "*This prompt's {} was not read: copilot-ls reads text, resources and resource links.*\n\n",
            prompt.left_out.join(", ")
        ));
    }

    let mut ask = prompt.ask;
    ask.persist_as = Some(if prompt.text.is_empty() {
        "(the attached context)".to_string()
    } else {
        prompt.text.clone()
    });
    ask.options = AskOptions {
        read_only: session.mode() == Mode::Ask,
        places_only: false,
        external_tools: mcp_tools::external_tools(session, mcp),
        review_edit: Some(Arc::new(EditReviewer {
            updates: updates.clone(),
            cancel: cancel.clone(),
        })),
    };
    let streamed = Mutex::new(Streamed::default());
    let sink = |event: AskEvent| updates.event(event, &mut lock(&streamed));
    // Dropping the ask (on cancel) aborts its provider call: no further model call.
    let result = tokio::select! {
        biased;
        _ = cancel.cancelled() => None,
        result = session.session.ask(ask, &sink) => Some(result),
    };
    let mut streamed = streamed.into_inner().unwrap_or_else(|e| e.into_inner());
    let outcome = match result {
        None => {
            updates.close_open_calls(&mut streamed, "cancelled");
            keep(CANCELLED);
            return Ok(StopReason::Cancelled);
        }
        Some(Err(error)) => {
            updates.close_open_calls(&mut streamed, "the prompt failed");
            return Err(ask_error(error));
        }
        Some(Ok(outcome)) => outcome.outcome,
    };
    updates.finish_answer(&streamed, &outcome);
    Ok(match outcome.stop_reason {
        AgentStop::MaxSteps => StopReason::MaxTurnRequests,
        AgentStop::Answered | AgentStop::NoProvider => StopReason::EndTurn,
    })
}

/// What a loaded session shows for a prompt that was cancelled.
const CANCELLED: &str = "*(cancelled)*";

/// A failed ask as the contract wants it: -32603 naming the cause (the provider's
/// status or connection error; the key never appears in it).
fn ask_error(error: AskError) -> Error {
    match error {
        AskError::InvalidParams(message) => invalid_params(message),
        AskError::Provider(error) => internal_error(error.to_string()),
        AskError::Failed(message) => internal_error(message),
    }
}

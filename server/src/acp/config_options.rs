//! The session's menus (ACP session config options): the mode, the same choice as
//! `session/set_mode`, and the model, whose choices are the configured model and the
//! ones its provider lists (`GET …/models`, once per session, in the background so
//! `session/new` never waits on the network). `session/set_config_option` changes
//! either and answers with the whole menu; `session/set_mode` sends it as a
//! `config_option_update`, and a mode change is also told as `current_mode_update` for
//! clients that know only modes.
//! Choices are kept with the session's conversation and restored by `session/load`.
//! Without a provider there is no model to choose, so only the mode is offered.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, CurrentModeUpdate, SessionConfigOption, SessionConfigOptionCategory,
    SessionConfigSelectOption, SessionUpdate, SetSessionConfigOptionRequest,
};
use agent_client_protocol::Error;

use super::agent::invalid_params;
use super::sessions::{AcpSession, Mode};
use crate::session::conversations::{Conversation, ConversationStore};
use crate::session::lock;

pub const MODE: &str = "mode";
pub const MODEL: &str = "model";

/// The menus as they stand: the mode, then the model when a provider is configured.
pub fn options(session: &AcpSession) -> Vec<SessionConfigOption> {
    let mode = SessionConfigOption::select(
        MODE,
        "Mode",
        session.mode().id(),
        Mode::ALL
            .into_iter()
            .map(|mode| SessionConfigSelectOption::new(mode.id(), mode.name()))
            .collect::<Vec<_>>(),
    )
    .category(SessionConfigOptionCategory::Mode)
    .description("Ask answers only; Edit also suggests edits you approve one by one".to_string());
    let mut options = vec![mode];
    if let Some((current, choices)) = models(session) {
        options.push(
            SessionConfigOption::select(
                MODEL,
                "Model",
                current,
                choices
                    .into_iter()
                    .map(|id| SessionConfigSelectOption::new(id.clone(), id))
                    .collect::<Vec<_>>(),
            )
            .category(SessionConfigOptionCategory::Model)
            .description("The model every answer in this session is asked of".to_string()),
        );
    }
    options
}

/// The current model and the menu's choices; `None` without a provider.
fn models(session: &AcpSession) -> Option<(String, Vec<String>)> {
    let current = session.session.current_model()?;
    let choices = model_choices(&current, &lock(&session.listed_models));
    Some((current, choices))
}

/// The provider's models in its order, each once, with the current one first when the
/// provider does not list it (a configured name it spells otherwise): the menu keeps
/// its order while the choice moves.
fn model_choices(current: &str, listed: &[String]) -> Vec<String> {
    let mut choices = Vec::new();
    if !listed.iter().any(|id| id == current) {
        choices.push(current.to_string());
    }
    for id in listed {
        if !choices.contains(id) {
            choices.push(id.clone());
        }
    }
    choices
}

/// Asks the provider for its models and, when it lists some, sends the longer menu.
/// A provider that lists none (or cannot) keeps the menu at the configured model; that
/// is worth a log line, not a message in the session.
pub fn list_models(session: &Arc<AcpSession>) {
    let session = session.clone();
    tokio::spawn(async move {
        match session.session.list_models().await {
            None => {}
            Some(Ok(ids)) if ids.is_empty() => {}
            Some(Ok(ids)) => {
                *lock(&session.listed_models) = ids;
                send_options(&session);
            }
            Some(Err(error)) => {
                tracing::info!("the provider did not list its models ({error}); the model menu offers the configured one")
            }
        }
    });
}

/// `session/set_config_option`: a mode or a model among the choices offered.
pub fn set(
    session: &AcpSession,
    request: &SetSessionConfigOptionRequest,
) -> Result<Vec<SessionConfigOption>, Error> {
    let Some(value) = request.value.as_value_id() else {
        return Err(invalid_params(format!(
            "{} takes one of its choices, not a boolean",
            request.config_id.0
        )));
    };
    let value = value.0.as_ref();
    match request.config_id.0.as_ref() {
        MODE => {
            let mode = Mode::from_id(value).ok_or_else(|| {
                invalid_params(format!("unknown mode {value}: the modes are ask and edit"))
            })?;
            set_mode(session, mode);
        }
        MODEL => {
            let Some((_, choices)) = models(session) else {
                return Err(invalid_params(
                    "no provider is configured, so there is no model to choose".to_string(),
                ));
            };
            if !choices.iter().any(|choice| choice == value) {
                return Err(invalid_params(format!(
                    "unknown model {value}: the choices are {}",
                    choices.join(", ")
                )));
            }
            let problems = session
                .session
                .apply_settings(&serde_json::json!({ "model": value }));
            if let Some(problem) = problems.into_iter().next() {
                return Err(invalid_params(problem));
            }
            keep(session, MODEL, value);
        }
        other => {
            return Err(invalid_params(format!(
                "unknown configuration option {other}: the options are {MODE} and {MODEL}"
            )))
        }
    }
    Ok(options(session))
}

/// Switches the mode and tells the client in both vocabularies.
pub fn set_mode(session: &AcpSession, mode: Mode) {
    *lock(&session.mode) = mode;
    keep(session, MODE, mode.id());
    session
        .updates
        .send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
            mode.id(),
        )));
}

/// Keeps a choice with the session's conversation, so `session/load` restores it.
fn keep(session: &AcpSession, menu: &str, value: &str) {
    ConversationStore::from_env().choose(&session.updates.root, &session.id, menu, value);
}

/// A loaded session's choices, as they were left: a mode that no longer exists or a
/// model with no provider to ask is passed over.
pub fn restore(session: &AcpSession, conversation: &Conversation) {
    if let Some(mode) = conversation
        .choices
        .get(MODE)
        .and_then(|id| Mode::from_id(id))
    {
        *lock(&session.mode) = mode;
    }
    if let Some(model) = conversation.choices.get(MODEL) {
        if session.session.current_model().is_some() {
            session
                .session
                .apply_settings(&serde_json::json!({ "model": model }));
        }
    }
}

/// The menu once more at the session's first prompt when the provider's models came
/// in before it: a client may drop an update that arrives before it has stored the
/// session's id, and CodeCompanion does when the listing is quick. (One that comes
/// later is sent when it comes, by `list_models`.)
pub fn resend_at_first_prompt(session: &AcpSession) {
    if !lock(&session.listed_models).is_empty()
        && !session.menu_resent.swap(true, Ordering::Relaxed)
    {
        send_options(session);
    }
}

/// Sends the whole menu as it stands.
pub fn send_options(session: &AcpSession) {
    session
        .updates
        .send(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
            options(session),
        )));
}

#[cfg(test)]
mod tests {
    use super::model_choices;

    #[test]
    fn the_menu_keeps_the_providers_order_and_lists_each_model_once() {
        let listed = vec!["b".to_string(), "a".to_string(), "b".to_string()];
        assert_eq!(
            model_choices("a", &listed),
            vec!["b", "a"],
            "the provider's order"
        );
        assert_eq!(model_choices("c", &listed), vec!["c", "b", "a"]);
        assert_eq!(model_choices("c", &[]), vec!["c"]);
    }
}

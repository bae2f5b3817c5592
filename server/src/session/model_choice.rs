//! Which model answers an ask: an HTTP provider's, the editor's (contract v5, section
//! 11), or none. The editor's model is the default for a client that runs one when no
//! provider is configured and no key is set; then a missing model, or a refusal, makes
//! the ask answer as `none` does with a first line saying why and what to do. Only an
//! explicitly configured `editor` turns those into provider errors.

use std::sync::Arc;
use std::time::Duration;

use crate::providers::editor::{EditorChannel, EditorModel, EditorModelInfo};
use crate::providers::{ChatModel, ProviderError};

use super::settings::{Env, Provider, Settings};

/// What the client said about its models: the way to run them (present when it
/// declared `copilotEditorModels`) and the models it lists now.
#[derive(Clone, Default)]
pub struct EditorClient {
    pub channel: Option<Arc<dyn EditorChannel>>,
    pub models: Vec<EditorModelInfo>,
}

/// The model of one ask.
pub enum Choice {
    /// An HTTP provider's model (built by the session, which pools its connections).
    Http(crate::providers::ProviderConfig),
    /// The editor's model; `explicit` when `provider: editor` was configured.
    Editor {
        model: Arc<dyn ChatModel>,
        label: String,
        explicit: bool,
    },
    /// No model: answer as `none` does, the notice (if any) first.
    None { notice: Option<String> },
}

/// What a user with the editor as default is told when no model answers, after why.
const WHAT_TO_DO: &str = "Below are the places copilot-ls's own search found. For written answers, install or sign in to a language model extension (GitHub Copilot, for one) and pick its model with \"copilot-ls: Choose Model\", or set `copilot-ls.provider` to `openai` or `anthropic` with a key.";

/// The first line of an answer the editor's model did not write, for `why`.
pub fn no_model_notice(why: &str) -> String {
    format!("**No model answered:** {why}. {WHAT_TO_DO}")
}

/// Chooses the model for an ask. `wanted` is the ask's own `editorModel`, over the
/// configured one; an id no longer listed falls back to the first listed model.
pub fn choose(
    settings: &Settings,
    env: Env,
    editor: &EditorClient,
    wanted: Option<&str>,
    conversation_id: &str,
) -> Result<Choice, ProviderError> {
    let provider = settings.provider(env);
    if provider != Provider::Editor {
        return Ok(match settings.provider_config(env) {
            Some(config) => Choice::Http(config),
            None => Choice::None { notice: None },
        });
    }
    let explicit = settings.provider == Some(Provider::Editor);
    let refuse = |why: &str| {
        if explicit {
            Err(ProviderError::Refused(why.to_string()))
        } else {
            Ok(Choice::None {
                notice: Some(no_model_notice(why)),
            })
        }
    };
    let Some(channel) = editor.channel.clone() else {
        return refuse("this editor runs no language model for copilot-ls");
    };
    let wanted = wanted
        .filter(|id| !id.trim().is_empty())
        .or(settings.editor_model.as_deref());
    let model = match wanted {
        Some(id) => match editor.models.iter().find(|m| m.id == id) {
            Some(model) => Some(model),
            None => {
                if let Some(first) = editor.models.first() {
                    tracing::warn!(
                        "the editor no longer lists the model {id:?}; using {}",
                        first.id
                    );
                }
                editor.models.first()
            }
        },
        None => editor.models.first(),
    };
    let Some(model) = model.cloned() else {
        return refuse("the editor lists no language model yet");
    };
    let label = model.label();
    Ok(Choice::Editor {
        model: Arc::new(EditorModel {
            channel,
            model,
            conversation_id: conversation_id.to_string(),
            max_output_tokens: settings.max_output_tokens,
            timeout: Duration::from_secs(settings.request_timeout_secs),
        }),
        label,
        explicit,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};
    use tokio::sync::mpsc;

    use super::*;
    use crate::providers::editor::ChannelError;
    use crate::providers::BoxFuture;
    use crate::session::settings::env_of;

    struct Nowhere;
    impl EditorChannel for Nowhere {
        fn call(
            &self,
            _: Value,
            _: mpsc::UnboundedSender<Value>,
        ) -> BoxFuture<'static, Result<Value, ChannelError>> {
            Box::pin(async { Err(ChannelError::Closed) })
        }
    }

    fn client(models: Value) -> EditorClient {
        EditorClient {
            channel: Some(Arc::new(Nowhere)),
            models: EditorModelInfo::list_from(&models),
        }
    }

    fn settings(value: Value) -> Settings {
        let mut settings = Settings::default();
        settings.for_client(true);
        assert!(settings.apply(&value).is_empty());
        settings
    }

    fn label(choice: Result<Choice, ProviderError>) -> String {
        match choice {
            Ok(Choice::Editor {
                label, explicit, ..
            }) => format!("{label} explicit={explicit}"),
            Ok(Choice::Http(config)) => format!("http {}", config.model),
            Ok(Choice::None { notice }) => format!("none {}", notice.unwrap_or_default()),
            Err(error) => format!("error {error}"),
        }
    }

    #[test]
    fn the_ask_s_model_then_the_setting_then_the_first_listed() {
        let editor = client(json!([
            {"id": "a", "name": "A", "vendor": "v"},
            {"id": "b", "name": "B", "vendor": "v"}
        ]));
        let env = env_of(&[]);
        let s = settings(json!({"editorModel": "b"}));
        assert_eq!(
            label(choose(&s, &env, &editor, None, "c")),
            "B (v) explicit=false"
        );
        assert_eq!(
            label(choose(&s, &env, &editor, Some("a"), "c")),
            "A (v) explicit=false"
        );
        assert_eq!(
            label(choose(&s, &env, &editor, Some("gone"), "c")),
            "A (v) explicit=false"
        );
        let s = settings(json!({}));
        assert_eq!(
            label(choose(&s, &env, &editor, None, "c")),
            "A (v) explicit=false"
        );
        // A key of one's own is used over the editor's model.
        let env = env_of(&[("OPENAI_API_KEY", "k")]);
        assert_eq!(
            label(choose(&s, &env, &editor, None, "c")),
            "http gpt-4.1-mini"
        );
    }

    #[test]
    fn no_listed_model_answers_as_none_by_default_and_fails_when_configured() {
        let editor = client(json!([]));
        let env = env_of(&[]);
        let default = label(choose(&settings(json!({})), &env, &editor, None, "c"));
        assert!(
            default
                .starts_with("none **No model answered:** the editor lists no language model yet."),
            "{default}"
        );
        assert!(default.contains("copilot-ls.provider"), "{default}");
        let explicit = label(choose(
            &settings(json!({"provider": "editor"})),
            &env,
            &editor,
            None,
            "c",
        ));
        assert_eq!(
            explicit,
            "error the editor's model did not answer: the editor lists no language model yet"
        );
    }
}

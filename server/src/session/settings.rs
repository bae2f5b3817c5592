//! Settings: built-in defaults < environment < `initializationOptions` <
//! `didChangeConfiguration` (PROTOCOL.md section 2). A bad value is reported and the
//! previous value kept; nothing here can fail the server.

use std::time::Duration;

use serde_json::Value;

use crate::providers::{ApiKey, ProviderConfig, ProviderKind};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    OpenAi,
    Anthropic,
    /// The editor's own model, through the client (contract v5, section 11).
    Editor,
    None,
}

impl Provider {
    fn parse(text: &str) -> Option<Provider> {
        match text.trim().to_ascii_lowercase().as_str() {
            "openai" => Some(Provider::OpenAi),
            "anthropic" => Some(Provider::Anthropic),
            "editor" => Some(Provider::Editor),
            "none" => Some(Provider::None),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Editor => "editor",
            Provider::None => "none",
        }
    }
}

pub const DEFAULT_OPENAI_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_ANTHROPIC_URL: &str = "https://api.anthropic.com";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4.1-mini";
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";

/// What the user configured. `None` fields fall back to provider-dependent defaults
/// when the provider is built, so switching provider also switches the defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub provider: Option<Provider>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// The editor model's id (`editorModel`), for `provider: editor`.
    pub editor_model: Option<String>,
    pub api_key_env: Option<String>,
    pub max_steps: u32,
    pub stream: bool,
    pub request_timeout_secs: u64,
    /// The output limit of one model call (`maxOutputTokens`).
    pub max_output_tokens: u32,
    /// Whether the repository's history is read and used (`history`; the environment's
    /// `COPILOT_LS_HISTORY=off` turns it off whatever this says).
    pub history: bool,
    /// Whether the client can run model calls (it declared `copilotEditorModels`). Not a
    /// setting: the front end says so; `provider: editor` is refused without it.
    pub editor_client: bool,
}

/// `maxOutputTokens` unless configured: enough for a long answer with citations, and a
/// bound on a model that never stops (a tiny local model can run until the timeout).
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 4096;
/// The largest `maxOutputTokens` accepted; no current model writes more in one reply.
pub const MAX_OUTPUT_TOKENS_LIMIT: u64 = 1_000_000;

impl Default for Settings {
    fn default() -> Self {
        Settings {
            provider: None,
            base_url: None,
            model: None,
            editor_model: None,
            api_key_env: None,
            max_steps: 8,
            stream: true,
            request_timeout_secs: 120,
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            history: true,
            editor_client: false,
        }
    }
}

/// Reads environment variables; a function so tests need not touch the process env.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The part of a `workspace/didChangeConfiguration` payload that holds the settings:
/// `settings["copilot-ls"]` (what the editor clients send since their settings were
/// renamed so they cannot be taken for GitHub Copilot's), else `settings.copilot`
/// (PROTOCOL.md section 2, and older clients), else the whole object.
pub fn configuration_section(settings: &Value) -> &Value {
    ["copilot-ls", "copilot"]
        .iter()
        .find_map(|key| settings.get(*key))
        .unwrap_or(settings)
}

/// Why `provider: editor` is refused where the client runs no model.
pub const NO_EDITOR_MODELS: &str = "provider \"editor\" needs an editor that runs language models for copilot-ls (VS Code with a model extension such as GitHub Copilot); use \"openai\", \"anthropic\" or \"none\" here";

/// Keys a client may send that configure the client, not the server; not typos.
const CLIENT_KEYS: &[&str] = &["server", "trace", "serverPath", "cmd", "keymaps", "answer"];

impl Settings {
    /// Defaults overlaid with the `COPILOT_LS_*` environment. Returns the problems found.
    pub fn from_env(env: Env) -> (Settings, Vec<String>) {
        // The environment is read before the client's capabilities are known: its
        // `editor` is kept until the front end says (`for_client`).
        let mut settings = Settings {
            editor_client: true,
            ..Settings::default()
        };
        let mut object = serde_json::Map::new();
        let pairs = [
            ("provider", "COPILOT_LS_PROVIDER"),
            ("baseUrl", "COPILOT_LS_BASE_URL"),
            ("model", "COPILOT_LS_MODEL"),
            ("maxSteps", "COPILOT_LS_MAX_STEPS"),
            ("stream", "COPILOT_LS_STREAM"),
            ("requestTimeoutSecs", "COPILOT_LS_TIMEOUT_SECS"),
            ("maxOutputTokens", "COPILOT_LS_MAX_OUTPUT_TOKENS"),
        ];
        for (key, var) in pairs {
            if let Some(value) = env(var).filter(|v| !v.trim().is_empty()) {
                object.insert(key.to_string(), Value::String(value));
            }
        }
        let mut problems: Vec<String> = settings
            .apply(&Value::Object(object))
            .into_iter()
            .map(|p| format!("environment: {p}"))
            .collect();
        settings.editor_client = false;
        // A relative cache dir would resolve against wherever the process started,
        // perhaps inside the workspace (which would then index its own index).
        if let Some(dir) = env("COPILOT_LS_CACHE_DIR").filter(|v| !v.is_empty()) {
            if !std::path::Path::new(&dir).is_absolute() {
                problems.push(format!(
                    "environment: COPILOT_LS_CACHE_DIR must be an absolute path, got {dir:?}; using the default cache directory"
                ));
            }
        }
        (settings, problems)
    }

    /// Overlays a flat settings object. Keys left out (or null) keep their value; a bad
    /// value is reported and keeps the previous one. Lua clients send `[]` for an empty
    /// table, which counts as an empty object.
    pub fn apply(&mut self, value: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        let object = match value {
            Value::Object(object) => object,
            Value::Null => return problems,
            Value::Array(items) if items.is_empty() => return problems,
            other => {
                problems.push(format!("settings must be an object, got {}", kind(other)));
                return problems;
            }
        };
        for (key, value) in object {
            if value.is_null() {
                continue;
            }
            match key.as_str() {
                "provider" => match value.as_str().and_then(Provider::parse) {
                    Some(Provider::Editor) if !self.editor_client => {
                        problems.push(NO_EDITOR_MODELS.to_string())
                    }
                    Some(provider) => self.provider = Some(provider),
                    None => problems.push(format!(
                        "unknown provider {value}; use \"openai\", \"anthropic\", \"editor\" or \"none\""
                    )),
                },
                "editorModel" => match value.as_str().map(str::trim) {
                    Some("") => self.editor_model = None,
                    Some(id) => self.editor_model = Some(id.to_string()),
                    None => problems.push(format!("editorModel must be a string, got {value}")),
                },
                // The editor's models, read by the front end (section 11), not a setting.
                "editorModels" => {}
                "baseUrl" => match value.as_str().map(str::trim) {
                    Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
                        self.base_url = Some(url.trim_end_matches('/').to_string())
                    }
                    Some("") => self.base_url = None,
                    _ => problems.push(format!("baseUrl must be an http:// or https:// URL, got {value}")),
                },
                "model" => match value.as_str().map(str::trim) {
                    Some("") => self.model = None,
                    Some(model) => self.model = Some(model.to_string()),
                    None => problems.push(format!("model must be a string, got {value}")),
                },
                "apiKeyEnv" => match value.as_str().map(str::trim) {
                    Some("") => self.api_key_env = None,
                    Some(name) if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                        self.api_key_env = Some(name.to_string())
                    }
                    _ => problems.push(format!(
                        "apiKeyEnv must be the name of an environment variable (not the key itself), got {}",
                        if value.is_string() { "a string that is not a variable name" } else { kind(value) }
                    )),
                },
                "maxSteps" => match as_u64(value) {
                    Some(n) if (1..=100).contains(&n) => self.max_steps = n as u32,
                    _ => problems.push(format!("maxSteps must be a whole number from 1 to 100, got {value}")),
                },
                "stream" => match as_bool(value) {
                    Some(b) => self.stream = b,
                    None => problems.push(format!("stream must be true or false, got {value}")),
                },
                "requestTimeoutSecs" => match as_u64(value) {
                    Some(n) if (1..=3600).contains(&n) => self.request_timeout_secs = n,
                    _ => problems.push(format!(
                        "requestTimeoutSecs must be a whole number of seconds from 1 to 3600, got {value}"
                    )),
                },
                "maxOutputTokens" => match as_u64(value) {
                    Some(n) if (1..=MAX_OUTPUT_TOKENS_LIMIT).contains(&n) => {
                        self.max_output_tokens = n as u32
                    }
                    _ => problems.push(format!(
                        "maxOutputTokens must be a whole number of tokens from 1 to {MAX_OUTPUT_TOKENS_LIMIT}, got {value}"
                    )),
                },
                "history" => match as_bool(value) {
                    Some(b) => self.history = b,
                    None => problems.push(format!("history must be true or false, got {value}")),
                },
                other if CLIENT_KEYS.contains(&other) => {}
                other => problems.push(format!("unknown setting {other:?} (ignored)")),
            }
        }
        problems
    }

    /// Says whether the client runs model calls, once it is known: without that, a
    /// `provider: editor` (from the environment) is refused as a bad value is, and the
    /// problem returned.
    pub fn for_client(&mut self, editor_client: bool) -> Option<String> {
        self.editor_client = editor_client;
        if !editor_client && self.provider == Some(Provider::Editor) {
            self.provider = None;
            return Some(NO_EDITOR_MODELS.to_string());
        }
        None
    }

    /// The provider in force: the configured one, else by which API key is set, else
    /// the editor's model when the client runs one (section 11).
    pub fn provider(&self, env: Env) -> Provider {
        match self.provider {
            Some(Provider::Editor) if !self.editor_client => return Provider::None,
            Some(provider) => return provider,
            None => {}
        }
        let set = |name: &str| env(name).is_some_and(|v| !v.is_empty());
        if set("ANTHROPIC_API_KEY") {
            Provider::Anthropic
        } else if set("OPENAI_API_KEY") {
            Provider::OpenAi
        } else if self.editor_client {
            Provider::Editor
        } else {
            Provider::None
        }
    }

    pub fn api_key_env(&self, provider: Provider) -> String {
        self.api_key_env.clone().unwrap_or_else(|| match provider {
            Provider::Anthropic => "ANTHROPIC_API_KEY".to_string(),
            _ => "OPENAI_API_KEY".to_string(),
        })
    }

    /// The provider configuration for an ask, or `None` when the provider is `none`.
    pub fn provider_config(&self, env: Env) -> Option<ProviderConfig> {
        let provider = self.provider(env);
        let kind = match provider {
            Provider::OpenAi => ProviderKind::OpenAi,
            Provider::Anthropic => ProviderKind::Anthropic,
            Provider::Editor | Provider::None => return None,
        };
        let (url, model) = match kind {
            ProviderKind::OpenAi => (DEFAULT_OPENAI_URL, DEFAULT_OPENAI_MODEL),
            ProviderKind::Anthropic => (DEFAULT_ANTHROPIC_URL, DEFAULT_ANTHROPIC_MODEL),
        };
        Some(ProviderConfig {
            kind,
            base_url: self.base_url.clone().unwrap_or_else(|| url.to_string()),
            model: self.model.clone().unwrap_or_else(|| model.to_string()),
            api_key: ApiKey(env(&self.api_key_env(provider)).unwrap_or_default()),
            stream: self.stream,
            request_timeout: Duration::from_secs(self.request_timeout_secs),
            connect_timeout: Duration::from_secs(5),
            max_retries: 2,
            max_tokens: self.max_output_tokens,
        })
    }
}

fn as_u64(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn as_bool(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Some(true),
            "false" | "0" | "no" | "off" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An environment of fixed pairs, for tests.
#[cfg(test)]
pub fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn provider_defaults_follow_the_keys_that_are_set() {
        let s = Settings::default();
        assert_eq!(s.provider(&env_of(&[])), Provider::None);
        assert_eq!(
            s.provider(&env_of(&[("OPENAI_API_KEY", "k")])),
            Provider::OpenAi
        );
        assert_eq!(
            s.provider(&env_of(&[
                ("OPENAI_API_KEY", "k"),
                ("ANTHROPIC_API_KEY", "k")
            ])),
            Provider::Anthropic
        );
    }

    #[test]
    fn the_editor_is_the_default_only_for_a_client_that_runs_models() {
        let mut s = Settings::default();
        assert_eq!(s.for_client(true), None);
        assert_eq!(s.provider(&env_of(&[])), Provider::Editor);
        // A key of one's own still wins over the default.
        assert_eq!(
            s.provider(&env_of(&[("OPENAI_API_KEY", "k")])),
            Provider::OpenAi
        );
        assert!(s.provider_config(&env_of(&[])).is_none());
        assert!(s.apply(&json!({"editorModel": "gpt-4o"})).is_empty());
        assert_eq!(s.editor_model.as_deref(), Some("gpt-4o"));

        // Without the capability, `editor` is refused like any bad value.
        let mut s = Settings::default();
        assert_eq!(s.for_client(false), None);
        assert_eq!(s.provider(&env_of(&[])), Provider::None);
        let problems = s.apply(&json!({"provider": "editor"}));
        assert_eq!(problems, [NO_EDITOR_MODELS]);
        assert_eq!(s.provider, None);

        // The environment's `editor` waits for the client's word.
        let (mut s, problems) = Settings::from_env(&env_of(&[("COPILOT_LS_PROVIDER", "editor")]));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(s.provider, Some(Provider::Editor));
        assert_eq!(s.clone().for_client(true), None);
        assert_eq!(s.for_client(false).as_deref(), Some(NO_EDITOR_MODELS));
        assert_eq!(s.provider, None);
    }

    #[test]
    fn later_sources_win_and_bad_values_keep_the_previous_one() {
        let env = env_of(&[
            ("COPILOT_LS_PROVIDER", "openai"),
            ("COPILOT_LS_MAX_STEPS", "5"),
        ]);
        let (mut s, problems) = Settings::from_env(&env);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!((s.provider, s.max_steps), (Some(Provider::OpenAi), 5));
        let problems =
            s.apply(&json!({"provider": "gemini", "maxSteps": 0, "model": "m", "stream": "false"}));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(
            (s.provider, s.max_steps, s.model.as_deref(), s.stream),
            (Some(Provider::OpenAi), 5, Some("m"), false)
        );
        assert!(s.apply(&json!([])).is_empty());
        assert_eq!(s.apply(&json!({"maxStep": 3})).len(), 1);
        assert!(s
            .apply(&json!({"server": {"path": "/x"}, "trace": {"server": "off"}}))
            .is_empty());
    }

    #[test]
    fn max_output_tokens_from_every_source_and_validated() {
        let (s, problems) = Settings::from_env(&env_of(&[]));
        assert!(problems.is_empty());
        assert_eq!(s.max_output_tokens, DEFAULT_MAX_OUTPUT_TOKENS);
        let (mut s, problems) =
            Settings::from_env(&env_of(&[("COPILOT_LS_MAX_OUTPUT_TOKENS", "300")]));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(s.max_output_tokens, 300);
        assert!(s.apply(&json!({"maxOutputTokens": 8192})).is_empty());
        assert_eq!(s.max_output_tokens, 8192);
        for bad in [
            json!(0),
            json!(-5),
            json!("lots"),
            json!(1.5),
            json!(2_000_000),
        ] {
            let problems = s.apply(&json!({ "maxOutputTokens": bad }));
            assert_eq!(problems.len(), 1, "{bad}");
            assert!(problems[0].contains("maxOutputTokens"), "{problems:?}");
            assert_eq!(s.max_output_tokens, 8192, "{bad}");
        }
        let (_, problems) =
            Settings::from_env(&env_of(&[("COPILOT_LS_MAX_OUTPUT_TOKENS", "none")]));
        assert_eq!(problems.len(), 1);
        s.apply(&json!({"provider": "openai"}));
        assert_eq!(s.provider_config(&env_of(&[])).unwrap().max_tokens, 8192);
    }

    #[test]
    fn the_configuration_section_is_copilot_ls_then_copilot_then_the_whole_object() {
        let new = json!({"copilot-ls": {"model": "a"}, "copilot": {"model": "b"}});
        assert_eq!(configuration_section(&new), &json!({"model": "a"}));
        let old = json!({"copilot": {"model": "b"}});
        assert_eq!(configuration_section(&old), &json!({"model": "b"}));
        let flat = json!({"model": "c"});
        assert_eq!(configuration_section(&flat), &flat);
    }

    #[test]
    fn provider_config_uses_the_named_key_variable_and_defaults() {
        let mut s = Settings::default();
        s.apply(&json!({"provider": "anthropic", "apiKeyEnv": "MY_KEY"}));
        let config = s
            .provider_config(&env_of(&[("MY_KEY", "sk-secret")]))
            .unwrap();
        assert_eq!(config.base_url, DEFAULT_ANTHROPIC_URL);
        assert_eq!(config.api_key.0, "sk-secret");
        assert!(!format!("{config:?}").contains("sk-secret"));
    }
}

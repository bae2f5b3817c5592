//! `copilot-ls doctor` and the LSP's `copilot.doctor`: what a first ask needs, checked
//! before it is asked, each as `ok`, `warn` or `fail` with what to do, in plain words
//! (PROTOCOL.md section 10). The provider, model and base URL with the source of each;
//! the key's variable (whether it is set, never its value); the endpoint and the model
//! (one listing, 3 s); the cache directory; the workspace's index and history; the
//! instruction files. No check writes outside the cache directory or prints a secret.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::settings::{
    Env, Provider, Settings, DEFAULT_ANTHROPIC_MODEL, DEFAULT_ANTHROPIC_URL, DEFAULT_OPENAI_MODEL,
    DEFAULT_OPENAI_URL,
};
use crate::agent::instructions;
use crate::index::WorkspaceIndex;
use crate::providers;
use crate::providers::editor::EditorModelInfo;
use crate::workspace::Workspace;

/// How long the endpoint may take to list its models.
const PROBE: Duration = Duration::from_secs(3);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

/// One check. Its advice comes in two forms: `detail` names what to set on the command
/// line (environment variables), `editor_detail` what to set in an editor (the settings
/// `copilot-ls.provider`, `copilot-ls.baseUrl`, `copilot-ls.apiKeyEnv`, …); each front
/// end shows its own. Where the advice names nothing to set, the two are the same.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub name: &'static str,
    pub status: Status,
    pub detail: String,
    pub editor_detail: String,
}

fn check(name: &'static str, status: Status, detail: impl Into<String>) -> Check {
    let detail = detail.into();
    Check {
        name,
        status,
        editor_detail: detail.clone(),
        detail,
    }
}

/// A check whose advice differs between the command line and an editor.
fn advice(
    name: &'static str,
    status: Status,
    command_line: impl Into<String>,
    editor: impl Into<String>,
) -> Check {
    Check {
        name,
        status,
        detail: command_line.into(),
        editor_detail: editor.into(),
    }
}

/// Where the settings came from: the environment, and for the LSP the editor's settings
/// on top (`Settings` keeps values, not sources, so a value the environment does not
/// hold came from the editor).
pub struct Sources<'a> {
    /// `Sync`: the LSP's checks run in a handler's future, across the endpoint's probe.
    pub env: &'a (dyn Fn(&str) -> Option<String> + Sync),
    /// What the editor's settings are called in the details (`None`: no editor).
    pub editor: Option<&'a str>,
    /// The models the editor lists for copilot-ls (contract v5, section 11); `None` when
    /// the client runs no model (the command line, an editor without the capability).
    pub editor_models: Option<&'a [EditorModelInfo]>,
}

impl Sources<'_> {
    fn of(&self, value: Option<&str>, var: &str) -> String {
        match value {
            None => "the default".to_string(),
            Some(value) if (self.env)(var).is_some_and(|set| set.trim() == value) => {
                var.to_string()
            }
            Some(_) => self.editor.unwrap_or("the settings").to_string(),
        }
    }
}

/// Every check, in the order they are shown. `workspace` is absent when the LSP has no
/// root yet; `cache` is the cache directory the index would use.
pub async fn run(
    (settings, problems): (&Settings, &[String]),
    sources: &Sources<'_>,
    workspace: Option<&Workspace>,
    index: Option<&WorkspaceIndex>,
    cache: Option<&Path>,
) -> Vec<Check> {
    let env: Env = sources.env;
    let mut checks = Vec::new();
    if !problems.is_empty() {
        // A typo in a setting kept its previous value: say which, before what follows.
        checks.push(check("settings", Status::Warn, problems.join("; ")));
    }
    checks.extend(provider_checks(settings, sources));
    let no_key = checks
        .iter()
        .any(|c| c.name == "apiKey" && c.status == Status::Fail);
    if let Some(config) = settings.provider_config(env) {
        if no_key {
            // Without its key a remote endpoint answers 401: nothing more to learn.
            checks.push(check(
                "endpoint",
                Status::Warn,
                "not checked until the key is set",
            ));
        } else {
            checks.push(endpoint(config).await);
        }
    }
    checks.push(cache_check(cache));
    checks.extend(workspace_checks(workspace, index));
    checks
}

/// Whether an ask would work: nothing failed (no provider is a warning: answers list
/// places).
pub fn would_work(checks: &[Check]) -> bool {
    checks.iter().all(|c| c.status != Status::Fail)
}

fn provider_checks(settings: &Settings, sources: &Sources<'_>) -> Vec<Check> {
    let env: Env = sources.env;
    let provider = settings.provider(env);
    let set = |name: &str| env(name).is_some_and(|v| !v.trim().is_empty());
    let provider_source = match settings.provider {
        Some(chosen) => sources.of(Some(chosen.name()), "COPILOT_LS_PROVIDER"),
        None if provider == Provider::Anthropic => "detected: ANTHROPIC_API_KEY is set".into(),
        None if provider == Provider::OpenAi => "detected: OPENAI_API_KEY is set".into(),
        None => String::new(),
    };
    if provider == Provider::Editor {
        return editor_checks(settings, sources, provider_source);
    }
    if provider == Provider::None {
        let (command_line, editor) = match settings.provider {
            Some(_) => (
                format!("none ({provider_source}): answers list the places copilot-ls's own search finds; set COPILOT_LS_PROVIDER to openai or anthropic to have a model answer"),
                format!("none ({provider_source}): answers list the places copilot-ls's own search finds; set copilot-ls.provider to openai or anthropic to have a model answer"),
            ),
            None => (
                "none: no provider is set and neither OPENAI_API_KEY nor ANTHROPIC_API_KEY is; answers list the places copilot-ls's own search finds. To have a model answer, set one of those keys, or COPILOT_LS_PROVIDER with COPILOT_LS_BASE_URL for a local server".to_string(),
                "none: no provider is set and neither OPENAI_API_KEY nor ANTHROPIC_API_KEY is; answers list the places copilot-ls's own search finds. To have a model answer, set copilot-ls.provider (openai or anthropic) and copilot-ls.apiKeyEnv to the variable that holds your key, or copilot-ls.provider with copilot-ls.baseUrl for a local server".to_string(),
            ),
        };
        return vec![advice("provider", Status::Warn, command_line, editor)];
    }
    let (default_url, default_model) = match provider {
        Provider::Anthropic => (DEFAULT_ANTHROPIC_URL, DEFAULT_ANTHROPIC_MODEL),
        _ => (DEFAULT_OPENAI_URL, DEFAULT_OPENAI_MODEL),
    };
    let base_url = settings.base_url.as_deref().unwrap_or(default_url);
    let model = settings.model.as_deref().unwrap_or(default_model);
    let key = settings.api_key_env(provider);
    let local = is_local(base_url);
    let key_check = match (set(&key), local) {
        (true, _) => check("apiKey", Status::Ok, format!("{key} is set")),
        (false, true) => check(
            "apiKey",
            Status::Ok,
            format!("{key} is not set; none is sent, which a local server such as Ollama or llama.cpp accepts"),
        ),
        (false, false) => advice(
            "apiKey",
            Status::Fail,
            format!("{key} is not set: export it with your key"),
            format!("{key} is not set: set it with your key in the environment the editor is started from, or set copilot-ls.apiKeyEnv to the variable that holds it"),
        ),
    };
    vec![
        check(
            "provider",
            Status::Ok,
            format!("{} ({provider_source})", provider.name()),
        ),
        check(
            "model",
            Status::Ok,
            format!(
                "{model} ({})",
                sources.of(settings.model.as_deref(), "COPILOT_LS_MODEL")
            ),
        ),
        check(
            "baseUrl",
            Status::Ok,
            format!(
                "{base_url} ({})",
                sources.of(settings.base_url.as_deref(), "COPILOT_LS_BASE_URL")
            ),
        ),
        key_check,
    ]
}

/// The editor's model in force (section 11): which the editor lists, which one asks use,
/// and what to do when it lists none (a failure only when `editor` was configured: as the
/// default, asks then answer as `none` does).
fn editor_checks(settings: &Settings, sources: &Sources<'_>, source: String) -> Vec<Check> {
    let explicit = settings.provider == Some(Provider::Editor);
    let source = if explicit {
        source
    } else {
        "the default: no provider and no key is set, and this editor runs language models".into()
    };
    let provider = check(
        "provider",
        Status::Ok,
        format!("editor ({source}): the editor's own language model answers; your question and the code copilot-ls reads go to that model's provider"),
    );
    let models = sources.editor_models.unwrap_or_default();
    let model = match (models.first(), settings.editor_model.as_deref()) {
        (None, _) => check(
            "model",
            if explicit { Status::Fail } else { Status::Warn },
            format!(
                "the editor lists no language model yet: install or sign in to a language model extension (GitHub Copilot, for one), then pick its model with \"copilot-ls: Choose Model\"; {}",
                if explicit {
                    "until then asks fail, as provider \"editor\" is set"
                } else {
                    "until then answers list the places copilot-ls's own search finds"
                }
            ),
        ),
        (Some(first), wanted) => {
            let listed = models
                .iter()
                .map(|m| m.id.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            match wanted {
                Some(id) if !models.iter().any(|m| m.id == id) => check(
                    "model",
                    Status::Warn,
                    format!("copilot-ls.editorModel is {id:?}, which the editor no longer lists; asks use {} (the editor lists {listed})", first.label()),
                ),
                Some(id) => {
                    let chosen = models.iter().find(|m| m.id == id).unwrap_or(first);
                    check("model", Status::Ok, format!("{} (copilot-ls.editorModel; the editor lists {listed})", chosen.label()))
                }
                None => check(
                    "model",
                    Status::Ok,
                    format!("{} (the first the editor lists: {listed}; \"copilot-ls: Choose Model\" picks another)", first.label()),
                ),
            }
        }
    };
    vec![provider, model]
}

/// A loopback or private host: a local model server, which needs no key.
fn is_local(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    };
    host == "localhost"
        || host == "::1"
        || host == "0.0.0.0"
        || host.ends_with(".local")
        || ["127.", "10.", "192.168."]
            .iter()
            .any(|p| host.starts_with(p))
}

/// One model listing, at most `PROBE` long.
async fn endpoint(config: providers::ProviderConfig) -> Check {
    let (url, model) = (config.base_url.clone(), config.model.clone());
    let provider = providers::build(config);
    match tokio::time::timeout(PROBE, provider.list_models()).await {
        Err(_) => advice(
            "endpoint",
            Status::Fail,
            format!(
                "{url} did not answer within {} s: is the server running, and is the URL right (COPILOT_LS_BASE_URL)?",
                PROBE.as_secs()
            ),
            format!(
                "{url} did not answer within {} s: is the server running, and is the URL right (copilot-ls.baseUrl)?",
                PROBE.as_secs()
            ),
        ),
        // A server without a model listing (`GET /models`) may still answer asks: the
        // doctor never sends a chat request (it would be billed), so it cannot tell.
        Ok(Err(providers::ProviderError::Status { status, .. }))
            if matches!(status, 404 | 405 | 501) =>
        {
            check(
                "endpoint",
                Status::Warn,
                format!("{url} cannot list models (GET /models answered {status}); asks may still work"),
            )
        }
        Ok(Err(error)) => {
            let error = error.to_string();
            let detail = if error.contains(&url) {
                error
            } else {
                format!("{url}: {error}")
            };
            check("endpoint", Status::Fail, detail)
        }
        Ok(Ok(models)) if models.contains(&model) => check(
            "endpoint",
            Status::Ok,
            format!("{url} answers and lists {model}"),
        ),
        Ok(Ok(models)) if models.is_empty() => check(
            "endpoint",
            Status::Warn,
            format!("{url} answers but lists no models; {model} may still work"),
        ),
        Ok(Ok(models)) => {
            let shown: Vec<&str> = models.iter().take(8).map(String::as_str).collect();
            let more = models.len().saturating_sub(shown.len());
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            let listed = format!("{url} answers, but {model} is not among its models ({}{more})", shown.join(", "));
            advice(
                "endpoint",
                Status::Warn,
                format!("{listed}: set COPILOT_LS_MODEL to one of them"),
                format!("{listed}: set copilot-ls.model to one of them"),
            )
        }
    }
}

fn cache_check(cache: Option<&Path>) -> Check {
    let Some(cache) = cache else {
        return check(
            "cache",
            Status::Warn,
            "no cache directory (set COPILOT_LS_CACHE_DIR or HOME): the index is rebuilt in memory at every start",
        );
    };
    let probe = cache.join(format!(".doctor-{}", std::process::id()));
    let written = std::fs::create_dir_all(cache).and_then(|()| std::fs::write(&probe, b"ok"));
    let _ = std::fs::remove_file(&probe);
    match written {
        Ok(()) => check("cache", Status::Ok, format!("{} is writable", cache.display())),
        Err(error) => check(
            "cache",
            Status::Warn,
            format!("{} is not writable ({error}): the index is kept in memory and rebuilt at every start; set COPILOT_LS_CACHE_DIR to a writable directory", cache.display()),
        ),
    }
}

fn workspace_checks(workspace: Option<&Workspace>, index: Option<&WorkspaceIndex>) -> Vec<Check> {
    let Some(workspace) = workspace else {
        return vec![check(
            "workspace",
            Status::Warn,
            "no workspace folder is open: asks need one",
        )];
    };
    let mut checks = match index {
        None => vec![check(
            "index",
            Status::Warn,
            format!(
                "{} is not indexed (not a project folder): every ask searches the files on demand",
                workspace.root().display()
            ),
        )],
        // One check per root: each has an index of its own.
        Some(index) => index.roots().map(root_index_check).collect(),
    };
    let found = instructions::load(workspace).files;
    let instructions = if found.is_empty() {
        check(
            "instructions",
            Status::Ok,
            format!(
                "none (optional: {} at the root)",
                instructions::FILES.join(", ")
            ),
        )
    } else {
        check("instructions", Status::Ok, found.join(", "))
    };
    checks.push(instructions);
    checks
}

/// The `index` check of one root's index.
fn root_index_check(index: &crate::index::RetrievalIndex) -> Check {
    let root = index.root().display().to_string();
    let coverage = index.coverage();
    let files = index.file_count();
    let history = index.history().state();
    let history = match history.reason {
        None if history.commits == 0 && !history.complete => "its history not read yet".to_string(),
        None => format!("{} commits of history", history.commits),
        Some(reason) => format!(
            "{} commits of history ({})",
            history.commits,
            reason.as_str()
        ),
    };
    if files == 0 {
        check(
                    "index",
                    Status::Ok,
                    format!("{root}: not built yet; the first ask builds it (a few seconds for a few thousand files); {history}"),
                )
    } else {
        // A refresh running in this process has files still to read; an index
        // only opened (the command line's doctor) reports what is on disk.
        let building = !coverage.complete && coverage.files_indexed < coverage.files_total;
        let state = if building {
            ", being brought up to date"
        } else {
            ""
        };
        check(
            "index",
            Status::Ok,
            format!("{root}: {files} files indexed{state}; {history}"),
        )
    }
}

/// The checks as the command line prints them: `ok    provider: openai (…)`.
pub fn text(checks: &[Check]) -> String {
    checks
        .iter()
        .map(|c| {
            let status = match c.status {
                Status::Ok => "ok  ",
                Status::Warn => "warn",
                Status::Fail => "FAIL",
            };
            format!("{status}  {}: {}\n", c.name, c.detail)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::settings::env_of;
    use super::*;

    #[test]
    fn each_setting_names_its_source_and_a_key_is_never_shown() {
        let env = env_of(&[
            ("OPENAI_API_KEY", "sk-secret-value"),
            ("COPILOT_LS_MODEL", "gpt-x"),
        ]);
        let settings = Settings {
            model: Some("gpt-x".into()),
            base_url: Some("https://llm.example/v1".into()),
            ..Settings::default()
        };
        let sources = Sources {
            env: &env,
            editor: Some("the editor's settings"),
            editor_models: None,
        };
        let checks = provider_checks(&settings, &sources);
        let text = text(&checks);
        assert!(
            text.contains("provider: openai (detected: OPENAI_API_KEY is set)"),
            "{text}"
        );
        assert!(text.contains("model: gpt-x (COPILOT_LS_MODEL)"), "{text}");
        assert!(
            text.contains("baseUrl: https://llm.example/v1 (the editor's settings)"),
            "{text}"
        );
        assert!(text.contains("apiKey: OPENAI_API_KEY is set"), "{text}");
        assert!(!text.contains("sk-secret-value"), "{text}");
        assert!(would_work(&checks));
    }

    #[test]
    fn a_missing_key_fails_unless_the_server_is_local_and_no_provider_warns() {
        let env = env_of(&[("COPILOT_LS_PROVIDER", "openai")]);
        let sources = Sources {
            env: &env,
            editor: None,
            editor_models: None,
        };
        let mut settings = Settings {
            provider: Some(Provider::OpenAi),
            ..Settings::default()
        };
        let checks = provider_checks(&settings, &sources);
        assert!(!would_work(&checks), "{}", text(&checks));
        settings.base_url = Some("http://127.0.0.1:8080/v1".into());
        assert!(would_work(&provider_checks(&settings, &sources)));
        let none = provider_checks(
            &Settings::default(),
            &Sources {
                env: &env_of(&[]),
                editor: None,
                editor_models: None,
            },
        );
        assert_eq!(none[0].status, Status::Warn);
        assert!(would_work(&none));
    }
}

//! `copilot-ls doctor [--workspace DIR] [--json]`: the setup checks of
//! `session::doctor` over the environment's settings, one line each (or one JSON
//! object), exit 0 when an ask would work.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use crate::index::{cache_dir_from_env, WorkspaceIndex};
use crate::session::doctor::{self, Sources};
use crate::session::settings::process_env;
use crate::session::Settings;
use crate::workspace::{NoDocuments, Workspace};

pub async fn run(
    settings: Settings,
    problems: Vec<String>,
    workspace: Vec<PathBuf>,
    json: bool,
) -> ExitCode {
    let workspace = match super::roots_sandbox(&super::workspace_roots(workspace)) {
        Ok(sandbox) => Workspace::new(sandbox, Arc::new(NoDocuments)),
        Err(why) => {
            eprintln!("{why}");
            return ExitCode::from(2);
        }
    };
    let cache = cache_dir_from_env();
    // The index as it is on disk: the doctor reads its state, it builds nothing.
    let index = WorkspaceIndex::open_roots(&workspace, cache.as_deref(), false).ok();
    let sources = Sources {
        env: &process_env,
        editor: None,
        editor_models: None,
    };
    let checks = doctor::run(
        (&settings, &problems),
        &sources,
        Some(&workspace),
        index.as_ref(),
        cache.as_deref(),
    )
    .await;
    let text = if json {
        format!("{}\n", serde_json::json!({ "checks": checks }))
    } else {
        doctor::text(&checks)
    };
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    if doctor::would_work(&checks) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

//! `copilot-ls tool NAME [JSON] [--workspace DIR]`: one tool call, as the model makes it
//! (any tool of the registry), or MCP's `locate`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::Value;

use super::index_progress::IndexProgress;
use crate::agent;
use crate::index::{cache_dir_from_env, refresh_in_turn, Bounds, WorkspaceIndex};
use crate::tools;
use crate::workspace::{NoDocuments, Workspace};

/// The tools this command runs: MCP's `locate` and every tool of the ask's registry
/// but `answer` (the ask's way to end, not a lookup). `copilot-ls tool --help` names
/// the same ones.
pub fn names() -> Vec<String> {
    std::iter::once("locate".to_string())
        .chain(tools::names().into_iter().filter(|name| name != "answer"))
        .collect()
}

pub fn run(name: &str, arguments: &str, workspace: Vec<PathBuf>, no_wait: bool) -> ExitCode {
    let names = names();
    if !names.iter().any(|known| known == name) {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(
            stdout,
            "Error: unknown tool `{name}`; the tools are: {}",
            names.join(", ")
        );
        return ExitCode::FAILURE;
    }
    let sandbox = match super::roots_sandbox(&super::workspace_roots(workspace)) {
        Ok(sandbox) => sandbox,
        Err(why) => {
            eprintln!("{why}");
            return ExitCode::from(2);
        }
    };
    let workspace = Workspace::new(sandbox, Arc::new(NoDocuments));
    let locate = name == "locate";
    // A tool that answers from the workspace index gets it as a server would have it:
    // the persistent one, brought up to date first (only changed files are read, with
    // progress on stderr) unless `--no-wait`. `git_log` reads only the history kept
    // beside it (brought up to date by the tool itself), so the files are not indexed
    // for it. A root that is not a project (`/`, a home directory) has no index: the
    // tool searches on demand (`git_log` keeps its history in memory).
    let wants_files = tools::uses_index(name) || locate;
    let index = (wants_files || name == "git_log")
        .then(|| {
            let cache = cache_dir_from_env();
            let index = match WorkspaceIndex::open_roots(&workspace, cache.as_deref(), true) {
                Ok(index) => index,
                Err(why) => {
                    if wants_files {
                        eprintln!("copilot-ls: {why}; searching files on demand");
                    }
                    return None;
                }
            };
            if wants_files && !no_wait {
                // A first build's merge waits until the result is printed (below).
                for root in index.roots() {
                    root.defer_bulk_merge();
                }
                let shown = IndexProgress::new();
                refresh_in_turn(index.roots(), Bounds::from_env(), &|p| shown.progress(&p));
                shown.finish(Some(&index));
            }
            Some(index)
        })
        .flatten();
    let (text, ok) = if locate {
        located(arguments, &workspace, index.as_ref())
    } else {
        let output = tools::run_with_index(name, arguments, &workspace, index.as_ref());
        (output.text, output.ok)
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
    // The result is on the screen; the index is made one segment for the next call.
    for root in index.iter().flat_map(WorkspaceIndex::roots) {
        root.finish_deferred_merge();
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `locate` as MCP answers it: the places a no-model ask lists for `{"question": …}`,
/// numbered, each with its excerpt.
fn located(
    arguments: &str,
    workspace: &Workspace,
    index: Option<&WorkspaceIndex>,
) -> (String, bool) {
    let failed = |why: &str| (format!("Error: {why}"), false);
    let arguments: Value = match serde_json::from_str(arguments) {
        Ok(value) => value,
        Err(error) => return failed(&format!("invalid arguments for locate: {error}")),
    };
    let question = match agent::locate_question(&arguments) {
        Ok(question) => question,
        Err(why) => return failed(&why),
    };
    let Some(index) = index else {
        return failed("locate ranks places with the workspace index, which this folder does not get (it is not a project); use search_code");
    };
    let hits = agent::place_candidates(&|n| index.search(question, n));
    let places = agent::locate(workspace, &hits, question);
    let mut text = agent::places_text(&places);
    if places.is_empty() {
        text.push_str("(nothing in the workspace matches the question's words)\n");
    }
    // The excerpts were redacted by `agent::locate`; the whole text once more, as every
    // tool result is.
    (crate::workspace::redact::redact(&text).into_owned(), true)
}

//! Slash commands: answers straight from the index and the tools, never from a model,
//! advertised with `available_commands_update` after `session/new` and `session/load`.
//! `/find NAME`, `/references NAME`, `/outline PATH`, `/search TEXT`, `/locate
//! QUESTION` (the ranked places of a no-model ask), `/history PATH` (the commits that
//! changed a file or folder, or the newest without one) and `/index` (what the index
//! holds and whether it is complete). Each runs the tool the model would call, by name, so
//! its output is bounded and redacted the same way.

use std::time::Duration;

/// How long a command waits for the index's first build, as an ask does.
const INDEX_WAIT: Duration = Duration::from_secs(2);

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, UnstructuredCommandInput,
};
use serde_json::json;

use super::sessions::AcpSession;
use crate::agent::AskOptions;
use crate::session::AskRequest;
use crate::tools;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Find,
    References,
    Outline,
    Search,
    Locate,
    History,
    Index,
}

/// Name, description and the input hint (`None`: takes no input).
const COMMANDS: &[(Command, &str, &str, Option<&str>)] = &[
    (
        Command::Find,
        "find",
        "Find definitions by name, from the index (no model)",
        Some("NAME"),
    ),
    (
        Command::References,
        "references",
        "List the uses of a name outside its definitions (no model)",
        Some("NAME"),
    ),
    (
        Command::Outline,
        "outline",
        "Outline a file's definitions (no model)",
        Some("PATH"),
    ),
    (
        Command::Search,
        "search",
        "Search the workspace's text (no model)",
        Some("TEXT"),
    ),
    (
        Command::Locate,
        "locate",
        "The places that best match a question, ranked by copilot-ls's own search (no model)",
        Some("QUESTION"),
    ),
    (
        Command::History,
        "history",
        "The commits that changed a file or folder, newest first; the newest without one (no model)",
        Some("PATH"),
    ),
    (
        Command::Index,
        "index",
        "What the workspace index holds and whether it is complete",
        None,
    ),
];

pub fn available() -> Vec<AvailableCommand> {
    COMMANDS
        .iter()
        .map(|(_, name, description, hint)| {
            let command = AvailableCommand::new(*name, *description);
            match hint {
                Some(hint) => command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(*hint),
                )),
                None => command,
            }
        })
        .collect()
}

/// The command a prompt's text starts with, and its argument.
pub fn parse(text: &str) -> Option<(Command, String)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (name, argument) = match rest.split_once(char::is_whitespace) {
        Some((name, argument)) => (name, argument.trim()),
        None => (rest.trim(), ""),
    };
    let command = COMMANDS.iter().find(|(_, n, _, _)| *n == name)?.0;
    Some((command, argument.to_string()))
}

/// Runs a command; the markdown answer.
pub async fn run(session: &AcpSession, command: Command, argument: String) -> String {
    let usage = |name: &str, hint: &str| format!("Usage: `/{name} {hint}`");
    match command {
        Command::Find if argument.is_empty() => usage("find", "NAME"),
        Command::References if argument.is_empty() => usage("references", "NAME"),
        Command::Outline if argument.is_empty() => usage("outline", "PATH"),
        Command::Search if argument.is_empty() => usage("search", "TEXT"),
        Command::Locate if argument.is_empty() => usage("locate", "QUESTION"),
        Command::Find => tool(session, "find_symbol", json!({"name": argument})).await,
        Command::References => {
            let out = tool(session, "find_references", json!({"name": argument})).await;
            if out.contains("Error: unknown tool") {
                "`/references` is not available in this build: it needs the `find_references` tool."
                    .to_string()
            } else {
                out
            }
        }
        Command::Outline => tool(session, "file_outline", json!({"path": argument})).await,
        Command::Search => tool(session, "search_code", json!({"pattern": argument})).await,
        Command::Locate => locate(session, argument).await,
        Command::History if argument.is_empty() => tool(session, "git_log", json!({})).await,
        Command::History => tool(session, "git_log", json!({"path": argument})).await,
        Command::Index => index_report(session),
    }
}

/// A tool's output, fenced.
async fn tool(session: &AcpSession, name: &'static str, arguments: serde_json::Value) -> String {
    let Some(workspace) = session.session.workspace() else {
        return "No workspace is open.".to_string();
    };
    let index = session.session.index();
    let arguments = arguments.to_string();
    let output = tokio::task::spawn_blocking(move || {
        // As an ask does: a first build still running is waited for, briefly.
        if let Some(index) = &index {
            index.wait_ready(INDEX_WAIT);
        }
        tools::run_with_index(name, &arguments, &workspace, index.as_ref())
    })
    .await;
    match output {
        Ok(output) => {
            let text = output.text.trim_end();
            let fence = super::prompt::fence_for(text);
            format!("{fence}text\n{text}\n{fence}")
        }
        Err(error) => format!("The command failed: {error}"),
    }
}

/// The places a no-model ask ranks best for the question, with their excerpts; the
/// citations follow as links (the caller adds them).
async fn locate(session: &AcpSession, question: String) -> String {
    let request = AskRequest {
        question,
        options: AskOptions {
            places_only: true,
            ..AskOptions::default()
        },
        ..AskRequest::default()
    };
    let quiet = |_: crate::agent::AskEvent| {};
    match session.session.ask(request, &quiet).await {
        Ok(outcome) => {
            let mut text = outcome.outcome.answer;
            text.push_str(&super::updates::sources(
                outcome
                    .outcome
                    .citations
                    .iter()
                    .map(|c| super::updates::Source {
                        path: &c.path,
                        uri: &c.uri,
                        line: c.line,
                        end_line: c.end_line,
                        note: c.note.as_deref(),
                    }),
            ));
            text
        }
        Err(error) => format!("The search failed: {error}"),
    }
}

fn index_report(session: &AcpSession) -> String {
    let Some(index) = session.session.index() else {
        return "The index is being opened; try again in a moment.".to_string();
    };
    // One paragraph per root (one index each).
    let reports: Vec<String> = index.roots().map(root_report).collect();
    reports.join("\n\n")
}

fn root_report(index: &crate::index::RetrievalIndex) -> String {
    let complete = index.wait_ready(Duration::ZERO);
    let place = match index.location() {
        crate::index::Location::Disk(dir) => format!(
            "on disk at `{}` ({:.1} MB)",
            dir.display(),
            index.bytes_on_disk() as f64 / 1e6
        ),
        crate::index::Location::Memory(reason) => format!("in memory ({reason})"),
    };
    let state = if complete {
        "It is complete: every file of the workspace was indexed."
    } else {
        "It is still being built: answers may miss places for now."
    };
    let history = index.history().state();
    let history = match history.reason {
        None => format!(" Its history holds {} commits.", history.commits),
        Some(crate::history::Reason::Off) => " History is turned off.".to_string(),
        Some(crate::history::Reason::NoRepository) => {
            " It is not in a git repository, so it has no history.".to_string()
        }
        Some(reason) => format!(
            " Its history holds {} commits (incomplete: {}).",
            history.commits,
            reason.as_str()
        ),
    };
    let counts = index.counts();
    format!(
        "The index of `{}` holds {} files, {} chunks and {} definitions, {place}. {state}{history}",
        index.root().display(),
        counts.files,
        counts.chunks,
        counts.symbols
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_parsed_with_their_argument() {
        assert_eq!(
            parse("/find TokenBucket"),
            Some((Command::Find, "TokenBucket".into()))
        );
        assert_eq!(parse("  /index"), Some((Command::Index, String::new())));
        assert_eq!(
            parse("/locate where is the retry\nlogic"),
            Some((Command::Locate, "where is the retry\nlogic".into()))
        );
        assert_eq!(parse("/unknown x"), None);
        assert_eq!(parse("find x"), None);
        assert_eq!(
            parse("/history src/a.rs"),
            Some((Command::History, "src/a.rs".into()))
        );
        assert_eq!(available().len(), 7);
    }
}

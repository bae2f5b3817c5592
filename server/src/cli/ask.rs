//! `copilot-ls ask`: one question, headless, through the same session and agent as
//! `copilot/ask`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use std::sync::Arc;

use super::index_progress::IndexProgress;
use crate::agent::AskEvent;
use crate::lsp::convert::{self, EditSupport};
use crate::session::{self, AskError, AskRequest, Session, Settings};

pub async fn run(
    settings: Settings,
    workspace: Vec<PathBuf>,
    json: bool,
    max_steps: Option<u32>,
    no_wait: bool,
    question: String,
) -> ExitCode {
    if question.trim().is_empty() {
        eprintln!("copilot-ls: the question must not be empty");
        return ExitCode::from(2);
    }
    let session = Session::new(settings);
    if let Some(max_steps) = max_steps {
        session.apply_settings(&serde_json::json!({ "maxSteps": max_steps }));
    }
    let roots = super::workspace_roots(workspace);
    if let Err(why) = super::roots_sandbox(&roots) {
        eprintln!("{why}");
        return ExitCode::from(2);
    }
    if let Err(error) = session.set_roots(&roots) {
        eprintln!("copilot-ls: cannot use these folders as the workspace: {error}");
        return ExitCode::from(2);
    }
    // Never answer from a half-built index: bring it up to date first (only what
    // changed is read), with progress on stderr; `--no-wait` answers from what is
    // there after at most two seconds, saying how much that was.
    if !no_wait {
        let shown = Arc::new(IndexProgress::new());
        let events = shown.clone();
        session
            .prepare_index(Arc::new(move |event| events.event(&event)))
            .await;
        shown.finish(session.index().as_ref());
    }
    let progress = |event: AskEvent| {
        if let AskEvent::ToolStarted { label, .. } = event {
            eprintln!("copilot-ls: {label}");
        }
    };
    let request = AskRequest {
        question,
        ..AskRequest::default()
    };
    let asked = session.ask(request, &progress).await;
    let code = answer(&session, asked, json);
    // What the answer did not wait for (`Session::prepare_index`): the history's first
    // read, when it is about to end, and a cold build's merge, done while the answer is
    // on the screen so the next ask finds both. A history left unread is said so.
    for note in session.finish_index().await {
        eprintln!("copilot-ls: {note}");
    }
    code
}

/// Prints the ask's outcome; the exit code.
fn answer(session: &Session, asked: Result<session::AskOutcome, AskError>, json: bool) -> ExitCode {
    let outcome = match asked {
        Ok(outcome) => outcome,
        Err(AskError::InvalidParams(message)) => {
            eprintln!("copilot-ls: {message}");
            return ExitCode::from(2);
        }
        Err(error) => {
            eprintln!("copilot-ls: the ask failed: {error}");
            return ExitCode::FAILURE;
        }
    };
    let Some(workspace) = session.workspace() else {
        return ExitCode::FAILURE;
    };
    let mut stdout = std::io::stdout().lock();
    if json {
        let result = convert::ask_result(
            &outcome,
            &mut session::lock(&session.surface),
            &workspace,
            session.encoding(),
            EditSupport::FULL,
        );
        let text = serde_json::to_string_pretty(&result).unwrap_or_else(|_| "{}".to_string());
        let _ = writeln!(stdout, "{text}");
    } else {
        let answer = outcome.outcome.answer.trim_end();
        let _ = writeln!(stdout, "{answer}");
        if !outcome.outcome.citations.is_empty() {
            let _ = writeln!(stdout);
        }
        for citation in &outcome.outcome.citations {
            let note = citation.note.as_deref().unwrap_or("");
            let _ = writeln!(stdout, "{}:{}: {}", citation.path, citation.line, note);
        }
        // Each suggested edit as a unified diff, never applied (section 11).
        for edit in &outcome.outcome.edits {
            let _ = writeln!(stdout);
            let _ = write!(stdout, "{}", super::edit_diff::edit_block(&edit.edit));
        }
    }
    let _ = stdout.flush();
    ExitCode::SUCCESS
}

//! The answer when no model is configured: the most relevant places for the question,
//! found by the server's own retrieval, so the tool is useful on a fresh machine.

use super::citations::{check, CitedLines};
use super::{AgentOutcome, AskInput, AskStats, StopReason};
use crate::text::PositionEncoding;
use crate::workspace::Workspace;

/// Places listed in a no-provider answer.
pub const PLACES: usize = 5;

pub fn answer(workspace: &Workspace, input: &AskInput, encoding: PositionEncoding) -> AgentOutcome {
    let mut answer = String::from(
        "No model is configured, so this answer lists the places in the workspace that best match your question, found by copilot-ls's own search. \
         To get written answers, set `provider` (`openai` or `anthropic`) and the API key variable, or point `baseUrl` at a local server such as Ollama or llama.cpp.\n\n",
    );
    let mut citations = Vec::new();
    for hit in input.context.iter().take(PLACES) {
        let label = hit
            .symbol
            .clone()
            .unwrap_or_else(|| first_code_line(&hit.text));
        let citation = check(
            workspace,
            &CitedLines {
                path: hit.path.clone(),
                line: hit.start_line,
                end_line: hit.end_line,
                note: Some(label.clone()),
            },
            encoding,
        );
        answer.push_str(&format!(
            "{}. `{}:{}-{}` — `{}`\n",
            citations.len() + 1,
            hit.path,
            hit.start_line,
            hit.end_line,
            label.replace('`', "'")
        ));
        citations.push(citation);
    }
    if citations.is_empty() {
        answer.push_str("The search found nothing that matches the question's words.\n");
    }
    AgentOutcome {
        answer,
        citations,
        edits: Vec::new(),
        steps: Vec::new(),
        stop_reason: StopReason::NoProvider,
        history: input.history.clone(),
        stats: AskStats::default(),
    }
}

fn first_code_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| {
            !l.is_empty()
                && !l.starts_with("//")
                && !l.starts_with('#')
                && !l.starts_with("/*")
                && !l.starts_with('*')
        })
        .or_else(|| text.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("");
    line.chars().take(80).collect()
}

//! The answer when no model is configured: the most relevant places for the question,
//! found by the server's own retrieval, so the tool is useful on a fresh machine.

use super::citations::{check, CitedLines};
use super::{AgentOutcome, AskInput, AskStats, StopReason};
use crate::index::RetrievalHit;
use crate::text::PositionEncoding;
use crate::tools::redact::redact;
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
        // The excerpts and labels show file text: secrets redacted as in tool output.
        let hit = &RetrievalHit {
            text: redact(&hit.text).into_owned(),
            ..hit.clone()
        };
        let label = hit
            .symbol
            .clone()
            .unwrap_or_else(|| first_code_line(&hit.text));
        let defining = defining_offset(hit);
        let line = hit.start_line + defining;
        let citation = check(
            workspace,
            &CitedLines {
                path: hit.path.clone(),
                line,
                end_line: hit.end_line,
                note: Some(label.clone()),
            },
            encoding,
        );
        answer.push_str(&format!(
            "{}. `{}:{}` — `{}`\n\n{}\n",
            citations.len() + 1,
            hit.path,
            line,
            label.replace('`', "'"),
            excerpt(hit, defining)
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

/// Lines of excerpt shown under each place.
const EXCERPT_LINES: usize = 6;

/// The 0-based line of the chunk that names its definition: the first line that is
/// not a comment or attribute and mentions the symbol; else the first code line.
fn defining_offset(hit: &RetrievalHit) -> usize {
    let is_code = |line: &str| {
        let line = line.trim();
        !line.is_empty()
            && !["//", "#", "/*", "*", "--", "\"\"\"", "@"]
                .iter()
                .any(|p| line.starts_with(p))
    };
    let lines: Vec<&str> = hit.text.lines().collect();
    hit.symbol
        .as_deref()
        .and_then(|name| {
            let short = name.rsplit([':', '.']).next().unwrap_or(name);
            lines
                .iter()
                .position(|line| is_code(line) && line.contains(short))
        })
        .or_else(|| lines.iter().position(|line| is_code(line)))
        .unwrap_or(0)
}

/// A few lines of the place from its defining line, fenced with the file's language so
/// the editor highlights it. Fences inside the code cannot end the block: the fence is
/// longer than any run of backticks in it.
fn excerpt(hit: &RetrievalHit, from: usize) -> String {
    let lines: Vec<&str> = hit.text.lines().skip(from).take(EXCERPT_LINES).collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let body: Vec<&str> = lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or(l.trim_start()))
        .collect();
    let more = hit.end_line + 1 - hit.start_line > from + EXCERPT_LINES;
    let longest_run = body
        .iter()
        .flat_map(|l| l.split(|c| c != '`'))
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    let language = hit.path.rsplit('.').next().filter(|ext| !ext.contains('/'));
    format!(
        "{fence}{}\n{}{}\n{fence}\n",
        language.unwrap_or(""),
        body.join("\n"),
        if more { "\n…" } else { "" }
    )
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

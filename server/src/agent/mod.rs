//! The agent: a bounded tool-use loop. The model is called with the tool schemas; every
//! tool call of its turn is executed (in parallel) and the results sent back after the
//! assistant turn; repeat until it calls `answer`, replies without tool calls, or
//! `max_steps` model calls are spent.
//!
//! Invariants: the agent never sees an LSP type or an HTTP client; it talks to a
//! `ChatModel` and reads the workspace through `tools::Workspace`. It never writes to
//! disk: proposed edits are returned, not applied.

mod answer_stream;
mod call_ids;
mod citations;
mod context;
mod definition_extent;
pub mod events;
pub mod history;
mod index_notice;
pub mod instructions;
mod no_provider;
mod options;
mod place_lines;
mod related_changes;
mod sanitize;
mod shown_input;
mod spread;
mod tool_calls;
mod turn_stream;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;

use crate::index::{RetrievalHit, WorkspaceIndex};
use crate::providers::{
    AssistantTurn, ChatModel, ChatRequest, FinishReason, Message, ProviderError, StreamEvent,
    ToolCall, ToolResult, Usage,
};
use crate::text::PositionEncoding;
use crate::tools::{self, ProposedEdit};
use crate::workspace::Workspace;

pub use citations::{Citation, CitedLines};
pub use events::{AskEvent, EventSink};
pub use history::bound_history;
pub use index_notice::IndexState;
pub use no_provider::{
    locate, locate_question, model_candidates, place_candidates, places_text, LocatedPlace, PLACES,
};
pub use options::{AskOptions, EditDecision, EditReview};
pub use spread::for_model as context_for_model;

/// The system prompt, in its own file so it can be read and improved as text.
pub const SYSTEM_PROMPT: &str = include_str!("system_prompt.md");

/// The part of the editor the user asked from.
#[derive(Clone, Debug)]
pub struct Focus {
    pub path: String,
    /// 1-based lines of the selection, if any.
    pub lines: Option<(usize, usize)>,
    pub selected_text: Option<String>,
}

#[derive(Clone, Debug)]
pub struct AskInput {
    pub question: String,
    /// Earlier turns of the same conversation (already bounded).
    pub history: Vec<Message>,
    pub focus: Option<Focus>,
    /// The most relevant chunks for the question, found by the server's own retrieval.
    pub context: Vec<RetrievalHit>,
    /// What that retrieval could see (the answer says so when it was not everything).
    pub index: IndexState,
    /// A problem with the index to tell the user at the start of this answer (once:
    /// the session decides), such as an index kept in memory because the disk is full.
    pub index_fault: Option<String>,
    /// Why no model answers this ask when one was expected (the editor's model listed
    /// none, or declined): the answer's first line, with what to do.
    pub provider_notice: Option<String>,
}

#[derive(Clone, Copy, Debug)]
pub struct AgentSettings {
    pub max_steps: u32,
    pub encoding: PositionEncoding,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    Answered,
    MaxSteps,
    NoProvider,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Answered => "answered",
            StopReason::MaxSteps => "max_steps",
            StopReason::NoProvider => "no_provider",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Step {
    pub tool: String,
    pub arguments: Value,
    pub ok: bool,
    pub summary: String,
    /// On the first step of a model turn: the text the model wrote before its calls.
    pub thought: Option<String>,
}

#[derive(Clone, Debug)]
pub struct IdentifiedEdit {
    pub id: String,
    pub edit: ProposedEdit,
}

/// What an ask cost: the contract's `usage`, and numbers for the closing log line.
#[derive(Clone, Debug, Default)]
pub struct AskStats {
    /// Requests sent to the provider, retries included.
    pub model_calls: u32,
    pub request_bytes: usize,
    /// Summed over the calls (what the providers reported; retried attempts report none).
    pub usage: Usage,
    pub retries: u32,
}

#[derive(Clone, Debug)]
pub struct AgentOutcome {
    pub answer: String,
    pub citations: Vec<Citation>,
    pub edits: Vec<IdentifiedEdit>,
    pub steps: Vec<Step>,
    pub stop_reason: StopReason,
    /// The conversation including this ask, to continue with a follow-up.
    pub history: Vec<Message>,
    pub stats: AskStats,
    /// The line `answer` starts with when the search could not see the whole
    /// workspace (also sent first, as `AskEvent::Notice`).
    pub notice: Option<String>,
}

impl AgentOutcome {
    /// The answer without its index notice: what the model or the search wrote.
    pub fn body(&self) -> &str {
        match &self.notice {
            Some(notice) => self
                .answer
                .strip_prefix(notice.as_str())
                .map_or(self.answer.as_str(), |rest| rest.trim_start_matches('\n')),
            None => &self.answer,
        }
    }
}

pub struct Agent<'a> {
    pub model: Option<Arc<dyn ChatModel>>,
    pub workspace: &'a Workspace,
    /// The workspace index, for the tools that answer from it (`find_symbol`).
    pub index: Option<WorkspaceIndex>,
    pub settings: AgentSettings,
    /// Receives what the ask does as it happens (text, tool calls started and finished).
    pub events: EventSink<'a>,
    /// Gives each proposed edit a session-unique id.
    pub next_edit_id: &'a (dyn Fn() -> String + Send + Sync),
    /// What the front end asked beyond the question (read-only, external tools, …).
    pub options: &'a AskOptions,
}

impl Agent<'_> {
    /// Runs the ask; when its search could not see the whole workspace, the answer
    /// starts with a line that says so (sent first as `AskEvent::Notice`).
    pub async fn run(&self, input: AskInput) -> Result<AgentOutcome, ProviderError> {
        let notice = [
            input.provider_notice.clone(),
            input.index_fault.clone(),
            input.index.notice(),
        ]
        .into_iter()
        .flatten()
        .reduce(|a, b| format!("{a}\n\n{b}"));
        if let Some(text) = &notice {
            (self.events)(AskEvent::Notice { text: text.clone() });
        }
        let mut outcome = self.run_loop(input).await?;
        if let Some(notice) = notice {
            outcome.answer = format!("{notice}\n\n{}", outcome.answer);
            outcome.notice = Some(notice);
        }
        Ok(outcome)
    }

    async fn run_loop(&self, input: AskInput) -> Result<AgentOutcome, ProviderError> {
        // File text in the input is shown to the model or the user: redacted first.
        let input = shown_input::redacted(self.workspace, input);
        if self.options.places_only {
            return Ok(no_provider::places(
                self.workspace,
                &input,
                self.settings.encoding,
            ));
        }
        let Some(model) = self.model.clone() else {
            let histories: Vec<(&str, &crate::history::History)> = self
                .index
                .iter()
                .flat_map(|index| index.prefixed())
                .map(|(prefix, root)| (prefix, root.history()))
                .collect();
            return Ok(no_provider::answer(
                self.workspace,
                &input,
                self.settings.encoding,
                &histories,
            ));
        };
        let started = Instant::now();
        let instructions = instructions::load(self.workspace);
        (self.events)(AskEvent::Started {
            instruction_files: instructions.files.clone(),
        });
        // The same text on every call of the ask and of its follow-ups: a stable prefix
        // is what the providers' prompt caches match on.
        let system = format!("{SYSTEM_PROMPT}{}", instructions.section);
        let mut messages = input.history.clone();
        messages.push(Message::User(context::first_message(&input)));
        let mut stats = AskStats::default();
        let mut steps = Vec::new();
        let mut edits = Vec::new();
        let mut last_text = String::new();
        // Whether a turn of this ask was cut by the output limit.
        let mut cut_by_limit = false;

        for call_number in 1..=self.settings.max_steps {
            let request = ChatRequest {
                system: system.clone(),
                messages: messages.clone(),
                tools: self.tool_specs(),
            };
            let stream = Mutex::new(turn_stream::TurnStream::new(call_number, self.events));
            let sink = |event: StreamEvent<'_>| {
                lock(&stream).on(event);
            };
            let response = model.complete(&request, &sink).await?;
            stats.model_calls += response.attempts;
            stats.request_bytes += response.request_bytes;
            stats.usage.add(&response.usage);
            stats.retries += response.attempts.saturating_sub(1);
            let mut turn = response.turn;
            call_ids::make_unique(&mut turn.tool_calls, &messages);
            let length_cut = response.finish == FinishReason::Length;
            tracing::debug!(call_number, calls = turn.tool_calls.len(), finish = ?response.finish, "model turn");

            // A turn cut by the output limit keeps the calls whose arguments are complete
            // JSON; a cut one may have lost anything, so it never runs.
            let mut cut_calls = Vec::new();
            if length_cut && !turn.tool_calls.is_empty() {
                cut_by_limit = true;
                let (complete, cut): (Vec<ToolCall>, Vec<ToolCall>) =
                    std::mem::take(&mut turn.tool_calls)
                        .into_iter()
                        .partition(|call| arguments_are_complete(&call.arguments));
                turn.tool_calls = complete;
                cut_calls = cut;
            }
            let answer_args = turn
                .tool_calls
                .iter()
                .find(|call| call.name == "answer")
                .and_then(|call| tools::parse_answer(&call.arguments).ok());
            lock(&stream).finish(&turn, answer_args.as_ref().map(|a| a.answer.as_str()));
            if !turn.text.trim().is_empty() {
                last_text = turn.text.clone();
            }

            if turn.tool_calls.is_empty() && !cut_calls.is_empty() {
                // Some APIs reject an empty assistant message: keep a placeholder.
                let text = if turn.text.trim().is_empty() {
                    "(reply cut off)".to_string()
                } else {
                    turn.text.clone()
                };
                messages.push(Message::Assistant(AssistantTurn {
                    text,
                    tool_calls: Vec::new(),
                }));
                messages.push(Message::User(format!(
                    "Your last reply was cut off by the output limit before its tool calls were complete, so none of them ran ({}). Try again with fewer or shorter calls.",
                    call_names(&cut_calls)
                )));
                continue;
            }

            if turn.tool_calls.is_empty() {
                let mut answer = turn.text.clone();
                if answer.trim().is_empty() {
                    answer = "The model ended its turn without an answer.".to_string();
                }
                if length_cut {
                    answer.push_str("\n\n*(The model's reply was cut off by its output limit, `maxOutputTokens`.)*");
                } else if cut_by_limit {
                    answer.push_str(LIMIT_NOTE);
                }
                messages.push(Message::Assistant(turn));
                let citations =
                    citations::from_text(self.workspace, &answer, self.settings.encoding);
                return Ok(self.finish(
                    answer,
                    citations,
                    edits,
                    steps,
                    StopReason::Answered,
                    messages,
                    stats,
                    started,
                ));
            }

            // The `answer` tool ends the loop, unless its arguments are unusable, in which
            // case the model is told why like for any other tool.
            let mut thought = Some(turn.text.trim())
                .filter(|t| !t.is_empty())
                .map(str::to_string);
            let mut final_answer = None;
            let mut results = Vec::with_capacity(turn.tool_calls.len());
            let mut pending = Vec::new();
            for call in &turn.tool_calls {
                if call.name == "answer" && final_answer.is_none() {
                    match tools::parse_answer(&call.arguments) {
                        Ok(args) => {
                            final_answer = Some(args);
                            results.push(Some(ToolResult {
                                call_id: call.id.clone(),
                                name: call.name.clone(),
                                content: "Answer delivered to the user.".to_string(),
                                is_error: false,
                            }));
                            continue;
                        }
                        Err(error) => {
                            let output = tools::ToolOutput::error(&error);
                            self.started_event(call_number, call);
                            let finished = step(call, &output, thought.take());
                            (self.events)(AskEvent::ToolFinished {
                                turn: call_number,
                                call_id: call.id.clone(),
                                step: finished.clone(),
                                edit: None,
                            });
                            steps.push(finished);
                            results.push(Some(result_of(call, output.text)));
                            continue;
                        }
                    }
                }
                self.started_event(call_number, call);
                pending.push((results.len(), call.clone()));
                results.push(None);
            }
            let outputs = self
                .run_tools(pending.iter().map(|(_, call)| call.clone()).collect())
                .await;
            for ((index, call), mut output) in pending.into_iter().zip(outputs) {
                let edit = output.edit.clone().map(|edit| IdentifiedEdit {
                    id: (self.next_edit_id)(),
                    edit,
                });
                // The user decides at the call, so the model's next turn knows.
                if let (Some(edit), Some(review)) = (&edit, &self.options.review_edit) {
                    let decision = review.review(&call.id, edit).await;
                    output.text = decision.tool_result(&edit.edit.path);
                    output.ok = decision.ok();
                    output.summary = decision.summary(&edit.edit.path);
                }
                let finished = step(&call, &output, thought.take());
                (self.events)(AskEvent::ToolFinished {
                    turn: call_number,
                    call_id: call.id.clone(),
                    step: finished.clone(),
                    edit: edit.clone(),
                });
                steps.push(finished);
                edits.extend(edit);
                results[index] = Some(result_of(&call, output.text));
            }
            messages.push(Message::Assistant(turn));
            messages.push(Message::ToolResults(
                results.into_iter().flatten().collect(),
            ));
            if !cut_calls.is_empty() {
                messages.push(Message::User(format!(
                    "Your last reply was cut off by the output limit: the calls above ran, but {} more call(s) were incomplete and did not run ({}). Repeat them if you still need them, with shorter arguments.",
                    cut_calls.len(),
                    call_names(&cut_calls)
                )));
            }

            if let Some(args) = final_answer {
                let citations =
                    citations::from_answer_tool(self.workspace, &args, self.settings.encoding);
                let mut answer = args.answer;
                if cut_by_limit {
                    answer.push_str(LIMIT_NOTE);
                }
                return Ok(self.finish(
                    answer,
                    citations,
                    edits,
                    steps,
                    StopReason::Answered,
                    messages,
                    stats,
                    started,
                ));
            }
        }

        let mut answer = format!(
            "I stopped after {} model calls (the `maxSteps` limit) without reaching a final answer.",
            self.settings.max_steps
        );
        if !last_text.trim().is_empty() {
            answer.push_str("\n\nWhat the model said last:\n\n");
            answer.push_str(last_text.trim());
        }
        if cut_by_limit {
            answer.push_str(LIMIT_NOTE);
        }
        let citations = citations::from_text(self.workspace, &answer, self.settings.encoding);
        Ok(self.finish(
            answer,
            citations,
            edits,
            steps,
            StopReason::MaxSteps,
            messages,
            stats,
            started,
        ))
    }

    fn started_event(&self, turn: u32, call: &ToolCall) {
        (self.events)(AskEvent::ToolStarted {
            turn,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: arguments_object(&call.arguments),
            label: self.label(call),
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        answer: String,
        citations: Vec<Citation>,
        edits: Vec<IdentifiedEdit>,
        steps: Vec<Step>,
        stop_reason: StopReason,
        messages: Vec<Message>,
        stats: AskStats,
        started: Instant,
    ) -> AgentOutcome {
        tracing::info!(
            model_calls = stats.model_calls,
            request_bytes = stats.request_bytes,
            tool_calls = steps.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            stop = stop_reason.as_str(),
            "ask finished"
        );
        AgentOutcome {
            answer: sanitize::neutralize_remote_content(&answer),
            citations,
            edits,
            steps,
            stop_reason,
            history: messages,
            stats,
            notice: None,
        }
    }
}

/// The model's arguments as an object: `{}` when they were not one (the contract's
/// `Step.arguments` is always an object).
fn arguments_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(Default::default()),
    }
}

fn step(call: &ToolCall, output: &tools::ToolOutput, thought: Option<String>) -> Step {
    Step {
        tool: call.name.clone(),
        arguments: arguments_object(&call.arguments),
        ok: output.ok,
        summary: output.summary.clone(),
        thought,
    }
}

/// Appended to an answer when a turn of the ask was cut by the output limit.
const LIMIT_NOTE: &str = "\n\n*(A reply of the model was cut off by its output limit, `maxOutputTokens`, during this ask; tool calls it had not finished writing did not run.)*";

/// Whether a cut turn's call arrived whole: its arguments parse as JSON (an empty string
/// cannot tell a parameterless call from one cut before its first byte, so it counts as
/// cut).
fn arguments_are_complete(arguments: &str) -> bool {
    serde_json::from_str::<Value>(arguments).is_ok()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn call_names(calls: &[ToolCall]) -> String {
    calls
        .iter()
        .map(|call| call.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn result_of(call: &ToolCall, content: String) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        name: call.name.clone(),
        is_error: content.starts_with("Error: "),
        content,
    }
}

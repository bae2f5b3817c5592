//! The agent: a bounded tool-use loop. The model is called with the tool schemas; every
//! tool call of its turn is executed (in parallel) and the results sent back after the
//! assistant turn; repeat until it calls `answer`, replies without tool calls, or
//! `max_steps` model calls are spent.
//!
//! Invariants: the agent never sees an LSP type or an HTTP client; it talks to a
//! `ChatModel` and reads the workspace through `tools::Workspace`. It never writes to
//! disk: proposed edits are returned, not applied.

mod citations;
mod context;
pub mod events;
pub mod history;
mod no_provider;
mod sanitize;

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::index::RetrievalHit;
use crate::providers::{
    AssistantTurn, ChatModel, ChatRequest, FinishReason, Message, ProviderError, ToolResult,
};
use crate::text::PositionEncoding;
use crate::tools::{self, ProposedEdit};
use crate::workspace::Workspace;

pub use citations::{Citation, CitedLines};
pub use events::{AskEvent, EventSink};
pub use history::bound_history;

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
}

#[derive(Clone, Debug)]
pub struct IdentifiedEdit {
    pub id: String,
    pub edit: ProposedEdit,
}

/// What an ask cost, for the closing numbers and the `--json` output's log line.
#[derive(Clone, Debug, Default)]
pub struct AskStats {
    pub model_calls: u32,
    pub request_bytes: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
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
}

pub struct Agent<'a> {
    pub model: Option<Arc<dyn ChatModel>>,
    pub workspace: &'a Workspace,
    pub settings: AgentSettings,
    /// Receives what the ask does as it happens (text, tool calls started and finished).
    pub events: EventSink<'a>,
    /// Gives each proposed edit a session-unique id.
    pub next_edit_id: &'a (dyn Fn() -> String + Send + Sync),
}

impl Agent<'_> {
    pub async fn run(&self, input: AskInput) -> Result<AgentOutcome, ProviderError> {
        let Some(model) = self.model.clone() else {
            return Ok(no_provider::answer(
                self.workspace,
                &input,
                self.settings.encoding,
            ));
        };
        let started = Instant::now();
        let mut messages = input.history.clone();
        messages.push(Message::User(context::first_message(&input)));
        let mut stats = AskStats::default();
        let mut steps = Vec::new();
        let mut edits = Vec::new();
        let mut last_text = String::new();

        for call_number in 1..=self.settings.max_steps {
            let request = ChatRequest {
                system: SYSTEM_PROMPT.to_string(),
                messages: messages.clone(),
                tools: tools::schemas::all(),
            };
            let response = model.complete(&request).await?;
            stats.model_calls += 1;
            stats.request_bytes += response.request_bytes;
            stats.input_tokens += response.usage.input_tokens;
            stats.output_tokens += response.usage.output_tokens;
            stats.retries += response.attempts.saturating_sub(1);
            let turn = response.turn;
            if !turn.text.is_empty() {
                // Until the providers stream, a turn's text arrives whole.
                (self.events)(AskEvent::Text {
                    turn: call_number,
                    text: turn.text.clone(),
                });
            }
            if !turn.text.trim().is_empty() {
                last_text = turn.text.clone();
            }
            tracing::debug!(call_number, calls = turn.tool_calls.len(), finish = ?response.finish, "model turn");

            if response.finish == FinishReason::Length && !turn.tool_calls.is_empty() {
                // A truncated turn's tool calls may be cut mid-argument: never run them.
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
                messages.push(Message::User(
                    "Your last reply was cut off by the output limit before its tool calls were complete, so none of them ran. Try again with fewer or shorter calls.".to_string(),
                ));
                continue;
            }

            if turn.tool_calls.is_empty() {
                let mut answer = turn.text.clone();
                if answer.trim().is_empty() {
                    answer = "The model ended its turn without an answer.".to_string();
                }
                if response.finish == FinishReason::Length {
                    answer.push_str("\n\n*(The model's reply was cut off by its output limit.)*");
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
                            steps.push(step(&call.name, &call.arguments, &output));
                            results.push(Some(result_of(call, output.text)));
                            continue;
                        }
                    }
                }
                (self.events)(AskEvent::ToolStarted {
                    turn: call_number,
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    arguments: arguments_object(&call.arguments),
                    label: tools::progress_label(&call.name, &call.arguments),
                });
                pending.push((results.len(), call.clone()));
                results.push(None);
            }
            let outputs = self
                .run_tools(pending.iter().map(|(_, call)| call.clone()).collect())
                .await;
            for ((index, call), output) in pending.into_iter().zip(outputs) {
                let finished = step(&call.name, &call.arguments, &output);
                let edit = output.edit.clone().map(|edit| IdentifiedEdit {
                    id: (self.next_edit_id)(),
                    edit,
                });
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

            if let Some(args) = final_answer {
                let citations =
                    citations::from_answer_tool(self.workspace, &args, self.settings.encoding);
                return Ok(self.finish(
                    args.answer,
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

    /// Runs the tool calls of one turn concurrently on the blocking pool (tools do file
    /// I/O), returning their outputs in call order.
    async fn run_tools(&self, calls: Vec<crate::providers::ToolCall>) -> Vec<tools::ToolOutput> {
        let handles: Vec<_> = calls
            .into_iter()
            .map(|call| {
                let workspace = self.workspace.clone();
                tokio::task::spawn_blocking(move || {
                    tools::run(&call.name, &call.arguments, &workspace)
                })
            })
            .collect();
        let mut outputs = Vec::with_capacity(handles.len());
        for handle in futures::future::join_all(handles).await {
            outputs.push(handle.unwrap_or_else(|e| tools::ToolOutput {
                text: format!("Error: the tool failed unexpectedly: {e}"),
                ok: false,
                summary: "tool failed".to_string(),
                edit: None,
            }));
        }
        outputs
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

fn step(tool: &str, arguments: &str, output: &tools::ToolOutput) -> Step {
    Step {
        tool: tool.to_string(),
        arguments: arguments_object(arguments),
        ok: output.ok,
        summary: output.summary.clone(),
    }
}

fn result_of(call: &crate::providers::ToolCall, content: String) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        name: call.name.clone(),
        is_error: content.starts_with("Error: "),
        content,
    }
}

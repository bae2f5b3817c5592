//! An ask's events as `session/update` notifications, in the order the model produced
//! them: its text as `agent_message_chunk`, provider reasoning as
//! `agent_thought_chunk`, and each tool call as a `tool_call` that a `tool_call_update`
//! completes (an `edit` with a diff for a suggested edit). Then the end of the answer:
//! what was not streamed, and the citations as `file://` links.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, SessionId, SessionNotification, SessionUpdate, TextContent,
    ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;

use super::client_fs::ClientFiles;
use super::permissions;
use crate::agent::{AgentOutcome, AskEvent, Citation, IdentifiedEdit};

/// Sends one session's updates.
#[derive(Clone)]
pub struct Updates {
    pub connection: ConnectionTo<Client>,
    pub session_id: SessionId,
    pub root: PathBuf,
    pub files: Arc<ClientFiles>,
}

/// What the events of one ask left to finish the prompt with.
#[derive(Default)]
pub struct Streamed {
    /// Model text sent, per turn.
    pub turns: BTreeMap<u32, String>,
    /// Suggested edits, with the tool call that proposed each.
    pub edits: Vec<(String, IdentifiedEdit)>,
}

impl Updates {
    pub fn send(&self, update: SessionUpdate) {
        let notification = SessionNotification::new(self.session_id.clone(), update);
        if let Err(error) = self.connection.send_notification(notification) {
            tracing::debug!(%error, "session/update not sent");
        }
    }

    pub fn message(&self, text: impl Into<String>) {
        self.send(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::Text(TextContent::new(text)),
        )));
    }

    pub fn tool_call_update(&self, call_id: &str, fields: ToolCallUpdateFields) {
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call_id.to_string(),
            fields,
        )));
    }

    /// Sends the ask's events as they come, until the ask drops its sender.
    pub async fn forward(&self, mut events: UnboundedReceiver<AskEvent>) -> Streamed {
        let mut streamed = Streamed::default();
        while let Some(event) = events.recv().await {
            self.event(event, &mut streamed).await;
        }
        streamed
    }

    async fn event(&self, event: AskEvent, streamed: &mut Streamed) {
        match event {
            // The instruction files are the project's, not the model's words: the
            // panel's transcript is the model's, so they are only logged.
            AskEvent::Started { instruction_files } => {
                if !instruction_files.is_empty() {
                    tracing::debug!(?instruction_files, "instruction files in the prompt");
                }
            }
            AskEvent::Text { turn, text } => {
                if text.is_empty() {
                    return;
                }
                // A new turn's text starts a new paragraph after the previous turn's.
                let separate = !streamed.turns.contains_key(&turn)
                    && streamed.turns.values().any(|t| !t.is_empty());
                let turn_text = streamed.turns.entry(turn).or_default();
                turn_text.push_str(&text);
                self.message(if separate {
                    format!("\n\n{text}")
                } else {
                    text
                });
            }
            AskEvent::Thought { text, .. } => {
                if !text.is_empty() {
                    self.send(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                        ContentBlock::Text(TextContent::new(text)),
                    )));
                }
            }
            AskEvent::ToolStarted {
                call_id,
                tool,
                arguments,
                label,
                ..
            } => {
                let call = ToolCall::new(call_id, label)
                    .kind(tool_kind(&tool))
                    .status(ToolCallStatus::InProgress)
                    .locations(locations(&self.root, &tool, &arguments))
                    .raw_input(arguments);
                self.send(SessionUpdate::ToolCall(call));
            }
            AskEvent::ToolFinished {
                call_id,
                step,
                edit,
                ..
            } => {
                let status = if step.ok {
                    ToolCallStatus::Completed
                } else {
                    ToolCallStatus::Failed
                };
                let summary = ToolCallContent::from(ContentBlock::Text(TextContent::new(
                    step.summary.clone(),
                )));
                let Some(edit) = edit else {
                    self.tool_call_update(
                        &call_id,
                        ToolCallUpdateFields::new()
                            .status(status)
                            .content(vec![summary]),
                    );
                    return;
                };
                let mut fields = ToolCallUpdateFields::new()
                    .kind(ToolKind::Edit)
                    .locations(vec![edit_location(&edit)]);
                match permissions::diff(&self.files, &edit.edit).await {
                    Ok(diff) => {
                        // An edit the client can write waits for the user's permission.
                        let status = if self.files.capabilities().write {
                            ToolCallStatus::Pending
                        } else {
                            ToolCallStatus::Completed
                        };
                        fields = fields
                            .status(status)
                            .content(vec![ToolCallContent::Diff(diff)]);
                        streamed.edits.push((call_id.clone(), edit));
                    }
                    Err(error) => {
                        fields = fields.status(ToolCallStatus::Failed).content(vec![
                            ToolCallContent::from(ContentBlock::Text(TextContent::new(error))),
                        ]);
                    }
                }
                self.tool_call_update(&call_id, fields);
            }
        }
    }

    /// Ends the answer: what of it was not streamed (an `answer` tool's text, the
    /// step-limit note), then the citations as links.
    pub fn finish_answer(&self, streamed: &Streamed, outcome: &AgentOutcome) {
        let mut rest = unstreamed_answer(streamed, &outcome.answer);
        rest.push_str(&sources(&outcome.citations));
        if !rest.is_empty() {
            self.message(rest);
        }
    }
}

/// The part of the final answer the client has not seen yet, with a paragraph break
/// when it follows streamed text.
fn unstreamed_answer(streamed: &Streamed, answer: &str) -> String {
    let answer = answer.trim();
    let last = streamed
        .turns
        .values()
        .next_back()
        .map_or("", |t| t.as_str());
    if answer.is_empty() || last.contains(answer) {
        return String::new();
    }
    let written = last.trim_end();
    if !written.is_empty() && answer.starts_with(written) {
        return answer[written.len()..].to_string();
    }
    if streamed.turns.values().any(|t| !t.is_empty()) {
        format!("\n\n{answer}")
    } else {
        answer.to_string()
    }
}

/// The citations as markdown links to their `file://` URI and lines (`#L12`, or
/// `#L12:20` for a range, the form Zed opens at the lines).
fn sources(citations: &[Citation]) -> String {
    if citations.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n\n**Sources**\n");
    for citation in citations {
        let (label, fragment) = if citation.end_line > citation.line {
            (
                format!("{}:{}-{}", citation.path, citation.line, citation.end_line),
                format!("L{}:{}", citation.line, citation.end_line),
            )
        } else {
            (
                format!("{}:{}", citation.path, citation.line),
                format!("L{}", citation.line),
            )
        };
        let _ = write!(out, "\n- [{label}]({}#{fragment})", citation.uri);
        if let Some(note) = &citation.note {
            let _ = write!(out, " — {}", note.replace('\n', " "));
        }
    }
    out
}

pub fn tool_kind(tool: &str) -> ToolKind {
    match tool {
        "read_file" | "read_open_buffer" | "file_outline" | "list_directory"
        | "list_open_buffers" => ToolKind::Read,
        "search_code" | "find_files" | "find_symbol" => ToolKind::Search,
        "propose_edit" => ToolKind::Edit,
        "answer" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// The file or directory a tool call names, as an absolute path (with its first line
/// for reads).
fn locations(root: &Path, tool: &str, arguments: &Value) -> Vec<ToolCallLocation> {
    let names_a_path = matches!(
        tool,
        "read_file"
            | "read_open_buffer"
            | "file_outline"
            | "list_directory"
            | "search_code"
            | "propose_edit"
    );
    let path = arguments.get("path").and_then(Value::as_str);
    let Some(path) = path.filter(|_| names_a_path) else {
        return Vec::new();
    };
    let absolute = absolute_in(root, path);
    let line = match tool {
        "read_file" | "read_open_buffer" => Some(
            arguments
                .get("start_line")
                .and_then(Value::as_u64)
                .map_or(1, |line| line.clamp(1, u32::MAX as u64) as u32),
        ),
        _ => None,
    };
    vec![ToolCallLocation::new(absolute).line(line)]
}

fn edit_location(edit: &IdentifiedEdit) -> ToolCallLocation {
    ToolCallLocation::new(edit.edit.absolute.clone()).line(edit.edit.start_line.max(1) as u32)
}

/// A model's path (workspace-relative, `./x`, or absolute) as an absolute path.
fn absolute_in(root: &Path, path: &str) -> PathBuf {
    let given = Path::new(path);
    if given.is_absolute() {
        return given.to_path_buf();
    }
    let mut absolute = root.to_path_buf();
    for component in given.components() {
        match component {
            std::path::Component::CurDir => {}
            other => absolute.push(other),
        }
    }
    absolute
}

/// The diff of a suggested edit: the file's whole text before and after.
pub fn diff_content(path: &Path, before: Option<String>, after: String) -> Diff {
    Diff::new(path, after).old_text(before)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_paths_become_absolute_locations_with_lines() {
        let root = Path::new("/ws");
        let found = locations(
            root,
            "read_file",
            &serde_json::json!({"path": "./src/a.rs", "start_line": 12}),
        );
        assert_eq!(found, vec![ToolCallLocation::new("/ws/src/a.rs").line(12)]);
        let found = locations(root, "list_directory", &serde_json::json!({"path": "."}));
        assert_eq!(found, vec![ToolCallLocation::new("/ws")]);
        assert!(locations(root, "find_files", &serde_json::json!({"pattern": "*"})).is_empty());
    }

    #[test]
    fn only_the_unstreamed_part_of_the_answer_is_sent() {
        let mut streamed = Streamed::default();
        assert_eq!(unstreamed_answer(&streamed, "All of it."), "All of it.");
        streamed.turns.insert(1, "Looking.".into());
        streamed.turns.insert(2, "The answer".into());
        assert_eq!(unstreamed_answer(&streamed, "The answer"), "");
        assert_eq!(
            unstreamed_answer(&streamed, "The answer, fully."),
            ", fully."
        );
        assert_eq!(
            unstreamed_answer(&streamed, "From the answer tool."),
            "\n\nFrom the answer tool."
        );
    }
}

//! An ask's events as `session/update` notifications, in the order the model produced
//! them: its text as `agent_message_chunk`, provider reasoning as
//! `agent_thought_chunk`, and each tool call as a `tool_call` that a `tool_call_update`
//! ends (`completed` or `failed`; a suggested edit's diff and permission are sent by
//! `permissions` at the call). Then the end of the answer: what was not streamed, and
//! the citations as `file://` links. A kept conversation is replayed the same way.
//!
//! Events are sent as they happen, from the agent's own thread of work: a notification
//! is only queued on the connection, so it never blocks, and everything the agent sends
//! (updates, then a permission request) reaches the client in the order it happened.

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

use super::client_fs::ClientFiles;
use crate::agent::{AgentOutcome, AskEvent};
use crate::session::conversations::TranscriptEntry;
use crate::workspace::sandbox::Sandbox;

/// Sends one session's updates.
#[derive(Clone)]
pub struct Updates {
    pub connection: ConnectionTo<Client>,
    pub session_id: SessionId,
    /// The session's `cwd`, canonical: where its conversation is kept.
    pub root: PathBuf,
    /// Every root of the session (`cwd` and its additional directories), for turning
    /// the model's paths into absolute ones.
    pub sandbox: Sandbox,
    pub files: Arc<ClientFiles>,
}

/// What the events of one ask left to finish the prompt with.
#[derive(Default)]
pub struct Streamed {
    /// Model text sent, per turn.
    pub turns: BTreeMap<u32, String>,
    /// Tool calls started and not finished, in order: a cancelled ask ends them.
    pub open_calls: Vec<String>,
}

/// A citation as the `Sources` list shows it.
pub struct Source<'a> {
    pub path: &'a str,
    pub uri: &'a str,
    pub line: usize,
    pub end_line: usize,
    pub note: Option<&'a str>,
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

    /// Sends one event of the ask as a session update.
    pub fn event(&self, event: AskEvent, streamed: &mut Streamed) {
        match event {
            // The instruction files are the project's, not the model's words: the
            // panel's transcript is the model's, so they are only logged.
            AskEvent::Started { instruction_files } => {
                if !instruction_files.is_empty() {
                    tracing::debug!(?instruction_files, "instruction files in the prompt");
                }
            }
            // The index notice opens the answer, before any model turn (turn 0).
            AskEvent::Notice { text } => {
                streamed.turns.insert(0, text.clone());
                self.message(text);
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
                let call = ToolCall::new(call_id.clone(), label)
                    .kind(tool_kind(&tool))
                    .status(ToolCallStatus::InProgress)
                    .locations(locations(&self.sandbox, &tool, &arguments))
                    .raw_input(arguments);
                self.send(SessionUpdate::ToolCall(call));
                streamed.open_calls.push(call_id);
            }
            AskEvent::ToolFinished {
                call_id,
                step,
                edit,
                ..
            } => {
                streamed.open_calls.retain(|open| *open != call_id);
                let summary = ToolCallContent::from(ContentBlock::Text(TextContent::new(
                    step.summary.clone(),
                )));
                let fields = match (step.ok, edit.is_some()) {
                    (true, false) => ToolCallUpdateFields::new()
                        .status(ToolCallStatus::Completed)
                        .content(vec![summary]),
                    // The diff shown at the call stays.
                    (true, true) => ToolCallUpdateFields::new().status(ToolCallStatus::Completed),
                    (false, _) => ToolCallUpdateFields::new()
                        .status(ToolCallStatus::Failed)
                        .content(vec![summary]),
                };
                self.tool_call_update(&call_id, fields);
            }
        }
    }

    /// Ends the tool calls a cancelled (or failed) ask left running: each gets its
    /// final `tool_call_update`.
    pub fn close_open_calls(&self, streamed: &mut Streamed, reason: &str) {
        for call_id in std::mem::take(&mut streamed.open_calls) {
            self.tool_call_update(
                &call_id,
                ToolCallUpdateFields::new()
                    .status(ToolCallStatus::Failed)
                    .content(vec![ToolCallContent::from(ContentBlock::Text(
                        TextContent::new(reason),
                    ))]),
            );
        }
    }

    /// Replays a kept conversation as the updates it was shown with (`session/load`).
    pub fn replay(&self, transcript: &[TranscriptEntry]) {
        for entry in transcript {
            match entry {
                TranscriptEntry::User { text } => self.send(SessionUpdate::UserMessageChunk(
                    ContentChunk::new(ContentBlock::Text(TextContent::new(text.clone()))),
                )),
                TranscriptEntry::Agent { text, citations } => {
                    let mut text = text.clone();
                    text.push_str(&sources(citations.iter().map(|c| Source {
                        path: &c.path,
                        uri: &c.uri,
                        line: c.line,
                        end_line: c.end_line,
                        note: c.note.as_deref(),
                    })));
                    if !text.is_empty() {
                        self.message(text);
                    }
                }
                TranscriptEntry::Tool {
                    call_id,
                    tool,
                    title,
                    ok,
                } => {
                    let status = if *ok {
                        ToolCallStatus::Completed
                    } else {
                        ToolCallStatus::Failed
                    };
                    self.send(SessionUpdate::ToolCall(
                        ToolCall::new(call_id.clone(), title.clone())
                            .kind(tool_kind(tool))
                            .status(status),
                    ));
                }
            }
        }
    }

    /// Ends the answer: what of it was not streamed (an `answer` tool's text, the
    /// step-limit note), then the citations as links.
    pub fn finish_answer(&self, streamed: &Streamed, outcome: &AgentOutcome) {
        let mut rest = unstreamed_answer(streamed, outcome.body());
        rest.push_str(&sources(outcome.citations.iter().map(|c| Source {
            path: &c.path,
            uri: &c.uri,
            line: c.line,
            end_line: c.end_line,
            note: c.note.as_deref(),
        })));
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
pub fn sources<'a>(citations: impl Iterator<Item = Source<'a>>) -> String {
    let mut citations = citations.peekable();
    if citations.peek().is_none() {
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
        if let Some(note) = citation.note {
            let _ = write!(out, " — {}", note.replace('\n', " "));
        }
    }
    out
}

pub fn tool_kind(tool: &str) -> ToolKind {
    match tool {
        "read_file" | "read_open_buffer" | "file_outline" | "list_directory"
        | "list_open_buffers" => ToolKind::Read,
        "search_code" | "find_files" | "find_symbol" | "find_references" | "find_related" => {
            ToolKind::Search
        }
        "propose_edit" => ToolKind::Edit,
        "answer" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// The file or directory a tool call names, as an absolute path (with its first line
/// for reads).
fn locations(sandbox: &Sandbox, tool: &str, arguments: &Value) -> Vec<ToolCallLocation> {
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
    // With several roots the path starts with its root's name.
    let absolute = match sandbox.several() {
        true => sandbox
            .join_shown(path.trim_start_matches("./"))
            .unwrap_or_else(|| absolute_in(sandbox.root(), path)),
        false => absolute_in(sandbox.root(), path),
    };
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
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        let root = &Sandbox::new(&ws).unwrap();
        let found = locations(
            root,
            "read_file",
            &serde_json::json!({"path": "./src/a.rs", "start_line": 12}),
        );
        assert_eq!(
            found,
            vec![ToolCallLocation::new(ws.join("src/a.rs")).line(12)]
        );
        let found = locations(root, "list_directory", &serde_json::json!({"path": "."}));
        assert_eq!(found, vec![ToolCallLocation::new(&ws)]);
        assert!(locations(root, "find_files", &serde_json::json!({"pattern": "*"})).is_empty());
        // With several roots a path starts with its root's name.
        for name in ["api", "web"] {
            std::fs::create_dir(ws.join(name)).unwrap();
        }
        let both = &Sandbox::with_roots(&[ws.join("api"), ws.join("web")]).unwrap();
        let found = locations(
            both,
            "read_file",
            &serde_json::json!({"path": "web/src/b.ts"}),
        );
        assert_eq!(
            found,
            vec![ToolCallLocation::new(ws.join("web/src/b.ts")).line(1)]
        );
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

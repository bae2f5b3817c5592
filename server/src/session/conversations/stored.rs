//! The kept conversation's shape on disk (serde types at this edge only) and reading
//! and writing one file whole.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Conversation, TranscriptEntry, FORMAT};
use crate::providers::{AssistantTurn, Message, ToolCall, ToolResult};

pub(super) fn read_file(path: &Path) -> Option<StoredFile> {
    let text = std::fs::read(path).ok()?;
    match serde_json::from_slice::<StoredFile>(&text) {
        Ok(file) if file.format == FORMAT => Some(file),
        Ok(_) => None,
        Err(error) => {
            tracing::debug!(path = %path.display(), %error, "conversation file skipped");
            None
        }
    }
}

pub(super) fn write_file(directory: &Path, path: &Path, file: &StoredFile) -> std::io::Result<()> {
    std::fs::create_dir_all(directory)?;
    let text = serde_json::to_vec(file).map_err(std::io::Error::other)?;
    // Written whole, then renamed over: a reader never sees half a file.
    let temporary = directory.join(format!(".{}.{}.tmp", file.id, std::process::id()));
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path)
}

// The on-disk shape: serde types at this edge only.

#[derive(Serialize, Deserialize)]
pub(super) struct StoredFile {
    pub(super) format: u32,
    pub(super) id: String,
    pub(super) cwd: PathBuf,
    pub(super) title: String,
    pub(super) created: u64,
    pub(super) updated: u64,
    pub(super) history: Vec<StoredMessage>,
    pub(super) transcript: Vec<TranscriptEntry>,
    /// Absent in files kept before the menus were.
    #[serde(default)]
    pub(super) choices: BTreeMap<String, String>,
    /// Absent in files kept before sessions had several roots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) additional_directories: Vec<PathBuf>,
}

impl StoredFile {
    pub(super) fn into_conversation(self) -> Conversation {
        Conversation {
            id: self.id,
            cwd: self.cwd,
            title: self.title,
            updated: self.updated,
            history: self.history.into_iter().map(Message::from).collect(),
            transcript: self.transcript,
            choices: self.choices,
            additional_directories: self.additional_directories,
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub(super) enum StoredMessage {
    User {
        text: String,
    },
    Assistant {
        text: String,
        tool_calls: Vec<StoredCall>,
    },
    ToolResults {
        results: Vec<StoredResult>,
    },
}

#[derive(Serialize, Deserialize)]
pub(super) struct StoredCall {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Serialize, Deserialize)]
pub(super) struct StoredResult {
    call_id: String,
    name: String,
    content: String,
    is_error: bool,
}

impl From<&Message> for StoredMessage {
    fn from(message: &Message) -> StoredMessage {
        match message {
            Message::User(text) => StoredMessage::User { text: text.clone() },
            Message::Assistant(turn) => StoredMessage::Assistant {
                text: turn.text.clone(),
                tool_calls: turn
                    .tool_calls
                    .iter()
                    .map(|c| StoredCall {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect(),
            },
            Message::ToolResults(results) => StoredMessage::ToolResults {
                results: results
                    .iter()
                    .map(|r| StoredResult {
                        call_id: r.call_id.clone(),
                        name: r.name.clone(),
                        content: r.content.clone(),
                        is_error: r.is_error,
                    })
                    .collect(),
            },
        }
    }
}

impl From<StoredMessage> for Message {
    fn from(message: StoredMessage) -> Message {
        match message {
            StoredMessage::User { text } => Message::User(text),
            StoredMessage::Assistant { text, tool_calls } => Message::Assistant(AssistantTurn {
                text,
                tool_calls: tool_calls
                    .into_iter()
                    .map(|c| ToolCall {
                        id: c.id,
                        name: c.name,
                        arguments: c.arguments,
                    })
                    .collect(),
            }),
            StoredMessage::ToolResults { results } => Message::ToolResults(
                results
                    .into_iter()
                    .map(|r| ToolResult {
                        call_id: r.call_id,
                        name: r.name,
                        content: r.content,
                        is_error: r.is_error,
                    })
                    .collect(),
            ),
        }
    }
}

//! Conversations kept on disk, so a session can be resumed by another process (an ACP
//! client that starts the agent once per prompt, `session/load`, `session/list`, or the
//! LSP side continuing it by the same id): one JSON file per conversation under
//! `<cache>/conversations/<hash of the canonical root>/<id>.json`.
//!
//! A file holds the model's history (bounded, as in memory) and a transcript for people
//! (what the user asked, the tool calls, what the agent answered), which `session/load`
//! replays. Bounded per workspace: the most recent `MAX_CONVERSATIONS`, none older than
//! `MAX_AGE`. A file that cannot be read or parsed is skipped, never fatal; nothing is
//! ever written inside the workspace (a cache dir inside the root keeps nothing).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::agent::{self, AgentOutcome, AskOptions};
use crate::index as workspace_index;
use crate::providers::Message;
use crate::text::prefix_within;
use crate::tools;

mod stored;
use self::stored::{read_file, write_file, StoredFile, StoredMessage};

/// Conversations kept per workspace: the most recent ones.
pub const MAX_CONVERSATIONS: usize = 200;
/// Conversations not continued for this long are dropped.
pub const MAX_AGE: Duration = Duration::from_secs(30 * 24 * 60 * 60);
/// Transcript entries kept per conversation (the oldest go first), and the most text of
/// one entry.
const MAX_TRANSCRIPT: usize = 400;
const MAX_ENTRY_BYTES: usize = 64 * 1024;
/// The title: the first question, on one line, at most this long.
const MAX_TITLE_CHARS: usize = 120;
/// Bumped when the file's shape changes; other formats are skipped.
const FORMAT: u32 = 1;

/// One entry of what people saw, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TranscriptEntry {
    User {
        text: String,
    },
    Agent {
        text: String,
        #[serde(default)]
        citations: Vec<StoredCitation>,
    },
    Tool {
        call_id: String,
        tool: String,
        title: String,
        ok: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredCitation {
    pub path: String,
    pub uri: String,
    pub line: usize,
    pub end_line: usize,
    #[serde(default)]
    pub note: Option<String>,
}

/// A conversation as it was last saved.
#[derive(Clone, Debug)]
pub struct Conversation {
    pub id: String,
    pub cwd: PathBuf,
    pub title: String,
    /// Seconds since the Unix epoch of the last finished ask.
    pub updated: u64,
    pub history: Vec<Message>,
    pub transcript: Vec<TranscriptEntry>,
    /// What the user chose in the session's menus (`mode` → `ask`, `model` → …), so a
    /// loaded session goes on as it was left.
    pub choices: BTreeMap<String, String>,
    /// The session's roots beside `cwd` (ACP's `additionalDirectories`), restored when
    /// it is loaded.
    pub additional_directories: Vec<PathBuf>,
}

/// What `session/list` shows of a conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversationSummary {
    pub id: String,
    pub cwd: PathBuf,
    pub title: String,
    pub updated: u64,
    /// Its roots beside `cwd`.
    pub additional_directories: Vec<PathBuf>,
}

/// A conversation id that can name a file: what we hand out (hex) and what LSP clients
/// commonly choose. Anything else is never looked up on disk.
pub fn is_storable_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && !id.starts_with('.')
}

/// Where conversations are kept: under the cache directory.
#[derive(Clone, Debug)]
pub struct ConversationStore {
    cache: Option<PathBuf>,
}

impl ConversationStore {
    /// Under the cache directory of the environment (`COPILOT_LS_CACHE_DIR`, …).
    pub fn from_env() -> ConversationStore {
        ConversationStore::at(workspace_index::cache_dir_from_env())
    }

    pub fn at(cache: Option<PathBuf>) -> ConversationStore {
        ConversationStore {
            cache: cache.filter(|dir| dir.is_absolute()),
        }
    }

    /// The directory of one workspace's conversations, or `None` when nothing may be
    /// kept (no cache dir, or one inside the workspace).
    fn directory(&self, root: &Path) -> Option<PathBuf> {
        let cache = self.cache.as_ref()?;
        if inside(cache, root) {
            return None;
        }
        let hash = xxhash_rust::xxh3::xxh3_64(root.as_os_str().as_encoded_bytes());
        Some(cache.join("conversations").join(format!("{hash:016x}")))
    }

    /// The conversation `id` of the workspace at `root` (canonical), if one is kept.
    pub fn load(&self, root: &Path, id: &str) -> Option<Conversation> {
        if !is_storable_id(id) {
            return None;
        }
        let path = self.directory(root)?.join(format!("{id}.json"));
        let file = read_file(&path)?;
        Some(file.into_conversation())
    }

    /// The kept conversations of one workspace (`cwd`, canonical), or of all of them,
    /// most recent first.
    pub fn list(&self, cwd: Option<&Path>) -> Vec<ConversationSummary> {
        let directories: Vec<PathBuf> = match cwd {
            Some(root) => self.directory(root).into_iter().collect(),
            None => self
                .cache
                .as_ref()
                .and_then(|cache| std::fs::read_dir(cache.join("conversations")).ok())
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.path())
                .collect(),
        };
        let now = unix_now();
        let mut found = Vec::new();
        for directory in directories {
            let Ok(entries) = std::fs::read_dir(&directory) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().is_none_or(|e| e != "json") {
                    continue;
                }
                let Some(file) = read_file(&path) else {
                    continue;
                };
                if cwd.is_some_and(|cwd| file.cwd != cwd)
                    || now.saturating_sub(file.updated) > MAX_AGE.as_secs()
                {
                    continue;
                }
                found.push(ConversationSummary {
                    id: file.id,
                    cwd: file.cwd,
                    title: file.title,
                    updated: file.updated,
                    additional_directories: file.additional_directories,
                });
            }
        }
        found.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.id.cmp(&b.id)));
        found
    }

    /// Keeps a new, empty conversation `id` (a session that has asked nothing yet can
    /// be loaded by another process too). Nothing happens when it is already kept.
    pub fn create(&self, root: &Path, id: &str) {
        if !is_storable_id(id) {
            return;
        }
        let Some(directory) = self.directory(root) else {
            return;
        };
        let path = directory.join(format!("{id}.json"));
        if path.exists() {
            return;
        }
        let now = unix_now();
        let file = StoredFile {
            format: FORMAT,
            id: id.to_string(),
            cwd: root.to_path_buf(),
            title: String::new(),
            created: now,
            updated: now,
            history: Vec::new(),
            transcript: Vec::new(),
            choices: BTreeMap::new(),
            additional_directories: Vec::new(),
        };
        match write_file(&directory, &path, &file) {
            Ok(()) => prune(&directory, now),
            Err(error) => tracing::warn!(path = %path.display(), %error, "cannot keep the session"),
        }
    }

    /// Keeps the roots beside `cwd` of conversation `id` (only of one already kept); a
    /// failure is logged.
    pub fn keep_directories(&self, root: &Path, id: &str, directories: &[PathBuf]) {
        let Some(directory) = self.directory(root).filter(|_| is_storable_id(id)) else {
            return;
        };
        let path = directory.join(format!("{id}.json"));
        let Some(mut file) = read_file(&path) else {
            return;
        };
        if file.additional_directories == directories {
            return;
        }
        file.additional_directories = directories.to_vec();
        if let Err(error) = write_file(&directory, &path, &file) {
            tracing::warn!(path = %path.display(), %error, "cannot keep the session's folders");
        }
    }

    /// Keeps a menu choice of conversation `id` (only of one already kept); a failure is
    /// logged, the choice still holds in this process.
    pub fn choose(&self, root: &Path, id: &str, menu: &str, value: &str) {
        let Some(directory) = self.directory(root).filter(|_| is_storable_id(id)) else {
            return;
        };
        let path = directory.join(format!("{id}.json"));
        let Some(mut file) = read_file(&path) else {
            return;
        };
        file.choices.insert(menu.to_string(), value.to_string());
        if let Err(error) = write_file(&directory, &path, &file) {
            tracing::warn!(path = %path.display(), %error, "cannot keep the session's choice");
        }
    }

    /// Saves conversation `id` after a finished ask: its history now, and the ask's
    /// entries appended to the transcript (`user_text` is what the user wrote). Then drops
    /// what is past the bounds. A failure is logged; the ask is not affected.
    pub fn record(
        &self,
        root: &Path,
        id: &str,
        user_text: &str,
        outcome: &AgentOutcome,
        options: &AskOptions,
    ) {
        self.update(root, id, user_text, |file| {
            file.history =
                agent::bound_history(outcome.history.clone(), agent::history::MAX_HISTORY_BYTES)
                    .iter()
                    .map(StoredMessage::from)
                    .collect();
            let entries = transcript_of(id, file.transcript.len(), user_text, outcome, options);
            file.transcript.extend(entries);
        });
    }

    /// Saves a turn no model took part in (a slash command, a cancelled prompt) to the
    /// transcript only, so a loaded session replays what the user saw; the model's
    /// history is left as it was.
    pub fn record_exchange(&self, root: &Path, id: &str, user_text: &str, answer: &str) {
        self.update(root, id, user_text, |file| {
            let bounded = |text: &str| prefix_within(text, MAX_ENTRY_BYTES).to_string();
            file.transcript.push(TranscriptEntry::User {
                text: bounded(user_text),
            });
            file.transcript.push(TranscriptEntry::Agent {
                text: bounded(answer),
                citations: Vec::new(),
            });
        });
    }

    /// Reads conversation `id` (or starts it), titles it by its first question, lets
    /// `change` add the turn, bounds the transcript and writes it back.
    fn update(&self, root: &Path, id: &str, user_text: &str, change: impl FnOnce(&mut StoredFile)) {
        if !is_storable_id(id) {
            return;
        }
        let Some(directory) = self.directory(root) else {
            tracing::debug!(
                "no cache directory outside the workspace: the conversation is not kept"
            );
            return;
        };
        let path = directory.join(format!("{id}.json"));
        let now = unix_now();
        let mut file = read_file(&path).unwrap_or_else(|| StoredFile {
            format: FORMAT,
            id: id.to_string(),
            cwd: root.to_path_buf(),
            title: String::new(),
            created: now,
            updated: now,
            history: Vec::new(),
            transcript: Vec::new(),
            choices: BTreeMap::new(),
            additional_directories: Vec::new(),
        });
        file.updated = now;
        if file.title.is_empty() {
            file.title = title_of(user_text);
        }
        change(&mut file);
        let excess = file.transcript.len().saturating_sub(MAX_TRANSCRIPT);
        file.transcript.drain(..excess);
        if let Err(error) = write_file(&directory, &path, &file) {
            tracing::warn!(path = %path.display(), %error, "cannot keep the conversation");
            return;
        }
        prune(&directory, now);
    }
}

/// Whether `path` (which may not exist yet) lies in `root`, symlinks resolved where
/// they exist.
fn inside(path: &Path, root: &Path) -> bool {
    let mut existing = path;
    let mut rest = Vec::new();
    while !existing.exists() {
        let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
            break;
        };
        rest.push(name.to_os_string());
        existing = parent;
    }
    let mut resolved = std::fs::canonicalize(existing).unwrap_or_else(|_| existing.to_path_buf());
    for name in rest.into_iter().rev() {
        resolved.push(name);
    }
    resolved.starts_with(root)
}

/// Keeps the most recent `MAX_CONVERSATIONS` files, none older than `MAX_AGE` (by
/// modification time: the last save).
fn prune(directory: &Path, now: u64) {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return;
    };
    let mut files: Vec<(u64, PathBuf)> = entries
        .flatten()
        .filter(|entry| entry.path().extension().is_some_and(|e| e == "json"))
        .map(|entry| {
            let modified = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs());
            (modified, entry.path())
        })
        .collect();
    files.sort_by_key(|file| std::cmp::Reverse(file.0));
    for (rank, (modified, path)) in files.into_iter().enumerate() {
        if rank >= MAX_CONVERSATIONS || now.saturating_sub(modified) > MAX_AGE.as_secs() {
            if let Err(error) = std::fs::remove_file(&path) {
                tracing::debug!(path = %path.display(), %error, "old conversation not removed");
            }
        }
    }
}

fn title_of(user_text: &str) -> String {
    let line = user_text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("");
    match line.char_indices().nth(MAX_TITLE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

/// The ask's entries: the question, each turn's text before its tool calls and the
/// calls, then the answer with its citations.
fn transcript_of(
    id: &str,
    already: usize,
    user_text: &str,
    outcome: &AgentOutcome,
    options: &AskOptions,
) -> Vec<TranscriptEntry> {
    let bounded = |text: &str| prefix_within(text, MAX_ENTRY_BYTES).to_string();
    let mut entries = vec![TranscriptEntry::User {
        text: bounded(user_text),
    }];
    for (n, step) in outcome.steps.iter().enumerate() {
        if let Some(thought) = &step.thought {
            entries.push(TranscriptEntry::Agent {
                text: bounded(thought),
                citations: Vec::new(),
            });
        }
        let title = match options.external_tools.iter().find(|t| t.name == step.tool) {
            Some(tool) => tool.title.clone(),
            None => tools::progress_label(&step.tool, &step.arguments.to_string()),
        };
        entries.push(TranscriptEntry::Tool {
            call_id: format!("{id}-{}", already + n + 1),
            tool: step.tool.clone(),
            title,
            ok: step.ok,
        });
    }
    entries.push(TranscriptEntry::Agent {
        text: bounded(&outcome.answer),
        citations: outcome
            .citations
            .iter()
            .map(|c| StoredCitation {
                path: c.path.clone(),
                uri: c.uri.clone(),
                line: c.line,
                end_line: c.end_line,
                note: c.note.clone(),
            })
            .collect(),
    });
    entries
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Seconds since the epoch as an RFC 3339 UTC time (`2026-12-01T20:45:00Z`), as ACP's
/// `updatedAt` wants it.
pub fn rfc3339(seconds: u64) -> String {
    let days = (seconds / 86_400) as i64;
    let rest = seconds % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests;

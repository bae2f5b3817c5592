//! The session: what the editor told us (open documents, settings, the workspace root,
//! the negotiated encoding), conversations for follow-ups, the last answer's citations
//! and edits, and the orchestration of one ask. No network and no LSP types here.

mod citation_anchor;
pub mod document_store;
pub mod editor_surface;
pub mod settings;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::agent::{self, Agent, AgentOutcome, AgentSettings, AskInput, Focus};
use crate::index::{self as workspace_index, Change, RetrievalHit, RetrievalIndex};
use crate::providers::{self, ChatModel, Message, ProviderConfig, ProviderError};
use crate::text::{self, PositionEncoding, Span};
use crate::workspace::sandbox::Sandbox;
use crate::workspace::{OpenDocuments, Workspace};

pub use document_store::{ChangeError, Document, DocumentStore, TextChange};
pub use editor_surface::{edit_diagnostic, DiagnosticSpec, EditorSurface, Placement, Severity};
pub use settings::{Provider, Settings};

/// Chunks of retrieved code offered to the model (and listed when there is no model).
const CONTEXT_HITS: usize = 6;
/// How long an ask waits for the index to finish its first refresh before it answers
/// from what is indexed so far: small workspaces are always complete, a huge one never
/// holds the answer up for long.
const INDEX_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// What the background index refresh reports (to show progress in the editor).
#[derive(Clone, Debug)]
pub enum IndexEvent {
    Progress(workspace_index::Progress),
    Done(workspace_index::RefreshReport),
}

/// Where index events go; called from a blocking thread.
pub type IndexEvents = Arc<dyn Fn(IndexEvent) + Send + Sync>;

#[derive(Clone, Debug, Default)]
pub struct AskRequest {
    pub question: String,
    pub conversation_id: Option<String>,
    pub document_uri: Option<String>,
    pub selection: Option<Span>,
}

#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error("{0}")]
    InvalidParams(String),
    #[error("{0}")]
    Provider(#[from] ProviderError),
    #[error("{0}")]
    Failed(String),
}

pub struct AskOutcome {
    pub conversation_id: String,
    pub outcome: AgentOutcome,
}

/// The workspace index and the document versions it has seen, opened on first use.
#[derive(Default)]
struct RetrievalState {
    index: Option<RetrievalIndex>,
    /// Whether its refresh with the disk has been started (once per session).
    refreshing: bool,
    /// Open documents indexed with their editor text: URI → (version, relative path).
    seen_versions: HashMap<String, (i32, String)>,
}

pub struct Session {
    pub documents: Arc<DocumentStore>,
    settings: RwLock<Settings>,
    workspace: RwLock<Option<Workspace>>,
    encoding: RwLock<PositionEncoding>,
    retrieval: Arc<Mutex<RetrievalState>>,
    /// Files the editor's watcher reported changed on disk, applied at the next ask. A
    /// lock of its own: the index's may be held for seconds by a build.
    changed_on_disk: Arc<Mutex<std::collections::BTreeSet<String>>>,
    conversations: Mutex<HashMap<String, Vec<Message>>>,
    /// The provider of the last ask, reused while its configuration (key included) is
    /// unchanged, so asks share one connection pool instead of a TLS handshake each.
    provider: Mutex<Option<(ProviderConfig, Arc<dyn ChatModel>)>>,
    pub surface: Mutex<EditorSurface>,
    counter: AtomicU64,
}

impl Session {
    pub fn new(settings: Settings) -> Session {
        Session {
            documents: Arc::new(DocumentStore::default()),
            settings: RwLock::new(settings),
            workspace: RwLock::new(None),
            encoding: RwLock::new(PositionEncoding::Utf16),
            retrieval: Arc::new(Mutex::new(RetrievalState::default())),
            changed_on_disk: Arc::new(Mutex::new(std::collections::BTreeSet::new())),
            conversations: Mutex::new(HashMap::new()),
            provider: Mutex::new(None),
            surface: Mutex::new(EditorSurface::default()),
            counter: AtomicU64::new(0),
        }
    }

    /// Sets the workspace root (canonicalized once, by the sandbox).
    pub fn set_root(&self, root: &std::path::Path) -> std::io::Result<()> {
        self.set_root_with_documents(root, self.documents.clone())
    }

    /// Sets the workspace root with the tools reading open documents from `documents`
    /// instead of the document store (the ACP layer reads them through its client).
    pub fn set_root_with_documents(
        &self,
        root: &std::path::Path,
        documents: Arc<dyn OpenDocuments>,
    ) -> std::io::Result<()> {
        let sandbox = Sandbox::new(root)?;
        let workspace = Workspace::new(sandbox, documents);
        *write(&self.workspace) = Some(workspace);
        *lock(&self.retrieval) = RetrievalState::default();
        Ok(())
    }

    pub fn workspace(&self) -> Option<Workspace> {
        read(&self.workspace).clone()
    }

    pub fn set_encoding(&self, encoding: PositionEncoding) {
        *write(&self.encoding) = encoding;
    }

    pub fn encoding(&self) -> PositionEncoding {
        *read(&self.encoding)
    }

    pub fn settings(&self) -> Settings {
        read(&self.settings).clone()
    }

    /// Applies a settings object; returns the problems to report (bad values are kept
    /// at their previous value).
    pub fn apply_settings(&self, value: &serde_json::Value) -> Vec<String> {
        let mut settings = write(&self.settings);
        let mut next = settings.clone();
        let problems = next.apply(value);
        *settings = next;
        problems
    }

    fn next_id(&self, prefix: &str) -> String {
        format!(
            "{prefix}-{}",
            self.counter.fetch_add(1, Ordering::Relaxed) + 1
        )
    }

    /// Runs one ask to completion. Dropping the returned future cancels it: the provider
    /// call is aborted and nothing (history, edits) is recorded.
    pub async fn ask(
        &self,
        request: AskRequest,
        events: agent::EventSink<'_>,
    ) -> Result<AskOutcome, AskError> {
        let question = request.question.trim().to_string();
        if question.is_empty() {
            return Err(AskError::InvalidParams(
                "question must be a non-empty string".into(),
            ));
        }
        let workspace = self
            .workspace()
            .ok_or_else(|| AskError::Failed("no workspace folder is open".into()))?;
        let settings = self.settings();
        let env = settings::process_env;
        let model = settings
            .provider_config(&env)
            .map(|config| self.provider_for(config));
        let encoding = self.encoding();
        let focus = self.focus(&workspace, &request);

        let mut query = question.clone();
        if let Some(focus) = &focus {
            query.push(' ');
            query.push_str(&focus.path);
        }
        let context = self.retrieve(&workspace, query).await;
        // Opened by `retrieve`; `find_symbol` answers from it.
        let index = lock(&self.retrieval).index.clone();

        let conversation_id = request
            .conversation_id
            .clone()
            .filter(|id| !id.trim().is_empty())
            .unwrap_or_else(|| self.next_id("conversation"));
        let history = lock(&self.conversations)
            .get(&conversation_id)
            .cloned()
            .unwrap_or_default();

        let next_edit_id = || self.next_id("edit");
        let agent = Agent {
            model,
            workspace: &workspace,
            index,
            settings: AgentSettings {
                max_steps: settings.max_steps,
                encoding,
            },
            events,
            next_edit_id: &next_edit_id,
        };
        let outcome = agent
            .run(AskInput {
                question: question.clone(),
                history,
                focus,
                context,
            })
            .await?;

        // Only a finished ask leaves anything behind.
        lock(&self.conversations).insert(
            conversation_id.clone(),
            agent::bound_history(outcome.history.clone(), agent::history::MAX_HISTORY_BYTES),
        );
        lock(&self.surface).replace(
            &question,
            &outcome.citations,
            &outcome.edits,
            request.document_uri.as_deref(),
            &workspace,
        );
        Ok(AskOutcome {
            conversation_id,
            outcome,
        })
    }

    fn provider_for(&self, config: ProviderConfig) -> Arc<dyn ChatModel> {
        let mut cached = lock(&self.provider);
        if let Some((cached_config, model)) = cached.as_ref() {
            if *cached_config == config {
                return model.clone();
            }
        }
        let model = providers::build(config.clone());
        *cached = Some((config, model.clone()));
        model
    }

    /// The document and selection the user asked from, as the agent sees them.
    fn focus(&self, workspace: &Workspace, request: &AskRequest) -> Option<Focus> {
        let doc = self.documents.get(request.document_uri.as_deref()?);
        let path = match &doc {
            Some(doc) => doc.path.clone()?,
            None => text::path_from_file_uri(request.document_uri.as_deref()?)?,
        };
        let relative = workspace
            .sandbox
            .resolve_allow_missing(&path.to_string_lossy())
            .ok()?
            .relative;
        let mut focus = Focus {
            path: relative,
            lines: None,
            selected_text: None,
        };
        if let (Some(span), Some(doc)) = (request.selection, doc) {
            let encoding = self.encoding();
            let start = text::char_index(&doc.rope, span.start, encoding);
            let end = text::char_index(&doc.rope, span.end, encoding);
            if let (Some(start), Some(end)) = (start, end) {
                if start < end {
                    focus.selected_text = Some(doc.rope.slice(start..end).to_string());
                }
                // A selection that ends at column 0 selects nothing on its last line.
                let last = if span.end.character == 0 && span.end.line > span.start.line {
                    span.end.line
                } else {
                    span.end.line + 1
                };
                focus.lines = Some((span.start.line as usize + 1, last as usize));
            }
        }
        Some(focus)
    }

    /// Opens the workspace index and brings it up to date in the background, so the
    /// first ask does not wait for it (called once the editor has initialized).
    pub fn warm_up(&self, events: IndexEvents) {
        let Some(workspace) = self.workspace() else {
            return;
        };
        let state = self.retrieval.clone();
        tokio::task::spawn_blocking(move || {
            let (index, start) = open_index(&state, &workspace);
            if start {
                refresh(&index, &events);
            }
        });
    }

    /// Notes files changed, created or deleted on disk (from the editor's file watcher);
    /// the retrieval index takes them in at the next ask.
    pub fn files_changed_on_disk(&self, paths: Vec<std::path::PathBuf>) {
        let Some(workspace) = self.workspace() else {
            return;
        };
        let mut changed = lock(&self.changed_on_disk);
        for path in paths {
            // A deleted file cannot be canonicalized; its directory usually can.
            let canonical = std::fs::canonicalize(&path).ok().or_else(|| {
                let parent = std::fs::canonicalize(path.parent()?).ok()?;
                Some(parent.join(path.file_name()?))
            });
            if let Some(relative) = workspace.sandbox.relative(&canonical.unwrap_or(path)) {
                changed.insert(relative);
            }
        }
    }

    /// Best chunks for the question. The index is opened on first use (its refresh then
    /// starts in the background), awaited for at most `INDEX_WAIT`, and brought up to
    /// date with the editor's open documents and the files changed on disk.
    async fn retrieve(&self, workspace: &Workspace, query: String) -> Vec<RetrievalHit> {
        let state = self.retrieval.clone();
        let changed_on_disk = self.changed_on_disk.clone();
        let workspace = workspace.clone();
        let documents = self.documents.all();
        let task = tokio::task::spawn_blocking(move || {
            let (index, start) = open_index(&state, &workspace);
            if start {
                let index = index.clone();
                let quiet: IndexEvents = Arc::new(|_| {});
                std::thread::spawn(move || refresh(&index, &quiet));
            }
            index.wait_ready(INDEX_WAIT);
            let mut changes = Vec::new();
            {
                let mut state = lock(&state);
                for doc in &documents {
                    let Some(path) = &doc.path else { continue };
                    let Some(relative) = workspace.sandbox.relative(path) else {
                        continue;
                    };
                    if state.seen_versions.get(&doc.uri).map(|(v, _)| *v) != Some(doc.version) {
                        changes.push(Change::Editor {
                            path: relative.clone(),
                            text: doc.rope.to_string(),
                        });
                        state
                            .seen_versions
                            .insert(doc.uri.clone(), (doc.version, relative));
                    }
                }
                // Files changed on disk (git checkout, a formatter, another editor); open
                // documents keep their editor text.
                let changed = std::mem::take(&mut *lock(&changed_on_disk));
                for relative in changed {
                    if !state
                        .seen_versions
                        .values()
                        .any(|(_, open)| *open == relative)
                    {
                        changes.push(Change::Disk { path: relative });
                    }
                }
                // A document closed since the last ask (perhaps without saving) is
                // indexed by its text on disk again, or dropped if it was never saved.
                let closed: Vec<String> = state
                    .seen_versions
                    .keys()
                    .filter(|uri| !documents.iter().any(|doc| &doc.uri == *uri))
                    .cloned()
                    .collect();
                for uri in closed {
                    if let Some((_, relative)) = state.seen_versions.remove(&uri) {
                        changes.push(Change::Disk { path: relative });
                    }
                }
            }
            index.apply(changes);
            index.search(&query, CONTEXT_HITS)
        });
        task.await.unwrap_or_default()
    }

    /// Forgets the last answer's citations and edits; returns URIs to clear.
    pub fn clear(&self) -> Vec<String> {
        lock(&self.surface).clear()
    }
}

/// The session's index, opened on first use; `true` when the caller should start its
/// refresh (the first caller does).
fn open_index(state: &Mutex<RetrievalState>, workspace: &Workspace) -> (RetrievalIndex, bool) {
    let mut state = lock(state);
    let index = state
        .index
        .get_or_insert_with(|| {
            let cache = workspace_index::cache_dir_from_env();
            RetrievalIndex::open(workspace.clone(), cache.as_deref())
        })
        .clone();
    let start = !std::mem::replace(&mut state.refreshing, true);
    (index, start)
}

/// Brings the index up to date with the disk, reporting to `events`.
fn refresh(index: &RetrievalIndex, events: &IndexEvents) {
    let report = index.refresh(workspace_index::Bounds::from_env(), &|progress| {
        events(IndexEvent::Progress(progress));
    });
    events(IndexEvent::Done(report));
}

pub fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

//! The session: what the editor told us (open documents, settings, the workspace root,
//! the negotiated encoding), conversations for follow-ups, the last answer's citations
//! and edits, and the orchestration of one ask. No network and no LSP types here.

mod citation_anchor;
pub mod conversations;
mod cpu_slots;
pub mod doctor;
pub mod document_store;
pub mod editor_surface;
mod model_choice;
mod retrieval;
pub mod settings;

pub use cpu_slots::Queued;

/// The number an ask takes when it reaches a front end, for `AskRequest::arrival`.
pub fn arrival() -> u64 {
    cpu_slots::slots().arrival()
}

/// Keeps an ask's place among those waiting for a core while the front end spawns it
/// (see `cpu_slots::Slots::enqueue`); hold it until the ask ends.
pub fn queue(arrival: u64) -> Queued<'static> {
    cpu_slots::slots().enqueue(arrival)
}

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use retrieval::RetrievalState;

use crate::agent::{
    self, Agent, AgentOutcome, AgentSettings, AskInput, AskOptions, Focus, IndexState,
};
use crate::index::{self as workspace_index, WorkspaceIndex};
use crate::providers::{self, ChatModel, Message, ProviderConfig, ProviderError};
use crate::text::{self, PositionEncoding, Span};
use crate::workspace::sandbox::Sandbox;
use crate::workspace::{OpenDocuments, Workspace};

pub use document_store::{ChangeError, Document, DocumentStore, TextChange};
pub use editor_surface::{edit_diagnostic, DiagnosticSpec, EditorSurface, Placement, Severity};
pub use model_choice::EditorClient;
pub use settings::{configuration_section, Provider, Settings};

/// Chunks of retrieved code offered to the model, chosen from `agent::model_candidates`
/// so that they show as many files as they can; without a model, the answer's places
/// are chosen from `agent::place_candidates` (also for ACP's `/locate`).
const CONTEXT_HITS: usize = 6;
/// What the background index refresh reports (to show progress in the editor).
#[derive(Clone, Debug)]
pub enum IndexEvent {
    Progress(workspace_index::Progress),
    Done(workspace_index::RefreshReport),
    /// The index could not be kept on disk and lives in memory: why (told once).
    InMemory(String),
    /// The root is not a project (`/`, a home directory): not indexed, and why.
    NotIndexed(String),
}

/// Where index events go; called from a blocking thread.
pub type IndexEvents = Arc<dyn Fn(IndexEvent) + Send + Sync>;

#[derive(Clone, Debug, Default)]
pub struct AskRequest {
    pub question: String,
    pub conversation_id: Option<String>,
    pub document_uri: Option<String>,
    pub selection: Option<Span>,
    /// Keep the conversation on disk (`conversations.rs`), with this as the user's words
    /// in its transcript (ACP sessions). A conversation already kept is kept either way.
    pub persist_as: Option<String>,
    /// What the front end asks beyond the question (read-only, external tools, …).
    pub options: AskOptions,
    /// When the ask arrived (`session::arrival()`, taken before the front end's first
    /// await): when cores are short, earlier arrivals go first. `None`: now.
    pub arrival: Option<u64>,
    /// The editor model for this ask alone (`AskParams.editorModel`, section 11).
    pub editor_model: Option<String>,
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
    /// What the ask's search could see (`AskResult.index`).
    pub index: IndexState,
    /// The model that answered, as people read it (`None`: no model did).
    pub model: Option<String>,
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
    /// Conversations on disk, continued by id when not in memory.
    kept_conversations: conversations::ConversationStore,
    /// The provider of the last ask, reused while its configuration (key included) is
    /// unchanged, so asks share one connection pool instead of a TLS handshake each.
    provider: Mutex<Option<(ProviderConfig, Arc<dyn ChatModel>)>>,
    /// What the client said of the models it runs (section 11).
    editor: Mutex<EditorClient>,
    pub surface: Mutex<EditorSurface>,
    counter: AtomicU64,
    /// Whether an index fault is told at the start of the next answer (ACP, which has
    /// no message window), and whether it has been.
    faults_in_answers: AtomicBool,
    fault_told: Arc<AtomicBool>,
    /// Where the index's refresh reports (the editor's progress), set by `warm_up`:
    /// whichever starts the refresh, the warm-up or an ask that came first, reports here.
    index_events: Mutex<Option<IndexEvents>>,
    /// The problems of the settings in force (a typo kept a previous value), for the
    /// doctor: the environment's, and those of the last object the editor sent (which
    /// holds every setting, so it replaces the one before).
    problems: Mutex<(Vec<String>, Vec<String>)>,
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
            kept_conversations: conversations::ConversationStore::from_env(),
            provider: Mutex::new(None),
            editor: Mutex::new(EditorClient::default()),
            surface: Mutex::new(EditorSurface::default()),
            counter: AtomicU64::new(0),
            faults_in_answers: AtomicBool::new(false),
            fault_told: Arc::new(AtomicBool::new(false)),
            index_events: Mutex::new(None),
            problems: Mutex::new((Vec::new(), Vec::new())),
        }
    }

    /// Tells an index fault (an index kept in memory, and why) at the start of the
    /// next answer instead of through the editor: for clients with no message window.
    pub fn tell_faults_in_answers(&self) {
        self.faults_in_answers.store(true, Ordering::Relaxed);
    }

    /// Sets the workspace root (canonicalized once, by the sandbox).
    pub fn set_root(&self, root: &std::path::Path) -> std::io::Result<()> {
        self.set_roots(&[root.to_path_buf()])
    }

    /// Sets the workspace's roots, in the editor's order (docs/protocol.md section 10,
    /// "Several roots"): the indexes of roots that stay are kept, those of roots gone
    /// are let go at the next use.
    pub fn set_roots(&self, roots: &[std::path::PathBuf]) -> std::io::Result<()> {
        self.set_roots_with_documents(roots, self.documents.clone())
    }

    /// Sets the workspace root with the tools reading open documents from `documents`
    /// instead of the document store (the ACP layer reads them through its client).
    pub fn set_root_with_documents(
        &self,
        root: &std::path::Path,
        documents: Arc<dyn OpenDocuments>,
    ) -> std::io::Result<()> {
        self.set_roots_with_documents(&[root.to_path_buf()], documents)
    }

    /// `set_roots` with the documents read from `documents`.
    pub fn set_roots_with_documents(
        &self,
        roots: &[std::path::PathBuf],
        documents: Arc<dyn OpenDocuments>,
    ) -> std::io::Result<()> {
        let sandbox = Sandbox::with_roots(roots)?;
        let paths = sandbox.roots().iter().map(|r| r.path.clone()).collect();
        let workspace = Workspace::new(sandbox, documents);
        // Both under the retrieval lock: a search that opens the index sees either the
        // old roots and their index, or the new ones.
        let mut retrieval = lock(&self.retrieval);
        *write(&self.workspace) = Some(workspace);
        retrieval.roots_changed(paths);
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
        lock(&self.problems).1 = problems.clone();
        problems
    }

    /// What the client said at `initialize` of the models it runs: `channel` when it
    /// declared the capability. Returns a problem to report when the settings asked for
    /// the editor's model and the client runs none.
    pub fn set_editor_client(
        &self,
        channel: Option<Arc<dyn providers::editor::EditorChannel>>,
        models: Vec<providers::editor::EditorModelInfo>,
    ) -> Option<String> {
        let problem = write(&self.settings).for_client(channel.is_some());
        *lock(&self.editor) = EditorClient { channel, models };
        problem
    }

    /// The editor's models changed (`copilot/didChangeEditorModels`).
    pub fn set_editor_models(&self, models: Vec<providers::editor::EditorModelInfo>) {
        lock(&self.editor).models = models;
    }

    /// What the client said of its models (no channel: it runs none).
    pub fn editor_client(&self) -> EditorClient {
        lock(&self.editor).clone()
    }

    /// The environment's settings problems, found before the session began.
    pub fn note_env_problems(&self, problems: &[String]) {
        lock(&self.problems).0 = problems.to_vec();
    }

    /// The problems of the settings in force, for the doctor.
    pub fn problems(&self) -> Vec<String> {
        let problems = lock(&self.problems);
        problems.0.iter().chain(&problems.1).cloned().collect()
    }

    /// The workspace index, once an ask or the warm-up opened it (for answers that come
    /// straight from it, like ACP's slash commands).
    pub fn index(&self) -> Option<WorkspaceIndex> {
        lock(&self.retrieval).index.clone()
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
        let conversation_id = request
            .conversation_id
            .clone()
            .filter(|id| !id.trim().is_empty())
            .unwrap_or_else(|| self.next_id("conversation"));
        let settings = self.settings();
        let choice = model_choice::choose(
            &settings,
            &settings::process_env,
            &self.editor_client(),
            request.editor_model.as_deref(),
            &conversation_id,
        )?;
        let editor_default = matches!(
            choice,
            model_choice::Choice::Editor {
                explicit: false,
                ..
            }
        );
        match self
            .ask_with(&request, &question, &conversation_id, choice, events)
            .await
        {
            // The editor's model as the default declined (no consent, a quota): the ask
            // answers as `none` does, saying why (section 11).
            Err(AskError::Provider(ProviderError::Refused(why))) if editor_default => {
                let notice = model_choice::no_model_notice(why.trim_end_matches('.'));
                let choice = model_choice::Choice::None {
                    notice: Some(notice),
                };
                self.ask_with(&request, &question, &conversation_id, choice, events)
                    .await
            }
            other => other,
        }
    }

    async fn ask_with(
        &self,
        request: &AskRequest,
        question: &str,
        conversation_id: &str,
        choice: model_choice::Choice,
        events: agent::EventSink<'_>,
    ) -> Result<AskOutcome, AskError> {
        let question = question.to_string();
        let conversation_id = conversation_id.to_string();
        let workspace = self
            .workspace()
            .ok_or_else(|| AskError::Failed("no workspace folder is open".into()))?;
        let settings = self.settings();
        let (model, model_label, provider_notice) = match choice {
            model_choice::Choice::Http(config) => {
                let label = config.model.clone();
                (Some(self.provider_for(config)), Some(label), None)
            }
            model_choice::Choice::Editor { model, label, .. } => (Some(model), Some(label), None),
            model_choice::Choice::None { notice } => (None, None, notice),
        };
        let encoding = self.encoding();
        let focus = self.focus(&workspace, request);

        // The open file is a capped signal of its own, not words of the query.
        let open_file = focus.as_ref().map(|focus| focus.path.clone());
        // Places (no model, or ACP's `/locate`) are chosen from more chunks than the model
        // is shown.
        let for_model = model.is_some() && !request.options.places_only;
        let candidates: retrieval::Candidates = if for_model {
            agent::model_candidates
        } else {
            agent::place_candidates
        };
        // Retrieval (and a no-model answer, all CPU) waits its turn for a core.
        let slots = cpu_slots::slots();
        let arrival = request.arrival.unwrap_or_else(|| slots.arrival());
        let cpu_slot = slots.acquire(arrival).await;
        let (context, index_state) = self
            .retrieve(&workspace, question.clone(), open_file, candidates)
            .await;
        let context = if for_model {
            agent::context_for_model(context, CONTEXT_HITS)
        } else {
            context
        };
        // Opened by `retrieve`; `find_symbol` answers from it.
        let index = lock(&self.retrieval).index.clone();
        let index_fault = self.fault_to_tell(index.as_ref());

        let remembered = lock(&self.conversations).get(&conversation_id).cloned();
        // A conversation of another process (an ACP session resumed here, or by the LSP
        // side) continues from the disk.
        let kept = match remembered {
            Some(_) => None,
            None => self
                .kept_conversations
                .load(workspace.root(), &conversation_id),
        };
        let persist_as = request
            .persist_as
            .clone()
            .or_else(|| kept.as_ref().map(|_| question.clone()));
        let history = remembered
            .or_else(|| kept.map(|conversation| conversation.history))
            .unwrap_or_default();

        // A model ask waits on the network from here: it gives its core back.
        let cpu_slot = if model.is_some() && !request.options.places_only {
            drop(cpu_slot);
            None
        } else {
            Some(cpu_slot)
        };
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
            options: &request.options,
        };
        let outcome = agent
            .run(AskInput {
                question: question.clone(),
                history,
                focus,
                context,
                index: index_state.clone(),
                index_fault,
                provider_notice,
            })
            .await?;
        drop(cpu_slot);

        // Only a finished ask leaves anything behind.
        lock(&self.conversations).insert(
            conversation_id.clone(),
            agent::bound_history(outcome.history.clone(), agent::history::MAX_HISTORY_BYTES),
        );
        if let Some(user_text) = &persist_as {
            self.kept_conversations.record(
                workspace.root(),
                &conversation_id,
                user_text,
                &outcome,
                &request.options,
            );
        }
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
            index: index_state,
            model: model_label,
        })
    }

    /// The model asks are sent to now; `None` when no provider is configured.
    pub fn current_model(&self) -> Option<String> {
        let env = settings::process_env;
        self.settings()
            .provider_config(&env)
            .map(|config| config.model)
    }

    /// The models the configured provider lists; `None` when no provider is configured.
    pub async fn list_models(&self) -> Option<Result<Vec<String>, ProviderError>> {
        let env = settings::process_env;
        let config = self.settings().provider_config(&env)?;
        Some(self.provider_for(config).list_models().await)
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

    /// The workspace's roots, in order (empty before `initialize` set them).
    pub fn roots(&self) -> Vec<std::path::PathBuf> {
        self.workspace()
            .map(|w| w.sandbox.roots().iter().map(|r| r.path.clone()).collect())
            .unwrap_or_default()
    }

    /// Forgets what the last answer showed in files below `root` (a folder closed).
    pub fn forget_under(&self, root: &std::path::Path) {
        lock(&self.surface).forget_under(root);
    }

    /// Forgets the last answer's citations and edits; returns URIs to clear.
    pub fn clear(&self) -> Vec<String> {
        lock(&self.surface).clear()
    }
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

//! The session's side of the workspace index: opened on first use (shared with every
//! session of the process on the same root), refreshed in the background, brought up
//! to date with the editor's open documents and the files changed on disk before each
//! search, and the index's faults told once.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{lock, Document, IndexEvent, IndexEvents, Session};
use crate::agent::IndexState;
use crate::index::{self as workspace_index, Change, RetrievalHit, RetrievalIndex};
use crate::workspace::project_root;
use crate::workspace::Workspace;

/// Which retrieved chunks an ask starts from, given a search for the best `n`
/// (`agent::model_candidates`, `agent::place_candidates`).
pub(super) type Candidates = fn(&dyn Fn(usize) -> Vec<RetrievalHit>) -> Vec<RetrievalHit>;

/// How long an ask waits for the index to finish its first refresh before it answers
/// from what is indexed so far: small workspaces are always complete, a huge one never
/// holds the answer up for long.
const INDEX_WAIT: Duration = Duration::from_secs(2);

/// The workspace index and the document versions it has seen, opened on first use.
#[derive(Default)]
pub(super) struct RetrievalState {
    pub(super) index: Option<RetrievalIndex>,
    /// Set when the root is not a project (`/`, a home directory): why it is not
    /// indexed. Then there is no index, and the tools read and search on demand.
    not_indexed: Option<String>,
    /// Open documents indexed with their editor text: URI → (version, relative path).
    seen_versions: HashMap<String, (i32, String)>,
}

impl Session {
    /// Opens the workspace index and brings it up to date in the background, so the
    /// first ask does not wait for it (called once the editor has initialized).
    pub fn warm_up(&self, events: IndexEvents) {
        let Some(workspace) = self.workspace() else {
            return;
        };
        *lock(&self.index_events) = Some(events.clone());
        let state = self.retrieval.clone();
        tokio::task::spawn_blocking(move || match open_index(&state, &workspace) {
            Ok(index) => {
                if index.claim_refresh() {
                    refresh(&index, &events);
                } else if let Some(reason) = index.fault() {
                    events(IndexEvent::InMemory(reason));
                }
            }
            Err(why) => events(IndexEvent::NotIndexed(why)),
        });
    }

    /// Brings the workspace index fully up to date now, reporting as it goes: for the
    /// command line, whose asks must not answer from a half-built index. Returns the
    /// coverage reached and the index's fault, if any.
    pub async fn prepare_index(&self, events: IndexEvents) -> Option<workspace_index::Coverage> {
        let workspace = self.workspace()?;
        let state = self.retrieval.clone();
        let task = tokio::task::spawn_blocking(move || match open_index(&state, &workspace) {
            Ok(index) => {
                if index.claim_refresh() {
                    refresh(&index, &events);
                } else {
                    index.wait_ready(Duration::MAX);
                }
                Some(index.coverage())
            }
            Err(why) => {
                events(IndexEvent::NotIndexed(why));
                None
            }
        });
        task.await.ok().flatten()
    }

    /// The index's fault, if it has one the user has not been told of in an answer yet
    /// (only for sessions that tell faults in answers).
    pub(super) fn fault_to_tell(&self, index: Option<&RetrievalIndex>) -> Option<String> {
        if !self.faults_in_answers.load(Ordering::Relaxed) {
            return None;
        }
        let fault = index?.fault()?;
        (!self.fault_told.swap(true, Ordering::Relaxed))
            .then(|| format!("Note: the index is kept in memory only, so the next start builds it again: {fault}."))
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

    /// Best chunks for the question, and what the search could see. The index is
    /// opened on first use (its refresh then starts in the background), awaited for at
    /// most `INDEX_WAIT`, and brought up to date with the editor's open documents and
    /// the files changed on disk.
    pub(super) async fn retrieve(
        &self,
        workspace: &Workspace,
        query: String,
        candidates: Candidates,
    ) -> (Vec<RetrievalHit>, IndexState) {
        let state = self.retrieval.clone();
        let changed_on_disk = self.changed_on_disk.clone();
        let workspace = workspace.clone();
        let documents = self.documents.all();
        // An ask that starts the refresh before the warm-up does still reports it to the
        // editor, so its progress always ends.
        let events: IndexEvents = lock(&self.index_events)
            .clone()
            .unwrap_or_else(|| Arc::new(|_| {}));
        let history_wanted = self.settings().history;
        let task = tokio::task::spawn_blocking(move || {
            let index = match open_index(&state, &workspace) {
                Ok(index) => index,
                Err(why) => return (Vec::new(), IndexState::NotIndexed(why)),
            };
            index.history().set_wanted(history_wanted);
            if index.claim_refresh() {
                let index = index.clone();
                std::thread::spawn(move || refresh(&index, &events));
            }
            index.wait_ready(INDEX_WAIT);
            let changes = pending_changes(&state, &workspace, &documents, &changed_on_disk);
            index.apply(changes);
            // A commit made since the last ask (HEAD moved) is read now, cheaply.
            index.refresh_history();
            // Read before searching: what the search saw is at least this much.
            let coverage = index.coverage();
            (
                candidates(&|n| index.search(&query, n)),
                IndexState::Indexed(coverage),
            )
        });
        task.await.unwrap_or_else(|_| {
            (
                Vec::new(),
                IndexState::NotIndexed("the search failed".into()),
            )
        })
    }
}

/// The open documents whose text the index has not seen, the files changed on disk,
/// and the documents closed since the last ask (indexed by their disk text again, or
/// dropped if they were never saved), as changes for the index.
fn pending_changes(
    state: &Mutex<RetrievalState>,
    workspace: &Workspace,
    documents: &[Document],
    changed_on_disk: &Mutex<std::collections::BTreeSet<String>>,
) -> Vec<Change> {
    let mut changes = Vec::new();
    let mut state = lock(state);
    for doc in documents {
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
    let changed = std::mem::take(&mut *lock(changed_on_disk));
    for relative in changed {
        if !state
            .seen_versions
            .values()
            .any(|(_, open)| *open == relative)
        {
            changes.push(Change::Disk { path: relative });
        }
    }
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
    changes
}

/// The session's index, opened on first use (shared with every session of the process
/// on the same root), or why the root is not indexed.
fn open_index(
    state: &Mutex<RetrievalState>,
    workspace: &Workspace,
) -> Result<RetrievalIndex, String> {
    let mut state = lock(state);
    if let Some(why) = &state.not_indexed {
        return Err(why.clone());
    }
    if let Some(index) = &state.index {
        return Ok(index.clone());
    }
    let home = project_root::home_dir();
    if let Some(why) = project_root::not_a_project(workspace.root(), home.as_deref()) {
        tracing::warn!("{why}");
        state.not_indexed = Some(why.clone());
        return Err(why);
    }
    let cache = workspace_index::cache_dir_from_env();
    let index = RetrievalIndex::shared(workspace.clone(), cache.as_deref());
    state.index = Some(index.clone());
    Ok(index)
}

/// Brings the index up to date with the disk, reporting to `events`; a disk that
/// refuses the index moves it to memory (told once as `IndexEvent::InMemory`).
fn refresh(index: &RetrievalIndex, events: &IndexEvents) {
    if let Some(reason) = index.fault() {
        events(IndexEvent::InMemory(reason));
    }
    let had_fault = index.fault().is_some();
    let report = index.refresh_or_fall_back(workspace_index::Bounds::from_env(), &|progress| {
        events(IndexEvent::Progress(progress));
    });
    if let (false, Some(reason)) = (had_fault, index.fault()) {
        events(IndexEvent::InMemory(reason));
    }
    events(IndexEvent::Done(report));
    // After the files are done and said to be: the history never delays them. The
    // command line's asks wait for it too (their refresh returns after it).
    index.history().refresh();
}

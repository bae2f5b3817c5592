//! The session's side of the workspace index: one index per root, opened on first use
//! (shared with every session of the process on the same root) and searched as one
//! (`index::WorkspaceIndex`), refreshed in the background, brought up to date with the
//! editor's open documents and the files changed on disk before each search, and the
//! index's faults told once. A change of roots keeps the indexes of the roots that stay.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{lock, Document, IndexEvent, IndexEvents, Session};
use crate::agent::IndexState;
use crate::index::{self as workspace_index, Change, RetrievalHit, RetrievalIndex, WorkspaceIndex};
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
    pub(super) index: Option<WorkspaceIndex>,
    /// Each root's index by its canonical path: kept when the roots change, so a root
    /// that stays is never opened again (`open_index` drops those of roots gone).
    by_root: HashMap<PathBuf, RetrievalIndex>,
    /// Set when no root is a project (`/`, a home directory): why none is indexed.
    /// Then there is no index, and the tools read and search on demand.
    not_indexed: Option<String>,
    /// The session's roots now (empty until they are first set, when any caller's
    /// are): a warm-up that began before the roots changed must not leave its index
    /// over the old ones for the next ask.
    roots: Vec<PathBuf>,
    /// Open documents indexed with their editor text: URI → (version, shown path).
    seen_versions: HashMap<String, (i32, String)>,
}

impl RetrievalState {
    /// The roots changed: the next use opens the index over the new ones, keeping each
    /// root's index that stays (paths are shown anew, so every open document is sent
    /// again).
    pub(super) fn roots_changed(&mut self, roots: Vec<PathBuf>) {
        self.index = None;
        self.not_indexed = None;
        self.seen_versions.clear();
        self.roots = roots;
    }
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
        tokio::task::spawn_blocking(move || {
            match open_index(&state, &workspace, cache_dir().as_deref()) {
                Ok(index) => {
                    let claimed = claim_refreshes(&index);
                    if !claimed.is_empty() {
                        refresh(&claimed, &events);
                    } else if let Some(reason) = index.fault() {
                        events(IndexEvent::InMemory(reason));
                    }
                }
                Err(why) => events(IndexEvent::NotIndexed(why)),
            }
        });
    }

    /// Brings the workspace index fully up to date now, reporting as it goes: for the
    /// command line, whose asks must not answer from a half-built index. Returns the
    /// coverage reached and the index's fault, if any.
    pub async fn prepare_index(&self, events: IndexEvents) -> Option<workspace_index::Coverage> {
        let workspace = self.workspace()?;
        let state = self.retrieval.clone();
        let task = tokio::task::spawn_blocking(move || {
            match open_index(&state, &workspace, cache_dir().as_deref()) {
                Ok(index) => {
                    let claimed = claim_refreshes(&index);
                    if !claimed.is_empty() {
                        refresh(&claimed, &events);
                    }
                    index.wait_ready(Duration::MAX);
                    Some(index.coverage())
                }
                Err(why) => {
                    events(IndexEvent::NotIndexed(why));
                    None
                }
            }
        });
        task.await.ok().flatten()
    }

    /// The index's fault, if it has one the user has not been told of in an answer yet
    /// (only for sessions that tell faults in answers).
    pub(super) fn fault_to_tell(&self, index: Option<&WorkspaceIndex>) -> Option<String> {
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
            let index = match open_index(&state, &workspace, cache_dir().as_deref()) {
                Ok(index) => index,
                Err(why) => return (Vec::new(), IndexState::NotIndexed(why)),
            };
            for root in index.roots() {
                root.history().set_wanted(history_wanted);
            }
            let claimed = claim_refreshes(&index);
            if !claimed.is_empty() {
                std::thread::spawn(move || refresh(&claimed, &events));
            }
            index.wait_ready(INDEX_WAIT);
            let changes = pending_changes(&state, &workspace, &documents, &changed_on_disk);
            apply_by_root(&index, changes);
            // A commit made since the last ask (HEAD moved) is read now, cheaply.
            for root in index.roots() {
                root.refresh_history();
            }
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

/// Where the indexes are kept (`COPILOT_LS_CACHE_DIR`, …).
fn cache_dir() -> Option<std::path::PathBuf> {
    workspace_index::cache_dir_from_env()
}

/// Each change given to the index of the root its shown path lies in, as a path inside
/// that root.
fn apply_by_root(index: &WorkspaceIndex, changes: Vec<Change>) {
    let mut by_root: Vec<Vec<Change>> = index.roots().map(|_| Vec::new()).collect();
    for change in changes {
        let inside = |shown: &str| index.root_of(shown).map(|(i, path)| (i, path.to_string()));
        let (i, change) = match change {
            Change::Editor { path, text } => match inside(&path) {
                Some((i, path)) => (i, Change::Editor { path, text }),
                None => continue,
            },
            Change::Disk { path } => match inside(&path) {
                Some((i, path)) => (i, Change::Disk { path }),
                None => continue,
            },
        };
        by_root[i].push(change);
    }
    for (root, changes) in index.roots().zip(by_root) {
        root.apply(changes);
    }
}

/// The session's index over every root, opened on first use (each root's shared with
/// every session of the process on that root), or why no root is indexed.
fn open_index(
    state: &Mutex<RetrievalState>,
    workspace: &Workspace,
    cache: Option<&std::path::Path>,
) -> Result<WorkspaceIndex, String> {
    let mut state = lock(state);
    let roots: Vec<PathBuf> = workspace
        .sandbox
        .roots()
        .iter()
        .map(|r| r.path.clone())
        .collect();
    if !state.roots.is_empty() && state.roots != roots {
        // A caller from before the roots changed: its index, not the session's.
        return WorkspaceIndex::open_roots(workspace, cache, true);
    }
    if let Some(why) = &state.not_indexed {
        return Err(why.clone());
    }
    if let Some(index) = &state.index {
        return Ok(index.clone());
    }
    let home = project_root::home_dir();
    let sandbox = &workspace.sandbox;
    let mut roots = Vec::new();
    let mut kept = HashMap::new();
    let mut not_indexed = None;
    for (i, root) in sandbox.roots().iter().enumerate() {
        if let Some(why) = project_root::not_a_project(&root.path, home.as_deref()) {
            tracing::warn!("{why}");
            not_indexed.get_or_insert(why);
            continue;
        }
        let index = state
            .by_root
            .remove(&root.path)
            .unwrap_or_else(|| RetrievalIndex::shared(workspace.only(i), cache));
        kept.insert(root.path.clone(), index.clone());
        roots.push((sandbox.prefix(i), index));
    }
    // The indexes of roots no longer open are let go here.
    state.by_root = kept;
    if roots.is_empty() {
        let why = not_indexed.unwrap_or_else(|| "no workspace root".to_string());
        state.not_indexed = Some(why.clone());
        return Err(why);
    }
    let index = WorkspaceIndex::of_roots(roots);
    state.index = Some(index.clone());
    Ok(index)
}

/// The roots' indexes whose background refresh this caller claimed (and so runs).
fn claim_refreshes(index: &WorkspaceIndex) -> Vec<RetrievalIndex> {
    index
        .roots()
        .filter(|root| root.claim_refresh())
        .cloned()
        .collect()
}

/// Brings each root's index up to date with the disk, one after the other, reporting
/// to `events` as one refresh (the counts of the roots done before carried into each
/// later one's); a disk that refuses an index moves it to memory (told once as
/// `IndexEvent::InMemory`).
fn refresh(indexes: &[RetrievalIndex], events: &IndexEvents) {
    let mut total = workspace_index::RefreshReport::default();
    // What the roots refreshed before this one counted: (files, definitions).
    let before = [AtomicUsize::new(0), AtomicUsize::new(0)];
    for index in indexes {
        if let Some(reason) = index.fault() {
            events(IndexEvent::InMemory(reason));
        }
        let had_fault = index.fault().is_some();
        let seen = [AtomicUsize::new(0), AtomicUsize::new(0)];
        let report = index.refresh_or_fall_back(workspace_index::Bounds::from_env(), &|progress| {
            let carried = |slot: usize, done: usize, total: usize| {
                seen[slot].store(total, Ordering::Relaxed);
                let before = before[slot].load(Ordering::Relaxed);
                (before + done, before + total)
            };
            events(IndexEvent::Progress(match progress {
                workspace_index::Progress::Files { done, total } => {
                    let (done, total) = carried(0, done, total);
                    workspace_index::Progress::Files { done, total }
                }
                workspace_index::Progress::Definitions { done, total } => {
                    let (done, total) = carried(1, done, total);
                    workspace_index::Progress::Definitions { done, total }
                }
                truncated => truncated,
            }));
        });
        for (before, seen) in before.iter().zip(&seen) {
            before.fetch_add(seen.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        if let (false, Some(reason)) = (had_fault, index.fault()) {
            events(IndexEvent::InMemory(reason));
        }
        total.files_read += report.files_read;
        total.seconds += report.seconds;
        total.unreached += report.unreached;
        total.truncated = total.truncated.or(report.truncated);
        total.failed = total.failed.or(report.failed);
        total.unreached_example = total.unreached_example.or(report.unreached_example);
    }
    events(IndexEvent::Done(total));
    // After the files are done and said to be: the history never delays them. The
    // command line's asks wait for it too (their refresh returns after it).
    for index in indexes {
        index.history().refresh();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A warm-up or an ask that began before the roots changed opens the index with the
    /// old workspace after the change: it must not leave its index over the old roots
    /// for the asks that follow (the warm-up of a folder added during the first build
    /// found it there and never indexed the new folder).
    #[test]
    fn a_caller_from_before_the_roots_changed_leaves_the_sessions_index_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        for root in [&a, &b] {
            std::fs::create_dir_all(root.join(".git")).unwrap();
            std::fs::write(root.join("lib.rs"), "pub fn f() {}\n").unwrap();
        }
        let session = Session::new(crate::session::Settings::default());
        session.set_roots(std::slice::from_ref(&a)).unwrap();
        let before = session.workspace().unwrap();
        session.set_roots(&[a.clone(), b.clone()]).unwrap();
        let now = session.workspace().unwrap();
        let stale = open_index(&session.retrieval, &before, None).unwrap();
        assert_eq!(stale.roots().count(), 1);
        let index = open_index(&session.retrieval, &now, None).unwrap();
        assert_eq!(
            index.roots().count(),
            2,
            "the session's index covers both roots"
        );
    }
}

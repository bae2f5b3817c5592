//! The session's side of the workspace index: one index per root, opened on first use
//! (shared with every session of the process on the same root) and searched as one
//! (`index::WorkspaceIndex`), refreshed in the background, brought up to date with the
//! editor's open documents and the files changed on disk before each search, and the
//! index's faults told once. A change of roots keeps the indexes of the roots that stay.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{lock, Document, IndexEvent, IndexEvents, Session};
use crate::agent::IndexState;
use crate::index::{self as workspace_index, Change, RetrievalHit, RetrievalIndex, WorkspaceIndex};
use crate::workspace::Workspace;

/// Which retrieved chunks an ask starts from, given a search for the best `n`
/// (`agent::model_candidates`, `agent::place_candidates`).
pub(super) type Candidates = fn(&dyn Fn(usize) -> Vec<RetrievalHit>) -> Vec<RetrievalHit>;

/// How long an ask waits for the index to finish its first refresh before it answers
/// from what is indexed so far: small workspaces are always complete, a huge one never
/// holds the answer up for long.
const INDEX_WAIT: Duration = Duration::from_secs(2);
/// How long an ask whose files are all indexed waits for the first read of the
/// repository's history before it answers without it (and says so): a short history is
/// read within it, a long one never holds the answer up for long.
const HISTORY_WAIT: Duration = Duration::from_secs(1);

/// How long a command-line process, its answer given, finishes the history's first read
/// before it exits, by the read's pace: networkx's 8,382 commits (1.2 s) are read then, so
/// the next ask draws on them; rails' 50,000 (6 s) are left to `copilot-ls index`, said so.
const FINISH_READ: Duration = Duration::from_secs(3);
/// And at most, the read's pace unknown (before its first batch).
const FINISH_READ_CAP: Duration = Duration::from_secs(5);

/// The workspace index and the document versions it has seen, opened on first use.
#[derive(Default)]
pub(super) struct RetrievalState {
    pub(super) index: Option<WorkspaceIndex>,
    /// The index over the roots before they changed, held until the next one is
    /// opened: each root's index is the process's (`RetrievalIndex::shared`), so a root
    /// that stays gets the very index this holds, never opened again; those of roots
    /// gone are let go with it.
    retired: Option<WorkspaceIndex>,
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
        // Two changes before an open: the first index is the one still holding roots.
        self.retired = self.index.take().or(self.retired.take());
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

    /// Brings the workspace index's files up to date now (text and definitions),
    /// reporting as it goes, for the command line, whose asks must not answer from a
    /// half-built index. The history is read after, on a thread of its own: the ask's
    /// search waits for it at most `HISTORY_WAIT` and otherwise says it came before it.
    /// A cold build ends at its last commit, every file searchable; its merge is the
    /// caller's, after the answer (`finish_index`). Returns the coverage reached.
    pub async fn prepare_index(&self, events: IndexEvents) -> Option<workspace_index::Coverage> {
        let workspace = self.workspace()?;
        let state = self.retrieval.clone();
        let task = tokio::task::spawn_blocking(move || {
            match open_index(&state, &workspace, cache_dir().as_deref()) {
                Ok(index) => {
                    let claimed = claim_refreshes(&index);
                    if !claimed.is_empty() {
                        // The answer does not wait for a bulk build's merge: the
                        // command line merges after it has answered (`finish_index`).
                        for root in &claimed {
                            root.defer_bulk_merge();
                        }
                        refresh_files(&claimed, &events);
                        // A plain thread, not the runtime's: a process done with its
                        // answer exits without waiting for a long history
                        // (`finish_index`).
                        for root in &claimed {
                            root.history().expect_read();
                        }
                        std::thread::spawn(move || read_history(&claimed));
                    }
                    index.wait_ready(Duration::MAX);
                    // The ask's own search waits for the history's first read, at most
                    // `HISTORY_WAIT` (`retrieve`).
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

    /// Finishes what `prepare_index` left for after the answer, for a process about to
    /// exit: the history's first read, when its pace says it ends within `FINISH_READ`
    /// (else it is stopped: it would end with the process, and the next one would begin
    /// it again), then the merge of a bulk build's segments, so the next process searches
    /// one segment per root. Returns what the user should hear of a history left unread.
    pub async fn finish_index(&self) -> Vec<String> {
        let Some(index) = lock(&self.retrieval).index.clone() else {
            return Vec::new();
        };
        let several = index.roots().nth(1).is_some();
        let finished = tokio::task::spawn_blocking(move || {
            let mut notes = Vec::new();
            for root in index.roots() {
                let unread = root
                    .history()
                    .finish_first_read(FINISH_READ, FINISH_READ_CAP);
                if let Some((commits, left)) = unread {
                    notes.push(unread_history(several.then(|| root.root()), commits, left));
                }
                root.finish_deferred_merge();
            }
            notes
        });
        finished.await.unwrap_or_default()
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
        open_file: Option<String>,
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
            wait_for_history(&index);
            let changes = pending_changes(&state, &workspace, &documents, &changed_on_disk);
            apply_by_root(&index, changes);
            // A commit made since the last ask (HEAD moved) is read now, cheaply.
            for root in index.roots() {
                root.refresh_history();
            }
            // Read before searching: what the search saw is at least this much.
            let coverage = index.coverage();
            (
                candidates(&|n| {
                    crate::index::open_file::lift(index.search(&query, n), open_file.as_deref())
                }),
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
    for mut change in changes {
        let (Change::Editor { path, .. } | Change::Disk { path }) = &mut change;
        let Some((i, inside)) = index.root_of(path).map(|(i, p)| (i, p.to_string())) else {
            continue;
        };
        *path = inside;
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
    // A caller from before the roots changed gets an index of its own, not the
    // session's.
    let current = state.roots.is_empty() || state.roots == roots;
    if current {
        if let Some(why) = &state.not_indexed {
            return Err(why.clone());
        }
        if let Some(index) = &state.index {
            return Ok(index.clone());
        }
    }
    let opened = WorkspaceIndex::open_roots(workspace, cache, true);
    if current {
        state.retired = None;
        match &opened {
            Ok(index) => state.index = Some(index.clone()),
            Err(why) => {
                tracing::warn!("{why}");
                state.not_indexed = Some(why.clone());
            }
        }
    }
    opened
}

/// The roots' indexes whose background refresh this caller claimed (and so runs).
fn claim_refreshes(index: &WorkspaceIndex) -> Vec<RetrievalIndex> {
    index
        .roots()
        .filter(|root| root.claim_refresh())
        .cloned()
        .collect()
}

/// Brings each root's index up to date with the disk, files then history
/// (`refresh_files`, `read_history`). A first build's merge comes after its last commit
/// has made the index ready, so an ask waiting for the files never waits for it.
fn refresh(indexes: &[RetrievalIndex], events: &IndexEvents) {
    for index in indexes {
        index.defer_bulk_merge();
    }
    refresh_files(indexes, events);
    for index in indexes {
        index.finish_deferred_merge();
    }
    read_history(indexes);
}

/// The first read of every root's history, waited for at most `HISTORY_WAIT` in all
/// (only once the files are indexed: during their build nothing is waited for).
fn wait_for_history(index: &WorkspaceIndex) {
    if !index.coverage().complete {
        return;
    }
    let deadline = std::time::Instant::now() + HISTORY_WAIT;
    for root in index.roots() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if !root.history().wait_first_read(left) {
            return;
        }
    }
}

/// Brings each root's files up to date with the disk, one after the other, reporting
/// to `events` as one refresh (`index::refresh_in_turn`); a disk that refuses an index
/// moves it to memory (told once as `IndexEvent::InMemory`).
fn refresh_files(indexes: &[RetrievalIndex], events: &IndexEvents) {
    let faulted: Vec<bool> = indexes
        .iter()
        .map(|index| index.fault().is_some())
        .collect();
    for reason in indexes.iter().filter_map(RetrievalIndex::fault) {
        events(IndexEvent::InMemory(reason));
    }
    let report = workspace_index::refresh_in_turn(
        indexes,
        workspace_index::Bounds::from_env(),
        &|progress| events(IndexEvent::Progress(progress)),
    );
    for (index, had) in indexes.iter().zip(faulted) {
        if let (false, Some(reason)) = (had, index.fault()) {
            events(IndexEvent::InMemory(reason));
        }
    }
    events(IndexEvent::Done(report));
}

/// Each root's history brought up to date with HEAD: after the files are done and said
/// to be, so the history never delays them.
/// What the command line says of a history its process left unread: that the answer
/// did not draw on it, and the one command that reads it once for every later ask.
fn unread_history(
    root: Option<&std::path::Path>,
    commits: usize,
    left: Option<Duration>,
) -> String {
    let whose = root.map_or("the repository's".to_string(), |root| {
        format!("{}'s", root.display())
    });
    let size = match (commits, left) {
        (0, _) => String::new(),
        (commits, Some(left)) => format!(
            " ({} commits, about {} s more)",
            crate::text::thousands(commits),
            left.as_secs().max(1)
        ),
        (commits, None) => format!(" ({} commits)", crate::text::thousands(commits)),
    };
    format!("{whose} history was not read before this process ended{size}; `copilot-ls index` reads it once, and later asks draw on past changes")
}

fn read_history(indexes: &[RetrievalIndex]) {
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

//! The persistent workspace index: chunks of the workspace's text files in tantivy, kept
//! on disk under the cache dir (one index per canonical workspace root), brought up to
//! date incrementally, and searched lexically with our own ranking signals.
//!
//! The agent asks this before the first model call (to put the few most relevant
//! chunks in the prompt) and, with no provider configured, to answer on its own with a
//! list of places. It is lexical on purpose: no model, no network, no keys.
//!
//! - `tokenize`: words → terms (identifier splitting, stemming, stop words), and
//!   `tokenizer`: the same as a tantivy tokenizer.
//! - `chunk`: a file → chunks around definitions, with their doc comments.
//! - `schema`, `analyze`: the documents of a file; `symbol_table`: its definitions
//!   (from `syntax/`) and the prefix lookup over them.
//! - `store`: where the index lives, opening it, rebuilding a bad one.
//! - `build`: reconciling with the disk, in batches, with progress.
//! - `query`: reading the question: identifiers, paths, traceback frames, code blocks,
//!   what it is about; weighted terms.
//! - `search`, `rank`: tantivy's BM25 for candidates, then definition, doc, path,
//!   coverage, named-symbol, mentioned-path and file-kind signals.
//!
//! Invariants: no file text is held in memory (hits read their lines from the editor or
//! the disk when asked); it writes only under the cache dir; a broken index is rebuilt,
//! never a crash; it knows no LSP type and opens no connection.

mod analyze;
mod build;
mod chunk;
mod query;
mod rank;
mod schema;
mod search;
mod store;
mod symbol_table;
mod tokenize;
mod tokenizer;

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::{Duration, Instant};

use rustc_hash::{FxHashMap, FxHashSet};
use tantivy::{IndexReader, IndexWriter, ReloadPolicy};

use self::analyze::{analyze, path_terms, AnalyzedFile, FileStamp, EDITOR_SIZE};
pub use self::build::{Bounds, Progress, RefreshReport, BOUNDS};
pub use self::rank::Ranking;
use self::schema::Fields;
pub use self::store::{cache_dir_from_env, Location};
pub use self::symbol_table::{IndexedSymbol, MAX_LOOKUP_FILES};
use self::tokenizer::WordCache;
use crate::workspace::read::{looks_binary, read_index_text};
use crate::workspace::sandbox::{is_refused_name, Sandbox};
use crate::workspace::{NoDocuments, Workspace};

/// One chunk found for a question.
#[derive(Clone, Debug)]
pub struct RetrievalHit {
    /// Workspace-relative, `/` separators.
    pub path: String,
    /// 1-based, inclusive.
    pub start_line: usize,
    /// 1-based, inclusive.
    pub end_line: usize,
    pub score: f32,
    /// The definition the chunk is about, if any.
    pub symbol: Option<String>,
    /// The chunk text: the lines `start_line..=end_line` as the editor or the disk has
    /// them now, without the final newline.
    pub text: String,
}

/// A change to take in, from the editor or the disk.
#[derive(Clone, Debug)]
pub enum Change {
    /// An open document's (possibly unsaved) text.
    Editor { path: String, text: String },
    /// Read the file from disk again (changed, created, deleted, or closed in the
    /// editor).
    Disk { path: String },
}

/// A searchable, persistent index of a workspace. Cheap to clone (shared); searching
/// never waits for a build, which commits in batches.
#[derive(Clone)]
pub struct RetrievalIndex {
    inner: Arc<Inner>,
}

struct Inner {
    reader: IndexReader,
    fields: Fields,
    /// Adds and deletes need only `&IndexWriter`; a commit takes it exclusively.
    writer: RwLock<IndexWriter>,
    /// What the index holds, by path.
    files: Mutex<FxHashMap<String, FileStamp>>,
    /// Paths indexed with the editor's text: the disk does not override them.
    editor_paths: Mutex<FxHashSet<String>>,
    workspace: Workspace,
    location: Location,
    ready: Mutex<bool>,
    ready_changed: Condvar,
    /// One refresh at a time.
    refreshing: Mutex<()>,
}

impl RetrievalIndex {
    /// Opens the workspace's index under `cache` (or in memory, see `store.rs`). Fast:
    /// it reads only the index's own file records; `refresh` brings it up to date.
    pub fn open(workspace: Workspace, cache: Option<&Path>) -> RetrievalIndex {
        let opened = store::open(cache, workspace.root());
        let reader = opened
            .index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .unwrap_or_else(|_| opened.index.reader().expect("a reader"));
        if let Location::Memory(reason) = &opened.location {
            tracing::debug!("workspace index in memory: {reason}");
        }
        RetrievalIndex {
            inner: Arc::new(Inner {
                reader,
                fields: opened.fields,
                writer: RwLock::new(opened.writer),
                files: Mutex::new(opened.files),
                editor_paths: Mutex::new(FxHashSet::default()),
                workspace,
                location: opened.location,
                ready: Mutex::new(false),
                ready_changed: Condvar::new(),
                refreshing: Mutex::new(()),
            }),
        }
    }

    /// An index of `sandbox`'s workspace built in memory, for evaluations and tests.
    pub fn build(sandbox: &Sandbox) -> RetrievalIndex {
        let workspace = Workspace::new(sandbox.clone(), Arc::new(NoDocuments));
        let index = RetrievalIndex::open(workspace, None);
        index.refresh(BOUNDS, &|_| {});
        index
    }

    /// Brings the index up to date with the disk (see `build.rs`), then marks it ready.
    pub fn refresh(&self, bounds: Bounds, progress: &dyn Fn(Progress)) -> RefreshReport {
        let _one = lock(&self.inner.refreshing);
        let report = build::refresh(&self.inner, bounds, progress);
        *lock(&self.inner.ready) = true;
        self.inner.ready_changed.notify_all();
        report
    }

    /// Waits until a first refresh has finished, at most `timeout`; whether it has.
    pub fn wait_ready(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut ready = lock(&self.inner.ready);
        while !*ready {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            ready = self
                .inner
                .ready_changed
                .wait_timeout(ready, left)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        true
    }

    /// Takes in changes from the editor or the disk, then commits once. Paths the
    /// sandbox refuses (`.git/`, secrets) and binary or huge texts are not indexed (and
    /// drop any earlier version).
    pub fn apply(&self, changes: Vec<Change>) {
        if changes.is_empty() {
            return;
        }
        let inner = &self.inner;
        let mut cache = WordCache::default();
        for change in changes {
            match change {
                Change::Editor { path, text } => {
                    let refused = path.split('/').any(is_refused_name);
                    let too_big = text.len() as u64 > build::MAX_FILE_BYTES;
                    if refused || too_big || looks_binary(text.as_bytes()) {
                        lock(&inner.editor_paths).remove(&path);
                        inner.remove(&path);
                        continue;
                    }
                    lock(&inner.editor_paths).insert(path.clone());
                    let stamp = FileStamp {
                        size: EDITOR_SIZE,
                        ..FileStamp::default()
                    };
                    inner.replace(analyze(
                        &inner.fields,
                        &mut cache,
                        &path,
                        Some(&text),
                        stamp,
                    ));
                }
                Change::Disk { path } => {
                    lock(&inner.editor_paths).remove(&path);
                    let file = inner.workspace.sandbox.resolve(&path).ok().and_then(|r| {
                        let metadata = std::fs::metadata(&r.absolute).ok()?;
                        let text = read_index_text(&r.absolute, build::MAX_FILE_BYTES)?;
                        Some((metadata, text))
                    });
                    match file {
                        Some((metadata, text)) => {
                            let stamp = FileStamp {
                                size: metadata.len(),
                                mtime: metadata
                                    .modified()
                                    .ok()
                                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                                    .map_or(0, |d| d.as_nanos() as u64),
                                seen: build::now_ns(),
                                hash: xxhash_rust::xxh3::xxh3_64(text.as_bytes()),
                                ..FileStamp::default()
                            };
                            inner.replace(analyze(
                                &inner.fields,
                                &mut cache,
                                &path,
                                Some(&text),
                                stamp,
                            ));
                        }
                        None => inner.remove(&path),
                    }
                }
            }
        }
        inner.commit();
    }

    /// Indexes an open document's text (and commits).
    pub fn update_file(&self, relative_path: &str, text: &str) {
        self.apply(vec![Change::Editor {
            path: relative_path.to_string(),
            text: text.to_string(),
        }]);
    }

    /// Forgets a file (and commits).
    pub fn remove_file(&self, relative_path: &str) {
        lock(&self.inner.editor_paths).remove(relative_path);
        self.inner.remove(relative_path);
        self.inner.commit();
    }

    /// Best chunks for a natural-language question, best first.
    pub fn search(&self, query: &str, limit: usize) -> Vec<RetrievalHit> {
        self.search_with(query, limit, Ranking::Tuned)
    }

    /// `search` with a chosen ranking; `Ranking::PlainBm25` is the baseline the eval
    /// compares against. A hit whose file can no longer be read is left out.
    pub fn search_with(&self, query: &str, limit: usize, ranking: Ranking) -> Vec<RetrievalHit> {
        let searcher = self.inner.reader.searcher();
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            search::search(&searcher, &self.inner.fields, query, limit, ranking)
        }));
        let found = match found {
            Ok(Ok(found)) => found,
            Ok(Err(error)) => {
                tracing::warn!("index search failed: {error}");
                return Vec::new();
            }
            Err(_) => {
                tracing::warn!("index search panicked; the index is likely corrupt");
                return Vec::new();
            }
        };
        found
            .into_iter()
            .filter_map(|found| {
                let text = self.excerpt(&found.path, found.start_line, found.end_line)?;
                Some(RetrievalHit {
                    path: found.path,
                    start_line: found.start_line,
                    end_line: found.end_line,
                    score: found.score,
                    symbol: found.symbol,
                    text,
                })
            })
            .collect()
    }

    /// Definitions whose name starts with `prefix` (case-insensitive), in every file
    /// indexed so far, unordered; read from the index, not the files.
    pub fn find_symbols(&self, prefix: &str) -> Vec<IndexedSymbol> {
        let searcher = self.inner.reader.searcher();
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            symbol_table::lookup(&searcher, &self.inner.fields, prefix)
        }));
        match found {
            Ok(Ok(found)) => found,
            Ok(Err(error)) => {
                tracing::warn!("symbol lookup failed: {error}");
                Vec::new()
            }
            Err(_) => {
                tracing::warn!("symbol lookup panicked; the index is likely corrupt");
                Vec::new()
            }
        }
    }

    /// Lines `start..=end` (1-based) of a file as the editor or the disk has it now.
    fn excerpt(&self, path: &str, start: usize, end: usize) -> Option<String> {
        let workspace = &self.inner.workspace;
        let resolved = workspace.sandbox.resolve_allow_missing(path).ok()?;
        let text = match workspace.open_document(&resolved.absolute) {
            Some(doc) => doc.rope.to_string(),
            None => read_index_text(&resolved.absolute, build::MAX_FILE_BYTES)?,
        };
        let lines = analyze::split_lines(&text);
        if start == 0 || start > lines.len() {
            return None;
        }
        Some(lines[start - 1..end.min(lines.len())].join("\n"))
    }

    /// Text files indexed.
    pub fn file_count(&self) -> usize {
        lock(&self.inner.files).values().filter(|s| s.text).count()
    }

    /// Chunks indexed.
    pub fn chunk_count(&self) -> usize {
        lock(&self.inner.files)
            .values()
            .map(|s| s.chunks as usize)
            .sum()
    }

    /// Definitions indexed.
    pub fn symbol_count(&self) -> usize {
        lock(&self.inner.files)
            .values()
            .map(|s| s.symbols as usize)
            .sum()
    }

    /// Where the index lives.
    pub fn location(&self) -> &Location {
        &self.inner.location
    }

    /// The index's size on disk (0 for an index in memory).
    pub fn bytes_on_disk(&self) -> u64 {
        match &self.inner.location {
            Location::Disk(dir) => store::bytes_on_disk(dir),
            Location::Memory(_) => 0,
        }
    }

    /// Bytes the index's files take (in memory or on disk), for reports.
    pub fn approximate_bytes(&self) -> usize {
        self.inner
            .reader
            .searcher()
            .space_usage()
            .map_or(0, |usage| usage.total().get_bytes() as usize)
    }
}

impl Inner {
    /// Replaces a file's documents and stamp.
    fn replace(&self, file: AnalyzedFile) {
        let writer = read(&self.writer);
        // A path the index has never held has nothing to delete. Skipping the delete
        // matters for a cold build: tantivy looks every delete term up in every
        // segment, at each flush and each commit.
        let held = lock(&self.files).contains_key(&file.path);
        if held {
            for term in path_terms(&self.fields, &file.path) {
                writer.delete_term(term);
            }
        }
        for document in file.documents {
            if let Err(error) = writer.add_document(document) {
                tracing::warn!("cannot index {}: {error}", file.path);
                return;
            }
        }
        lock(&self.files).insert(file.path, file.stamp);
    }

    fn remove(&self, path: &str) {
        let writer = read(&self.writer);
        for term in path_terms(&self.fields, path) {
            writer.delete_term(term);
        }
        lock(&self.files).remove(path);
    }

    /// Merges every segment into one and makes that searchable. Adds and commits from
    /// the editor go on meanwhile (tantivy applies their deletes to the merged segment).
    fn merge_all(&self) {
        let merging = {
            let mut writer = write(&self.writer);
            match writer.index().searchable_segment_ids() {
                Ok(ids) if ids.len() > 1 => writer.merge(&ids),
                Ok(_) => return,
                Err(error) => {
                    tracing::warn!("cannot list the index segments: {error}");
                    return;
                }
            }
        };
        if let Err(error) = merging.wait() {
            tracing::warn!("index merge failed: {error}");
            return;
        }
        if let Err(error) = self.reader.reload() {
            tracing::warn!("index reload failed: {error}");
        }
    }

    /// Commits what was added and deleted, and makes it searchable.
    fn commit(&self) {
        let committed = write(&self.writer).commit();
        if let Err(error) = committed {
            tracing::warn!("index commit failed: {error}");
            return;
        }
        if let Err(error) = self.reader.reload() {
            tracing::warn!("index reload failed: {error}");
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An index of files written to a fresh directory (kept alive with the index).
    pub(crate) struct TestIndex {
        _dir: tempfile::TempDir,
        index: RetrievalIndex,
    }

    impl std::ops::Deref for TestIndex {
        type Target = RetrievalIndex;
        fn deref(&self) -> &RetrievalIndex {
            &self.index
        }
    }

    pub(crate) fn index_of(files: &[(&str, &str)]) -> TestIndex {
        let dir = tempfile::tempdir().unwrap();
        for (path, content) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        let index = RetrievalIndex::build(&Sandbox::new(dir.path()).unwrap());
        TestIndex { _dir: dir, index }
    }

    fn workspace(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, content) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        dir
    }

    fn paths(hits: &[RetrievalHit]) -> Vec<&str> {
        hits.iter().map(|h| h.path.as_str()).collect()
    }

    #[test]
    fn build_indexes_text_files_and_respects_the_sandbox() {
        let dir = workspace(&[
            ("src/lib.rs", b"/// Retries a request with backoff.\npub fn retry_with_backoff() {\n    sleep();\n}\n"),
            (".gitignore", b"target/\n"),
            ("target/debug/out.rs", b"pub fn retry_with_backoff() {}\n"),
            (".env", b"BACKOFF_SECRET=retry\n"),
            ("image.bin", b"retry\0backoff"),
            (".git/config", b"retry backoff\n"),
        ]);
        let sandbox = Sandbox::new(dir.path()).unwrap();
        let index = RetrievalIndex::build(&sandbox);
        // `src/lib.rs` and `.gitignore`; not ignored, secret, binary or .git files.
        assert_eq!(index.file_count(), 2);
        let hits = index.search("how are requests retried with backoff", 5);
        assert_eq!(paths(&hits), ["src/lib.rs"]);
        let hit = &hits[0];
        assert_eq!((hit.start_line, hit.end_line), (1, 4));
        assert_eq!(hit.symbol.as_deref(), Some("retry_with_backoff"));
        assert!(hit.text.starts_with("/// Retries") && hit.text.ends_with('}'));
    }

    /// The editor's open documents, settable by the test.
    #[derive(Default)]
    struct Editor(Mutex<Vec<crate::workspace::OpenDocument>>);

    impl crate::workspace::OpenDocuments for Editor {
        fn open_documents(&self) -> Vec<crate::workspace::OpenDocument> {
            lock(&self.0).clone()
        }
    }

    impl Editor {
        fn open(&self, root: &Path, path: &str, text: &str) {
            lock(&self.0).push(crate::workspace::OpenDocument {
                path: root.join(path),
                language_id: "rust".into(),
                version: 1,
                rope: ropey::Rope::from_str(text),
            });
        }
    }

    #[test]
    fn updates_follow_the_editor() {
        let dir = workspace(&[("src/a.rs", b"pub fn parse_config() {}\n")]);
        let sandbox = Sandbox::new(dir.path()).unwrap();
        let root = sandbox.root().to_path_buf();
        let editor = Arc::new(Editor::default());
        let index = RetrievalIndex::open(Workspace::new(sandbox, editor.clone()), None);
        index.refresh(BOUNDS, &|_| {});
        assert_eq!(paths(&index.search("parse config", 5)), ["src/a.rs"]);

        // Unsaved edits replace the file's chunks; new files are added. Hits show the
        // editor's text.
        editor.open(&root, "src/a.rs", "pub fn render_page() {}\n");
        editor.open(&root, "src/new.rs", "pub fn parse_config_file() {}\n");
        index.update_file("src/a.rs", "pub fn render_page() {}\n");
        index.update_file("src/new.rs", "pub fn parse_config_file() {}\n");
        assert_eq!(paths(&index.search("parse config", 5)), ["src/new.rs"]);
        let hits = index.search("render page", 5);
        assert_eq!(paths(&hits), ["src/a.rs"]);
        assert_eq!(hits[0].text, "pub fn render_page() {}");
        assert_eq!(index.file_count(), 2);

        index.remove_file("src/new.rs");
        assert!(index.search("parse config", 5).is_empty());
        // Refused or binary texts are never indexed.
        index.update_file(".env", "parse config\n");
        index.update_file("src/blob.rs", "parse\0config");
        assert!(index.search("parse config", 5).is_empty());
        assert_eq!(index.file_count(), 1);

        // A refresh does not put the disk's text over the editor's.
        index.refresh(BOUNDS, &|_| {});
        assert_eq!(paths(&index.search("render page", 5)), ["src/a.rs"]);
        // Back to the disk's text once the editor lets go.
        index.apply(vec![Change::Disk {
            path: "src/a.rs".into(),
        }]);
        assert!(index.search("render page", 5).is_empty());
    }

    #[test]
    fn empty_queries_and_workspaces_find_nothing() {
        let dir = workspace(&[]);
        let sandbox = Sandbox::new(dir.path()).unwrap();
        let index = RetrievalIndex::build(&sandbox);
        assert!(index.search("anything", 5).is_empty());
        index.update_file("a.rs", "fn a() {}\n");
        assert!(index.search("", 5).is_empty());
        assert!(index.search("the of and", 5).is_empty());
        assert!(index.search("fn", 0).is_empty());
    }

    /// A bulk build (more files than `build::BULK_FILES`) ends merged into one segment;
    /// nothing may be lost or doubled on the way, and later changes apply to it.
    #[test]
    fn a_bulk_build_is_merged_whole_and_stays_updatable() {
        let files: Vec<(String, String)> = (0..1_200)
            .map(|i| {
                let name = format!("src/m{i}/mod{i}.rs");
                let text = format!("/// Module {i}.\npub fn handler_{i}_quux() {{}}\n");
                (name, text)
            })
            .collect();
        let borrowed: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_bytes()))
            .collect();
        let dir = workspace(&borrowed);
        let index = RetrievalIndex::build(&Sandbox::new(dir.path()).unwrap());
        assert_eq!(index.file_count(), 1_200);
        let segments = index.inner.reader.searcher().segment_readers().len();
        assert_eq!(segments, 1, "a bulk build ends in one segment");
        for i in [0, 599, 1_199] {
            let hits = index.search(&format!("handler {i} quux"), 3);
            let path = format!("src/m{i}/mod{i}.rs");
            assert_eq!(paths(&hits[..1]), [path.as_str()], "{i}");
        }
        // Every chunk of every file once: each file's own name finds one chunk of it.
        let hits = index.search("handler 7 quux", 50);
        let sevens = hits.iter().filter(|h| h.path == "src/m7/mod7.rs").count();
        assert_eq!(sevens, 1);
        index.update_file("src/m7/mod7.rs", "pub fn renamed_entirely() {}\n");
        assert!(index
            .search("handler 7 quux", 50)
            .iter()
            .all(|h| h.path != "src/m7/mod7.rs"));
        assert_eq!(
            paths(&index.search("renamed entirely", 3)),
            ["src/m7/mod7.rs"]
        );
        assert_eq!(index.file_count(), 1_200);
    }

    #[test]
    fn index_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<RetrievalIndex>();
    }
}

//! The persistent workspace index: chunks of the workspace's text files in tantivy, kept
//! on disk under the cache dir (one index per canonical workspace root), brought up to
//! date incrementally, and searched lexically with our own ranking signals, fused with
//! the repository's past changes (and a code model's vectors, when one is given:
//! `embed/`).
//!
//! The agent asks this before the first model call (to put the few most relevant
//! chunks in the prompt) and, with no provider configured, to answer on its own with a
//! list of places. No provider is called, no network, no keys.
//!
//! - `tokenize`: words → terms (identifier splitting, stemming, stop words), and
//!   `tokenizer`: the same as a tantivy tokenizer.
//! - `chunk`: a file → chunks around definitions, with their doc comments.
//! - `schema`, `analyze`: the documents of a file; `symbol_table`: its definitions
//!   (from `syntax/`) and the prefix lookup over them.
//! - `store`: where the index lives, opening it, rebuilding a bad one; `writer`:
//!   adding, deleting and committing, and falling back to memory when the disk fails.
//! - `registry`: one index per canonical root in a process, shared by its sessions;
//!   `follower`, `progress_file`: a second process reads the index another writes.
//! - `build`: reconciling with the disk, in batches, with progress; `coverage`: how
//!   much of the workspace is searchable while it runs.
//! - `query`: reading the question: identifiers, paths, traceback frames, code blocks,
//!   what it is about; weighted terms. `quoted`: the string literals a question quotes.
//! - `search`, `rank`: tantivy's BM25 for candidates, then definition, doc, path,
//!   coverage, named-symbol, mentioned-path and file-kind signals.
//! - `semantic`: each chunk's and file's vector by the code model, and its fusion with
//!   the lexical ranking; `related`: `find_related`'s search; `past_changes`: the
//!   history's vote.
//! - `several`: the index of a workspace of several roots, searched as one.
//!
//! Invariants: no file text is held in memory (hits read their lines from the editor or
//! the disk when asked); it writes only under the cache dir; a broken index is rebuilt,
//! never a crash; it knows no LSP type and opens no connection.

mod analyze;
mod build;
mod build_hold;
mod build_profile;
mod build_walk;
mod chunk;
mod coverage;
mod definition_line;
pub mod features;
mod file_kind;
mod file_name;
mod follower;
pub mod learned;
mod named;
pub mod open_file;
mod past_changes;
mod progress_file;
mod query;
mod quoted;
mod rank;
mod references;
mod registry;
mod related;
mod schema;
mod search;
mod semantic;
mod several;
mod spread;
mod stamps_file;
mod store;
mod symbol_table;
mod tokenize;
mod tokenizer;
mod writer;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::{Duration, Instant};

use rustc_hash::{FxHashMap, FxHashSet};

use self::analyze::{analyze, FileStamp, EDITOR_SIZE};
pub use self::build::{Bounds, Progress, RefreshReport, BOUNDS};
use self::coverage::CoverageState;
pub use self::coverage::{Counts, Coverage, HistoryCoverage};
pub use self::rank::Ranking;
pub use self::related::{RelatedError, RelatedPlace};
use self::schema::Fields;
pub use self::semantic::model_available;
pub use self::several::{refresh_in_turn, WorkspaceIndex};
pub use self::store::{cache_dir_from_env, Location};
pub use self::symbol_table::{IndexedSymbol, MAX_LOOKUP_FILES};
pub use self::tokenize::terms;
use self::tokenizer::WordCache;
use self::writer::{Overlay, Store};
use crate::syntax::Symbol;
use crate::workspace::read::{looks_binary, read_index_text};
use crate::workspace::sandbox::{is_refused_name, Sandbox};
use crate::workspace::{NoDocuments, Workspace};

/// Whether a question is asked of the code (`query::ParsedQuestion::is_question`): the
/// learned ranker leaves those to the hand-set order.
pub fn is_question(question: &str) -> bool {
    query::parse(question).is_question()
}

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
    /// The chunk's file is of a kind the question is not about (a test, example,
    /// benchmark, changelog, docs, generated or vendored file), and was ranked down.
    pub ranked_down: bool,
    /// The chunk text: the lines `start_line..=end_line` as the editor or the disk has
    /// them now, without the final newline.
    pub text: String,
    /// The definitions the index parsed in the chunk's file (`None` when it has not), so
    /// an answer need not parse the file again to find the definition a chunk is in.
    pub file_symbols: Option<Arc<Vec<Symbol>>>,
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

/// A searchable, persistent index of a workspace. Cheap to clone; every clone of one
/// root's index in a process shares it (`shared`), each with its own view of the open
/// documents (what a hit's text is read from). Searching never waits for a build,
/// which commits in batches.
#[derive(Clone)]
pub struct RetrievalIndex {
    inner: Arc<Inner>,
    view: Workspace,
}

struct Inner {
    fields: Fields,
    /// The tantivy index, its reader and writer, and where it lives: swapped for one in
    /// memory when the disk fails mid-build (`writer.rs`).
    store: RwLock<Arc<Store>>,
    /// A reading process's own changes over the index another process writes.
    overlay: RwLock<Option<Arc<Overlay>>>,
    /// What the index holds, by path.
    files: Mutex<FxHashMap<String, FileStamp>>,
    /// Paths indexed with the editor's text: the disk does not override them.
    editor_paths: Mutex<FxHashSet<String>>,
    sandbox: Sandbox,
    /// The root's history (`past_changes.rs`), read after the files.
    history: crate::history::History,
    ready: Mutex<bool>,
    ready_changed: Condvar,
    /// One refresh at a time.
    refreshing: Mutex<()>,
    /// Whether the background refresh has been claimed (`claim_refresh`).
    refresh_claimed: AtomicBool,
    /// A bulk build leaves its final merge to the caller (`defer_bulk_merge`), and
    /// whether one is owed (`finish_deferred_merge`).
    merge_deferred: AtomicBool,
    merge_owed: AtomicBool,
    coverage: CoverageState,
    /// Why the index could not be written, once it could not (told to the user once).
    fault: Mutex<Option<String>>,
    /// Why tantivy's writer stopped taking documents, until a build notices.
    writer_failure: Mutex<Option<String>>,
    /// A test's hold stopped the build (`build.rs`, `COPILOT_LS_TEST_INDEX_HOLD`):
    /// waiters go on as if it were ready, so a test asks during the build.
    held: AtomicBool,
    hold_set: bool,
}

impl RetrievalIndex {
    /// Opens the workspace's index under `cache` (or in memory, see `store.rs`), apart
    /// from any other in the process. Fast: it reads only the index's own file records;
    /// `refresh` brings it up to date.
    pub fn open(workspace: Workspace, cache: Option<&Path>) -> RetrievalIndex {
        let sandbox = workspace.sandbox.clone();
        RetrievalIndex {
            inner: Arc::new(Inner::open(sandbox, cache, false)),
            view: workspace,
        }
    }

    /// The process's index of `workspace`'s root, opened on first use and shared by
    /// every session on that root (`registry.rs`); hits are read through `workspace`.
    pub fn shared(workspace: Workspace, cache: Option<&Path>) -> RetrievalIndex {
        let inner = registry::shared(&workspace.sandbox, cache, |sandbox| {
            Inner::open(sandbox.clone(), cache, true)
        });
        RetrievalIndex {
            inner,
            view: workspace,
        }
    }

    /// An index of `sandbox`'s workspace built in memory, for evaluations and tests.
    pub fn build(sandbox: &Sandbox) -> RetrievalIndex {
        let workspace = Workspace::new(sandbox.clone(), Arc::new(NoDocuments));
        let index = RetrievalIndex::open(workspace, None);
        index.refresh(BOUNDS, &|_| {});
        index
    }

    /// Brings the index up to date with the disk (see `build.rs`).
    /// When a commit fails (a full disk, a cache dir gone read-only) the report says
    /// why and nothing claims more than what was committed.
    pub fn refresh(&self, bounds: Bounds, progress: &dyn Fn(Progress)) -> RefreshReport {
        let _one = lock(&self.inner.refreshing);
        let report = build::refresh(&self.inner, bounds, progress);
        if report.failed.is_none() {
            self.inner.coverage.finish();
            build::record_progress(&self.inner, &self.inner.store());
        }
        // Ready means a first refresh has ended (waiters go on); `coverage` says
        // whether it completed.
        *lock(&self.inner.ready) = true;
        self.inner.ready_changed.notify_all();
        report
    }

    /// Has the next bulk build end at its commit, every file searchable, and leave the
    /// merge of its segments to `finish_deferred_merge`, so what waits for the files does
    /// not wait for it (rails' 4,973 files: the merge is 1.5 s of a 5 s build): the
    /// command line answers, then merges before it exits; a server is ready, then merges.
    pub fn defer_bulk_merge(&self) {
        self.inner.merge_deferred.store(true, Ordering::Release);
    }

    /// Merges what a bulk build left unmerged (`defer_bulk_merge`), if it left anything.
    /// Owing nothing, it returns at once: it never waits for a refresh under way (an
    /// answer given with `--no-wait` during a build).
    pub fn finish_deferred_merge(&self) {
        self.inner.merge_deferred.store(false, Ordering::Release);
        if !self.inner.merge_owed.load(Ordering::Acquire) {
            return;
        }
        let _one = lock(&self.inner.refreshing);
        if self.inner.merge_owed.swap(false, Ordering::AcqRel) {
            build::merge_bulk(&self.inner);
        }
    }

    /// Like `refresh`, but a write failure moves the index to memory and builds it
    /// there, so the answers stay whole (`fault` says why, for the user). For servers
    /// and the command line's asks; `copilot-ls index` reports the failure instead.
    pub fn refresh_or_fall_back(
        &self,
        bounds: Bounds,
        progress: &dyn Fn(Progress),
    ) -> RefreshReport {
        let report = self.refresh(bounds, progress);
        let Some(reason) = report.failed.clone() else {
            return report;
        };
        self.inner.fall_back_to_memory(reason);
        let mut again = self.refresh(bounds, progress);
        again.seconds += report.seconds;
        again
    }

    /// Claims the one background refresh of this index: true for the first caller in
    /// the process, who then runs it.
    pub fn claim_refresh(&self) -> bool {
        !self.inner.refresh_claimed.swap(true, Ordering::AcqRel)
    }

    /// Waits until a first refresh has finished, at most `timeout`; whether it has.
    pub fn wait_ready(&self, timeout: Duration) -> bool {
        // `Duration::MAX` waits for as long as it takes; so does a test that holds the
        // build (the ask then comes exactly at the hold, whatever the machine's speed).
        let deadline = match self.inner.hold_set {
            true => None,
            false => Instant::now().checked_add(timeout),
        };
        let mut ready = lock(&self.inner.ready);
        while !*ready && !self.inner.held.load(Ordering::Acquire) {
            let Some(deadline) = deadline else {
                ready = self
                    .inner
                    .ready_changed
                    .wait(ready)
                    .unwrap_or_else(|e| e.into_inner());
                continue;
            };
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

    /// How much of the workspace a search sees now.
    pub fn coverage(&self) -> Coverage {
        Coverage {
            history: HistoryCoverage::of(&self.inner.history),
            ..self.inner.coverage.snapshot()
        }
    }

    /// Why the index could not be kept on disk, if it could not: set when it was opened
    /// in memory for a reason the user can act on, or a write failed since.
    pub fn fault(&self) -> Option<String> {
        lock(&self.inner.fault).clone()
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
                    let file = inner.sandbox.resolve(&path).ok().and_then(|r| {
                        let metadata = std::fs::metadata(&r.absolute).ok()?;
                        let text = read_index_text(&r.absolute, build::MAX_FILE_BYTES)?;
                        Some((metadata, text))
                    });
                    match file {
                        Some((metadata, text)) => {
                            let stamp = FileStamp {
                                size: metadata.len(),
                                mtime: build_walk::mtime_ns(&metadata),
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
        let committed = match inner.take_writer_failure() {
            Some(reason) => Err(reason),
            None => inner.commit(),
        };
        if let Err(reason) = committed {
            // An edit that cannot be committed is kept in memory from now on (the
            // disk's index keeps what it had).
            inner.fall_back_to_memory(reason);
        }
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
        if let Err(reason) = self.inner.commit() {
            self.inner.fall_back_to_memory(reason);
        }
    }

    /// Best chunks for a natural-language question, best first.
    pub fn search(&self, query: &str, limit: usize) -> Vec<RetrievalHit> {
        self.search_with(query, limit, Ranking::Tuned)
    }

    /// `search` with a chosen ranking; `Ranking::PlainBm25` is the baseline the eval
    /// compares against. A hit whose file can no longer be read is left out.
    pub fn search_with(&self, query: &str, limit: usize, ranking: Ranking) -> Vec<RetrievalHit> {
        several::search_roots(&[("", self)], query, limit, ranking)
    }

    /// Files that may use the identifier `name` (`references.rs`), workspace-relative and
    /// unordered; `None` when the index cannot tell (a stop word, one letter, a failed
    /// lookup), so the caller must read the files.
    pub fn files_with_identifier(&self, name: &str) -> Option<Vec<String>> {
        let searcher = self.inner.store().reader.searcher();
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            references::files_with_identifier(&searcher, &self.inner.fields, name)
        }));
        match found {
            Ok(Ok(found)) => found,
            Ok(Err(error)) => {
                tracing::warn!("identifier lookup failed: {error}");
                None
            }
            Err(_) => {
                tracing::warn!("identifier lookup panicked; the index is likely corrupt");
                None
            }
        }
    }

    /// A file's text as the editor or the disk has it now.
    fn file_text(&self, path: &str) -> Option<String> {
        let workspace = &self.view;
        let resolved = workspace.sandbox.resolve_allow_missing(path).ok()?;
        match workspace.open_document(&resolved.absolute) {
            Some(doc) => Some(doc.rope.to_string()),
            None => read_index_text(&resolved.absolute, build::MAX_FILE_BYTES),
        }
    }

    /// The root this index is of (canonical).
    pub fn root(&self) -> &Path {
        self.inner.sandbox.root()
    }

    /// Files indexed, binary ones too: the count every "N files" shows.
    pub fn file_count(&self) -> usize {
        lock(&self.inner.files).len()
    }

    /// Files, text files, chunks and definitions indexed, read under one lock.
    pub fn counts(&self) -> Counts {
        let files = lock(&self.inner.files);
        let mut counts = Counts::default();
        for state in files.values() {
            counts.files += 1;
            counts.text += usize::from(state.text);
            counts.chunks += state.chunks as usize;
            counts.symbols += state.symbols as usize;
        }
        counts
    }

    /// Where the index lives.
    pub fn location(&self) -> Location {
        self.inner.store().location.clone()
    }

    /// The index's size on disk (0 for an index in memory).
    pub fn bytes_on_disk(&self) -> u64 {
        match &self.inner.store().location {
            Location::Disk(dir) => store::bytes_on_disk(dir),
            Location::Memory(_) => 0,
        }
    }

    /// Bytes the index's files take (in memory or on disk), for reports.
    pub fn approximate_bytes(&self) -> usize {
        self.inner
            .store()
            .reader
            .searcher()
            .space_usage()
            .map_or(0, |usage| usage.total().get_bytes() as usize)
    }
}

impl Inner {
    /// `shared`: a session's index, whose being in memory (no cache dir, a disk that
    /// refuses it) is a fault to tell the user; another process holding the index on
    /// disk is not.
    fn open(sandbox: Sandbox, cache: Option<&Path>, shared: bool) -> Inner {
        let opened = store::open(cache, sandbox.root());
        let fault = match &opened.location {
            Location::Memory(reason) if shared => Some(reason.clone()),
            _ => None,
        };
        if let Location::Memory(reason) = &opened.location {
            tracing::debug!("workspace index in memory: {reason}");
        }
        let coverage = CoverageState::default();
        let known = opened.files.values().filter(|s| s.text).count();
        coverage.walked(known);
        coverage.set_indexed(known);
        let history = past_changes::open_history(&sandbox, &opened.location);
        Inner {
            history,
            fields: opened.fields,
            store: RwLock::new(Arc::new(Store::new(
                opened.index,
                opened.writer,
                opened.location,
            ))),
            overlay: RwLock::new(None),
            files: Mutex::new(opened.files),
            editor_paths: Mutex::new(FxHashSet::default()),
            sandbox,
            ready: Mutex::new(false),
            ready_changed: Condvar::new(),
            refreshing: Mutex::new(()),
            refresh_claimed: AtomicBool::new(false),
            merge_deferred: AtomicBool::new(false),
            merge_owed: AtomicBool::new(false),
            coverage,
            fault: Mutex::new(fault),
            writer_failure: Mutex::new(None),
            held: AtomicBool::new(false),
            hold_set: std::env::var_os("COPILOT_LS_TEST_INDEX_HOLD").is_some(),
        }
    }

    fn mark_held(&self) {
        let _ready = lock(&self.ready);
        self.held.store(true, Ordering::Release);
        self.ready_changed.notify_all();
    }
}

/// The numbers of an evaluation's override (`NAME=10,0.5,20`), empty when it is unset;
/// a part that is not a number is left out, so a typo falls back to the defaults.
fn numbers_from_env(name: &str) -> Vec<f32> {
    std::env::var(name)
        .unwrap_or_default()
        .split(',')
        .filter_map(|part| part.trim().parse().ok())
        .collect()
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
pub(crate) mod tests;

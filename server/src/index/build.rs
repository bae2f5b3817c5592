//! Bringing the index up to date with the disk: walk the workspace (bounded), compare
//! each file's size and mtime with its stamp, read only what changed, drop what is
//! gone, and commit in batches so an ask during a long build sees what is done so far.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rustc_hash::FxHashSet;
use tantivy::indexer::{LogMergePolicy, NoMergePolicy};

use super::analyze::{analyze, FileStamp};
use super::build_hold::Hold;
use super::build_profile::{Phase, Profile};
use super::build_walk::{walk_files, Walked};
use super::follower::{self, Followed};
use super::store::Location;
use super::tokenizer::WordCache;
use super::writer::Store;
use super::{progress_file, Inner};
use crate::workspace::read::{looks_binary, read_bounded};
use crate::workspace::walk;

/// Files larger than this are generated data or bundles, not something to cite.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// How much of a workspace is indexed at most: a home directory or `/` is indexed up
/// to here, and the user is told.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub max_files: usize,
    pub max_bytes: u64,
}

pub const BOUNDS: Bounds = Bounds {
    max_files: 100_000,
    max_bytes: 1024 * 1024 * 1024,
};

impl Bounds {
    /// `BOUNDS`, with `COPILOT_LS_INDEX_MAX_FILES` overriding the file count.
    pub fn from_env() -> Bounds {
        let max_files = std::env::var("COPILOT_LS_INDEX_MAX_FILES")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(BOUNDS.max_files);
        Bounds {
            max_files,
            ..BOUNDS
        }
    }
}

/// A commit makes what was indexed so far searchable, so an ask during a long build
/// finds something soon; but each one flushes every indexing thread's segment (which
/// later merges rewrite) and syncs to disk. So commits go by time, the first after a
/// second and each interval twice the one before, up to `COMMIT_MAX_INTERVAL`: a build
/// of T seconds commits about log2(T) times, not T/interval times.
const COMMIT_FIRST: Duration = Duration::from_secs(1);
const COMMIT_MAX_INTERVAL: Duration = Duration::from_secs(8);
/// Parsing the files an index from 0.4 left unparsed commits less often: they are
/// searchable already, and a commit blocks the analysis threads while tantivy writes out
/// its segments, then leaves more of them for the final merge (on 10,570 generated
/// files, whose parsing pass ended within 30 s and so did not commit at all, 0.4's build
/// took 22.2 s against 25.3 s committing every 8 s, medians of five runs each).
/// What it has not committed when the process stops is parsed again at the next start.
const PARSE_COMMIT_INTERVAL: Duration = Duration::from_secs(30);
/// A refresh that reads at least this many files is a bulk build (a first start, a
/// branch switch). Tantivy's merge policy would merge its many small segments over and
/// over while it runs; instead nothing is merged during it and everything once at the
/// end, so asks afterwards search one segment (their cost per segment is what grows
/// with the workspace).
const BULK_FILES: usize = 1_000;
const PROGRESS_EVERY: Duration = Duration::from_millis(200);
/// A file modified this close before it was read may have changed again within the
/// same mtime tick; its content hash decides at the next start.
const UNSURE_WINDOW_NS: u64 = 20_000_000;

/// What a refresh reports as it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    /// `done` of `total` files checked.
    Files { done: usize, total: usize },
    /// The definitions of `done` of `total` files an index from 0.4 left unparsed.
    Definitions { done: usize, total: usize },
    /// The workspace is larger than the bounds: what was left out (known right after
    /// the walk, long before the refresh ends).
    Truncated(String),
}

#[derive(Clone, Debug, Default)]
pub struct RefreshReport {
    /// Files read from disk by this refresh.
    pub files_read: usize,
    /// Set when the workspace was larger than the bounds: what was left out.
    pub truncated: Option<String>,
    /// Set when a commit failed: why (the refresh stopped there; what was committed
    /// before stays, and nothing claims more).
    pub failed: Option<String>,
    pub seconds: f64,
    /// Paths the walk or the reads could not reach (permissions, PATH_MAX), and the
    /// first of them: those files are missing from the index.
    pub unreached: usize,
    pub unreached_example: Option<String>,
}

pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

pub fn refresh(inner: &Inner, bounds: Bounds, progress: &dyn Fn(Progress)) -> RefreshReport {
    let started = Instant::now();
    let profile = Profile::from_env();
    let walk_started = profile.mark();
    // Another process writes this index: follow its build, then put only what changed
    // since in this process's overlay (`follower.rs`).
    if inner.store().writer.is_none() {
        if let Followed::Complete = follower::wait_for_writer(inner, progress) {
            *super::lock(&inner.files) = follower::current_stamps(inner);
        }
    }
    let unreached = walk::Unreached::default();
    let (walked, truncated) = walk_files(inner, bounds, &unreached);
    profile.add(Phase::Walk, walk_started);
    let known = super::lock(&inner.files).clone();
    let editor: FxHashSet<String> = super::lock(&inner.editor_paths).clone();

    // What changed: new files, a different size or mtime, or an mtime too close to the
    // moment it was read (then the content hash decides).
    let mut to_read: Vec<(&Walked, Option<u64>)> = Vec::new();
    let mut present: FxHashSet<&str> = FxHashSet::default();
    for file in &walked {
        present.insert(&file.relative);
        if editor.contains(&file.relative) {
            continue;
        }
        match known.get(&file.relative) {
            Some(stamp) if stamp.size == file.size && stamp.mtime == file.mtime => {
                if stamp.mtime.saturating_add(UNSURE_WINDOW_NS) >= stamp.seen {
                    to_read.push((file, Some(stamp.hash)));
                }
            }
            _ => to_read.push((file, None)),
        }
    }
    // The likely answers first: a cold build's early asks search the source, not the
    // tests, docs or vendored code; by path within a kind, so a build is repeatable.
    to_read.sort_by(|(a, _), (b, _)| {
        (read_order(&a.relative), &a.relative).cmp(&(read_order(&b.relative), &b.relative))
    });
    let gone: Vec<&String> = known
        .keys()
        .filter(|path| !present.contains(path.as_str()) && !editor.contains(*path))
        .collect();
    let total = walked.len();
    let unchanged = total - to_read.len();
    inner.coverage.walked(total);
    inner.coverage.set_indexed(unchanged);
    if let Some(why) = &truncated {
        progress(Progress::Truncated(why.clone()));
    }
    progress(Progress::Files {
        done: unchanged,
        total,
    });
    for path in &gone {
        inner.remove(path);
    }
    let store = inner.store();
    record_progress(inner, &store);

    // A bulk build of the index this process writes merges once, at the end.
    let bulk = to_read.len() >= BULK_FILES && store.writer.is_some();
    if let (true, Some(writer)) = (bulk, &store.writer) {
        super::read(writer).set_merge_policy(Box::new(NoMergePolicy));
    }
    let hold = Hold::from_env();
    if hold.commit_at(0) {
        if let Err(reason) = inner.commit_keeping(true) {
            tracing::warn!("{reason}");
        }
        inner.mark_held();
    }
    let mut pass = Pass {
        inner,
        store: &store,
        profile: &profile,
        unreached: &unreached,
        files_read: AtomicUsize::new(0),
        last_commit: Instant::now(),
        commit_interval: COMMIT_FIRST,
        max_interval: COMMIT_MAX_INTERVAL,
    };
    // Every changed file, with its definitions, in one pass: the files an ask is most
    // likely about first (`read_order`), committed by time so asks see them as they
    // come. (Until 0.4 a cold build indexed every file by its words first and parsed in
    // a second pass that read, analyzed and indexed each file again: searchable whole
    // sooner, but a third more CPU and the definitions, which a CLI ask waits for, much
    // later: docs/benchmarks.md, "The cold build".)
    let mut failed = pass.run(
        &to_read,
        Some(&hold),
        |done| {
            inner.coverage.set_indexed(unchanged + done);
        },
        |done| {
            progress(Progress::Files {
                done: unchanged + done,
                total,
            })
        },
    );
    if failed.is_none() {
        inner.coverage.set_indexed(total);
        profile.searchable(started);
        progress(Progress::Files { done: total, total });
    }
    // Whether this refresh gave the writer anything to commit.
    let mut changed = !to_read.is_empty() || !gone.is_empty();
    // The definitions of every file an earlier version's build indexed by its words
    // only and did not parse (`FileStamp::lexical_only`), each file's documents replaced
    // whole.
    if failed.is_none() {
        let files = super::lock(&inner.files).clone();
        let pending: Vec<(&Walked, Option<u64>)> = walked
            .iter()
            .filter(|w| files.get(&w.relative).is_some_and(|s| s.lexical_only))
            .filter(|w| !editor.contains(&w.relative))
            .map(|w| (w, None))
            .collect();
        if !pending.is_empty() {
            changed = true;
            let to_parse = pending.len();
            pass.commit_interval = PARSE_COMMIT_INTERVAL;
            pass.max_interval = PARSE_COMMIT_INTERVAL;
            inner.coverage.start_parsing(to_parse);
            progress(Progress::Definitions {
                done: 0,
                total: to_parse,
            });
            failed = pass.run(
                &pending,
                None,
                |done| {
                    inner.coverage.set_parsed(done);
                },
                |done| {
                    progress(Progress::Definitions {
                        done,
                        total: to_parse,
                    })
                },
            );
        }
    }
    // A refresh that found nothing changed commits nothing: a commit would only
    // renumber the same documents and make the stamps file beside them stale (written
    // again: ~40 ms at 50,000 files, on every `tool` call). A reading process commits
    // anyway: that is how it sees what the writer committed since.
    if failed.is_none() && (changed || store.writer.is_none()) {
        let t = profile.mark();
        failed = inner.commit_keeping(true).err();
        profile.add(Phase::Commit, t);
    }
    if let (true, Some(writer)) = (bulk, &store.writer) {
        super::read(writer).set_merge_policy(Box::<LogMergePolicy>::default());
    }
    // A bulk build merges at its end, and so does the next refresh after one whose
    // process stopped before its merge (`MERGE_OWED_FILE`).
    let merges = store.writer.is_some()
        && failed.is_none()
        && (bulk || merge_owed_file(&store).is_some_and(|file| file.exists()));
    if merges {
        if inner.merge_deferred.load(Ordering::Acquire) {
            inner.merge_owed.store(true, Ordering::Release);
            if let Some(file) = merge_owed_file(&store) {
                let _ = std::fs::write(file, "");
            }
        } else {
            let t = profile.mark();
            merge_bulk(inner);
            profile.add(Phase::Merge, t);
        }
    }
    release_freed_memory();
    profile.report(started);
    let report = RefreshReport {
        files_read: pass.files_read.into_inner(),
        truncated,
        failed,
        seconds: started.elapsed().as_secs_f64(),
        unreached: unreached.count(),
        unreached_example: unreached.note_line(),
    };
    tracing::info!(
        files = total,
        read = report.files_read,
        deleted = gone.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        failed = report.failed.is_some(),
        "index refresh ended"
    );
    report
}

/// One pass over a list of files: read, analyze and index them on worker threads,
/// committing by time (so asks see what is done), until the list ends or the disk
/// refuses a commit.
struct Pass<'a> {
    inner: &'a Inner,
    store: &'a Store,
    profile: &'a Profile,
    unreached: &'a walk::Unreached,
    /// Files read from disk, over the passes.
    files_read: AtomicUsize,
    last_commit: Instant,
    commit_interval: Duration,
    /// What `commit_interval` doubles up to.
    max_interval: Duration,
}

impl Pass<'_> {
    /// Indexes `files`; `committed(n)` after each commit with the first `n` done,
    /// `reported(n)` every `PROGRESS_EVERY`. Returns why a commit failed, if one did.
    /// `hold`: a test's hold on this pass (`build_hold.rs`).
    fn run(
        &mut self,
        files: &[(&Walked, Option<u64>)],
        hold: Option<&Hold>,
        committed: impl Fn(usize),
        reported: impl Fn(usize),
    ) -> Option<String> {
        let (inner, profile) = (self.inner, self.profile);
        let next = AtomicUsize::new(0);
        let threads = analysis_threads().min(files.len().max(1));
        let (done_sender, done_receiver) = mpsc::channel::<()>();
        let mut last_progress = Instant::now();
        let mut failed = None;
        let files_read = &self.files_read;
        let unreached = self.unreached;
        std::thread::scope(|scope| {
            for _ in 0..threads {
                let sender = done_sender.clone();
                let next = &next;
                scope.spawn(move || {
                    let mut cache = WordCache::default();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((file, expected)) = files.get(i) else {
                            break;
                        };
                        if let Some(hold) = hold {
                            hold.wait_at(i);
                        }
                        let work = Work {
                            inner,
                            profile,
                            files_read,
                            unreached,
                        };
                        work.index_one(&mut cache, file, *expected);
                        if sender.send(()).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(done_sender);
            // What is committed is what asks see: the coverage counts it, not what was
            // handed to tantivy since.
            for (done, ()) in (1..).zip(done_receiver.iter()) {
                if let Some(reason) = inner.take_writer_failure() {
                    failed = Some(reason);
                    next.store(files.len(), Ordering::Relaxed);
                    break;
                }
                let held = hold.is_some_and(|hold| hold.commit_at(done));
                if self.last_commit.elapsed() >= self.commit_interval || held {
                    let t = profile.mark();
                    let outcome = inner.commit_keeping(true);
                    profile.add(Phase::Commit, t);
                    if let Err(reason) = outcome {
                        failed = Some(reason);
                        // Stop the workers: nothing more can be written.
                        next.store(files.len(), Ordering::Relaxed);
                        break;
                    }
                    committed(done);
                    record_progress(inner, self.store);
                    if held {
                        inner.mark_held();
                    }
                    self.last_commit = Instant::now();
                    self.commit_interval = (self.commit_interval * 2).min(self.max_interval);
                }
                if last_progress.elapsed() >= PROGRESS_EVERY {
                    reported(done);
                    last_progress = Instant::now();
                }
            }
            drop(done_receiver);
        });
        failed
    }
}

/// How many threads read and analyze a build's files: one per core, up to 4.
pub(super) fn analysis_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4)
}

/// What a worker needs to index one file.
struct Work<'a> {
    inner: &'a Inner,
    profile: &'a Profile,
    files_read: &'a AtomicUsize,
    unreached: &'a walk::Unreached,
}

/// Tells other processes reading this index how far its build is (`progress_file.rs`).
pub fn record_progress(inner: &Inner, store: &Store) {
    if let (Some(_), Location::Disk(dir)) = (&store.writer, &store.location) {
        progress_file::write(dir, &inner.coverage.snapshot());
    }
}

/// The order a build reads files in: source first, then tests, docs, examples and the
/// rest, vendored and generated code last.
fn read_order(path: &str) -> u8 {
    use super::file_kind::FileKind;
    match FileKind::of_path(path) {
        FileKind::Source => 0,
        FileKind::Test => 1,
        FileKind::Docs | FileKind::Changelog => 2,
        FileKind::Example | FileKind::Bench => 3,
        FileKind::Meta => 4,
        FileKind::Vendored => 5,
        FileKind::Generated => 6,
    }
}

impl Work<'_> {
    /// Reads, analyzes and indexes one file (replacing its earlier documents). A file
    /// that cannot be read is left out (and tried again next time); a binary one is
    /// remembered as such, so it is not read again while it does not change.
    fn index_one(&self, cache: &mut WordCache, file: &Walked, expected: Option<u64>) {
        let (inner, profile) = (self.inner, self.profile);
        let t = profile.mark();
        let seen = now_ns();
        let bytes = match read_bounded(&file.absolute, MAX_FILE_BYTES) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return,
            Err(error) => {
                // Not a file any more (gone since the walk) is no news; anything else is.
                if error.kind() != std::io::ErrorKind::NotFound {
                    let sandbox = &inner.sandbox;
                    self.unreached
                        .note_path(sandbox, Some(&file.absolute), &error.to_string());
                }
                return;
            }
        };
        self.files_read.fetch_add(1, Ordering::Relaxed);
        let hash = xxhash_rust::xxh3::xxh3_64(&bytes);
        profile.add(Phase::Read, t);
        if expected == Some(hash) && seen.saturating_sub(file.mtime) <= UNSURE_WINDOW_NS {
            // Same content, and still too recent to trust its mtime: check again next time.
            return;
        }
        let stamp = FileStamp {
            size: file.size,
            mtime: file.mtime,
            seen,
            hash,
            ..FileStamp::default()
        };
        let text = (!looks_binary(&bytes)).then(|| match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        });
        let t = profile.mark();
        let analyzed = analyze(&inner.fields, cache, &file.relative, text.as_deref(), stamp);
        profile.add(Phase::Analyze, t);
        let (parse_wall, parse_cpu) = analyzed.parse_nanos;
        profile.split(Phase::Analyze, Phase::Parse, parse_wall, parse_cpu);
        // An open document's editor text wins over the disk.
        if super::lock(&inner.editor_paths).contains(&file.relative) {
            return;
        }
        let t = profile.mark();
        inner.replace(analyzed);
        profile.add(Phase::Add, t);
    }
}

/// Says beside an index on disk that a bulk build's merge was left for after an answer:
/// a process stopped before it (an interrupted `copilot-ls ask`) leaves the file, and
/// the next refresh that writes the index merges.
const MERGE_OWED_FILE: &str = "merge-owed";

fn merge_owed_file(store: &super::writer::Store) -> Option<std::path::PathBuf> {
    match &store.location {
        super::store::Location::Disk(dir) => Some(dir.join(MERGE_OWED_FILE)),
        super::store::Location::Memory(_) => None,
    }
}

/// Merges a bulk build's segments into one, so asks search one segment (their cost
/// per segment is what grows with the workspace).
pub(super) fn merge_bulk(inner: &Inner) {
    super::build_hold::wait_to_merge();
    // The merge maps every segment into memory: give back the indexing arenas and the
    // words cached for them first, so the two do not add up to the build's peak.
    super::tokenizer::forget_words();
    release_freed_memory();
    let store = inner.store();
    if inner.merge_all() {
        if let Some(file) = merge_owed_file(&store) {
            let _ = std::fs::remove_file(file);
        }
    }
}

/// Gives the memory the build freed (tantivy's indexing arenas, the analysis buffers)
/// back to the operating system, so the server's idle resident set does not stay near
/// the build's peak. The binary allocates with mimalloc (`main.rs`); a test binary, with
/// the system allocator, has nothing in mimalloc to collect.
fn release_freed_memory() {
    #[cfg(unix)]
    // SAFETY: mi_collect only frees memory mimalloc holds unused.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

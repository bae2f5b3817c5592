//! Bringing the index up to date with the disk: walk the workspace (bounded), compare
//! each file's size and mtime with its stamp, read only what changed, drop what is
//! gone, and commit in batches so an ask during a long build sees what is done so far.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rustc_hash::FxHashSet;
use tantivy::indexer::{LogMergePolicy, NoMergePolicy};

use super::analyze::{analyze, path_terms, FileStamp};
use super::tokenizer::WordCache;
use super::Inner;
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
    pub seconds: f64,
}

struct Walked {
    relative: String,
    absolute: PathBuf,
    size: u64,
    mtime: u64,
}

pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn mtime_ns(metadata: &std::fs::Metadata) -> u64 {
    metadata
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Every regular file the walker admits, up to `bounds`; the second value says what was
/// left out.
fn walk_files(inner: &Inner, bounds: Bounds) -> (Vec<Walked>, Option<String>) {
    let sandbox = &inner.workspace.sandbox;
    let mut files = Vec::new();
    let mut bytes = 0u64;
    for entry in walk::builder(sandbox.root()).build() {
        let Ok(entry) = entry else {
            continue;
        };
        if !walk::is_file(&entry) || !walk::admits(sandbox, &entry) {
            continue;
        }
        let metadata = if entry.path_is_symlink() {
            std::fs::metadata(entry.path())
        } else {
            entry.metadata().map_err(std::io::Error::other)
        };
        let Ok(metadata) = metadata else {
            continue;
        };
        if !metadata.is_file() || metadata.len() > MAX_FILE_BYTES {
            continue;
        }
        if files.len() >= bounds.max_files || bytes + metadata.len() > bounds.max_bytes {
            let why = format!(
                "the workspace is too large to index fully: only the first {} files ({} MB) are indexed",
                files.len(),
                bytes / (1024 * 1024)
            );
            return (files, Some(why));
        }
        let Some(relative) = sandbox.relative(entry.path()) else {
            continue;
        };
        bytes += metadata.len();
        files.push(Walked {
            relative,
            size: metadata.len(),
            mtime: mtime_ns(&metadata),
            absolute: entry.into_path(),
        });
    }
    (files, None)
}

pub fn refresh(inner: &Inner, bounds: Bounds, progress: &dyn Fn(Progress)) -> RefreshReport {
    let started = Instant::now();
    let profile = Profile::from_env();
    let (walked, truncated) = walk_files(inner, bounds);
    profile.add(Phase::Walk, started);
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
    let gone: Vec<&String> = known
        .keys()
        .filter(|path| !present.contains(path.as_str()) && !editor.contains(*path))
        .collect();
    let total = walked.len();
    let unchanged = total - to_read.len();
    if let Some(why) = &truncated {
        progress(Progress::Truncated(why.clone()));
    }
    progress(Progress::Files {
        done: unchanged,
        total,
    });
    {
        let writer = super::read(&inner.writer);
        let mut files = super::lock(&inner.files);
        for path in &gone {
            for term in path_terms(&inner.fields, path) {
                writer.delete_term(term);
            }
            files.remove(*path);
        }
    }

    let bulk = to_read.len() >= BULK_FILES;
    if bulk {
        super::read(&inner.writer).set_merge_policy(Box::new(NoMergePolicy));
    }

    let next = AtomicUsize::new(0);
    let files_read = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4)
        .min(to_read.len().max(1));
    let (done_sender, done_receiver) = mpsc::channel::<()>();
    let mut last_commit = Instant::now();
    let mut commit_interval = COMMIT_FIRST;
    let mut last_progress = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let sender = done_sender.clone();
            let (next, to_read, files_read, profile) = (&next, &to_read, &files_read, &profile);
            scope.spawn(move || {
                let mut cache = WordCache::default();
                while let Some((file, expected)) = to_read.get(next.fetch_add(1, Ordering::Relaxed))
                {
                    index_one(inner, &mut cache, file, *expected, files_read, profile);
                    let _ = sender.send(());
                }
            });
        }
        drop(done_sender);
        for (done, ()) in (unchanged + 1..).zip(done_receiver) {
            if last_commit.elapsed() >= commit_interval {
                let t = Instant::now();
                inner.commit();
                profile.add(Phase::Commit, t);
                last_commit = Instant::now();
                commit_interval = (commit_interval * 2).min(COMMIT_MAX_INTERVAL);
            }
            if last_progress.elapsed() >= PROGRESS_EVERY {
                progress(Progress::Files { done, total });
                last_progress = Instant::now();
            }
        }
    });
    let t = Instant::now();
    inner.commit();
    profile.add(Phase::Commit, t);
    if bulk {
        super::read(&inner.writer).set_merge_policy(Box::<LogMergePolicy>::default());
        let t = Instant::now();
        inner.merge_all();
        profile.add(Phase::Merge, t);
    }
    release_freed_memory();
    profile.report(started);
    progress(Progress::Files { done: total, total });
    let report = RefreshReport {
        files_read: files_read.into_inner(),
        truncated,
        seconds: started.elapsed().as_secs_f64(),
    };
    tracing::info!(
        files = total,
        read = report.files_read,
        deleted = gone.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "index up to date"
    );
    report
}

/// Reads, analyzes and indexes one file (replacing its earlier documents). A file that
/// cannot be read is left out (and tried again next time); a binary one is remembered
/// as such, so it is not read again while it does not change.
fn index_one(
    inner: &Inner,
    cache: &mut WordCache,
    file: &Walked,
    expected: Option<u64>,
    files_read: &AtomicUsize,
    profile: &Profile,
) {
    let t = Instant::now();
    let seen = now_ns();
    let bytes = match read_bounded(&file.absolute, MAX_FILE_BYTES) {
        Ok(Some(bytes)) => bytes,
        _ => return,
    };
    files_read.fetch_add(1, Ordering::Relaxed);
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
    let t = Instant::now();
    let analyzed = analyze(&inner.fields, cache, &file.relative, text.as_deref(), stamp);
    profile.add(Phase::Analyze, t);
    // An open document's editor text wins over the disk.
    if super::lock(&inner.editor_paths).contains(&file.relative) {
        return;
    }
    let t = Instant::now();
    inner.replace(analyzed);
    profile.add(Phase::Add, t);
}

/// Where a refresh spends its time, summed over threads, printed to stderr at the end
/// when `COPILOT_LS_INDEX_PROFILE` is set (for tuning the build; off, it costs nothing).
struct Profile {
    on: bool,
    nanos: [AtomicU64; 6],
}

#[derive(Clone, Copy)]
enum Phase {
    Walk,
    /// Reading and hashing.
    Read,
    /// Chunking and tokenizing (`analyze`).
    Analyze,
    /// Handing the documents to tantivy (waits when its indexing threads are behind).
    Add,
    Commit,
    /// Merging a bulk build's segments into one.
    Merge,
}

impl Profile {
    fn from_env() -> Profile {
        Profile {
            on: std::env::var_os("COPILOT_LS_INDEX_PROFILE").is_some_and(|v| !v.is_empty()),
            nanos: Default::default(),
        }
    }

    fn add(&self, phase: Phase, since: Instant) {
        if self.on {
            let nanos = since.elapsed().as_nanos() as u64;
            self.nanos[phase as usize].fetch_add(nanos, Ordering::Relaxed);
        }
    }

    fn report(&self, started: Instant) {
        if !self.on {
            return;
        }
        let s = |phase: Phase| self.nanos[phase as usize].load(Ordering::Relaxed) as f64 / 1e9;
        eprintln!(
            "index profile: wall {:.2}s; walk {:.2}s, read+hash {:.2}s, analyze {:.2}s, \
             add {:.2}s, commit {:.2}s, merge {:.2}s (thread seconds)",
            started.elapsed().as_secs_f64(),
            s(Phase::Walk),
            s(Phase::Read),
            s(Phase::Analyze),
            s(Phase::Add),
            s(Phase::Commit),
            s(Phase::Merge),
        );
    }
}

/// Gives the memory the build freed (tantivy's indexing arenas, the analysis buffers)
/// back to the operating system. glibc keeps freed heap for reuse, so without this the
/// server's idle resident set stays near its peak during the build.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory at the top of the heaps to the OS.
    unsafe {
        libc::malloc_trim(0);
    }
}

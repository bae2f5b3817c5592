//! Where the index lives and how it is opened: one directory per canonical workspace
//! root under the cache dir, a format version in a meta file, and the rules that keep a
//! bad index from ever stopping the server.
//!
//! - `COPILOT_LS_CACHE_DIR`, else `$XDG_CACHE_HOME/copilot-ls`, else
//!   `~/.cache/copilot-ls`; with none of them (or a cache dir inside the workspace,
//!   which would write into it) the index is kept in memory.
//! - `<cache>/<xxh3 of the root path>/` holds tantivy's files and `copilot-ls.json`
//!   (`{"format": N, "root": "/the/root"}`). A missing or different meta file, an
//!   unreadable or corrupt index (even one that panics tantivy while being read) is
//!   wiped and rebuilt, under tantivy's writer lock so a live server's index is never
//!   wiped by another.
//! - Two processes on one workspace: the first holds the writer lock for its lifetime;
//!   the second finds it busy and opens the index to read only (`follower.rs`), with
//!   its own changes in memory on top. It never writes the other's files, so neither
//!   can corrupt the index.

use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;
use tantivy::directory::{Directory, MmapDirectory, INDEX_WRITER_LOCK};
use tantivy::schema::{Schema, Value};
use tantivy::{Index, IndexWriter, TantivyDocument, TantivyError};

use super::analyze::FileStamp;
use super::schema::{self, Fields, FORMAT, KIND_FILE};

const META_FILE: &str = "copilot-ls.json";

/// What an index holds, by path.
type Stamps = FxHashMap<String, FileStamp>;

/// The cache dir from the environment (section 2 of the protocol), if there is one.
/// Only absolute paths count: a relative one would resolve against the process's
/// working directory, perhaps inside the workspace (`Settings::from_env` tells the user
/// it was refused).
pub fn cache_dir_from_env() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    var("COPILOT_LS_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|dir| dir.join("copilot-ls")))
        .or_else(|| var("HOME").map(|home| home.join(".cache").join("copilot-ls")))
}

/// The directory of one workspace's index: stable for a root, different across roots.
pub fn index_dir(cache: &Path, root: &Path) -> PathBuf {
    let hash = xxhash_rust::xxh3::xxh3_64(root.as_os_str().as_encoded_bytes());
    cache.join(format!("{hash:016x}"))
}

/// Where an opened index lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    Disk(PathBuf),
    /// In memory, and why (for the log and the `index` report).
    Memory(String),
}

pub struct Opened {
    pub index: Index,
    /// `None` when another process holds the writer lock: this one reads the index it
    /// writes (`follower.rs`).
    pub writer: Option<IndexWriter>,
    pub fields: Fields,
    pub location: Location,
    /// What the index holds, by path.
    pub files: FxHashMap<String, FileStamp>,
}

/// Tantivy's indexing threads: one for every two of the build's analysis threads
/// (`build::analysis_threads`), each with `WRITER_BUDGET_PER_THREAD` (tantivy
/// needs at least 15 MB). Analysis, parsing most of all, is the larger half of a build:
/// on 2 cores one indexing thread keeps up with both analysis threads, and a second
/// one only competed with them for the cores and held another arena (50,000 generated
/// files: complete in the same 40 s, peak 266-289 MB against 298-321 MB; a 5,300-file
/// Python repository 2.5 s against 3.0 s; with half the cores taken by other work, 3-5%
/// slower to complete at 25 MB less: docs/benchmarks.md).
fn writer_threads() -> usize {
    (super::build::analysis_threads() / 2).max(1)
}
const WRITER_BUDGET_PER_THREAD: usize = 48 * 1024 * 1024;

/// Opens the workspace's index under `cache`, rebuilding it when it cannot be used, or
/// an index in memory when there is no cache dir or another server holds this one.
pub fn open(cache: Option<&Path>, root: &Path) -> Opened {
    let Some(cache) = cache else {
        return in_memory("no cache directory (set COPILOT_LS_CACHE_DIR)".into());
    };
    let cache = std::fs::canonicalize(cache).unwrap_or_else(|_| cache.to_path_buf());
    if cache.starts_with(root) {
        return in_memory("the cache directory is inside the workspace".into());
    }
    let dir = index_dir(&cache, root);
    match open_on_disk(&dir, root) {
        Ok(opened) => opened,
        Err(reason) => {
            tracing::info!("index kept in memory: {reason}");
            in_memory(reason)
        }
    }
}

fn open_on_disk(dir: &Path, root: &Path) -> Result<Opened, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let (schema, fields) = schema::build();
    let usable = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        try_open(dir, root, &schema, fields)
    }));
    let (index, files, unkept) = match usable {
        Ok(Ok(Some(opened))) => opened,
        Ok(Ok(None)) => (create(dir, root, &schema)?, FxHashMap::default(), None),
        broken => {
            let reason = match broken {
                Ok(Err(reason)) => reason,
                _ => "reading it panicked".to_string(),
            };
            tracing::warn!("rebuilding the index at {}: {reason}", dir.display());
            wipe(dir)?;
            (create(dir, root, &schema)?, FxHashMap::default(), None)
        }
    };
    let writer = match writer(&index) {
        Ok(writer) => {
            if let Some(opstamp) = unkept {
                super::stamps_file::write(dir, opstamp, &files);
            }
            Some(writer)
        }
        // Another process writes it: read what it writes.
        Err(TantivyError::LockFailure(..)) => None,
        Err(error) => return Err(format!("cannot write the index: {error}")),
    };
    Ok(Opened {
        index,
        writer,
        fields,
        location: Location::Disk(dir.to_path_buf()),
        files,
    })
}

/// The index in `dir` with what it holds, `None` when there is none yet, or why it
/// cannot be used.
fn try_open(
    dir: &Path,
    root: &Path,
    schema: &Schema,
    fields: Fields,
) -> Result<Option<(Index, Stamps, Option<u64>)>, String> {
    let meta = std::fs::read_to_string(dir.join(META_FILE)).ok();
    let directory = MmapDirectory::open(dir).map_err(|e| e.to_string())?;
    let exists = Index::exists(&directory).map_err(|e| e.to_string())?;
    let Some(meta) = meta else {
        return if exists {
            Err("it has no meta file".into())
        } else {
            Ok(None)
        };
    };
    let meta: serde_json::Value =
        serde_json::from_str(&meta).map_err(|e| format!("meta file: {e}"))?;
    if meta["format"] != FORMAT {
        return Err(format!("format {} is not {FORMAT}", meta["format"]));
    }
    if meta["model"].as_str() != Some(model_id().as_str()) {
        return Err(format!(
            "its vectors are by model {}, not {}",
            meta["model"],
            model_id()
        ));
    }
    if meta["root"].as_str() != root.to_str() {
        return Err(format!("it belongs to {}", meta["root"]));
    }
    if !exists {
        return Ok(None);
    }
    let index = Index::open(directory).map_err(|e| e.to_string())?;
    if index.schema() != *schema {
        return Err("its schema differs".into());
    }
    let (files, unkept) = stamps_and_unkept(&index, Some(dir), fields)?;
    // Stamps from their own file leave the segments unread: open them, so a half-deleted
    // cache is rebuilt here rather than failing later.
    index.reader().map_err(|e| e.to_string())?;
    Ok(Some((index, files, unkept)))
}

fn create(dir: &Path, root: &Path, schema: &Schema) -> Result<Index, String> {
    // A new index counts its commits from zero again: stamps kept for an older one must
    // never match one of them.
    super::stamps_file::forget(dir);
    let meta = serde_json::json!({
        "format": FORMAT,
        "root": root.to_string_lossy(),
        "model": model_id(),
    });
    std::fs::write(dir.join(META_FILE), meta.to_string())
        .map_err(|e| format!("cannot write {}: {e}", dir.join(META_FILE).display()))?;
    let directory = MmapDirectory::open(dir).map_err(|e| e.to_string())?;
    let index = match Index::create(directory, schema.clone(), Default::default()) {
        Ok(index) => index,
        // Another server created it in the meantime: use theirs.
        Err(_) => Index::open_in_dir(dir).map_err(|e| e.to_string())?,
    };
    Ok(index)
}

/// Removes everything in `dir` but the writer lock file, holding that lock, so a
/// server using the index is never pulled from under.
fn wipe(dir: &Path) -> Result<(), String> {
    let directory = MmapDirectory::open(dir).map_err(|e| e.to_string())?;
    let _lock = directory.acquire_lock(&INDEX_WRITER_LOCK).map_err(|_| {
        "another copilot-ls is using this workspace's index, which needs rebuilding".to_string()
    })?;
    let entries = std::fs::read_dir(dir).map_err(|e| e.to_string())?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.file_name() == INDEX_WRITER_LOCK.filepath.file_name() {
            continue;
        }
        let removed = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        removed.map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
    }
    Ok(())
}

pub fn in_memory(reason: String) -> Opened {
    let (schema, fields) = schema::build();
    let index = Index::create_in_ram(schema);
    let writer = writer(&index).expect("an index in memory has no lock to fail on");
    Opened {
        index,
        writer: Some(writer),
        fields,
        location: Location::Memory(reason),
        files: FxHashMap::default(),
    }
}

/// The index's writer, or an error (`LockFailure` while another process holds it).
pub fn writer(index: &Index) -> tantivy::Result<IndexWriter> {
    let threads = writer_threads();
    index.writer_with_num_threads(threads, threads * WRITER_BUDGET_PER_THREAD)
}

/// Every file's stamp: from the stamps file the writer keeps beside the index when it is
/// the one of the commit the index holds (`stamps_file.rs`), else from the doc store.
pub fn stamps_of(index: &Index, location: &Location, fields: Fields) -> Result<Stamps, String> {
    let dir = match location {
        Location::Disk(dir) => Some(dir.as_path()),
        Location::Memory(_) => None,
    };
    stamps_and_unkept(index, dir, fields).map(|(stamps, _)| stamps)
}

/// `stamps_of`, and when they were read from the doc store of an index on disk, the
/// commit they are (at least) of: the writer keeps them then (`open_on_disk`), so the
/// next process need not read them so. Labelled with the commit seen before reading: a
/// commit in between makes the label older than the index, and no reader uses it.
fn stamps_and_unkept(
    index: &Index,
    dir: Option<&Path>,
    fields: Fields,
) -> Result<(Stamps, Option<u64>), String> {
    let Some(dir) = dir else {
        return Ok((load_stamps(index, fields)?, None));
    };
    let opstamp = index.load_metas().map(|metas| metas.opstamp).ok();
    if let Some(stamps) = opstamp.and_then(|at| super::stamps_file::read(dir, at)) {
        return Ok((stamps, None));
    }
    Ok((load_stamps(index, fields)?, opstamp))
}

/// Every file document's stamp. Reads the whole doc store of file documents, which also
/// proves the index readable.
pub fn load_stamps(index: &Index, fields: Fields) -> Result<FxHashMap<String, FileStamp>, String> {
    let reader = index.reader().map_err(|e| e.to_string())?;
    let searcher = reader.searcher();
    let kind = tantivy::Term::from_field_text(fields.kind, KIND_FILE);
    let mut files = FxHashMap::default();
    for segment in searcher.segment_readers() {
        let inverted = segment
            .inverted_index(fields.kind)
            .map_err(|e| e.to_string())?;
        let Some(mut postings) = inverted
            .read_postings(&kind, tantivy::schema::IndexRecordOption::Basic)
            .map_err(|e| e.to_string())?
        else {
            continue;
        };
        let store = segment.get_store_reader(64).map_err(|e| e.to_string())?;
        use tantivy::DocSet;
        let mut doc = postings.doc();
        while doc != tantivy::TERMINATED {
            if !segment.is_deleted(doc) {
                let stored: TantivyDocument = store.get(doc).map_err(|e| e.to_string())?;
                let number = |field| {
                    stored
                        .get_first(field)
                        .and_then(|v| v.as_u64())
                        .unwrap_or(0)
                };
                let Some(path) = stored.get_first(fields.file_path).and_then(|v| v.as_str()) else {
                    return Err("a file document has no path".into());
                };
                files.insert(
                    path.to_string(),
                    FileStamp {
                        size: number(fields.size),
                        mtime: number(fields.mtime),
                        seen: number(fields.seen),
                        hash: number(fields.hash),
                        chunks: number(fields.chunks),
                        symbols: number(fields.symbols),
                        text: number(fields.text) == 1,
                        lexical_only: number(fields.lexical_only) == 1,
                    },
                );
            }
            doc = postings.advance();
        }
    }
    Ok(files)
}

/// Bytes of the files in `dir` (the index's size on disk).
pub fn bytes_on_disk(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// The model the index's vectors are by (`none` without one): an index whose vectors are
/// by another model, or by none, is rebuilt.
fn model_id() -> String {
    crate::embed::loaded().map_or_else(|| "none".to_string(), |model| model.id())
}

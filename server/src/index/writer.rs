//! The writing side of the index: replacing and removing a file's documents,
//! committing, merging a bulk build into one segment, and what happens when the disk
//! refuses a write.
//!
//! A failed commit (a full disk, a cache dir gone read-only) must never leave an index
//! that claims more than it holds: the disk keeps its last good commit (tantivy writes
//! its meta file last, atomically), and this process moves its index to memory
//! (`fall_back_to_memory`), where the build starts over, so answers stay whole. The next
//! process tries the disk again, so freeing space heals it.
//!
//! A process that only reads the index on disk (another holds its writer lock: see
//! `follower.rs`) writes its own changes to an overlay in memory instead: the changed
//! files' documents, and the paths whose documents on disk are stale or gone.

use std::sync::{Arc, Mutex, RwLock};

use rustc_hash::FxHashSet;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy};

use super::analyze::{path_terms, AnalyzedFile};
use super::store::{self, Location};
use super::{lock, read, write, Inner};

/// A tantivy index as this process uses it.
pub struct Store {
    pub index: Index,
    pub reader: IndexReader,
    /// Adds and deletes need only `&IndexWriter`; a commit takes it exclusively. `None`
    /// when another process writes this index.
    pub writer: Option<RwLock<IndexWriter>>,
    pub location: Location,
}

impl Store {
    pub fn new(index: Index, writer: Option<IndexWriter>, location: Location) -> Store {
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .unwrap_or_else(|_| index.reader().expect("a reader"));
        Store {
            index,
            reader,
            writer: writer.map(RwLock::new),
            location,
        }
    }

    fn in_memory(reason: String) -> Store {
        let opened = store::in_memory(reason);
        Store::new(opened.index, opened.writer, opened.location)
    }
}

/// What a reading process changed, over the index another process writes.
pub struct Overlay {
    pub store: Store,
    /// Paths whose documents in the index on disk are stale or gone: its hits for them
    /// are left out (the overlay holds their current documents, if any).
    pub hidden: Mutex<FxHashSet<String>>,
}

impl Inner {
    pub(super) fn store(&self) -> Arc<Store> {
        read(&self.store).clone()
    }

    pub(super) fn overlay(&self) -> Option<Arc<Overlay>> {
        read(&self.overlay).clone()
    }

    /// The overlay, made on first use by a reading process.
    fn overlay_for_writing(&self) -> Arc<Overlay> {
        let mut overlay = write(&self.overlay);
        overlay
            .get_or_insert_with(|| {
                Arc::new(Overlay {
                    store: Store::in_memory("changes over another process's index".into()),
                    hidden: Mutex::new(FxHashSet::default()),
                })
            })
            .clone()
    }

    /// Replaces a file's documents and stamp.
    pub(super) fn replace(&self, file: AnalyzedFile) {
        let store = self.store();
        let Some(writer) = &store.writer else {
            let overlay = self.overlay_for_writing();
            let writer = overlay
                .store
                .writer
                .as_ref()
                .expect("an overlay has a writer");
            let writer = read(writer);
            for term in path_terms(&self.fields, &file.path) {
                writer.delete_term(term);
            }
            for document in file.documents {
                if let Err(error) = writer.add_document(document) {
                    self.writer_failed(format!("cannot index {}: {error}", file.path));
                    return;
                }
            }
            lock(&overlay.hidden).insert(file.path.clone());
            lock(&self.files).insert(file.path, file.stamp);
            return;
        };
        let writer = read(writer);
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
                self.writer_failed(format!("cannot index {}: {error}", file.path));
                return;
            }
        }
        lock(&self.files).insert(file.path, file.stamp);
    }

    /// Tantivy's writer refused a document: its indexing threads have stopped (a disk
    /// that refused a segment, most often). Logged once; the build stops at its next
    /// file (`take_writer_failure`).
    fn writer_failed(&self, reason: String) {
        let mut failure = lock(&self.writer_failure);
        if failure.is_none() {
            tracing::warn!("{reason}");
            *failure = Some(reason);
        }
    }

    /// Why the writer stopped taking documents, if it did (and forgets it).
    pub(super) fn take_writer_failure(&self) -> Option<String> {
        lock(&self.writer_failure).take()
    }

    pub(super) fn remove(&self, path: &str) {
        let store = self.store();
        let delete = |writer: &RwLock<IndexWriter>| {
            let writer = read(writer);
            for term in path_terms(&self.fields, path) {
                writer.delete_term(term);
            }
            // Under the writer's read side, as in `replace`: a commit sees the documents
            // and the stamps agree.
            lock(&self.files).remove(path);
        };
        match &store.writer {
            Some(writer) => delete(writer),
            None => {
                let overlay = self.overlay_for_writing();
                lock(&overlay.hidden).insert(path.to_string());
                delete(
                    overlay
                        .store
                        .writer
                        .as_ref()
                        .expect("an overlay has a writer"),
                );
            }
        }
        lock(&self.files).remove(path);
    }

    /// Merges every segment into one and makes that searchable; whether the index is one
    /// segment now. Adds and commits from the editor go on meanwhile (tantivy applies
    /// their deletes to the merged segment).
    pub(super) fn merge_all(&self) -> bool {
        let store = self.store();
        let Some(writer) = &store.writer else {
            return false;
        };
        let merging = {
            let mut writer = write(writer);
            match writer.index().searchable_segment_ids() {
                Ok(ids) if ids.len() > 1 => writer.merge(&ids),
                Ok(_) => return true,
                Err(error) => {
                    tracing::warn!("cannot list the index segments: {error}");
                    return false;
                }
            }
        };
        if let Err(error) = merging.wait() {
            tracing::warn!("index merge failed: {error}");
            return false;
        }
        if let Err(error) = store.reader.reload() {
            tracing::warn!("index reload failed: {error}");
        }
        true
    }

    /// Commits what was added and deleted, and makes it searchable; why not, when the
    /// disk refused it. A reading process commits its overlay (in memory) and sees what
    /// the writing process committed since.
    pub(super) fn commit(&self) -> Result<(), String> {
        self.commit_keeping(false)
    }

    /// `commit`, and the stamps written beside the index for that commit when
    /// `keep_stamps` (`stamps_file.rs`): a refresh's commits do, an ask's do not.
    pub(super) fn commit_keeping(&self, keep_stamps: bool) -> Result<(), String> {
        let store = self.store();
        let Some(writer) = &store.writer else {
            if let Some(overlay) = self.overlay() {
                let writer = overlay
                    .store
                    .writer
                    .as_ref()
                    .expect("an overlay has a writer");
                write(writer)
                    .commit()
                    .map_err(|e| format!("cannot commit the index's overlay: {e}"))?;
                let _ = overlay.store.reader.reload();
            }
            let _ = store.reader.reload();
            return Ok(());
        };
        // The stamps are taken while the writer is held for the commit: a file's stamp
        // changes with its documents under the writer's read side (`replace`, `remove`),
        // so these are the committed documents' own (`stamps_file.rs`).
        let committed = {
            let mut writer = write(writer);
            writer.commit().map(|opstamp| {
                let on_disk = matches!(store.location, Location::Disk(_));
                (keep_stamps && on_disk).then(|| (opstamp, lock(&self.files).clone()))
            })
        };
        let committed = committed.map(|kept| {
            if let (Some((opstamp, stamps)), Location::Disk(dir)) = (kept, &store.location) {
                super::stamps_file::write(dir, opstamp, &stamps);
            }
        });
        if let Err(error) = committed {
            let reason = match &store.location {
                Location::Disk(dir) => {
                    format!("cannot write the index at {}: {error}", dir.display())
                }
                Location::Memory(_) => format!("cannot commit the index: {error}"),
            };
            tracing::warn!("{reason}");
            return Err(reason);
        }
        if let Err(error) = store.reader.reload() {
            tracing::warn!("index reload failed: {error}");
        }
        Ok(())
    }

    /// From now on the index lives in memory, empty: the next refresh builds it there.
    /// `reason` is kept for the user (`RetrievalIndex::fault`).
    pub(super) fn fall_back_to_memory(&self, reason: String) {
        tracing::warn!("index kept in memory from now on: {reason}");
        *write(&self.store) = Arc::new(Store::in_memory(reason.clone()));
        *write(&self.overlay) = None;
        lock(&self.files).clear();
        lock(&self.editor_paths).clear();
        // The old writer's failure is not the new one's.
        lock(&self.writer_failure).take();
        *lock(&self.fault) = Some(reason);
    }
}

//! A process that finds the workspace's index on disk held by another (a second editor
//! window, the command line beside a server) reads that index instead of building one of
//! its own in memory: it follows the writer's build through its progress file, takes the
//! writer lock over if the writer goes away, and once the build is complete puts only
//! its own changes (files changed since, its open documents) in an overlay in memory.

use std::time::Duration;

use rustc_hash::FxHashMap;

use super::analyze::FileStamp;
use super::build::Progress;
use super::store::{self, Location};
use super::writer::Store;
use super::{lock, progress_file, write, Inner};

/// How often the writer's progress file is read while its build runs.
const POLL: Duration = Duration::from_millis(200);

/// What became of the wait.
pub enum Followed {
    /// The writer's build is complete: the index on disk can be followed.
    Complete,
    /// The writer went away and this process holds the writer lock now.
    Took,
}

/// Waits until the writing process's build of the index is complete, reporting its
/// progress as this index's coverage, or takes the index over when the writer went away
/// (its lock is free).
pub fn wait_for_writer(inner: &Inner, progress: &dyn Fn(Progress)) -> Followed {
    loop {
        let store = inner.store();
        if take_over(inner, &store) {
            return Followed::Took;
        }
        let Location::Disk(dir) = &store.location else {
            return Followed::Complete;
        };
        match progress_file::read(dir) {
            Some(writer) if writer.complete => return Followed::Complete,
            Some(writer) => {
                inner.coverage.walked(writer.files_total);
                inner.coverage.set_indexed(writer.files_indexed);
                progress(Progress::Files {
                    done: writer.files_indexed,
                    total: writer.files_total,
                });
            }
            // A writer from before progress files, or one that has not written yet.
            None => {}
        }
        // Asks meanwhile search what the writer has committed.
        let _ = store.reader.reload();
        std::thread::sleep(POLL);
    }
}

/// Takes the writer lock when it is free: then this process writes the index from now
/// on, starting from what is committed.
fn take_over(inner: &Inner, store: &Store) -> bool {
    let Ok(writer) = store::writer(&store.index) else {
        return false;
    };
    let files = store::stamps_of(&store.index, &store.location, inner.fields).unwrap_or_default();
    tracing::info!("taking over the workspace index from a process that has ended");
    *write(&inner.store) = std::sync::Arc::new(Store::new(
        store.index.clone(),
        Some(writer),
        store.location.clone(),
    ));
    *write(&inner.overlay) = None;
    *lock(&inner.files) = files;
    true
}

/// What the index holds for a reading process: the writer's committed stamps, with
/// this process's own changes over them (the overlay's paths keep the stamps they were
/// indexed with, or are gone).
pub fn current_stamps(inner: &Inner) -> FxHashMap<String, FileStamp> {
    let store = inner.store();
    let _ = store.reader.reload();
    let mut stamps =
        store::stamps_of(&store.index, &store.location, inner.fields).unwrap_or_default();
    if let Some(overlay) = inner.overlay() {
        let known = lock(&inner.files);
        for path in lock(&overlay.hidden).iter() {
            match known.get(path) {
                Some(stamp) => stamps.insert(path.clone(), *stamp),
                None => stamps.remove(path),
            };
        }
    }
    stamps
}

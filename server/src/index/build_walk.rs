//! Which files a refresh considers: every regular file the workspace walker admits, up
//! to the bounds, each under one path. A symlink to a file inside the workspace is
//! another name for that file; it is indexed only when the file itself is not walked
//! (it lies under an ignored folder, say), and then under one link's name: the same
//! text under two paths would take two of an answer's places and cite one definition
//! twice.

use std::path::PathBuf;
use std::time::UNIX_EPOCH;

use rustc_hash::FxHashSet;

use super::build::{Bounds, MAX_FILE_BYTES};
use super::Inner;
use crate::workspace::walk;

pub struct Walked {
    pub relative: String,
    pub absolute: PathBuf,
    pub size: u64,
    pub mtime: u64,
}

pub fn mtime_ns(metadata: &std::fs::Metadata) -> u64 {
    metadata
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Every file to index, up to `bounds`; the second value says what was left out.
pub fn walk_files(
    inner: &Inner,
    bounds: Bounds,
    unreached: &walk::Unreached,
) -> (Vec<Walked>, Option<String>) {
    let sandbox = &inner.sandbox;
    let mut files = Files::new(inner, bounds);
    // Symlinks wait until the walk is over, when it is known which targets it reached.
    let mut links: Vec<(Walked, String)> = Vec::new();
    for entry in walk::builder(sandbox.root()).build() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                unreached.note(sandbox, &error);
                continue;
            }
        };
        if !walk::is_file(&entry) || !walk::admits(sandbox, &entry) {
            continue;
        }
        let is_link = entry.path_is_symlink();
        let metadata = if is_link {
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
        let Some(relative) = sandbox.relative(entry.path()) else {
            continue;
        };
        let walked = Walked {
            relative,
            size: metadata.len(),
            mtime: mtime_ns(&metadata),
            absolute: entry.into_path(),
        };
        if is_link {
            // The sandbox admitted it, so its target is inside the root.
            let target = std::fs::canonicalize(&walked.absolute)
                .ok()
                .and_then(|target| sandbox.relative(&target));
            if let Some(target) = target {
                links.push((walked, target));
            }
            continue;
        }
        if let Err(why) = files.push(walked) {
            return (files.list, Some(why));
        }
    }
    let mut reached: FxHashSet<String> = files.list.iter().map(|f| f.relative.clone()).collect();
    for (link, target) in links {
        if !reached.insert(target) {
            continue;
        }
        if let Err(why) = files.push(link) {
            return (files.list, Some(why));
        }
    }
    (files.list, None)
}

/// The files so far, within the bounds.
struct Files<'a> {
    inner: &'a Inner,
    bounds: Bounds,
    list: Vec<Walked>,
    bytes: u64,
}

impl<'a> Files<'a> {
    fn new(inner: &'a Inner, bounds: Bounds) -> Files<'a> {
        Files {
            inner,
            bounds,
            list: Vec::new(),
            bytes: 0,
        }
    }

    /// Adds a file, or says what is left out when it would pass the bounds.
    fn push(&mut self, file: Walked) -> Result<(), String> {
        if self.list.len() >= self.bounds.max_files
            || self.bytes + file.size > self.bounds.max_bytes
        {
            return Err(format!(
                "the workspace is too large to index fully: only the first {} files ({} MB) are indexed",
                self.list.len(),
                self.bytes / (1024 * 1024)
            ));
        }
        self.bytes += file.size;
        self.list.push(file);
        self.inner.coverage.walked(self.list.len());
        Ok(())
    }
}

//! The one workspace walker: gitignore-aware (ripgrep's `ignore` crate), never
//! descending into `.git/` or a kernel pseudo filesystem (`/proc`, `/sys`, `/dev`, which
//! a root of `/` contains), never yielding secret files or symlinks that leave the root;
//! what it cannot reach is counted ([`Unreached`]).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use ignore::{DirEntry, WalkBuilder};

use super::sandbox::{is_refused_name, is_system_path, Sandbox};

/// A walker over `start` (already resolved by the sandbox). It never descends into
/// `.git/` nor yields secret files; symlinks are checked per entry with [`admits`].
/// Hidden files are included (`.github/` is worth searching).
pub fn builder(start: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(start);
    builder
        .hidden(false)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(true)
        .ignore(true)
        .parents(true)
        // Fixture workspaces and fresh checkouts may have no `.git`; honour their
        // `.gitignore` anyway, as a user would expect.
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| {
            let refused = entry.file_name().to_str().is_some_and(is_refused_name);
            !refused && !is_system_path(entry.path())
        });
    builder
}

/// [`builder`] over several directories at once (a tool's scope over every root of the
/// workspace, `Sandbox::scope`): each is walked as `builder` walks one.
pub fn builder_over(starts: &[&Path]) -> WalkBuilder {
    let mut builder = builder(starts.first().copied().unwrap_or(Path::new(".")));
    for start in starts.iter().skip(1) {
        builder.add(start);
    }
    builder
}

/// Whether a walked entry may be shown; symlinks are checked against the root.
pub fn admits(sandbox: &Sandbox, entry: &DirEntry) -> bool {
    let is_symlink = entry.path_is_symlink();
    sandbox.admits_entry(entry.path(), is_symlink)
}

/// Opens a file the walk found, for reading: an entry whose type the directory listing
/// gave as a regular file without a second stat by path; a symlink as any path.
pub fn open_file(entry: &DirEntry) -> std::io::Result<std::fs::File> {
    match entry.file_type() {
        Some(ft) if ft.is_file() => super::read::open_known_regular(entry.path()),
        _ => super::read::open_regular_file(entry.path()),
    }
}

/// Whether an entry is a regular file, or a symlink the sandbox admitted that points
/// at one (FIFOs, sockets and devices are not). Readers still open through
/// `read::open_regular_file`: the entry may change between the walk and the read.
pub fn is_file(entry: &DirEntry) -> bool {
    match entry.file_type() {
        Some(ft) if ft.is_file() => true,
        Some(ft) if ft.is_symlink() => entry.path().is_file(),
        _ => false,
    }
}

/// What a walk could not reach: a directory it may not read, a path longer than the
/// system allows (PATH_MAX), a file that cannot be opened. Counted as the walk goes (by
/// any of its threads), with the first one named, so a listing or the index can say
/// that it is incomplete rather than leave those files out without a word.
#[derive(Default)]
pub struct Unreached {
    count: AtomicUsize,
    first: Mutex<Option<String>>,
}

impl Unreached {
    /// Notes a walk error (the walker yields them in place of an entry).
    pub fn note(&self, sandbox: &Sandbox, error: &ignore::Error) {
        let (path, why) = error_parts(error);
        self.note_path(sandbox, path, &why);
    }

    /// Notes a path that could not be read, and why.
    pub fn note_path(&self, sandbox: &Sandbox, path: Option<&Path>, why: &str) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none() {
            let shown = path.and_then(|p| sandbox.relative(p));
            *first = Some(match shown {
                Some(shown) => format!("{shown}: {why}"),
                None => why.to_string(),
            });
        }
    }

    pub fn count(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// `(2 paths could not be read, such as deep/…: File name too long)`, when any.
    pub fn note_line(&self) -> Option<String> {
        let count = self.count();
        if count == 0 {
            return None;
        }
        let first = self.first.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let what = if count == 1 { "path" } else { "paths" };
        Some(match first {
            Some(first) => format!("({count} {what} could not be read, such as {first})"),
            None => format!("({count} {what} could not be read)"),
        })
    }
}

/// The path an `ignore` error names and its message without that path.
fn error_parts(error: &ignore::Error) -> (Option<&Path>, String) {
    match error {
        ignore::Error::WithPath { path, err } => (Some(path.as_path()), error_parts(err).1),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_parts(err)
        }
        ignore::Error::Partial(errors) => errors
            .first()
            .map_or((None, error.to_string()), error_parts),
        ignore::Error::Io(io) => (None, io.to_string()),
        other => (None, other.to_string()),
    }
}

//! The one workspace walker: gitignore-aware (ripgrep's `ignore` crate), never
//! descending into `.git/` or a kernel pseudo filesystem (`/proc`, `/sys`, `/dev`, which
//! a root of `/` contains), never yielding secret files or symlinks that leave the root.

use std::path::Path;

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

/// Whether a walked entry may be shown; symlinks are checked against the root.
pub fn admits(sandbox: &Sandbox, entry: &DirEntry) -> bool {
    let is_symlink = entry.path_is_symlink();
    sandbox.admits_entry(entry.path(), is_symlink)
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

//! Finding and opening the git repository a root lies in, without trusting it.
//!
//! A root may be the repository's work tree, a folder inside a larger one, a linked
//! worktree (`.git` is a file naming the real git dir) or a submodule (its git dir lives
//! under the superproject's `.git/modules/`): `gix`'s discovery walks up from the root and
//! follows those files, so all of them get their full history.
//!
//! A cloned repository is untrusted input. It is opened isolated: no system, global or
//! user configuration, no environment variables, no `git` binary asked where its
//! configuration lives. Nothing here or in the rest of `history/` calls what could run a
//! program the repository's configuration names (filters, textconv, fsmonitor, hooks,
//! credential helpers): blobs are read from the object database as stored, never
//! converted, and the work tree is read as plain files through the sandbox.

use std::path::{Path, PathBuf};

use gix::bstr::{BStr, ByteSlice};
use gix::ObjectId;

use super::Reason;

/// Bytes of decompressed delta bases each thread's handle keeps. 2 MB and a 1 MB object
/// cache read numpy's 41,819 commits as fast as 8 and 4 did (3.4–3.6 s), at a peak 9 MB
/// lower (medians of five runs each, interleaved: 109 against 118 MB).
const DELTA_BASE_CACHE: usize = 2 * 1024 * 1024;
/// Bytes of objects each thread's handle keeps.
const OBJECT_CACHE: usize = 1024 * 1024;

/// A git repository and where a root lies in its work tree.
pub struct Repository {
    repo: gix::ThreadSafeRepository,
    /// The root's path inside the work tree with `/` separators and a trailing `/`, or
    /// empty when the root is the work tree itself.
    prefix: String,
    work_tree: PathBuf,
}

impl Repository {
    /// The repository `root` (canonical) lies in, opened isolated.
    pub fn open(root: &Path) -> Result<Repository, Reason> {
        // The cache of decompressed delta bases, per thread, is gix's 96 MB by default
        // (or what the repository's configuration says): most of a cold read's memory.
        // A few megabytes serve a tree diff's locality nearly as well (docs/history.md,
        // "Cost").
        let isolated = gix::open::Options::isolated()
            .config_overrides([format!("core.deltaBaseCacheLimit={DELTA_BASE_CACHE}")]);
        let trust = gix::sec::trust::Mapping {
            full: isolated.clone(),
            reduced: isolated,
        };
        let repo = gix::ThreadSafeRepository::discover_opts(root, Default::default(), trust)
            .map_err(|error| {
                tracing::debug!("no git repository at {}: {error}", root.display());
                Reason::NoRepository
            })?;
        let work_tree = repo
            .work_dir()
            .and_then(|dir| dir.canonicalize().ok())
            .ok_or(Reason::NoRepository)?;
        let inside = root
            .strip_prefix(&work_tree)
            .map_err(|_| Reason::NoRepository)?;
        let mut prefix = String::new();
        for part in inside.components() {
            prefix.push_str(&part.as_os_str().to_string_lossy());
            prefix.push('/');
        }
        Ok(Repository {
            repo,
            prefix,
            work_tree,
        })
    }

    /// A handle for this thread, with a cache for the objects tree diffs read again and
    /// again (each commit's tree beside its parent's).
    pub fn local(&self) -> gix::Repository {
        let mut repo = self.repo.to_thread_local();
        repo.object_cache_size_if_unset(OBJECT_CACHE);
        repo
    }

    /// The commit HEAD points at: `Ok(None)` for an unborn HEAD (a repository with no
    /// commit yet).
    pub fn head(&self) -> Result<Option<ObjectId>, Reason> {
        let repo = self.repo.to_thread_local();
        let head = repo.head().map_err(|error| {
            tracing::debug!("cannot read HEAD: {error}");
            Reason::UnreadableObjects
        })?;
        Ok(head.id().map(|id| id.detach()))
    }

    /// Whether the repository is a shallow clone (its oldest commits lack parents).
    pub fn is_shallow(&self) -> bool {
        self.repo.to_thread_local().is_shallow().unwrap_or(false)
    }

    /// A path of the repository (relative to its work tree) as a path of the root, or
    /// `None` when it lies outside the root.
    pub fn to_root(&self, repo_path: &BStr) -> Option<String> {
        let path = repo_path.to_str().ok()?;
        let inside = path.strip_prefix(self.prefix.as_str())?;
        (!inside.is_empty()).then(|| inside.to_string())
    }

    /// A root-relative path as a path of the repository.
    pub fn to_repo(&self, root_path: &str) -> String {
        format!("{}{}", self.prefix, root_path.trim_start_matches("./"))
    }

    /// The root's place in the work tree (`""` for the work tree itself).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub fn work_tree(&self) -> &Path {
        &self.work_tree
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_outside_any_repository_has_none() {
        let dir = tempfile::tempdir().unwrap();
        // A temp dir may itself lie inside a repository on a developer's machine;
        // a `.git` file that names nothing stops discovery there with an error.
        std::fs::write(dir.path().join(".git"), "gitdir: /nonexistent/nowhere\n").unwrap();
        let root = dir.path().canonicalize().unwrap();
        assert!(matches!(Repository::open(&root), Err(Reason::NoRepository)));
    }
}

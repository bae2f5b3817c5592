//! The uncommitted changes of the work tree against HEAD (`git_diff`).
//!
//! What is compared, staged and unstaged together, is HEAD's tree with the files as they
//! are on disk. This file holds what needs the git library: HEAD's files under the root
//! (`Baseline`), the git index's stat data, by which a file unchanged since the index
//! recorded HEAD's version is skipped without being read, the blob hash a file read from
//! disk is compared with, and the unified diff of two texts. The work tree itself is
//! walked and read by the caller, through the workspace's sandbox and redaction.
//!
//! Never the library's status, worktree or filter functions: those may run programs a
//! repository's configuration names (clean and smudge filters, fsmonitor). Blobs are read
//! as stored.

use std::collections::BTreeMap;
use std::path::Path;

use gix::bstr::ByteSlice;
use gix::diff::blob::{Algorithm, Diff, InternedInput};
use gix::index::entry::Stat;
use gix::ObjectId;
use rustc_hash::{FxHashMap, FxHashSet};

use super::{Reason, Repository};

/// HEAD's files and the git index's entries under one part of the root.
pub struct Baseline {
    local: gix::Repository,
    /// Root-relative path → blob id: HEAD's regular and executable files (symlinks and
    /// submodules are not compared).
    head: BTreeMap<String, ObjectId>,
    /// HEAD's symlinks and submodules: tracked, but never compared (nor is anything
    /// inside a submodule).
    others: FxHashSet<String>,
    /// Root-relative path → what the git index recorded (conflicted entries have no
    /// usable stat: `None`).
    index: FxHashMap<String, Option<(ObjectId, Stat)>>,
    /// When the git index was written (seconds): an entry changed at or after it is
    /// "racy", and its file is read whatever its stat says.
    index_written: Option<i64>,
}

impl Baseline {
    /// HEAD's files under `under` (a root-relative file or folder, without a trailing
    /// `/`; empty for the whole root) in the repository `root` (canonical) lies in.
    pub fn open(root: &Path, under: &str) -> Result<Baseline, Reason> {
        let repo = Repository::open(root)?;
        let head = repo.head()?.ok_or(Reason::UnbornHead)?;
        let local = repo.local();
        let under = under.trim_matches('/');
        let inside = |path: &str| {
            under.is_empty()
                || path == under
                || (path.starts_with(under) && path.as_bytes().get(under.len()) == Some(&b'/'))
        };
        let (head_files, others) = read_head(&repo, &local, head, under, &inside)?;

        let mut index = FxHashMap::default();
        let mut index_written = None;
        match local.index_or_empty() {
            Ok(file) => {
                index_written = Some(file.timestamp().unix_seconds());
                for entry in file.entries() {
                    let Some(path) = repo.to_root(entry.path(&file)) else {
                        continue;
                    };
                    if !inside(&path) || entry.mode.is_sparse() {
                        continue;
                    }
                    let usable = entry.stage_raw() == 0;
                    let recorded = usable.then_some((entry.id, entry.stat));
                    index
                        .entry(path)
                        .and_modify(|seen: &mut Option<(ObjectId, Stat)>| *seen = None)
                        .or_insert(recorded);
                }
            }
            Err(error) => tracing::debug!("git_diff: no git index: {error}"),
        }
        Ok(Baseline {
            local,
            head: head_files,
            others,
            index,
            index_written,
        })
    }

    /// HEAD's files, root-relative, sorted.
    pub fn head_paths(&self) -> impl Iterator<Item = &str> {
        self.head.keys().map(String::as_str)
    }

    pub fn in_head(&self, path: &str) -> bool {
        self.head.contains_key(path)
    }

    /// Whether the git index holds `path` (staged, whether or not HEAD has it).
    pub fn in_index(&self, path: &str) -> bool {
        self.index.contains_key(path)
    }

    /// Whether `path` is, or lies inside, a symlink or submodule HEAD holds.
    pub fn in_other_entry(&self, path: &str) -> bool {
        self.others.contains(path)
            || path
                .match_indices('/')
                .any(|(at, _)| self.others.contains(&path[..at]))
    }

    /// Every folder (root-relative, without a trailing `/`) holding a file HEAD or the
    /// git index holds: an untracked file outside them all is shown by its folder.
    pub fn tracked_folders(&self) -> FxHashSet<String> {
        let mut folders = FxHashSet::default();
        for path in self
            .head
            .keys()
            .chain(self.index.keys())
            .chain(&self.others)
        {
            for (at, _) in path.match_indices('/') {
                folders.insert(path[..at].to_string());
            }
        }
        folders
    }

    /// Whether the file at `absolute` is HEAD's version of `path` by the git index's
    /// word alone: the index holds HEAD's blob for it, and the file's stat data is what
    /// the index recorded, not changed at or after the index was written. `false` means
    /// "read it and compare", not "changed".
    pub fn unchanged_by_stat(&self, path: &str, absolute: &Path) -> bool {
        let (Some(head), Some(Some((id, recorded)))) = (self.head.get(path), self.index.get(path))
        else {
            return false;
        };
        if head != id {
            return false;
        }
        let Ok(metadata) = gix::index::fs::Metadata::from_path_no_follow(absolute) else {
            return false;
        };
        if !metadata.is_file() {
            return false;
        }
        let Ok(now) = Stat::from_fs(&metadata) else {
            return false;
        };
        let options = gix::index::entry::stat::Options::default();
        let racy = self
            .index_written
            .is_none_or(|written| i64::from(recorded.mtime.secs) >= written);
        !racy && recorded.matches(&now, options)
    }

    /// Whether `bytes` are HEAD's version of `path`.
    pub fn same_as_head(&self, path: &str, bytes: &[u8]) -> bool {
        let Some(head) = self.head.get(path) else {
            return false;
        };
        gix::objs::compute_hash(self.local.object_hash(), gix::objs::Kind::Blob, bytes)
            .is_ok_and(|id| id == *head)
    }

    /// HEAD's version of `path`, as stored.
    pub fn head_bytes(&self, path: &str) -> Option<Vec<u8>> {
        let id = self.head.get(path)?;
        Some(self.local.find_blob(*id).ok()?.detach().data)
    }
}

type HeadFiles = (BTreeMap<String, ObjectId>, FxHashSet<String>);

/// HEAD's blobs under `under` (root-relative) by root-relative path, and its symlinks
/// and submodules there.
fn read_head(
    repo: &Repository,
    local: &gix::Repository,
    head: ObjectId,
    under: &str,
    inside: &dyn Fn(&str) -> bool,
) -> Result<HeadFiles, Reason> {
    let unreadable = |error: gix::Error| {
        tracing::debug!("git_diff: cannot read HEAD's tree: {error}");
        Reason::UnreadableObjects
    };
    let tree = local
        .find_commit(head)
        .and_then(|commit| commit.tree())
        .map_err(unreadable)?;
    let start = repo.to_repo(under).trim_end_matches('/').to_string();
    let mut head_files = BTreeMap::new();
    let mut others = FxHashSet::default();
    let mut add = |repo_path: &[u8], mode: gix::objs::tree::EntryMode, id: ObjectId| {
        if mode.is_tree() {
            return;
        }
        let Some(path) = repo.to_root(repo_path.as_bstr()).filter(|p| inside(p)) else {
            return;
        };
        if mode.is_blob() {
            head_files.insert(path, id);
        } else {
            others.insert(path);
        }
    };
    let subtree = if start.is_empty() {
        Some(tree)
    } else {
        match tree.lookup_entry_by_path(&start) {
            Ok(Some(entry)) if entry.mode().is_tree() => {
                entry.object().ok().map(|object| object.into_tree())
            }
            Ok(Some(entry)) => {
                add(start.as_bytes(), entry.mode(), entry.object_id());
                None
            }
            _ => None,
        }
    };
    if let Some(subtree) = subtree {
        let files = subtree
            .traverse()
            .breadthfirst
            .files()
            .map_err(unreadable)?;
        let mut full: Vec<u8> = start.clone().into_bytes();
        for file in files {
            full.truncate(start.len());
            if !full.is_empty() {
                full.push(b'/');
            }
            full.extend_from_slice(&file.filepath);
            add(&full, file.mode, file.oid);
        }
    }
    Ok((head_files, others))
}

/// The hunks of a unified diff from `old` to `new` with `context` lines around each
/// change, as lines (`@@ -a,b +c,d @@`, then ` `, `-`, `+` lines, and `\ No newline at
/// end of file` after a last line without one); empty when the texts are equal.
pub fn unified(old: &str, new: &str, context: u32) -> Vec<String> {
    let input = InternedInput::new(old, new);
    let mut diff = Diff::compute(Algorithm::Histogram, &input);
    diff.postprocess_lines(&input);
    let hunks: Vec<_> = diff.hunks().collect();
    let before_len = input.before.len() as u32;
    let mut out = Vec::new();
    let mut at = 0;
    while at < hunks.len() {
        // Hunks closer than twice the context share one header.
        let mut last = at;
        while last + 1 < hunks.len()
            && hunks[last + 1].before.start - hunks[last].before.end <= 2 * context
        {
            last += 1;
        }
        let first = &hunks[at];
        let before_start = first.before.start.saturating_sub(context);
        let lead = first.before.start - before_start;
        let after_start = first.after.start - lead;
        let before_end = (hunks[last].before.end + context).min(before_len);
        let trail = before_end - hunks[last].before.end;
        let after_end = hunks[last].after.end + trail;
        out.push(format!(
            "@@ -{} +{} @@",
            span(before_start, before_end),
            span(after_start, after_end)
        ));
        let mut line = |prefix: char, token: gix::diff::blob::Token| {
            let text: &str = input.interner[token];
            let shown = text.strip_suffix('\n').unwrap_or(text);
            out.push(format!(
                "{prefix}{}",
                shown.strip_suffix('\r').unwrap_or(shown)
            ));
            if !text.ends_with('\n') {
                out.push("\\ No newline at end of file".to_string());
            }
        };
        let mut position = before_start;
        for hunk in &hunks[at..=last] {
            for i in position..hunk.before.start {
                line(' ', input.before[i as usize]);
            }
            for i in hunk.before.clone() {
                line('-', input.before[i as usize]);
            }
            for i in hunk.after.clone() {
                line('+', input.after[i as usize]);
            }
            position = hunk.before.end;
        }
        for i in position..before_end {
            line(' ', input.before[i as usize]);
        }
        at = last + 1;
    }
    out
}

/// `a,b` of a hunk header for the 0-based lines `start..end`: an empty span names the
/// line before it, as git writes it.
fn span(start: u32, end: u32) -> String {
    let len = end - start;
    if len == 0 {
        format!("{start},0")
    } else {
        format!("{},{len}", start + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let output = std::process::Command::new("git")
            .args(["-c", "commit.gpgsign=false", "-c", "user.name=T"])
            .args([
                "-c",
                "user.email=t@example.com",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
    }

    #[test]
    fn the_git_index_vouches_for_a_file_untouched_since_it_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        let file = root.join("a.txt");
        std::fs::write(&file, "one\n").unwrap();
        let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
        let handle = std::fs::File::options().append(true).open(&file).unwrap();
        handle.set_modified(old).unwrap();
        drop(handle);
        git(&root, &["add", "a.txt"]);
        git(&root, &["commit", "-q", "-m", "one"]);
        let baseline = Baseline::open(&root, "").unwrap();
        assert_eq!(baseline.head_paths().collect::<Vec<_>>(), ["a.txt"]);
        assert!(baseline.unchanged_by_stat("a.txt", &file));
        assert!(baseline.same_as_head("a.txt", b"one\n"));
        assert_eq!(baseline.head_bytes("a.txt").unwrap(), b"one\n");
        std::fs::write(&file, "two\n").unwrap();
        assert!(!baseline.unchanged_by_stat("a.txt", &file));
        assert!(!baseline.same_as_head("a.txt", b"two\n"));
        // A folder's part only.
        assert_eq!(
            Baseline::open(&root, "src").unwrap().head_paths().count(),
            0
        );
    }

    #[test]
    fn a_change_has_three_lines_of_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n";
        assert_eq!(
            unified(old, new, 3),
            [
                "@@ -2,7 +2,7 @@",
                " 2",
                " 3",
                " 4",
                "-5",
                "+five",
                " 6",
                " 7",
                " 8"
            ]
        );
        assert!(unified(old, old, 3).is_empty());
    }

    #[test]
    fn new_and_deleted_texts_and_a_missing_last_newline() {
        assert_eq!(unified("", "a\nb\n", 3), ["@@ -0,0 +1,2 @@", "+a", "+b"]);
        assert_eq!(unified("a\n", "", 3), ["@@ -1,1 +0,0 @@", "-a"]);
        assert_eq!(
            unified("a\nb\n", "a\nb", 3),
            [
                "@@ -1,2 +1,2 @@",
                " a",
                "-b",
                "+b",
                "\\ No newline at end of file"
            ]
        );
    }

    #[test]
    fn near_changes_share_a_hunk_and_far_ones_do_not() {
        let text = |changed: &[(usize, &str)]| -> String {
            (1..=30)
                .map(|n| match changed.iter().find(|(at, _)| *at == n) {
                    Some((_, word)) => format!("{word}\n"),
                    None => format!("{n}\n"),
                })
                .collect()
        };
        let old = text(&[]);
        let near = text(&[(10, "ten"), (15, "fifteen")]);
        assert_eq!(
            unified(&old, &near, 3)
                .iter()
                .filter(|l| l.starts_with("@@"))
                .count(),
            1
        );
        let far = text(&[(2, "two"), (25, "twenty-five")]);
        assert_eq!(
            unified(&old, &far, 3)
                .iter()
                .filter(|l| l.starts_with("@@"))
                .collect::<Vec<_>>(),
            ["@@ -1,5 +1,5 @@", "@@ -22,7 +22,7 @@"]
        );
    }
}

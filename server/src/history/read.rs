//! Reading commits out of the repository: which commits are new since the last read
//! (and which are gone, when HEAD moved sideways), and for each its author, time,
//! message and the paths it changed against its first parent, renames followed.
//!
//! The walk only lists ids (cheap: commit objects, or the commit-graph file); the tree
//! diffs, the expensive part, run on every core over slices of that list, each thread
//! with its own repository handle and diff cache.

use std::sync::atomic::{AtomicBool, Ordering};

use gix::bstr::ByteSlice;
use gix::ObjectId;

use super::repository::Repository;
use super::{ChangedFile, CommitRecord, Reason};

/// Renames with edits are told apart from a deletion and an addition up to this many
/// candidates per commit (git's own default is 1000; exact renames are always found). A
/// mass change (a vendored library, a tree moved and reformatted) compared every pair of
/// its files' contents: at 1000 a few such commits made numpy's 41,819-commit history
/// a 42-46 s read (docs/benchmarks.md, "History"); a commit that large does not vote.
const RENAME_LIMIT: usize = 40;

/// A blob larger than this is compared for a rename by its id alone (an exact rename is
/// still found), never loaded: a generated file or a data dump of several MB
/// decompressed whole held the read's largest buffers (heaptrack on numpy: 11 MB of its
/// 61 MB heap peak). On numpy the renames found are the same 7,020, the read's peak is
/// 20 MB lower and it takes 2.7 s instead of 3.4. git's `core.bigFileThreshold` treats
/// files above 512 MB so.
const LARGE_BLOB_BYTES: u64 = 1024 * 1024;

/// What a walk found.
pub struct Walked {
    /// Newest first.
    pub ids: Vec<ObjectId>,
    /// Why it stopped before the root commits, if it did.
    pub stopped: Option<Reason>,
}

/// The commits reachable from `head` but not from `hidden`, newest first, at most
/// `max`.
pub fn walk(repo: &Repository, head: ObjectId, hidden: Option<ObjectId>, max: usize) -> Walked {
    let local = repo.local();
    let mut platform = local
        .rev_walk([head])
        .sorting(gix::revision::walk::Sorting::ByCommitTime(
            Default::default(),
        ));
    if let Some(hidden) = hidden {
        platform = platform.with_hidden([hidden]);
    }
    let mut walked = Walked {
        ids: Vec::new(),
        stopped: None,
    };
    let iter = match platform.all() {
        Ok(iter) => iter,
        Err(error) => {
            tracing::warn!("history: cannot walk from {head}: {error}");
            walked.stopped = Some(Reason::UnreadableObjects);
            return walked;
        }
    };
    for info in iter {
        match info {
            Ok(info) => {
                if walked.ids.len() == max {
                    walked.stopped = Some(Reason::Bound);
                    break;
                }
                walked.ids.push(info.id);
            }
            Err(error) => {
                tracing::warn!("history: the walk stopped: {error}");
                walked.stopped = Some(Reason::UnreadableObjects);
                break;
            }
        }
    }
    walked
}

/// Reads each commit of `ids` (any order), on `threads` threads, until `stop` is set. A
/// commit that cannot be read is left out and counted in the second value.
pub fn read_commits(
    repo: &Repository,
    ids: &[ObjectId],
    threads: usize,
    stop: &AtomicBool,
) -> (Vec<CommitRecord>, usize) {
    if ids.is_empty() {
        return (Vec::new(), 0);
    }
    let per = ids.len().div_ceil(threads.max(1));
    std::thread::scope(|scope| {
        let handles: Vec<_> = ids
            .chunks(per)
            .map(|slice| scope.spawn(move || read_slice(repo, slice, stop)))
            .collect();
        let mut records = Vec::with_capacity(ids.len());
        let mut unreadable = 0;
        for handle in handles {
            match handle.join() {
                Ok((read, missed)) => {
                    records.extend(read);
                    unreadable += missed;
                }
                Err(_) => unreadable += per,
            }
        }
        (records, unreadable)
    })
}

fn read_slice(
    repo: &Repository,
    ids: &[ObjectId],
    stop: &AtomicBool,
) -> (Vec<CommitRecord>, usize) {
    let local = repo.local();
    let mut cache = match local.diff_resource_cache_for_tree_diff() {
        Ok(cache) => cache,
        Err(error) => {
            tracing::warn!("history: no diff cache: {error}");
            return (Vec::new(), ids.len());
        }
    };
    cache.filter.options.large_file_threshold_bytes = LARGE_BLOB_BYTES;
    let mut records = Vec::with_capacity(ids.len());
    let mut unreadable = 0;
    for id in ids {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        match read_one(repo, &local, &mut cache, *id) {
            Some(record) => records.push(record),
            None => unreadable += 1,
        }
        cache.clear_resource_cache_keep_allocation();
    }
    (records, unreadable)
}

fn read_one(
    repo: &Repository,
    local: &gix::Repository,
    cache: &mut gix::diff::blob::Platform,
    id: ObjectId,
) -> Option<CommitRecord> {
    let commit = local.find_commit(id).ok()?;
    let Described {
        author,
        time,
        subject,
        body,
    } = describe(&commit);
    let tree = commit.tree().ok()?;
    // A first parent missing from a shallow clone (or lost) gives no changed paths,
    // rather than every file of the tree.
    let parent_tree = match commit.parent_ids().next() {
        Some(parent) => local
            .find_commit(parent)
            .ok()
            .and_then(|parent| parent.tree().ok()),
        None => Some(local.empty_tree()),
    };
    let mut files = Vec::new();
    if let Some(parent_tree) = parent_tree {
        // Telling a rename from a deletion and an addition compares their blobs; where
        // a blob is not there (a partial clone, `--filter=blob:none`) that fails, and
        // the commit is read again without renames rather than left out.
        let mut read = false;
        for renames in [true, false] {
            files.clear();
            let mut changes = parent_tree.changes().ok()?;
            changes.options(|options| {
                options.track_path();
                options.track_rewrites(renames.then_some(gix::diff::Rewrites {
                    copies: None,
                    percentage: Some(0.5),
                    limit: RENAME_LIMIT,
                    track_empty: false,
                }));
            });
            let outcome = changes.for_each_to_obtain_tree_with_cache(&tree, cache, |change| {
                use gix::object::tree::diff::Change;
                let (location, old, mode) = match &change {
                    Change::Addition {
                        location,
                        entry_mode,
                        ..
                    }
                    | Change::Deletion {
                        location,
                        entry_mode,
                        ..
                    }
                    | Change::Modification {
                        location,
                        entry_mode,
                        ..
                    } => (*location, None, *entry_mode),
                    Change::Rewrite {
                        source_location,
                        location,
                        entry_mode,
                        ..
                    } => (*location, Some(*source_location), *entry_mode),
                };
                if !mode.is_tree() {
                    let old = old.and_then(|old| repo.to_root(old));
                    let new = repo.to_root(location);
                    match (new, old) {
                        (Some(path), old_path) => files.push(ChangedFile { path, old_path }),
                        // Moved out of the root: it changed the old path.
                        (None, Some(path)) => files.push(ChangedFile {
                            path,
                            old_path: None,
                        }),
                        (None, None) => {}
                    }
                }
                Ok(std::ops::ControlFlow::Continue(()))
            });
            if outcome.is_ok() {
                read = true;
                break;
            }
        }
        if !read {
            return None;
        }
    }
    Some(CommitRecord {
        id: id.to_hex().to_string(),
        time,
        author,
        subject,
        body,
        files,
    })
}

/// What a commit says of itself: its author's name (never the address), author time,
/// subject and body.
pub struct Described {
    pub author: String,
    pub time: i64,
    pub subject: String,
    pub body: String,
}

pub fn describe(commit: &gix::Commit<'_>) -> Described {
    let (author, time) = match commit.author() {
        Ok(signature) => (
            signature.name.to_str_lossy().into_owned(),
            signature.time().map(|t| t.seconds).unwrap_or(0),
        ),
        Err(_) => (String::new(), 0),
    };
    let (subject, body) = split_message(&commit.message_raw_sloppy().to_str_lossy());
    Described {
        author,
        time,
        subject,
        body,
    }
}

/// A message's subject (its first paragraph, on one line) and body (the rest).
pub fn split_message(message: &str) -> (String, String) {
    let message = message.trim();
    let (subject, body) = match message.find("\n\n") {
        Some(at) => (&message[..at], message[at..].trim()),
        None => (message, ""),
    };
    let subject = subject.split_whitespace().collect::<Vec<_>>().join(" ");
    (subject, body.to_string())
}

#[cfg(test)]
mod tests {
    use super::split_message;

    #[test]
    fn the_subject_is_the_first_paragraph_on_one_line() {
        assert_eq!(
            split_message("Fix the parser\nfor tabs\n\nIt broke on\ntabs.\n"),
            (
                "Fix the parser for tabs".to_string(),
                "It broke on\ntabs.".to_string()
            )
        );
        assert_eq!(
            split_message("One line"),
            ("One line".to_string(), String::new())
        );
    }
}

//! Which commit last changed each run of a file's lines (`git_blame`).
//!
//! The text blamed is the file as it is now (the caller reads it through the workspace):
//! HEAD's version of the file is blamed with the git library, only over the lines the
//! request covers, and HEAD's lines are matched to the text's lines by a line diff; a
//! line of the text that HEAD's version does not hold is uncommitted. A file HEAD does
//! not hold is uncommitted throughout. Line ends are compared without their `\r`, so a
//! checkout with CRLF line ends matches a history stored with LF.
//!
//! Blobs are read as stored (no filters, no textconv); renames are followed.

use std::ops::RangeInclusive;
use std::path::Path;

use gix::bstr::ByteSlice;
use gix::diff::blob::{Algorithm, Diff, InternedInput, Interner};
use gix::ObjectId;
use rustc_hash::FxHashMap;

use super::read::describe;
use super::{Reason, Repository};

/// A commit as blame shows it (never the author's e-mail address).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlameCommit {
    /// Full hex id.
    pub id: String,
    /// Author time, seconds since the epoch.
    pub time: i64,
    pub author: String,
    pub subject: String,
}

/// Lines `start..=end` (1-based, of the text as it is now) last changed by `commit`, or
/// not committed yet (`None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub start: usize,
    pub end: usize,
    pub commit: Option<BlameCommit>,
}

/// Why there is no blame.
#[derive(Debug, PartialEq, Eq)]
pub enum BlameError {
    /// No repository, no commit yet, unreadable HEAD.
    Unavailable(Reason),
    /// The library could not blame the file (a missing object, a corrupt pack).
    Failed(String),
}

/// The runs of `lines` (the text of the root-relative `path` as it is now, without line
/// ends) within `wanted` (1-based, inclusive, inside the text), in order.
pub fn blame(
    root: &Path,
    path: &str,
    lines: &[&str],
    wanted: RangeInclusive<usize>,
) -> Result<Vec<Run>, BlameError> {
    let repo = Repository::open(root).map_err(BlameError::Unavailable)?;
    let head = repo
        .head()
        .map_err(BlameError::Unavailable)?
        .ok_or(BlameError::Unavailable(Reason::UnbornHead))?;
    let local = repo.local();
    let repo_path = repo.to_repo(path);
    let Some(blob) = head_blob(&local, head, &repo_path) else {
        return Ok(vec![Run {
            start: *wanted.start(),
            end: *wanted.end(),
            commit: None,
        }]);
    };
    let head_lines = blob_lines(&blob);
    let now: Vec<&[u8]> = lines
        .iter()
        .map(|line| line.trim_end_matches('\r').as_bytes())
        .collect();
    let to_head = map_lines(&head_lines, &now);
    let at = |line: usize| to_head.get(line - 1).copied().flatten();

    // HEAD's lines the request covers, as 1-based ranges: only those are blamed.
    let mut ranges: Vec<RangeInclusive<u32>> = Vec::new();
    for head_line in wanted.clone().filter_map(at) {
        let one_based = head_line + 1;
        match ranges.last_mut() {
            Some(last) if *last.end() + 1 == one_based => *last = *last.start()..=one_based,
            _ => ranges.push(one_based..=one_based),
        }
    }
    let mut by_head_line: FxHashMap<u32, ObjectId> = FxHashMap::default();
    if !ranges.is_empty() {
        let ranges = gix::blame::BlameRanges::from_one_based_inclusive_ranges(ranges)
            .map_err(|error| BlameError::Failed(error.to_string()))?;
        let options = gix::repository::blame_file::Options {
            diff_algorithm: Some(Algorithm::Histogram),
            ranges,
            since: None,
            rewrites: Some(gix::diff::Rewrites::default()),
        };
        let outcome = local
            .blame_file(repo_path.as_bytes().as_bstr(), head, options)
            .map_err(|error| BlameError::Failed(error.to_string()))?;
        for entry in &outcome.entries {
            for line in entry.range_in_blamed_file() {
                by_head_line.insert(line as u32, entry.commit_id);
            }
        }
    }

    let mut commits: FxHashMap<ObjectId, Option<BlameCommit>> = FxHashMap::default();
    let mut runs: Vec<(usize, usize, Option<ObjectId>)> = Vec::new();
    for line in wanted {
        let origin = at(line).and_then(|head_line| by_head_line.get(&head_line).copied());
        match runs.last_mut() {
            Some((_, end, last)) if *last == origin && *end + 1 == line => *end = line,
            _ => runs.push((line, line, origin)),
        }
    }
    Ok(runs
        .into_iter()
        .map(|(start, end, origin)| Run {
            start,
            end,
            commit: origin.and_then(|id| {
                commits
                    .entry(id)
                    .or_insert_with(|| commit_of(&local, id))
                    .clone()
            }),
        })
        .collect())
}

/// HEAD's version of a file (a regular or executable blob), when HEAD holds one there.
fn head_blob(local: &gix::Repository, head: ObjectId, repo_path: &str) -> Option<Vec<u8>> {
    let tree = local.find_commit(head).ok()?.tree().ok()?;
    let entry = tree.lookup_entry_by_path(repo_path).ok()??;
    if !entry.mode().is_blob() {
        return None;
    }
    Some(entry.object().ok()?.detach().data)
}

/// A blob's lines as the blame library counts them (split at `\n`; a last line without
/// one counts), each without its `\r\n` or `\n`.
fn blob_lines(blob: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = blob.split(|&b| b == b'\n').collect();
    if blob.ends_with(b"\n") || blob.is_empty() {
        lines.pop();
    }
    lines
        .into_iter()
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .collect()
}

/// For each line of `now`, the 0-based line of `head` it is unchanged from, or `None`
/// for a line `head` does not hold there.
fn map_lines(head: &[&[u8]], now: &[&[u8]]) -> Vec<Option<u32>> {
    let mut input = InternedInput {
        before: Vec::new(),
        after: Vec::new(),
        interner: Interner::new(head.len() + now.len()),
    };
    input.update_before(head.iter().copied());
    input.update_after(now.iter().copied());
    let diff = Diff::compute(Algorithm::Histogram, &input);
    let mut mapped = vec![None; now.len()];
    let (mut before, mut after) = (0u32, 0u32);
    for hunk in diff.hunks() {
        while after < hunk.after.start {
            mapped[after as usize] = Some(before);
            after += 1;
            before += 1;
        }
        after = hunk.after.end;
        before = hunk.before.end;
    }
    while (after as usize) < now.len() {
        mapped[after as usize] = Some(before);
        after += 1;
        before += 1;
    }
    mapped
}

fn commit_of(local: &gix::Repository, id: ObjectId) -> Option<BlameCommit> {
    let described = describe(&local.find_commit(id).ok()?);
    Some(BlameCommit {
        id: id.to_hex().to_string(),
        time: described.time,
        author: described.author,
        subject: described.subject,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<&[u8]> {
        text.lines().map(str::as_bytes).collect()
    }

    #[test]
    fn lines_map_to_heads_lines_around_an_edit() {
        let head = lines("a\nb\nc\nd");
        let now = lines("a\nB\nnew\nc\nd\ne");
        assert_eq!(
            map_lines(&head, &now),
            [Some(0), None, None, Some(2), Some(3), None]
        );
        assert_eq!(
            map_lines(&head, &head),
            [Some(0), Some(1), Some(2), Some(3)]
        );
        assert_eq!(map_lines(&[], &now), vec![None; 6]);
    }

    #[test]
    fn blob_lines_count_as_the_blame_library_does() {
        assert_eq!(blob_lines(b"a\r\nb\n"), [&b"a"[..], &b"b"[..]]);
        assert_eq!(blob_lines(b"a\nb"), [&b"a"[..], &b"b"[..]]);
        assert_eq!(blob_lines(b"a\n\n"), [&b"a"[..], &b""[..]]);
        assert!(blob_lines(b"").is_empty());
    }

    #[test]
    fn outside_a_repository_there_is_no_blame() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".git"), "gitdir: /nonexistent/nowhere\n").unwrap();
        let root = dir.path().canonicalize().unwrap();
        assert_eq!(
            blame(&root, "a.txt", &["x"], 1..=1),
            Err(BlameError::Unavailable(Reason::NoRepository))
        );
    }
}

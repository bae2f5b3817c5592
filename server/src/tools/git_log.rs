//! `git_log`: the commits of HEAD's history that changed a file or folder (renames
//! followed), whose messages match words, or the newest, from the root's history
//! (`history/`, kept beside the workspace index): one line per commit, then the files it
//! changed. Also what the three `git_*` tools share: why there is no history.

use serde::Deserialize;
use serde_json::{json, Value};

use super::error::ToolError;
use super::in_root;
use super::ToolOutput;
use crate::history::{self, CommitRecord, History, MessageStats, Reason};
use crate::index::{RetrievalIndex, WorkspaceIndex};
use crate::workspace::sandbox::is_refused_path;
use crate::workspace::Workspace;

pub const DEFAULT_LIMIT: usize = 20;
pub const MAX_LIMIT: usize = 100;
/// Changed files shown under a commit.
const MAX_FILES: usize = 10;
/// Commits read at most to find `limit` that changed something inside the root.
const MAX_READ: usize = 10_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub query: Option<String>,
    pub path: Option<String>,
    pub limit: Option<u64>,
}

pub fn run(
    args: Args,
    workspace: &Workspace,
    index: Option<&WorkspaceIndex>,
) -> Result<(ToolOutput, Value), ToolError> {
    let roots = in_root::roots_for(workspace, index, args.path.as_deref())?;
    if let [root] = &roots[..] {
        let args = Args {
            path: root.path.clone(),
            ..args
        };
        return run_in(args, &root.workspace, root.index.as_ref(), &root.prefix);
    }
    several(args, &roots)
}

/// Several roots and no path: one list over every root's history, `limit` long in all:
/// the newest by date, or with `query` the best by one ranking over the roots'
/// statistics summed (as one history of them all would rank them). Paths are shown
/// under their root's name, and a path that is no longer there says so.
fn several(args: Args, roots: &[in_root::InRoot]) -> Result<(ToolOutput, Value), ToolError> {
    let limit = limit_of(&args);
    let query = args
        .query
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty());
    let mut held = Vec::new();
    let mut reasons = Vec::new();
    for (i, root) in roots.iter().enumerate() {
        match history_of(&root.workspace, root.index.as_ref()) {
            Ok(history) => held.push((i, history)),
            Err(reason) => reasons.push(reason),
        }
    }
    if held.is_empty() {
        return Err(unavailable(
            reasons.first().copied().unwrap_or(Reason::NoRepository),
        ));
    }
    // Each root gives as many as the whole result could take from it, then they are
    // merged.
    let mut found: Vec<(f32, usize, CommitRecord)> = Vec::new();
    match query {
        Some(query) => {
            let terms = held[0].1.get().message_terms(query);
            let mut stats = MessageStats::default();
            for (_, history) in &held {
                stats.add(&history.get().message_stats(&terms));
            }
            for (i, history) in &held {
                let history = history.get();
                let candidates = history.message_candidates(
                    &terms,
                    None,
                    (limit + 1).max(history::MESSAGE_CANDIDATES),
                );
                found.extend(
                    history
                        .rank_messages(&terms, &stats, candidates)
                        .into_iter()
                        .filter(|(_, commit)| !commit.files.is_empty())
                        .map(|(score, commit)| (score, *i, commit)),
                );
            }
            found.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.2.time.cmp(&a.2.time)));
        }
        None => {
            for (i, history) in &held {
                found.extend(
                    newest_with_files(history.get(), None, limit)
                        .into_iter()
                        .map(|commit| (0.0, *i, commit)),
                );
            }
            // Newest first, by author time across the roots.
            found.sort_by_key(|found| std::cmp::Reverse(found.2.time));
        }
    }
    let more = found.len() > limit;
    found.truncate(limit);

    let mut text = String::new();
    for (_, i, commit) in &found {
        let root = &roots[*i];
        let history = held
            .iter()
            .find(|(at, _)| at == i)
            .map(|(_, history)| history.get());
        let prefix = &root.prefix;
        push_commit(&mut text, commit, prefix, &|path| {
            history
                .map(|h| then_note(h, &root.workspace, prefix, path))
                .unwrap_or_default()
        });
    }
    if found.is_empty() {
        text.push_str(&match query {
            Some(query) => {
                format!("No commits match `{query}`; try other words, or git_log with a path.\n")
            }
            None => "HEAD's history holds no commits.\n".to_string(),
        });
    } else if more {
        text.push_str(&format!(
            "(more commits {}; raise limit (at most {MAX_LIMIT}) or narrow with path or query)\n",
            if query.is_some() { "match" } else { "follow" }
        ));
    }
    for (i, history) in &held {
        if let Some(reason) = history.get().state().reason {
            text.push_str(&format!(
                "({}: {})\n",
                roots[*i].prefix.trim_end_matches('/'),
                incomplete(reason)
            ));
        }
    }
    let summary = match query {
        Some(query) => format!("{query}: {} commits", found.len()),
        None => format!("{} commits", found.len()),
    };
    let data = json!({
        "commits": found.iter().map(|(_, i, commit)| {
            let prefix = &roots[*i].prefix;
            json!({
                "id": commit.id,
                "date": history::date(commit.time),
                "author": commit.author,
                "subject": commit.subject,
                "files": commit.files.iter().filter(|f| shows(&f.path)).map(|f| format!("{prefix}{}", f.path)).collect::<Vec<_>>(),
            })
        }).collect::<Vec<_>>(),
    });
    Ok((ToolOutput::ok(text, summary), data))
}

/// ` (then; now <root>/<path>)` for a path a later commit renamed, ` (then; gone)` for
/// one no longer in the root, nothing for one that is there: with several roots the
/// root's name before an old path would make it look like a file that exists.
fn then_note(history: &History, workspace: &Workspace, prefix: &str, path: &str) -> String {
    let exists = workspace
        .sandbox
        .resolve_allow_missing(path)
        .is_ok_and(|resolved| resolved.absolute.exists());
    if exists {
        return String::new();
    }
    match history.renamed_to(path) {
        Some(now) if now != path => format!(" (then; now {prefix}{now})"),
        _ => " (then; gone)".to_string(),
    }
}

/// A root's history, as `git_log` reads it: the index's, brought up to date with HEAD
/// (a first read under way is waited for, not done twice), or one in memory for this
/// call when there is no index or another process writes its history and has written
/// none yet.
enum Held<'a> {
    Shared(&'a RetrievalIndex),
    Own(RetrievalIndex),
}

impl Held<'_> {
    fn get(&self) -> &History {
        match self {
            Held::Shared(index) => index.history(),
            Held::Own(index) => index.history(),
        }
    }
}

/// The root's history, or why it has none to read.
fn history_of<'a>(
    workspace: &Workspace,
    index: Option<&'a WorkspaceIndex>,
) -> Result<Held<'a>, Reason> {
    let unread = |h: &History| {
        let state = h.state();
        state.commits == 0 && state.reason.is_none()
    };
    let shared = index
        .and_then(|index| index.roots().next())
        .inspect(|index| index.history().refresh());
    let held = match shared {
        Some(index) if !unread(index.history()) => Held::Shared(index),
        _ => {
            let own = RetrievalIndex::open(workspace.clone(), None);
            own.refresh_history();
            Held::Own(own)
        }
    };
    let state = held.get().state();
    match state.reason {
        Some(reason) if state.commits == 0 => Err(reason),
        _ => Ok(held),
    }
}

/// The newest `limit` commits (of `paths`) that changed something inside the root, and
/// one more when there are more.
fn newest_with_files(
    history: &History,
    paths: Option<&[String]>,
    limit: usize,
) -> Vec<CommitRecord> {
    let mut wanted = limit + 1;
    loop {
        let found = history.newest(paths, wanted);
        let exhausted = found.len() < wanted;
        let kept: Vec<CommitRecord> = found.into_iter().filter(|c| !c.files.is_empty()).collect();
        if kept.len() > limit || exhausted || wanted >= MAX_READ {
            return kept;
        }
        wanted *= 4;
    }
}

fn limit_of(args: &Args) -> usize {
    args.limit
        .map_or(DEFAULT_LIMIT, |n| (n.min(MAX_LIMIT as u64) as usize).max(1))
}

/// `git_log` in one root, its paths shown under `prefix`.
fn run_in(
    args: Args,
    workspace: &Workspace,
    index: Option<&WorkspaceIndex>,
    prefix: &str,
) -> Result<(ToolOutput, Value), ToolError> {
    let limit = limit_of(&args);
    let query = args
        .query
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty());
    let path = args
        .path
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty());
    // The path is checked before anything is read.
    let resolved = path
        .map(|path| workspace.sandbox.resolve_allow_missing(path))
        .transpose()?
        .filter(|resolved| resolved.relative != ".");

    // The index's history, brought up to date with HEAD (a no-op when HEAD did not
    // move; a first read under way is waited for, not done twice).
    let held = history_of(workspace, index).map_err(unavailable)?;
    let history = held.get();
    let state = history.state();

    let mut notes = Vec::new();
    let scope = resolved.map(|resolved| {
        let relative = resolved.relative;
        let folder = path.is_some_and(|p| p.ends_with('/')) || resolved.absolute.is_dir();
        if folder {
            return (format!("{relative}/"), vec![format!("{relative}/")]);
        }
        let mut terms = history.names_of(&relative);
        if terms.len() > 1 {
            let before: Vec<String> = terms[1..].iter().map(|t| format!("{prefix}{t}")).collect();
            notes.push(format!(
                "({prefix}{relative} had other names before: {}; their commits are included)",
                before.join(", ")
            ));
        }
        if !resolved.absolute.exists() {
            // Gone from the disk: a deleted file, or a deleted folder.
            terms.push(format!("{relative}/"));
        }
        (relative, terms)
    });
    let paths = scope.as_ref().map(|(_, terms)| terms.as_slice());
    let fetch = |n: usize| -> Vec<CommitRecord> {
        match query {
            Some(query) => history
                .search_messages(query, paths, n)
                .into_iter()
                .map(|(_, commit)| commit)
                .collect(),
            None => history.newest(paths, n),
        }
    };
    // A commit that changed nothing inside the root (the root is a folder of a larger
    // repository, or the commit is empty) is not the root's history: more are read
    // until enough are left.
    let mut wanted = limit + 1;
    let mut commits = loop {
        let found = fetch(wanted);
        let exhausted = found.len() < wanted;
        let kept: Vec<CommitRecord> = found.into_iter().filter(|c| !c.files.is_empty()).collect();
        if kept.len() > limit || exhausted || wanted >= MAX_READ {
            break kept;
        }
        wanted *= 4;
    };
    let more = commits.len() > limit;
    commits.truncate(limit);
    let shown = scope.as_ref().map(|(shown, _)| format!("{prefix}{shown}"));
    let shown = shown.as_deref();

    let mut text = String::new();
    for commit in &commits {
        push_commit(&mut text, commit, prefix, &|_| String::new());
    }
    if commits.is_empty() {
        text.push_str(&match (query, shown) {
            (Some(query), Some(path)) => format!(
                "No commits that changed {path} match `{query}`; try other words, or git_log with the path alone.\n"
            ),
            (Some(query), None) => format!(
                "No commits match `{query}`; try other words, or git_log with a path.\n"
            ),
            (None, Some(path)) => format!("No commits in HEAD's history changed {path}.\n"),
            (None, None) => "HEAD's history holds no commits.\n".to_string(),
        });
    } else if more {
        text.push_str(&format!(
            "(more commits {}; raise limit (at most {MAX_LIMIT}) or narrow with path or query)\n",
            if query.is_some() { "match" } else { "follow" }
        ));
    }
    for note in notes {
        text.push_str(&note);
        text.push('\n');
    }
    if let Some(reason) = state.reason {
        text.push_str(&format!("({})\n", incomplete(reason)));
    }

    let summary = match (query, shown) {
        (Some(query), _) => format!("{query}: {} commits", commits.len()),
        (None, Some(path)) => format!("{path}: {} commits", commits.len()),
        (None, None) => format!("{} commits", commits.len()),
    };
    let data = json!({
        "commits": commits.iter().map(|commit| json!({
            "id": commit.id,
            "date": history::date(commit.time),
            "author": commit.author,
            "subject": commit.subject,
            "files": commit.files.iter().filter(|f| shows(&f.path)).map(|f| format!("{prefix}{}", f.path)).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    Ok((ToolOutput::ok(text, summary), data))
}

/// `<id, 10 hex> <YYYY-MM-DD> <author name>: <subject>`.
pub fn commit_line(commit: &CommitRecord) -> String {
    format!(
        "{} {} {}: {}",
        history::short_id(&commit.id),
        history::date(commit.time),
        commit.author,
        commit.subject
    )
}

/// Secret files and `.git/` are named by no tool, here neither.
/// A commit's line, then the files it changed that are shown (at most `MAX_FILES`), each
/// under the root's `prefix` with `note` of its path after it (where an old path is now).
fn push_commit(
    text: &mut String,
    commit: &CommitRecord,
    prefix: &str,
    note: &dyn Fn(&str) -> String,
) {
    text.push_str(&commit_line(commit));
    text.push('\n');
    let files: Vec<&history::ChangedFile> =
        commit.files.iter().filter(|f| shows(&f.path)).collect();
    for file in files.iter().take(MAX_FILES) {
        let then = note(&file.path);
        match file.old_path.as_deref().filter(|old| shows(old)) {
            Some(old) => text.push_str(&format!(
                "  {prefix}{}{then} (renamed from {prefix}{old})\n",
                file.path
            )),
            None => text.push_str(&format!("  {prefix}{}{then}\n", file.path)),
        }
    }
    if files.len() > MAX_FILES {
        text.push_str(&format!("  … and {} more files\n", files.len() - MAX_FILES));
    }
}

fn shows(path: &str) -> bool {
    !is_refused_path(path)
}

/// Why a `git_*` tool has nothing to read.
pub fn unavailable(reason: Reason) -> ToolError {
    ToolError::Invalid(
        match reason {
            Reason::NoRepository => {
                "the workspace is not inside a git repository, so it has no history"
            }
            Reason::UnbornHead => "the git repository has no commits yet",
            Reason::Off => "history is turned off (COPILOT_LS_HISTORY=off)",
            _ => "the git repository's HEAD cannot be read",
        }
        .to_string(),
    )
}

/// The note on a history read only in part.
fn incomplete(reason: Reason) -> &'static str {
    match reason {
        Reason::Shallow => "the repository is a shallow clone: older commits are missing",
        Reason::Bound => {
            "only the newest commits are read (COPILOT_LS_HISTORY_MAX_COMMITS): older ones are missing"
        }
        Reason::UnreadableObjects => "some commits could not be read and are missing",
        _ => "the history may be incomplete",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_is_one_line_without_an_address() {
        let commit = CommitRecord {
            id: "0123456789abcdef0123456789abcdef01234567".into(),
            time: 1_700_000_000,
            author: "Ada".into(),
            subject: "Fix the parser".into(),
            body: String::new(),
            files: Vec::new(),
        };
        assert_eq!(
            commit_line(&commit),
            "0123456789 2023-11-14 Ada: Fix the parser"
        );
        assert!(!shows(".env") && !shows("a/.git/x") && shows("src/a.rs"));
    }
}

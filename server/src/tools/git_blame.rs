//! `git_blame`: which commit last changed each run of a file's lines, for the file as
//! it is now (the editor's text when it is open, else the disk); lines changed since
//! HEAD are `uncommitted`. At most 200 lines per call (`history::blame` blames only
//! those).

use serde::Deserialize;
use serde_json::{json, Value};

use super::error::ToolError;
use super::git_log::unavailable;
use super::read_file::split_lines;
use super::ToolOutput;
use crate::history::blame::{self, BlameError, Run};
use crate::history::{date, short_id};
use crate::workspace::{TextSource, Workspace};

/// Lines blamed by one call; the closing note tells the model how to read on.
pub const WINDOW_LINES: usize = 200;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub path: String,
    pub start_line: Option<u64>,
    pub end_line: Option<u64>,
}

pub fn run(args: Args, workspace: &Workspace) -> Result<(ToolOutput, Value), ToolError> {
    let workspace = &workspace.asking_editor();
    let resolved = workspace.resolve_readable(&args.path)?;
    if resolved.absolute.is_dir() {
        return Err(ToolError::IsDirectory(resolved.relative));
    }
    let path = resolved.relative.clone();
    let file = workspace.read_text(&resolved)?;
    let lines = split_lines(&file.text);
    let total = lines.len();
    if total == 0 {
        return Ok((
            ToolOutput::ok(format!("({path} is empty)\n"), format!("{path}: empty")),
            json!({"runs": []}),
        ));
    }
    let start = args.start_line.unwrap_or(1).max(1) as usize;
    if start > total {
        return Err(ToolError::Invalid(format!(
            "start_line {start} is past the end of {path}, which has {total} lines"
        )));
    }
    let requested_end = args.end_line.map_or(total, |end| (end as usize).min(total));
    if requested_end < start {
        return Err(ToolError::Invalid(format!(
            "end_line {requested_end} is before start_line {start}"
        )));
    }
    let end = requested_end.min(start + WINDOW_LINES - 1);
    // The file's own root and its path there (with several roots, the shown path
    // starts with the root's name).
    let repository_root = workspace.sandbox.roots()[resolved.root].path.clone();
    let inside = workspace
        .sandbox
        .split_shown(&path)
        .map_or(path.as_str(), |(_, inside)| inside);
    let runs =
        blame::blame(&repository_root, inside, &lines, start..=end).map_err(
            |error| match error {
                BlameError::Unavailable(reason) => unavailable(reason),
                BlameError::Failed(why) => {
                    ToolError::Invalid(format!("cannot blame {path}: {why}"))
                }
            },
        )?;

    let mut text = String::new();
    if let TextSource::Editor { modified: true, .. } = file.source {
        text.push_str(&format!(
            "({path} is open in the editor with unsaved changes; this is its current text)\n"
        ));
    }
    for run in &runs {
        text.push_str(&run_line(run));
        text.push('\n');
    }
    if end < requested_end || (args.end_line.is_none() && end < total) {
        text.push_str(&format!(
            "(showing lines {start}-{end} of {total}; call git_blame with start_line={} to read on)\n",
            end + 1
        ));
    } else if start > 1 || end < total {
        text.push_str(&format!("(lines {start}-{end} of {total})\n"));
    }
    let data = json!({
        "runs": runs.iter().map(|run| {
            let mut value = json!({"startLine": run.start, "endLine": run.end});
            if let Some(commit) = &run.commit {
                value["id"] = json!(commit.id);
                value["date"] = json!(date(commit.time));
                value["author"] = json!(commit.author);
                value["subject"] = json!(commit.subject);
            }
            value
        }).collect::<Vec<_>>(),
    });
    Ok((
        ToolOutput::ok(text, format!("{path}:{start}-{end}: {} runs", runs.len())),
        data,
    ))
}

/// `<start>-<end> <id> <YYYY-MM-DD> <author>: <subject>`, or `<start>-<end> uncommitted`.
fn run_line(run: &Run) -> String {
    match &run.commit {
        Some(commit) => format!(
            "{}-{} {} {} {}: {}",
            run.start,
            run.end,
            short_id(&commit.id),
            date(commit.time),
            commit.author,
            commit.subject
        ),
        None => format!("{}-{} uncommitted", run.start, run.end),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::blame::BlameCommit;

    #[test]
    fn runs_are_one_line_each() {
        let commit = BlameCommit {
            id: "abcdef0123456789abcdef0123456789abcdef01".into(),
            time: 0,
            author: "Ada".into(),
            subject: "Start".into(),
        };
        let committed = Run {
            start: 1,
            end: 4,
            commit: Some(commit),
        };
        assert_eq!(run_line(&committed), "1-4 abcdef0123 1970-01-01 Ada: Start");
        let uncommitted = Run {
            start: 5,
            end: 5,
            commit: None,
        };
        assert_eq!(run_line(&uncommitted), "5-5 uncommitted");
    }
}

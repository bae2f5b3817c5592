//! `find_files`: workspace-relative paths matching a glob, at most 200.

use std::sync::Mutex;

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkState;
use serde::Deserialize;

use super::error::ToolError;
use super::ToolOutput;
use crate::workspace::walk;
use crate::workspace::Workspace;

pub const MAX_RESULTS: usize = 200;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub pattern: String,
}

pub fn run(args: Args, workspace: &Workspace) -> Result<ToolOutput, ToolError> {
    let pattern = args.pattern.trim();
    if pattern.is_empty() {
        return Err(ToolError::Invalid(
            "pattern must not be empty; try **/*.rs".into(),
        ));
    }
    let matcher = compile(pattern)?;
    // A pattern without a slash, such as `*.rs` or `Cargo.toml`, matches a file name in
    // any directory, as people (and models) usually mean it.
    let name_only = !pattern.contains('/');
    let found = Mutex::new(Vec::new());
    let sandbox = &workspace.sandbox;
    let unreached = walk::Unreached::default();
    walk::builder_over(&sandbox.root_paths())
        .build_parallel()
        .run(|| {
            let found = &found;
            let matcher = &matcher;
            let unreached = &unreached;
            Box::new(move |entry| {
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(error) => {
                        unreached.note(sandbox, &error);
                        return WalkState::Continue;
                    }
                };
                if entry.depth() == 0 || !walk::admits(sandbox, &entry) || !walk::is_file(&entry) {
                    return WalkState::Continue;
                }
                let Some(relative) = sandbox.relative(entry.path()) else {
                    return WalkState::Continue;
                };
                // With several roots a pattern may start at a root's name or inside a root.
                let inside = sandbox
                    .split_shown(&relative)
                    .map_or("", |(_, inside)| inside);
                let hit = matcher.is_match(&relative)
                    || matcher.is_match(inside)
                    || (name_only && matcher.is_match(entry.file_name()));
                if hit {
                    found
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(relative);
                }
                WalkState::Continue
            })
        });
    let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    // Unsaved new files open in the editor count too.
    for doc in workspace.open_documents() {
        if doc.path.exists() {
            continue;
        }
        if let Some(relative) = sandbox.relative(&doc.path) {
            if sandbox.resolve_allow_missing(&relative).is_ok() && matcher.is_match(&relative) {
                found.push(relative);
            }
        }
    }
    found.sort();
    found.dedup();
    let total = found.len();
    if total == 0 {
        let mut out = format!("(no files match {pattern})\n");
        super::push_unreached(&mut out, &unreached);
        return Ok(ToolOutput::ok(out, format!("{pattern}: no files")));
    }
    let mut out = super::capped_lines(found, MAX_RESULTS, |more| {
        format!("({more} more files match; use a narrower pattern)")
    });
    super::push_unreached(&mut out, &unreached);
    Ok(ToolOutput::ok(out, format!("{total} files")))
}

fn compile(pattern: &str) -> Result<GlobMatcher, ToolError> {
    let pattern = pattern.trim_start_matches("./");
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|e| ToolError::Invalid(format!("invalid glob {pattern}: {e}")))
}

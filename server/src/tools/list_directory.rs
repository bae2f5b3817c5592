//! `list_directory`: sorted entries of one directory, git-ignored ones left out.

use serde::Deserialize;

use super::error::ToolError;
use super::ToolOutput;
use crate::workspace::walk;
use crate::workspace::Workspace;

const MAX_ENTRIES: usize = 1000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub path: Option<String>,
}

pub fn run(args: Args, workspace: &Workspace) -> Result<ToolOutput, ToolError> {
    let path = args.path.unwrap_or_else(|| ".".to_string());
    let resolved = workspace.sandbox.resolve(&path)?;
    if !resolved.absolute.is_dir() {
        return Err(ToolError::NotDirectory(resolved.relative));
    }
    let mut entries = Vec::new();
    for entry in walk::builder(&resolved.absolute)
        .max_depth(Some(1))
        .build()
        .flatten()
    {
        if entry.depth() == 0 || !walk::admits(&workspace.sandbox, &entry) {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() {
            entries.push(format!("{name}/"));
        } else {
            entries.push(name);
        }
    }
    entries.sort();
    let total = entries.len();
    let shown = if resolved.relative == "." {
        "the workspace root".to_string()
    } else {
        resolved.relative.clone()
    };
    if total == 0 {
        return Ok(ToolOutput::ok(
            format!("({shown} is empty)"),
            format!("{shown}: empty"),
        ));
    }
    let out = super::capped_lines(entries, MAX_ENTRIES, |more| {
        format!("({more} more entries not shown; use find_files with a glob to narrow down)")
    });
    Ok(ToolOutput::ok(out, format!("{total} entries")))
}

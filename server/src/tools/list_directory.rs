//! `list_directory`: sorted entries of one directory, git-ignored ones left out.

use serde::Deserialize;

use super::error::ToolError;
use super::ToolOutput;
use crate::workspace::Workspace;
use crate::workspace::{path_form, walk};

const MAX_ENTRIES: usize = 1000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub path: Option<String>,
}

pub fn run(args: Args, workspace: &Workspace) -> Result<ToolOutput, ToolError> {
    let path = args.path.unwrap_or_else(|| ".".to_string());
    let scopes = workspace.sandbox.scope(&path)?;
    if scopes.len() > 1 {
        // The top of a workspace of several roots: the roots, by the names their paths
        // start with.
        let names: Vec<String> = scopes
            .iter()
            .map(|root| format!("{}/", root.relative))
            .collect();
        let total = names.len();
        let text = format!("(the workspace's {total} roots)\n{}\n", names.join("\n"));
        return Ok(ToolOutput::ok(text, format!("{total} roots")));
    }
    let resolved = workspace.sandbox.resolve(&path)?;
    if !resolved.absolute.is_dir() {
        return Err(ToolError::NotDirectory(resolved.relative));
    }
    let mut entries = Vec::new();
    let unreached = walk::Unreached::default();
    for entry in walk::builder(&resolved.absolute).max_depth(Some(1)).build() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                unreached.note(&workspace.sandbox, &error);
                continue;
            }
        };
        if entry.depth() == 0 || !walk::admits(&workspace.sandbox, &entry) {
            continue;
        }
        // The shown form: a name with a newline or odd bytes stays on its line, and read_file
        // accepts it back.
        let name = path_form::shown(entry.file_name());
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
        let mut out = format!("({shown} is empty)");
        if let Some(note) = unreached.note_line() {
            out = format!("({shown} shows no entries)\n{note}");
        }
        return Ok(ToolOutput::ok(out, format!("{shown}: empty")));
    }
    let mut out = super::capped_lines(entries, MAX_ENTRIES, |more| {
        format!("({more} more entries not shown; use find_files with a glob to narrow down)")
    });
    super::push_unreached(&mut out, &unreached);
    Ok(ToolOutput::ok(out, format!("{total} entries")))
}

//! `list_open_buffers`: the documents open in the editor, with language and version.

use super::ToolOutput;
use crate::workspace::Workspace;

pub fn run(workspace: &Workspace) -> ToolOutput {
    let mut rows = Vec::new();
    for doc in workspace.open_documents() {
        // Documents outside the workspace (or refused by the sandbox) are not shown:
        // the model may only learn about what it could also read.
        let Some(shown) = workspace.sandbox.relative(&doc.path) else {
            continue;
        };
        if workspace.sandbox.resolve_allow_missing(&shown).is_err() {
            continue;
        }
        let modified = crate::workspace::differs_from_disk(&doc.path, &doc.rope.to_string());
        let mut row = format!(
            "{shown}\t{}\tversion {}",
            if doc.language_id.is_empty() {
                "plaintext"
            } else {
                &doc.language_id
            },
            doc.version
        );
        if modified {
            row.push_str("\tmodified");
        }
        rows.push(row);
    }
    rows.sort();
    let count = rows.len();
    if rows.is_empty() {
        return ToolOutput::ok(
            "(no documents are open in the editor)".to_string(),
            "none open".into(),
        );
    }
    ToolOutput::ok(rows.join("\n") + "\n", format!("{count} open"))
}

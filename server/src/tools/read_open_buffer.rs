//! `read_open_buffer`: like `read_file`, but only for documents open in the editor.

use super::error::ToolError;
use super::ToolOutput;
use crate::workspace::Workspace;

/// The same parameters as `read_file`.
pub use super::read_file::Args;

pub fn run(args: Args, workspace: &Workspace) -> Result<ToolOutput, ToolError> {
    let workspace = &workspace.asking_editor();
    let resolved = workspace.sandbox.resolve_allow_missing(&args.path)?;
    if workspace.open_document(&resolved.absolute).is_none() {
        return Err(ToolError::Invalid(format!(
            "{} is not open in the editor; use list_open_buffers to see what is, or read_file for files on disk",
            resolved.relative
        )));
    }
    // Open, so this is the editor's text.
    let file = workspace.read_redacted(&resolved)?;
    super::read_file::render(
        &resolved.relative,
        &file,
        args.start_line,
        args.end_line,
        "read_open_buffer",
    )
}

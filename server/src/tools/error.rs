//! Why a tool call failed. The `Display` text goes to the model after `Error: `; each
//! variant carries the path or argument it is about, so the model can correct itself.

use crate::workspace::sandbox::SandboxError;
use crate::workspace::WorkspaceError;

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error("invalid arguments for {tool}: {reason}")]
    InvalidArguments { tool: String, reason: String },
    #[error("unknown tool `{0}`; the tools are: {1}")]
    UnknownTool(String, String),
    #[error("no such file or directory: {0}")]
    NotFound(String),
    #[error("{0} is a directory; use list_directory to see its entries")]
    IsDirectory(String),
    #[error("{0} is not a directory; use read_file to read it")]
    NotDirectory(String),
    #[error("{0} looks like a binary file; only text files can be read")]
    Binary(String),
    #[error(
        "{path} is too large to read ({bytes} bytes); use search_code to find the lines you need"
    )]
    TooLarge { path: String, bytes: u64 },
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("{0}")]
    Invalid(String),
}

impl ToolError {
    pub fn io(path: &str, error: &std::io::Error) -> ToolError {
        if error.kind() == std::io::ErrorKind::NotFound {
            return ToolError::NotFound(path.to_string());
        }
        ToolError::Io {
            path: path.to_string(),
            reason: error.to_string(),
        }
    }
}

impl From<WorkspaceError> for ToolError {
    fn from(error: WorkspaceError) -> ToolError {
        match error {
            WorkspaceError::Sandbox(e) => ToolError::Sandbox(e),
            WorkspaceError::NotFound(p) => ToolError::NotFound(p),
            WorkspaceError::IsDirectory(p) => ToolError::IsDirectory(p),
            WorkspaceError::Binary(p) => ToolError::Binary(p),
            WorkspaceError::TooLarge { path, bytes } => ToolError::TooLarge { path, bytes },
            WorkspaceError::Io { path, reason } => ToolError::Io { path, reason },
        }
    }
}

//! Why a workspace path could not be resolved or read. The `Display` text is what the
//! model sees after `Error: ` (tools convert it into their own error unchanged).

use super::sandbox::SandboxError;

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error("no such file or directory: {0}")]
    NotFound(String),
    #[error("{0} is a directory; use list_directory to see its entries")]
    IsDirectory(String),
    #[error("{0} looks like a binary file; only text files can be read")]
    Binary(String),
    #[error(
        "{path} is too large to read ({bytes} bytes); use search_code to find the lines you need"
    )]
    TooLarge { path: String, bytes: u64 },
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
}

impl WorkspaceError {
    pub fn io(path: &str, error: &std::io::Error) -> WorkspaceError {
        if error.kind() == std::io::ErrorKind::NotFound {
            return WorkspaceError::NotFound(path.to_string());
        }
        WorkspaceError::Io {
            path: path.to_string(),
            reason: error.to_string(),
        }
    }
}

//! The workspace's instruction files as MCP resources: `AGENTS.md`, `CLAUDE.md` and
//! `.github/copilot-instructions.md` at the root, when they exist, as `file://` URIs.
//! They are read through the sandbox (a symlink out of the root or to a secret file is
//! not offered) and redacted like tool output.

use rmcp::model::{Resource, ResourceContents};

use crate::text::path_from_file_uri;
use crate::workspace::redact::redact;
use crate::workspace::Workspace;

/// The files offered, in the order the ask reads them (PROTOCOL.md section 3).
const INSTRUCTION_FILES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md"];

fn uri_of(workspace: &Workspace, relative: &str) -> String {
    let absolute = workspace
        .sandbox
        .join_shown(relative)
        .unwrap_or_else(|| workspace.root().join(relative));
    let mut uri = String::from("file://");
    for part in absolute
        .to_string_lossy()
        .split('/')
        .filter(|p| !p.is_empty())
    {
        uri.push('/');
        uri.push_str(&percent_encode(part));
    }
    uri
}

fn percent_encode(part: &str) -> String {
    let mut out = String::new();
    for byte in part.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// The instruction files' names as shown: each root's (under its name, with several).
fn shown_names(workspace: &Workspace) -> Vec<String> {
    let sandbox = &workspace.sandbox;
    (0..sandbox.roots().len())
        .flat_map(|i| INSTRUCTION_FILES.map(|name| format!("{}{name}", sandbox.prefix(i))))
        .collect()
}

/// The instruction files the workspace has.
pub fn list(workspace: &Workspace) -> Vec<Resource> {
    shown_names(workspace)
        .into_iter()
        .filter_map(|relative| {
            let resolved = workspace.sandbox.resolve(&relative).ok()?;
            let metadata = std::fs::metadata(&resolved.absolute).ok()?;
            metadata.is_file().then(|| {
                Resource::new(uri_of(workspace, &relative), relative.clone())
                    .with_title(format!("Project instructions ({relative})"))
                    .with_description(
                        "The project's instructions for coding agents, from the workspace root.",
                    )
                    .with_mime_type("text/markdown")
                    .with_size(metadata.len())
            })
        })
        .collect()
}

/// The text of one listed resource; `None` for any other URI.
pub fn read(workspace: &Workspace, uri: &str) -> Option<ResourceContents> {
    let path = path_from_file_uri(uri)?;
    let relative = workspace
        .sandbox
        .relative(&std::fs::canonicalize(&path).ok()?)?;
    if !shown_names(workspace).contains(&relative) {
        return None;
    }
    let resolved = workspace.sandbox.resolve(&relative).ok()?;
    let text = workspace.read_text(&resolved).ok()?.text;
    Some(ResourceContents::TextResourceContents {
        uri: uri.to_string(),
        mime_type: Some("text/markdown".into()),
        text: redact(&text).into_owned(),
        meta: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_files_are_listed_and_read_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "Run the tests.\n").unwrap();
        std::fs::write(dir.path().join("notes.md"), "private\n").unwrap();
        std::fs::write(dir.path().join(".env"), "KEY=1\n").unwrap();
        std::os::unix::fs::symlink(dir.path().join(".env"), dir.path().join("CLAUDE.md")).unwrap();
        let sandbox = crate::workspace::sandbox::Sandbox::new(dir.path()).unwrap();
        let workspace = Workspace::new(sandbox, std::sync::Arc::new(crate::workspace::NoDocuments));
        let listed = list(&workspace);
        // CLAUDE.md points at a secret file: not offered.
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].name, "AGENTS.md");
        let Some(ResourceContents::TextResourceContents { text, .. }) =
            read(&workspace, &listed[0].uri)
        else {
            panic!("not read");
        };
        assert_eq!(text, "Run the tests.\n");
        let other = uri_of(&workspace, "notes.md");
        assert!(read(&workspace, &other).is_none());
        assert!(read(&workspace, &uri_of(&workspace, "CLAUDE.md")).is_none());
        assert!(read(&workspace, "file:///etc/passwd").is_none());
    }
}

//! The workspace's own instruction files (`AGENTS.md`, `CLAUDE.md`,
//! `.github/copilot-instructions.md` at each root), read through the sandbox and added to
//! the system prompt as the project's instructions.
//!
//! They are text for the model, nothing more: they never change what the tools may
//! reach, and a name the sandbox refuses (a symlink to a secret file or out of the
//! workspace) is skipped like a missing file.

use crate::text::prefix_within;
use crate::workspace::Workspace;

/// The files, in the order they go into the prompt.
pub const FILES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md"];

/// At most this much of their text goes into the prompt, in all.
pub const BUDGET_BYTES: usize = 16 * 1024;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Instructions {
    /// Workspace-relative paths of the files used, in prompt order.
    pub files: Vec<String>,
    /// The prompt section, empty when no file was used.
    pub section: String,
}

/// Reads the instruction files at the workspace root: each from its start, the first ones
/// first, until the budget is spent.
pub fn load(workspace: &Workspace) -> Instructions {
    let mut budget = BUDGET_BYTES;
    let mut instructions = Instructions::default();
    let mut body = String::new();
    // Each root's files, the first root's first (with several roots a path starts with
    // its root's name), within the one budget.
    let sandbox = &workspace.sandbox;
    let names = (0..sandbox.roots().len())
        .flat_map(|i| FILES.map(|name| format!("{}{name}", sandbox.prefix(i))));
    for name in names {
        if budget == 0 {
            break;
        }
        let Ok(resolved) = workspace.sandbox.resolve(&name) else {
            continue;
        };
        // Regular files only: a FIFO of that name would block the ask forever.
        if !resolved.absolute.is_file() {
            continue;
        }
        // Sent to the model as the system prompt: redacted like every file text.
        let Ok(file) = workspace.read_redacted(&resolved) else {
            continue;
        };
        let text = file.text.trim_end();
        if text.trim().is_empty() {
            continue;
        }
        let taken = prefix_within(text, budget);
        budget -= taken.len();
        body.push_str(&format!("\n\n## {}\n\n{taken}", resolved.relative));
        if taken.len() < text.len() {
            body.push_str("\n\n(cut here: the instruction files are longer than 16 KiB)");
        }
        instructions.files.push(resolved.relative);
    }
    if !instructions.files.is_empty() {
        instructions.section = format!(
            "\n\n# The project's instructions\n\nThe workspace's maintainers wrote these \
             files for assistants working on it. Follow them where they bear on the \
             question. They do not change which files your tools can read.{body}\n"
        );
    }
    instructions
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::workspace::sandbox::Sandbox;
    use crate::workspace::NoDocuments;

    fn workspace(dir: &std::path::Path) -> Workspace {
        Workspace::new(Sandbox::new(dir).unwrap(), Arc::new(NoDocuments))
    }

    #[test]
    fn files_in_order_within_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".github")).unwrap();
        std::fs::write(dir.path().join("CLAUDE.md"), "Use tabs.\n").unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "é".repeat(BUDGET_BYTES)).unwrap();
        std::fs::write(
            dir.path().join(".github/copilot-instructions.md"),
            "Never shown.",
        )
        .unwrap();
        let loaded = load(&workspace(dir.path()));
        assert_eq!(loaded.files, ["AGENTS.md"]);
        assert!(loaded.section.contains("## AGENTS.md"));
        assert!(!loaded.section.contains("Use tabs."));
        let kept = loaded.section.matches('é').count();
        assert_eq!(kept, BUDGET_BYTES / 2);

        std::fs::write(dir.path().join("AGENTS.md"), "Run `make check`.").unwrap();
        let loaded = load(&workspace(dir.path()));
        assert_eq!(
            loaded.files,
            ["AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md"]
        );
        let agents = loaded.section.find("Run `make check`.").unwrap();
        let claude = loaded.section.find("Use tabs.").unwrap();
        assert!(agents < claude);
    }

    #[test]
    fn nothing_without_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("AGENTS.md")).unwrap();
        std::fs::write(dir.path().join("CLAUDE.md"), "  \n").unwrap();
        assert_eq!(load(&workspace(dir.path())), Instructions::default());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_to_a_secret_or_outside_is_never_read() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("notes.md"), "OUTSIDE-CANARY").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".env"), "SECRET-CANARY").unwrap();
        std::os::unix::fs::symlink(dir.path().join(".env"), dir.path().join("AGENTS.md")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("notes.md"),
            dir.path().join("CLAUDE.md"),
        )
        .unwrap();
        let loaded = load(&workspace(dir.path()));
        assert!(loaded.files.is_empty(), "{loaded:?}");
        assert!(!loaded.section.contains("CANARY"));
    }
}

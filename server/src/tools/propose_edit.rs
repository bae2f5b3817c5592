//! `propose_edit`: records a suggested edit for the user to review. Nothing is written.

use std::path::PathBuf;

use serde::Deserialize;

use super::error::ToolError;
use super::ToolOutput;
use crate::workspace::{TextSource, Workspace};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub path: String,
    pub old_text: String,
    pub new_text: String,
    pub title: Option<String>,
}

/// A suggested edit as the tool saw it. The editor surface re-anchors it by `old_text`
/// against the document's text when it offers it, so this holds no positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProposedEdit {
    pub title: String,
    pub path: String,
    pub absolute: PathBuf,
    pub old_text: String,
    pub new_text: String,
    /// The editor's version of the document when it was open at proposal time.
    pub version: Option<i32>,
    /// An empty `old_text`: the edit creates this file.
    pub creates_file: bool,
    /// The edit changes tool, editor or CI configuration (see [`is_protected_path`]).
    pub protected: bool,
    /// 1-based lines of `old_text` in the text it was proposed against.
    pub start_line: usize,
    pub end_line: usize,
}

pub fn run(args: Args, workspace: &Workspace) -> Result<ToolOutput, ToolError> {
    let resolved = workspace.sandbox.resolve_allow_missing(&args.path)?;
    if resolved.absolute.is_dir() {
        return Err(ToolError::IsDirectory(resolved.relative));
    }
    let protected = is_protected_path(&resolved.relative);
    let mut title = args
        .title
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| format!("Edit {}", resolved.relative));
    if protected {
        title = format!(
            "{title} (changes tool or CI configuration: {})",
            resolved.relative
        );
    }
    let open = workspace.open_document(&resolved.absolute);
    if args.old_text.is_empty() {
        if resolved.absolute.exists() || open.is_some() {
            return Err(ToolError::Invalid(format!(
                "{} already exists; to change it, give old_text copied exactly from the file (empty old_text only creates new files)",
                resolved.relative
            )));
        }
        let lines = super::read_file::split_lines(&args.new_text).len().max(1);
        let edit = ProposedEdit {
            title: title.clone(),
            path: resolved.relative.clone(),
            absolute: resolved.absolute,
            old_text: String::new(),
            new_text: args.new_text,
            version: None,
            creates_file: true,
            protected,
            start_line: 1,
            end_line: lines,
        };
        return Ok(ToolOutput::ok(
            format!(
                "Recorded a suggested edit \"{title}\" creating {} ({lines} lines). Nothing was written; the user will review it.",
                edit.path
            ),
            format!("new file {}", edit.path),
        )
        .with_edit(edit));
    }
    if args.old_text == args.new_text {
        return Err(ToolError::Invalid(
            "new_text is identical to old_text; nothing would change".into(),
        ));
    }
    let file = workspace.read_text(&resolved)?;
    // `old_text` is matched against the text the model was shown, not the real one:
    // otherwise "does not occur" against "occurs once" would tell the model, a guess at
    // a time, what a redacted secret is. It must also occur in the real text, where
    // the edit applies: old_text holding a marker cannot.
    let shown = crate::workspace::redact::redact(&file.text);
    if shown.contains(&args.old_text) && !file.text.contains(&args.old_text) {
        return Err(ToolError::Invalid(format!(
            "old_text holds redacted text ([redacted: …]) from {}; a line holding a secret cannot be edited, choose old_text around it",
            resolved.relative
        )));
    }
    let occurrences = shown.matches(&args.old_text).count();
    match occurrences {
        1 => {}
        0 => {
            return Err(ToolError::Invalid(format!(
                "old_text does not occur in {}; read the file again and copy the text exactly, including indentation",
                resolved.relative
            )))
        }
        n => {
            return Err(ToolError::Invalid(format!(
                "old_text occurs {n} times in {}; include more surrounding lines so that it occurs exactly once",
                resolved.relative
            )))
        }
    }
    // Redaction keeps lines, so the line found in the shown text is the real one.
    let offset = shown.find(&args.old_text).unwrap_or(0);
    let start_line = 1 + count_line_breaks(&shown[..offset]);
    let end_line = start_line + count_line_breaks(args.old_text.trim_end_matches(['\n', '\r']));
    let version = match file.source {
        TextSource::Editor { version, .. } => Some(version),
        TextSource::Disk => None,
    };
    let edit = ProposedEdit {
        title: title.clone(),
        path: resolved.relative.clone(),
        absolute: resolved.absolute,
        old_text: args.old_text,
        new_text: args.new_text,
        version,
        creates_file: false,
        protected,
        start_line,
        end_line,
    };
    Ok(ToolOutput::ok(
        format!(
            "Recorded a suggested edit \"{title}\" to {}:{start_line}-{end_line}. Nothing was written; the user will review it.",
            edit.path
        ),
        format!("edit {}:{start_line}-{end_line}", edit.path),
    )
    .with_edit(edit))
}

/// Line breaks as an editor counts them: `\r\n` is one, a lone `\r` or `\n` is one.
pub fn count_line_breaks(text: &str) -> usize {
    text.matches('\n').count() + text.matches('\r').count() - text.matches("\r\n").count()
}

/// Paths whose change alters how tools, editors, package managers or CI behave. Such an
/// edit may be proposed, but its title says so plainly and it is never pre-selected.
pub fn is_protected_path(relative: &str) -> bool {
    let lower = relative.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    const DIRS: &[&str] = &[
        ".vscode/",
        ".github/workflows/",
        ".github/actions/",
        ".claude/",
        ".cursor/",
        ".circleci/",
        ".buildkite/",
        ".ci/",
        ".devcontainer/",
        ".husky/",
        ".cargo/",
        ".idea/",
        ".zed/",
        ".helix/",
    ];
    const NAMES: &[&str] = &[
        ".mcp.json",
        ".npmrc",
        ".yarnrc",
        ".yarnrc.yml",
        ".pnpmrc",
        "pnpm-workspace.yaml",
        ".pypirc",
        "pip.conf",
        "rust-toolchain",
        "rust-toolchain.toml",
        ".gitlab-ci.yml",
        ".travis.yml",
        "azure-pipelines.yml",
        "bitbucket-pipelines.yml",
        "jenkinsfile",
        ".pre-commit-config.yaml",
        ".envrc",
        ".tool-versions",
        "claude.md",
        "agents.md",
    ];
    DIRS.iter()
        .any(|dir| lower.starts_with(dir) || lower.contains(&format!("/{dir}")))
        || NAMES.contains(&name)
        || name.starts_with(".git")
}

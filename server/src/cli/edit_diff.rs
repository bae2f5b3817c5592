//! A suggested edit as `copilot-ls ask` prints it (PROTOCOL.md section 11): the heading
//! line `edit <path>:<line>-<endLine>` exactly as the contract writes it, the edit's title
//! on a line of its own (text before a diff's `---`, which `git apply` and `patch` pass
//! over), then a unified diff of the file with three lines of context (`--- a/<path>`,
//! `+++ b/<path>`, its hunks), which `git apply` or `patch -p1` would take. The command
//! line never writes: the user applies it, or not.

use crate::history::diff::unified;
use crate::tools::ProposedEdit;

/// Lines of context around each change, as git shows them.
const CONTEXT: u32 = 3;

/// The edit's block: its heading line and its diff, each line ending in `\n`. Shown
/// text passes the same secret redaction as every tool result (the context lines are
/// read from the disk).
pub fn edit_block(edit: &ProposedEdit) -> String {
    let mut text = format!(
        "edit {}:{}-{}\n{}\n",
        edit.path,
        edit.start_line,
        edit.end_line.max(edit.start_line),
        edit.title
    );
    if edit.creates_file {
        text.push_str("--- /dev/null\n");
    } else {
        text.push_str(&format!("--- a/{}\n", edit.path));
    }
    text.push_str(&format!("+++ b/{}\n", edit.path));
    for line in hunks(edit) {
        text.push_str(&line);
        text.push('\n');
    }
    crate::workspace::redact::redact(&text).into_owned()
}

/// The hunks: of the whole file when the edit's old text is found in it exactly once
/// (context from the file, its own line numbers), else of the old text and the new alone,
/// numbered from the edit's first line.
fn hunks(edit: &ProposedEdit) -> Vec<String> {
    if edit.creates_file {
        return unified("", &edit.new_text, CONTEXT);
    }
    if let Ok(file) = std::fs::read_to_string(&edit.absolute) {
        let mut found = file.match_indices(edit.old_text.as_str());
        if let (Some((at, _)), None) = (found.next(), found.next()) {
            let mut changed = String::with_capacity(file.len() + edit.new_text.len());
            changed.push_str(&file[..at]);
            changed.push_str(&edit.new_text);
            changed.push_str(&file[at + edit.old_text.len()..]);
            return unified(&file, &changed, CONTEXT);
        }
    }
    let offset = edit.start_line.saturating_sub(1);
    unified(&edit.old_text, &edit.new_text, CONTEXT)
        .into_iter()
        .map(|line| shifted(&line, offset))
        .collect()
}

/// A hunk header's line numbers moved down by `offset` lines (other lines as they are).
fn shifted(line: &str, offset: usize) -> String {
    let Some(spans) = line
        .strip_prefix("@@ ")
        .and_then(|rest| rest.strip_suffix(" @@"))
    else {
        return line.to_string();
    };
    let shift = |span: &str| -> Option<String> {
        let (sign, span) = span.split_at(1);
        let (start, len) = span.split_once(',')?;
        let start: usize = start.parse().ok()?;
        Some(format!("{sign}{},{len}", start + offset))
    };
    let moved: Option<Vec<String>> = spans.split(' ').map(shift).collect();
    match moved {
        Some(moved) => format!("@@ {} @@", moved.join(" ")),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(path: &std::path::Path, old: &str, new: &str, line: usize) -> ProposedEdit {
        ProposedEdit {
            title: "Raise the burst".into(),
            path: "src/config.rs".into(),
            absolute: path.to_path_buf(),
            old_text: old.into(),
            new_text: new.into(),
            version: None,
            creates_file: old.is_empty(),
            protected: false,
            start_line: line,
            end_line: line,
        }
    }

    #[test]
    fn an_edit_is_a_diff_of_its_file_with_context() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.rs");
        let text: String = (1..=9).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&file, &text).unwrap();
        let block = edit_block(&edit(&file, "line 5\n", "line five\n", 5));
        assert_eq!(
            block,
            "edit src/config.rs:5-5\nRaise the burst\n--- a/src/config.rs\n+++ b/src/config.rs\n\
             @@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+line five\n line 6\n line 7\n line 8\n"
        );
    }

    #[test]
    fn without_its_file_the_old_and_new_text_are_numbered_from_the_edit() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone.rs");
        let block = edit_block(&edit(&gone, "a\nb\n", "a\nc\n", 40));
        assert!(
            block.ends_with("@@ -40,2 +40,2 @@\n a\n-b\n+c\n"),
            "{block}"
        );
        let created = edit_block(&edit(&gone, "", "fn main() {}\n", 1));
        assert!(
            created
                .contains("--- /dev/null\n+++ b/src/config.rs\n@@ -0,0 +1,1 @@\n+fn main() {}\n"),
            "{created}"
        );
    }
}

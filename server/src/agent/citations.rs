//! Citations: from the `answer` tool, or parsed from `path:line` / `path:line-line`
//! mentions in a plain-text answer, each checked against the workspace (the editor's
//! text for open documents) and given a whole-line span in the negotiated encoding.

use std::path::PathBuf;

use ropey::Rope;

use crate::text::{self, Pos, PositionEncoding, Span};
use crate::tools::answer;
use crate::workspace::read_disk_text;
use crate::workspace::Workspace;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Citation {
    /// Workspace-relative with `/` separators (as given, when it could not be resolved).
    pub path: String,
    pub uri: String,
    pub absolute: PathBuf,
    pub line: usize,
    pub end_line: usize,
    pub note: Option<String>,
    /// The file exists in the workspace and the lines exist in it.
    pub verified: bool,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct CitedLines {
    pub path: String,
    pub line: usize,
    pub end_line: usize,
    pub note: Option<String>,
}

/// Citations given to the `answer` tool: always kept, verified or not.
pub fn from_answer_tool(
    workspace: &Workspace,
    args: &answer::Args,
    encoding: PositionEncoding,
) -> Vec<Citation> {
    let mut out: Vec<Citation> = Vec::new();
    for cited in &args.citations {
        let line = cited.line.max(1) as usize;
        let end_line = cited.end_line.map_or(line, |e| (e as usize).max(line));
        let citation = check(
            workspace,
            &CitedLines {
                path: cited.path.clone(),
                line,
                end_line,
                note: cited.note.clone().filter(|n| !n.trim().is_empty()),
            },
            encoding,
        );
        if !out.iter().any(|c| same_place(c, &citation)) {
            out.push(citation);
        }
    }
    out
}

/// Citations mentioned in a plain-text answer. Mentions of files that do not exist in
/// the workspace are dropped (they are usually not paths at all, e.g. `host:8080`).
pub fn from_text(workspace: &Workspace, answer: &str, encoding: PositionEncoding) -> Vec<Citation> {
    let mut out: Vec<Citation> = Vec::new();
    for cited in mentions(answer) {
        let Ok(resolved) = workspace.resolve_readable(&cited.path) else {
            continue;
        };
        if resolved.absolute.is_dir() {
            continue;
        }
        let citation = check(workspace, &cited, encoding);
        if !out.iter().any(|c| same_place(c, &citation)) {
            out.push(citation);
        }
    }
    out
}

fn same_place(a: &Citation, b: &Citation) -> bool {
    a.path == b.path && a.line == b.line && a.end_line == b.end_line
}

/// Checks one cited range against the workspace and computes its span.
pub fn check(workspace: &Workspace, cited: &CitedLines, encoding: PositionEncoding) -> Citation {
    let unverified = |path: String, absolute: PathBuf| {
        let span = Span {
            start: Pos::new(cited.line.saturating_sub(1) as u32, 0),
            end: Pos::new(cited.end_line as u32, 0),
        };
        Citation {
            uri: text::file_uri(&absolute),
            path,
            absolute,
            line: cited.line,
            end_line: cited.end_line,
            note: cited.note.clone(),
            verified: false,
            span,
        }
    };
    let resolved = match workspace.resolve_readable(&cited.path) {
        Ok(resolved) => resolved,
        Err(_) => {
            let shown = cited.path.trim_start_matches("./").to_string();
            let inside = shown.trim_start_matches('/');
            let absolute = workspace
                .sandbox
                .join_shown(inside)
                .unwrap_or_else(|| workspace.root().join(inside));
            return unverified(shown, absolute);
        }
    };
    let rope = match workspace.open_document(&resolved.absolute) {
        Some(doc) => doc.rope,
        None => match read_disk_text(&resolved.absolute, &resolved.relative) {
            Ok(text) => Rope::from_str(&text),
            Err(_) => return unverified(resolved.relative, resolved.absolute),
        },
    };
    let lines = shown_line_count(&rope);
    if cited.line == 0 || cited.end_line > lines {
        return unverified(resolved.relative, resolved.absolute);
    }
    Citation {
        uri: text::file_uri(&resolved.absolute),
        path: resolved.relative,
        absolute: resolved.absolute,
        line: cited.line,
        end_line: cited.end_line,
        note: cited.note.clone(),
        verified: true,
        span: text::line_span(&rope, cited.line - 1, cited.end_line - 1, encoding),
    }
}

/// Lines a person sees: a trailing line break does not open another line.
fn shown_line_count(rope: &Rope) -> usize {
    let total = rope.len_lines();
    let len = rope.len_chars();
    if len == 0 {
        return 0;
    }
    let last = rope.char(len - 1);
    if last == '\n' || last == '\r' {
        total - 1
    } else {
        total
    }
}

/// Finds `path:line` and `path:line-line` mentions. The path is the run of path
/// characters before the colon; backticks, brackets and parentheses end it.
pub fn mentions(text: &str) -> Vec<CitedLines> {
    let is_path_char =
        |c: char| c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | '@' | '~');
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut found = Vec::new();
    for (i, &(byte, c)) in chars.iter().enumerate() {
        if c != ':' {
            continue;
        }
        let mut start = i;
        while start > 0 && is_path_char(chars[start - 1].1) {
            start -= 1;
        }
        if start == i {
            continue;
        }
        let path = &text[chars[start].0..byte];
        let path = path.trim_end_matches('.');
        if path.is_empty() || !path.chars().any(|c| c.is_alphanumeric()) {
            continue;
        }
        let rest = &text[byte + 1..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(line) = digits.parse::<usize>() else {
            continue;
        };
        let after = &rest[digits.len()..];
        let end_line = after
            .strip_prefix('-')
            .or_else(|| after.strip_prefix('–'))
            .map(|r| {
                r.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
            })
            .and_then(|d| d.parse::<usize>().ok())
            .filter(|&e| e >= line)
            .unwrap_or(line);
        if line == 0 {
            continue;
        }
        found.push(CitedLines {
            path: path.trim_start_matches("./").to_string(),
            line,
            end_line,
            note: None,
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_single_lines_and_ranges_in_prose_and_code_spans() {
        let found = mentions(
            "See `src/rate_limit.rs:26-34` and (src/config.rs:12), also http://host:8080 and a:b.",
        );
        let shown: Vec<_> = found
            .iter()
            .map(|c| format!("{}:{}-{}", c.path, c.line, c.end_line))
            .collect();
        assert_eq!(
            shown,
            vec![
                "src/rate_limit.rs:26-34",
                "src/config.rs:12-12",
                "//host:8080-8080"
            ]
        );
    }
}

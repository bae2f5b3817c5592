//! `read_file`: numbered lines of a file, at most 400 per call, editor text when open.

use serde::Deserialize;

use super::error::ToolError;
use super::ToolOutput;
use crate::workspace::{FileText, TextSource, Workspace};

/// Lines returned by one call; the closing note tells the model how to read on.
pub const WINDOW_LINES: usize = 400;
/// Longer lines are cut so one minified line cannot fill the model's context.
const MAX_LINE_CHARS: usize = 1000;
/// A window stops early past this many bytes (400 long lines would still be too many).
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub path: String,
    pub start_line: Option<u64>,
    pub end_line: Option<u64>,
}

pub fn run(args: Args, workspace: &Workspace) -> Result<ToolOutput, ToolError> {
    let workspace = &workspace.asking_editor();
    let resolved = workspace.resolve_readable(&args.path)?;
    if resolved.absolute.is_dir() {
        return Err(ToolError::IsDirectory(resolved.relative));
    }
    let file = workspace.read_redacted(&resolved)?;
    let text = render(
        &resolved.relative,
        &file,
        args.start_line,
        args.end_line,
        "read_file",
    )?;
    Ok(text)
}

/// Renders a window of numbered lines; shared with `read_open_buffer`.
pub fn render(
    path: &str,
    file: &FileText,
    start_line: Option<u64>,
    end_line: Option<u64>,
    tool: &str,
) -> Result<ToolOutput, ToolError> {
    let lines: Vec<&str> = split_lines(&file.text);
    let total = lines.len();
    let start = start_line.unwrap_or(1).max(1) as usize;
    if total == 0 {
        return Ok(ToolOutput::ok(
            format!("{}(empty file)", header(path, file)),
            format!("{path}: empty"),
        ));
    }
    if start > total {
        return Err(ToolError::Invalid(format!(
            "start_line {start} is past the end of {path}, which has {total} lines"
        )));
    }
    let requested_end = end_line.map(|e| e as usize).unwrap_or(total).min(total);
    if requested_end < start {
        return Err(ToolError::Invalid(format!(
            "end_line {requested_end} is before start_line {start}"
        )));
    }
    let mut end = requested_end.min(start + WINDOW_LINES - 1);
    let mut out = header(path, file);
    for (offset, line) in lines[start - 1..end].iter().enumerate() {
        out.push_str(&(start + offset).to_string());
        out.push('\t');
        push_capped(&mut out, line);
        out.push('\n');
        if out.len() > MAX_OUTPUT_BYTES {
            end = start + offset;
            break;
        }
    }
    if end < requested_end || (end_line.is_none() && end < total) {
        out.push_str(&format!(
            "(showing lines {start}-{end} of {total}; call {tool} with start_line={} to read on)\n",
            end + 1
        ));
    } else if start > 1 || end < total {
        out.push_str(&format!("(lines {start}-{end} of {total})\n"));
    }
    Ok(ToolOutput::ok(out, format!("{path}:{start}-{end}")))
}

fn header(path: &str, file: &FileText) -> String {
    match &file.source {
        TextSource::Disk => String::new(),
        TextSource::Editor { version, modified } => format!(
            "({path} is open in the editor; this is its current text, version {version}{})\n",
            if *modified {
                ", with unsaved changes"
            } else {
                ""
            }
        ),
    }
}

fn push_capped(out: &mut String, line: &str) {
    if line.chars().count() <= MAX_LINE_CHARS {
        out.push_str(line);
    } else {
        out.extend(line.chars().take(MAX_LINE_CHARS));
        out.push_str(" …[line cut]");
    }
}

/// Lines as an editor counts them, without their line breaks (`\n`, `\r\n`, `\r`).
/// A trailing line break does not open a line that would be shown.
pub fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&text[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < bytes.len() {
        lines.push(&text[start..]);
    }
    lines
}

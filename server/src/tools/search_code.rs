//! `search_code`: ripgrep's searcher over the workspace, open documents searched in
//! their editor text, at most 100 matching lines shown; what is searched and shown is
//! the redacted text.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::WalkState;
use serde::Deserialize;

use super::error::ToolError;
use super::{Place, ToolOutput};
use crate::workspace::redact::{self, redact};
use crate::workspace::walk;
use crate::workspace::{Workspace, MAX_READ_BYTES};

pub const MAX_MATCHES: usize = 100;
/// A walker thread's read buffer to start with (it grows to the largest file read).
const BUFFER: usize = 64 * 1024;
/// A matching line is shown up to this many chars.
const MAX_LINE_CHARS: usize = 300;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub pattern: String,
    pub path: Option<String>,
    #[serde(default)]
    pub regex: bool,
    #[serde(default)]
    pub case_sensitive: bool,
}

/// The matches of one file: its first lines (enough to fill the output) and a count.
struct FileMatches {
    relative: String,
    lines: Vec<(u64, String)>,
    count: usize,
}

pub fn run(args: Args, workspace: &Workspace) -> Result<ToolOutput, ToolError> {
    if args.pattern.is_empty() {
        return Err(ToolError::Invalid("pattern must not be empty".into()));
    }
    // Every root, with several and no path; else the one directory or file named.
    let scopes = workspace
        .sandbox
        .scope(args.path.as_deref().unwrap_or("."))?;
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(!args.case_sensitive)
        .fixed_strings(!args.regex)
        .line_terminator(Some(b'\n'))
        .build(&args.pattern)
        .map_err(|e| ToolError::Invalid(format!("invalid regex: {e}")))?;

    // Open documents are searched in their editor text, not on disk, redacted as the
    // model would be shown it.
    let open: HashMap<PathBuf, String> = workspace
        .open_documents()
        .into_iter()
        .map(|doc| {
            let text = doc.rope.to_string();
            let shown = redact(&text).into_owned();
            (doc.path, shown)
        })
        .collect();

    let results = Mutex::new(Vec::new());
    let sandbox = &workspace.sandbox;
    let unreached = walk::Unreached::default();
    let mut visited_open = Vec::new();
    let one_file = match &scopes[..] {
        [scope] if scope.absolute.is_file() => Some(scope),
        _ => None,
    };
    if let Some(scope) = one_file {
        let relative = || Some(scope.relative.clone());
        let file = || crate::workspace::read::open_regular_file(&scope.absolute);
        if let Some(found) = search_one(
            &mut searcher(),
            &matcher,
            (&scope.absolute, file),
            false,
            relative,
            (&open, &mut Vec::with_capacity(BUFFER)),
        ) {
            results
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(found);
        }
        visited_open.push(scope.absolute.clone());
    } else {
        let starts: Vec<&std::path::Path> = scopes.iter().map(|s| s.absolute.as_path()).collect();
        walk::builder_over(&starts).build_parallel().run(|| {
            let results = &results;
            let matcher = &matcher;
            let open = &open;
            let unreached = &unreached;
            // One searcher per walker thread, as ripgrep does: building one zeroes a
            // 64 KiB line buffer, which per file was the largest cost after reading.
            let mut searcher = searcher();
            let mut buffer = Vec::with_capacity(BUFFER);
            Box::new(move |entry| {
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(error) => {
                        unreached.note(sandbox, &error);
                        return WalkState::Continue;
                    }
                };
                if !walk::is_file(&entry) || !walk::admits(sandbox, &entry) {
                    return WalkState::Continue;
                }
                // The relative path is only needed for files that match (most do not).
                let relative = || sandbox.relative(entry.path());
                let path = entry.path();
                let file = || walk::open_file(&entry);
                if let Some(found) = search_one(
                    &mut searcher,
                    matcher,
                    (path, file),
                    entry.path_is_symlink(),
                    relative,
                    (open, &mut buffer),
                ) {
                    results
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(found);
                }
                WalkState::Continue
            })
        });
    }
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    // Unsaved new documents that exist only in the editor.
    for (path, text) in &open {
        let in_scope = scopes.iter().any(|scope| path.starts_with(&scope.absolute));
        if path.exists() || visited_open.contains(path) || !in_scope {
            continue;
        }
        let Some(relative) = sandbox.relative(path) else {
            continue;
        };
        if sandbox.resolve_allow_missing(&relative).is_err() {
            continue;
        }
        if let Some(found) = search_text(&matcher, text.as_bytes(), &relative) {
            results.push(found);
        }
    }
    results.sort_by(|a, b| a.relative.cmp(&b.relative));
    let mut output = render(&args.pattern, results);
    super::push_unreached(&mut output.text, &unreached);
    Ok(output)
}

fn searcher() -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .build()
}

/// Searches one file, opened by `open_file` unless the editor has it open; `relative`
/// names it, and is called only when something matched (`None` drops the file).
fn search_one(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    (path, open_file): (
        &std::path::Path,
        impl FnOnce() -> std::io::Result<std::fs::File>,
    ),
    is_symlink: bool,
    relative: impl FnOnce() -> Option<String>,
    (open, buffer): (&HashMap<PathBuf, String>, &mut Vec<u8>),
) -> Option<FileMatches> {
    if !open.is_empty() {
        // Walked paths below the canonical root are canonical already, unless the entry
        // is a symlink: only then is a syscall needed to find its document.
        let text = match open.get(path) {
            Some(text) => Some(text),
            None if is_symlink => std::fs::canonicalize(path).ok().and_then(|c| open.get(&c)),
            None => None,
        };
        if let Some(text) = text {
            return search_text(matcher, text.as_bytes(), &relative()?);
        }
    }
    // Opened through the workspace so a FIFO or a pseudo file never blocks the search;
    // read whole (once: the redaction below needs the text the search saw).
    let mut file = open_file().ok()?;
    let bytes = buffer;
    bytes.clear();
    {
        // Through `take`: a plain `File::read_to_end` asks for the size first, a
        // syscall per file for nothing (the buffer is reused, and large enough).
        use std::io::Read;
        (&mut file)
            .take(MAX_READ_BYTES + 1)
            .read_to_end(bytes)
            .ok()?;
    }
    let mut matched: Vec<(u64, String)> = Vec::new();
    let sink = lines_into(&mut matched);
    let huge = bytes.len() as u64 > MAX_READ_BYTES;
    if huge {
        // Past what is read whole: searched as a stream from the start, its matching
        // lines redacted each alone (a key block's body line is not recognised there).
        use std::io::Seek;
        bytes.clear();
        bytes.shrink_to(BUFFER);
        file.rewind().ok()?;
        let _ = searcher.search_file(matcher, &file, sink);
    } else {
        let _ = searcher.search_slice(matcher, bytes, sink);
    }
    if matched.is_empty() {
        return None;
    }
    let relative = relative()?;
    // A hit is shown, and counted, as the model may see its line: redacted, so a
    // pattern that matched only inside a secret finds nothing, and no search tells what
    // a redacted value is. A text where a secret may span lines (a key block: a body
    // line alone does not show it) is redacted whole; any other, line by line, only
    // the lines that matched (`redact::needs_whole_text` says when that is the same).
    if !huge && redact::needs_whole_text(&*bytes) {
        let text = String::from_utf8_lossy(bytes);
        return match redact(&text) {
            Cow::Owned(shown) => search_text(matcher, shown.as_bytes(), &relative),
            Cow::Borrowed(_) => Some(collect(relative, matched)),
        };
    }
    let lines: Vec<&str> = matched.iter().map(|(_, line)| line.as_str()).collect();
    let redacted = redact::redact_each_line(&lines);
    let shown = matched
        .into_iter()
        .zip(redacted)
        .filter_map(|((line_number, line), redacted)| match redacted {
            None => Some((line_number, line)),
            Some(redacted) => {
                let still = matcher.is_match(redacted.trim_end_matches(['\n', '\r']).as_bytes());
                still.ok()?.then_some((line_number, redacted))
            }
        });
    let found = collect(relative, shown.collect());
    (found.count > 0).then_some(found)
}

/// A file's matching lines, the first ones kept to show (capped), all counted.
fn collect(relative: String, lines: Vec<(u64, String)>) -> FileMatches {
    let count = lines.len();
    let lines = lines
        .into_iter()
        .take(MAX_MATCHES)
        .map(|(line_number, line)| (line_number, cap_line(&line)))
        .collect();
    FileMatches {
        relative,
        lines,
        count,
    }
}

fn search_text(matcher: &RegexMatcher, text: &[u8], relative: &str) -> Option<FileMatches> {
    let mut matched: Vec<(u64, String)> = Vec::new();
    let _ = searcher().search_slice(matcher, text, lines_into(&mut matched));
    (!matched.is_empty()).then(|| collect(relative.to_string(), matched))
}

/// A sink keeping each matching line whole, with its number.
fn lines_into(
    matched: &mut Vec<(u64, String)>,
) -> Lossy<impl FnMut(u64, &str) -> Result<bool, std::io::Error> + '_> {
    Lossy(move |line_number, line| {
        matched.push((line_number, line.to_string()));
        Ok(true)
    })
}

fn cap_line(line: &str) -> String {
    let line = line.trim_end_matches(['\n', '\r']);
    if line.chars().count() <= MAX_LINE_CHARS {
        line.to_string()
    } else {
        let mut cut: String = line.chars().take(MAX_LINE_CHARS).collect();
        cut.push_str(" …");
        cut
    }
}

fn render(pattern: &str, results: Vec<FileMatches>) -> ToolOutput {
    let total: usize = results.iter().map(|r| r.count).sum();
    let files = results.len();
    if total == 0 {
        return ToolOutput::ok(format!("(no matches for {pattern})"), "no matches".into());
    }
    let mut out = String::new();
    let mut places = Vec::new();
    let mut shown = 0;
    for file in &results {
        for (line, text) in &file.lines {
            if shown == MAX_MATCHES {
                break;
            }
            out.push_str(&format!("{}:{}: {}\n", file.relative, line, text));
            places.push(Place {
                path: file.relative.clone(),
                line: *line as usize,
                end_line: *line as usize,
                symbol: None,
                excerpt: Some(text.clone()),
            });
            shown += 1;
        }
    }
    if total > shown {
        out.push_str(&format!(
            "({} not shown, {total} in {}; narrow the pattern or the path)\n",
            counted(total - shown, "more match", "more matches"),
            counted(files, "file", "files")
        ));
    }
    let summary = format!(
        "{} in {}",
        counted(total, "match", "matches"),
        counted(files, "file", "files")
    );
    ToolOutput::ok(out, summary).with_places(places)
}

/// `1 file`, `2 files`: summaries are read by people.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::counted;

    #[test]
    fn counts_read_as_english() {
        assert_eq!(counted(1, "file", "files"), "1 file");
        assert_eq!(counted(2, "file", "files"), "2 files");
        assert_eq!(counted(0, "match", "matches"), "0 matches");
    }
}

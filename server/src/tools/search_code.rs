//! `search_code`: ripgrep's searcher over the workspace, open documents searched in
//! their editor text, at most 100 matching lines shown; what is searched and shown is
//! the redacted text.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Mutex;

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
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

/// The matches found so far: every file's count, and the lines of only those files that
/// can still be among the first `MAX_MATCHES` shown (files are shown in path order), so
/// a common word's hundreds of thousands of matching lines are counted, not kept.
#[derive(Default)]
struct Kept {
    /// By path: a file's first lines, enough to fill the output.
    files: BTreeMap<String, Vec<(u64, String)>>,
    /// Lines in `files`.
    held: usize,
    total: usize,
    file_count: usize,
}

impl Kept {
    /// Whether the lines of a file named `relative` would be kept now (they are still
    /// counted when not).
    fn wants(&self, relative: &str) -> bool {
        self.held < MAX_MATCHES
            || self
                .files
                .last_key_value()
                .is_some_and(|(last, _)| relative < last.as_str())
    }

    /// Adds a file's count, and its lines if given, and drops the lines of the last
    /// files while those before them fill the output.
    fn add(&mut self, relative: String, count: usize, lines: Option<Vec<(u64, String)>>) {
        self.total += count;
        self.file_count += 1;
        let Some(lines) = lines else {
            return;
        };
        self.held += lines.len();
        self.files.insert(relative, lines);
        while let Some((_, last)) = self.files.last_key_value() {
            if self.held - last.len() < MAX_MATCHES {
                break;
            }
            self.held -= last.len();
            self.files.pop_last();
        }
    }
}

/// `Kept`, shared by the walker's threads.
type Found = Mutex<Kept>;

/// Adds one file's `count` matches to `found`; `shown` gives the lines to show, and is
/// called only when they may be kept (outside the lock: it caps and copies them).
fn add_file(
    found: &Found,
    relative: String,
    count: usize,
    shown: impl FnOnce() -> Vec<(u64, String)>,
) {
    let lock = || found.lock().unwrap_or_else(|e| e.into_inner());
    let lines = lock().wants(&relative).then(shown);
    lock().add(relative, count, lines);
}

/// A file's matching lines as the searcher reports them: joined into one text, each
/// ending in a line break, with where each starts and its number. One per walker
/// thread, reused from file to file (a `String` per line was most of the cost of a
/// common word after the redaction).
#[derive(Default)]
struct Matched {
    joined: String,
    starts: Vec<usize>,
    numbers: Vec<u64>,
}

impl Matched {
    fn clear(&mut self) {
        self.joined.clear();
        self.starts.clear();
        self.numbers.clear();
    }

    fn line(&self, i: usize) -> &str {
        let end = self.starts.get(i + 1).copied().unwrap_or(self.joined.len());
        &self.joined[self.starts[i]..end]
    }
}

impl Sink for &mut Matched {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, hit: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        self.starts.push(self.joined.len());
        self.numbers.push(hit.line_number().unwrap_or(0));
        match std::str::from_utf8(hit.bytes()) {
            Ok(line) => self.joined.push_str(line),
            Err(_) => self.joined.push_str(&String::from_utf8_lossy(hit.bytes())),
        }
        if !self.joined.ends_with('\n') {
            self.joined.push('\n');
        }
        Ok(true)
    }
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

    let found: Found = Mutex::new(Kept::default());
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
        search_one(
            (&mut searcher(), &matcher),
            (&scope.absolute, file),
            false,
            relative,
            (
                &open,
                &mut Vec::with_capacity(BUFFER),
                &mut Matched::default(),
            ),
            &found,
        );
        visited_open.push(scope.absolute.clone());
    } else {
        let starts: Vec<&std::path::Path> = scopes.iter().map(|s| s.absolute.as_path()).collect();
        walk::builder_over(&starts).build_parallel().run(|| {
            let found = &found;
            let matcher = &matcher;
            let open = &open;
            let unreached = &unreached;
            // One searcher per walker thread, as ripgrep does: building one zeroes a
            // 64 KiB line buffer, which per file was the largest cost after reading.
            let mut searcher = searcher();
            let mut buffer = Vec::with_capacity(BUFFER);
            let mut matched = Matched::default();
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
                search_one(
                    (&mut searcher, matcher),
                    (path, file),
                    entry.path_is_symlink(),
                    relative,
                    (open, &mut buffer, &mut matched),
                    found,
                );
                WalkState::Continue
            })
        });
    }
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
        search_text(&matcher, text.as_bytes(), relative, &found);
    }
    let kept = found.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut output = render(&args.pattern, kept);
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
    (searcher, matcher): (&mut Searcher, &RegexMatcher),
    (path, open_file): (
        &std::path::Path,
        impl FnOnce() -> std::io::Result<std::fs::File>,
    ),
    is_symlink: bool,
    relative: impl FnOnce() -> Option<String>,
    (open, bytes, matched): (&HashMap<PathBuf, String>, &mut Vec<u8>, &mut Matched),
    found: &Found,
) -> Option<()> {
    if !open.is_empty() {
        // Walked paths below the canonical root are canonical already, unless the entry
        // is a symlink: only then is a syscall needed to find its document.
        let text = match open.get(path) {
            Some(text) => Some(text),
            None if is_symlink => std::fs::canonicalize(path).ok().and_then(|c| open.get(&c)),
            None => None,
        };
        if let Some(text) = text {
            search_text(matcher, text.as_bytes(), relative()?, found);
            return Some(());
        }
    }
    // Opened through the workspace so a FIFO or a pseudo file never blocks the search;
    // read whole (once: the redaction below needs the text the search saw).
    let mut file = open_file().ok()?;
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
    matched.clear();
    let huge = bytes.len() as u64 > MAX_READ_BYTES;
    if huge {
        // Past what is read whole: searched as a stream from the start, its matching
        // lines redacted each alone (a key block's body line is not recognised there).
        use std::io::Seek;
        bytes.clear();
        bytes.shrink_to(BUFFER);
        file.rewind().ok()?;
        let _ = searcher.search_file(matcher, &file, &mut *matched);
    } else {
        let _ = searcher.search_slice(matcher, bytes, &mut *matched);
    }
    if matched.starts.is_empty() {
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
        if let Cow::Owned(shown) = redact(&text) {
            search_text(matcher, shown.as_bytes(), relative, found);
            return Some(());
        }
        add_all(matched, relative, found);
        return Some(());
    }
    let redacted = redact::redact_joined_lines(&matched.joined, &matched.starts);
    let counts = |i: usize| match &redacted[i] {
        None => true,
        Some(line) => matcher
            .is_match(line.trim_end_matches(['\n', '\r']).as_bytes())
            .unwrap_or(false),
    };
    let counted: Vec<usize> = (0..matched.starts.len()).filter(|i| counts(*i)).collect();
    if counted.is_empty() {
        return None;
    }
    add_file(found, relative, counted.len(), || {
        counted
            .iter()
            .take(MAX_MATCHES)
            .map(|&i| {
                let line = redacted[i].as_deref().unwrap_or_else(|| matched.line(i));
                (matched.numbers[i], cap_line(line))
            })
            .collect()
    });
    Some(())
}

/// Adds every line of `matched` as it is, all counted.
fn add_all(matched: &Matched, relative: String, found: &Found) {
    let count = matched.starts.len();
    add_file(found, relative, count, || {
        (0..count.min(MAX_MATCHES))
            .map(|i| (matched.numbers[i], cap_line(matched.line(i))))
            .collect()
    });
}

/// Searches a text already redacted (an open document's, or a file's redacted whole).
fn search_text(matcher: &RegexMatcher, text: &[u8], relative: String, found: &Found) {
    let mut matched = Matched::default();
    let _ = searcher().search_slice(matcher, text, &mut matched);
    if !matched.starts.is_empty() {
        add_all(&matched, relative, found);
    }
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

fn render(pattern: &str, kept: Kept) -> ToolOutput {
    let (total, files) = (kept.total, kept.file_count);
    if total == 0 {
        return ToolOutput::ok(format!("(no matches for {pattern})"), "no matches".into());
    }
    let mut out = String::new();
    let mut places = Vec::new();
    let mut shown = 0;
    for (relative, lines) in &kept.files {
        for (line, text) in lines {
            if shown == MAX_MATCHES {
                break;
            }
            out.push_str(&format!("{relative}:{line}: {text}\n"));
            places.push(Place {
                path: relative.clone(),
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
    use super::{counted, render, Kept, MAX_MATCHES};

    #[test]
    fn every_file_is_counted_and_only_lines_that_can_be_shown_are_kept() {
        // 60 files of 3 matching lines, found in a scrambled order (37 is prime to 60).
        let mut kept = Kept::default();
        let mut offered = 0;
        for i in (0..60).map(|i| i * 37 % 60) {
            let name = format!("f{i:02}.rs");
            let lines = kept
                .wants(&name)
                .then(|| (1..=3).map(|n| (n, format!("line {n} of {i}"))).collect());
            offered += usize::from(lines.is_some());
            kept.add(name, 3, lines);
        }
        assert_eq!((kept.total, kept.file_count), (180, 60));
        // The first 100 lines are those of the first 34 files; none after is held.
        let held: Vec<&String> = kept.files.keys().collect();
        assert_eq!(held.len(), 34, "{held:?}");
        assert_eq!(held.last().map(|s| s.as_str()), Some("f33.rs"));
        assert!(kept.held >= MAX_MATCHES && kept.held < MAX_MATCHES + 3);
        assert!(
            offered < 60,
            "some files were counted without their lines built"
        );
        let text = render("line", kept).text;
        let shown: Vec<&str> = text.lines().collect();
        assert_eq!(shown.len(), MAX_MATCHES + 1);
        assert_eq!(shown[0], "f00.rs:1: line 1 of 0");
        assert_eq!(shown[99], "f33.rs:1: line 1 of 33");
        assert_eq!(
            shown[100],
            "(80 more matches not shown, 180 in 60 files; narrow the pattern or the path)"
        );
    }

    #[test]
    fn counts_read_as_english() {
        assert_eq!(counted(1, "file", "files"), "1 file");
        assert_eq!(counted(2, "file", "files"), "2 files");
        assert_eq!(counted(0, "match", "matches"), "0 matches");
    }
}

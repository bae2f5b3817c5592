//! One file's occurrences of the name for `find_references`, and the two ways files are
//! gathered: the index's candidates in the answer's order on a few threads, or a walk.
//!
//! How much each file costs is the point of this file. A file whose uses the answer
//! shows is classified: its comments and strings by `syntax`'s lexer, its definitions
//! from the index's record of them (a parse only without an index, or for JSX), and so
//! is every file that defines the name. Any other file past the uses shown is only
//! counted: its whole-word occurrences by their text, so it is read and searched and
//! nothing more.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ignore::WalkState;

use super::references_scope::{self, Qualifier};
use super::MAX_RESULTS;
use crate::syntax::{self, Language, Occurrence, Symbol, SymbolKind};
use crate::workspace::read::{read_index_text, read_known_index_text};
use crate::workspace::{walk, Workspace};

/// A use's line is shown up to this many chars.
const MAX_LINE_CHARS: usize = 300;
/// Files larger than this are not read (the index's bound too).
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// The walk without an index stops after reading this many files or this long.
const MAX_WALK_FILES: usize = 100_000;
const WALK_BUDGET: Duration = Duration::from_secs(10);

/// One use as read from its file.
pub struct Use {
    /// 0-based.
    pub line: usize,
    pub qualifier: Qualifier,
    /// The types whose bodies hold the line (for `self.name` and bare calls).
    pub enclosing: Vec<String>,
}

/// What one file holds of the name.
pub struct FileScan {
    pub relative: String,
    /// The uses of a classified file, in order.
    pub uses: Vec<Use>,
    /// Its definitions of the name (any container).
    pub definitions: Vec<Symbol>,
    /// The trimmed text of each line with a use, by 0-based line.
    pub lines: HashMap<usize, String>,
    /// False when the file has a grammar but its comments and strings were not told
    /// apart (a JSX file past the time budget, or too large to parse).
    pub parsed: bool,
    /// Past the uses the answer shows: its lines with a use, counted by its text.
    pub counted: Option<usize>,
}

impl FileScan {
    /// Its lines with a use, as the answer shows or counts them.
    pub fn use_lines(&self) -> usize {
        self.counted.unwrap_or(self.lines.len())
    }
}

/// How a file's occurrences are told apart.
pub enum Mode {
    /// No index: parse it for its definitions (while the time budget lasts).
    Parse(Instant),
    /// The definitions the index recorded (all the file's when a qualified name needs
    /// the types around each use, else those of the name); a parse only for JSX,
    /// within the budget.
    Recorded(Vec<Symbol>, Instant),
    /// Past the uses shown, and defining no name: counted by its text.
    Counted,
}

/// The byte offsets where `name` occurs as a whole word (letters, digits, `_` and `$`
/// around it are part of a longer identifier).
pub fn word_occurrences(text: &str, name: &str) -> Vec<usize> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    if name.is_empty() {
        return Vec::new();
    }
    // A match of a whole UTF-8 needle starts and ends on char boundaries.
    memchr::memmem::find_iter(text.as_bytes(), name.as_bytes())
        .filter(|&at| {
            let before = text[..at].chars().next_back();
            let after = text[at + name.len()..].chars().next();
            !before.is_some_and(is_word) && !after.is_some_and(is_word)
        })
        .collect()
}

/// Reads one file's uses and definitions of `name`; `None` when it has no whole-word
/// occurrence.
pub fn scan_file(relative: &str, text: &str, name: &str, mode: Mode) -> Option<FileScan> {
    let starts = word_occurrences(text, name);
    if starts.is_empty() {
        return None;
    }
    let language = Language::of_file(relative, text);
    let all_uses = || vec![Occurrence::Use; starts.len()];
    let before = |deadline: Instant| Instant::now() < deadline;
    let (symbols, kinds, parsed, counted) = match (mode, language) {
        (Mode::Counted, _) => (Vec::new(), all_uses(), language.is_none(), true),
        (Mode::Parse(_) | Mode::Recorded(..), None) => (Vec::new(), all_uses(), true, false),
        (Mode::Parse(deadline), Some(language)) if before(deadline) => {
            match syntax::scan_name(text, language, name, &starts) {
                Ok(scan) => (scan.symbols, scan.occurrences, true, false),
                Err(_) => (Vec::new(), all_uses(), false, false),
            }
        }
        (Mode::Parse(_), Some(_)) => (Vec::new(), all_uses(), false, false),
        (Mode::Recorded(symbols, deadline), Some(language)) => {
            let kinds = syntax::classify(text, language, name, &starts, &symbols)
                .map(Ok)
                .unwrap_or_else(|| match before(deadline) {
                    true => syntax::classify_parsed(text, language, name, &starts, &symbols),
                    false => Err(syntax::SyntaxError::TimedOut),
                });
            match kinds {
                Ok(kinds) => (symbols, kinds, true, false),
                Err(_) => {
                    let kinds = syntax::classify_by_text(text, name, &starts, &symbols);
                    (symbols, kinds, false, false)
                }
            }
        }
    };
    let definitions = symbols
        .iter()
        .filter(|s| s.name == name && s.kind != SymbolKind::Impl)
        .cloned()
        .collect();
    let mut scan = FileScan {
        relative: relative.to_string(),
        uses: Vec::new(),
        definitions,
        lines: HashMap::new(),
        parsed,
        counted: None,
    };
    let bytes = text.as_bytes();
    let (mut line, mut counted_to) = (0, 0);
    let mut last_line = None;
    let mut use_lines = 0;
    for (&start, kind) in starts.iter().zip(kinds) {
        line += memchr::memchr_iter(b'\n', &bytes[counted_to..start]).count();
        counted_to = start;
        if kind != Occurrence::Use {
            continue;
        }
        if last_line != Some(line) {
            use_lines += 1;
            last_line = Some(line);
        }
        if counted {
            continue;
        }
        scan.lines
            .entry(line)
            .or_insert_with(|| line_text(text, start));
        scan.uses.push(Use {
            line,
            qualifier: references_scope::qualifier(text, start),
            enclosing: references_scope::enclosing_types(&symbols, line),
        });
    }
    if counted {
        scan.counted = Some(use_lines);
    }
    Some(scan)
}

/// The line holding byte `at`, trimmed and cut to `MAX_LINE_CHARS`.
fn line_text(text: &str, at: usize) -> String {
    let start = memchr::memrchr(b'\n', &text.as_bytes()[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &text.as_bytes()[at..]).map_or(text.len(), |i| at + i);
    let raw = text[start..end].trim();
    if raw.chars().count() <= MAX_LINE_CHARS {
        raw.to_string()
    } else {
        let mut cut: String = raw.chars().take(MAX_LINE_CHARS).collect();
        cut.push_str(" …");
        cut
    }
}

/// When classifying can stop: once the files scanned so far (in the answer's order) hold
/// the uses the answer shows, the rest are only counted, by their text.
pub struct ShowUntil {
    /// Uses found before the scan (open documents).
    pub shown_uses: usize,
}

/// Reads the index's record of every definition in one file (by its shown path).
pub type FileSymbols<'a> = &'a (dyn Fn(&str) -> Vec<Symbol> + Sync);

/// The index's record of each candidate's symbols: `all` of a file's (a qualified
/// name), or only the name's definitions, by path.
pub struct Recorded<'a> {
    pub definitions: &'a HashMap<String, Vec<Symbol>>,
    pub all: Option<FileSymbols<'a>>,
}

/// Scans the index's candidate files on a few threads, in `paths`' order. Files are
/// claimed in order, so the classified ones are a prefix of `paths`.
pub fn scan_in_parallel(
    workspace: &Workspace,
    paths: &[String],
    name: &str,
    deadline: Instant,
    recorded: &Recorded<'_>,
    show_until: Option<ShowUntil>,
) -> Vec<FileScan> {
    // The next file to claim; a claim decides at once whether its file is classified,
    // from the uses found so far (at most those of the files claimed before it, never
    // more): deciding later, after reading the file, let a thread that lost its core
    // while the others raced ahead count an early file by its text, comments and all.
    let next = Mutex::new(0usize);
    let uses = AtomicUsize::new(show_until.as_ref().map_or(0, |until| until.shown_uses));
    let found = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8)
        .min(paths.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let (i, shown) = {
                    let mut next = next.lock().unwrap_or_else(|e| e.into_inner());
                    let i = *next;
                    *next += 1;
                    // The files that define the name are classified whatever the
                    // count (they come first): a definition's comments must not count.
                    let shown = show_until.is_none()
                        || uses.load(Ordering::Acquire) < MAX_RESULTS
                        || paths
                            .get(i)
                            .is_some_and(|p| recorded.definitions.contains_key(p));
                    (i, shown)
                };
                let Some(relative) = paths.get(i) else {
                    break;
                };
                let Some(absolute) = workspace.sandbox.join_shown(relative) else {
                    continue;
                };
                let Some(text) = read_known_index_text(&absolute, MAX_FILE_BYTES) else {
                    continue;
                };
                let definitions = || {
                    recorded
                        .definitions
                        .get(relative)
                        .cloned()
                        .unwrap_or_default()
                };
                let mode = match (shown, recorded.all) {
                    (false, _) => Mode::Counted,
                    (true, Some(all)) => Mode::Recorded(all(relative), deadline),
                    (true, None) => Mode::Recorded(definitions(), deadline),
                };
                if let Some(scan) = scan_file(relative, &text, name, mode) {
                    uses.fetch_add(scan.use_lines(), Ordering::Release);
                    found.lock().unwrap_or_else(|e| e.into_inner()).push(scan);
                }
            });
        }
    });
    found.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// Without an index: walks `starts` (in parallel, as `search_code` does) and scans each
/// file, within a bound; a note when the walk stopped at it.
pub fn walk_and_scan(
    workspace: &Workspace,
    starts: &[&Path],
    open: &std::collections::HashSet<PathBuf>,
    name: &str,
    deadline: Instant,
) -> (Vec<FileScan>, Option<String>) {
    let sandbox = &workspace.sandbox;
    let started = Instant::now();
    let read = AtomicUsize::new(0);
    let found = Mutex::new(Vec::new());
    let stopped = Mutex::new(None);
    walk::builder_over(starts).build_parallel().run(|| {
        let (found, stopped, read) = (&found, &stopped, &read);
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !walk::is_file(&entry) || !walk::admits(sandbox, &entry) {
                return WalkState::Continue;
            }
            if open.contains(entry.path()) {
                return WalkState::Continue;
            }
            let count = read.fetch_add(1, Ordering::Relaxed);
            if count >= MAX_WALK_FILES || started.elapsed() > WALK_BUDGET {
                *stopped.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!(
                    "(stopped after reading {count} files; results may be incomplete: give a path)"
                ));
                return WalkState::Quit;
            }
            let Some(relative) = sandbox.relative(entry.path()) else {
                return WalkState::Continue;
            };
            let Some(text) = read_index_text(entry.path(), MAX_FILE_BYTES) else {
                return WalkState::Continue;
            };
            if let Some(scan) = scan_file(&relative, &text, name, Mode::Parse(deadline)) {
                found.lock().unwrap_or_else(|e| e.into_inner()).push(scan);
            }
            WalkState::Continue
        })
    });
    (
        found.into_inner().unwrap_or_else(|e| e.into_inner()),
        stopped.into_inner().unwrap_or_else(|e| e.into_inner()),
    )
}

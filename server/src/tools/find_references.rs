//! `find_references`: the uses of an identifier outside its definitions, exact and
//! case-sensitive, one `path:line: text` line each, grouped by file, the files that
//! define it first, then source files, then docs and data. Candidate files come from
//! the index's identifier terms (or, without a ready index, a bounded walk); each is
//! read (open documents in their editor text), the name confirmed as a whole word on the
//! line, and, where `syntax/` has a grammar, occurrences in comments and strings and the
//! definitions' own names left out. A
//! qualified name (`TokenBucket.refill`, `TokenBucket::refill`) keeps the uses that
//! resolve to that container's definition as far as the text shows (`references_scope`).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ignore::WalkState;
use serde::Deserialize;

use super::error::ToolError;
use super::references_scope::{self, Qualifier, Wanted};
use super::{Place, ToolOutput};
use crate::index::WorkspaceIndex;
use crate::syntax::{self, Language, Occurrence, Symbol, SymbolKind};
use crate::workspace::read::read_index_text;
use crate::workspace::sandbox::is_refused_name;
use crate::workspace::{walk, Workspace};

pub const MAX_RESULTS: usize = 100;
/// A use's line is shown up to this many chars.
const MAX_LINE_CHARS: usize = 300;
/// Files larger than this are not read (the index's bound too).
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Parsing (to leave out comments and strings) stops after this long in all; the rest
/// of the files are confirmed by their text only, and the result says so.
const PARSE_BUDGET: Duration = Duration::from_secs(3);
/// The walk without an index stops after reading this many files or this long.
const MAX_WALK_FILES: usize = 100_000;
const WALK_BUDGET: Duration = Duration::from_secs(10);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub name: String,
    pub path: Option<String>,
}

/// One use as read from its file.
struct Use {
    /// 0-based.
    line: usize,
    qualifier: Qualifier,
    /// The types whose bodies hold the line (for `self.name` and bare calls).
    enclosing: Vec<String>,
}

/// What one file holds of the name.
struct FileScan {
    relative: String,
    uses: Vec<Use>,
    /// Its definitions of the name (any container).
    definitions: Vec<Symbol>,
    /// The trimmed text of each line with a use, by 0-based line.
    lines: HashMap<usize, String>,
    /// False when the file has a grammar but was not parsed (past the time budget, too
    /// large, or only counted): its comments and strings were not told apart.
    parsed: bool,
    /// Scanned past the uses the answer shows: counted by its text, never parsed.
    counted: bool,
}

pub fn run(
    args: Args,
    workspace: &Workspace,
    index: Option<&WorkspaceIndex>,
) -> Result<ToolOutput, ToolError> {
    run_within(args, workspace, index, PARSE_BUDGET)
}

/// `run` with parsing bounded by `budget` (tests about what is parsed give a long one,
/// so a loaded machine cannot change their answer).
fn run_within(
    args: Args,
    workspace: &Workspace,
    index: Option<&WorkspaceIndex>,
    budget: Duration,
) -> Result<ToolOutput, ToolError> {
    let wanted = references_scope::parse(&args.name)?;
    // Every root, with several and no path; else the one folder or file named.
    let scopes = workspace
        .sandbox
        .scope(args.path.as_deref().unwrap_or("."))?;
    let in_scopes = |relative: &str| {
        scopes
            .iter()
            .any(|scope| in_scope(relative, &scope.relative))
    };
    let mut deadline = Instant::now() + budget;
    let name = wanted.name.as_str();

    // Open documents, in their editor text, replace the disk and the index.
    let mut scans: Vec<FileScan> = Vec::new();
    let mut open: HashSet<PathBuf> = HashSet::new();
    for document in workspace.open_documents() {
        let Some(relative) = workspace.sandbox.relative(&document.path) else {
            continue;
        };
        if relative.split('/').any(is_refused_name) || !in_scopes(&relative) {
            continue;
        }
        open.insert(document.path.clone());
        if let Some(scan) = scan_file(
            &relative,
            &document.rope.to_string(),
            name,
            Parse::Within(deadline),
        ) {
            scans.push(scan);
        }
    }

    let mut note = None;
    let ready = index.is_some_and(|index| index.wait_ready(Duration::ZERO));
    let candidates = match index.filter(|_| ready) {
        Some(index) => index.files_with_identifier(name),
        None => None,
    };
    match (candidates, index) {
        (Some(paths), Some(index)) => {
            let sandbox = &workspace.sandbox;
            let is_open = |p: &str| {
                sandbox
                    .join_shown(p)
                    .is_some_and(|path| open.contains(&path))
            };
            let mut paths: Vec<String> = paths
                .into_iter()
                .filter(|p| in_scopes(p) && !is_open(p))
                .collect();
            // In the order the answer lists them: the files the symbol table says define
            // the name, then source, then the rest, each by path. So the uses shown come
            // first, and only they need a parse (a plain name; a qualified one is
            // resolved in every file).
            let defining: HashSet<String> = index
                .find_symbols(name)
                .into_iter()
                .filter(|hit| hit.symbol.name == name)
                .map(|hit| hit.path)
                .collect();
            paths.sort_by(|a, b| {
                (!defining.contains(a))
                    .cmp(&!defining.contains(b))
                    .then_with(|| answer_order(a, b))
            });
            // The budget is for parsing files, not for compiling the grammars' queries
            // (once per process, and slow in a debug build).
            let compiling = Instant::now();
            let languages: HashSet<Language> = paths
                .iter()
                .filter_map(|p| Language::from_path(p))
                .collect();
            languages.into_iter().for_each(syntax::compile_query);
            deadline += compiling.elapsed();
            let shown_uses = scans.iter().map(|scan| scan.lines.len()).sum();
            let parse_until = wanted.containers.is_empty().then_some(ParseUntil {
                defining: &defining,
                shown_uses,
            });
            scans.extend(scan_in_parallel(
                workspace,
                &paths,
                name,
                deadline,
                parse_until,
            ));
        }
        _ => {
            if index.is_some() && !ready {
                note = Some(
                    "(the workspace index is still being built; the files were read instead)"
                        .to_string(),
                );
            }
            let starts: Vec<&std::path::Path> =
                scopes.iter().map(|s| s.absolute.as_path()).collect();
            let (found, stopped) = walk_and_scan(workspace, &starts, &open, name, deadline);
            scans.extend(found);
            if let Some(stopped) = stopped {
                note = Some(stopped);
            }
        }
    }
    Ok(render(&args.name, &wanted, scans, note))
}

/// After the defining files: source in a language with a grammar, then the rest (docs,
/// data, config: a word in prose or a JSON `null` is a mention, not a use, and must not
/// push the code out of the lines shown), each by path.
fn answer_order(a: &str, b: &str) -> std::cmp::Ordering {
    let prose = |path: &str| Language::from_path(path).is_none();
    prose(a).cmp(&prose(b)).then_with(|| a.cmp(b))
}

fn in_scope(relative: &str, scope: &str) -> bool {
    scope == "."
        || relative == scope
        || relative
            .strip_prefix(scope)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The byte offsets where `name` occurs as a whole word (letters, digits, `_` and `$`
/// around it are part of a longer identifier).
pub fn word_occurrences(text: &str, name: &str) -> Vec<usize> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    text.match_indices(name)
        .filter(|(at, _)| {
            let before = text[..*at].chars().next_back();
            let after = text[at + name.len()..].chars().next();
            !before.is_some_and(is_word) && !after.is_some_and(is_word)
        })
        .map(|(at, _)| at)
        .collect()
}

/// Whether a file is parsed to tell its comments and strings apart.
#[derive(Clone, Copy)]
enum Parse {
    /// While the time budget lasts.
    Within(Instant),
    /// No: its uses are past the ones shown, and only counted.
    Counted,
}

/// Reads one file's uses and definitions of `name`; `None` when it has no whole-word
/// occurrence.
fn scan_file(relative: &str, text: &str, name: &str, mode: Parse) -> Option<FileScan> {
    let starts = word_occurrences(text, name);
    if starts.is_empty() {
        return None;
    }
    let language = Language::of_file(relative, text);
    let parsed = match (language, mode) {
        (Some(language), Parse::Within(deadline)) if Instant::now() < deadline => {
            syntax::scan_name(text, language, name, &starts).ok()
        }
        _ => None,
    };
    let (symbols, kinds) = match &parsed {
        Some(scan) => (scan.symbols.as_slice(), scan.occurrences.clone()),
        None => (&[][..], vec![Occurrence::Use; starts.len()]),
    };
    let line_starts = line_starts(text);
    let mut uses = Vec::new();
    let mut lines = HashMap::new();
    for (&start, kind) in starts.iter().zip(kinds) {
        if kind != Occurrence::Use {
            continue;
        }
        let line = line_starts.partition_point(|&s| s <= start) - 1;
        lines
            .entry(line)
            .or_insert_with(|| line_text(text, &line_starts, line));
        uses.push(Use {
            line,
            qualifier: references_scope::qualifier(text, start),
            enclosing: references_scope::enclosing_types(symbols, line),
        });
    }
    let definitions = symbols
        .iter()
        .filter(|s| s.name == name && s.kind != SymbolKind::Impl)
        .cloned()
        .collect();
    Some(FileScan {
        relative: relative.to_string(),
        uses,
        definitions,
        lines,
        parsed: parsed.is_some() || language.is_none(),
        counted: matches!(mode, Parse::Counted),
    })
}

fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(text.match_indices('\n').map(|(at, _)| at + 1));
    starts
}

fn line_text(text: &str, starts: &[usize], line: usize) -> String {
    let end = starts.get(line + 1).copied().unwrap_or(text.len());
    let raw = text[starts[line]..end].trim();
    if raw.chars().count() <= MAX_LINE_CHARS {
        raw.to_string()
    } else {
        let mut cut: String = raw.chars().take(MAX_LINE_CHARS).collect();
        cut.push_str(" …");
        cut
    }
}

/// When parsing can stop: once the files scanned so far (in the answer's order) hold
/// the uses the answer shows, the rest are only counted, by their text; the files that
/// define the name are parsed whatever the count (their definitions order the answer).
struct ParseUntil<'a> {
    defining: &'a HashSet<String>,
    /// Uses found before the scan (open documents).
    shown_uses: usize,
}

/// Scans the index's candidate files on a few threads, in `paths`' order. Files are
/// claimed in order, so the parsed ones are a prefix of `paths` (and the defining ones).
fn scan_in_parallel(
    workspace: &Workspace,
    paths: &[String],
    name: &str,
    deadline: Instant,
    parse_until: Option<ParseUntil<'_>>,
) -> Vec<FileScan> {
    // The next file to claim; a claim decides at once whether its file is parsed, from
    // the uses found so far (at most those of the files claimed before it, never more):
    // deciding later, after reading the file, let a thread that lost its core while
    // the others raced ahead count an early file unparsed, comments and all.
    let next = Mutex::new(0usize);
    let uses = AtomicUsize::new(parse_until.as_ref().map_or(0, |until| until.shown_uses));
    let found = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8)
        .min(paths.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let (i, parse) = {
                    let mut next = next.lock().unwrap_or_else(|e| e.into_inner());
                    let i = *next;
                    *next += 1;
                    let parse = parse_until.as_ref().is_none_or(|until| {
                        paths.get(i).is_some_and(|p| until.defining.contains(p))
                            || uses.load(Ordering::Acquire) < MAX_RESULTS
                    });
                    (i, parse)
                };
                let Some(relative) = paths.get(i) else {
                    break;
                };
                let Some(absolute) = workspace.sandbox.join_shown(relative) else {
                    continue;
                };
                let Some(text) = read_index_text(&absolute, MAX_FILE_BYTES) else {
                    continue;
                };
                let mode = if parse {
                    Parse::Within(deadline)
                } else {
                    Parse::Counted
                };
                if let Some(scan) = scan_file(relative, &text, name, mode) {
                    // Lines, as the answer shows them.
                    uses.fetch_add(scan.lines.len(), Ordering::Release);
                    found.lock().unwrap_or_else(|e| e.into_inner()).push(scan);
                }
            });
        }
    });
    found.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// Without an index: walks `starts` (in parallel, as `search_code` does) and scans each
/// file, within a bound; a note when the walk stopped at it.
fn walk_and_scan(
    workspace: &Workspace,
    starts: &[&std::path::Path],
    open: &HashSet<PathBuf>,
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
            if let Some(scan) = scan_file(&relative, &text, name, Parse::Within(deadline)) {
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

fn render(
    query: &str,
    wanted: &Wanted,
    mut scans: Vec<FileScan>,
    note: Option<String>,
) -> ToolOutput {
    let query = query.trim();
    let all_definitions: Vec<(String, Symbol)> = scans
        .iter()
        .flat_map(|scan| {
            scan.definitions
                .iter()
                .map(|d| (scan.relative.clone(), d.clone()))
        })
        .collect();
    let resolver = references_scope::Resolver::new(wanted, all_definitions.iter().map(|(_, d)| d));
    let defines = |scan: &FileScan| scan.definitions.iter().any(|d| resolver.is_target(d));
    scans.sort_by(|a, b| {
        (!defines(a))
            .cmp(&!defines(b))
            .then_with(|| answer_order(&a.relative, &b.relative))
    });
    let mut lines = Vec::new();
    let mut places = Vec::new();
    let mut files = 0;
    let mut unparsed = 0;
    let mut counted = 0;
    for scan in &scans {
        let mut kept: Vec<usize> = scan
            .uses
            .iter()
            .filter(|u| resolver.keeps(&u.qualifier, &u.enclosing))
            .map(|u| u.line)
            .collect();
        kept.dedup();
        if kept.is_empty() {
            continue;
        }
        files += 1;
        if scan.counted {
            counted += 1;
        } else if !scan.parsed {
            unparsed += 1;
        }
        for line in kept {
            let text = scan.lines.get(&line).cloned().unwrap_or_default();
            if lines.len() < MAX_RESULTS {
                places.push(Place {
                    path: scan.relative.clone(),
                    line: line + 1,
                    end_line: line + 1,
                    symbol: None,
                    excerpt: Some(text.clone()),
                });
            }
            lines.push(format!("{}:{}: {}", scan.relative, line + 1, text));
        }
    }
    let count = lines.len();
    let mut text = if count == 0 {
        let mut text = format!("No uses of `{query}` found outside its definitions");
        match all_definitions.iter().find(|(_, d)| resolver.is_target(d)) {
            Some((path, d)) => text.push_str(&format!(" (defined at {path}:{})", d.line + 1)),
            None => text.push_str("; find_references matches a whole identifier exactly, case-sensitive: try find_symbol or search_code"),
        }
        text.push_str(".\n");
        text
    } else {
        super::capped_lines(lines, MAX_RESULTS, |more| {
            format!("(… {more} more uses; {count} in {files} files: give a path or a qualified name to narrow)")
        })
    };
    if counted > 0 {
        text.push_str(&format!(
            "(the uses in the last {counted} of those files were counted by their text, comments and strings included)\n"
        ));
    }
    if unparsed > 0 {
        text.push_str(&format!(
            "(comments and strings were not told apart in {unparsed} files: past the parse time budget or too large to parse)\n"
        ));
    }
    if let Some(note) = note {
        text.push_str(&note);
        text.push('\n');
    }
    ToolOutput::ok(text, format!("{query}: {count} uses in {files} files")).with_places(places)
}

#[cfg(test)]
mod tests;

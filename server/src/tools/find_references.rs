//! `find_references`: the uses of an identifier outside its definitions, exact and
//! case-sensitive, one `path:line: text` line each, grouped by file, the files that
//! define it first, then source files, then docs and data. Candidate files come from
//! the index's identifier terms and its definitions from the index's symbol table (or,
//! without a ready index, a bounded walk that parses each file); each is read (open
//! documents in their editor text), the name confirmed as a whole word, and, where
//! `syntax/` has a grammar, occurrences in comments and strings and the definitions'
//! own names left out in the files whose uses are shown and in those that define it;
//! the files past those are counted by their text (`scan.rs`). A qualified name
//! (`TokenBucket.refill`, `TokenBucket::refill`) keeps the uses that resolve to that
//! container's definition as far as the text shows (`references_scope`).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Deserialize;

#[cfg(test)]
use self::scan::word_occurrences;
use self::scan::{scan_file, scan_in_parallel, walk_and_scan, FileScan, Mode, Recorded, ShowUntil};
use super::error::ToolError;
use super::references_scope::{self, Wanted};
use super::{Place, ToolOutput};
use crate::index::WorkspaceIndex;
use crate::syntax::{Language, Symbol};
use crate::workspace::sandbox::is_refused_name;
use crate::workspace::Workspace;

mod scan;

pub const MAX_RESULTS: usize = 100;
/// Parsing (for definitions without an index, or a JSX file's comments) stops after
/// this long in all; the rest of the files are confirmed by their text only, and the
/// result says so.
const PARSE_BUDGET: Duration = Duration::from_secs(3);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub name: String,
    pub path: Option<String>,
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
    let deadline = Instant::now() + budget;
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
        let text = document.rope.to_string();
        if let Some(scan) = scan_file(&relative, &text, name, Mode::Parse(deadline)) {
            scans.push(scan);
        }
    }

    let mut note = None;
    let ready = index.is_some_and(|index| index.wait_ready(Duration::ZERO));
    // The files that may hold the name and the definitions of it, as the index recorded
    // them: two reads of the index, side by side (each a few percent of a common name's
    // time, the second unused when the first cannot tell).
    let (candidates, recorded_definitions) = match index.filter(|_| ready) {
        Some(index) => std::thread::scope(|scope| {
            let definitions = scope.spawn(|| index.definitions_named(name));
            let candidates = index.files_with_identifier(name);
            (candidates, definitions.join().unwrap_or_default())
        }),
        None => (None, Vec::new()),
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
            // The definitions by file: no file is parsed for them.
            let mut definitions: HashMap<String, Vec<Symbol>> = HashMap::new();
            for hit in recorded_definitions {
                definitions.entry(hit.path).or_default().push(hit.symbol);
            }
            // In the order the answer lists them: the files that define the name, then
            // source, then the rest, each by path. So the uses shown come first, and
            // only they are classified (a plain name; a qualified one is resolved in
            // every file, with the types around each use).
            paths.sort_by_cached_key(|path| {
                let prose = Language::from_path(path).is_none();
                (!definitions.contains_key(path), prose, path.clone())
            });
            let qualified = !wanted.containers.is_empty();
            let all_symbols = |path: &str| index.file_symbols(path).unwrap_or_default();
            let recorded = Recorded {
                definitions: &definitions,
                all: qualified.then_some(&all_symbols as _),
            };
            let show_until = (!qualified).then(|| ShowUntil {
                shown_uses: scans.iter().map(FileScan::use_lines).sum(),
            });
            scans.extend(scan_in_parallel(
                workspace, &paths, name, deadline, &recorded, show_until,
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

fn in_scope(relative: &str, scope: &str) -> bool {
    scope == "."
        || relative == scope
        || relative
            .strip_prefix(scope)
            .is_some_and(|rest| rest.starts_with('/'))
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
    // After the defining files: source in a language with a grammar, then the rest
    // (docs, data, config: a word in prose or a JSON `null` is a mention, not a use, and
    // must not push the code out of the lines shown), each by path. Keyed once: tens of
    // thousands of files are sorted for a common name.
    scans.sort_by_cached_key(|scan| {
        let prose = Language::from_path(&scan.relative).is_none();
        (!defines(scan), prose, scan.relative.clone())
    });
    let mut lines = Vec::new();
    let mut places = Vec::new();
    let mut count = 0;
    let mut files = 0;
    let mut unparsed = 0;
    let mut counted = 0;
    for scan in &scans {
        if let Some(uses) = scan.counted {
            // Only a plain name is counted, and every use of a plain name is kept.
            if uses > 0 {
                files += 1;
                counted += 1;
                count += uses;
            }
            continue;
        }
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
        if !scan.parsed {
            unparsed += 1;
        }
        for line in kept {
            count += 1;
            if lines.len() == MAX_RESULTS {
                continue;
            }
            let text = scan.lines.get(&line).cloned().unwrap_or_default();
            places.push(Place {
                path: scan.relative.clone(),
                line: line + 1,
                end_line: line + 1,
                symbol: None,
                excerpt: Some(text.clone()),
            });
            lines.push(format!("{}:{}: {}", scan.relative, line + 1, text));
        }
    }
    let mut text = if count == 0 {
        let mut text = format!("No uses of `{query}` found outside its definitions");
        match all_definitions.iter().find(|(_, d)| resolver.is_target(d)) {
            Some((path, d)) => text.push_str(&format!(" (defined at {path}:{})", d.line + 1)),
            None => text.push_str("; find_references matches a whole identifier exactly, case-sensitive: try find_symbol or search_code"),
        }
        text.push_str(".\n");
        text
    } else {
        let mut text = lines.join("\n");
        text.push('\n');
        if count > lines.len() {
            let more = count - lines.len();
            text.push_str(&format!("(… {more} more uses; {count} in {files} files: give a path or a qualified name to narrow)\n"));
        }
        text
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

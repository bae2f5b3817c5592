//! `find_symbol`: definitions by name or name prefix (case-insensitive), optionally
//! inside a container (`TokenBucket.refill`, `TokenBucket::re`) and of one kind, from
//! the workspace index's symbol table; open documents are parsed live in their editor
//! text and replace the index's entries for their paths. Without an index (a caller
//! that has none) the workspace is walked and parsed, within a bound.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::error::ToolError;
use super::{Place, ToolOutput};
use crate::index::{IndexedSymbol, WorkspaceIndex};
use crate::syntax::{self, Symbol, SymbolKind};
use crate::workspace::read::read_index_text;
use crate::workspace::sandbox::is_refused_name;
use crate::workspace::{walk, Workspace};

pub const MAX_RESULTS: usize = 50;
/// The walk without an index stops after this many parsed files or this long.
const MAX_WALK_FILES: usize = 20_000;
const WALK_BUDGET: Duration = Duration::from_secs(10);
/// Files larger than this are not parsed by the walk (the index's bound too).
const MAX_WALK_FILE_BYTES: u64 = 1024 * 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub name: String,
    pub kind: Option<String>,
}

/// What the model asked for: a name prefix, the containers it must sit in (each a
/// prefix, outermost first, at any depth), a kind.
struct Wanted {
    name: String,
    containers: Vec<String>,
    kind: Option<SymbolKind>,
}

pub fn run(
    args: Args,
    workspace: &Workspace,
    index: Option<&WorkspaceIndex>,
) -> Result<ToolOutput, ToolError> {
    let wanted = parse(&args)?;
    let mut found: Vec<IndexedSymbol> = Vec::new();
    let mut open_paths: HashSet<String> = HashSet::new();
    // Open documents, parsed in their editor text.
    for document in workspace.open_documents() {
        let Some(relative) = workspace.sandbox.relative(&document.path) else {
            continue;
        };
        if relative.split('/').any(is_refused_name) {
            continue;
        }
        let text = document.rope.to_string();
        if let Some(Ok(symbols)) = syntax::symbols_for_path(&relative, &text) {
            found.extend(symbols.into_iter().map(|symbol| IndexedSymbol {
                path: relative.clone(),
                symbol,
            }));
        }
        open_paths.insert(relative);
    }
    let mut partial = None;
    match index {
        Some(index) => {
            // Never wait for a build: answer from what is indexed, and say so.
            if !index.wait_ready(Duration::ZERO) {
                partial = Some(
                    "(the workspace index is still being built; results may be incomplete)\n"
                        .to_string(),
                );
            }
            found.extend(
                index
                    .find_symbols(&wanted.name)
                    .into_iter()
                    .filter(|hit| !open_paths.contains(&hit.path)),
            );
        }
        None => partial = walk_and_parse(workspace, &open_paths, &mut found),
    }
    let mut matches: Vec<(usize, IndexedSymbol)> = found
        .into_iter()
        .filter_map(|hit| Some((wanted.fit(&hit.path, &hit.symbol)?, hit)))
        .collect();
    let lowered = wanted.name.as_str();
    // The closest fit first: a definition whose whole qualified name is the one asked
    // for (`rate_limit::refill`: the free `fn refill`) before one with a container in
    // between (`TokenBucket::refill` in the same file); then the exact name, the shorter.
    matches.sort_by(|(a_gap, a), (b_gap, b)| {
        let key = |gap: usize, hit: &IndexedSymbol| {
            let name = hit.symbol.name.to_lowercase();
            (gap, name != lowered, name.len(), name)
        };
        key(*a_gap, a)
            .cmp(&key(*b_gap, b))
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.symbol.line.cmp(&b.symbol.line))
    });
    let mut matches: Vec<IndexedSymbol> = matches.into_iter().map(|(_, hit)| hit).collect();
    matches.dedup_by(|a, b| a.path == b.path && a.symbol == b.symbol);
    let count = matches.len();
    let query = args.name.trim();
    if count == 0 {
        let mut text = format!("No definitions found for `{query}`");
        if let Some(kind) = wanted.kind {
            text.push_str(&format!(" of kind {}", kind.as_str()));
        }
        text.push_str(". find_symbol matches the start of a definition's name; try a shorter name, or search_code for text.\n");
        if let Some(note) = partial {
            text.push_str(&note);
        }
        return Ok(ToolOutput::ok(text, format!("{query}: no definitions")));
    }
    let lines: Vec<String> = matches
        .iter()
        .map(|hit| {
            format!(
                "{}:{}: {} {}  {}",
                hit.path,
                hit.symbol.line + 1,
                hit.symbol.kind.as_str(),
                hit.symbol.qualified_name,
                hit.symbol.signature
            )
        })
        .collect();
    let places = matches
        .iter()
        .take(MAX_RESULTS)
        .map(|hit| Place {
            path: hit.path.clone(),
            line: hit.symbol.line + 1,
            end_line: hit.symbol.end_line + 1,
            symbol: Some(hit.symbol.qualified_name.clone()),
            excerpt: Some(hit.symbol.signature.clone()),
        })
        .collect();
    let mut text = super::capped_lines(lines, MAX_RESULTS, |more| {
        format!(
            "(… {more} more definitions; give a longer name, a container (`Type.name`) or a kind)"
        )
    });
    if let Some(note) = partial {
        text.push_str(&note);
    }
    Ok(ToolOutput::ok(
        text,
        format!(
            "{query}: {count} definition{}",
            if count == 1 { "" } else { "s" }
        ),
    )
    .with_places(places))
}

fn parse(args: &Args) -> Result<Wanted, ToolError> {
    let query = args.name.trim();
    let kind = match args
        .kind
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
    {
        None => None,
        Some(word) => Some(
            SymbolKind::parse(word)
                .filter(|k| *k != SymbolKind::Impl)
                .ok_or_else(|| {
                    ToolError::Invalid(format!(
                        "unknown kind `{word}`; the kinds are {}",
                        kind_words()
                    ))
                })?,
        ),
    };
    let separator = if query.contains("::") { "::" } else { "." };
    let mut parts: Vec<String> = query
        .split(separator)
        .map(|part| part.trim().to_lowercase())
        .collect();
    let name = parts.pop().unwrap_or_default();
    if name.is_empty() {
        return Err(ToolError::Invalid(
            "name must be a definition's name or its start, optionally after its container: \
             {\"name\": \"refill\"}, {\"name\": \"TokenBucket.refill\"}"
                .into(),
        ));
    }
    parts.retain(|part| !part.is_empty());
    Ok(Wanted {
        name,
        containers: parts,
        kind,
    })
}

impl Wanted {
    /// Whether a definition matches by name, kind and its containers, where a file's
    /// module is a container too (PROTOCOL.md section 4): `rate_limit::refill` finds
    /// `fn refill` in `src/rate_limit.rs`, `sessions.Session.send` the method in
    /// `sessions.py`. `Some(gap)` when it does: how many containers lie between the
    /// last one asked for and the definition (0: its whole qualified name matches).
    fn fit(&self, path: &str, symbol: &Symbol) -> Option<usize> {
        if symbol.kind == SymbolKind::Impl || !symbol.name.to_lowercase().starts_with(&self.name) {
            return None;
        }
        if self.kind.is_some_and(|kind| kind != symbol.kind) {
            return None;
        }
        if self.containers.is_empty() {
            return Some(0);
        }
        // The container chain, outermost first, in either notation: the file's folders
        // and stem (its module path), then the definition's own containers.
        let container = symbol
            .container
            .as_deref()
            .unwrap_or_default()
            .to_lowercase();
        let path = path.to_lowercase();
        let (folders, file) = path.rsplit_once('/').unwrap_or(("", path.as_str()));
        let stem = file.split_once('.').map_or(file, |(stem, _)| stem);
        let chain: Vec<&str> = folders
            .split('/')
            .chain([stem])
            .chain(container.split("::").flat_map(|part| part.split('.')))
            .filter(|part| !part.is_empty())
            .collect();
        // Matched from the innermost outwards, so the last container asked for takes
        // the innermost part it can: the smallest gap.
        let mut rest = chain.iter().rev().enumerate();
        let mut wanted = self.containers.iter().rev();
        let last = wanted.next()?;
        let (gap, _) = rest.find(|(_, part)| part.starts_with(last.as_str()))?;
        wanted
            .all(|wanted| rest.any(|(_, part)| part.starts_with(wanted.as_str())))
            .then_some(gap)
    }
}

/// The kinds the tool accepts, for its error messages.
pub fn kind_words() -> String {
    SymbolKind::ALL
        .iter()
        .filter(|k| **k != SymbolKind::Impl)
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses every file with a grammar (but the open ones) into `found`; a note when the
/// walk stopped at its bound.
fn walk_and_parse(
    workspace: &Workspace,
    skip: &HashSet<String>,
    found: &mut Vec<IndexedSymbol>,
) -> Option<String> {
    let sandbox = &workspace.sandbox;
    let started = Instant::now();
    let mut parsed = 0;
    for entry in walk::builder_over(&sandbox.root_paths()).build().flatten() {
        if entry.depth() == 0 || !walk::admits(sandbox, &entry) || !walk::is_file(&entry) {
            continue;
        }
        let Some(relative) = sandbox.relative(entry.path()) else {
            continue;
        };
        if skip.contains(&relative) || syntax::Language::from_path(&relative).is_none() {
            continue;
        }
        if parsed >= MAX_WALK_FILES || started.elapsed() > WALK_BUDGET {
            return Some(format!(
                "(stopped after parsing {parsed} files; results may be incomplete)\n"
            ));
        }
        let Some(text) = read_index_text(entry.path(), MAX_WALK_FILE_BYTES) else {
            continue;
        };
        parsed += 1;
        if let Some(Ok(symbols)) = syntax::symbols_for_path(&relative, &text) {
            found.extend(symbols.into_iter().map(|symbol| IndexedSymbol {
                path: relative.clone(),
                symbol,
            }));
        }
    }
    None
}

//! `find_related`'s search: the definition at a line, embedded by the code model's
//! code side, against the vectors the index keeps for every chunk. The files closest
//! to it are found first by their file vectors (one per file), then their chunks are
//! compared one by one, so a large workspace costs a scan of its files, not of every
//! chunk.

use rustc_hash::{FxHashMap, FxHashSet};
use tantivy::schema::Value;
use tantivy::{DocAddress, Searcher, TantivyDocument};

use super::schema::Fields;
use super::semantic::Vectors;
use super::symbol_table;
use super::tokenize::for_each_term;
use super::{lock, RetrievalIndex};
use crate::embed::{self, Accumulator, Tower};
use crate::syntax::{self, Symbol, SymbolKind};

/// Files whose chunks are compared one by one.
const CLOSEST_FILES: usize = 40;

/// A place `find_related` lists.
#[derive(Clone, Debug, PartialEq)]
pub struct RelatedPlace {
    /// Workspace-relative, `/` separators.
    pub path: String,
    /// The defining line (1-based), or the chunk's first line when it defines nothing.
    pub line: usize,
    /// 1-based, inclusive.
    pub end_line: usize,
    pub kind: Option<SymbolKind>,
    /// The qualified name.
    pub name: Option<String>,
    /// The defining line, trimmed.
    pub excerpt: Option<String>,
    /// The cosine with the definition asked about.
    pub similarity: f32,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RelatedError {
    #[error("no code model is loaded (COPILOT_LS_CODE_MODEL names none)")]
    NoModel,
    #[error("{0} cannot be read")]
    Unreadable(String),
    #[error("no function, method or type is defined at line {line} of {path} (file_outline lists its definitions)")]
    NoDefinition { path: String, line: usize },
}

impl RetrievalIndex {
    /// The definition at `line` (1-based) of `path`, and at most `limit` places whose
    /// code is most like it, closest first: the definition itself and its own file's
    /// other places only when nothing else matches.
    pub fn related(
        &self,
        path: &str,
        line: usize,
        limit: usize,
    ) -> Result<(RelatedPlace, Vec<RelatedPlace>), RelatedError> {
        let model = embed::loaded().ok_or(RelatedError::NoModel)?;
        let text = self
            .file_text(path)
            .ok_or_else(|| RelatedError::Unreadable(path.to_string()))?;
        let no_definition = || RelatedError::NoDefinition {
            path: path.to_string(),
            line,
        };
        let symbols = match syntax::symbols_for_path(path, &text) {
            Some(Ok(symbols)) => symbols,
            _ => return Err(no_definition()),
        };
        let at = line.checked_sub(1).ok_or_else(no_definition)?;
        let definition = symbols
            .iter()
            .filter(|s| s.doc_line <= at && at <= s.end_line)
            .min_by_key(|s| s.end_line - s.doc_line)
            .ok_or_else(no_definition)?;
        let mut accumulator = Accumulator::new(model, Tower::Code);
        for line in text
            .lines()
            .skip(definition.doc_line)
            .take(definition.end_line + 1 - definition.doc_line)
        {
            for_each_term(line, |term| accumulator.add(term));
        }
        let itself = place_of(path, definition, 1.0);
        let Some(vector) = accumulator.finish() else {
            return Ok((itself, Vec::new()));
        };

        let fields = &self.inner.fields;
        let searcher = self.inner.store().reader.searcher();
        let overlay = self.inner.overlay();
        let layered = overlay
            .as_ref()
            .map(|o| (o.store.reader.searcher(), lock(&o.hidden).clone()));
        let empty = FxHashSet::default();
        let mut scored: Vec<(f32, usize, DocAddress)> = Vec::new();
        let mut layers: Vec<(&Searcher, &FxHashSet<String>)> = vec![(&searcher, &empty)];
        if let Some((layer, hidden)) = &layered {
            layers[0].1 = hidden;
            layers.push((layer, &empty));
        }
        for (which, (searcher, hidden)) in layers.iter().enumerate() {
            let vectors = Vectors::open(searcher, fields);
            for (file, _) in vectors.closest_files(fields, &vector, CLOSEST_FILES, hidden) {
                for (address, cosine) in vectors.chunks_of(fields, &file, &vector) {
                    scored.push((cosine, which, address));
                }
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));

        let overlay_symbols = layered.as_ref().map(|(s, hidden)| (s, hidden));
        let mut places: Vec<RelatedPlace> = Vec::new();
        let mut own_file: Vec<RelatedPlace> = Vec::new();
        let mut seen: FxHashSet<(String, usize)> = FxHashSet::default();
        let mut symbols: FxHashMap<String, Vec<Symbol>> = FxHashMap::default();
        for (cosine, which, address) in scored {
            if places.len() >= limit {
                break;
            }
            let Some((chunk_path, start, end)) = chunk_at(layers[which].0, fields, address) else {
                continue;
            };
            // A file's recorded definitions, read once for all its chunks.
            let file_symbols = symbols.entry(chunk_path.clone()).or_insert_with(|| {
                symbol_table::of_layered_file(&searcher, overlay_symbols, fields, &chunk_path)
                    .unwrap_or_default()
            });
            let place = match main_definition(file_symbols, start, end) {
                Some(symbol) => place_of(&chunk_path, symbol, cosine),
                None => RelatedPlace {
                    path: chunk_path.clone(),
                    line: start + 1,
                    end_line: end,
                    kind: None,
                    name: None,
                    excerpt: None,
                    similarity: cosine,
                },
            };
            if !seen.insert((place.path.clone(), place.line)) {
                continue;
            }
            if chunk_path == path {
                // The definition itself, or its own file's other places: kept aside.
                if place.line != itself.line {
                    own_file.push(place);
                }
                continue;
            }
            places.push(place);
        }
        if places.is_empty() {
            places = own_file;
            places.truncate(limit);
        }
        Ok((itself, places))
    }
}

/// A chunk's path and lines (0-based start, exclusive end).
fn chunk_at(
    searcher: &Searcher,
    fields: &Fields,
    address: DocAddress,
) -> Option<(String, usize, usize)> {
    let stored: TantivyDocument = searcher.doc(address).ok()?;
    let number = |field| stored.get_first(field).and_then(|v| v.as_u64());
    let path = stored.get_first(fields.path)?.as_str()?.to_string();
    Some((
        path,
        number(fields.start_line)? as usize,
        number(fields.end_line)? as usize,
    ))
}

/// The definition a chunk (lines `start..end`, 0-based) is about: the first one defined
/// in it, else the innermost one it lies in (a window of a long body).
fn main_definition(symbols: &[Symbol], start: usize, end: usize) -> Option<&Symbol> {
    symbols
        .iter()
        .find(|s| start <= s.line && s.line < end)
        .or_else(|| {
            symbols
                .iter()
                .filter(|s| s.line <= start && start <= s.end_line)
                .min_by_key(|s| s.end_line - s.line)
        })
}

fn place_of(path: &str, symbol: &Symbol, similarity: f32) -> RelatedPlace {
    RelatedPlace {
        path: path.to_string(),
        line: symbol.line + 1,
        end_line: symbol.end_line + 1,
        kind: Some(symbol.kind),
        name: Some(symbol.qualified_name.clone()),
        excerpt: Some(symbol.signature.clone()),
        similarity,
    }
}

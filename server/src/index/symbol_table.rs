//! The workspace's symbol table in the index: one symbol document per file with
//! definitions, holding each definition's whole lowercased name as a term
//! (`symbol_key`) and the file's symbol records, stored; and the prefix lookup
//! `find_symbol` answers from, which walks the term dictionary instead of any file.

use rustc_hash::FxHashSet;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::{PreTokenizedString, Token};
use tantivy::{DocAddress, DocSet, Searcher, TantivyDocument, Term, TERMINATED};

use super::schema::{Fields, KIND_SYMBOLS};
use crate::syntax::{Symbol, SymbolKind};

/// Files whose symbols one lookup reads, at most (a one-letter prefix in a huge
/// workspace must stay fast; the tool says how many it shows).
pub const MAX_LOOKUP_FILES: usize = 5000;
/// Longer names are not keys (tantivy's terms are bounded; no real name is this long).
const MAX_KEY_BYTES: usize = 256;

/// A definition found in the index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexedSymbol {
    /// Workspace-relative, `/` separators.
    pub path: String,
    pub symbol: Symbol,
}

/// The symbol document of a file.
pub fn document(fields: &Fields, path: &str, symbols: &[Symbol]) -> TantivyDocument {
    let mut keys: Vec<String> = symbols
        .iter()
        .map(|s| s.name.to_lowercase())
        .filter(|k| !k.is_empty() && k.len() <= MAX_KEY_BYTES)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let tokens = keys
        .into_iter()
        .enumerate()
        .map(|(position, text)| Token {
            position,
            text,
            ..Token::default()
        })
        .collect();
    let mut document = TantivyDocument::default();
    document.add_text(fields.kind, KIND_SYMBOLS);
    document.add_text(fields.path, path);
    document.add_pre_tokenized_text(
        fields.symbol_key,
        PreTokenizedString {
            text: String::new(),
            tokens,
        },
    );
    document.add_text(fields.symbol_records, encode(symbols));
    document
}

/// Definitions whose name starts with `prefix` (case-insensitive), from every file
/// indexed, unordered. Files past `MAX_LOOKUP_FILES` are left out.
pub fn lookup(
    searcher: &Searcher,
    fields: &Fields,
    prefix: &str,
) -> tantivy::Result<Vec<IndexedSymbol>> {
    let prefix = prefix.to_lowercase();
    if prefix.is_empty() {
        return Ok(Vec::new());
    }
    let keys = |key: &[u8]| key.starts_with(prefix.as_bytes());
    let names = |symbol: &Symbol| symbol.name.to_lowercase().starts_with(&prefix);
    read_keys(searcher, fields, &prefix, keys, names, MAX_LOOKUP_FILES)
}

/// The definitions named exactly `name` (case-sensitive), from every file indexed,
/// unordered: `find_references`' definitions, with no bound on the files (each one it
/// leaves out would show its definition as a use).
pub fn lookup_named(
    searcher: &Searcher,
    fields: &Fields,
    name: &str,
) -> tantivy::Result<Vec<IndexedSymbol>> {
    let key = name.to_lowercase();
    if key.is_empty() {
        return Ok(Vec::new());
    }
    let keys = |found: &[u8]| found == key.as_bytes();
    read_keys(searcher, fields, &key, keys, |s| s.name == name, usize::MAX)
}

/// The symbols kept by `keep` in the documents of the keys from `from` on, while `keys`
/// holds, in at most `max_files` documents.
fn read_keys(
    searcher: &Searcher,
    fields: &Fields,
    from: &str,
    keys: impl Fn(&[u8]) -> bool,
    keep: impl Fn(&Symbol) -> bool,
    max_files: usize,
) -> tantivy::Result<Vec<IndexedSymbol>> {
    let mut documents: FxHashSet<DocAddress> = FxHashSet::default();
    'segments: for (ord, segment) in searcher.segment_readers().iter().enumerate() {
        let inverted = segment.inverted_index(fields.symbol_key)?;
        let mut terms = inverted.terms().range().ge(from.as_bytes()).into_stream()?;
        while terms.advance() {
            if !keys(terms.key()) {
                break;
            }
            let mut postings =
                inverted.read_postings_from_terminfo(terms.value(), IndexRecordOption::Basic)?;
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if !segment.is_deleted(doc) {
                    documents.insert(DocAddress::new(ord as u32, doc));
                    if documents.len() >= max_files {
                        break 'segments;
                    }
                }
                doc = postings.advance();
            }
        }
    }
    let mut found = Vec::new();
    for address in documents {
        let stored: TantivyDocument = searcher.doc(address)?;
        let text = |field| {
            stored
                .get_first(field)
                .and_then(|v| tantivy::schema::Value::as_str(&v))
                .map(str::to_string)
        };
        let (Some(path), Some(records)) = (text(fields.path), text(fields.symbol_records)) else {
            continue;
        };
        for symbol in decode(&records) {
            if keep(&symbol) {
                found.push(IndexedSymbol {
                    path: path.clone(),
                    symbol,
                });
            }
        }
    }
    Ok(found)
}

/// The definitions recorded for the file at `path`: `None` when the index has not
/// parsed it (a cold build's first phase, a language with no grammar) or found none.
/// An answer's places are cut from these rather than from a parse of its own.
pub fn of_file(
    searcher: &Searcher,
    fields: &Fields,
    path: &str,
) -> tantivy::Result<Option<Vec<Symbol>>> {
    let term = |field, text| -> Box<dyn Query> {
        Box::new(TermQuery::new(
            Term::from_field_text(field, text),
            IndexRecordOption::Basic,
        ))
    };
    let query = BooleanQuery::new(vec![
        (Occur::Must, term(fields.path, path)),
        (Occur::Must, term(fields.kind, KIND_SYMBOLS)),
    ]);
    let Some((_, address)) = searcher
        .search(&query, &TopDocs::with_limit(1).order_by_score())?
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    let stored: TantivyDocument = searcher.doc(address)?;
    Ok(stored
        .get_first(fields.symbol_records)
        .and_then(|v| tantivy::schema::Value::as_str(&v))
        .map(decode))
}

/// [`of_file`] in the store and the overlay of a process that reads another's index
/// (its own changes, which replace the store's documents of the paths it hides).
pub fn of_layered_file(
    store: &Searcher,
    overlay: Option<(&Searcher, &FxHashSet<String>)>,
    fields: &Fields,
    path: &str,
) -> Option<Vec<Symbol>> {
    let read = |searcher| of_file(searcher, fields, path).ok().flatten();
    match overlay {
        Some((searcher, hidden)) => read(searcher).or_else(|| {
            if hidden.contains(path) {
                None
            } else {
                read(store)
            }
        }),
        None => read(store),
    }
}

/// Records as stored: one line per symbol, its fields separated by tabs (tabs and
/// line breaks in a field become spaces; names and signatures are one line anyway).
fn encode(symbols: &[Symbol]) -> String {
    let clean = |text: &str| text.replace(['\t', '\n', '\r'], " ");
    let mut out = String::new();
    for s in symbols {
        let fields = [
            s.kind.as_str().to_string(),
            s.line.to_string(),
            s.doc_line.to_string(),
            s.end_line.to_string(),
            s.depth.to_string(),
            clean(&s.name),
            clean(&s.qualified_name),
            s.container.as_deref().map(clean).unwrap_or_default(),
            clean(&s.label),
            clean(&s.signature),
        ];
        out.push_str(&fields.join("\t"));
        out.push('\n');
    }
    out
}

fn decode(records: &str) -> Vec<Symbol> {
    records
        .lines()
        .filter_map(|line| {
            let mut parts = line.split('\t');
            let kind = SymbolKind::parse(parts.next()?)?;
            let mut number = || parts.next()?.parse::<usize>().ok();
            let (line, doc_line, end_line, depth) = (number()?, number()?, number()?, number()?);
            let name = parts.next()?.to_string();
            let qualified_name = parts.next()?.to_string();
            let container = Some(parts.next()?.to_string()).filter(|c| !c.is_empty());
            let label = parts.next()?.to_string();
            let signature = parts.next()?.to_string();
            Some(Symbol {
                name,
                qualified_name,
                kind,
                label,
                line,
                doc_line,
                end_line,
                signature,
                container,
                depth,
            })
        })
        .collect()
}

impl super::RetrievalIndex {
    /// Definitions whose name starts with `prefix` (case-insensitive), in every file
    /// indexed so far, unordered; read from the index, not the files.
    pub fn find_symbols(&self, prefix: &str) -> Vec<IndexedSymbol> {
        self.read_symbols(|searcher, fields| lookup(searcher, fields, prefix))
    }

    /// Definitions named exactly `name` (case-sensitive), in every file indexed so far.
    pub fn definitions_named(&self, name: &str) -> Vec<IndexedSymbol> {
        self.read_symbols(|searcher, fields| lookup_named(searcher, fields, name))
    }

    /// The definitions recorded for one file (`of_file`), through this process's
    /// overlay when it has one.
    pub fn file_symbols(&self, path: &str) -> Option<Vec<Symbol>> {
        let searcher = self.inner.store().reader.searcher();
        let overlay = self.inner.overlay();
        let layer = overlay.as_ref().map(|overlay| {
            (
                overlay.store.reader.searcher(),
                super::lock(&overlay.hidden).clone(),
            )
        });
        let layer = layer.as_ref().map(|(searcher, hidden)| (searcher, hidden));
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            of_layered_file(&searcher, layer, &self.inner.fields, path)
        }))
        .ok()
        .flatten()
    }

    /// `read` over the store, then over the overlay of a process that reads another's
    /// index (whose documents replace those of the paths it hides); empty when the
    /// index fails or panics (it is then likely corrupt: logged).
    fn read_symbols(
        &self,
        read: impl Fn(&Searcher, &Fields) -> tantivy::Result<Vec<IndexedSymbol>>,
    ) -> Vec<IndexedSymbol> {
        let searcher = self.inner.store().reader.searcher();
        let overlay = self.inner.overlay();
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut found = read(&searcher, &self.inner.fields)?;
            if let Some(overlay) = &overlay {
                let hidden = super::lock(&overlay.hidden).clone();
                found.retain(|symbol| !hidden.contains(&symbol.path));
                let searcher = overlay.store.reader.searcher();
                found.extend(read(&searcher, &self.inner.fields)?);
            }
            Ok::<_, tantivy::TantivyError>(found)
        }));
        match found {
            Ok(Ok(found)) => found,
            Ok(Err(error)) => {
                tracing::warn!("symbol lookup failed: {error}");
                Vec::new()
            }
            Err(_) => {
                tracing::warn!("symbol lookup panicked; the index is likely corrupt");
                Vec::new()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let symbols = crate::syntax::symbols(
            "pub struct TokenBucket;\nimpl TokenBucket {\n    /// Refills.\n    fn refill(&mut self) {}\n}\n",
            crate::syntax::Language::Rust,
        )
        .unwrap();
        assert_eq!(symbols.len(), 3);
        assert_eq!(decode(&encode(&symbols)), symbols);
    }
}

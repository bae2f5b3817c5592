//! The workspace's symbol table in the index: one symbol document per file with
//! definitions, holding each definition's whole lowercased name as a term
//! (`symbol_key`) and the file's symbol records, stored; and the prefix lookup
//! `find_symbol` answers from, which walks the term dictionary instead of any file.

use rustc_hash::FxHashSet;
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::{PreTokenizedString, Token};
use tantivy::{DocAddress, DocSet, Searcher, TantivyDocument, TERMINATED};

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
    let mut documents: FxHashSet<DocAddress> = FxHashSet::default();
    'segments: for (ord, segment) in searcher.segment_readers().iter().enumerate() {
        let inverted = segment.inverted_index(fields.symbol_key)?;
        let mut terms = inverted
            .terms()
            .range()
            .ge(prefix.as_bytes())
            .into_stream()?;
        while terms.advance() {
            if !terms.key().starts_with(prefix.as_bytes()) {
                break;
            }
            let mut postings =
                inverted.read_postings_from_terminfo(terms.value(), IndexRecordOption::Basic)?;
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if !segment.is_deleted(doc) {
                    documents.insert(DocAddress::new(ord as u32, doc));
                    if documents.len() >= MAX_LOOKUP_FILES {
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
            if symbol.name.to_lowercase().starts_with(&prefix) {
                found.push(IndexedSymbol {
                    path: path.clone(),
                    symbol,
                });
            }
        }
    }
    Ok(found)
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

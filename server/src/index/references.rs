//! The index's answer to "which files may use this identifier": every file whose term
//! set (`file_words`, the file document's terms) holds all the terms the identifier's
//! words make. A file that has the identifier as a whole word has all of them, so this
//! never misses a file the index holds. A multi-part name's terms include its parts
//! glued (`refillcount`), so a file with only the words apart is not named; one that
//! spells it in another case or style (`refillCount`, `RefillCount`) is, and
//! `find_references`, which matches exactly, drops it when it reads the file.

use tantivy::collector::DocSetCollector;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Term};
use tantivy::{DocAddress, DocId, DocSet, Searcher, TantivyDocument, TERMINATED};

use super::schema::Fields;
use super::tokenize::{for_each_word_term, words};

/// Paths (workspace-relative) of the files that may hold `name`, unordered; `None` when
/// `name` makes no term the index keeps (a stop word, one letter, a very long word),
/// so the index cannot tell and the caller must read the files.
pub fn files_with_identifier(
    searcher: &Searcher,
    fields: &Fields,
    name: &str,
) -> tantivy::Result<Option<Vec<String>>> {
    let mut terms: Vec<String> = Vec::new();
    for word in words(name) {
        let before = terms.len();
        for_each_word_term(word, |term| terms.push(term.to_string()));
        if terms.len() == before {
            // A word with no term (`is`, `x`): every file may hold it.
            return Ok(None);
        }
    }
    terms.sort_unstable();
    terms.dedup();
    if terms.is_empty() {
        return Ok(None);
    }
    let clauses: Vec<(Occur, Box<dyn Query>)> = terms
        .iter()
        .map(|term| {
            let query: Box<dyn Query> = Box::new(TermQuery::new(
                Term::from_field_text(fields.file_words, term),
                IndexRecordOption::Basic,
            ));
            (Occur::Must, query)
        })
        .collect();
    let found = searcher.search(&BooleanQuery::new(clauses), &DocSetCollector)?;
    let mut by_segment: Vec<Vec<DocId>> = vec![Vec::new(); searcher.segment_readers().len()];
    for address in found {
        by_segment[address.segment_ord as usize].push(address.doc_id);
    }
    let mut paths = Vec::new();
    for (ord, mut docs) in by_segment.into_iter().enumerate() {
        if docs.is_empty() {
            continue;
        }
        let segment = &searcher.segment_readers()[ord];
        let inverted = segment.inverted_index(fields.file_path)?;
        // A stored document is read by decompressing its whole block, which holds the
        // chunks' stored fields too: a common name's tens of thousands of files cost a
        // second that way. The path's own term names the same document, and the term
        // dictionary is read in a stream, a few hundred nanoseconds a file; it pays once
        // the files wanted are more than a few percent of the segment's.
        if docs.len() * 32 < inverted.terms().num_terms() {
            for doc in docs {
                let stored: TantivyDocument = searcher.doc(DocAddress::new(ord as u32, doc))?;
                if let Some(path) = stored
                    .get_first(fields.file_path)
                    .and_then(|v| tantivy::schema::Value::as_str(&v))
                {
                    paths.push(path.to_string());
                }
            }
            continue;
        }
        docs.sort_unstable();
        let mut terms = inverted.terms().stream()?;
        while terms.advance() {
            let mut postings =
                inverted.read_postings_from_terminfo(terms.value(), IndexRecordOption::Basic)?;
            let mut doc = postings.doc();
            while doc != TERMINATED {
                // A path's deleted document (the file changed) keeps its term until a
                // merge: only the documents the search found count.
                if docs.binary_search(&doc).is_ok() {
                    paths.push(String::from_utf8_lossy(terms.key()).into_owned());
                }
                doc = postings.advance();
            }
        }
    }
    Ok(Some(paths))
}

#[cfg(test)]
mod tests {
    use crate::index::tests::index_of;

    #[test]
    fn files_holding_every_term_of_the_identifier() {
        let index = index_of(&[
            ("a.rs", "fn main() { bucket.refill_count(); }\n"),
            ("b.rs", "// refill the count\n"),
            ("c.rs", "fn refill() {}\n"),
            ("d.py", "def refillCount(): pass\n"),
        ]);
        let mut found = index.files_with_identifier("refill_count").unwrap();
        found.sort();
        // `refillCount` makes the same terms (the tool reads d.py and drops it); b.rs has
        // only the words apart, not the glued compound.
        assert_eq!(found, ["a.rs", "d.py"]);
        let mut found = index.files_with_identifier("refill").unwrap();
        found.sort();
        assert_eq!(found, ["a.rs", "b.rs", "c.rs", "d.py"]);
        assert!(index
            .files_with_identifier("nowhere_at_all")
            .unwrap()
            .is_empty());
        // A stop word or a single letter: the index cannot tell.
        assert!(index.files_with_identifier("x").is_none());
        assert!(index.files_with_identifier("the").is_none());
    }

    #[test]
    fn paths_read_from_stored_documents_and_from_the_term_dictionary_agree() {
        // Many files hold `shared` (their paths read from the term dictionary), two
        // `lonely` (from their stored documents).
        let files: Vec<(String, String)> = (0..70)
            .map(|i| {
                let lonely = if i % 50 == 7 { " lonely();" } else { "" };
                (
                    format!("src/f{i:02}.rs"),
                    format!("fn f{i}() {{ shared();{lonely} }}\n"),
                )
            })
            .collect();
        let borrowed: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let index = index_of(&borrowed);
        // A changed file leaves its old document deleted under the same path term.
        index.update_file("src/f03.rs", "fn f3() {}\n");
        let mut found = index.files_with_identifier("shared").unwrap();
        found.sort();
        let expected: Vec<String> = (0..70)
            .filter(|&i| i != 3)
            .map(|i| format!("src/f{i:02}.rs"))
            .collect();
        assert_eq!(found, expected);
        let mut found = index.files_with_identifier("lonely").unwrap();
        found.sort();
        assert_eq!(found, ["src/f07.rs", "src/f57.rs"]);
    }
}

//! A parsed question as weighted search terms: prose words, their stems and compounds
//! at weight 1 (a word the reporter owns less), identifiers' parts and whole names at
//! their source's weight, and the words of the files the question names.

use std::collections::HashMap;

use super::super::tokenize::{for_each_word_term, query_terms, split_identifier, stem, QueryTerm};
use super::about::{content_words, is_possessive};
use super::{ParsedQuestion, Source};

/// The weight of a prose word the reporter owns ("my test"), against 1 for others.
pub(super) const OWNED_WORD_WEIGHT: f32 = 0.25;

/// A search term and how much it counts.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedTerm {
    pub term: QueryTerm,
    pub weight: f32,
}

/// The question's terms with weights, deduplicated (a term keeps its highest weight).
/// Prose gives the words, their stems, and compounds of neighbours (as `query_terms`
/// always did); identifiers add their parts and whole-name compounds at their weight;
/// paths add their file name's words.
pub fn weighted_terms(parsed: &ParsedQuestion) -> Vec<WeightedTerm> {
    let mut out: Vec<WeightedTerm> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut add =
        |term: QueryTerm, weight: f32, out: &mut Vec<WeightedTerm>| match seen.get(&term.text) {
            Some(&i) => {
                let existing = &mut out[i];
                existing.weight = existing.weight.max(weight);
                existing.term.compound &= term.compound;
            }
            None => {
                seen.insert(term.text.clone(), out.len());
                out.push(WeightedTerm { term, weight });
            }
        };
    // A word the reporter owns ("my test fails", "in our app") names their thing, not
    // the project's: searched at full weight, "test" finds the project's tests. Once
    // owned, the word stays theirs ("the test passed before").
    let owned: Vec<String> = content_words(&parsed.prose)
        .into_iter()
        .filter(|(_, before)| before.as_deref().is_some_and(is_possessive))
        .map(|(word, _)| stem(&word))
        .collect();
    for term in query_terms(&parsed.prose) {
        let weight = if owned.contains(&term.text) {
            OWNED_WORD_WEIGHT
        } else {
            Source::Prose.weight()
        };
        add(term, weight, &mut out);
    }
    for identifier in &parsed.identifiers {
        // Said again and again, a name is what the report is about; but only a little
        // more each time.
        let repeat = 1.0 + 0.25 * (identifier.count as f32).ln().min(2.0);
        let whole = identifier.source.weight() * repeat;
        let terms = identifier_terms(&identifier.name);
        let n = terms.len();
        for (i, term) in terms.into_iter().enumerate() {
            // The last term is the whole name (one term for a one-part name).
            let weight = if i + 1 == n {
                whole
            } else {
                (whole * 0.5).max(0.5)
            };
            add(term, weight, &mut out);
        }
    }
    for path in &parsed.paths {
        let name = path.file_name();
        let stem_part = name.split('.').next().unwrap_or(name);
        for term in identifier_terms(stem_part) {
            add(term, Source::Named.weight(), &mut out);
        }
    }
    out
}

/// An identifier's terms as the index has them (parts, pairs, the whole name last); the
/// pairs and the whole of a multi-part name are compounds.
fn identifier_terms(name: &str) -> Vec<QueryTerm> {
    let mut parts = Vec::new();
    split_identifier(name, &mut parts);
    let stems: Vec<String> = parts.iter().map(|p| stem(p)).collect();
    let mut out = Vec::new();
    for_each_word_term(name, |t| {
        out.push(QueryTerm {
            text: t.to_string(),
            compound: !stems.iter().any(|s| s == t),
        })
    });
    out
}

#[cfg(test)]
mod tests {
    use super::super::{name_key, parse};
    use super::*;

    #[test]
    fn identifiers_outweigh_prose_in_terms() {
        let q = parse("The usage line is empty for `HelpFormatter.write_usage` without arguments");
        let terms = weighted_terms(&q);
        let weight = |text: &str| terms.iter().find(|t| t.term.text == text).map(|t| t.weight);
        let key = name_key("write_usage").unwrap();
        assert_eq!(key, "writusag");
        assert_eq!(weight(&key), Some(Source::Named.weight()));
        assert_eq!(weight("empti"), Some(1.0), "{terms:?}");
        assert!(weight("usag").unwrap() > 1.0);
        // Deduplicated.
        let mut texts: Vec<&str> = terms.iter().map(|t| t.term.text.as_str()).collect();
        let len = texts.len();
        texts.sort_unstable();
        texts.dedup();
        assert_eq!(texts.len(), len);
        // Compounds are marked; the parts of a name are not compounds.
        let term = |text: &str| terms.iter().find(|t| t.term.text == text).unwrap();
        assert!(term(&key).term.compound);
        assert!(!term("usag").term.compound);
    }
}

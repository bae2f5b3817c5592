//! The project's tokenizer (`tokenize.rs`: identifier splitting, stemming, compounds)
//! as a tantivy tokenizer, with a cache from raw words to their terms.
//!
//! Code repeats its words so much that splitting and stemming each occurrence was most
//! of the build time, so each tokenizer keeps a bounded word cache. Tantivy clones a
//! tokenizer per indexing thread; a clone starts with an empty cache rather than copying
//! a large one.

use rustc_hash::FxHashMap;
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

use super::tokenize::{for_each_word_term, words};

/// The name the schema's text fields use for this tokenizer.
pub const NAME: &str = "copilot_code";

/// Beyond this many distinct words the cache starts over (generated files can hold
/// millions of unique words; a cache that grows without bound is a leak). Tantivy keeps
/// a tokenizer per text field per indexing thread, so a build holds a dozen caches.
const MAX_CACHED_WORDS: usize = 200_000;

/// Raw word → its terms, back to back, each followed by `SEPARATOR` (one allocation per
/// word, not one per term: the cache's memory is mostly allocation overhead otherwise).
#[derive(Default)]
pub struct WordCache {
    words: FxHashMap<Box<str>, Box<str>>,
    terms: String,
}

/// Terms are letters and digits, never this.
const SEPARATOR: char = '\0';

impl WordCache {
    /// Calls `emit` with every term of `text`, in order, with the byte range of the word
    /// it came from.
    pub fn for_each_term(&mut self, text: &str, mut emit: impl FnMut(&str, usize, usize)) {
        let base = text.as_ptr() as usize;
        for word in words(text) {
            let from = word.as_ptr() as usize - base;
            let to = from + word.len();
            let terms = match self.words.get(word) {
                Some(terms) => terms,
                None => {
                    self.terms.clear();
                    for_each_word_term(word, |term| {
                        self.terms.push_str(term);
                        self.terms.push(SEPARATOR);
                    });
                    if self.words.len() >= MAX_CACHED_WORDS {
                        self.words.clear();
                    }
                    self.words
                        .entry(word.into())
                        .or_insert_with(|| self.terms.as_str().into())
                }
            };
            terms
                .split_terminator(SEPARATOR)
                .for_each(|term| emit(term, from, to));
        }
    }
}

/// The tokenizer tantivy runs on the text fields. A stream's terms are kept in one
/// buffer and copied into a single reused `Token` as the stream advances, so indexing
/// allocates nothing per token.
#[derive(Default)]
pub struct CodeTokenizer {
    cache: WordCache,
    /// The terms of the current text, back to back.
    terms: String,
    /// Per term: its end in `terms`, and the byte range of the word it came from.
    spans: Vec<(usize, usize, usize)>,
    token: Token,
}

impl Clone for CodeTokenizer {
    fn clone(&self) -> Self {
        CodeTokenizer::default()
    }
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream<'a> {
        self.terms.clear();
        self.spans.clear();
        let (terms, spans) = (&mut self.terms, &mut self.spans);
        self.cache.for_each_term(text, |term, from, to| {
            terms.push_str(term);
            spans.push((terms.len(), from, to));
        });
        self.token.reset();
        CodeTokenStream {
            terms: &self.terms,
            spans: &self.spans,
            token: &mut self.token,
            next: 0,
        }
    }
}

pub struct CodeTokenStream<'a> {
    terms: &'a str,
    spans: &'a [(usize, usize, usize)],
    token: &'a mut Token,
    /// One past the current term.
    next: usize,
}

impl TokenStream for CodeTokenStream<'_> {
    fn advance(&mut self) -> bool {
        let Some(&(end, from, to)) = self.spans.get(self.next) else {
            return false;
        };
        let start = match self.next {
            0 => 0,
            n => self.spans[n - 1].0,
        };
        self.token.text.clear();
        self.token.text.push_str(&self.terms[start..end]);
        self.token.offset_from = from;
        self.token.offset_to = to;
        self.token.position = self.next;
        self.token.position_length = 1;
        self.next += 1;
        true
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_the_projects_terms() {
        let mut tokenizer = CodeTokenizer::default();
        let mut stream = tokenizer.token_stream("parseLineBreak(x); parse_line_break");
        let mut seen = Vec::new();
        while stream.advance() {
            seen.push(stream.token().text.clone());
        }
        let mut expected = Vec::new();
        super::super::tokenize::for_each_term("parseLineBreak(x); parse_line_break", |t| {
            expected.push(t.to_string())
        });
        assert_eq!(seen, expected);
        assert!(seen.contains(&"pars".to_string()), "{seen:?}");
    }

    #[test]
    fn a_cached_word_gives_the_same_terms_and_ranges_as_its_first_time() {
        let mut cache = WordCache::default();
        let text = "HTTPHeaderParser x HTTPHeaderParser";
        let mut seen: Vec<(String, usize, usize)> = Vec::new();
        cache.for_each_term(text, |term, from, to| {
            seen.push((term.to_string(), from, to))
        });
        let half = seen.len() / 2;
        assert!(half > 1, "{seen:?}");
        for (first, again) in seen[..half].iter().zip(&seen[half..]) {
            assert_eq!(first.0, again.0);
            assert_eq!((first.1, first.2, again.1, again.2), (0, 16, 19, 35));
        }
    }
}

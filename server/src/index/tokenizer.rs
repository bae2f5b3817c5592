//! The project's tokenizer (`tokenize.rs`: identifier splitting, stemming, compounds)
//! with a cache from raw words to their terms, for the index's analysis threads
//! (`analyze.rs` hands tantivy the terms it makes).
//!
//! Code repeats its words so much that splitting and stemming each occurrence was most
//! of the build time, so words are cached, in two levels. One large cache serves the
//! whole process, so the analysis threads (and the editor's changes) do not each hold
//! the same words. In front of it each thread keeps a small cache of its own, which
//! answers most words (code's words are few and repeated) without touching the shared
//! one's locks. A word's terms depend on the word alone, so sharing them is safe across
//! fields, threads and workspaces.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use dashmap::DashMap;
use rustc_hash::{FxBuildHasher, FxHashMap};

use super::tokenize::{for_each_word_term, words};

/// Beyond this many distinct words the cache starts over (generated files can hold
/// millions of unique words; a cache that grows without bound is a leak).
const MAX_CACHED_WORDS: usize = 200_000;

/// Raw word → its terms, back to back, each followed by `SEPARATOR` (one allocation per
/// word, not one per term: the cache's memory is mostly allocation overhead otherwise;
/// the threads' own caches share it).
struct Shared {
    words: DashMap<Box<str>, Arc<str>, FxBuildHasher>,
    /// About how many words `words` holds (counting is cheaper than `DashMap::len`).
    count: AtomicUsize,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            words: DashMap::with_hasher(FxBuildHasher),
            count: AtomicUsize::new(0),
        }
    }
}

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(Shared::new)
}

/// Empties the process's word cache: a build that is over gives its memory back (a
/// later edit fills it again with the few words it needs).
pub fn forget_words() {
    let cache = shared();
    cache.words.clear();
    cache.words.shrink_to_fit();
    cache.count.store(0, Ordering::Relaxed);
}

/// Words a thread's cache keeps before it starts over.
const MAX_LOCAL_WORDS: usize = 4_096;

/// A thread's own small cache in front of the process's, with scratch space for a
/// word neither holds yet.
pub struct WordCache {
    shared: &'static Shared,
    local: FxHashMap<Box<str>, Arc<str>>,
    terms: String,
}

impl Default for WordCache {
    fn default() -> Self {
        WordCache {
            shared: shared(),
            local: FxHashMap::default(),
            terms: String::new(),
        }
    }
}

/// Terms are letters and digits, never this.
const SEPARATOR: char = '\0';

impl WordCache {
    /// Calls `emit` with every term of `text`, in order, with the byte range of the word
    /// it came from.
    pub fn for_each_term(&mut self, text: &str, mut emit: impl FnMut(&str, usize, usize)) {
        let cache = self.shared;
        let base = text.as_ptr() as usize;
        for word in words(text) {
            let from = word.as_ptr() as usize - base;
            let to = from + word.len();
            if let Some(terms) = self.local.get(word) {
                terms
                    .split_terminator(SEPARATOR)
                    .for_each(|term| emit(term, from, to));
                continue;
            }
            let terms: Arc<str> = match cache.words.get(word) {
                Some(terms) => terms.value().clone(),
                None => {
                    self.terms.clear();
                    for_each_word_term(word, |term| {
                        self.terms.push_str(term);
                        self.terms.push(SEPARATOR);
                    });
                    let terms: Arc<str> = self.terms.as_str().into();
                    if cache.count.fetch_add(1, Ordering::Relaxed) >= MAX_CACHED_WORDS {
                        cache.words.clear();
                        cache.count.store(1, Ordering::Relaxed);
                    }
                    cache.words.insert(word.into(), terms.clone());
                    terms
                }
            };
            terms
                .split_terminator(SEPARATOR)
                .for_each(|term| emit(term, from, to));
            if self.local.len() >= MAX_LOCAL_WORDS {
                self.local.clear();
            }
            self.local.insert(word.into(), terms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The terms of `text` as the uncached tokenizer makes them.
    fn uncached(text: &str) -> Vec<String> {
        let mut terms = Vec::new();
        super::super::tokenize::for_each_term(text, |t| terms.push(t.to_string()));
        terms
    }

    fn cached(cache: &mut WordCache, text: &str) -> Vec<String> {
        let mut terms = Vec::new();
        cache.for_each_term(text, |t, _, _| terms.push(t.to_string()));
        terms
    }

    #[test]
    fn a_word_one_tokenizer_cached_gives_another_the_same_terms() {
        // A cache of the test's own: a build in another test may empty the process's.
        let shared: &'static Shared = Box::leak(Box::new(Shared::new()));
        let handle = || WordCache {
            shared,
            ..WordCache::default()
        };
        let text = "sharedCacheWord shared_cache_word";
        let mut first = handle();
        assert_eq!(cached(&mut first, text), uncached(text));
        // A fresh cache (another thread) finds the words in the shared
        // cache, not in its own.
        let mut second = handle();
        assert!(second.local.is_empty());
        assert_eq!(shared.words.len(), 2);
        let held = shared
            .words
            .get("sharedCacheWord")
            .map(|t| t.value().clone());
        assert_eq!(
            held.as_deref()
                .map(|t| t.split_terminator(SEPARATOR).count()),
            Some(uncached("sharedCacheWord").len())
        );
        assert_eq!(cached(&mut second, text), uncached(text));
        assert_eq!(shared.words.len(), 2, "the second cache added no word");
    }

    #[test]
    fn a_tokenizers_own_cache_starts_over_without_changing_any_terms() {
        let mut cache = WordCache::default();
        let text: String = (0..MAX_LOCAL_WORDS + 50)
            .map(|i| format!("localWord{i}Parser "))
            .collect();
        assert_eq!(cached(&mut cache, &text), uncached(&text));
        assert!(cache.local.len() < MAX_LOCAL_WORDS, "{}", cache.local.len());
        // Words from before it started over, again.
        let again = "localWord1Parser localWord2Parser";
        assert_eq!(cached(&mut cache, again), uncached(again));
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

//! Scoring chunks for a question: BM25 over chunk fields, plus the signals plain BM25
//! misses.
//!
//! Plain BM25 treats a name in `pub struct FlowControl` like the same words in a
//! passing comment, and a test or a changelog line that repeats the question's words
//! like the code that answers it. So, on top of BM25 over the chunk text:
//! - terms in a definition's name or in a doc comment count extra (BM25F-style field
//!   weights, inside the saturation, so one field cannot dominate);
//! - terms in the file's path add a bonus (`sync/mpsc/bounded.rs` is about channels
//!   with bounds whatever the chunk says);
//! - a chunk gains when its *file* contains more of the question's words, since
//!   answers are usually files that are about the whole question;
//! - a definition named as the question names an identifier (`write_usage`,
//!   `HelpFormatter`, a traceback frame's function) is lifted, by how rare that name is;
//! - a file the question names (a traceback frame, `src/a.rs:40`, a source URL) is
//!   lifted, by how much of its path matches and how many files match as well;
//! - a chunk holding a message the question pastes (a string literal's words, three or
//!   more, `quoted.rs`) is lifted, by the quote's words and how many chunks hold it;
//! - tests, benches, examples, changelogs, docs, vendored and generated files are
//!   demoted unless the question is about them (`query/about.rs` decides that from explicit
//!   signals, so "my test fails" in a bug report does not lift tests);
//! - results are spread over files, since five chunks of one file hide the
//!   second-best file;
//! - among the first five files, one whose name the question spells goes first
//!   (`file_name.rs`).
//!
//! What the question names is matched in `named.rs`, and results are spread over
//! files in `spread.rs`.
//!
//! Tantivy's BM25 (with field boosts) picks the candidates; the candidates' per-field
//! term frequencies and their files' terms are read back from its postings
//! (`search.rs`) and scored here exactly as the in-memory index used to score every
//! chunk.

use super::definition_line::Definition;
use super::file_kind::FileKind;
use super::file_name::order_by_name;
use super::named::{
    common_suffix, name_match, named_keys, named_strength, verb_match, PathMatches,
};
use super::query::{name_key, ParsedQuestion};
use super::spread::{diversify, first_places};
use super::tokenize::{for_each_term, QueryTerm};

/// Which scoring to use. `PlainBm25` exists to measure the tuned ranker against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranking {
    Tuned,
    PlainBm25,
}

struct Params {
    k1: f32,
    b: f32,
    def_weight: f32,
    doc_weight: f32,
    path_weight: f32,
    coverage_weight: f32,
    /// Each further chunk from an already listed file is multiplied by this.
    same_file_decay: f32,
    /// A chunk defining something whose name is made only of the question's words
    /// (`fn refill` for "how are tokens refilled?") is multiplied by `1 + name_weight`.
    name_weight: f32,
    /// A chunk defining something named only with the question's words, one of them
    /// its main verb (`_check_token` for "where is the CSRF token checked"), is
    /// multiplied further by `1 + verb_weight`.
    verb_weight: f32,
    /// A chunk defining an identifier the question names is multiplied by up to
    /// `1 + named_weight` (by the identifier's source and rarity).
    named_weight: f32,
    /// A chunk of a file the question names is multiplied by up to `1 + path_ref_weight`.
    path_ref_weight: f32,
    /// A chunk holding a string literal the question quotes (a message it pasted) is
    /// multiplied by up to `1 + quoted_weight`, by the quote's words and rarity.
    quoted_weight: f32,
    /// BM25's length normalisation when choosing which chunk of a file a bug report
    /// is cited at (see [`first_places`]).
    place_b: f32,
}

const TUNED: Params = Params {
    k1: 1.2,
    b: 0.75,
    def_weight: 3.0,
    doc_weight: 1.0,
    path_weight: 2.0,
    coverage_weight: 1.0,
    same_file_decay: 0.5,
    name_weight: 0.3,
    verb_weight: 0.5,
    named_weight: 2.0,
    path_ref_weight: 3.0,
    quoted_weight: 2.0,
    place_b: 0.3,
};

const PLAIN: Params = Params {
    k1: 1.2,
    b: 0.75,
    def_weight: 0.0,
    doc_weight: 0.0,
    path_weight: 0.0,
    coverage_weight: 0.0,
    same_file_decay: 1.0,
    name_weight: 0.0,
    verb_weight: 0.0,
    named_weight: 0.0,
    path_ref_weight: 0.0,
    quoted_weight: 0.0,
    place_b: 0.75,
};

/// What the question asks for beyond code, which lifts the matching demotion.
#[derive(Debug, Default, Clone, Copy)]
struct Intent {
    tests: bool,
    own_tests: bool,
    benches: bool,
    examples: bool,
    changelog: bool,
    docs: bool,
}

impl Intent {
    /// From the parsed question, and: it names a test that exists (a definition in a
    /// test file among the candidates is named like one of its test-shaped names), or
    /// a file of that kind that exists (not a link, and a candidate's file has its
    /// name: a report's own `test_repro.py` says nothing about the project's tests).
    ///
    /// Only a short question's files say so. A file a bug report names is mostly what
    /// it fed the program (mdBook's `SUMMARY.md`, a config file) or where it looked:
    /// the report is about the code that reads it, not about every file of its kind.
    /// The named file itself is still lifted as named (`PathMatches`).
    fn of(parsed: &ParsedQuestion, candidates: &[Candidate]) -> Intent {
        let mut about = parsed.about;
        let named_files = if parsed.is_long() {
            &[][..]
        } else {
            &parsed.paths[..]
        };
        for path in named_files.iter().filter(|p| !p.linked) {
            let name = [path.file_name().to_lowercase()];
            if !candidates
                .iter()
                .any(|c| common_suffix(&name, &c.path) == 1)
            {
                continue;
            }
            match FileKind::of_path(&path.path) {
                FileKind::Test => about.tests = true,
                FileKind::Bench => about.benches = true,
                FileKind::Example => about.examples = true,
                FileKind::Changelog => about.changelog = true,
                FileKind::Docs => about.docs = true,
                _ => {}
            }
        }
        let test_names = &parsed.test_names;
        let keys: Vec<String> = test_names.iter().filter_map(|n| name_key(n)).collect();
        let names_a_test = !keys.is_empty()
            && candidates.iter().any(|c| {
                (c.in_test_module || FileKind::of_path(&c.path) == FileKind::Test)
                    && c.definitions
                        .iter()
                        .any(|d| name_key(&d.name).is_some_and(|k| keys.contains(&k)))
            });
        Intent {
            tests: about.tests || names_a_test,
            own_tests: about.own_tests,
            benches: about.benches,
            examples: about.examples,
            changelog: about.changelog,
            docs: about.docs,
        }
    }

    /// Whether the question asks for something other than source code.
    fn asks_for_a_kind(&self) -> bool {
        self.tests || self.benches || self.examples || self.changelog || self.docs
    }

    /// How much a chunk of this kind is worth relative to source code. A kind the
    /// question asks for ("where are the tests for …") beats source that merely
    /// shares its other words.
    fn factor(&self, kind: FileKind, in_test_module: bool) -> f32 {
        const ASKED: f32 = 2.5;
        let kind = if in_test_module { FileKind::Test } else { kind };
        match kind {
            FileKind::Source => 1.0,
            FileKind::Test if self.tests => ASKED,
            FileKind::Bench if self.benches => ASKED,
            FileKind::Example if self.examples => ASKED,
            FileKind::Changelog if self.changelog => ASKED,
            FileKind::Docs if self.docs => ASKED,
            FileKind::Docs => 0.5,
            FileKind::Example => 0.5,
            // "My test fails": the project's tests match the report's words best of
            // all, and are what it is least about.
            FileKind::Test if self.own_tests => 0.2,
            FileKind::Test | FileKind::Bench => 0.4,
            FileKind::Changelog => 0.3,
            FileKind::Meta => 0.3,
            FileKind::Vendored => 0.4,
            FileKind::Generated => 0.3,
        }
    }
}

/// A candidate chunk with what scoring needs to know about it.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub path: String,
    /// 0-based; `end_line` exclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// Number of body terms, BM25's document length.
    pub len: u32,
    pub symbol: Option<String>,
    pub definitions: Vec<Definition>,
    pub in_test_module: bool,
    /// Its file's head says a tool made it.
    pub generated: bool,
    /// The head of a longer type (its doc comment and fields), not one of its members.
    pub head: bool,
    /// Per term of [`Corpus::terms`]: its frequency in the body, the doc comments and the
    /// definition names.
    pub tf: Vec<[u32; 3]>,
    /// Bit `i`: the chunk's file holds term `i` of [`Corpus::terms`].
    pub file_mask: u64,
    /// The strength of the question's quotes of its string literals ([`Corpus::quoted`]).
    pub quoted: f32,
}

/// A run of the question's words that is the key of some chunk's string literal
/// (`quoted.rs`), and how much it says: by its content words, divided among the chunks
/// that hold it.
#[derive(Debug, Clone)]
pub struct QuotedKey {
    pub key: String,
    pub strength: f32,
}

/// One question term with its document frequencies.
#[derive(Debug, Clone)]
pub struct TermStats {
    pub term: QueryTerm,
    /// How much the question leans on it (`query/terms.rs`): 1 for a prose word, more for an
    /// identifier it names, less for a plain word inside its code.
    pub weight: f32,
    /// Chunks holding it.
    pub chunk_df: u64,
    /// Files whose path holds it.
    pub file_df: u64,
}

/// The collection statistics BM25 needs, and the question's terms.
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    pub chunks: u64,
    pub files: u64,
    /// Sum of chunk lengths.
    pub total_len: u64,
    /// Every term of the question (the intent and the path bonus use them all).
    pub all_terms: Vec<TermStats>,
    /// The terms found in some chunk, at most 64 so a file's terms fit a bitmask.
    pub terms: Vec<TermStats>,
    /// The question as parsed: its identifiers, paths and what it is about.
    pub parsed: ParsedQuestion,
    /// The runs of its words that some string literal holds, strongest first.
    pub quoted: Vec<QuotedKey>,
}

/// A candidate (by position) and its final score.
#[derive(Debug, Clone, Copy)]
pub struct Scored {
    pub candidate: usize,
    pub score: f32,
    /// Its file is of a kind the question is not about, and was ranked down for it.
    pub ranked_down: bool,
    /// What the score is made of (zero for the plain BM25 baseline but `bm25`).
    pub signals: Signals,
}

/// Each signal of a chunk's tuned score as a number of its own: the learned ranker's
/// features (`features.rs`), and what [`Signals::tuned`] multiplies into today's score.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Signals {
    /// BM25F over the chunk's body, doc comments and definition names.
    pub bm25: f32,
    /// The idf of the question's words in the chunk's path.
    pub path_bonus: f32,
    /// The idf share of the question's words its file holds.
    pub coverage: f32,
    /// A definition named only with the question's words (`name_match`).
    pub name: f32,
    /// The same, one of them the question's verb (`verb_match`).
    pub verb: f32,
    /// A definition the question names, by source and rarity (`named_strength`).
    pub named: f32,
    /// How much of a path the question names is this chunk's file's (`PathMatches`).
    pub path_ref: f32,
    /// A message the question pastes, held by the chunk (capped at 1).
    pub quoted: f32,
    /// Its file's kind against what the question is about (1 for source code).
    pub kind_factor: f32,
}

impl Signals {
    /// Today's hand-set combination.
    fn tuned(&self, params: &Params, name_weight: f32, verb_weight: f32) -> f32 {
        (self.bm25 + params.path_weight * self.path_bonus)
            * (1.0 + params.coverage_weight * self.coverage)
            * (1.0 + name_weight * self.name)
            * (1.0 + verb_weight * self.verb)
            * (1.0 + params.named_weight * self.named)
            * (1.0 + params.path_ref_weight * self.path_ref)
            * (1.0 + params.quoted_weight * self.quoted)
            * self.kind_factor
    }
}

/// The best of `candidates` for the question, best first, at most `limit`.
pub fn rank(
    candidates: &[Candidate],
    corpus: &Corpus,
    limit: usize,
    ranking: Ranking,
) -> Vec<Scored> {
    let params = match ranking {
        Ranking::Tuned => &TUNED,
        Ranking::PlainBm25 => &PLAIN,
    };
    if limit == 0 || corpus.chunks == 0 || corpus.terms.is_empty() {
        return Vec::new();
    }
    let parsed = &corpus.parsed;
    let intent = Intent::of(parsed, candidates);
    let files = corpus.files as f32;
    // A term may be only in paths ("tests"): it still earns the path bonus.
    let path_idf: Vec<(&str, f32)> = corpus
        .all_terms
        .iter()
        .filter(|t| t.file_df > 0)
        .map(|t| {
            (
                t.term.text.as_str(),
                t.weight * idf(files, t.file_df as f32),
            )
        })
        .collect();
    let n = corpus.chunks as f32;
    let avg_len = (corpus.total_len as f32 / n).max(1.0);
    let term_idf: Vec<f32> = corpus
        .terms
        .iter()
        .map(|t| t.weight * idf(n, t.chunk_df as f32))
        .collect();
    let word_idf_total: f32 = corpus
        .terms
        .iter()
        .zip(&term_idf)
        .filter(|(t, _)| !t.term.compound)
        .map(|(_, idf)| idf)
        .sum();
    // Compounds count here: "token bucket" glues to `tokenbucket`, which a name such as
    // `TokenBucket` also yields.
    let words: Vec<&str> = corpus.terms.iter().map(|t| t.term.text.as_str()).collect();
    // A question about tests or changes is answered by that kind of file, not by the
    // definition it names. In a long report almost any short name is made of its words.
    let name_weight = if intent.asks_for_a_kind() || parsed.is_long() {
        0.0
    } else {
        params.name_weight
    };
    // The same questions the name signal serves; none when it is off.
    let verb_weight = if name_weight > 0.0 {
        params.verb_weight
    } else {
        0.0
    };
    let verb = parsed.verb.as_deref();
    let named = if ranking == Ranking::Tuned {
        named_keys(corpus)
    } else {
        Vec::new()
    };
    let path_refs = if ranking == Ranking::Tuned {
        PathMatches::new(&parsed.paths, candidates)
    } else {
        PathMatches::default()
    };
    // A bug report's place in each file is chosen by its own score (`first_places`).
    let choose_places = ranking == Ranking::Tuned && parsed.is_long();
    let mut place_scores: Vec<f32> = vec![0.0; candidates.len()];
    let mut scored: Vec<Scored> = candidates
        .iter()
        .enumerate()
        .filter_map(|(position, candidate)| {
            let mut bm25 = 0.0;
            let mut place_bm25 = 0.0;
            let mut matched = false;
            for (tf, idf) in candidate.tf.iter().zip(&term_idf) {
                let [body, doc, def] = tf.map(|f| f.min(255) as f32);
                if body + doc + def == 0.0 {
                    continue;
                }
                matched = true;
                let tf = body + params.def_weight * def + params.doc_weight * doc;
                // BM25's saturation of `tf` with length normalisation `b`.
                let saturated = |b: f32| {
                    let norm = params.k1 * (1.0 - b + b * candidate.len as f32 / avg_len);
                    tf * (params.k1 + 1.0) / (tf + norm)
                };
                bm25 += idf * saturated(params.b);
                if choose_places {
                    place_bm25 += idf * saturated(params.place_b);
                }
            }
            let path_ref = path_refs.strength(candidate);
            if !matched && path_ref == 0.0 {
                return None;
            }
            if ranking == Ranking::PlainBm25 {
                return Some(Scored {
                    candidate: position,
                    score: bm25,
                    ranked_down: false,
                    signals: Signals {
                        bm25,
                        ..Signals::default()
                    },
                });
            }
            let mut path_terms: Vec<String> = Vec::new();
            for_each_term(&candidate.path, |term| path_terms.push(term.to_string()));
            let path_bonus: f32 = path_idf
                .iter()
                .filter(|(term, _)| path_terms.iter().any(|p| p == term))
                .map(|(_, idf)| idf)
                .sum();
            let covered: f32 = corpus
                .terms
                .iter()
                .zip(&term_idf)
                .enumerate()
                .filter(|(i, (t, _))| !t.term.compound && candidate.file_mask & (1 << i) != 0)
                .map(|(_, (_, idf))| idf)
                .sum();
            let coverage = if word_idf_total > 0.0 {
                covered / word_idf_total
            } else {
                0.0
            };
            let kind = match FileKind::of_path(&candidate.path) {
                FileKind::Source if candidate.generated => FileKind::Generated,
                kind => kind,
            };
            let kind_factor = intent.factor(kind, candidate.in_test_module);
            let signals = Signals {
                bm25,
                path_bonus,
                coverage,
                name: name_match(&candidate.definitions, &words),
                verb: verb.map_or(0.0, |v| verb_match(&candidate.definitions, &words, v)),
                named: named_strength(&candidate.definitions, &named),
                path_ref,
                quoted: candidate.quoted.min(1.0),
                kind_factor,
            };
            let score = signals.tuned(params, name_weight, verb_weight);
            if choose_places {
                place_scores[position] = place_bm25 * (1.0 + params.path_ref_weight * path_ref);
            }
            Some(Scored {
                candidate: position,
                score,
                ranked_down: kind_factor < 1.0,
                signals,
            })
        })
        .collect();
    // Ties go by path and line, not by arrival: results must not depend on segments.
    scored.sort_unstable_by(|a, b| {
        b.score.total_cmp(&a.score).then_with(|| {
            let (a, b) = (&candidates[a.candidate], &candidates[b.candidate]);
            (&a.path, a.start_line).cmp(&(&b.path, b.start_line))
        })
    });
    let mut picked = diversify(candidates, scored, limit, params.same_file_decay);
    // A question about tests or changes is answered by that kind of file, not by the
    // file its words name.
    if ranking == Ranking::Tuned && !intent.asks_for_a_kind() {
        picked = order_by_name(candidates, picked, corpus);
    }
    if choose_places {
        first_places(candidates, picked, &place_scores)
    } else {
        picked
    }
}

/// BM25's inverse document frequency of a term in `df` of `n` documents.
pub fn idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

#[cfg(test)]
mod tests;

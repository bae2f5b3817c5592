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
//! - tests, benches, examples, changelogs, docs, vendored and generated files are
//!   demoted unless the question is about them (`query.rs` decides that from explicit
//!   signals, so "my test fails" in a bug report does not lift tests);
//! - results are spread over files, since five chunks of one file hide the
//!   second-best file.
//!
//! Tantivy's BM25 (with field boosts) picks the candidates; the candidates' per-field
//! term frequencies and their files' terms are read back from its postings
//! (`search.rs`) and scored here exactly as the in-memory index used to score every
//! chunk.

use std::collections::HashMap;

use super::chunk::Definition;
use super::query::{name_key, ParsedQuestion, PathRef, Source};
use super::tokenize::{for_each_term, QueryTerm};

/// Which scoring to use. `PlainBm25` exists to measure the tuned ranker against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranking {
    Tuned,
    PlainBm25,
}

/// What a file is, judged by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Source,
    Test,
    Bench,
    Example,
    Changelog,
    /// README, guides, manual pages: prose about the code, often relevant, rarely the
    /// code that answers; demoted like examples, which also show how it is used.
    Docs,
    /// Manifests, lock files, licenses, editor and CI configuration.
    Meta,
    /// Someone else's code copied in (`vendor/`, `third_party/`, `node_modules/`).
    Vendored,
    /// Made by a tool (`*.min.js`, `*_pb2.py`, `*.pb.go`, `dist/`, or a file whose head
    /// says so): its source is elsewhere, and that is what answers.
    Generated,
}

impl FileKind {
    pub fn of_path(path: &str) -> FileKind {
        let lower = path.to_ascii_lowercase();
        let name = lower.rsplit('/').next().unwrap_or(&lower);
        let stem = name.split('.').next().unwrap_or(name);
        let dirs: Vec<&str> = lower.split('/').collect();
        let dirs = &dirs[..dirs.len() - 1];
        let in_dir = |names: &[&str]| dirs.iter().any(|d| names.contains(d));

        if in_dir(&[
            "vendor",
            "vendored",
            "third_party",
            "thirdparty",
            "third-party",
            "3rdparty",
            "node_modules",
            "bower_components",
            "site-packages",
        ]) {
            return FileKind::Vendored;
        }
        // Minified files, protobuf and other generated code, and bundles built from
        // the sources (UMD/ESM builds of a JavaScript library).
        if name.contains(".min.")
            || name.contains(".umd.")
            || name.contains(".esm.")
            || name.contains(".bundle.")
            || name.contains(".pb.")
            || name.contains(".generated.")
            || name.ends_with(".g.dart")
            || stem.ends_with("_pb2")
            || stem.ends_with("_pb2_grpc")
            || stem.ends_with("_generated")
            || name.ends_with(".map")
            || in_dir(&["dist", "__generated__"])
        {
            return FileKind::Generated;
        }
        // CI, issue templates, editor and tool settings (`.github/`, `.editorconfig`,
        // `.eslintrc.js`): configuration whatever their extension.
        if lower
            .split('/')
            .any(|part| part.starts_with('.') && part != "." && part != "..")
        {
            return FileKind::Meta;
        }
        if matches!(
            stem,
            "changelog" | "changes" | "history" | "news" | "releases" | "release-notes"
        ) {
            return FileKind::Changelog;
        }
        if name.ends_with(".lock")
            || matches!(
                name,
                "package-lock.json"
                    | "go.sum"
                    | "cargo.toml.orig"
                    | ".cargo_vcs_info.json"
                    | ".cargo-ok"
            )
            || stem.starts_with("license")
            || stem.starts_with("copying")
        {
            return FileKind::Meta;
        }
        let test_name = stem.starts_with("test_")
            || stem.ends_with("_test")
            || stem.ends_with("_tests")
            || name.contains(".test.")
            || name.contains(".spec.")
            || stem == "tests"
            || stem == "test";
        if test_name || in_dir(&["test", "tests", "__tests__", "testdata", "spec", "fixtures"]) {
            return FileKind::Test;
        }
        if in_dir(&["bench", "benches", "benchmarks"]) {
            return FileKind::Bench;
        }
        if in_dir(&["example", "examples"]) {
            return FileKind::Example;
        }
        let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
        // Prose, and manual pages (`man/tool.1`, `tool.1.txt`).
        let section = |part: &str| part.len() == 1 && part.as_bytes()[0].is_ascii_digit();
        let parts: Vec<&str> = name.split('.').skip(1).collect();
        let man_page = match parts.as_slice() {
            [.., last] if section(last) => true,
            [.., section_part, last] => {
                section(section_part) && matches!(*last, "txt" | "html" | "md" | "in" | "prebuilt")
            }
            _ => false,
        };
        if matches!(ext, "md" | "markdown" | "mdx" | "rst" | "txt" | "adoc")
            || man_page
            || in_dir(&["doc", "docs", "man"])
        {
            return FileKind::Docs;
        }
        if matches!(
            ext,
            "toml" | "yml" | "yaml" | "json" | "lock" | "cfg" | "ini"
        ) {
            return FileKind::Meta;
        }
        FileKind::Source
    }
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
    /// A chunk defining an identifier the question names is multiplied by up to
    /// `1 + named_weight` (by the identifier's source and rarity).
    named_weight: f32,
    /// A chunk of a file the question names is multiplied by up to `1 + path_ref_weight`.
    path_ref_weight: f32,
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
    named_weight: 2.0,
    path_ref_weight: 3.0,
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
    named_weight: 0.0,
    path_ref_weight: 0.0,
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
    fn of(parsed: &ParsedQuestion, candidates: &[Candidate]) -> Intent {
        let mut about = parsed.about;
        for path in parsed.paths.iter().filter(|p| !p.linked) {
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
}

/// One question term with its document frequencies.
#[derive(Debug, Clone)]
pub struct TermStats {
    pub term: QueryTerm,
    /// How much the question leans on it (`query.rs`): 1 for a prose word, more for an
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
}

/// A candidate (by position) and its final score.
#[derive(Debug, Clone, Copy)]
pub struct Scored {
    pub candidate: usize,
    pub score: f32,
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
            let score = (bm25 + params.path_weight * path_bonus)
                * (1.0 + params.coverage_weight * coverage)
                * (1.0 + name_weight * name_match(&candidate.definitions, &words))
                * (1.0 + params.named_weight * named_strength(&candidate.definitions, &named))
                * (1.0 + params.path_ref_weight * path_ref)
                * intent.factor(kind, candidate.in_test_module);
            if choose_places {
                place_scores[position] = place_bm25 * (1.0 + params.path_ref_weight * path_ref);
            }
            Some(Scored {
                candidate: position,
                score,
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
    let picked = diversify(candidates, scored, limit, params.same_file_decay);
    if choose_places {
        first_places(candidates, picked, &place_scores)
    } else {
        picked
    }
}

/// For a bug report: each file keeps its rank, but the chunk it is cited at first is
/// the file's candidate with the best place score, a member rather than the head of a
/// type when the file has one that matches.
///
/// The ranking score is right for choosing files and wrong for this. Its length
/// normalisation favours the shortest chunk that mentions a name, and its name lifts
/// favour the definitions a report names, which are mostly the API the reporter called
/// or the frames the error passed through, rather than the code that is wrong. So the
/// place score weighs the report's words over the whole chunk (a milder length
/// normalisation) and leaves the names out, except a line the report points at. A
/// class's head (its doc comment and fields) matches a report about that class,
/// but the fix is usually in one of its members.
fn first_places(candidates: &[Candidate], picked: Vec<Scored>, place: &[f32]) -> Vec<Scored> {
    let mut best: HashMap<&str, usize> = HashMap::new();
    for (i, candidate) in candidates.iter().enumerate() {
        if place[i] <= 0.0 {
            continue;
        }
        let key = |i: usize| (!candidates[i].head, place[i]);
        let entry = best.entry(candidate.path.as_str()).or_insert(i);
        if key(i) > key(*entry) {
            *entry = i;
        }
    }
    let mut out: Vec<Scored> = Vec::with_capacity(picked.len());
    for scored in &picked {
        let file = candidates[scored.candidate].path.as_str();
        let first = !out.iter().any(|o| candidates[o.candidate].path == file);
        let candidate = match best.get(file) {
            Some(&chosen) if first => chosen,
            _ => scored.candidate,
        };
        if !out.iter().any(|o| o.candidate == candidate) {
            out.push(Scored {
                candidate,
                score: scored.score,
            });
        }
    }
    out
}

/// BM25's inverse document frequency of a term in `df` of `n` documents.
pub fn idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The identifiers the question names as code (not plain prose words), by their
/// [`name_key`], each with a strength in 0..=1: its source's weight relative to the
/// strongest, times its rarity (its whole-name term's IDF over the largest possible).
/// `convert` in backticks names less than `write_usage` does, since many things
/// define a `convert`.
fn named_keys(corpus: &Corpus) -> Vec<(String, f32)> {
    let n = corpus.chunks as f32;
    let max_idf = idf(n, 1.0).max(f32::EPSILON);
    let mut out: Vec<(String, f32)> = Vec::new();
    for identifier in &corpus.parsed.identifiers {
        if identifier.source < Source::Code {
            continue;
        }
        let Some(key) = name_key(&identifier.name) else {
            continue;
        };
        let Some(stats) = corpus.all_terms.iter().find(|t| t.term.text == key) else {
            continue;
        };
        if stats.chunk_df == 0 {
            continue;
        }
        let source = match identifier.source {
            Source::Named | Source::Frame => 1.0,
            _ => 0.5,
        };
        let strength = source * idf(n, stats.chunk_df as f32) / max_idf;
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, s)) => *s = s.max(strength),
            None => out.push((key, strength)),
        }
    }
    out
}

/// The strongest named identifier one of the chunk's definitions is named as.
fn named_strength(definitions: &[Definition], named: &[(String, f32)]) -> f32 {
    if named.is_empty() {
        return 0.0;
    }
    definitions
        .iter()
        .filter_map(|d| name_key(&d.name))
        .filter_map(|key| named.iter().find(|(k, _)| *k == key).map(|(_, s)| *s))
        .fold(0.0, f32::max)
}

/// How well each candidate's file matches the paths the question names.
#[derive(Default)]
struct PathMatches<'a> {
    refs: Vec<(&'a PathRef, Vec<String>)>,
    /// Per ref: how many distinct candidate files match it with each number of
    /// trailing components (index = components).
    ambiguity: Vec<Vec<usize>>,
}

impl<'a> PathMatches<'a> {
    fn new(refs: &'a [PathRef], candidates: &[Candidate]) -> PathMatches<'a> {
        let refs: Vec<(&PathRef, Vec<String>)> = refs
            .iter()
            .map(|r| {
                (
                    r,
                    r.path
                        .to_lowercase()
                        .split('/')
                        .map(str::to_string)
                        .collect(),
                )
            })
            .collect();
        let mut files: Vec<&str> = candidates.iter().map(|c| c.path.as_str()).collect();
        files.sort_unstable();
        files.dedup();
        let ambiguity = refs
            .iter()
            .map(|(_, parts)| {
                let mut counts = vec![0usize; parts.len() + 1];
                for file in &files {
                    counts[common_suffix(parts, file)] += 1;
                }
                counts
            })
            .collect();
        PathMatches { refs, ambiguity }
    }

    /// 0..=1: 1 when the candidate's file is the only one matching a named path in all
    /// its components (or in two, for a path that is longer than the workspace's, such
    /// as a traceback's `site-packages/pkg/mod.py`); less when only the file name
    /// matches or several files match as well. A named line inside the chunk adds a
    /// little (the line may have moved since).
    fn strength(&self, candidate: &Candidate) -> f32 {
        let mut best: f32 = 0.0;
        for ((path_ref, parts), counts) in self.refs.iter().zip(&self.ambiguity) {
            let matched = common_suffix(parts, &candidate.path);
            if matched == 0 {
                continue;
            }
            let depth = if matched >= parts.len().min(2) {
                1.0
            } else {
                0.5
            };
            let mut strength = depth / counts[matched].max(1) as f32;
            if let Some(line) = path_ref.line {
                let line = line.saturating_sub(1);
                if candidate.start_line <= line && line < candidate.end_line {
                    strength *= 1.2;
                }
            }
            best = best.max(strength.min(1.0));
        }
        best
    }
}

/// How many trailing path components (lowercased) `parts` and `path` share.
fn common_suffix(parts: &[String], path: &str) -> usize {
    let lower = path.to_lowercase();
    parts
        .iter()
        .rev()
        .zip(lower.rsplit('/'))
        .take_while(|(a, b)| a.as_str() == *b)
        .count()
}

/// 1.0 when one of the chunk's definitions is named only with the question's words
/// (every part of `TokenBucket` or `refill` asked about), else 0.0. Definitions are what
/// a question about behaviour is usually answered by; a mere mention is not.
fn name_match(definitions: &[Definition], words: &[&str]) -> f32 {
    let full = definitions.iter().any(|definition| {
        let mut parts = 0;
        let mut matched = 0;
        for_each_term(&definition.name, |term| {
            parts += 1;
            if words.contains(&term) {
                matched += 1;
            }
        });
        parts > 0 && matched == parts
    });
    if full {
        1.0
    } else {
        0.0
    }
}

/// Picks `limit` chunks greedily, multiplying a chunk's score by `decay` for each chunk
/// of its file already picked. Lazy greedy: scores only ever fall, so a popped entry
/// whose file has not gained a pick since it was scored is the true best; otherwise it
/// is rescored and pushed back. Exact, and each chunk is rescored at most `limit` times.
fn diversify(
    candidates: &[Candidate],
    scored: Vec<Scored>,
    limit: usize,
    decay: f32,
) -> Vec<Scored> {
    if decay >= 1.0 {
        let mut scored = scored;
        scored.truncate(limit);
        return scored;
    }
    #[derive(PartialEq)]
    struct Entry {
        score: f32,
        /// Position in `scored`, which breaks ties.
        order: usize,
        candidate: usize,
        /// Picks of the chunk's file when `score` was computed.
        seen: i32,
    }
    impl Eq for Entry {}
    impl PartialOrd for Entry {
        fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for Entry {
        // Best score first; ties go to the earlier in `scored`.
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            self.score
                .total_cmp(&other.score)
                .then(other.order.cmp(&self.order))
        }
    }
    let mut heap: std::collections::BinaryHeap<Entry> = scored
        .into_iter()
        .enumerate()
        .map(|(order, s)| Entry {
            score: s.score,
            order,
            candidate: s.candidate,
            seen: 0,
        })
        .collect();
    let mut picked_per_file: HashMap<&str, i32> = HashMap::new();
    let mut out = Vec::with_capacity(limit.min(heap.len()));
    while out.len() < limit {
        let Some(entry) = heap.pop() else {
            break;
        };
        let file = candidates[entry.candidate].path.as_str();
        let seen = picked_per_file.get(file).copied().unwrap_or(0);
        if entry.seen == seen {
            *picked_per_file.entry(file).or_default() += 1;
            out.push(Scored {
                candidate: entry.candidate,
                score: entry.score,
            });
        } else {
            heap.push(Entry {
                score: entry.score * decay.powi(seen - entry.seen),
                seen,
                ..entry
            });
        }
    }
    out
}

/// The definition in a chunk the question names (its strongest named identifier), else
/// the one sharing most terms with the question, else the chunk's own symbol.
pub fn best_symbol(candidate: &Candidate, wanted: &[String], corpus: &Corpus) -> Option<String> {
    // A definition the question names as an identifier wins outright: in a long report
    // most definitions share some word with it.
    let named = named_keys(corpus);
    if let Some((definition, _)) = candidate
        .definitions
        .iter()
        .filter_map(|d| {
            let key = name_key(&d.name)?;
            let strength = named.iter().find(|(k, _)| *k == key)?.1;
            Some((d, strength))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
    {
        return Some(definition.symbol.clone());
    }
    let mut best: Option<(usize, &str)> = None;
    for definition in &candidate.definitions {
        let mut overlap = 0;
        for_each_term(&definition.name, |term| {
            if wanted.iter().any(|w| w == term) {
                overlap += 1;
            }
        });
        if overlap > 0 && best.is_none_or(|(o, _)| overlap > o) {
            best = Some((overlap, &definition.symbol));
        }
    }
    match best {
        Some((_, symbol)) => Some(symbol.to_string()),
        None => candidate.symbol.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::tests::index_of;
    use crate::index::RetrievalIndex;

    fn top_paths(index: &RetrievalIndex, query: &str, ranking: Ranking) -> Vec<String> {
        index
            .search_with(query, 5, ranking)
            .into_iter()
            .map(|hit| hit.path)
            .collect()
    }

    #[test]
    fn classifies_paths() {
        assert_eq!(
            FileKind::of_path("src/sync/mpsc/bounded.rs"),
            FileKind::Source
        );
        assert_eq!(FileKind::of_path("tests/crlf.rs"), FileKind::Test);
        assert_eq!(FileKind::of_path("pkg/reader_test.go"), FileKind::Test);
        assert_eq!(FileKind::of_path("web/app.spec.ts"), FileKind::Test);
        assert_eq!(FileKind::of_path("benches/insert.rs"), FileKind::Bench);
        assert_eq!(FileKind::of_path("examples/walk.rs"), FileKind::Example);
        assert_eq!(FileKind::of_path("CHANGELOG.md"), FileKind::Changelog);
        assert_eq!(FileKind::of_path("README.md"), FileKind::Docs);
        assert_eq!(FileKind::of_path("Cargo.lock"), FileKind::Meta);
        assert_eq!(FileKind::of_path("LICENSE-MIT"), FileKind::Meta);
        // A word inside a file name is not a directory.
        assert_eq!(FileKind::of_path("src/testing.rs"), FileKind::Source);
        // Tool settings, whatever their extension.
        for meta in [
            ".editorconfig",
            ".all-contributorsrc",
            ".eslintrc.js",
            ".github/labeler.yml",
            "web/.storybook/main.ts",
        ] {
            assert_eq!(FileKind::of_path(meta), FileKind::Meta, "{meta}");
        }
        // Manual pages.
        for docs in [
            "man/marked.1",
            "man/marked.1.txt",
            "jq.1.prebuilt",
            "doc/git.1.in",
        ] {
            assert_eq!(FileKind::of_path(docs), FileKind::Docs, "{docs}");
        }
        assert_eq!(FileKind::of_path("src/v1.rs"), FileKind::Source);
        assert_eq!(FileKind::of_path("src/parser.c"), FileKind::Source);
        for vendored in [
            "vendor/github.com/pkg/errors/errors.go",
            "third_party/zlib/inflate.c",
            "web/node_modules/left-pad/index.js",
            "include/spdlog/fmt/bundled/../../vendor/x.h",
        ] {
            assert_eq!(
                FileKind::of_path(vendored),
                FileKind::Vendored,
                "{vendored}"
            );
        }
        for generated in [
            "static/app.min.js",
            "api/service_pb2.py",
            "api/service_pb2_grpc.py",
            "api/service.pb.go",
            "lib/marked.umd.js",
            "lib/marked.esm.js",
            "dist/index.js",
            "lib/models.g.dart",
        ] {
            assert_eq!(
                FileKind::of_path(generated),
                FileKind::Generated,
                "{generated}"
            );
        }
        assert_eq!(FileKind::of_path("src/protobuf.go"), FileKind::Source);
        assert_eq!(
            FileKind::of_path(".github/ISSUE_TEMPLATE/bug_report.md"),
            FileKind::Meta
        );
        assert_eq!(FileKind::of_path("src/minimal.js"), FileKind::Source);
    }

    const SOURCE: &str = "\
/// A channel with a bounded buffer: senders wait while it is full.
pub struct BoundedChannel {
    buffer: Vec<u8>,
}
";
    const TEST: &str = "\
fn senders_wait_when_bounded_channel_buffer_is_full() {
    let channel = bounded_channel();
    fill_buffer(&channel);
    assert!(channel.buffer.full());
    let senders = spawn_senders(channel);
    assert!(senders.wait());
    assert!(channel.buffer.full());
}
";
    const CHANGELOG: &str = "\
- bounded channel: senders now wait when the buffer is full (bounded channel buffer).
";

    #[test]
    fn definitions_beat_mentions_and_tests_are_demoted() {
        // Unrelated files give the terms realistic document frequencies.
        let fillers: Vec<(String, String)> = (0..20)
            .map(|i| {
                (
                    format!("src/module{i}.rs"),
                    format!(
                        "pub fn helper{i}(input: &str) -> usize {{\n    input.len() + {i}\n}}\n"
                    ),
                )
            })
            .collect();
        let mut files: Vec<(&str, &str)> = fillers
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        files.extend([
            ("tests/bounded_channel.rs", TEST),
            ("CHANGELOG.md", CHANGELOG),
            ("src/channel.rs", SOURCE),
        ]);
        let index = index_of(&files);
        let question = "what happens to senders when a bounded channel buffer is full";
        let plain = top_paths(&index, question, Ranking::PlainBm25);
        assert_ne!(
            plain[0], "src/channel.rs",
            "the fixture should fool plain BM25: {plain:?}"
        );
        let tuned = top_paths(&index, question, Ranking::Tuned);
        assert_eq!(tuned[0], "src/channel.rs", "{tuned:?}");
        // Asking for tests or changes lifts the demotion.
        let tests = top_paths(&index, "tests for the bounded channel", Ranking::Tuned);
        assert_eq!(tests[0], "tests/bounded_channel.rs", "{tests:?}");
        let changes = top_paths(
            &index,
            "what changed for bounded channel senders",
            Ranking::Tuned,
        );
        assert_eq!(changes[0], "CHANGELOG.md", "{changes:?}");
    }

    #[test]
    fn a_named_test_file_lifts_tests_only_when_it_exists() {
        let mut files = vec![
            ("src/prompt.rs", "/// Asks yes or no.\npub fn confirm(prompt: &str) -> bool {\n    strip(prompt)\n}\n".to_string()),
            ("tests/prompt.rs", "#[test]\nfn confirm_case() {\n    assert!(confirm(\"y\"));\n}\n".to_string()),
        ];
        // Tests of other things, so "test" is as common as in a real project.
        let others = ["tests/a.rs", "tests/b.rs", "tests/c.rs", "tests/d.rs"];
        for (i, path) in others.iter().enumerate() {
            files.push((
                path,
                format!("#[test]\nfn case_{i}() {{\n    assert_eq!(parse_{i}(), {i});\n}}\n"),
            ));
        }
        let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
        let index = index_of(&files);
        // The reporter's own script: the project has no such file.
        let report = "ANSI codes are not stripped from confirm prompts, see test_repro.py";
        assert_eq!(
            top_paths(&index, report, Ranking::Tuned)[0],
            "src/prompt.rs"
        );
        // The project's test file, named.
        let named = "ANSI codes are not stripped from confirm prompts, see tests/prompt.rs";
        assert_eq!(
            top_paths(&index, named, Ranking::Tuned)[0],
            "tests/prompt.rs"
        );
    }

    #[test]
    fn a_file_whose_head_says_it_is_generated_is_demoted() {
        let grammar = "%token NUMBER\n%%\nexpr: expr '+' term { $$ = add_terms($1, $3); }\n";
        let generated = "/* A Bison parser, made by GNU Bison 3.0.2.  */\n\nstatic int add_terms(int a, int b) {\n    return a + b; /* add terms of the expression */\n}\n";
        let index = index_of(&[("src/parser.y", grammar), ("src/parser.c", generated)]);
        let top = top_paths(
            &index,
            "where are the terms of an expression added (add_terms)?",
            Ranking::Tuned,
        );
        assert_eq!(top[0], "src/parser.y", "{top:?}");
    }

    #[test]
    fn a_bug_report_is_cited_at_the_member_not_the_head_of_its_class() {
        let mut panel = String::from(
            "class Panel:\n    \"\"\"A console renderable that draws a border around its contents.\n\n    The panel has a title and a subtitle, each with a style and an alignment,\n    drawn in the top and bottom border of the panel.\n    \"\"\"\n\n    title_style = \"none\"\n    subtitle_style = \"none\"\n    border_style = \"none\"\n\n",
        );
        for i in 0..6 {
            panel.push_str(&format!(
                "    def helper_{i}(self, width):\n        return width - {i}\n\n"
            ));
        }
        panel.push_str(
            "    def render_title(self, title, width):\n        text = title.copy()\n        text.stylize(self.border_style)\n        # the title's own style is applied after the border's\n        text.stylize(self.title_style)\n        return text.truncate(width)\n",
        );
        let index = index_of(&[("rich/panel.py", panel.as_str())]);
        let report = "Panel title loses its style when the border has a style\n\n\
            When I draw a panel with a styled title and a border style, the title is drawn \
            with the border style instead of its own style. The text of the title is \
            stylized with the border style and then with the title style, but the result \
            shows the border colour. I expected the title to keep its own colour whatever \
            the border colour is, as it did in the previous release of the library, where \
            the title and the subtitle were both drawn in their own colours.";
        let hits = index.search(report, 3);
        assert_eq!(hits[0].symbol.as_deref(), Some("render_title"), "{hits:#?}");
        // A short question about the class is still answered by its head.
        let hits = index.search("What does the Panel class draw?", 3);
        assert_eq!(hits[0].symbol.as_deref(), Some("Panel"), "{hits:#?}");
    }

    #[test]
    fn path_terms_count() {
        let index = index_of(&[
            ("src/timeout.rs", "pub fn limit(f: F, d: Duration) {}\n"),
            ("src/other.rs", "pub fn other(d: Duration) { limit(); }\n"),
        ]);
        let top = top_paths(&index, "give up after a timeout duration", Ranking::Tuned);
        assert_eq!(top[0], "src/timeout.rs", "{top:?}");
    }

    #[test]
    fn results_are_spread_over_files() {
        let mut big = String::new();
        for i in 0..5 {
            big.push_str(&format!("/// Parses a header.\npub fn parse_header_{i}() {{\n    header();\n    a(); b(); c();\n    d();\n    e();\n}}\n\n"));
        }
        let index = index_of(&[
            ("src/big.rs", &big),
            (
                "src/small.rs",
                "/// Header parsing helper.\npub fn helper() {\n    header();\n}\n",
            ),
        ]);
        let top = top_paths(&index, "parse header", Ranking::Tuned);
        assert!(top[..3].contains(&"src/small.rs".to_string()), "{top:?}");
        let plain = top_paths(&index, "parse header", Ranking::PlainBm25);
        assert!(
            !plain[..3].contains(&"src/small.rs".to_string()),
            "{plain:?}"
        );
    }

    #[test]
    fn best_symbol_matches_the_question() {
        let index = index_of(&[(
            "src/a.rs",
            "const A: u8 = 1;\nfn unrelated() {}\nfn read_line() {}\n",
        )]);
        let hit = &index.search("how do I read a line", 1)[0];
        assert_eq!(hit.symbol.as_deref(), Some("read_line"));
        // No definition shares a word with the question: the chunk's own symbol.
        let hit = &index.search("u8", 1)[0];
        assert_eq!(hit.symbol.as_deref(), Some("A"));
    }
}
